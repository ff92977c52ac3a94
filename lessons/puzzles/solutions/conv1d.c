/* Puzzle 10, conv1d: a solution. The block's tile is its TPB elements of a plus a halo of
 * B - 1 past them (0 past the end of a); the first B threads also load the kernel b. */
#include "puzzle.h"

enum { TPB = 8, B = 4 };

void conv1d_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB + B - 1);
    KS_SHARED(float, kern, B);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    ks_shared_store(t, tile, local, i < p->size ? pz_load(t, &p->a, i) : 0.0f);
    if (local < B - 1) ks_shared_store(t, tile, TPB + local, i + TPB < p->size ? pz_load(t, &p->a, i + TPB) : 0.0f);
    if (local < B) ks_shared_store(t, kern, local, pz_load(t, &p->b, local));
    ks_syncthreads(t);
    if (i < p->size) {
        float sum = 0;
        for (int j = 0; j < B; ++j) sum += ks_shared_load(t, tile, local + j) * ks_shared_load(t, kern, j);
        pz_store(t, &p->out, i, sum);
    }
}
