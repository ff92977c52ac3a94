/* Puzzle 6, blocks: out[i] = a[i] + 10 with several blocks.
 *
 *   a    [size]   input        out  [size]   output        size = 9
 *   launch: 3 blocks of 4 threads (12 threads for 9 elements).
 *   Each thread: its element is i = block number * threads per block + thread number
 *   (t->block_idx.x, t->block_dim.x, t->thread_idx.x); one read, one write, if i < size.
 *
 * Grade: kscope puzzle blocks     Stuck: kscope puzzle blocks --solution */
#include "puzzle.h"

void blocks_kernel(ks_thread *t, const pz_args *p)
{
    /* TODO: work out i, then out[i] = a[i] + 10 when i < size */
}
