/* vw_draw_cells.c - text and marks inside heatmap cells: each cell's number once the
 * cells are big enough to hold it (the lessons' exact shortest form: 10.125, not 10.12),
 * the cell a question asks about once its answer shows, and the focused sample's corner
 * weights, placed so that no two labels overlap (clamped corners share one label). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../trace/step.h"
#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_labels.h"
#include "vw_plane.h"

/* Dark text on a bright cell, light text on a dark one. */
static uint32_t ink_on(uint32_t bg)
{
    const double lum = 0.299 * (bg >> 16 & 255) + 0.587 * (bg >> 8 & 255) + 0.114 * (bg & 255);
    return lum > 128 ? 0x101010 : 0xF4F4F4;
}

void vw_visible_cells(const vw_heatmap *m, vw_rect area, int64_t *y0, int64_t *y1, int64_t *x0, int64_t *x1)
{
    const double c = m->cell > 0 ? m->cell : 1;
    double a = floor((area.y - m->oy) / c), b = ceil((area.y + area.h - m->oy) / c);
    *y0 = a < 0 ? 0 : a > (double)m->rows ? m->rows : (int64_t)a;
    *y1 = b < 0 ? 0 : b > (double)m->rows ? m->rows : (int64_t)b;
    a = floor((area.x - m->ox) / c), b = ceil((area.x + area.w - m->ox) / c);
    *x0 = a < 0 ? 0 : a > (double)m->cols ? m->cols : (int64_t)a;
    *x1 = b < 0 ? 0 : b > (double)m->cols ? m->cols : (int64_t)b;
}

/* A cell's number: exact values in full (34.46875 beside 26.375), a rounded one marked
 * "~" (issue 38 D9); `narrow`: an exact value longer than its rounded form is rounded and
 * marked too, for cells too small for the full text */
static void cell_text(char *buf, size_t n, double v, int narrow)
{
    char t[40], r[40];
    int exact = vw_value_text(t, sizeof t, v);
    snprintf(r, sizeof r, "%.4g", v);
    if (narrow && exact && strlen(t) > strlen(r) + 1) exact = 0, snprintf(t, sizeof t, "%s", r);
    snprintf(buf, n, "%s%s", exact ? "" : "~", t);
}

void vw_draw_cell_values(vw_draw *d, const vw_state *s, const vw_heatmap *m, vw_rect area, int panel,
                         const vw_heat_cache *c)
{
    const int t = s->panel[panel].tensor;
    if (t < 0 || m->cell < d->font.line + 2 || d->font.advance <= 0) return;
    const ks_tensor *T = &s->tr->tensors[t];
    const vw_plane_dims pd = vw_plane_dims_of(T);
    const int64_t plane = s->panel[panel].plane;
    if (plane < 0 || plane >= pd.planes || pd.h != m->rows || pd.w != m->cols) return;
    const int64_t base = plane * pd.h * pd.w;
    const vw_mode mode = (vw_mode)c->mode;
    int64_t y0, y1, x0, x1;
    vw_visible_cells(m, area, &y0, &y1, &x0, &x1);
    if ((y1 - y0) * (x1 - x0) > 20000) return;
    char buf[48];
    /* one rule for the plane: numbers everywhere or nowhere, so none is missing */
    size_t longest = 0;
    int narrow = 0;
    for (; narrow < 2; ++narrow) { /* the full values, else the rounded ones */
        longest = 0;
        for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x) {
                cell_text(buf, sizeof buf, vw_heat_value(s, t, base + y * pd.w + x, mode), narrow);
                if (strlen(buf) > longest) longest = strlen(buf);
            }
        if ((double)longest * d->font.advance <= m->cell - 4) break;
    }
    if (narrow == 2) return;
    const int sparse = mode == VW_MODE_VALUES && T->dtype != KS_F32;
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            const int64_t off = base + y * pd.w + x;
            const double v = vw_heat_value(s, t, off, mode);
            if ((sparse && vw_cell_empty(T, off)) || (mode == VW_MODE_SECTORS && v < 0) || !isfinite(v)) continue;
            cell_text(buf, sizeof buf, v, narrow);
            const uint32_t bg = vw_heat_colour(c, v);
            const vw_rect r = vw_heatmap_cell(m, y, x);
            const int w = (int)strlen(buf) * d->font.advance;
            vw_text(&d->font, d->r, r.x + (r.w - w) / 2, r.y + (r.h - d->font.line) / 2, ink_on(bg), 0, buf);
        }
}

void vw_draw_answer_cell(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel)
{
    if (!s->nslides || !s->reveal) return;
    const vw_slide *sl = &s->slides[s->slide];
    if (!sl->has_answer_cell || sl->answer_event >= s->tr->nevents) return;
    const ks_event *e = vw_event(s->tr, sl->answer_event);
    int64_t y, x, plane;
    if (e->kind == KS_EV_SAMPLE) {
        if (!(fabsf(e->u.sample.y) < 1e6f) || !(fabsf(e->u.sample.x) < 1e6f)) return;
        plane = e->u.sample.plane, y = (int64_t)floorf(e->u.sample.y + 0.5f), x = (int64_t)floorf(e->u.sample.x + 0.5f);
    } else if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        plane = e->u.access.plane, y = e->u.access.y, x = e->u.access.x;
    } else {
        return;
    }
    if (e->tensor != s->panel[panel].tensor || plane != s->panel[panel].plane) return;
    vw_rect r = vw_heatmap_cell(m, y, x);
    if (r.w < 9) r.x -= (9 - r.w) / 2, r.w = 9;
    if (r.h < 9) r.y -= (9 - r.h) / 2, r.h = 9;
    /* 4 px of lime from 4 to 7 px outside the cell, clear of the lookup's pink (2 to 3 px)
     * and the item's outlines (inside the cell); a dark edge so it shows on pale cells */
    vw_outline(d->r, r, 0x000000, 1, 8);
    vw_outline(d->r, r, VW_COL_ANSWER, 4, 7);
}

int vw_sample_weight_labels(const ks_event *e, const vw_heatmap *m, int advance, int line, vw_rect bounds,
                            vw_weight_label out[4])
{
    int64_t ys[2], xs[2];
    vw_sample_corners(e, ys, xs);
    int n = 0;
    vw_label pl[4];
    vw_rect avoid[5];
    int px, py;
    vw_heatmap_point(m, e->u.sample.y, e->u.sample.x, &px, &py);
    avoid[0] = (vw_rect){.x = px - 6, .y = py - 6, .w = 13, .h = 13};
    for (int c = 0; c < 4; ++c) {
        if (ys[c >> 1] == INT32_MIN || xs[c & 1] == INT32_MIN) continue;
        int g = 0;
        while (g < n && !(out[g].y == ys[c >> 1] && out[g].x == xs[c & 1])) ++g;
        char w[24];
        ks_format_real(w, sizeof w, e->u.sample.w[c]);
        if (g == n) { /* a corner cell of its own */
            out[n].y = ys[c >> 1], out[n].x = xs[c & 1];
            out[n].corners = 0;
            out[n].valid = (e->flags & (KS_FLAG_C00 << c)) != 0;
            snprintf(out[n].text, sizeof out[n].text, "%s", w);
            n++;
        } else { /* clamped: two or four corners on one cell, their weights on one label */
            size_t used = strlen(out[g].text);
            snprintf(out[g].text + used, sizeof out[g].text - used, "+%s", w);
        }
        out[g].corners++;
    }
    for (int g = 0; g < n; ++g) {
        if (out[g].corners > 1) {
            size_t used = strlen(out[g].text);
            snprintf(out[g].text + used, sizeof out[g].text - used, " clamped");
        }
        int cx, cy;
        vw_heatmap_point(m, (double)out[g].y, (double)out[g].x, &cx, &cy);
        avoid[1 + g] = (vw_rect){.x = cx - 4, .y = cy - 4, .w = 9, .h = 9};
        pl[g] = (vw_label){.ax = cx, .ay = cy, .w = (int)strlen(out[g].text) * advance + 4, .h = line};
    }
    const int stuck = vw_place_labels(pl, n, bounds, avoid, 1 + n, 5);
    for (int g = 0; g < n; ++g) out[g].label = pl[g];
    return stuck ? -n : n;
}

void vw_draw_sample_weights(vw_draw *d, const vw_heatmap *m, const ks_event *e, vw_rect bounds)
{
    vw_weight_label wl[4];
    int n = vw_sample_weight_labels(e, m, d->font.advance, d->font.line, bounds, wl);
    if (n < 0) n = -n;
    for (int g = 0; g < n; ++g) {
        const uint32_t col = wl[g].corners > 1 ? VW_COL_CLAMP : wl[g].valid ? VW_COL_VALID : VW_COL_INVALID;
        const vw_label *l = &wl[g].label;
        if (wl[g].corners > 1) { /* the clamped corner: a second, orange square around it */
            vw_rect sq = {.x = l->ax - 6, .y = l->ay - 6, .w = 13, .h = 13};
            vw_outline(d->r, sq, VW_COL_CLAMP, 2, 0);
        }
        if (l->leader) {
            const int tx = l->box.x + l->box.w / 2, ty = l->box.y + l->box.h / 2;
            vw_color(d->r, col);
            SDL_RenderDrawLine(d->r, l->ax, l->ay, tx, ty);
        }
        vw_fill(d->r, l->box, 0x000000);
        vw_text(&d->font, d->r, l->box.x + 2, l->box.y, col, 0, wl[g].text);
    }
}
