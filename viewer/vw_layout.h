/* vw_layout.h - where everything goes on screen, as pure functions of the window size and
 * the tensor shapes, so drawing and clicking agree and the tests check both without SDL.
 *
 *   +---------------------------- title ----------------------------+
 *   | input heatmap (+legend)       | output heatmap (+legend)       |
 *   +-------------------------------+--------------------------------+
 *   | index decomposition / lookup  | grid of blocks x threads       |
 *   +------------------------- timeline -----------------------------+
 *   +-------------------------- status ------------------------------+
 * A window narrower than it is tall stacks the two heatmaps.
 */
#ifndef VW_LAYOUT_H
#define VW_LAYOUT_H

#include <stdint.h>

typedef struct vw_rect {
    int x, y, w, h;
} vw_rect;

typedef struct vw_layout {
    int w, h, line; /* window size; text line height */
    vw_rect title, input, input_legend, output, output_legend, decomp, grid, timeline, status;
    vw_rect story;   /* a lesson's narration band above the timeline (0 high without one) */
    int title_lines; /* the title bar's text lines: a title too long for one line wraps */
    /* a slide's arrangement (vw_layout_slide; 0: the viewer's own layout) */
    int arrangement;
    int legend_top; /* a slide's panels whose legend sits on the header line (vw_slide_geom) */
    /* a slide's panels whose header takes a second line (bit 0 the input's, bit 1 the
     * output's): a narrow strip's window named as "columns" over "[0,:24,16:19]" */
    int header_two;
    /* the text size of the numbers printed in heatmap cells at their smallest: its glyph
     * advance and line (0: three fifths of the text's, vw_value_metrics) */
    int vadv, vline;
    /* the same as the drawing will set them, for a slide's layout to size its pictures by
     * (vw_draw_layout sets them before laying out; 0: estimated from the text's) */
    int want_vadv, want_vline, want_h;
    /* a slide's room left of panel p's plane for the focused sample's weights as a key
     * (vw_draw_layout; issue 38 D12 #26: at 1280x960 the 6 x 6 plane filled its panel) */
    int key_w[2];
} vw_layout;

/* How a slide (a lesson step) places its parts, pictures first (issue 38 D1):
 *   STACKED  the two heatmaps across the width, under them the decomposition and the
 *            grid side by side, then the narration band across the width;
 *   SIDE     the heatmaps across the width, under them the band (left) beside a column
 *            (right) of the decomposition over the grid;
 *   RIGHT    the heatmaps on the left over the whole height, a column on the right of
 *            the band over the decomposition over the grid (wide frames);
 *   COLUMN   the heatmaps on the left over the decomposition and the grid side by side,
 *            the band in a column on the right over the whole height (wide frames, long
 *            text beside a long decomposition).
 * Each part is as tall as this slide's own text needs; the heatmaps take the rest. */
enum { VW_ARR_VIEWER = 0, VW_ARR_STACKED = 1, VW_ARR_SIDE = 2, VW_ARR_RIGHT = 3, VW_ARR_COLUMN = 4 };
typedef struct vw_slide_geom {
    int arrangement;  /* VW_ARR_STACKED, _SIDE, _RIGHT or _COLUMN */
    int title_lines;  /* the title bar's lines (1..3) */
    int band_lines;   /* the narration band's text lines */
    int decomp_lines; /* the decomposition panel's text lines */
    int column_w;     /* SIDE, RIGHT, COLUMN: the text column's width in pixels */
    int grid_lines;   /* the grid panel's height in lines (0: none where it would not fit) */
    int split;        /* the input panel's share of the pictures' width, per mille (0: half) */
    /* a panel's legend on its header line, right of the header (bit 0 the input's, bit 1
     * the output's), its map down to the panel's bottom: a line more for the picture */
    int legend_top;
} vw_slide_geom;
/* The band's, decomposition's and column's widths (pixels) an arrangement gives in a w
 * wide frame (column_w: SIDE and RIGHT's column), before any height is known. */
void vw_slide_widths(int w, const vw_slide_geom *g, int *band_w, int *decomp_w);
/* The layout of a slide w x h with text lines `line` high. */
void vw_layout_slide(vw_layout *L, int w, int h, int line, const vw_slide_geom *g);
/* The share of a slide's height (percent) its heatmap panels (header and map) take at
 * least: the pictures come first (issue 38 D1). */
#define VW_SLIDE_PICTURE 55
/* Narration on a slide: at most this many lines as its band wraps it (issue 38 D1, at
 * 1024x768; a slide's layout keeps to it where a layout that holds the band can). */
#define VW_NARRATION_LINES 5
#define VW_NARRATION_W 1024
#define VW_NARRATION_H 768
/* The metrics of the smallest text printed in heatmap cells: three fifths of the text's
 * (18 px beside 30 px at 1920x1080), unless L already has them (the drawing's own font). */
void vw_value_metrics(vw_layout *L, int advance, int line);
/* The inside of the narration band: its text columns and rows for a glyph advance. */
int vw_band_cols(vw_rect band, int advance);
int vw_band_rows(vw_rect band, int line);

#define VW_MIN_W 640
#define VW_MIN_H 480

/* Panels for a w x h window (at least VW_MIN_W x VW_MIN_H is assumed; smaller is
 * clamped) with text lines `line` pixels high. */
void vw_layout_compute(vw_layout *L, int w, int h, int line);
/* The same with a narration band of story_lines text lines (lessons); 0: none. */
void vw_layout_compute_story(vw_layout *L, int w, int h, int line, int story_lines);
/* The same with a title bar of title_lines text lines (>= 1). */
void vw_layout_compute_full(vw_layout *L, int w, int h, int line, int story_lines, int title_lines);
/* The same for slides: the decomposition panel as tall as decomp_lines text lines (0:
 * the default), within half the room the narration band leaves. */
void vw_layout_compute_slides(vw_layout *L, int w, int h, int line, int story_lines, int title_lines, int decomp_lines);
/* The decomposition panel's width in a w wide window, with a narration band (story) or not. */
int vw_layout_decomp_width(int w, int story);

/* The default text size (pixels per em) for a w x h window: readable from the back of a
 * room on a projector, 30 px at 1920x1080 and in proportion below (the smaller of the two
 * ratios), never under VW_TEXT_MIN. */
#define VW_TEXT_MIN 12
#define VW_TEXT_MAX 96
int vw_text_px(int w, int h);
/* The least text a slide's cell value or label prints at in a frame h pixels tall:
 * VW_LEGIBLE_PX at 1080 rows and in proportion (13 px at 768: the frame projected as
 * tall), issue 38 D1's "18 px at 1080p"; smaller, a slide zooms instead. */
#define VW_LEGIBLE_PX 18
int vw_legible_px(int h);
/* The least a sample's corner weight prints at (a label, or a line of the key beside
 * the plane), a figure a room reads across the plane (decimals such as 0.65625, corner 0s
 * past the image): a size up, VW_WEIGHT_LEGIBLE_PX at 1080 rows and in proportion (20 px
 * at 960, 16 at 768), but never more than text_px, the text's own size (issue 38 D12
 * #26). A clamp's words ("w=1, clamped") may keep the least legible size. */
#define VW_WEIGHT_LEGIBLE_PX 22
int vw_weight_legible_px(int h, int text_px);
int vw_rect_contains(vw_rect r, int x, int y);
int vw_rect_overlap(vw_rect a, vw_rect b);

/* A plane of rows x cols cells fitted into area with square cells and margin cells of
 * room round it (to show padding reads and figures outside the plane): side[] cells
 * above, left of, below and right of it (VW_SIDE_*; a slide keeps room only where its
 * step draws something, issue 38 D1), margin the widest of them. Cell (y, x) covers
 * [ox + x * cell, ox + (x + 1) * cell) horizontally; a continuous coordinate (fy, fx)
 * in the bilinear convention (cell centres at integers) sits at ox + (fx + 0.5) * cell. */
enum { VW_SIDE_TOP, VW_SIDE_LEFT, VW_SIDE_BOTTOM, VW_SIDE_RIGHT };
typedef struct vw_heatmap {
    double ox, oy, cell;
    int64_t rows, cols;
    int margin;
    int side[4];
    /* a slide's sparse plane fitted to its filled cells, rows fill[0]..fill[2] and columns
     * fill[1]..fill[3]: the row of cells above them and the column left of them hold
     * their column and row numbers (vw_panel_map; axes 0 elsewhere) */
    int axes;
    int64_t fill[4];
} vw_heatmap;

/* The plane fitted with `margin` cells on every side (the viewer's padding ring). */
vw_heatmap vw_heatmap_fit(vw_rect area, int64_t rows, int64_t cols, int margin);
/* The plane fitted with side[VW_SIDE_*] cells on each side (NULL: none), centred. */
vw_heatmap vw_heatmap_fit_sides(vw_rect area, int64_t rows, int64_t cols, const int side[4]);
/* Sets m's margin to side[0..3] (NULL: none), and m->margin to the widest. */
void vw_heatmap_set_sides(vw_heatmap *m, const int side[4]);
/* Whether cell (y, x) lies on the plane or in its margin. */
int vw_heatmap_holds(const vw_heatmap *m, int64_t y, int64_t x);
/* Screen rectangle of cell (y, x) (y, x may lie in the margin). Adjacent cells tile. */
vw_rect vw_heatmap_cell(const vw_heatmap *m, int64_t y, int64_t x);
/* Screen point of a continuous coordinate. */
void vw_heatmap_point(const vw_heatmap *m, double fy, double fx, int *px, int *py);
/* The cell under screen point (px, py): 1 and (y, x) when inside the plane, 0 otherwise. */
int vw_heatmap_hit(const vw_heatmap *m, int px, int py, int64_t *y, int64_t *x);

/* Where the bars of a one-row plane go (vw_draw_bars.c): across the panel `area`, from
 * below its header line and a line for the numbers down to 3 pixels above the row of
 * cells (and its margin); h <= 0 when there is no room. A bar of height f * h (f in
 * [0, 1]) stands on y + h. */
vw_rect vw_bars_area(vw_rect area, const vw_heatmap *m, int line);

/* The warp strip (W): a band across the bottom of the decomposition panel *decomp, which
 * keeps the rest (at least a third of it). The band holds two text lines (the request,
 * then its counts), a row of 32 lane boxes, their links down to a byte-address axis and
 * a line of address labels: vw_strip_height(line) pixels where there is room. */
int vw_strip_height(int line);

/* The room a cell keeps beside its number, both sides together, at a value text of
 * advance adv: half a character (issue 38: 12 s8's three-digit numbers nearly touched at
 * 1920x1080 with 4 px), 4 px at least. */
static inline int vw_value_gap(int adv) { return adv / 2 > 4 ? adv / 2 : 4; }

/* The height of a heatmap panel's header line, above its map. */
static inline int vw_panel_header_h(int line) { return line + 4; }

/* The least height in pixels a slide's grid of rows x cols cells (side[VW_SIDE_*]
 * margin cells round it; NULL: none) is drawn at in a w x h frame with text lines `line`
 * high (issue 38 D1, measured literally: the panel's header and its grid as drawn take
 * VW_SLIDE_PICTURE % of h): VW_SLIDE_PICTURE % of h less the header line, or as tall as
 * the plane's shape allows in a panel half the frame wide (square cells; the margin's
 * cells, the padding drawn round the plane, count), or, for a table (row_h > 0: rows
 * text rows of row_h px, header included), all its rows. */
int vw_grid_need(int64_t rows, int64_t cols, const int side[4], double row_h, int w, int h, int line);
vw_rect vw_strip_area(vw_rect *decomp, int line);

/* The block x thread grid: rows of blocks, columns of threads, each screen cell standing
 * for bg blocks x tg threads when the launch is bigger than the panel. */
typedef struct vw_grid {
    vw_rect area;
    int64_t blocks, threads, bg, tg, rows, cols;
    double cw, ch;
} vw_grid;

vw_grid vw_grid_fit(vw_rect area, int64_t blocks, int64_t threads);
vw_rect vw_grid_cell(const vw_grid *g, int64_t row, int64_t col);
/* The (block, thread) at the start of the screen cell under (px, py); 0 when outside. */
int vw_grid_hit(const vw_grid *g, int px, int py, int64_t *block, int64_t *thread);

/* Timeline: position pos of n at an x inside r; and back. */
int vw_timeline_x(vw_rect r, uint64_t n, uint64_t pos);
uint64_t vw_timeline_pos(vw_rect r, uint64_t n, int x);

/* The background index build's progress bar (permille in [0, 1000]) along the bottom of the
 * status line r: 3 pixels high, filled from the left; 0 wide once the build is done. */
vw_rect vw_progress_bar(vw_rect r, int permille);

#endif
