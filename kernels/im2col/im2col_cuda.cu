/* im2col_cuda.cu - im2col/col2im on the GPU: the bodies of im2col_body.h in every variant
 * (32-bit traced ones too), their KS_KERNEL_FAST lines as kernels with one launch each (the
 * rows of im2col_op.c). */
#include "../core/ks_cuda.h"

#define KS_BODY "../im2col/im2col_body.h" /* relative to ks_variants.h */
#define KS_BODY_TRACED32 1
#include "../core/ks_variants.h"
