/* broadcast, wrong: a indexed by the column and b by the row.
 * expect: FAIL output matches the reference
 * expect: written last by work item */
#include "puzzle.h"

void broadcast_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    if (r < p->size && c < p->size)
        pz_store2(t, &p->out, r, c, pz_load2(t, &p->a, c, 0) + pz_load2(t, &p->b, 0, r));
}
