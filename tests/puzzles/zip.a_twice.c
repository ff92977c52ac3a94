/* zip, wrong: a[i] + a[i] - b never read.
 * expect: FAIL output matches the reference
 * expect: want */
#include "puzzle.h"

void zip_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    pz_store(t, &p->out, i, pz_load(t, &p->a, i) + pz_load(t, &p->a, i));
}
