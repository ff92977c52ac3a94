/* roi_align_cl_cuda.cu - the channels-last RoIAlign forward on the GPU: roi_align_cl_body.h
 * in its variants and its KS_KERNEL lines as kernels (rows of roi_align_op.c, which
 * launches them; the scratch is ks_cuda_scratch_get's). */
#include "../core/ks_cuda.h"

#define KS_BODY "../roi_align/roi_align_cl_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
