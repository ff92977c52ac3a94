/* roi_align_ref.c - the independent reference: RoIAlign from its definition, in double,
 * direct loops, no code shared with the kernels. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "roi_align_body.h"

typedef struct ref_bin {
    double y1, x1, bh, bw;
    int64_t b, gh, gw;
} ref_bin;

static int64_t grid(int64_t ratio, double extent)
{
    if (ratio > 0) return ratio;
    if (!(extent > 0) || !(extent <= KS_ROI_MAX_GRID)) return 0;
    return (int64_t)ceil(extent);
}

static ref_bin box(const ks_roi_align_params *p, const float *roi)
{
    ref_bin r;
    const double off = p->aligned ? 0.5 : 0.0, s = p->spatial_scale;
    r.b = (roi[0] > -1 && roi[0] < p->batch) ? (int64_t)roi[0] : -1;
    r.x1 = roi[1] * s - off;
    r.y1 = roi[2] * s - off;
    double w = roi[3] * s - off - r.x1, h = roi[4] * s - off - r.y1;
    if (!p->aligned) w = fmax(w, 1.0), h = fmax(h, 1.0);
    r.bh = h / p->pooled_h;
    r.bw = w / p->pooled_w;
    r.gh = grid(p->sampling_ratio, r.bh);
    r.gw = grid(p->sampling_ratio, r.bw);
    return r;
}

/* the RoIAlign sampler: 0 outside [-1, H] x [-1, W]; within one pixel, the border */
static int corners(const ks_roi_align_params *p, double y, double x, int64_t cy[2], int64_t cx[2], double w[4])
{
    const int64_t H = p->height, W = p->width;
    if (!(y >= -1 && y <= H && x >= -1 && x <= W)) return 0;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    cy[0] = (int64_t)floor(y), cx[0] = (int64_t)floor(x);
    if (cy[0] >= H - 1) cy[0] = H - 1, y = (double)(H - 1);
    if (cx[0] >= W - 1) cx[0] = W - 1, x = (double)(W - 1);
    cy[1] = cy[0] + 1 < H ? cy[0] + 1 : H - 1;
    cx[1] = cx[0] + 1 < W ? cx[0] + 1 : W - 1;
    const double ly = y - cy[0], lx = x - cx[0];
    w[0] = (1 - ly) * (1 - lx), w[1] = (1 - ly) * lx, w[2] = ly * (1 - lx), w[3] = ly * lx;
    return 1;
}

static double value(const ks_roi_align_params *p, const float *plane, double y, double x)
{
    int64_t cy[2], cx[2];
    double w[4];
    if (!corners(p, y, x, cy, cx, w)) return 0;
    double v = 0;
    for (int k = 0; k < 4; ++k) v += w[k] * plane[cy[k >> 1] * p->width + cx[k & 1]];
    return v;
}

/* bin (n, c, ph, pw): the output, and the winning sample of max mode (iy, ix; -1: none) */
static double bin(const ks_roi_align_params *p, const float *input, const float *rois, int64_t n, int64_t c, int64_t ph,
                  int64_t pw, double *wy, double *wx)
{
    const ref_bin r = box(p, rois + n * 5);
    *wy = *wx = -1;
    const int64_t gh = r.b < 0 ? 0 : r.gh, gw = r.b < 0 ? 0 : r.gw;
    const float *plane = input + ((r.b < 0 ? 0 : r.b) * p->channels + c) * p->height * p->width;
    double acc = p->pool_mode == KS_ROI_MAX ? -FLT_MAX : 0;
    for (int64_t iy = 0; iy < gh; ++iy)
        for (int64_t ix = 0; ix < gw; ++ix) {
            const double y = r.y1 + ph * r.bh + (iy + 0.5) * r.bh / gh;
            const double x = r.x1 + pw * r.bw + (ix + 0.5) * r.bw / gw;
            const double v = value(p, plane, y, x);
            if (p->pool_mode != KS_ROI_MAX) acc += v;
            else if (v > acc) acc = v, *wy = y, *wx = x;
        }
    if (p->pool_mode != KS_ROI_MAX) acc /= (double)(gh * gw > 0 ? gh * gw : 1);
    return acc;
}

void ks_roi_align_ref_forward(const ks_roi_align_params *p, const float *input, const float *rois, double *output)
{
    int64_t i = 0;
    double wy, wx;
    for (int64_t n = 0; n < p->num_rois; ++n)
        for (int64_t c = 0; c < p->channels; ++c)
            for (int64_t ph = 0; ph < p->pooled_h; ++ph)
                for (int64_t pw = 0; pw < p->pooled_w; ++pw) output[i++] = bin(p, input, rois, n, c, ph, pw, &wy, &wx);
}

void ks_roi_align_ref_backward(const ks_roi_align_params *p, const float *input, const float *rois,
                               const float *grad_output, double *grad_input)
{
    const int64_t H = p->height, W = p->width;
    memset(grad_input, 0, (size_t)(p->batch * p->channels * H * W) * sizeof(double));
    int64_t i = 0;
    for (int64_t n = 0; n < p->num_rois; ++n)
        for (int64_t c = 0; c < p->channels; ++c)
            for (int64_t ph = 0; ph < p->pooled_h; ++ph)
                for (int64_t pw = 0; pw < p->pooled_w; ++pw, ++i) {
                    const ref_bin r = box(p, rois + n * 5);
                    if (r.b < 0) continue;
                    double *g = grad_input + (r.b * p->channels + c) * H * W;
                    int64_t cy[2], cx[2];
                    double w[4], wy, wx;
                    if (p->pool_mode == KS_ROI_MAX) {
                        bin(p, input, rois, n, c, ph, pw, &wy, &wx);
                        if (wy != -1 && corners(p, wy, wx, cy, cx, w))
                            for (int q = 0; q < 4; ++q) g[cy[q >> 1] * W + cx[q & 1]] += grad_output[i] * w[q];
                        continue;
                    }
                    const double n = (double)(r.gh * r.gw);
                    for (int64_t iy = 0; iy < r.gh; ++iy)
                        for (int64_t ix = 0; ix < r.gw; ++ix) {
                            const double y = r.y1 + ph * r.bh + (iy + 0.5) * r.bh / r.gh;
                            const double x = r.x1 + pw * r.bw + (ix + 0.5) * r.bw / r.gw;
                            if (!corners(p, y, x, cy, cx, w)) continue;
                            for (int q = 0; q < 4; ++q) g[cy[q >> 1] * W + cx[q & 1]] += grad_output[i] * w[q] / n;
                        }
                }
}
