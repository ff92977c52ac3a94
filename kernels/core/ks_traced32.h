/* ks_traced32.h - a body's traced variant with 32-bit indices (CUDA only), for launches
 * whose every size fits 2^30, as the plain32 variant of ks_variants.h: 64-bit index
 * arithmetic made a traced kernel whose filter records nothing cost twice the plain one.
 *
 *   #define KS_BODY "../im2col/im2col_body.h"   (relative to this file)
 *   #include "../core/ks_traced32.h"            -> each body as NAME_traced32
 *   KS_CUDA_WRAPPERS4_SKIP(ks_im2col, ks_im2col_args, plain attribute, traced attribute)
 *       -> __global__ ks_im2col_k_plain32, _plain, _traced and _traced32
 * No include guard (one body per inclusion); the macros are defined once. */
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

#ifndef KS_CUDA_WRAPPERS4
/* KS_CUDA_WRAPPERS (ks_cuda.h) plus name_k_traced32, each kernel with an attribute: PA on
 * the plain ones, TA on the traced ones, e.g. __launch_bounds__(1024) (at most 64
 * registers: any block size launches) or __maxnreg__(40) (more warps per SM).
 * KS_CUDA_WRAPPERS4_SKIP is for a body whose plain and traced variants walk the same
 * items (im2col, not RoIAlign, whose plain slots take 4 channels and traced ones 1): there
 * a traced block whose filter passes none of its items (ks_filter_drops_block: an empty
 * index range, or a block outside the block range) runs the plain body of the same index
 * width. It would record nothing, and its dropped items run the plain code anyway. */
#define KS_CUDA_WRAPPERS4_IF(name, args_t, PA, TA, skip)                                            \
    KS_CUDA_PLAIN_KERNEL(name, plain32, args_t, PA)                                               \
    KS_CUDA_PLAIN_KERNEL(name, plain, args_t, PA)                                                 \
    KS_CUDA_TRACED_KERNEL(name, traced, plain, args_t, TA, skip)                                  \
    KS_CUDA_TRACED_KERNEL(name, traced32, plain32, args_t, TA, skip)
#define KS_CUDA_WRAPPERS4(name, args_t, PA, TA) KS_CUDA_WRAPPERS4_IF(name, args_t, PA, TA, 0)
#define KS_CUDA_WRAPPERS4_SKIP(name, args_t, PA, TA) KS_CUDA_WRAPPERS4_IF(name, args_t, PA, TA, 1)
#endif
