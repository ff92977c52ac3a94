/* deform_cl_body.h - im2col from a channels-last copy of the input: im2col_tap's values.
 *
 * im2col_tap's lanes take consecutive output positions, and with random offsets their
 * corners fall on several rows: each of its four corner loads a column entry touches
 * several cache lines, and the L1 bounds it. Here the input is first copied to
 * [im2col_step, H, W, C] (ks_deform_nhwc_body: 32 x 32 tiles through shared memory, both
 * sides coalesced), and a warp's lanes take 32 consecutive channels of one sample: each
 * corner load is one contiguous 128-byte row. The column entries of a lane then lie 32
 * rows apart, so they go through a shared tile and leave as rows of positions.
 *
 * ks_deform_im2col_cl_body: a block per item (b, g, block of 32 channels of group g, tile
 * of tp consecutive output positions), 256 threads:
 *   1. thread e < kk*tp places entry e = tap*tp + p (reads its offset and mask once) into
 *      the geometry table (KS_DEFORM_CL_GEO slots: weights, mask, top-left corner, corner
 *      flags, valid, and the point for traces);
 *   2. warp w takes entries w, w + 8, ...; lane = channel: the four corners from the copy,
 *      the blend and mask (im2col_tap's helpers, its order: the same bits) into
 *      tile[lane][e] (row stride 32k + 1: lanes write 32 banks);
 *   3. the tile's rows (channel, tap) go out as runs of tp positions.
 * Shared memory: ks_deform_cl_of(a).floats 4-byte slots, the tile at 0, the table after it. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_cl_body.h"
#endif
#include "../core/ks_probe.h"
#include "../core/ks_shared.h"
#include "deform_args.h"
#include "deform_bilinear.h"
/* uses ks_deform_tap_read of deform_tap_body.h (which includes this file at its end) */

/* The copy: tile (b, 32 channels, 32 pixels), rows of threads 32 wide. */
KS_FN void KS_VARIANT(ks_deform_nhwc_body)(ks_thread *t, const ks_deform_args *a)
{
    KS_SHARED(float, tr, 32 * 33);
    const KS_IDX C = (KS_IDX)a->channels, HW = (KS_IDX)a->height * (KS_IDX)a->width;
    const KS_IDX ct = (C + 31) / 32, pt = (HW + 31) / 32, n = (KS_IDX)a->im2col_step * ct * pt;
    const KS_IDX me = (KS_IDX)t->thread_idx.x, tx = me % 32, ty = me / 32, rows = (KS_IDX)t->block_dim.x / 32;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < n; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX p0 = (item % pt) * 32, c0 = (item / pt % ct) * 32, b = item / pt / ct;
        for (KS_IDX r = ty; r < 32; r += rows) {
            const KS_IDX c = c0 + r, px = p0 + tx;
            ks_shared_store(t, tr, r * 33 + tx, c < C && px < HW ? a->input[(b * C + c) * HW + px] : 0.0f);
        }
        ks_syncthreads(t); /* the tile holds 32 channels of 32 pixels */
        for (KS_IDX r = ty; r < 32; r += rows) {
            const KS_IDX px = p0 + r, c = c0 + tx;
            const float v = ks_shared_load(t, tr, tx * 33 + r);
            if (px < HW && c < C) a->input_cl[(b * HW + px) * C + c] = v;
        }
        ks_syncthreads(t); /* the tile may be filled again */
    }
}


KS_FN void KS_VARIANT(ks_deform_im2col_cl_body)(ks_thread *t, const ks_deform_args *a)
{
    const ks_deform_clt cg = ks_deform_cl_of(a);
    KS_SHARED_DYN(float, sm, cg.floats); /* tile [32][es] at 0, the table [entries][8] at ag */
    int32_t *const smi = (int32_t *)sm;
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, P = Ho * Wo;
    const KS_IDX kk = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    const KS_IDX step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups, cpg = C / G;
    const KS_IDX col_stride = step * P, TP = (KS_IDX)cg.tp, E = (KS_IDX)cg.entries, ES = (KS_IDX)cg.es;
    const KS_IDX AG = 32 * ES;
    const KS_IDX nblk = (cpg + 31) / 32, ptiles = (P + TP - 1) / TP, n_items = step * G * nblk * ptiles;
    const KS_IDX me = (KS_IDX)t->thread_idx.x, nthreads = (KS_IDX)t->block_dim.x;
    const KS_IDX lane = me % 32, warp = me / 32, nwarps = nthreads / 32;
    KS_PROBE(ks_shared_trace(t, KS_DEFORM_T_INPUT, KS_DEFORM_SITE_TILE, 1, cg.floats));
    uint32_t iter = 0;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < n_items; item += (KS_IDX)t->grid_dim.x, ++iter) {
        const KS_IDX p0 = (item % ptiles) * TP, blk = item / ptiles % nblk;
        const KS_IDX g = item / ptiles / nblk % G, b = item / ptiles / nblk / G;
        const KS_IDX c0 = g * cpg + blk * 32, nbc = (g + 1) * cpg - c0 < 32 ? (g + 1) * cpg - c0 : 32;
        /* 1. the entries' sampling geometry */
        for (KS_IDX e = me; e < E; e += nthreads) {
            const KS_IDX tap = e / TP, pos = p0 + (e - tap * TP);
            float *geo = sm + AG + e * KS_DEFORM_CL_GEO;
            int32_t *geoi = smi + AG + e * KS_DEFORM_CL_GEO;
            const int valid = pos < P;
            ks_bilinear pl = {0, 0, {0.0f, 0.0f, 0.0f, 0.0f}, 0.0f, 0};
            float m = 1.0f, sy = 0.0f, sx = 0.0f;
            if (valid) {
                const KS_IDX h_col = pos / Wo, w_col = pos - h_col * Wo;
                KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, ((((b * G + g) * nblk + blk) * kk + tap) * Ho + h_col) * Wo + w_col,
                                       iter, c0, b, h_col, w_col, g, tap, nbc, 0));
                const KS_VARIANT(ks_deform_tap) s = KS_VARIANT(ks_deform_tap_read)(t, a, b, g, tap, h_col, w_col);
                ks_deform_place(H, W, s.y, s.x, &pl);
                m = s.m, sy = s.y, sx = s.x;
            }
            for (int k = 0; k < 4; ++k) ks_shared_store(t, sm, geo - sm + k, pl.w[k]);
            ks_shared_store(t, sm, geo - sm + 4, m);
            ks_shared_store_i32(t, smi, geoi - smi + 5, (int32_t)(pl.y0 * W + pl.x0));
            ks_shared_store_i32(t, smi, geoi - smi + 6, pl.flags);
            ks_shared_store_i32(t, smi, geoi - smi + 7, valid);
            ks_shared_store(t, sm, geo - sm + 8, sy); /* for the trace's sample events */
            ks_shared_store(t, sm, geo - sm + 9, sx);
        }
        ks_syncthreads(t); /* the table is complete */
        /* 2. lane = channel c0 + lane: the corners of entry e from the copy */
        const float *src = a->input_cl + b * HW * C + c0 + lane;
        for (KS_IDX e = warp; e < E; e += nwarps) {
            const KS_IDX at = AG + e * KS_DEFORM_CL_GEO;
            if (!ks_shared_load_i32(t, smi, at + 7) || lane >= nbc) continue;
            /* traced: this (channel, entry) is a work item of its own (the thread's items
             * of step 1 were others) */
            KS_PROBE({
                const KS_IDX tap = e / TP, pos = p0 + (e - tap * TP), h_col = pos / Wo;
                ks_probe_work(t, KS_DEFORM_SITE_WORK, ((c0 + lane) * kk + tap) * col_stride + b * P + pos, iter,
                              c0 + lane, b, h_col, pos - h_col * Wo, g, tap, 1, 1);
            });
            float w[4], v[4];
            for (int k = 0; k < 4; ++k) w[k] = ks_shared_load(t, sm, at + k);
            const float m = ks_shared_load(t, sm, at + 4);
            const KS_IDX at0 = ks_shared_load_i32(t, smi, at + 5);
            const int flags = ks_shared_load_i32(t, smi, at + 6);
            for (int k = 0; k < 4; ++k)
                v[k] = (flags & (KS_FLAG_C00 << k)) ? src[(at0 + (k >> 1) * W + (k & 1)) * C] : 0.0f;
            const float blend = ks_deform_blend(w, v);
            const float out = a->use_mask ? blend * m : blend;
            ks_shared_store(t, sm, lane * ES + e, out);
            KS_PROBE({
                const KS_IDX tap = e / TP, pos = p0 + (e - tap * TP);
                ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c0 + lane,
                                ks_shared_load(t, sm, at + 8), ks_shared_load(t, sm, at + 9), w[0], w[1], w[2], w[3], blend,
                                flags);
                ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_COLUMNS, (int)tap,
                               ((c0 + lane) * kk + tap) * col_stride + b * P + pos, 0, (c0 + lane) * kk + tap, b * P + pos,
                               out, 0);
            });
        }
        ks_syncthreads(t); /* the tile holds every entry of the item */
        /* 3. rows (channel, tap) of tp positions: i = (channel * kk + tap) * tp + p */
        for (KS_IDX i = me; i < nbc * E; i += nthreads) {
            const KS_IDX row = i / TP, p = i - row * TP, c = row / kk, tap = row - c * kk;
            if (p0 + p < P)
                a->col_out[((c0 + c) * kk + tap) * col_stride + b * P + p0 + p] = ks_shared_load(t, sm, c * ES + tap * TP + p);
        }
        ks_syncthreads(t); /* the tile and the table may be filled again */
    }
}
