/* prefix_sum, wrong: no barrier between a step's reads and its writes.
 * expect: FAIL no shared-memory race: shared race: read of shared (plane 0, y 0, x 0) in phase 1, which thread 0 writes
 * expect: (thread 1 of block 0, work item 1) */
#include "puzzle.h"

enum { TPB = 16 };

void prefix_sum_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int i = (int)t->thread_idx.x;
    ks_shared_store(t, tile, i, i < p->size ? pz_load(t, &p->a, i) : 0.0f);
    ks_syncthreads(t);
    for (int s = 1; s < TPB; s *= 2) {
        float v = ks_shared_load(t, tile, i);
        if (i >= s) v += ks_shared_load(t, tile, i - s);
        ks_shared_store(t, tile, i, v);
        ks_syncthreads(t);
    }
    if (i < p->size) pz_store(t, &p->out, i, ks_shared_load(t, tile, i));
}
