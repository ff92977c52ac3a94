/* map, wrong: adds 1, not 10 - every element is off; the grader names the first.
 * expect: 5 of 5 elements wrong; the first, out[0]: got -4, want 5 */
#include "puzzle.h"

void map_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 1);
}
