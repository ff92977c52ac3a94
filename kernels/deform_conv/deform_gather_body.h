/* deform_gather_body.h - the backward by tile with no shared atomics on floats: grad_tap's
 * work (col2im and col2im_coord in one pass), one block per tile of th x tw output
 * positions of one image and offset group, thread = entry (tap, position) of the tile, as
 * grad_tile. grad_tile's threads add each corner's share into a shared window (on this
 * GPU a float atomic on shared memory is a compare-and-swap loop, retried when lanes hit
 * one pixel); here the adds become sums that each window pixel gathers:
 *
 *   once per tile (the sampling is the same for every channel of the group):
 *     each entry places its sample; each corner that lands in the window counts itself
 *     on its pixel (an int atomic returns its rank); an exclusive sum of the counts gives
 *     each pixel's list, and each corner writes (entry, scatter weight) at start + rank;
 *   per block of nb channels (up to 32):
 *     thread = entry, over the channels in order: reads the column gradient and the four
 *       corners, sums grad_offset and grad_mask (grad_tap's order: bitwise the same),
 *       writes im2col's entry (write_columns) and keeps what col2im scatters (cv, times
 *       the mask) in top[channel][entry]; a corner outside the window (an offset past
 *       the margin) goes to global memory directly;
 *     barrier; thread = (channel, four pixels of a window row), the lanes of a warp 32
 *       channels of one group of four (with 32 channels a block): the pixels' lists, the
 *       same for every lane, summed
 *       as weight * top[channel][entry], added to grad_input as one vector atomic (W a
 *       multiple of 4) where any is nonzero; barrier.
 *
 * The adds to one grad_input pixel come in another order than grad_tap's (a pixel's list
 * follows its atomics' ranks; tiles overlap through global atomics). Launch: blocks over
 * tiles (grid-stride), kh*kw*th*tw threads and ks_deform_gather_of(a).floats * 4 bytes of
 * dynamic shared memory (ks_deform_gather_launch), ks_sim_launch_coop in the simulator. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_gather_body.h"
#endif
#include "../core/ks_probe.h"
#include "../core/ks_shared.h"
#define KS_DEFORM_DECL_ONLY /* deform_body.h's declarations, not its bodies (#undef at the end) */
#include "deform_body.h"
/* uses ks_deform_tap_read, ks_deform_corners_of, ks_deform_corner_values and
 * ks_deform_im2col_entry of deform_tap_body.h (which includes this file at its end) */

KS_FN void KS_VARIANT(ks_deform_grad_gather_body)(ks_thread *t, const ks_deform_args *a)
{
    const ks_deform_gather gs = ks_deform_gather_of(a);
    KS_SHARED_DYN(float, sm, gs.floats); /* the layout of ks_deform_gather (deform_body.h) */
    int32_t *const smi = (int32_t *)sm;  /* its int slots: start, part, le */
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX P = Ho * Wo, col_stride = step * P, plane = H * W, col_step = kk * col_stride;
    const KS_IDX TH = (KS_IDX)gs.w.th, TW = (KS_IDX)gs.w.tw, RW = (KS_IDX)gs.w.rw;
    const KS_IDX NPIX = (KS_IDX)gs.npix, EP = (KS_IDX)gs.ep, NB = (KS_IDX)gs.nb;
    const KS_IDX AS = (KS_IDX)gs.at_start, AP = (KS_IDX)gs.at_part, ALE = (KS_IDX)gs.at_le, ALW = (KS_IDX)gs.at_lw;
    const KS_IDX tiles_y = (Ho + TH - 1) / TH, tiles_x = (Wo + TW - 1) / TW;
    const KS_IDX n_tiles = step * G * tiles_y * tiles_x, nthreads = (KS_IDX)t->block_dim.x;
    const KS_IDX me = (KS_IDX)t->thread_idx.x, tap = me / (TH * TW), in_tile = me - tap * TH * TW;
    /* the exclusive sum's chunks: thread c < nch sums pixels [c*chunk, (c+1)*chunk) */
    const KS_IDX nch = nthreads < 32 ? nthreads : 32, chunk = (NPIX + nch - 1) / nch;
    const int vec4 = W % 4 == 0 && ((uintptr_t)a->grad_input & 15) == 0;
    KS_PROBE(ks_shared_trace(t, KS_DEFORM_T_GRAD_INPUT, KS_DEFORM_SITE_TILE, 1, gs.floats));
    uint32_t iter = 0;
    for (KS_IDX tile = (KS_IDX)t->block_idx.x; tile < n_tiles; tile += (KS_IDX)t->grid_dim.x, ++iter) {
        /* the item (ks_deform_tile_item_of); corner k's window pixel: pix0 + (k>>1)*RW +
         * (k&1); bits 8-11 of cr.m: in the window */
        const KS_VARIANT(ks_deform_tile_item) it = KS_VARIANT(ks_deform_tile_item_of)(t, a, &gs.w, tile, tap, in_tile,
                                                                                      iter);
        const KS_IDX b = it.b, g = it.g, h_col = it.h_col, w_col = it.w_col, ry0 = it.ry0, rx0 = it.rx0;
        const int active = it.active;
        const KS_VARIANT(ks_deform_tap) s = it.s;
        const KS_VARIANT(ks_deform_corners) cr = it.cr;
        const KS_IDX q = h_col * Wo + w_col, pix0 = (cr.y0 - ry0) * RW + (cr.x0 - rx0);
        for (KS_IDX i = me; i < NPIX; i += nthreads) ks_shared_store_i32(t, smi, AS + i, 0);
        /* bit k: corner k is one col2im adds to (bit 4+k of m) and lies in the window */
        const int land = (cr.m >> 4) & (cr.m >> 8) & 15;
        const int outside = (cr.m >> 4) & ~(cr.m >> 8) & 15; /* col2im's corners past the window */
        ks_syncthreads(t);                                   /* the counts are zero */
        int32_t rank[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; ++k)
            if ((land >> k) & 1) rank[k] = ks_shared_atomic_add_i32(t, smi, AS + pix0 + (k >> 1) * RW + (k & 1), 1);
        ks_syncthreads(t); /* every corner counted */
        int32_t run = 0;
        if (me < nch) {
            for (KS_IDX i = me * chunk; i < (me + 1) * chunk && i < NPIX; ++i)
                run += ks_shared_load_i32(t, smi, AS + i);
            ks_shared_store_i32(t, smi, AP + me, run);
        }
        ks_syncthreads(t); /* the chunks' totals */
        if (me == 0) {
            int32_t sum = 0;
            for (KS_IDX c = 0; c < nch; ++c) {
                const int32_t n = ks_shared_load_i32(t, smi, AP + c);
                ks_shared_store_i32(t, smi, AP + c, sum);
                sum += n;
            }
            ks_shared_store_i32(t, smi, AS + NPIX, sum);
        }
        ks_syncthreads(t); /* each chunk's start */
        if (me < nch) {
            run = ks_shared_load_i32(t, smi, AP + me);
            for (KS_IDX i = me * chunk; i < (me + 1) * chunk && i < NPIX; ++i) {
                const int32_t n = ks_shared_load_i32(t, smi, AS + i);
                ks_shared_store_i32(t, smi, AS + i, run);
                run += n;
            }
        }
        ks_syncthreads(t); /* every pixel's start */
        for (int k = 0; k < 4; ++k)
            if ((land >> k) & 1) {
                const KS_IDX l = ks_shared_load_i32(t, smi, AS + pix0 + (k >> 1) * RW + (k & 1)) + rank[k];
                ks_shared_store_i32(t, smi, ALE + l, (int32_t)me);
                ks_shared_store(t, sm, ALW + l, cr.sw[k]);
            }
        float gy = 0.0f, gx = 0.0f, gm = 0.0f;
        for (KS_IDX c0 = g * cpg; c0 < (g + 1) * cpg; c0 += NB) {
            const KS_IDX nb = (g + 1) * cpg - c0 < NB ? (g + 1) * cpg - c0 : NB; /* channels this block */
            const float *im = a->input + (b * C + c0) * plane;
            float *grad = a->grad_input + (b * C + c0) * plane;
            const float *colp = a->col_in + (c0 * kk + tap) * col_stride + b * P + q;
            /* KS_DEFORM_GATHER_STEP channels a step, all their loads first: the corner
             * gathers' latency, not the arithmetic, bounds this loop */
            enum { U = KS_DEFORM_GATHER_STEP };
            for (KS_IDX j = 0; j < nb && active; j += U, im += U * plane, grad += U * plane, colp += U * col_step) {
                float cv[U], v[U][4];
                for (int u = 0; u < U; ++u) {
                    if (j + u >= nb) break;
                    cv[u] = colp[u * col_step];
                    KS_VARIANT(ks_deform_corner_values)(im + u * plane, cr.at0, W, cr.m, v[u]);
                }
                for (int u = 0; u < U; ++u) {
                    if (j + u >= nb) break;
                    const KS_IDX c = c0 + j + u;
                    const float *cp = colp + u * col_step;
                    KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, cp - a->col_in, 0,
                                           c * kk + tap, b * P + q, cv[u]));
                    const float top = ks_deform_grad_channel(v[u], cr.pl.w, cr.lh, cr.lw, cv[u], s.m, a->use_mask,
                                                             cr.coord_box, cr.in_box, &gy, &gx, &gm);
                    if (a->write_columns)
                        a->col_out[cp - a->col_in] = KS_VARIANT(ks_deform_im2col_entry)(&cr, v[u], s.m, a->use_mask);
                    ks_shared_store(t, sm, (j + u) * EP + me, top);
                    if (KS_TRACED || outside)
                        for (int k = 0; k < 4; ++k) {
                            if (!((cr.m >> (4 + k)) & 1)) continue;
                            const float d = cr.sw[k] * top;
                            const KS_IDX off = (k >> 1) * W + (k & 1);
                            if ((outside >> k) & 1) ks_atomic_add_f32(grad + u * plane + cr.at0 + off, d);
                            KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_INPUT, (int)tap,
                                                    (b * C + c) * plane + cr.at0 + off, b * C + c, cr.y0 + (k >> 1),
                                                    cr.x0 + (k & 1), d, 1));
                        }
                    KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c, s.y, s.x,
                                             cr.pl.w[0], cr.pl.w[1], cr.pl.w[2], cr.pl.w[3],
                                             ks_deform_blend(cr.pl.w, v[u]), cr.pl.flags));
                }
            }
            ks_syncthreads(t); /* top holds the block's channels */
            /* item = (four pixels u of a window row, channel j), j fastest */
            for (KS_IDX i = me; i < (NPIX / 4) * nb; i += nthreads) {
                const KS_IDX u = i / nb, j = i - u * nb, p0 = 4 * u;
                KS_IDX l = ks_shared_load_i32(t, smi, AS + p0);
                if (l == ks_shared_load_i32(t, smi, AS + p0 + 4)) continue; /* no corner lands here */
                float sum[4];
                int any = 0;
                for (int e = 0; e < 4; ++e) {
                    const KS_IDX end = ks_shared_load_i32(t, smi, AS + p0 + e + 1);
                    sum[e] = 0.0f;
                    for (; l < end; ++l)
                        sum[e] = fmaf(ks_shared_load(t, sm, ALW + l),
                                      ks_shared_load(t, sm, j * EP + ks_shared_load_i32(t, smi, ALE + l)), sum[e]);
                    any |= sum[e] != 0.0f;
                }
                if (!any) continue;
                const KS_IDX r = p0 / RW;
                float *dst = a->grad_input + (b * C + c0 + j) * plane + (ry0 + r) * W + rx0 + (p0 - r * RW);
                if (vec4) ks_atomic_add_f32x4(dst, sum);
                else
                    for (int e = 0; e < 4; ++e)
                        if (sum[e] != 0.0f) ks_atomic_add_f32(dst + e, sum[e]);
            }
            ks_syncthreads(t); /* top and the lists are free again */
        }
        if (active) KS_VARIANT(ks_deform_tap_write)(t, a, &s, tap, h_col, w_col, gy, gx, gm);
    }
}
/* 288 threads of a 3x3 kernel's tile and 46.7 KiB of shared memory: three blocks an SM,
 * which leaves 75 registers a thread (KS_DEFORM_GATHER_REGS) */
#ifndef KS_DEFORM_GATHER_REGS
#define KS_DEFORM_GATHER_REGS 72
#endif
KS_KERNEL_ATTR(ks_deform_grad_gather, ks_deform_args, __maxnreg__(KS_DEFORM_GATHER_REGS),
               __maxnreg__(KS_DEFORM_GATHER_REGS))
#undef KS_DEFORM_DECL_ONLY
