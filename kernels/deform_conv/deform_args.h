/* deform_args.h - the kernel arguments of the deformable kernels, shared by the bodies
 * (device and simulator) and the host launchers. */
#ifndef KS_DEFORM_ARGS_H
#define KS_DEFORM_ARGS_H

#include <stdint.h>

#include "deform_conv.h"

/* Everything a thread needs, passed by value to the CUDA kernels. Pointers are at the
 * chunk's first image; `im2col_step` images per chunk. */
typedef struct ks_deform_args {
    int64_t channels, height, width;
    int64_t kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int64_t im2col_step, offset_groups, height_col, width_col;
    int use_mask, semantics;
    const float *input;   /* [im2col_step, C, H, W] */
    const float *offset;  /* [im2col_step, G_off*2*kh*kw, Ho, Wo] */
    const float *mask;    /* [im2col_step, G_off*kh*kw, Ho, Wo] or NULL */
    const float *col_in;  /* col2im, coord: [C*kh*kw, im2col_step*Ho*Wo] */
    float *col_out;       /* im2col: [C*kh*kw, im2col_step*Ho*Wo] */
    float *grad_input;    /* col2im: [im2col_step, C, H, W], accumulated */
    float *grad_offset;   /* coord: like offset */
    float *grad_mask;     /* coord: like mask (with a mask) */
} ks_deform_args;

#ifdef __cplusplus
extern "C" {
#endif
/* Validates p and fills the arguments of kernel k for chunk c, and the geometry. */
int ks_deform_args_make(const ks_deform_params *p, const ks_deform_chunk *c, ks_deform_args *a,
                        ks_deform_geom *g);
#ifdef __cplusplus
}
#endif

#endif
