/* roi_align_stage_bwd_body.h - the plain avg RoIAlign backward through shared memory,
 * written once for CUDA and the simulator (ks_shared.h; the simulator runs it with
 * ks_sim_launch_coop). Include it after roi_align_body.h and roi_align_stage_body.h for
 * the same variant (it uses their slot backward, window and tile).
 *
 * Why: the slot backward is bound by the L2's atomics (bench/RESULTS.md, issue 20): every
 * bin of every RoI adds its corners to grad_input on its own, a few scattered vector
 * atomics per bin and channel, and neighbouring bins add to the same pixels again. Here
 * a block works on one RoI k and a group of up to KS_ROI_GROUP channels, in passes of s
 * channels whose footprints fit the tile (the staged forward's window: every corner of
 * every sample, with a pixel of margin):
 *
 *   1. zero tile[j][ry][rx]; barrier;
 *   2. each thread takes (channel, bin) items, bins fastest, and adds the bin's share of
 *      the gradient into the tile with shared atomic adds: merged per axis
 *      (ks_roi_profile, a pixel once per bin) as the slot kernel does, or sample by
 *      sample for a bin too wide for that; barrier;
 *   3. the tile goes out row by row as the aligned float4s that cover each row of the
 *      footprint, consecutive threads consecutive float4s: on sm_90 one vector atomic
 *      each (lanes outside the footprint add 0), a float4 of zeros skipped; barrier.
 *
 * So each footprint pixel gets one atomic add per RoI and channel, and a warp's atomics
 * are contiguous. The sums are grad_input's up to the order of float additions (atomics,
 * as the slot kernel). Not staged - the block does the slot kernel's work
 * (ks_roi_bwd_slot) - for max mode, a bad batch index, or a footprint that is not finite
 * or does not fit the tile; decided from the RoI alone, so every thread of the block
 * reaches the same barriers. Block work items are numbered group * K + k as the staged
 * forward's. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_stage_bwd_body.h"
#endif

/* v into pixel (y, x) of the plane: into the tile at o when inside the window (always,
 * given its margin), else straight into grad */
KS_FN void KS_VARIANT(ks_roi_tile_add)(ks_thread *t, float *tile, KS_IDX o, const ks_roi_win *win, float *grad,
                                       KS_IDX W, KS_IDX y, KS_IDX x, float v)
{
    const KS_IDX ry = y - (KS_IDX)win->ylo, rx = x - (KS_IDX)win->xlo;
    if (ry >= 0 && ry < (KS_IDX)win->fh && rx >= 0 && rx < (KS_IDX)win->fw)
        ks_shared_atomic_add(t, tile, o + ry * (KS_IDX)win->fw + rx, v);
    else
        ks_atomic_add_f32(grad + y * W + x, v);
}

/* One item: bin (ph, pw) of RoI k for channel c, tile plane j: the slot kernel's avg
 * backward (ks_roi_bwd_slot) with the adds into the tile. */
KS_FN void KS_VARIANT(ks_roi_stage_bwd_item)(ks_thread *t, const ks_roi_align_args *a, const ks_roi_box *r,
                                             float *tile, const ks_roi_win *win, KS_IDX k, KS_IDX c, KS_IDX j,
                                             KS_IDX ph, KS_IDX pw)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX gh = (KS_IDX)r->grid_h, gw = (KS_IDX)r->grid_w;
    const float g = a->grad_output[((k * C + c) * PH + ph) * PW + pw] / (float)(gh * gw > 0 ? gh * gw : 1);
    float *grad = a->grad_input + ((KS_IDX)r->b * C + c) * HW;
    const KS_IDX o = j * (KS_IDX)win->fh * (KS_IDX)win->fw;
    float ay[KS_ROI_SPAN], ax[KS_ROI_SPAN];
    int64_t ylo, xlo;
    int ny, nx;
    if (ks_roi_profile(r->y1, ph, r->bin_h, gh, H, ay, &ylo, &ny) &&
        ks_roi_profile(r->x1, pw, r->bin_w, gw, W, ax, &xlo, &nx)) {
        for (int u = 0; u < KS_ROI_SPAN && u < ny; ++u) {
            if (ay[u] == 0.0f) continue;
            const float wr = g * ay[u];
            for (int v = 0; v < KS_ROI_SPAN && v < nx; ++v) {
                const float add = wr * ax[v];
                if (add != 0.0f)
                    KS_VARIANT(ks_roi_tile_add)(t, tile, o, win, grad, W, (KS_IDX)ylo + u, (KS_IDX)xlo + v, add);
            }
        }
        return;
    }
    for (KS_IDX iy = 0; iy < gh; ++iy) {
        for (KS_IDX ix = 0; ix < gw; ++ix) {
            float y, x;
            ks_roi_sample s;
            if (!ks_roi_sample_in_bin(r, ph, pw, iy, ix, gh, gw, H, W, &y, &x, &s)) continue;
            /* the slot kernel's order: row y0 (x0, x1), then row y1 */
            const int64_t ys[2] = {s.y0, s.y1}, xs[2] = {s.x0, s.x1};
            for (int q = 0; q < 4; ++q)
                KS_VARIANT(ks_roi_tile_add)(t, tile, o, win, grad, W, (KS_IDX)ys[q >> 1], (KS_IDX)xs[q & 1], g * s.w[q]);
        }
    }
}

/* Step 3: the tile's s planes into grad (plane j at grad + j*HW): item e is float4 q of
 * row `row` (= j*fh + ry); a row of fw floats starting anywhere in a 16-byte line is
 * covered by at most (fw + 6) / 4 aligned float4s. */
KS_FN void KS_VARIANT(ks_roi_flush)(ks_thread *t, const float *tile, float *grad, KS_IDX HW, KS_IDX W,
                                    const ks_roi_win *win, KS_IDX s)
{
    const KS_IDX fh = (KS_IDX)win->fh, fw = (KS_IDX)win->fw, G = (fw + 6) / 4, total = s * fh * G;
    for (KS_IDX e = (KS_IDX)t->thread_idx.x; e < total; e += (KS_IDX)t->block_dim.x) {
        const KS_IDX row = e / G, q = e - row * G, j = row / fh, ry = row - j * fh;
        float *dst = grad + j * HW + ((KS_IDX)win->ylo + ry) * W + (KS_IDX)win->xlo; /* the row's first pixel */
        const KS_IDX m = (KS_IDX)(((uintptr_t)dst >> 2) & 3), base = 4 * q - m; /* tile column of lane 0 */
        if (base >= fw) continue;
        float v[4];
        int any = 0;
        for (int l = 0; l < 4; ++l) {
            const KS_IDX col = base + l;
            v[l] = col >= 0 && col < fw ? ks_shared_load(t, tile, row * fw + col) : 0.0f;
            any |= v[l] != 0.0f;
        }
        if (!any) continue;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if ((KS_IDX)win->xlo + base >= 0 && (KS_IDX)win->xlo + base + 4 <= W) {
            atomicAdd((float4 *)(dst + base), make_float4(v[0], v[1], v[2], v[3]));
            continue;
        }
#endif
        for (int l = 0; l < 4; ++l)
            if (v[l] != 0.0f) ks_atomic_add_f32(dst + base + l, v[l]);
    }
}

KS_FN void KS_VARIANT(ks_roi_align_stage_bwd_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED(float, tile, KS_ROI_TILE);
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
        ks_roi_win win;
        int64_t xlo = 0, fw = 0;
        win.staged = !is_max && r.b >= 0 && ks_roi_axis_span(r.y1, r.bin_h, PH, r.grid_h, H, &win.ylo, &win.fh) &&
                     ks_roi_axis_span(r.x1, r.bin_w, PW, r.grid_w, W, &xlo, &fw) && win.fh * fw > 0 &&
                     win.fh * fw <= KS_ROI_TILE;
        win.xlo = xlo, win.fw = fw;
        if (!win.staged) { /* the slot kernel's work, KS_ROI_CC channels a slot (it divides the group) */
            const KS_IDX work = (nc + KS_ROI_CC - 1) / KS_ROI_CC * bins;
            for (KS_IDX w = tid; w < work; w += nt) {
                const KS_IDX q = w / bins, bin = w - q * bins, ph = bin / PW, pw = bin - ph * PW;
                if (is_max) KS_VARIANT(ks_roi_bwd_slot)(t, a, k, c0 + q * KS_ROI_CC, ph, pw, 0, 1);
                else KS_VARIANT(ks_roi_bwd_slot)(t, a, k, c0 + q * KS_ROI_CC, ph, pw, 0, 0);
            }
            continue;
        }
        /* channels per pass: as many as the tile holds, spread evenly over the passes */
        const KS_IDX fhw = (KS_IDX)win.fh * (KS_IDX)fw;
        KS_IDX per = (KS_IDX)(KS_ROI_TILE / fhw);
        per = per < nc ? per : nc;
        const KS_IDX passes = (nc + per - 1) / per;
        per = (nc + passes - 1) / passes;
        float *grad = a->grad_input + ((KS_IDX)r.b * C + c0) * HW;
        for (KS_IDX cb = 0; cb < nc; cb += per) {
            const KS_IDX s = nc - cb < per ? nc - cb : per;
            for (KS_IDX e = tid; e < s * fhw; e += nt) ks_shared_store(t, tile, e, 0.0f);
            ks_syncthreads(t);
            for (KS_IDX w = tid; w < s * bins; w += nt) {
                const KS_IDX j = w / bins, bin = w - j * bins, ph = bin / PW, pw = bin - ph * PW;
                KS_VARIANT(ks_roi_stage_bwd_item)(t, a, &r, tile, &win, k, c0 + cb + j, j, ph, pw);
            }
            ks_syncthreads(t);
            KS_VARIANT(ks_roi_flush)(t, tile, grad + cb * HW, HW, W, &win, s);
            ks_syncthreads(t);
        }
    }
}
