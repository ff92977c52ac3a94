/* conv2d_body.h - convolution as im2col + GEMM, the teaching form (lesson 04).
 *
 *   input   [N, C, H, W]  --im2col-->  columns [N, K, P]      K = C*kh*kw, P = Ho*Wo
 *   weight  [O, C, kh, kw]  seen as a matrix [O, K]
 *   output  [N, O, Ho, Wo] = weight [O, K] x columns[n] [K, P]   for each n
 *
 * The GEMM kernel is deliberately plain: one work item per output element (n, o, h_out,
 * w_out), w_out fastest, summing over k = (c*kh + i)*kw + j in ascending order in float.
 * That is the loop a student can step through; it is not a fast GEMM. The im2col step is
 * the im2col kernel (kernels/im2col); a conv2d trace records the GEMM kernel, or with
 * --trace-kernel im2col the im2col step.
 *
 * The declarations both builds share, then (per variant, ks_variants.h) the GEMM body and
 * its kernel line (a row of conv2d_op.c).
 */
#ifndef KS_CONV2D_DECL
#define KS_CONV2D_DECL
#include <stdint.h>

#define KS_DECL_ONLY /* its declarations, whatever variant is being compiled */
#include "../im2col/im2col_body.h"
#undef KS_DECL_ONLY

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_conv2d_params {
    ks_im2col_params im;  /* the image and the window: N, C, H, W, kernel, padding, ... */
    int64_t out_channels; /* O */
} ks_conv2d_params;

typedef struct ks_conv2d_geom {
    ks_im2col_geom im;    /* Ho, Wo, K (= rows), columns size */
    int64_t output_numel; /* N*O*Ho*Wo: GEMM work items */
    int64_t weight_numel; /* O*K */
} ks_conv2d_geom;

#define KS_CONV_GEMM_THREADS 512
#define KS_CONV_GEMM_BLOCK_CAP (-1)

/* Sites and tensors of a conv2d trace (the GEMM kernel). */
enum { KS_CONV_SITE_WORK = 0, KS_CONV_SITE_READ_W = 1, KS_CONV_SITE_READ_COL = 2, KS_CONV_SITE_WRITE = 3 };
/* input and columns first, as im2col's own tensors: the im2col row records into them */
enum { KS_CONV_T_INPUT = 0, KS_CONV_T_COLUMNS = 1, KS_CONV_T_WEIGHT = 2, KS_CONV_T_OUTPUT = 3 };

/* Validates p (as ks_im2col_geometry, and O >= 1 with no overflow) and fills g. */
int ks_conv2d_geometry(const ks_conv2d_params *p, ks_conv2d_geom *g);

/* The GEMM step: output = weight x columns. Host pointers (sim) or device pointers
 * (cuda, `stream` a cudaStream_t or NULL). `sink` / `dev_sink` NULL: plain variant. */
int ks_conv_gemm_sim(const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                     const ks_launch *launch, ks_sink *sink);
int ks_conv_gemm_cuda(const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                      const ks_launch *launch, const ks_sink *dev_sink, void *stream);

/* Independent reference: the direct convolution from its definition, in double, with
 * no columns matrix: out[n,o,y,x] = sum_{c,i,j} w[o,c,i,j] * in[n,c,y*sh-ph+i*dh,x*sw-pw+j*dw]
 * (0 outside the image). */
void ks_conv2d_ref(const ks_conv2d_params *p, const float *input, const float *weight, double *output);


#ifdef __cplusplus
}
#endif

typedef struct ks_conv_gemm_args {
    int64_t batch, out_channels, rows, height_col, width_col; /* N, O, K, Ho, Wo */
    int64_t channels, kernel_h, kernel_w;                     /* to name weight elements */
    const float *weight;                                      /* [O, K] */
    const float *columns;                                     /* [N, K, Ho*Wo] */
    float *output;                                            /* [N, O, Ho, Wo] */
} ks_conv_gemm_args;

#ifdef __cplusplus
extern "C" {
#endif
int ks_conv_gemm_args_make(const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                           ks_conv_gemm_args *a, ks_conv2d_geom *g);
/* The trace schema of the GEMM kernel (4 sites). */
int ks_conv_gemm_sites(const ks_conv_gemm_args *a, ks_site *sites);
#ifdef __cplusplus
}
#endif
#endif /* KS_CONV2D_DECL */

#ifdef KS_VARIANT
#include <math.h>

#include "../core/ks_probe.h"

KS_FN void KS_VARIANT(ks_conv_gemm_body)(ks_thread *t, const ks_conv_gemm_args *a)
{
    const KS_IDX O = (KS_IDX)a->out_channels, K = (KS_IDX)a->rows;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, P = Ho * Wo;
    const KS_IDX n_work = (KS_IDX)a->batch * O * P;
    const KS_IDX taps = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX p = index % P; /* h_out * Wo + w_out: the column of the columns matrix */
        const KS_IDX o = (index / P) % O;
        const KS_IDX n = index / (P * O);
        KS_PROBE(ks_probe_work(t, KS_CONV_SITE_WORK, index, iter, n, o, p / Wo, p % Wo, 0, 0, 0, 0));
        const float *w = a->weight + o * K;
        const float *col = a->columns + n * K * P + p;
        float acc = 0.0f;
        for (KS_IDX k = 0; k < K; ++k) {
            const float wv = w[k], cv = col[k * P];
            acc = fmaf(wv, cv, acc); /* one rounding, the same on the GPU and the CPU */
            /* weight[o, c, i, j]: plane o*C + c, row i, column j */
            KS_PROBE(ks_probe_read(t, KS_CONV_SITE_READ_W, KS_CONV_T_WEIGHT, (int)k, o * K + k,
                                   o * (KS_IDX)a->channels + k / taps, (k % taps) / (KS_IDX)a->kernel_w,
                                   k % (KS_IDX)a->kernel_w, wv));
            KS_PROBE(
                ks_probe_read(t, KS_CONV_SITE_READ_COL, KS_CONV_T_COLUMNS, (int)k, (n * K + k) * P + p, n, k, p, cv));
        }
        a->output[index] = acc;
        KS_PROBE(ks_probe_write(t, KS_CONV_SITE_WRITE, KS_CONV_T_OUTPUT, 0, index, n * O + o, p / Wo, p % Wo, acc, 0));
    }
}
KS_KERNEL(ks_conv_gemm, ks_conv_gemm_args)
#endif
