/* vw_view.h - how much room a heatmap keeps around its plane (issue 38 D1, D8). The
 * viewer keeps the ring the trace's padding reads reach (the index's margin: the view
 * does not jump while the user steps); a slide keeps only what its step draws outside
 * the plane: the focused item's reads, samples' corners and regions there, the cell its
 * question asks about, the looked-up element and the extent of the figures it asks for
 * (lesson 12's dropped window two rows past the image). A 5x5 plane whose step draws
 * nothing outside fills its panel. */
#ifndef VW_VIEW_H
#define VW_VIEW_H

#include "vw_state.h"

/* The most cells a slide's margin grows to (a figure far off the plane is clipped). */
#define VW_MARGIN_MAX 6

/* The margin panel p's plane is fitted with (vw_panel_map), in cells on each side
 * (side[VW_SIDE_*]): the viewer's the same on every side; a slide's only on the sides
 * its step draws something past the plane (issue 38 D1: 05 s10's 5x5 image in a ring of
 * two cells, only the bottom one holding the sample). Returns the widest; 0 on every
 * side for a plane of more than 4096 cells. */
int vw_panel_margins(const vw_state *s, int panel, int side[4]);
/* Whether a slide's rows and columns past the plane (vw_panel_margins) are cells, drawn
 * as the margin's checker: not where they are only the room a figure's labels take (the
 * race's two above the shared tile), which the pictures' share does not count. */
int vw_margin_cells(const vw_state *s);

/* The cells a slide's figures ("draw", vw_draw_ideas.c) mark on panel p, as a box in the
 * plane's cell coordinates (a cell at y spans y - 0.5 .. y + 0.5; the box may reach past
 * the plane): 1 and the box, or 0 when the slide draws none there. */
int vw_figure_extent(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1);

/* The geometry of the figures a slide draws (vw_draw_ideas.c), read off the focused
 * item's fields and events and the operator's parameters (never the lesson text). */
/* A convolution's geometry from the trace's parameters, (rows, columns) each. */
typedef struct vw_fig_geom {
    int64_t k[2], pad[2], stride[2], dil[2], out[2], in[2];
} vw_fig_geom;

/* col2im's candidate windows along axis a (0: h_col, rows; 1: w_col, columns) of the
 * focused item: its pixel (py, px) on panel p's plane, its padded coordinate im on the
 * axis, the windows lo .. hi - 1 (at most 8) and the geometry. */
typedef struct vw_fig_windows {
    vw_fig_geom g;
    int64_t im, lo, hi, py, px;
} vw_fig_windows;
int vw_fig_windows_find(const vw_state *s, int panel, int a, vw_fig_windows *wn); /* 1, or 0: none there */
/* Candidate window c's first and last tap along axis a. */
void vw_fig_window_taps(const vw_fig_geom *g, int a, int64_t c, int64_t *first, int64_t *last);

/* RoIAlign: the focused sample of panel p's plane where its bin's grid puts it (*y, *x)
 * before the border clamp moved it to its own coordinates; NULL when it is no clamped
 * sample (or the item's RoI and grid fields are missing). */
const ks_event *vw_fig_clamped_sample(const vw_state *s, int panel, double *y, double *x);
/* The same for sample f of trace g (another run's, a slide's guide): 1 and where its
 * bin's grid put it, or 0. */
int vw_guide_sample_unclamped(const ks_trace *g, const ks_event *f, double *y, double *x);

/* im2col: the windows the floor drops past the focused item's on panel p's plane: along
 * each axis where the item's window is the last (axis[i]), the dropped window's first
 * and last taps, row [i][0] and column [i][1]. */
typedef struct vw_fig_dropped {
    vw_fig_geom g;
    int n, axis[2];
    int64_t first[2][2], last[2][2];
} vw_fig_dropped;
int vw_fig_dropped_find(const vw_state *s, int panel, vw_fig_dropped *dr); /* n, 0..2 */

/* The race a slide that draws "race" names (lesson 11 without barrier 2): the first of
 * the focused item's shared stores on panel p's plane that another thread of its block
 * reads after it in the same phase (store, read, phase), and the slot's store before it
 * (before, or NULL); 1, or 0 when there is none. */
typedef struct vw_fig_race {
    const ks_event *store, *read, *before;
    int32_t phase;
} vw_fig_race;
int vw_fig_race_find(const vw_state *s, int panel, vw_fig_race *r);
/* the rows a slide that draws the race keeps above the tile for its two labels */
#define VW_RACE_ROOM 2

/* The focused item's kernel window on panel p, when it shows the plane of the tensor
 * named "input" the item's output channel reads (conv2d's filter o on a one-channel
 * filter is not known: the panel's plane is taken as shown): its first and last taps,
 * from the item's output position (h_out, w_out or h_col, w_col) and the geometry. */
int vw_fig_window_find(const vw_state *s, int panel, vw_fig_geom *g, int64_t first[2], int64_t last[2]);

/* The focused request's accesses on panel p's plane (a slide that draws "warp"): each
 * lane's cell in (y, x)[k] and lane[k], its sector's rank in sector[k]; how many (at most
 * max), 0 without the figure or such accesses. */
int vw_fig_warp_cells(const vw_state *s, int panel, int64_t (*yx)[2], int *lane, int *sector, int max);

/* Whether panel p shows a window of its plane, rows wy0..wy1 - 1 and columns wx0..wx1 - 1
 * of it, that leaves some of its cells out (of a sparse plane, some filled cell: its
 * empty rows round its ring are no data); its rows and columns in view, of the axes cut,
 * into buf ("rows 1..10, cols 2..11"). */
int vw_window_text(const vw_state *s, int p, const vw_heatmap *m, int64_t wy0, int64_t wy1, int64_t wx0, int64_t wx1,
                   char *buf, size_t n);
/* The window as a slice of the plane in the header's notation: the panel's place with
 * its last two axes as the rows and columns in view, as Python slices them ("input[0, 0,
 * :, :6]"); where that is longer than cols and the tensor has one plane, its name with
 * them ("columns[:15, :2]", "in[:, 16:]", as the header names such a tensor); a strip's
 * without the spaces ("columns[0,:26,:4]"). 0 where none fits in cols. */
int vw_window_slice(const vw_state *s, int p, const vw_heatmap *m, int64_t wy0, int64_t wy1, int64_t wx0, int64_t wx1,
                    int cols, char *buf, size_t n);
/* The characters the shortest slice naming a slide's window of panel p's plane takes in
 * layout L (its whole cells in view); 0 where the panel shows its plane whole or no slice
 * names it. A slide's layout gives the panel the width for it (issue 38 D12). */
int vw_window_name_chars(const vw_state *s, const vw_layout *L, int panel);

#endif
