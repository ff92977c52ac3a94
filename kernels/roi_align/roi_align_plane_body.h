/* roi_align_plane_body.h - the plain RoIAlign forward through shared memory, one input
 * plane at a time, written once for CUDA and the simulator (ks_shared.h; the simulator
 * runs it with ks_sim_launch_coop). Chosen by --forward plane; slower than the slot
 * kernel on the H100 (bench/RESULTS.md), kept to compare and to build on.
 *
 * Why: every input pixel lies in many RoIs (14-19 for bench_torch's boxes), and the slot
 * kernel (roi_align_body.h) gathers each sample's corners from L2 for every RoI, 4 bytes
 * from ~25 sectors per warp load: it is bound by that L1/L2 traffic, not by DRAM. Here a
 * block copies a band of rows of one input plane (image b, channel c) into shared memory
 * once, coalesced, and computes from it every output (k, c, ph, pw) of a RoI k on image b
 * whose bin row ph the band owns:
 *
 *   1. rows [t0, t0 + R) of plane (b, c) -> tile[(y - t0) * W + x] (float4 where aligned);
 *   2. barrier; thread group g (32 threads) takes RoIs k = g, g + groups, ... (a RoI of
 *      another image is passed over by the whole group at once), its threads the RoI's
 *      bins, and each computes its bin's samples in the slot kernel's order with its fmaf
 *      blend, the corners read from the tile (a corner row outside it from global memory);
 *   3. barrier (the next band or plane overwrites the tile).
 *
 * So the outputs are bitwise those of the slot and traced kernels, avg and max (argmax
 * included). Bands: a plane of at most a->tile_rows rows is one band; a taller one is cut
 * into bands of S rows, each staged with M rows of margin on either side
 * (ks_roi_plane_bands). A bin row belongs to the band holding its middle, clamped to the
 * image (ks_roi_plane_owner): exactly one band computes each output. The sampling
 * geometry is worked out per output (per channel), as in torchvision; what is shared
 * across channels is nothing, across RoIs the staged plane. Block work items are numbered
 * plane * bands + band, planes (b, c) in NCHW order; blocks loop over them. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_plane_body.h"
#endif
#include "../core/ks_shared.h"
#define KS_ROI_DECL_ONLY /* the declarations of roi_align_body.h, not its bodies */
#include "roi_align_body.h"
#undef KS_ROI_DECL_ONLY

#ifndef KS_ROI_PLANE_DECL
#define KS_ROI_PLANE_DECL
/* The band owning bin row ph of box r: the one holding the row's middle, clamped to
 * [0, H-1] (NaN: band 0). The same float arithmetic in every block. */
KS_FN int64_t ks_roi_plane_owner(const ks_roi_box *r, int64_t ph, int64_t H, int64_t S)
{
    const float y = ks_roi_coord(r->y1, ph, r->bin_h, 0, 1);
    if (!(y > 0.0f)) return 0;
    if (!(y < (float)(H - 1))) return (H - 1) / S;
    return (int64_t)y / S;
}
#endif

/* Copies n floats from src into tile, consecutive threads consecutive floats (4 loads in
 * flight a thread; on the GPU float4 when both are 16-byte aligned). */
KS_FN void KS_VARIANT(ks_roi_plane_stage)(ks_thread *t, float *tile, const float *src, KS_IDX n)
{
    const KS_IDX tid = (KS_IDX)t->thread_idx.x, nt = (KS_IDX)t->block_dim.x;
#if defined(__CUDA_ARCH__)
    if ((((uintptr_t)src | (uintptr_t)tile) & 15) == 0) {
        const KS_IDX n4 = n / 4;
        const float4 *s4 = (const float4 *)src;
        float4 *d4 = (float4 *)tile;
        for (KS_IDX e0 = tid; e0 < n4; e0 += 4 * nt) {
            float4 v[4];
            for (int q = 0; q < 4; ++q)
                if (e0 + q * nt < n4) v[q] = s4[e0 + q * nt];
            for (int q = 0; q < 4; ++q)
                if (e0 + q * nt < n4) d4[e0 + q * nt] = v[q];
        }
        for (KS_IDX e = 4 * n4 + tid; e < n; e += nt) tile[e] = src[e];
        return;
    }
#endif
    for (KS_IDX e0 = tid; e0 < n; e0 += 4 * nt) {
        float v[4];
        for (int q = 0; q < 4; ++q) v[q] = e0 + q * nt < n ? src[e0 + q * nt] : 0.0f;
        for (int q = 0; q < 4; ++q)
            if (e0 + q * nt < n) ks_shared_store(t, tile, e0 + q * nt, v[q]);
    }
}

/* One output: bin (ph, pw) of RoI r (index k) for plane (b, c), the slot kernel's
 * ks_roi_fwd_slot for one channel with the corner rows in [t0, t0 + R) read from tile. */
KS_FN void KS_VARIANT(ks_roi_plane_bin)(ks_thread *t, const ks_roi_align_args *a, const ks_roi_box *r,
                                        const float *tile, const float *im, KS_IDX t0, KS_IDX R, KS_IDX k, KS_IDX c,
                                        KS_IDX ph, KS_IDX pw, const int is_max)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX gh = r->b < 0 ? 0 : (KS_IDX)r->grid_h, gw = r->b < 0 ? 0 : (KS_IDX)r->grid_w;
    float acc = is_max ? -3.402823466e38f : 0.0f, best_y = -1.0f, best_x = -1.0f;
    for (KS_IDX iy = 0; iy < gh; ++iy) {
        const float y = ks_roi_coord(r->y1, ph, r->bin_h, iy, gh);
        const int in_y = y >= -1.0f && y <= (float)H;
        int64_t y0 = 0, y1 = 0;
        float yc, ly = 0.0f;
        if (in_y) ks_roi_axis(y, H, &y0, &y1, &yc, &ly);
        const float hy = 1.0f - ly;
        /* each corner row from the tile when staged, else from the plane */
        const int s0 = y0 >= t0 && y0 < t0 + R, s1 = y1 >= t0 && y1 < t0 + R;
        const KS_IDX o0 = ((KS_IDX)y0 - (s0 ? t0 : 0)) * W, o1 = ((KS_IDX)y1 - (s1 ? t0 : 0)) * W;
        for (KS_IDX ix = 0; ix < gw; ++ix) {
            const float x = ks_roi_coord(r->x1, pw, r->bin_w, ix, gw);
            float v = 0.0f;
            if (in_y && x >= -1.0f && x <= (float)W) { /* ks_roi_sample_at's range test */
                int64_t x0, x1;
                float xc, lx;
                ks_roi_axis(x, W, &x0, &x1, &xc, &lx);
                const float hx = 1.0f - lx;
                const float w[4] = {hy * hx, hy * lx, ly * hx, ly * lx}; /* as ks_roi_sample_at */
                const KS_IDX a0 = o0 + (KS_IDX)x0, a1 = o0 + (KS_IDX)x1, b0 = o1 + (KS_IDX)x0, b1 = o1 + (KS_IDX)x1;
                const float v00 = s0 ? ks_shared_load(t, tile, a0) : im[a0];
                const float v01 = s0 ? ks_shared_load(t, tile, a1) : im[a1];
                const float v10 = s1 ? ks_shared_load(t, tile, b0) : im[b0];
                const float v11 = s1 ? ks_shared_load(t, tile, b1) : im[b1];
                v = ks_roi_blend(w, v00, v01, v10, v11);
            }
            ks_roi_take(is_max, v, y, x, &acc, &best_y, &best_x);
        }
    }
    const KS_IDX index = ((k * C + c) * PH + ph) * PW + pw, count = gh * gw;
    if (!is_max) {
        acc /= (float)(count > 0 ? count : 1);
    } else {
        a->argmax_y[index] = best_y;
        a->argmax_x[index] = best_x;
    }
    a->output[index] = acc;
}

KS_FN void KS_VARIANT(ks_roi_align_plane_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED_DYN(float, tile, a->tile_rows * a->width);
    const KS_IDX N = (KS_IDX)a->batch, C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX K = (KS_IDX)a->num_rois, PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w, bins = PH * PW;
    const KS_IDX tid = (KS_IDX)t->thread_idx.x, nt = (KS_IDX)t->block_dim.x;
    const KS_IDX g = tid / 32, groups = (nt + 31) / 32, lane = tid - g * 32;
    const KS_IDX gsize = nt - g * 32 < 32 ? nt - g * 32 : 32; /* the last group may be short */
    const int is_max = a->pool_mode == KS_ROI_MAX;
    int64_t S, M, nb;
    ks_roi_plane_bands(a->height, a->tile_rows, &S, &M, &nb);
    const KS_IDX items = N * C * (KS_IDX)nb;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < items; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX p = item / (KS_IDX)nb, band = item - p * (KS_IDX)nb, b = p / C, c = p - b * C;
        const KS_IDX lo = band * (KS_IDX)S - (KS_IDX)M, hi = band * (KS_IDX)S + (KS_IDX)(S + M);
        const KS_IDX t0 = lo < 0 ? 0 : lo, R = (hi > H ? H : hi) - t0;
        const float *im = a->input + p * H * W;
        KS_VARIANT(ks_roi_plane_stage)(t, tile, im + t0 * W, R * W);
        ks_syncthreads(t);
        for (KS_IDX k = g; k < K; k += groups) {
            ks_roi_box r;
            ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
            if ((r.b < 0 ? 0 : (KS_IDX)r.b) != b) continue; /* a bad batch index: image 0's blocks write it */
            for (KS_IDX bin = lane; bin < bins; bin += gsize) {
                const KS_IDX ph = bin / PW, pw = bin - ph * PW;
                if ((r.b < 0 ? 0 : ks_roi_plane_owner(&r, ph, a->height, S)) != band) continue;
                if (is_max) KS_VARIANT(ks_roi_plane_bin)(t, a, &r, tile, im, t0, R, k, c, ph, pw, 1);
                else KS_VARIANT(ks_roi_plane_bin)(t, a, &r, tile, im, t0, R, k, c, ph, pw, 0);
            }
        }
        ks_syncthreads(t);
    }
}

/* plain only: a row of roi_align_op.c whose twin is the slot forward */
KS_KERNEL_PLAIN(ks_roi_align_plane, ks_roi_align_args, __launch_bounds__(1024))
