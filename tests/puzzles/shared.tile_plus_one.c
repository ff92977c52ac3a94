/* shared, wrong: each thread reads its neighbour's slot, and the last thread of a block
 * reads one past the tile: graded, not a crash.
 * expect: FAIL no access outside an array: thread 3 of block 0 (work item 3) read element 4 of shared array 0
 * expect: outside it: a shared index is off by one or unguarded */
#include "puzzle.h"

enum { TPB = 4 };

void shared_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    if (i < p->size) ks_shared_store(t, tile, local, pz_load(t, &p->a, i));
    ks_syncthreads(t);
    if (i < p->size) pz_store(t, &p->out, i, ks_shared_load(t, tile, local + 1) + 10);
}
