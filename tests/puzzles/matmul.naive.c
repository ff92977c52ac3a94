/* matmul, wrong: the naive product, straight from global memory (2n reads a thread).
 * expect: FAIL at most 6 global reads a thread: work item 0 reads global memory 14 times
 * expect: FAIL uses shared memory */
#include "puzzle.h"

void matmul_kernel(ks_thread *t, const pz_args *p)
{
    const int n = p->size, tiles = (n + 2) / 3;
    const int row = (int)t->block_idx.x / tiles * 3 + (int)t->thread_idx.x / 3;
    const int col = (int)t->block_idx.x % tiles * 3 + (int)t->thread_idx.x % 3;
    if (row >= n || col >= n) return;
    float acc = 0;
    for (int k = 0; k < n; ++k) acc += pz_load2(t, &p->a, row, k) * pz_load2(t, &p->b, k, col);
    pz_store2(t, &p->out, row, col, acc);
}
