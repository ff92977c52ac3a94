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
    const float *input;       /* [im2col_step, C, H, W] */
    const float *offset;      /* [im2col_step, G_off*2*kh*kw, Ho, Wo] */
    const float *mask;        /* [im2col_step, G_off*kh*kw, Ho, Wo] or NULL */
    const float *col_in;      /* col2im, coord: [C*kh*kw, im2col_step*Ho*Wo] */
    float *col_out;           /* im2col: [C*kh*kw, im2col_step*Ho*Wo] */
    float *grad_input;        /* col2im: [im2col_step, C, H, W], accumulated */
    float *grad_offset;       /* coord: like offset */
    float *grad_mask;         /* coord: like mask (with a mask) */
    int64_t tile_positions;   /* grad_tile: output positions per tile (a power of 2) */
    int64_t tile_windows;     /* grad_tile: channels per barrier phase, at most */
    int write_columns;        /* grad_tap, grad_tile, grad_gather: the chunk's write_columns */
    int64_t gather_positions; /* grad_gather: output positions per tile (a power of 2) */
    int64_t gather_channels;  /* grad_gather: channels per block, at most (1..32) */
} ks_deform_args;

/* grad_tile's tile: th x tw output positions (tw <= 8), kk*th*tw <= 512 threads; its
 * shared windows: rh x rw input pixels (the taps' reach, one more for the bottom-right
 * corners, the margin on each side; rw a multiple of 4, room for the first column to
 * start on a multiple of 4), one per channel of a phase: `windows` of them. */
typedef struct ks_deform_tile {
    int64_t th, tw, rh, rw, windows;
} ks_deform_tile;

/* A tile of tp output positions (a power of 2, fewer while kk*tp passes 512): th x tw
 * (tw <= 8), and the window of input pixels its taps reach (the tile's own formula above). */
KS_FN void ks_deform_window_of(const ks_deform_args *a, int64_t tp, ks_deform_tile *s)
{
    const int64_t kk = a->kernel_h * a->kernel_w;
    tp = tp > 0 ? tp : 1;
    while (tp > 1 && kk * tp > 512) tp /= 2;
    s->tw = tp >= 8 ? 8 : tp;
    s->th = tp / s->tw;
    s->rh = (s->th - 1) * a->stride_h + (a->kernel_h - 1) * a->dilation_h + 2 + 2 * KS_DEFORM_TILE_MARGIN;
    s->rw = ((s->tw - 1) * a->stride_w + (a->kernel_w - 1) * a->dilation_w + 2 + 2 * KS_DEFORM_TILE_MARGIN + 3 + 3) /
            4 * 4;
}

KS_FN ks_deform_tile ks_deform_tile_of(const ks_deform_args *a)
{
    ks_deform_tile s;
    ks_deform_window_of(a, a->tile_positions, &s);
    const int64_t cpg = a->channels / a->offset_groups, fit = KS_DEFORM_TILE_CAP / (s.rh * s.rw);
    const int64_t want = a->tile_windows > 0 ? a->tile_windows : 1;
    s.windows = fit < want ? fit : want;
    s.windows = s.windows < cpg ? s.windows : cpg;
    return s;
}

/* grad_gather's tile: grad_tile's tile and window (ks_deform_window_of), halved while not
 * one channel's lists fit, thread = entry (tap, position), `entries` = kk*th*tw of them. Its shared memory, one array of
 * `floats` 4-byte slots (at most KS_DEFORM_GATHER_CAP, the simulator's 48 KiB):
 *   top   [nb][ep] at 0:          each entry's scattered value (the column gradient, times
 *                                 the mask) for the block's nb channels; ep = entries rounded
 *                                 up to 32k + 1, so lanes reading one entry for 32 channels
 *                                 hit 32 banks
 *   start [npix + 1] at at_start: the window pixels' lists: their lengths, then where each
 *                                 starts (an exclusive sum), start[npix] = all of them
 *   part  [32] at at_part:        the sum's chunk totals
 *   le, lw [4 * entries] at at_le, at_lw: the lists: entry and weight of each corner that
 *                                 lands in the window, by pixel */
typedef struct ks_deform_gather {
    ks_deform_tile w; /* th, tw, rh, rw (windows unused) */
    int64_t entries, ep, npix, nb, at_start, at_part, at_le, at_lw, floats;
} ks_deform_gather;

KS_FN ks_deform_gather ks_deform_gather_of(const ks_deform_args *a)
{
    ks_deform_gather s;
    const int64_t cpg = a->channels / a->offset_groups, want = a->gather_channels > 0 ? a->gather_channels : 1;
    /* the tile halves while not one channel's lists fit (a wide dilation or stride) */
    for (int64_t tp = a->gather_positions > 0 ? a->gather_positions : 1;; tp /= 2) {
        ks_deform_window_of(a, tp, &s.w);
        s.w.windows = 0;
        s.entries = a->kernel_h * a->kernel_w * s.w.th * s.w.tw;
        s.ep = (s.entries + 30) / 32 * 32 + 1;
        s.npix = s.w.rh * s.w.rw;
        const int64_t fixed = s.npix + 1 + 32 + 8 * s.entries;
        const int64_t fit = fixed < KS_DEFORM_GATHER_CAP ? (KS_DEFORM_GATHER_CAP - fixed) / s.ep : 0;
        s.nb = fit < want ? fit : want;
        s.nb = s.nb < cpg ? s.nb : cpg;
        if (s.nb >= 1 || tp <= 1) break;
    }
    s.at_start = s.nb * s.ep;
    s.at_part = s.at_start + s.npix + 1;
    s.at_le = s.at_part + 32;
    s.at_lw = s.at_le + 4 * s.entries;
    s.floats = s.at_lw + 4 * s.entries;
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
/* grad_gather's launch: one block of kk*th*tw threads per tile (at most the block cap, grid
 * stride beyond) and its shared bytes; KS_EINVAL when not one channel's lists fit */
int ks_deform_gather_launch(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_args *a,
                            const ks_launch *launch, int *threads, int64_t *blocks, size_t *shared);
int ks_deform_args_make(const ks_deform_params *p, const ks_deform_chunk *c, ks_deform_args *a, ks_deform_geom *g);
#ifdef __cplusplus
}
#endif

#endif
