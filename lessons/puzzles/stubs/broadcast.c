/* Puzzle 5, broadcast: out[r][c] = a[r] + b[c] - a column plus a row.
 *
 *   a    [size, 1]   input (a column)       b    [1, size]   input (a row)
 *   out  [size, size]   output              size = 3
 *   launch: 1 block of 16 threads seen as 4 x 4 (row n / 4, column n % 4), as in map2d.
 *   Each thread inside out: one read of a, one of b, one write of out.
 *
 * Grade: kscope puzzle broadcast     Stuck: kscope puzzle broadcast --solution */
#include "puzzle.h"

void broadcast_kernel(ks_thread *t, const pz_args *p)
{
    const int r = (int)t->thread_idx.x / 4, c = (int)t->thread_idx.x % 4;
    /* TODO: out[r][c] = a[r][0] + b[0][c] for the threads inside out */
}
