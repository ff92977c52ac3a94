/* im2col_body.h - im2col and col2im (Caffe/MXNet semantics, with a batch dimension).
 *
 *   im2col: input   [N, C, H, W]            -> columns [N, C*kh*kw, Ho*Wo]
 *   col2im: columns [N, C*kh*kw, Ho*Wo]     -> output  [N, C, H, W]   (sums overlaps)
 *
 * Column row c_col = (c*kh + i)*kw + j, column h_col*Wo + w_col.
 * Ho = (H + 2*pad_h - (dilation_h*(kh-1)+1)) / stride_h + 1 with C truncation toward 0;
 * a geometry whose Ho or Wo is < 1 is rejected. Plain C API; pointers are host memory
 * for *_sim and *_ref, device memory for *_cuda.
 *
 * The declarations both builds share, then (per variant, ks_variants.h) the bodies, each
 * kernel followed by its line: the rows of im2col_op.c. Indices are 64-bit: C*kh*kw*Ho*Wo
 * passes 2^31 on real layers (the torchvision #4269 bug); the CUDA build adds int32_t
 * variants, plain and traced, for launches whose every size fits in 2^30. Each body walks
 * its items with ks_walk.h (no division per item) and hands each to an item function,
 * instantiated twice in the traced variant so that an item the filter drops runs the
 * plain code.
 */
#ifndef KS_IM2COL_DECL
#define KS_IM2COL_DECL


#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_core.h"
#include "../core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_im2col_params {
    int64_t batch, channels, height, width; /* the image: N, C, H, W */
    int64_t kernel_h, kernel_w;
    int64_t pad_h, pad_w;
    int64_t stride_h, stride_w;
    int64_t dilation_h, dilation_w;
} ks_im2col_params;

typedef struct ks_im2col_geom {
    int64_t height_col, width_col; /* Ho, Wo */
    int64_t rows;                  /* C*kh*kw */
    int64_t image_numel;           /* N*C*H*W: col2im work items */
    int64_t columns_numel;         /* N*rows*Ho*Wo */
    int64_t im2col_work;           /* N*C*Ho*Wo */
} ks_im2col_geom;

/* Reference launch configuration (Caffe): 512 threads per block, no block cap. */
#define KS_IM2COL_THREADS 512
/* At most 2048 blocks (1M threads) unless the launch names a cap: a thread of a large
 * launch takes several items and pays its setup (the divisions that place its first item)
 * once; smaller launches keep one item per thread. */
#define KS_IM2COL_BLOCK_CAP 2048

/* Site and tensor ids in an im2col/col2im trace. */
enum { KS_IM2COL_SITE_WORK = 0, KS_IM2COL_SITE_READ = 1, KS_IM2COL_SITE_WRITE = 2 };
enum { KS_IM2COL_T_INPUT = 0, KS_IM2COL_T_COLUMNS = 1 };  /* im2col */
enum { KS_COL2IM_T_COLUMNS = 0, KS_COL2IM_T_OUTPUT = 1 }; /* col2im */

/* Validates p (sizes >= 1, kernel/stride/dilation >= 1, padding >= 0, no overflow,
 * output size >= 1) and fills g. KS_EINVAL with a message naming the parameter. */
int ks_im2col_geometry(const ks_im2col_params *p, ks_im2col_geom *g);

/* Simulator. `sink` NULL runs the plain variant, otherwise the traced one. */
int ks_im2col_sim(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                  ks_sink *sink);
int ks_col2im_sim(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                  ks_sink *sink);

/* CUDA, device pointers. `dev_sink` NULL runs the plain kernel; otherwise a sink from
 * ks_cuda_sink_create. `stream` is a cudaStream_t (NULL: default stream). Checks the
 * launch; does not synchronize. KS_ECUDA if built without CUDA. */
int ks_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                   const ks_sink *dev_sink, void *stream);
int ks_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                   const ks_sink *dev_sink, void *stream);

/* Independent double-precision reference, from the definition (im2col_ref.c). */
void ks_im2col_ref(const ks_im2col_params *p, const float *input, double *columns);
void ks_col2im_ref(const ks_im2col_params *p, const float *columns, double *output);


#ifdef __cplusplus
}
#endif

/* Everything a thread needs, passed by value to the CUDA kernel. */
typedef struct ks_im2col_args {
    int64_t batch, channels, height, width;
    int64_t kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int64_t height_col, width_col;
    const float *src; /* im2col: input [N,C,H,W];  col2im: columns [N,C*kh*kw,Ho*Wo] */
    float *dst;       /* im2col: columns;          col2im: output [N,C,H,W] */
} ks_im2col_args;

/* The common layer - a 3x3 window, stride 1, dilation 1 - gets its own instance of the
 * im2col and col2im bodies: they pass these sizes as constants, so the compiler unrolls
 * the taps and drops the stride and dilation bookkeeping (for col2im, the remainders that
 * are always 0). Same source and same arithmetic, so the same results bit for bit. Build
 * with -DKS_IM2COL_UNIT3=0 to time the general instance alone. */
#ifndef KS_IM2COL_UNIT3
#define KS_IM2COL_UNIT3 1
#endif
KS_FN int ks_im2col_is_unit3(const ks_im2col_args *a)
{
    return KS_IM2COL_UNIT3 && a->kernel_h == 3 && a->kernel_w == 3 && a->stride_h == 1 && a->stride_w == 1 &&
           a->dilation_h == 1 && a->dilation_w == 1;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Validates p and fills the kernel arguments and geometry (KS_EINVAL on bad p). */
int ks_im2col_args_make(const ks_im2col_params *p, const float *src, float *dst, ks_im2col_args *a, ks_im2col_geom *g);
/* The same from a geometry ks_im2col_geometry already validated (no check). */
void ks_im2col_args_fill(const ks_im2col_params *p, const ks_im2col_geom *g, const float *src, float *dst,
                         ks_im2col_args *a);
/* The kernel (col2im 0: im2col, 1: col2im, gather form; KS_COL2IM_SCATTER: col2im's
 * scatter form, with atomics) on arguments ks_im2col_args_make validated:
 * nothing is checked again. Host pointers and sink on the simulator; device pointers, a
 * device sink and a cudaStream_t (or NULL) on CUDA. */
int ks_im2col_launch_sim(const ks_im2col_args *a, int col2im, const ks_launch *l, ks_sink *sink);
/* (through the kernel rows of im2col_op.c, as every launch) */
int ks_im2col_launch_cuda(const ks_im2col_args *a, int col2im, const ks_launch *l, const ks_sink *dev_sink,
                          void *stream);
/* The trace schema of each kernel (3 sites), with the launch's constants. */
int ks_im2col_sites(const ks_im2col_args *a, ks_site *sites);
int ks_col2im_sites(const ks_im2col_args *a, ks_site *sites);
int ks_col2im_scatter_sites(const ks_im2col_args *a, ks_site *sites);
#define KS_COL2IM_SCATTER 2
#ifdef __cplusplus
}
#endif

/* register caps of the CUDA kernels: plain at most 40 (3 blocks of 512 threads per SM:
 * the gathers need warps in flight; -DKS_IM2COL_MAXNREG=N to compare). A traced block whose
 * filter drops all its items runs the plain body (KS_KERNEL_FAST), so the traced kernel
 * for filters that keep little has the plain kernel's 40 too (-DKS_IM2COL_TRACED_MAXNREG=N):
 * at 64 its blocks ran at 2 a SM and a filter that records nothing cost col2im 1.20x plain
 * on N8 C64 128x128 (H200, 2026-11-29); at 40, 1.00x (the few items it records spill).
 * Launches whose filter keeps much (ks_cuda_launch_row) run a third build with more
 * registers (KS_KERNEL_FAST_ALL): im2col at 96 (-DKS_IM2COL_TRACED_ALL_MAXNREG=N): writing
 * every event (ks_pages.h) spilled at 64 before short records; with them, 64 (2 blocks a
 * SM) took 18.0x plain against 16.4x at 96 (76 used); blocks over 640 threads, which it
 * cannot hold, take the 40-register kernel. col2im's third build has 64 (below). The
 * 64-bit traced kernel (sizes past 2^30) has 40 too: it must hold 1024-thread blocks, and
 * recording every event there spills (not measured; such launches make traces of GBs). */
#ifndef KS_IM2COL_MAXNREG
#define KS_IM2COL_MAXNREG 40
#endif
#ifndef KS_IM2COL_TRACED_MAXNREG
#define KS_IM2COL_TRACED_MAXNREG 40
#endif
#ifndef KS_IM2COL_TRACED_ALL_MAXNREG
#define KS_IM2COL_TRACED_ALL_MAXNREG 96
#endif
#endif /* KS_IM2COL_DECL */

/* KS_DECL_ONLY: another body's declarations include these (conv2d_body.h) */
#if defined(KS_VARIANT) && !defined(KS_DECL_ONLY)
#include "../core/ks_probe.h"
#include "../core/ks_walk.h"

/* One im2col item (n, c_im, h_col, w_col): the kh*kw taps of its window into kh*kw rows
 * of the columns matrix (Ho*Wo apart), 0 for taps in the padding. The taps go in blocks
 * of `block_rows` rows (1, or 3 for the 3x3 instance: the whole window in one step) by 3
 * taps: the block's loads first, then its stores in tap order (a store between two loads
 * would make the second wait: the compiler cannot move a load above a store that may
 * alias it). Three rows at once in the general instance, or with probes, would spill
 * registers. */
KS_FN void KS_VARIANT(ks_im2col_item)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                      const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw,
                                      const KS_IDX block_rows, KS_IDX n, KS_IDX c_im, KS_IDX h_col, KS_IDX w_col,
                                      const int probing)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, HoWo = Ho * Wo;
    const KS_IDX taps = kh * kw;
    const KS_IDX c_index = n * C + c_im; /* the image plane */
    KS_ITEM_PROBE(ks_probe_fields(t, KS_IM2COL_SITE_WORK, n, c_im, h_col, w_col, 0, 0, 0, 0));
    const KS_IDX h_off = h_col * sh - (KS_IDX)a->pad_h;
    const KS_IDX w_off = w_col * sw - (KS_IDX)a->pad_w;
    const float *im = a->src + c_index * H * W;
    float *col = a->dst + (n * C + c_im) * taps * HoWo + h_col * Wo + w_col;
    for (KS_IDX i0 = 0; i0 < kh; i0 += block_rows) {
        for (KS_IDX j0 = 0; j0 < kw; j0 += 3) {
            float v[3][3];
            KS_UNROLL
            for (int r = 0; r < 3; ++r) {
                /* positions of taps past the window are not formed (a huge dilation would
                 * overflow the 32-bit variant's index) */
                const int tap_row = r < block_rows && i0 + r < kh;
                const KS_IDX h = tap_row ? h_off + (i0 + r) * dh : -1;
                const int row_in = tap_row && h >= 0 && h < H;
                KS_UNROLL
                for (int u = 0; u < 3; ++u) {
                    const KS_IDX w = j0 + u < kw ? w_off + (j0 + u) * dw : -1;
                    v[r][u] = row_in && w >= 0 && w < W ? im[h * W + w] : 0.0f;
                }
            }
            KS_UNROLL
            for (int r = 0; r < 3; ++r) {
                KS_UNROLL
                for (int u = 0; u < 3; ++u) {
                    if (r >= block_rows || i0 + r >= kh || j0 + u >= kw) continue;
                    const KS_IDX tap = (i0 + r) * kw + j0 + u;
                    col[tap * HoWo] = v[r][u];
                    KS_ITEM_PROBE({
                        const KS_IDX h = h_off + (i0 + r) * dh, w = w_off + (j0 + u) * dw;
                        const int in = h >= 0 && h < H && w >= 0 && w < W;
                        ks_probe_read(t, KS_IM2COL_SITE_READ, KS_IM2COL_T_INPUT, (int)tap,
                                      in ? (int64_t)c_index * H * W + h * W + w : -1, c_index, h, w, v[r][u]);
                        ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_IM2COL_T_COLUMNS, (int)tap,
                                       (int64_t)(col - a->dst) + (int64_t)tap * HoWo, n, c_im * taps + tap,
                                       h_col * Wo + w_col, v[r][u], 0);
                    });
                }
            }
        }
    }
}

/* im2col: one work item per (n, c_im, h_col, w_col), w_col fastest; column writes are
 * coalesced across neighbouring threads. The window's sizes come as arguments so that
 * ks_im2col_body can pass the common ones as constants (ks_im2col_is_unit3). */
KS_FN_INLINE void KS_VARIANT(ks_im2col_items)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                              const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw,
                                              const KS_IDX block_rows)
{
    const KS_IDX C = (KS_IDX)a->channels, Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX n_work = (KS_IDX)a->batch * C * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    if (index >= n_work) return;
    KS_VARIANT(ks_walk) at; /* at.d: w_col, h_col, c_im, n */
    KS_VARIANT(ks_walk_start)(&at, index, grid_stride, Wo, Ho, C);
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter, KS_VARIANT(ks_walk_step)(&at)) {
        if (KS_TRACED && ks_probe_start(t, index, iter))
            KS_VARIANT(ks_im2col_item)(t, a, kh, kw, sh, sw, dh, dw, 1, at.d[3], at.d[2], at.d[1], at.d[0], 1);
        else
            KS_VARIANT(ks_im2col_item)(t, a, kh, kw, sh, sw, dh, dw, block_rows, at.d[3], at.d[2], at.d[1], at.d[0], 0);
    }
}

KS_FN void KS_VARIANT(ks_im2col_body)(ks_thread *t, const ks_im2col_args *a)
{
    if (ks_im2col_is_unit3(a)) KS_VARIANT(ks_im2col_items)(t, a, 3, 3, 1, 1, 1, 1, 3);
    else
        KS_VARIANT(ks_im2col_items)(t, a, (KS_IDX)a->kernel_h, (KS_IDX)a->kernel_w, (KS_IDX)a->stride_h,
                                    (KS_IDX)a->stride_w, (KS_IDX)a->dilation_h, (KS_IDX)a->dilation_w, 1);
}
KS_KERNEL_FAST_ALL(ks_im2col, ks_im2col_args, __maxnreg__(KS_IM2COL_MAXNREG), __maxnreg__(KS_IM2COL_TRACED_MAXNREG),
                   __maxnreg__(KS_IM2COL_TRACED_ALL_MAXNREG))

/* One col2im item (n, c_im, h, w): the sum of every column entry that im2col copied from
 * this element. Tap (i, j) came from it at window position h_col = (h + ph - i*dh) / sh
 * (w_col likewise) when that divides exactly and lies in [0, Ho). The taps are walked
 * from (kh-1, kw-1) down, so h_col and w_col ascend (the sum order), keeping each
 * position as a quotient and remainder by the stride that a step of the dilation
 * advances without dividing. A row of taps goes four at a time, loads before adds (a
 * missing tap adds +0.0f, which leaves a sum that started at +0.0f bitwise unchanged). */
KS_FN void KS_VARIANT(ks_col2im_item)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                      const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw, KS_IDX index,
                                      KS_IDX n, KS_IDX c_im, KS_IDX h, KS_IDX w, const int probing)
{
    const KS_IDX C = (KS_IDX)a->channels;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, HoWo = Ho * Wo;
    const KS_IDX taps = kh * kw;
    const KS_IDX h_im = h + (KS_IDX)a->pad_h, w_im = w + (KS_IDX)a->pad_w; /* in the padded image */
    KS_ITEM_PROBE({
        const KS_IDX ext_h = (kh - 1) * dh + 1, ext_w = (kw - 1) * dw + 1;
        const KS_IDX w_col_end = w_im / sw + 1 < Wo ? w_im / sw + 1 : Wo;
        const KS_IDX h_col_end = h_im / sh + 1 < Ho ? h_im / sh + 1 : Ho;
        ks_probe_fields(t, KS_IM2COL_SITE_WORK, n, c_im, h_im, w_im, (h_im < ext_h) ? 0 : (h_im - ext_h) / sh + 1,
                        h_col_end, (w_im < ext_w) ? 0 : (w_im - ext_w) / sw + 1, w_col_end);
    });
    /* a step of the dilation in window positions: dq whole strides and dr left over */
    const KS_IDX dqh = sh == 1 ? dh : dh / sh, drh = dh - dqh * sh, dqw = sw == 1 ? dw : dw / sw, drw = dw - dqw * sw;
    /* tap (kh-1, kw-1)'s window position as quotient and remainder (floor division) */
    const KS_IDX h0 = h_im - (kh - 1) * dh, w0 = w_im - (kw - 1) * dw;
    KS_IDX qh = sh == 1 ? h0 : (h0 >= 0 ? h0 / sh : -((sh - 1 - h0) / sh)), rh = h0 - qh * sh;
    const KS_IDX qw0 = sw == 1 ? w0 : (w0 >= 0 ? w0 / sw : -((sw - 1 - w0) / sw)), rw0 = w0 - qw0 * sw;
    const float *col = a->src + (n * C + c_im) * taps * HoWo;
    float val = 0.0f;
    int tap = 0;
    for (KS_IDX i = kh - 1; i >= 0; --i) {
        if (rh == 0 && qh >= 0 && qh < Ho) {
            KS_IDX qw = qw0, rw = rw0;
            for (KS_IDX j0 = kw - 1; j0 >= 0; j0 -= 4) {
                float v[4];
                KS_IDX offs[4];
                for (int u = 0; u < 4; ++u) {
                    const int hit = j0 - u >= 0 && rw == 0 && qw >= 0 && qw < Wo;
                    offs[u] = hit ? (i * kw + j0 - u) * HoWo + qh * Wo + qw : -1;
                    v[u] = hit ? col[offs[u]] : 0.0f;
                    rw += drw, qw += dqw; /* the next tap to the left: w_col grows */
                    if (rw >= sw) rw -= sw, ++qw;
                }
                for (int u = 0; u < 4; ++u) {
                    val += v[u];
                    KS_ITEM_PROBE(if (offs[u] >= 0) ks_probe_read(t, KS_IM2COL_SITE_READ, KS_COL2IM_T_COLUMNS, tap++,
                                                                  (int64_t)(col - a->src) + offs[u], n,
                                                                  c_im * taps + offs[u] / HoWo, offs[u] % HoWo, v[u]));
                }
            }
        }
        rh += drh, qh += dqh; /* the next row of taps up: h_col grows */
        if (rh >= sh) rh -= sh, ++qh;
    }
    a->dst[index] = val;
    KS_ITEM_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_COL2IM_T_OUTPUT, 0, index, n * C + c_im, h, w, val, 0));
}

/* col2im in the gather form: one work item per image element (n, c_im, h, w), w fastest.
 * Each thread owns its output element, so there are no atomics and the sum order is
 * deterministic. Window sizes as arguments, as ks_im2col_items. */
KS_FN_INLINE void KS_VARIANT(ks_col2im_items)(ks_thread *t, const ks_im2col_args *a, const KS_IDX kh, const KS_IDX kw,
                                              const KS_IDX sh, const KS_IDX sw, const KS_IDX dh, const KS_IDX dw)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX n_work = (KS_IDX)a->batch * C * H * W;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    if (index >= n_work) return;
    KS_VARIANT(ks_walk) at; /* at.d: w, h, c_im, n */
    KS_VARIANT(ks_walk_start)(&at, index, grid_stride, W, H, C);
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter, KS_VARIANT(ks_walk_step)(&at)) {
        if (KS_TRACED && ks_probe_start(t, index, iter))
            KS_VARIANT(ks_col2im_item)(t, a, kh, kw, sh, sw, dh, dw, index, at.d[3], at.d[2], at.d[1], at.d[0], 1);
        else KS_VARIANT(ks_col2im_item)(t, a, kh, kw, sh, sw, dh, dw, index, at.d[3], at.d[2], at.d[1], at.d[0], 0);
    }
}

KS_FN void KS_VARIANT(ks_col2im_body)(ks_thread *t, const ks_im2col_args *a)
{
    if (ks_im2col_is_unit3(a)) KS_VARIANT(ks_col2im_items)(t, a, 3, 3, 1, 1, 1, 1);
    else
        KS_VARIANT(ks_col2im_items)(t, a, (KS_IDX)a->kernel_h, (KS_IDX)a->kernel_w, (KS_IDX)a->stride_h,
                                    (KS_IDX)a->stride_w, (KS_IDX)a->dilation_h, (KS_IDX)a->dilation_w);
}
/* col2im records every event faster at 64 registers than at 96 (short records, H200: 6.25x
 * against 7.2x plain on N8 C64 128x128): its third build, for launches that record every
 * item, has 64 (KS_COL2IM_TRACED_ALL_MAXNREG) */
#ifndef KS_COL2IM_TRACED_ALL_MAXNREG
#define KS_COL2IM_TRACED_ALL_MAXNREG 64
#endif
KS_KERNEL_FAST_ALL(ks_col2im, ks_im2col_args, __maxnreg__(KS_IM2COL_MAXNREG), __maxnreg__(KS_IM2COL_TRACED_MAXNREG),
                   __maxnreg__(KS_COL2IM_TRACED_ALL_MAXNREG))

/* col2im in the scatter form (--algorithm scatter): one work item per columns element
 * (n, c_col, h_col, w_col), w_col fastest, c_col = (c_im*kh + i)*kw + j. It adds its value
 * into the image element im2col copied it from - (h, w) = (h_col*sh - ph + i*dh,
 * w_col*sw - pw + j*dw), when inside - with an atomic add: overlapping windows add into
 * one element, in an order that changes from run to run on a GPU. Its reads are
 * consecutive (coalesced); the gather form reads strided but needs no atomics. */
KS_FN void KS_VARIANT(ks_col2im_scatter_body)(ks_thread *t, const ks_im2col_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w;
    const KS_IDX rows = C * kh * kw;
    const KS_IDX n_work = (KS_IDX)a->batch * rows * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo, h_col = index / Wo % Ho;
        const KS_IDX c_col = index / (Wo * Ho) % rows, n = index / (Wo * Ho * rows);
        const KS_IDX j = c_col % kw, i = c_col / kw % kh, c_im = c_col / (kw * kh);
        const KS_IDX h = h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h;
        const KS_IDX w = w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w;
        KS_PROBE(ks_probe_work(t, KS_IM2COL_SITE_WORK, index, iter, n, c_col, h_col, w_col, h, w, 0, 0));
        const float v = a->src[index];
        KS_PROBE(ks_probe_read(t, KS_IM2COL_SITE_READ, KS_COL2IM_T_COLUMNS, (int)(i * kw + j), index, n, c_col,
                               h_col * Wo + w_col, v));
        if (h < 0 || h >= H || w < 0 || w >= W) continue; /* a padding entry: no image element */
        const KS_IDX at = ((n * C + c_im) * H + h) * W + w;
        ks_atomic_add_f32(a->dst + at, v);
        KS_PROBE(ks_probe_write(t, KS_IM2COL_SITE_WRITE, KS_COL2IM_T_OUTPUT, (int)(i * kw + j), at, n * C + c_im, h, w,
                                v, 1));
    }
}
KS_KERNEL_FAST(ks_col2im_scatter, ks_im2col_args, __maxnreg__(KS_IM2COL_MAXNREG), __launch_bounds__(1024))
#endif
