/* Puzzle 11, prefix_sum: a solution (Hillis-Steele). In step s every slot i >= s adds the
 * slot s before it; the tile is read by all before anyone writes (first barrier) and
 * written by all before the next step reads (second barrier). Slots past the end hold 0,
 * so every slot a step reads was written. */
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
        ks_syncthreads(t);
        ks_shared_store(t, tile, i, v);
        ks_syncthreads(t);
    }
    if (i < p->size) pz_store(t, &p->out, i, ks_shared_load(t, tile, i));
}
