/* roi_align_grid_body.h - the plain RoIAlign forward by sample grid, written once for CUDA
 * and the simulator (ks_shared.h; the simulator runs it with ks_sim_launch_coop). Chosen by
 * KS_ROI_FORWARD=grid (docs/roi-align.md says which forward is the default where).
 *
 * Why: the slot kernel (roi_align_body.h) gives a warp's 32 lanes 32 bins of a RoI, whose
 * sample corners lie a bin apart over ~5 rows: ~25 sectors per warp load, 4 bytes used of
 * each, and the kernel is bound by that L1/L2 traffic. Here the lanes take neighbouring
 * samples of one sample row instead (a bin's samples are a fraction of a bin apart), so a
 * warp's corner loads fall on one or two pixel rows of the RoI; the bins are summed
 * afterwards from shared memory. A block works on one RoI k and a chunk of KS_ROI_CHUNK
 * channels c0.. at a time (work items numbered chunk * K + k, the chunk slowest, as the
 * slot kernel's, so the RoIs in flight read a few channels' planes from L2):
 *
 *   1. the RoI's sample grid is NY = PH*gh rows by NX = PW*gw columns; the first corner
 *      and the far weight of each sample row go to ytab/yl, of each column to xtab/xl
 *      (ks_roi_axis; corner -1: the row or column is outside [-1, H] / [-1, W]; the
 *      second corner is the next, or the same at the last row or column);
 *   2. barrier; thread i of the grid's NY*NX samples (row-major: lanes along a row)
 *      blends its sample for each channel of the pass into vals[j][Y][X] (0 outside);
 *   3. barrier; thread o of the pass's outputs (channel, ph, pw) sums its bin's samples
 *      in the slot kernel's order (rows iy, then columns ix: avg, or max with argmax);
 *   4. barrier (the next pass or RoI overwrites vals and the tables).
 *
 * The same weights (ks_roi_sample_at's expressions), the same fmaf blend and the same sum
 * order as ks_roi_fwd_slot: the outputs are bitwise the slot and traced kernels', avg
 * and max. A pass holds as many channels as vals has room for; a RoI whose grid has more
 * than KS_ROI_GRID_AXIS rows or columns or KS_ROI_GRID_VALS samples (or none: a bad batch
 * index, a malformed box) is done by the slot kernel's ks_roi_fwd_slot, a thread a bin,
 * for the whole block (its threads take the same branch: no barrier is skipped by some).
 * Include after roi_align_body.h (its ks_roi_fwd_slot, same variant). Plain only. */
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
    const int64_t bin = i / g, s = i - bin * g;
    const float c = ks_roi_coord(start, bin, size, s, g);
    int64_t c0 = -1, c1;
    float cl, l = 0.0f;
    if (c >= -1.0f && c <= (float)L) ks_roi_axis(c, L, &c0, &c1, &cl, &l);
    ks_shared_store_i32(t, tab, i, (int32_t)c0);
    ks_shared_store(t, frac, i, l);
}

KS_FN void KS_VARIANT(ks_roi_align_grid_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED(float, vals, KS_ROI_GRID_VALS);          /* [pass channels][NY][NX] */
    KS_SHARED(int32_t, ytab, KS_ROI_GRID_AXIS);        /* sample row Y: its first corner row y0 */
    KS_SHARED(float, yl, KS_ROI_GRID_AXIS);            /* and the far row's weight ly */
    KS_SHARED(int32_t, xtab, KS_ROI_GRID_AXIS);        /* sample column X: x0 */
    KS_SHARED(float, xl, KS_ROI_GRID_AXIS);            /* lx */
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX K = (KS_IDX)a->num_rois, PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w, bins = PH * PW;
    const KS_IDX chunks = (C + KS_ROI_CHUNK - 1) / KS_ROI_CHUNK, items = chunks * K;
    const int tid = (int)t->thread_idx.x, nt = (int)t->block_dim.x;
    const int is_max = a->pool_mode == KS_ROI_MAX;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < items; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX s = item / K, k = item - s * K, c0 = s * KS_ROI_CHUNK;
        const KS_IDX nc = C - c0 < KS_ROI_CHUNK ? C - c0 : KS_ROI_CHUNK;
        ks_roi_box r;
        ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
        const int64_t gh = r.b < 0 ? 0 : r.grid_h, gw = r.b < 0 ? 0 : r.grid_w;
        const int64_t NY = PH * gh, NX = PW * gw;
        if (NY == 0 || NX == 0 || NY > KS_ROI_GRID_AXIS || NX > KS_ROI_GRID_AXIS || NY * NX > KS_ROI_GRID_VALS) {
            for (KS_IDX bin = tid; bin < bins; bin += nt) {
                const KS_IDX ph = bin / PW, pw = bin - ph * PW;
                if (is_max) KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0, ph, pw, 0, 1);
                else KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0, ph, pw, 0, 0);
            }
            continue;
        }
        const int ny = (int)NY, nx = (int)NX, n = ny * nx, per = KS_ROI_GRID_VALS / n; /* channels a pass */
        for (int i = tid; i < ny + nx; i += nt) {
            if (i < ny) KS_VARIANT(ks_roi_grid_axis)(t, ytab, yl, i, r.y1, r.bin_h, gh, H);
            else KS_VARIANT(ks_roi_grid_axis)(t, xtab, xl, i - ny, r.x1, r.bin_w, gw, W);
        }
        ks_syncthreads(t); /* the tables are written */
        const float *im0 = a->input + ((KS_IDX)r.b * C + c0) * HW;
        for (KS_IDX cp = 0; cp < nc; cp += per) {
            const int m = (int)(nc - cp < per ? nc - cp : per);
            const float *im = im0 + cp * HW;
            for (int i = tid; i < n; i += nt) {
                const int Y = i / nx, X = i - Y * nx;
                const KS_IDX y0 = ks_shared_load_i32(t, ytab, Y), x0 = ks_shared_load_i32(t, xtab, X);
                const KS_IDX y1 = y0 < H - 1 ? y0 + 1 : y0, x1 = x0 < W - 1 ? x0 + 1 : x0; /* ks_roi_axis */
                const float ly = ks_shared_load(t, yl, Y), lx = ks_shared_load(t, xl, X);
                const float hy = 1.0f - ly, hx = 1.0f - lx;
                const float w[4] = {hy * hx, hy * lx, ly * hx, ly * lx}; /* as ks_roi_sample_at */
                const int in = y0 >= 0 && x0 >= 0;
                const KS_IDX o00 = y0 * W + x0, o01 = y0 * W + x1, o10 = y1 * W + x0, o11 = y1 * W + x1;
                for (int j = 0; j < KS_ROI_CHUNK && j < m; ++j)
                    ks_shared_store(t, vals, j * n + i, in ? ks_roi_blend_at(im + j * HW, o00, o01, o10, o11, w) : 0.0f);
            }
            ks_syncthreads(t); /* the samples are in */
            for (KS_IDX o = tid; o < m * bins; o += nt) {
                const KS_IDX j = o / bins, bin = o - j * bins, ph = bin / PW, pw = bin - ph * PW;
                const int first = (int)(j * n + ph * gh * nx + pw * gw);
                float acc = is_max ? -3.402823466e38f : 0.0f, best_y = -1.0f, best_x = -1.0f;
                for (int64_t iy = 0; iy < gh; ++iy)
                    for (int64_t ix = 0; ix < gw; ++ix) {
                        const float v = ks_shared_load(t, vals, first + (int)(iy * nx + ix));
                        if (!is_max) {
                            acc += v;
                        } else {
                            const float y = ks_roi_coord(r.y1, ph, r.bin_h, iy, gh);
                            ks_roi_take(1, v, y, ks_roi_coord(r.x1, pw, r.bin_w, ix, gw), &acc, &best_y, &best_x);
                        }
                    }
                const KS_IDX index = ((k * C + c0 + cp + j) * PH + ph) * PW + pw;
                if (!is_max) {
                    acc /= (float)(gh * gw);
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
