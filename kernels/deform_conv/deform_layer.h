/* deform_layer.h - the layer's flow (chunks, GEMMs per conv group, bias, gradients),
 * written once over a backend: the simulator with the C GEMM, or CUDA with cuBLAS.
 * Internal to kernels/deform_conv. */
#ifndef KS_DEFORM_LAYER_H
#define KS_DEFORM_LAYER_H

#include "deform_conv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_deform_backend {
    void *ctx;
    /* runs kernel k on a chunk of the validated geometry g (nothing checked again);
     * `record`: the traced variant into the backend's sink */
    int (*kernel)(void *ctx, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                  const ks_deform_chunk *c, int record);
    /* `batch` row-major GEMMs C_s[M,N] = beta*C_s + op(A_s) op(B_s) (as ks_sgemm), X_s =
     * X + s*sx; math KS_MATH_FP32 or KS_MATH_TF32 */
    int (*gemm)(void *ctx, int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                int64_t batch);
    /* where the bias add, the gradient gather and the row sums (deform_bias_body.h, the
     * kernel rows of deform_layer.c) run: KS_DEV_SIM or KS_DEV_CUDA, on `stream` */
    int device;
    void *stream;
    int (*zero)(void *ctx, float *p, int64_t n);
    int (*copy)(void *ctx, float *dst, const float *src, int64_t n);
    /* optional (NULL: none): a chunk's whole forward in one kernel, output and bias
     * included (CUDA's TF32 forward, deform_fused.cu), where ks_deform_fused_fits. weight_t:
     * scratch for the prepared weight, filled from weight when `prepare`: groups x (Og
     * rounded up to its tile's rows, at most 256) x Kg floats, the room that
     * ks_deform_fused_fits checks (the workspace) */
    int (*fused)(void *ctx, const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                 const float *weight, float *weight_t, int prepare, const float *bias, float *out);
} ks_deform_backend;

/* deform_fused.cu's launcher (the CUDA backend's `fused`), and its launch count */
int ks_deform_fused_cuda(void *stream, const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                         const float *weight, float *weight_t, int prepare, const float *bias, float *out);
void ks_deform_fused_launched(void);
/* KS_DEFORM_FUSED: 0 off (unset or anything else), 1 on, or the tile shape asked for (24,
 * 42, 422, 44) */
int ks_deform_fused_choice(void);

/* The layer over backend b; `traced` names the kernel whose first-chunk launch records. */
int ks_deform_layer_forward(const ks_deform_backend *b, const ks_deform_params *p, const ks_deform_tensors *t,
                            float *workspace, ks_deform_kernel traced);
int ks_deform_layer_backward(const ks_deform_backend *b, const ks_deform_params *p, const ks_deform_tensors *t,
                             float *workspace, ks_deform_kernel traced);

#ifdef __cplusplus
}
#endif

#endif
