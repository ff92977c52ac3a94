/* im2col_body.h - the im2col and col2im kernel bodies, written once.
 *
 * Included twice per build (see ks_probe.h): KS_TRACED 0 gives the plain kernels,
 * KS_TRACED 1 the traced ones. Both nvcc (im2col_cuda.cu) and the C simulator
 * (im2col_sim.c) compile this file. Indices are 64-bit: C*kh*kw*Ho*Wo passes 2^31 on
 * real layers (the torchvision #4269 bug).
 */
#include "../core/ks_probe.h"
#include "im2col_args.h"

/* im2col: one work item per (n, c_im, h_col, w_col), w_col fastest. Each copies the
 * kh*kw taps of its window into kh*kw rows of the columns matrix (Ho*Wo apart), 0 for
 * taps in the padding. Column writes are coalesced across neighbouring threads. */
KS_FN void KS_VARIANT(ks_im2col_body)(ks_thread *t, const ks_im2col_args *a)
{
    const int64_t H = a->height, W = a->width, Ho = a->height_col, Wo = a->width_col;
    const int64_t kh = a->kernel_h, kw = a->kernel_w;
    const int64_t rows = a->channels * kh * kw;
    const int64_t n_work = a->batch * a->channels * Ho * Wo;
    int64_t index = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    const int64_t step = (int64_t)t->grid_dim.x * t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += step, ++iter) {
        const int64_t w_col = index % Wo;
        const int64_t h_index = index / Wo;
        const int64_t h_col = h_index % Ho;
        const int64_t c_index = h_index / Ho; /* n*C + c_im: the image plane */
        const int64_t c_im = c_index % a->channels;
        const int64_t n = c_index / a->channels;
        KS_PROBE(ks_probe_work(t, KS_IM2COL_SITE_WORK, index, iter, n, c_im, h_col, w_col,
                               0, 0, 0, 0));
        const int64_t c_col = c_im * kh * kw;
        const int64_t h_off = h_col * a->stride_h - a->pad_h;
        const int64_t w_off = w_col * a->stride_w - a->pad_w;
        const float *im = a->src + c_index * H * W;
        float *col = a->dst + ((n * rows + c_col) * Ho + h_col) * Wo + w_col;
        for (int64_t i = 0; i < kh; ++i) {
            for (int64_t j = 0; j < kw; ++j) {
                const int64_t h = h_off + i * a->dilation_h;
                const int64_t w = w_off + j * a->dilation_w;
                const int inside = h >= 0 && w >= 0 && h < H && w < W;
                const float v = inside ? im[h * W + w] : 0.0f;
                *col = v;
                KS_PROBE(ks_probe_read(t, KS_IM2COL_SITE_READ, KS_IM2COL_T_INPUT,
                                       (int)(i * kw + j),
                                       inside ? c_index * H * W + h * W + w : -1, c_index,
                                       h, w, v));
                KS_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_IM2COL_T_COLUMNS,
                                        (int)(i * kw + j), col - a->dst, n, c_col + i * kw + j,
                                        h_col * Wo + w_col, v, 0));
                col += Ho * Wo;
            }
        }
    }
}

/* col2im in the gather form: one work item per image element (n, c_im, h, w), w fastest.
 * It sums every column entry that im2col copied from this element. h_col runs over the
 * window positions whose extent covers h_im (h_col_start..h_col_end), and a position
 * contributes only if its tap offset is a multiple of the dilation. Each thread owns its
 * output element, so there are no atomics and the sum order (h_col, then w_col,
 * ascending) is deterministic. */
KS_FN void KS_VARIANT(ks_col2im_body)(ks_thread *t, const ks_im2col_args *a)
{
    const int64_t H = a->height, W = a->width, Ho = a->height_col, Wo = a->width_col;
    const int64_t kh = a->kernel_h, kw = a->kernel_w;
    const int64_t rows = a->channels * kh * kw;
    const int64_t ext_h = (kh - 1) * a->dilation_h + 1;
    const int64_t ext_w = (kw - 1) * a->dilation_w + 1;
    const int64_t n_work = a->batch * a->channels * H * W;
    int64_t index = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    const int64_t step = (int64_t)t->grid_dim.x * t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += step, ++iter) {
        /* h_im, w_im are positions in the padded image */
        const int64_t w_im = index % W + a->pad_w;
        const int64_t h_im = (index / W) % H + a->pad_h;
        const int64_t c_index = index / (W * H); /* n*C + c_im */
        const int64_t c_im = c_index % a->channels;
        const int64_t n = c_index / a->channels;
        const int64_t w_col_start = (w_im < ext_w) ? 0 : (w_im - ext_w) / a->stride_w + 1;
        const int64_t w_col_end = w_im / a->stride_w + 1 < Wo ? w_im / a->stride_w + 1 : Wo;
        const int64_t h_col_start = (h_im < ext_h) ? 0 : (h_im - ext_h) / a->stride_h + 1;
        const int64_t h_col_end = h_im / a->stride_h + 1 < Ho ? h_im / a->stride_h + 1 : Ho;
        KS_PROBE(ks_probe_work(t, KS_IM2COL_SITE_WORK, index, iter, n, c_im, h_im, w_im,
                               h_col_start, h_col_end, w_col_start, w_col_end));
        const float *col = a->src + n * rows * Ho * Wo;
        float val = 0.0f;
        int tap = 0;
        for (int64_t h_col = h_col_start; h_col < h_col_end; ++h_col) {
            for (int64_t w_col = w_col_start; w_col < w_col_end; ++w_col) {
                int64_t h_k = h_im - h_col * a->stride_h;
                int64_t w_k = w_im - w_col * a->stride_w;
                if (h_k % a->dilation_h == 0 && w_k % a->dilation_w == 0) {
                    h_k /= a->dilation_h;
                    w_k /= a->dilation_w;
                    const int64_t c_col = (c_im * kh + h_k) * kw + w_k;
                    const int64_t off = (c_col * Ho + h_col) * Wo + w_col;
                    const float v = col[off];
                    val += v;
                    KS_PROBE(ks_probe_read(t, KS_IM2COL_SITE_READ, KS_COL2IM_T_COLUMNS,
                                           tap++, n * rows * Ho * Wo + off, n, c_col,
                                           h_col * Wo + w_col, v));
                }
            }
        }
        a->dst[index] = val;
        KS_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_COL2IM_T_OUTPUT, 0, index,
                                c_index, h_im - a->pad_h, w_im - a->pad_w, val, 0));
    }
}
