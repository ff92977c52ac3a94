/* Puzzle 13, matmul: a solution. Block (by, bx) computes the 3 x 3 tile of out at rows
 * by * 3.., columns bx * 3..; for each k-tile every thread loads one element of a and one
 * of b (0 outside), the block multiplies the two tiles, and the second barrier keeps the
 * next load from overwriting a tile still in use. */
#include "puzzle.h"

enum { TPB = 3 };

void matmul_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, ta, TPB * TPB);
    KS_SHARED(float, tb, TPB * TPB);
    const int n = p->size, tiles = (n + TPB - 1) / TPB;
    const int ty = (int)t->thread_idx.x / TPB, tx = (int)t->thread_idx.x % TPB;
    const int row = (int)t->block_idx.x / tiles * TPB + ty, col = (int)t->block_idx.x % tiles * TPB + tx;
    float acc = 0;
    for (int k0 = 0; k0 < n; k0 += TPB) {
        ks_shared_store(t, ta, ty * TPB + tx, row < n && k0 + tx < n ? pz_load2(t, &p->a, row, k0 + tx) : 0.0f);
        ks_shared_store(t, tb, ty * TPB + tx, k0 + ty < n && col < n ? pz_load2(t, &p->b, k0 + ty, col) : 0.0f);
        ks_syncthreads(t);
        for (int k = 0; k < TPB; ++k) acc += ks_shared_load(t, ta, ty * TPB + k) * ks_shared_load(t, tb, k * TPB + tx);
        ks_syncthreads(t);
    }
    if (row < n && col < n) pz_store2(t, &p->out, row, col, acc);
}
