/* dot, wrong: thread 0 adds the products before the others have stored theirs.
 * expect: FAIL no shared-memory race: shared race: write of shared (plane 0, y 0, x 1) in phase 0, which thread 0 reads with no barrier between (write after read)
 * expect: (thread 1 of block 0, work item 1)
 * expect: nan, want 55 (written last by work item 0) */
#include "puzzle.h"

enum { TPB = 16 };

void dot_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, products, TPB);
    const int i = (int)t->thread_idx.x;
    ks_shared_store(t, products, i, i < p->size ? pz_load(t, &p->a, i) * pz_load(t, &p->b, i) : 0.0f);
    if (i == 0) {
        float sum = 0;
        for (int k = 0; k < TPB; ++k) sum += ks_shared_load(t, products, k);
        pz_store(t, &p->out, 0, sum);
    }
}
