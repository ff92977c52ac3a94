/* Puzzle 2, zip: out[i] = a[i] + b[i].
 *
 *   a    [5]   input        b    [5]   input        out  [5]   output
 *   launch: 1 block of 5 threads, one per element.
 *   Each thread: one read of a, one of b, one write of out (at most 2 global reads).
 *
 * Grade: kscope puzzle zip     Stuck: kscope puzzle zip --solution */
#include "puzzle.h"

void zip_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    /* TODO: out[i] = a[i] + b[i] */
}
