/* prefix_sum, wrong: slots past the end are never stored, then read by the scan.
 * expect: FAIL no read of unwritten shared memory: read of uninitialised shared memory shared (plane 0, y 0, x 13)
 * expect: (thread 13 of block 0, work item 13)
 * expect: ok   output matches the reference */
#include "puzzle.h"

enum { TPB = 16 };

void prefix_sum_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int i = (int)t->thread_idx.x;
    if (i < p->size) ks_shared_store(t, tile, i, pz_load(t, &p->a, i));
    ks_syncthreads(t);
    for (int s = 1; s < TPB; s *= 2) {
        float v = ks_shared_load(t, tile, i);
        if (i >= s) v += ks_shared_load(t, tile, i - s);
        ks_syncthreads(t);
        ks_shared_store(t, tile, i, v);
        ks_syncthreads(t);
    }
    if (i < p->size) pz_store(t, &p->out, i, ks_shared_load(t, tile, i));
}
