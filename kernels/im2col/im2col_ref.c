/* im2col_ref.c - independent double-precision reference, written from the definition:
 *
 *   columns[n, (c*kh + i)*kw + j, oh*Wo + ow] = image[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
 *   (0 outside the image), and col2im is its adjoint: every column entry is added back to
 *   the image element it came from.
 *
 * Loops run over the output and the taps (scatter form for col2im); nothing is shared
 * with the kernel body, not even the output-size helper. */
#include "im2col.h"

static long long out_size(long long in, long long k, long long pad, long long stride,
                          long long dil)
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
    const long long OH = out_size(H, KH, p->pad_h, p->stride_h, p->dilation_h);
    const long long OW = out_size(W, KW, p->pad_w, p->stride_w, p->dilation_w);
    for (long long n = 0; n < N; ++n)
        for (long long c = 0; c < C; ++c)
            for (long long i = 0; i < KH; ++i)
                for (long long j = 0; j < KW; ++j)
                    for (long long oh = 0; oh < OH; ++oh)
                        for (long long ow = 0; ow < OW; ++ow) {
                            long long y = oh * p->stride_h - p->pad_h + i * p->dilation_h;
                            long long x = ow * p->stride_w - p->pad_w + j * p->dilation_w;
                            long long row = (c * KH + i) * KW + j;
                            double v = 0.0;
                            if (0 <= y && y < H && 0 <= x && x < W)
                                v = input[((n * C + c) * H + y) * W + x];
                            columns[((n * C * KH * KW) + row) * OH * OW + oh * OW + ow] = v;
                        }
}

void ks_col2im_ref(const ks_im2col_params *p, const float *columns, double *output)
{
    const long long N = p->batch, C = p->channels, H = p->height, W = p->width;
    const long long KH = p->kernel_h, KW = p->kernel_w;
    const long long OH = out_size(H, KH, p->pad_h, p->stride_h, p->dilation_h);
    const long long OW = out_size(W, KW, p->pad_w, p->stride_w, p->dilation_w);
    for (long long e = 0; e < N * C * H * W; ++e) output[e] = 0.0;
    for (long long n = 0; n < N; ++n)
        for (long long c = 0; c < C; ++c)
            for (long long i = 0; i < KH; ++i)
                for (long long j = 0; j < KW; ++j)
                    for (long long oh = 0; oh < OH; ++oh)
                        for (long long ow = 0; ow < OW; ++ow) {
                            long long y = oh * p->stride_h - p->pad_h + i * p->dilation_h;
                            long long x = ow * p->stride_w - p->pad_w + j * p->dilation_w;
                            if (y < 0 || y >= H || x < 0 || x >= W) continue;
                            long long row = (c * KH + i) * KW + j;
                            output[((n * C + c) * H + y) * W + x] +=
                                columns[((n * C * KH * KW) + row) * OH * OW + oh * OW + ow];
                        }
}
