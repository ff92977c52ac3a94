/* vw_view.c - which part of a plane a heatmap panel shows, and where: the whole plane
 * fitted (planes whose cells come out big enough), a window around the focused work
 * item's accesses (auto-zoom: the deformable samples over a 128x96 picture), all rows of
 * a very wide plane and a window of its columns (the columns matrix of a 640x480 image),
 * or where the user zoomed and panned (Z / X, the wheel, Shift+arrows, a right drag). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_boxes.h"
#include "vw_describe.h"
#include "vw_phase.h"
#include "vw_plane.h"
#include "vw_state.h"
#include "vw_view.h"
#include "vw_warp.h"

#define AUTO_CELL 7  /* whole-plane cells smaller than this (pixels) zoom to the focus */
#define MIN_WINDOW 8 /* an auto-zoomed window is at least this many cells a side */
#define MIN_SHORT 16 /* a very wide plane shows at least this many columns (a tall one rows) */
#define ZOOM_STEP 1.25
#define ZOOM_MAX 4096.0

double vw_heat_value(const vw_state *s, int t, int64_t off, vw_mode mode)
{
    const vw_aggregate *a = s->idx ? &s->idx->agg[t] : NULL;
    switch (mode) {
    case VW_MODE_READS: return vw_count_at(&a->reads, off);
    case VW_MODE_WEIGHTS: return vw_agg_weight(a, off);
    case VW_MODE_WRITES: return vw_count_at(&a->writes, off);
    case VW_MODE_VISITS: return vw_count_at(&a->visits, off);
    case VW_MODE_SECTORS: return vw_sectors_at(s->idx, t, off);
    default: return vw_tensor_value(&s->tr->tensors[t], off);
    }
}

/* The panel's mode as drawn: aggregate modes need the index and a tensor small enough
 * to have aggregates. */
vw_mode vw_effective_mode(const vw_state *s, int panel)
{
    const int t = s->panel[panel].tensor;
    const vw_mode m = vw_panel_mode(s, panel);
    if (m == VW_MODE_SECTORS) return s->idx && s->idx->agg[t].sector_n ? m : VW_MODE_VALUES;
    if (m != VW_MODE_VALUES && s->idx && s->idx->agg[t].on) return m;
    return VW_MODE_VALUES;
}

vw_rect vw_panel_map_area(const vw_layout *L, int panel)
{
    vw_rect area = panel ? L->output : L->input;
    /* the panel's header line, and a second one where a window's name needs it */
    const int head = vw_panel_header_h(L->line) + ((L->header_two >> panel) & 1 ? L->line : 0);
    area.y += head;
    area.h -= head;
    if (area.h < 1) area.h = 1;
    if (area.w < 1) area.w = 1;
    return area;
}

/* The cells of the plane a whole-plane view shows: all of them, or for a plane so wide
 * (tall) that its fitted picture would leave the panel two thirds empty, all its rows
 * (columns) and a window of the rest. Sets *whole when that is the plain fit. */
static double base_cell(vw_rect a, int64_t rows, int64_t cols, const int side[4], int *whole)
{
    const double h = (double)(rows + side[VW_SIDE_TOP] + side[VW_SIDE_BOTTOM]);
    const double w = (double)(cols + side[VW_SIDE_LEFT] + side[VW_SIDE_RIGHT]);
    const double fit = fmin(a.w / w, a.h / h);
    *whole = 1;
    /* a one-row (one-column) plane keeps its strip: its bars show it whole */
    if (fit * h < a.h / 3.0 && rows > 1) {
        *whole = 0;
        return fmax(fit, fmin(a.h / h, a.w / (double)MIN_SHORT));
    }
    if (fit * w < a.w / 3.0 && cols > 1) {
        *whole = 0;
        return fmax(fit, fmin(a.w / w, a.h / (double)MIN_SHORT));
    }
    return fit;
}

/* The request of the event the strip shows, built once per (trace, event): a slide asks
 * for it at every layout it tries. NULL without one. */
static const vw_warp *focused_request(const vw_state *s)
{
    static vw_warp w;
    static const ks_trace *tr;
    static const void *events;
    static uint32_t at = VW_NONE;
    static int ok;
    int own;
    const uint32_t ev = vw_warp_event(s, &own);
    if (ev == VW_NONE) return NULL;
    if (tr != s->tr || events != (const void *)s->tr->events || at != ev) {
        tr = s->tr, events = s->tr->events, at = ev;
        ok = !vw_warp_build(s->tr, ev, &w) && w.ok;
    }
    return ok ? &w : NULL;
}

int vw_fig_warp_cells(const vw_state *s, int panel, int64_t (*yx)[2], int *lane, int *sector, int max)
{
    if (!s->nslides || !(s->slides[s->slide].figure & VW_FIGURE_WARP) || s->panel[panel].tensor < 0) return 0;
    const vw_warp *w = focused_request(s);
    int n = 0;
    for (int k = 0; w && k < w->nacc && n < max; ++k) {
        const ks_event *e = vw_event(s->tr, (uint32_t)w->acc[k].event);
        if ((e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) || (int)e->tensor != s->panel[panel].tensor ||
            e->u.access.plane != s->panel[panel].plane)
            continue;
        yx[n][0] = e->u.access.y, yx[n][1] = e->u.access.x;
        if (lane) lane[n] = (int)w->acc[k].lane;
        if (sector) sector[n] = (int)w->sector[k];
        n++;
    }
    return n;
}

/* The box of the cells the focused item's block writes on panel p's plane (a slide that
 * draws "block"), scanned once per (trace, event, tensor, plane). 0: none. */
static int block_box(const vw_state *s, int panel, int64_t box[4])
{
    static const void *events;
    static uint32_t at = VW_NONE;
    static int tensor = -1, ok;
    static int64_t plane = -1, b[4];
    const uint32_t fe = vw_state_event(s);
    const int t = s->panel[panel].tensor;
    if (!s->nslides || !(s->slides[s->slide].figure & VW_FIGURE_BLOCK) || fe == VW_NONE || t < 0) return 0;
    if (events != (const void *)s->tr->events || at != fe || tensor != t || plane != s->panel[panel].plane) {
        events = s->tr->events, at = fe, tensor = t, plane = s->panel[panel].plane, ok = 0;
        const uint32_t block = vw_event(s->tr, fe)->block;
        for (uint64_t i = 0; i < s->tr->nevents; ++i) {
            const ks_event *e = vw_event(s->tr, i);
            if (e->kind != KS_EV_WRITE || e->block != block || e->tensor != (uint32_t)t || e->u.access.plane != plane)
                continue;
            const int64_t y = e->u.access.y, x = e->u.access.x;
            if (!ok) b[0] = b[2] = y, b[1] = b[3] = x, ok = 1;
            b[0] = y < b[0] ? y : b[0], b[1] = x < b[1] ? x : b[1], b[2] = y > b[2] ? y : b[2],
            b[3] = x > b[3] ? x : b[3];
        }
    }
    if (ok) memcpy(box, b, sizeof b);
    return ok;
}

int vw_focus_bbox(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1)
{
    const uint32_t it = vw_state_item(s);
    const int t = s->panel[panel].tensor;
    if (it == VW_NONE || t < 0) return 0;
    const vw_item *item = &s->idx->items[it];
    double a = INFINITY, b = INFINITY, c = -INFINITY, d = -INFINITY;
    for (uint32_t k = 0; k < item->count; ++k) {
        const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
        double ey0, ex0, ey1, ex1;
        if (e->tensor != t) continue;
        if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
            if (e->u.access.plane != s->panel[panel].plane) continue;
            ey0 = ey1 = (double)e->u.access.y, ex0 = ex1 = (double)e->u.access.x;
        } else if (e->kind == KS_EV_SAMPLE) {
            if (e->u.sample.plane != s->panel[panel].plane) continue;
            ey0 = floor(e->u.sample.y), ex0 = floor(e->u.sample.x), ey1 = ey0 + 1, ex1 = ex0 + 1;
        } else if (e->kind == KS_EV_REGION) {
            if (e->u.region.plane != s->panel[panel].plane) continue;
            ey0 = e->u.region.y0, ex0 = e->u.region.x0, ey1 = e->u.region.y1, ex1 = e->u.region.x1;
        } else {
            continue;
        }
        if (!(fabs(ey0) < 1e7 && fabs(ex0) < 1e7 && fabs(ey1) < 1e7 && fabs(ex1) < 1e7)) continue;
        a = fmin(a, ey0), b = fmin(b, ex0), c = fmax(c, ey1), d = fmax(d, ex1);
    }
    /* a slide that draws the warp is about all its lanes' cells, not one item's window
     * (issue 38 D8: lesson 10's input was cut at column 8 of the warp's 16) */
    static int64_t yx[VW_WARP_MAX][2];
    const int nw = vw_fig_warp_cells(s, panel, yx, NULL, NULL, VW_WARP_MAX);
    for (int k = 0; k < nw; ++k)
        a = fmin(a, (double)yx[k][0]), b = fmin(b, (double)yx[k][1]), c = fmax(c, (double)yx[k][0]),
        d = fmax(d, (double)yx[k][1]);
    int64_t bb[4]; /* and one that draws the block, about its whole tile */
    if (block_box(s, panel, bb))
        a = fmin(a, (double)bb[0]), b = fmin(b, (double)bb[1]), c = fmax(c, (double)bb[2]), d = fmax(d, (double)bb[3]);
    if (!(a <= c)) return 0;
    *y0 = a, *x0 = b, *y1 = c, *x1 = d;
    return 1;
}

/* The widest text of the values cells [y0, y1) x [x0, x1) of panel p's plane print, in
 * their narrow form (vw_cell_text), skipping the cells the drawing leaves blank. */
static int widest_value(const vw_state *s, int panel, int64_t y0, int64_t y1, int64_t x0, int64_t x1)
{
    const int t = s->panel[panel].tensor;
    const ks_tensor *T = &s->tr->tensors[t];
    const vw_plane_dims pd = vw_plane_dims_of(T);
    const int64_t plane = s->panel[panel].plane, base = plane * pd.h * pd.w;
    const vw_mode mode = vw_effective_mode(s, panel);
    const int sparse = mode == VW_MODE_VALUES && T->dtype != KS_F32;
    if (plane < 0 || plane >= pd.planes) return 0;
    y0 = y0 < 0 ? 0 : y0, x0 = x0 < 0 ? 0 : x0, y1 = y1 > pd.h ? pd.h : y1, x1 = x1 > pd.w ? pd.w : x1;
    /* one plane scanned once per (tensor, plane, mode, window): slides redraw it often */
    static struct {
        const void *data, *idx;
        int64_t plane, y0, y1, x0, x1;
        int mode, widest;
    } memo[4];
    static int next;
    for (int i = 0; i < 4; ++i)
        if (memo[i].data == T->data && memo[i].idx == (const void *)s->idx && memo[i].plane == plane &&
            memo[i].mode == (int)mode && memo[i].y0 == y0 && memo[i].y1 == y1 && memo[i].x0 == x0 && memo[i].x1 == x1)
            return memo[i].widest;
    int widest = 0;
    char buf[48];
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            const int64_t off = base + y * pd.w + x;
            const double v = vw_heat_value(s, t, off, mode);
            if ((sparse && vw_cell_empty(T, off)) || (mode == VW_MODE_SECTORS && v < 0) || !isfinite(v)) continue;
            vw_cell_text(buf, sizeof buf, v, 1);
            if ((int)strlen(buf) > widest) widest = (int)strlen(buf);
        }
    /* a shared tensor's cells print the tile its block's writes leave (vw_tile_for), not
     * the stored zeros: the widest value any write to it stores (lesson 11's -2) */
    if (mode == VW_MODE_VALUES && t == vw_shared_tensor(s->tr) && !vw_trace_lazy(s->tr) && s->tr->nevents <= (1u << 24))
        for (uint64_t i = 0; i < s->tr->nevents; ++i) {
            const ks_event *e = vw_event(s->tr, i);
            if (e->kind != KS_EV_WRITE || e->tensor != (uint32_t)t || !isfinite(e->u.access.value)) continue;
            vw_cell_text(buf, sizeof buf, e->u.access.value, 1);
            if ((int)strlen(buf) > widest) widest = (int)strlen(buf);
        }
    memo[next].data = T->data, memo[next].idx = s->idx, memo[next].plane = plane, memo[next].mode = (int)mode;
    memo[next].y0 = y0, memo[next].y1 = y1, memo[next].x0 = x0, memo[next].x1 = x1, memo[next].widest = widest;
    next = (next + 1) % 4;
    return widest;
}

#define VALUES_SCAN (1 << 16) /* a plane of more cells is scanned around the focus only */

/* The cells of panel p the focused event's tap names: the item's accesses of the panel's
 * plane at that tap (05 s12's tap (1, 1) writes columns[4, 12]), their box; 0: none, or
 * the focused event has no tap of the item's (a work event). */
static int tap_bbox(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1)
{
    const uint32_t it = vw_state_item(s), fe = vw_state_event(s);
    const int t = s->panel[panel].tensor;
    if (it == VW_NONE || fe == VW_NONE || t < 0) return 0;
    const ks_event *f = vw_event(s->tr, fe);
    if (f->kind == KS_EV_WORK) return 0;
    const vw_item *item = &s->idx->items[it];
    int n = 0;
    for (uint32_t k = 0; k < item->count; ++k) {
        const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
        if (e->tap != f->tap || e->tensor != (uint32_t)t || (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) ||
            e->u.access.plane != s->panel[panel].plane)
            continue;
        const double y = (double)e->u.access.y, x = (double)e->u.access.x;
        if (!n++) *y0 = *y1 = y, *x0 = *x1 = x;
        *y0 = fmin(*y0, y), *x0 = fmin(*x0, x), *y1 = fmax(*y1, y), *x1 = fmax(*x1, x);
    }
    return n > 0;
}

/* The box a slide zooms to for panel p's values, and the cell size that shows it with a
 * cell round it (whole cells): the step's cells (its item's), or where those do not fit
 * at `need`, the cells its focused tap names (issue 38 D1: 05's 9 x 25 columns printed
 * no values at any size, the item's column of 9 too tall for them). 0: no focus. */
/* The cell size (px) the values of the plane's cells [y0, y1) x [x0, x1) need at the
 * layout's value text (0: none there). */
static double cells_need(const vw_state *s, const vw_layout *L, int panel, int64_t y0, int64_t y1, int64_t x0,
                         int64_t x1)
{
    const int widest = widest_value(s, panel, y0, y1, x0, x1);
    const int vadv = L->vadv > 0 ? L->vadv : 1, vline = L->vline > 0 ? L->vline : L->line;
    return widest > 0 ? fmax(widest * vadv + vw_value_gap(vadv), vline + 2) : 0;
}

/* The step's cells on the panel (the item's, else the focused tap's where the item's do
 * not fit `need`) as box, and the biggest cell that shows them with a cell round them
 * where the plane (and its margin) goes on; *wneed: what the values of that window need,
 * where the item's cells fit it though not the plane's widest value (05 s8: its 9 writes
 * fill the columns' 9 rows, the widest values lie elsewhere: issue 38 D1 N10), else need. */
static int values_box(const vw_state *s, const vw_layout *L, const vw_rect area, int panel, double need, double box[4],
                      double *cell, double *wneed)
{
    double y0, x0, y1, x1;
    *wneed = need;
    if (!s->idx || !vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1)) return 0;
    const vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[s->panel[panel].tensor]);
    int side[4];
    vw_panel_margins(s, panel, side);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass && !(need > 0 && *cell < *wneed && tap_bbox(s, panel, &y0, &x0, &y1, &x1))) break;
        const double wh = fmin(floor(y1) - floor(y0) + 3, (double)(d.h + side[VW_SIDE_TOP] + side[VW_SIDE_BOTTOM]));
        const double ww = fmin(floor(x1) - floor(x0) + 3, (double)(d.w + side[VW_SIDE_LEFT] + side[VW_SIDE_RIGHT]));
        *cell = fmin(area.h / wh, area.w / ww);
        box[0] = y0, box[1] = x0, box[2] = y1, box[3] = x1;
        if (pass || !L || need <= 0 || *cell >= need || *cell < 2) continue;
        /* the window that cell shows round the item's cells */
        const double rows = area.h / *cell, cols = area.w / *cell;
        const double cy = (floor(y0) + floor(y1)) / 2, cx = (floor(x0) + floor(x1)) / 2;
        const double wn = cells_need(s, L, panel, (int64_t)floor(cy - rows / 2), (int64_t)ceil(cy + rows / 2) + 1,
                                     (int64_t)floor(cx - cols / 2), (int64_t)ceil(cx + cols / 2) + 1);
        if (wn > 0 && *cell >= wn) *wneed = wn;
    }
    return 1;
}

void vw_values_need(const vw_state *s, const vw_layout *L, int panel, double *need, double *focus_cell)
{
    *need = *focus_cell = 0;
    const int t = s->panel[panel].tensor;
    if (t < 0) return;
    const vw_rect area = vw_panel_map_area(L, panel);
    const vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[t]);
    double y0, x0, y1, x1;
    const int focus = s->idx && vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1);
    int widest;
    if (d.h * d.w <= VALUES_SCAN) widest = widest_value(s, panel, 0, d.h, 0, d.w);
    else if (focus)
        widest = widest_value(s, panel, (int64_t)floor(y0) - 16, (int64_t)floor(y1) + 17, (int64_t)floor(x0) - 16,
                              (int64_t)floor(x1) + 17);
    else return;
    if (widest <= 0) return;
    const int vadv = L->vadv > 0 ? L->vadv : 1, vline = L->vline > 0 ? L->vline : L->line;
    *need = fmax(widest * vadv + vw_value_gap(vadv), vline + 2);
    double box[4], wneed;
    if (focus && values_box(s, L, area, panel, *need, box, focus_cell, &wneed)) *need = wneed;
}

/* A slide's zoom for its values: when the whole plane's cells (base) are too small for
 * the values and the step's cells fit at a size that holds them, that size (up to half
 * again the need, so the cells around stay in view), centred on the step's cells. */
static int slide_values_zoom(const vw_state *s, const vw_layout *L, int panel, double base, double *cell, double *cy,
                             double *cx)
{
    if (!s->nslides || !s->autozoom || s->panel[panel].zoom > 0) return 0;
    double need, fc, box[4], wneed;
    vw_values_need(s, L, panel, &need, &fc);
    if (need <= 0 || base >= need || fc < need) return 0;
    if (!values_box(s, L, vw_panel_map_area(L, panel), panel, need, box, &fc, &wneed)) return 0;
    *cell = fmax(base, fmin(fc, need * 1.5));
    *cy = (floor(box[0]) + floor(box[2])) / 2, *cx = (floor(box[1]) + floor(box[3])) / 2;
    return 1;
}

/* r grown to at least `least` pixels a side, around its middle. */
static vw_rect at_least(vw_rect r, int least)
{
    if (r.w < least) r.x -= (least - r.w) / 2, r.w = least;
    if (r.h < least) r.y -= (least - r.h) / 2, r.h = least;
    return r;
}

static int add_rect(vw_rect *out, int n, int max, vw_rect r)
{
    for (int i = 0; i < n; ++i) /* a cell named twice (two taps on one pixel) once */
        if (out[i].x == r.x && out[i].y == r.y && out[i].w == r.w && out[i].h == r.h) return n;
    if (n < max) out[n++] = r;
    return n;
}

int vw_focus_cells(const vw_state *s, int panel, const vw_heatmap *m, vw_rect *out, int max)
{
    const int t = s->panel[panel].tensor;
    const int64_t plane = s->panel[panel].plane;
    const uint32_t it = vw_state_item(s);
    int n = 0;
    if (t < 0) return 0;
    if (it != VW_NONE) {
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0; k < item->count; ++k) {
            const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
            if (e->tensor != t) continue;
            if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && e->u.access.plane == plane) {
                const ks_ev_access *a = &e->u.access;
                if (!vw_heatmap_holds(m, a->y, a->x)) continue;
                n = add_rect(out, n, max, at_least(vw_heatmap_cell(m, a->y, a->x), 7));
            } else if (e->kind == KS_EV_SAMPLE && e->u.sample.plane == plane) {
                int64_t ys[2], xs[2];
                vw_sample_corners(e, ys, xs);
                for (int c = 0; c < 4; ++c)
                    if (ys[c >> 1] != INT32_MIN && xs[c & 1] != INT32_MIN && llabs(ys[c >> 1]) < (1 << 24) &&
                        llabs(xs[c & 1]) < (1 << 24))
                        n = add_rect(out, n, max, at_least(vw_heatmap_cell(m, ys[c >> 1], xs[c & 1]), 7));
            }
        }
        static vw_box b[256];
        const int nb = vw_item_boxes(s->tr, s->idx, it, b, 256);
        for (int k = 0; k < nb; ++k) {
            if (b[k].tensor != t || b[k].plane != plane || b[k].dim || !(fabs(b[k].y0) <= 1e6) ||
                !(fabs(b[k].x0) <= 1e6) || !(fabs(b[k].y1) <= 1e6) || !(fabs(b[k].x1) <= 1e6))
                continue;
            /* the whole cells the region covers part of, cell y spanning y - 0.5 .. y + 0.5
             * (a RoI from row 3.0 to 5.5: rows 3 to 5; a patch from -0.5 to 3.5, the
             * edges of rows 0 and 3: rows 0 to 3; a RoI from 0.5: from row 1, not row 0
             * whose edge it shares) */
            /* and only those of the plane: past its edge a region names no cell (issue 38
             * D3: 14 s6's RoI reaches two columns past the image, and its clamp label
             * found room only three rows under its corner) */
            const double ya = fmax(fmin(b[k].y0, b[k].y1), -0.5), yb = fmin(fmax(b[k].y0, b[k].y1), m->rows - 0.5);
            const double xa = fmax(fmin(b[k].x0, b[k].x1), -0.5), xb = fmin(fmax(b[k].x0, b[k].x1), m->cols - 0.5);
            if (!(ya <= yb && xa <= xb)) continue;
            const vw_rect c0 = vw_heatmap_cell(m, (int64_t)floor(ya + 0.5), (int64_t)floor(xa + 0.5));
            const vw_rect c1 = vw_heatmap_cell(m, (int64_t)floor(yb + 0.5 - 1e-9), (int64_t)floor(xb + 0.5 - 1e-9));
            const vw_rect r = {.x = c0.x, .y = c0.y, .w = c1.x + c1.w - c0.x, .h = c1.y + c1.h - c0.y};
            if (r.w > 0 && r.h > 0) n = add_rect(out, n, max, at_least(r, 9));
        }
    }
    if (s->look.tensor == t && s->look.plane == plane)
        n = add_rect(out, n, max, at_least(vw_heatmap_cell(m, s->look.y, s->look.x), 7));
    return n;
}

/* The centre coordinate of one axis: the middle of the plane and its margin (before
 * cells before it, after after it) when the window holds them all, else c kept so the
 * window stays on the plane and its margin. */
static double clamp_centre(double c, double cells_visible, int64_t n, int before, int after)
{
    if (cells_visible >= (double)(n + before + after)) return ((double)(n + after - before) - 1) / 2;
    const double lo = -before + cells_visible / 2 - 0.5, hi = (double)(n + after) - cells_visible / 2 - 0.5;
    return c < lo ? lo : c > hi ? hi : c;
}

/* --- the figures a slide draws ("draw", vw_draw_ideas.c): where they lie, from the
 * focused item's fields and events and the operator's parameters --- */

#define MAX_EVENTS 256 /* events of the focused item looked at */

/* The focused work item's events (same index, block, thread and iteration as the
 * focused event), in recorded order: a scan, done only on a slide that draws a figure. */
static int item_events(const vw_state *s, const ks_event **out, int max)
{
    const uint32_t ev = vw_state_event(s);
    if (ev == VW_NONE || ev >= s->tr->nevents) return 0;
    const ks_event *f = vw_event(s->tr, ev);
    int n = 0;
    for (uint64_t i = 0; i < s->tr->nevents && n < max; ++i) {
        const ks_event *e = vw_event(s->tr, i);
        if (e->index == f->index && e->block == f->block && e->thread == f->thread && e->iter == f->iter) out[n++] = e;
    }
    return n;
}

static const ks_event *first_of(const ks_event *const *e, int n, int kind)
{
    for (int i = 0; i < n; ++i)
        if (e[i]->kind == kind) return e[i];
    return NULL;
}

/* Work field `name` of work event w. */
static int field(const ks_trace *tr, const ks_event *w, const char *name, int64_t *v)
{
    if (!w || w->site >= tr->nsites) return 0;
    const ks_site *site = &tr->sites[w->site];
    for (int f = 0; f < site->nfields && f < KS_WORK_FIELDS; ++f)
        if (!strcmp(site->fields[f].name, name)) {
            *v = w->u.field[f];
            return 1;
        }
    return 0;
}

/* Parameter `key` of the trace as (rows, columns): a pair, or one number for both. */
static int param_pair(const ks_trace *tr, const char *key, int64_t v[2])
{
    cJSON *j = cJSON_Parse(tr->params);
    const cJSON *p = j ? cJSON_GetObjectItemCaseSensitive(j, key) : NULL;
    int ok = 0;
    if (cJSON_IsNumber(p)) {
        v[0] = v[1] = (int64_t)p->valuedouble, ok = 1;
    } else if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(p, 0)) &&
               cJSON_IsNumber(cJSON_GetArrayItem(p, 1))) {
        v[0] = (int64_t)cJSON_GetArrayItem(p, 0)->valuedouble, v[1] = (int64_t)cJSON_GetArrayItem(p, 1)->valuedouble;
        ok = 1;
    }
    cJSON_Delete(j);
    return ok;
}

static int get_geom(const ks_trace *tr, vw_fig_geom *g)
{
    return param_pair(tr, "kernel_size", g->k) && param_pair(tr, "padding", g->pad) &&
           param_pair(tr, "stride", g->stride) && param_pair(tr, "dilation", g->dil) &&
           param_pair(tr, "output_size", g->out) && param_pair(tr, "input_size", g->in) && g->stride[0] > 0 &&
           g->stride[1] > 0 && g->dil[0] > 0 && g->dil[1] > 0 && g->out[0] > 0 && g->out[1] > 0;
}

static const char *const fig_names[2][4] = {{"h_im", "h_col_start", "h_col_end", "h"},
                                            {"w_im", "w_col_start", "w_col_end", "w"}};

int vw_fig_windows_find(const vw_state *s, int panel, int a, vw_fig_windows *wn)
{
    static const ks_event *ev[MAX_EVENTS];
    const int n = item_events(s, ev, MAX_EVENTS);
    const ks_event *w = first_of(ev, n, KS_EV_WORK), *out = first_of(ev, n, KS_EV_WRITE);
    if (!w || !out || out->tensor != s->panel[panel].tensor || out->u.access.plane != s->panel[panel].plane ||
        !get_geom(s->tr, &wn->g) || !field(s->tr, w, fig_names[a][0], &wn->im) ||
        !field(s->tr, w, fig_names[a][1], &wn->lo) || !field(s->tr, w, fig_names[a][2], &wn->hi) ||
        wn->hi - wn->lo < 1 || wn->hi - wn->lo > 8)
        return 0;
    wn->py = out->u.access.y, wn->px = out->u.access.x;
    return 1;
}

void vw_fig_window_taps(const vw_fig_geom *g, int a, int64_t c, int64_t *first, int64_t *last)
{
    *first = c * g->stride[a] - g->pad[a], *last = *first + (g->k[a] - 1) * g->dil[a];
}

/* Where the bin's grid puts sample f of a work item whose events are ev[0..n), before
 * the border clamp moved it to its own coordinates: 1 and (*y, *x), or 0 when f is no
 * clamped sample or the item's RoI and grid fields are missing. */
static int unclamped_at(const ks_trace *tr, const ks_event *const *ev, int n, const ks_event *f, double *y, double *x)
{
    if (!f || f->kind != KS_EV_SAMPLE || !(f->flags & (KS_FLAG_CLAMP_Y | KS_FLAG_CLAMP_X))) return 0;
    const ks_event *w = first_of(ev, n, KS_EV_WORK), *box = NULL;
    for (int i = 0; i < n && !box; ++i)
        if (ev[i]->kind == KS_EV_REGION && !(ev[i]->flags & KS_FLAG_GUIDE) && ev[i]->u.region.rows > 0) box = ev[i];
    int64_t ph, pw, gh, gw;
    if (!box || !field(tr, w, "ph", &ph) || !field(tr, w, "pw", &pw) || !field(tr, w, "grid_h", &gh) ||
        !field(tr, w, "grid_w", &gw) || gh < 1 || gw < 1)
        return 0;
    const ks_ev_region *r = &box->u.region;
    const double bin_h = (r->y1 - r->y0) / r->rows, bin_w = (r->x1 - r->x0) / r->cols;
    const int64_t iy = f->tap / gw, ix = f->tap % gw;
    *y = r->y0 + ph * bin_h + (iy + 0.5) * bin_h / (double)gh;
    *x = r->x0 + pw * bin_w + (ix + 0.5) * bin_w / (double)gw;
    const double cy = f->u.sample.y, cx = f->u.sample.x;
    /* the clamp only ever moves a sample back onto the last row (column) */
    if ((f->flags & KS_FLAG_CLAMP_Y) ? !(*y >= cy) : fabs(*y - cy) > 1e-4) return 0;
    if ((f->flags & KS_FLAG_CLAMP_X) ? !(*x >= cx) : fabs(*x - cx) > 1e-4) return 0;
    return 1;
}

const ks_event *vw_fig_clamped_sample(const vw_state *s, int panel, double *y, double *x)
{
    static const ks_event *ev[MAX_EVENTS];
    const uint32_t fe = vw_state_event(s);
    const ks_event *f = fe == VW_NONE ? NULL : vw_event(s->tr, fe);
    if (!f || f->kind != KS_EV_SAMPLE || !(f->flags & (KS_FLAG_CLAMP_Y | KS_FLAG_CLAMP_X)) ||
        f->tensor != s->panel[panel].tensor || f->u.sample.plane != s->panel[panel].plane)
        return NULL;
    const int n = item_events(s, ev, MAX_EVENTS);
    return unclamped_at(s->tr, ev, n, f, y, x) ? f : NULL;
}

int vw_guide_sample_unclamped(const ks_trace *g, const ks_event *f, double *y, double *x)
{
    static const ks_event *ev[MAX_EVENTS];
    int n = 0;
    for (uint64_t i = 0; i < g->nevents && n < MAX_EVENTS; ++i) {
        const ks_event *e = vw_event(g, i);
        if (e->index == f->index && e->block == f->block && e->thread == f->thread && e->iter == f->iter) ev[n++] = e;
    }
    return unclamped_at(g, ev, n, f, y, x);
}

/* A shared access of block b in phase p to slot (plane, y, x) of tensor t. */
static int shared_at(const ks_event *e, int kind, uint32_t t, uint32_t b, int32_t p, const ks_ev_access *at)
{
    return e->kind == kind && (e->flags & KS_FLAG_SHARED) && e->tensor == t && e->block == b &&
           e->u.access.reserved[0] == p && e->u.access.plane == at->plane && e->u.access.y == at->y &&
           e->u.access.x == at->x;
}

/* vw_view.h; the search walks the trace, so the answer is kept for the next call of the
 * same item and plane (a slide's layout asks for every arrangement it tries) */
int vw_fig_race_find(const vw_state *s, int panel, vw_fig_race *r)
{
    static struct {
        const ks_trace *tr;
        const void *events;
        uint64_t nevents;
        uint32_t item;
        int tensor;
        int64_t plane;
        int ok;
        vw_fig_race r;
    } memo;
    const uint32_t it = vw_state_item(s);
    const int t = s->panel[panel].tensor;
    memset(r, 0, sizeof *r);
    if (it == VW_NONE || t < 0 || t != vw_shared_tensor(s->tr)) return 0;
    const int64_t plane = s->panel[panel].plane;
    if (memo.tr == s->tr && memo.events == (const void *)s->tr->events && memo.nevents == s->tr->nevents &&
        memo.item == it && memo.tensor == t && memo.plane == plane) {
        *r = memo.r;
        return memo.ok;
    }
    int ok = 0;
    const vw_item *item = &s->idx->items[it];
    for (uint32_t k = 0; k < item->count && !ok; ++k) {
        const uint32_t wi = vw_item_ev(s->idx, item, k);
        const ks_event *w = vw_event(s->tr, wi);
        if (w->kind != KS_EV_WRITE || !(w->flags & KS_FLAG_SHARED) || w->tensor != (uint32_t)t ||
            w->u.access.plane != plane)
            continue;
        const int32_t phase = w->u.access.reserved[0];
        const ks_event *later = NULL, *before = NULL;
        for (uint64_t i = wi + 1; i < s->tr->nevents && !later; ++i) {
            const ks_event *e = vw_event(s->tr, i);
            if (e->thread != w->thread && shared_at(e, KS_EV_READ, w->tensor, w->block, phase, &w->u.access)) later = e;
        }
        if (!later) continue;
        for (uint64_t i = 0; i < wi; ++i) { /* the value it overwrites: the slot's last store before */
            const ks_event *e = vw_event(s->tr, i);
            if (e->kind == KS_EV_WRITE && (e->flags & KS_FLAG_SHARED) && e->tensor == w->tensor &&
                e->block == w->block && e->u.access.plane == w->u.access.plane && e->u.access.y == w->u.access.y &&
                e->u.access.x == w->u.access.x)
                before = e;
        }
        *r = (vw_fig_race){.store = w, .read = later, .before = before, .phase = phase};
        ok = 1;
    }
    memo.tr = s->tr, memo.events = s->tr->events, memo.nevents = s->tr->nevents;
    memo.item = it, memo.tensor = t, memo.plane = plane, memo.ok = ok, memo.r = *r;
    return ok;
}

int vw_fig_dropped_find(const vw_state *s, int panel, vw_fig_dropped *dr)
{
    static const ks_event *ev[MAX_EVENTS];
    const int n = item_events(s, ev, MAX_EVENTS);
    const ks_event *w = first_of(ev, n, KS_EV_WORK), *rd = first_of(ev, n, KS_EV_READ);
    int64_t o[2];
    dr->n = 0;
    if (!w || !rd || rd->tensor != s->panel[panel].tensor || rd->u.access.plane != s->panel[panel].plane ||
        !get_geom(s->tr, &dr->g) || !field(s->tr, w, "h_col", &o[0]) || !field(s->tr, w, "w_col", &o[1]))
        return 0;
    const vw_fig_geom *g = &dr->g;
    for (int a = 0; a < 2; ++a) {
        if (o[a] != g->out[a] - 1) continue; /* the item's window is not the last along a */
        for (int b = 0; b < 2; ++b) {
            const int64_t at = b == a ? g->out[a] : o[b]; /* the dropped window: one past the last */
            dr->first[dr->n][b] = at * g->stride[b] - g->pad[b];
            dr->last[dr->n][b] = dr->first[dr->n][b] + (g->k[b] - 1) * g->dil[b];
        }
        dr->axis[dr->n++] = a;
    }
    return dr->n;
}

int vw_fig_window_find(const vw_state *s, int panel, vw_fig_geom *g, int64_t first[2], int64_t last[2])
{
    static const ks_event *ev[MAX_EVENTS];
    const int n = item_events(s, ev, MAX_EVENTS);
    const ks_event *w = first_of(ev, n, KS_EV_WORK);
    const int t = s->panel[panel].tensor;
    int64_t o[2];
    if (!w || t < 0 || t >= s->tr->ntensors || strcmp(s->tr->tensors[t].name, "input") || !get_geom(s->tr, g)) return 0;
    if (!(field(s->tr, w, "h_out", &o[0]) && field(s->tr, w, "w_out", &o[1])) &&
        !(field(s->tr, w, "h_col", &o[0]) && field(s->tr, w, "w_col", &o[1])))
        return 0;
    for (int a = 0; a < 2; ++a) vw_fig_window_taps(g, a, o[a], &first[a], &last[a]);
    return 1;
}

int vw_figure_extent(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1)
{
    if (!s->nslides || s->panel[panel].tensor < 0) return 0;
    const int fig = s->slides[s->slide].figure;
    double a = INFINITY, b = INFINITY, c = -INFINITY, e = -INFINITY;
#define KEEP(y, x) (a = fmin(a, (y)), b = fmin(b, (x)), c = fmax(c, (y)), e = fmax(e, (x)))
    for (int ax = 0; ax < 2; ++ax) {
        vw_fig_windows wn;
        if (!(fig & (ax ? VW_FIGURE_WINDOWS_W : VW_FIGURE_WINDOWS_H)) || !vw_fig_windows_find(s, panel, ax, &wn))
            continue;
        KEEP((double)wn.py, (double)wn.px);
        for (int64_t w = wn.lo; w < wn.hi; ++w) { /* the comb's ends, across the pixel */
            int64_t first, last;
            vw_fig_window_taps(&wn.g, ax, w, &first, &last);
            KEEP(ax ? (double)wn.py : (double)first, ax ? (double)first : (double)wn.px);
            KEEP(ax ? (double)wn.py : (double)last, ax ? (double)last : (double)wn.px);
        }
    }
    double y, x;
    const ks_event *f = fig & VW_FIGURE_CLAMP ? vw_fig_clamped_sample(s, panel, &y, &x) : NULL;
    if (f) KEEP(y, x), KEEP((double)f->u.sample.y, (double)f->u.sample.x);
    const vw_slide *sl = &s->slides[s->slide];
    for (int i = 0; (fig & VW_FIGURE_POINTS) && panel == 0 && i < sl->npoints && i < 2; ++i)
        KEEP(sl->point[i][0], sl->point[i][1]);
    /* another run's samples of the focused item, where they sit and, clamped, where their
     * bin put them (issue 38 D8: 14 s5's sample at x 7.71875, past the last column) */
    const ks_trace *gt = s->slides[s->slide].guide;
    const uint32_t it = vw_state_item(s);
    const int gtensor = gt ? ks_trace_tensor(gt, s->tr->tensors[s->panel[panel].tensor].name) : -1;
    for (uint64_t i = 0; (fig & VW_FIGURE_SAMPLES) && gtensor >= 0 && it != VW_NONE && i < gt->nevents; ++i) {
        const ks_event *ge = vw_event(gt, i);
        if (ge->kind != KS_EV_SAMPLE || (int64_t)ge->index != s->idx->items[it].index ||
            ge->tensor != (uint32_t)gtensor || ge->u.sample.plane != s->panel[panel].plane ||
            !(fabsf(ge->u.sample.y) < 1e6f) || !(fabsf(ge->u.sample.x) < 1e6f))
            continue;
        KEEP((double)ge->u.sample.y, (double)ge->u.sample.x);
        if (vw_guide_sample_unclamped(gt, ge, &y, &x)) KEEP(y, x);
    }
    /* the race's two labels: room above the tile, off its numbers, at every size (issue
     * 38 N20: at 1280x960 and 1024x768 the tile filled its panel and neither was drawn) */
    vw_fig_race rc;
    if ((fig & VW_FIGURE_RACE) && vw_fig_race_find(s, panel, &rc))
        KEEP((double)-VW_RACE_ROOM, (double)rc.store->u.access.x),
            KEEP((double)rc.store->u.access.y, (double)rc.store->u.access.x);
    vw_fig_geom g;
    int64_t first[2], last[2];
    if ((fig & VW_FIGURE_WINDOW) && vw_fig_window_find(s, panel, &g, first, last))
        KEEP((double)first[0], (double)first[1]), KEEP((double)last[0], (double)last[1]);
    vw_fig_dropped dr;
    if (fig & VW_FIGURE_DROPPED) {
        const int n = vw_fig_dropped_find(s, panel, &dr);
        for (int i = 0; i < n; ++i)
            KEEP((double)dr.first[i][0], (double)dr.first[i][1]), KEEP((double)dr.last[i][0], (double)dr.last[i][1]);
        /* and the padded image it is dropped from, whose ring the figure draws all round */
        if (n) KEEP((double)-dr.g.pad[0], (double)-dr.g.pad[1]);
        if (n) KEEP((double)(dr.g.in[0] + dr.g.pad[0] - 1), (double)(dr.g.in[1] + dr.g.pad[1] - 1));
    }
#undef KEEP
    if (!(a <= c)) return 0;
    *y0 = a, *x0 = b, *y1 = c, *x1 = e;
    return 1;
}


/* Cells past the plane's rows x cols a box [y0, y1] x [x0, x1] reaches on each side,
 * kept in side[VW_SIDE_*] where more than already there (cell y spans y - 0.5 .. y + 0.5:
 * a cell index or a point in the bilinear convention). */
static void past_plane(double y0, double x0, double y1, double x1, int64_t rows, int64_t cols, int side[4])
{
    const double far[4] = {-y0 - 0.5, -x0 - 0.5, y1 + 0.5 - (double)rows, x1 + 0.5 - (double)cols};
    for (int k = 0; k < 4; ++k) {
        const int n = !(far[k] > 0) ? 0 : far[k] >= VW_MARGIN_MAX ? VW_MARGIN_MAX : (int)ceil(far[k]);
        if (n > side[k]) side[k] = n;
    }
}

/* The widest of side[0..3]. */
static int past_plane_most(const int side[4])
{
    int most = 0;
    for (int k = 0; k < 4; ++k) most = side[k] > most ? side[k] : most;
    return most;
}

/* The cell a slide's question asks about when it lies on panel p's plane (a sample's:
 * its corners), answer shown or not: the question and its answer keep one view. */
static int asked_box(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1)
{
    const vw_slide *sl = &s->slides[s->slide];
    if (!sl->has_answer_cell || sl->answer_event >= s->tr->nevents) return 0;
    const ks_event *e = vw_event(s->tr, sl->answer_event);
    if (e->tensor != s->panel[panel].tensor) return 0;
    if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && e->u.access.plane == s->panel[panel].plane) {
        *y0 = *y1 = (double)e->u.access.y, *x0 = *x1 = (double)e->u.access.x;
        return 1;
    }
    if (e->kind == KS_EV_SAMPLE && e->u.sample.plane == s->panel[panel].plane && fabsf(e->u.sample.y) < 1e6f &&
        fabsf(e->u.sample.x) < 1e6f) {
        *y0 = floor(e->u.sample.y), *x0 = floor(e->u.sample.x), *y1 = *y0 + 1, *x1 = *x0 + 1;
        return 1;
    }
    return 0;
}

int vw_panel_asks_yx(const vw_state *s, int panel)
{
    if (!s->nslides || s->panel[panel].tensor < 0) return 0;
    /* on any plane of the tensor: (y, x) is the same on each (02 s4 asks item 19's, on
     * channel 1, beside item 13's channel 0) */
    return s->slides[s->slide].asks_yx == s->panel[panel].tensor + 1;
}

int vw_panel_margins(const vw_state *s, int panel, int side[4])
{
    const int t = s->panel[panel].tensor;
    for (int k = 0; k < 4; ++k) side[k] = 0;
    if (t < 0 || !s->idx) return 0;
    vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[t]);
    if (d.h < 1) d.h = 1;
    if (d.w < 1) d.w = 1;
    if (d.h * d.w > 4096) return 0;
    if (!s->nslides) { /* the viewer: every padding read's ring */
        for (int k = 0; k < 4; ++k) side[k] = s->idx->margin[t];
        return s->idx->margin[t];
    }
    /* a slide: what its step draws outside the plane, on the sides it draws it */
    double y0, x0, y1, x1;
    if (vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1)) past_plane(y0, x0, y1, x1, d.h, d.w, side);
    if (vw_figure_extent(s, panel, &y0, &x0, &y1, &x1)) {
        past_plane(y0, x0, y1, x1, d.h, d.w, side);
        /* col2im's combs keep the ring all round: a label a candidate window, as wide as
         * several cells, finds room off the numbers only there (03 s6 at 1920x1080: the
         * three stacked over the plane's left edge left one no leader clear of the others) */
        if (s->slides[s->slide].figure & (VW_FIGURE_WINDOWS_H | VW_FIGURE_WINDOWS_W)) {
            const int most = past_plane_most(side);
            for (int k = 0; k < 4; ++k) side[k] = most;
        }
    }
    if (asked_box(s, panel, &y0, &x0, &y1, &x1)) past_plane(y0, x0, y1, x1, d.h, d.w, side);
    if (s->look.tensor == t && s->look.plane == s->panel[panel].plane)
        past_plane((double)s->look.y, (double)s->look.x, (double)s->look.y, (double)s->look.x, d.h, d.w, side);
    /* a ring more above and left of it all for the row and column numbers a (y, x)
     * question reads its cell by */
    if (vw_panel_asks_yx(s, panel)) side[VW_SIDE_TOP]++, side[VW_SIDE_LEFT]++;
    return past_plane_most(side);
}

int vw_margin_cells(const vw_state *s) { return !s->nslides || !(s->slides[s->slide].figure & VW_FIGURE_RACE); }

/* Where a panel's plane is fitted: its map area, on a slide less SLIDE_INSET pixels a
 * side, so that the answer's outline (7 px outside its cell) shows whole around a cell
 * at the edge of a plane that fills its panel. */
#define SLIDE_INSET 8

static vw_rect fit_area(const vw_state *s, const vw_layout *L, int panel)
{
    vw_rect a = vw_panel_map_area(L, panel);
    if (s->nslides && a.w > 8 * SLIDE_INSET && a.h > 8 * SLIDE_INSET)
        a.x += SLIDE_INSET, a.y += SLIDE_INSET, a.w -= 2 * SLIDE_INSET, a.h -= 2 * SLIDE_INSET;
    /* the weights key's room left of the plane (vw_draw_layout), where the plane keeps
     * half the panel's width */
    const int key = s->nslides ? L->key_w[panel] : 0;
    if (key > 0 && 2 * key <= a.w) a.x += key, a.w -= key;
    return a;
}

int vw_filled_box(const vw_state *s, int panel, int64_t *y0, int64_t *x0, int64_t *y1, int64_t *x1)
{
    const int t = s->panel[panel].tensor;
    if (t < 0) return 0;
    const ks_tensor *T = &s->tr->tensors[t];
    const vw_plane_dims d = vw_plane_dims_of(T);
    const int64_t plane = s->panel[panel].plane;
    if (T->dtype == KS_F32 || T->dtype == KS_F64 || !T->data || plane < 0 || plane >= d.planes || d.h * d.w > (1 << 16))
        return 0;
    *y0 = d.h, *x0 = d.w, *y1 = -1, *x1 = -1;
    for (int64_t y = 0; y < d.h; ++y)
        for (int64_t x = 0; x < d.w; ++x)
            if (!vw_cell_empty(T, (plane * d.h + y) * d.w + x)) {
                *y0 = y < *y0 ? y : *y0, *y1 = y > *y1 ? y : *y1;
                *x0 = x < *x0 ? x : *x0, *x1 = x > *x1 ? x : *x1;
            }
    return *y1 >= 0 && (*y0 > 0 || *x0 > 0 || *y1 < d.h - 1 || *x1 < d.w - 1);
}

/* A slide's values zoom in whole rows (issue 38: 10 s2's and 11 s9's last row was a
 * strip of colour too thin for its numbers, and dropping it took the picture under its
 * 55 %): the cell grown to the map's height over the rows it holds, while it still shows
 * all the step's cells (vw_values_need's focus cell), the window's first row on the
 * map's top edge, as near the centre cy as the plane allows; the columns centred again
 * at cx (a column the edge cuts goes: whole_cells in vw_draw_heat.c). */
static void whole_rows(const vw_state *s, const vw_layout *L, int panel, vw_heatmap *m, double cx, double cy)
{
    const vw_rect map = vw_panel_map_area(L, panel), area = fit_area(s, L, panel);
    const int n = (int)floor(map.h / m->cell + 1e-9);
    double need, most;
    vw_values_need(s, L, panel, &need, &most);
    if (most <= 0) most = map.h; /* none of the step's cells here: any size shows them */
    const int above = m->side[VW_SIDE_TOP], below = m->side[VW_SIDE_BOTTOM];
    if (n < 1 || (double)(m->rows + above + below) <= n) return; /* the plane's rows all show */
    /* grown to n rows while the step's cells still show, else shrunk to n + 1 while the
     * values still fit their cells */
    double cell = (double)map.h / n;
    int rows = n;
    if (cell > most) cell = (double)map.h / (n + 1), rows = n + 1;
    if (cell > most || cell < need) return;
    const double top = fmin(fmax(floor(cy + 0.5 - rows / 2.0 + 0.5), -above), (double)(m->rows + below - rows));
    m->cell = cell;
    m->oy = map.y - top * cell;
    cx = clamp_centre(cx, area.w / cell, m->cols, m->side[VW_SIDE_LEFT], m->side[VW_SIDE_RIGHT]);
    m->ox = floor(area.x + area.w / 2.0 - (cx + 0.5) * cell);
}

vw_heatmap vw_panel_map(const vw_state *s, const vw_layout *L, int panel)
{
    const vw_rect area = fit_area(s, L, panel);
    const int t = s->panel[panel].tensor;
    if (t < 0) return vw_heatmap_fit(area, 1, 1, 0);
    vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[t]);
    if (d.h < 1) d.h = 1;
    if (d.w < 1) d.w = 1;
    /* room for what is drawn outside small planes (vw_view.h) */
    int side[4];
    const int margin = vw_panel_margins(s, panel, side);
    int whole;
    const double base = base_cell(area, d.h, d.w, side, &whole);
    const vw_panel *p = &s->panel[panel];
    double cell = base, cy = ((double)d.h - 1) / 2, cx = ((double)d.w - 1) / 2, y0, x0, y1, x1;
    const int focus = vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1);
    int zoomed = 0;
    if (p->zoom > 0) { /* where the user put it */
        cell = base * p->zoom;
        cy = p->cy, cx = p->cx;
    } else if (focus && slide_values_zoom(s, L, panel, base, &cell, &cy, &cx)) { /* a slide's values */
        zoomed = 1;
    } else if (focus && s->autozoom && base < AUTO_CELL) { /* the focused accesses, with room */
        const double wh = fmax(y1 - y0 + 5, MIN_WINDOW), ww = fmax(x1 - x0 + 5, MIN_WINDOW);
        cell = fmax(base, fmin(area.h / wh, area.w / ww));
        cy = (y0 + y1) / 2, cx = (x0 + x1) / 2;
    } else if (focus && !whole) { /* a window of a wide plane: where the focus is */
        cy = (y0 + y1) / 2, cx = (x0 + x1) / 2;
        zoomed = s->nslides && p->zoom <= 0;
        /* the item's cells wider or taller than the window: the focused tap's cells, so
         * the focused event stays in view (issue 38 D1, eighth re-trial: 10 s14's window
         * of columns 13..27 held 3 of item 20's 9 reads, not the focused one at column 3) */
        /* but first smaller cells that hold all of the item's, with a cell round them,
         * where its values still print (issue 38 D1, ninth re-trial: 10 s14's window held
         * the focused read, 3 of item 20's 9) */
        double ty0, tx0, ty1, tx1, need, fc;
        const double fit = fmin(area.w / (floor(x1) - floor(x0) + 3), area.h / (floor(y1) - floor(y0) + 3));
        if (x1 - x0 + 1 > area.w / cell || y1 - y0 + 1 > area.h / cell) {
            vw_values_need(s, L, panel, &need, &fc);
            if (s->nslides && fit < cell && fit >= (need > 0 ? need : AUTO_CELL) && fit >= 2) cell = fit;
            else if (tap_bbox(s, panel, &ty0, &tx0, &ty1, &tx1)) cy = (ty0 + ty1) / 2, cx = (tx0 + tx1) / 2;
        }
    }
    /* a slide's sparse plane: its filled cells and the step's, not the empty rows and
     * columns round them, fill the panel (issue 38 D1: 08's ring of sites took 43 % of
     * the height in an 11 x 13 plane whose first and last rows hold none) */
    /* with a row above them and a column left of them for their numbers (issue 38 D8: 08
     * s2-s3's ring had no coordinates to read the step's (3, 9) off) */
    int64_t by0, bx0, by1, bx1;
    int axes = 0;
    if (s->nslides && p->zoom <= 0 && cell == base && !margin && vw_filled_box(s, panel, &by0, &bx0, &by1, &bx1)) {
        if (focus) {
            by0 = (int64_t)fmin((double)by0, floor(y0)), bx0 = (int64_t)fmin((double)bx0, floor(x0));
            by1 = (int64_t)fmax((double)by1, floor(y1)), bx1 = (int64_t)fmax((double)bx1, floor(x1));
        }
        const int64_t fr = by1 - by0 + 1, fc = bx1 - bx0 + 1;
        const double fit = fmin(area.h / (double)fr, area.w / (double)fc);
        const double with = fmin(area.h / (double)(fr + 1), area.w / (double)(fc + 1));
        /* the numbers but where they would take the filled cells under their share of the
         * height (the 55 % rule) */
        const int need = vw_grid_need(fr, fc, NULL, 0, L->w, L->h, L->line);
        if (with >= base + 1 && !(floor(fit) * (double)fr >= need && floor(with) * (double)fr < need))
            cell = with, whole = 0, zoomed = 0, axes = 1;
        else if (fit >= base + 1) cell = fit, cy = (by0 + by1) / 2.0, cx = (bx0 + bx1) / 2.0, whole = 0, zoomed = 0;
    }
    if (cell == base && whole) return vw_heatmap_fit_sides(area, d.h, d.w, side);
    if (cell >= 2) cell = floor(cell);
    vw_heatmap m = {.cell = cell, .rows = d.h, .cols = d.w};
    vw_heatmap_set_sides(&m, side);
    if (axes) { /* the filled cells and the numbers' row and column, centred */
        m.axes = 1;
        m.fill[0] = by0, m.fill[1] = bx0, m.fill[2] = by1, m.fill[3] = bx1;
        m.ox = floor(area.x + (area.w - (double)(bx1 - bx0 + 2) * cell) / 2 + (double)(1 - bx0) * cell);
        m.oy = floor(area.y + (area.h - (double)(by1 - by0 + 2) * cell) / 2 + (double)(1 - by0) * cell);
        return m;
    }
    /* whole_rows grows or shrinks the cell: it clamps the centre as asked again, at its
     * own cell (clamped at this one, a grown cell put column 0 half out of the window,
     * and whole_cells dropped it: 13 s1's in[15:26, 1:11] without the item's reads in
     * column 0, found by the rule on an item's cells out of view) */
    const double want_cx = cx, want_cy = cy;
    cy = clamp_centre(cy, area.h / cell, d.h, side[VW_SIDE_TOP], side[VW_SIDE_BOTTOM]);
    cx = clamp_centre(cx, area.w / cell, d.w, side[VW_SIDE_LEFT], side[VW_SIDE_RIGHT]);
    m.ox = floor(area.x + area.w / 2.0 - (cx + 0.5) * cell);
    m.oy = floor(area.y + area.h / 2.0 - (cy + 0.5) * cell);
    if (zoomed) whole_rows(s, L, panel, &m, want_cx, want_cy);
    return m;
}

int vw_panel_tap_zoom(const vw_state *s, const vw_layout *L, int panel)
{
    double y0, x0, y1, x1, need, fc;
    if (!vw_panel_zoomed(s, L, panel) || !vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1)) return 0;
    vw_values_need(s, L, panel, &need, &fc);
    const vw_rect area = vw_panel_map_area(L, panel);
    return fmin(area.h / (floor(y1) - floor(y0) + 3), area.w / (floor(x1) - floor(x0) + 3)) < need;
}

int vw_step_cells_shown(const vw_state *s, int panel, const vw_heatmap *m, vw_rect in, int *shown)
{
    const uint32_t it = vw_state_item(s);
    const int t = s->panel[panel].tensor;
    static int64_t seen[512][2];
    int n = 0;
    *shown = 0;
    if (it == VW_NONE || !s->idx || t < 0) return 0;
    /* the item's accesses, then the lanes of the warp request a slide draws (issue 38 D1
     * N8, tenth re-trial: 10 s3 at 1024x768 kept item 0's window, 3 of the warp's 16
     * columns, without the sector bars and key its text points to) */
    static int64_t lanes[64][2];
    const vw_item *item = &s->idx->items[it];
    const int nl = vw_fig_warp_cells(s, panel, lanes, NULL, NULL, 64);
    for (uint32_t k = 0; k < item->count + (uint32_t)nl; ++k) {
        int64_t y, x;
        if (k < item->count) {
            const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
            if (e->tensor != (uint32_t)t || (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) ||
                e->u.access.plane != s->panel[panel].plane)
                continue;
            y = e->u.access.y, x = e->u.access.x;
        } else {
            y = lanes[k - item->count][0], x = lanes[k - item->count][1];
        }
        if (!vw_heatmap_holds(m, y, x)) continue;
        int dup = 0;
        for (int i = 0; i < n && !dup; ++i) dup = seen[i][0] == y && seen[i][1] == x;
        if (dup || n >= 512) continue;
        seen[n][0] = y, seen[n++][1] = x;
        const vw_rect r = vw_heatmap_cell(m, y, x);
        *shown += r.x >= in.x && r.y >= in.y && r.x + r.w <= in.x + in.w && r.y + r.h <= in.y + in.h;
    }
    return n;
}

int vw_panel_items_out(const vw_state *s, const vw_layout *L, int panel, int *cells)
{
    int shown;
    const vw_heatmap m = vw_panel_map(s, L, panel);
    *cells = vw_step_cells_shown(s, panel, &m, vw_panel_map_area(L, panel), &shown);
    return *cells - shown;
}

int vw_panel_zoomed(const vw_state *s, const vw_layout *L, int panel)
{
    const int t = s->panel[panel].tensor;
    double y0, x0, y1, x1, cell;
    if (t < 0 || !s->idx || !vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1)) return 0;
    vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[t]);
    int side[4], whole;
    vw_panel_margins(s, panel, side);
    const double base = base_cell(fit_area(s, L, panel), d.h < 1 ? 1 : d.h, d.w < 1 ? 1 : d.w, side, &whole);
    double cy, cx;
    return slide_values_zoom(s, L, panel, base, &cell, &cy, &cx);
}

/* Makes panel p's view the user's: its current cell size and centre, from here on moved
 * only by zoom and pan. */
static void take_view(vw_state *s, const vw_layout *L, int panel, vw_heatmap *m, double *base)
{
    const vw_rect area = fit_area(s, L, panel);
    vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[s->panel[panel].tensor]);
    int whole;
    *m = vw_panel_map(s, L, panel);
    *base = base_cell(area, d.h < 1 ? 1 : d.h, d.w < 1 ? 1 : d.w, m->side, &whole);
    vw_panel *p = &s->panel[panel];
    /* the zoom as set (the map's cell is whole pixels); the centre as shown (clamped) */
    if (p->zoom <= 0) p->zoom = fmax(1, m->cell / *base);
    p->cx = (area.x + area.w / 2.0 - m->ox) / m->cell - 0.5;
    p->cy = (area.y + area.h / 2.0 - m->oy) / m->cell - 0.5;
}

void vw_view_zoom(vw_state *s, const vw_layout *L, int dir, int px, int py)
{
    for (int panel = 0; panel < 2; ++panel) {
        const vw_rect area = vw_panel_map_area(L, panel);
        const int at = px >= 0 || py >= 0; /* the wheel: the panel under the pointer */
        if (s->panel[panel].tensor < 0 || (at && !vw_rect_contains(area, px, py))) continue;
        vw_heatmap m;
        double base;
        take_view(s, L, panel, &m, &base);
        vw_panel *p = &s->panel[panel];
        const int x = at ? px : area.x + area.w / 2, y = at ? py : area.y + area.h / 2;
        /* the plane point under (x, y) stays under it */
        const double fx = (x - m.ox) / m.cell - 0.5, fy = (y - m.oy) / m.cell - 0.5;
        double z = dir > 0 ? p->zoom * ZOOM_STEP : p->zoom / ZOOM_STEP;
        z = z < 1 ? 1 : z > ZOOM_MAX ? ZOOM_MAX : z;
        const double cell = base * z;
        p->zoom = z;
        p->cx = fx - (x - (area.x + area.w / 2.0)) / cell;
        p->cy = fy - (y - (area.y + area.h / 2.0)) / cell;
    }
}

void vw_view_pan(vw_state *s, const vw_layout *L, int panel, double dx, double dy, int quarters)
{
    for (int p = 0; p < 2; ++p) {
        if ((panel >= 0 && p != panel) || s->panel[p].tensor < 0) continue;
        const vw_rect area = vw_panel_map_area(L, p);
        vw_heatmap m;
        double base;
        take_view(s, L, p, &m, &base);
        /* quarters: the view moves a quarter panel per step; else the content follows the
         * pointer by (dx, dy) pixels */
        const double mx = quarters ? -dx * area.w / 4.0 : dx, my = quarters ? -dy * area.h / 4.0 : dy;
        s->panel[p].cx -= mx / m.cell;
        s->panel[p].cy -= my / m.cell;
    }
}

void vw_view_reset(vw_state *s)
{
    for (int p = 0; p < 2; ++p) s->panel[p].zoom = 0;
    s->autozoom = 1;
}

/* vw_state.h */
int vw_focus_panel(const vw_state *s)
{
    uint32_t ev = vw_state_event(s);
    if (ev == VW_NONE || ev >= s->tr->nevents) return -1;
    const ks_event *e = vw_event(s->tr, ev);
    const uint32_t it = vw_state_item(s);
    if (e->kind == KS_EV_WORK && it != VW_NONE) { /* the item whole: its lone sample, as drawn */
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0, n = 0; k < item->count; ++k) {
            const ks_event *x = vw_event(s->tr, vw_item_ev(s->idx, item, k));
            if (x->kind == KS_EV_SAMPLE && n++ == 0) e = x;
            else if (x->kind == KS_EV_SAMPLE) return -1;
        }
    }
    if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE && e->kind != KS_EV_SAMPLE) return -1;
    const int64_t plane = e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane;
    int any = -1;
    for (int p = 0; p < 2; ++p)
        if (s->panel[p].tensor == (int)e->tensor) {
            if (s->panel[p].plane == plane) return p;
            if (any < 0) any = p;
        }
    return any;
}

/* vw_view.h */
int vw_window_text(const vw_state *s, int p, const vw_heatmap *m, int64_t wy0, int64_t wy1, int64_t wx0, int64_t wx1,
                   char *buf, size_t n)
{
    int64_t y0 = 0, x0 = 0, y1 = m->rows - 1, x1 = m->cols - 1;
    if (vw_effective_mode(s, p) == VW_MODE_VALUES && !vw_filled_box(s, p, &y0, &x0, &y1, &x1))
        y0 = 0, x0 = 0, y1 = m->rows - 1, x1 = m->cols - 1;
    const int rows = y0 < wy0 || y1 >= wy1, cols = x0 < wx0 || x1 >= wx1;
    if (!rows && !cols) return 0;
    if (rows && cols)
        snprintf(buf, n, "rows %lld..%lld, cols %lld..%lld", (long long)wy0, (long long)wy1 - 1, (long long)wx0,
                 (long long)wx1 - 1);
    else if (rows) snprintf(buf, n, "rows %lld..%lld", (long long)wy0, (long long)wy1 - 1);
    else snprintf(buf, n, "cols %lld..%lld", (long long)wx0, (long long)wx1 - 1);
    return 1;
}

/* vw_view.h */
int vw_window_slice(const vw_state *s, int p, const vw_heatmap *m, int64_t wy0, int64_t wy1, int64_t wx0, int64_t wx1,
                    int cols, char *buf, size_t n)
{
    char where[128], ax[2][48];
    vw_describe_panel_where(s, p, where, sizeof where);
    const int64_t lo[2] = {wy0, wx0}, hi[2] = {wy1, wx1}, all[2] = {m->rows, m->cols};
    for (int a = 0; a < 2; ++a) { /* as Python writes it: no 0 before the colon, no end after it */
        char from[24] = "", to[24] = "";
        if (lo[a] > 0) snprintf(from, sizeof from, "%lld", (long long)lo[a]);
        if (hi[a] < all[a]) snprintf(to, sizeof to, "%lld", (long long)hi[a]);
        snprintf(ax[a], sizeof ax[a], "%s:%s", from, to);
    }
    const size_t len = strlen(where);
    if (len > 5 && !strcmp(where + len - 5, ":, :]")) {
        snprintf(buf, n, "%.*s%s, %s]", (int)(len - 5), where, ax[0], ax[1]);
        if ((int)strlen(buf) <= cols) return 1;
        /* a strip: without the spaces ("columns[0,:26,:4]") */
        size_t k = 0;
        for (const char *q = buf; *q && k + 1 < sizeof where; ++q)
            if (!(*q == ' ' && q > buf && q[-1] == ',')) where[k++] = *q;
        where[k] = 0;
        if ((int)k <= cols) {
            snprintf(buf, n, "%s", where);
            return 1;
        }
    }
    const ks_tensor *T = &s->tr->tensors[s->panel[p].tensor];
    if (vw_plane_dims_of(T).planes != 1 && strchr(where, '[')) return 0;
    snprintf(buf, n, "%s[%s, %s]", T->name, ax[0], ax[1]);
    if ((int)strlen(buf) > cols) snprintf(buf, n, "%s[%s,%s]", T->name, ax[0], ax[1]); /* a strip: "columns[:15,:2]" */
    return (int)strlen(buf) <= cols;
}


int vw_window_name_chars(const vw_state *s, const vw_layout *L, int panel)
{
    if (!s->nslides || s->panel[panel].tensor < 0) return 0;
    const vw_heatmap m = vw_panel_map(s, L, panel);
    const vw_rect map = vw_panel_map_area(L, panel);
    const double cw = m.cell > 0 ? m.cell : 1;
    /* the whole cells in view (the drawing names those that print their numbers) */
    const int64_t vy0 = (int64_t)fmax(0, ceil((map.y - m.oy) / cw - 1e-6)),
                  vy1 = (int64_t)fmin((double)m.rows, floor((map.y + map.h - m.oy) / cw + 1e-6)),
                  vx0 = (int64_t)fmax(0, ceil((map.x - m.ox) / cw - 1e-6)),
                  vx1 = (int64_t)fmin((double)m.cols, floor((map.x + map.w - m.ox) / cw + 1e-6));
    char win[112], sl[224];
    if (vy1 <= vy0 || vx1 <= vx0 || !vw_window_text(s, panel, &m, vy0, vy1, vx0, vx1, win, sizeof win)) return 0;
    if (!vw_window_slice(s, panel, &m, vy0, vy1, vx0, vx1, 1 << 20, sl, sizeof sl)) return 0;
    int n = 0; /* without the spaces after its commas, as a strip writes it */
    for (const char *q = sl; *q; ++q) n += !(*q == ' ' && q > sl && q[-1] == ',');
    return n;
}
