/* Puzzle 8, pooling: a solution. One global read a thread into the tile, a barrier, then
 * three neighbours from the tile (the two before a[0] do not exist). */
#include "puzzle.h"

enum { TPB = 16 };

void pooling_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int i = (int)t->thread_idx.x;
    if (i < p->size) ks_shared_store(t, tile, i, pz_load(t, &p->a, i));
    ks_syncthreads(t);
    if (i < p->size) {
        float sum = ks_shared_load(t, tile, i);
        if (i >= 1) sum += ks_shared_load(t, tile, i - 1);
        if (i >= 2) sum += ks_shared_load(t, tile, i - 2);
        pz_store(t, &p->out, i, sum);
    }
}
