/* pooling, wrong: the neighbours come from global memory, three reads a thread.
 * expect: FAIL at most 1 global read a thread: work item 1 reads global memory 2 times (a[1], a[0])
 * expect: FAIL uses shared memory: block 0 never writes shared memory */
#include "puzzle.h"

void pooling_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    if (i < p->size) {
        float sum = pz_load(t, &p->a, i);
        if (i >= 1) sum += pz_load(t, &p->a, i - 1);
        if (i >= 2) sum += pz_load(t, &p->a, i - 2);
        pz_store(t, &p->out, i, sum);
    }
}
