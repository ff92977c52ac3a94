/* patchify_op.c - the descriptor of patchify (DPVO): the raw patches and their bilinear
 * output, --backward for both backward kernels; one kernel is traced. */
#include "../core/ks_error.h"
#include "../core/ks_params.h"
#include "patchify.h"

enum { P_RADIUS, P_BACKWARD, P_TRACE, P_BATCH, P_CHANNELS, P_HW, P_POINTS, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    [P_RADIUS] = {.name = "radius", .def = {1, 1}, .help = "R: output patches are (2R+1)^2, raw patches (2R+2)^2"},
    [P_BACKWARD] = {.name = "backward", .kind = KS_PARAM_SWITCH, .help = "also grad_input of sum(output * grad_output)"},
    [P_TRACE] = {.name = "trace-kernel", .kind = KS_PARAM_CHOICE, .choices = "patches|bilinear",
                 .help = "kernel a trace records (raw patches or their bilinear combination)"},
    [P_BATCH] = KS_ROW_BATCH("B", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(1, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(6, 6),
    [P_POINTS] = {.name = "num-points", .def = {2, 2},
                  .help = "M built-in points per image, random (x, y) (an --in coords sets it)"},
};

static const ks_tensor_spec tensors[] = {
    [KS_PATCH_T_INPUT] = {.name = "input", .shape = "(B, C, H, W)"},
    [KS_PATCH_T_COORDS] = {.name = "coords", .shape = "(B, M, 2): (x, y) per point", .seed = 9},
    [KS_PATCH_T_PATCHES] = {.name = "patches", .output = 1, .shape = "(B, M, C, 2R+2, 2R+2): raw pixels around floor(x, y)"},
    [KS_PATCH_T_OUTPUT] = {.name = "output", .output = 1,
                           .shape = "(B, M, C, 2R+1, 2R+1): bilinear samples at (y + r - R, x + s - R)"},
    [KS_PATCH_T_GRAD_OUTPUT] = {.name = "grad_output", .shape = "like output: with --backward", .seed = 4},
    [KS_PATCH_T_GRAD_PATCHES] = {.name = "grad_patches", .output = 1, .shape = "like patches: with --backward"},
    [KS_PATCH_T_GRAD_INPUT] = {.name = "grad_input", .output = 1, .shape = "(B, C, H, W): with --backward"},
};

/* forward: the raw patches (or the combination); backward: their backward twins */
static ks_patchify_kernel traced_kernel(const ks_run *r)
{
    const int bil = (int)r->value[P_TRACE][0];
    if (r->value[P_BACKWARD][0]) return bil ? KS_PATCH_BILINEAR_BWD : KS_PATCH_PATCHES_BWD;
    return bil ? KS_PATCH_BILINEAR : KS_PATCH_PATCHES;
}

static int prepare(ks_run *r)
{
    static const ks_dim_bind xy_dims[] = {{.dim = 1, .param = P_POINTS, .axis = 0}};
    static const char *const names[] = {"patchify", "patchify_bilinear", "patchify_bilinear_backward",
                                        "patchify_backward"};
    ks_patchify_params *p = KS_RUN_CTX(r, ks_patchify_params);
    const ks_tensor *xy = &r->tensor[KS_PATCH_T_COORDS];
    int rc;
    if ((rc = ks_run_take_nchw(r, KS_PATCH_T_INPUT, P_BATCH, P_CHANNELS, P_HW)) ||
        (rc = ks_run_take(r, KS_PATCH_T_COORDS, 3, xy_dims, KS_COUNT(xy_dims))))
        return rc;
    if (xy->data && xy->shape[0] != r->value[P_BATCH][0])
        return ks_fail(KS_EINVAL, "coords has batch %lld but the input has %lld (DPVO#24: a mismatch reads out of bounds)",
                       (long long)xy->shape[0], (long long)r->value[P_BATCH][0]);
    *p = (ks_patchify_params){
        .batch = r->value[P_BATCH][0], .channels = r->value[P_CHANNELS][0], .height = r->value[P_HW][0],
        .width = r->value[P_HW][1], .num_points = r->value[P_POINTS][0], .radius = r->value[P_RADIUS][0],
    };
    if ((rc = ks_patchify_check(p))) return rc;
    const int64_t D = 2 * p->radius + 2, d = D - 1;
    const int64_t patches[5] = {p->batch, p->num_points, p->channels, D, D};
    const int64_t output[5] = {p->batch, p->num_points, p->channels, d, d};
    ks_run_shape4(r, KS_PATCH_T_INPUT, 4, p->batch, p->channels, p->height, p->width);
    ks_run_shape4(r, KS_PATCH_T_COORDS, 3, p->batch, p->num_points, 2, 0);
    ks_run_shape(r, KS_PATCH_T_PATCHES, 5, patches);
    ks_run_shape(r, KS_PATCH_T_OUTPUT, 5, output);
    if (r->value[P_BACKWARD][0]) {
        ks_run_shape(r, KS_PATCH_T_GRAD_OUTPUT, 5, output);
        ks_run_shape(r, KS_PATCH_T_GRAD_PATCHES, 5, patches);
        ks_run_shape4(r, KS_PATCH_T_GRAD_INPUT, 4, p->batch, p->channels, p->height, p->width);
    } else {
        ks_run_absent(r, KS_PATCH_T_GRAD_OUTPUT);
        ks_run_absent(r, KS_PATCH_T_GRAD_PATCHES);
        ks_run_absent(r, KS_PATCH_T_GRAD_INPUT);
    }
    const ks_patchify_kernel k = traced_kernel(r);
    ks_run_fact(r, "kernel", "\"%s\"", names[k]);
    r->work_items = ks_patchify_work(p, k);
    r->nsites = ks_patchify_sites(p, k, r->sites);
    return KS_OK;
}

/* random (x, y) inside the image */
static int fill(ks_run *r, int t)
{
    if (t != KS_PATCH_T_COORDS) return KS_ENOENT;
    const ks_patchify_params *p = KS_RUN_CTX(r, const ks_patchify_params);
    uint64_t s = r->seed + (uint64_t)tensors[t].seed;
    float *xy = r->tensor[t].data;
    for (int64_t k = 0; k < p->batch * p->num_points; ++k) {
        xy[2 * k] = ks_rand_unit(&s) * (float)(p->width - 1);
        xy[2 * k + 1] = ks_rand_unit(&s) * (float)(p->height - 1);
    }
    return KS_OK;
}

/* the forward pair, then (--backward) the backward pair; only the traced kernel records */
static int launch(const ks_run *r, void *const *d, ks_sink *sink)
{
    const ks_patchify_params *p = KS_RUN_CTX(r, const ks_patchify_params);
    const ks_patchify_tensors t = {
        .input = d[KS_PATCH_T_INPUT], .coords = d[KS_PATCH_T_COORDS], .patches = d[KS_PATCH_T_PATCHES],
        .output = d[KS_PATCH_T_OUTPUT], .grad_output = d[KS_PATCH_T_GRAD_OUTPUT],
        .grad_patches = d[KS_PATCH_T_GRAD_PATCHES], .grad_input = d[KS_PATCH_T_GRAD_INPUT],
    };
    const ks_patchify_kernel traced = traced_kernel(r);
    const int last = r->value[P_BACKWARD][0] ? KS_PATCH_PATCHES_BWD : KS_PATCH_BILINEAR;
    int rc = KS_OK;
    for (int k = KS_PATCH_PATCHES; k <= last && !rc; ++k) {
        ks_sink *s = k == (int)traced ? sink : NULL;
        rc = r->device == KS_DEV_CUDA ? ks_patchify_launch_cuda(p, (ks_patchify_kernel)k, &t, &r->launch, s, NULL)
                                      : ks_patchify_launch_sim(p, (ks_patchify_kernel)k, &t, &r->launch, s);
    }
    return rc;
}

const ks_op ks_op_patchify = {
    .name = "patchify",
    .summary = "DPVO patchify: raw (2R+2)^2 patches, their bilinear (2R+1)^2 output; --backward",
    .symbols = "x y R", /* names step_work.c explains */
    KS_OP_ROWS(params, tensors),
    .default_threads = KS_PATCH_THREADS,
    .default_block_cap = KS_PATCH_BLOCK_CAP,
    .prepare = prepare,
    .fill = fill,
    .launch = launch,
};
