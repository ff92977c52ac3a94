/* deform_pattern.c - generated offsets (see ks_deform_offset_fill). */
#include <math.h>

#include "../core/ks_error.h"
#include "../registry.h"
#include "deform_body.h"

int ks_deform_offset_fill(const ks_deform_params *p, int pattern, const double amount[2], uint64_t seed, float *offset)
{
    ks_deform_geom g;
    int rc = ks_deform_geometry(p, &g);
    if (rc) return rc;
    const int64_t P = g.height_out * g.width_out, kh = p->kernel_h, kw = p->kernel_w;
    const int64_t planes = p->batch * p->offset_groups * kh * kw; /* (dy, dx) plane pairs */
    const double rad = amount[0] * 3.14159265358979323846 / 180.0;
    uint64_t s = seed;
    for (int64_t q = 0; q < planes; ++q) {
        const int64_t tap = q % (kh * kw), i = tap / kw, j = tap % kw;
        /* the tap's place relative to the window centre */
        const double ry = (i - (kh - 1) / 2.0) * p->dilation_h, rx = (j - (kw - 1) / 2.0) * p->dilation_w;
        double dy = 0, dx = 0;
        switch (pattern) {
        case KS_OFF_SHIFT: dy = amount[0], dx = amount[1]; break;
        case KS_OFF_ROTATE:
            dy = sin(rad) * rx + cos(rad) * ry - ry;
            dx = cos(rad) * rx - sin(rad) * ry - rx;
            break;
        case KS_OFF_SCALE: dy = (amount[0] - 1) * ry, dx = (amount[0] - 1) * rx; break;
        case KS_OFF_ZERO: break;
        case KS_OFF_RANDOM: break;
        default: return ks_fail(KS_EINVAL, "unknown offset pattern %d", pattern);
        }
        float *oy = offset + 2 * q * P, *ox = oy + P;
        for (int64_t k = 0; k < P; ++k) {
            if (pattern == KS_OFF_RANDOM) {
                oy[k] = (float)((ks_rand_unit(&s) * 2.0 - 1.0) * amount[0]);
                ox[k] = (float)((ks_rand_unit(&s) * 2.0 - 1.0) * amount[0]);
            } else {
                oy[k] = (float)dy;
                ox[k] = (float)dx;
            }
        }
    }
    return KS_OK;
}
