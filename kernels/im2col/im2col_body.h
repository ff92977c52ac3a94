/* im2col_body.h - the im2col and col2im kernel bodies, written once.
 *
 * Included twice per build (see ks_probe.h): KS_TRACED 0 gives the plain kernels,
 * KS_TRACED 1 the traced ones. Both nvcc (im2col_cuda.cu) and the C simulator
 * (im2col_sim.c) compile this file. Indices are 64-bit: C*kh*kw*Ho*Wo passes 2^31 on
 * real layers (the torchvision #4269 bug). The includer picks the index type KS_IDX:
 * int64_t always works; the CUDA build adds int32_t variants, plain and traced, for
 * launches whose every size fits in 2^30 (ks_traced32.h). Each body walks its items with
 * ks_walk.h (no division per item) and hands each to an item function, instantiated
 * twice in the traced variant so that an item the filter drops runs the plain code.
 */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including im2col_body.h"
#endif
#include "../core/ks_probe.h"
#include "../core/ks_walk.h"
#include "im2col_args.h"

/* One im2col item (n, c_im, h_col, w_col): the kh*kw taps of its window into kh*kw rows
 * of the columns matrix (Ho*Wo apart), 0 for taps in the padding. The taps go in blocks
 * of `block_rows` rows (1, or 3 for the 3x3 instance: the whole window in one step) by 3
 * taps: the block's loads first, then its stores in tap order (a store between two loads
 * would make the second wait: the compiler cannot move a load above a store that may
 * alias it). Three rows at once in the general instance, or with probes, would spill
 * registers. */
KS_FN void KS_VARIANT(ks_im2col_item)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                      const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw,
                                      const KS_IDX block_rows, KS_IDX n, KS_IDX c_im, KS_IDX h_col, KS_IDX w_col,
                                      const int probing)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, HoWo = Ho * Wo;
    const KS_IDX taps = kh * kw;
    const KS_IDX c_index = n * C + c_im; /* the image plane */
    KS_ITEM_PROBE(ks_probe_fields(t, KS_IM2COL_SITE_WORK, n, c_im, h_col, w_col, 0, 0, 0, 0));
    const KS_IDX h_off = h_col * sh - (KS_IDX)a->pad_h;
    const KS_IDX w_off = w_col * sw - (KS_IDX)a->pad_w;
    const float *im = a->src + c_index * H * W;
    float *col = a->dst + (n * C + c_im) * taps * HoWo + h_col * Wo + w_col;
    for (KS_IDX i0 = 0; i0 < kh; i0 += block_rows) {
        for (KS_IDX j0 = 0; j0 < kw; j0 += 3) {
            float v[3][3];
            for (int r = 0; r < 3; ++r) {
                /* positions of taps past the window are not formed (a huge dilation would
                 * overflow the 32-bit variant's index) */
                const int tap_row = r < block_rows && i0 + r < kh;
                const KS_IDX h = tap_row ? h_off + (i0 + r) * dh : -1;
                const int row_in = tap_row && h >= 0 && h < H;
                for (int u = 0; u < 3; ++u) {
                    const KS_IDX w = j0 + u < kw ? w_off + (j0 + u) * dw : -1;
                    v[r][u] = row_in && w >= 0 && w < W ? im[h * W + w] : 0.0f;
                }
            }
            for (int r = 0; r < 3; ++r)
                for (int u = 0; u < 3; ++u) {
                    if (r >= block_rows || i0 + r >= kh || j0 + u >= kw) continue;
                    const KS_IDX tap = (i0 + r) * kw + j0 + u;
                    col[tap * HoWo] = v[r][u];
                    KS_ITEM_PROBE({
                        const KS_IDX h = h_off + (i0 + r) * dh, w = w_off + (j0 + u) * dw;
                        const int in = h >= 0 && h < H && w >= 0 && w < W;
                        ks_probe_read(t, KS_IM2COL_SITE_READ, KS_IM2COL_T_INPUT, (int)tap,
                                      in ? (int64_t)c_index * H * W + h * W + w : -1, c_index, h, w, v[r][u]);
                        ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_IM2COL_T_COLUMNS, (int)tap,
                                       (int64_t)(col - a->dst) + (int64_t)tap * HoWo, n, c_im * taps + tap,
                                       h_col * Wo + w_col, v[r][u], 0);
                    });
                }
        }
    }
}

/* im2col: one work item per (n, c_im, h_col, w_col), w_col fastest; column writes are
 * coalesced across neighbouring threads. The window's sizes come as arguments so that
 * ks_im2col_body can pass the common ones as constants (ks_im2col_is_unit3). */
KS_FN_INLINE void KS_VARIANT(ks_im2col_items)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                       const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw,
                                       const KS_IDX block_rows)
{
    const KS_IDX C = (KS_IDX)a->channels, Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX n_work = (KS_IDX)a->batch * C * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    if (index >= n_work) return;
    KS_VARIANT(ks_walk) at; /* at.d: w_col, h_col, c_im, n */
    KS_VARIANT(ks_walk_start)(&at, index, grid_stride, Wo, Ho, C);
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter, KS_VARIANT(ks_walk_step)(&at)) {
        if (KS_TRACED && ks_probe_start(t, index, iter))
            KS_VARIANT(ks_im2col_item)(t, a, kh, kw, sh, sw, dh, dw, 1, at.d[3], at.d[2], at.d[1], at.d[0], 1);
        else
            KS_VARIANT(ks_im2col_item)(t, a, kh, kw, sh, sw, dh, dw, block_rows, at.d[3], at.d[2], at.d[1], at.d[0], 0);
    }
}

KS_FN void KS_VARIANT(ks_im2col_body)(ks_thread *t, const ks_im2col_args *a)
{
    if (ks_im2col_is_unit3(a))
        KS_VARIANT(ks_im2col_items)(t, a, 3, 3, 1, 1, 1, 1, 3);
    else
        KS_VARIANT(ks_im2col_items)(t, a, (KS_IDX)a->kernel_h, (KS_IDX)a->kernel_w, (KS_IDX)a->stride_h,
                                    (KS_IDX)a->stride_w, (KS_IDX)a->dilation_h, (KS_IDX)a->dilation_w, 1);
}

/* One col2im item (n, c_im, h, w): the sum of every column entry that im2col copied from
 * this element. Tap (i, j) came from it at window position h_col = (h + ph - i*dh) / sh
 * (w_col likewise) when that divides exactly and lies in [0, Ho). The taps are walked
 * from (kh-1, kw-1) down, so h_col and w_col ascend (the sum order), keeping each
 * position as a quotient and remainder by the stride that a step of the dilation
 * advances without dividing. A row of taps goes four at a time, loads before adds (a
 * missing tap adds +0.0f, which leaves a sum that started at +0.0f bitwise unchanged). */
KS_FN void KS_VARIANT(ks_col2im_item)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                      const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw, KS_IDX index,
                                      KS_IDX n, KS_IDX c_im, KS_IDX h, KS_IDX w, const int probing)
{
    const KS_IDX C = (KS_IDX)a->channels;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, HoWo = Ho * Wo;
    const KS_IDX taps = kh * kw;
    const KS_IDX h_im = h + (KS_IDX)a->pad_h, w_im = w + (KS_IDX)a->pad_w; /* in the padded image */
    KS_ITEM_PROBE({
        const KS_IDX ext_h = (kh - 1) * dh + 1, ext_w = (kw - 1) * dw + 1;
        const KS_IDX w_col_end = w_im / sw + 1 < Wo ? w_im / sw + 1 : Wo;
        const KS_IDX h_col_end = h_im / sh + 1 < Ho ? h_im / sh + 1 : Ho;
        ks_probe_fields(t, KS_IM2COL_SITE_WORK, n, c_im, h_im, w_im, (h_im < ext_h) ? 0 : (h_im - ext_h) / sh + 1,
                        h_col_end, (w_im < ext_w) ? 0 : (w_im - ext_w) / sw + 1, w_col_end);
    });
    /* a step of the dilation in window positions: dq whole strides and dr left over */
    const KS_IDX dqh = sh == 1 ? dh : dh / sh, drh = dh - dqh * sh, dqw = sw == 1 ? dw : dw / sw, drw = dw - dqw * sw;
    /* tap (kh-1, kw-1)'s window position as quotient and remainder (floor division) */
    const KS_IDX h0 = h_im - (kh - 1) * dh, w0 = w_im - (kw - 1) * dw;
    KS_IDX qh = sh == 1 ? h0 : (h0 >= 0 ? h0 / sh : -((sh - 1 - h0) / sh)), rh = h0 - qh * sh;
    const KS_IDX qw0 = sw == 1 ? w0 : (w0 >= 0 ? w0 / sw : -((sw - 1 - w0) / sw)), rw0 = w0 - qw0 * sw;
    const float *col = a->src + (n * C + c_im) * taps * HoWo;
    float val = 0.0f;
    int tap = 0;
    for (KS_IDX i = kh - 1; i >= 0; --i) {
        if (rh == 0 && qh >= 0 && qh < Ho) {
            KS_IDX qw = qw0, rw = rw0;
            for (KS_IDX j0 = kw - 1; j0 >= 0; j0 -= 4) {
                float v[4];
                KS_IDX offs[4];
                for (int u = 0; u < 4; ++u) {
                    const int hit = j0 - u >= 0 && rw == 0 && qw >= 0 && qw < Wo;
                    offs[u] = hit ? (i * kw + j0 - u) * HoWo + qh * Wo + qw : -1;
                    v[u] = hit ? col[offs[u]] : 0.0f;
                    rw += drw, qw += dqw; /* the next tap to the left: w_col grows */
                    if (rw >= sw) rw -= sw, ++qw;
                }
                for (int u = 0; u < 4; ++u) {
                    val += v[u];
                    KS_ITEM_PROBE(if (offs[u] >= 0) ks_probe_read(t, KS_IM2COL_SITE_READ, KS_COL2IM_T_COLUMNS, tap++,
                                                                  (int64_t)(col - a->src) + offs[u], n,
                                                                  c_im * taps + offs[u] / HoWo, offs[u] % HoWo, v[u]));
                }
            }
        }
        rh += drh, qh += dqh; /* the next row of taps up: h_col grows */
        if (rh >= sh) rh -= sh, ++qh;
    }
    a->dst[index] = val;
    KS_ITEM_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_COL2IM_T_OUTPUT, 0, index, n * C + c_im, h, w, val, 0));
}

/* col2im in the gather form: one work item per image element (n, c_im, h, w), w fastest.
 * Each thread owns its output element, so there are no atomics and the sum order is
 * deterministic. Window sizes as arguments, as ks_im2col_items. */
KS_FN_INLINE void KS_VARIANT(ks_col2im_items)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                       const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX n_work = (KS_IDX)a->batch * C * H * W;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    if (index >= n_work) return;
    KS_VARIANT(ks_walk) at; /* at.d: w, h, c_im, n */
    KS_VARIANT(ks_walk_start)(&at, index, grid_stride, W, H, C);
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter, KS_VARIANT(ks_walk_step)(&at)) {
        if (KS_TRACED && ks_probe_start(t, index, iter))
            KS_VARIANT(ks_col2im_item)(t, a, kh, kw, sh, sw, dh, dw, index, at.d[3], at.d[2], at.d[1], at.d[0], 1);
        else
            KS_VARIANT(ks_col2im_item)(t, a, kh, kw, sh, sw, dh, dw, index, at.d[3], at.d[2], at.d[1], at.d[0], 0);
    }
}

KS_FN void KS_VARIANT(ks_col2im_body)(ks_thread *t, const ks_im2col_args *a)
{
    if (ks_im2col_is_unit3(a))
        KS_VARIANT(ks_col2im_items)(t, a, 3, 3, 1, 1, 1, 1);
    else
        KS_VARIANT(ks_col2im_items)(t, a, (KS_IDX)a->kernel_h, (KS_IDX)a->kernel_w, (KS_IDX)a->stride_h,
                                    (KS_IDX)a->stride_w, (KS_IDX)a->dilation_h, (KS_IDX)a->dilation_w);
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
