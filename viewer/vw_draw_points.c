/* vw_draw_points.c - the focused work item's region points (ks_probe_point: sparse
 * convolution's input and output sites, RoIAlign's argmax) and arrows: a ring at each point,
 * its tap when the trace's points carry taps and the cells are big enough to hold the
 * number, and on the input panel an arrow from each point to the position of the item's
 * point on the output panel's tensor when both tensors have planes of one size
 * (vw_point_target: a submanifold pair, input site -> output site). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_draw_int.h"

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

void vw_draw_points(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, const vw_box *b, int n)
{
    const uint32_t focus = vw_state_event(s);
    const int rad = m->cell >= 160 ? 48 : m->cell >= 16 ? (int)(m->cell * 0.3) : 5;
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
        vw_rect where = {.x = qx - 4, .y = qy - 4, .w = 9, .h = 9};
        vw_outline(d->r, where, VW_COL_HEAD, 1, 0);
        /* from the ring's edge, so the arrow does not hide the point */
        const double len = hypot(qx - px, qy - py);
        if (len <= rad + 6) continue;
        const int sx = px + (int)lround((qx - px) * rad / len), sy = py + (int)lround((qy - py) * rad / len);
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
        ring(d->r, px, py, rad + 1, 4, 0x000000); /* a dark edge: the ring shows on pale cells too */
        ring(d->r, px, py, rad, 2, col);
        vw_rect dot = {.x = px - 1, .y = py - 1, .w = 3, .h = 3};
        vw_fill(d->r, dot, col);
        if (s->idx && s->idx->point_taps && m->cell >= d->font.line + 4) {
            char tap[12];
            snprintf(tap, sizeof tap, "%d", b[k].tap);
            const vw_rect cell = vw_heatmap_cell(m, (int64_t)floor(b[k].y0 + 0.5), (int64_t)floor(b[k].x0 + 0.5));
            vw_rect bg = {.x = cell.x + 1,
                          .y = cell.y + 1,
                          .w = (int)strlen(tap) * d->font.advance + 3,
                          .h = d->font.line};
            vw_fill(d->r, bg, 0x000000);
            vw_text(&d->font, d->r, bg.x + 2, bg.y, col, 0, tap);
        }
    }
}
