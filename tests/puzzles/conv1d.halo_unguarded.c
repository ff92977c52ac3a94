/* conv1d, wrong: the halo load is not guarded against the end of a.
 * expect: thread 0 of block 1 (work item 8) read a[16], outside a (15 elements) */
#include "puzzle.h"

enum { TPB = 8, B = 4 };

void conv1d_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB + B - 1);
    KS_SHARED(float, kern, B);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    ks_shared_store(t, tile, local, i < p->size ? pz_load(t, &p->a, i) : 0.0f);
    if (local < B - 1) ks_shared_store(t, tile, TPB + local, pz_load(t, &p->a, i + TPB));
    if (local < B) ks_shared_store(t, kern, local, pz_load(t, &p->b, local));
    ks_syncthreads(t);
    if (i < p->size) {
        float sum = 0;
        for (int j = 0; j < B; ++j) sum += ks_shared_load(t, tile, local + j) * ks_shared_load(t, kern, j);
        pz_store(t, &p->out, i, sum);
    }
}
