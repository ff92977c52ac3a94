/* roi_align_op.c - the descriptor of roi_align: forward (avg, or max with argmax) or,
 * with --backward, the backward kernel after it; RoIs from .npy or random boxes. */
#include <math.h>
#include <stdio.h>

#include "../core/ks_error.h"
#include "../core/ks_params.h"
#include "roi_align_args.h"

enum { P_OUT, P_SCALE, P_RATIO, P_ALIGNED, P_POOL, P_FORWARD, P_BACKWARD, P_BATCH, P_CHANNELS, P_HW, P_ROIS, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    [P_OUT] = {.name = "output-size", .axes = 2, .def = {2, 2}, .min = 1, .help = "PH, PW: bins per RoI"},
    [P_SCALE] = {.name = "spatial-scale",
                 .kind = KS_PARAM_FLOAT,
                 .fdef = {1, 1},
                 .help = "input coordinates = RoI coordinates * scale"},
    [P_RATIO] = {.name = "sampling-ratio",
                 .min = -2147483647,
                 .help = "samples per bin and axis; <= 0: ceil(RoI size / bins)"},
    [P_ALIGNED] = {.name = "aligned",
                   .kind = KS_PARAM_SWITCH,
                   .def = {1, 1},
                   .help = "shift the box by -0.5 pixel (mmcv default; --no-aligned: legacy)"},
    [P_POOL] = {.name = "pool-mode",
                .kind = KS_PARAM_CHOICE,
                .choices = "avg|max",
                .help = "average the samples, or take the largest (mmcv)"},
    [P_FORWARD] = {.name = "forward",
                   .kind = KS_PARAM_CHOICE,
                   .choices = "auto|slot|samples|plane|cl",
                   .help = "the plain avg forward's body (a trace records the slot body's traced variant)"},
    [P_BACKWARD] = {.name = "backward",
                    .kind = KS_PARAM_SWITCH,
                    .help = "also grad_input of sum(output * grad_output)"},
    [P_BATCH] = KS_ROW_BATCH("N", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(1, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(8, 8),
    [P_ROIS] = {.name = "num-rois", .def = {3, 3}, .help = "K built-in RoIs, random boxes (an --in rois sets it)"},
};

static const ks_tensor_spec tensors[] = {
    [KS_ROI_T_INPUT] = {.name = "input", .shape = "(N, C, H, W)"},
    [KS_ROI_T_ROIS] = {.name = "rois", .shape = "(K, 5): batch index, x1, y1, x2, y2", .seed = 7},
    [KS_ROI_T_OUTPUT] = {.name = "output", .output = 1, .shape = "(K, C, PH, PW)"},
    [KS_ROI_T_ARGMAX_Y] = {.name = "argmax_y", .output = 1, .shape = "(K, C, PH, PW): --pool-mode max"},
    [KS_ROI_T_ARGMAX_X] = {.name = "argmax_x", .output = 1, .shape = "(K, C, PH, PW): --pool-mode max"},
    [KS_ROI_T_GRAD_OUTPUT] = {.name = "grad_output", .shape = "(K, C, PH, PW): with --backward", .seed = 4},
    [KS_ROI_T_GRAD_INPUT] = {.name = "grad_input", .output = 1, .shape = "(N, C, H, W): with --backward"},
};

/* What prepare leaves for fill and launch: the parameters and the kernel arguments. */
typedef struct roi_state {
    ks_roi_align_params p;
    ks_roi_align_args a;
} roi_state;

static int prepare(ks_run *r)
{
    static const ks_dim_bind roi_dims[] = {{.dim = 0, .param = P_ROIS, .axis = 0}};
    roi_state *st = KS_RUN_CTX(r, roi_state);
    ks_roi_align_params *p = &st->p;
    int rc;
    if ((rc = ks_run_take_nchw(r, KS_ROI_T_INPUT, P_BATCH, P_CHANNELS, P_HW)) ||
        (rc = ks_run_take(r, KS_ROI_T_ROIS, 2, roi_dims, KS_COUNT(roi_dims))))
        return rc;
    /* the flag's name in the message (the C API's check names the field) */
    const float scale = (float)r->fvalue[P_SCALE][0];
    if (!(scale > 0.0f) || isinf(scale))
        return ks_fail(KS_EINVAL, "--spatial-scale must be a finite number > 0 (got %g)", r->fvalue[P_SCALE][0]);
    *p = (ks_roi_align_params){
        .batch = r->value[P_BATCH][0],
        .channels = r->value[P_CHANNELS][0],
        .height = r->value[P_HW][0],
        .width = r->value[P_HW][1],
        .num_rois = r->value[P_ROIS][0],
        .pooled_h = r->value[P_OUT][0],
        .pooled_w = r->value[P_OUT][1],
        .spatial_scale = scale,
        .sampling_ratio = r->value[P_RATIO][0],
        .aligned = (int)r->value[P_ALIGNED][0],
        .pool_mode = r->value[P_POOL][0] ? KS_ROI_MAX : KS_ROI_AVG,
        .forward = (int)r->value[P_FORWARD][0], /* the choice's words in ks_roi_forward's order */
    };
    if ((rc = ks_roi_align_args_make(p, &st->a))) return rc; /* validated here, once */
    /* a given RoI's batch index is checked before anything runs */
    if (r->tensor[KS_ROI_T_ROIS].data && r->tensor[KS_ROI_T_ROIS].shape[1] == 5 &&
        (rc = ks_roi_align_check_rois(p, r->tensor[KS_ROI_T_ROIS].data)))
        return rc;
    const int backward = (int)r->value[P_BACKWARD][0];
    const int64_t K = p->num_rois, C = p->channels;
    ks_run_shape4(r, KS_ROI_T_INPUT, 4, p->batch, C, p->height, p->width);
    ks_run_shape4(r, KS_ROI_T_ROIS, 2, K, 5, 0, 0);
    ks_run_shape4(r, KS_ROI_T_OUTPUT, 4, K, C, p->pooled_h, p->pooled_w);
    for (int t = KS_ROI_T_ARGMAX_Y; t <= KS_ROI_T_ARGMAX_X; ++t) {
        if (p->pool_mode == KS_ROI_MAX) ks_run_shape4(r, t, 4, K, C, p->pooled_h, p->pooled_w);
        else ks_run_absent(r, t);
    }
    if (backward) {
        ks_run_shape4(r, KS_ROI_T_GRAD_OUTPUT, 4, K, C, p->pooled_h, p->pooled_w);
        ks_run_shape4(r, KS_ROI_T_GRAD_INPUT, 4, p->batch, C, p->height, p->width);
    } else {
        ks_run_absent(r, KS_ROI_T_GRAD_OUTPUT);
        ks_run_absent(r, KS_ROI_T_GRAD_INPUT);
    }
    /* the row that records: the forward, or with --backward the backward (--trace-kernel
     * forward: the forward of a --backward run) */
    const int traced_bwd = ks_run_trace_row(r, backward ? KS_ROI_K_BWD : KS_ROI_K_FWD) == KS_ROI_K_BWD;
    if (traced_bwd && !backward) return ks_fail(KS_EINVAL, "--trace-kernel backward runs with --backward: add it");
    r->work_items = K * C * p->pooled_h * p->pooled_w;
    r->nsites = ks_roi_align_sites(p, traced_bwd, r->sites);
    return KS_OK;
}

/* K random boxes inside the image (in RoI coordinates: image / scale), batch random */
static int fill(ks_run *r, int t)
{
    if (t != KS_ROI_T_ROIS) return KS_ENOENT;
    const ks_roi_align_params *p = &KS_RUN_CTX(r, const roi_state)->p;
    float *b = r->tensor[t].data;
    uint64_t s = r->seed + (uint64_t)tensors[t].seed;
    const float H = (float)p->height / p->spatial_scale, W = (float)p->width / p->spatial_scale;
    for (int64_t k = 0; k < p->num_rois; ++k) {
        const float x1 = ks_rand_unit(&s) * 0.7f * W, y1 = ks_rand_unit(&s) * 0.7f * H;
        b[k * 5] = (float)(int64_t)(ks_rand_unit(&s) * (float)p->batch);
        b[k * 5 + 1] = x1;
        b[k * 5 + 2] = y1;
        b[k * 5 + 3] = x1 + (0.2f + 0.5f * ks_rand_unit(&s)) * W;
        b[k * 5 + 4] = y1 + (0.2f + 0.5f * ks_rand_unit(&s)) * H;
    }
    return KS_OK;
}

/* the forward, then (--backward) the backward (ks_roi_align_exec); the row r->traced_row records */
static int run(ks_exec *x, const ks_run *r, void *const *d)
{
    ks_roi_align_args a = KS_RUN_CTX(r, const roi_state)->a;
    a.input = d[KS_ROI_T_INPUT], a.rois = d[KS_ROI_T_ROIS], a.output = d[KS_ROI_T_OUTPUT];
    a.argmax_y = d[KS_ROI_T_ARGMAX_Y], a.argmax_x = d[KS_ROI_T_ARGMAX_X];
    a.grad_output = d[KS_ROI_T_GRAD_OUTPUT], a.grad_input = d[KS_ROI_T_GRAD_INPUT];
    int rc = ks_roi_align_exec(x, &a, 0);
    if (!rc && r->value[P_BACKWARD][0]) rc = ks_roi_align_exec(x, &a, 1);
    return rc;
}

/* kscope step's lines before grid_h and grid_w: the RoI's box scaled and shifted, its
 * height and width and the bin size, with the kernel's float arithmetic (fmaf included),
 * so the printed values are the ones it used */
static void explain(ks_explain *x)
{
    const int fn = ks_site_field(x->site, "n");
    double scale, aligned, P[2];
    float roi[5];
    if (fn < 0 || ks_site_field(x->site, "grid_h") < 0 || ks_site_field(x->site, "grid_w") < 0 ||
        !x->param(x, "spatial_scale", -1, &scale) || !x->param(x, "aligned", -1, &aligned) ||
        !x->param(x, "PH", -1, &P[0]) || !x->param(x, "PW", -1, &P[1]))
        return;
    if (!(P[0] >= 1 && P[0] <= 65535 && P[1] >= 1 && P[1] <= 65535)) return; /* a damaged trace's */
    for (int k = 0; k < 5; ++k)
        if (!x->f32(x, "rois", (int64_t)x->field[fn] * 5 + k, &roi[k])) return;
    const float off = aligned ? 0.5f : 0.0f, s = (float)scale;
    const char *axis[2][4] = {{"y1", "y2", "roi_h", "bin_h"}, {"x1", "x2", "roi_w", "bin_w"}};
    char expr[KS_EXPR_LEN], work[192], a[40], b[40], c[40];
    for (int d = 0; d < 2; ++d) {
        const char *before = d ? "grid_w" : "grid_h", *const *nm = axis[d];
        float lo_hi[2];
        for (int k = 0; k < 2; ++k) {
            const int col = 2 - d + 2 * k; /* (b, x1, y1, x2, y2) */
            lo_hi[k] = fmaf(roi[col], s, -off);
            x->real(a, sizeof a, roi[col]);
            x->real(b, sizeof b, s);
            snprintf(expr, sizeof expr, "rois[n, %d] * spatial_scale%s", col, aligned ? " - 0.5" : "");
            snprintf(work, sizeof work, "%s * %s%s", a, b, aligned ? " - 0.5" : "");
            x->give(x, before, nm[k], expr, work, lo_hi[k]);
        }
        float size = lo_hi[1] - lo_hi[0];
        x->real(a, sizeof a, lo_hi[1]);
        x->real(b, sizeof b, lo_hi[0]);
        if (aligned) {
            snprintf(expr, sizeof expr, "%s - %s", nm[1], nm[0]);
            snprintf(work, sizeof work, "%s - %s", a, b);
        } else { /* legacy: a malformed RoI is forced to 1x1 */
            snprintf(expr, sizeof expr, "max(%s - %s, 1)", nm[1], nm[0]);
            snprintf(work, sizeof work, "max(%s - %s, 1)", a, b);
            size = fmaxf(size, 1.0f);
        }
        x->give(x, before, nm[2], expr, work, size);
        x->real(c, sizeof c, size);
        snprintf(expr, sizeof expr, "%s / %s", nm[2], d ? "PW" : "PH");
        snprintf(work, sizeof work, "%s / %lld", c, (long long)P[d]);
        x->give(x, before, nm[3], expr, work, size / (float)P[d]);
    }
}

const ks_op ks_op_roi_align = {
    .name = "roi_align",
    .summary = "RoIAlign (mmcv avg/max, torchvision): bins of bilinear samples; --backward",
    .symbols = "sampling_ratio roi_h roi_w PH PW", /* names explain gives */
    .aliases = "PH=output_size[0] PW=output_size[1]",
    .explain = explain,
    KS_OP_ROWS(params, tensors),
    .kernels = ks_roi_rows,
    .nkernels = KS_ROI_NROWS,
    .prepare = prepare,
    .fill = fill,
    .run = run,
};
