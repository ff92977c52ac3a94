/* matmul, wrong: no barrier after the products, so the next load overwrites a tile that
 * other threads still read.
 * expect: FAIL no shared-memory race: shared race: read of shared (plane 0, y 0, x 0) in phase 1, which thread 0 writes
 * expect: (thread 1 of block 0, work item 1) */
#include "puzzle.h"

enum { TPB = 3 };

void matmul_kernel(ks_thread *t, const pz_args *p)
{
    KS_SHARED(float, ta, TPB * TPB);
    KS_SHARED(float, tb, TPB * TPB);
    const int n = p->size, tiles = (n + TPB - 1) / TPB;
    const int ty = (int)t->thread_idx.x / TPB, tx = (int)t->thread_idx.x % TPB;
    const int row = (int)t->block_idx.x / tiles * TPB + ty, col = (int)t->block_idx.x % tiles * TPB + tx;
    float acc = 0;
    for (int k0 = 0; k0 < n; k0 += TPB) {
        ks_shared_store(t, ta, ty * TPB + tx, row < n && k0 + tx < n ? pz_load2(t, &p->a, row, k0 + tx) : 0.0f);
        ks_shared_store(t, tb, ty * TPB + tx, k0 + ty < n && col < n ? pz_load2(t, &p->b, k0 + ty, col) : 0.0f);
        ks_syncthreads(t);
        for (int k = 0; k < TPB; ++k) acc += ks_shared_load(t, ta, ty * TPB + k) * ks_shared_load(t, tb, k * TPB + tx);
    }
    if (row < n && col < n) pz_store2(t, &p->out, row, col, acc);
}
