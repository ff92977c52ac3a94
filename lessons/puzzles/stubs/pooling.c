/* Puzzle 8, pooling: out[i] = a[i - 2] + a[i - 1] + a[i] (leave out the terms before a[0]).
 *
 *   a    [size]   input        out  [size]   output        size = 11
 *   launch: 1 block of TPB = 16 threads.
 *   Each thread reads at most 1 element of a (global memory is slow): its own, into the
 *   tile; after a barrier it sums its three from the tile.
 *
 * Graded too: at most 1 global read a thread, shared memory used, no race.
 * Grade: kscope puzzle pooling     Stuck: kscope puzzle pooling --solution */
#include "puzzle.h"

enum { TPB = 16 };

void pooling_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int i = (int)t->thread_idx.x;
    /* TODO */
}
