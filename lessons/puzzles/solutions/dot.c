/* Puzzle 9, dot: a solution. Every thread leaves its product in the tile (0 past the
 * end, so the sum can run over the whole tile); after the barrier one thread adds them
 * and makes the only write of out. */
#include "puzzle.h"

enum { TPB = 16 };

void dot_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, products, TPB);
    const int i = (int)t->thread_idx.x;
    ks_shared_store(t, products, i, i < p->size ? pz_load(t, &p->a, i) * pz_load(t, &p->b, i) : 0.0f);
    ks_syncthreads(t);
    if (i == 0) {
        float sum = 0;
        for (int k = 0; k < TPB; ++k) sum += ks_shared_load(t, products, k);
        pz_store(t, &p->out, 0, sum);
    }
}
