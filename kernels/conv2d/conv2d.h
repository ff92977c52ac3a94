/* conv2d.h - convolution as im2col + GEMM, the teaching form (lesson 04).
 *
 *   input   [N, C, H, W]  --im2col-->  columns [N, K, P]      K = C*kh*kw, P = Ho*Wo
 *   weight  [O, C, kh, kw]  seen as a matrix [O, K]
 *   output  [N, O, Ho, Wo] = weight [O, K] x columns[n] [K, P]   for each n
 *
 * The GEMM kernel is deliberately plain: one work item per output element (n, o, h_out,
 * w_out), w_out fastest, summing over k = (c*kh + i)*kw + j in ascending order in float.
 * That is the loop a student can step through; it is not a fast GEMM. The im2col step is
 * the im2col kernel (kernels/im2col); a conv2d trace records the GEMM kernel.
 */
#ifndef KS_CONV2D_H
#define KS_CONV2D_H

#include <stdint.h>

#include "../im2col/im2col_body.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_conv2d_params {
    ks_im2col_params im; /* the image and the window: N, C, H, W, kernel, padding, ... */
    int64_t out_channels; /* O */
} ks_conv2d_params;

typedef struct ks_conv2d_geom {
    ks_im2col_geom im; /* Ho, Wo, K (= rows), columns size */
    int64_t output_numel; /* N*O*Ho*Wo: GEMM work items */
    int64_t weight_numel; /* O*K */
} ks_conv2d_geom;

#define KS_CONV_GEMM_THREADS 512
#define KS_CONV_GEMM_BLOCK_CAP (-1)

/* Sites and tensors of a conv2d trace (the GEMM kernel). */
enum { KS_CONV_SITE_WORK = 0, KS_CONV_SITE_READ_W = 1, KS_CONV_SITE_READ_COL = 2, KS_CONV_SITE_WRITE = 3 };
enum { KS_CONV_T_INPUT = 0, KS_CONV_T_WEIGHT = 1, KS_CONV_T_COLUMNS = 2, KS_CONV_T_OUTPUT = 3 };

/* Validates p (as ks_im2col_geometry, and O >= 1 with no overflow) and fills g. */
int ks_conv2d_geometry(const ks_conv2d_params *p, ks_conv2d_geom *g);

/* The GEMM step: output = weight x columns. Host pointers (sim) or device pointers
 * (cuda, `stream` a cudaStream_t or NULL). `sink` / `dev_sink` NULL: plain variant. */
int ks_conv_gemm_sim(const ks_conv2d_params *p, const float *weight, const float *columns,
                     float *output, const ks_launch *launch, ks_sink *sink);
int ks_conv_gemm_cuda(const ks_conv2d_params *p, const float *weight, const float *columns,
                      float *output, const ks_launch *launch, const ks_sink *dev_sink,
                      void *stream);

/* Independent reference: the direct convolution from its definition, in double, with
 * no columns matrix: out[n,o,y,x] = sum_{c,i,j} w[o,c,i,j] * in[n,c,y*sh-ph+i*dh,x*sw-pw+j*dw]
 * (0 outside the image). */
void ks_conv2d_ref(const ks_conv2d_params *p, const float *input, const float *weight,
                   double *output);

/* The GEMM kernel's trace schema (4 sites). */


#ifdef __cplusplus
}
#endif

#endif
