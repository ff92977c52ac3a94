/* prefix_sum, wrong: no barrier between a step's reads and its writes.
 * expect: FAIL no shared-memory race: block 0, phase 1: thread 1 reads element 0 of shared array 0 that thread 0 wrote with no barrier between (read after write) */
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
