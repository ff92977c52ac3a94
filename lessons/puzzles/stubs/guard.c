/* Puzzle 3, guard: out[i] = a[i] + 10, with more threads than elements.
 *
 *   a    [size]   input        out  [size]   output        size = 5 (p->size)
 *   launch: 1 block of 8 threads: threads 5, 6 and 7 have no element.
 *   Each thread with an element: one read of a, one write of out. The others touch
 *   nothing: an access outside an array fails the puzzle (on a GPU it is a bug that
 *   may or may not crash).
 *
 * Grade: kscope puzzle guard     Stuck: kscope puzzle guard --solution */
#include "puzzle.h"

void guard_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    /* TODO: out[i] = a[i] + 10 for the threads that have an element */
}
