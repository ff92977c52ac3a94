/* patchify_ref.c - the independent reference, in double from the definition: the raw
 * patch is the pixels around floor(x, y); output (r, s) is the bilinear sample of the
 * input at (y + r - R, x + s - R) with zero padding. */
#include <math.h>
#include <string.h>

#include "patchify_body.h"

static double px(const ks_patchify_params *p, const float *plane, double i, double j)
{
    return (i >= 0 && i < p->height && j >= 0 && j < p->width) ? plane[(int64_t)i * p->width + (int64_t)j] : 0.0;
}

void ks_patchify_ref(const ks_patchify_params *p, const float *input, const float *coords, double *patches,
                     double *output)
{
    const int64_t R = p->radius, D = 2 * R + 2, d = D - 1;
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t m = 0; m < p->num_points; ++m) {
            const double x = coords[(b * p->num_points + m) * 2], y = coords[(b * p->num_points + m) * 2 + 1];
            const double fy = floor(y), fx = floor(x), dy = y - fy, dx = x - fx;
            for (int64_t c = 0; c < p->channels; ++c) {
                const float *plane = input + (b * p->channels + c) * p->height * p->width;
                const int64_t q = (b * p->num_points + m) * p->channels + c;
                for (int64_t ii = 0; ii < D; ++ii)
                    for (int64_t jj = 0; jj < D; ++jj)
                        patches[(q * D + ii) * D + jj] = isfinite(fy) && isfinite(fx)
                                                             ? px(p, plane, fy + ii - R, fx + jj - R)
                                                             : 0;
                for (int64_t r = 0; r < d; ++r)
                    for (int64_t s = 0; s < d; ++s) {
                        const double i0 = fy + r - R, j0 = fx + s - R;
                        output[(q * d + r) * d + s] = (1 - dy) * (1 - dx) * px(p, plane, i0, j0) +
                                                      (1 - dy) * dx * px(p, plane, i0, j0 + 1) +
                                                      dy * (1 - dx) * px(p, plane, i0 + 1, j0) +
                                                      dy * dx * px(p, plane, i0 + 1, j0 + 1);
                    }
            }
        }
}

void ks_patchify_ref_backward(const ks_patchify_params *p, const float *coords, const float *grad_output,
                              double *grad_input)
{
    const int64_t R = p->radius, d = 2 * R + 1, H = p->height, W = p->width;
    memset(grad_input, 0, (size_t)(p->batch * p->channels * H * W) * sizeof(double));
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t m = 0; m < p->num_points; ++m) {
            const double x = coords[(b * p->num_points + m) * 2], y = coords[(b * p->num_points + m) * 2 + 1];
            const double fy = floor(y), fx = floor(x), dy = y - fy, dx = x - fx;
            for (int64_t c = 0; c < p->channels; ++c) {
                double *g = grad_input + (b * p->channels + c) * H * W;
                const float *go = grad_output + ((b * p->num_points + m) * p->channels + c) * d * d;
                for (int64_t r = 0; r < d; ++r)
                    for (int64_t s = 0; s < d; ++s)
                        for (int q = 0; q < 4; ++q) {
                            const double i = fy + r - R + (q >> 1), j = fx + s - R + (q & 1);
                            const double w = ((q >> 1) ? dy : 1 - dy) * ((q & 1) ? dx : 1 - dx);
                            if (i >= 0 && i < H && j >= 0 && j < W) g[(int64_t)i * W + (int64_t)j] += w * go[r * d + s];
                        }
            }
        }
}
