/* roi_align_cuda.cu - RoIAlign on the GPU: the bodies of roi_align_body.h (32-bit traced
 * variants too) and roi_align_plane_body.h in their variants, and their KS_KERNEL lines as
 * kernels: rows of roi_align_op.c, which launches them. The channels-last bodies are
 * roi_align_cl_cuda.cu's: in a translation unit of their own, nvcc specializes the helpers
 * each unit shares (ks_roi_zero_meets_inf) for its own callers, as when it was measured. */
#include "../core/ks_cuda.h"

#define KS_BODY "../roi_align/roi_align_body.h" /* relative to ks_variants.h */
#define KS_BODY_TRACED32 1
#include "../core/ks_variants.h"
#define KS_BODY "../roi_align/roi_align_plane_body.h"
#include "../core/ks_variants.h"
