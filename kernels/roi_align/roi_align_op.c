/* roi_align_op.c - `kscope run roi_align`: parameters, input and RoIs (.npy or built
 * in), forward and --backward on the simulator or the GPU, the trace of one kernel. */
#include "roi_align_op.h"

#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../run_cuda.h"
#include "roi_align.h"

enum { P_OUT, P_SCALE, P_RATIO, P_ALIGNED, P_POOL, P_BACKWARD, P_BATCH, P_CHANNELS, P_HW, P_ROIS, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    {"output-size", 2, {2, 2}, 1, "PH, PW: bins per RoI", KS_PARAM_INT, NULL, {0, 0}},
    {"spatial-scale", 1, {0, 0}, 0, "input coordinates = RoI coordinates * scale", KS_PARAM_FLOAT, NULL, {1, 1}},
    {"sampling-ratio", 1, {0, 0}, -2147483647, "samples per bin and axis; <= 0: ceil(RoI size / bins)",
     KS_PARAM_INT, NULL, {0, 0}},
    {"aligned", 1, {1, 0}, 0, "shift the box by -0.5 pixel (mmcv default; --no-aligned: legacy)",
     KS_PARAM_SWITCH, NULL, {0, 0}},
    {"pool-mode", 1, {0, 0}, 0, "average the samples, or take the largest (mmcv)", KS_PARAM_CHOICE, "avg|max", {0, 0}},
    {"backward", 1, {0, 0}, 0, "also grad_input of sum(output * grad_output)", KS_PARAM_SWITCH, NULL, {0, 0}},
    {"batch", 1, {1, 0}, 1, "N of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"channels", 1, {1, 0}, 1, "C of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"input-size", 2, {8, 8}, 1, "H, W of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"num-rois", 1, {3, 0}, 0, "K built-in RoIs, random boxes (an --in rois sets it)", KS_PARAM_INT, NULL, {0, 0}},
};

static const ks_tensor_spec tensors[] = {
    {"input", 0, "(N, C, H, W)"},
    {"rois", 0, "(K, 5): batch index, x1, y1, x2, y2"},
    {"output", 1, "(K, C, PH, PW)"},
    {"argmax_y", 1, "(K, C, PH, PW): --pool-mode max"},
    {"argmax_x", 1, "(K, C, PH, PW): --pool-mode max"},
    {"grad_output", 0, "(K, C, PH, PW): with --backward"},
    {"grad_input", 1, "(N, C, H, W): with --backward"},
};
enum { T_INPUT, T_ROIS, T_OUTPUT, T_AY, T_AX, T_GOUT, T_GIN, T_COUNT };

/* K random boxes inside the image (in RoI coordinates: image / scale), batch random */
static int fill_rois(ks_tensor *t, const ks_roi_align_params *p, uint64_t seed)
{
    int rc = ks_tensor_alloc(t);
    if (rc) return rc;
    float *r = t->data;
    uint64_t s = seed;
    const float H = (float)p->height / p->spatial_scale, W = (float)p->width / p->spatial_scale;
    for (int64_t k = 0; k < p->num_rois; ++k) {
        const float x1 = ks_rand_unit(&s) * 0.7f * W, y1 = ks_rand_unit(&s) * 0.7f * H;
        r[k * 5] = (float)(int64_t)(ks_rand_unit(&s) * (float)p->batch);
        r[k * 5 + 1] = x1;
        r[k * 5 + 2] = y1;
        r[k * 5 + 3] = x1 + (0.2f + 0.5f * ks_rand_unit(&s)) * W;
        r[k * 5 + 4] = y1 + (0.2f + 0.5f * ks_rand_unit(&s)) * H;
    }
    return KS_OK;
}

static int from_inputs(ks_run *r, ks_roi_align_params *p)
{
    const ks_tensor *in = &r->tensor[T_INPUT], *ro = &r->tensor[T_ROIS];
    int rc;
    if (in->data) {
        if (in->ndim != 4) return ks_fail(KS_EINVAL, "input must have shape (N, C, H, W)");
        if ((rc = ks_run_agree(r, P_BATCH, 0, "batch", in->shape[0], "input")) ||
            (rc = ks_run_agree(r, P_CHANNELS, 0, "channels", in->shape[1], "input")) ||
            (rc = ks_run_agree(r, P_HW, 0, "input-size", in->shape[2], "input")) ||
            (rc = ks_run_agree(r, P_HW, 1, "input-size", in->shape[3], "input")))
            return rc;
        p->batch = in->shape[0], p->channels = in->shape[1], p->height = in->shape[2], p->width = in->shape[3];
    }
    if (ro->data) {
        if (ro->ndim != 2 || ro->shape[1] != 5) return ks_fail(KS_EINVAL, "rois must have shape (K, 5)");
        if ((rc = ks_run_agree(r, P_ROIS, 0, "num-rois", ro->shape[0], "rois"))) return rc;
        p->num_rois = ro->shape[0];
    }
    return KS_OK;
}

typedef struct job {
    const ks_roi_align_params *p;
    const ks_launch *l;
    int backward;
} job;

static int launch_cuda(void *ctx, void *const *d, const ks_sink *sink)
{
    const job *j = ctx;
    int rc = ks_roi_align_forward_cuda(j->p, d[T_INPUT], d[T_ROIS], d[T_OUTPUT], d[T_AY], d[T_AX], j->l,
                                       j->backward ? NULL : sink, NULL);
    if (!rc && j->backward)
        rc = ks_roi_align_backward_cuda(j->p, d[T_GOUT], d[T_ROIS], d[T_AY], d[T_AX], d[T_GIN], j->l, sink, NULL);
    return rc;
}

static int run_roi_align(ks_run *r)
{
    ks_roi_align_params p;
    ks_tensor *t = r->tensor;
    int rc;
    memset(&p, 0, sizeof p);
    p.pooled_h = r->value[P_OUT][0], p.pooled_w = r->value[P_OUT][1];
    p.spatial_scale = (float)r->fvalue[P_SCALE][0];
    p.sampling_ratio = r->value[P_RATIO][0];
    p.aligned = (int)r->value[P_ALIGNED][0];
    p.pool_mode = r->value[P_POOL][0] ? KS_ROI_MAX : KS_ROI_AVG;
    p.batch = r->value[P_BATCH][0], p.channels = r->value[P_CHANNELS][0];
    p.height = r->value[P_HW][0], p.width = r->value[P_HW][1];
    p.num_rois = r->value[P_ROIS][0];
    const int backward = (int)r->value[P_BACKWARD][0];
    for (int i = 0; i < T_COUNT; ++i)
        if (t[i].data && t[i].dtype != KS_F32) return ks_fail(KS_EINVAL, "%s must be float32", t[i].name);
    if ((rc = from_inputs(r, &p)) || (rc = ks_roi_align_check(&p))) return rc;
    if (!t[T_INPUT].data) {
        ks_tensor_shape(&t[T_INPUT], 4, p.batch, p.channels, p.height, p.width);
        if ((rc = ks_fill_pattern(&t[T_INPUT], r->pattern, r->seed))) return rc;
    }
    if (!t[T_ROIS].data) {
        ks_tensor_shape(&t[T_ROIS], 2, p.num_rois, 5, 0, 0);
        if ((rc = fill_rois(&t[T_ROIS], &p, r->seed + 7))) return rc;
    }
    if ((rc = ks_roi_align_check_rois(&p, t[T_ROIS].data))) return rc;
    const int outs[3] = {T_OUTPUT, T_AY, T_AX};
    for (int i = 0; i < 3; ++i) {
        if (i > 0 && p.pool_mode != KS_ROI_MAX) {
            ks_run_absent(r, outs[i]);
            continue;
        }
        ks_tensor_shape(&t[outs[i]], 4, p.num_rois, p.channels, p.pooled_h, p.pooled_w);
        if ((rc = ks_tensor_alloc(&t[outs[i]]))) return rc;
    }
    if (backward) {
        if (t[T_GOUT].data) {
            const ks_tensor *g = &t[T_GOUT];
            if (g->ndim != 4 || g->shape[0] != p.num_rois || g->shape[1] != p.channels || g->shape[2] != p.pooled_h ||
                g->shape[3] != p.pooled_w)
                return ks_fail(KS_EINVAL, "grad_output must have shape (%lld, %lld, %lld, %lld)", (long long)p.num_rois,
                               (long long)p.channels, (long long)p.pooled_h, (long long)p.pooled_w);
        } else {
            ks_tensor_shape(&t[T_GOUT], 4, p.num_rois, p.channels, p.pooled_h, p.pooled_w);
            if ((rc = ks_fill_pattern(&t[T_GOUT], r->pattern, r->seed + 4))) return rc;
        }
        ks_tensor_shape(&t[T_GIN], 4, p.batch, p.channels, p.height, p.width);
        if ((rc = ks_tensor_alloc(&t[T_GIN]))) return rc;
    } else {
        if (t[T_GOUT].data) return ks_fail(KS_EINVAL, "grad_output is given but --backward is not");
        ks_run_absent(r, T_GOUT);
        ks_run_absent(r, T_GIN);
    }
    snprintf(r->params_json, sizeof r->params_json,
             "{\"output_size\": [%lld, %lld], \"spatial_scale\": %.9g, \"sampling_ratio\": %lld, \"aligned\": %s, "
             "\"pool_mode\": \"%s\", \"batch\": %lld, \"channels\": %lld, \"input_size\": [%lld, %lld], "
             "\"num_rois\": %lld, \"kernel\": \"%s\"}",
             (long long)p.pooled_h, (long long)p.pooled_w, (double)p.spatial_scale, (long long)p.sampling_ratio,
             p.aligned ? "true" : "false", p.pool_mode == KS_ROI_MAX ? "max" : "avg", (long long)p.batch,
             (long long)p.channels, (long long)p.height, (long long)p.width, (long long)p.num_rois,
             backward ? "roi_align_backward" : "roi_align_forward");
    r->work_items = p.num_rois * p.channels * p.pooled_h * p.pooled_w;
    if ((rc = ks_launch_resolve(&r->launch, KS_ROI_THREADS, KS_ROI_BLOCK_CAP, r->work_items, &r->threads, &r->blocks)))
        return rc;
    r->block_cap = r->launch.block_cap ? r->launch.block_cap : KS_ROI_BLOCK_CAP;
    r->nsites = ks_roi_align_sites(&p, backward, r->sites);
    job j = {&p, &r->launch, backward};
    if (r->device == KS_DEV_CUDA) {
        ks_tensor *ts[T_COUNT];
        int out[T_COUNT];
        for (int i = 0; i < T_COUNT; ++i) ts[i] = &t[i], out[i] = tensors[i].output && !r->absent[i];
        unsigned long long cap = (unsigned long long)(r->work_items + 1) * 64;
        if (cap > (1ULL << 24)) cap = 1ULL << 24;
        return ks_run_cuda(ts, out, T_COUNT, r->sink, cap, launch_cuda, &j, r->device_name, sizeof r->device_name);
    }
    snprintf(r->device_name, sizeof r->device_name, "sim");
    rc = ks_roi_align_forward_sim(&p, t[T_INPUT].data, t[T_ROIS].data, t[T_OUTPUT].data, t[T_AY].data, t[T_AX].data,
                                  &r->launch, backward ? NULL : r->sink);
    if (!rc && backward)
        rc = ks_roi_align_backward_sim(&p, t[T_GOUT].data, t[T_ROIS].data, t[T_AY].data, t[T_AX].data,
                                       t[T_GIN].data, &r->launch, r->sink);
    return rc;
}

const ks_op ks_op_roi_align = {
    "roi_align", "RoIAlign (mmcv avg/max, torchvision): bins of bilinear samples; --backward",
    params, P_COUNT, tensors, T_COUNT, KS_ROI_THREADS, KS_ROI_BLOCK_CAP, run_roi_align,
};
