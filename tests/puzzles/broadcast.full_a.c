/* broadcast, wrong: a read as if it were size x size.
 * expect: (work item 1) read a[0][1], outside a (3 x 1) */
#include "puzzle.h"

void broadcast_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    if (r < p->size && c < p->size)
        pz_store2(t, &p->out, r, c, pz_load2(t, &p->a, r, c) + pz_load2(t, &p->b, 0, c));
}
