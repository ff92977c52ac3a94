/* roi_align_stage_body.h - the plain RoIAlign forward through shared memory, written once
 * for CUDA and the simulator (ks_shared.h; the simulator runs it with ks_sim_launch_coop).
 *
 * Why: the slot kernel (roi_align_body.h) gathers each sample's four corners from global
 * memory, 4 bytes at a time from ~25 sectors per warp load, and is bound by that L1/L2
 * traffic. Here a block works on one RoI k and a group of up to KS_ROI_GROUP channels:
 *
 *   1. the RoI's footprint, rows [ylo, ylo+fh) x columns [xlo, xlo+fw) of the input (every
 *      corner of every sample, with a pixel of margin), is copied for s channels into
 *      shared memory, tile[j][ry][rx] (s*fh*fw <= KS_ROI_TILE floats), by consecutive
 *      threads along the rows: coalesced loads, four in flight per thread;
 *      Before the first pass the block also tabulates the sampler per axis: entry
 *      ph*grid_h + iy holds the row sample's tile row offset, the step to its second
 *      row, its weights and its coordinate (columns likewise; a sample's corner weights
 *      are products of its row and column weights, and it is in range when both are);
 *   2. barrier; each thread takes (channel pair, bin) items, bins fastest, and computes
 *      the bin's samples in the slot kernel's order with its fmaf blend, the geometry
 *      from the tables and the corners from the tile (a corner outside it, which the
 *      margin rules out, would be read from global memory);
 *   3. barrier (the next s channels overwrite the tile).
 *
 * The outputs are therefore bitwise those of the slot and traced kernels. A RoI whose
 * footprint is larger than the tile, or whose samples per axis do not fit the tables, or
 * whose box is not finite, or whose batch index is bad, is not staged: the block does its
 * slot kernel's work (ks_roi_fwd_slot: include this body after roi_align_body.h, for the
 * same variant). Whether a block stages and how many channels at once are decided from
 * the RoI alone, so every thread of the block reaches the same barriers. Block work items are numbered
 * group * K + k (the channel group slowest, as the slot kernel, for L2 reuse across RoIs);
 * blocks loop over them (grid-stride). */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_stage_body.h"
#endif
#include "../core/ks_shared.h"
#include "roi_align_args.h"
#include "roi_align_sample.h"

#ifndef KS_ROI_STAGE_DECL
#define KS_ROI_STAGE_DECL
/* floats of the staged footprint, and samples per axis of the tables: 37.5 + 10 KiB of
 * the 48 KiB of static shared memory */
#define KS_ROI_TILE 9600
#define KS_ROI_AXIS 256

/* One axis of the footprint: samples of bins 0 .. P-1 (grid per bin) lie between the
 * first and the last sample's coordinate; their corners between floor(lowest) and
 * floor(highest) + 1, clamped to [0, L-1]. One pixel of margin each side absorbs
 * rounding between the endpoints. 0 when the coordinates are not finite (not staged). */
KS_FN int ks_roi_axis_span(float start, float bin, int64_t P, int64_t grid, int64_t L, int64_t *lo, int64_t *n)
{
    *lo = 0, *n = 0;
    if (grid <= 0) return 1; /* no samples: nothing to stage */
    const float a = ks_roi_coord(start, 0, bin, 0, grid), b = ks_roi_coord(start, P - 1, bin, grid - 1, grid);
    if (!(a - a == 0.0f && b - b == 0.0f)) return 0; /* NaN or Inf */
    const float fl = (float)L;
    float mn = a < b ? a : b, mx = a < b ? b : a;
    mn = mn <= 0.0f ? 0.0f : (mn >= fl ? fl : mn);
    mx = mx <= 0.0f ? 0.0f : (mx >= fl ? fl : mx);
    int64_t l = (int64_t)mn - 1, h = (int64_t)mx + 2;
    l = l < 0 ? 0 : (l > L - 1 ? L - 1 : l);
    h = h > L - 1 ? L - 1 : h;
    *lo = l;
    *n = h - l + 1;
    return 1;
}

/* The RoI's staged window: rows ylo .. ylo+fh-1, columns xlo .. xlo+fw-1 */
typedef struct ks_roi_win {
    int64_t ylo, xlo, fh, fw;
    int staged;
} ks_roi_win;

/* Table entry of sample i (bin i / grid, sample i % grid) of one axis: io[0] = the tile
 * offset of its first corner ((c0 - lo) * step; -1: out of range; -2: outside the window,
 * read from global memory), io[1] = the step to the second corner; f = its weights
 * (1 - l, l) and coordinate. */
KS_FN void ks_roi_axis_entry(float start, float bin, int64_t grid, int64_t L, int64_t lo, int64_t n,
                             int64_t step, int64_t i, int32_t *io, float *f)
{
    const float c = ks_roi_coord(start, i / grid, bin, i % grid, grid);
    io[0] = -1, io[1] = 0, f[0] = f[1] = 0.0f, f[2] = c;
    if (!(c >= -1.0f && c <= (float)L)) return;
    int64_t c0, c1;
    float cl, l;
    ks_roi_axis(c, L, &c0, &c1, &cl, &l);
    io[0] = c0 >= lo && c1 < lo + n ? (int32_t)((c0 - lo) * step) : -2;
    io[1] = (int32_t)((c1 - c0) * step);
    f[0] = 1.0f - l, f[1] = l;
}

/* floor((n + 0.5) * inv) with inv = 1/d: n / d for 0 <= n < 2^22 (the error of the float
 * product, below (n + 0.5)/d * 2^-23, is smaller than the 0.5/d to the nearest integer):
 * the staging loop's index split without an integer division */
KS_FN int64_t ks_roi_div_small(int64_t n, float inv)
{
    return (int64_t)(((float)n + 0.5f) * inv);
}
#endif

/* Copies channels c .. c+s-1 of the window from plane im (the RoI's image, channel c) into
 * tile[j][ry][rx]: element e = (j*fh + ry)*fw + rx, consecutive threads consecutive e. */
KS_FN void KS_VARIANT(ks_roi_stage)(ks_thread *t, float *tile, const float *im, KS_IDX HW, KS_IDX W,
                                    const ks_roi_win *win, KS_IDX s)
{
    const KS_IDX fh = (KS_IDX)win->fh, fw = (KS_IDX)win->fw, total = s * fh * fw;
    const KS_IDX tid = (KS_IDX)t->thread_idx.x, nt = (KS_IDX)t->block_dim.x;
    const float inv_w = 1.0f / (float)fw, inv_h = 1.0f / (float)fh;
    const float *src = im + (KS_IDX)win->ylo * W + (KS_IDX)win->xlo;
    for (KS_IDX e0 = tid; e0 < total; e0 += 4 * nt) {
        float v[4];
        for (int q = 0; q < 4; ++q) { /* the four loads first: in flight together */
            const KS_IDX e = e0 + q * nt;
            v[q] = 0.0f;
            if (e < total) {
                const KS_IDX row = (KS_IDX)ks_roi_div_small(e, inv_w), j = (KS_IDX)ks_roi_div_small(row, inv_h);
                v[q] = src[j * HW + (row - j * fh) * W + (e - row * fw)];
            }
        }
        for (int q = 0; q < 4; ++q)
            if (e0 + q * nt < total) ks_shared_store(t, tile, e0 + q * nt, v[q]);
    }
}

/* The block's tables (see the top): rows at 0 .. PH*gh-1, columns at KS_ROI_AXIS ..;
 * tio[2*e], tio[2*e+1] and tf[3*e .. 3*e+2] of entry e. */
KS_FN void KS_VARIANT(ks_roi_tabulate)(ks_thread *t, int32_t *tio, float *tf, const ks_roi_box *r,
                                       const ks_roi_win *win, KS_IDX PH, KS_IDX PW, KS_IDX H, KS_IDX W)
{
    const KS_IDX ny = PH * (KS_IDX)r->grid_h, nx = PW * (KS_IDX)r->grid_w;
    for (KS_IDX i = (KS_IDX)t->thread_idx.x; i < ny + nx; i += (KS_IDX)t->block_dim.x) {
        int32_t io[2];
        float f[3];
        const int col = i >= ny;
        if (!col) ks_roi_axis_entry(r->y1, r->bin_h, r->grid_h, H, win->ylo, win->fh, win->fw, i, io, f);
        else ks_roi_axis_entry(r->x1, r->bin_w, r->grid_w, W, win->xlo, win->fw, 1, i - ny, io, f);
        const KS_IDX e = col ? KS_ROI_AXIS + i - ny : i;
        ks_shared_store_i32(t, tio, 2 * e, io[0]);
        ks_shared_store_i32(t, tio, 2 * e + 1, io[1]);
        for (int q = 0; q < 3; ++q) ks_shared_store(t, tf, 3 * e + q, f[q]);
    }
}

/* The value of a tabulated sample (row entry ry, column entry cx) for channel plane j of
 * the tile (offset o) or of the input (im): 0 out of range; v = the slot kernel's blend. */
KS_FN float KS_VARIANT(ks_roi_tab_value)(ks_thread *t, const float *tile, KS_IDX o, const float *im, KS_IDX H,
                                         KS_IDX W, const int32_t *ry, const int32_t *cx, const float *w, float y,
                                         float x)
{
    if (ry[0] >= 0 && cx[0] >= 0) {
        const KS_IDX t00 = o + ry[0] + cx[0], t10 = t00 + ry[1];
        const float v00 = ks_shared_load(t, tile, t00), v01 = ks_shared_load(t, tile, t00 + cx[1]);
        const float v10 = ks_shared_load(t, tile, t10), v11 = ks_shared_load(t, tile, t10 + cx[1]);
        return ks_roi_blend(w, v00, v01, v10, v11);
    }
    if (ry[0] == -1 || cx[0] == -1) return 0.0f;
    ks_roi_sample s; /* in range, outside the window */
    ks_roi_sample_at(H, W, y, x, &s);
    const KS_IDX y0 = (KS_IDX)s.y0 * W, y1 = (KS_IDX)s.y1 * W, x0 = (KS_IDX)s.x0, x1 = (KS_IDX)s.x1;
    return ks_roi_blend_at(im, y0 + x0, y0 + x1, y1 + x0, y1 + x1, s.w);
}

/* One item: bin (ph, pw) of RoI k for channels c .. c+nc-1 (nc <= KS_ROI_PAIR), at jt in
 * the tile; the slot kernel's forward (ks_roi_fwd_slot) with the corners from the tile. */
KS_FN void KS_VARIANT(ks_roi_stage_item)(ks_thread *t, const ks_roi_align_args *a, const ks_roi_box *r,
                                         const float *tile, const int32_t *tio, const float *tf,
                                         const ks_roi_win *win, KS_IDX k, KS_IDX c, KS_IDX nc, KS_IDX jt, KS_IDX ph,
                                         KS_IDX pw, const int is_max)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX out0 = ((k * C + c) * PH + ph) * PW + pw;
    const KS_IDX fhw = (KS_IDX)win->fh * (KS_IDX)win->fw;
    float acc[KS_ROI_PAIR], best_y[KS_ROI_PAIR], best_x[KS_ROI_PAIR];
    for (int j = 0; j < KS_ROI_PAIR; ++j) acc[j] = is_max ? -3.402823466e38f : 0.0f, best_y[j] = best_x[j] = -1.0f;
    const float *im = a->input + ((KS_IDX)(r->b < 0 ? 0 : r->b) * C + c) * HW;
    const KS_IDX gh = r->b < 0 ? 0 : (KS_IDX)r->grid_h, gw = r->b < 0 ? 0 : (KS_IDX)r->grid_w;
    for (KS_IDX iy = 0; iy < gh; ++iy) {
        const KS_IDX ey = ph * gh + iy;
        const int32_t ry[2] = {ks_shared_load_i32(t, tio, 2 * ey), ks_shared_load_i32(t, tio, 2 * ey + 1)};
        const float hy = ks_shared_load(t, tf, 3 * ey), ly = ks_shared_load(t, tf, 3 * ey + 1);
        const float y = ks_shared_load(t, tf, 3 * ey + 2);
        for (KS_IDX ix = 0; ix < gw; ++ix) {
            const KS_IDX ex = KS_ROI_AXIS + pw * gw + ix;
            const int32_t cx[2] = {ks_shared_load_i32(t, tio, 2 * ex), ks_shared_load_i32(t, tio, 2 * ex + 1)};
            const float hx = ks_shared_load(t, tf, 3 * ex), lx = ks_shared_load(t, tf, 3 * ex + 1);
            const float x = ks_shared_load(t, tf, 3 * ex + 2);
            const float w[4] = {hy * hx, hy * lx, ly * hx, ly * lx}; /* as ks_roi_sample_at */
            for (int j = 0; j < KS_ROI_PAIR && j < nc; ++j) {
                const float v = KS_VARIANT(ks_roi_tab_value)(t, tile, (jt + j) * fhw, im + j * HW, H, W, ry, cx, w, y, x);
                ks_roi_take(is_max, v, y, x, &acc[j], &best_y[j], &best_x[j]);
            }
        }
    }
    const KS_IDX count = gh * gw;
    for (int j = 0; j < KS_ROI_PAIR && j < nc; ++j) {
        const KS_IDX index = out0 + j * PH * PW;
        if (!is_max) {
            acc[j] /= (float)(count > 0 ? count : 1);
        } else {
            a->argmax_y[index] = best_y[j];
            a->argmax_x[index] = best_x[j];
        }
        a->output[index] = acc[j];
    }
}

KS_FN void KS_VARIANT(ks_roi_align_stage_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED(float, tile, KS_ROI_TILE);
    KS_SHARED(int32_t, tio, 4 * KS_ROI_AXIS);
    KS_SHARED(float, tf, 6 * KS_ROI_AXIS);
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX K = (KS_IDX)a->num_rois, PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w, bins = PH * PW;
    const KS_IDX items = K * ((C + KS_ROI_GROUP - 1) / KS_ROI_GROUP);
    const KS_IDX tid = (KS_IDX)t->thread_idx.x, nt = (KS_IDX)t->block_dim.x;
    const int is_max = a->pool_mode == KS_ROI_MAX;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < items; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX g = item / K, k = item - g * K, c0 = g * KS_ROI_GROUP;
        const KS_IDX nc = C - c0 < KS_ROI_GROUP ? C - c0 : KS_ROI_GROUP;
        ks_roi_box r;
        ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
        const int64_t gh = r.b < 0 ? 0 : r.grid_h, gw = r.b < 0 ? 0 : r.grid_w;
        ks_roi_win win;
        int64_t xlo = 0, fw = 0;
        win.staged = ks_roi_axis_span(r.y1, r.bin_h, PH, gh, H, &win.ylo, &win.fh) &&
                     ks_roi_axis_span(r.x1, r.bin_w, PW, gw, W, &xlo, &fw) && win.fh * fw > 0 &&
                     win.fh * fw <= KS_ROI_TILE;
        win.xlo = xlo, win.fw = fw;
        win.staged = win.staged && PH * gh <= KS_ROI_AXIS && PW * gw <= KS_ROI_AXIS;
        if (!win.staged) { /* the slot kernel's work, KS_ROI_CC channels a slot (it divides the group) */
            const KS_IDX work = (nc + KS_ROI_CC - 1) / KS_ROI_CC * bins;
            for (KS_IDX w = tid; w < work; w += nt) {
                const KS_IDX q = w / bins, bin = w - q * bins, ph = bin / PW, pw = bin - ph * PW;
                if (is_max) KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0 + q * KS_ROI_CC, ph, pw, 0, 1);
                else KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0 + q * KS_ROI_CC, ph, pw, 0, 0);
            }
            continue;
        }
        /* channels per pass: as many as the tile holds, spread evenly over the passes */
        KS_IDX per = (KS_IDX)(KS_ROI_TILE / (win.fh * fw));
        per = per < nc ? per : nc;
        const KS_IDX passes = (nc + per - 1) / per;
        per = (nc + passes - 1) / passes;
        const float *im = a->input + ((KS_IDX)(r.b < 0 ? 0 : r.b) * C + c0) * HW;
        for (KS_IDX cb = 0; cb < nc; cb += per) {
            const KS_IDX s = nc - cb < per ? nc - cb : per;
            if (cb == 0) KS_VARIANT(ks_roi_tabulate)(t, tio, tf, &r, &win, PH, PW, H, W);
            KS_VARIANT(ks_roi_stage)(t, tile, im + cb * HW, HW, W, &win, s);
            ks_syncthreads(t);
            const KS_IDX work = (s + KS_ROI_PAIR - 1) / KS_ROI_PAIR * bins;
            for (KS_IDX w = tid; w < work; w += nt) {
                const KS_IDX q = w / bins, bin = w - q * bins, ph = bin / PW, pw = bin - ph * PW;
                const KS_IDX jt = q * KS_ROI_PAIR, n = s - jt < KS_ROI_PAIR ? s - jt : KS_ROI_PAIR;
                if (is_max) KS_VARIANT(ks_roi_stage_item)(t, a, &r, tile, tio, tf, &win, k, c0 + cb + jt, n, jt, ph, pw, 1);
                else KS_VARIANT(ks_roi_stage_item)(t, a, &r, tile, tio, tf, &win, k, c0 + cb + jt, n, jt, ph, pw, 0);
            }
            ks_syncthreads(t);
        }
    }
}
