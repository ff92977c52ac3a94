/* maxpool2d_op.c - the descriptor of maxpool2d (torch F.max_pool2d, return_indices): its
 * parameter and tensor rows, the geometry (validated here, once), the trace schema and
 * the simulator launch. The body is maxpool2d_body.h; the GPU launch maxpool2d_cuda.cu. */
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../core/ks_params.h"

#define KS_BODY "../maxpool2d/maxpool2d_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

enum { K_FWD, K_BWD }; /* kernel rows */
enum { P_KERNEL, P_STRIDE, P_PADDING, P_DILATION, P_CEIL, P_BACKWARD, P_BATCH, P_CHANNELS, P_HW, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    [P_KERNEL] = KS_ROW_KERNEL_SIZE(2),
    [P_STRIDE] = {.name = "stride",
                  .axes = 2,
                  .def = {0, 0},
                  .min = 1,
                  .help = "window step (auto: the kernel size, as torch's stride=None)"},
    [P_PADDING] = {.name = "padding",
                   .axes = 2,
                   .def = {0, 0},
                   .min = 0,
                   .help = "-inf padding on each side, at most half the kernel"},
    [P_DILATION] = KS_ROW_DILATION,
    [P_CEIL] = {.name = "ceil-mode",
                .kind = KS_PARAM_SWITCH,
                .help = "round the output size up (a last window must start inside the input or left padding)"},
    [P_BACKWARD] = {.name = "backward",
                    .kind = KS_PARAM_SWITCH,
                    .help = "also grad_input of sum(output * grad_output)"},
    [P_BATCH] = KS_ROW_BATCH("N", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(1, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(6, 6),
};

static const ks_tensor_spec tensors[] = {
    [KS_MP_T_INPUT] = {.name = "input", .shape = "(N, C, H, W)"},
    [KS_MP_T_OUTPUT] = {.name = "output", .output = 1, .shape = "(N, C, Ho, Wo)"},
    [KS_MP_T_INDICES] = {.name = "indices",
                         .output = 1,
                         .dtype = KS_I64,
                         .shape = "(N, C, Ho, Wo): int64, h * W + w of each window's maximum"},
    [KS_MP_T_GRAD_OUTPUT] = {.name = "grad_output", .shape = "(N, C, Ho, Wo): with --backward", .seed = 4},
    [KS_MP_T_GRAD_INPUT] = {.name = "grad_input", .output = 1, .shape = "(N, C, H, W): with --backward"},
};

static int geometry(ks_run *r, ks_maxpool2d_args *a)
{
    for (int ax = 0; ax < 2; ++ax)
        if (!r->set[P_STRIDE]) r->value[P_STRIDE][ax] = r->value[P_KERNEL][ax]; /* torch: stride=None */
    *a = (ks_maxpool2d_args){
        .batch = r->value[P_BATCH][0],
        .channels = r->value[P_CHANNELS][0],
        .height = r->value[P_HW][0],
        .width = r->value[P_HW][1],
        .kernel_h = r->value[P_KERNEL][0],
        .kernel_w = r->value[P_KERNEL][1],
        .stride_h = r->value[P_STRIDE][0],
        .stride_w = r->value[P_STRIDE][1],
        .pad_h = r->value[P_PADDING][0],
        .pad_w = r->value[P_PADDING][1],
        .dilation_h = r->value[P_DILATION][0],
        .dilation_w = r->value[P_DILATION][1],
        .ceil_mode = (int)r->value[P_CEIL][0],
    };
    const ks_size_check checks[] = {
        {.name = "batch", .v = a->batch, .lo = 1},
        {.name = "channels", .v = a->channels, .lo = 1},
        {.name = "height", .v = a->height, .lo = 1},
        {.name = "width", .v = a->width, .lo = 1},
        KS_WINDOW_SIZE_CHECKS(a),
    };
    int rc = ks_check_sizes(checks, sizeof checks / sizeof checks[0]);
    if (rc) return rc;
    if (2 * a->pad_h > a->kernel_h || 2 * a->pad_w > a->kernel_w)
        return ks_fail(KS_EINVAL, "--padding %lld,%lld must be at most half the kernel size %lld,%lld",
                       (long long)a->pad_h, (long long)a->pad_w, (long long)a->kernel_h, (long long)a->kernel_w);
    /* every term < 2^31: no overflow below */
    a->out_h = ks_pool_out_size(a->height, a->kernel_h, a->stride_h, a->pad_h, a->dilation_h, a->ceil_mode);
    a->out_w = ks_pool_out_size(a->width, a->kernel_w, a->stride_w, a->pad_w, a->dilation_w, a->ceil_mode);
    if (a->out_h < 1 || a->out_w < 1)
        return ks_fail(KS_EINVAL, "output size %lldx%lld < 1: input %lldx%lld, kernel %lldx%lld, dilation %lldx%lld",
                       (long long)a->out_h, (long long)a->out_w, (long long)a->height, (long long)a->width,
                       (long long)a->kernel_h, (long long)a->kernel_w, (long long)a->dilation_h,
                       (long long)a->dilation_w);
    const int64_t planes = a->batch * a->channels; /* both < 2^31 */
    if (planes > INT64_MAX / 8 / a->height / a->width || planes > INT64_MAX / 8 / a->out_h / a->out_w)
        return ks_fail(KS_EINVAL, "sizes too large: N*C*H*W overflows the element count");
    return KS_OK;
}

/* The schema (the kernel rows' .sites, on prepare's args): one work site whose fields are
 * the decomposition and the window start, then the kernel's accesses. */
static int sites(const ks_maxpool2d_args *a, int backward, ks_site *s)
{
    char e[KS_EXPR_LEN];
    ks_site *w = &s[KS_MP_SITE_WORK];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, backward ? "maxpool2d_backward.work" : "maxpool2d.work");
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    w->nfields = 6;
    ks_field_digit(&w->fields[0], "n", a->channels * a->out_h * a->out_w, 0, 0);
    ks_field_digit(&w->fields[1], "c", a->out_h * a->out_w, a->channels, 0);
    ks_field_digit(&w->fields[2], "oh", a->out_w, a->out_h, 0);
    ks_field_digit(&w->fields[3], "ow", 1, a->out_w, 0);
    snprintf(e, sizeof e, "oh * %lld - %lld", (long long)a->stride_h, (long long)a->pad_h);
    ks_field_derived(&w->fields[4], "h_start", e);
    snprintf(e, sizeof e, "ow * %lld - %lld", (long long)a->stride_w, (long long)a->pad_w);
    ks_field_derived(&w->fields[5], "w_start", e);
    if (backward) {
        ks_site_access(&s[KS_MP_SITE_READ], "maxpool2d_backward.read_grad_output", KS_EV_READ, KS_MP_T_GRAD_OUTPUT, 0);
        ks_site_access(&s[KS_MP_SITE_WRITE], "maxpool2d_backward.add_grad_input", KS_EV_WRITE, KS_MP_T_GRAD_INPUT, 0);
        ks_site_access(&s[KS_MP_SITE_INDEX], "maxpool2d_backward.read_indices", KS_EV_READ, KS_MP_T_INDICES, 0);
    } else {
        ks_site_access(&s[KS_MP_SITE_READ], "maxpool2d.read_input", KS_EV_READ, KS_MP_T_INPUT, 0);
        ks_site_access(&s[KS_MP_SITE_WRITE], "maxpool2d.write_output", KS_EV_WRITE, KS_MP_T_OUTPUT, 1);
        ks_site_access(&s[KS_MP_SITE_INDEX], "maxpool2d.write_indices", KS_EV_WRITE, KS_MP_T_INDICES, 1);
        ks_site_access(&s[KS_MP_SITE_WINDOW], "maxpool2d.window", KS_EV_REGION, KS_MP_T_INPUT, 0);
        ks_site_access(&s[KS_MP_SITE_ARGMAX], "maxpool2d.argmax", KS_EV_REGION, KS_MP_T_INPUT, 0);
        return KS_MP_NSITES;
    }
    return KS_MP_SITE_INDEX + 1;
}
static int fwd_sites(const void *a, ks_site *s) { return sites(a, 0, s); }
static int bwd_sites(const void *a, ks_site *s) { return sites(a, 1, s); }

static int prepare(ks_run *r)
{
    ks_maxpool2d_args *a = KS_RUN_CTX(r, ks_maxpool2d_args);
    int rc = ks_run_take_nchw(r, KS_MP_T_INPUT, P_BATCH, P_CHANNELS, P_HW);
    if (rc || (rc = geometry(r, a))) return rc;
    const int backward = (int)r->value[P_BACKWARD][0];
    const int64_t N = a->batch, C = a->channels;
    ks_run_shape4(r, KS_MP_T_INPUT, 4, N, C, a->height, a->width);
    ks_run_shape4(r, KS_MP_T_OUTPUT, 4, N, C, a->out_h, a->out_w);
    ks_run_shape4(r, KS_MP_T_INDICES, 4, N, C, a->out_h, a->out_w);
    if (backward) {
        ks_run_shape4(r, KS_MP_T_GRAD_OUTPUT, 4, N, C, a->out_h, a->out_w);
        ks_run_shape4(r, KS_MP_T_GRAD_INPUT, 4, N, C, a->height, a->width);
    } else {
        ks_run_absent(r, KS_MP_T_GRAD_OUTPUT);
        ks_run_absent(r, KS_MP_T_GRAD_INPUT);
    }
    ks_run_fact(r, "output_size", "[%lld, %lld]", (long long)a->out_h, (long long)a->out_w);
    /* the trace records the forward, or with --backward the backward (--trace-kernel forward: the forward) */
    ks_run_trace_row(r, backward ? K_BWD : K_FWD);
    r->work_items = N * C * a->out_h * a->out_w;
    return KS_OK;
}

/* the kernel rows: the forward and the backward, torch's launch (256 threads, no cap) */
static const ks_kernel kernels[] = {
    [K_FWD] = KS_KERNEL_ROW(ks_maxpool2d_fwd, "forward", .sites = fwd_sites, .threads = KS_MAXPOOL_THREADS,
                            .block_cap = KS_MAXPOOL_BLOCK_CAP,
                            .help = "one output element per item: its window's maximum and index"),
    [K_BWD] = KS_KERNEL_ROW(ks_maxpool2d_bwd, "backward", .sites = bwd_sites, .threads = KS_MAXPOOL_THREADS,
                            .block_cap = KS_MAXPOOL_BLOCK_CAP,
                            .help = "--backward: one output element per item adds its grad at its index"),
};

static int64_t work(const ks_maxpool2d_args *a) { return a->batch * a->channels * a->out_h * a->out_w; }

/* The SDK's entry points (bench/bench_torch.py loads ks_maxpool2d_cuda): one kernel. */
static int sdk(int device, const ks_maxpool2d_args *a, int backward, const ks_launch *l, ks_sink *sink)
{
    ks_exec x = ks_exec_make(kernels, KS_COUNT(kernels), device, l);
    x.sink = sink, x.trace = backward ? K_BWD : K_FWD;
    ks_exec_size(&x, a->batch * a->channels * a->height * a->width);
    ks_exec_size(&x, work(a));
    return ks_exec_kernel(&x, x.trace, a, work(a));
}

int ks_maxpool2d_sim(const ks_maxpool2d_args *a, int backward, const ks_launch *l, ks_sink *sink)
{
    return sdk(KS_DEV_SIM, a, backward, l, sink);
}

int ks_maxpool2d_cuda(const ks_maxpool2d_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink)
{
    return sdk(KS_DEV_CUDA, a, backward, l, (ks_sink *)dev_sink);
}

/* the forward, then (--backward) the backward */
static int run(ks_exec *x, const ks_run *r, void *const *d)
{
    ks_maxpool2d_args a = *KS_RUN_CTX(r, const ks_maxpool2d_args);
    a.input = d[KS_MP_T_INPUT], a.output = d[KS_MP_T_OUTPUT], a.indices = d[KS_MP_T_INDICES];
    a.grad_output = d[KS_MP_T_GRAD_OUTPUT], a.grad_input = d[KS_MP_T_GRAD_INPUT];
    int rc = ks_exec_kernel(x, K_FWD, &a, work(&a));
    if (!rc && r->value[P_BACKWARD][0]) rc = ks_exec_kernel(x, K_BWD, &a, work(&a));
    return rc;
}

const ks_op ks_op_maxpool2d = {
    .name = "maxpool2d",
    .summary = "2-D max pooling (torch F.max_pool2d): window, argmax indices; --backward",
    KS_OP_ROWS(params, tensors),
    KS_OP_KERNELS(kernels),
    .prepare = prepare,
    .run = run,
};
