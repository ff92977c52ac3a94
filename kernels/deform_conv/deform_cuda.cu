/* deform_cuda.cu - the deformable kernels on the GPU (plain with 32- and 64-bit indices,
 * traced with 64-bit), and the layer's CUDA backend: cuBLAS SGEMM (fp32 by default, TF32
 * tensor cores with p->math), three small kernels (bias, rearrangement, row sums) and,
 * for TF32 forwards, the fused kernel of deform_fused.cu. */
#include <stdlib.h>
#include <string.h>

#include "../core/ks_cuda.h"
#include "../core/ks_cuda_api.h"
#include "deform_layer.h"

#define KS_BODY "../deform_conv/deform_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"


KS_CUDA_WRAPPERS(ks_deform_im2col, ks_deform_args)
/* -> ks_deform_im2col_k_plain32, ks_deform_im2col_k_plain, ks_deform_im2col_k_traced (bodies ks_deform_im2col_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_deform_col2im, ks_deform_args)
/* -> ks_deform_col2im_k_plain32, ks_deform_col2im_k_plain, ks_deform_col2im_k_traced (bodies ks_deform_col2im_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_deform_coord, ks_deform_args)
/* -> ks_deform_coord_k_plain32, ks_deform_coord_k_plain, ks_deform_coord_k_traced (bodies ks_deform_coord_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_deform_im2col_tap, ks_deform_args)
KS_CUDA_WRAPPERS(ks_deform_grad_tap, ks_deform_args)
/* at most 64 registers: two 512-thread blocks (or three of a 3x3 kernel's 288) per SM */
KS_CUDA_WRAPPERS_ATTR(ks_deform_grad_tile, ks_deform_args, __launch_bounds__(512, 2))
/* 288 threads of a 3x3 kernel's tile and 46.7 KiB of shared memory: three blocks an SM,
 * which leaves 75 registers a thread (KS_DEFORM_GATHER_REGS) */
#ifndef KS_DEFORM_GATHER_REGS
#define KS_DEFORM_GATHER_REGS 72
#endif
KS_CUDA_WRAPPERS_ATTR(ks_deform_grad_gather, ks_deform_args, __maxnreg__(KS_DEFORM_GATHER_REGS))

/* 32-bit indices are exact when every tensor and every index the grid-stride loop can
 * reach stays under 2^30. */
static int fits_int32(const ks_deform_geom *g, int64_t work, int64_t blocks, int threads)
{
    const int64_t lim = (int64_t)1 << 30;
    return g->input_numel < lim && g->offset_numel < lim && g->col_numel < lim && work < lim &&
           blocks * threads < lim;
}

extern "C" int ks_deform_kernel_cuda(const ks_deform_params *p, ks_deform_kernel k,
                                     const ks_deform_chunk *c, const ks_launch *launch,
                                     const ks_sink *dev_sink, void *stream)
{
    ks_deform_args a;
    ks_deform_geom g;
    if (k < KS_DEFORM_IM2COL || k > KS_DEFORM_GRAD_GATHER) return ks_fail(KS_EINVAL, "unknown deformable kernel %d", (int)k);
    if (c->write_columns && dev_sink) return ks_fail(KS_EINVAL, "write_columns is for untraced launches (its stores are not recorded)");
    int rc = ks_deform_args_make(p, c, &a, &g);
    return rc ? rc : ks_deform_launch_cuda(p, &g, k, c, launch, dev_sink, stream);
}

extern "C" int ks_deform_launch_cuda(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                                     const ks_deform_chunk *c, const ks_launch *launch, const ks_sink *dev_sink,
                                     void *stream)
{
    ks_deform_args a;
    int threads;
    int64_t blocks;
    const int64_t work = ks_deform_work(g, p, k, c->im2col_step);
    ks_deform_args_fill(p, g, c, &a);
    size_t shared = 0;
    int rc = k == KS_DEFORM_GRAD_TILE     ? ks_deform_tile_launch(p, g, &a, launch, &threads, &blocks)
             : k == KS_DEFORM_GRAD_GATHER ? ks_deform_gather_launch(p, g, &a, launch, &threads, &blocks, &shared)
                                          : ks_launch_resolve(launch, KS_DEFORM_DEFAULT_THREADS(k), KS_DEFORM_BLOCK_CAP, work,
                                                              &threads, &blocks);
    if (rc || blocks == 0) return rc;
    cudaStream_t s = (cudaStream_t)stream;
    const int small = fits_int32(g, work, blocks, threads);
    const unsigned nb = (unsigned)blocks;
    switch (k) {
    case KS_DEFORM_IM2COL:
        if (dev_sink) ks_deform_im2col_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_im2col_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_im2col_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_im2col");
    case KS_DEFORM_COL2IM:
        if (dev_sink) ks_deform_col2im_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_col2im_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_col2im_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_col2im");
    case KS_DEFORM_IM2COL_TAP:
        if (dev_sink) ks_deform_im2col_tap_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_im2col_tap_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_im2col_tap_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_im2col_tap");
    case KS_DEFORM_GRAD_TAP:
        if (dev_sink) ks_deform_grad_tap_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_grad_tap_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_grad_tap_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_grad_tap");
    case KS_DEFORM_GRAD_TILE:
        if (dev_sink) ks_deform_grad_tile_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_grad_tile_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_grad_tile_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_grad_tile");
    case KS_DEFORM_GRAD_GATHER: /* at most 48 KiB of shared memory: no attribute to raise */
        if (dev_sink) ks_deform_grad_gather_k_traced<<<nb, threads, shared, s>>>(a, *dev_sink);
        else if (small) ks_deform_grad_gather_k_plain32<<<nb, threads, shared, s>>>(a);
        else ks_deform_grad_gather_k_plain<<<nb, threads, shared, s>>>(a);
        return ks_cuda_check_launch("deformable_grad_gather");
    default:
        if (dev_sink) ks_deform_coord_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_coord_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_coord_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_col2im_coord");
    }
}

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

static int cu_gemm(void *ctx, int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t lda, int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C,
                   int64_t ldc, int64_t sc, int64_t batch)
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

static int cuda_run(const ks_deform_params *p, const ks_deform_tensors *t, float *ws,
                    const ks_launch *launch, ks_deform_kernel traced, const ks_sink *sink,
                    void *stream, int backward)
{
    cuda_ctx x;
    x.stream = (cudaStream_t)stream;
    x.launch = launch;
    x.sink = sink;
    const ks_deform_backend b = {.ctx = &x, .kernel = cu_kernel, .gemm = cu_gemm, .device = KS_DEV_CUDA,
                                 .stream = stream, .zero = cu_zero,
                                 .copy = cu_copy, .fused = cu_fused};
    return backward ? ks_deform_layer_backward(&b, p, t, ws, traced) : ks_deform_layer_forward(&b, p, t, ws, traced);
}

extern "C" int ks_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t,
                                      float *workspace, const ks_launch *launch, ks_deform_kernel traced,
                                      const ks_sink *dev_sink, void *stream)
{
    return cuda_run(p, t, workspace, launch, traced, dev_sink, stream, 0);
}

extern "C" int ks_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t,
                                       float *workspace, const ks_launch *launch, ks_deform_kernel traced,
                                       const ks_sink *dev_sink, void *stream)
{
    return cuda_run(p, t, workspace, launch, traced, dev_sink, stream, 1);
}
