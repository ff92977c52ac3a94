/* map2d, wrong: only the row is guarded; column 3 is outside.
 * expect: thread 3 of block 0 (work item 3) read a[0][3], outside a (3 x 3) */
#include "puzzle.h"

void map2d_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    if (r < p->size) pz_store2(t, &p->out, r, c, pz_load2(t, &p->a, r, c) + 10);
}
