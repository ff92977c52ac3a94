/* deform_sim.c - the deformable kernels on the CPU grid simulator (plain and traced). */
#include <stdio.h>

#include "../core/ks_error.h"
#include "../core/ks_sim.h"

#define KS_BODY "../deform_conv/deform_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h" /* -> each body as NAME_plain and NAME_traced */
#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"

static void im2col_plain(ks_thread *t, const void *a) { ks_deform_im2col_body_plain(t, a); }
static void im2col_traced(ks_thread *t, const void *a) { ks_deform_im2col_body_traced(t, a); }
static void col2im_plain(ks_thread *t, const void *a) { ks_deform_col2im_body_plain(t, a); }
static void col2im_traced(ks_thread *t, const void *a) { ks_deform_col2im_body_traced(t, a); }
static void coord_plain(ks_thread *t, const void *a) { ks_deform_coord_body_plain(t, a); }
static void coord_traced(ks_thread *t, const void *a) { ks_deform_coord_body_traced(t, a); }
static void im2col_tap_plain(ks_thread *t, const void *a) { ks_deform_im2col_tap_body_plain(t, a); }
static void im2col_tap_traced(ks_thread *t, const void *a) { ks_deform_im2col_tap_body_traced(t, a); }
static void grad_tap_plain(ks_thread *t, const void *a) { ks_deform_grad_tap_body_plain(t, a); }
static void grad_tap_traced(ks_thread *t, const void *a) { ks_deform_grad_tap_body_traced(t, a); }
static void grad_tile_plain(ks_thread *t, const void *a) { ks_deform_grad_tile_body_plain(t, a); }
static void grad_tile_traced(ks_thread *t, const void *a) { ks_deform_grad_tile_body_traced(t, a); }
static void grad_gather_plain(ks_thread *t, const void *a) { ks_deform_grad_gather_body_plain(t, a); }
static void grad_gather_traced(ks_thread *t, const void *a) { ks_deform_grad_gather_body_traced(t, a); }

int ks_deform_kernel_sim(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                         const ks_launch *launch, ks_sink *sink)
{
    ks_deform_args a;
    ks_deform_geom g;
    if (k < KS_DEFORM_IM2COL || k > KS_DEFORM_GRAD_GATHER) return ks_fail(KS_EINVAL, "unknown deformable kernel %d", (int)k);
    if (c->write_columns && sink) return ks_fail(KS_EINVAL, "write_columns is for untraced launches (its stores are not recorded)");
    int rc = ks_deform_args_make(p, c, &a, &g);
    return rc ? rc : ks_deform_launch_sim(p, &g, k, c, launch, sink);
}

int ks_deform_launch_sim(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                         const ks_deform_chunk *c, const ks_launch *launch, ks_sink *sink)
{
    static const ks_sim_body bodies[5][2] = {
        {im2col_plain, im2col_traced}, {col2im_plain, col2im_traced}, {coord_plain, coord_traced},
        {im2col_tap_plain, im2col_tap_traced}, {grad_tap_plain, grad_tap_traced}};
    ks_deform_args a;
    int threads;
    int64_t blocks;
    if (k == KS_DEFORM_GRAD_TILE || k == KS_DEFORM_GRAD_GATHER) { /* barriers: the block's threads as fibers */
        ks_sim_report rep;
        size_t shared;
        const int tile = k == KS_DEFORM_GRAD_TILE;
        const char *name = tile ? "grad_tile" : "grad_gather";
        ks_deform_args_fill(p, g, c, &a);
        int rc = tile ? ks_deform_tile_launch(p, g, &a, launch, &threads, &blocks)
                      : ks_deform_gather_launch(p, g, &a, launch, &threads, &blocks, &shared);
        if (!rc)
            rc = ks_sim_launch_coop(blocks, threads,
                                    tile ? (sink ? grad_tile_traced : grad_tile_plain)
                                         : (sink ? grad_gather_traced : grad_gather_plain),
                                    &a, sink, &rep);
        /* a race, an unread barrier or an access outside the window is a bug of the
         * kernel: its values alone would not show it (the fibers run one at a time) */
        char what[64];
        snprintf(what, sizeof what, "deform %s on the simulator", name);
        if (!rc && ks_sim_report_warn(&rep, what) > 0)
            rc = ks_fail(KS_EINVAL, "deform %s: the simulator found shared-memory problems (above)", name);
        return rc;
    }
    int rc = ks_launch_resolve(launch, KS_DEFORM_DEFAULT_THREADS(k), KS_DEFORM_BLOCK_CAP, ks_deform_work(g, p, k, c->im2col_step),
                               &threads, &blocks);
    if (rc) return rc;
    ks_deform_args_fill(p, g, c, &a);
    ks_sim_launch(blocks, threads, bodies[k][sink != NULL], &a, sink);
    return KS_OK;
}
