/* roi_align_sample.h - RoIAlign's bilinear sampler (mmcv common_cuda_helper.hpp and
 * torchvision, the NaN-safe range test of the newest torchvision), and the per-RoI
 * geometry. Shared by the bodies (nvcc and C); no probes.
 *
 * 0 outside the closed box [-1, H] x [-1, W]. Inside, y <= 0 becomes 0; y_low =
 * (int)y, and if y_low >= H-1 both rows are H-1 (and y = H-1): a sample within one pixel
 * of the border replicates the border. */
#ifndef KS_ROI_ALIGN_SAMPLE_H
#define KS_ROI_ALIGN_SAMPLE_H

#include <math.h>

#include "../core/ks_probe.h"
/* (included by roi_align_body.h's declarations, after them) */

typedef struct ks_roi_sample {
    int64_t y0, x0, y1, x1; /* corner rows and columns (-1: out of range) */
    float y, x;             /* the coordinates after clamping (what is interpolated) */
    float w[4];             /* (y0,x0) (y0,x1) (y1,x0) (y1,x1) */
    int flags;              /* KS_FLAG_Cxx of the corners used, KS_FLAG_CLAMP_Y/X */
} ks_roi_sample;

/* One axis of the sampler at a coordinate c already in [-1, L]: c <= 0 becomes 0; the
 * corners are (int)c and the next, both L-1 at or past the last (*cl = the coordinate
 * after these clamps, *l = cl - c0, the far corner's weight). Returns 1 when clamped to
 * the last. */
KS_FN int ks_roi_axis(float c, int64_t L, int64_t *c0, int64_t *c1, float *cl, float *l)
{
    if (c <= 0.0f) c = 0.0f;
    *c0 = (int64_t)c;
    int last = 0;
    if (*c0 >= L - 1) {
        *c0 = *c1 = L - 1;
        c = (float)*c0;
        last = 1;
    } else {
        *c1 = *c0 + 1;
    }
    *cl = c;
    *l = c - (float)*c0;
    return last;
}

KS_FN int ks_roi_sample_at(int64_t H, int64_t W, float y, float x, ks_roi_sample *s)
{
    s->y0 = s->x0 = s->y1 = s->x1 = -1;
    s->w[0] = s->w[1] = s->w[2] = s->w[3] = 0.0f;
    s->y = y;
    s->x = x;
    s->flags = 0;
    if (!(y >= -1.0f && y <= (float)H && x >= -1.0f && x <= (float)W)) return 0;
    float ly, lx;
    if (ks_roi_axis(y, H, &s->y0, &s->y1, &s->y, &ly)) s->flags |= KS_FLAG_CLAMP_Y;
    if (ks_roi_axis(x, W, &s->x0, &s->x1, &s->x, &lx)) s->flags |= KS_FLAG_CLAMP_X;
    const float hy = 1.0f - ly, hx = 1.0f - lx;
    s->w[0] = hy * hx;
    s->w[1] = hy * lx;
    s->w[2] = ly * hx;
    s->w[3] = ly * lx;
    s->flags |= KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11;
    return 1;
}

/* The blend of the corner values v00 v01 v10 v11 with weights w (fmaf: the same bits on
 * the GPU and the CPU, wherever the values were read from). */
KS_FN float ks_roi_blend(const float *w, float v00, float v01, float v10, float v11)
{
    return fmaf(w[3], v11, fmaf(w[2], v10, fmaf(w[1], v01, w[0] * v00)));
}

/* The blend of plane im at the corner offsets o (y0*W+x0, y0*W+x1, y1*W+x0, y1*W+x1). */
KS_FN float ks_roi_blend_at(const float *im, int64_t o00, int64_t o01, int64_t o10, int64_t o11, const float *w)
{
    return ks_roi_blend(w, im[o00], im[o01], im[o10], im[o11]);
}

/* One RoI's box and grid. */
typedef struct ks_roi_box {
    int64_t b; /* batch index ((int) of rois[0]); -1 if not in [0, N) */
    float y1, x1, bin_h, bin_w;
    int64_t grid_h, grid_w;
} ks_roi_box;

/* One sample into a bin's result: avg sums, max keeps the largest and where it sat (the
 * first of equals, as mmcv) */
KS_FN void ks_roi_take(int is_max, float v, float y, float x, float *acc, float *best_y, float *best_x)
{
    if (!is_max) {
        *acc += v;
    } else if (v > *acc) {
        *acc = v;
        *best_y = y;
        *best_x = x;
    }
}

KS_FN int64_t ks_roi_grid(int64_t ratio, float extent)
{
    if (ratio > 0) return ratio;
    /* adaptive: ceil(extent); NaN, Inf and absurd sizes get no samples */
    if (!(extent > 0.0f)) return 0;
    if (!(extent <= (float)KS_ROI_MAX_GRID)) return 0;
    return (int64_t)ceilf(extent);
}

KS_FN void ks_roi_box_of(const float *roi, int64_t N, float scale, int aligned, int64_t PH, int64_t PW, int64_t ratio,
                         ks_roi_box *r)
{
    const float off = aligned ? 0.5f : 0.0f;
    const float b = roi[0];
    r->b = (b > -1.0f && b < (float)N) ? (int64_t)b : -1; /* (int) truncates toward 0 */
    r->x1 = fmaf(roi[1], scale, -off);
    r->y1 = fmaf(roi[2], scale, -off);
    const float x2 = fmaf(roi[3], scale, -off), y2 = fmaf(roi[4], scale, -off);
    float rw = x2 - r->x1, rh = y2 - r->y1;
    if (!aligned) { /* legacy: force malformed RoIs to 1x1 */
        rw = fmaxf(rw, 1.0f);
        rh = fmaxf(rh, 1.0f);
    }
    r->bin_h = rh / (float)PH;
    r->bin_w = rw / (float)PW;
    r->grid_h = ks_roi_grid(ratio, rh / (float)PH);
    r->grid_w = ks_roi_grid(ratio, rw / (float)PW);
}

/* The overlay regions of a RoI on `plane` of `tensor` (trace only): the box as the kernel
 * uses it, divided into its PH x PW bins, and, when aligned, the box before the -0.5 shift
 * as a guide. A NaN or Inf box has none. */
KS_FN void ks_roi_probe_boxes(ks_thread *t, const ks_roi_box *r, int aligned, int64_t PH, int64_t PW, int tensor,
                              int64_t plane)
{
    /* fmaf: nvcc would contract a*b + c into one, the C compiler would not */
    const float y1 = fmaf(r->bin_h, (float)PH, r->y1), x1 = fmaf(r->bin_w, (float)PW, r->x1);
    if (!(y1 - r->y1 < 3e38f && x1 - r->x1 < 3e38f && r->y1 == r->y1 && r->x1 == r->x1) || PH > 65535 || PW > 65535)
        return; /* not a finite box (NaN fails every comparison) */
    ks_probe_box(t, KS_ROI_SITE_BOX, tensor, plane, r->y1, r->x1, y1, x1, (int)PH, (int)PW, 0);
    if (aligned)
        ks_probe_box(t, KS_ROI_SITE_BOX_GUIDE, tensor, plane, r->y1 + 0.5f, r->x1 + 0.5f, y1 + 0.5f, x1 + 0.5f, 1, 1,
                     1);
}

/* sample (iy, ix) of bin (ph, pw) */
KS_FN float ks_roi_coord(float start, int64_t bin, float bin_size, int64_t i, int64_t grid)
{
    return fmaf((float)bin, bin_size, start) + ((float)i + 0.5f) * bin_size / (float)grid;
}

/* Sample (iy, ix) of bin (ph, pw) of box r with a gh x gw grid: its coordinates (y, x)
 * and ks_roi_sample_at's corners and weights; 0 when out of range. */
KS_FN int ks_roi_sample_in_bin(const ks_roi_box *r, int64_t ph, int64_t pw, int64_t iy, int64_t ix, int64_t gh,
                               int64_t gw, int64_t H, int64_t W, float *y, float *x, ks_roi_sample *s)
{
    *y = ks_roi_coord(r->y1, ph, r->bin_h, iy, gh);
    *x = ks_roi_coord(r->x1, pw, r->bin_w, ix, gw);
    return ks_roi_sample_at(H, W, *y, *x, s);
}

/* A bin's samples along one axis, merged: acc[k] = the summed weight of pixel lo + k
 * over the bin's grid samples along this axis (start, bin, size, grid as ks_roi_coord;
 * L = H or W), with ks_roi_sample_at's range test, clamp and weights, so that a bin's
 * weight on pixel (lo_y + a, lo_x + b) is acc_y[a] * acc_x[b] (a sample's corner weight
 * is the product of its row and column weights, and it is in range when both are). *n =
 * pixels spanned (0: no sample in range); bit k of *hit: pixel lo + k is a corner of some
 * sample; bit k of *zero: pixel lo + k is a corner of weight 0 of some sample (its far
 * corner when the coordinate is a whole number, or clamped to the last pixel: the
 * per-sample sum multiplies that pixel by 0, which an Inf there turns into NaN; the near
 * corner's weight 1 - l is never 0). Returns 0 when they span more than KS_ROI_SPAN
 * pixels. On the GPU unrolled selects, not acc[k0] +=, so acc stays in registers. */
#define KS_ROI_SPAN 8
KS_FN int ks_roi_profile(float start, int64_t bin, float size, int64_t grid, int64_t L, float *acc, int64_t *lo, int *n,
                         unsigned *hit, unsigned *zero)
{
    for (int k = 0; k < KS_ROI_SPAN; ++k) acc[k] = 0.0f;
    *lo = 0, *n = 0, *hit = 0, *zero = 0;
    for (int64_t i = 0; i < grid; ++i) {
        const float c = ks_roi_coord(start, bin, size, i, grid);
        if (!(c >= -1.0f && c <= (float)L)) continue;
        int64_t c0, c1;
        float cl, l;
        ks_roi_axis(c, L, &c0, &c1, &cl, &l);
        const float h = 1.0f - l;
        if (*n == 0) *lo = c0; /* coordinates grow with i: the first in range is the lowest */
        const int64_t k0 = c0 - *lo, k1 = c1 - *lo;
        if (k0 < 0 || k1 >= KS_ROI_SPAN) return 0; /* a reversed box walks down: not merged */
#if defined(__CUDA_ARCH__)
        for (int k = 0; k < KS_ROI_SPAN; ++k) acc[k] += (k == k0 ? h : 0.0f) + (k == k1 ? l : 0.0f);
#else /* the same sums, indexed (the other entries' + 0.0f leaves them as they are) */
        if (k0 == k1) acc[k0] += h + l;
        else acc[k0] += h, acc[k1] += l;
#endif
        *hit |= 1u << k0 | 1u << k1;
        *zero |= l == 0.0f ? 1u << k1 : 0u;
        if (k1 + 1 > *n) *n = (int)(k1 + 1);
    }
    return 1;
}

/* 1 when a pixel of the merged bin that some sample's corner meets with weight 0 (zy, zx
 * bits: ks_roi_profile) and that lies at a hit row and column is an Inf: the per-sample
 * sum multiplies it by 0 there, which gives NaN, where the merged sum gives the Inf. Only
 * asked when a merged sum came out Inf (rare: off the hot path). Pixel (y, x) of the
 * plane is plane[y * row + x * step]: row = W, step = 1 in NCHW; W * C and C channels-last. */
#if defined(__CUDA_ARCH__)
__device__ static __noinline__ int ks_roi_zero_meets_inf(
#else
static inline int ks_roi_zero_meets_inf(
#endif
    const float *plane, int64_t row, int64_t ylo, int ny, unsigned hy, unsigned zy, int64_t xlo, int nx, unsigned hx,
    unsigned zx, int64_t step)
{
    for (int a = 0; a < ny; ++a) {
        if (!(hy >> a & 1)) continue;
        const unsigned cols = zy >> a & 1 ? hx : hx & zx;
        for (int b = 0; b < nx; ++b)
            if (cols >> b & 1 && isinf(plane[(ylo + a) * row + (xlo + b) * step])) return 1;
    }
    return 0;
}

#endif
