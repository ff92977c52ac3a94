/* deform_fused.cu - the TF32 forward of a chunk in one kernel: an implicit GEMM whose B
 * operand is sampled straight into shared memory, so the columns matrix never reaches
 * global memory (the explicit path writes and reads it: 302 MB on N8 C256 64x64).
 *
 * For conv group gr (Og outputs, Cg channels, kk taps), with n = b*P + q a column:
 *   out[b, gr*Og + o, q] = sum over (tap, c) of Wt[gr*Og + o][tap][c] * S(b, gr*Cg + c, tap, q)
 *                          (+ bias[gr*Og + o])
 * where S is im2col's entry (the blend of the four corners, deform_bilinear.h, times the
 * mask: the tap kernels' own helpers) and Wt the weight [O][Cg][kk] laid out tap-major
 * ([O][kk][Cg]) and rounded to TF32 once per call (ks_deform_fused_weight_k).
 *
 * A block computes a BM x BN tile of (o, n) over K = kk*Cg in steps of one tap and 32
 * channels, taps outer: a thread keeps its column's sampling point (corner offset,
 * weights, flags, mask) for a whole tap, since the point does not depend on the channel.
 * Each step copies the weight slice [BM x 32] to shared memory, samples [32 x BN] there
 * (a thread samples BN-strided channels of one column: a warp reads neighbouring columns,
 * so neighbouring pixels), and the warps multiply with mma.sync m16n8k8 TF32, fp32 sums.
 * A warp owns 64 x 32 of the tile: 4 x 4 mma tiles, 64 accumulators a thread. MW warps
 * down the tile and NW across: BM = 64*MW, BN = 32*NW.
 *
 * Shared memory: As[BM][36] (rows 144 bytes apart: the A fragments' lanes (row g, column
 * t) fall on banks 4g + t, all different) and Bs[32][BN + 8] (B fragments: banks 8t + g).
 *
 * CUDA only (mma.sync): the simulator and the traced chunks run im2col + GEMM, which this
 * equals up to the TF32 GEMM's order of sums (documented tolerance: docs/deform-conv.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_cuda.h"
#include "deform_layer.h"

#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"

enum { FUSED_BK = 32, FUSED_APAD = 4, FUSED_BPAD = 8 };

/* x rounded to TF32 (nearest, ties away), the tensor cores' input format */
__device__ __forceinline__ uint32_t fused_tf32(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

/* d += a x b for one 16 x 8 x 8 tile (fragments as PTX's mma.m16n8k8 .tf32 lays them out) */
__device__ __forceinline__ void fused_mma(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* wt[o][tap][c] = tf32(w[o][c][tap]); i indexes wt (O*Cg*kk < 2^30) */
__global__ void ks_deform_fused_weight_k(const float *w, float *wt, int n, int Cg, int kk)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int c = i % Cg, tap = (i / Cg) % kk, o = i / (Cg * kk);
        wt[i] = __uint_as_float(fused_tf32(w[(o * Cg + c) * kk + tap]));
    }
}

typedef struct fused_args {
    ks_deform_args a;  /* the chunk's sampling: input, offset, mask, sizes */
    const float *wt;   /* [O][kk][Cg], TF32 */
    const float *bias; /* [O] or NULL */
    float *out;        /* the chunk's output [im2col_step][O][P] */
    int O, Og, Cg;
} fused_args;

/* where a column samples during one tap: corner k at at0 + (k>>1)*W + (k&1) of each plane */
typedef struct fused_point {
    int at0, flags;
    float w[4], m;
} fused_point;

__device__ __forceinline__ fused_point fused_place(const ks_deform_args *a, int valid, int b, int goff, int tap,
                                                   int h_col, int w_col)
{
    fused_point pt = {0, 0, {0.0f, 0.0f, 0.0f, 0.0f}, 1.0f};
    if (!valid) return pt; /* a column past the chunk: zeros */
    const ks_deform_tap_plain32 s = ks_deform_tap_read_plain32(NULL, a, b, goff, tap, h_col, w_col);
    ks_bilinear pl;
    ks_deform_place(a->height, a->width, s.y, s.x, &pl);
    pt.at0 = (int)pl.y0 * (int)a->width + (int)pl.x0;
    pt.flags = pl.flags;
    for (int k = 0; k < 4; ++k) pt.w[k] = pl.w[k];
    pt.m = s.m;
    return pt;
}

template <int MW, int NW>
__global__ void __launch_bounds__(32 * MW * NW) ks_deform_fused_k(const fused_args f)
{
    constexpr int THREADS = 32 * MW * NW, BM = 64 * MW, BN = 32 * NW;
    constexpr int AS = FUSED_BK + FUSED_APAD, BS = BN + FUSED_BPAD;
    constexpr int CPT = FUSED_BK * BN / THREADS; /* channels a thread samples per step */
    extern __shared__ uint32_t fused_smem[]; /* two stages of As then Bs */
    constexpr int STAGE = BM * AS + FUSED_BK * BS;
    const ks_deform_args *a = &f.a;
    const int C = (int)a->channels, W = (int)a->width, HW = (int)a->height * W;
    const int Wo = (int)a->width_col, P = (int)a->height_col * Wo, kk = (int)(a->kernel_h * a->kernel_w);
    const int n_cols = (int)a->im2col_step * P, cpg = C / (int)a->offset_groups;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % MW, wn = warp / MW, g = lane >> 2, tg = lane & 3;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, gr = blockIdx.z;
    /* the sampler: column sn of the tile, channels sc0 .. sc0 + CPT - 1 of each step */
    const int sn = tid % BN, sc0 = (tid / BN) * CPT, n = n0 + sn, valid = n < n_cols;
    const int b = valid ? n / P : 0, q = valid ? n - b * P : 0, h_col = q / Wo, w_col = q - h_col * Wo;
    const float *wt = f.wt + (int64_t)(gr * f.Og + m0) * kk * f.Cg;
    const int m_rows = f.Og - m0 < BM ? f.Og - m0 : BM; /* rows of this tile inside the group */
    const int blocks_c = f.Cg / FUSED_BK, steps = kk * blocks_c;
    float acc[4][4][4]; /* registers: every loop over it unrolls */
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    /* step s: tap s / blocks_c, channels cb .. cb + 31 of the group, cb = (s % blocks_c)*32.
     * The pipeline: step s+1's weight slice (cp.async) and corner values (registers) are
     * in flight while the warps multiply step s; then the samples go to the other stage. */
    int goff = -1, tap_at = -1;
    fused_point pt = {0, 0, {0.0f, 0.0f, 0.0f, 0.0f}, 1.0f};
    float v[CPT][4];
    auto load = [&](int st, int step) {
        const int tap = step / blocks_c, cb = (step - tap * blocks_c) * FUSED_BK, c_first = gr * f.Cg + cb;
        uint32_t *As = fused_smem + st * STAGE;
        for (int i = tid; i < BM * (FUSED_BK / 4); i += THREADS) {
            const int r = i / (FUSED_BK / 4), k4 = (i % (FUSED_BK / 4)) * 4;
            const float *src = wt + ((int64_t)(r < m_rows ? r : 0) * kk + tap) * f.Cg + cb + k4;
            const unsigned dst = (unsigned)__cvta_generic_to_shared(As + r * AS + k4);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
                         "r"(r < m_rows ? 16 : 0)); /* rows past the group: zeros */
        }
        asm volatile("cp.async.commit_group;");
        /* the point is the channel's: placed again only for a new tap or offset group */
        if (tap != tap_at || c_first / cpg != goff)
            tap_at = tap, goff = c_first / cpg, pt = fused_place(a, valid, b, goff, tap, h_col, w_col);
        const float *im = a->input + (b * C + c_first + sc0) * HW;
#pragma unroll
        for (int j = 0; j < CPT; ++j, im += HW)
#pragma unroll
            for (int k = 0; k < 4; ++k)
                v[j][k] = (pt.flags & (KS_FLAG_C00 << k)) ? im[pt.at0 + (k >> 1) * W + (k & 1)] : 0.0f;
    };
    auto store = [&](int st) {
        uint32_t *Bs = fused_smem + st * STAGE + BM * AS;
#pragma unroll
        for (int j = 0; j < CPT; ++j) {
            const float blend = ks_deform_blend(pt.w, v[j]);
            Bs[(sc0 + j) * BS + sn] = fused_tf32(a->use_mask ? blend * pt.m : blend);
        }
    };
    load(0, 0);
    store(0);
    asm volatile("cp.async.wait_all;");
    __syncthreads();
    for (int s = 0; s < steps; ++s) {
        const int st = s & 1;
        if (s + 1 < steps) load(st ^ 1, s + 1);
        const uint32_t *As = fused_smem + st * STAGE, *Bs = As + BM * AS;
#pragma unroll
        for (int k8 = 0; k8 < FUSED_BK; k8 += 8) {
            uint32_t af[4][4], bf[4][2];
#pragma unroll
            for (int mt = 0; mt < 4; ++mt) {
                const uint32_t *r0 = As + (wm * 64 + mt * 16 + g) * AS + k8 + tg;
                af[mt][0] = r0[0], af[mt][1] = r0[8 * AS], af[mt][2] = r0[4], af[mt][3] = r0[8 * AS + 4];
            }
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const uint32_t *c0 = Bs + (k8 + tg) * BS + wn * 32 + nt * 8 + g;
                bf[nt][0] = c0[0], bf[nt][1] = c0[4 * BS];
            }
#pragma unroll
            for (int mt = 0; mt < 4; ++mt)
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) fused_mma(acc[mt][nt], af[mt], bf[nt]);
        }
        if (s + 1 < steps) store(st ^ 1);
        asm volatile("cp.async.wait_all;");
        __syncthreads(); /* the next stage is full; every warp is done with this one */
    }
    /* accumulator e of tile (mt, nt): row g (+8 for e >= 2), column 2*tg (+1 for odd e) */
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = wm * 64 + mt * 16 + g + (e >> 1) * 8, col = n0 + wn * 32 + nt * 8 + 2 * tg + (e & 1);
                if (r >= m_rows || col >= n_cols) continue;
                const int o = gr * f.Og + m0 + r, bb = col / P;
                f.out[(bb * f.O + o) * P + (col - bb * P)] = f.bias ? acc[mt][nt][e] + f.bias[o] : acc[mt][nt][e];
            }
}

template <int MW, int NW>
static int fused_launch(const fused_args *f, int64_t n_cols, int groups, cudaStream_t s)
{
    constexpr int BM = 64 * MW, BN = 32 * NW;
    const size_t bytes = 2 * (size_t)(BM * (FUSED_BK + FUSED_APAD) + FUSED_BK * (BN + FUSED_BPAD)) * sizeof(float);
    int rc = ks_cuda_ok(cudaFuncSetAttribute(ks_deform_fused_k<MW, NW>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)bytes),
                        "cudaFuncSetAttribute(deform fused)");
    if (rc) return rc;
    const dim3 grid((unsigned)((n_cols + BN - 1) / BN), (unsigned)((f->Og + BM - 1) / BM), (unsigned)groups);
    ks_deform_fused_k<MW, NW><<<grid, 32 * MW * NW, bytes, s>>>(*f);
    return ks_cuda_check_launch("deformable_fused_tf32");
}

/* The tile shape: KS_DEFORM_FUSED=MN (M, N warps: 24, 42 or 44) picks one; by default 4 x 4
 * warps (256 x 128) when a group has more than 128 outputs, else 2 x 4 (128 x 128). */
static int fused_shape(int64_t Og)
{
    const char *e = getenv("KS_DEFORM_FUSED");
    if (e && (!strcmp(e, "24") || !strcmp(e, "42") || !strcmp(e, "44"))) return atoi(e);
    return Og > 128 ? 44 : 24;
}

extern "C" int ks_deform_fused_cuda(void *stream, const ks_deform_params *p, const ks_deform_geom *g,
                                    const ks_deform_chunk *c, const float *weight, float *weight_t, int prepare,
                                    const float *bias, float *out)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t kk = p->kernel_h * p->kernel_w, Cg = p->channels / p->groups;
    if (prepare) {
        const int n = (int)g->weight_numel;
        ks_deform_fused_weight_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256, 0, s>>>(weight, weight_t, n,
                                                                                                 (int)Cg, (int)kk);
        int rc = ks_cuda_check_launch("deformable_fused_tf32 weight");
        if (rc) return rc;
    }
    fused_args f;
    ks_deform_args_fill(p, g, c, &f.a);
    f.wt = weight_t, f.bias = bias, f.out = out;
    f.O = (int)p->out_channels, f.Og = (int)(p->out_channels / p->groups), f.Cg = (int)Cg;
    const int64_t n_cols = c->im2col_step * g->height_out * g->width_out;
    ks_deform_fused_launched();
    switch (fused_shape(f.Og)) {
    case 42: return fused_launch<4, 2>(&f, n_cols, (int)p->groups, s);
    case 44: return fused_launch<4, 4>(&f, n_cols, (int)p->groups, s);
    default: return fused_launch<2, 4>(&f, n_cols, (int)p->groups, s);
    }
}
