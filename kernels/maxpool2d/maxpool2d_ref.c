/* maxpool2d_ref.c - the independent reference: for each output (n, c, y, x) the window
 * rows r = y*sh - ph + i*dh and columns q = x*sw - pw + j*dw, the largest input among
 * those inside (first of equal ones, NaN wins), in double; the backward routes each
 * gradient to that element. No code shared with the body. */
#include <math.h>
#include <string.h>

#include "maxpool2d_body.h"

static void window_max(const ks_maxpool2d_args *a, const float *plane, int64_t y, int64_t x, double *best,
                       int64_t *at)
{
    int found = 0;
    *best = -INFINITY;
    *at = -1;
    for (int64_t i = 0; i < a->kernel_h; ++i) {
        for (int64_t j = 0; j < a->kernel_w; ++j) {
            const int64_t row = y * a->stride_h - a->pad_h + i * a->dilation_h;
            const int64_t col = x * a->stride_w - a->pad_w + j * a->dilation_w;
            if (row < 0 || col < 0 || row >= a->height || col >= a->width) continue;
            const double v = plane[row * a->width + col];
            if (!found || isnan(v) || (!isnan(*best) && v > *best)) {
                *best = v;
                *at = row * a->width + col;
            }
            found = 1;
        }
    }
}

void ks_maxpool2d_ref(const ks_maxpool2d_args *a, const float *input, double *output, int64_t *indices)
{
    const int64_t planes = a->batch * a->channels;
    for (int64_t p = 0; p < planes; ++p)
        for (int64_t y = 0; y < a->out_h; ++y)
            for (int64_t x = 0; x < a->out_w; ++x) {
                const int64_t o = (p * a->out_h + y) * a->out_w + x;
                window_max(a, input + p * a->height * a->width, y, x, &output[o], &indices[o]);
            }
}

void ks_maxpool2d_ref_backward(const ks_maxpool2d_args *a, const float *input, const float *grad_output,
                               double *grad_input)
{
    const int64_t planes = a->batch * a->channels, hw = a->height * a->width;
    memset(grad_input, 0, (size_t)(planes * hw) * sizeof *grad_input);
    for (int64_t p = 0; p < planes; ++p)
        for (int64_t y = 0; y < a->out_h; ++y)
            for (int64_t x = 0; x < a->out_w; ++x) {
                double best;
                int64_t at;
                window_max(a, input + p * hw, y, x, &best, &at);
                if (at >= 0) grad_input[p * hw + at] += grad_output[(p * a->out_h + y) * a->out_w + x];
            }
}
