/* Puzzle 11, prefix_sum: out[i] = a[0] + a[1] + ... + a[i] (an inclusive scan).
 *
 *   a    [size]   input        out  [size]   output        size = 13
 *   launch: 1 block of TPB = 16 threads.
 *   Each thread: 1 global read into the tile (0 past the end). Then log2(TPB) steps: in
 *   step s = 1, 2, 4, 8 every slot i >= s adds the slot s before it. All threads must
 *   read their two slots before any thread writes (a barrier), and all must write before
 *   the next step reads (another barrier).
 *
 * Graded too: shared memory used, no race, no read of a tile slot nobody wrote.
 * Grade: kscope puzzle prefix_sum     Stuck: kscope puzzle prefix_sum --solution */
#include "puzzle.h"

enum { TPB = 16 };

void prefix_sum_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int i = (int)t->thread_idx.x;
    /* TODO */
}
