/* blocks, wrong: i is the thread number only - every block does elements 0..3.
 * expect: the first, out[4]: got 0, want
 * expect: FAIL each output element written once: out element 0 written by work items 0 and 4 */
#include "puzzle.h"

void blocks_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    if (i < p->size) pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 10);
}
