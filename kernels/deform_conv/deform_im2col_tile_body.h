/* deform_im2col_tile_body.h - im2col with the input staged in shared memory: im2col_tap's
 * work, one block per tile of th x tw output positions of one image and offset group,
 * thread = entry (tap, position) of the tile, as grad_gather. im2col_tap reads each
 * sample's four corners from global memory for every channel: four gathers through the
 * L1 per column entry, which bound it. Here, per block of nb channels (up to 32), the
 * block first copies the tile's window of the input (the taps' reach plus a margin, as
 * grad_tile's) into shared memory, a row of the window per stretch of consecutive
 * threads, zeros outside the image; then each entry reads its corners there. A corner
 * outside the window (an offset past the margin) is read from global memory. The blend
 * and the mask are im2col_tap's (the same helpers, the same order), and a corner outside
 * the image is 0 either way, so the columns are bitwise im2col_tap's. Launch: blocks over
 * tiles (grid-stride), kh*kw*th*tw threads and ks_deform_stage_of(a).floats * 4 bytes of
 * dynamic shared memory (ks_deform_stage_launch), ks_sim_launch_coop in the simulator. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_im2col_tile_body.h"
#endif
#include "../core/ks_probe.h"
#include "../core/ks_shared.h"
#include "deform_args.h"
#include "deform_bilinear.h"
/* uses ks_deform_tap_read of deform_tap_body.h (which includes this file at its end) */

/* items staged per step by one thread: their loads are in flight together */
#ifndef KS_DEFORM_STAGE_BATCH
#define KS_DEFORM_STAGE_BATCH 4
#endif

KS_FN void KS_VARIANT(ks_deform_im2col_tile_body)(ks_thread *t, const ks_deform_args *a)
{
    const ks_deform_stage st = ks_deform_stage_of(a);
    KS_SHARED_DYN(float, win, st.floats); /* [nb][rh][rw] */
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX P = Ho * Wo, col_stride = step * P, plane = H * W, col_step = kk * col_stride;
    const KS_IDX TH = (KS_IDX)st.w.th, TW = (KS_IDX)st.w.tw, RH = (KS_IDX)st.w.rh, RW = (KS_IDX)st.w.rw;
    const KS_IDX NPIX = (KS_IDX)st.npix, NB = (KS_IDX)st.nb;
    const KS_IDX tiles_y = (Ho + TH - 1) / TH, tiles_x = (Wo + TW - 1) / TW;
    const KS_IDX n_tiles = step * G * tiles_y * tiles_x, nthreads = (KS_IDX)t->block_dim.x;
    const KS_IDX me = (KS_IDX)t->thread_idx.x, tap = me / (TH * TW), in_tile = me - tap * TH * TW;
    /* the staging walk: item i = (channel, row, column) of the window, i = me + k*nthreads,
     * advanced by (drow rows, dq columns) a step without a division */
    const KS_IDX drow = nthreads / RW, dq = nthreads - drow * RW, r_first = me / RW, q_first = me - r_first * RW;
    KS_PROBE(ks_shared_trace(t, KS_DEFORM_T_INPUT, KS_DEFORM_SITE_TILE, 1, st.floats));
    uint32_t iter = 0;
    for (KS_IDX tile = (KS_IDX)t->block_idx.x; tile < n_tiles; tile += (KS_IDX)t->grid_dim.x) {
        const KS_IDX tx = tile % tiles_x, ty = (tile / tiles_x) % tiles_y;
        const KS_IDX g = (tile / tiles_x / tiles_y) % G, b = tile / tiles_x / tiles_y / G;
        const KS_IDX h_col = ty * TH + in_tile / TW, w_col = tx * TW + in_tile % TW;
        const int active = tap < kk && h_col < Ho && w_col < Wo;
        const KS_IDX ry0 = ty * TH * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h - KS_DEFORM_TILE_MARGIN;
        const KS_IDX rx_lo = tx * TW * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w - KS_DEFORM_TILE_MARGIN;
        const KS_IDX rx0 = rx_lo - ((rx_lo % 4) + 4) % 4; /* down to a multiple of 4 */
        const KS_IDX pos = b * P + h_col * Wo + w_col;
        KS_VARIANT(ks_deform_tap) s = {0, 0, 0, 0.0f, 0.0f, 1.0f};
        ks_bilinear pl = {0, 0, {0.0f, 0.0f, 0.0f, 0.0f}, 0.0f, 0};
        if (active) {
            s = KS_VARIANT(ks_deform_tap_read)(t, a, b, g, tap, h_col, w_col);
            ks_deform_place(H, W, s.y, s.x, &pl);
        }
        /* corner k at at0 + (k>>1)*W + (k&1) of a plane, slot0 + (k>>1)*RW + (k&1) of the
         * window; bit k of inwin: it lies in the window (checked only for corners in the image) */
        const KS_IDX at0 = (KS_IDX)pl.y0 * W + (KS_IDX)pl.x0;
        const KS_IDX slot0 = ((KS_IDX)pl.y0 - ry0) * RW + ((KS_IDX)pl.x0 - rx0);
        int inwin = 0;
        for (int k = 0; k < 4; ++k) {
            const KS_IDX yy = (KS_IDX)pl.y0 + (k >> 1), xx = (KS_IDX)pl.x0 + (k & 1);
            inwin |= yy >= ry0 && yy < ry0 + RH && xx >= rx0 && xx < rx0 + RW ? 1 << k : 0;
        }
        for (KS_IDX c0 = g * cpg; c0 < (g + 1) * cpg; c0 += NB, ++iter) {
            const KS_IDX nb = (g + 1) * cpg - c0 < NB ? (g + 1) * cpg - c0 : NB; /* channels this block */
            const float *im = a->input + (b * C + c0) * plane;
            if (active) {
                KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, (((b * G + g) * kk + tap) * Ho + h_col) * Wo + w_col,
                                       iter, c0, b, h_col, w_col, g, tap, nb, 0));
            }
            /* stage the window of these channels, KS_DEFORM_STAGE_BATCH items a step */
            KS_IDX j = 0, r = r_first, q = q_first;
            while (r >= RH) r -= RH, ++j;
            for (KS_IDX i0 = me; i0 < nb * NPIX; i0 += KS_DEFORM_STAGE_BATCH * nthreads) {
                float v[KS_DEFORM_STAGE_BATCH];
                for (int u = 0; u < KS_DEFORM_STAGE_BATCH; ++u) {
                    const KS_IDX y = ry0 + r, x = rx0 + q;
                    v[u] = j < nb && y >= 0 && y < H && x >= 0 && x < W ? im[j * plane + y * W + x] : 0.0f;
                    q += dq, r += drow;
                    if (q >= RW) q -= RW, ++r;
                    while (r >= RH) r -= RH, ++j;
                }
                for (int u = 0; u < KS_DEFORM_STAGE_BATCH; ++u)
                    if (i0 + u * nthreads < nb * NPIX) ks_shared_store(t, win, i0 + u * nthreads, v[u]);
            }
            ks_syncthreads(t); /* the window holds these channels */
            float *col = a->col_out + (c0 * kk + tap) * col_stride + pos;
            for (KS_IDX jc = 0; jc < nb && active; ++jc, im += plane, col += col_step) {
                float v[4];
                for (int k = 0; k < 4; ++k) {
                    if (!(pl.flags & (KS_FLAG_C00 << k))) v[k] = 0.0f;
                    else if ((inwin >> k) & 1) v[k] = ks_shared_load(t, win, jc * NPIX + slot0 + (k >> 1) * RW + (k & 1));
                    else v[k] = im[at0 + (k >> 1) * W + (k & 1)];
                }
                const float blend = ks_deform_blend(pl.w, v);
                const float out = a->use_mask ? blend * s.m : blend;
                *col = out;
                KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c0 + jc, s.y, s.x,
                                         pl.w[0], pl.w[1], pl.w[2], pl.w[3], blend, pl.flags));
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_COLUMNS, (int)tap, col - a->col_out, 0,
                                        (c0 + jc) * kk + tap, pos, out, 0));
            }
            ks_syncthreads(t); /* every entry read the window: it may be staged again */
        }
    }
}
