/* deform_cuda.cu - the deformable kernels on the GPU: their bodies in every variant, and
 * the kernels their KS_KERNEL lines make (the layer, deform_layer.c, runs them with cuBLAS
 * between; the fused TF32 forward's kernel is deform_fused.cu). */
#include "../core/ks_cuda.h"

#define KS_BODY "../deform_conv/deform_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"


/* -> each body's KS_KERNEL line as kernels and ks_deform_X_cuda_row, their one launch (the
 *    rows of deform_op.c, which ks_deform_kernel_cuda and the layer run) */

/* the fused forward's weight preparation (deform_weight_body.h) and the bias add, gradient
 * gather and row sums (deform_bias_body.h): their KS_KERNEL lines as kernels, launched
 * through their rows in deform_op.c's table */
#define KS_BODY "../deform_conv/deform_weight_body.h"
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_bias_body.h"
#include "../core/ks_variants.h"
