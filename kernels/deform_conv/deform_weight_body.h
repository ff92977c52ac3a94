/* deform_weight_body.h - the fused TF32 forward's weight preparation (deform_fused.cu), as a
 * body so that the registry launches it like every other row (KS_DEFORM_ROW_FUSED_WEIGHT,
 * no trace schema): once per layer call, the weight [O, Cg, kh, kw] is rounded to TF32 and
 * laid out in mma.sync's fragment order, rows past a group's outputs zero.
 *
 * For conv group gr, tile of rows mb (BM rows), step s (tap s / (Cg/32), channels
 * 32*(s % (Cg/32)) ..), the tile's [BM x 32] slice lies at ((gr*MB + mb)*steps + s)*BM*32;
 * within it, per (16-row tile, 8-column slice k8), lane l's 4 floats e are rows g, g+8, g,
 * g+8 and columns t, t, t+4, t+4 (g = l/4, t = l%4): element i of wf is
 *   e = i & 3, l = (i >> 2) & 31, k8 = (i >> 7) & 3, then the 16-row tile, s, mb, gr.
 * One item per element of wf (n < 2^30: ks_deform_fused_fits), grid-stride. On the GPU the
 * rounding is cvt.rna.tf32.f32; the simulator's build rounds the same way in C
 * (ks_round_tf32), though only CUDA runs the fused forward. */
#ifndef KS_DEFORM_WEIGHT_DECL
#define KS_DEFORM_WEIGHT_DECL
#include <stdint.h>

#include "../core/ks_core.h"
#include "../core/ks_gemm.h"

typedef struct ks_deform_fused_weight_args {
    const float *w; /* [O, Cg, kh, kw] */
    float *wf;      /* the prepared weight: groups x (Og rounded up to BM) x Cg*kk floats */
    int n;          /* its floats */
    int BM, Og, Cg, kk;
} ks_deform_fused_weight_args;

/* x rounded to TF32 (nearest, ties away), the tensor cores' input format */
KS_FN float ks_deform_tf32(float x)
{
#ifdef __CUDA_ARCH__
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
#else
    return ks_round_tf32(x);
#endif
}
#endif /* KS_DEFORM_WEIGHT_DECL */

#ifdef KS_VARIANT
KS_FN void KS_VARIANT(ks_deform_fused_weight_body)(ks_thread *t, const ks_deform_fused_weight_args *a)
{
    const int BM = a->BM, Og = a->Og, Cg = a->Cg, kk = a->kk, n = a->n;
    const int steps = kk * (Cg / 32), MB = (Og + BM - 1) / BM;
    const int stride = (int)(t->grid_dim.x * t->block_dim.x);
    for (int i = (int)(t->block_idx.x * t->block_dim.x + t->thread_idx.x); i < n; i += stride) {
        const int e = i & 3, l = (i >> 2) & 31, k8 = (i >> 7) & 3;
        int rest = i >> 9;
        const int tile = rest % (BM / 16);
        rest /= BM / 16;
        const int s = rest % steps, mb = (rest / steps) % MB, gr = rest / steps / MB;
        const int row = mb * BM + tile * 16 + (l >> 2) + (e & 1) * 8;
        const int tap = s / (Cg / 32), c = (s % (Cg / 32)) * 32 + k8 * 8 + (l & 3) + (e >> 1) * 4;
        a->wf[i] = row < Og ? ks_deform_tf32(a->w[((gr * Og + row) * Cg + c) * kk + tap]) : 0.0f;
    }
}
KS_KERNEL(ks_deform_fused_weight, ks_deform_fused_weight_args)
#endif
