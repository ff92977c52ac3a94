/* pooling, wrong: no barrier between filling the tile and reading the neighbours.
 * expect: FAIL no shared-memory race: shared race: read of shared (plane 0, y 0, x 0) in phase 0, which thread 0 writes
 * expect: (thread 1 of block 0, work item 1): two threads touch one slot between the same two barriers */
#include "puzzle.h"

enum { TPB = 16 };

void pooling_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, tile, TPB);
    const int i = (int)t->thread_idx.x;
    if (i < p->size) ks_shared_store(t, tile, i, pz_load(t, &p->a, i));
    if (i < p->size) {
        float sum = ks_shared_load(t, tile, i);
        if (i >= 1) sum += ks_shared_load(t, tile, i - 1);
        if (i >= 2) sum += ks_shared_load(t, tile, i - 2);
        pz_store(t, &p->out, i, sum);
    }
}
