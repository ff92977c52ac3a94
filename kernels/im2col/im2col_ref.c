/* im2col_ref.c - independent double-precision reference, written from the definition:
 *
 *   columns[n, (c*kh + i)*kw + j, oh*Wo + ow] = image[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
 *   (0 outside the image), and col2im is its adjoint: every column entry is added back to
 *   the image element it came from.
 *
 * Loops run over the output and the taps (scatter form for col2im); nothing is shared
 * with the kernel body, not even the output-size helper. */
#include "im2col_body.h"

static long long out_size(long long in, long long k, long long pad, long long stride, long long dil)
{
    long long span = dil * (k - 1) + 1;
    long long num = in + 2 * pad - span;
    /* C truncation toward zero, as Caffe: e.g. in=2, k=3, pad=0, stride=2 gives 1 */
    long long q = num / stride;
    return q + 1;
}

void ks_im2col_ref(const ks_im2col_params *p, const float *input, double *columns)
{
    const long long N = p->batch, C = p->channels, H = p->height, W = p->width;
    const long long KH = p->kernel_h, KW = p->kernel_w;
    const long long Ho = out_size(H, KH, p->pad_h, p->stride_h, p->dilation_h);
    const long long Wo = out_size(W, KW, p->pad_w, p->stride_w, p->dilation_w);
    for (long long n = 0; n < N; ++n)
        for (long long c_im = 0; c_im < C; ++c_im)
            for (long long i = 0; i < KH; ++i)
                for (long long j = 0; j < KW; ++j)
                    for (long long h_col = 0; h_col < Ho; ++h_col)
                        for (long long w_col = 0; w_col < Wo; ++w_col) {
                            long long h = h_col * p->stride_h - p->pad_h + i * p->dilation_h;
                            long long w = w_col * p->stride_w - p->pad_w + j * p->dilation_w;
                            long long c_col = (c_im * KH + i) * KW + j;
                            double v = 0.0;
                            if (0 <= h && h < H && 0 <= w && w < W) v = input[((n * C + c_im) * H + h) * W + w];
                            columns[((n * C * KH * KW) + c_col) * Ho * Wo + h_col * Wo + w_col] = v;
                        }
}

void ks_col2im_ref(const ks_im2col_params *p, const float *columns, double *output)
{
    const long long N = p->batch, C = p->channels, H = p->height, W = p->width;
    const long long KH = p->kernel_h, KW = p->kernel_w;
    const long long Ho = out_size(H, KH, p->pad_h, p->stride_h, p->dilation_h);
    const long long Wo = out_size(W, KW, p->pad_w, p->stride_w, p->dilation_w);
    for (long long e = 0; e < N * C * H * W; ++e) output[e] = 0.0;
    for (long long n = 0; n < N; ++n)
        for (long long c_im = 0; c_im < C; ++c_im)
            for (long long i = 0; i < KH; ++i)
                for (long long j = 0; j < KW; ++j)
                    for (long long h_col = 0; h_col < Ho; ++h_col)
                        for (long long w_col = 0; w_col < Wo; ++w_col) {
                            long long h = h_col * p->stride_h - p->pad_h + i * p->dilation_h;
                            long long w = w_col * p->stride_w - p->pad_w + j * p->dilation_w;
                            if (h < 0 || h >= H || w < 0 || w >= W) continue;
                            long long c_col = (c_im * KH + i) * KW + j;
                            output[((n * C + c_im) * H + h) * W + w] +=
                                columns[((n * C * KH * KW) + c_col) * Ho * Wo + h_col * Wo + w_col];
                        }
}
