/* Puzzle 4, map2d: out[r][c] = a[r][c] + 10 on a 2-D array.
 *
 *   a    [size, size]   input        out  [size, size]   output        size = 3
 *   launch: 1 block of 16 threads, seen as a 4 x 4 block: thread number n is at
 *   row n / 4, column n % 4 (CUDA's threadIdx.y and threadIdx.x of a dim3(4, 4) block).
 *   Each thread inside the array: one read of a[r][c], one write of out[r][c]; the
 *   threads of row 3 and column 3 have no element.
 *
 * pz_load2(t, &p->a, r, c) and pz_store2(t, &p->out, r, c, v) take a row and a column
 * (pz_load with r * cols + c works too: p->a.cols is the row length).
 * Grade: kscope puzzle map2d     Stuck: kscope puzzle map2d --solution */
#include "puzzle.h"

void map2d_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    /* TODO: out[r][c] = a[r][c] + 10 for the threads inside the array */
}
