/* Puzzle 7, shared: out[i] = a[i] + 10, through the block's shared memory.
 *
 *   a    [size]   input        out  [size]   output        size = 10
 *   launch: 3 blocks of TPB = 4 threads (12 threads for 10 elements).
 *   Each thread with an element i = block * TPB + thread: reads a[i] once into its slot
 *   of the block's tile, waits at a barrier, then writes out[i] from the tile.
 *
 * Shared memory (puzzle.h): KS_SHARED(float, tile, TPB) declares the block's tile, every
 * thread of the block sees the same one; ks_shared_store(t, tile, k, v) and
 * ks_shared_load(t, tile, k) use it; ks_syncthreads(t) is __syncthreads().
 * Graded too: at most 1 global read a thread, shared memory used, no race.
 * Grade: kscope puzzle shared     Stuck: kscope puzzle shared --solution */
#include "puzzle.h"

enum { TPB = 4 };

void shared_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int local = (int)t->thread_idx.x, i = (int)t->block_idx.x * TPB + local;
    /* TODO: tile[local] = a[i]; barrier; out[i] = tile[local] + 10 (for i < size) */
}
