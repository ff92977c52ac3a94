/* im2col_body.h - the im2col and col2im kernel bodies, written once.
 *
 * Included twice per build (see ks_probe.h): KS_TRACED 0 gives the plain kernels,
 * KS_TRACED 1 the traced ones. Both nvcc (im2col_cuda.cu) and the C simulator
 * (im2col_sim.c) compile this file. Indices are 64-bit: C*kh*kw*Ho*Wo passes 2^31 on
 * real layers (the torchvision #4269 bug). The includer picks the index type KS_IDX:
 * int64_t always works; the CUDA plain build adds an int32_t variant for launches whose
 * every size fits in 2^30, where 64-bit division would dominate the cost.
 */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including im2col_body.h"
#endif
#include "../core/ks_probe.h"
#include "im2col_args.h"

/* im2col: one work item per (n, c_im, h_col, w_col), w_col fastest. Each copies the
 * kh*kw taps of its window into kh*kw rows of the columns matrix (Ho*Wo apart), 0 for
 * taps in the padding. Column writes are coalesced across neighbouring threads. */
KS_FN void KS_VARIANT(ks_im2col_body)(ks_thread *t, const ks_im2col_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w;
    const KS_IDX sh = (KS_IDX)a->stride_h, sw = (KS_IDX)a->stride_w;
    const KS_IDX ph = (KS_IDX)a->pad_h, pw = (KS_IDX)a->pad_w;
    const KS_IDX dh = (KS_IDX)a->dilation_h, dw = (KS_IDX)a->dilation_w;
    const KS_IDX rows = C * kh * kw;
    const KS_IDX n_work = (KS_IDX)a->batch * C * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_index = index / Wo;
        const KS_IDX h_col = h_index % Ho;
        const KS_IDX c_index = h_index / Ho; /* n*C + c_im: the image plane */
        const KS_IDX c_im = c_index % C;
        const KS_IDX n = c_index / C;
        KS_PROBE(ks_probe_work(t, KS_IM2COL_SITE_WORK, index, iter, n, c_im, h_col, w_col,
                               0, 0, 0, 0));
        const KS_IDX c_col = c_im * kh * kw;
        const KS_IDX h_off = h_col * sh - ph;
        const KS_IDX w_off = w_col * sw - pw;
        const float *im = a->src + c_index * H * W;
        float *col = a->dst + ((n * rows + c_col) * Ho + h_col) * Wo + w_col;
        for (KS_IDX i = 0; i < kh; ++i) {
            for (KS_IDX j = 0; j < kw; ++j) {
                const KS_IDX h = h_off + i * dh;
                const KS_IDX w = w_off + j * dw;
                const int inside = h >= 0 && w >= 0 && h < H && w < W;
                const float v = inside ? im[h * W + w] : 0.0f;
                *col = v;
                KS_PROBE(ks_probe_read(t, KS_IM2COL_SITE_READ, KS_IM2COL_T_INPUT,
                                       (int)(i * kw + j),
                                       inside ? (int64_t)c_index * H * W + h * W + w : -1,
                                       c_index, h, w, v));
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
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w;
    const KS_IDX sh = (KS_IDX)a->stride_h, sw = (KS_IDX)a->stride_w;
    const KS_IDX ph = (KS_IDX)a->pad_h, pw = (KS_IDX)a->pad_w;
    const KS_IDX dh = (KS_IDX)a->dilation_h, dw = (KS_IDX)a->dilation_w;
    const KS_IDX rows = C * kh * kw;
    const KS_IDX ext_h = (kh - 1) * dh + 1;
    const KS_IDX ext_w = (kw - 1) * dw + 1;
    const KS_IDX n_work = (KS_IDX)a->batch * C * H * W;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        /* h_im, w_im are positions in the padded image */
        const KS_IDX w_im = index % W + pw;
        const KS_IDX h_im = (index / W) % H + ph;
        const KS_IDX c_index = index / (W * H); /* n*C + c_im */
        const KS_IDX c_im = c_index % C;
        const KS_IDX n = c_index / C;
        const KS_IDX w_col_start = (w_im < ext_w) ? 0 : (w_im - ext_w) / sw + 1;
        const KS_IDX w_col_end = w_im / sw + 1 < Wo ? w_im / sw + 1 : Wo;
        const KS_IDX h_col_start = (h_im < ext_h) ? 0 : (h_im - ext_h) / sh + 1;
        const KS_IDX h_col_end = h_im / sh + 1 < Ho ? h_im / sh + 1 : Ho;
        KS_PROBE(ks_probe_work(t, KS_IM2COL_SITE_WORK, index, iter, n, c_im, h_im, w_im,
                               h_col_start, h_col_end, w_col_start, w_col_end));
        const float *col = a->src + n * rows * Ho * Wo;
        float val = 0.0f;
        int tap = 0;
        for (KS_IDX h_col = h_col_start; h_col < h_col_end; ++h_col) {
            for (KS_IDX w_col = w_col_start; w_col < w_col_end; ++w_col) {
                KS_IDX h_k = h_im - h_col * sh;
                KS_IDX w_k = w_im - w_col * sw;
                if (h_k % dh == 0 && w_k % dw == 0) {
                    h_k /= dh;
                    w_k /= dw;
                    const KS_IDX c_col = (c_im * kh + h_k) * kw + w_k;
                    const KS_IDX off = (c_col * Ho + h_col) * Wo + w_col;
                    const float v = col[off];
                    val += v;
                    KS_PROBE(ks_probe_read(t, KS_IM2COL_SITE_READ, KS_COL2IM_T_COLUMNS,
                                           tap++, (int64_t)n * rows * Ho * Wo + off, n, c_col,
                                           h_col * Wo + w_col, v));
                }
            }
        }
        a->dst[index] = val;
        KS_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_COL2IM_T_OUTPUT, 0, index,
                                c_index, h_im - ph, w_im - pw, val, 0));
    }
}

/* col2im in the scatter form (--algorithm scatter): one work item per columns element
 * (n, c_col, h_col, w_col), w_col fastest, c_col = (c_im*kh + i)*kw + j. It adds its value
 * into the image element im2col copied it from - (h, w) = (h_col*sh - ph + i*dh,
 * w_col*sw - pw + j*dw), when inside - with an atomic add: overlapping windows add into
 * one element, in an order that changes from run to run on a GPU. Its reads are
 * consecutive (coalesced); the gather form reads strided but needs no atomics. */
KS_FN void KS_VARIANT(ks_col2im_scatter_body)(ks_thread *t, const ks_im2col_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w;
    const KS_IDX rows = C * kh * kw;
    const KS_IDX n_work = (KS_IDX)a->batch * rows * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo, h_col = index / Wo % Ho;
        const KS_IDX c_col = index / (Wo * Ho) % rows, n = index / (Wo * Ho * rows);
        const KS_IDX j = c_col % kw, i = c_col / kw % kh, c_im = c_col / (kw * kh);
        const KS_IDX h = h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h;
        const KS_IDX w = w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w;
        KS_PROBE(ks_probe_work(t, KS_IM2COL_SITE_WORK, index, iter, n, c_col, h_col, w_col, h, w, 0, 0));
        const float v = a->src[index];
        KS_PROBE(ks_probe_read(t, KS_IM2COL_SITE_READ, KS_COL2IM_T_COLUMNS, (int)(i * kw + j), index, n, c_col,
                               h_col * Wo + w_col, v));
        if (h < 0 || h >= H || w < 0 || w >= W) continue; /* a padding entry: no image element */
        const KS_IDX at = ((n * C + c_im) * H + h) * W + w;
        ks_atomic_add_f32(a->dst + at, v);
        KS_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_COL2IM_T_OUTPUT, (int)(i * kw + j), at, n * C + c_im, h, w,
                                v, 1));
    }
}
