/* vw_gallery.h - the conv_arithmetic gallery (`kscope gallery DIR`, docs/gallery.md): one
 * animation per convolution arithmetic case, drawn from a real trace of KernelScope's
 * im2col (a convolution) or col2im (its transpose) with the viewer's own heatmaps and
 * overlays, rendered headless like `kscope view --headless`: the input below, the output
 * above, the columns matrix beside them, one frame per window position, written as PNG
 * frames, an animated GIF (vw_gif.h) and frames.tsv, the window each frame drew.
 *
 * The trace (cli/cmd_gallery.c runs it on the simulator):
 *   convolution: conv2d with --trace-kernel im2col, one channel, one filter of ones: each
 *     im2col work item is one window (its reads, padding included, are the window's
 *     cells, its writes one column of `columns`), the frame's output cell is the item's
 *     (h_col, w_col), and `output` holds the convolution.
 *   transposed: col2im --algorithm scatter rebuilding the i x i image from the columns of
 *     an o x o input x (columns[tap][q] = x[q], a dense transposed convolution with a
 *     kernel of ones); x itself is added to the trace as a tensor without events. Column
 *     q's k*k work items each add one entry into the output: together their positions
 *     (work fields h, w, padding included) are the window input q spreads onto.
 */
#ifndef VW_GALLERY_H
#define VW_GALLERY_H

#include <SDL.h>
#include <stdint.h>

#include "../trace/kst.h"

/* The window's box in every frame: a colour the heatmaps and overlays do not use, so a
 * test finds the box by reading the PNG back. */
#define VW_GALLERY_WINDOW 0xFFA000
/* its outline: this many pixels thick, all outside the window's cells */
#define VW_GALLERY_BOX 4

typedef struct vw_gallery_anim {
    const char *name;  /* file stem: "half_padding_no_strides" (conv_arithmetic's names) */
    const char *title; /* "Half padding, no strides" */
    int transposed;
    int i, k, p, s, d; /* the convolution: input size, kernel, padding, stride, dilation */
} vw_gallery_anim;

/* conv_arithmetic's animations, the convolutions then their transposes. */
const vw_gallery_anim *vw_gallery_list(int *n);
/* o = floor((i + 2p - d(k-1) - 1) / s) + 1, the convolution's output size. */
int vw_gallery_out_size(const vw_gallery_anim *a);

typedef struct vw_gallery_opts {
    const char *dir;              /* writes DIR/NAME.gif, DIR/NAME/frame-NNN.png, DIR/NAME/frames.tsv */
    int width, height, text_size; /* text_size 0: from the size (vw_text_px) */
    int delay_ms;                 /* a GIF frame's time */
    int gif;                      /* write the GIF (a build with giflib) */
} vw_gallery_opts;

/* Renders animation a from its trace tr (see above). Returns 0 and the frames written,
 * or a ks_status with ks_error_message() set. */
int vw_gallery_render(const ks_trace *tr, const vw_gallery_anim *a, const vw_gallery_opts *o, int *frames);

/* A surface as a PNG, written whole or not at all (vw_app.c, as `view --png`). */
int vw_save_png(SDL_Surface *surf, const char *path);

#endif
