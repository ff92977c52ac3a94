/* conv2d_op.c - the descriptor of conv2d: im2col (plain) then the GEMM kernel (traced). */
#include "../core/ks_error.h"
#include "../core/ks_params.h"
#include "../im2col/im2col_body.h"
#include "conv2d_args.h"

enum { P_KERNEL, P_PADDING, P_STRIDE, P_DILATION, P_BATCH, P_CHANNELS, P_HW, P_OUT, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    [P_KERNEL] = KS_ROW_KERNEL_SIZE(3),
    [P_PADDING] = KS_ROW_PADDING(1),
    [P_STRIDE] = KS_ROW_STRIDE,
    [P_DILATION] = KS_ROW_DILATION,
    [P_BATCH] = KS_ROW_BATCH("N", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(2, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(5, 5),
    [P_OUT] = {.name = "out-channels", .axes = 1, .def = {2, 2}, .min = 1,
               .help = "O, the filters (an --in weight sets it)"},
};

static const ks_tensor_spec tensors[] = {
    [KS_CONV_T_INPUT] = {.name = "input", .shape = "(N, C, H, W)"},
    [KS_CONV_T_WEIGHT] = {.name = "weight", .shape = "(O, C, kh, kw)", .seed = 1},
    [KS_CONV_T_COLUMNS] = {.name = "columns", .output = 1, .shape = "(N, C*kh*kw, Ho*Wo): the im2col step"},
    [KS_CONV_T_OUTPUT] = {.name = "output", .output = 1, .shape = "(N, O, Ho, Wo)"},
};

/* What prepare leaves for launch: both kernels' arguments. */
typedef struct conv2d_state {
    ks_im2col_args im;
    ks_conv_gemm_args gemm;
} conv2d_state;

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
        .im = {.batch = r->value[P_BATCH][0], .channels = r->value[P_CHANNELS][0],
               .height = r->value[P_HW][0], .width = r->value[P_HW][1],
               .kernel_h = r->value[P_KERNEL][0], .kernel_w = r->value[P_KERNEL][1],
               .pad_h = r->value[P_PADDING][0], .pad_w = r->value[P_PADDING][1],
               .stride_h = r->value[P_STRIDE][0], .stride_w = r->value[P_STRIDE][1],
               .dilation_h = r->value[P_DILATION][0], .dilation_w = r->value[P_DILATION][1]},
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
    r->work_items = g.output_numel;
    r->nsites = ks_conv_gemm_sites(&s->gemm, r->sites);
    return KS_OK;
}

/* im2col (plain, at its reference launch), then the traced GEMM */
static int launch(const ks_run *r, void *const *ptr, ks_sink *sink)
{
    const conv2d_state *s = KS_RUN_CTX(r, const conv2d_state);
    const ks_launch im_launch = {0};
    ks_im2col_args im = s->im;
    ks_conv_gemm_args gemm = s->gemm;
    im.src = ptr[KS_CONV_T_INPUT], im.dst = ptr[KS_CONV_T_COLUMNS];
    gemm.weight = ptr[KS_CONV_T_WEIGHT], gemm.columns = ptr[KS_CONV_T_COLUMNS], gemm.output = ptr[KS_CONV_T_OUTPUT];
    int rc;
    if (r->device == KS_DEV_CUDA) {
        if ((rc = ks_im2col_launch_cuda(&im, 0, &im_launch, NULL, NULL))) return rc;
        return ks_conv_gemm_launch_cuda(&gemm, &r->launch, sink, NULL);
    }
    if ((rc = ks_im2col_launch_sim(&im, 0, &im_launch, NULL))) return rc;
    return ks_conv_gemm_launch_sim(&gemm, &r->launch, sink);
}

const ks_op ks_op_conv2d = {
    .name = "conv2d",
    .summary = "convolution as im2col + GEMM (the GEMM kernel is traced; a teaching kernel)",
    KS_OP_ROWS(params, tensors),
    .default_threads = KS_CONV_GEMM_THREADS,
    .default_block_cap = KS_CONV_GEMM_BLOCK_CAP,
    .prepare = prepare,
    .launch = launch,
};
