/* im2col_args.h - the kernel arguments of im2col/col2im, shared by the body (device and
 * simulator) and the host launchers. */
#ifndef KS_IM2COL_ARGS_H
#define KS_IM2COL_ARGS_H

#include <stdint.h>

#include "../core/ks_core.h"
#include "im2col.h"

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
int ks_im2col_args_make(const ks_im2col_params *p, const float *src, float *dst,
                        ks_im2col_args *a, ks_im2col_geom *g);
/* The same from a geometry ks_im2col_geometry already validated (no check). */
void ks_im2col_args_fill(const ks_im2col_params *p, const ks_im2col_geom *g, const float *src, float *dst,
                         ks_im2col_args *a);
/* The kernel (col2im 0: im2col, 1: col2im, gather form; KS_COL2IM_SCATTER: col2im's
 * scatter form, with atomics) on arguments ks_im2col_args_make validated:
 * nothing is checked again. Host pointers and sink on the simulator; device pointers, a
 * device sink and a cudaStream_t (or NULL) on CUDA. */
int ks_im2col_launch_sim(const ks_im2col_args *a, int col2im, const ks_launch *l, ks_sink *sink);
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

#endif
