/* shared, wrong: the load is not guarded; the last block's threads 2 and 3 read past a.
 * expect: thread 2 of block 2 (work item 10) read a[10], outside a (10 elements) */
#include "puzzle.h"

enum { TPB = 4 };

void shared_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    ks_shared_store(t, tile, local, pz_load(t, &p->a, i));
    ks_syncthreads(t);
    if (i < p->size) pz_store(t, &p->out, i, ks_shared_load(t, tile, local) + 10);
}
