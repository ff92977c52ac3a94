/* Puzzle 4, map2d: a solution. Both coordinates need their guard. */
#include "puzzle.h"

void map2d_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    if (r < p->size && c < p->size) pz_store2(t, &p->out, r, c, pz_load2(t, &p->a, r, c) + 10);
}
