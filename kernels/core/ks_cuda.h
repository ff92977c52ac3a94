/* ks_cuda.h - CUDA-only helpers for the .cu launchers: filling ks_thread from the
 * builtins and checking launches. Installed as <kscope/kernels/core/ks_cuda.h>: its public
 * part for your own .cu files is KS_THREAD_FROM_BUILTINS (probes in a plain __global__
 * kernel), KS_CUDA_WRAPPERS (a body's three kernels) and ks_cuda_check_launch; the rest
 * serves KernelScope's own launches. */
#ifndef KS_CUDA_H
#define KS_CUDA_H

#include <cuda_runtime.h>

#include "ks_core.h"
#include "ks_kernel.h"
#include "ks_pages.h"
#include "ks_probe.h" /* ks_filter_first_pass */
#include "ks_error.h"

__device__ static inline void ks_thread_from_builtins(ks_thread *t, ks_sink *sink)
{
    t->block_idx.x = blockIdx.x;
    t->block_idx.y = blockIdx.y;
    t->block_idx.z = blockIdx.z;
    t->block_dim.x = blockDim.x;
    t->block_dim.y = blockDim.y;
    t->block_dim.z = blockDim.z;
    t->thread_idx.x = threadIdx.x;
    t->thread_idx.y = threadIdx.y;
    t->thread_idx.z = threadIdx.z;
    t->grid_dim.x = gridDim.x;
    t->grid_dim.y = gridDim.y;
    t->grid_dim.z = gridDim.z;
    t->sink = sink;
    t->work = 0;
    t->iter = 0;
    t->seq = 0;
    t->keep = 0;
    t->phase = 0;
    t->barrier_line = 0;
    t->shared_site = 0;
    t->shared_tensor = 255;
    t->nshared = 0;
    t->shared_rows = t->shared_cols = 0;
    t->page_word = 0xffffffffu;
    t->page_room = 1u << 16;
    t->page_value = 0;
}

/* The GPU's nanosecond clock (comparable across SMs) and the SM this thread runs on. */
__device__ static inline unsigned long long ks_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ static inline unsigned ks_smid(void)
{
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm;
}

/* The block's line of the schedule, once all its threads are done (sink.schedule is the
 * same for the whole grid, so every thread reaches the barrier). */
__device__ static inline void ks_schedule_block(const ks_sink *sink, unsigned long long start)
{
    __syncthreads();
    /* the linear block number, as the events name it (a 2-D or 3-D grid too) */
    const int64_t b = ((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0 || b >= sink->schedule_blocks) return;
    int64_t *s = sink->schedule + 4 * b;
    s[0] = b, s[1] = ks_smid(), s[2] = (int64_t)start, s[3] = (int64_t)ks_globaltimer();
}

/* For a plain __global__ kernel that is not in the body form: declares `ks_thread name`
 * filled from the builtins with `sink` (a ks_sink * in device memory, or NULL for no
 * trace), so probe calls (ks_probe_work first, then reads and writes) can be dropped into
 * it:  KS_THREAD_FROM_BUILTINS(t, sink); ks_probe_work(&t, 0, i, 0, y, x, 0, 0, 0, 0, 0, 0); */
#define KS_THREAD_FROM_BUILTINS(name, sink) \
    ks_thread name;                         \
    ks_thread_from_builtins(&name, (sink))

/* The three __global__ wrappers of a body compiled by ks_variants.h: name_k_plain32,
 * name_k_plain (args by value) and name_k_traced (args and the device sink by value).
 * KS_CUDA_WRAPPERS_ATTR adds `attr` to each, e.g. __launch_bounds__(1024) for a body whose
 * block size is fixed by its shared tiles (the traced variant must fit 1024 threads too). */
#define KS_CUDA_WRAPPERS_ATTR(name, args_t, attr)                \
    __global__ void attr name##_k_plain32(args_t a)              \
    {                                                            \
        ks_thread t;                                             \
        ks_thread_from_builtins(&t, NULL);                       \
        name##_body_plain32(&t, &a);                             \
    }                                                            \
    __global__ void attr name##_k_plain(args_t a)                \
    {                                                            \
        ks_thread t;                                             \
        ks_thread_from_builtins(&t, NULL);                       \
        name##_body_plain(&t, &a);                               \
    }                                                            \
    __global__ void attr name##_k_traced(args_t a, ks_sink sink) \
    {                                                            \
        ks_thread t;                                             \
        ks_thread_from_builtins(&t, &sink);                      \
        const unsigned long long start = ks_globaltimer();       \
        name##_body_traced(&t, &a);                              \
        if (sink.schedule) ks_schedule_block(&sink, start);      \
    }
#define KS_CUDA_WRAPPERS(name, args_t) KS_CUDA_WRAPPERS_ATTR(name, args_t, )

/* Checks a CUDA call; on failure records "what: cuda error text" and returns KS_ECUDA. */
static inline ks_status ks_cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return KS_OK;
    return ks_fail(KS_ECUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* After a <<<>>> launch: a bad configuration is reported here; errors raised while the
 * kernel runs surface at the next synchronizing call, which the caller checks. */
static inline ks_status ks_cuda_check_launch(const char *kernel) { return ks_cuda_ok(cudaGetLastError(), kernel); }


/* The wrappers of one variant of a body: a plain kernel (args by value), and a traced one
 * (args and the device sink by value). With `skip`, a traced block whose filter passes
 * none of its items (ks_filter_drops_block: an empty index range, or a block outside the
 * block range) runs the plain variant `pv` of the same index width: it would record
 * nothing, and its dropped items run the plain code anyway (only for bodies whose plain
 * and traced variants walk the same items). PA / TA: attributes such as
 * __launch_bounds__(1024) or __maxnreg__(40). */
#define KS_CUDA_PLAIN_KERNEL(name, v, args_t, PA) \
    __global__ void PA name##_k_##v(args_t a)     \
    {                                             \
        ks_thread t;                              \
        ks_thread_from_builtins(&t, NULL);        \
        name##_body_##v(&t, &a);                  \
    }
#define KS_CUDA_TRACED_KERNEL(name, v, pv, args_t, TA, skip) KS_CUDA_TRACED_KERNEL_AS(name, v, v, pv, args_t, TA, skip)
/* the same, the kernel named name_k_kv (a second build of body variant v) */
#define KS_CUDA_TRACED_KERNEL_AS(name, kv, v, pv, args_t, TA, skip)      \
    __global__ void TA name##_k_##kv(args_t a, ks_sink sink)             \
    {                                                                    \
        ks_thread t;                                                     \
        const unsigned long long start = ks_globaltimer();               \
        if ((skip) && ks_filter_drops_block(&sink.filter, blockIdx.x)) { \
            ks_thread_from_builtins(&t, NULL);                           \
            name##_body_##pv(&t, &a);                                    \
        } else {                                                         \
            ks_thread_from_builtins(&t, &sink);                          \
            t.page_room |= KS_PAGE_LAZY_END;                             \
            name##_body_##v(&t, &a);                                     \
            ks_page_close(&t);                                           \
        }                                                                \
        if (sink.schedule) ks_schedule_block(&sink, start);              \
    }

/* Dynamic shared memory past the 48 KiB every kernel gets: kernel k opts in to g->shared
 * bytes (up to the device's opt-in limit) before its launch. */
static inline int ks_cuda_shared_optin(const void *k, const ks_grid *g)
{
    if (g->shared <= 48 * 1024) return KS_OK;
    return ks_cuda_ok(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g->shared), g->name);
}

/* Whether a filter keeps a quarter or more of a launch's first-pass items
 * (ks_filter_first_pass; a grid-stride loop's later items are not counted). */
static inline int ks_filter_keeps_much(const ks_filter *f, double blocks, double block_threads)
{
    return ks_filter_first_pass(f, blocks, block_threads) * 4 >= blocks * block_threads;
}

/* traced32all (KS_KERNEL_FAST_ALL), when given, is the 32-bit traced kernel with more
 * registers: it runs a launch whose filter keeps much (ks_filter_keeps_much) and whose
 * blocks it can hold. The others take traced32, whose register cap can then be the plain
 * kernel's: a block whose items the filter drops runs the plain body, and at the plain
 * kernel's occupancy (im2col_body.h: col2im with a filter that records nothing 1.20x
 * plain at 64 registers, 1.00x at 40). */
/* The launch of every kernel row (ks_kernel.h, KS_KERNEL in ks_variants.h): the variant
 * the registry chose (traced when there is a sink, 32-bit when g->narrow) on the grid it
 * sized (x, and a tiled row's y and z), then the check. */
template <typename A>
static inline int ks_cuda_launch_row(const A &a, const ks_grid *g, const ks_sink *sink, void (*plain32)(A),
                                     void (*plain)(A), void (*traced)(A, ks_sink), void (*traced32)(A, ks_sink),
                                     void (*traced32all)(A, ks_sink) = NULL)
{
    const dim3 grid((unsigned)g->blocks, g->blocks_y > 1 ? (unsigned)g->blocks_y : 1u,
                    g->blocks_z > 1 ? (unsigned)g->blocks_z : 1u),
        block((unsigned)g->threads);
    cudaStream_t s = (cudaStream_t)g->stream;
    if (sink) {
        void (*k)(A, ks_sink) = g->narrow && traced32 ? traced32 : traced;
        struct cudaFuncAttributes fa;
        if (k == traced32 && traced32all &&
            ks_filter_keeps_much(&sink->filter, (double)grid.x * grid.y * grid.z, (double)g->threads) &&
            cudaFuncGetAttributes(&fa, (const void *)traced32all) == cudaSuccess && fa.maxThreadsPerBlock >= g->threads)
            k = traced32all;
        int rc = ks_cuda_shared_optin((const void *)k, g);
        if (rc) return rc;
        k<<<grid, block, g->shared, s>>>(a, *sink);
    } else {
        void (*k)(A) = g->narrow ? plain32 : plain;
        int rc = ks_cuda_shared_optin((const void *)k, g);
        if (rc) return rc;
        k<<<grid, block, g->shared, s>>>(a);
    }
    return ks_cuda_check_launch(g->name);
}

#endif
