/* roi_align_cl_body.h - the plain avg RoIAlign forward from a channels-last copy of the
 * input, written once for CUDA and the simulator (ks_shared.h; the simulator runs it with
 * ks_sim_launch_coop). The CUDA default for avg pooling where bins merge (adaptive grids;
 * --forward slot: the slot kernel, cl: also on fixed grids); the simulator's on
 * --forward cl (docs/roi-align.md).
 *
 * Why: a bin's sampling geometry (box, samples, corners, weights, merged profiles) does
 * not depend on the channel. The slot kernel (roi_align_body.h) gives its lanes 32 bins,
 * works the geometry out per thread and gathers 4 bytes a corner from ~25 sectors per
 * warp load, since NCHW puts channels a plane apart. Here the input is first copied to
 * [N, H, W, C] (ks_roi_align_cl_t_body: a transpose through a 32 x 129 shared tile,
 * reads and writes coalesced), so the C values of a pixel are contiguous, and
 *
 *   1. a block work item is one RoI k (on the GPU in image order, a->cl_order, so that
 *      the blocks running at one time read one image's pixels, which stay in L2), a
 *      group of G = lanes * V channels (lanes = 32, V = 4, 2 or 1 channels a thread:
 *      ks_roi_cl_vec) and a chunk of its bins (all of them when the tile of 3. and the
 *      profiles fit 48 KiB: ks_roi_cl_chunk); where bins merge, the item's PH + PW
 *      profiles are worked out first, once, into shared memory (ks_roi_cl_profiles),
 *      then a barrier;
 *   2. a warp takes bins w, w + warps, ...; its lanes the group's channels, V each: the
 *      bin's geometry is the warp's, shared by G channels, and each corner or footprint
 *      pixel is one coalesced load of G contiguous floats (float4 per lane when V = 4);
 *   3. each bin's G results go to a shared tile [G][chunk]; after a barrier the block
 *      writes the tile to output[k, c0 .. c0 + G - 1, chunk's bins] (all the bins:
 *      contiguous there); barrier.
 *
 * Per channel the arithmetic is the slot kernel's, in its order: samples (iy, ix) blended
 * with ks_roi_blend and summed, or, where a->merge, a merged bin's rows of column sums
 * (ks_roi_fwd_merged's fmaf order, with its Inf -> NaN rule), then / count. So the outputs
 * are bitwise those of the slot and traced kernels and of the simulator. Max pooling
 * (argmax outputs) stays with the slot kernel. Blocks loop over the work items
 * (ks_roi_align_cl_items). */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_cl_body.h"
#endif
#include <string.h>

#include "../core/ks_shared.h"
#define KS_ROI_DECL_ONLY /* the declarations of roi_align_body.h, not its bodies */
#include "roi_align_body.h"
#undef KS_ROI_DECL_ONLY

#ifndef KS_ROI_CL_DECL
#define KS_ROI_CL_DECL
/* blocks of at most KS_ROI_CL_MAX_THREADS (the launcher runs the slot kernel for larger
 * ones), so that the registers are not capped at 64: KS_ROI_CL_MINB blocks an SM, at most
 * 85 registers (-DKS_ROI_CL_MINB=N to compare) */
#ifndef KS_ROI_CL_MINB
#define KS_ROI_CL_MINB 3
#endif
#define KS_ROI_CL_BOUNDS __launch_bounds__(KS_ROI_CL_MAX_THREADS, KS_ROI_CL_MINB)
/* the RoIs-in-image-order kernel: images it sorts at most (more: the RoIs' own order) */
#define KS_ROI_CL_ORDER_MAXN 1024
/* V contiguous floats at p (channels of one pixel); float2 / float4 loads on the GPU (the
 * launcher picks V so that p is aligned: C % V == 0, a 16-byte aligned copy). */
KS_FN void ks_roi_cl_load(const float *p, const int V, float *v)
{
#if defined(__CUDA_ARCH__)
    if (V == 4) {
        const float4 q = *(const float4 *)p;
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        return;
    }
    if (V == 2) {
        const float2 q = *(const float2 *)p;
        v[0] = q.x, v[1] = q.y;
        return;
    }
#endif
    for (int j = 0; j < V; ++j) v[j] = p[j];
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* __reduce_*_sync */
#define KS_ROI_CL_WARP_PROFILE 1
/* ks_roi_profile worked out by the lanes of a warp (mask: the lanes taking part, lane
 * `me`): lane i takes sample i (grid <= lanes, else the caller asks ks_roi_profile), and
 * lane k < KS_ROI_SPAN sums pixel lo + k's weight over the samples in order, with the
 * same adds as ks_roi_profile's (the same bits) - a warp's bins share their geometry, so
 * its lanes split it instead of each working all of it out. *mine = that sum (lane k);
 * lo, n, hit, zero and the result as ks_roi_profile's, in every lane. */
__device__ static inline int ks_roi_profile_warp(unsigned mask, int me, float start, int64_t bin, float size,
                                                 int64_t grid, int64_t L, float *mine, int64_t *lo, int *n,
                                                 unsigned *hit, unsigned *zero)
{
    const float c = ks_roi_coord(start, bin, size, me, grid);
    const int in = me < grid && c >= -1.0f && c <= (float)L;
    int64_t c0 = 0, c1 = 0;
    float cl, l = 0.0f;
    if (in) ks_roi_axis(c, L, &c0, &c1, &cl, &l);
    const float h = 1.0f - l;
    const unsigned ins = __ballot_sync(mask, in);
    *mine = 0.0f, *lo = 0, *n = 0, *hit = 0, *zero = 0;
    if (!ins) return 1;
    *lo = __shfl_sync(mask, (int)c0, __ffs(ins) - 1); /* the first in range: the lowest */
    const int k0 = (int)(c0 - *lo), k1 = (int)(c1 - *lo);
    if (__any_sync(mask, in && (k0 < 0 || k1 >= KS_ROI_SPAN))) return 0;
    *hit = __reduce_or_sync(mask, in ? 1u << k0 | 1u << k1 : 0u);
    *zero = __reduce_or_sync(mask, in && l == 0.0f ? 1u << k1 : 0u);
    *n = (int)__reduce_max_sync(mask, in ? (unsigned)k1 + 1u : 0u);
    float acc = 0.0f;
    for (int i = 0; i < grid; ++i) {
        if (!(ins >> i & 1)) continue;
        const int a0 = __shfl_sync(mask, k0, i), a1 = __shfl_sync(mask, k1, i);
        const float hi = __shfl_sync(mask, h, i), li = __shfl_sync(mask, l, i);
        acc += (me == a0 ? hi : 0.0f) + (me == a1 ? li : 0.0f);
    }
    *mine = acc;
    return 1;
}
#endif
#endif

/* The transpose: input [N, C, H, W] -> cl [N, H * W, C]. A block work item is a tile of
 * 32 channels x KS_ROI_CL_TP (roi_align_body.h) pixels of one image (numbered (n * ctiles + ct) * ptiles +
 * pt): the block reads it along the pixels (a warp 32 of one channel row) into shared
 * memory, 16 loads a thread in flight, and after a barrier writes it along the channels
 * (a warp the 32 channels of one pixel); a second barrier before the next tile. */
KS_FN void KS_VARIANT(ks_roi_align_cl_t_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED(float, tile, 32 * (KS_ROI_CL_TP + 1)); /* [channel][pixel], + 1: a pixel's column in 32 banks */
    const KS_IDX N = (KS_IDX)a->batch, C = (KS_IDX)a->channels, HW = (KS_IDX)a->height * (KS_IDX)a->width;
    const KS_IDX tid = (KS_IDX)t->thread_idx.x, nt = (KS_IDX)t->block_dim.x, TP = KS_ROI_CL_TP, n_el = 32 * TP;
    const KS_IDX ctiles = (C + 31) / 32, ptiles = (HW + TP - 1) / TP, items = N * ctiles * ptiles;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < items; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX pt = item % ptiles, nc = item / ptiles, ct = nc % ctiles, n = nc / ctiles;
        const KS_IDX c0 = ct * 32, p0 = pt * TP;
        const float *src = a->input + (n * C + c0) * HW + p0;
        for (KS_IDX e0 = tid; e0 < n_el; e0 += 16 * nt) { /* element e: channel e / TP, pixel e % TP */
            float v[16];
            for (int q = 0; q < 16; ++q) {
                const KS_IDX e = e0 + q * nt, y = e / TP, x = e - y * TP;
                v[q] = e < n_el && c0 + y < C && p0 + x < HW ? src[y * HW + x] : 0.0f;
            }
            for (int q = 0; q < 16; ++q) {
                const KS_IDX e = e0 + q * nt, y = e / TP, x = e - y * TP;
                if (e < n_el) ks_shared_store(t, tile, y * (TP + 1) + x, v[q]);
            }
        }
        ks_syncthreads(t);
        float *dst = a->input_cl + (n * HW + p0) * C + c0;
        for (KS_IDX e = tid; e < n_el; e += nt) { /* element e: pixel e / 32, channel e % 32 */
            const KS_IDX x = e / 32, y = e - x * 32;
            if (p0 + x < HW && c0 + y < C) dst[x * C + y] = ks_shared_load(t, tile, y * (TP + 1) + x);
        }
        ks_syncthreads(t);
    }
}

/* The RoIs in image order (rois[k * 5] as ks_roi_box_of reads it; one out of range counts
 * as image 0) into a->cl_order, for the forward's work items, so that the blocks running at
 * one time read one image's pixels: one block of 1024 threads, N <= KS_ROI_CL_ORDER_MAXN
 * counters in shared memory, an atomic slot each (the order within an image does not
 * change the outputs). */
KS_FN void KS_VARIANT(ks_roi_align_cl_order_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_SHARED(int32_t, start, KS_ROI_CL_ORDER_MAXN);
    const int N = (int)a->batch, K = (int)a->num_rois, tid = (int)t->thread_idx.x, nt = (int)t->block_dim.x;
    int32_t *order = (int32_t *)a->cl_order; /* the launcher's scratch: written here, read by the forward */
    for (int i = tid; i < N; i += nt) ks_shared_store_i32(t, start, i, 0);
    ks_syncthreads(t);
    for (int k = tid; k < K; k += nt) {
        const float b = a->rois[(KS_IDX)k * 5];
        ks_shared_atomic_add_i32(t, start, b > -1.0f && b < (float)N ? (int)b : 0, 1);
    }
    ks_syncthreads(t);
    if (tid == 0)
        for (int i = 0, sum = 0; i < N; ++i) {
            const int c = ks_shared_load_i32(t, start, i);
            ks_shared_store_i32(t, start, i, sum), sum += c;
        }
    ks_syncthreads(t);
    for (int k = tid; k < K; k += nt) {
        const float b = a->rois[(KS_IDX)k * 5];
        order[ks_shared_atomic_add_i32(t, start, b > -1.0f && b < (float)N ? (int)b : 0, 1)] = k;
    }
}

/* A profile's record in shared memory (KS_ROI_CL_PROF words): the KS_ROI_SPAN weights,
 * then lo, n (-1: ks_roi_profile returned 0, the bins sum sample by sample), hit, zero. */
#ifndef KS_ROI_CL_PROF_DECL
#define KS_ROI_CL_PROF_DECL
KS_FN float ks_roi_cl_bits(int32_t i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
KS_FN int32_t ks_roi_cl_int(float f)
{
    int32_t i;
    memcpy(&i, &f, 4);
    return i;
}

/* Profile p's record (see above) from shared memory: its weights into w, 1 when it merged. */
KS_FN int ks_roi_cl_profile_get(ks_thread *t, const float *sh, KS_IDX at, float *w, int64_t *lo, int *n, unsigned *hit,
                                unsigned *zero)
{
    for (int k = 0; k < KS_ROI_SPAN; ++k) w[k] = ks_shared_load(t, sh, at + k);
    *lo = ks_roi_cl_int(ks_shared_load(t, sh, at + KS_ROI_SPAN));
    *n = ks_roi_cl_int(ks_shared_load(t, sh, at + KS_ROI_SPAN + 1));
    *hit = (unsigned)ks_roi_cl_int(ks_shared_load(t, sh, at + KS_ROI_SPAN + 2));
    *zero = (unsigned)ks_roi_cl_int(ks_shared_load(t, sh, at + KS_ROI_SPAN + 3));
    return *n >= 0;
}
#endif

/* The profiles of item RoI r into prof (PH along y, then PW along x, at word `base` of the
 * block's shared array sh), KS_ROI_CL_PROF words each: warp w takes profiles w, w + warps,
 * ..., its lanes splitting each (ks_roi_profile_warp) when it is a whole warp, else its
 * first lane works them out (ks_roi_profile). */
KS_FN void KS_VARIANT(ks_roi_cl_profiles)(ks_thread *t, const ks_roi_align_args *a, const ks_roi_box *r, float *sh,
                                          KS_IDX base, KS_IDX w, KS_IDX warps, KS_IDX lane, unsigned mask)
{
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX gh = (KS_IDX)r->grid_h, gw = (KS_IDX)r->grid_w;
    (void)mask; /* the simulator: one lane a profile */
    for (KS_IDX p = w; p < PH + PW; p += warps) {
        const int along_y = p < PH;
        const KS_IDX bin = along_y ? p : p - PH, grid = along_y ? gh : gw, L = along_y ? a->height : a->width;
        const float start = along_y ? r->y1 : r->x1, size = along_y ? r->bin_h : r->bin_w;
        float acc[KS_ROI_SPAN];
        int64_t lo;
        int n;
        unsigned hit, zero;
        const KS_IDX at = base + p * KS_ROI_CL_PROF;
#if defined(KS_ROI_CL_WARP_PROFILE)
        if (mask == 0xffffffffu && grid <= 32) {
            float mine;
            const int ok = ks_roi_profile_warp(mask, (int)lane, start, bin, size, grid, L, &mine, &lo, &n, &hit, &zero);
            if (lane < KS_ROI_SPAN) ks_shared_store(t, sh, at + lane, mine);
            if (lane == 0) {
                ks_shared_store(t, sh, at + KS_ROI_SPAN, ks_roi_cl_bits((int32_t)lo));
                ks_shared_store(t, sh, at + KS_ROI_SPAN + 1, ks_roi_cl_bits(ok ? n : -1));
                ks_shared_store(t, sh, at + KS_ROI_SPAN + 2, ks_roi_cl_bits((int32_t)hit));
                ks_shared_store(t, sh, at + KS_ROI_SPAN + 3, ks_roi_cl_bits((int32_t)zero));
            }
            continue;
        }
#endif
        if (lane != 0) continue;
        const int ok = ks_roi_profile(start, bin, size, grid, L, acc, &lo, &n, &hit, &zero);
        for (int k = 0; k < KS_ROI_SPAN; ++k) ks_shared_store(t, sh, at + k, acc[k]);
        ks_shared_store(t, sh, at + KS_ROI_SPAN, ks_roi_cl_bits((int32_t)lo));
        ks_shared_store(t, sh, at + KS_ROI_SPAN + 1, ks_roi_cl_bits(ok ? n : -1));
        ks_shared_store(t, sh, at + KS_ROI_SPAN + 2, ks_roi_cl_bits((int32_t)hit));
        ks_shared_store(t, sh, at + KS_ROI_SPAN + 3, ks_roi_cl_bits((int32_t)zero));
    }
}

/* A merged bin's row sums s[j] = sum over the hit columns cb < ncols (bits of hx) of
 * ax[cb] * src[o + cb * C + j] (fmaf, cb ascending: ks_roi_fwd_merged's order); ncols a
 * constant where inlined (4 or KS_ROI_SPAN), so that a narrow bin's row issues no
 * predicated-off work for columns it does not have. */
KS_FN void KS_VARIANT(ks_roi_cl_row)(const float *src, KS_IDX o, KS_IDX C, unsigned hx, const float *ax, const int V,
                                     const int ncols, float *s)
{
    for (int j = 0; j < 4; ++j) s[j] = 0.0f;
    for (int cb = 0; cb < ncols; ++cb) {
        if (!(hx >> cb & 1)) continue;
        float v[4];
        ks_roi_cl_load(src + (o + cb * C), V, v);
        for (int j = 0; j < V; ++j) s[j] = fmaf(ax[cb], v[j], s[j]);
    }
}

/* One bin (ph, pw) of box r for this thread's V channels at element o0 of src (the copy:
 * image b's [H, W, C] block, channel c): the sums before the / count, in the slot
 * kernel's order (see the file comment). valid: the channels exist (else 0s). Where
 * a->merge, the bin's profiles come from the records at word `base` of sh. Offsets, not
 * pointers, so that an address is one multiply-add from the copy's base. */
KS_FN void KS_VARIANT(ks_roi_cl_bin)(ks_thread *t, const ks_roi_align_args *a, const ks_roi_box *r, const float *src,
                                     KS_IDX o0, KS_IDX ph, KS_IDX pw, const int V, int valid, const float *sh,
                                     KS_IDX base, float *acc)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, PH = (KS_IDX)a->pooled_h;
    const KS_IDX gh = r->b < 0 ? 0 : (KS_IDX)r->grid_h, gw = r->b < 0 ? 0 : (KS_IDX)r->grid_w;
    for (int j = 0; j < 4; ++j) acc[j] = 0.0f;
    if (!valid) return;
    float ay[KS_ROI_SPAN], ax[KS_ROI_SPAN];
    int64_t ylo = 0, xlo = 0;
    int ny = 0, nx = 0;
    unsigned hy = 0, hx = 0, zy = 0, zx = 0;
    const int merged = a->merge && gh > 0 &&
                       ks_roi_cl_profile_get(t, sh, base + ph * KS_ROI_CL_PROF, ay, &ylo, &ny, &hy, &zy) &&
                       ks_roi_cl_profile_get(t, sh, base + (PH + pw) * KS_ROI_CL_PROF, ax, &xlo, &nx, &hx, &zx);
    if (merged) {
        /* rows a and columns b by constants (registers on the GPU): ks_roi_fwd_merged's order */
        const KS_IDX o = o0 + ((KS_IDX)ylo * W + (KS_IDX)xlo) * C, WC = W * C;
        for (int ra = 0; ra < KS_ROI_SPAN; ++ra) {
            if (!(hy >> ra & 1)) continue; /* hit bits lie below ny, nx */
            float s[4];
            if (nx <= 4) KS_VARIANT(ks_roi_cl_row)(src, o + ra * WC, C, hx, ax, V, 4, s);
            else KS_VARIANT(ks_roi_cl_row)(src, o + ra * WC, C, hx, ax, V, KS_ROI_SPAN, s);
            for (int j = 0; j < V; ++j) acc[j] = fmaf(ay[ra], s[j], acc[j]);
        }
        for (int j = 0; j < V; ++j)
            if (isinf(acc[j]) && (zy | zx) &&
                ks_roi_zero_meets_inf(src + o0 + j, WC, ylo, ny, hy, zy, xlo, nx, hx, zx, C))
                acc[j] *= 0.0f; /* NaN, as the per-sample sum (ks_roi_fwd_slot) */
        return;
    }
    /* the samples in (iy, ix) order, each adding to acc in turn */
    for (KS_IDX iy = 0; iy < gh; ++iy)
        for (KS_IDX ix = 0; ix < gw; ++ix) {
            float y, x;
            ks_roi_sample s;
            if (!ks_roi_sample_in_bin(r, ph, pw, iy, ix, gh, gw, H, W, &y, &x, &s)) {
                for (int j = 0; j < V; ++j) acc[j] += 0.0f; /* the slot kernel's v = 0 (-0 + 0 = +0) */
                continue;
            }
            float v[4][4]; /* [corner][channel] */
            const KS_IDX r0 = o0 + (KS_IDX)s.y0 * W * C, r1 = o0 + (KS_IDX)s.y1 * W * C;
            ks_roi_cl_load(src + (r0 + (KS_IDX)s.x0 * C), V, v[0]);
            ks_roi_cl_load(src + (r0 + (KS_IDX)s.x1 * C), V, v[1]);
            ks_roi_cl_load(src + (r1 + (KS_IDX)s.x0 * C), V, v[2]);
            ks_roi_cl_load(src + (r1 + (KS_IDX)s.x1 * C), V, v[3]);
            for (int j = 0; j < V; ++j) acc[j] += ks_roi_blend(s.w, v[0][j], v[1][j], v[2][j], v[3][j]);
        }
}

/* The forward: see the file comment. V channels a thread (a constant where inlined). */
KS_FN void KS_VARIANT(ks_roi_cl_run)(ks_thread *t, const ks_roi_align_args *a, const int V)
{
    const KS_IDX C = (KS_IDX)a->channels, HW = (KS_IDX)a->height * (KS_IDX)a->width;
    const KS_IDX K = (KS_IDX)a->num_rois, PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w, bins = PH * PW;
    const KS_IDX tid = (KS_IDX)t->thread_idx.x, nt = (KS_IDX)t->block_dim.x;
    const KS_IDX lanes = ks_roi_cl_lanes(nt), G = lanes * V, groups = (C + G - 1) / G;
    const KS_IDX chunk = (KS_IDX)a->cl_chunk, chunks = (bins + chunk - 1) / chunk;
    const KS_IDX warps = nt / lanes, w = tid / lanes, lane = tid - w * lanes;
    const unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u; /* a warp's lanes (lanes < 32: all nt) */
    /* the tile [G][chunk], then the item's PH + PW profile records (merged bins) */
    KS_SHARED_DYN(float, tile, G * chunk + (PH + PW) * KS_ROI_CL_PROF);
    const KS_IDX base = G * chunk;
    for (KS_IDX item = (KS_IDX)t->block_idx.x; item < K * groups * chunks; item += (KS_IDX)t->grid_dim.x) {
        const KS_IDX kg = item / chunks, kk = kg / groups, c0 = (kg - kk * groups) * G;
        const KS_IDX k = a->cl_order ? (KS_IDX)a->cl_order[kk] : kk; /* the kk-th RoI in image order */
        const KS_IDX b0 = (item - kg * chunks) * chunk, nb = bins - b0 < chunk ? bins - b0 : chunk;
        const KS_IDX nc = C - c0 < G ? C - c0 : G;
        ks_roi_box r;
        ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
        const KS_IDX c = c0 + lane * V;
        const KS_IDX o0 = (KS_IDX)(r.b < 0 ? 0 : r.b) * HW * C + c; /* image b, channel c of the copy */
        const KS_IDX gh = r.b < 0 ? 0 : (KS_IDX)r.grid_h, gw = r.b < 0 ? 0 : (KS_IDX)r.grid_w;
        const float count = (float)(gh * gw > 0 ? gh * gw : 1);
        if (a->merge && gh > 0) { /* the bins' profiles, once for the item */
            if (w < warps) KS_VARIANT(ks_roi_cl_profiles)(t, a, &r, tile, base, w, warps, lane, mask);
            ks_syncthreads(t);
        }
        if (w < warps)
            for (KS_IDX i = w; i < nb; i += warps) {
                const KS_IDX ph = (b0 + i) / PW, pw = b0 + i - ph * PW;
                float acc[4];
                KS_VARIANT(ks_roi_cl_bin)(t, a, &r, a->input_cl, o0, ph, pw, V, c < C, tile, base, acc);
                for (int j = 0; j < V; ++j) ks_shared_store(t, tile, (lane * V + j) * chunk + i, acc[j] / count);
            }
        ks_syncthreads(t);
        /* channel c0 + e / nb's bins b0 .. b0 + nb - 1; all the bins (one chunk): the
         * group's outputs, contiguous in the output */
        float *out = a->output + (k * C + c0) * bins + b0;
        if (nb == bins)
            for (KS_IDX e = tid; e < nc * nb; e += nt) out[e] = ks_shared_load(t, tile, e);
        else
            for (KS_IDX e = tid; e < nc * nb; e += nt) {
                const KS_IDX ch = e / nb, i = e - ch * nb;
                out[ch * bins + i] = ks_shared_load(t, tile, ch * chunk + i);
            }
        ks_syncthreads(t);
    }
}

/* one body (one CUDA kernel) per V, each with its own registers */
KS_FN void KS_VARIANT(ks_roi_align_cl4_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_VARIANT(ks_roi_cl_run)(t, a, 4);
}

KS_FN void KS_VARIANT(ks_roi_align_cl2_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_VARIANT(ks_roi_cl_run)(t, a, 2);
}

KS_FN void KS_VARIANT(ks_roi_align_cl1_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_VARIANT(ks_roi_cl_run)(t, a, 1);
}

/* The kernel lines: plain only (each a row of roi_align_op.c whose twin is the slot
 * forward), in their launch order */
KS_KERNEL_PLAIN(ks_roi_align_cl_order, ks_roi_align_args, __launch_bounds__(1024))
KS_KERNEL_PLAIN(ks_roi_align_cl_t, ks_roi_align_args, __launch_bounds__(1024))
KS_KERNEL_PLAIN(ks_roi_align_cl4, ks_roi_align_args, KS_ROI_CL_BOUNDS)
KS_KERNEL_PLAIN(ks_roi_align_cl2, ks_roi_align_args, KS_ROI_CL_BOUNDS)
KS_KERNEL_PLAIN(ks_roi_align_cl1, ks_roi_align_args, KS_ROI_CL_BOUNDS)
