/* im2col_args.h - the kernel arguments of im2col/col2im, shared by the body (device and
 * simulator) and the host launchers. */
#ifndef KS_IM2COL_ARGS_H
#define KS_IM2COL_ARGS_H

#include <stdint.h>

#include "im2col.h"

/* Everything a thread needs, passed by value to the CUDA kernel. */
typedef struct ks_im2col_args {
    int64_t batch, channels, height, width;
    int64_t kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int64_t height_col, width_col;
    const float *src; /* im2col: input [N,C,H,W];  col2im: columns [N,C*kh*kw,Ho*Wo] */
    float *dst;       /* im2col: columns;          col2im: output [N,C,H,W] */
} ks_im2col_args;

#ifdef __cplusplus
extern "C" {
#endif
/* Validates p and fills the kernel arguments and geometry (KS_EINVAL on bad p). */
int ks_im2col_args_make(const ks_im2col_params *p, const float *src, float *dst,
                        ks_im2col_args *a, ks_im2col_geom *g);
#ifdef __cplusplus
}
#endif

#endif
