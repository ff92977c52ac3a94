/* Puzzle 13, matmul: out = a @ b, out[row][col] = sum over k of a[row][k] * b[k][col].
 *
 *   a    [n, n]   input        b    [n, n]   input        out  [n, n]   output   n = size = 7
 *   launch: 9 blocks of TPB * TPB = 9 threads, TPB = 3: block number m is the tile of out
 *   at tile row m / 3, tile column m % 3; thread number k is at (k / TPB, k % TPB) in it.
 *   Each thread: for each of the 3 k-tiles, load one element of a and one of b into the
 *   block's two tiles (0 outside the matrices), barrier, add its TPB products, barrier
 *   (before the next load overwrites the tiles). At most 6 global reads a thread: the
 *   naive loop's 14 is what tiling saves.
 *
 * Graded too: shared memory used, no race, no read of a tile slot nobody wrote.
 * Grade: kscope puzzle matmul     Stuck: kscope puzzle matmul --solution */
#include "puzzle.h"

enum { TPB = 3 };

void matmul_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, ta, TPB * TPB);
    KS_SHARED(float, tb, TPB * TPB);
    const int n = p->size, tiles = (n + TPB - 1) / TPB;
    const int ty = (int)t->thread_idx.x / TPB, tx = (int)t->thread_idx.x % TPB;
    const int row = (int)t->block_idx.x / tiles * TPB + ty, col = (int)t->block_idx.x % tiles * TPB + tx;
    /* TODO */
}
