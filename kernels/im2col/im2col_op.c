/* im2col_op.c - `kscope run im2col|col2im`: parameters, default inputs, sim or CUDA. */
#include "im2col_op.h"

#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../run_cuda.h"
#include "im2col.h"

/* Param order is shared by both ops up to P_BATCH; then im2col has height/width and
 * col2im has output-size. */
enum { P_KERNEL, P_PADDING, P_STRIDE, P_DILATION, P_BATCH, P_CHANNELS, P_HW };

static const ks_param_spec im2col_params[] = {
    {"kernel-size", 2, {3, 3}, 1, "kernel height, width", KS_PARAM_INT, NULL, {0, 0}},
    {"padding", 2, {1, 1}, 0, "zero padding on each side: top/bottom, left/right", KS_PARAM_INT, NULL, {0, 0}},
    {"stride", 2, {1, 1}, 1, "window step", KS_PARAM_INT, NULL, {0, 0}},
    {"dilation", 2, {1, 1}, 1, "spacing of the kernel taps", KS_PARAM_INT, NULL, {0, 0}},
    {"batch", 1, {1, 0}, 1, "N of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"channels", 1, {2, 0}, 1, "C of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"input-size", 2, {5, 5}, 1, "H, W of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
};

static const ks_param_spec col2im_params[] = {
    {"kernel-size", 2, {3, 3}, 1, "kernel height, width", KS_PARAM_INT, NULL, {0, 0}},
    {"padding", 2, {1, 1}, 0, "zero padding on each side: top/bottom, left/right", KS_PARAM_INT, NULL, {0, 0}},
    {"stride", 2, {1, 1}, 1, "window step", KS_PARAM_INT, NULL, {0, 0}},
    {"dilation", 2, {1, 1}, 1, "spacing of the kernel taps", KS_PARAM_INT, NULL, {0, 0}},
    {"batch", 1, {1, 0}, 1, "N of the built-in columns (an --in columns sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"channels", 1, {2, 0}, 1, "C of the built-in columns (an --in columns sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"output-size", 2, {5, 5}, 1, "H, W of the image to rebuild", KS_PARAM_INT, NULL, {0, 0}},
};

static const ks_tensor_spec im2col_tensors[] = {
    {"input", 0, "(N, C, H, W)"},
    {"columns", 1, "(N, C*kh*kw, Ho*Wo)"},
};

static const ks_tensor_spec col2im_tensors[] = {
    {"columns", 0, "(N, C*kh*kw, Ho*Wo)"},
    {"output", 1, "(N, C, H, W)"},
};

static void to_params(const ks_run *r, ks_im2col_params *p)
{
    memset(p, 0, sizeof *p);
    p->kernel_h = r->value[P_KERNEL][0];
    p->kernel_w = r->value[P_KERNEL][1];
    p->pad_h = r->value[P_PADDING][0];
    p->pad_w = r->value[P_PADDING][1];
    p->stride_h = r->value[P_STRIDE][0];
    p->stride_w = r->value[P_STRIDE][1];
    p->dilation_h = r->value[P_DILATION][0];
    p->dilation_w = r->value[P_DILATION][1];
    p->batch = r->value[P_BATCH][0];
    p->channels = r->value[P_CHANNELS][0];
    p->height = r->value[P_HW][0];
    p->width = r->value[P_HW][1];
}

static void describe(ks_run *r, const ks_im2col_params *p, const ks_im2col_geom *g)
{
    snprintf(r->params_json, sizeof r->params_json,
             "{\"kernel_size\": [%lld, %lld], \"padding\": [%lld, %lld], \"stride\": [%lld, %lld], "
             "\"dilation\": [%lld, %lld], \"batch\": %lld, \"channels\": %lld, "
             "\"input_size\": [%lld, %lld], \"output_size\": [%lld, %lld]}",
             (long long)p->kernel_h, (long long)p->kernel_w, (long long)p->pad_h,
             (long long)p->pad_w, (long long)p->stride_h, (long long)p->stride_w,
             (long long)p->dilation_h, (long long)p->dilation_w, (long long)p->batch,
             (long long)p->channels, (long long)p->height, (long long)p->width,
             (long long)g->height_col, (long long)g->width_col);
}

typedef struct cuda_ctx {
    const ks_im2col_params *p;
    const ks_launch *launch;
    int col2im;
} cuda_ctx;

static int launch_cuda(void *ctx, void *const *dev, const ks_sink *dev_sink)
{
    const cuda_ctx *c = ctx;
    if (c->col2im) return ks_col2im_cuda(c->p, dev[0], dev[1], c->launch, dev_sink, NULL);
    return ks_im2col_cuda(c->p, dev[0], dev[1], c->launch, dev_sink, NULL);
}

/* Runs either op once its tensors are in place: tensor[0] is the source, [1] the result. */
static int execute(ks_run *r, const ks_im2col_params *p, int col2im, int64_t work,
                   int64_t events_per_item)
{
    int rc = ks_launch_resolve(&r->launch, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, work,
                               &r->threads, &r->blocks);
    if (rc) return rc;
    r->block_cap = r->launch.block_cap ? r->launch.block_cap : KS_IM2COL_BLOCK_CAP;
    r->work_items = work;
    r->nsites = col2im ? ks_col2im_sites(p, r->sites) : ks_im2col_sites(p, r->sites);
    if ((rc = ks_tensor_alloc(&r->tensor[1]))) return rc;
    if (r->device == KS_DEV_CUDA) {
        ks_tensor *ts[2] = {&r->tensor[0], &r->tensor[1]};
        const int out[2] = {0, 1};
        cuda_ctx c = {p, &r->launch, col2im};
        unsigned long long cap = (unsigned long long)work * (unsigned long long)events_per_item;
        if (cap > (1ULL << 24)) cap = 1ULL << 24; /* 1 GiB of events; the rest is counted */
        return ks_run_cuda(ts, out, 2, r->sink, cap, launch_cuda, &c, r->device_name,
                           sizeof r->device_name);
    }
    snprintf(r->device_name, sizeof r->device_name, "sim");
    if (col2im)
        return ks_col2im_sim(p, r->tensor[0].data, r->tensor[1].data, &r->launch, r->sink);
    return ks_im2col_sim(p, r->tensor[0].data, r->tensor[1].data, &r->launch, r->sink);
}

static int run_im2col(ks_run *r)
{
    ks_im2col_params p;
    ks_im2col_geom g;
    ks_tensor *in = &r->tensor[0], *cols = &r->tensor[1];
    int rc;
    to_params(r, &p);
    if (in->data) {
        if (in->ndim != 4 || in->dtype != KS_F32)
            return ks_fail(KS_EINVAL, "input must be a float32 array of shape (N, C, H, W)");
        if ((rc = ks_run_agree(r, P_BATCH, 0, "batch", in->shape[0], "input")) ||
            (rc = ks_run_agree(r, P_CHANNELS, 0, "channels", in->shape[1], "input")) ||
            (rc = ks_run_agree(r, P_HW, 0, "input-size", in->shape[2], "input")) ||
            (rc = ks_run_agree(r, P_HW, 1, "input-size", in->shape[3], "input")))
            return rc;
        p.batch = in->shape[0];
        p.channels = in->shape[1];
        p.height = in->shape[2];
        p.width = in->shape[3];
    }
    if ((rc = ks_im2col_geometry(&p, &g))) return rc;
    if (!in->data) {
        in->dtype = KS_F32;
        in->ndim = 4;
        in->shape[0] = p.batch;
        in->shape[1] = p.channels;
        in->shape[2] = p.height;
        in->shape[3] = p.width;
        if ((rc = ks_fill_pattern(in, r->pattern, r->seed))) return rc;
    }
    cols->dtype = KS_F32;
    cols->ndim = 3;
    cols->shape[0] = p.batch;
    cols->shape[1] = g.rows;
    cols->shape[2] = g.height_col * g.width_col;
    describe(r, &p, &g);
    return execute(r, &p, 0, g.im2col_work, 1 + 2 * p.kernel_h * p.kernel_w);
}

static int run_col2im(ks_run *r)
{
    ks_im2col_params p;
    ks_im2col_geom g;
    ks_tensor *cols = &r->tensor[0], *out = &r->tensor[1];
    int rc;
    to_params(r, &p);
    const int64_t taps = p.kernel_h * p.kernel_w; /* both >= 1 and <= 2^31: no overflow */
    if (cols->data) {
        if (cols->ndim != 3 || cols->dtype != KS_F32)
            return ks_fail(KS_EINVAL, "columns must be a float32 array of shape (N, C*kh*kw, Ho*Wo)");
        if (cols->shape[1] % taps != 0 || cols->shape[1] == 0)
            return ks_fail(KS_EINVAL, "columns dimension 1 (%lld) must be a positive multiple of "
                           "kh*kw = %lld", (long long)cols->shape[1], (long long)taps);
        if ((rc = ks_run_agree(r, P_BATCH, 0, "batch", cols->shape[0], "columns")) ||
            (rc = ks_run_agree(r, P_CHANNELS, 0, "channels", cols->shape[1] / taps, "columns")))
            return rc;
        p.batch = cols->shape[0];
        p.channels = cols->shape[1] / taps;
    }
    if ((rc = ks_im2col_geometry(&p, &g))) return rc;
    if (cols->data && cols->shape[2] != g.height_col * g.width_col)
        return ks_fail(KS_EINVAL, "columns dimension 2 (%lld) must be Ho*Wo = %lld*%lld for "
                       "this geometry", (long long)cols->shape[2], (long long)g.height_col,
                       (long long)g.width_col);
    if (!cols->data) {
        cols->dtype = KS_F32;
        cols->ndim = 3;
        cols->shape[0] = p.batch;
        cols->shape[1] = g.rows;
        cols->shape[2] = g.height_col * g.width_col;
        if ((rc = ks_fill_pattern(cols, r->pattern, r->seed))) return rc;
    }
    out->dtype = KS_F32;
    out->ndim = 4;
    out->shape[0] = p.batch;
    out->shape[1] = p.channels;
    out->shape[2] = p.height;
    out->shape[3] = p.width;
    describe(r, &p, &g);
    /* each output element gathers at most ceil(kh*dh/sh)*ceil(kw*dw/sw) entries; bound it
     * by kh*kw (dilation skips the rest) */
    return execute(r, &p, 1, g.image_numel, 2 + taps);
}

const ks_op ks_op_im2col = {
    "im2col", "unfold sliding windows of an image into a columns matrix (Caffe semantics)",
    im2col_params, 7, im2col_tensors, 2, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, run_im2col,
};

const ks_op ks_op_col2im = {
    "col2im", "fold a columns matrix back into an image, summing overlaps (gather form)",
    col2im_params, 7, col2im_tensors, 2, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, run_col2im,
};
