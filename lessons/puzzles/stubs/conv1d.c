/* Puzzle 10, conv1d: out[i] = a[i] * b[0] + a[i + 1] * b[1] + ... + a[i + B - 1] * b[B - 1],
 * a read as 0 past its end.
 *
 *   a    [size]   input        b    [B]   input (the kernel)        out  [size]   output
 *   size = 15, B = 4; launch: 2 blocks of TPB = 8 threads.
 *   Each thread: at most 3 global reads. The block needs a[block * TPB ..] and B - 1
 *   elements past its own (the halo): the tile is TPB + B - 1 long; the first B - 1
 *   threads also load the halo, the first B the kernel b into a second tile.
 *
 * Graded too: shared memory used, no race, no read of a tile slot nobody wrote.
 * Grade: kscope puzzle conv1d     Stuck: kscope puzzle conv1d --solution */
#include "puzzle.h"

enum { TPB = 8, B = 4 };

void conv1d_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB + B - 1);
    KS_SHARED(float, kern, B);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    /* TODO */
}
