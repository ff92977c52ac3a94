/* vw_view.c - which part of a plane a heatmap panel shows, and where: the whole plane
 * fitted (planes whose cells come out big enough), a window around the focused work
 * item's accesses (auto-zoom: the deformable samples over a 128x96 picture), all rows of
 * a very wide plane and a window of its columns (the columns matrix of a 640x480 image),
 * or where the user zoomed and panned (Z / X, the wheel, Shift+arrows, a right drag). */
#include <math.h>
#include <string.h>

#include "vw_plane.h"
#include "vw_state.h"

#define AUTO_CELL 7  /* whole-plane cells smaller than this (pixels) zoom to the focus */
#define MIN_WINDOW 8 /* an auto-zoomed window is at least this many cells a side */
#define MIN_SHORT 16 /* a very wide plane shows at least this many columns (a tall one rows) */
#define ZOOM_STEP 1.25
#define ZOOM_MAX 4096.0

vw_rect vw_panel_map_area(const vw_layout *L, int panel)
{
    vw_rect area = panel ? L->output : L->input;
    area.y += L->line + 4; /* the panel's header line */
    area.h -= L->line + 4;
    if (area.h < 1) area.h = 1;
    if (area.w < 1) area.w = 1;
    return area;
}

/* The cells of the plane a whole-plane view shows: all of them, or for a plane so wide
 * (tall) that its fitted picture would leave the panel two thirds empty, all its rows
 * (columns) and a window of the rest. Sets *whole when that is the plain fit. */
static double base_cell(vw_rect a, int64_t rows, int64_t cols, int margin, int *whole)
{
    const double h = (double)(rows + 2 * margin), w = (double)(cols + 2 * margin);
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

int vw_focus_bbox(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1)
{
    const uint32_t it = vw_state_item(s);
    const int t = s->panel[panel].tensor;
    if (it == VW_NONE || t < 0) return 0;
    const vw_item *item = &s->idx->items[it];
    double a = INFINITY, b = INFINITY, c = -INFINITY, d = -INFINITY;
    for (uint32_t k = 0; k < item->count; ++k) {
        const ks_event *e = vw_event(s->tr, s->idx->by_item[item->first + k]);
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
    if (!(a <= c)) return 0;
    *y0 = a, *x0 = b, *y1 = c, *x1 = d;
    return 1;
}

/* The centre coordinate of one axis: the plane's middle when the window holds it all,
 * else c kept so the window stays on the plane and its margin. */
static double clamp_centre(double c, double cells_visible, int64_t n, int margin)
{
    if (cells_visible >= (double)(n + 2 * margin)) return ((double)n - 1) / 2;
    const double lo = -margin + cells_visible / 2 - 0.5, hi = (double)(n + margin) - cells_visible / 2 - 0.5;
    return c < lo ? lo : c > hi ? hi : c;
}

vw_heatmap vw_panel_map(const vw_state *s, const vw_layout *L, int panel)
{
    const vw_rect area = vw_panel_map_area(L, panel);
    const int t = s->panel[panel].tensor;
    if (t < 0) return vw_heatmap_fit(area, 1, 1, 0);
    vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[t]);
    if (d.h < 1) d.h = 1;
    if (d.w < 1) d.w = 1;
    /* room for padding reads outside small planes */
    const int margin = s->idx && d.h * d.w <= 4096 ? s->idx->margin[t] : 0;
    int whole;
    const double base = base_cell(area, d.h, d.w, margin, &whole);
    const vw_panel *p = &s->panel[panel];
    double cell = base, cy = ((double)d.h - 1) / 2, cx = ((double)d.w - 1) / 2, y0, x0, y1, x1;
    const int focus = vw_focus_bbox(s, panel, &y0, &x0, &y1, &x1);
    if (p->zoom > 0) { /* where the user put it */
        cell = base * p->zoom;
        cy = p->cy, cx = p->cx;
    } else if (focus && s->autozoom && base < AUTO_CELL) { /* the focused accesses, with room */
        const double wh = fmax(y1 - y0 + 5, MIN_WINDOW), ww = fmax(x1 - x0 + 5, MIN_WINDOW);
        cell = fmax(base, fmin(area.h / wh, area.w / ww));
        cy = (y0 + y1) / 2, cx = (x0 + x1) / 2;
    } else if (focus && !whole) { /* a window of a wide plane: where the focus is */
        cy = (y0 + y1) / 2, cx = (x0 + x1) / 2;
    }
    if (cell == base && whole) return vw_heatmap_fit(area, d.h, d.w, margin);
    if (cell >= 2) cell = floor(cell);
    vw_heatmap m = {.cell = cell, .rows = d.h, .cols = d.w, .margin = margin};
    cy = clamp_centre(cy, area.h / cell, d.h, margin);
    cx = clamp_centre(cx, area.w / cell, d.w, margin);
    m.ox = floor(area.x + area.w / 2.0 - (cx + 0.5) * cell);
    m.oy = floor(area.y + area.h / 2.0 - (cy + 0.5) * cell);
    return m;
}

/* Makes panel p's view the user's: its current cell size and centre, from here on moved
 * only by zoom and pan. */
static void take_view(vw_state *s, const vw_layout *L, int panel, vw_heatmap *m, double *base)
{
    const vw_rect area = vw_panel_map_area(L, panel);
    vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[s->panel[panel].tensor]);
    int whole;
    *m = vw_panel_map(s, L, panel);
    *base = base_cell(area, d.h < 1 ? 1 : d.h, d.w < 1 ? 1 : d.w, m->margin, &whole);
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
