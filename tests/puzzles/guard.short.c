/* guard, wrong: i < size - 1 leaves the last element unwritten.
 * expect: 1 of 5 elements wrong; the first, out[4]: got 0, want
 * expect: (no thread wrote it) */
#include "puzzle.h"

void guard_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    if (i < p->size - 1) pz_store(t, &p->out, i, pz_load(t, &p->a, i) + 10);
}
