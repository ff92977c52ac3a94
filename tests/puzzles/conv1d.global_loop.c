/* conv1d, wrong: the inner loop reads global memory, 2 * B reads a thread.
 * expect: FAIL at most 3 global reads a thread: work item 0 reads global memory 8 times (a[0], b[0], a[1], b[1], a[2], b[2], ...) */
#include "puzzle.h"

enum { TPB = 8, B = 4 };

void conv1d_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->block_idx.x * TPB + (int)t->thread_idx.x;
    if (i < p->size) {
        float sum = 0;
        for (int j = 0; j < B && i + j < p->size; ++j) sum += pz_load(t, &p->a, i + j) * pz_load(t, &p->b, j);
        pz_store(t, &p->out, i, sum);
    }
}
