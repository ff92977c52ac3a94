/* patchify_body.h - DPVO's patchify (dpvo/altcorr): square patches around points, forward and
 * backward.
 *
 *   input   [B, C, H, W]
 *   coords  [B, M, 2]  holding (x, y): coords[b, m, 0] is x
 *   patches [B, M, C, D, D], D = 2R + 2: raw pixels at rows floor(y) + ii - R and columns
 *           floor(x) + jj - R (0 outside the image)
 *   output  [B, M, C, 2R+1, 2R+1]: the bilinear combination of neighbouring raw entries with
 *           dy = y - floor(y), dx = x - floor(x), i.e. the bilinear sample of the input at
 *           (y + a - R, x + b - R) with zero padding; output[R][R] = input(y, x).
 * Why D = 2R + 2: a (2R+1)-wide bilinear window needs one more row and column of pixels.
 *
 * Four kernels, each one body: patches (one work item per (b, m, jj, ii), ii fastest, as
 * DPVO; C channels per item), bilinear (one per output element), and their backwards:
 * bilinear_backward gathers the gradient of each raw entry (no atomics), patches_backward
 * scatters it into grad_input with atomic adds (overlapping patches collide).
 *
 * The declarations both builds share, then (per variant, ks_variants.h) the four bodies,
 * each followed by its kernel line (the rows of patchify_op.c).
 */
#ifndef KS_PATCHIFY_DECL
#define KS_PATCHIFY_DECL
#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_schema.h"
#include "../core/ks_core.h"
#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_patchify_params {
    int64_t batch, channels, height, width; /* input [B, C, H, W] */
    int64_t num_points;                     /* M (0: nothing runs) */
    int64_t radius;                         /* R >= 0 */
} ks_patchify_params;

typedef enum ks_patchify_kernel {
    KS_PATCH_NONE = -1,
    KS_PATCH_PATCHES = 0,      /* input -> patches */
    KS_PATCH_BILINEAR = 1,     /* patches -> output */
    KS_PATCH_BILINEAR_BWD = 2, /* grad_output -> grad_patches */
    KS_PATCH_PATCHES_BWD = 3   /* grad_patches -> grad_input (atomics) */
} ks_patchify_kernel;

/* DPVO: 256 threads, no block cap (one thread per item; our bodies loop when capped) */
#define KS_PATCH_THREADS 256
#define KS_PATCH_BLOCK_CAP (-1)

/* PATCH: the raw kernels' region, the D x D patch around floor(x, y) */
enum {
    KS_PATCH_SITE_WORK,
    KS_PATCH_SITE_READ,
    KS_PATCH_SITE_SAMPLE,
    KS_PATCH_SITE_WRITE,
    KS_PATCH_SITE_PATCH,
    KS_PATCH_NSITES
};
/* tensor ids in traces: the patchify op's order */
enum {
    KS_PATCH_T_INPUT,
    KS_PATCH_T_COORDS,
    KS_PATCH_T_PATCHES,
    KS_PATCH_T_OUTPUT,
    KS_PATCH_T_GRAD_OUTPUT,
    KS_PATCH_T_GRAD_PATCHES,
    KS_PATCH_T_GRAD_INPUT
};

/* Validates p: sizes >= 1 (M >= 0, R >= 0), no overflow. KS_EINVAL otherwise. */
int ks_patchify_check(const ks_patchify_params *p);
/* Work items of kernel k. */
int64_t ks_patchify_work(const ks_patchify_params *p, ks_patchify_kernel k);

/* The tensors (host or device pointers); each kernel reads and writes its own. */
typedef struct ks_patchify_tensors {
    const float *input, *coords;
    float *patches, *output;
    const float *grad_output;
    float *grad_patches, *grad_input; /* grad_input accumulated: zero it first */
} ks_patchify_tensors;

/* Kernel k on the simulator (host pointers) or the GPU (device pointers; the SDK's entry,
 * bench/bench_torch.py loads it), through the kernel rows of patchify_op.c; sink NULL:
 * plain. p is checked (ks_patchify_check) first. */
int ks_patchify_kernel_sim(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                           const ks_launch *l, ks_sink *sink);
int ks_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                            const ks_launch *l, const ks_sink *dev_sink, void *stream);

/* Independent reference in double: patches, output, and grad_input of
 * sum(output * grad_output) (coords are constants, as in DPVO). */
void ks_patchify_ref(const ks_patchify_params *p, const float *input, const float *coords, double *patches,
                     double *output);
void ks_patchify_ref_backward(const ks_patchify_params *p, const float *coords, const float *grad_output,
                              double *grad_input);

/* The trace schema of kernel k; p must have passed ks_patchify_check. */
int ks_patchify_sites(const ks_patchify_params *p, ks_patchify_kernel k, ks_site *sites);

/* the kernels' arguments */
typedef struct ks_patchify_args {
    int64_t batch, channels, height, width, num_points, radius;
    ks_patchify_tensors t;
} ks_patchify_args;

/* floor(c) as an integer, or 0 with *ok = 0 for NaN, Inf and |c| >= 2^30 (the patch then
 * reads nothing) */
KS_FN int64_t ks_patch_floor(float c, int *ok)
{
    const int fine = c > -1073741824.0f && c < 1073741824.0f;
    *ok = *ok && fine;
    return fine ? (int64_t)floorf(c) : 0;
}


#ifdef __cplusplus
}
#endif
#endif /* KS_PATCHIFY_DECL */

#ifdef KS_VARIANT
#include "../core/ks_probe.h"

/* patches[b, m, k, ii, jj] = input[b, k, floor(y) + ii - R, floor(x) + jj - R], 0 outside:
 * one work item per (b, m, jj, ii), ii fastest (DPVO's order: neighbouring lanes write D
 * apart and read W apart; a warp's writes still cover whole patches, its reads rows far
 * apart: `kscope memory`), looping over the C channels. */
KS_FN void KS_VARIANT(ks_patch_fwd_body)(ks_thread *t, const ks_patchify_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX M = (KS_IDX)a->num_points, R = (KS_IDX)a->radius, D = 2 * R + 2;
    const KS_IDX n_work = (KS_IDX)a->batch * M * D * D;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX ii = index % D; /* patch row: the fastest digit */
        const KS_IDX jj = (index / D) % D;
        const KS_IDX m = (index / D / D) % M;
        const KS_IDX b = index / D / D / M;
        const float *xy = a->t.coords + (b * M + m) * 2;
        int ok = 1;
        const KS_IDX i = (KS_IDX)ks_patch_floor(xy[1], &ok) + ii - R;
        const KS_IDX j = (KS_IDX)ks_patch_floor(xy[0], &ok) + jj - R;
        KS_PROBE(ks_probe_work(t, KS_PATCH_SITE_WORK, index, iter, b, m, jj, ii, i, j, 0, 0));
        /* the patch this item's pixel belongs to (a pixel covers its centre +- 0.5) */
        KS_PROBE(if (ok && D <= 65535) ks_probe_box(
            t, KS_PATCH_SITE_PATCH, KS_PATCH_T_INPUT, b * C, (float)(i - ii) - 0.5f, (float)(j - jj) - 0.5f,
            (float)(i - ii + D) - 0.5f, (float)(j - jj + D) - 0.5f, (int)D, (int)D, 0));
        const int inside = ok && i >= 0 && i < H && j >= 0 && j < W;
        for (KS_IDX k = 0; k < C; ++k) {
            const float v = inside ? a->t.input[((b * C + k) * H + i) * W + j] : 0.0f;
            const KS_IDX out = (((b * M + m) * C + k) * D + ii) * D + jj;
            a->t.patches[out] = v;
            KS_PROBE(ks_probe_read(t, KS_PATCH_SITE_READ, KS_PATCH_T_INPUT, (int)k,
                                   inside ? ((b * C + k) * H + i) * W + j : -1, b * C + k, i, j, v));
            KS_PROBE(ks_probe_write(t, KS_PATCH_SITE_WRITE, KS_PATCH_T_PATCHES, (int)k, out, (b * M + m) * C + k, ii,
                                    jj, v, 0));
        }
    }
}
KS_KERNEL(ks_patch_fwd, ks_patchify_args)

/* output[b, m, c, r, s] = the bilinear blend of patches[.., r..r+1, s..s+1] with
 * dy = y - floor(y), dx = x - floor(x): one work item per output element. */
KS_FN void KS_VARIANT(ks_patch_bilinear_body)(ks_thread *t, const ks_patchify_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, M = (KS_IDX)a->num_points, R = (KS_IDX)a->radius;
    const KS_IDX D = 2 * R + 2, d = 2 * R + 1;
    const KS_IDX n_work = (KS_IDX)a->batch * M * C * d * d;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX s = index % d;
        const KS_IDX r = (index / d) % d;
        const KS_IDX plane = index / d / d; /* (b*M + m)*C + c */
        const KS_IDX bm = plane / C;
        KS_PROBE(ks_probe_work(t, KS_PATCH_SITE_WORK, index, iter, bm / M, bm % M, plane % C, r, s, 0, 0, 0));
        const float *xy = a->t.coords + bm * 2;
        const float dx = xy[0] - floorf(xy[0]), dy = xy[1] - floorf(xy[1]);
        const float *P = a->t.patches + plane * D * D + r * D + s;
        const float w00 = (1.0f - dy) * (1.0f - dx), w01 = (1.0f - dy) * dx, w10 = dy * (1.0f - dx), w11 = dy * dx;
        const float v = fmaf(w11, P[D + 1], fmaf(w10, P[D], fmaf(w01, P[1], w00 * P[0])));
        a->t.output[index] = v;
        KS_PROBE(ks_probe_sample(t, KS_PATCH_SITE_SAMPLE, KS_PATCH_T_PATCHES, 0, plane, (float)r + dy, (float)s + dx,
                                 w00, w01, w10, w11, v, KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11));
        KS_PROBE(ks_probe_write(t, KS_PATCH_SITE_WRITE, KS_PATCH_T_OUTPUT, 0, index, plane, r, s, v, 0));
    }
}
KS_KERNEL(ks_patch_bilinear, ks_patchify_args)

/* grad_patches[.., ii, jj] = sum of grad_output[.., r, s] times the weight raw entry
 * (ii, jj) had in output (r, s), r in {ii-1, ii}, s in {jj-1, jj}: a gather, one work
 * item per raw entry, jj fastest. */
KS_FN void KS_VARIANT(ks_patch_bilinear_bwd_body)(ks_thread *t, const ks_patchify_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, M = (KS_IDX)a->num_points, R = (KS_IDX)a->radius;
    const KS_IDX D = 2 * R + 2, d = 2 * R + 1;
    const KS_IDX n_work = (KS_IDX)a->batch * M * C * D * D;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX jj = index % D;
        const KS_IDX ii = (index / D) % D;
        const KS_IDX plane = index / D / D;
        const KS_IDX bm = plane / C;
        KS_PROBE(ks_probe_work(t, KS_PATCH_SITE_WORK, index, iter, bm / M, bm % M, plane % C, ii, jj, 0, 0, 0));
        const float *xy = a->t.coords + bm * 2;
        const float dx = xy[0] - floorf(xy[0]), dy = xy[1] - floorf(xy[1]);
        float g = 0.0f;
        for (int q = 0; q < 4; ++q) {
            const KS_IDX r = ii - (q >> 1), s = jj - (q & 1); /* (ii, jj) is corner q of output (r, s) */
            if (r < 0 || s < 0 || r >= d || s >= d) continue;
            const float wy = (q >> 1) ? dy : 1.0f - dy, wx = (q & 1) ? dx : 1.0f - dx;
            const KS_IDX o = (plane * d + r) * d + s;
            const float go = a->t.grad_output[o];
            g = fmaf(wy * wx, go, g);
            KS_PROBE(ks_probe_read(t, KS_PATCH_SITE_READ, KS_PATCH_T_GRAD_OUTPUT, q, o, plane, r, s, go));
        }
        a->t.grad_patches[index] = g;
        KS_PROBE(ks_probe_write(t, KS_PATCH_SITE_WRITE, KS_PATCH_T_GRAD_PATCHES, 0, index, plane, ii, jj, g, 0));
    }
}
KS_KERNEL(ks_patch_bilinear_bwd, ks_patchify_args)

/* grad_input[b, k, i, j] += grad_patches[b, m, k, ii, jj] for in-bounds (i, j): the
 * patches kernel's decomposition, atomic adds (overlapping patches collide). */
KS_FN void KS_VARIANT(ks_patch_bwd_body)(ks_thread *t, const ks_patchify_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX M = (KS_IDX)a->num_points, R = (KS_IDX)a->radius, D = 2 * R + 2;
    const KS_IDX n_work = (KS_IDX)a->batch * M * D * D;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX ii = index % D;
        const KS_IDX jj = (index / D) % D;
        const KS_IDX m = (index / D / D) % M;
        const KS_IDX b = index / D / D / M;
        const float *xy = a->t.coords + (b * M + m) * 2;
        int ok = 1;
        const KS_IDX i = (KS_IDX)ks_patch_floor(xy[1], &ok) + ii - R;
        const KS_IDX j = (KS_IDX)ks_patch_floor(xy[0], &ok) + jj - R;
        KS_PROBE(ks_probe_work(t, KS_PATCH_SITE_WORK, index, iter, b, m, jj, ii, i, j, 0, 0));
        /* the patch this item's pixel belongs to (a pixel covers its centre +- 0.5) */
        KS_PROBE(if (ok && D <= 65535) ks_probe_box(
            t, KS_PATCH_SITE_PATCH, KS_PATCH_T_GRAD_INPUT, b * C, (float)(i - ii) - 0.5f, (float)(j - jj) - 0.5f,
            (float)(i - ii + D) - 0.5f, (float)(j - jj + D) - 0.5f, (int)D, (int)D, 0));
        if (!(ok && i >= 0 && i < H && j >= 0 && j < W)) continue;
        for (KS_IDX k = 0; k < C; ++k) {
            const KS_IDX src = (((b * M + m) * C + k) * D + ii) * D + jj, dst = ((b * C + k) * H + i) * W + j;
            const float g = a->t.grad_patches[src];
            ks_atomic_add_f32(a->t.grad_input + dst, g);
            KS_PROBE(ks_probe_read(t, KS_PATCH_SITE_READ, KS_PATCH_T_GRAD_PATCHES, (int)k, src, (b * M + m) * C + k, ii,
                                   jj, g));
            KS_PROBE(ks_probe_write(t, KS_PATCH_SITE_WRITE, KS_PATCH_T_GRAD_INPUT, (int)k, dst, b * C + k, i, j, g, 1));
        }
    }
}
KS_KERNEL(ks_patch_bwd, ks_patchify_args)
#endif
