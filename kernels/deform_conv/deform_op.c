/* deform_op.c - `kscope run deform_conv` and `kscope run deform_im2col`: parameters and
 * tensors from flags and .npy files, generated offsets, the run on the simulator or the
 * GPU, and the trace of one kernel. */
#include "deform_op.h"

#include <stdio.h>
#include <string.h>

#include "../core/ks_cuda_api.h"
#include "../core/ks_error.h"
#include "../run_cuda.h"
#include "deform_conv.h"

/* Parameters. The two ops share the first P_SHARED, in this order. */
enum { P_KERNEL, P_PADDING, P_STRIDE, P_DILATION, P_OFFSET_GROUPS, P_BATCH, P_CHANNELS, P_HW,
       P_MASK, P_OFFSET_PATTERN, P_OFFSET_AMOUNT, P_SHARED,
       P_OUT = P_SHARED, P_GROUPS, P_STEP, P_BIAS, P_BACKWARD, P_SEMANTICS, P_TRACE_KERNEL, P_COUNT };

#define SHARED_PARAMS                                                                              \
    {"kernel-size", 2, {3, 3}, 1, "kernel height, width", KS_PARAM_INT, NULL, {0, 0}},            \
    {"padding", 2, {1, 1}, 0, "zero padding: top/bottom, left/right", KS_PARAM_INT, NULL, {0, 0}}, \
    {"stride", 2, {1, 1}, 1, "window step", KS_PARAM_INT, NULL, {0, 0}},                           \
    {"dilation", 2, {1, 1}, 1, "spacing of the kernel taps", KS_PARAM_INT, NULL, {0, 0}},          \
    {"offset-groups", 1, {1, 0}, 1, "deformable groups (an --in offset sets it)", KS_PARAM_INT, NULL, {0, 0}}, \
    {"batch", 1, {1, 0}, 1, "N of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}}, \
    {"channels", 1, {2, 0}, 1, "C of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}}, \
    {"input-size", 2, {7, 7}, 1, "H, W of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}}, \
    {"mask", 1, {0, 0}, 0, "v2: modulate by a mask (uniform in [0, 1) unless --in mask)", KS_PARAM_SWITCH, NULL, {0, 0}}, \
    {"offset-pattern", 1, {0, 0}, 0, "generated offsets (unless --in offset)", KS_PARAM_CHOICE, \
     "random|shift|rotate|scale|zero", {0, 0}},                                                    \
    {"offset-amount", 2, {0, 0}, 0, "random: max |d| (1); shift: dy,dx (0.5,0.5); rotate: degrees (30); scale: factor (2)", \
     KS_PARAM_FLOAT, NULL, {0, 0}}

static const ks_param_spec conv_params[P_COUNT] = {
    SHARED_PARAMS,
    {"out-channels", 1, {2, 0}, 1, "O, the filters (an --in weight sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"groups", 1, {1, 0}, 1, "convolution groups", KS_PARAM_INT, NULL, {0, 0}},
    {"im2col-step", 1, {32, 0}, 1, "images per chunk (mmcv: must divide the batch)", KS_PARAM_INT, NULL, {0, 0}},
    {"bias", 1, {0, 0}, 0, "add a bias (built-in unless --in bias)", KS_PARAM_SWITCH, NULL, {0, 0}},
    {"backward", 1, {0, 0}, 0, "also the gradients of sum(output * grad_output)", KS_PARAM_SWITCH, NULL, {0, 0}},
    {"semantics", 1, {0, 0}, 0, "auto: mmcv without a mask, torchvision with one", KS_PARAM_CHOICE,
     "auto|mmcv|torchvision", {0, 0}},
    {"trace-kernel", 1, {0, 0}, 0, "kernel a trace records (auto: im2col, col2im with --backward)",
     KS_PARAM_CHOICE, "auto|im2col|col2im|coord", {0, 0}},
};

/* tensors: the kernels' ids (KS_DEFORM_T_*) first, so trace events name them directly */
enum { T_INPUT, T_OFFSET, T_MASK, T_COLUMNS, T_GRAD_INPUT, T_GRAD_OFFSET, T_GRAD_MASK, T_WEIGHT,
       T_BIAS, T_OUTPUT, T_GRAD_OUTPUT, T_GRAD_WEIGHT, T_GRAD_BIAS, T_COUNT };

static const ks_tensor_spec conv_tensors[T_COUNT] = {
    {"input", 0, "(N, C, H, W)"},
    {"offset", 0, "(N, 2*offset_groups*kh*kw, Ho, Wo): (dy, dx) per tap"},
    {"mask", 0, "(N, offset_groups*kh*kw, Ho, Wo): with --mask"},
    {"columns", 1, "(C*kh*kw, step*Ho*Wo): first chunk's im2col (its gradient with --backward)"},
    {"grad_input", 1, "(N, C, H, W): with --backward"},
    {"grad_offset", 1, "like offset: with --backward"},
    {"grad_mask", 1, "like mask: with --backward and --mask"},
    {"weight", 0, "(O, C/groups, kh, kw)"},
    {"bias", 0, "(O): with --bias"},
    {"output", 1, "(N, O, Ho, Wo)"},
    {"grad_output", 0, "(N, O, Ho, Wo): with --backward"},
    {"grad_weight", 1, "(O, C/groups, kh, kw): with --backward"},
    {"grad_bias", 1, "(O): with --backward and --bias"},
};

static const ks_param_spec im2col_params[P_SHARED] = {SHARED_PARAMS};
static const ks_tensor_spec im2col_tensors[4] = {
    {"input", 0, "(N, C, H, W)"},
    {"offset", 0, "(N, 2*offset_groups*kh*kw, Ho, Wo): (dy, dx) per tap"},
    {"mask", 0, "(N, offset_groups*kh*kw, Ho, Wo): with --mask"},
    {"columns", 1, "(C*kh*kw, N*Ho*Wo): column (n*Ho + ho)*Wo + wo"},
};

static int want_shape(const ks_tensor *t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d, const char *what)
{
    const int64_t s[4] = {a, b, c, d};
    int ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; ++i) ok = t->shape[i] == s[i];
    if (ok) return KS_OK;
    char got[96];
    return ks_fail(KS_EINVAL, "%s must have shape %s; got %s", t->name, what,
                   ks_shape_str(t->ndim, t->shape, got, sizeof got));
}

/* Parameters from flags, then sizes implied by the given tensors. */
static int params_from_run(ks_run *r, int conv, ks_deform_params *p)
{
    const ks_tensor *t = r->tensor;
    int rc;
    memset(p, 0, sizeof *p);
    p->kernel_h = r->value[P_KERNEL][0], p->kernel_w = r->value[P_KERNEL][1];
    p->pad_h = r->value[P_PADDING][0], p->pad_w = r->value[P_PADDING][1];
    p->stride_h = r->value[P_STRIDE][0], p->stride_w = r->value[P_STRIDE][1];
    p->dilation_h = r->value[P_DILATION][0], p->dilation_w = r->value[P_DILATION][1];
    p->offset_groups = r->value[P_OFFSET_GROUPS][0];
    p->batch = r->value[P_BATCH][0], p->channels = r->value[P_CHANNELS][0];
    p->height = r->value[P_HW][0], p->width = r->value[P_HW][1];
    p->use_mask = (int)r->value[P_MASK][0] || t[T_MASK].data;
    if (r->set[P_MASK] && !r->value[P_MASK][0] && t[T_MASK].data)
        return ks_fail(KS_EINVAL, "--no-mask disagrees with the mask tensor given");
    p->groups = 1;
    p->out_channels = 1;
    p->im2col_step = 1;
    if (conv) {
        p->out_channels = r->value[P_OUT][0];
        p->groups = r->value[P_GROUPS][0];
        p->im2col_step = r->value[P_STEP][0];
        p->use_bias = (int)r->value[P_BIAS][0] || t[T_BIAS].data;
        if (r->set[P_BIAS] && !r->value[P_BIAS][0] && t[T_BIAS].data)
            return ks_fail(KS_EINVAL, "--no-bias disagrees with the bias tensor given");
        const int64_t sem = r->value[P_SEMANTICS][0];
        p->semantics = sem == 1 ? KS_DEFORM_MMCV : sem == 2 ? KS_DEFORM_TORCHVISION
                       : p->use_mask ? KS_DEFORM_TORCHVISION : KS_DEFORM_MMCV;
    }
    if (t[T_INPUT].data) {
        if (t[T_INPUT].ndim != 4) return ks_fail(KS_EINVAL, "input must have shape (N, C, H, W)");
        if ((rc = ks_run_agree(r, P_BATCH, 0, "batch", t[T_INPUT].shape[0], "input")) ||
            (rc = ks_run_agree(r, P_CHANNELS, 0, "channels", t[T_INPUT].shape[1], "input")) ||
            (rc = ks_run_agree(r, P_HW, 0, "input-size", t[T_INPUT].shape[2], "input")) ||
            (rc = ks_run_agree(r, P_HW, 1, "input-size", t[T_INPUT].shape[3], "input")))
            return rc;
        p->batch = t[T_INPUT].shape[0], p->channels = t[T_INPUT].shape[1];
        p->height = t[T_INPUT].shape[2], p->width = t[T_INPUT].shape[3];
    }
    if (!conv) p->im2col_step = p->batch > 0 ? p->batch : 1; /* one launch over the batch */
    if (conv && t[T_WEIGHT].data) {
        const ks_tensor *w = &t[T_WEIGHT];
        if (w->ndim != 4) return ks_fail(KS_EINVAL, "weight must have shape (O, C/groups, kh, kw)");
        if ((rc = ks_run_agree(r, P_OUT, 0, "out-channels", w->shape[0], "weight")) ||
            (rc = ks_run_agree(r, P_KERNEL, 0, "kernel-size", w->shape[2], "weight")) ||
            (rc = ks_run_agree(r, P_KERNEL, 1, "kernel-size", w->shape[3], "weight")))
            return rc;
        p->out_channels = w->shape[0], p->kernel_h = w->shape[2], p->kernel_w = w->shape[3];
        if (w->shape[1] * p->groups != p->channels)
            return ks_fail(KS_EINVAL, "weight has %lld input channels per group; input %lld / groups %lld needs %lld",
                           (long long)w->shape[1], (long long)p->channels, (long long)p->groups,
                           (long long)(p->channels / p->groups));
    }
    const int64_t kk = p->kernel_h * p->kernel_w;
    if (t[T_OFFSET].data && t[T_OFFSET].ndim == 4 && !r->set[P_OFFSET_GROUPS] && t[T_OFFSET].shape[1] % (2 * kk) == 0)
        p->offset_groups = t[T_OFFSET].shape[1] / (2 * kk); /* as torchvision infers it */
    return KS_OK;
}

/* Checks given tensors against the geometry and fills or allocates the others. */
static int prepare_tensors(ks_run *r, int conv, const ks_deform_params *p, const ks_deform_geom *g)
{
    ks_tensor *t = r->tensor;
    const int64_t N = p->batch, C = p->channels, Ho = g->height_out, Wo = g->width_out;
    const int64_t G = p->offset_groups, kk = p->kernel_h * p->kernel_w;
    char what[96];
    int rc;
    if (!t[T_INPUT].data) {
        ks_tensor_shape(&t[T_INPUT], 4, N, C, p->height, p->width);
        if ((rc = ks_fill_pattern(&t[T_INPUT], r->pattern, r->seed))) return rc;
    }
    snprintf(what, sizeof what, "(%lld, %lld, %lld, %lld)", (long long)N, (long long)(2 * G * kk), (long long)Ho, (long long)Wo);
    if (t[T_OFFSET].data) {
        if ((rc = want_shape(&t[T_OFFSET], 4, N, 2 * G * kk, Ho, Wo, what))) return rc;
    } else {
        ks_tensor_shape(&t[T_OFFSET], 4, N, 2 * G * kk, Ho, Wo);
        const int pat = (int)r->value[P_OFFSET_PATTERN][0];
        static const double defaults[5][2] = {{1, 1}, {0.5, 0.5}, {30, 30}, {2, 2}, {0, 0}};
        const double *amount = r->set[P_OFFSET_AMOUNT] ? r->fvalue[P_OFFSET_AMOUNT] : defaults[pat];
        if ((rc = ks_tensor_alloc(&t[T_OFFSET])) ||
            (rc = ks_deform_offset_fill(p, pat, amount, r->seed + 5, t[T_OFFSET].data)))
            return rc;
    }
    if (p->use_mask) {
        snprintf(what, sizeof what, "(%lld, %lld, %lld, %lld)", (long long)N, (long long)(G * kk), (long long)Ho, (long long)Wo);
        if (t[T_MASK].data) {
            if ((rc = want_shape(&t[T_MASK], 4, N, G * kk, Ho, Wo, what))) return rc;
        } else {
            ks_tensor_shape(&t[T_MASK], 4, N, G * kk, Ho, Wo);
            if ((rc = ks_fill_pattern(&t[T_MASK], KS_PAT_RANDOM, r->seed + 2))) return rc;
            float *m = t[T_MASK].data; /* random is in [-1, 1): map to [0, 1) */
            for (int64_t i = 0; i < g->mask_numel; ++i) m[i] = 0.5f * (m[i] + 1.0f);
        }
    } else {
        ks_run_absent(r, T_MASK);
    }
    ks_tensor_shape(&t[T_COLUMNS], 2, g->rows, (g->step > 0 ? g->step : 1) * Ho * Wo, 0, 0);
    if ((rc = ks_tensor_alloc(&t[T_COLUMNS]))) return rc;
    if (!conv) return KS_OK;
    const int backward = (int)r->value[P_BACKWARD][0];
    if (!t[T_WEIGHT].data) {
        ks_tensor_shape(&t[T_WEIGHT], 4, p->out_channels, C / p->groups, p->kernel_h, p->kernel_w);
        if ((rc = ks_fill_pattern(&t[T_WEIGHT], r->pattern, r->seed + 1))) return rc;
    }
    if (p->use_bias) {
        snprintf(what, sizeof what, "(%lld)", (long long)p->out_channels);
        if (t[T_BIAS].data) {
            if ((rc = want_shape(&t[T_BIAS], 1, p->out_channels, 0, 0, 0, what))) return rc;
        } else {
            ks_tensor_shape(&t[T_BIAS], 1, p->out_channels, 0, 0, 0);
            if ((rc = ks_fill_pattern(&t[T_BIAS], r->pattern, r->seed + 3))) return rc;
        }
    } else {
        ks_run_absent(r, T_BIAS);
    }
    ks_tensor_shape(&t[T_OUTPUT], 4, N, p->out_channels, Ho, Wo);
    if ((rc = ks_tensor_alloc(&t[T_OUTPUT]))) return rc;
    if (!backward) {
        if (t[T_GRAD_OUTPUT].data) return ks_fail(KS_EINVAL, "grad_output is given but --backward is not");
        const int grads[] = {T_GRAD_OUTPUT, T_GRAD_INPUT, T_GRAD_OFFSET, T_GRAD_MASK, T_GRAD_WEIGHT, T_GRAD_BIAS};
        for (int i = 0; i < 6; ++i) ks_run_absent(r, grads[i]);
        return KS_OK;
    }
    snprintf(what, sizeof what, "(%lld, %lld, %lld, %lld)", (long long)N, (long long)p->out_channels, (long long)Ho, (long long)Wo);
    if (t[T_GRAD_OUTPUT].data) {
        if ((rc = want_shape(&t[T_GRAD_OUTPUT], 4, N, p->out_channels, Ho, Wo, what))) return rc;
    } else {
        ks_tensor_shape(&t[T_GRAD_OUTPUT], 4, N, p->out_channels, Ho, Wo);
        if ((rc = ks_fill_pattern(&t[T_GRAD_OUTPUT], r->pattern, r->seed + 4))) return rc;
    }
    t[T_GRAD_INPUT].ndim = 4, memcpy(t[T_GRAD_INPUT].shape, t[T_INPUT].shape, sizeof t[T_INPUT].shape);
    t[T_GRAD_OFFSET].ndim = 4, memcpy(t[T_GRAD_OFFSET].shape, t[T_OFFSET].shape, sizeof t[T_OFFSET].shape);
    t[T_GRAD_WEIGHT].ndim = 4, memcpy(t[T_GRAD_WEIGHT].shape, t[T_WEIGHT].shape, sizeof t[T_WEIGHT].shape);
    t[T_GRAD_INPUT].dtype = t[T_GRAD_OFFSET].dtype = t[T_GRAD_WEIGHT].dtype = KS_F32;
    if ((rc = ks_tensor_alloc(&t[T_GRAD_INPUT])) || (rc = ks_tensor_alloc(&t[T_GRAD_OFFSET])) ||
        (rc = ks_tensor_alloc(&t[T_GRAD_WEIGHT])))
        return rc;
    if (p->use_mask) {
        t[T_GRAD_MASK] = t[T_MASK];
        t[T_GRAD_MASK].data = NULL;
        snprintf(t[T_GRAD_MASK].name, KS_NAME_LEN, "grad_mask");
        if ((rc = ks_tensor_alloc(&t[T_GRAD_MASK]))) return rc;
    } else {
        ks_run_absent(r, T_GRAD_MASK);
    }
    if (p->use_bias) {
        ks_tensor_shape(&t[T_GRAD_BIAS], 1, p->out_channels, 0, 0, 0);
        if ((rc = ks_tensor_alloc(&t[T_GRAD_BIAS]))) return rc;
    } else {
        ks_run_absent(r, T_GRAD_BIAS);
    }
    return KS_OK;
}

typedef struct job {
    const ks_deform_params *p;
    const ks_launch *launch;
    int conv, backward;
    ks_deform_kernel traced;
} job;

/* tensor pointers (host or device) in the op's order */
static ks_deform_tensors tensors_of(void *const *d, const ks_run *r, int conv)
{
    ks_deform_tensors t;
    memset(&t, 0, sizeof t);
#define PTR(i) (r->absent[i] ? NULL : (float *)d[i])
    t.input = PTR(T_INPUT), t.offset = PTR(T_OFFSET), t.mask = PTR(T_MASK);
    t.columns0 = PTR(T_COLUMNS);
    if (conv) {
        t.weight = PTR(T_WEIGHT), t.bias = PTR(T_BIAS), t.output = PTR(T_OUTPUT);
        t.grad_output = PTR(T_GRAD_OUTPUT), t.grad_input = PTR(T_GRAD_INPUT);
        t.grad_offset = PTR(T_GRAD_OFFSET), t.grad_mask = PTR(T_GRAD_MASK);
        t.grad_weight = PTR(T_GRAD_WEIGHT), t.grad_bias = PTR(T_GRAD_BIAS);
    }
#undef PTR
    return t;
}

typedef struct cuda_job {
    const job *j;
    const ks_run *r;
} cuda_job;

static int launch_cuda(void *ctx, void *const *dev, const ks_sink *dev_sink)
{
    const cuda_job *c = ctx;
    const job *j = c->j;
    ks_deform_tensors t = tensors_of(dev, c->r, j->conv);
    if (!j->conv) {
        ks_deform_chunk ch;
        memset(&ch, 0, sizeof ch);
        ch.step = j->p->batch, ch.input = t.input, ch.offset = t.offset, ch.mask = t.mask;
        ch.columns = t.columns0;
        return ks_deform_kernel_cuda(j->p, KS_DEFORM_IM2COL, &ch, j->launch, dev_sink, NULL);
    }
    float *ws = NULL;
    int rc = ks_cuda_malloc((void **)&ws, (size_t)ks_deform_workspace_floats(j->p) * sizeof(float));
    if (!rc) rc = ks_deform_forward_cuda(j->p, &t, ws, j->launch, j->backward ? KS_DEFORM_NONE : j->traced,
                                         dev_sink, NULL);
    if (!rc && j->backward) {
        ks_deform_tensors b = t;
        b.columns0 = j->traced == KS_DEFORM_IM2COL ? NULL : t.columns0;
        rc = ks_deform_backward_cuda(j->p, &b, ws, j->launch, j->traced, dev_sink, NULL);
    }
    ks_cuda_free(ws);
    return rc;
}

static int run_sim(const job *j, ks_run *r)
{
    void *host[T_COUNT];
    for (int i = 0; i < T_COUNT; ++i) host[i] = r->tensor[i].data;
    ks_deform_tensors t = tensors_of(host, r, j->conv);
    if (!j->conv) {
        ks_deform_chunk ch;
        memset(&ch, 0, sizeof ch);
        ch.step = j->p->batch, ch.input = t.input, ch.offset = t.offset, ch.mask = t.mask;
        ch.columns = t.columns0;
        return ks_deform_kernel_sim(j->p, KS_DEFORM_IM2COL, &ch, j->launch, r->sink);
    }
    int rc = ks_deform_forward_sim(j->p, &t, j->launch, j->backward ? KS_DEFORM_NONE : j->traced, r->sink);
    if (!rc && j->backward) {
        t.columns0 = j->traced == KS_DEFORM_IM2COL ? NULL : t.columns0;
        rc = ks_deform_backward_sim(j->p, &t, j->launch, j->traced, r->sink);
    }
    return rc;
}

static int run_deform(ks_run *r, int conv)
{
    ks_deform_params p;
    ks_deform_geom g;
    int rc;
    const int ntensors = conv ? T_COUNT : 4;
    for (int i = 0; i < ntensors; ++i)
        if (r->tensor[i].data && r->tensor[i].dtype != KS_F32)
            return ks_fail(KS_EINVAL, "%s must be float32", r->tensor[i].name);
    if ((rc = params_from_run(r, conv, &p)) || (rc = ks_deform_geometry(&p, &g))) return rc;
    if (p.batch < 1) return ks_fail(KS_EINVAL, "batch must be >= 1");
    if ((rc = prepare_tensors(r, conv, &p, &g))) return rc;
    job j = {&p, &r->launch, conv, conv && r->value[P_BACKWARD][0], KS_DEFORM_IM2COL};
    if (conv) {
        const int64_t tk = r->value[P_TRACE_KERNEL][0]; /* auto|im2col|col2im|coord */
        j.traced = tk == 0 ? (j.backward ? KS_DEFORM_COL2IM : KS_DEFORM_IM2COL) : (ks_deform_kernel)(tk - 1);
        if (!j.backward && j.traced != KS_DEFORM_IM2COL)
            return ks_fail(KS_EINVAL, "--trace-kernel col2im and coord run in the backward pass: add --backward");
    }
    const ks_deform_kernel k = j.traced;
    const int64_t S = g.step;
    snprintf(r->params_json, sizeof r->params_json,
             "{\"kernel_size\": [%lld, %lld], \"padding\": [%lld, %lld], \"stride\": [%lld, %lld], "
             "\"dilation\": [%lld, %lld], \"batch\": %lld, \"channels\": %lld, \"input_size\": [%lld, %lld], "
             "\"offset_groups\": %lld, \"groups\": %lld, \"out_channels\": %lld, \"im2col_step\": %lld, "
             "\"mask\": %s, \"bias\": %s, \"semantics\": \"%s\", \"kernel\": \"%s\", "
             "\"traced_images\": %lld, \"output_size\": [%lld, %lld]}",
             (long long)p.kernel_h, (long long)p.kernel_w, (long long)p.pad_h, (long long)p.pad_w,
             (long long)p.stride_h, (long long)p.stride_w, (long long)p.dilation_h, (long long)p.dilation_w,
             (long long)p.batch, (long long)p.channels, (long long)p.height, (long long)p.width,
             (long long)p.offset_groups, (long long)p.groups, (long long)p.out_channels, (long long)S,
             p.use_mask ? "true" : "false", p.use_bias ? "true" : "false",
             p.semantics == KS_DEFORM_MMCV ? "mmcv" : "torchvision",
             k == KS_DEFORM_IM2COL ? "deformable_im2col" : k == KS_DEFORM_COL2IM ? "deformable_col2im" : "deformable_col2im_coord",
             (long long)S, (long long)g.height_out, (long long)g.width_out);
    if ((rc = ks_deform_kernel_launch(&p, k, S, &r->launch, &r->threads, &r->blocks))) return rc;
    r->block_cap = r->launch.block_cap ? r->launch.block_cap : KS_DEFORM_BLOCK_CAP;
    r->work_items = ks_deform_work(&g, &p, k, S);
    r->nsites = ks_deform_sites(&p, k, S, r->sites);
    if (r->device == KS_DEV_CUDA) {
        ks_tensor *ts[T_COUNT];
        int out[T_COUNT];
        for (int i = 0; i < ntensors; ++i) {
            ts[i] = &r->tensor[i];
            out[i] = (conv ? conv_tensors : im2col_tensors)[i].output && !r->absent[i];
        }
        /* im2col: 5 events per tap and a work event; col2im: 9; coord: 3 per channel */
        const int64_t kk = p.kernel_h * p.kernel_w;
        unsigned long long per = k == KS_DEFORM_IM2COL ? 1 + 5 * kk : k == KS_DEFORM_COL2IM ? 10 : 6 + 2 * p.channels;
        unsigned long long cap = (unsigned long long)r->work_items * per;
        if (cap > (1ULL << 24)) cap = 1ULL << 24;
        cuda_job c = {&j, r};
        return ks_run_cuda(ts, out, ntensors, r->sink, cap, launch_cuda, &c, r->device_name,
                           sizeof r->device_name);
    }
    snprintf(r->device_name, sizeof r->device_name, "sim");
    return run_sim(&j, r);
}

static int run_conv(ks_run *r) { return run_deform(r, 1); }
static int run_im2col(ks_run *r) { return run_deform(r, 0); }

const ks_op ks_op_deform_conv = {
    "deform_conv", "deformable convolution v1/v2 (mmcv, torchvision): forward, --backward",
    conv_params, P_COUNT, conv_tensors, T_COUNT, KS_DEFORM_THREADS, KS_DEFORM_BLOCK_CAP, run_conv,
};

const ks_op ks_op_deform_im2col = {
    "deform_im2col", "deformable im2col: where each tap samples, bilinear weights, the mask",
    im2col_params, P_SHARED, im2col_tensors, 4, KS_DEFORM_THREADS, KS_DEFORM_BLOCK_CAP, run_im2col,
};
