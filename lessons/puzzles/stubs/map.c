/* Puzzle 1, map: out[i] = a[i] + 10.
 *
 *   a    [5]   input        out  [5]   output
 *   launch: 1 block of 5 threads - exactly one thread per element.
 *   Each thread: i = its thread number; one read of a[i], one write of out[i].
 *
 * Read with pz_load(t, &p->a, i), write with pz_store(t, &p->out, i, value): the grader
 * sees every access in the trace (puzzle.h tells the rest).
 * Grade: kscope puzzle map     Stuck: kscope puzzle map --solution */
#include "puzzle.h"

void map_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    /* TODO: out[i] = a[i] + 10 (one line) */
}
