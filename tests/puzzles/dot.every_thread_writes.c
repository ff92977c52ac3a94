/* dot, wrong: every thread writes the sum, not thread 0 alone.
 * expect: FAIL each output element written once: out element 0 written by work items 0 and 1 (and maybe more): on a GPU these writes race */
#include "puzzle.h"

enum { TPB = 16 };

void dot_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, products, TPB);
    const int i = (int)t->thread_idx.x;
    ks_shared_store(t, products, i, i < p->size ? pz_load(t, &p->a, i) * pz_load(t, &p->b, i) : 0.0f);
    ks_syncthreads(t);
    float sum = 0;
    for (int k = 0; k < TPB; ++k) sum += ks_shared_load(t, products, k);
    pz_store(t, &p->out, 0, sum);
}
