/* deform_bilinear.h - deformable convolution's bilinear sampler and its coordinate
 * derivative, shared by the three kernel bodies (nvcc and C). No probes here: the bodies
 * record what these return.
 *
 * Zero padding per corner ("zero blend"): a sample at (y, x) inside the open box
 * (-1, H) x (-1, W) blends its four corners (y0, x0) (y0, x1) (y1, x0) (y1, x1),
 * y0 = floor(y), y1 = y0 + 1, a corner outside the image counting as 0; outside the
 * box it is 0. At y = -0.5 on [[1,2],[3,4]] it gives 0.5, half of the top-left value
 * (a RoIAlign-style clamp would give 1). The range tests are written so that NaN fails
 * them: a NaN coordinate reads nothing and gives 0.
 */
#ifndef KS_DEFORM_BILINEAR_H
#define KS_DEFORM_BILINEAR_H

#include <math.h>

#include "../core/ks_core.h"
/* (included by deform_body.h's declarations, after them) */

typedef struct ks_bilinear {
    int64_t y0, x0; /* top-left corner (floor); 0 when the sample is out of range */
    float w[4];     /* corner weights in KS_FLAG_C00..C11 order */
    float value;    /* the blend (0 out of range) */
    int flags;      /* KS_FLAG_Cxx for the corners inside the image */
} ks_bilinear;

KS_FN int ks_deform_in_box(float y, float x, int64_t H, int64_t W)
{
    return y > -1.0f && x > -1.0f && y < (float)H && x < (float)W;
}

/* Corner k's position and whether it lies in the image. */
KS_FN int ks_deform_corner_in(int64_t y0, int64_t x0, int k, int64_t H, int64_t W)
{
    const int64_t y = y0 + (k >> 1), x = x0 + (k & 1);
    return y >= 0 && x >= 0 && y < H && x < W;
}

/* Places a sample at (y, x): its top-left corner, the four weights and which corners lie
 * in the image (flags); all zero outside the box. Everything but the plane's values, so
 * one placement serves every channel of an offset group. */
KS_FN void ks_deform_place(int64_t H, int64_t W, float y, float x, ks_bilinear *b)
{
    b->y0 = b->x0 = 0;
    b->w[0] = b->w[1] = b->w[2] = b->w[3] = 0.0f;
    b->value = 0.0f;
    b->flags = 0;
    if (!ks_deform_in_box(y, x, H, W)) return;
    const float fy = floorf(y), fx = floorf(x);
    const float lh = y - fy, lw = x - fx, hh = 1.0f - lh, hw = 1.0f - lw;
    b->y0 = (int64_t)fy;
    b->x0 = (int64_t)fx;
    b->w[0] = hh * hw;
    b->w[1] = hh * lw;
    b->w[2] = lh * hw;
    b->w[3] = lh * lw;
    for (int k = 0; k < 4; ++k) b->flags |= ks_deform_corner_in(b->y0, b->x0, k, H, W) ? (KS_FLAG_C00 << k) : 0;
}

/* The blend of four corner values (0 for a corner outside the image). fmaf: one rounding
 * per step, the same on the GPU (which would contract a*b + c into an FMA anyway) and in
 * the simulator. */
KS_FN float ks_deform_blend(const float w[4], const float v[4])
{
    return fmaf(w[3], v[3], fmaf(w[2], v[2], fmaf(w[1], v[1], w[0] * v[0])));
}

/* Samples plane `im` [H, W] at (y, x). */
KS_FN void ks_deform_bilinear(const float *im, int64_t H, int64_t W, float y, float x, ks_bilinear *b)
{
    ks_deform_place(H, W, y, x, b);
    float v[4];
    for (int k = 0; k < 4; ++k)
        v[k] = (b->flags & (KS_FLAG_C00 << k)) ? im[(b->y0 + (k >> 1)) * W + b->x0 + (k & 1)] : 0.0f;
    b->value = ks_deform_blend(b->w, v);
}

/* Where the coordinate derivative reads corners: mmcv (semantics 0) inside the open box
 * only; torchvision (1) wherever a corner can be inside (beyond this box none is, and
 * floorf stays small). */
KS_FN int ks_deform_coord_box(float y, float x, int64_t H, int64_t W, int semantics)
{
    if (semantics == KS_DEFORM_MMCV && !ks_deform_in_box(y, x, H, W)) return 0;
    return y > -2.0f && x > -2.0f && y < (float)(H + 1) && x < (float)(W + 1);
}

/* The derivative from the four corner values v (0 outside the image) and the fractions
 * lh = y - floor(y), lw = x - floor(x): dir 0 by y, 1 by x. */
KS_FN float ks_deform_coord_from(const float v[4], float lh, float lw, int dir)
{
    const float hh = 1.0f - lh, hw = 1.0f - lw;
    if (dir == 0) return fmaf(lw, v[3], fmaf(hw, v[2], fmaf(-lw, v[1], -hw * v[0])));
    return fmaf(lh, v[3], fmaf(-lh, v[2], fmaf(hh, v[1], -hh * v[0])));
}

/* The sums of col2im_coord for one channel of a sample, in its order: with the corner
 * values v (0 where not read), the fractions lh, lw, the column gradient cv and the mask
 * m (use_mask), adds the y and x derivatives times cv (times m) to *gy, *gx and, inside
 * the box with a mask, cv times the sample (blend weights w) to *gm. Returns what col2im
 * scatters for the channel: cv, times m with a mask. */
KS_FN float ks_deform_grad_channel(const float v[4], const float w[4], float lh, float lw, float cv, float m,
                                   int use_mask, int coord_box, int in_box, float *gy, float *gx, float *gm)
{
    const float cwy = coord_box ? ks_deform_coord_from(v, lh, lw, 0) : 0.0f;
    const float cwx = coord_box ? ks_deform_coord_from(v, lh, lw, 1) : 0.0f;
    *gy = use_mask ? fmaf(cwy * cv, m, *gy) : fmaf(cwy, cv, *gy);
    *gx = use_mask ? fmaf(cwx * cv, m, *gx) : fmaf(cwx, cv, *gx);
    if (use_mask && in_box) *gm = fmaf(cv, ks_deform_blend(w, v), *gm);
    return use_mask ? cv * m : cv;
}

/* col2im's weight of corner k for a sample at (y, x) with top-left (y0, x0): the
 * distance form 1 - |y - yy| of the references; 0 when the corner is outside the image
 * or a full pixel away. */
KS_FN float ks_deform_scatter_weight(float y, float x, int64_t y0, int64_t x0, int k, int64_t H, int64_t W, int *in)
{
    const int64_t yy = y0 + (k >> 1), xx = x0 + (k & 1);
    const float ay = fabsf(y - (float)yy), ax = fabsf(x - (float)xx);
    *in = !(yy < 0 || xx < 0 || yy >= H || xx >= W || !(ay < 1.0f) || !(ax < 1.0f));
    return (1.0f - ay) * (1.0f - ax);
}

/* The derivative of the sample with respect to y (dir 0) or x (dir 1). At integer
 * coordinates it is the one-sided forward difference (floor-based corners). mmcv
 * (semantics 0) gives 0 unless (y, x) is inside the open box; torchvision (1) only tests
 * corners, so exactly on y == -1 or x == -1 it gives the derivative from the inside
 * corners. For y: -(1-lw) v00 - lw v01 + (1-lw) v10 + lw v11. */
KS_FN float ks_deform_coord_weight(const float *im, int64_t H, int64_t W, float y, float x, int dir, int semantics)
{
    if (!ks_deform_coord_box(y, x, H, W, semantics)) return 0.0f;
    const float fy = floorf(y), fx = floorf(x);
    const int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
    float v[4];
    for (int k = 0; k < 4; ++k)
        v[k] = ks_deform_corner_in(y0, x0, k, H, W) ? im[(y0 + (k >> 1)) * W + x0 + (k & 1)] : 0.0f;
    return ks_deform_coord_from(v, y - fy, x - fx, dir);
}

#endif
