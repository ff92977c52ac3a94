/* maxpool2d_cuda.cu - maxpool2d on the GPU: the bodies of maxpool2d_body.h in every
 * variant, and their KS_KERNEL lines as __global__ kernels with one launch each
 * (ks_maxpool2d_fwd_cuda_row, ks_maxpool2d_bwd_cuda_row: the rows of maxpool2d_op.c). */
#include "../core/ks_cuda.h"

#define KS_BODY "../maxpool2d/maxpool2d_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
