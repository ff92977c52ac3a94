/* blocks, wrong: block * gridDim (3) where block * blockDim (4) is meant: blocks overlap.
 * expect: FAIL each output element written once: out element 3 written by work items 3 and 4 */
#include "puzzle.h"

void blocks_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)(t->block_idx.x * t->grid_dim.x + t->thread_idx.x);
    if (i < p->size) pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 10);
}
