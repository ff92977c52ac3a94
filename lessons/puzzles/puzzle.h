/* puzzle.h - what a puzzle body may use (kscope puzzle; docs/puzzles.md).
 *
 * A puzzle is one function, `void NAME_kernel(ks_thread *t, const pz_args *p)`, run once
 * per thread of the puzzle's launch on KernelScope's simulator, the same way a CUDA
 * kernel runs once per thread:
 *   t->thread_idx.x   this thread's number in its block   (CUDA threadIdx.x)
 *   t->block_idx.x    this block's number in the grid     (CUDA blockIdx.x)
 *   t->block_dim.x    threads per block                   (CUDA blockDim.x)
 *   t->grid_dim.x     blocks in the grid                  (CUDA gridDim.x)
 * Launches are 1-D, as every KernelScope kernel: a 2-D puzzle splits the thread number
 * into a row and a column itself.
 *
 * Arrays live in global memory. Read and write them only through pz_load / pz_store (or
 * their 2-D forms): each access is recorded in the trace the grader checks, and one
 * outside the array is recorded, not made (a read of it gives 0).
 *
 * Shared memory and barriers (the puzzles from `shared` on), kernels/core/ks_shared.h:
 *   KS_SHARED(float, tile, 8);          a block-shared array (CUDA: __shared__ float tile[8])
 *   ks_shared_store(t, tile, i, v);     tile[i] = v
 *   ks_syncthreads(t);                  every thread of the block waits here for the others
 *   v = ks_shared_load(t, tile, i);     tile[i]
 * The size must be a constant (an enum or a number), as in CUDA. */
#ifndef PZ_PUZZLE_H
#define PZ_PUZZLE_H

#include <stdint.h>

#include "kernels/core/ks_probe.h"
#include "kernels/core/ks_shared.h"

/* An array in global memory: `size` floats in C order, seen as rows x cols (1-D arrays:
 * 1 x size). The trace numbers are the grader's: leave them alone. */
typedef struct pz_array {
    float *data;
    int64_t size, rows, cols;
    int tensor, read_site, write_site; /* its tensor and probe sites in the trace */
} pz_array;

/* A puzzle's arguments: up to two inputs and one output; `size` is the puzzle's size
 * (its spec says which). */
typedef struct pz_args {
    pz_array a, b; /* inputs (b: puzzles with two) */
    pz_array out;  /* the output */
    int size;
} pz_args;

static inline int pz_inside(const pz_array *a, int64_t r, int64_t c)
{
    return r >= 0 && r < a->rows && c >= 0 && c < a->cols;
}

/* Records an access of element (r, c) of a; the offset is r * cols + c even outside, so
 * the grader can say which element was meant. */
static inline void pz_record(ks_thread *t, int kind, const pz_array *a, int64_t r, int64_t c, float v)
{
    const int site = kind == KS_EV_READ ? a->read_site : a->write_site;
    ks_probe_access(t, kind, site, a->tensor, 0, r * a->cols + c, 0, r, c, v, 0);
}

/* a[r][c]: element (r, c) of a 2-D array (0 when outside, and recorded as such). */
static inline float pz_load2(ks_thread *t, const pz_array *a, int64_t r, int64_t c)
{
    const float v = pz_inside(a, r, c) ? a->data[r * a->cols + c] : 0.0f;
    pz_record(t, KS_EV_READ, a, r, c, v);
    return v;
}

/* a[r][c] = v (not made when outside: recorded only). */
static inline void pz_store2(ks_thread *t, const pz_array *a, int64_t r, int64_t c, float v)
{
    if (pz_inside(a, r, c)) a->data[r * a->cols + c] = v;
    pz_record(t, KS_EV_WRITE, a, r, c, v);
}

/* a[i]: element i in C order (of a 2-D array too). */
static inline float pz_load(ks_thread *t, const pz_array *a, int64_t i)
{
    const int in = i >= 0 && i < a->size;
    const float v = in ? a->data[i] : 0.0f;
    ks_probe_access(t, KS_EV_READ, a->read_site, a->tensor, 0, i, 0, in ? i / a->cols : -1, in ? i % a->cols : i, v,
                    0);
    return v;
}

/* a[i] = v. */
static inline void pz_store(ks_thread *t, const pz_array *a, int64_t i, float v)
{
    const int in = i >= 0 && i < a->size;
    if (in) a->data[i] = v;
    ks_probe_access(t, KS_EV_WRITE, a->write_site, a->tensor, 0, i, 0, in ? i / a->cols : -1, in ? i % a->cols : i,
                    v, 0);
}

#endif
