/* map, wrong: right values written through ->data, which the trace cannot see.
 * expect: ok   output matches the reference
 * expect: no thread wrote out element 0 through pz_store */
#include "puzzle.h"

void map_kernel(ks_thread *t, const pz_args *p)
{
    const int i = (int)t->thread_idx.x;
    p->out.data[i] = pz_load(t, &p->a, i) + 10;
}
