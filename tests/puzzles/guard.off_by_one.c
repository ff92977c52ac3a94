/* guard, wrong: i <= size lets thread 5 read and write one past the end.
 * expect: FAIL no access outside an array: thread 5 of block 0 (work item 5) read a[5], outside a (5 elements)
 * expect: kscope step guard.kst --index 5 */
#include "puzzle.h"

void guard_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    if (i <= p->size) pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 10);
}
