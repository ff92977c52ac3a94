/* roi_align_op.c - the descriptor of roi_align: forward (avg, or max with argmax) or,
 * with --backward, the backward kernel after it; RoIs from .npy or random boxes. Its kernel
 * rows and its one sequence, on the simulator or the GPU (ks_roi_align_exec: the run and
 * the SDK's entry points): the slot forward (traced, or plain on fixed grids) and the
 * backward; for a plain forward the faster bodies first, each a plain_only row whose twin
 * is the forward: on CUDA by default (and where --forward cl asks) the channels-last
 * forward (the RoIs in image order, the transpose into a scratch, the forward), where
 * --forward plane asks the plane forward, else the merged forward of adaptive grids. A
 * body that does not apply falls back to the slot forward. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/ks_cuda_api.h"
#include "../core/ks_cuda_int.h"
#include "../core/ks_error.h"
#include "../core/ks_params.h"
#include "../core/ks_sim.h"
#include "roi_align_body.h"

/* one channel a slot in the simulator's plain kernels too, as in the traced ones: the same
 * threads make the same atomic adds in the same order, so a traced run's grad_input is
 * bitwise the plain run's (the GPU keeps KS_ROI_CHUNK channels a slot in its plain kernels) */
#define KS_ROI_CC 1

#define KS_BODY "../roi_align/roi_align_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"                /* -> each body as NAME_plain and NAME_traced */
#define KS_BODY "../roi_align/roi_align_plane_body.h"
#include "../core/ks_variants.h"
#define KS_BODY "../roi_align/roi_align_cl_body.h"
#include "../core/ks_variants.h"

/* -DKS_ROI_CL_ORDER=0: the channels-last forward takes the RoIs in their own order, to compare */
#ifndef KS_ROI_CL_ORDER
#define KS_ROI_CL_ORDER 1
#endif

/* the plane forward: blocks of 1024 threads when its tile is larger than 56 KiB */
static int plane_threads(const void *args)
{
    const ks_roi_align_args *a = args;
    return a->tile_rows * a->width * 4 > 56 * 1024 ? KS_ROI_PLANE_THREADS_BIG : KS_ROI_PLANE_THREADS;
}

/* the traced rows' schemas: ks_roi_align_sites on the params that begin the op's state (roi_state) */
static int fwd_sites(const void *p, ks_site *s) { return ks_roi_align_sites(p, 0, s); }
static int bwd_sites(const void *p, ks_site *s) { return ks_roi_align_sites(p, 1, s); }

#define FAST(fn, word, ...) KS_KERNEL_PLAIN_ROW(fn, word, "forward", .coop = 1, __VA_ARGS__)
const ks_kernel ks_roi_rows[KS_ROI_NROWS] = {
    [KS_ROI_K_FWD] = KS_KERNEL_ROW(ks_roi_align_fwd, "forward", .sites = fwd_sites, .threads = KS_ROI_THREADS,
                                   .block_cap = KS_ROI_BLOCK_CAP,
                                   .help = "one bin (k, c, ph, pw) per item: its samples' bilinear values pooled"),
    [KS_ROI_K_BWD] = KS_KERNEL_ROW(ks_roi_align_bwd, "backward", .sites = bwd_sites, .threads = KS_ROI_THREADS,
                                   .block_cap = KS_ROI_BLOCK_CAP,
                                   .help = "--backward: one bin per item adds its grad into the sample corners"),
    [KS_ROI_K_FWDM] = KS_KERNEL_PLAIN_ROW(
        ks_roi_align_fwdm, "forward_merged", "forward", .threads = KS_ROI_THREADS, .block_cap = KS_ROI_BLOCK_CAP,
        .runs_with = "forward=slot", .help = "the plain forward of adaptive avg grids: bins summed pixel by pixel"),
    [KS_ROI_K_CL_ORDER] = FAST(ks_roi_align_cl_order, "forward_cl_order", .threads = 1024, .block_cap = 1, .fixed = 1,
                               .runs_with = "forward=cl batch=3 num-rois=9",
                               .help = "channels-last forward, step 1: the RoIs in image order (one block)"),
    [KS_ROI_K_CL_T] = FAST(ks_roi_align_cl_t, "forward_cl_transpose", .threads = 256, .block_cap = KS_ROI_CL_T_BLOCKS,
                           .fixed = 1, .runs_with = "forward=cl channels=40",
                           .help = "channels-last forward, step 2: the input copied to [N, H, W, C]"),
    [KS_ROI_K_CL4] = FAST(ks_roi_align_cl4, "forward_cl4", .threads = KS_ROI_CL_THREADS, .block_cap = KS_ROI_BLOCK_CAP,
                          .runs_with = "forward=cl channels=8",
                          .help = "channels-last forward, step 3: a warp a bin, 4 channels a lane"),
    [KS_ROI_K_CL2] = FAST(ks_roi_align_cl2, "forward_cl2", .threads = KS_ROI_CL_THREADS, .block_cap = KS_ROI_BLOCK_CAP,
                          .runs_with = "forward=cl channels=6",
                          .help = "the same, 2 channels a lane (C even, not a multiple of 4)"),
    [KS_ROI_K_CL1] = FAST(ks_roi_align_cl1, "forward_cl1", .threads = KS_ROI_CL_THREADS, .block_cap = KS_ROI_BLOCK_CAP,
                          .runs_with = "forward=cl channels=3", .help = "the same, 1 channel a lane (C odd)"),
    [KS_ROI_K_PLANE] = FAST(ks_roi_align_plane, "forward_plane", .threads = KS_ROI_PLANE_THREADS,
                            .threads_of = plane_threads, .block_cap = KS_ROI_BLOCK_CAP,
                            .runs_with = "forward=plane channels=2 sampling-ratio=2",
                            .help = "--forward plane: a block per input plane, through shared memory"),
};
#undef FAST

/* The simulator's shared-memory findings (races, unmet barriers, accesses outside) in the
 * cooperative rows since `before`: a bug of the kernel, which its values alone would not
 * show (the fibers run one at a time). */
static int coop_clean(const ks_exec *x, uint64_t before, const char *what)
{
    if (x->sim_problems == before) return KS_OK;
    return ks_fail(KS_ECHECK, "roi_align: %s: the simulator found shared-memory problems (above)", what);
}

/* The channels-last forward (roi_align_cl_body.h): the RoIs in image order (CUDA), the
 * transpose into a scratch, then the forward, its tile and profiles within 48 KiB. *ran =
 * 0 where it does not apply (blocks of more than KS_ROI_CL_MAX_THREADS on CUDA, profiles
 * of PH + PW bins past KS_ROI_CL_PROF_MAX, a device without room for the copy, a stream
 * being captured into a graph): the slot forward runs. */
static int cl_forward(ks_exec *x, const ks_roi_align_args *a, int *ran)
{
    const int cuda = x->device == KS_DEV_CUDA;
    ks_roi_align_args ca = *a;
    int threads, token = -1;
    int64_t blocks;
    size_t shared;
    *ran = 0;
    int rc = ks_roi_cl_plan(&ca, &x->launch, cuda ? KS_ROI_CL_TILE_BYTES : KS_SIM_SHARED_BYTES,
                            cuda ? KS_ROI_CL_MAX_THREADS : INT32_MAX, &threads, &blocks, &shared);
    if (rc || blocks == 0) return rc;
    /* the scratch: the copy, then the RoIs' order (n floats, then K ints) */
    const size_t n = (size_t)(a->batch * a->channels * a->height * a->width);
    const size_t bytes = (n + (size_t)a->num_rois) * sizeof(float) + 4;
    void *scratch = NULL;
    if (cuda) rc = ks_cuda_scratch_get(bytes, x->stream, &scratch, &token);
    else if (!(scratch = malloc(bytes)))
        return ks_fail(KS_ENOMEM, "roi_align: no memory for a %zu-float channels-last copy", n);
    if (rc || !scratch) return rc;
    *ran = 1;
    ca.input_cl = scratch;
    const uint64_t before = x->sim_problems;
    if (KS_ROI_CL_ORDER && a->batch <= KS_ROI_CL_ORDER_MAXN && a->num_rois < ((int64_t)1 << 31)) {
        ca.cl_order = (const int32_t *)(ca.input_cl + n);
        rc = ks_exec_kernel(x, KS_ROI_K_CL_ORDER, &ca, 1024);
    }
    if (!rc) rc = ks_exec_kernel(x, KS_ROI_K_CL_T, &ca, ks_roi_align_cl_t_items(&ca) * 256);
    if (!rc) {
        const int k = ca.cl_vec == 4 ? KS_ROI_K_CL4 : ca.cl_vec == 2 ? KS_ROI_K_CL2 : KS_ROI_K_CL1;
        x->shared = shared;
        rc = ks_exec_kernel(x, k, &ca, ks_roi_align_cl_items(&ca, threads) * threads);
    }
    if (cuda) {
        const int erc = ks_cuda_scratch_done(token, x->stream);
        if (!rc) rc = erc;
    } else {
        free(scratch);
    }
    if (!rc) rc = coop_clean(x, before, "the channels-last forward");
    if (!rc) ks_roi_align_cl_launched();
    return rc;
}

/* The plane forward (roi_align_plane_body.h): its tile holds as many input rows as a
 * block's shared memory can (the simulator's 48 KiB arena; on CUDA the device's opt-in
 * limit), the whole plane when it fits. *ran = 0 when a row is too wide for
 * KS_ROI_PLANE_MIN_ROWS of them (the slot forward runs). */
static int plane_forward(ks_exec *x, const ks_roi_align_args *a, int *ran)
{
    int64_t bytes = KS_SIM_SHARED_BYTES;
    *ran = 0;
    int rc = x->device == KS_DEV_CUDA ? ks_cuda_shared_optin_bytes(&bytes) : KS_OK;
    ks_roi_align_args pa = *a;
    if (rc || (pa.tile_rows = ks_roi_plane_tile_rows(bytes, a->width, a->height)) == 0) return rc;
    *ran = 1;
    const uint64_t before = x->sim_problems;
    x->shared = (size_t)(pa.tile_rows * a->width * 4);
    rc = ks_exec_kernel(x, KS_ROI_K_PLANE, &pa, ks_roi_align_plane_blocks(&pa) * plane_threads(&pa));
    if (!rc) rc = coop_clean(x, before, "the plane forward");
    if (!rc) ks_roi_align_plane_launched();
    return rc;
}

int ks_roi_align_exec(ks_exec *x, const ks_roi_align_args *a, int backward)
{
    const int k = backward ? KS_ROI_K_BWD : KS_ROI_K_FWD, traced = x->sink && x->trace == k;
    if (!backward && !traced && a->num_rois > 0) {
        /* a plain forward: for avg pooling the channels-last forward by default on CUDA, the
         * fastest on fixed and adaptive grids alike (docs/roi-align.md), or where --forward cl
         * asks (the simulator's default is the slot forward: a CPU gains nothing from it);
         * the plane forward where --forward plane asks */
        const int cl = a->pool_mode == KS_ROI_AVG &&
                       (a->forward == KS_ROI_FWD_CL || (a->forward == KS_ROI_FWD_DEFAULT && x->device == KS_DEV_CUDA));
        int ran = 0, rc = KS_OK;
        if (cl && ks_exec_may(x, KS_ROI_K_CL_T)) rc = cl_forward(x, a, &ran);
        else if (a->forward == KS_ROI_FWD_PLANE && !a->merge && ks_exec_may(x, KS_ROI_K_PLANE))
            rc = plane_forward(x, a, &ran);
        if (rc || ran) return rc;
    }
    const int fk = !backward && !traced && a->merge && ks_exec_may(x, KS_ROI_K_FWDM) ? KS_ROI_K_FWDM : k;
    /* a slot: one channel traced, and on the simulator; KS_ROI_CHUNK in the GPU's plain kernels */
    const int64_t cc = traced || x->device == KS_DEV_SIM ? 1 : KS_ROI_CHUNK;
    return ks_exec_kernel(x, fk, a, ks_roi_align_slots(a, cc));
}

/* the SDK's entry points: the rows on one device, the kernel given recording into sink */
static int sdk(int device, const ks_roi_align_params *p, ks_roi_align_args *a, int backward, const ks_launch *l,
               ks_sink *sink, void *stream)
{
    ks_exec x = ks_exec_make(ks_roi_rows, KS_ROI_NROWS, device, l);
    x.sink = sink, x.trace = backward ? KS_ROI_K_BWD : KS_ROI_K_FWD, x.stream = stream;
    ks_exec_size(&x, p->num_rois * p->channels * p->pooled_h * p->pooled_w);
    ks_exec_size(&x, p->num_rois * 5);
    ks_exec_size(&x, p->batch * p->channels * p->height * p->width);
    if (p->pool_mode == KS_ROI_MAX && (!a->argmax_y || !a->argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    return ks_roi_align_exec(&x, a, backward);
}

int ks_roi_align_forward_sim(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                             float *argmax_y, float *argmax_x, const ks_launch *l, ks_sink *sink)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    a.input = input, a.rois = rois, a.output = output, a.argmax_y = argmax_y, a.argmax_x = argmax_x;
    return sdk(KS_DEV_SIM, p, &a, 0, l, sink, NULL);
}

int ks_roi_align_backward_sim(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                              const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                              ks_sink *sink)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    a.grad_output = grad_output, a.rois = rois, a.grad_input = grad_input;
    a.argmax_y = (float *)argmax_y, a.argmax_x = (float *)argmax_x; /* read only in backward */
    return sdk(KS_DEV_SIM, p, &a, 1, l, sink, NULL);
}

int ks_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                              float *argmax_y, float *argmax_x, const ks_launch *l, const ks_sink *dev_sink,
                              void *stream)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    a.input = input, a.rois = rois, a.output = output, a.argmax_y = argmax_y, a.argmax_x = argmax_x;
    return sdk(KS_DEV_CUDA, p, &a, 0, l, (ks_sink *)dev_sink, stream);
}

int ks_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                               const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                               const ks_sink *dev_sink, void *stream)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    a.grad_output = grad_output, a.rois = rois, a.grad_input = grad_input;
    a.argmax_y = (float *)argmax_y, a.argmax_x = (float *)argmax_x; /* read only in backward */
    return sdk(KS_DEV_CUDA, p, &a, 1, l, (ks_sink *)dev_sink, stream);
}

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
    ks_roi_align_params p; /* first: the rows' .sites read it */
    ks_roi_align_args a;
} roi_state;
_Static_assert(offsetof(roi_state, p) == 0, "the state begins with the params");

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
