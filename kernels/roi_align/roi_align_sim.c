/* roi_align_sim.c - RoIAlign on the CPU grid simulator (plain and traced). */
#include "../core/ks_error.h"
#include "../core/ks_sim.h"

/* one channel a slot in the plain kernels too, as in the traced ones: the same threads
 * make the same atomic adds in the same order, so a traced run's grad_input is bitwise the
 * plain run's (the GPU keeps KS_ROI_CHUNK channels a slot in its plain kernels) */
#define KS_ROI_CC 1

#define KS_BODY "../roi_align/roi_align_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h" /* -> each body as NAME_plain and NAME_traced */
#define KS_BODY "../roi_align/roi_align_plane_body.h"
#include "../core/ks_variants.h"
#define KS_BODY "../roi_align/roi_align_cl_body.h"
#include "../core/ks_variants.h"

#include <stdint.h>
#include <stdlib.h>

static void fwd_plain(ks_thread *t, const void *a) { ks_roi_align_fwd_body_plain(t, a); }
static void fwdm_plain(ks_thread *t, const void *a) { ks_roi_align_fwdm_body_plain(t, a); }
static void fwd_traced(ks_thread *t, const void *a) { ks_roi_align_fwd_body_traced(t, a); }
static void bwd_plain(ks_thread *t, const void *a) { ks_roi_align_bwd_body_plain(t, a); }
static void fwd_plane(ks_thread *t, const void *a) { ks_roi_align_plane_body_plain(t, a); }
static void bwd_traced(ks_thread *t, const void *a) { ks_roi_align_bwd_body_traced(t, a); }
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

int ks_roi_align_launch_sim(const ks_roi_align_args *a, int backward, const ks_launch *l, ks_sink *sink)
{
    const ks_sim_body body = backward ? (sink ? bwd_traced : bwd_plain)
                                      : (sink ? fwd_traced : (a->merge ? fwdm_plain : fwd_plain));
    int threads;
    int64_t blocks;
    /* the channels-last forward (--forward cl; the slot kernel is the simulator's
     * default: a CPU gains nothing from it) */
    if (!backward && !sink && a->pool_mode == KS_ROI_AVG && a->num_rois > 0 &&
        a->forward == KS_ROI_FWD_CL) {
        int ran;
        int rc = cl_launch(a, l, &ran);
        if (rc || ran) return rc;
    }
    /* the plane forward (--forward plane; likewise not the default): barriers, so
     * fibers, its tile in the 48 KiB arena */
    const int64_t tile_rows = ks_roi_plane_tile_rows(KS_SIM_SHARED_BYTES, a->width, a->height);
    if (!backward && !sink && !a->merge && a->forward == KS_ROI_FWD_PLANE && tile_rows > 0) {
        ks_roi_align_args pa = *a;
        pa.tile_rows = tile_rows;
        const int64_t nblk = ks_roi_align_plane_blocks(&pa);
        int rc = ks_launch_resolve(l, KS_ROI_PLANE_THREADS, KS_ROI_BLOCK_CAP, nblk * KS_ROI_PLANE_THREADS, &threads,
                                   &blocks);
        if (rc || blocks == 0 || a->num_rois == 0) return rc;
        ks_sim_report rep;
        rc = ks_sim_launch_coop(blocks, threads, fwd_plane, &pa, NULL, &rep);
        if (rc) return rc;
        ks_roi_align_plane_launched();
        return coop_report("the plane forward", &rep);
    }
    int rc = ks_launch_resolve(l, KS_ROI_THREADS, KS_ROI_BLOCK_CAP, ks_roi_align_slots(a, KS_ROI_CC),
                               &threads, &blocks);
    if (rc) return rc;
    if (blocks > 0) ks_sim_launch(blocks, threads, body, a, sink); /* zero RoIs launch nothing */
    return KS_OK;
}

int ks_roi_align_forward_sim(const ks_roi_align_params *p, const float *input, const float *rois,
                             float *output, float *argmax_y, float *argmax_x, const ks_launch *l,
                             ks_sink *sink)
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
                              const float *argmax_y, const float *argmax_x, float *grad_input,
                              const ks_launch *l, ks_sink *sink)
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
