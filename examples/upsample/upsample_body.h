/* upsample_body.h - bilinear upsampling (torch F.interpolate(mode="bilinear")) in the
 * KernelScope body form, with a planted bug (args.bug) to find.
 *
 *   input  [P, H, W]    (P = N * C planes)
 *   output [P, OH, OW]  output(p, oy, ox) blends the four input pixels around the source
 *                       point (sy, sx) of (oy, ox):
 *     align_corners:  sy = oy * (H - 1) / (OH - 1)
 *     otherwise:      sy = max((oy + 0.5) * H / OH - 0.5, 0)
 *   y0 = floor(sy), y1 = min(y0 + 1, H - 1), ly = sy - y0 (x likewise).
 * Positions are computed in integers (sy = num / den exactly), so the floor never rounds
 * the wrong way and `kscope check` can hold y0 and x0 to their formulas. */
#ifndef UPSAMPLE_DECL
#define UPSAMPLE_DECL
#include <math.h>

#include <kscope/ks_core.h>

typedef struct upsample_args {
    int64_t planes, h, w, oh, ow;
    int align_corners;
    int bug; /* 1: the planted bug (see the README) */
    const float *input;
    float *output;
} upsample_args;

/* the tensors and sites the probes name, declared once (ks_decl.h): the enums below
 * (UP_T_INPUT = 0, ...) for the body, upsample_decl() for main.c, which registers each by
 * its name or enum in any order; a name that disagrees does not register */
#define UP_TENSORS(X) X(UP_T_INPUT, "input") X(UP_T_OUTPUT, "output")
#define UP_SITES(X) \
    X(UP_SITE_WORK, "upsample.work") X(UP_SITE_SAMPLE, "upsample.sample") X(UP_SITE_WRITE, "upsample.write")
KS_DECLARE(upsample, UP_TENSORS, UP_SITES)

/* The source row (or column) of output row o: y0 and the weight of y0 + 1. */
KS_FN int64_t upsample_source(int64_t o, int64_t in, int64_t out, int align, int bug, float *frac)
{
    int64_t num, den;
    if (align) { /* sy = o * (in - 1) / (out - 1) */
        num = o * (in - 1);
        den = out > 1 ? out - 1 + bug : 1;        /* the bug: out instead of out - 1 */
    } else {                                      /* sy = ((2o + 1) in - out) / (2 out), at least 0 */
        num = (2 * o + 1) * in - (bug ? 0 : out); /* the bug: the half-pixel shift forgotten */
        den = 2 * out;
        if (num < 0) num = 0;
    }
    const int64_t y0 = num / den;
    *frac = (float)(num - y0 * den) / (float)den;
    return y0;
}
#endif

#ifdef KS_VARIANT
#include <kscope/ks_probe.h>

/* one work item per output element (p, oy, ox), ox fastest */
KS_FN void KS_VARIANT(upsample_body)(ks_thread *t, const upsample_args *a)
{
    const KS_IDX n = (KS_IDX)(a->planes * a->oh * a->ow);
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n; index += stride, ++iter) {
        const int64_t ox = index % a->ow, oy = index / a->ow % a->oh, p = index / (a->ow * a->oh);
        float ly, lx;
        const int64_t y0 = upsample_source(oy, a->h, a->oh, a->align_corners, a->bug, &ly);
        const int64_t x0 = upsample_source(ox, a->w, a->ow, a->align_corners, a->bug, &lx);
        KS_PROBE(ks_probe_work(t, UP_SITE_WORK, index, iter, p, oy, ox, y0, x0, 0, 0, 0));
        const int64_t y1 = y0 + 1 < a->h ? y0 + 1 : a->h - 1, x1 = x0 + 1 < a->w ? x0 + 1 : a->w - 1;
        const float *im = a->input + p * a->h * a->w;
        const float w00 = (1 - ly) * (1 - lx), w01 = (1 - ly) * lx, w10 = ly * (1 - lx), w11 = ly * lx;
        /* fmaf: the same rounding on the GPU (nvcc would fuse a*b+c) and the simulator */
        const float v = fmaf(w11, im[y1 * a->w + x1],
                             fmaf(w10, im[y1 * a->w + x0], fmaf(w01, im[y0 * a->w + x1], w00 * im[y0 * a->w + x0])));
        KS_PROBE(ks_probe_sample(t, UP_SITE_SAMPLE, UP_T_INPUT, 0, p, (float)y0 + ly, (float)x0 + lx, w00, w01, w10,
                                 w11, v,
                                 KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11 |
                                     (y1 == y0 ? KS_FLAG_CLAMP_Y : 0) | (x1 == x0 ? KS_FLAG_CLAMP_X : 0)));
        a->output[index] = v;
        KS_PROBE(ks_probe_write(t, UP_SITE_WRITE, UP_T_OUTPUT, 0, index, p, oy, ox, v, 0));
    }
}
#endif
