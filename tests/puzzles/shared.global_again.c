/* shared, wrong: fills the tile, then reads a again instead of the tile.
 * expect: FAIL at most 1 global read a thread: work item 0 reads global memory 2 times (a[0], a[0]); read each value once into shared memory */
#include "puzzle.h"

enum { TPB = 4 };

void shared_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    if (i < p->size) ks_shared_store(t, tile, local, pz_load(t, &p->a, i));
    ks_syncthreads(t);
    if (i < p->size) pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 10);
}
