/* maxpool2d_body.h - 2-D max pooling (torch F.max_pool2d with return_indices), forward and
 * backward, written once: the declarations both builds share, then (per variant, see
 * ks_variants.h) the two bodies.
 *
 *   input   [N, C, H, W]
 *   output  [N, C, Ho, Wo]  the largest input in each window; padding is -inf
 *   indices [N, C, Ho, Wo]  int64, h * W + w of that input within its plane
 *   grad_input [N, C, H, W] += grad_output at each window's index (backward)
 *
 *   Ho = floor((H + 2*ph - dh*(kh - 1) - 1 + (ceil_mode ? sh - 1 : 0)) / sh) + 1, and with
 *   ceil_mode a last window that would start past the input and its left padding
 *   ((Ho - 1)*sh >= H + ph) is dropped. Wo likewise.
 *
 * A window's maximum: its taps in order (i, then j), an element replaces the best so far
 * when it is larger or NaN: ties keep the first, a NaN propagates (the last NaN's index).
 */
#ifndef KS_MAXPOOL2D_DECL
#define KS_MAXPOOL2D_DECL
#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_maxpool2d_args {
    int64_t batch, channels, height, width; /* N, C, H, W */
    int64_t out_h, out_w;                   /* Ho, Wo */
    int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
    int ceil_mode;
    const float *input;
    float *output;
    int64_t *indices;         /* forward: written; backward: read */
    const float *grad_output; /* backward */
    float *grad_input;        /* backward: accumulated, zero it first */
} ks_maxpool2d_args;

/* torch's launch: 256 threads per block, as many blocks as needed */
#define KS_MAXPOOL_THREADS 256
#define KS_MAXPOOL_BLOCK_CAP (-1)

/* tensor ids (the op's rows and the trace's tensors) and sites */
enum { KS_MP_T_INPUT, KS_MP_T_OUTPUT, KS_MP_T_INDICES, KS_MP_T_GRAD_OUTPUT, KS_MP_T_GRAD_INPUT };
/* forward: work, read input, write output, write indices, then two regions for the
 * viewer: the window's extent and the maximum it chose; backward: work, read grad_output,
 * add grad_input, read indices */
enum {
    KS_MP_SITE_WORK,
    KS_MP_SITE_READ,
    KS_MP_SITE_WRITE,
    KS_MP_SITE_INDEX,
    KS_MP_SITE_WINDOW,
    KS_MP_SITE_ARGMAX,
    KS_MP_NSITES
};

/* The GPU launch of the forward (backward 0) or backward (1) kernel on device pointers;
 * dev_sink NULL runs the plain variant. (maxpool2d_op.c, through its kernel rows) */
int ks_maxpool2d_cuda(const ks_maxpool2d_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink);
/* The same on the simulator, host pointers. */
int ks_maxpool2d_sim(const ks_maxpool2d_args *a, int backward, const ks_launch *l, ks_sink *sink);
/* Independent reference in double from the definition (maxpool2d_ref.c): output and
 * indices, and grad_input (N*C*H*W, zeroed here) of sum(output * grad_output). */
void ks_maxpool2d_ref(const ks_maxpool2d_args *a, const float *input, double *output, int64_t *indices);
void ks_maxpool2d_ref_backward(const ks_maxpool2d_args *a, const float *input, const float *grad_output,
                               double *grad_input);

#ifdef __cplusplus
}
#endif
#endif /* KS_MAXPOOL2D_DECL */

#ifdef KS_VARIANT
#include "../core/ks_probe.h"

/* Forward: one work item per output element (n, c, oh, ow), ow fastest. The window starts
 * at (h_start, w_start) = (oh*sh - ph, ow*sw - pw); tap (i, j) is at
 * (h_start + i*dh, w_start + j*dw); taps in the padding read nothing. */
KS_FN void KS_VARIANT(ks_maxpool2d_fwd_body)(ks_thread *t, const ks_maxpool2d_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->out_h, Wo = (KS_IDX)a->out_w;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w;
    const KS_IDX n_work = (KS_IDX)a->batch * C * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX ow = index % Wo;
        const KS_IDX oh = (index / Wo) % Ho;
        const KS_IDX plane = index / (Wo * Ho); /* n*C + c */
        const KS_IDX h_start = oh * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h;
        const KS_IDX w_start = ow * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w;
        KS_PROBE(ks_probe_work(t, KS_MP_SITE_WORK, index, iter, plane / C, plane % C, oh, ow, h_start, w_start, 0, 0));
        /* the window's extent, padding included (a pixel covers its centre +- 0.5) */
        KS_PROBE(ks_probe_box(t, KS_MP_SITE_WINDOW, KS_MP_T_INPUT, plane, (float)h_start - 0.5f, (float)w_start - 0.5f,
                              (float)(h_start + (kh - 1) * (KS_IDX)a->dilation_h) + 0.5f,
                              (float)(w_start + (kw - 1) * (KS_IDX)a->dilation_w) + 0.5f, 1, 1, 0));
        const float *im = a->input + plane * H * W;
        float best = -__builtin_inff();
        int64_t best_at = -1;
        for (KS_IDX i = 0; i < kh; ++i) {
            const KS_IDX h = h_start + i * (KS_IDX)a->dilation_h;
            for (KS_IDX j = 0; j < kw; ++j) {
                const KS_IDX w = w_start + j * (KS_IDX)a->dilation_w;
                if (h < 0 || h >= H || w < 0 || w >= W) {
                    KS_PROBE(
                        ks_probe_read(t, KS_MP_SITE_READ, KS_MP_T_INPUT, (int)(i * kw + j), -1, plane, h, w, 0.0f));
                    continue;
                }
                const float v = im[h * W + w];
                KS_PROBE(ks_probe_read(t, KS_MP_SITE_READ, KS_MP_T_INPUT, (int)(i * kw + j),
                                       (int64_t)plane * H * W + h * W + w, plane, h, w, v));
                if (best_at < 0 || v > best || v != v) { /* v != v: NaN wins and stays */
                    best = v;
                    best_at = (int64_t)(h * W + w);
                }
            }
        }
        a->output[index] = best;
        a->indices[index] = best_at;
        KS_PROBE(ks_probe_write(t, KS_MP_SITE_WRITE, KS_MP_T_OUTPUT, 0, index, plane, oh, ow, best, 0));
        KS_PROBE(ks_probe_write_int(t, KS_MP_SITE_INDEX, KS_MP_T_INDICES, 0, index, plane, oh, ow, best_at, 0));
        KS_PROBE(if (best_at >= 0)
                     ks_probe_box(t, KS_MP_SITE_ARGMAX, KS_MP_T_INPUT, plane, (float)(best_at / W),
                                  (float)(best_at % W), (float)(best_at / W), (float)(best_at % W), 0, 0, 0));
    }
}
KS_KERNEL(ks_maxpool2d_fwd, ks_maxpool2d_args)

/* Backward: one work item per output element; its gradient goes to the input element its
 * window chose (atomic: windows overlap when the stride is below the kernel). */
KS_FN void KS_VARIANT(ks_maxpool2d_bwd_body)(ks_thread *t, const ks_maxpool2d_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->out_h, Wo = (KS_IDX)a->out_w;
    const KS_IDX n_work = (KS_IDX)a->batch * C * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX ow = index % Wo;
        const KS_IDX oh = (index / Wo) % Ho;
        const KS_IDX plane = index / (Wo * Ho);
        const KS_IDX h_start = oh * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h;
        const KS_IDX w_start = ow * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w;
        KS_PROBE(ks_probe_work(t, KS_MP_SITE_WORK, index, iter, plane / C, plane % C, oh, ow, h_start, w_start, 0, 0));
        const float g = a->grad_output[index];
        const int64_t at = a->indices[index];
        KS_PROBE(ks_probe_read(t, KS_MP_SITE_READ, KS_MP_T_GRAD_OUTPUT, 0, index, plane, oh, ow, g));
        KS_PROBE(ks_probe_read_int(t, KS_MP_SITE_INDEX, KS_MP_T_INDICES, 1, index, plane, oh, ow, at));
        if (at < 0 || at >= (int64_t)(H * W)) continue; /* a window with no input element */
        ks_atomic_add_f32(a->grad_input + plane * H * W + (KS_IDX)at, g);
        KS_PROBE(ks_probe_write(t, KS_MP_SITE_WRITE, KS_MP_T_GRAD_INPUT, 0, (int64_t)plane * H * W + at, plane, at / W,
                                at % W, g, 1));
    }
}
KS_KERNEL(ks_maxpool2d_bwd, ks_maxpool2d_args)
#endif /* KS_VARIANT */
