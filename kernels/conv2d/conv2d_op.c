/* conv2d_op.c - the descriptor of conv2d: im2col then the GEMM kernel (traced, or with
 * --trace-kernel im2col the im2col step), its kernel rows and the SDK's GEMM entry points.
 * The geometry and sites are conv2d_geom.c; the GEMM body conv2d_body.h. */
#include "../core/ks_error.h"
#include "../core/ks_params.h"

#define KS_BODY "../im2col/im2col_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../conv2d/conv2d_body.h"
#include "../core/ks_variants.h"

enum { K_IM2COL, K_GEMM }; /* kernel rows */

/* What prepare leaves for launch: both kernels' arguments. */
typedef struct conv2d_state {
    ks_im2col_args im; /* first, as im2col's own state: its sites read input and columns, tensors 0 and 1 */
    ks_conv_gemm_args gemm;
} conv2d_state;
static int im2col_sites(const void *s, ks_site *out) { return ks_im2col_sites(&((const conv2d_state *)s)->im, out); }
static int gemm_sites(const void *s, ks_site *out) { return ks_conv_gemm_sites(&((const conv2d_state *)s)->gemm, out); }

static const ks_kernel kernels[] = {
    [K_IM2COL] = KS_KERNEL_ROW(ks_im2col, "im2col", .sites = im2col_sites, .threads = KS_IM2COL_THREADS,
                               .block_cap = KS_IM2COL_BLOCK_CAP,
                               .help = "the im2col kernel: input into the columns matrix"),
    [K_GEMM] = KS_KERNEL_ROW(
        ks_conv_gemm, "gemm", .sites = gemm_sites, .threads = KS_CONV_GEMM_THREADS, .block_cap = KS_CONV_GEMM_BLOCK_CAP,
        .help = "one output element (n, o, h_out, w_out) per item: a row of weight times a column"),
};

static void gemm_sizes(ks_exec *x, const ks_conv_gemm_args *a)
{
    ks_exec_size(x, a->out_channels * a->rows);
    ks_exec_size(x, a->batch * a->rows * a->height_col * a->width_col);
    ks_exec_size(x, a->batch * a->out_channels * a->height_col * a->width_col);
}

static int gemm_sdk(int device, const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                    const ks_launch *launch, ks_sink *sink, void *stream)
{
    ks_conv_gemm_args a;
    ks_conv2d_geom g;
    int rc = ks_conv_gemm_args_make(p, weight, columns, output, &a, &g);
    if (rc) return rc;
    ks_exec x = ks_exec_make(kernels, KS_COUNT(kernels), device, launch);
    x.sink = sink, x.trace = K_GEMM, x.stream = stream;
    gemm_sizes(&x, &a);
    return ks_exec_kernel(&x, K_GEMM, &a, g.output_numel);
}

int ks_conv_gemm_sim(const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                     const ks_launch *launch, ks_sink *sink)
{
    return gemm_sdk(KS_DEV_SIM, p, weight, columns, output, launch, sink, NULL);
}

int ks_conv_gemm_cuda(const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                      const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    return gemm_sdk(KS_DEV_CUDA, p, weight, columns, output, launch, (ks_sink *)dev_sink, stream);
}

enum { P_KERNEL, P_PADDING, P_STRIDE, P_DILATION, P_BATCH, P_CHANNELS, P_HW, P_OUT, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    [P_KERNEL] = KS_ROW_KERNEL_SIZE(3),
    [P_PADDING] = KS_ROW_PADDING(1),
    [P_STRIDE] = KS_ROW_STRIDE,
    [P_DILATION] = KS_ROW_DILATION,
    [P_BATCH] = KS_ROW_BATCH("N", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(2, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(5, 5),
    [P_OUT] =
        {.name = "out-channels", .axes = 1, .def = {2, 2}, .min = 1, .help = "O, the filters (an --in weight sets it)"},
};

static const ks_tensor_spec tensors[] = {
    [KS_CONV_T_INPUT] = {.name = "input", .shape = "(N, C, H, W)"},
    [KS_CONV_T_WEIGHT] = {.name = "weight", .shape = "(O, C, kh, kw)", .seed = 1},
    [KS_CONV_T_COLUMNS] = {.name = "columns", .output = 1, .shape = "(N, C*kh*kw, Ho*Wo): the im2col step"},
    [KS_CONV_T_OUTPUT] = {.name = "output", .output = 1, .shape = "(N, O, Ho, Wo)"},
};

static int prepare(ks_run *r)
{
    static const ks_dim_bind w_dims[] = {{.dim = 0, .param = P_OUT, .axis = 0},
                                         {.dim = 2, .param = P_KERNEL, .axis = 0},
                                         {.dim = 3, .param = P_KERNEL, .axis = 1}};
    conv2d_state *s = KS_RUN_CTX(r, conv2d_state);
    ks_conv2d_params params, *p = &params;
    ks_conv2d_geom g;
    int rc;
    if ((rc = ks_run_take_nchw(r, KS_CONV_T_INPUT, P_BATCH, P_CHANNELS, P_HW)) ||
        (rc = ks_run_take(r, KS_CONV_T_WEIGHT, 4, w_dims, KS_COUNT(w_dims))))
        return rc;
    *p = (ks_conv2d_params){
        .im = {.batch = r->value[P_BATCH][0],
               .channels = r->value[P_CHANNELS][0],
               .height = r->value[P_HW][0],
               .width = r->value[P_HW][1],
               .kernel_h = r->value[P_KERNEL][0],
               .kernel_w = r->value[P_KERNEL][1],
               .pad_h = r->value[P_PADDING][0],
               .pad_w = r->value[P_PADDING][1],
               .stride_h = r->value[P_STRIDE][0],
               .stride_w = r->value[P_STRIDE][1],
               .dilation_h = r->value[P_DILATION][0],
               .dilation_w = r->value[P_DILATION][1]},
        .out_channels = r->value[P_OUT][0],
    };
    /* validated here, once: both kernels' arguments come from this geometry */
    if ((rc = ks_conv_gemm_args_make(p, NULL, NULL, NULL, &s->gemm, &g))) return rc;
    ks_im2col_args_fill(&p->im, &g.im, NULL, NULL, &s->im);
    const int64_t Ho = g.im.height_col, Wo = g.im.width_col;
    ks_run_shape4(r, KS_CONV_T_INPUT, 4, p->im.batch, p->im.channels, p->im.height, p->im.width);
    ks_run_shape4(r, KS_CONV_T_WEIGHT, 4, p->out_channels, p->im.channels, p->im.kernel_h, p->im.kernel_w);
    ks_run_shape4(r, KS_CONV_T_COLUMNS, 3, p->im.batch, g.im.rows, Ho * Wo, 0);
    ks_run_shape4(r, KS_CONV_T_OUTPUT, 4, p->im.batch, p->out_channels, Ho, Wo);
    ks_run_fact(r, "output_size", "[%lld, %lld]", (long long)Ho, (long long)Wo);
    r->work_items = ks_run_trace_row(r, K_GEMM) == K_IM2COL ? g.im.im2col_work : g.output_numel;
    return KS_OK;
}

/* im2col, then the GEMM */
_Static_assert((int)KS_CONV_T_INPUT == (int)KS_IM2COL_T_INPUT && (int)KS_CONV_T_COLUMNS == (int)KS_IM2COL_T_COLUMNS,
               "conv2d's im2col row records into its input and columns");
static int run(ks_exec *x, const ks_run *r, void *const *ptr)
{
    const conv2d_state *s = KS_RUN_CTX(r, const conv2d_state);
    ks_im2col_args im = s->im;
    ks_conv_gemm_args gemm = s->gemm;
    im.src = ptr[KS_CONV_T_INPUT], im.dst = ptr[KS_CONV_T_COLUMNS];
    gemm.weight = ptr[KS_CONV_T_WEIGHT], gemm.columns = ptr[KS_CONV_T_COLUMNS], gemm.output = ptr[KS_CONV_T_OUTPUT];
    int rc = ks_exec_kernel(x, K_IM2COL, &im, im.batch * im.channels * im.height_col * im.width_col);
    return rc ? rc
              : (int)ks_exec_kernel(x, K_GEMM, &gemm,
                                    gemm.batch * gemm.out_channels * gemm.height_col * gemm.width_col);
}

const ks_op ks_op_conv2d = {
    .name = "conv2d",
    .summary = "convolution as im2col + GEMM (the GEMM kernel is traced, or --trace-kernel im2col; a teaching kernel)",
    KS_OP_ROWS(params, tensors),
    KS_OP_KERNELS(kernels),
    .prepare = prepare,
    .run = run,
};
