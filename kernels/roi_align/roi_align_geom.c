/* roi_align_geom.c - host side of RoIAlign: parameter and RoI checks, kernel arguments,
 * the trace schema. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"
#include "roi_align_body.h"

int ks_roi_align_check(const ks_roi_align_params *p)
{
    const ks_size_check checks[] = {
        {.name = "batch", .v = p->batch, .lo = 1},
        {.name = "channels", .v = p->channels, .lo = 1},
        {.name = "height", .v = p->height, .lo = 1},
        {.name = "width", .v = p->width, .lo = 1},
        {.name = "num_rois", .v = p->num_rois, .lo = 0},
        {.name = "pooled_h", .v = p->pooled_h, .lo = 1},
        {.name = "pooled_w", .v = p->pooled_w, .lo = 1},
        {.name = "sampling_ratio", .v = p->sampling_ratio, .lo = -INT32_MAX},
    };
    int rc = ks_check_sizes(checks, sizeof checks / sizeof checks[0]);
    if (rc) return rc;
    if (!(p->spatial_scale > 0.0f) || !isfinite(p->spatial_scale))
        return ks_fail(KS_EINVAL, "spatial_scale must be a finite number > 0 (got %g)", (double)p->spatial_scale);
    if (p->pool_mode != KS_ROI_AVG && p->pool_mode != KS_ROI_MAX)
        return ks_fail(KS_EINVAL, "pool_mode must be avg or max");
    if (p->forward < KS_ROI_FWD_DEFAULT || p->forward > KS_ROI_FWD_CL)
        return ks_fail(KS_EINVAL, "forward must be a ks_roi_forward (0..%d, got %d)", KS_ROI_FWD_CL, p->forward);
    if (p->sampling_ratio > KS_ROI_MAX_GRID)
        return ks_fail(KS_EINVAL, "sampling_ratio must be <= %d (got %lld)", KS_ROI_MAX_GRID,
                       (long long)p->sampling_ratio);
    /* every product below stays under 2^62: each factor < 2^31, checked pairwise */
    const double in = (double)p->batch * p->channels * p->height * p->width;
    const double out = (double)p->num_rois * p->channels * p->pooled_h * p->pooled_w;
    if (in > 1e18 || out > 1e18) return ks_fail(KS_EINVAL, "tensor sizes overflow");
    return KS_OK;
}

int ks_roi_align_check_rois(const ks_roi_align_params *p, const float *rois)
{
    for (int64_t k = 0; k < p->num_rois; ++k) {
        const float b = rois[k * 5];
        if (!(b > -1.0f && b < (float)p->batch))
            return ks_fail(KS_EINVAL, "rois[%lld]: batch index %g is outside the input's batch of %lld", (long long)k,
                           (double)b, (long long)p->batch);
    }
    return KS_OK;
}

static _Atomic long long plane_launches;

void ks_roi_align_plane_launched(void) { ++plane_launches; }

long long ks_roi_align_plane_launches(void) { return plane_launches; }

static _Atomic long long cl_launches;

void ks_roi_align_cl_launched(void) { ++cl_launches; }

long long ks_roi_align_cl_launches(void) { return cl_launches; }

int ks_roi_cl_plan(ks_roi_align_args *a, const ks_launch *l, int64_t tile_bytes, int max_threads, int *threads,
                   int64_t *blocks, size_t *shared)
{
    *shared = 0;
    int rc = ks_launch_resolve(l, KS_ROI_CL_THREADS, KS_ROI_BLOCK_CAP, a->num_rois * KS_ROI_CL_THREADS, threads,
                               blocks);
    const int64_t prof = ks_roi_cl_prof_bytes(a->pooled_h, a->pooled_w);
    if (rc || *blocks == 0 || *threads > max_threads || prof > KS_ROI_CL_PROF_MAX) {
        *blocks = 0;
        return rc;
    }
    a->cl_vec = ks_roi_cl_vec(a->channels);
    a->cl_chunk = ks_roi_cl_chunk(a->pooled_h * a->pooled_w, ks_roi_cl_lanes(*threads) * a->cl_vec, tile_bytes - prof);
    rc = ks_launch_resolve(l, KS_ROI_CL_THREADS, KS_ROI_BLOCK_CAP, ks_roi_align_cl_items(a, *threads) * *threads,
                           threads, blocks);
    *shared = (size_t)(ks_roi_cl_lanes(*threads) * a->cl_vec * a->cl_chunk * 4 + prof);
    return rc;
}

int ks_roi_align_args_make(const ks_roi_align_params *p, ks_roi_align_args *a)
{
    int rc = ks_roi_align_check(p);
    if (rc) return rc;
    memset(a, 0, sizeof *a);
    a->batch = p->batch, a->channels = p->channels, a->height = p->height, a->width = p->width;
    a->num_rois = p->num_rois, a->pooled_h = p->pooled_h, a->pooled_w = p->pooled_w;
    a->sampling_ratio = p->sampling_ratio, a->spatial_scale = p->spatial_scale;
    a->aligned = p->aligned, a->pool_mode = p->pool_mode;
    /* an adaptive grid's samples lie under a pixel apart (ceil(bin size) per axis): a bin
     * reads each footprint pixel once; --forward samples (and plane) sum sample by sample */
    a->forward = p->forward;
    a->merge = p->pool_mode == KS_ROI_AVG && p->sampling_ratio <= 0 && p->forward != KS_ROI_FWD_SAMPLES;
    return KS_OK;
}

int ks_roi_align_sites(const ks_roi_align_params *p, int backward, ks_site *s)
{
    const int64_t C = p->channels, PH = p->pooled_h, PW = p->pooled_w;
    ks_site *w = &s[KS_ROI_SITE_WORK];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, backward ? "roi_align_backward.work" : "roi_align.work");
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    w->nfields = 7;
    ks_field_digit(&w->fields[0], "n", C * PH * PW, 0, 0);
    ks_field_digit(&w->fields[1], "c", PH * PW, C, 0);
    ks_field_digit(&w->fields[2], "ph", PW, PH, 0);
    ks_field_digit(&w->fields[3], "pw", 1, PW, 0);
    ks_field_derived(&w->fields[4], "b", "(int) rois[n, 0]");
    ks_field_derived(&w->fields[5], "grid_h", p->sampling_ratio > 0 ? "sampling_ratio" : "ceil(roi_h / PH)");
    ks_field_derived(&w->fields[6], "grid_w", p->sampling_ratio > 0 ? "sampling_ratio" : "ceil(roi_w / PW)");
    ks_site_access(&s[KS_ROI_SITE_SAMPLE], backward ? "roi_align_backward.sample" : "roi_align.sample", KS_EV_SAMPLE,
                   backward ? KS_ROI_T_GRAD_INPUT : KS_ROI_T_INPUT, 0);
    if (backward)
        ks_site_access(&s[KS_ROI_SITE_WRITE], "roi_align_backward.add_grad_input", KS_EV_WRITE, KS_ROI_T_GRAD_INPUT, 0);
    else ks_site_access(&s[KS_ROI_SITE_WRITE], "roi_align.write_output", KS_EV_WRITE, KS_ROI_T_OUTPUT, 1);
    const int on = backward ? KS_ROI_T_GRAD_INPUT : KS_ROI_T_INPUT;
    ks_site_access(&s[KS_ROI_SITE_BOX], backward ? "roi_align_backward.roi" : "roi_align.roi", KS_EV_REGION, on, 0);
    ks_site_access(&s[KS_ROI_SITE_BOX_GUIDE], backward ? "roi_align_backward.roi_unshifted" : "roi_align.roi_unshifted",
                   KS_EV_REGION, on, 0);
    if (backward || p->pool_mode != KS_ROI_MAX) return KS_ROI_SITE_BOX_GUIDE + 1;
    /* one site per tensor: a site names the one tensor it touches */
    ks_site_access(&s[KS_ROI_SITE_WRITE_ARGMAX_Y], "roi_align.write_argmax_y", KS_EV_WRITE, KS_ROI_T_ARGMAX_Y, 1);
    ks_site_access(&s[KS_ROI_SITE_WRITE_ARGMAX_X], "roi_align.write_argmax_x", KS_EV_WRITE, KS_ROI_T_ARGMAX_X, 1);
    ks_site_access(&s[KS_ROI_SITE_ARGMAX], "roi_align.argmax", KS_EV_REGION, KS_ROI_T_INPUT, 0);
    return KS_ROI_NSITES;
}
