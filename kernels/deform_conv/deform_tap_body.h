/* deform_tap_body.h - the layer's fast deformable kernels, one work item per tap and
 * output position (written once for every variant, as deform_body.h). A tap's sampling
 * point, corners and weights do not depend on the channel, so an item places them once
 * and reuses them for the channels of its offset group; the teaching kernels in
 * deform_body.h place them again for every channel. Per entry the arithmetic is the
 * teaching kernels' own (the same helpers, the same order of sums), so
 *   im2col_tap == deformable_im2col bitwise, and
 *   grad_tap   == deformable_col2im_coord bitwise (grad_offset, grad_mask),
 *                 deformable_col2im up to the order of the atomic adds (grad_input).
 * Items run w_col fastest: consecutive threads read and write consecutive columns. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_tap_body.h"
#endif
#include "../core/ks_probe.h"
#define KS_DEFORM_DECL_ONLY /* deform_body.h's declarations, not its bodies (#undef at the end) */
#include "deform_body.h"

/* The sample of tap `tap` at output (h_col, w_col) of image b, offset group g: reads the
 * offset (and mask) once. */
typedef struct KS_VARIANT(ks_deform_tap) {
    KS_IDX oy, ox, mi; /* offset elements (dy, dx) and the mask element */
    float y, x, m;     /* the sampling point; the mask value (1 without a mask) */
} KS_VARIANT(ks_deform_tap);

KS_FN KS_VARIANT(ks_deform_tap) KS_VARIANT(ks_deform_tap_read)(ks_thread *t, const ks_deform_args *a, KS_IDX b,
                                                               KS_IDX g, KS_IDX tap, KS_IDX h_col, KS_IDX w_col)
{
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, kw = (KS_IDX)a->kernel_w;
    const KS_IDX kk = (KS_IDX)a->kernel_h * kw, G = (KS_IDX)a->offset_groups;
    const KS_IDX i = tap / kw, j = tap - i * kw;
    KS_VARIANT(ks_deform_tap) s;
    s.oy = (b * G + g) * 2 * kk * Ho * Wo + (2 * tap * Ho + h_col) * Wo + w_col;
    s.ox = s.oy + Ho * Wo;
    s.mi = (b * G + g) * kk * Ho * Wo + (tap * Ho + h_col) * Wo + w_col;
    const float dy = a->offset[s.oy], dx = a->offset[s.ox];
    KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, s.oy, s.oy / (Ho * Wo), h_col,
                           w_col, dy));
    KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, s.ox, s.ox / (Ho * Wo), h_col,
                           w_col, dx));
    s.y = (float)(h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h) + dy;
    s.x = (float)(w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w) + dx;
    s.m = 1.0f;
    if (a->use_mask) {
        s.m = a->mask[s.mi];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, s.mi, s.mi / (Ho * Wo), h_col,
                               w_col, s.m));
    }
    (void)t;
    return s;
}

/* What the backward needs of a sample for every channel: the corners the derivative reads
 * (bits 0-3 of m: inside the coordinate box and the image) and those col2im adds to (bits
 * 4-7, with their scatter weights sw), the fractions lh, lw, the blend weights pl.w, the
 * top-left corner (y0, x0) and its place at0 in a plane (corner k at at0 + (k>>1)*W +
 * (k&1)). `active` 0: a tile's idle thread, nothing read or added. */
typedef struct KS_VARIANT(ks_deform_corners) {
    ks_bilinear pl;
    float sw[4], lh, lw;
    KS_IDX y0, x0, at0;
    int in_box, coord_box, m;
} KS_VARIANT(ks_deform_corners);

KS_FN KS_VARIANT(ks_deform_corners)
    KS_VARIANT(ks_deform_corners_of)(const ks_deform_args *a, const KS_VARIANT(ks_deform_tap) *s, int active)
{
    const KS_IDX H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    KS_VARIANT(ks_deform_corners) c;
    c.in_box = active && ks_deform_in_box(s->y, s->x, H, W);
    c.coord_box = active && ks_deform_coord_box(s->y, s->x, H, W, a->semantics);
    /* read where the derivative needs them (a superset of the box) */
    const float fy = c.coord_box ? floorf(s->y) : 0.0f, fx = c.coord_box ? floorf(s->x) : 0.0f;
    c.lh = s->y - fy, c.lw = s->x - fx;
    c.y0 = (KS_IDX)fy, c.x0 = (KS_IDX)fx;
    c.at0 = c.y0 * W + c.x0;
    c.m = 0;
    ks_deform_place(H, W, s->y, s->x, &c.pl);
    for (int k = 0; k < 4; ++k) {
        int in = 0;
        c.sw[k] = c.in_box ? ks_deform_scatter_weight(s->y, s->x, c.y0, c.x0, k, H, W, &in) : 0.0f;
        c.m |= c.coord_box && ks_deform_corner_in(c.y0, c.x0, k, H, W) ? 1 << k : 0;
        c.m |= in ? 16 << k : 0;
    }
    return c;
}

/* The corners' values in plane `im` (0 where bit k of m is clear). */
KS_FN void KS_VARIANT(ks_deform_corner_values)(const float *im, KS_IDX at0, KS_IDX W, int m, float v[4])
{
    for (int k = 0; k < 4; ++k) v[k] = (m >> k) & 1 ? im[at0 + (k >> 1) * W + (k & 1)] : 0.0f;
}

/* im2col's entry for a channel from the backward's corner values v (write_columns): the
 * same bits as im2col_tap, whose corners are those inside the image (the backward reads
 * those and, outside the box, some that im2col does not: there the entry is 0). */
KS_FN float KS_VARIANT(ks_deform_im2col_entry)(const KS_VARIANT(ks_deform_corners) *cr, const float v[4], float m,
                                               int use_mask)
{
    const float blend = cr->in_box ? ks_deform_blend(cr->pl.w, v) : 0.0f;
    return use_mask ? blend * m : blend;
}

/* Writes a sample's gradients: grad_offset (dy, dx) and, with a mask, grad_mask. */
KS_FN void KS_VARIANT(ks_deform_tap_write)(ks_thread *t, const ks_deform_args *a, const KS_VARIANT(ks_deform_tap) *s,
                                           KS_IDX tap, KS_IDX h_col, KS_IDX w_col, float gy, float gx, float gm)
{
    const KS_IDX P = (KS_IDX)a->height_col * (KS_IDX)a->width_col;
    a->grad_offset[s->oy] = gy;
    a->grad_offset[s->ox] = gx;
    KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE_OFFSET, KS_DEFORM_T_GRAD_OFFSET, (int)tap, s->oy, s->oy / P, h_col,
                            w_col, gy, 0));
    KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE_OFFSET, KS_DEFORM_T_GRAD_OFFSET, (int)tap, s->ox, s->ox / P, h_col,
                            w_col, gx, 0));
    if (a->use_mask) {
        a->grad_mask[s->mi] = gm;
        KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE_MASK, KS_DEFORM_T_GRAD_MASK, (int)tap, s->mi, s->mi / P, h_col,
                                w_col, gm, 0));
    }
    (void)t, (void)P, (void)h_col, (void)w_col;
}

/* im2col by tap: one item per (channel block, tap, b, h_col, w_col), w_col fastest, the
 * block slowest; a block is KS_DEFORM_TAP_CHANNELS channels of one offset group (the
 * group's last block may be short). Writes rows (c*kh + i)*kw + j of its channels. */
KS_FN void KS_VARIANT(ks_deform_im2col_tap_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX nblk = (cpg + KS_DEFORM_TAP_CHANNELS - 1) / KS_DEFORM_TAP_CHANNELS; /* blocks per group */
    const KS_IDX n_work = G * nblk * kk * step * Ho * Wo, col_stride = step * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX pos = index % col_stride; /* (b*Ho + h_col)*Wo + w_col */
        const KS_IDX w_col = pos % Wo, h_col = (pos / Wo) % Ho, b = pos / (Ho * Wo);
        const KS_IDX tap = (index / col_stride) % kk, blk = index / col_stride / kk;
        const KS_IDX g = blk / nblk, c0 = g * cpg + (blk - g * nblk) * KS_DEFORM_TAP_CHANNELS;
        const KS_IDX c1 = c0 + KS_DEFORM_TAP_CHANNELS < (g + 1) * cpg ? c0 + KS_DEFORM_TAP_CHANNELS : (g + 1) * cpg;
        /* the item's place (blk, tap, b, h_col, w_col: the index's digits), its group and channels */
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, blk, tap, b, h_col, w_col, g, c0, c1 - c0));
        const KS_VARIANT(ks_deform_tap) s = KS_VARIANT(ks_deform_tap_read)(t, a, b, g, tap, h_col, w_col);
        ks_bilinear pl;
        ks_deform_place(H, W, s.y, s.x, &pl);
        /* corner k at at0 + (k>>1)*W + (k&1) in a plane; a corner outside reads nothing */
        const KS_IDX at0 = (KS_IDX)pl.y0 * W + (KS_IDX)pl.x0, plane = H * W, col_step = kk * col_stride;
        const float *im = a->input + (b * C + c0) * plane;
        float *col = a->col_out + (c0 * kk + tap) * col_stride + pos;
        for (KS_IDX c = c0; c < c1; ++c, im += plane, col += col_step) {
            float v[4];
            for (int k = 0; k < 4; ++k)
                v[k] = (pl.flags & (KS_FLAG_C00 << k)) ? im[at0 + (k >> 1) * W + (k & 1)] : 0.0f;
            const float blend = ks_deform_blend(pl.w, v);
            const float out = a->use_mask ? blend * s.m : blend;
            *col = out;
            KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c, s.y, s.x,
                                     pl.w[0], pl.w[1], pl.w[2], pl.w[3], blend, pl.flags));
            KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_COLUMNS, (int)tap, col - a->col_out, 0,
                                    c * kk + tap, pos, out, 0));
        }
    }
}
KS_KERNEL(ks_deform_im2col_tap, ks_deform_args)

/* The backward by tap (col2im and col2im_coord in one pass): one item per (b, g, tap,
 * h_col, w_col), w_col fastest. Over the group's channels in order it reads each
 * column-gradient entry and the sample's four corners once, and
 *   adds the entry (times the mask) to the corners of grad_input (atomics, as col2im),
 *   sums the coordinate derivatives into grad_offset (dy, dx) and the samples into
 *   grad_mask (as col2im_coord: the same products, the same order), and
 *   with write_columns, writes im2col's entry over the entry it read. */
KS_FN void KS_VARIANT(ks_deform_grad_tap_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX P = Ho * Wo, col_stride = step * P;
    const KS_IDX n_work = step * G * kk * P;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX q = index % P, w_col = q % Wo, h_col = q / Wo;
        const KS_IDX tap = (index / P) % kk, g = (index / P / kk) % G, b = index / P / kk / G;
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, b, g, tap, h_col, w_col, 0, 0, 0));
        const KS_VARIANT(ks_deform_tap) s = KS_VARIANT(ks_deform_tap_read)(t, a, b, g, tap, h_col, w_col);
        const KS_VARIANT(ks_deform_corners) cr = KS_VARIANT(ks_deform_corners_of)(a, &s, 1);
        float gy = 0.0f, gx = 0.0f, gm = 0.0f;
        for (KS_IDX cnt = 0; cnt < cpg; ++cnt) {
            const KS_IDX c = g * cpg + cnt;
            const KS_IDX col_pos = (c * kk + tap) * col_stride + b * P + q;
            const float cv = a->col_in[col_pos];
            const float *im = a->input + (b * C + c) * H * W;
            float *grad = a->grad_input + (b * C + c) * H * W;
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, col_pos, 0, c * kk + tap,
                                   b * P + q, cv));
            float v[4];
            KS_VARIANT(ks_deform_corner_values)(im, cr.at0, W, cr.m, v);
            const float top = ks_deform_grad_channel(v, cr.pl.w, cr.lh, cr.lw, cv, s.m, a->use_mask, cr.coord_box,
                                                     cr.in_box, &gy, &gx, &gm);
            if (a->write_columns) a->col_out[col_pos] = KS_VARIANT(ks_deform_im2col_entry)(&cr, v, s.m, a->use_mask);
            for (int k = 0; k < 4; ++k) {
                if (!((cr.m >> (4 + k)) & 1)) continue;
                const float d = cr.sw[k] * top;
                const KS_IDX at = cr.at0 + (k >> 1) * W + (k & 1);
                ks_atomic_add_f32(grad + at, d);
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_INPUT, (int)tap,
                                        (b * C + c) * H * W + at, b * C + c, cr.y0 + (k >> 1), cr.x0 + (k & 1), d, 1));
            }
            KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c, s.y, s.x,
                                     cr.pl.w[0], cr.pl.w[1], cr.pl.w[2], cr.pl.w[3], ks_deform_blend(cr.pl.w, v),
                                     cr.pl.flags));
        }
        KS_VARIANT(ks_deform_tap_write)(t, a, &s, tap, h_col, w_col, gy, gx, gm);
    }
}
KS_KERNEL(ks_deform_grad_tap, ks_deform_args)

/* A tile kernel's thread (grad_tile, grad_gather): entry (tap, in_tile) of tile `tile` (of
 * ts's th x tw positions, tiles over (b, g, rows, columns), columns fastest), its work event
 * (iteration `iter`), its sample (read only when active) and corners, the window's
 * top-left pixel (ry0, rx0: the taps' reach less the margin, rx0 down to a multiple of 4),
 * and bits 8-11 of cr.m: corner k lies in the window of ts's rh x rw pixels. */
typedef struct KS_VARIANT(ks_deform_tile_item) {
    KS_IDX b, g, h_col, w_col, ry0, rx0;
    int active;
    KS_VARIANT(ks_deform_tap) s;
    KS_VARIANT(ks_deform_corners) cr;
} KS_VARIANT(ks_deform_tile_item);

KS_FN KS_VARIANT(ks_deform_tile_item)
    KS_VARIANT(ks_deform_tile_item_of)(ks_thread *t, const ks_deform_args *a, const ks_deform_tile *ts, KS_IDX tile,
                                       KS_IDX tap, KS_IDX in_tile, uint32_t iter)
{
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, G = (KS_IDX)a->offset_groups;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX TH = (KS_IDX)ts->th, TW = (KS_IDX)ts->tw, RH = (KS_IDX)ts->rh, RW = (KS_IDX)ts->rw;
    const KS_IDX tiles_y = (Ho + TH - 1) / TH, tiles_x = (Wo + TW - 1) / TW;
    const KS_IDX tx = tile % tiles_x, ty = (tile / tiles_x) % tiles_y;
    KS_VARIANT(ks_deform_tile_item) it;
    it.g = (tile / tiles_x / tiles_y) % G, it.b = tile / tiles_x / tiles_y / G;
    it.h_col = ty * TH + in_tile / TW, it.w_col = tx * TW + in_tile % TW;
    it.active = tap < kk && it.h_col < Ho && it.w_col < Wo;
    it.ry0 = ty * TH * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h - KS_DEFORM_TILE_MARGIN;
    const KS_IDX rx_lo = tx * TW * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w - KS_DEFORM_TILE_MARGIN;
    it.rx0 = rx_lo - ((rx_lo % 4) + 4) % 4; /* down to a multiple of 4 */
    const KS_VARIANT(ks_deform_tap) none = {0, 0, 0, 0.0f, 0.0f, 1.0f};
    it.s = none;
    if (it.active) {
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, (((it.b * G + it.g) * kk + tap) * Ho + it.h_col) * Wo + it.w_col,
                               iter, it.b, it.g, tap, it.h_col, it.w_col, 0, 0, 0));
        it.s = KS_VARIANT(ks_deform_tap_read)(t, a, it.b, it.g, tap, it.h_col, it.w_col);
    }
    it.cr = KS_VARIANT(ks_deform_corners_of)(a, &it.s, it.active);
    for (int k = 0; k < 4; ++k) {
        const KS_IDX yy = it.cr.y0 + (k >> 1), xx = it.cr.x0 + (k & 1);
        it.cr.m |= yy >= it.ry0 && yy < it.ry0 + RH && xx >= it.rx0 && xx < it.rx0 + RW ? 256 << k : 0;
    }
    (void)iter;
    return it;
}

#include "deform_tile_body.h"   /* the same work with a shared window: grad_tile */
#include "deform_gather_body.h" /* and with per-pixel sums: grad_gather */
#undef KS_DEFORM_DECL_ONLY
