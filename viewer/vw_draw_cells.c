/* vw_draw_cells.c - text and marks inside heatmap cells: each cell's number once the
 * cells are big enough to hold it (the lessons' exact shortest form: 10.125, not 10.12),
 * the cell a question asks about once its answer shows, and the focused sample's corner
 * weights, placed so that no two labels overlap (clamped corners share one label). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

int vw_padding_hidden(const vw_state *s)
{
    if (!s->nslides) return 0;
    const int h = s->slides[s->slide].hide_padding;
    return h == 2 || (h == 1 && !s->reveal);
}

int vw_padding_written(const vw_state *s, int t, int64_t off)
{
    /* one bitmap per (trace, tensor): every item's writes at the taps it read padding at */
    static const ks_trace *tr;
    static int tensor = -1;
    static uint8_t *bits;
    static int64_t nbits;
    if (!s->idx || t < 0 || vw_trace_lazy(s->tr) || s->tr->nevents > (1u << 22)) return 0;
    if (tr != s->tr || tensor != t) {
        free(bits);
        nbits = ks_tensor_numel(&s->tr->tensors[t]);
        bits = nbits > 0 ? calloc((size_t)(nbits + 7) / 8, 1) : NULL;
        tr = s->tr, tensor = t;
        for (uint32_t i = 0; bits && i < s->idx->nitems; ++i) {
            const vw_item *item = &s->idx->items[i];
            uint64_t pad[4] = {0}; /* taps 0..255 read in the padding */
            for (uint32_t k = 0; k < item->count; ++k) {
                const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
                if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING) && e->tap < 256)
                    pad[e->tap >> 6] |= 1ull << (e->tap & 63);
            }
            for (uint32_t k = 0; k < item->count; ++k) {
                const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
                if (e->kind == KS_EV_WRITE && e->tensor == (uint32_t)t && e->tap < 256 &&
                    (pad[e->tap >> 6] >> (e->tap & 63) & 1) && (int64_t)e->u.access.offset < nbits)
                    bits[e->u.access.offset >> 3] |= (uint8_t)(1u << (e->u.access.offset & 7));
            }
        }
    }
    return bits && off >= 0 && off < nbits && (bits[off >> 3] >> (off & 7) & 1);
}

int vw_padding_range_ends(const vw_state *s, int t, int64_t plane, double lo, double hi)
{
    if (t < 0 || !vw_padding_hidden(s)) return 0;
    const ks_tensor *T = &s->tr->tensors[t];
    const vw_plane_dims pd = vw_plane_dims_of(T);
    if (plane < 0 || plane >= pd.planes || pd.h * pd.w > (1 << 20)) return 0;
    int held[2][2] = {{0, 0}, {0, 0}}; /* [lo, hi] by [shown, hidden] */
    for (int64_t i = plane * pd.h * pd.w; i < (plane + 1) * pd.h * pd.w; ++i) {
        const double v = vw_tensor_value(T, i);
        const int hid = vw_padding_written(s, t, i);
        held[0][hid] |= v == lo, held[1][hid] |= v == hi;
    }
    return (held[0][1] && !held[0][0]) + (hi != lo && held[1][1] && !held[1][0]);
}

/* A cell's value: the shared tile's at the focused phase where tile is given. */
static double cell_value(const vw_state *s, const float *tile, int t, int64_t off, vw_mode mode)
{
    return tile && mode == VW_MODE_VALUES ? tile[off] : vw_heat_value(s, t, off, mode);
}

int vw_draw_cell_values(vw_draw *d, const vw_state *s, const vw_heatmap *m, vw_rect area, int panel,
                        const vw_heat_cache *c, const float *tile)
{
    const int t = s->panel[panel].tensor;
    if (t < 0 || d->font.advance <= 0) return -1;
    const ks_tensor *T = &s->tr->tensors[t];
    const vw_plane_dims pd = vw_plane_dims_of(T);
    const int64_t plane = s->panel[panel].plane;
    if (plane < 0 || plane >= pd.planes || pd.h != m->rows || pd.w != m->cols) return -1;
    const int64_t base = plane * pd.h * pd.w;
    const vw_mode mode = (vw_mode)c->mode;
    int64_t y0, y1, x0, x1;
    vw_visible_cells(m, area, &y0, &y1, &x0, &x1);
    if ((y1 - y0) * (x1 - x0) > 20000) return -1;
    char buf[48];
    /* one rule for the plane: numbers everywhere or nowhere, so none is missing; at the
     * biggest of the value fonts (the text's, 4/5 and 3/5 of it: 18 px at 1920x1080)
     * where every visible number fits, full (exact) in any of them first, else rounded
     * and marked (issue 38 D9: 14 s5's output printed "~113.1" where 113.0625 fit 4/5) */
    size_t longest[2] = {0, 0};
    const int sparse = mode == VW_MODE_VALUES && T->dtype != KS_F32 && !tile;
    for (int narrow = 0; narrow < 2; ++narrow)
        for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x) {
                const int64_t off = base + y * pd.w + x;
                const double v = cell_value(s, tile, t, off, mode);
                /* the cells left blank: empty, no request, NaN (poison: its colour says it) */
                if ((sparse && vw_cell_empty(T, off)) || (mode == VW_MODE_SECTORS && v < 0) || !isfinite(v)) continue;
                vw_cell_text(buf, sizeof buf, v, narrow);
                if (strlen(buf) > longest[narrow]) longest[narrow] = strlen(buf);
            }
    int k = -1, narrow = 0;
    /* a slide's: those a room reads (issue 38 D1); the viewer's own: its text's size */
    const int fonts = s->nslides ? vw_value_fonts(d, d->rec.h) : 1;
    for (int nw = 0; nw < 2 && k < 0; ++nw)
        for (int f = 0; f < fonts && k < 0; ++f) {
            const vw_font *font = vw_value_font(d, f);
            if (m->cell >= font->line + 2 &&
                (double)longest[nw] * font->advance <= m->cell - vw_value_gap(font->advance))
                k = f, narrow = nw;
        }
    if (k < 0) return -1;
    const vw_font *font = vw_value_font(d, k);
    vw_rec_panel *rp = &d->rec.panel[panel];
    const int pad_hidden = mode == VW_MODE_VALUES && vw_padding_hidden(s);
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            const int64_t off = base + y * pd.w + x;
            const double v = cell_value(s, tile, t, off, mode);
            if ((sparse && vw_cell_empty(T, off)) || (mode == VW_MODE_SECTORS && v < 0) || !isfinite(v)) continue;
            vw_cell_text(buf, sizeof buf, v, narrow);
            /* a padding tap's entry, where a later step asks what it gets (issue 38 D2 N1),
             * on the margin's grey its texel got (N6) */
            const int hid = pad_hidden && vw_padding_written(s, t, off);
            if (hid) snprintf(buf, sizeof buf, "?");
            const uint32_t bg = hid && c->hide ? vw_margin_grey(y, x) : vw_heat_colour(c, v);
            uint32_t painted;
            if (hid) /* the record: a ? on a value's colour says what it hides */
                rp->hidden_cells++,
                    rp->hidden_painted += vw_texel_colour(c, y, x, &painted) && painted != vw_margin_grey(y, x);
            const vw_rect r = vw_heatmap_cell(m, y, x);
            const int w = (int)strlen(buf) * font->advance;
            vw_rect at = {.x = r.x + (r.w - w) / 2, .y = r.y + (r.h - font->line) / 2, .w = w, .h = font->line};
            /* a cell the panel's edge cuts prints its number in the part that shows where
             * that holds it (issue 38: 10 s2's last row at 1024x768, whose cells cannot
             * grow or shrink to whole rows), else keeps its colour, not the half of a
             * number (issue 38 D12: digits clipped at the edges of zoomed panels) */
            const int vy0 = r.y > area.y ? r.y : area.y, vx0 = r.x > area.x ? r.x : area.x;
            const int vy1 = r.y + r.h < area.y + area.h ? r.y + r.h : area.y + area.h;
            const int vx1 = r.x + r.w < area.x + area.w ? r.x + r.w : area.x + area.w;
            if (at.y < vy0 || at.y + at.h > vy1) at.y = vy0 + (vy1 - vy0 - at.h) / 2;
            if (at.x < vx0 || at.x + at.w > vx1) at.x = vx0 + (vx1 - vx0 - at.w) / 2;
            if (at.x < vx0 || at.y < vy0 || at.x + at.w > vx1 || at.y + at.h > vy1) continue;
            vw_text(font, d->r, at.x, at.y, ink_on(bg), 0, buf);
            if (rp->nvalues < VW_REC_VALUES) { /* the record: what each cell prints, and where */
                rp->value[rp->nvalues].y = (int32_t)y, rp->value[rp->nvalues].x = (int32_t)x;
                rp->value[rp->nvalues].box = at;
                snprintf(rp->value[rp->nvalues++].text, sizeof rp->value[0].text, "%s", buf);
            } else {
                rp->values_cut = 1;
            }
        }
    /* an empty cell of a sparse plane the step names (the focused item reads or writes
     * it, or outlines it alone) prints what it holds, dim on the background: the -1 of
     * "no site" (issue 38 D8: 08 s3's candidate (3, 9) was an outlined blank where the
     * text says -1) */
    const uint32_t it = s->nslides && sparse && s->idx ? vw_state_item(s) : VW_NONE;
    const vw_item *item = it != VW_NONE ? &s->idx->items[it] : NULL;
    static vw_box boxes[64];
    const int nb = item ? vw_item_boxes(s->tr, s->idx, it, boxes, 64) : 0;
    for (uint32_t e = 0; item && e < item->count + (uint32_t)nb; ++e) {
        int64_t y, x;
        if (e < item->count) {
            const ks_event *ev = vw_event(s->tr, vw_item_ev(s->idx, item, e));
            if ((ev->kind != KS_EV_READ && ev->kind != KS_EV_WRITE) || ev->tensor != (uint32_t)t ||
                ev->u.access.plane != plane)
                continue;
            y = ev->u.access.y, x = ev->u.access.x;
        } else { /* a region round one cell (cell y spans y - 0.5 .. y + 0.5) */
            const vw_box *b = &boxes[e - item->count];
            const double cy = (b->y0 + b->y1) / 2, cx = (b->x0 + b->x1) / 2;
            if (b->tensor != t || b->plane != plane || b->dim || !(fabs(b->y1 - b->y0) <= 1.01) ||
                !(fabs(b->x1 - b->x0) <= 1.01) || !(fabs(cy) < 1e6) || !(fabs(cx) < 1e6))
                continue;
            y = (int64_t)floor(cy + 0.5), x = (int64_t)floor(cx + 0.5);
        }
        const int64_t off = base + y * pd.w + x;
        if (y < y0 || y >= y1 || x < x0 || x >= x1 || !vw_cell_empty(T, off)) continue;
        int seen = 0;
        for (int j = 0; j < rp->nvalues && !seen; ++j) seen = rp->value[j].y == y && rp->value[j].x == x;
        if (seen || rp->nvalues >= VW_REC_VALUES) continue;
        vw_cell_text(buf, sizeof buf, vw_tensor_value(T, off), narrow);
        vw_rect at;
        if (!vw_dim_text_in_cell(d, font, m, y, x, area, buf, &at)) continue;
        rp->value[rp->nvalues].y = (int32_t)y, rp->value[rp->nvalues].x = (int32_t)x;
        rp->value[rp->nvalues].box = at;
        snprintf(rp->value[rp->nvalues++].text, sizeof rp->value[0].text, "%s", buf);
    }
    return k;
}

int vw_dim_text_in_cell(vw_draw *d, const vw_font *f, const vw_heatmap *m, int64_t y, int64_t x, vw_rect area,
                        const char *text, vw_rect *at)
{
    const vw_rect r = vw_heatmap_cell(m, y, x);
    const int w = (int)strlen(text) * f->advance;
    *at = (vw_rect){.x = r.x + (r.w - w) / 2, .y = r.y + (r.h - f->line) / 2, .w = w, .h = f->line};
    if (w > r.w - vw_value_gap(f->advance) || at->x < area.x || at->y < area.y || at->x + at->w > area.x + area.w ||
        at->y + at->h > area.y + area.h)
        return 0;
    vw_text(f, d->r, at->x, at->y, VW_COL_DIM, 0, text);
    return 1;
}

int vw_answer_cell_rect(const vw_state *s, const vw_heatmap *m, int panel, vw_rect *out)
{
    if (!s->nslides || !s->reveal) return 0;
    const vw_slide *sl = &s->slides[s->slide];
    if (!sl->has_answer_cell || sl->answer_event >= s->tr->nevents) return 0;
    const ks_event *e = vw_event(s->tr, sl->answer_event);
    int64_t y, x, plane;
    if (e->kind == KS_EV_SAMPLE) {
        if (!(fabsf(e->u.sample.y) < 1e6f) || !(fabsf(e->u.sample.x) < 1e6f)) return 0;
        plane = e->u.sample.plane, y = (int64_t)floorf(e->u.sample.y + 0.5f), x = (int64_t)floorf(e->u.sample.x + 0.5f);
        if (sl->answer_corner >= 1 && sl->answer_corner <= 4) { /* a question about one corner: that cell */
            int64_t ys[2], xs[2];
            const int c = sl->answer_corner - 1;
            vw_sample_corners(e, ys, xs);
            y = ys[c >> 1], x = xs[c & 1];
        }
    } else if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        plane = e->u.access.plane, y = e->u.access.y, x = e->u.access.x;
    } else {
        return 0;
    }
    if (e->tensor != s->panel[panel].tensor || plane != s->panel[panel].plane) return 0;
    vw_rect r = vw_heatmap_cell(m, y, x);
    if (r.w < 9) r.x -= (9 - r.w) / 2, r.w = 9;
    if (r.h < 9) r.y -= (9 - r.h) / 2, r.h = 9;
    *out = r;
    return 1;
}

void vw_draw_answer_cell(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel)
{
    vw_rect r;
    if (!vw_answer_cell_rect(s, m, panel, &r)) return;
    d->rec.answer_cell = 1;
    /* where the ring would run over the digits of the numbers beside the cell (cells whose
     * numbers fill them: 13 s4's 442 and 444 came back on top in black boxes, issue 38
     * D12), its sides stop above and below those digits: brackets over and under the
     * cell's row of numbers, in the lines' leading */
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const vw_rect ring = {.x = r.x - 8, .y = r.y - 8, .w = r.w + 16, .h = r.h + 16};
    int top = INT32_MAX, bottom = INT32_MIN;
    for (int j = 0; j < rp->nvalues && !rp->hidden; ++j) {
        const vw_rect v = vw_value_ink(rp->value[j].box);
        const int own = v.x >= r.x && v.x + v.w <= r.x + r.w && v.y >= r.y && v.y + v.h <= r.y + r.h;
        if (own || !vw_rect_overlap(v, ring) || v.y + v.h <= r.y || v.y >= r.y + r.h) continue; /* a row's */
        if (v.y < top) top = v.y;
        if (v.y + v.h > bottom) bottom = v.y + v.h;
    }
    if (top < bottom && top - 1 > r.y - 4 && bottom + 1 < r.y + r.h + 4) {
        const vw_rect part[2] = {{.x = ring.x, .y = ring.y, .w = ring.w, .h = top - 1 - ring.y},
                                 {.x = ring.x, .y = bottom + 1, .w = ring.w, .h = ring.y + ring.h - bottom - 1}};
        SDL_Rect was;
        SDL_RenderGetClipRect(d->r, &was);
        const int clipped = SDL_RenderIsClipEnabled(d->r);
        for (int k = 0; k < 2; ++k) {
            SDL_Rect c = {.x = part[k].x, .y = part[k].y, .w = part[k].w, .h = part[k].h}, both = c;
            if (clipped && !SDL_IntersectRect(&c, &was, &both)) continue;
            SDL_RenderSetClipRect(d->r, &both);
            vw_outline(d->r, r, 0x000000, 1, 8);
            vw_outline(d->r, r, VW_COL_ANSWER, 4, 7);
            SDL_RenderSetClipRect(d->r, clipped ? &was : NULL);
            vw_rec_add_dot(&d->rec, panel, part[k], (vw_rect){.x = r.x - 3, .y = r.y - 3, .w = r.w + 6, .h = r.h + 6},
                           0);
        }
        vw_values_over_markers(d, panel);
        return;
    }
    /* 4 px of lime from 4 to 7 px outside the cell, clear of the lookup's pink (2 to 3 px)
     * and the item's outlines (inside the cell); a dark edge so it shows on pale cells */
    vw_outline(d->r, r, 0x000000, 1, 8);
    vw_outline(d->r, r, VW_COL_ANSWER, 4, 7);
    /* a neighbour's number it reaches comes back on top (issue 38: 13 s4's 442 lost its
     * 2 at 1024x768): the ring is a marker of the record, the cell's own number clear */
    vw_rec_add_dot(&d->rec, panel, (vw_rect){.x = r.x - 8, .y = r.y - 8, .w = r.w + 16, .h = r.h + 16},
                   (vw_rect){.x = r.x - 3, .y = r.y - 3, .w = r.w + 6, .h = r.h + 6}, 0);
    vw_values_over_markers(d, panel);
}

/* How far a placed label's box lies from the point it names (0 beside it). */
static int leader_px(const vw_label *l)
{
    if (!l->leader) return 0;
    int x, y;
    vw_label_leader_end(l, &x, &y);
    return (int)lround(hypot(x - l->ax, y - l->ay));
}

int vw_sample_weight_labels(const ks_event *e, const vw_heatmap *m, int advance, int line, vw_rect bounds,
                            vw_weight_label out[4])
{
    return vw_sample_weight_labels_avoid(e, m, advance, line, bounds, NULL, 0, out);
}

int vw_sample_weight_labels_avoid(const ks_event *e, const vw_heatmap *m, int advance, int line, vw_rect bounds,
                                  const vw_rect *keep_off, int nkeep, vw_weight_label out[4])
{
    int64_t ys[2], xs[2];
    vw_sample_corners(e, ys, xs);
    int n = 0;
    vw_label pl[4];
    static vw_rect avoid[5 + VW_REC_FOCUS + VW_REC_VALUES + VW_REC_DOTS + 1];
    int px, py, navoid = 0;
    vw_heatmap_point(m, e->u.sample.y, e->u.sample.x, &px, &py);
    avoid[navoid++] = (vw_rect){.x = px - 6, .y = py - 6, .w = 13, .h = 13};
    for (int c = 0; c < 4; ++c) {
        if (ys[c >> 1] == INT32_MIN || xs[c & 1] == INT32_MIN) continue;
        int g = 0;
        while (g < n && !(out[g].y == ys[c >> 1] && out[g].x == xs[c & 1])) ++g;
        char w[24];
        /* a weight as the cells print values: exact in full, a rounded one marked (D9) */
        vw_cell_text(w, sizeof w, e->u.sample.w[c], 0);
        if (g == n) { /* a corner cell of its own */
            out[n].y = ys[c >> 1], out[n].x = xs[c & 1];
            out[n].corners = 0;
            out[n].valid = (e->flags & (KS_FLAG_C00 << c)) != 0;
            out[n].two = 0;
            snprintf(out[n].text, sizeof out[n].text, "%s", w);
            n++;
        }
        out[g].corners++;
    }
    for (int g = 0; g < n; ++g) {
        if (out[g].corners > 1) { /* clamped: two or four corners on one cell */
            /* their weights add on it; said in words a student reads (issue 38 D12: "1+0+0+0
             * clamped" was cryptic, and "1: clamped" read as sample 1): "w=1, 4 corners
             * clamped to row 5, col 5" */
            double sum = 0;
            for (int c = 0; c < 4; ++c)
                if (ys[c >> 1] == out[g].y && xs[c & 1] == out[g].x) sum += e->u.sample.w[c];
            char w[24];
            vw_cell_text(w, sizeof w, sum, 0);
            snprintf(out[g].text, sizeof out[g].text, "w=%s, %d corners clamped to row %lld, col %lld", w,
                     out[g].corners, (long long)out[g].y, (long long)out[g].x);
        }
        int cx, cy;
        vw_heatmap_point(m, (double)out[g].y, (double)out[g].x, &cx, &cy);
        avoid[navoid++] = (vw_rect){.x = cx - 4, .y = cy - 4, .w = 9, .h = 9};
        /* 3 px of room on every side: two labels never touch; beside its corner's cell,
         * on the side away from the sample (the top-left corner's up and left) */
        pl[g] = (vw_label){.ax = cx,
                           .ay = cy,
                           .w = (int)strlen(out[g].text) * advance + 10,
                           .h = line + 6,
                           .cell = vw_heatmap_cell(m, out[g].y, out[g].x),
                           .dx = (cx > px) - (cx < px),
                           .dy = (cy > py) - (cy < py),
                           .gx = m->ox,
                           .gy = m->oy,
                           .gcell = m->cell};
    }
    /* a leader may cross the sample's ring, not its other corners' cells (issue 38 D3:
     * a line across a corner reads as that corner's) */
    for (int g = 0; g < n; ++g) pl[g].pass[pl[g].npass++] = avoid[0];
    for (int i = 0; i < nkeep && navoid < (int)(sizeof avoid / sizeof avoid[0]); ++i) avoid[navoid++] = keep_off[i];
    vw_label first[4];
    memcpy(first, pl, sizeof first);
    int stuck = vw_place_labels(pl, n, bounds, avoid, navoid, 5);
    /* a clamped corner's label that found room only far off (issue 38: 14 s6's two went to
     * the plane's top and bottom with leaders across it): without "to row r, col c" (its
     * leader names the cell) where that puts the clamped labels nearer their cells */
    /* and where that is still far (14 s6 at 1024x768: a margin of two cells beside them),
     * "w=1, clamped" (the narration says how many corners); then that on two lines, as
     * tall as a cell and half as wide (14 s6's at a size up from the least legible) */
    for (int form = 1; form <= 3 && !stuck; ++form) {
        int far = 0;
        for (int g = 0; g < n; ++g) far += out[g].corners > 1 && leader_px(&pl[g]) > m->cell;
        if (!far) break;
        char text[4][sizeof out[0].text];
        vw_label near[4];
        memcpy(near, first, sizeof near);
        for (int g = 0; g < n; ++g) {
            snprintf(text[g], sizeof text[g], "%s", out[g].text);
            if (out[g].corners < 2) continue;
            char *cut = strstr(text[g], form == 1 ? " to row" : ", ");
            if (cut && form == 1) *cut = 0;
            if (cut && form >= 2) snprintf(cut, sizeof text[g] - (size_t)(cut - text[g]), ", clamped");
            near[g].w = (int)strlen(text[g]) * advance + 10;
            if (cut && form == 3) { /* "w=1," over "clamped" */
                const size_t head = (size_t)(cut - text[g]) + 1, tail = strlen(cut + 2);
                near[g].w = (int)(head > tail ? head : tail) * advance + 10;
                near[g].h = 2 * line + 6;
            }
        }
        int was = 0, now = 0;
        if (vw_place_labels(near, n, bounds, avoid, navoid, 5)) continue;
        for (int g = 0; g < n; ++g)
            if (out[g].corners > 1) was += leader_px(&pl[g]), now += leader_px(&near[g]);
        if (now + m->cell >= was) continue;
        memcpy(pl, near, sizeof near);
        for (int g = 0; g < n; ++g) memcpy(out[g].text, text[g], sizeof out[g].text);
        for (int g = 0; g < n; ++g) out[g].two = form == 3 && out[g].corners > 1 && strstr(text[g], ", ") != NULL;
    }
    for (int g = 0; g < n; ++g) out[g].label = pl[g];
    return stuck ? -n : n;
}

/* The value font (vw_value_font) labels on cells `cell` pixels wide print in: the biggest
 * whose line is at most 3/10 of the cell, else the smallest (issue 38 D3: labels scale
 * with the cells, and one fits beside a cell's number, in the cell next to its corner). */
int vw_label_font(const vw_draw *d, double cell)
{
    const int fonts = vw_value_fonts(d, d->rec.h); /* none smaller than a room reads */
    for (int k = 0; k < fonts; ++k)
        if (vw_value_font(d, k)->line <= cell * 0.3) return k;
    return fonts - 1;
}

int vw_weight_font(const vw_draw *d)
{
    const int fonts = vw_value_fonts(d, d->rec.h);
    return fonts >= 2 ? fonts - 2 : 0;
}

int vw_value_boxes(const vw_draw *d, int panel, vw_rect *out, int max)
{
    const vw_rec_panel *rp = &d->rec.panel[panel];
    if (!rp->values || rp->value_font < 0) return 0;
    int n = 0;
    for (int i = 0; i < rp->nvalues && n < max; ++i) { /* each number as drawn, 2 px around */
        const vw_rect b = rp->value[i].box;
        out[n++] = (vw_rect){.x = b.x - 2, .y = b.y - 2, .w = b.w + 4, .h = b.h + 4};
    }
    for (int i = 0; i < rp->axes && i < 64 && n < max; ++i) { /* and a sparse plane's row and column numbers */
        const vw_rect b = rp->axes_box[i];
        out[n++] = (vw_rect){.x = b.x - 2, .y = b.y - 2, .w = b.w + 4, .h = b.h + 4};
    }
    return n;
}

int vw_value_cells(const vw_draw *d, int panel, const vw_heatmap *m, int ax, int ay, vw_rect *out, int max)
{
    const vw_rec_panel *rp = &d->rec.panel[panel];
    if (!rp->values || rp->hidden || rp->table) return 0;
    int n = 0;
    for (int j = 0; j < rp->nvalues && n < max; ++j) {
        const vw_rect c = vw_heatmap_cell(m, rp->value[j].y, rp->value[j].x);
        if (ax >= c.x && ax < c.x + c.w && ay >= c.y && ay < c.y + c.h) continue;
        out[n++] = (vw_rect){.x = c.x + 1, .y = c.y + 1, .w = c.w - 2, .h = c.h - 2};
    }
    return n;
}

int vw_labels_in_other_cells(const vw_draw *d, int panel, const vw_heatmap *m, const vw_label *l, int n)
{
    static vw_rect cells[VW_REC_VALUES];
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const int cx = l[i].cell.w > 0 ? l[i].cell.x + l[i].cell.w / 2 : -1,
                  cy = l[i].cell.w > 0 ? l[i].cell.y + l[i].cell.h / 2 : -1;
        const int nc = vw_value_cells(d, panel, m, cx, cy, cells, VW_REC_VALUES);
        const vw_rect ink = {.x = l[i].box.x + 3, .y = l[i].box.y + 3, .w = l[i].box.w - 6, .h = l[i].box.h - 6};
        int in = 0;
        for (int j = 0; j < nc && !in; ++j) in = vw_rect_overlap(ink, cells[j]);
        bad += in;
    }
    return bad;
}

/* How far the farthest of labels wl[0..n) lies from its corner's cell, in pixels (0: on
 * it or beside it). */
static int farthest(const vw_weight_label *wl, int n)
{
    int most = 0;
    for (int g = 0; g < n; ++g) {
        const vw_rect b = wl[g].label.box, c = wl[g].label.cell;
        const int dx = b.x + b.w < c.x ? c.x - b.x - b.w : c.x + c.w < b.x ? b.x - c.x - c.w : 0;
        const int dy = b.y + b.h < c.y ? c.y - b.y - b.h : c.y + c.h < b.y ? b.y - c.y - c.h : 0;
        if (dx > most) most = dx;
        if (dy > most) most = dy;
    }
    return most;
}

/* How many of labels wl[0..n) sit nearer another's corner than their own. */
static int astray(const vw_weight_label *wl, int n)
{
    vw_label l[4];
    for (int g = 0; g < n && g < 4; ++g) l[g] = wl[g].label;
    return vw_labels_astray(l, n < 4 ? n : 4);
}

/* How many of labels wl[0..n) lie inside a printed cell not their own. */
static int in_others(const vw_draw *d, int panel, const vw_heatmap *m, const vw_weight_label *wl, int n)
{
    vw_label l[4];
    for (int g = 0; g < n && g < 4; ++g) l[g] = wl[g].label;
    return vw_labels_in_other_cells(d, panel, m, l, n < 4 ? n : 4);
}

/* The four weights of a sample as a key beside the plane, a line a corner in a font a
 * size up from the least legible, "8 * 0.65625": each corner by the number its cell
 * prints, times its weight (issue 38 D12, ninth re-trial: 06 s3-s5's four labels found
 * room round the sample's corners only at the least legible size, a capital 12 px tall
 * at 1920x1080). Only where the labels would take the least legible font or the layout
 * left the key room (vw_draw_layout: at 1280x960 and 1024x768, where the plane filled
 * its panel: issue 38 D12 #26), a bigger one is legible, the four corners are distinct
 * cells of the plane that print their numbers, and the key fits the panel beside the
 * plane clear of every mark and label. 1: drawn. */
static int weights_key(vw_draw *d, const vw_weight_label *wl, int n, int k, vw_rect bounds, int panel)
{
    const int fonts = vw_value_fonts(d, d->rec.h);
    const vw_rec_panel *rp = &d->rec.panel[panel];
    /* where the layout left the key room (vw_draw_layout), whatever size the labels found */
    if (n != 4 || fonts < 2 || (k != fonts - 1 && d->key_w[panel] <= 0) || !rp->values || rp->hidden) return 0;
    char line[4][48];
    size_t widest = 0;
    for (int g = 0; g < 4; ++g) {
        if (wl[g].corners != 1 || !wl[g].valid) return 0;
        const char *num = NULL;
        for (int j = 0; j < rp->nvalues && !num; ++j)
            if (rp->value[j].y == wl[g].y && rp->value[j].x == wl[g].x) num = rp->value[j].text;
        if (!num) return 0;
        snprintf(line[g], sizeof line[g], "%s * %s", num, wl[g].text);
        if (strlen(line[g]) > widest) widest = strlen(line[g]);
    }
    const vw_font *f = vw_value_font(d, fonts - 2);
    const int w = (int)widest * f->advance + 10, lh = f->line + 2, h = 4 * lh + 8;
    const vw_rect ext = rp->extent;
    int ax = 0, ay = 0;
    for (int g = 0; g < 4; ++g) ax += wl[g].label.ax / 4, ay += wl[g].label.ay / 4;
    const int left = ext.x - 8 - w, right = ext.x + ext.w + 8;
    const int sides[2] = {ax - ext.x < ext.x + ext.w - ax ? left : right,
                          ax - ext.x < ext.x + ext.w - ax ? right : left};
    for (int t = 0; t < 2; ++t) {
        vw_rect key = {.x = sides[t], .y = ay - h / 2, .w = w, .h = h};
        if (key.y < bounds.y) key.y = bounds.y;
        if (key.y + key.h > bounds.y + bounds.h) key.y = bounds.y + bounds.h - key.h;
        if (key.x < bounds.x || key.x + key.w > bounds.x + bounds.w || key.y < bounds.y) continue;
        int clear = !vw_rect_overlap(key, ext);
        for (int j = 0; j < d->rec.nlabels && clear; ++j)
            clear = d->rec.labels[j].panel != panel || !vw_rect_overlap(key, d->rec.labels[j].box);
        for (int j = 0; j < d->rec.ndots && clear; ++j)
            clear = d->rec.dots[j].panel != panel || !vw_rect_overlap(key, d->rec.dots[j].box);
        for (int j = 0; j < rp->nfocus && clear; ++j) clear = !vw_rect_overlap(key, rp->focus[j]);
        for (int j = 0; j < rp->axes && j < 64 && clear; ++j) clear = !vw_rect_overlap(key, rp->axes_box[j]);
        if (!clear) continue;
        vw_fill(d->r, key, 0x000000);
        for (int g = 0; g < 4; ++g) {
            const vw_rect at = {.x = key.x + 5,
                                .y = key.y + 4 + g * lh,
                                .w = (int)strlen(line[g]) * f->advance,
                                .h = lh};
            vw_text(f, d->r, at.x, at.y + 1, VW_COL_VALID, 0, line[g]);
            /* a note of the record: it names its corner by the number it prints, not by
             * where it sits (no cell, no leader) */
            const vw_label l = {.ax = at.x, .ay = at.y + lh / 2, .w = at.w, .h = at.h, .box = at};
            vw_rec_add_label(&d->rec, panel, VW_LABEL_NOTE, &l, NULL, 0, vw_value_font_px(d, fonts - 2), line[g]);
        }
        return 1;
    }
    return 0;
}

void vw_draw_sample_weights(vw_draw *d, const vw_heatmap *m, const ks_event *e, vw_rect bounds, int panel)
{
    vw_weight_label wl[4], small[4];
    int k = vw_label_font(d, m->cell);
    const vw_font *font = vw_value_font(d, k);
    static vw_rect keep[VW_REC_FOCUS + VW_REC_VALUES + VW_REC_DOTS];
    /* off the step's cells and the numbers the cells print (issue 38 D3), beside their
     * corners where there is room: a short leader wins over a row off the plane */
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const int nfocus = rp->nfocus < VW_REC_FOCUS ? rp->nfocus : VW_REC_FOCUS;
    memcpy(keep, rp->focus, (size_t)nfocus * sizeof keep[0]);
    int nkeep = nfocus + vw_value_boxes(d, panel, keep + nfocus, VW_REC_VALUES);
    /* and off the other samples' dots (05 s9: a weight in its own cell over tap 1's) */
    for (int i = 0; i < d->rec.ndots; ++i)
        if (d->rec.dots[i].panel == panel && !d->rec.dots[i].focused && d->rec.dots[i].clear.w <= 0)
            keep[nkeep++] = d->rec.dots[i].box;
    int n = vw_sample_weight_labels_avoid(e, m, font->advance, font->line, bounds, keep, nkeep, wl);
    /* off the other cells that print a number too, where that keeps them as near: a
     * corner's weight on a neighbour's cell reads as that cell's (issue 38 D3: 05 s10's
     * answer at 1920x1080 put the 0 of corner (5, 1), in the margin, on image cell 21) */
    static vw_rect soft[VW_REC_FOCUS + 2 * VW_REC_VALUES + VW_REC_DOTS];
    int nsoft = nkeep;
    memcpy(soft, keep, (size_t)nkeep * sizeof soft[0]);
    for (int j = 0; j < rp->nvalues && !rp->hidden && nsoft < (int)(sizeof soft / sizeof soft[0]); ++j) {
        const vw_rect c = vw_heatmap_cell(m, rp->value[j].y, rp->value[j].x);
        soft[nsoft++] = (vw_rect){.x = c.x + 1, .y = c.y + 1, .w = c.w - 2, .h = c.h - 2};
    }
    if (n > 0 && nsoft > nkeep) {
        const int got = vw_sample_weight_labels_avoid(e, m, font->advance, font->line, bounds, soft, nsoft, small);
        if (got == n && astray(small, got) <= astray(wl, n) && farthest(small, got) <= farthest(wl, n))
            memcpy(wl, small, sizeof wl);
    }
    /* a label more than a cell and a half off its corner: in a smaller font (at least the
     * legible one) where that puts them nearer, on their own cells if need be (issue 38
     * D3: 06 s4 and 14 s6 at 1024x768, 05 s9 and s11, labels 2-5 cells off) */
    /* and one beside another corner (issue 38 D3: 06 s5's 0.65625 beside corner (1, 0)) */
    for (int kk = k + 1;
         n > 0 && kk < vw_value_fonts(d, d->rec.h) && (farthest(wl, n) > 1.5 * m->cell || astray(wl, n)); ++kk) {
        const vw_font *f = vw_value_font(d, kk);
        const int got = vw_sample_weight_labels_avoid(e, m, f->advance, f->line, bounds, keep, nkeep, small);
        const int was = astray(wl, n), now = got > 0 ? astray(small, got) : n + 1;
        if (got > 0 && (now < was || (now == was && farthest(small, got) < farthest(wl, n)))) {
            memcpy(wl, small, sizeof wl);
            n = got, k = kk, font = f;
        }
    }
    if (n < 0) /* no such room: off the step's cells (the audit reports the numbers covered) */
        n = vw_sample_weight_labels_avoid(e, m, font->advance, font->line, bounds, keep, nfocus, wl);
    if (n < 0) n = -n;
    /* a weight inside another cell that prints a number reads as that cell's (issue 38
     * D3: 06 s3-s5's 0.65625 of corner (1, 1) over cell 10, inside the RoI): off those
     * cells, in this font or a smaller legible one, where that keeps every label its own */
    if (in_others(d, panel, m, wl, n))
        for (int kk = k; kk < vw_value_fonts(d, d->rec.h) && nsoft > nkeep; ++kk) {
            const vw_font *f = vw_value_font(d, kk);
            const int got = vw_sample_weight_labels_avoid(e, m, f->advance, f->line, bounds, soft, nsoft, small);
            if (got != n || astray(small, got) || in_others(d, panel, m, small, got) ||
                farthest(small, got) > 3 * m->cell)
                continue;
            memcpy(wl, small, sizeof wl);
            k = kk, font = f;
            break;
        }
    if (weights_key(d, wl, n, k, bounds, panel)) return;
    /* no key: the labels at a size up from the least legible at the most, placed anew in
     * that font (issue 38 D12 #26, tenth re-trial: at 1280x960 and 1024x768, where the key
     * finds no room, 06 s3-s5's weights and s8's corner 0s printed at the least legible
     * size, digits 11 and 9 px tall) */
    const int top = vw_weight_font(d);
    int clamped = 0; /* a clamp's words ("w=1, clamped") take the size up where it puts them as
                      * near as the least legible did, and no nearer another corner or in
                      * another cell (issue 38: 14 s6 at 1280x960 and 1024x768) */
    for (int g = 0; g < n; ++g) clamped += wl[g].corners > 1;
    for (int kk = top; kk < k; ++kk) {
        const vw_font *f = vw_value_font(d, kk);
        int got = vw_sample_weight_labels_avoid(e, m, f->advance, f->line, bounds, soft, nsoft, small);
        if (got < 0 || in_others(d, panel, m, small, got < 0 ? -got : got))
            got = vw_sample_weight_labels_avoid(e, m, f->advance, f->line, bounds, keep, nkeep, small);
        if (got < 0 && !clamped)
            got = vw_sample_weight_labels_avoid(e, m, f->advance, f->line, bounds, keep, nfocus, small);
        if (clamped && (got != n || astray(small, got) > astray(wl, n) ||
                        farthest(small, got) > fmax(farthest(wl, n), m->cell / 2) ||
                        in_others(d, panel, m, small, got) > in_others(d, panel, m, wl, n)))
            continue; /* a size smaller, between the two, may fit */
        memcpy(wl, small, sizeof wl);
        n = got < 0 ? -got : got, k = kk, font = f;
        break;
    }
    for (int g = 0; g < n; ++g) {
        const uint32_t col = wl[g].corners > 1 ? VW_COL_CLAMP : wl[g].valid ? VW_COL_VALID : VW_COL_INVALID;
        const vw_label *l = &wl[g].label;
        int hw, hh, sx = l->ax, sy = l->ay;
        vw_corner_box(d, m, panel, &hw, &hh);
        if (wl[g].corners > 1) { /* the clamped corner: a second, orange box around it */
            vw_rect sq = {.x = l->ax - hw - 3, .y = l->ay - hh - 3, .w = 2 * hw + 7, .h = 2 * hh + 7};
            vw_outline(d->r, sq, VW_COL_CLAMP, 2, 0);
        }
        int pts[VW_LEADER_PTS][2], npts = 0;
        if (l->leader) { /* from the corner's box to the label, around the step's cells */
            const vw_rec_panel *rp = &d->rec.panel[panel];
            static vw_rect around[VW_REC_FOCUS + 4];
            int na = 0; /* and the other corners' labels */
            for (int j = 0; j < n; ++j)
                if (j != g) around[na++] = wl[j].label.box;
            for (int j = 0; j < rp->nfocus && j < VW_REC_FOCUS; ++j) around[na++] = rp->focus[j];
            npts = vw_route_leader(l, around, na, m->ox, m->oy, m->cell, pts);
            if (!npts) npts = vw_route_leader(l, rp->focus, rp->nfocus, m->ox, m->oy, m->cell, pts);
            if (!npts) npts = 2;
            vw_box_edge(l->ax, l->ay, hw + 3, hh + 3, pts[1][0], pts[1][1], &sx, &sy);
            pts[0][0] = sx, pts[0][1] = sy;
            vw_leader(d->r, pts, npts, col);
        }
        const vw_rect inner = {.x = l->box.x + 3, .y = l->box.y + 3, .w = l->box.w - 6, .h = l->box.h - 6};
        vw_fill(d->r, inner, 0x000000);
        const char *brk = wl[g].two ? strstr(wl[g].text, ", ") : NULL;
        if (brk) { /* "w=1," over "clamped" */
            char head[sizeof wl[g].text];
            snprintf(head, sizeof head, "%.*s", (int)(brk - wl[g].text) + 1, wl[g].text);
            vw_text(font, d->r, inner.x + 2, inner.y, col, 0, head);
            vw_text(font, d->r, inner.x + 2, inner.y + font->line, col, 0, brk + 2);
        } else vw_text(font, d->r, inner.x + 2, inner.y, col, 0, wl[g].text);
        vw_rec_add_label(&d->rec, panel, wl[g].corners > 1 ? VW_LABEL_CLAMP : VW_LABEL_WEIGHT, l, pts, npts,
                         vw_value_font_px(d, k), wl[g].text);
    }
}

void vw_values_over_markers(vw_draw *d, int panel)
{
    vw_rec_panel *rp = &d->rec.panel[panel];
    if (!rp->values || rp->value_font < 0 || rp->hidden) return;
    const vw_font *font = vw_value_font(d, rp->value_font);
    for (int j = 0; j < rp->nvalues; ++j) {
        const vw_rect v = vw_value_ink(rp->value[j].box), box = rp->value[j].box;
        int under = 0;
        for (int i = 0; i < d->rec.ndots && !under; ++i) {
            const vw_rec_dot *m = &d->rec.dots[i];
            const vw_rect c = m->clear;
            const int inside = c.w > 0 && v.x >= c.x && v.y >= c.y && v.x + v.w <= c.x + c.w && v.y + v.h <= c.y + c.h;
            under = m->panel == panel && vw_rect_overlap(m->box, v) && !inside;
        }
        if (!under) continue;
        vw_fill(d->r, (vw_rect){.x = box.x - 1, .y = box.y, .w = box.w + 2, .h = box.h}, 0x000000);
        vw_text(font, d->r, box.x, box.y, VW_COL_TEXT, 0, rp->value[j].text);
        rp->value[j].on_top = 1;
    }
}
