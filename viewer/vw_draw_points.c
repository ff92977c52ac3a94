/* vw_draw_points.c - the focused work item's region points (ks_probe_point: sparse
 * convolution's input and output sites, RoIAlign's argmax) and arrows: a ring at each point
 * (a frame on its cell's edge where the cells print numbers), its tap beside the cell when
 * the trace's points carry taps and the cells are big enough to hold the number, and on
 * the input panel an arrow from each point to the position of the item's
 * point on the output panel's tensor when both tensors have planes of one size
 * (vw_point_target: a submanifold pair, input site -> output site). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_draw_int.h"
#include "vw_labels.h"

void vw_draw_arrow(SDL_Renderer *r, int x0, int y0, int x1, int y1, uint32_t col)
{
    vw_color(r, col);
    SDL_RenderDrawLine(r, x0, y0, x1, y1);
    const double len = hypot(x1 - x0, y1 - y0);
    if (len < 6) return;
    /* arrowhead: two strokes back from the tip, 25 degrees either side */
    const double ux = (x0 - x1) / len, uy = (y0 - y1) / len, c = cos(0.44), sn = sin(0.44);
    for (int side = -1; side <= 1; side += 2) {
        const double hx = ux * c - side * uy * sn, hy = side * ux * sn + uy * c;
        SDL_RenderDrawLine(r, x1, y1, x1 + (int)lround(hx * 7), y1 + (int)lround(hy * 7));
    }
}

/* A ring of radius rad, `t` pixels thick, around (cx, cy). */
static void ring(SDL_Renderer *r, int cx, int cy, int rad, int t, uint32_t col)
{
    vw_color(r, col);
    for (int dy = -rad; dy <= rad; ++dy)
        for (int dx = -rad; dx <= rad; ++dx) {
            const int d2 = dx * dx + dy * dy;
            if (d2 <= rad * rad && d2 > (rad - t) * (rad - t)) SDL_RenderDrawPoint(r, cx + dx, cy + dy);
        }
}

static int on_plane(const vw_box *b, const vw_state *s, int panel)
{
    return vw_box_is_point(b) && b->tensor == s->panel[panel].tensor && b->plane == s->panel[panel].plane &&
           fabs(b->y0) <= 1e6 && fabs(b->x0) <= 1e6;
}

enum { MAX_TAPS = 16 };

/* The points' tap labels in value font k, placed: off the step's cells, the labels and
 * every number, and off the other cells that print one where there is room (a tap's "1"
 * in a site's cell read as that site's "4 1": issue 38 D3, 08 s4 and s17); else over the
 * numbers. Returns how many; *clean: placed off every number and cell; *far: the
 * farthest a label lies from its point. */
static int place_taps(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, const vw_box *b, int n, int rad,
                      vw_rect bounds, int k, vw_label *l, int *tap, uint32_t *col, int *clean, int *far)
{
    static vw_rect avoid[VW_REC_FOCUS + VW_REC_LABELS + 2 * VW_REC_VALUES];
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const vw_font *f = vw_value_font(d, k);
    const uint32_t focus = vw_state_event(s);
    int nl = 0;
    for (int i = 0; i < n && nl < MAX_TAPS; ++i) {
        if (!on_plane(&b[i], s, panel)) continue;
        int px, py;
        vw_heatmap_point(m, b[i].y0, b[i].x0, &px, &py);
        char t[12];
        snprintf(t, sizeof t, "%d", b[i].tap);
        tap[nl] = b[i].tap;
        const int edge = (int)lround(rad * 0.7071);
        l[nl] = (vw_label){.ax = px - edge,
                           .ay = py - edge,
                           .w = (int)strlen(t) * f->advance + 8,
                           .h = f->line + 4,
                           .cell = vw_heatmap_cell(m, (int64_t)floor(b[i].y0 + 0.5), (int64_t)floor(b[i].x0 + 0.5)),
                           .dx = -1,
                           .dy = -1,
                           .gx = m->ox,
                           .gy = m->oy,
                           .gcell = m->cell};
        col[nl++] = b[i].event == focus ? VW_COL_FOCUS : VW_COL_HEAD;
    }
    *clean = 0, *far = 0;
    if (!nl) return 0;
    int na = 0;
    for (int i = 0; i < rp->nfocus; ++i) avoid[na++] = rp->focus[i];
    for (int i = 0; i < d->rec.nlabels; ++i) avoid[na++] = d->rec.labels[i].box;
    na += vw_value_boxes(d, panel, avoid + na, VW_REC_VALUES);
    vw_label was[MAX_TAPS];
    memcpy(was, l, sizeof was);
    const int cells = vw_value_cells(d, panel, m, -1, -1, avoid + na, VW_REC_VALUES);
    *clean = !vw_place_labels(l, nl, bounds, avoid, na + cells, 3) && !vw_labels_in_other_cells(d, panel, m, l, nl);
    if (!*clean) {
        memcpy(l, was, sizeof was);
        vw_place_labels(l, nl, bounds, avoid, na, 3);
    }
    for (int i = 0; i < nl; ++i) *far = vw_label_far(&l[i]) > *far ? vw_label_far(&l[i]) : *far;
    return nl;
}

/* The taps of the points on panel `panel`: each beside its point's cell (place_taps),
 * with a leader from the ring's upper-left edge (issue 38 D3: lesson 08's offset label
 * covered the site it names); recorded as VW_LABEL_TAP. A size up from the least
 * legible, as a corner's weight, where that keeps off every number and as near its point
 * (issue 38, thirteenth re-trial: 08 s2's "1", the offset k the narration points at, was
 * 9 px of ink at 1024x768 beside 12 px cell digits; the fifteenth: 08 s9's went 150 px
 * off at that size, and keeps the cells' label size there). */
static void draw_taps(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, const vw_box *b, int n, int rad,
                      vw_rect bounds)
{
    vw_label l[MAX_TAPS], lu[MAX_TAPS];
    int tap[MAX_TAPS], tu[MAX_TAPS];
    uint32_t col[MAX_TAPS], cu[MAX_TAPS];
    const int least = vw_label_font(d, m->cell), up = vw_weight_font(d);
    int k = least, clean, far, clean_up, far_up;
    int nl = place_taps(d, m, s, panel, b, n, rad, bounds, least, l, tap, col, &clean, &far);
    if (!nl) return;
    if (up < least && place_taps(d, m, s, panel, b, n, rad, bounds, up, lu, tu, cu, &clean_up, &far_up) == nl &&
        clean_up && far_up <= far + m->cell / 2) {
        memcpy(l, lu, sizeof l), memcpy(tap, tu, sizeof tap), memcpy(col, cu, sizeof col);
        k = up;
    }
    const vw_font *f = vw_value_font(d, k);
    const vw_rec_panel *rp = &d->rec.panel[panel];
    for (int i = 0; i < nl; ++i) {
        int pts[VW_LEADER_PTS][2], npts = 0;
        if (l[i].leader) {
            npts = vw_route_leader(&l[i], rp->focus, rp->nfocus, m->ox, m->oy, m->cell, pts);
            vw_leader(d->r, pts, npts ? npts : 2, col[i]);
            if (!npts) npts = 2;
        }
        const vw_rect bg = {.x = l[i].box.x + 2, .y = l[i].box.y + 2, .w = l[i].box.w - 4, .h = l[i].box.h - 4};
        vw_fill(d->r, bg, 0x000000);
        char t[12];
        snprintf(t, sizeof t, "%d", tap[i]);
        vw_text(f, d->r, bg.x + 2, bg.y, col[i], 0, t);
        vw_rec_add_label(&d->rec, panel, VW_LABEL_TAP, &l[i], pts, npts, vw_value_font_px(d, k), t);
    }
}

void vw_draw_points(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, const vw_box *b, int n,
                    vw_rect bounds)
{
    const uint32_t focus = vw_state_event(s);
    /* where the cells print their numbers a point frames its cell, on the cell's edge, so
     * it never covers the site's number (issue 38 D3; a ring crossed the digits of small
     * cells); else a ring of 0.3 cell */
    const int framed = d->rec.panel[panel].values && m->cell >= 16;
    const int rad = framed ? (int)(m->cell * 0.47) : m->cell >= 160 ? 48 : m->cell >= 16 ? (int)(m->cell * 0.3) : 5;
    /* arrows first, so the rings and labels sit on top of them */
    for (int k = 0; k < n && panel == 0; ++k) {
        double ty, tx;
        int px, py, qx, qy;
        if (!on_plane(&b[k], s, panel) || !vw_point_target(s->tr, b, n, k, s->panel[1].tensor, &ty, &tx) ||
            !(fabs(ty) <= 1e6) || !(fabs(tx) <= 1e6))
            continue;
        vw_heatmap_point(m, b[k].y0, b[k].x0, &px, &py);
        vw_heatmap_point(m, ty, tx, &qx, &qy);
        const uint32_t col = b[k].event == focus ? VW_COL_FOCUS : VW_COL_HEAD;
        /* where it lands: a small box, or over a printed number a thin ring round it that
         * the arrow stops at */
        const double len = hypot(qx - px, qy - py);
        if (framed) {
            vw_outline(d->r, vw_heatmap_cell(m, (int64_t)floor(ty + 0.5), (int64_t)floor(tx + 0.5)), VW_COL_HEAD, 1,
                       -1);
        } else {
            vw_rect where = {.x = qx - 4, .y = qy - 4, .w = 9, .h = 9};
            vw_outline(d->r, where, VW_COL_HEAD, 1, 0);
        }
        /* from the ring's edge, so the arrow does not hide the point */
        if (len <= (framed ? 2 * rad : rad) + 6) continue;
        const int sx = px + (int)lround((qx - px) * rad / len), sy = py + (int)lround((qy - py) * rad / len);
        if (framed) qx -= (int)lround((qx - px) * rad / len), qy -= (int)lround((qy - py) * rad / len);
        /* two pixels wide: a second line beside the first, across its main direction */
        const int ox = abs(qy - py) > abs(qx - px), oy = !ox;
        vw_color(d->r, col);
        SDL_RenderDrawLine(d->r, sx + ox, sy + oy, qx + ox, qy + oy);
        vw_draw_arrow(d->r, sx, sy, qx, qy, col);
    }
    for (int k = 0; k < n; ++k) {
        if (!on_plane(&b[k], s, panel)) continue;
        int px, py;
        vw_heatmap_point(m, b[k].y0, b[k].x0, &px, &py);
        const uint32_t col = b[k].event == focus ? VW_COL_FOCUS : VW_COL_HEAD;
        if (framed) { /* inside the cell's edge, a dark line within it for pale cells */
            const vw_rect cell = vw_heatmap_cell(m, (int64_t)floor(b[k].y0 + 0.5), (int64_t)floor(b[k].x0 + 0.5));
            vw_outline(d->r, cell, 0x000000, 1, -3);
            vw_outline(d->r, cell, col, 2, -1);
            vw_rec_add_dot(&d->rec, panel, cell,
                           (vw_rect){.x = cell.x + 4, .y = cell.y + 4, .w = cell.w - 8, .h = cell.h - 8},
                           b[k].event == focus);
            continue;
        }
        ring(d->r, px, py, rad + 1, 4, 0x000000); /* a dark edge: the ring shows on pale cells too */
        ring(d->r, px, py, rad, 2, col);
        /* the record: the ring and its clear middle (the square its inner edge holds) */
        const int in = (int)floor((rad - 3) / 1.4142), out = rad + 1;
        vw_rec_add_dot(&d->rec, panel, (vw_rect){.x = px - out, .y = py - out, .w = 2 * out + 1, .h = 2 * out + 1},
                       (vw_rect){.x = px - in, .y = py - in, .w = 2 * in + 1, .h = 2 * in + 1}, b[k].event == focus);
        vw_rect dot = {.x = px - 1, .y = py - 1, .w = 3, .h = 3}; /* the point itself */
        vw_fill(d->r, dot, col);
        vw_rec_add_dot(&d->rec, panel, dot, (vw_rect){0}, b[k].event == focus);
    }
    if (s->idx && s->idx->point_taps && m->cell >= d->font.line + 4) draw_taps(d, m, s, panel, b, n, rad, bounds);
}
