/* deform_args.h - the kernel arguments of the deformable kernels, shared by the bodies
 * (device and simulator) and the host launchers. */
#ifndef KS_DEFORM_ARGS_H
#define KS_DEFORM_ARGS_H

#include <stdint.h>

#include "../core/ks_core.h"
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
    int64_t tile_positions; /* grad_tile: output positions per tile (a power of 2) */
    int64_t tile_windows;   /* grad_tile: channels per barrier phase, at most */
    int write_columns;      /* grad_tap, grad_tile: the chunk's write_columns */
} ks_deform_args;

/* grad_tile's tile: th x tw output positions (tw <= 8), kk*th*tw <= 512 threads; its
 * shared windows: rh x rw input pixels (the taps' reach, one more for the bottom-right
 * corners, the margin on each side; rw a multiple of 4, room for the first column to
 * start on a multiple of 4), one per channel of a phase: `windows` of them. */
typedef struct ks_deform_tile {
    int64_t th, tw, rh, rw, windows;
} ks_deform_tile;

KS_FN ks_deform_tile ks_deform_tile_of(const ks_deform_args *a)
{
    ks_deform_tile s;
    const int64_t kk = a->kernel_h * a->kernel_w;
    int64_t tp = a->tile_positions > 0 ? a->tile_positions : 1;
    while (tp > 1 && kk * tp > 512) tp /= 2;
    s.tw = tp >= 8 ? 8 : tp;
    s.th = tp / s.tw;
    s.rh = (s.th - 1) * a->stride_h + (a->kernel_h - 1) * a->dilation_h + 2 + 2 * KS_DEFORM_TILE_MARGIN;
    s.rw = ((s.tw - 1) * a->stride_w + (a->kernel_w - 1) * a->dilation_w + 2 + 2 * KS_DEFORM_TILE_MARGIN + 3 + 3) / 4 * 4;
    const int64_t cpg = a->channels / a->offset_groups, fit = KS_DEFORM_TILE_CAP / (s.rh * s.rw);
    const int64_t want = a->tile_windows > 0 ? a->tile_windows : 1;
    s.windows = fit < want ? fit : want;
    s.windows = s.windows < cpg ? s.windows : cpg;
    return s;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Validates p and fills the arguments of kernel k for chunk c, and the geometry. */
void ks_deform_args_fill(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                         ks_deform_args *a);
/* grad_tile's launch: one block of kk*th*tw threads per tile, at most the launch's block
 * cap (KS_DEFORM_BLOCK_CAP by default) blocks; KS_EINVAL when its window does not fit */
int ks_deform_tile_launch(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_args *a,
                          const ks_launch *launch, int *threads, int64_t *blocks);
int ks_deform_args_make(const ks_deform_params *p, const ks_deform_chunk *c, ks_deform_args *a,
                        ks_deform_geom *g);
#ifdef __cplusplus
}
#endif

#endif
