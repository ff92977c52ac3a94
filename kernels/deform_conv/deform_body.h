/* deform_body.h - the three deformable-convolution kernels, written once (see
 * im2col_body.h for how the plain and traced variants are made). Names follow mmcv's
 * deform_conv_cuda_kernel.cuh, so the lesson text, the reference and this file read
 * alike. `im2col_step` images per launch; b is the image within the chunk.
 *
 * A tap (i, j) of output position (h_col, w_col) samples
 *   y = (h_col*sh - ph + i*dh) + dy,   x = (w_col*sw - pw + j*dw) + dx
 * with (dy, dx) = offset[b, g*2*kh*kw + 2*(i*kw + j) + {0, 1}, h_col, w_col].
 */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_body.h"
#endif
#include "../core/ks_probe.h"
#include "deform_args.h"
#include "deform_bilinear.h"

/* deformable_im2col: one work item per (c_im, b, h_col, w_col), w_col fastest. It writes
 * the kh*kw taps of its window into rows (c_im*kh + i)*kw + j of the columns matrix,
 * im2col_step*Ho*Wo apart: the blended sample, times the mask with one. */
KS_FN void KS_VARIANT(ks_deform_im2col_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w, kk = kh * kw;
    const KS_IDX im2col_step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups;
    const KS_IDX n_work = C * im2col_step * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_col = (index / Wo) % Ho;
        const KS_IDX b = (index / Wo / Ho) % im2col_step;
        const KS_IDX c_im = index / Wo / Ho / im2col_step;
        const KS_IDX g = c_im / (C / G); /* the offset group of this channel */
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, c_im, b, h_col, w_col, g, 0, 0, 0));
        const KS_IDX h_in = h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h;
        const KS_IDX w_in = w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w;
        const float *im = a->input + (b * C + c_im) * H * W;
        const KS_IDX off0 = (b * G + g) * 2 * kk * Ho * Wo + h_col * Wo + w_col;
        const KS_IDX mask0 = (b * G + g) * kk * Ho * Wo + h_col * Wo + w_col;
        float *col = a->col_out + ((c_im * kk * im2col_step + b) * Ho + h_col) * Wo + w_col;
        for (KS_IDX i = 0; i < kh; ++i) {
            for (KS_IDX j = 0; j < kw; ++j) {
                const KS_IDX tap = i * kw + j;
                const KS_IDX oy = off0 + 2 * tap * Ho * Wo, ox = oy + Ho * Wo;
                const float dy = a->offset[oy], dx = a->offset[ox];
                const float y = (float)(h_in + i * (KS_IDX)a->dilation_h) + dy;
                const float x = (float)(w_in + j * (KS_IDX)a->dilation_w) + dx;
                ks_bilinear s;
                ks_deform_bilinear(im, H, W, y, x, &s);
                float v = s.value;
                KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, oy, oy / (Ho * Wo),
                                       h_col, w_col, dy));
                KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, ox, ox / (Ho * Wo),
                                       h_col, w_col, dx));
                KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c_im, y, x,
                                         s.w[0], s.w[1], s.w[2], s.w[3], s.value, s.flags));
                if (a->use_mask) {
                    const KS_IDX mi = mask0 + tap * Ho * Wo;
                    const float m = a->mask[mi];
                    v *= m;
                    KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, mi, mi / (Ho * Wo),
                                           h_col, w_col, m));
                }
                *col = v;
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_COLUMNS, (int)tap, col - a->col_out, 0,
                                        (c_im * kk + tap), (b * Ho + h_col) * Wo + w_col, v, 0));
                col += im2col_step * Ho * Wo;
            }
        }
    }
}
KS_KERNEL(ks_deform_im2col, ks_deform_args)

/* deformable_col2im: one work item per columns entry (c, i, j, b, h_col, w_col), w_col
 * fastest (the entry's own index). It scatters the entry's gradient (times the mask) to
 * the corners its sample blended, with the same weights: atomic adds, since the taps of
 * many threads land on one pixel. Corners are floor(y) and floor(y)+1 within distance 1
 * (mmcv searches a 5x5 window around the truncated position, torchvision 3x3: the same
 * set). */
KS_FN void KS_VARIANT(ks_deform_col2im_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w, kk = kh * kw;
    const KS_IDX im2col_step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups;
    const KS_IDX n_work = C * kk * im2col_step * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_col = (index / Wo) % Ho;
        const KS_IDX b = (index / Wo / Ho) % im2col_step;
        const KS_IDX j = (index / Wo / Ho / im2col_step) % kw;
        const KS_IDX i = (index / Wo / Ho / im2col_step / kw) % kh;
        const KS_IDX c = index / Wo / Ho / im2col_step / kk;
        const KS_IDX g = c / (C / G);
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, c, i, j, b, h_col, w_col, g, 0));
        const KS_IDX tap = i * kw + j;
        const KS_IDX oy = (b * G + g) * 2 * kk * Ho * Wo + (2 * tap * Ho + h_col) * Wo + w_col;
        const KS_IDX ox = oy + Ho * Wo;
        const float dy = a->offset[oy], dx = a->offset[ox];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, oy, oy / (Ho * Wo), h_col,
                               w_col, dy));
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, ox, ox / (Ho * Wo), h_col,
                               w_col, dx));
        const float y = (float)(h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h) + dy;
        const float x = (float)(w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w) + dx;
        float top = a->col_in[index];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, index, 0, c * kk + tap,
                               (b * Ho + h_col) * Wo + w_col, top));
        if (a->use_mask) {
            const KS_IDX mi = (b * G + g) * kk * Ho * Wo + (tap * Ho + h_col) * Wo + w_col;
            const float m = a->mask[mi];
            top *= m;
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, mi, mi / (Ho * Wo), h_col,
                                   w_col, m));
        }
        float w4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        int flags = 0;
        if (ks_deform_in_box(y, x, H, W)) {
            const KS_IDX y0 = (KS_IDX)floorf(y), x0 = (KS_IDX)floorf(x);
            float *grad = a->grad_input + (b * C + c) * H * W;
            for (int k = 0; k < 4; ++k) {
                const KS_IDX yy = y0 + (k >> 1), xx = x0 + (k & 1);
                int in;
                w4[k] = ks_deform_scatter_weight(y, x, y0, x0, k, H, W, &in);
                if (!in) continue;
                flags |= KS_FLAG_C00 << k;
                const float add = w4[k] * top;
                ks_atomic_add_f32(grad + yy * W + xx, add);
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_INPUT, (int)tap,
                                        (b * C + c) * H * W + yy * W + xx, b * C + c, yy, xx, add, 1));
            }
        }
        KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_GRAD_INPUT, (int)tap, b * C + c, y, x, w4[0],
                                 w4[1], w4[2], w4[3], top, flags));
    }
}
KS_KERNEL(ks_deform_col2im, ks_deform_args)

/* deformable_col2im_coord: one work item per offset element (b, g, tap, dir, h_col,
 * w_col), w_col fastest; no atomics. The gradient of offset (dy or dx) of one tap sums,
 * over every channel of the offset group, the column gradient times the derivative of
 * that channel's sample. With a mask the y item also writes the mask gradient: the
 * column gradient times the sample, summed the same way. */
KS_FN void KS_VARIANT(ks_deform_coord_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w, kk = kh * kw;
    const KS_IDX im2col_step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups;
    const KS_IDX cpg = C / G; /* channels per offset group */
    const KS_IDX n_work = im2col_step * G * 2 * kk * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_col = (index / Wo) % Ho;
        const KS_IDX dir = (index / Wo / Ho) % 2; /* 0: dy, 1: dx */
        const KS_IDX tap = (index / Wo / Ho / 2) % kk;
        const KS_IDX g = (index / Wo / Ho / 2 / kk) % G;
        const KS_IDX b = index / Wo / Ho / 2 / kk / G;
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, b, g, tap, dir, h_col, w_col, 0, 0));
        const KS_IDX i = tap / kw, j = tap % kw;
        const KS_IDX oy = (b * G + g) * 2 * kk * Ho * Wo + (2 * tap * Ho + h_col) * Wo + w_col;
        const KS_IDX ox = oy + Ho * Wo;
        const float dy = a->offset[oy], dx = a->offset[ox];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, oy, oy / (Ho * Wo), h_col,
                               w_col, dy));
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, ox, ox / (Ho * Wo), h_col,
                               w_col, dx));
        const float y = (float)(h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h) + dy;
        const float x = (float)(w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w) + dx;
        const KS_IDX mi = (b * G + g) * kk * Ho * Wo + (tap * Ho + h_col) * Wo + w_col;
        float m = 1.0f;
        if (a->use_mask) {
            m = a->mask[mi];
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, mi, mi / (Ho * Wo), h_col,
                                   w_col, m));
        }
        const int in_box = ks_deform_in_box(y, x, H, W);
        float val = 0.0f, mval = 0.0f;
        for (KS_IDX cnt = 0; cnt < cpg; ++cnt) {
            const KS_IDX c = g * cpg + cnt;
            const KS_IDX row = c * kk + tap;
            const KS_IDX col_pos = ((row * im2col_step + b) * Ho + h_col) * Wo + w_col;
            const float cv = a->col_in[col_pos];
            const float *im = a->input + (b * C + c) * H * W;
            const float cw = ks_deform_coord_weight(im, H, W, y, x, (int)dir, a->semantics);
            val = a->use_mask ? fmaf(cw * cv, m, val) : fmaf(cw, cv, val);
            ks_bilinear s = {.y0 = 0, .x0 = 0, .w = {0.0f, 0.0f, 0.0f, 0.0f}, .value = 0.0f, .flags = 0};
            if (KS_TRACED || (a->use_mask && dir == 0)) ks_deform_bilinear(im, H, W, y, x, &s);
            if (a->use_mask && dir == 0 && in_box) mval = fmaf(cv, s.value, mval);
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, col_pos, 0, row,
                                   (b * Ho + h_col) * Wo + w_col, cv));
            /* the sample point with its bilinear weights; the value is its derivative */
            KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c, y, x, s.w[0],
                                     s.w[1], s.w[2], s.w[3], cw, s.flags));
        }
        a->grad_offset[dir ? ox : oy] = val;
        KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_OFFSET, (int)tap, dir ? ox : oy,
                                (dir ? ox : oy) / (Ho * Wo), h_col, w_col, val, 0));
        if (a->use_mask && dir == 0) {
            a->grad_mask[mi] = mval;
            KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE_MASK, KS_DEFORM_T_GRAD_MASK, (int)tap, mi, mi / (Ho * Wo),
                                    h_col, w_col, mval, 0));
        }
    }
}
KS_KERNEL(ks_deform_coord, ks_deform_args)
