/* Puzzle 12, axis_sum: a solution. Block r sums row r: its threads load the row (0 past
 * its end), then halve the tile each step (thread c adds slot c + s into slot c; the slots
 * it reads are ones no thread writes in that step), a barrier after each. */
#include "puzzle.h"

enum { TPB = 8 };

void axis_sum_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int r = (int)t->block_idx.x, c = (int)t->thread_idx.x;
    ks_shared_store(t, tile, c, c < p->size ? pz_load2(t, &p->a, r, c) : 0.0f);
    ks_syncthreads(t);
    for (int s = TPB / 2; s > 0; s /= 2) {
        if (c < s) ks_shared_store(t, tile, c, ks_shared_load(t, tile, c) + ks_shared_load(t, tile, c + s));
        ks_syncthreads(t);
    }
    if (c == 0) pz_store(t, &p->out, r, ks_shared_load(t, tile, 0));
}
