/* ks_core.h - the execution model shared by nvcc and the C11 simulator.
 *
 * A kernel body is an ordinary function of (ks_thread *, const args *). Under nvcc a thin
 * __global__ wrapper fills the ks_thread from blockIdx/blockDim/threadIdx/gridDim; in the
 * simulator ks_sim_launch() fills it while it walks the grid block by block, thread by
 * thread. This header stays in the C/C++ common subset (no VLAs, no compound literals).
 */
#ifndef KS_CORE_H
#define KS_CORE_H

#include <stdint.h>
#include "ks_event.h"
#include "ks_decl.h" /* KS_DECLARE: a kernel's tensors and sites, declared once */

#if defined(__CUDACC__)
#define KS_HD __host__ __device__
#define KS_FN __host__ __device__ static inline
#else
#define KS_HD
#define KS_FN static inline
#endif
/* A KS_FN that the C compiler must inline too (GCC, Clang): a body's item loop called
 * with constant sizes, which only an inlined copy specialises (im2col_body.h: without it
 * the simulator's traced col2im ran its 3x3 layer 1.45x slower) */
#if defined(__CUDACC__)
#define KS_FN_INLINE __host__ __device__ static __forceinline__
#else
#define KS_FN_INLINE static inline __attribute__((always_inline))
#endif
/* Unroll the loop that follows fully under nvcc (its bounds must be constants): a loop
 * over a small array left rolled puts the array in local memory (im2col_body.h's taps,
 * whose rolling nvcc decides by the size of the probes inside) */
#if defined(__CUDA_ARCH__) /* the device pass: the host compiler does not know the pragma */
#define KS_UNROLL _Pragma("unroll")
#else
#define KS_UNROLL
#endif

typedef struct ks_dim3 {
    uint32_t x, y, z;
} ks_dim3;

/* Everything a kernel body may know about "who am I". `sink` is NULL in the plain variant.
 * work/iter/seq/keep are the probe state of the current grid-stride iteration: the traced
 * variant's work probe sets them, the read/sample/write probes of that item use them. */
/* The most block-shared arrays a body declares (the simulator refuses more) and a trace
 * names apart (ks_shared.h). */
#define KS_SHARED_ARRAYS 16

typedef struct ks_thread {
    ks_dim3 block_idx, block_dim, thread_idx, grid_dim;
    ks_sink *sink;
    int64_t work;
    uint32_t iter;
    uint32_t seq;
    int keep;
    /* Barriers (ks_shared.h): the barriers this thread passed in its block (its phase),
     * and the source line of the last one (0: none yet). Zero at the start of a block. */
    uint32_t phase;
    int32_t barrier_line;
    /* Shared-memory tracing (ks_shared_trace): the trace tensor and the first of three
     * sites (read, write, barrier), an array's rows x cols, and the arrays seen so far in
     * first-use order (an array's plane in the trace tensor). */
    uint16_t shared_site;
    uint8_t shared_tensor;
    uint8_t nshared;
    uint32_t shared_rows, shared_cols;
    const void *shared_arr[KS_SHARED_ARRAYS];
    /* GPU recording (ks_pages.h), three registers: the buffer word where this thread's next
     * record goes (KS_PAGE_NONE: no column), and the words left in its column | the
     * page's columns << 16 (a column's words are interleaved: word k at k * columns).
     * Unused on the host. */
    uint32_t page_word;
    uint32_t page_room;
    uint32_t page_value; /* the value of its last read (KS_PAGE_VALUE_KNOWN) */
} ks_thread;

/* A thread's block and its place in the block as single numbers, as CUDA numbers them (x
 * fastest): (z * dim.y + y) * dim.x + x. A 1-D launch's are block_idx.x and thread_idx.x.
 * The events record these (ks_probe.h), so a 2-D or 3-D launch's trace names each thread
 * once. */
KS_FN_INLINE uint32_t ks_block_linear(const ks_thread *t)
{
    return (t->block_idx.z * t->grid_dim.y + t->block_idx.y) * t->grid_dim.x + t->block_idx.x;
}

KS_FN_INLINE uint32_t ks_thread_linear(const ks_thread *t)
{
    return (t->thread_idx.z * t->block_dim.y + t->thread_idx.y) * t->block_dim.x + t->thread_idx.x;
}

/* The atomics helpers: a hardware atomic on the GPU, a plain add in the simulator
 * (the simulator runs one thread at a time, so a plain add is exact and deterministic). */
KS_FN void ks_atomic_add_f32(float *p, float v)
{
#if defined(__CUDA_ARCH__)
    atomicAdd(p, v);
#else
    *p += v;
#endif
}

/* p[0..3] += v[0..3]; p 16-byte aligned. On sm_90 one vector atomic (red.global.add.v4.f32:
 * one L2 operation for four floats), else four. */
KS_FN void ks_atomic_add_f32x4(float *p, const float v[4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd((float4 *)p, make_float4(v[0], v[1], v[2], v[3]));
#else
    for (int e = 0; e < 4; ++e) ks_atomic_add_f32(p + e, v[e]);
#endif
}

/* Compare-and-swap: *p becomes v if it was `expect`; returns what *p was. */
KS_FN int64_t ks_atomic_cas_i64(int64_t *p, int64_t expect, int64_t v)
{
#if defined(__CUDA_ARCH__)
    return (int64_t)atomicCAS((unsigned long long *)p, (unsigned long long)expect, (unsigned long long)v);
#else
    const int64_t old = *p;
    if (old == expect) *p = v;
    return old;
#endif
}

/* *p = max(*p, v); returns what *p was. */
KS_FN int64_t ks_atomic_max_i64(int64_t *p, int64_t v)
{
#if defined(__CUDA_ARCH__)
    return (int64_t)atomicMax((long long *)p, (long long)v);
#else
    const int64_t old = *p;
    if (v > old) *p = v;
    return old;
#endif
}

/* *p += 1 for every calling thread. On the GPU the threads of a warp that count into the
 * same counter make one atomicAdd between them (__match_any_sync, the lowest lane adds the
 * group's size), so many threads counting into a few counters do not queue on them. */
KS_FN void ks_atomic_count_i32(int32_t *p)
{
#if defined(__CUDA_ARCH__)
    const unsigned peers = __match_any_sync(__activemask(), (unsigned long long)p);
    if ((int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd((int *)p, __popc(peers));
#else
    *p += 1;
#endif
}

/* *p += v; returns what *p was. */
KS_FN int32_t ks_atomic_add_i32(int32_t *p, int32_t v)
{
#if defined(__CUDA_ARCH__)
    return (int32_t)atomicAdd((int *)p, (int)v);
#else
    const int32_t old = *p;
    *p += v;
    return old;
#endif
}

#endif /* KS_CORE_H */
