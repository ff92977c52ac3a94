/* deform_cuda.cu - the deformable kernels on the GPU (plain with 32- and 64-bit indices,
 * traced with 64-bit), and the layer's CUDA backend: cuBLAS SGEMM (fp32 by default, TF32
 * tensor cores with p->math) and three small kernels (bias, rearrangement, row sums). */
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
    if (k < KS_DEFORM_IM2COL || k > KS_DEFORM_GRAD_TILE) return ks_fail(KS_EINVAL, "unknown deformable kernel %d", (int)k);
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
    int rc = k == KS_DEFORM_GRAD_TILE ? ks_deform_tile_launch(p, g, &a, launch, &threads, &blocks)
                                      : ks_launch_resolve(launch, KS_DEFORM_DEFAULT_THREADS(k), KS_DEFORM_BLOCK_CAP, work, &threads,
                                                          &blocks);
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
    default:
        if (dev_sink) ks_deform_coord_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_deform_coord_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_deform_coord_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("deformable_col2im_coord");
    }
}

/* --- the layer's CUDA backend --- */

/* out [im2col_step, O, P] += bias[o]; i indexes out */
__global__ void add_bias_k(float *out, const float *bias, int64_t O, int64_t P, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] += bias[(i / P) % O];
}

__global__ void gather_k(const float *g, float *buf, int64_t O, int64_t im2col_step, int64_t P)
{
    const int64_t n = O * im2col_step * P;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        /* i indexes buf [O, im2col_step, P] */
        const int64_t q = i % P, s = (i / P) % im2col_step, o = i / (P * im2col_step);
        buf[i] = g[(s * O + o) * P + q];
    }
}

/* one block per row: a tree sum in shared memory */
__global__ void row_sums_k(const float *buf, float *gb, int64_t n)
{
    __shared__ float part[256];
    const float *row = buf + blockIdx.x * n;
    float s = 0.0f;
    for (int64_t q = threadIdx.x; q < n; q += blockDim.x) s += row[q];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) gb[blockIdx.x] += part[0];
}

typedef struct cuda_ctx {
    cudaStream_t stream;  /* the caller's: GEMMs and everything else */
    cudaStream_t kstream; /* the sampling kernels': `side` in the forward's pipeline */
    const ks_launch *launch;
    const ks_sink *sink;
    cudaStream_t side;                  /* the forward's im2col stream (0: none yet) */
    cudaEvent_t ready[2], free_[2];     /* a columns buffer written / read by its GEMMs */
    int freed[2];                       /* free_[buf] was recorded */
} cuda_ctx;

/* --- the forward's pipeline: im2col of piece i+1 on `side` while piece i's GEMMs run ---
 * (the side stream first waits for everything before the call on the caller's stream) */
static int pipe_start(cuda_ctx *x)
{
    if (x->side) return KS_OK;
    cudaEvent_t start;
    int rc = ks_cuda_ok(cudaStreamCreateWithFlags(&x->side, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    for (int i = 0; i < 2 && !rc; ++i) {
        rc = ks_cuda_ok(cudaEventCreateWithFlags(&x->ready[i], cudaEventDisableTiming), "cudaEventCreate");
        if (!rc) rc = ks_cuda_ok(cudaEventCreateWithFlags(&x->free_[i], cudaEventDisableTiming), "cudaEventCreate");
    }
    if (!rc) rc = ks_cuda_ok(cudaEventCreateWithFlags(&start, cudaEventDisableTiming), "cudaEventCreate");
    if (rc) return rc;
    rc = ks_cuda_ok(cudaEventRecord(start, x->stream), "cudaEventRecord");
    if (!rc) rc = ks_cuda_ok(cudaStreamWaitEvent(x->side, start, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(start);
    x->kstream = x->side;
    return rc;
}

static int pipe_im2col_begin(void *ctx, int buf)
{
    cuda_ctx *x = (cuda_ctx *)ctx;
    int rc = pipe_start(x);
    for (int i = 0; i < 2 && !rc; ++i)
        if ((buf < 0 || buf == i) && x->freed[i])
            rc = ks_cuda_ok(cudaStreamWaitEvent(x->side, x->free_[i], 0), "cudaStreamWaitEvent");
    return rc;
}

static int pipe_im2col_end(void *ctx, int buf)
{
    cuda_ctx *x = (cuda_ctx *)ctx;
    const int i = buf < 0 ? 0 : buf;
    int rc = ks_cuda_ok(cudaEventRecord(x->ready[i], x->side), "cudaEventRecord");
    return rc ? rc : ks_cuda_ok(cudaStreamWaitEvent(x->stream, x->ready[i], 0), "cudaStreamWaitEvent");
}

static int pipe_gemm_end(void *ctx, int buf)
{
    cuda_ctx *x = (cuda_ctx *)ctx;
    int rc = KS_OK;
    for (int i = 0; i < 2 && !rc; ++i)
        if (buf < 0 || buf == i) {
            rc = ks_cuda_ok(cudaEventRecord(x->free_[i], x->stream), "cudaEventRecord");
            x->freed[i] = 1;
        }
    return rc;
}

/* nothing runs on `side` after its last im2col, which the caller's stream waited for */
static int pipe_end(void *ctx)
{
    (void)ctx;
    return KS_OK;
}

static void pipe_free(cuda_ctx *x)
{
    if (!x->side) return;
    for (int i = 0; i < 2; ++i) cudaEventDestroy(x->ready[i]), cudaEventDestroy(x->free_[i]);
    cudaStreamDestroy(x->side); /* released once its work is done */
    x->side = 0;
}

static unsigned grid_for(int64_t n)
{
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

static int cu_kernel(void *ctx, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                     const ks_deform_chunk *c, int record)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    /* the backward's adds gather in shared memory first where the window fits */
    if (k == KS_DEFORM_GRAD_TAP && !record && ks_deform_tile_fits(p, g)) k = KS_DEFORM_GRAD_TILE;
    return ks_deform_launch_cuda(p, g, k, c, x->launch, record ? x->sink : NULL, x->kstream);
}

static int cu_gemm(void *ctx, int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t lda, int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C,
                   int64_t ldc, int64_t sc, int64_t batch)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    return ks_cuda_sgemm_batched(x->stream, math, ta, tb, M, N, K, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

static int cu_add_bias(void *ctx, float *out, const float *bias, int64_t O, int64_t im2col_step, int64_t P)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    const int64_t n = im2col_step * O * P;
    add_bias_k<<<grid_for(n), 256, 0, x->stream>>>(out, bias, O, P, n);
    return ks_cuda_check_launch("deform_conv bias");
}

static int cu_gather(void *ctx, const float *g, float *buf, int64_t O, int64_t im2col_step, int64_t P)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    gather_k<<<grid_for(O * im2col_step * P), 256, 0, x->stream>>>(g, buf, O, im2col_step, P);
    return ks_cuda_check_launch("deform_conv gather");
}

static int cu_row_sums(void *ctx, const float *buf, float *gb, int64_t O, int64_t n)
{
    const cuda_ctx *x = (const cuda_ctx *)ctx;
    if (O > 2147483647) return ks_fail(KS_EINVAL, "too many output channels");
    row_sums_k<<<(unsigned)O, 256, 0, x->stream>>>(buf, gb, n);
    return ks_cuda_check_launch("deform_conv bias gradient");
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

static int cuda_run(const ks_deform_params *p, const ks_deform_tensors *t, float *ws,
                    const ks_launch *launch, ks_deform_kernel traced, const ks_sink *sink,
                    void *stream, int backward)
{
    cuda_ctx x;
    memset(&x, 0, sizeof x);
    x.stream = x.kstream = (cudaStream_t)stream;
    x.launch = launch;
    x.sink = sink;
    ks_deform_backend b = {.ctx = &x, .kernel = cu_kernel, .gemm = cu_gemm, .add_bias = cu_add_bias,
                           .gather = cu_gather, .row_sums = cu_row_sums, .zero = cu_zero, .copy = cu_copy,
                           .pieces = 1, .im2col_begin = NULL, .im2col_end = NULL, .gemm_end = NULL,
                           .pipeline_end = NULL};
    if (!backward) { /* the forward's pieces: KSCOPE_DEFORM_PIECES (1: no pipeline) */
        b.pieces = ks_deform_pieces(KS_DEFORM_PIECES);
        if (b.pieces > 1) {
            b.im2col_begin = pipe_im2col_begin, b.im2col_end = pipe_im2col_end;
            b.gemm_end = pipe_gemm_end, b.pipeline_end = pipe_end;
        }
    }
    const int rc = backward ? ks_deform_layer_backward(&b, p, t, ws, traced) : ks_deform_layer_forward(&b, p, t, ws, traced);
    pipe_free(&x);
    return rc;
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
