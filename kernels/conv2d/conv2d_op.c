/* conv2d_op.c - `kscope run conv2d`: im2col (plain) then the GEMM kernel (traced), on the
 * simulator or the GPU. */
#include "conv2d_op.h"

#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../run_cuda.h"
#include "conv2d.h"

enum { P_KERNEL, P_PADDING, P_STRIDE, P_DILATION, P_BATCH, P_CHANNELS, P_HW, P_OUT, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    {"kernel-size", 2, {3, 3}, 1, "kernel height, width", KS_PARAM_INT, NULL, {0, 0}},
    {"padding", 2, {1, 1}, 0, "zero padding on each side: top/bottom, left/right", KS_PARAM_INT, NULL, {0, 0}},
    {"stride", 2, {1, 1}, 1, "window step", KS_PARAM_INT, NULL, {0, 0}},
    {"dilation", 2, {1, 1}, 1, "spacing of the kernel taps", KS_PARAM_INT, NULL, {0, 0}},
    {"batch", 1, {1, 0}, 1, "N of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"channels", 1, {2, 0}, 1, "C of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"input-size", 2, {5, 5}, 1, "H, W of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"out-channels", 1, {2, 0}, 1, "O, the filters (an --in weight sets it)", KS_PARAM_INT, NULL, {0, 0}},
};

static const ks_tensor_spec tensors[] = {
    {"input", 0, "(N, C, H, W)"},
    {"weight", 0, "(O, C, kh, kw)"},
    {"columns", 1, "(N, C*kh*kw, Ho*Wo): the im2col step"},
    {"output", 1, "(N, O, Ho, Wo)"},
};

/* Takes N, C, H, W from a given input and O, kh, kw from a given weight. */
static int from_inputs(ks_run *r, ks_conv2d_params *p)
{
    const ks_tensor *in = &r->tensor[KS_CONV_T_INPUT], *w = &r->tensor[KS_CONV_T_WEIGHT];
    int rc;
    if (in->data) {
        if (in->ndim != 4) return ks_fail(KS_EINVAL, "input must have shape (N, C, H, W)");
        if ((rc = ks_run_agree(r, P_BATCH, 0, "batch", in->shape[0], "input")) ||
            (rc = ks_run_agree(r, P_CHANNELS, 0, "channels", in->shape[1], "input")) ||
            (rc = ks_run_agree(r, P_HW, 0, "input-size", in->shape[2], "input")) ||
            (rc = ks_run_agree(r, P_HW, 1, "input-size", in->shape[3], "input")))
            return rc;
        p->im.batch = in->shape[0];
        p->im.channels = in->shape[1];
        p->im.height = in->shape[2];
        p->im.width = in->shape[3];
    }
    if (w->data) {
        if (w->ndim != 4) return ks_fail(KS_EINVAL, "weight must have shape (O, C, kh, kw)");
        if ((rc = ks_run_agree(r, P_OUT, 0, "out-channels", w->shape[0], "weight")) ||
            (rc = ks_run_agree(r, P_KERNEL, 0, "kernel-size", w->shape[2], "weight")) ||
            (rc = ks_run_agree(r, P_KERNEL, 1, "kernel-size", w->shape[3], "weight")))
            return rc;
        if (w->shape[1] != p->im.channels)
            return ks_fail(KS_EINVAL, "weight has %lld input channels but the input has %lld",
                           (long long)w->shape[1], (long long)p->im.channels);
        p->out_channels = w->shape[0];
        p->im.kernel_h = w->shape[2];
        p->im.kernel_w = w->shape[3];
    }
    return KS_OK;
}

typedef struct cuda_ctx {
    const ks_conv2d_params *p;
    const ks_launch *launch;
} cuda_ctx;

static int launch_cuda(void *ctx, void *const *dev, const ks_sink *dev_sink)
{
    const cuda_ctx *c = ctx;
    ks_launch im = {0};
    int rc = ks_im2col_cuda(&c->p->im, dev[KS_CONV_T_INPUT], dev[KS_CONV_T_COLUMNS], &im, NULL, NULL);
    if (rc) return rc;
    return ks_conv_gemm_cuda(c->p, dev[KS_CONV_T_WEIGHT], dev[KS_CONV_T_COLUMNS],
                             dev[KS_CONV_T_OUTPUT], c->launch, dev_sink, NULL);
}

static int run_conv2d(ks_run *r)
{
    ks_conv2d_params p;
    ks_conv2d_geom g;
    int rc;
    memset(&p, 0, sizeof p);
    p.im.kernel_h = r->value[P_KERNEL][0];
    p.im.kernel_w = r->value[P_KERNEL][1];
    p.im.pad_h = r->value[P_PADDING][0];
    p.im.pad_w = r->value[P_PADDING][1];
    p.im.stride_h = r->value[P_STRIDE][0];
    p.im.stride_w = r->value[P_STRIDE][1];
    p.im.dilation_h = r->value[P_DILATION][0];
    p.im.dilation_w = r->value[P_DILATION][1];
    p.im.batch = r->value[P_BATCH][0];
    p.im.channels = r->value[P_CHANNELS][0];
    p.im.height = r->value[P_HW][0];
    p.im.width = r->value[P_HW][1];
    p.out_channels = r->value[P_OUT][0];
    for (int i = 0; i < 2; ++i)
        if (r->tensor[i].data && r->tensor[i].dtype != KS_F32)
            return ks_fail(KS_EINVAL, "%s must be float32", r->tensor[i].name);
    if ((rc = from_inputs(r, &p)) || (rc = ks_conv2d_geometry(&p, &g))) return rc;
    const int64_t Ho = g.im.height_col, Wo = g.im.width_col;
    ks_tensor *t = r->tensor;
    if (!t[KS_CONV_T_INPUT].data) {
        ks_tensor_shape(&t[KS_CONV_T_INPUT], 4, p.im.batch, p.im.channels, p.im.height, p.im.width);
        if ((rc = ks_fill_pattern(&t[KS_CONV_T_INPUT], r->pattern, r->seed))) return rc;
    }
    if (!t[KS_CONV_T_WEIGHT].data) {
        ks_tensor_shape(&t[KS_CONV_T_WEIGHT], 4, p.out_channels, p.im.channels, p.im.kernel_h, p.im.kernel_w);
        if ((rc = ks_fill_pattern(&t[KS_CONV_T_WEIGHT], r->pattern, r->seed + 1))) return rc;
    }
    ks_tensor_shape(&t[KS_CONV_T_COLUMNS], 3, p.im.batch, g.im.rows, Ho * Wo, 0);
    ks_tensor_shape(&t[KS_CONV_T_OUTPUT], 4, p.im.batch, p.out_channels, Ho, Wo);
    if ((rc = ks_tensor_alloc(&t[KS_CONV_T_COLUMNS])) || (rc = ks_tensor_alloc(&t[KS_CONV_T_OUTPUT])))
        return rc;
    snprintf(r->params_json, sizeof r->params_json,
             "{\"kernel_size\": [%lld, %lld], \"padding\": [%lld, %lld], \"stride\": [%lld, %lld], "
             "\"dilation\": [%lld, %lld], \"batch\": %lld, \"channels\": %lld, "
             "\"input_size\": [%lld, %lld], \"out_channels\": %lld, \"output_size\": [%lld, %lld]}",
             (long long)p.im.kernel_h, (long long)p.im.kernel_w, (long long)p.im.pad_h,
             (long long)p.im.pad_w, (long long)p.im.stride_h, (long long)p.im.stride_w,
             (long long)p.im.dilation_h, (long long)p.im.dilation_w, (long long)p.im.batch,
             (long long)p.im.channels, (long long)p.im.height, (long long)p.im.width,
             (long long)p.out_channels, (long long)Ho, (long long)Wo);
    if ((rc = ks_launch_resolve(&r->launch, KS_CONV_GEMM_THREADS, KS_CONV_GEMM_BLOCK_CAP,
                                g.output_numel, &r->threads, &r->blocks)))
        return rc;
    r->block_cap = r->launch.block_cap ? r->launch.block_cap : KS_CONV_GEMM_BLOCK_CAP;
    r->work_items = g.output_numel;
    r->nsites = ks_conv_gemm_sites(&p, r->sites);
    if (r->device == KS_DEV_CUDA) {
        ks_tensor *ts[4] = {&t[0], &t[1], &t[2], &t[3]};
        const int out[4] = {0, 0, 1, 1};
        cuda_ctx c = {&p, &r->launch};
        unsigned long long cap = (unsigned long long)g.output_numel * (unsigned long long)(2 + 2 * g.im.rows);
        if (cap > (1ULL << 24)) cap = 1ULL << 24;
        return ks_run_cuda(ts, out, 4, r->sink, cap, launch_cuda, &c, r->device_name,
                           sizeof r->device_name);
    }
    snprintf(r->device_name, sizeof r->device_name, "sim");
    ks_launch im = {0};
    if ((rc = ks_im2col_sim(&p.im, t[KS_CONV_T_INPUT].data, t[KS_CONV_T_COLUMNS].data, &im, NULL)))
        return rc;
    return ks_conv_gemm_sim(&p, t[KS_CONV_T_WEIGHT].data, t[KS_CONV_T_COLUMNS].data,
                            t[KS_CONV_T_OUTPUT].data, &r->launch, r->sink);
}

const ks_op ks_op_conv2d = {
    "conv2d", "convolution as im2col + GEMM (the GEMM kernel is traced; a teaching kernel)",
    params, P_COUNT, tensors, 4, KS_CONV_GEMM_THREADS, KS_CONV_GEMM_BLOCK_CAP, run_conv2d,
};
