/* roi_align_kernels.c - RoIAlign's kernel rows and the launcher every path runs them
 * through, on the simulator or the GPU: the slot forward (traced, or plain on fixed grids),
 * the merged forward of adaptive avg grids (plain_only; the forward row traces what it
 * computes) and the backward, as ks_exec_kernel launches them; before them, for a plain
 * avg forward, the channels-last and plane forwards where --forward asks (or, on CUDA,
 * the channels-last by default), which run their own launches (several kernels, dynamic
 * shared memory, a scratch). */
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

#include <stdint.h>
#include <stdlib.h>

const ks_kernel ks_roi_rows[KS_ROI_NROWS] = {
    [KS_ROI_K_FWD] = KS_KERNEL_ROW(ks_roi_align_fwd, "forward", .threads = KS_ROI_THREADS,
                                   .block_cap = KS_ROI_BLOCK_CAP,
                                   .help = "one bin (k, c, ph, pw) per item: its samples' bilinear values pooled"),
    [KS_ROI_K_BWD] = KS_KERNEL_ROW(ks_roi_align_bwd, "backward", .threads = KS_ROI_THREADS,
                                   .block_cap = KS_ROI_BLOCK_CAP,
                                   .help = "--backward: one bin per item adds its grad into the sample corners"),
    [KS_ROI_K_FWDM] = KS_KERNEL_PLAIN_ROW(
        ks_roi_align_fwdm, "forward_merged", "forward", .threads = KS_ROI_THREADS, .block_cap = KS_ROI_BLOCK_CAP,
        .help = "the plain forward of adaptive avg grids: bins summed pixel by pixel"),
};
static void fwd_plane(ks_thread *t, const void *a) { ks_roi_align_plane_body_plain(t, a); }
static void cl_transpose(ks_thread *t, const void *a) { ks_roi_align_cl_t_body_plain(t, a); }
static void cl_forward(ks_thread *t, const void *v)
{
    const ks_roi_align_args *a = v;
    if (a->cl_vec == 4) ks_roi_align_cl4_body_plain(t, a);
    else if (a->cl_vec == 2) ks_roi_align_cl2_body_plain(t, a);
    else ks_roi_align_cl1_body_plain(t, a);
}

static int coop_report(const char *what, const ks_sim_report *rep)
{
    if (rep->races || rep->uninit_reads || rep->divergent_barriers || rep->outside)
        return ks_fail(KS_ECHECK, "roi_align: %s's shared memory: %s%s%s%s", what, rep->first[0], rep->first[1],
                       rep->first[2], rep->first[3]);
    return KS_OK;
}

/* The channels-last forward (--forward cl; roi_align_cl_body.h): the transpose into
 * a host scratch, then the forward, both as cooperative fibers (barriers); its tile and
 * profiles within the 48 KiB arena. *ran = 0 when the profiles of PH + PW bins take more
 * than KS_ROI_CL_PROF_MAX bytes (the slot kernel runs). */
static int cl_launch(const ks_roi_align_args *a, const ks_launch *l, int *ran)
{
    int threads;
    int64_t blocks;
    size_t shared;
    ks_roi_align_args ca = *a;
    *ran = 0;
    int rc = ks_roi_cl_plan(&ca, l, KS_SIM_SHARED_BYTES, INT32_MAX, &threads, &blocks, &shared);
    if (rc || blocks == 0) return rc;
    *ran = 1;
    const size_t n = (size_t)(a->batch * a->channels * a->height * a->width);
    ca.input_cl = malloc((n ? n : 1) * sizeof(float));
    if (!ca.input_cl) return ks_fail(KS_ENOMEM, "roi_align: no memory for a %zu-float channels-last copy", n);
    ks_sim_report rep;
    const int64_t tb = ks_roi_align_cl_t_items(&ca);
    rc = ks_sim_launch_coop(tb < KS_ROI_CL_T_BLOCKS ? tb : KS_ROI_CL_T_BLOCKS, 256, cl_transpose, &ca, NULL, &rep);
    if (!rc) rc = coop_report("channels-last transpose", &rep);
    if (!rc) rc = ks_sim_launch_coop(blocks, threads, cl_forward, &ca, NULL, &rep);
    if (!rc) rc = coop_report("channels-last forward", &rep);
    free(ca.input_cl);
    if (!rc) ks_roi_align_cl_launched();
    return rc;
}

/* the plane forward on the simulator (--forward plane): barriers, so fibers, its tile in the
 * 48 KiB arena; *ran = 0 when a row of the input does not fit the tile */
static int plane_sim(const ks_roi_align_args *a, const ks_launch *l, int *ran)
{
    int threads;
    int64_t blocks;
    *ran = 0;
    const int64_t tile_rows = ks_roi_plane_tile_rows(KS_SIM_SHARED_BYTES, a->width, a->height);
    if (tile_rows <= 0) return KS_OK;
    ks_roi_align_args pa = *a;
    pa.tile_rows = tile_rows;
    const int64_t nblk = ks_roi_align_plane_blocks(&pa);
    int rc = ks_launch_resolve(l, KS_ROI_PLANE_THREADS, KS_ROI_BLOCK_CAP, nblk * KS_ROI_PLANE_THREADS, &threads,
                               &blocks);
    if (rc || blocks == 0 || a->num_rois == 0) return rc;
    *ran = 1;
    ks_sim_report rep;
    rc = ks_sim_launch_coop(blocks, threads, fwd_plane, &pa, NULL, &rep);
    if (rc) return rc;
    ks_roi_align_plane_launched();
    return coop_report("the plane forward", &rep);
}

/* One kernel of RoIAlign: the forward (backward 0) or the backward, on `device`. */
static int roi_launch(int device, const ks_roi_align_args *a, int backward, const ks_launch *l, ks_sink *sink,
                      void *stream)
{
    const int64_t lim = KS_NARROW_LIMIT;
    if (!backward && !sink) { /* a plain forward: the channels-last (avg) or plane body first */
        const int cl = a->pool_mode == KS_ROI_AVG && a->num_rois > 0,
                  plane = a->forward == KS_ROI_FWD_PLANE && !a->merge;
        int ran = 0, rc = KS_OK;
        if (device == KS_DEV_SIM) {
            /* where --forward asks (the simulator's default is the slot kernel: a CPU gains
             * nothing from them) */
            if (cl && a->forward == KS_ROI_FWD_CL) rc = cl_launch(a, l, &ran);
            else if (plane) rc = plane_sim(a, l, &ran);
        } else {
#ifdef KS_HAVE_CUDA
            /* 32-bit indices when every size and the slot kernel's grid fit, as its rows */
            int threads;
            int64_t blocks;
            rc = ks_launch_resolve(l, KS_ROI_THREADS, KS_ROI_BLOCK_CAP, ks_roi_align_slots(a, KS_ROI_CHUNK), &threads,
                                   &blocks);
            const int small = a->num_rois * a->channels * a->pooled_h * a->pooled_w < lim && a->num_rois * 5 < lim &&
                              a->batch * a->channels * a->height * a->width < lim && blocks * threads < lim;
            /* the channels-last forward: the default for avg pooling, the fastest on fixed and
             * adaptive grids alike (docs/roi-align.md); --forward slot, samples or plane: not */
            if (!rc && cl && (a->forward == KS_ROI_FWD_DEFAULT || a->forward == KS_ROI_FWD_CL))
                rc = ks_roi_cl_launch(a, l, small, stream, &ran);
            else if (!rc && plane) rc = ks_roi_plane_launch_cuda(a, l, small, stream, &ran);
#else
            (void)lim;
#endif
        }
        if (rc || ran) return rc;
    }
    ks_exec x = ks_exec_make(ks_roi_rows, KS_ROI_NROWS, device, l);
    x.sink = sink, x.trace = backward ? KS_ROI_K_BWD : KS_ROI_K_FWD, x.stream = stream;
    ks_exec_size(&x, a->num_rois * a->channels * a->pooled_h * a->pooled_w);
    ks_exec_size(&x, a->num_rois * 5);
    ks_exec_size(&x, a->batch * a->channels * a->height * a->width);
    const int k = backward ? KS_ROI_K_BWD : sink || !a->merge ? KS_ROI_K_FWD : KS_ROI_K_FWDM;
    /* a slot: one channel traced, and on the simulator; KS_ROI_CHUNK in the GPU's plain kernels */
    const int64_t cc = sink || device == KS_DEV_SIM ? 1 : KS_ROI_CHUNK;
    return ks_exec_kernel(&x, k, a, ks_roi_align_slots(a, cc));
}

int ks_roi_align_launch_sim(const ks_roi_align_args *a, int backward, const ks_launch *l, ks_sink *sink)
{
    return roi_launch(KS_DEV_SIM, a, backward, l, sink, NULL);
}

int ks_roi_align_launch_cuda(const ks_roi_align_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink,
                             void *stream)
{
    return roi_launch(KS_DEV_CUDA, a, backward, l, (ks_sink *)dev_sink, stream);
}

int ks_roi_align_forward_sim(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                             float *argmax_y, float *argmax_x, const ks_launch *l, ks_sink *sink)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    if (p->pool_mode == KS_ROI_MAX && (!argmax_y || !argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    a.input = input, a.rois = rois, a.output = output, a.argmax_y = argmax_y, a.argmax_x = argmax_x;
    return ks_roi_align_launch_sim(&a, 0, l, sink);
}

int ks_roi_align_backward_sim(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                              const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                              ks_sink *sink)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    if (p->pool_mode == KS_ROI_MAX && (!argmax_y || !argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    a.grad_output = grad_output, a.rois = rois, a.grad_input = grad_input;
    a.argmax_y = (float *)argmax_y, a.argmax_x = (float *)argmax_x; /* read only in backward */
    return ks_roi_align_launch_sim(&a, 1, l, sink);
}

int ks_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                              float *argmax_y, float *argmax_x, const ks_launch *l, const ks_sink *dev_sink,
                              void *stream)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    if (p->pool_mode == KS_ROI_MAX && (!argmax_y || !argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    a.input = input, a.rois = rois, a.output = output, a.argmax_y = argmax_y, a.argmax_x = argmax_x;
    return ks_roi_align_launch_cuda(&a, 0, l, dev_sink, stream);
}

int ks_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                               const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                               const ks_sink *dev_sink, void *stream)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    if (p->pool_mode == KS_ROI_MAX && (!argmax_y || !argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    a.grad_output = grad_output, a.rois = rois, a.grad_input = grad_input;
    a.argmax_y = (float *)argmax_y, a.argmax_x = (float *)argmax_x; /* read only in backward */
    return ks_roi_align_launch_cuda(&a, 1, l, dev_sink, stream);
}
