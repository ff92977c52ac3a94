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
    /* runs kernel k on a chunk; `record`: the traced variant into the backend's sink */
    int (*kernel)(void *ctx, const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                  int record);
    /* row-major C[M,N] = beta*C + op(A) op(B) (as ks_sgemm) */
    int (*gemm)(void *ctx, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
    /* buf [O, im2col_step, P] -> out [im2col_step, O, P] (+ bias[o] when bias) */
    int (*scatter)(void *ctx, const float *buf, const float *bias, float *out, int64_t O,
                   int64_t im2col_step, int64_t P);
    /* grad_output [im2col_step, O, P] -> buf [O, im2col_step, P] */
    int (*gather)(void *ctx, const float *grad_out, float *buf, int64_t O, int64_t im2col_step, int64_t P);
    /* grad_bias[o] += sum of buf[o, :] (n values per row) */
    int (*row_sums)(void *ctx, const float *buf, float *grad_bias, int64_t O, int64_t n);
    int (*zero)(void *ctx, float *p, int64_t n);
    int (*copy)(void *ctx, float *dst, const float *src, int64_t n);
} ks_deform_backend;

/* The layer over backend b; `traced` names the kernel whose first-chunk launch records. */
int ks_deform_layer_forward(const ks_deform_backend *b, const ks_deform_params *p,
                            const ks_deform_tensors *t, float *workspace, ks_deform_kernel traced);
int ks_deform_layer_backward(const ks_deform_backend *b, const ks_deform_params *p,
                             const ks_deform_tensors *t, float *workspace, ks_deform_kernel traced);

#ifdef __cplusplus
}
#endif

#endif
