/* roi_align_kernels.c - RoIAlign's kernel rows and its one sequence, on the simulator or
 * the GPU (ks_roi_align_exec: the operator's run and the SDK's entry points): the slot
 * forward (traced, or plain on fixed grids) and the backward; for a plain avg forward the
 * faster bodies first, each a plain_only row whose twin is the forward: on CUDA by default
 * (and where --forward cl asks) the channels-last forward (the RoIs in image order, the
 * transpose into a scratch, the forward), where --forward plane asks the plane forward,
 * else the merged forward of adaptive grids. A body that does not apply falls back to the
 * slot forward. */
#include <stdint.h>
#include <stdlib.h>

#include "../core/ks_cuda_api.h"
#include "../core/ks_error.h"
#include "../core/ks_sim.h"

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

#define FAST(fn, word, ...) KS_KERNEL_PLAIN_ROW(fn, word, "forward", .coop = 1, __VA_ARGS__)
const ks_kernel ks_roi_rows[KS_ROI_NROWS] = {
    [KS_ROI_K_FWD] = KS_KERNEL_ROW(ks_roi_align_fwd, "forward", .threads = KS_ROI_THREADS,
                                   .block_cap = KS_ROI_BLOCK_CAP,
                                   .help = "one bin (k, c, ph, pw) per item: its samples' bilinear values pooled"),
    [KS_ROI_K_BWD] = KS_KERNEL_ROW(ks_roi_align_bwd, "backward", .threads = KS_ROI_THREADS,
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
