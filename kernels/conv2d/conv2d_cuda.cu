/* conv2d_cuda.cu - the conv2d GEMM step on the GPU: the body of conv2d_body.h in every
 * variant, its KS_KERNEL line as kernels with one launch (a row of conv2d_op.c; its im2col
 * row is im2col_cuda.cu's). A teaching kernel, not a fast GEMM. */
#include "../core/ks_cuda.h"

#define KS_BODY "../conv2d/conv2d_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
