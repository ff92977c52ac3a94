/* patchify_op.c - the descriptor of patchify (DPVO): the raw patches and their bilinear
 * output, --backward for both backward kernels; one kernel is traced. The geometry and the
 * trace schema (validated here, once), the kernel rows and the SDK's entry points. The
 * bodies are patchify_body.h. */
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../core/ks_params.h"

#define KS_BODY "../patchify/patchify_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

enum { P_RADIUS, P_BACKWARD, P_BATCH, P_CHANNELS, P_HW, P_POINTS, P_COUNT };

/* the rows, indexed by ks_patchify_kernel; DPVO's launch: 256 threads, no block cap. Each
 * row's trace schema is ks_patchify_sites on prepare's params (the state). */
#define SITES(k) \
    static int sites_##k(const void *p, ks_site *s) { return ks_patchify_sites(p, k, s); }
SITES(KS_PATCH_PATCHES)
SITES(KS_PATCH_BILINEAR)
SITES(KS_PATCH_BILINEAR_BWD)
SITES(KS_PATCH_PATCHES_BWD)
#define ROW(fn, k, word, what)                                                                                      \
    [k] = KS_KERNEL_ROW(fn, word, .sites = sites_##k, .threads = KS_PATCH_THREADS, .block_cap = KS_PATCH_BLOCK_CAP, \
                        .help = what)
static const ks_kernel kernels[] = {
    ROW(ks_patch_fwd, KS_PATCH_PATCHES, "patches", "one raw entry (b, m, jj, ii) per item, its C channels copied"),
    ROW(ks_patch_bilinear, KS_PATCH_BILINEAR, "bilinear", "one output element per item: 4 raw entries weighted"),
    ROW(ks_patch_bilinear_bwd, KS_PATCH_BILINEAR_BWD, "bilinear_backward",
        "--backward: each raw entry gathers its output grads"),
    ROW(ks_patch_bwd, KS_PATCH_PATCHES_BWD, "patches_backward",
        "--backward: each raw entry adds into grad_input (atomics)"),
};

static const ks_param_spec params[P_COUNT] = {
    [P_RADIUS] = {.name = "radius", .def = {1, 1}, .help = "R: output patches are (2R+1)^2, raw patches (2R+2)^2"},
    [P_BACKWARD] = {.name = "backward",
                    .kind = KS_PARAM_SWITCH,
                    .help = "also grad_input of sum(output * grad_output)"},
    [P_BATCH] = KS_ROW_BATCH("B", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(1, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(6, 6),
    [P_POINTS] = {.name = "num-points",
                  .def = {2, 2},
                  .help = "M built-in points per image, random (x, y) (an --in coords sets it)"},
};

static const ks_tensor_spec tensors[] = {
    [KS_PATCH_T_INPUT] = {.name = "input", .shape = "(B, C, H, W)"},
    [KS_PATCH_T_COORDS] = {.name = "coords", .shape = "(B, M, 2): (x, y) per point", .seed = 9},
    [KS_PATCH_T_PATCHES] = {.name = "patches",
                            .output = 1,
                            .shape = "(B, M, C, 2R+2, 2R+2): raw pixels around floor(x, y)"},
    [KS_PATCH_T_OUTPUT] = {.name = "output",
                           .output = 1,
                           .shape = "(B, M, C, 2R+1, 2R+1): bilinear samples at (y + r - R, x + s - R)"},
    [KS_PATCH_T_GRAD_OUTPUT] = {.name = "grad_output", .shape = "like output: with --backward", .seed = 4},
    [KS_PATCH_T_GRAD_PATCHES] = {.name = "grad_patches", .output = 1, .shape = "like patches: with --backward"},
    [KS_PATCH_T_GRAD_INPUT] = {.name = "grad_input", .output = 1, .shape = "(B, C, H, W): with --backward"},
};

int ks_patchify_check(const ks_patchify_params *p)
{
    const ks_size_check checks[] = {
        {.name = "batch", .v = p->batch, .lo = 1},           {.name = "channels", .v = p->channels, .lo = 1},
        {.name = "height", .v = p->height, .lo = 1},         {.name = "width", .v = p->width, .lo = 1},
        {.name = "num_points", .v = p->num_points, .lo = 0}, {.name = "radius", .v = p->radius, .lo = 0},
    };
    int rc = ks_check_sizes(checks, sizeof checks / sizeof checks[0]);
    if (rc) return rc;
    const double D = 2.0 * (double)p->radius + 2;
    if ((double)p->batch * p->num_points * p->channels * D * D > 1e18 ||
        (double)p->batch * p->channels * p->height * p->width > 1e18)
        return ks_fail(KS_EINVAL, "tensor sizes overflow");
    return KS_OK;
}

int64_t ks_patchify_work(const ks_patchify_params *p, ks_patchify_kernel k)
{
    const int64_t D = 2 * p->radius + 2, d = 2 * p->radius + 1, BM = p->batch * p->num_points;
    switch (k) {
    case KS_PATCH_PATCHES:
    case KS_PATCH_PATCHES_BWD: return BM * D * D;
    case KS_PATCH_BILINEAR: return BM * p->channels * d * d;
    default: return BM * p->channels * D * D;
    }
}

int ks_patchify_sites(const ks_patchify_params *p, ks_patchify_kernel k, ks_site *s)
{
    /* zero points: no work, but the schema stays well formed (strides >= 1) */
    const int64_t M = p->num_points > 0 ? p->num_points : 1, C = p->channels, D = 2 * p->radius + 2, d = D - 1;
    static const char *const names[4] = {"patchify", "patchify_bilinear", "patchify_bilinear_backward",
                                         "patchify_backward"}; /* the sites' prefixes */
    char buf[KS_NAME_LEN];
    ks_site *w = &s[KS_PATCH_SITE_WORK];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s.work", names[k]);
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    if (k == KS_PATCH_PATCHES || k == KS_PATCH_PATCHES_BWD) {
        w->nfields = 6;
        ks_field_digit(&w->fields[0], "b", M * D * D, 0, 0);
        ks_field_digit(&w->fields[1], "m", D * D, M, 0);
        ks_field_digit(&w->fields[2], "jj", D, D, 0);
        ks_field_digit(&w->fields[3], "ii", 1, D, 0);
        ks_field_derived(&w->fields[4], "i", "floor(y) + ii - R");
        ks_field_derived(&w->fields[5], "j", "floor(x) + jj - R");
    } else {
        const int64_t e = k == KS_PATCH_BILINEAR ? d : D;
        w->nfields = 5;
        ks_field_digit(&w->fields[0], "b", M * C * e * e, 0, 0);
        ks_field_digit(&w->fields[1], "m", C * e * e, M, 0);
        ks_field_digit(&w->fields[2], "c", e * e, C, 0);
        ks_field_digit(&w->fields[3], k == KS_PATCH_BILINEAR ? "r" : "ii", e, e, 0);
        ks_field_digit(&w->fields[4], k == KS_PATCH_BILINEAR ? "s" : "jj", 1, e, 0);
    }
    static const int reads[4] = {KS_PATCH_T_INPUT, KS_PATCH_T_PATCHES, KS_PATCH_T_GRAD_OUTPUT, KS_PATCH_T_GRAD_PATCHES};
    static const int writes[4] = {KS_PATCH_T_PATCHES, KS_PATCH_T_OUTPUT, KS_PATCH_T_GRAD_PATCHES,
                                  KS_PATCH_T_GRAD_INPUT};
    snprintf(buf, sizeof buf, "%s.read", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_READ], buf, KS_EV_READ, reads[k], 0);
    snprintf(buf, sizeof buf, "%s.sample", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_SAMPLE], buf, KS_EV_SAMPLE, KS_PATCH_T_PATCHES, 0);
    snprintf(buf, sizeof buf, "%s.write", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_WRITE], buf, KS_EV_WRITE, writes[k], k == KS_PATCH_PATCHES_BWD ? 0 : 1);
    snprintf(buf, sizeof buf, "%s.patch", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_PATCH], buf, KS_EV_REGION,
                   k == KS_PATCH_PATCHES_BWD ? KS_PATCH_T_GRAD_INPUT : KS_PATCH_T_INPUT, 0);
    return KS_PATCH_NSITES;
}

static ks_patchify_args args_of(const ks_patchify_params *p, const ks_patchify_tensors *t)
{
    return (ks_patchify_args){.batch = p->batch,
                              .channels = p->channels,
                              .height = p->height,
                              .width = p->width,
                              .num_points = p->num_points,
                              .radius = p->radius,
                              .t = *t};
}

/* every tensor's element count, for the 32-bit choice */
static void sizes(ks_exec *x, const ks_patchify_params *p)
{
    const int64_t D = 2 * p->radius + 2;
    ks_exec_size(x, p->batch * p->channels * p->height * p->width);
    ks_exec_size(x, p->batch * p->num_points * p->channels * D * D);
}

static int sdk(int device, const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
               const ks_launch *l, ks_sink *sink, void *stream)
{
    if (k < KS_PATCH_PATCHES || k > KS_PATCH_PATCHES_BWD)
        return ks_fail(KS_EINVAL, "unknown patchify kernel %d", (int)k);
    int rc = ks_patchify_check(p);
    if (rc) return rc;
    ks_exec x = ks_exec_make(kernels, KS_COUNT(kernels), device, l);
    x.sink = sink, x.trace = k, x.stream = stream;
    sizes(&x, p);
    const ks_patchify_args a = args_of(p, t);
    return ks_exec_kernel(&x, k, &a, ks_patchify_work(p, k));
}

int ks_patchify_kernel_sim(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                           const ks_launch *l, ks_sink *sink)
{
    return sdk(KS_DEV_SIM, p, k, t, l, sink, NULL);
}

int ks_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                            const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    return sdk(KS_DEV_CUDA, p, k, t, l, (ks_sink *)dev_sink, stream);
}

static int prepare(ks_run *r)
{
    static const ks_dim_bind xy_dims[] = {{.dim = 1, .param = P_POINTS, .axis = 0}};
    ks_patchify_params *p = KS_RUN_CTX(r, ks_patchify_params);
    const ks_tensor *xy = &r->tensor[KS_PATCH_T_COORDS];
    int rc;
    if ((rc = ks_run_take_nchw(r, KS_PATCH_T_INPUT, P_BATCH, P_CHANNELS, P_HW)) ||
        (rc = ks_run_take(r, KS_PATCH_T_COORDS, 3, xy_dims, KS_COUNT(xy_dims))))
        return rc;
    if (xy->data && xy->shape[0] != r->value[P_BATCH][0])
        return ks_fail(KS_EINVAL,
                       "coords has batch %lld but the input has %lld (DPVO#24: a mismatch reads out of bounds)",
                       (long long)xy->shape[0], (long long)r->value[P_BATCH][0]);
    *p = (ks_patchify_params){
        .batch = r->value[P_BATCH][0],
        .channels = r->value[P_CHANNELS][0],
        .height = r->value[P_HW][0],
        .width = r->value[P_HW][1],
        .num_points = r->value[P_POINTS][0],
        .radius = r->value[P_RADIUS][0],
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
    /* the raw patches, or with --backward their backward (scatter into grad_input) */
    const int k = ks_run_trace_row(r, r->value[P_BACKWARD][0] ? KS_PATCH_PATCHES_BWD : KS_PATCH_PATCHES);
    r->work_items = ks_patchify_work(p, k);
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

/* the forward pair, then (--backward) the backward pair; only the traced row records */
static int run(ks_exec *x, const ks_run *r, void *const *d)
{
    const ks_patchify_params *p = KS_RUN_CTX(r, const ks_patchify_params);
    const ks_patchify_tensors t = {
        .input = d[KS_PATCH_T_INPUT],
        .coords = d[KS_PATCH_T_COORDS],
        .patches = d[KS_PATCH_T_PATCHES],
        .output = d[KS_PATCH_T_OUTPUT],
        .grad_output = d[KS_PATCH_T_GRAD_OUTPUT],
        .grad_patches = d[KS_PATCH_T_GRAD_PATCHES],
        .grad_input = d[KS_PATCH_T_GRAD_INPUT],
    };
    const ks_patchify_args a = args_of(p, &t);
    const int last = r->value[P_BACKWARD][0] ? KS_PATCH_PATCHES_BWD : KS_PATCH_BILINEAR;
    int rc = KS_OK;
    for (int k = KS_PATCH_PATCHES; k <= last && !rc; ++k) rc = ks_exec_kernel(x, k, &a, ks_patchify_work(p, k));
    return rc;
}

/* kscope step's lines before i and j: the point's y and x from coords[b, m] (x first, as
 * DPVO stores it) */
static void explain(ks_explain *x)
{
    const int fb = ks_site_field(x->site, "b"), fm = ks_site_field(x->site, "m");
    int64_t shape[KS_MAX_DIMS];
    if (fb < 0 || fm < 0 || ks_site_field(x->site, "i") < 0 || x->shape(x, "coords", shape) != 3) return;
    const int64_t B = shape[0], M = shape[1], b = x->field[fb], m = x->field[fm];
    if (b < 0 || b >= B || m < 0 || m >= M) return; /* a damaged trace's fields */
    const int64_t at = (b * M + m) * 2;
    char expr[KS_EXPR_LEN], work[192];
    float v;
    for (int k = 1; k >= 0; --k) { /* y (before i), then x (before j) */
        if (!x->f32(x, "coords", at + k, &v)) return;
        snprintf(expr, sizeof expr, "coords[b, m, %d]", k);
        snprintf(work, sizeof work, "coords[%lld, %lld, %d]", (long long)b, (long long)m, k);
        x->give(x, k ? "i" : "j", k ? "y" : "x", expr, work, v);
    }
}

const ks_op ks_op_patchify = {
    .name = "patchify",
    .summary = "DPVO patchify: raw (2R+2)^2 patches, their bilinear (2R+1)^2 output; --backward",
    .symbols = "x y R", /* names explain gives, and the radius */
    .aliases = "R=radius",
    .explain = explain,
    KS_OP_ROWS(params, tensors),
    KS_OP_KERNELS(kernels),
    .prepare = prepare,
    .fill = fill,
    .run = run,
};
