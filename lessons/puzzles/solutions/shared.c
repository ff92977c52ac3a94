/* Puzzle 7, shared: a solution. Each thread fills its own slot of the block's tile; the
 * barrier is where, in a real kernel, the tile becomes everyone's. */
#include "puzzle.h"

enum { TPB = 4 };

void shared_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    if (i < p->size) ks_shared_store(t, tile, local, pz_load(t, &p->a, i));
    ks_syncthreads(t);
    if (i < p->size) pz_store(t, &p->out, i, ks_shared_load(t, tile, local) + 10);
}
