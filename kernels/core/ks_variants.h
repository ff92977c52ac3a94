/* ks_variants.h - compiles one kernel body file in every variant it is needed in.
 *
 *   #define KS_BODY "../deform_conv/deform_body.h"   (relative to this file)
 *   #include "../core/ks_variants.h"
 *
 * In C (the simulator): name_plain and name_traced, 64-bit indices. Under nvcc also
 * name_plain32, with 32-bit indices, for launches whose every size fits 2^30 (64-bit
 * division would dominate the cost), and with KS_BODY_TRACED32 defined name_traced32 too
 * (a traced kernel whose filter records nothing cost twice the plain one with 64-bit
 * index arithmetic). KS_BODY is included once per variant with KS_IDX, KS_TRACED
 * and KS_VARIANT set (see ks_probe.h); the body must not have include guards. No include
 * guard here either: a file may include it for several bodies.
 *
 * A body's kernel lines, KS_KERNEL(fn, args_t) (ks_kernel.h), expand only in the last
 * variant, when every variant of every body of the file exists: in C to the simulator's
 * fn_sim_plain / fn_sim_traced and a declaration of fn_cuda_row; under nvcc to the __global__
 * wrappers and fn_cuda_row, which launches through ks_cuda_launch_row. The forms:
 *   KS_KERNEL(fn, args_t)                    no attributes
 *   KS_KERNEL_ATTR(fn, args_t, PA, TA)       PA on the plain kernels, TA on the traced ones
 *   KS_KERNEL_FAST(fn, args_t, PA, TA)       also a 32-bit traced kernel, and traced blocks
 *                                            the filter drops run the plain body (needs
 *                                            KS_BODY_TRACED32; plain and traced must walk
 *                                            the same items)
 *   KS_KERNEL_FAST_ALL(fn, args_t, PA, TA, TA_ALL)  also a 32-bit traced kernel with
 *                                            TA_ALL (more registers) for launches whose
 *                                            filter keeps every item (ks_cuda_launch_row)
 *   KS_KERNEL_T32(fn, args_t, PA, TA)        the 32-bit traced kernel without the skip
 *   KS_KERNEL_PLAIN(fn, args_t, PA)          no traced variant: a plain_only row's body
 *                                            (KS_KERNEL_PLAIN_ROW, ks_kernel.h) */
#ifndef KS_BODY
#error "define KS_BODY (the body file, quoted) before including ks_variants.h"
#endif
#include "ks_kernel.h"

/* shared-memory accesses record only in the traced variant (ks_shared.h) */
#undef KS_SHARED_PROBES
#define KS_SHARED_PROBES KS_TRACED

/* every variant but the last: kernel lines expand to nothing */
#undef KS_KERNEL
#undef KS_KERNEL_ATTR
#undef KS_KERNEL_FAST
#undef KS_KERNEL_FAST_ALL
#undef KS_KERNEL_T32
#undef KS_KERNEL_PLAIN
#define KS_KERNEL(fn, args_t)
#define KS_KERNEL_ATTR(fn, args_t, PA, TA)
#define KS_KERNEL_FAST(fn, args_t, PA, TA)
#define KS_KERNEL_FAST_ALL(fn, args_t, PA, TA, TA_ALL)
#define KS_KERNEL_T32(fn, args_t, PA, TA)
#define KS_KERNEL_PLAIN(fn, args_t, PA)

#if defined(__CUDACC__)
#define KS_IDX int32_t
#define KS_TRACED 0
#define KS_VARIANT(name) name##_plain32
#include KS_BODY
#undef KS_TRACED
#undef KS_VARIANT
#ifdef KS_BODY_TRACED32
#define KS_TRACED 1
#define KS_VARIANT(name) name##_traced32
#include KS_BODY
#undef KS_TRACED
#undef KS_VARIANT
#endif
#undef KS_IDX
#endif

#define KS_IDX int64_t
#define KS_TRACED 0
#define KS_VARIANT(name) name##_plain
#include KS_BODY
#undef KS_TRACED
#undef KS_VARIANT

/* the last variant: kernel lines expand (unless KS_BODY_NO_KERNELS: a file that wants a
 * body's helpers, not its kernels, which another file of the build defines) */
#undef KS_KERNEL
#undef KS_KERNEL_ATTR
#undef KS_KERNEL_FAST
#undef KS_KERNEL_FAST_ALL
#undef KS_KERNEL_T32
#undef KS_KERNEL_PLAIN
#if defined(KS_BODY_NO_KERNELS)
#define KS_KERNEL_ATTR(fn, args_t, PA, TA)
#define KS_KERNEL_FAST(fn, args_t, PA, TA)
#define KS_KERNEL_FAST_ALL(fn, args_t, PA, TA, TA_ALL)
#define KS_KERNEL_T32(fn, args_t, PA, TA)
#define KS_KERNEL_PLAIN(fn, args_t, PA)
#elif defined(__CUDACC__)
#define KS_KERNEL_ATTR(fn, args_t, PA, TA)                                                                       \
    KS_CUDA_PLAIN_KERNEL(fn, plain32, args_t, PA)                                                                \
    KS_CUDA_PLAIN_KERNEL(fn, plain, args_t, PA)                                                                  \
    KS_CUDA_TRACED_KERNEL(fn, traced, plain, args_t, TA, 0)                                                      \
    extern "C" int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s)                              \
    {                                                                                                            \
        return ks_cuda_launch_row<args_t>(*(const args_t *)a, g, s, fn##_k_plain32, fn##_k_plain, fn##_k_traced, \
                                          NULL);                                                                 \
    }
#define KS_KERNEL_FAST(fn, args_t, PA, TA)                                                                       \
    KS_CUDA_PLAIN_KERNEL(fn, plain32, args_t, PA)                                                                \
    KS_CUDA_PLAIN_KERNEL(fn, plain, args_t, PA)                                                                  \
    KS_CUDA_TRACED_KERNEL(fn, traced, plain, args_t, TA, 1)                                                      \
    KS_CUDA_TRACED_KERNEL(fn, traced32, plain32, args_t, TA, 1)                                                  \
    extern "C" int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s)                              \
    {                                                                                                            \
        return ks_cuda_launch_row<args_t>(*(const args_t *)a, g, s, fn##_k_plain32, fn##_k_plain, fn##_k_traced, \
                                          fn##_k_traced32);                                                      \
    }
#define KS_KERNEL_FAST_ALL(fn, args_t, PA, TA, TA_ALL)                                                           \
    KS_CUDA_PLAIN_KERNEL(fn, plain32, args_t, PA)                                                                \
    KS_CUDA_PLAIN_KERNEL(fn, plain, args_t, PA)                                                                  \
    KS_CUDA_TRACED_KERNEL(fn, traced, plain, args_t, TA, 1)                                                      \
    KS_CUDA_TRACED_KERNEL(fn, traced32, plain32, args_t, TA, 1)                                                  \
    KS_CUDA_TRACED_KERNEL_AS(fn, traced32all, traced32, plain32, args_t, TA_ALL, 1)                              \
    extern "C" int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s)                              \
    {                                                                                                            \
        return ks_cuda_launch_row<args_t>(*(const args_t *)a, g, s, fn##_k_plain32, fn##_k_plain, fn##_k_traced, \
                                          fn##_k_traced32, fn##_k_traced32all);                                  \
    }
#define KS_KERNEL_T32(fn, args_t, PA, TA)                                                                        \
    KS_CUDA_PLAIN_KERNEL(fn, plain32, args_t, PA)                                                                \
    KS_CUDA_PLAIN_KERNEL(fn, plain, args_t, PA)                                                                  \
    KS_CUDA_TRACED_KERNEL(fn, traced, plain, args_t, TA, 0)                                                      \
    KS_CUDA_TRACED_KERNEL(fn, traced32, plain32, args_t, TA, 0)                                                  \
    extern "C" int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s)                              \
    {                                                                                                            \
        return ks_cuda_launch_row<args_t>(*(const args_t *)a, g, s, fn##_k_plain32, fn##_k_plain, fn##_k_traced, \
                                          fn##_k_traced32);                                                      \
    }
#define KS_KERNEL_PLAIN(fn, args_t, PA)                                                                        \
    KS_CUDA_PLAIN_KERNEL(fn, plain32, args_t, PA)                                                              \
    KS_CUDA_PLAIN_KERNEL(fn, plain, args_t, PA)                                                                \
    extern "C" int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s)                            \
    {                                                                                                          \
        return ks_cuda_launch_row<args_t>(*(const args_t *)a, g, s, fn##_k_plain32, fn##_k_plain, NULL, NULL); \
    }
#else
#define KS_KERNEL_ATTR(fn, args_t, PA, TA)                                           \
    __attribute__((unused)) static void fn##_sim_plain(ks_thread *t, const void *a)  \
    {                                                                                \
        fn##_body_plain(t, (const args_t *)a);                                       \
    }                                                                                \
    __attribute__((unused)) static void fn##_sim_traced(ks_thread *t, const void *a) \
    {                                                                                \
        fn##_body_traced(t, (const args_t *)a);                                      \
    }                                                                                \
    int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s);
#define KS_KERNEL_FAST(fn, args_t, PA, TA) KS_KERNEL_ATTR(fn, args_t, PA, TA)
#define KS_KERNEL_FAST_ALL(fn, args_t, PA, TA, TA_ALL) KS_KERNEL_ATTR(fn, args_t, PA, TA)
#define KS_KERNEL_T32(fn, args_t, PA, TA) KS_KERNEL_ATTR(fn, args_t, PA, TA)
#define KS_KERNEL_PLAIN(fn, args_t, PA)                                             \
    __attribute__((unused)) static void fn##_sim_plain(ks_thread *t, const void *a) \
    {                                                                               \
        fn##_body_plain(t, (const args_t *)a);                                      \
    }                                                                               \
    int fn##_cuda_row(const void *a, const ks_grid *g, const ks_sink *s);
#endif
#define KS_KERNEL(fn, args_t) KS_KERNEL_ATTR(fn, args_t, , )

#define KS_TRACED 1
#define KS_VARIANT(name) name##_traced
#include KS_BODY
#undef KS_IDX
#undef KS_TRACED
#undef KS_VARIANT
#undef KS_BODY
#undef KS_BODY_TRACED32
#undef KS_BODY_NO_KERNELS
#undef KS_SHARED_PROBES
#define KS_SHARED_PROBES 1
/* kernel lines outside ks_variants.h (a body included on its own) expand to nothing */
#undef KS_KERNEL
#undef KS_KERNEL_ATTR
#undef KS_KERNEL_FAST
#undef KS_KERNEL_FAST_ALL
#undef KS_KERNEL_T32
#undef KS_KERNEL_PLAIN
#define KS_KERNEL(fn, args_t)
#define KS_KERNEL_ATTR(fn, args_t, PA, TA)
#define KS_KERNEL_FAST(fn, args_t, PA, TA)
#define KS_KERNEL_FAST_ALL(fn, args_t, PA, TA, TA_ALL)
#define KS_KERNEL_T32(fn, args_t, PA, TA)
#define KS_KERNEL_PLAIN(fn, args_t, PA)
