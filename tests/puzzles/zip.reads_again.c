/* zip, wrong: the right sum, but a is read twice (once to test it, once to add it).
 * expect: FAIL at most 2 global reads a thread: work item 0 reads global memory 3 times (a[0], a[0], b[0]) */
#include "puzzle.h"

void zip_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    const float x = pz_load(t, &p->a, i) != 0 ? pz_load(t, &p->a, i) : 0.0f;
    pz_store(t, &p->out, i, x + pz_load(t, &p->b, i));
}
