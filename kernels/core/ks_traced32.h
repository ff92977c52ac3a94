/* ks_traced32.h - a body's traced variant with 32-bit indices (CUDA only), for launches
 * whose every size fits 2^30, as the plain32 variant of ks_variants.h: 64-bit index
 * arithmetic made a traced kernel whose filter records nothing cost twice the plain one.
 *
 *   #define KS_BODY "../im2col/im2col_body.h"   (relative to this file)
 *   #include "../core/ks_traced32.h"            -> each body as NAME_traced32
 *   KS_CUDA_TRACED32(ks_im2col, ks_im2col_args) -> __global__ ks_im2col_k_traced32(args, sink)
 * No include guard (one body per inclusion); the macro is defined once. */
#ifndef KS_BODY
#error "define KS_BODY (the body file, quoted) before including ks_traced32.h"
#endif
#define KS_IDX int32_t
#define KS_TRACED 1
#define KS_VARIANT(name) name##_traced32
#include KS_BODY
#undef KS_IDX
#undef KS_TRACED
#undef KS_VARIANT
#undef KS_BODY

#ifndef KS_CUDA_TRACED32
/* the wrapper of KS_CUDA_WRAPPERS's name_k_traced, around the 32-bit body */
#define KS_CUDA_TRACED32(name, args_t)                                                             \
    __global__ void name##_k_traced32(args_t a, ks_sink sink)                                     \
    {                                                                                             \
        ks_thread t;                                                                              \
        ks_thread_from_builtins(&t, &sink);                                                       \
        const unsigned long long start = ks_globaltimer();                                        \
        name##_body_traced32(&t, &a);                                                             \
        if (sink.schedule) ks_schedule_block(&sink, start);                                       \
    }
#endif
