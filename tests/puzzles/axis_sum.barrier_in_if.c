/* axis_sum, wrong: the tree's barrier sits inside the if, so only some threads reach it (4-7 miss the first: the earliest).
 * expect: FAIL every barrier reached by every thread: divergent barrier: block 0 thread 4 passes 1 barriers, thread 0 passes 4; thread 4 never reaches the one at line 17 (phase 1)
 * expect: inside an if? */
#include "puzzle.h"

enum { TPB = 8 };

void axis_sum_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int r = (int)t->block_idx.x, c = (int)t->thread_idx.x;
    ks_shared_store(t, tile, c, c < p->size ? pz_load2(t, &p->a, r, c) : 0.0f);
    ks_syncthreads(t);
    for (int s = TPB / 2; s > 0; s /= 2)
        if (c < s) {
            ks_shared_store(t, tile, c, ks_shared_load(t, tile, c) + ks_shared_load(t, tile, c + s));
            ks_syncthreads(t);
        }
    if (c == 0) pz_store(t, &p->out, r, ks_shared_load(t, tile, 0));
}
