/* gemm_tiled_cuda.cu - gemm_tiled on the GPU: the body of gemm_tiled_body.h in every
 * variant, its KS_KERNEL line as kernels and their launch, ks_gemm_tiled_cuda, (the row of
 * gemm_tiled_op.c); a block is one T x T tile. */
#include "../core/ks_cuda.h"

#define KS_BODY "../gemm_tiled/gemm_tiled_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
