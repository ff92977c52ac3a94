/* deform_ref.c - the independent reference: deformable convolution from its definition,
 * in double, with direct loops (no columns matrix, no chunks, no code shared with the
 * kernels):
 *   out[n,o,ho,wo] = bias[o] + sum_{c in group(o), i, j} w[o,c',i,j] * m * B(in[n,c], y, x)
 *   y = ho*sh - ph + i*dh + dy,  x = wo*sw - pw + j*dw + dx
 * B is bilinear interpolation with zero padding, 0 outside (-1,H) x (-1,W). */
#include <math.h>
#include <string.h>

#include "deform_body.h"

typedef struct ref_geo {
    int64_t N, C, H, W, O, kh, kw, Ho, Wo, Cg, Og, G, cpg;
} ref_geo;

static int geo(const ks_deform_params *p, ref_geo *r)
{
    ks_deform_geom g;
    if (ks_deform_geometry(p, &g)) return -1;
    r->N = p->batch, r->C = p->channels, r->H = p->height, r->W = p->width, r->O = p->out_channels;
    r->kh = p->kernel_h, r->kw = p->kernel_w, r->Ho = g.height_out, r->Wo = g.width_out;
    r->Cg = p->channels / p->groups, r->Og = p->out_channels / p->groups;
    r->G = p->offset_groups, r->cpg = p->channels / p->offset_groups;
    return 0;
}

/* pixel (yy, xx) of plane im, 0 outside */
static double px(const float *im, int64_t H, int64_t W, int64_t yy, int64_t xx)
{
    return (yy >= 0 && yy < H && xx >= 0 && xx < W) ? (double)im[yy * W + xx] : 0.0;
}

static double sample(const float *im, int64_t H, int64_t W, double y, double x)
{
    if (!(y > -1 && y < H && x > -1 && x < W)) return 0.0;
    const double fy = floor(y), fx = floor(x), ly = y - fy, lx = x - fx;
    const int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
    return (1 - ly) * (1 - lx) * px(im, H, W, y0, x0) + (1 - ly) * lx * px(im, H, W, y0, x0 + 1) +
           ly * (1 - lx) * px(im, H, W, y0 + 1, x0) + ly * lx * px(im, H, W, y0 + 1, x0 + 1);
}

/* d sample / dy (dir 0) or dx (dir 1): the right-hand derivative (floor corners) */
static double dsample(const float *im, int64_t H, int64_t W, double y, double x, int dir, int semantics)
{
    if (semantics == KS_DEFORM_MMCV && !(y > -1 && y < H && x > -1 && x < W)) return 0.0;
    if (!(y > -2 && y < H + 1 && x > -2 && x < W + 1)) return 0.0;
    const double fy = floor(y), fx = floor(x), ly = y - fy, lx = x - fx;
    const int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
    const double a = px(im, H, W, y0, x0), b = px(im, H, W, y0, x0 + 1);
    const double c = px(im, H, W, y0 + 1, x0), d = px(im, H, W, y0 + 1, x0 + 1);
    if (dir == 0) return (1 - lx) * (c - a) + lx * (d - b);
    return (1 - ly) * (b - a) + ly * (d - c);
}

typedef struct tap_pos {
    double y, x, m;
    int64_t oy, ox, om; /* element offsets of dy, dx and the mask */
} tap_pos;

static tap_pos position(const ks_deform_params *p, const ks_deform_tensors *t, const ref_geo *r, int64_t n, int64_t g,
                        int64_t i, int64_t j, int64_t ho, int64_t wo)
{
    tap_pos s;
    const int64_t k = i * r->kw + j, P = r->Ho * r->Wo, q = ho * r->Wo + wo;
    s.oy = ((n * r->G + g) * 2 * r->kh * r->kw + 2 * k) * P + q;
    s.ox = s.oy + P;
    s.om = ((n * r->G + g) * r->kh * r->kw + k) * P + q;
    s.y = (double)(ho * p->stride_h - p->pad_h + i * p->dilation_h) + t->offset[s.oy];
    s.x = (double)(wo * p->stride_w - p->pad_w + j * p->dilation_w) + t->offset[s.ox];
    s.m = p->use_mask ? (double)t->mask[s.om] : 1.0;
    return s;
}

void ks_deform_ref_forward(const ks_deform_params *p, const ks_deform_tensors *t, double *out)
{
    ref_geo r;
    if (geo(p, &r)) return;
    for (int64_t n = 0; n < r.N; ++n)
        for (int64_t o = 0; o < r.O; ++o)
            for (int64_t ho = 0; ho < r.Ho; ++ho)
                for (int64_t wo = 0; wo < r.Wo; ++wo) {
                    double acc = p->use_bias ? (double)t->bias[o] : 0.0;
                    for (int64_t cl = 0; cl < r.Cg; ++cl) {
                        const int64_t c = (o / r.Og) * r.Cg + cl;
                        const float *im = t->input + (n * r.C + c) * r.H * r.W;
                        for (int64_t i = 0; i < r.kh; ++i)
                            for (int64_t j = 0; j < r.kw; ++j) {
                                tap_pos s = position(p, t, &r, n, c / r.cpg, i, j, ho, wo);
                                const double w = t->weight[((o * r.Cg + cl) * r.kh + i) * r.kw + j];
                                acc += w * s.m * sample(im, r.H, r.W, s.y, s.x);
                            }
                    }
                    out[((n * r.O + o) * r.Ho + ho) * r.Wo + wo] = acc;
                }
}

void ks_deform_ref_backward(const ks_deform_params *p, const ks_deform_tensors *t, const ks_deform_ref_grads *gr)
{
    ref_geo r;
    ks_deform_geom g;
    if (geo(p, &r) || ks_deform_geometry(p, &g)) return;
    memset(gr->grad_input, 0, (size_t)g.input_numel * sizeof(double));
    memset(gr->grad_offset, 0, (size_t)g.offset_numel * sizeof(double));
    memset(gr->grad_weight, 0, (size_t)g.weight_numel * sizeof(double));
    if (p->use_mask) memset(gr->grad_mask, 0, (size_t)g.mask_numel * sizeof(double));
    if (p->use_bias) memset(gr->grad_bias, 0, (size_t)p->out_channels * sizeof(double));
    for (int64_t n = 0; n < r.N; ++n)
        for (int64_t o = 0; o < r.O; ++o)
            for (int64_t ho = 0; ho < r.Ho; ++ho)
                for (int64_t wo = 0; wo < r.Wo; ++wo) {
                    const double go = t->grad_output[((n * r.O + o) * r.Ho + ho) * r.Wo + wo];
                    if (p->use_bias) gr->grad_bias[o] += go;
                    for (int64_t cl = 0; cl < r.Cg; ++cl) {
                        const int64_t c = (o / r.Og) * r.Cg + cl;
                        const float *im = t->input + (n * r.C + c) * r.H * r.W;
                        double *gi = gr->grad_input + (n * r.C + c) * r.H * r.W;
                        for (int64_t i = 0; i < r.kh; ++i)
                            for (int64_t j = 0; j < r.kw; ++j) {
                                tap_pos s = position(p, t, &r, n, c / r.cpg, i, j, ho, wo);
                                const int64_t wi = ((o * r.Cg + cl) * r.kh + i) * r.kw + j;
                                const double w = t->weight[wi];
                                const double v = sample(im, r.H, r.W, s.y, s.x);
                                gr->grad_weight[wi] += go * s.m * v;
                                if (p->use_mask) gr->grad_mask[s.om] += go * w * v;
                                gr->grad_offset[s.oy] += go * w * s.m *
                                                         dsample(im, r.H, r.W, s.y, s.x, 0, p->semantics);
                                gr->grad_offset[s.ox] += go * w * s.m *
                                                         dsample(im, r.H, r.W, s.y, s.x, 1, p->semantics);
                                /* d out / d in[yy, xx]: the corner weights (inside the box) */
                                if (!(s.y > -1 && s.y < r.H && s.x > -1 && s.x < r.W)) continue;
                                const int64_t y0 = (int64_t)floor(s.y), x0 = (int64_t)floor(s.x);
                                for (int64_t yy = y0; yy <= y0 + 1; ++yy)
                                    for (int64_t xx = x0; xx <= x0 + 1; ++xx) {
                                        if (yy < 0 || xx < 0 || yy >= r.H || xx >= r.W) continue;
                                        const double wy = 1 - fabs(s.y - yy), wx = 1 - fabs(s.x - xx);
                                        if (wy <= 0 || wx <= 0) continue;
                                        gi[yy * r.W + xx] += go * w * s.m * wy * wx;
                                    }
                            }
                    }
                }
}
