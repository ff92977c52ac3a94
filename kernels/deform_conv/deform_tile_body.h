/* deform_tile_body.h - the backward by tile: grad_tap's work (col2im and col2im_coord in
 * one pass), one block per tile of th x tw output positions of one image and offset
 * group, thread (tap, position) of the tile. A tap's samples land near its window, so
 * the block adds each channel's contributions to grad_input into a shared window of the
 * plane first (shared atomics), then adds the window's touched pixels to global memory,
 * four at a time where rows allow (W a multiple of 4: one vector atomic per 4 pixels):
 * a 4x8 tile of a 3x3 kernel makes 1152 adds per channel, its 15x24 window 90 vector
 * atomics. A corner outside the window (an offset past the margin) is added to global
 * memory directly. Up to KS_DEFORM_TILE_WINDOWS channels share a barrier phase. grad_offset and grad_mask
 * are grad_tap's sums in grad_tap's order: bitwise the same. With write_columns it writes
 * im2col's entry over each column-gradient entry it reads, as grad_tap does. Launch: blocks over tiles
 * (grid-stride), kh*kw*th*tw threads (ks_deform_tile_of), ks_sim_launch_coop in the
 * simulator. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_tile_body.h"
#endif
#include "../core/ks_probe.h"
#include "../core/ks_shared.h"
#define KS_DEFORM_DECL_ONLY /* deform_body.h's declarations, not its bodies (#undef at the end) */
#include "deform_body.h"
/* uses ks_deform_tap and ks_deform_tap_read of deform_tap_body.h (which includes this
 * file at its end, in the same variant) */

KS_FN void KS_VARIANT(ks_deform_grad_tile_body)(ks_thread *t, const ks_deform_args *a)
{
    KS_SHARED(float, win, KS_DEFORM_TILE_CAP); /* the window: pixel (ry0 + r, rx0 + q) at r*rw + q */
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX P = Ho * Wo, col_stride = step * P;
    const ks_deform_tile ts = ks_deform_tile_of(a);
    const KS_IDX TH = (KS_IDX)ts.th, TW = (KS_IDX)ts.tw, RH = (KS_IDX)ts.rh, RW = (KS_IDX)ts.rw;
    const KS_IDX NWIN = (KS_IDX)ts.windows, RW4 = RW / 4;
    const KS_IDX tiles_y = (Ho + TH - 1) / TH, tiles_x = (Wo + TW - 1) / TW;
    const KS_IDX n_tiles = step * G * tiles_y * tiles_x, nthreads = (KS_IDX)t->block_dim.x;
    const KS_IDX me = (KS_IDX)t->thread_idx.x, tap = me / (TH * TW), in_tile = me - tap * TH * TW;
    /* the flush's first unit of four and its stride, as (row, unit) */
    const KS_IDX r_first = me / RW4, u_first = me % RW4, dr = nthreads / RW4, du = nthreads % RW4;
    /* vector atomics: rows of a multiple of 4 floats and an aligned tensor keep every
     * group of four 16-byte aligned */
    const int vec4 = W % 4 == 0 && ((uintptr_t)a->grad_input & 15) == 0;
    KS_PROBE(ks_shared_trace(t, KS_DEFORM_T_GRAD_INPUT, KS_DEFORM_SITE_TILE, RH, RW));
    /* every thread of a block takes the same tiles: the barriers are reached by all */
    uint32_t iter = 0;
    for (KS_IDX tile = (KS_IDX)t->block_idx.x; tile < n_tiles; tile += (KS_IDX)t->grid_dim.x, ++iter) {
        /* the item, its sample's corners as grad_tap's (ks_deform_corners_of); bits 8-11 of
         * m: the corners inside the window, corner k at slot0 + (k>>1)*RW + (k&1) there */
        const KS_VARIANT(ks_deform_tile_item) it = KS_VARIANT(ks_deform_tile_item_of)(t, a, &ts, tile, tap, in_tile,
                                                                                      iter);
        const KS_IDX b = it.b, g = it.g, h_col = it.h_col, w_col = it.w_col, ry0 = it.ry0, rx0 = it.rx0;
        const int active = it.active;
        const KS_VARIANT(ks_deform_tap) s = it.s;
        const KS_VARIANT(ks_deform_corners) cr = it.cr;
        const KS_IDX q = h_col * Wo + w_col, slot0 = (cr.y0 - ry0) * RW + (cr.x0 - rx0);
        for (KS_IDX i = me; i < NWIN * RH * RW; i += nthreads) ks_shared_store(t, win, i, 0.0f);
        ks_syncthreads(t); /* the windows are zero */
        float gy = 0.0f, gx = 0.0f, gm = 0.0f;
        const KS_IDX plane = H * W, col_step = kk * col_stride;
        for (KS_IDX c0 = g * cpg; c0 < (g + 1) * cpg; c0 += NWIN) {
            const KS_IDX nw = (g + 1) * cpg - c0 < NWIN ? (g + 1) * cpg - c0 : NWIN; /* channels this phase */
            const float *im = a->input + (b * C + c0) * plane;
            float *grad = a->grad_input + (b * C + c0) * plane;
            const float *colp = a->col_in + (c0 * kk + tap) * col_stride + b * P + q;
            for (KS_IDX j = 0; j < nw && active; ++j, im += plane, grad += plane, colp += col_step) {
                const float cv = *colp;
                KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, colp - a->col_in, 0,
                                       (c0 + j) * kk + tap, b * P + q, cv));
                float v[4];
                KS_VARIANT(ks_deform_corner_values)(im, cr.at0, W, cr.m, v);
                const float top = ks_deform_grad_channel(v, cr.pl.w, cr.lh, cr.lw, cv, s.m, a->use_mask, cr.coord_box,
                                                         cr.in_box, &gy, &gx, &gm);
                if (a->write_columns)
                    a->col_out[colp - a->col_in] = KS_VARIANT(ks_deform_im2col_entry)(&cr, v, s.m, a->use_mask);
                for (int k = 0; k < 4; ++k) {
                    if (!((cr.m >> (4 + k)) & 1)) continue;
                    const float d = cr.sw[k] * top;
                    const KS_IDX off = (k >> 1) * W + (k & 1);
                    if ((cr.m >> (8 + k)) & 1)
                        ks_shared_atomic_add(t, win, j * RH * RW + slot0 + (k >> 1) * RW + (k & 1), d);
                    else ks_atomic_add_f32(grad + cr.at0 + off, d);
                    KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_INPUT, (int)tap,
                                            (b * C + c0 + j) * plane + cr.at0 + off, b * C + c0 + j, cr.y0 + (k >> 1),
                                            cr.x0 + (k & 1), d, 1));
                }
                KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c0 + j, s.y,
                                         s.x, cr.pl.w[0], cr.pl.w[1], cr.pl.w[2], cr.pl.w[3],
                                         ks_deform_blend(cr.pl.w, v), cr.pl.flags));
            }
            ks_syncthreads(t); /* every add of these channels is in their windows */
            /* the windows' touched pixels to global memory, four at a time (only in-image
             * corners were added, and with W a multiple of 4 a group of four is all in
             * the row or all out), and back to zero; unit (r, u4) walked without division */
            for (KS_IDX j = 0; j < nw; ++j) {
                float *grad = a->grad_input + (b * C + c0 + j) * H * W;
                KS_IDX r = r_first, u4 = u_first;
                for (KS_IDX u = me; u < RH * RW4; u += nthreads) {
                    const KS_IDX base = j * RH * RW + r * RW + 4 * u4;
                    float v[4];
                    int any = 0;
                    for (int e = 0; e < 4; ++e) {
                        v[e] = ks_shared_load(t, win, base + e);
                        any |= v[e] != 0.0f;
                    }
                    if (any) {
                        float *dst = grad + (ry0 + r) * W + rx0 + 4 * u4;
                        if (vec4) ks_atomic_add_f32x4(dst, v);
                        else
                            for (int e = 0; e < 4; ++e)
                                if (v[e] != 0.0f) ks_atomic_add_f32(dst + e, v[e]);
                        for (int e = 0; e < 4; ++e) ks_shared_store(t, win, base + e, 0.0f);
                    }
                    u4 += du, r += dr;
                    if (u4 >= RW4) u4 -= RW4, ++r;
                }
            }
            ks_syncthreads(t); /* the windows are zero again */
        }
        if (active) KS_VARIANT(ks_deform_tap_write)(t, a, &s, tap, h_col, w_col, gy, gx, gm);
    }
}
/* at most 64 registers: two 512-thread blocks (or three of a 3x3 kernel's 288) per SM */
KS_KERNEL_ATTR(ks_deform_grad_tile, ks_deform_args, __launch_bounds__(512, 2), __launch_bounds__(512, 2))
#undef KS_DEFORM_DECL_ONLY
