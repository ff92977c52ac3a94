/* deform_tile_body.h - the backward by tile: grad_tap's work (col2im and col2im_coord in
 * one pass), one block per tile of th x tw output positions of one image and offset
 * group, thread (tap, position) of the tile. A sample's corners and col2im weights do
 * not depend on the channel, so once per tile the block files every corner that lands in
 * the tile's window (the taps' reach plus a margin, columns aligned to 4) under its
 * window pixel: a list of (thread, weight), at most KS_DEFORM_TILE_LIST long. Then per
 * channel each thread leaves its column gradient (times the mask) in shared memory, and
 * each window pixel sums its list and goes to grad_input with one global atomic per four
 * pixels (a vector atomic where W is a multiple of 4). A 2x8 tile of a 3x3 kernel makes
 * up to 576 corner adds per channel; its 13x24 window takes 78 vector atomics, and no
 * float atomic touches shared memory (on this GPU one is a compare-and-swap loop). A
 * corner outside the window, or past a full list, is added to global memory directly.
 * Up to `windows` channels share a barrier phase. grad_offset and grad_mask are
 * grad_tap's sums in grad_tap's order: bitwise the same. Launch: blocks over tiles
 * (grid-stride), kh*kw*th*tw threads (ks_deform_tile_of), ks_sim_launch_coop in the
 * simulator. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_tile_body.h"
#endif
#include "../core/ks_probe.h"
#include "../core/ks_shared.h"
#include "deform_args.h"
#include "deform_bilinear.h"
/* uses ks_deform_tap and ks_deform_tap_read of deform_tap_body.h (which includes this
 * file at its end, in the same variant) */

KS_FN void KS_VARIANT(ks_deform_grad_tile_body)(ks_thread *t, const ks_deform_args *a)
{
    /* per window pixel: its list's length, and the list (thread, weight) at
     * pixel*KS_DEFORM_TILE_LIST + e; per channel of a phase and thread: its column
     * gradient times the mask at j*nthreads + thread */
    KS_SHARED(int32_t, list_len, KS_DEFORM_TILE_SLOTS);
    KS_SHARED(int32_t, list_who, KS_DEFORM_TILE_SLOTS * KS_DEFORM_TILE_LIST);
    KS_SHARED(float, list_w, KS_DEFORM_TILE_SLOTS * KS_DEFORM_TILE_LIST);
    KS_SHARED(float, tops, KS_DEFORM_TILE_WINDOWS_MAX * 512);
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX P = Ho * Wo, col_stride = step * P;
    const ks_deform_tile ts = ks_deform_tile_of(a);
    const KS_IDX TH = (KS_IDX)ts.th, TW = (KS_IDX)ts.tw, RH = (KS_IDX)ts.rh, RW = (KS_IDX)ts.rw;
    const KS_IDX NWIN = (KS_IDX)ts.windows, RW4 = RW / 4, L = KS_DEFORM_TILE_LIST;
    const KS_IDX tiles_y = (Ho + TH - 1) / TH, tiles_x = (Wo + TW - 1) / TW;
    const KS_IDX n_tiles = step * G * tiles_y * tiles_x, nthreads = (KS_IDX)t->block_dim.x;
    const KS_IDX me = (KS_IDX)t->thread_idx.x, tap = me / (TH * TW), in_tile = me - tap * TH * TW;
    /* the sums' first unit of four pixels and its stride, as (row, unit) */
    const KS_IDX r_first = me / RW4, u_first = me % RW4, dr = nthreads / RW4, du = nthreads % RW4;
    /* vector atomics: rows of a multiple of 4 floats and an aligned tensor keep every
     * group of four 16-byte aligned */
    const int vec4 = W % 4 == 0 && ((uintptr_t)a->grad_input & 15) == 0;
    KS_PROBE(ks_shared_trace(t, KS_DEFORM_T_GRAD_INPUT, KS_DEFORM_SITE_TILE, KS_DEFORM_TILE_SLOTS * L / RW + 1, RW));
    /* every thread of a block takes the same tiles: the barriers are reached by all */
    uint32_t iter = 0;
    for (KS_IDX tile = (KS_IDX)t->block_idx.x; tile < n_tiles; tile += (KS_IDX)t->grid_dim.x, ++iter) {
        const KS_IDX tx = tile % tiles_x, ty = (tile / tiles_x) % tiles_y;
        const KS_IDX g = (tile / tiles_x / tiles_y) % G, b = tile / tiles_x / tiles_y / G;
        const KS_IDX h_col = ty * TH + in_tile / TW, w_col = tx * TW + in_tile % TW;
        const int active = tap < kk && h_col < Ho && w_col < Wo;
        const KS_IDX ry0 = ty * TH * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h - KS_DEFORM_TILE_MARGIN;
        const KS_IDX rx_lo = tx * TW * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w - KS_DEFORM_TILE_MARGIN;
        const KS_IDX rx0 = rx_lo - ((rx_lo % 4) + 4) % 4; /* down to a multiple of 4 */
        const KS_IDX q = h_col * Wo + w_col;
        if (active) {
            KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, (((b * G + g) * kk + tap) * Ho + h_col) * Wo + w_col, iter,
                                   b, g, tap, h_col, w_col, 0, 0, 0));
        }
        for (KS_IDX i = me; i < RH * RW; i += nthreads) ks_shared_store_i32(t, list_len, i, 0);
        /* the sample's geometry, as grad_tap's; a corner k sits at at0 + (k>>1)*W + (k&1) in
         * the plane. m: bits 0-3 the corners the derivative reads, 4-7 those col2im adds
         * to, 8-11 those it adds to directly (outside the window, or a full list) */
        KS_VARIANT(ks_deform_tap) s = {0, 0, 0, 0.0f, 0.0f, 1.0f};
        if (active) s = KS_VARIANT(ks_deform_tap_read)(t, a, b, g, tap, h_col, w_col);
        const int in_box = active && ks_deform_in_box(s.y, s.x, H, W);
        const int coord_box = active && ks_deform_coord_box(s.y, s.x, H, W, a->semantics);
        const float fy = coord_box ? floorf(s.y) : 0.0f, fx = coord_box ? floorf(s.x) : 0.0f;
        const float lh = s.y - fy, lw = s.x - fx;
        const KS_IDX y0 = (KS_IDX)fy, x0 = (KS_IDX)fx;
        const KS_IDX at0 = y0 * W + x0;
        int m = 0;
        float sw[4];
        ks_bilinear pl;
        ks_deform_place(H, W, s.y, s.x, &pl);
        for (int k = 0; k < 4; ++k) {
            int in = 0;
            sw[k] = in_box ? ks_deform_scatter_weight(s.y, s.x, y0, x0, k, H, W, &in) : 0.0f;
            m |= coord_box && ks_deform_corner_in(y0, x0, k, H, W) ? 1 << k : 0;
            m |= in ? (16 | 256) << k : 0;
        }
        ks_syncthreads(t); /* the lists are empty */
        for (int k = 0; k < 4; ++k) {
            const KS_IDX yy = y0 + (k >> 1) - ry0, xx = x0 + (k & 1) - rx0;
            if (!((m >> (4 + k)) & 1) || yy < 0 || yy >= RH || xx < 0 || xx >= RW) continue;
            const KS_IDX px = yy * RW + xx;
            const int32_t e = ks_shared_atomic_add_i32(t, list_len, px, 1);
            if (e >= L) continue; /* full: added directly */
            ks_shared_store_i32(t, list_who, px * L + e, (int32_t)me);
            ks_shared_store(t, list_w, px * L + e, sw[k]);
            m &= ~(256 << k);
        }
        ks_syncthreads(t); /* the lists are whole */
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
                for (int k = 0; k < 4; ++k) v[k] = (m >> k) & 1 ? im[at0 + (k >> 1) * W + (k & 1)] : 0.0f;
                const float cwy = coord_box ? ks_deform_coord_from(v, lh, lw, 0) : 0.0f;
                const float cwx = coord_box ? ks_deform_coord_from(v, lh, lw, 1) : 0.0f;
                gy = a->use_mask ? fmaf(cwy * cv, s.m, gy) : fmaf(cwy, cv, gy);
                gx = a->use_mask ? fmaf(cwx * cv, s.m, gx) : fmaf(cwx, cv, gx);
                if (a->use_mask && in_box) gm = fmaf(cv, ks_deform_blend(pl.w, v), gm);
                const float top = a->use_mask ? cv * s.m : cv;
                ks_shared_store(t, tops, j * nthreads + me, top);
                for (int k = 0; k < 4; ++k) { /* the corners no list holds go now */
                    if (!((m >> (4 + k)) & 1)) continue;
                    const float d = sw[k] * top;
                    const KS_IDX off = (k >> 1) * W + (k & 1);
                    if ((m >> (8 + k)) & 1) ks_atomic_add_f32(grad + at0 + off, d);
                    KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_INPUT, (int)tap,
                                            (b * C + c0 + j) * plane + at0 + off, b * C + c0 + j, y0 + (k >> 1),
                                            x0 + (k & 1), d, 1));
                }
                KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c0 + j, s.y, s.x,
                                         pl.w[0], pl.w[1], pl.w[2], pl.w[3], ks_deform_blend(pl.w, v), pl.flags));
            }
            ks_syncthreads(t); /* every thread's column gradients of these channels are in */
            /* each window pixel's sum over its list, four pixels at a time (only in-image
             * corners are listed, and with W a multiple of 4 a group of four is all in the
             * row or all out); unit (r, u4) walked without division */
            KS_IDX r = r_first, u4 = u_first;
            for (KS_IDX u = me; u < RH * RW4; u += nthreads) {
                const KS_IDX px0 = r * RW + 4 * u4;
                int32_t n[4];
                int any = 0;
                for (int e = 0; e < 4; ++e) {
                    const int32_t len = ks_shared_load_i32(t, list_len, px0 + e);
                    n[e] = len < L ? len : (int32_t)L;
                    any |= n[e] > 0;
                }
                if (any) {
                    for (KS_IDX j = 0; j < nw; ++j) {
                        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                        for (int e = 0; e < 4; ++e)
                            for (int32_t i = 0; i < n[e]; ++i) {
                                const KS_IDX at = (px0 + e) * L + i;
                                const int32_t who = ks_shared_load_i32(t, list_who, at);
                                sum[e] = fmaf(ks_shared_load(t, list_w, at), ks_shared_load(t, tops, j * nthreads + who),
                                              sum[e]);
                            }
                        float *dst = a->grad_input + (b * C + c0 + j) * plane + (ry0 + r) * W + rx0 + 4 * u4;
                        if (vec4) ks_atomic_add_f32x4(dst, sum);
                        else
                            for (int e = 0; e < 4; ++e)
                                if (n[e] > 0) ks_atomic_add_f32(dst + e, sum[e]);
                    }
                }
                u4 += du, r += dr;
                if (u4 >= RW4) u4 -= RW4, ++r;
            }
            ks_syncthreads(t); /* nobody reads these channels' column gradients any more */
        }
        if (active) {
            a->grad_offset[s.oy] = gy;
            a->grad_offset[s.ox] = gx;
            KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_OFFSET, (int)tap, s.oy, s.oy / P, h_col,
                                    w_col, gy, 0));
            KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_OFFSET, (int)tap, s.ox, s.ox / P, h_col,
                                    w_col, gx, 0));
            if (a->use_mask) {
                a->grad_mask[s.mi] = gm;
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE_MASK, KS_DEFORM_T_GRAD_MASK, (int)tap, s.mi, s.mi / P,
                                        h_col, w_col, gm, 0));
            }
        }
    }
}
