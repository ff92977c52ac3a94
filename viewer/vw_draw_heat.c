/* vw_draw_heat.c - a tensor plane as a heatmap, its legend, and the focused work item's
 * cells, padding reads and sample points drawn over it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_anchor.h"
#include "vw_boxes.h"
#include "vw_colormap.h"
#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_plane.h"

double vw_heat_value(const vw_state *s, int t, int64_t off, vw_mode mode)
{
    const vw_aggregate *a = s->idx ? &s->idx->agg[t] : NULL;
    switch (mode) {
    case VW_MODE_READS: return a->reads[off];
    case VW_MODE_WEIGHTS: return a->weights[off];
    case VW_MODE_WRITES: return a->writes[off];
    case VW_MODE_VISITS: return a->visits[off];
    case VW_MODE_SECTORS: return vw_sectors_at(s->idx, t, off);
    default: return vw_tensor_value(&s->tr->tensors[t], off);
    }
}

/* Aggregate modes need the index and a tensor small enough to have aggregates. */
static vw_mode effective_mode(const vw_state *s, int t)
{
    if (s->mode == VW_MODE_SECTORS) return s->idx && s->idx->agg[t].sector_n ? s->mode : VW_MODE_VALUES;
    if (s->mode != VW_MODE_VALUES && s->idx && s->idx->agg[t].reads) return s->mode;
    return VW_MODE_VALUES;
}

/* Rebuilds the panel's texture: one texel per cell, or the mean of a block of cells
 * when the plane has more cells than the panel has pixels. Values of an integer tensor's
 * empty cells (negative) are left out: a texel with only empty cells is background. */
static void build_texture(vw_draw *d, const vw_state *s, int panel, vw_heat_cache *c,
                          const vw_heatmap *m)
{
    int t = s->panel[panel].tensor;
    const ks_tensor *T = &s->tr->tensors[t];
    vw_plane_dims pd = vw_plane_dims_of(T);
    int64_t plane = s->panel[panel].plane;
    vw_mode mode = effective_mode(s, t);
    if (plane < 0 || plane >= pd.planes) plane = 0, pd.h = pd.w = 0; /* never read outside the tensor */
    const int64_t base = plane * pd.h * pd.w;
    const int sparse = mode == VW_MODE_VALUES && T->dtype != KS_F32;
    double vw = m->cell * (double)pd.w, vh = m->cell * (double)pd.h;
    int tw = pd.w < vw ? (int)pd.w : (int)(vw > 1 ? vw : 1);
    int th = pd.h < vh ? (int)pd.h : (int)(vh > 1 ? vh : 1);
    double *acc = malloc((size_t)tw * th * sizeof *acc);
    uint32_t *px = malloc((size_t)tw * th * sizeof *px);
    uint8_t *none = malloc((size_t)tw * th); /* a texel with no cell to show: background */
    double lo = INFINITY, hi = -INFINITY;
    int64_t empty = 0;
    if (!acc || !px || !none) goto out;
    for (int ty = 0; ty < th; ++ty) {
        int64_t y0 = ty * pd.h / th, y1 = (ty + 1) * pd.h / th;
        for (int tx = 0; tx < tw; ++tx) {
            int64_t x0 = tx * pd.w / tw, x1 = (tx + 1) * pd.w / tw;
            double sum = 0;
            int64_t used = 0;
            for (int64_t y = y0; y < y1; ++y)
                for (int64_t x = x0; x < x1; ++x) {
                    const int64_t off = base + y * pd.w + x;
                    if (sparse && vw_cell_empty(T, off)) {
                        empty++;
                        continue;
                    }
                    const double v = vw_heat_value(s, t, off, mode);
                    if (mode == VW_MODE_SECTORS && v < 0) continue; /* no request touched it */
                    sum += v;
                    used++;
                }
            double v = used ? sum / (double)used : 0;
            acc[(size_t)ty * tw + tx] = v;
            none[(size_t)ty * tw + tx] = !used;
            if (!used) continue;
            if (isfinite(v) && v < lo) lo = v;
            if (isfinite(v) && v > hi) hi = v;
        }
    }
    if (mode != VW_MODE_VALUES && lo > 0) lo = 0; /* counts start at zero */
    if (!(lo <= hi)) lo = hi = 0;
    if (mode == VW_MODE_SECTORS) lo = 1, hi = 32; /* one scale for every plane and trace */
    c->ramp0 = empty ? 0.25 : 0;
    for (size_t i = 0; i < (size_t)tw * th; ++i) {
        uint32_t col = VW_COL_NAN;
        if (none[i]) col = VW_COL_PANEL;
        else if (isfinite(acc[i])) col = vw_colormap(c->ramp0 + (1 - c->ramp0) * vw_heat_t(mode, acc[i], lo, hi));
        px[i] = 0xFF000000u | col;
    }
    c->tex = SDL_CreateTexture(d->r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STATIC, tw, th);
    if (c->tex) SDL_UpdateTexture(c->tex, NULL, px, tw * (int)sizeof *px);
out:
    free(acc);
    free(px);
    free(none);
    c->lo = lo;
    c->hi = hi;
    c->empty = empty;
    c->mode = mode;
}

/* Margin cells (outside the plane, where padding reads land) as a dim checkerboard. */
static void draw_margin(SDL_Renderer *r, const vw_heatmap *m)
{
    if (!m->margin || m->cell < 4) return;
    for (int64_t y = -m->margin; y < m->rows + m->margin; ++y)
        for (int64_t x = -m->margin; x < m->cols + m->margin; ++x) {
            if (y >= 0 && y < m->rows && x >= 0 && x < m->cols) continue;
            vw_fill(r, vw_heatmap_cell(m, y, x), ((y + x) & 1) ? 0x2C2C34 : 0x34343E);
        }
}

static void draw_legend(vw_draw *d, const vw_state *s, const vw_layout *L, int panel,
                        const vw_heat_cache *c)
{
    vw_rect lg = panel ? L->output_legend : L->input_legend;
    int bar_w = lg.w < 512 ? lg.w : 512;
    for (int i = 0; i < bar_w; ++i) {
        vw_rect px = {.x = lg.x + i, .y = lg.y, .w = 1, .h = 10};
        vw_fill(d->r, px, vw_colormap(c->ramp0 + (1 - c->ramp0) * i / (bar_w > 1 ? bar_w - 1 : 1)));
    }
    char lo[48], hi[48], mid[64];
    vw_format_value(lo, sizeof lo, c->lo);
    vw_format_value(hi, sizeof hi, c->hi);
    snprintf(mid, sizeof mid, "%s", vw_mode_name((vw_mode)c->mode));
    if (s->mode != c->mode) snprintf(mid, sizeof mid, "values (%s: %s)", vw_mode_name(s->mode),
                                     s->idx ? (s->mode == VW_MODE_SECTORS ? "trace too big" : "tensor too big")
                                            : "after indexing");
    else if (c->empty) snprintf(mid, sizeof mid, "values, %lld empty (< 0)", (long long)c->empty);
    else if (c->mode == VW_MODE_SECTORS) snprintf(mid, sizeof mid, "sectors per request (log2 scale)");
    int ty = lg.y + 12;
    vw_text(&d->font, d->r, lg.x, ty, VW_COL_TEXT, 0, lo);
    vw_text(&d->font, d->r, lg.x + bar_w - (int)strlen(hi) * d->font.advance, ty, VW_COL_TEXT, 0, hi);
    vw_text(&d->font, d->r, lg.x + bar_w / 2 - (int)strlen(mid) * d->font.advance / 2, ty,
            VW_COL_DIM, 0, mid);
}

void vw_draw_heatmap(vw_draw *d, const vw_state *s, const vw_layout *L, int panel)
{
    vw_rect area = panel ? L->output : L->input;
    vw_heat_cache *c = &d->heat[panel];
    int t = s->panel[panel].tensor;
    char head[VW_LINE_LEN];
    vw_fill(d->r, area, VW_COL_PANEL);
    if (t < 0) {
        vw_describe_panel(s, panel, 0, 0, head, sizeof head);
        vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_DIM, area.w - 8, head);
        return;
    }
    vw_heatmap m = vw_panel_map(s, L, panel);
    if (!c->tex || c->tensor != t || c->plane != s->panel[panel].plane ||
        c->indexed != (s->idx != NULL) || (c->mode != effective_mode(s, t)) ||
        memcmp(&c->area, &area, sizeof area)) {
        if (c->tex) SDL_DestroyTexture(c->tex);
        c->tex = NULL;
        c->tensor = t;
        c->plane = s->panel[panel].plane;
        c->indexed = s->idx != NULL;
        c->area = area;
        build_texture(d, s, panel, c, &m);
    }
    vw_describe_panel(s, panel, c->lo, c->hi, head, sizeof head);
    vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_TEXT, area.w - 8, head);
    draw_margin(d->r, &m);
    int x0 = (int)floor(m.ox), y0 = (int)floor(m.oy);
    SDL_Rect dst = {.x = x0, .y = y0, .w = (int)floor(m.ox + m.cell * (double)m.cols) - x0,
                    .h = (int)floor(m.oy + m.cell * (double)m.rows) - y0};
    if (dst.w < 1) dst.w = 1;
    if (dst.h < 1) dst.h = 1;
    if (c->tex) SDL_RenderCopy(d->r, c->tex, NULL, &dst);
    vw_draw_cell_values(d, s, &m, area, panel, c);
    vw_draw_bars(d, s, L, panel, c, &m);
    draw_legend(d, s, L, panel, c);
}

/* A cell's outline that stays visible on tiny cells: at least 7 px across. */
static vw_rect visible(vw_rect r)
{
    if (r.w < 7) {
        r.x -= (7 - r.w) / 2;
        r.w = 7;
    }
    if (r.h < 7) {
        r.y -= (7 - r.h) / 2;
        r.h = 7;
    }
    return r;
}

/* The regular kernel-grid position (a hollow square) and an arrow from it to the sample:
 * the deformable-convolution picture. */
static void draw_anchor(vw_draw *d, const vw_heatmap *m, const float anchor[2], int px, int py,
                        int focused)
{
    int ax, ay;
    if (!isfinite(anchor[0]) || !isfinite(anchor[1]) || fabsf(anchor[0]) > 1e6f || fabsf(anchor[1]) > 1e6f)
        return;
    vw_heatmap_point(m, anchor[0], anchor[1], &ax, &ay);
    const unsigned col = focused ? VW_COL_FOCUS : VW_COL_HEAD;
    vw_rect box = {.x = ax - 3, .y = ay - 3, .w = 7, .h = 7};
    vw_outline(d->r, box, col, 1, 0);
    vw_draw_arrow(d->r, ax, ay, px, py, col);
}

static void draw_sample(vw_draw *d, const vw_heatmap *m, const ks_event *e,
                        int focused, const float *anchor, vw_rect bounds)
{
    int64_t ys[2], xs[2];
    int px, py;
    /* NaN, Inf or absurd coordinates (a broken kernel's) have no place to draw */
    if (!isfinite(e->u.sample.y) || !isfinite(e->u.sample.x) || fabsf(e->u.sample.y) > 1e6f ||
        fabsf(e->u.sample.x) > 1e6f)
        return;
    vw_sample_corners(e, ys, xs);
    vw_heatmap_point(m, e->u.sample.y, e->u.sample.x, &px, &py);
    if (anchor) draw_anchor(d, m, anchor, px, py, focused);
    for (int c = 0; c < 4; ++c) {
        int cx, cy;
        int valid = (e->flags & (KS_FLAG_C00 << c)) != 0;
        if (ys[c >> 1] == INT32_MIN || xs[c & 1] == INT32_MIN) continue;
        vw_heatmap_point(m, (double)ys[c >> 1], (double)xs[c & 1], &cx, &cy);
        if (focused) {
            vw_color(d->r, valid ? VW_COL_VALID : VW_COL_INVALID);
            SDL_RenderDrawLine(d->r, px, py, cx, cy);
            vw_rect corner = {.x = cx - 3, .y = cy - 3, .w = 7, .h = 7};
            vw_outline(d->r, corner, valid ? VW_COL_VALID : VW_COL_INVALID, 2, 0);
        }
    }
    if (focused && m->cell >= d->font.line) vw_draw_sample_weights(d, m, e, bounds);
    vw_rect dot = {.x = px - 2, .y = py - 2, .w = 5, .h = 5};
    vw_fill(d->r, dot, focused ? VW_COL_FOCUS : VW_COL_ITEM);
    if (focused) {
        vw_rect ring = {.x = px - 6, .y = py - 6, .w = 13, .h = 13};
        vw_outline(d->r, ring, VW_COL_FOCUS, 2, 0);
    }
}

static int on_panel(const vw_state *s, int panel, const ks_event *e)
{
    if (e->kind == KS_EV_WORK || e->kind == KS_EV_REGION || e->tensor != s->panel[panel].tensor) return 0;
    return (e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane) == s->panel[panel].plane;
}

static void draw_event(vw_draw *d, const vw_heatmap *m, const ks_event *e,
                       int focused, const vw_state *s, uint32_t item, vw_rect bounds)
{
    if (e->kind == KS_EV_SAMPLE) {
        float a[2];
        const int anchored = vw_sample_anchor(s->tr, s->idx, item, e, &a[0], &a[1]);
        draw_sample(d, m, e, focused, anchored ? a : NULL, bounds);
        return;
    }
    const ks_ev_access *a = &e->u.access;
    int pad = e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING);
    /* cells beyond the drawn margin are not drawn */
    if (a->y < -m->margin || a->y >= m->rows + m->margin || a->x < -m->margin ||
        a->x >= m->cols + m->margin)
        return;
    vw_rect cell = vw_heatmap_cell(m, a->y, a->x);
    if (focused) {
        vw_outline(d->r, visible(cell), VW_COL_FOCUS, 3, 1);
    } else {
        vw_outline(d->r, m->cell >= 7 ? cell : visible(cell), pad ? VW_COL_PADDING : VW_COL_ITEM,
                   m->cell >= 12 ? 2 : 1, 0);
    }
    if (pad && m->cell >= 14)
        vw_text(&d->font, d->r, cell.x + cell.w / 2 - d->font.advance / 2,
                cell.y + cell.h / 2 - d->font.line / 2, VW_COL_PADDING, 0, "0");
}

/* the item's region events (a RoI and its bins, a patch, points): outlines in continuous
 * coordinates on the panel showing their tensor and plane; points in vw_draw_points */
static void draw_boxes(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, uint32_t it)
{
    static vw_box b[1024]; /* a reduce item's sites: one per contributing offset */
    const int n = vw_item_boxes(s->tr, s->idx, it, b, 1024);
    for (int k = n - 1; k >= 0; --k) {
        /* all four corners finite and near the plane (a NaN y1 used to reach an int cast) */
        if (vw_box_is_point(&b[k]) || b[k].tensor != s->panel[panel].tensor || b[k].plane != s->panel[panel].plane ||
            !(fabs(b[k].y0) <= 1e6) || !(fabs(b[k].x0) <= 1e6) || !(fabs(b[k].y1) <= 1e6) ||
            !(fabs(b[k].x1) <= 1e6))
            continue;
        vw_color(d->r, b[k].dim ? VW_COL_DIM : VW_COL_HEAD);
        for (int i = 0; i <= b[k].rows; ++i) { /* horizontal lines: edges and bin rows */
            int xa, ya, xb, yb;
            const double y = b[k].y0 + (b[k].y1 - b[k].y0) * i / (b[k].rows ? b[k].rows : 1);
            vw_heatmap_point(m, y, b[k].x0, &xa, &ya);
            vw_heatmap_point(m, y, b[k].x1, &xb, &yb);
            SDL_RenderDrawLine(d->r, xa, ya, xb, yb);
        }
        for (int j = 0; j <= b[k].cols; ++j) {
            int xa, ya, xb, yb;
            const double x = b[k].x0 + (b[k].x1 - b[k].x0) * j / (b[k].cols ? b[k].cols : 1);
            vw_heatmap_point(m, b[k].y0, x, &xa, &ya);
            vw_heatmap_point(m, b[k].y1, x, &xb, &yb);
            SDL_RenderDrawLine(d->r, xa, ya, xb, yb);
        }
    }
    vw_draw_points(d, m, s, panel, b, n);
}

void vw_draw_overlays(vw_draw *d, const vw_state *s, const vw_layout *L, int panel)
{
    if (s->panel[panel].tensor < 0) return;
    vw_heatmap m = vw_panel_map(s, L, panel);
    vw_rect clip = panel ? L->output : L->input;
    SDL_Rect sc = vw_sdl(clip);
    SDL_RenderSetClipRect(d->r, &sc);
    uint32_t ev = vw_state_event(s), it = vw_state_item(s);
    const ks_trace *tr = s->tr;
    /* the focused event, and its partner of the same tap (im2col's read and the columns
     * entry it is copied to), in cyan; the rest of the work item in white */
    const ks_event *f = ev != VW_NONE ? &tr->events[ev] : NULL;
    const ks_event *partner = NULL;
    if (it != VW_NONE) draw_boxes(d, &m, s, panel, it);
    if (it != VW_NONE) {
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0; k < item->count; ++k) {
            const ks_event *e = &tr->events[s->idx->by_item[item->first + k]];
            int pair = f && f->kind != KS_EV_WORK && e != f && e->tap == f->tap && e->kind != f->kind &&
                       e->kind != KS_EV_WORK && e->kind != KS_EV_REGION;
            if (pair && !partner) partner = e;
            else if (e != f && on_panel(s, panel, e)) draw_event(d, &m, e, 0, s, it, clip);
        }
    }
    vw_draw_answer_cell(d, s, &m, panel); /* under the focused event and its weight labels */
    if (partner && on_panel(s, panel, partner)) draw_event(d, &m, partner, 1, s, it, clip);
    if (f && on_panel(s, panel, f)) draw_event(d, &m, f, 1, s, it, clip);
    const vw_lookup *lk = &s->look;
    if (lk->tensor == s->panel[panel].tensor && lk->plane == s->panel[panel].plane)
        vw_outline(d->r, visible(vw_heatmap_cell(&m, lk->y, lk->x)), VW_COL_LOOKUP, 2, 3);
    if (s->hover && s->hover_panel == panel && m.cell >= 4)
        vw_outline(d->r, vw_heatmap_cell(&m, s->hover_y, s->hover_x), VW_COL_DIM, 1, 0);
    SDL_RenderSetClipRect(d->r, NULL);
}
