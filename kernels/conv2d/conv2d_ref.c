/* conv2d_ref.c - the direct convolution in double, from the definition. It shares no
 * code with im2col or the GEMM body: it walks output positions and kernel taps. */
#include "conv2d_body.h"

void ks_conv2d_ref(const ks_conv2d_params *p, const float *input, const float *weight, double *output)
{
    const ks_im2col_params *q = &p->im;
    const int64_t H = q->height, W = q->width, C = q->channels;
    const int64_t Ho = (H + 2 * q->pad_h - (q->dilation_h * (q->kernel_h - 1) + 1)) / q->stride_h + 1;
    const int64_t Wo = (W + 2 * q->pad_w - (q->dilation_w * (q->kernel_w - 1) + 1)) / q->stride_w + 1;
    for (int64_t n = 0; n < q->batch; ++n)
        for (int64_t o = 0; o < p->out_channels; ++o)
            for (int64_t h_out = 0; h_out < Ho; ++h_out)
                for (int64_t w_out = 0; w_out < Wo; ++w_out) {
                    double sum = 0;
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t i = 0; i < q->kernel_h; ++i)
                            for (int64_t j = 0; j < q->kernel_w; ++j) {
                                int64_t iy = h_out * q->stride_h - q->pad_h + i * q->dilation_h;
                                int64_t ix = w_out * q->stride_w - q->pad_w + j * q->dilation_w;
                                if (iy < 0 || ix < 0 || iy >= H || ix >= W) continue;
                                sum += (double)weight[((o * C + c) * q->kernel_h + i) * q->kernel_w + j] *
                                       (double)input[((n * C + c) * H + iy) * W + ix];
                            }
                    output[((n * p->out_channels + o) * Ho + h_out) * Wo + w_out] = sum;
                }
}
