/* Puzzle 3, guard: a solution. The guard compares with the size, not the thread count. */
#include "puzzle.h"

void guard_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    if (i < p->size) pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 10);
}
