/* deform_layer.c - the deformable convolution layer, as in mmcv's deform_conv_forward /
 * backward_input / backward_parameters:
 *   for each chunk of im2col_step images:
 *     columns [C*kh*kw, im2col_step*P] = deformable_im2col(input, offset, mask)
 *     for each conv group g and image n: output[n, g's channels] = weight_g x columns_g[n]
 *       (one batched GEMM writes the output's own layout; mmcv GEMMs into a buffer and
 *       copies), then output[n, o, p] += bias[o]
 * backward, per chunk:
 *     buf = grad_output rearranged to [O, im2col_step*P];  columns_g = weight_g^T x buf_g
 *     grad_offset, grad_mask = col2im_coord(columns);  grad_input += col2im(columns)
 *     columns = im2col again;  grad_weight_g += buf_g x columns_g^T;  grad_bias += rows of buf
 *   where the tap pass (grad_tap, grad_tile or grad_gather, below) doing col2im and
 *   col2im_coord also writes im2col's entries over the column gradient as it reads it
 *   (write_columns), so
 *   "im2col again" is not a pass of its own (the references run one).
 * im2col writes every entry, so the columns are not zero-filled first (mmcv does). The
 * kernels are the tap kernels (deform_tap_body.h, the same values) unless a chunk's
 * launch records, which runs the teaching kernel. On the simulator the GEMMs are C
 * (ks_gemm.h), on CUDA cuBLAS (ks_cuda_api.h), where a TF32 forward may run a chunk as one
 * fused kernel (its row, KS_DEFORM_ROW_FUSED, where ks_deform_fused_fits). One flow for
 * both devices: every kernel is a row of ks_deform_rows run through one sequence (ks_exec:
 * the registry's for the operator, an entry point's own for the SDK), and each step
 * between picks its device's call. */
#include "deform_body.h"

#include <stdlib.h>
#include <string.h>

#include "../core/ks_cuda_api.h"
#include "../core/ks_cuda_int.h"
#include "../core/ks_error.h"
#include "../core/ks_gemm.h"
#include "deform_bias_body.h"   /* the arguments of the kernels around the GEMMs */
#include "deform_weight_body.h" /* and of the fused forward's weight preparation */

/* kernel row k around the GEMMs (deform_bias_body.h: add_bias, gather_grad, row_sums) on x's
 * device, at its own launch (no user --threads or --blocks), 32-bit where its S*O*P fit */
static int bias_kernel(ks_exec *x, int k, const ks_deform_bias_args *a)
{
    const int64_t n = a->S * a->O * a->P;
    const ks_launch launch = x->launch;
    const int narrow = x->narrow;
    x->launch = (ks_launch){0}, x->narrow = 1;
    ks_exec_size(x, n);
    const int rc = ks_exec_kernel(x, k, a, k == KS_DEFORM_ROW_ROW_SUMS ? a->O * KS_DEFORM_ROW_SUMS_THREADS : n);
    x->launch = launch, x->narrow = narrow;
    return rc;
}

/* The backward's tap pass on CUDA: grad_gather where its lists fit, else grad_tile where its
 * window fits, else grad_tap; p->grad_kernel (--grad-kernel tile|tap) picks one for
 * measuring (a choice that does not fit falls back as above). The simulator runs grad_tap. */
static ks_deform_kernel backward_kernel(const ks_deform_params *p, const ks_deform_geom *g)
{
    const int want = p->grad_kernel; /* 0 auto, 1 tile, 2 tap */
    if (want == 0 && ks_deform_gather_fits(p, g)) return KS_DEFORM_GRAD_GATHER;
    if (want <= 1 && ks_deform_tile_fits(p, g)) return KS_DEFORM_GRAD_TILE;
    return KS_DEFORM_GRAD_TAP;
}

/* kernel k on a chunk of the validated geometry g (nothing checked again); `record`: the
 * traced variant into x's sink */
static int run_kernel(ks_exec *x, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                      const ks_deform_chunk *c, int record)
{
    /* on CUDA the backward's adds gather in shared memory first where the window fits */
    if (x->device == KS_DEV_CUDA && k == KS_DEFORM_GRAD_TAP && !record) k = backward_kernel(p, g);
    return ks_deform_exec(x, p, g, k, c, record);
}

/* `batch` row-major GEMMs C_s[M,N] = beta*C_s + op(A_s) op(B_s) (as ks_sgemm), X_s = X + s*sx;
 * math KS_MATH_FP32 or KS_MATH_TF32 */
static int gemm(const ks_exec *L, int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                int64_t lda, int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc,
                int64_t sc, int64_t batch)
{
    if (L->device == KS_DEV_CUDA)
        return ks_cuda_sgemm_batched(L->stream, math, ta, tb, M, N, K, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
    int rc = KS_OK;
    for (int64_t s = 0; s < batch && !rc; ++s)
        rc = ks_sgemm_math(math, ta, tb, M, N, K, A + s * sa, lda, B + s * sb, ldb, beta, C + s * sc, ldc);
    return rc;
}

static int zero(const ks_exec *L, float *p, int64_t n)
{
    if (L->device == KS_DEV_CUDA) return ks_cuda_memset_async(p, 0, (size_t)n * sizeof(float), L->stream);
    memset(p, 0, (size_t)n * sizeof(float));
    return KS_OK;
}

static int copy(const ks_exec *L, float *dst, const float *src, int64_t n)
{
    if (L->device == KS_DEV_CUDA) return ks_cuda_copy_async(dst, src, (size_t)n * sizeof(float), L->stream);
    memcpy(dst, src, (size_t)n * sizeof(float));
    return KS_OK;
}

typedef struct chunk_view {
    int64_t im2col_step, P, K, Kg, Og, in_img, off_img, mask_img, out_img;
} chunk_view;

static int view(const ks_deform_params *p, chunk_view *v, ks_deform_geom *g)
{
    int rc = ks_deform_geometry(p, g);
    if (rc) return rc;
    const int64_t kk = p->kernel_h * p->kernel_w;
    v->im2col_step = g->im2col_step;
    v->P = g->height_out * g->width_out;
    v->K = g->rows;
    v->Kg = g->rows / p->groups;
    v->Og = p->out_channels / p->groups;
    v->in_img = p->channels * p->height * p->width;
    v->off_img = p->offset_groups * 2 * kk * v->P;
    v->mask_img = p->offset_groups * kk * v->P;
    v->out_img = p->out_channels * v->P;
    return KS_OK;
}

static ks_deform_chunk chunk_at(const ks_deform_params *p, const ks_deform_tensors *t, const chunk_view *v, int64_t n0)
{
    ks_deform_chunk c;
    memset(&c, 0, sizeof c);
    c.im2col_step = v->im2col_step;
    c.input = t->input + n0 * v->in_img;
    c.offset = t->offset + n0 * v->off_img;
    c.mask = p->use_mask ? t->mask + n0 * v->mask_img : NULL;
    return c;
}

static int check_tensors(const ks_deform_params *p, const ks_deform_tensors *t, int backward)
{
    if (!t->input || !t->offset || !t->weight) return ks_fail(KS_EINVAL, "input, offset and weight are required");
    if (p->use_mask && !t->mask) return ks_fail(KS_EINVAL, "use_mask without a mask");
    if (p->use_bias && !t->bias) return ks_fail(KS_EINVAL, "use_bias without a bias");
    if (!backward) return t->output ? KS_OK : ks_fail(KS_EINVAL, "no output");
    if (!t->grad_output || !t->grad_input || !t->grad_offset || !t->grad_weight || (p->use_mask && !t->grad_mask) ||
        (p->use_bias && !t->grad_bias))
        return ks_fail(KS_EINVAL, "backward needs grad_output and every gradient");
    return KS_OK;
}

/* The im2col kernel of a chunk: the fast tap kernel, or the teaching kernel when it records
 * (its trace is the one the lessons explain; the two compute the same values). `traced`:
 * the kernel this chunk records (KS_DEFORM_IM2COL, KS_DEFORM_IM2COL_TAP), or any other. */
static int run_im2col(ks_exec *L, const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                      ks_deform_kernel traced)
{
    const int teaching = traced == KS_DEFORM_IM2COL;
    return run_kernel(L, p, g, teaching ? KS_DEFORM_IM2COL : KS_DEFORM_IM2COL_TAP, c,
                      teaching || traced == KS_DEFORM_IM2COL_TAP);
}

/* an im2col kernel records (the teaching one or the tap one) */
static int im2col_traced(ks_deform_kernel k) { return k == KS_DEFORM_IM2COL || k == KS_DEFORM_IM2COL_TAP; }

static int layer_forward(ks_exec *L, const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                         ks_deform_kernel traced)
{
    chunk_view v;
    ks_deform_geom g;
    int rc = view(p, &v, &g);
    if (!rc) rc = check_tensors(p, t, 0);
    if (rc || p->batch == 0) return rc;
    float *columns = workspace;
    const int64_t n_cols = v.im2col_step * v.P;
    /* the fused kernel (CUDA, TF32, opted in: its row, unless its twin im2col records or
     * the twins are asked for) keeps the prepared weight where the columns would go */
    const int fused = ks_exec_may(L, KS_DEFORM_ROW_FUSED) && ks_deform_fused_fits(p, &g);
    int weight_ready = 0;
    ks_deform_fused_row fr = {.shape = fused ? ks_deform_fused_shape(p) : 0};
    const int BM = fr.shape == 24 ? 128 : 256; /* the tile's rows */
    for (int64_t n0 = 0; n0 < p->batch && !rc; n0 += v.im2col_step) {
        ks_deform_chunk c = chunk_at(p, t, &v, n0);
        c.columns = columns;
        float *out = t->output + n0 * v.out_img;
        const int record = n0 == 0 && im2col_traced(traced), keep = n0 == 0 && t->columns0;
        if (fused && !record && !keep) {
            if (!weight_ready) { /* every group's rows rounded up to BM (ks_deform_fused_fits checked the room) */
                const ks_deform_fused_weight_args wa = {.w = t->weight,
                                                        .wf = columns,
                                                        .n = (int)(p->groups * ((v.Og + BM - 1) / BM) * BM * v.Kg),
                                                        .BM = BM,
                                                        .Og = (int)v.Og,
                                                        .Cg = (int)(p->channels / p->groups),
                                                        .kk = (int)(p->kernel_h * p->kernel_w)};
                rc = ks_exec_kernel(L, KS_DEFORM_ROW_FUSED_WEIGHT, &wa, wa.n);
                weight_ready = 1;
            }
            ks_deform_args_fill(p, &g, &c, &fr.k.a);
            fr.k.wf = columns, fr.k.bias = p->use_bias ? t->bias : NULL, fr.k.out = out;
            fr.k.O = (int)p->out_channels, fr.k.Og = (int)v.Og, fr.k.Cg = (int)(p->channels / p->groups);
            /* a tile of BN columns x BM outputs a block, a conv group per blockIdx.z */
            L->work_y = v.Og, L->work_z = p->groups;
            if (!rc) rc = ks_exec_kernel(L, KS_DEFORM_ROW_FUSED, &fr, n_cols);
            continue;
        }
        weight_ready = 0;
        rc = run_im2col(L, p, &g, &c, record ? traced : KS_DEFORM_NONE);
        if (!rc && keep) rc = copy(L, t->columns0, columns, g.col_numel);
        /* output[n, group gr's channels] = weight_gr x the image's columns of group gr,
         * straight into the output's layout: one GEMM per image, batched */
        for (int64_t gr = 0; gr < p->groups && !rc; ++gr)
            rc = gemm(L, p->math, 0, 0, v.Og, v.P, v.Kg, t->weight + gr * v.Og * v.Kg, v.Kg, 0,
                      columns + gr * v.Kg * n_cols, n_cols, v.P, 0.0f, out + gr * v.Og * v.P, v.P, v.out_img,
                      v.im2col_step);
        if (!rc && p->use_bias) {
            const ks_deform_bias_args ba = {.out = out,
                                            .bias = t->bias,
                                            .O = p->out_channels,
                                            .S = v.im2col_step,
                                            .P = v.P};
            rc = bias_kernel(L, KS_DEFORM_ROW_ADD_BIAS, &ba);
        }
    }
    return rc;
}

/* p->grad_columns (--grad-columns im2col): the backward recomputes the columns with a
 * separate im2col pass, as mmcv and torchvision do (for measuring) */
static int separate_im2col(const ks_deform_params *p) { return p->grad_columns == 1; }

static int layer_backward(ks_exec *L, const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                          ks_deform_kernel traced)
{
    chunk_view v;
    ks_deform_geom g;
    int rc = view(p, &v, &g);
    if (!rc) rc = check_tensors(p, t, 1);
    if (rc) return rc;
    rc = zero(L, t->grad_input, g.input_numel);
    if (!rc) rc = zero(L, t->grad_weight, g.weight_numel);
    if (!rc && p->use_bias) rc = zero(L, t->grad_bias, p->out_channels);
    if (!rc) rc = zero(L, t->grad_offset, g.offset_numel);
    if (!rc && p->use_mask) rc = zero(L, t->grad_mask, g.mask_numel);
    if (rc || p->batch == 0) return rc;
    float *columns = workspace, *buf = workspace + g.col_numel;
    const int64_t n_cols = v.im2col_step * v.P;
    for (int64_t n0 = 0; n0 < p->batch && !rc; n0 += v.im2col_step) {
        const int first = n0 == 0;
        ks_deform_chunk c = chunk_at(p, t, &v, n0);
        c.columns = columns;
        c.columns_in = columns;
        c.grad_input = t->grad_input + n0 * v.in_img;
        c.grad_offset = t->grad_offset + n0 * v.off_img;
        c.grad_mask = p->use_mask ? t->grad_mask + n0 * v.mask_img : NULL;
        const ks_deform_bias_args ba = {.grad_out = t->grad_output + n0 * v.out_img,
                                        .buf = buf,
                                        .grad_bias = t->grad_bias,
                                        .O = p->out_channels,
                                        .S = v.im2col_step,
                                        .P = v.P};
        rc = bias_kernel(L, KS_DEFORM_ROW_GATHER_GRAD, &ba);
        for (int64_t gr = 0; gr < p->groups && !rc; ++gr)
            rc = gemm(L, p->math, 1, 0, v.Kg, n_cols, v.Og, t->weight + gr * v.Og * v.Kg, v.Kg, 0,
                      buf + gr * v.Og * n_cols, n_cols, 0, 0.0f, columns + gr * v.Kg * n_cols, n_cols, 0, 1);
        if (!rc && first && t->columns0) rc = copy(L, t->columns0, columns, g.col_numel);
        /* the column gradient -> grad_offset, grad_mask, grad_input: the teaching kernels
         * when one of them records, else both in one tap pass */
        int have_columns = 0;
        if (first && (traced == KS_DEFORM_COORD || traced == KS_DEFORM_COL2IM)) {
            if (!rc) rc = run_kernel(L, p, &g, KS_DEFORM_COORD, &c, traced == KS_DEFORM_COORD);
            if (!rc) rc = run_kernel(L, p, &g, KS_DEFORM_COL2IM, &c, traced == KS_DEFORM_COL2IM);
        } else if (!rc) {
            /* the tap pass also writes the columns again, in place, unless this chunk's
             * im2col records, or the tap pass does (those stores are not recorded), or
             * --grad-columns im2col asks for the pass */
            const int record = first && traced == KS_DEFORM_GRAD_TAP;
            c.write_columns = !(first && im2col_traced(traced)) && !record && !separate_im2col(p);
            rc = run_kernel(L, p, &g, KS_DEFORM_GRAD_TAP, &c, record);
            have_columns = c.write_columns;
        }
        if (!rc && !have_columns) rc = run_im2col(L, p, &g, &c, first ? traced : KS_DEFORM_NONE);
        for (int64_t gr = 0; gr < p->groups && !rc; ++gr)
            rc = gemm(L, p->math, 0, 1, v.Og, v.Kg, n_cols, buf + gr * v.Og * n_cols, n_cols, 0,
                      columns + gr * v.Kg * n_cols, n_cols, 0, 1.0f, t->grad_weight + gr * v.Og * v.Kg, v.Kg, 0, 1);
        if (!rc && p->use_bias) rc = bias_kernel(L, KS_DEFORM_ROW_ROW_SUMS, &ba);
    }
    return rc;
}

/* --- the entry points --- */

int ks_deform_layer(ks_exec *x, const ks_deform_params *p, const ks_deform_tensors *t, float *workspace, int backward,
                    ks_deform_kernel traced)
{
    return backward ? layer_backward(x, p, t, workspace, traced) : layer_forward(x, p, t, workspace, traced);
}

/* the SDK's: a sequence of ks_deform_rows on one device, kernel `traced` recording */
static ks_exec sdk_exec(int device, const ks_launch *launch, ks_deform_kernel traced, ks_sink *sink, void *stream)
{
    ks_exec x = ks_exec_make(ks_deform_rows, KS_DEFORM_NROWS, device, launch);
    x.sink = sink, x.trace = traced, x.stream = stream;
    return x;
}

static int sim_run(const ks_deform_params *p, const ks_deform_tensors *t, const ks_launch *launch,
                   ks_deform_kernel traced, ks_sink *sink, int backward)
{
    ks_exec x = sdk_exec(KS_DEV_SIM, launch, traced, sink, NULL);
    const int64_t n = ks_deform_workspace_floats(p);
    if (n < 0) return KS_EINVAL;
    float *ws = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!ws) return ks_fail(KS_ENOMEM, "no memory for a %lld-float workspace", (long long)n);
    int rc = ks_deform_layer(&x, p, t, ws, backward, traced);
    free(ws);
    return rc;
}

int ks_deform_forward_sim(const ks_deform_params *p, const ks_deform_tensors *t, const ks_launch *launch,
                          ks_deform_kernel traced, ks_sink *sink)
{
    return sim_run(p, t, launch, traced, sink, 0);
}

int ks_deform_backward_sim(const ks_deform_params *p, const ks_deform_tensors *t, const ks_launch *launch,
                           ks_deform_kernel traced, ks_sink *sink)
{
    return sim_run(p, t, launch, traced, sink, 1);
}

int ks_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                           const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream)
{
    ks_exec x = sdk_exec(KS_DEV_CUDA, launch, traced, (ks_sink *)dev_sink, stream);
    return ks_deform_layer(&x, p, t, workspace, 0, traced);
}

int ks_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                            const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream)
{
    ks_exec x = sdk_exec(KS_DEV_CUDA, launch, traced, (ks_sink *)dev_sink, stream);
    return ks_deform_layer(&x, p, t, workspace, 1, traced);
}
