/* roi_align_grid_body.h - the plain RoIAlign forward by sample grid, written once for CUDA
 * and the simulator (ks_shared.h; the simulator runs it with ks_sim_launch_coop). Chosen by
 * KS_ROI_FORWARD=grid (docs/roi-align.md says which forward is the default where).
 *
 * Why: the slot kernel (roi_align_body.h) gives a warp's 32 lanes 32 bins of a RoI, whose
 * sample corners lie a bin apart over ~5 rows: ~25 sectors per warp load, 4 bytes used of
 * each, and the kernel is bound by that L1/L2 traffic. Here the lanes take neighbouring
 * samples of one sample row instead (a bin's samples are a fraction of a bin apart), so a
 * warp's corner loads fall on one or two pixel rows of the RoI; the bins are summed
 * afterwards from shared memory. A block works on one RoI k and a chunk of KS_ROI_GRID_CC
 * channels c0.. at a time (work items numbered chunk * K + k, the chunk slowest, as the
 * slot kernel's, so the RoIs in flight read a few channels' planes from L2):
 *
 *   1. the RoI's sample grid is NY = PH*gh rows by NX = PW*gw columns; the first corner
 *      and the far weight of each sample row go to ytab/yl, of each column to xtab/xl
 *      (ks_roi_axis; corner -1: the row or column is outside [-1, H] / [-1, W]; the
 *      second corner is the next, or the same at the last row or column);
 *   2. barrier; a pass takes as many of the chunk's channels as vals holds grids; its
 *      tasks (four channels, one sample; samples row-major, so lanes run along a row)
 *      blend the sample for each channel into vals[j][Y][X] (0 outside);
 *   3. barrier; thread o of the pass's outputs (channel, ph, pw) sums its bin's samples
 *      in the slot kernel's order (rows iy, then columns ix: avg, or max with argmax);
 *   4. barrier (the next pass or RoI overwrites vals and the tables).
 *
 * The same weights (ks_roi_sample_at's expressions), the same fmaf blend and the same sum
 * order as ks_roi_fwd_slot: the outputs are bitwise the slot and traced kernels', avg and
 * max. A RoI whose grid has more than KS_ROI_GRID_AXIS rows or columns or KS_ROI_GRID_VALS
 * samples (or none: a bad batch index, a malformed box) is done from global memory, a
 * thread an output (ks_roi_grid_bin, the slot kernel's samples and order), by the whole
 * block: its threads take the same branch, so none skips a barrier. Plain only. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_grid_body.h"
#endif
#include "../core/ks_shared.h"
#include "roi_align_args.h"
#include "roi_align_sample.h"

/* One axis's table entry i: sample i of the axis's grid (bin i / g, sample i % g of it)
 * through ks_roi_axis: its first corner (-1 when the coordinate is outside [-1, L]) and
 * the far corner's weight. */
KS_FN void KS_VARIANT(ks_roi_grid_axis)(ks_thread *t, int32_t *tab, float *frac, int i, float start, float size,
                                        int64_t g, int64_t L)
{
    const int bin = i / (int)g, s = i - bin * (int)g; /* g <= KS_ROI_GRID_AXIS */
    const float c = ks_roi_coord(start, bin, size, s, g);
    int64_t c0 = -1, c1;
    float cl, l = 0.0f;
    if (c >= -1.0f && c <= (float)L) ks_roi_axis(c, L, &c0, &c1, &cl, &l);
    ks_shared_store_i32(t, tab, i, (int32_t)c0);
    ks_shared_store(t, frac, i, l);
}

/* Output (c, ph, pw) of RoI r (index k) with the slot kernel's samples and order, one
 * channel, read from global memory: a RoI whose grid the block's tables do not hold. */
KS_FN void KS_VARIANT(ks_roi_grid_bin)(const ks_roi_align_args *a, const ks_roi_box *r, KS_IDX k, KS_IDX c, KS_IDX ph,
                                       KS_IDX pw, const int is_max)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const int64_t gh = r->b < 0 ? 0 : r->grid_h, gw = r->b < 0 ? 0 : r->grid_w;
    const float *im = a->input + ((KS_IDX)(r->b < 0 ? 0 : r->b) * C + c) * H * W;
    float acc = is_max ? -3.402823466e38f : 0.0f, best_y = -1.0f, best_x = -1.0f;
    for (int64_t iy = 0; iy < gh; ++iy)
        for (int64_t ix = 0; ix < gw; ++ix) {
            float y, x;
            ks_roi_sample s;
            const int in = ks_roi_sample_in_bin(r, ph, pw, iy, ix, gh, gw, H, W, &y, &x, &s);
            const KS_IDX y0 = (KS_IDX)s.y0 * W, y1 = (KS_IDX)s.y1 * W, x0 = (KS_IDX)s.x0, x1 = (KS_IDX)s.x1;
            ks_roi_take(is_max, in ? ks_roi_blend_at(im, y0 + x0, y0 + x1, y1 + x0, y1 + x1, s.w) : 0.0f, y, x, &acc,
                        &best_y, &best_x);
        }
    const KS_IDX index = ((k * C + c) * PH + ph) * PW + pw;
    if (!is_max) {
        acc /= (float)(gh * gw > 0 ? gh * gw : 1);
    } else {
        a->argmax_y[index] = best_y;
        a->argmax_x[index] = best_x;
    }
    a->output[index] = acc;
}

/* Step 2 for channels cp .. cp+m-1 of the item: task (q, i) blends sample i (row-major)
 * for the item's channels 4q .. 4q+3 of the pass, its loads in flight together; tasks are
 * walked i fastest, without dividing. */
KS_FN void KS_VARIANT(ks_roi_grid_samples)(ks_thread *t, const ks_roi_align_args *a, float *vals, const int32_t *ytab,
                                           const float *yl, const int32_t *xtab, const float *xl, const float *im,
                                           int nx, int n, int m)
{
    const KS_IDX H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const int nt = (int)t->block_dim.x, quads = (m + 3) / 4, dY = nt / nx, dX = nt - dY * nx, ny = n / nx;
    int q = 0, i = (int)t->thread_idx.x, Y = i / nx, X = i - Y * nx;
    while (i >= n && q < quads) i -= n, ++q, Y = i / nx, X = i - Y * nx; /* a block larger than the grid */
    for (; q < quads;) {
        const KS_IDX y0 = ks_shared_load_i32(t, ytab, Y), x0 = ks_shared_load_i32(t, xtab, X);
        const KS_IDX y1 = y0 < H - 1 ? y0 + 1 : y0, x1 = x0 < W - 1 ? x0 + 1 : x0; /* as ks_roi_axis */
        const float ly = ks_shared_load(t, yl, Y), lx = ks_shared_load(t, xl, X);
        const float hy = 1.0f - ly, hx = 1.0f - lx;
        const float w[4] = {hy * hx, hy * lx, ly * hx, ly * lx}; /* as ks_roi_sample_at */
        const int in = y0 >= 0 && x0 >= 0;
        const KS_IDX o00 = y0 * W + x0, o01 = y0 * W + x1, o10 = y1 * W + x0, o11 = y1 * W + x1;
        float v[4];
        for (int j = 0; j < 4; ++j)
            v[j] = in && 4 * q + j < m ? ks_roi_blend_at(im + (4 * q + j) * HW, o00, o01, o10, o11, w) : 0.0f;
        for (int j = 0; j < 4; ++j)
            if (4 * q + j < m) ks_shared_store(t, vals, (4 * q + j) * n + i, v[j]);
        /* the next task: nt samples on */
        i += nt, Y += dY, X += dX;
        if (X >= nx) X -= nx, ++Y;
        while (i >= n && q < quads) i -= n, ++q, Y -= ny; /* the next quad, the same column */
    }
}

KS_FN void KS_VARIANT(ks_roi_align_grid_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED(float, vals, KS_ROI_GRID_VALS);  /* [pass channel][NY][NX] */
    KS_SHARED(int32_t, ytab, KS_ROI_GRID_AXIS); /* sample row Y: its first corner row y0 */
    KS_SHARED(float, yl, KS_ROI_GRID_AXIS);     /* and the far row's weight ly */
    KS_SHARED(int32_t, xtab, KS_ROI_GRID_AXIS); /* sample column X: x0 */
    KS_SHARED(float, xl, KS_ROI_GRID_AXIS);     /* lx */
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX K = (KS_IDX)a->num_rois, PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w, bins = PH * PW;
    const KS_IDX chunks = (C + KS_ROI_GRID_CC - 1) / KS_ROI_GRID_CC, items = chunks * K;
    const int tid = (int)t->thread_idx.x, nt = (int)t->block_dim.x;
    const int is_max = a->pool_mode == KS_ROI_MAX;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < items; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX s = item / K, k = item - s * K, c0 = s * KS_ROI_GRID_CC;
        const KS_IDX nc = C - c0 < KS_ROI_GRID_CC ? C - c0 : KS_ROI_GRID_CC;
        ks_roi_box r;
        ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
        const int64_t gh = r.b < 0 ? 0 : r.grid_h, gw = r.b < 0 ? 0 : r.grid_w;
        const int64_t NY = PH * gh, NX = PW * gw;
        if (NY == 0 || NX == 0 || NY > KS_ROI_GRID_AXIS || NX > KS_ROI_GRID_AXIS || NY * NX > KS_ROI_GRID_VALS) {
            for (KS_IDX o = tid; o < nc * bins; o += nt) {
                const KS_IDX j = o / bins, bin = o - j * bins, ph = bin / PW;
                if (is_max) KS_VARIANT(ks_roi_grid_bin)(a, &r, k, c0 + j, ph, bin - ph * PW, 1);
                else KS_VARIANT(ks_roi_grid_bin)(a, &r, k, c0 + j, ph, bin - ph * PW, 0);
            }
            continue;
        }
        const int ny = (int)NY, nx = (int)NX, n = ny * nx, per = KS_ROI_GRID_VALS / n; /* channels a pass */
        const int ghi = (int)gh, gwi = (int)gw;
        for (int i = tid; i < ny + nx; i += nt) {
            if (i < ny) KS_VARIANT(ks_roi_grid_axis)(t, ytab, yl, i, r.y1, r.bin_h, gh, H);
            else KS_VARIANT(ks_roi_grid_axis)(t, xtab, xl, i - ny, r.x1, r.bin_w, gw, W);
        }
        ks_syncthreads(t); /* the tables are written */
        const float *im0 = a->input + ((KS_IDX)r.b * C + c0) * HW;
        for (KS_IDX cp = 0; cp < nc; cp += per) {
            const int m = (int)(nc - cp < per ? nc - cp : per);
            KS_VARIANT(ks_roi_grid_samples)(t, a, vals, ytab, yl, xtab, xl, im0 + cp * HW, nx, n, m);
            ks_syncthreads(t); /* the samples are in */
            for (KS_IDX o = tid; o < m * bins; o += nt) {
                const KS_IDX j = o / bins, bin = o - j * bins, ph = bin / PW, pw = bin - ph * PW;
                const int first = (int)j * n + (int)ph * ghi * nx + (int)pw * gwi;
                float acc = is_max ? -3.402823466e38f : 0.0f, best_y = -1.0f, best_x = -1.0f;
                for (int iy = 0; iy < ghi; ++iy)
                    for (int ix = 0; ix < gwi; ++ix) {
                        const float v = ks_shared_load(t, vals, first + iy * nx + ix);
                        if (!is_max) {
                            acc += v;
                        } else {
                            const float y = ks_roi_coord(r.y1, ph, r.bin_h, iy, gh);
                            ks_roi_take(1, v, y, ks_roi_coord(r.x1, pw, r.bin_w, ix, gw), &acc, &best_y, &best_x);
                        }
                    }
                const KS_IDX index = ((k * C + c0 + cp + j) * PH + ph) * PW + pw;
                if (!is_max) {
                    acc /= (float)(ghi * gwi);
                } else {
                    a->argmax_y[index] = best_y;
                    a->argmax_x[index] = best_x;
                }
                a->output[index] = acc;
            }
            ks_syncthreads(t); /* the next pass or RoI overwrites vals and the tables */
        }
    }
}
