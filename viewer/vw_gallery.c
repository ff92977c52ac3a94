/* vw_gallery.c - the conv_arithmetic gallery's frames (see vw_gallery.h): the viewer's
 * heatmaps and overlays (vw_draw_heatmap, vw_draw_overlays) in a layout of their own,
 * the window's box on top, on the headless software renderer `kscope view` uses; PNG
 * through vw_save_png, the GIF through vw_gif. */
#define _POSIX_C_SOURCE 200809L
#include "vw_gallery.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "vw_draw_int.h"
#ifdef KS_HAVE_GIF
#include "vw_gif.h"
#endif

static const vw_gallery_anim anims[] = {
    {"no_padding_no_strides", "No padding, no strides", 0, 4, 3, 0, 1, 1},
    {"arbitrary_padding_no_strides", "Arbitrary padding, no strides", 0, 5, 4, 2, 1, 1},
    {"same_padding_no_strides", "Half (same) padding, no strides", 0, 5, 3, 1, 1, 1},
    {"full_padding_no_strides", "Full padding, no strides", 0, 5, 3, 2, 1, 1},
    {"no_padding_strides", "No padding, strides", 0, 5, 3, 0, 2, 1},
    {"padding_strides", "Padding, strides", 0, 5, 3, 1, 2, 1},
    {"padding_strides_odd", "Padding, strides (odd)", 0, 6, 3, 1, 2, 1},
    {"dilation", "Dilation", 0, 7, 3, 0, 1, 2},
    {"no_padding_no_strides_transposed", "No padding, no strides, transposed", 1, 4, 3, 0, 1, 1},
    {"arbitrary_padding_no_strides_transposed", "Arbitrary padding, no strides, transposed", 1, 5, 4, 2, 1, 1},
    {"same_padding_no_strides_transposed", "Half (same) padding, no strides, transposed", 1, 5, 3, 1, 1, 1},
    {"full_padding_no_strides_transposed", "Full padding, no strides, transposed", 1, 5, 3, 2, 1, 1},
    {"no_padding_strides_transposed", "No padding, strides, transposed", 1, 5, 3, 0, 2, 1},
    {"padding_strides_transposed", "Padding, strides, transposed", 1, 5, 3, 1, 2, 1},
    {"padding_strides_odd_transposed", "Padding, strides (odd), transposed", 1, 6, 3, 1, 2, 1},
    {"dilation_transposed", "Dilation, transposed", 1, 7, 3, 0, 1, 2},
};

const vw_gallery_anim *vw_gallery_list(int *n)
{
    *n = (int)(sizeof anims / sizeof anims[0]);
    return anims;
}

int vw_gallery_out_size(const vw_gallery_anim *a) { return (a->i + 2 * a->p - a->d * (a->k - 1) - 1) / a->s + 1; }

#define MAX_CELLS 64 /* a window's cells: k*k, k <= 8 */

typedef struct gcell {
    int32_t y, x;
    int pad; /* outside the plane: a padding tap */
} gcell;

/* One frame: one window position, read from the trace. */
typedef struct gframe {
    int64_t key;        /* the order of the frames: the column q */
    uint32_t focus;     /* the event the viewer focuses: the (first) item's work event */
    int qy, qx;         /* conv: the output cell; transposed: the input cell of x */
    int col;            /* the column of `columns` (q = qy * o + qx) */
    int y0, x0, y1, x1; /* the window's extent on its panel */
    int n;
    gcell cells[MAX_CELLS];
} gframe;

static int find_tensor(const ks_trace *tr, const char *name)
{
    for (int t = 0; t < tr->ntensors; ++t)
        if (!strcmp(tr->tensors[t].name, name)) return t;
    return -1;
}

static void add_cell(gframe *f, int32_t y, int32_t x, int pad)
{
    for (int c = 0; c < f->n; ++c)
        if (f->cells[c].y == y && f->cells[c].x == x) return;
    if (f->n >= MAX_CELLS) return;
    f->cells[f->n++] = (gcell){.y = y, .x = x, .pad = pad};
    if (f->n == 1 || y < f->y0) f->y0 = y;
    if (f->n == 1 || x < f->x0) f->x0 = x;
    if (f->n == 1 || y > f->y1) f->y1 = y;
    if (f->n == 1 || x > f->x1) f->x1 = x;
}

static int by_key(const void *a, const void *b)
{
    const int64_t ka = ((const gframe *)a)->key, kb = ((const gframe *)b)->key;
    return ka < kb ? -1 : ka > kb;
}

/* The frames of the trace: a convolution's im2col items, or a transpose's col2im
 * scatter items grouped by their column. */
static int read_frames(const ks_trace *tr, const vw_index *idx, const vw_gallery_anim *a, int t_win, int t_cols,
                       gframe **out, int *nout)
{
    const int o = vw_gallery_out_size(a);
    const int nf = o * o;
    gframe *f = calloc((size_t)nf, sizeof *f);
    if (!f) return ks_fail(KS_ENOMEM, "out of memory for the gallery's frames");
    for (int q = 0; q < nf; ++q) f[q].focus = VW_NONE, f[q].key = q;
    const ks_tensor *win = &tr->tensors[t_win];
    const int64_t H = win->shape[win->ndim - 2], W = win->shape[win->ndim - 1];
    for (uint32_t it = 0; it < idx->nitems; ++it) {
        const vw_item *item = &idx->items[it];
        const ks_event *w = vw_event(tr, vw_item_ev(idx, item, 0));
        if (w->kind != KS_EV_WORK) continue;
        /* im2col: (n, c_im, h_col, w_col); col2im scatter: (n, c_col, h_col, w_col, h, w) */
        const int hc = w->u.field[2], wc = w->u.field[3];
        if (hc < 0 || hc >= o || wc < 0 || wc >= o) return free(f), ks_fail(KS_EINVAL, "gallery: a window outside");
        gframe *g = &f[hc * o + wc];
        if (g->focus == VW_NONE) g->focus = vw_item_ev(idx, item, 0);
        g->qy = hc, g->qx = wc, g->col = hc * o + wc;
        if (a->transposed)
            add_cell(g, w->u.field[4], w->u.field[5],
                     !(w->u.field[4] >= 0 && w->u.field[4] < H && w->u.field[5] >= 0 && w->u.field[5] < W));
        for (uint32_t k = 1; k < item->count && !a->transposed; ++k) {
            const ks_event *e = vw_event(tr, vw_item_ev(idx, item, k));
            if (e->kind == KS_EV_READ && e->tensor == t_win)
                add_cell(g, e->u.access.y, e->u.access.x, (e->flags & KS_FLAG_PADDING) != 0);
            if (e->kind == KS_EV_WRITE && e->tensor == t_cols) g->col = e->u.access.x;
        }
    }
    for (int q = 0; q < nf; ++q)
        if (f[q].focus == VW_NONE || !f[q].n)
            return free(f), ks_fail(KS_EINVAL, "gallery: %s: the trace has no window for position %d", a->name, q);
    qsort(f, (size_t)nf, sizeof *f, by_key);
    *out = f;
    *nout = nf;
    return KS_OK;
}

/* The frame's panels: 0 below (the input side), 1 above (the output side) and, drawn
 * through panel 1 first, the columns beside them. */
typedef struct glayout {
    vw_rect title, below, below_lg, above, above_lg, cols, cols_lg;
} glayout;

static void split_legend(vw_rect r, int line, vw_rect *panel, vw_rect *legend)
{
    const int lh = line + 16;
    *panel = (vw_rect){.x = r.x, .y = r.y, .w = r.w, .h = r.h - lh};
    *legend = (vw_rect){.x = r.x + 4, .y = r.y + r.h - lh + 2, .w = r.w - 8, .h = lh - 2};
}

static glayout make_layout(int w, int h, int line, int rows_above, int rows_below)
{
    glayout g;
    g.title = (vw_rect){.x = 0, .y = 0, .w = w, .h = 3 * line + 10};
    const int top = g.title.h + 8, bh = h - top - 8, lw = w * 56 / 100;
    /* the two planes share the height by their rows (with their margins) */
    double f = (double)rows_above / (rows_above + rows_below);
    f = f < 0.3 ? 0.3 : f > 0.6 ? 0.6 : f;
    const int extra = 2 * (line + 4 + line + 16); /* headers and legends */
    const int ah = (int)((bh - extra - 8) * f) + line + 4 + line + 16;
    split_legend((vw_rect){.x = 8, .y = top, .w = lw - 16, .h = ah}, line, &g.above, &g.above_lg);
    split_legend((vw_rect){.x = 8, .y = top + ah + 8, .w = lw - 16, .h = bh - ah - 8}, line, &g.below, &g.below_lg);
    split_legend((vw_rect){.x = lw, .y = top, .w = w - lw - 8, .h = bh}, line, &g.cols, &g.cols_lg);
    return g;
}

/* Points panel p of the state at tensor t in rect r (its legend lg). */
static void show(vw_state *s, vw_layout *L, int p, int t, vw_rect r, vw_rect lg)
{
    s->panel[p].tensor = t;
    s->panel[p].plane = 0;
    s->panel[p].mode = -1;
    s->panel[p].zoom = 0;
    if (p) L->output = r, L->output_legend = lg;
    else L->input = r, L->input_legend = lg;
}

/* The box around cells [y0, y1] x [x0, x1] of map m, VW_GALLERY_BOX pixels outside them. */
static vw_rect box_of(const vw_heatmap *m, int y0, int x0, int y1, int x1)
{
    const vw_rect a = vw_heatmap_cell(m, y0, x0), b = vw_heatmap_cell(m, y1, x1);
    return (vw_rect){.x = a.x, .y = a.y, .w = b.x + b.w - a.x, .h = b.y + b.h - a.y};
}

static void draw_box(SDL_Renderer *r, vw_rect box)
{
    vw_outline(r, box, VW_GALLERY_WINDOW, VW_GALLERY_BOX, VW_GALLERY_BOX);
}

/* The window's cells on map m (white, padding green with its 0, as the viewer draws an
 * item's reads) and its box; returns the box. */
static vw_rect draw_window(vw_draw *d, const vw_heatmap *m, const gframe *f)
{
    for (int c = 0; c < f->n; ++c) {
        const vw_rect cell = vw_heatmap_cell(m, f->cells[c].y, f->cells[c].x);
        vw_outline(d->r, cell, f->cells[c].pad ? VW_COL_PADDING : VW_COL_ITEM, m->cell >= 12 ? 2 : 1, 0);
    }
    const vw_rect box = box_of(m, f->y0, f->x0, f->y1, f->x1);
    draw_box(d->r, box);
    return box;
}

/* The columns panel zoomed in (the viewer's own zoom, around column col) when the
 * viewer's view of the whole matrix leaves its cells under `need` pixels, too small to
 * print their values: all the matrix's rows (issue 38 N13: k = 4's 16 rows at 56 px
 * drew rows 1..14, the outlined column without its first and last cell) and its column
 * box, as many whole columns as fill the panel's width (the state's whole_cells leaves
 * out one the edge still cuts: issue 38 D12, the last column at half its width in
 * padding_strides and dilation_transposed at 1920x1080). */
static void zoom_columns(vw_state *s, const vw_layout *L, const ks_tensor *cols, int col, double need)
{
    const vw_rect area = vw_panel_map_area(L, 1);
    const double rows = (double)cols->shape[cols->ndim - 2], ncols = (double)cols->shape[cols->ndim - 1];
    const vw_heatmap m = vw_panel_map(s, L, 1);
    const double room = 2.0 * VW_GALLERY_BOX + 2; /* the column's box, outside its cells */
    double want = fmin((area.h - room) / rows, area.w / 6.0);
    if (m.cell <= 0) return;
    if (m.cell >= need || want <= m.cell * 1.01) {
        /* the whole matrix prints its values: at a cell that leaves room for the column's
         * box, and the column numbers over it clear of it (issue 38 N14) */
        want = floor(fmin((area.h - room) / rows, (area.w - room) / ncols));
        if (want >= m.cell) return;
        s->panel[1].cx = (ncols - 1) / 2;
    } else {
        want = floor(area.w / ceil(area.w / want - 1e-9)); /* whole columns across the width */
        s->panel[1].cx = col;
    }
    s->panel[1].zoom = want / m.cell;
    s->panel[1].cy = (rows - 1) / 2;
    /* the map zooms its own cell, not the whole pixels of m's: no bigger than asked */
    for (int i = 0; i < 32 && vw_panel_map(s, L, 1).cell > want; ++i) s->panel[1].zoom *= 0.995;
}

typedef struct gctx {
    const ks_trace *tr;
    const vw_gallery_anim *a;
    int o, t_below, t_above, t_cols;
    vw_state s;
    vw_layout L;
    glayout G;
    vw_draw d;
    char lines[3][256];
    char head[256];  /* the columns panel's header as drawn */
    char nums[2048]; /* its column numbers as drawn: "n:x:y:w:h" each, commas between */
} gctx;

/* The numbers of the columns drawn (cells, whole ones, on map m) over them, in the line
 * the layout leaves under the panel's header, at the cells' value size; the frame's
 * column in the header's colour (issue 38 N14: a window of 9 of 49 columns said which
 * only in the title's "column 30"). Recorded in c->nums for frames.tsv. */
static void column_numbers(gctx *c, const vw_heatmap *m, vw_rect cells, int col)
{
    const vw_rec_panel *rp = &c->d.rec.panel[1];
    const vw_font *f = vw_value_font(&c->d, rp->value_font > 0 ? rp->value_font : 0);
    const int line = c->d.font.line, y = vw_panel_map_area(&c->L, 1).y - line + (line - f->line) / 2;
    const long x0 = lround((cells.x - m->ox) / m->cell), x1 = lround((cells.x + cells.w - m->ox) / m->cell);
    size_t used = 0;
    c->nums[0] = 0;
    for (long x = x0; x < x1 && m->cell > 0; ++x) {
        char num[24];
        snprintf(num, sizeof num, "%ld", x);
        const vw_rect cell = vw_heatmap_cell(m, 0, x);
        const int w = (int)strlen(num) * f->advance, tx = cell.x + (cell.w - w) / 2;
        vw_text(f, c->d.r, tx, y, x == col ? VW_COL_HEAD : VW_COL_DIM, 0, num);
        const int k = snprintf(c->nums + used, sizeof c->nums - used, "%s%ld:%d:%d:%d:%d", used ? "," : "", x, tx, y, w,
                               f->line);
        if (k < 0 || (size_t)k >= sizeof c->nums - used) break;
        used += (size_t)k;
    }
}

/* Draws frame k of n; *win_box: the window's box, *map the window panel's map; *cols the
 * columns matrix's cells as drawn (whole ones) on *cols_map. */
static void draw_frame(gctx *c, const gframe *f, int k, int n, vw_rect *win_box, vw_heatmap *win_map, vw_rect *area,
                       vw_rect *cols, vw_heatmap *cols_map)
{
    const vw_gallery_anim *a = c->a;
    vw_state *s = &c->s;
    vw_layout *L = &c->L;
    SDL_Renderer *r = c->d.r;
    vw_focus_event(s, f->focus);
    vw_color(r, VW_COL_BG);
    SDL_RenderClear(r);
    vw_fill(r, c->G.title, 0x2A2A40);
    if (a->transposed)
        snprintf(c->lines[2], sizeof c->lines[2],
                 "frame %d of %d: input x(%d, %d) = column %d, spread onto output rows %d..%d, columns %d..%d", k + 1,
                 n, f->qy, f->qx, f->col, f->y0, f->y1, f->x0, f->x1);
    else
        snprintf(c->lines[2], sizeof c->lines[2],
                 "frame %d of %d: window rows %d..%d, columns %d..%d -> column %d -> output (%d, %d)", k + 1, n, f->y0,
                 f->y1, f->x0, f->x1, f->col, f->qy, f->qx);
    for (int i = 0; i < 3; ++i)
        vw_text(&c->d.font, r, c->G.title.x + 8, c->G.title.y + 4 + i * c->d.font.line,
                i == 0 ? VW_COL_HEAD : VW_COL_TEXT, c->G.title.w - 16, c->lines[i]);
    /* below: the input (conv) or x (transposed) */
    show(s, L, 0, c->t_below, c->G.below, c->G.below_lg);
    /* beside: the columns, zoomed to the frame's column when its values would not fit */
    show(s, L, 1, c->t_cols, c->G.cols, c->G.cols_lg);
    L->header_two = 1 << 1; /* a line under the header for the column numbers */
    zoom_columns(s, L, &c->tr->tensors[c->t_cols], f->col, 4.0 * c->d.font.advance);
    memset(&c->d.rec, 0, sizeof c->d.rec);
    vw_draw_heatmap(&c->d, s, L, 1);
    vw_draw_overlays(&c->d, s, L, 1);
    vw_heatmap m = vw_panel_map(s, L, 1);
    vw_rect clip = vw_panel_map_area(L, 1);
    *cols = c->d.rec.panel[1].extent, *cols_map = m; /* whole columns (whole_cells) */
    snprintf(c->head, sizeof c->head, "%s", c->d.rec.panel[1].head);
    column_numbers(c, &m, *cols, f->col);
    SDL_Rect sc = vw_sdl(clip);
    SDL_RenderSetClipRect(r, &sc);
    for (int t = 0; t < a->k * a->k; ++t)
        vw_outline(r, vw_heatmap_cell(&m, t, f->col), VW_COL_ITEM, m.cell >= 12 ? 2 : 1, 0);
    draw_box(r, box_of(&m, 0, f->col, a->k * a->k - 1, f->col));
    SDL_RenderSetClipRect(r, NULL);
    const vw_rect cols_area = clip;
    L->header_two = 0;
    /* above: the output; then below */
    show(s, L, 1, c->t_above, c->G.above, c->G.above_lg);
    for (int p = 1; p >= 0; --p) {
        vw_draw_heatmap(&c->d, s, L, p);
        vw_draw_overlays(&c->d, s, L, p);
        m = vw_panel_map(s, L, p);
        const int window = a->transposed ? p == 1 : p == 0;
        if (window) {
            *win_box = draw_window(&c->d, &m, f);
            *win_map = m;
            *area = vw_panel_map_area(L, p);
        } else {
            draw_box(r, box_of(&m, f->qy, f->qx, f->qy, f->qx));
        }
    }
    /* the window's box to its column: where the window's values go (come from), along the
     * grid line between two rows nearest its middle, clear of the numbers right of the
     * window (issue 38, thirteenth re-trial: the arrow struck through "19 - 20") */
    const double wc = win_map->cell > 0 ? win_map->cell : 1;
    const int mid = win_box->y + win_box->h / 2, ax = win_box->x + win_box->w + VW_GALLERY_BOX;
    const int ay = (int)lround(win_map->oy + floor((mid - win_map->oy) / wc + 0.5) * wc);
    if (ax < cols_area.x) vw_draw_arrow(r, ax + 4, ay, cols_area.x - 6, ay, VW_COL_DIM);
    SDL_RenderPresent(r);
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return ks_fail(KS_EIO, "cannot create the folder %s", dir);
    return KS_OK;
}

int vw_gallery_render(const ks_trace *tr, const vw_gallery_anim *a, const vw_gallery_opts *o, int *frames)
{
    static gctx c; /* large: off the stack */
    vw_index idx;
    gframe *f = NULL;
    int nf = 0, rc;
    *frames = 0;
    memset(&c, 0, sizeof c);
    c.tr = tr, c.a = a, c.o = vw_gallery_out_size(a);
    c.t_below = find_tensor(tr, a->transposed ? "x" : "input");
    c.t_above = find_tensor(tr, "output");
    c.t_cols = find_tensor(tr, "columns");
    if (c.t_below < 0 || c.t_above < 0 || c.t_cols < 0)
        return ks_fail(KS_EINVAL, "gallery: %s: the trace lacks its input, output or columns", a->name);
    if ((rc = vw_index_build(&idx, tr, NULL))) return rc;
    /* a transpose's window reaches as far outside the output as the padding */
    const int t_win = a->transposed ? c.t_above : c.t_below;
    if (a->transposed && idx.margin[t_win] < a->p) idx.margin[t_win] = a->p < 4 ? a->p : 4;
    if ((rc = read_frames(tr, &idx, a, t_win, c.t_cols, &f, &nf))) goto out_index;
    char path[4400], sub[4200];
    snprintf(sub, sizeof sub, "%.4000s/%.100s", o->dir, a->name);
    if ((rc = make_dir(sub))) goto out_frames;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, o->width, o->height, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!r) {
        rc = ks_fail(KS_ENOMEM, "cannot create a %dx%d frame: %s", o->width, o->height, SDL_GetError());
        goto out_surf;
    }
    /* text a little under the viewer's default (24 px at 1080p), so that three digits
     * fit the output's cells */
    if (vw_draw_init(&c.d, r, o->text_size > 0 ? o->text_size : vw_text_px(o->width, o->height) * 4 / 5)) {
        rc = KS_EIO;
        goto out_renderer;
    }
    vw_state_init(&c.s, tr, &idx);
    c.s.follow = 0;
    c.s.whole_cells = 1;
    c.L.w = o->width, c.L.h = o->height, c.L.line = c.d.font.line;
    const int margin = a->p < 4 ? a->p : 4, rows_win = a->i + 2 * margin;
    c.G = a->transposed ? make_layout(o->width, o->height, c.d.font.line, rows_win, c.o)
                        : make_layout(o->width, o->height, c.d.font.line, c.o, rows_win);
    const int ext = a->d * (a->k - 1) + 1;
    snprintf(c.lines[0], sizeof c.lines[0], "%s  (%s%s, traced on the simulator)", a->title,
             a->transposed ? "col2im" : "im2col", a->transposed ? " of a regular im2col's columns" : " of conv2d");
    if (a->transposed)
        snprintf(c.lines[1], sizeof c.lines[1],
                 "x %dx%d -> output %dx%d: k=%d s=%d p=%d d=%d, the convolution %dx%d -> %dx%d run backwards", c.o, c.o,
                 a->i, a->i, a->k, a->s, a->p, a->d, a->i, a->i, c.o, c.o);
    else
        snprintf(c.lines[1], sizeof c.lines[1],
                 "i=%d k=%d s=%d p=%d d=%d: o = floor((%d + 2*%d - %d - 1) / %d) + 1 = %d", a->i, a->k, a->s, a->p,
                 a->d, a->i, a->p, ext - 1, a->s, c.o);
#ifdef KS_HAVE_GIF
    vw_gif *gif = NULL;
    snprintf(path, sizeof path, "%s/%s.gif", o->dir, a->name);
    if (o->gif && (rc = vw_gif_open(&gif, path, o->width, o->height))) goto out_state;
#else
    if (o->gif) {
        rc = ks_fail(KS_EINVAL, "this build has no GIF export (configured with -DKS_WITH_GIF=OFF)");
        goto out_state;
    }
#endif
    snprintf(path, sizeof path, "%s/frames.tsv", sub);
    FILE *tsv = fopen(path, "w");
    if (!tsv) {
        rc = ks_fail(KS_EIO, "cannot write %s: %s", path, strerror(errno));
        goto out_gif;
    }
    fprintf(tsv,
            "# %s: i k p s d transposed o frames; then a row per frame: frame qy qx column, the window's cells "
            "y0 x0 y1 x1 (from the trace), its box in pixels bx by bw bh (outlined %d px outside in #%06X), the "
            "window panel's map ox oy cell and map area ax ay aw ah, the columns matrix's cells as drawn (whole "
            "ones) cx cy cw ch on its map's cox coy ccell, its header chead and its column numbers cnums as drawn "
            "(n:x:y:w:h, commas between)\n",
            a->name, VW_GALLERY_BOX, VW_GALLERY_WINDOW);
    fprintf(tsv, "anim\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", a->name, a->i, a->k, a->p, a->s, a->d, a->transposed,
            c.o, nf);
    for (int k = 0; k < nf && !rc; ++k) {
        vw_rect box = {0}, area = {0}, cols = {0};
        vw_heatmap m = {0}, cm = {0};
        draw_frame(&c, &f[k], k, nf, &box, &m, &area, &cols, &cm);
        snprintf(path, sizeof path, "%s/frame-%03d.png", sub, k);
        if ((rc = vw_save_png(surf, path))) break;
#ifdef KS_HAVE_GIF
        if (gif && (rc = vw_gif_frame(gif, surf->pixels, surf->pitch, k + 1 == nf ? 3 * o->delay_ms : o->delay_ms)))
            break;
#endif
        fprintf(
            tsv,
            "frame\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%."
            "3f\t%.3f\t%.3f\t%s\t%s\n",
            k, f[k].qy, f[k].qx, f[k].col, f[k].y0, f[k].x0, f[k].y1, f[k].x1, box.x, box.y, box.w, box.h, m.ox, m.oy,
            m.cell, area.x, area.y, area.w, area.h, cols.x, cols.y, cols.w, cols.h, cm.ox, cm.oy, cm.cell, c.head,
            c.nums);
    }
    if (fclose(tsv) != 0 && !rc) rc = ks_fail(KS_EIO, "cannot write %s/frames.tsv", sub);
out_gif:
#ifdef KS_HAVE_GIF
    if (gif && rc) vw_gif_abort(gif);
    else if (gif) rc = vw_gif_close(gif);
#endif
out_state:
    vw_state_free(&c.s);
    vw_draw_free(&c.d);
out_renderer:
    SDL_DestroyRenderer(r);
out_surf:
    SDL_FreeSurface(surf);
out_frames:
    free(f);
out_index:
    vw_index_free(&idx);
    if (!rc) *frames = nf;
    return rc;
}
