/* map2d, wrong: the flat index uses the block's width (4), not the array's (3).
 * expect: read a[9] (flat), outside a (3 x 3) */
#include "puzzle.h"

void map2d_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    if (r < p->size && c < p->size) pz_store(t, &p->out, r * 4 + c, pz_load(t, &p->a, r * 4 + c) + 10);
}
