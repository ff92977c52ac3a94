/* roi_align_sim.c - RoIAlign on the CPU grid simulator (plain and traced). */
#include "../core/ks_error.h"
#include "../core/ks_sim.h"

#define KS_BODY "../roi_align/roi_align_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h" /* -> each body as NAME_plain and NAME_traced */
#define KS_BODY "../roi_align/roi_align_plane_body.h"
#include "../core/ks_variants.h"
#define KS_BODY "../roi_align/roi_align_grid_body.h"
#include "../core/ks_variants.h"

static void fwd_plain(ks_thread *t, const void *a) { ks_roi_align_fwd_body_plain(t, a); }
static void fwd_traced(ks_thread *t, const void *a) { ks_roi_align_fwd_body_traced(t, a); }
static void bwd_plain(ks_thread *t, const void *a) { ks_roi_align_bwd_body_plain(t, a); }
static void fwd_plane(ks_thread *t, const void *a) { ks_roi_align_plane_body_plain(t, a); }
static void fwd_grid(ks_thread *t, const void *a) { ks_roi_align_grid_body_plain(t, a); }
static void bwd_traced(ks_thread *t, const void *a) { ks_roi_align_bwd_body_traced(t, a); }

/* A plain forward with barriers (the plane and grid kernels) as fibers; the shared-memory
 * checks' first finding, if any, is the error. */
static int launch_coop(int kind, int64_t blocks, int threads, ks_sim_body body, const ks_roi_align_args *a)
{
    ks_sim_report rep;
    int rc = ks_sim_launch_coop(blocks, threads, body, a, NULL, &rep);
    if (rc) return rc;
    ks_roi_align_count_launch(kind);
    if (rep.races || rep.uninit_reads || rep.divergent_barriers)
        return ks_fail(KS_ECHECK, "roi_align: the %s forward's shared memory: %s%s%s",
                       kind == KS_ROI_FWD_GRID ? "grid" : "plane", rep.first[0], rep.first[1], rep.first[2]);
    return KS_OK;
}

int ks_roi_align_launch_sim(const ks_roi_align_args *a, int backward, const ks_launch *l, ks_sink *sink)
{
    const ks_sim_body body = backward ? (sink ? bwd_traced : bwd_plain) : (sink ? fwd_traced : fwd_plain);
    int threads;
    int64_t blocks;
    /* the plane and grid forwards (KS_ROI_FORWARD; the slot kernel is the simulator's
     * default): barriers, so fibers; the plane's tile in the 48 KiB arena */
    const int choice = backward || sink ? KS_ROI_FWD_SLOTS : ks_roi_align_forward_choice(0);
    const int64_t tile_rows = ks_roi_plane_tile_rows(KS_SIM_SHARED_BYTES, a->width, a->height);
    if (choice == KS_ROI_FWD_PLANE && tile_rows > 0) {
        ks_roi_align_args pa = *a;
        pa.tile_rows = tile_rows;
        const int64_t nblk = ks_roi_align_plane_blocks(&pa);
        int rc = ks_launch_resolve(l, KS_ROI_PLANE_THREADS, KS_ROI_BLOCK_CAP, nblk * KS_ROI_PLANE_THREADS, &threads,
                                   &blocks);
        if (rc || blocks == 0 || a->num_rois == 0) return rc;
        return launch_coop(KS_ROI_FWD_PLANE, blocks, threads, fwd_plane, &pa);
    }
    if (choice == KS_ROI_FWD_GRID) {
        int rc = ks_launch_resolve(l, KS_ROI_GRID_THREADS, KS_ROI_BLOCK_CAP,
                                   ks_roi_align_grid_items(a) * KS_ROI_GRID_THREADS, &threads, &blocks);
        if (rc || blocks == 0) return rc;
        return launch_coop(KS_ROI_FWD_GRID, blocks, threads, fwd_grid, a);
    }
    int rc = ks_launch_resolve(l, KS_ROI_THREADS, KS_ROI_BLOCK_CAP, ks_roi_align_slots(a, sink ? 1 : KS_ROI_CHUNK),
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
