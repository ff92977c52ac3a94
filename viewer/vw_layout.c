/* vw_layout.c - panel rectangles and the cell <-> pixel mappings (see vw_layout.h). */
#include "vw_layout.h"

#include <math.h>

#define PAD 8

static vw_rect rect(int x, int y, int w, int h)
{
    vw_rect r = {.x = x, .y = y, .w = w > 0 ? w : 0, .h = h > 0 ? h : 0};
    return r;
}

int vw_rect_contains(vw_rect r, int x, int y) { return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h; }

int vw_rect_overlap(vw_rect a, vw_rect b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/* A heatmap panel: the map on top, its legend (a colour bar and a line of labels) below. */
static void heat_panel(vw_rect r, int line, vw_rect *map, vw_rect *legend)
{
    int lh = line + 14;
    *map = rect(r.x, r.y, r.w, r.h - lh - 4);
    *legend = rect(r.x, r.y + r.h - lh, r.w, lh);
}

void vw_layout_compute(vw_layout *L, int w, int h, int line) { vw_layout_compute_story(L, w, h, line, 0); }

int vw_legible_px(int h) { return (VW_LEGIBLE_PX * h + 1079) / 1080; }

int vw_weight_legible_px(int h, int text_px)
{
    const int px = (VW_WEIGHT_LEGIBLE_PX * h + 1079) / 1080;
    return px < text_px ? px : text_px;
}

int vw_text_px(int w, int h)
{
    const double k = fmin((double)w / 1920.0, (double)h / 1080.0);
    const int px = (int)lround(30.0 * k);
    return px < VW_TEXT_MIN ? VW_TEXT_MIN : px > VW_TEXT_MAX ? VW_TEXT_MAX : px;
}

void vw_layout_compute_story(vw_layout *L, int w, int h, int line, int story_lines)
{
    vw_layout_compute_full(L, w, h, line, story_lines, 1);
}

void vw_layout_compute_full(vw_layout *L, int w, int h, int line, int story_lines, int title_lines)
{
    vw_layout_compute_slides(L, w, h, line, story_lines, title_lines, 0);
}

int vw_layout_decomp_width(int w, int story)
{
    if (w < VW_MIN_W) w = VW_MIN_W;
    /* a slide's decomposition gets two thirds: its worked fields run long */
    return story ? (w - 3 * PAD) * 2 / 3 : (w - 3 * PAD) * 11 / 20;
}

void vw_layout_compute_slides(vw_layout *L, int w, int h, int line, int story_lines, int title_lines, int decomp_lines)
{
    if (w < VW_MIN_W) w = VW_MIN_W;
    if (h < VW_MIN_H) h = VW_MIN_H;
    if (title_lines < 1) title_lines = 1;
    if (title_lines > 3) title_lines = 3;
    L->w = w;
    L->h = h;
    L->line = line;
    L->title_lines = title_lines;
    L->arrangement = VW_ARR_VIEWER;
    L->legend_top = 0;
    L->header_two = 0;
    L->vadv = L->vline = 0;
    int bar = line + 6;
    L->title = rect(0, 0, w, title_lines * line + 6);
    L->status = rect(0, h - bar, w, bar);
    L->timeline = rect(PAD, L->status.y - 30, w - 2 * PAD, 26);
    int top = L->title.h + PAD, bottom = L->timeline.y - PAD;
    L->story = rect(PAD, bottom, w - 2 * PAD, 0);
    if (story_lines > 0) {
        int sh = story_lines * line + 2 * PAD;
        if (sh > (bottom - top) * 2 / 5) sh = (bottom - top) * 2 / 5; /* the maps keep most */
        L->story = rect(PAD, bottom - sh, w - 2 * PAD, sh);
        bottom = L->story.y - PAD;
    }
    int body = bottom - top;
    /* the heatmaps get most of the height; the text panel keeps room for ~12 lines, a
     * slide's for what its steps' decompositions need (at least 5 lines, at most half the
     * body: the band says the rest) */
    int text_h = 13 * line + 2 * PAD;
    if (text_h > body / 2) text_h = body / 2;
    if (story_lines > 0) {
        text_h = (decomp_lines > 5 ? decomp_lines : decomp_lines > 0 ? 5 : 7) * line + 6;
        if (text_h > body / 2) text_h = body / 2;
    }
    int heat_h = body - text_h - PAD;
    vw_rect in, out;
    if (w >= h) {
        int half = (w - 3 * PAD) / 2;
        in = rect(PAD, top, half, heat_h);
        out = rect(2 * PAD + half, top, w - 3 * PAD - half, heat_h);
    } else {
        int half = (heat_h - PAD) / 2;
        in = rect(PAD, top, w - 2 * PAD, half);
        out = rect(PAD, top + half + PAD, w - 2 * PAD, heat_h - half - PAD);
    }
    heat_panel(in, line, &L->input, &L->input_legend);
    heat_panel(out, line, &L->output, &L->output_legend);
    int ty = top + heat_h + PAD;
    int dw = vw_layout_decomp_width(w, story_lines > 0);
    L->decomp = rect(PAD, ty, dw, bottom - ty);
    L->grid = rect(2 * PAD + dw, ty, w - 3 * PAD - dw, bottom - ty);
}

/* --- slides (issue 38 D1): pictures first, each part as tall as this slide's text --- */

int vw_band_cols(vw_rect band, int advance) { return (band.w - 16) / (advance > 0 ? advance : 8); }

int vw_band_rows(vw_rect band, int line) { return (band.h - 8) / (line > 0 ? line : 16); }

static int clamp_column(int w, int column_w)
{
    if (column_w < w / 5) column_w = w / 5;
    if (column_w > w * 3 / 5) column_w = w * 3 / 5;
    return column_w;
}

void vw_slide_widths(int w, const vw_slide_geom *g, int *band_w, int *decomp_w)
{
    if (w < VW_MIN_W) w = VW_MIN_W;
    const int cw = clamp_column(w, g->column_w);
    switch (g->arrangement) {
    case VW_ARR_SIDE:
        *band_w = w - 3 * PAD - cw;
        *decomp_w = cw;
        break;
    case VW_ARR_RIGHT: *band_w = *decomp_w = cw; break;
    case VW_ARR_COLUMN:
        *band_w = cw;
        *decomp_w = g->grid_lines > 0 ? (w - 4 * PAD - cw) * 2 / 3 : w - 3 * PAD - cw;
        break;
    default:
        *band_w = w - 2 * PAD;
        *decomp_w = g->grid_lines > 0 ? vw_layout_decomp_width(w, 1) : w - 2 * PAD;
        break;
    }
}

void vw_value_metrics(vw_layout *L, int advance, int line)
{
    if (L->vadv <= 0) L->vadv = (advance * 3 + 2) / 5 > 0 ? (advance * 3 + 2) / 5 : 1;
    if (L->vline <= 0) L->vline = (line * 3 + 2) / 5 > 0 ? (line * 3 + 2) / 5 : 1;
}

/* A slide's heatmap panel: the map on top, a legend of one line (the colour bar between
 * its two ends) below; or (top) the legend on the header line and the map to the bottom. */
static void slide_heat_panel(vw_rect r, int line, int top, vw_rect *map, vw_rect *legend)
{
    int lh = line + 2;
    *map = top ? r : rect(r.x, r.y, r.w, r.h - lh - 2);
    *legend = top ? rect(r.x, r.y + 2, r.w, line) : rect(r.x, r.y + r.h - lh, r.w, lh);
}

void vw_layout_slide(vw_layout *L, int w, int h, int line, const vw_slide_geom *g)
{
    if (w < VW_MIN_W) w = VW_MIN_W;
    if (h < VW_MIN_H) h = VW_MIN_H;
    int tl = g->title_lines < 1 ? 1 : g->title_lines > 3 ? 3 : g->title_lines;
    const int cw = clamp_column(w, g->column_w);
    L->w = w;
    L->h = h;
    L->line = line;
    L->title_lines = tl;
    L->arrangement = g->arrangement >= VW_ARR_STACKED && g->arrangement <= VW_ARR_COLUMN ? g->arrangement
                                                                                         : VW_ARR_STACKED;
    L->vadv = L->vline = 0;
    const int bar = line + 6;
    L->title = rect(0, 0, w, tl * line + 6);
    L->status = rect(0, h - bar, w, bar);
    /* a slide's timeline is a thin bar: the slides step through the trace, not along it
     * (the pictures take the room: issue 38 D1) */
    L->timeline = rect(PAD, L->status.y - 7, w - 2 * PAD, 4);
    const int top = L->title.h + PAD, bottom = L->timeline.y - 3;
    const int band_h = (g->band_lines > 0 ? g->band_lines : 1) * line + 8;
    const int decomp_h = g->decomp_lines > 0 ? g->decomp_lines * line + 6 : 0;
    const int grid_h = g->grid_lines > 0 ? g->grid_lines * line + 12 : 0;
    vw_rect maps;
    if (L->arrangement == VW_ARR_RIGHT) {
        const int mw = w - 3 * PAD - cw, cx = w - PAD - cw;
        maps = rect(PAD, top, mw, bottom - top);
        L->story = rect(cx, top, cw, band_h);
        int y = top + band_h + PAD;
        L->decomp = rect(cx, y, cw, decomp_h);
        y += decomp_h + PAD;
        /* the grid below when it fits; else the decomposition takes what is left */
        if (grid_h > 0 && bottom - y >= grid_h) L->grid = rect(cx, y, cw, bottom - y);
        else {
            L->grid = rect(cx, bottom, cw, 0);
            L->decomp.h = bottom - L->decomp.y;
        }
    } else if (L->arrangement == VW_ARR_COLUMN) {
        const int lw = w - 3 * PAD - cw, cx = w - PAD - cw;
        L->story = rect(cx, top, cw, bottom - top);
        const int row_h = decomp_h > grid_h ? decomp_h : grid_h, y = bottom - row_h;
        const int dw = grid_h ? (lw - PAD) * 2 / 3 : lw;
        L->decomp = rect(PAD, y, dw, row_h);
        L->grid = grid_h ? rect(2 * PAD + dw, y, lw - PAD - dw, row_h) : rect(PAD + dw, y, 0, 0);
        maps = rect(PAD, top, lw, (row_h ? y - PAD : bottom) - top);
    } else if (L->arrangement == VW_ARR_SIDE) {
        const int col_h = decomp_h + (grid_h ? PAD + grid_h : 0), row_h = band_h > col_h ? band_h : col_h;
        const int y = bottom - row_h, cx = w - PAD - cw;
        L->story = rect(PAD, y, w - 3 * PAD - cw, row_h);
        L->decomp = rect(cx, y, cw, grid_h ? row_h - grid_h - PAD : row_h);
        L->grid = grid_h ? rect(cx, y + row_h - grid_h, cw, grid_h) : rect(cx, bottom, cw, 0);
        maps = rect(PAD, top, w - 2 * PAD, y - PAD - top);
    } else {
        L->story = rect(PAD, bottom - band_h, w - 2 * PAD, band_h);
        const int row_h = decomp_h > grid_h ? decomp_h : grid_h, y = L->story.y - PAD - row_h;
        const int dw = grid_h ? vw_layout_decomp_width(w, 1) : w - 2 * PAD;
        L->decomp = rect(PAD, y, dw, row_h);
        L->grid = grid_h ? rect(2 * PAD + dw, y, w - 3 * PAD - dw, row_h) : rect(PAD + dw, y, 0, 0);
        maps = rect(PAD, top, w - 2 * PAD, (row_h ? y : L->story.y) - PAD - top);
    }
    if (maps.h < 2 * line + 8) maps.h = 2 * line + 8; /* never negative: a header and a row */
    /* the two pictures side by side, split where the slide says (a wide input beside tall
     * columns: issue 38 D1), each at least a fifth */
    int split = g->split > 0 ? g->split : 500;
    split = split < 200 ? 200 : split > 800 ? 800 : split;
    const int half = (int)((int64_t)(maps.w - PAD) * split / 1000);
    L->legend_top = g->legend_top & 3;
    L->header_two = 0;
    slide_heat_panel(rect(maps.x, maps.y, half, maps.h), line, L->legend_top & 1, &L->input, &L->input_legend);
    slide_heat_panel(rect(maps.x + half + PAD, maps.y, maps.w - half - PAD, maps.h), line, L->legend_top & 2,
                     &L->output, &L->output_legend);
}

int vw_grid_need(int64_t rows, int64_t cols, const int side[4], double row_h, int w, int h, int line)
{
    /* the share less the panel's header line (vw_panel_map_area): the picture, header and
     * grid, takes VW_SLIDE_PICTURE % of the frame's height, measured literally (issue 38 D1) */
    const int share = (VW_SLIDE_PICTURE * h + 99) / 100 - vw_panel_header_h(line);
    if (rows < 1 || cols < 1) return 0;
    if (row_h > 0) { /* a table: its rows at the text it prints, header included */
        const double all = (double)rows * row_h;
        return all < share ? (int)all : share;
    }
    /* half the frame less the pads and the map's 8 px a side: the widest a panel of two is */
    const double half = (w - 3 * PAD) / 2.0 - 16;
    const int64_t across = cols + (side ? side[VW_SIDE_LEFT] + side[VW_SIDE_RIGHT] : 0);
    const int64_t down = rows + (side ? side[VW_SIDE_TOP] + side[VW_SIDE_BOTTOM] : 0);
    double cell = half / (double)across;
    if (cell >= 2) cell = floor(cell);
    const double tall = cell * (double)down;
    /* the share itself, not a whole number of cells a pixel or more short of it */
    return tall < share ? (int)floor(tall) - 2 : share;
}

int vw_strip_height(int line)
{
    /* two text lines, lanes 3/5 of a line tall (12 px at least), 16 px of links, the
     * 12 px axis, its address line (issue 38 D1: 10 step 2's strip was 35 px of lanes
     * under a title cut short) */
    const int lanes = line * 3 / 5 > 12 ? line * 3 / 5 : 12;
    return 2 * line + 6 + lanes + 16 + 12 + line + 6;
}

vw_rect vw_strip_area(vw_rect *decomp, int line)
{
    int h = vw_strip_height(line);
    if (h > decomp->h * 2 / 3) h = decomp->h * 2 / 3;
    vw_rect strip = rect(decomp->x, decomp->y + decomp->h - h, decomp->w, h);
    decomp->h -= h + 4;
    if (decomp->h < 0) decomp->h = 0;
    return strip;
}

void vw_heatmap_set_sides(vw_heatmap *m, const int side[4])
{
    m->margin = 0;
    for (int k = 0; k < 4; ++k) {
        m->side[k] = side ? side[k] : 0;
        if (m->side[k] > m->margin) m->margin = m->side[k];
    }
}

int vw_heatmap_holds(const vw_heatmap *m, int64_t y, int64_t x)
{
    return y >= -m->side[VW_SIDE_TOP] && y < m->rows + m->side[VW_SIDE_BOTTOM] && x >= -m->side[VW_SIDE_LEFT] &&
           x < m->cols + m->side[VW_SIDE_RIGHT];
}

vw_heatmap vw_heatmap_fit(vw_rect area, int64_t rows, int64_t cols, int margin)
{
    const int side[4] = {margin, margin, margin, margin};
    return vw_heatmap_fit_sides(area, rows, cols, side);
}

vw_heatmap vw_heatmap_fit_sides(vw_rect area, int64_t rows, int64_t cols, const int side[4])
{
    vw_heatmap m;
    if (rows < 1) rows = 1;
    if (cols < 1) cols = 1;
    m.rows = rows;
    m.cols = cols;
    m.axes = 0;
    vw_heatmap_set_sides(&m, side);
    const int64_t across = cols + m.side[VW_SIDE_LEFT] + m.side[VW_SIDE_RIGHT];
    const int64_t down = rows + m.side[VW_SIDE_TOP] + m.side[VW_SIDE_BOTTOM];
    double sx = (double)area.w / (double)across;
    double sy = (double)area.h / (double)down;
    m.cell = sx < sy ? sx : sy;
    /* whole pixels when cells are big, so every cell of a small plane has the same size */
    if (m.cell >= 2) m.cell = floor(m.cell);
    /* centred, with the margin inside the area: cells may be fractional, offsets whole */
    double span_w = m.cell * (double)across, span_h = m.cell * (double)down;
    double slack_w = area.w - span_w, slack_h = area.h - span_h; /* >= 0 but for rounding */
    m.ox = area.x + m.side[VW_SIDE_LEFT] * m.cell + (slack_w > 0 ? floor(slack_w / 2) : 0);
    m.oy = area.y + m.side[VW_SIDE_TOP] * m.cell + (slack_h > 0 ? floor(slack_h / 2) : 0);
    return m;
}

vw_rect vw_bars_area(vw_rect area, const vw_heatmap *m, int line)
{
    const int top = area.y + 2 * line + 6, bottom = (int)floor(m->oy - m->side[VW_SIDE_TOP] * m->cell) - 3;
    return (vw_rect){.x = area.x, .y = top, .w = area.w, .h = bottom - top};
}

/* A pixel coordinate as an int: NaN and values past +-1e9 (a crafted event's coordinate)
 * become a pixel far off screen, never an out-of-range conversion. */
static int to_px(double v)
{
    if (!(v > -1e9)) return -1000000000;
    if (v > 1e9) return 1000000000;
    return (int)floor(v);
}

static int px_of(double o, double cell, int64_t i)
{
    return to_px(o + cell * (double)i + 1e-9); /* 1e-9: o - m*cell + m*cell rounds low */
}

vw_rect vw_heatmap_cell(const vw_heatmap *m, int64_t y, int64_t x)
{
    int x0 = px_of(m->ox, m->cell, x), x1 = px_of(m->ox, m->cell, x + 1);
    int y0 = px_of(m->oy, m->cell, y), y1 = px_of(m->oy, m->cell, y + 1);
    /* a cell smaller than a pixel still shows as one pixel */
    return rect(x0, y0, x1 > x0 ? x1 - x0 : 1, y1 > y0 ? y1 - y0 : 1);
}

void vw_heatmap_point(const vw_heatmap *m, double fy, double fx, int *px, int *py)
{
    *px = to_px(m->ox + (fx + 0.5) * m->cell);
    *py = to_px(m->oy + (fy + 0.5) * m->cell);
}

/* The cell along one axis whose [px_of(i), px_of(i + 1)) holds p, or -1. */
static int64_t axis_hit(double o, double cell, int64_t n, int p)
{
    int end = px_of(o, cell, n), last = px_of(o, cell, n - 1);
    if (end <= last) end = last + 1; /* sub-pixel cells: the last ones still own a pixel */
    if (p < px_of(o, cell, 0) || p >= end) return -1;
    double f = floor(((double)p - o) / cell);
    int64_t i = f < 0 ? 0 : f >= (double)n ? n - 1 : (int64_t)f;
    while (i + 1 < n && px_of(o, cell, i + 1) <= p) ++i;
    while (i > 0 && px_of(o, cell, i) > p) --i;
    return i;
}

int vw_heatmap_hit(const vw_heatmap *m, int px, int py, int64_t *y, int64_t *x)
{
    if (m->cell <= 0) return 0;
    int64_t cx = axis_hit(m->ox, m->cell, m->cols, px), cy = axis_hit(m->oy, m->cell, m->rows, py);
    if (cx < 0 || cy < 0) return 0;
    *x = cx;
    *y = cy;
    return 1;
}

vw_grid vw_grid_fit(vw_rect area, int64_t blocks, int64_t threads)
{
    vw_grid g;
    g.area = area;
    g.blocks = blocks > 0 ? blocks : 1;
    g.threads = threads > 0 ? threads : 1;
    /* at least 2 px per thread column and 6 px per block row, when there is room */
    int64_t maxc = area.w / 2 > 0 ? area.w / 2 : 1, maxr = area.h / 6 > 0 ? area.h / 6 : 1;
    g.tg = (g.threads + maxc - 1) / maxc;
    g.bg = (g.blocks + maxr - 1) / maxr;
    g.cols = (g.threads + g.tg - 1) / g.tg;
    g.rows = (g.blocks + g.bg - 1) / g.bg;
    g.cw = (double)area.w / (double)g.cols;
    g.ch = (double)area.h / (double)g.rows;
    if (g.ch > 24) g.ch = 24;
    return g;
}

vw_rect vw_grid_cell(const vw_grid *g, int64_t row, int64_t col)
{
    int x0 = px_of(g->area.x, g->cw, col), x1 = px_of(g->area.x, g->cw, col + 1);
    int y0 = px_of(g->area.y, g->ch, row), y1 = px_of(g->area.y, g->ch, row + 1);
    return rect(x0, y0, x1 > x0 ? x1 - x0 : 1, y1 > y0 ? y1 - y0 : 1);
}

int vw_grid_hit(const vw_grid *g, int px, int py, int64_t *block, int64_t *thread)
{
    int64_t col = axis_hit(g->area.x, g->cw, g->cols, px), row = axis_hit(g->area.y, g->ch, g->rows, py);
    if (col < 0 || row < 0) return 0;
    *block = row * g->bg;
    *thread = col * g->tg;
    return 1;
}

int vw_timeline_x(vw_rect r, uint64_t n, uint64_t pos)
{
    if (n <= 1) return r.x;
    return r.x + (int)((double)pos / (double)(n - 1) * (r.w - 1) + 0.5);
}

uint64_t vw_timeline_pos(vw_rect r, uint64_t n, int x)
{
    if (n <= 1 || x <= r.x) return 0;
    if (x >= r.x + r.w - 1) return n - 1;
    return (uint64_t)((double)(x - r.x) / (r.w - 1) * (double)(n - 1) + 0.5);
}

vw_rect vw_progress_bar(vw_rect r, int permille)
{
    const int h = r.h < 3 ? r.h : 3;
    if (permille < 0) permille = 0;
    const int w = permille >= 1000 ? 0 : (int)((int64_t)r.w * permille / 1000);
    return (vw_rect){.x = r.x, .y = r.y + r.h - h, .w = w, .h = h};
}
