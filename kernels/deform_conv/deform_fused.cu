/* deform_fused.cu - the TF32 forward of a chunk in one kernel: an implicit GEMM whose B
 * operand is sampled straight into shared memory, so the columns matrix never reaches
 * global memory (the explicit path writes and reads it: 302 MB on N8 C256 64x64).
 *
 * For conv group gr (Og outputs, Cg channels, kk taps), with n = b*P + q a column:
 *   out[b, gr*Og + o, q] = sum over (tap, c) of W[gr*Og + o][c][tap] * S(b, gr*Cg + c, tap, q)
 *                          (+ bias[gr*Og + o])
 * where S is im2col's entry: the blend of the four corners (deform_bilinear.h, the tap
 * kernels' own helpers) times the mask.
 *
 * A block computes a BM x BN tile of (o, n) over K = kk*Cg in steps of one tap and 32
 * channels, taps outer. Each step's weight slice [BM x 32] is one contiguous block of
 * the prepared weight (the fused_weight row, deform_weight_body.h: rounded to TF32 once
 * per call and laid out in mma.sync's fragment order, rows past the group zero), copied
 * with cp.async; its
 * samples [32 x BN] are written to shared memory in fragment order too, so a warp reads a
 * fragment with one 16-byte load. A thread samples channels t, t+4, .., t+28 of one
 * column (two in the 128 x 128 tile; a warp: 32 neighbouring columns, one channel:
 * neighbouring pixels) and keeps the column's sampling point for a whole tap, as the
 * point does not depend on the channel. Two stages: step s+1's weight copy is in flight while the warps multiply step
 * s (mma.sync m16n8k8 TF32, fp32 sums), and so are the corner loads of each half of step
 * s+1's samples while the warps multiply the same half of step s. A warp owns 64 x 32 of the
 * tile (4 x 4 mma tiles, 64 accumulators a thread); MW warps down, NW across:
 * BM = 64*MW, BN = 32*NW.
 *
 * Fragment order (PTX mma.m16n8k8 .tf32; lane l, g = l/4, t = l%4):
 *   A, per (16-row tile i, 8-column slice k8): lane l's 4 floats at ((i*4 + k8)*32 + l)*4
 *      are rows g, g+8, g, g+8 and columns t, t, t+4, t+4 of the tile;
 *   B, per (16-channel half h, 8-column tile j): lane l's 4 floats at piece (h*BN/8 + j)*32 + l
 *      (16-byte pieces, swizzled: fused_swizzle) are channels 16h + t + {0, 4, 8, 12} of
 *      column 8j + g: b0, b1 of slice 2h, then 2h+1.
 *
 * CUDA only (mma.sync, cp.async, a 3-D grid of template tile shapes): a plain_only kernel
 * row whose twin is im2col (KS_DEFORM_ROW_FUSED, deform_op.c). The registry sizes its
 * grid from the row's tile (ks_deform_fused_tile: BN columns x BM outputs a block, a
 * group per blockIdx.z) and launches it with ks_cuda_launch_row, like every row. The
 * simulator and the traced chunks run im2col + GEMM, which this equals up to the TF32
 * GEMM's rounding and order of sums (the row's tolerance, deform_op.c; test_gpu_each_op
 * compares the two from the rows, test_gpu_deform each with the double reference).
 */
#include <stdint.h>

#include "../core/ks_cuda.h"
#include "deform_body.h"

#define KS_BODY "../deform_conv/deform_tap_body.h"
#define KS_BODY_NO_KERNELS /* its helpers only: deform_cuda.cu defines the kernels */
#include "../core/ks_variants.h"

enum { FUSED_BK = 32 };

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

/* Where piece c (16 bytes) of a sample stage lies: c ^ ((c >> 3) & 3). A warp's writes
 * (32 columns, one channel residue t: pieces 4*(column%8) + t of four tiles) then cover
 * all eight 16-byte bank groups in each quarter warp, and a warp's reads (32 pieces in a
 * row) stay a permutation within each 128 bytes: no bank conflicts either way (without
 * it the writes conflicted 16-way, Nsight Compute). */
__device__ __forceinline__ int fused_swizzle(int c) { return c ^ ((c >> 3) & 3); }

/* the kernel's arguments (deform_body.h): the chunk's sampling, the prepared weight (the
 * fused_weight row, deform_weight_body.h), bias or NULL, the chunk's output [im2col_step][O][P] */
typedef ks_deform_fused_args fused_args;

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

template <int MW, int NW, int MINB>
__global__ void __launch_bounds__(32 * MW * NW, MINB) ks_deform_fused_k(const fused_args f)
{
    constexpr int THREADS = 32 * MW * NW, BM = 64 * MW, BN = 32 * NW, NT8 = BN / 8;
    constexpr int R = 4 * BN / THREADS;   /* columns a thread samples */
    constexpr int A4 = BM * FUSED_BK / 4; /* 16-byte pieces of a weight slice */
    constexpr int STAGE4 = A4 + FUSED_BK * BN / 4;
    extern __shared__ uint4 fused_smem[]; /* two stages: the weight slice, then the samples */
    const ks_deform_args *a = &f.a;
    const int C = (int)a->channels, W = (int)a->width, HW = (int)a->height * W;
    const int Wo = (int)a->width_col, P = (int)a->height_col * Wo, kk = (int)(a->kernel_h * a->kernel_w);
    const int n_cols = (int)a->im2col_step * P, cpg = C / (int)a->offset_groups;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % MW, wn = warp / MW, g = lane >> 2, tg = lane & 3, lane_sw = fused_swizzle(lane);
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, gr = blockIdx.z;
    const int blocks_c = f.Cg / FUSED_BK, steps = kk * blocks_c;
    const float *wf = f.wf + ((int64_t)(gr * gridDim.y + blockIdx.y) * steps) * BM * FUSED_BK;
    /* the sampler: channels st + 4j (j < 8) of columns sn[r] of the tile */
    const int st = warp & 3;
    int sn[R], sb[R], sh[R], sw[R], valid[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        sn[r] = (warp >> 2) * 32 + lane + r * (THREADS / 4);
        const int n = n0 + sn[r];
        valid[r] = n < n_cols;
        sb[r] = valid[r] ? n / P : 0;
        const int q = valid[r] ? n - sb[r] * P : 0;
        sh[r] = q / Wo, sw[r] = q - sh[r] * Wo;
    }
    float acc[4][4][4]; /* registers: every loop over it unrolls */
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
    int goff = -1, tap_at = -1;
    fused_point pt[R];
    float v[R][4][4]; /* one half's corner values: channels 16h + st + 4j, j < 4 */
    /* the weight slice of step s (cp.async) and, for a new tap or offset group, the points */
    auto load_a = [&](int stage, int s) {
        const int tap = s / blocks_c, c_first = gr * f.Cg + (s - tap * blocks_c) * FUSED_BK;
        const float *src = wf + (int64_t)s * BM * FUSED_BK;
        uint4 *As = fused_smem + stage * STAGE4;
#pragma unroll
        for (int i = tid; i < A4; i += THREADS) {
            const unsigned dst = (unsigned)__cvta_generic_to_shared(As + i);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + 4 * i));
        }
        asm volatile("cp.async.commit_group;");
        if (tap != tap_at || c_first / cpg != goff) {
            tap_at = tap, goff = c_first / cpg;
#pragma unroll
            for (int r = 0; r < R; ++r) pt[r] = fused_place(a, valid[r], sb[r], goff, tap, sh[r], sw[r]);
        }
    };
    /* half h of step s's samples: corners into registers, then blended into the stage */
    auto load_b = [&](int s, int h) {
        const int tap = s / blocks_c, c_first = gr * f.Cg + (s - tap * blocks_c) * FUSED_BK + 16 * h;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float *im = a->input + (sb[r] * C + c_first + st) * HW + pt[r].at0;
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    v[r][j][k] = (pt[r].flags & (KS_FLAG_C00 << k)) ? im[4 * j * HW + (k >> 1) * W + (k & 1)] : 0.0f;
        }
    };
    auto store_b = [&](int stage, int h) {
        uint4 *Bs = fused_smem + stage * STAGE4 + A4;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            uint32_t x[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float blend = ks_deform_blend(pt[r].w, v[r][j]);
                x[j] = fused_tf32(a->use_mask ? blend * pt[r].m : blend);
            }
            /* the swizzle moves a piece within its 32: fused_swizzle of the low 5 bits */
            Bs[(h * NT8 + (sn[r] >> 3)) * 32 + fused_swizzle((sn[r] & 7) * 4 + st)] = make_uint4(x[0], x[1], x[2],
                                                                                                 x[3]);
        }
    };
    load_a(0, 0);
    for (int h = 0; h < 2; ++h) load_b(0, h), store_b(0, h);
    asm volatile("cp.async.wait_all;");
    __syncthreads();
    for (int s = 0; s < steps; ++s) {
        const int stage = s & 1, more = s + 1 < steps;
        if (more) load_a(stage ^ 1, s + 1);
        const uint4 *As = fused_smem + stage * STAGE4;
        const uint2 *Bs = (const uint2 *)(As + A4);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (more) load_b(s + 1, h); /* in flight during this half's products */
#pragma unroll
            for (int kx = 0; kx < 2; ++kx) {
                uint2 bq[4];
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) bq[nt] = Bs[((h * NT8 + wn * 4 + nt) * 32 + lane_sw) * 2 + kx];
#pragma unroll
                for (int mt = 0; mt < 4; ++mt) {
                    const uint4 aq = As[((wm * 4 + mt) * 4 + 2 * h + kx) * 32 + lane];
                    const uint32_t af[4] = {aq.x, aq.y, aq.z, aq.w};
#pragma unroll
                    for (int nt = 0; nt < 4; ++nt) {
                        const uint32_t bf[2] = {bq[nt].x, bq[nt].y};
                        fused_mma(acc[mt][nt], af, bf);
                    }
                }
            }
            if (more) store_b(stage ^ 1, h);
        }
        asm volatile("cp.async.wait_all;");
        __syncthreads(); /* the next stage is full; every warp is done with this one */
    }
    /* accumulator e of tile (mt, nt): row g (+8 for e >= 2), column 2*tg (+1 for odd e) */
    const int m_rows = f.Og - m0 < BM ? f.Og - m0 : BM; /* rows of this tile inside the group */
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

/* The registry's launch of tile shape MW x NW (ks_cuda_launch_row, the template of every
 * row) on the grid it sized from the row's tile (ks_deform_fused_tile): columns / BN x
 * Og / BM x groups blocks of 32*MW*NW threads, 2 stages of (BM + BN) x 32 floats of
 * dynamic shared memory (the launch opts in past 48 KiB). */
template <int MW, int NW, int MINB> static int fused_launch(const fused_args &f, const ks_grid *g)
{
    if (g->threads != 32 * MW * NW)
        return ks_fail(KS_EINVAL, "deform fused_tf32: a %d-thread block for a %d-thread tile", g->threads,
                       32 * MW * NW);
    return ks_cuda_launch_row<fused_args>(f, g, NULL, ks_deform_fused_k<MW, NW, MINB>, ks_deform_fused_k<MW, NW, MINB>,
                                          NULL, NULL);
}

/* The row's entry point (KS_DEFORM_ROW_FUSED, deform_op.c): the tile shape's kernel on the
 * grid the registry sized; never traced (its twin, im2col, records the sampling). The
 * weight was prepared by the row before it (KS_DEFORM_ROW_FUSED_WEIGHT). */
extern "C" int ks_deform_fused_cuda_row(const void *args, const ks_grid *grid, const ks_sink *sink)
{
    const ks_deform_fused_row *r = (const ks_deform_fused_row *)args;
    if (sink) return ks_fail(KS_EINVAL, "deform: the fused TF32 forward is never traced (its twin im2col is)");
    ks_deform_fused_launched();
    switch (r->shape) {
    case 42: return fused_launch<4, 2, 1>(r->k, grid);
    case 422: return fused_launch<4, 2, 2>(r->k, grid);
    case 44: return fused_launch<4, 4, 1>(r->k, grid);
    default: return fused_launch<2, 4, 1>(r->k, grid);
    }
}
