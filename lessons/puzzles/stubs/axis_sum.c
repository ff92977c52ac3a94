/* Puzzle 12, axis_sum: out[r] = a[r][0] + a[r][1] + ... + a[r][size - 1].
 *
 *   a    [5, size]   input        out  [5]   output        size = 7 (a row's length)
 *   launch: 5 blocks of TPB = 8 threads: block r sums row r.
 *   Each thread c: 1 global read, a[r][c], into the tile (0 past the row's end). Then a
 *   tree: s = 4, 2, 1, thread c < s adds slot c + s into slot c; a barrier after each
 *   step. One thread writes out[r].
 *
 * Graded too: out written once an element, shared memory used, no race, no read of a
 * tile slot nobody wrote.
 * Grade: kscope puzzle axis_sum     Stuck: kscope puzzle axis_sum --solution */
#include "puzzle.h"

enum { TPB = 8 };

void axis_sum_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int r = (int)t->block_idx.x, c = (int)t->thread_idx.x;
    /* TODO */
}
