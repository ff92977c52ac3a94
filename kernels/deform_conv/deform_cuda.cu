/* deform_cuda.cu - the deformable kernels on the GPU (their bodies in every variant, and
 * the kernels their KS_KERNEL lines make), and the layer's CUDA backend: cuBLAS SGEMM (fp32
 * by default, TF32 tensor cores with p->math) and, for TF32 forwards, the fused kernel of
 * deform_fused.cu; the bias add, gather and row sums are deform_bias_body.h's rows. */
#include <stdlib.h>
#include <string.h>

#include "../core/ks_cuda.h"
#include "../core/ks_cuda_api.h"
#include "deform_layer.h"

#define KS_BODY "../deform_conv/deform_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"


/* -> each body's KS_KERNEL line as kernels and ks_deform_X_cuda_row, their one launch (the
 *    rows of deform_kernels.c, which ks_deform_kernel_cuda and the layer run) */

/* --- the layer's CUDA backend --- */

/* the bias add, gradient gather and row sums (deform_bias_body.h): their KS_KERNEL lines
 * as kernels, launched through the rows of deform_layer.c */
#define KS_BODY "../deform_conv/deform_bias_body.h"
#include "../core/ks_variants.h"

typedef struct cuda_ctx {
    cudaStream_t stream;
    const ks_launch *launch;
    const ks_sink *sink;
} cuda_ctx;


/* The backward's tap pass: grad_gather where its lists fit, else grad_tile where its window
 * fits, else grad_tap; KSCOPE_DEFORM_BWD=gather|tile|tap picks one for measuring (a choice
 * that does not fit falls back as above). */
static ks_deform_kernel ks_deform_backward_kernel(const ks_deform_params *p, const ks_deform_geom *g)
{
    const char *e = getenv("KSCOPE_DEFORM_BWD");
    const int want = !e ? 0 : !strcmp(e, "tile") ? 1 : !strcmp(e, "tap") ? 2 : 0;
    if (want == 0 && ks_deform_gather_fits(p, g)) return KS_DEFORM_GRAD_GATHER;
    if (want <= 1 && ks_deform_tile_fits(p, g)) return KS_DEFORM_GRAD_TILE;
    return KS_DEFORM_GRAD_TAP;
}

static int cu_kernel(void *ctx, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                     const ks_deform_chunk *c, int record)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    /* the backward's adds gather in shared memory first where the window fits */
    if (k == KS_DEFORM_GRAD_TAP && !record) k = ks_deform_backward_kernel(p, g);
    return ks_deform_launch_cuda(p, g, k, c, x->launch, record ? x->sink : NULL, x->stream);
}

static int cu_gemm(void *ctx, int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                   int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                   int64_t batch)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    return ks_cuda_sgemm_batched(x->stream, math, ta, tb, M, N, K, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

static int cu_zero(void *ctx, float *p, int64_t n)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    return ks_cuda_ok(cudaMemsetAsync(p, 0, (size_t)n * sizeof(float), x->stream), "cudaMemsetAsync");
}

static int cu_copy(void *ctx, float *dst, const float *src, int64_t n)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    return ks_cuda_ok(cudaMemcpyAsync(dst, src, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, x->stream),
                      "cudaMemcpyAsync");
}

static int cu_fused(void *ctx, const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                    const float *weight, float *weight_t, int prepare, const float *bias, float *out)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    return ks_deform_fused_cuda(x->stream, p, g, c, weight, weight_t, prepare, bias, out);
}

static int cuda_run(const ks_deform_params *p, const ks_deform_tensors *t, float *ws, const ks_launch *launch,
                    ks_deform_kernel traced, const ks_sink *sink, void *stream, int backward)
{
    cuda_ctx x;
    x.stream = (cudaStream_t)stream;
    x.launch = launch;
    x.sink = sink;
    const ks_deform_backend b = {.ctx = &x,
                                 .kernel = cu_kernel,
                                 .gemm = cu_gemm,
                                 .device = KS_DEV_CUDA,
                                 .stream = stream,
                                 .zero = cu_zero,
                                 .copy = cu_copy,
                                 .fused = cu_fused};
    return backward ? ks_deform_layer_backward(&b, p, t, ws, traced) : ks_deform_layer_forward(&b, p, t, ws, traced);
}

extern "C" int ks_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                                      const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink,
                                      void *stream)
{
    return cuda_run(p, t, workspace, launch, traced, dev_sink, stream, 0);
}

extern "C" int ks_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                                       const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink,
                                       void *stream)
{
    return cuda_run(p, t, workspace, launch, traced, dev_sink, stream, 1);
}
