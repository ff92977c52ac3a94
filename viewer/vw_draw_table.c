/* vw_draw_table.c - a panel drawn as a table (a lesson step's "tables", vw_slide.h's
 * vw_table; issue 38 D8): sparse convolution's rulebook, products and hash table are
 * narrow index tensors whose rows a step reads one by one ("rulebook row 48 is (5, 1,
 * 9)"). As square heatmap cells they were a hairline strip (products: 120 x 1) or bars
 * without their slots; as a table each row has its index, each column its name, and
 * every value prints at a size a room reads. The rows shown are a window around the
 * focused work item's cells on the table (or the rows the step names), with the item's
 * cells outlined as on a heatmap and the question's cell outlined once its answer shows.
 * What is drawn goes into the frame's record (vw_record.h) like a heatmap's values, so
 * `kscope lesson --check` reads a table's numbers too. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_plane.h"
#include "vw_state.h"
#include "vw_view.h"

#define TABLE_LEAST_ROWS 10 /* a font is too big when it leaves fewer rows than this */

/* One tensor's part of the table: rows x cols, element (r, c) at offset base + y*w + x
 * with (y, x) = (r, c), or (c, r) transposed (a one-row plane always is). */
typedef struct part {
    const ks_tensor *T;
    int id, transpose;
    int64_t rows, cols, base, w;
    double lo, hi; /* the range of its non-empty values, for the cells' colours */
} part;

static int part_of(const ks_trace *tr, int id, int transpose, int64_t plane, part *p)
{
    if (id < 0 || id >= tr->ntensors) return 0;
    const ks_tensor *T = &tr->tensors[id];
    const vw_plane_dims d = vw_plane_dims_of(T);
    if (d.planes < 1 || !T->data) return 0;
    if (plane < 0 || plane >= d.planes) plane = 0;
    p->T = T, p->id = id, p->transpose = transpose || d.h == 1;
    p->rows = p->transpose ? d.w : d.h, p->cols = p->transpose ? d.h : d.w;
    p->base = plane * d.h * d.w, p->w = d.w;
    p->lo = INFINITY, p->hi = -INFINITY;
    for (int64_t i = 0; i < d.h * d.w; ++i) {
        if (vw_cell_empty(T, p->base + i)) continue;
        const double v = vw_tensor_value(T, p->base + i);
        if (isfinite(v)) p->lo = fmin(p->lo, v), p->hi = fmax(p->hi, v);
    }
    return 1;
}

static int64_t offset_of(const part *p, int64_t r, int64_t c)
{
    return p->base + (p->transpose ? c * p->w + r : r * p->w + c);
}

/* The table row and column of an access (y, x) on part p; 0 when it is not on p's plane. */
static int row_of(const part *p, const ks_event *e, int64_t plane, int64_t *r, int64_t *c)
{
    if ((e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) || (int)e->tensor != p->id || e->u.access.plane != plane)
        return 0;
    *r = p->transpose ? e->u.access.x : e->u.access.y;
    *c = p->transpose ? e->u.access.y : e->u.access.x;
    return *r >= 0 && *r < p->rows && *c >= 0 && *c < p->cols;
}

/* Dark text on a bright cell, light text on a dark one. */
static uint32_t ink_on(uint32_t bg)
{
    const double lum = 0.299 * (bg >> 16 & 255) + 0.587 * (bg >> 8 & 255) + 0.114 * (bg & 255);
    return lum > 128 ? 0x101010 : 0xF4F4F4;
}

/* The rows [*r0, *r0 + n) shown: around the item's cells on the table when they fit,
 * else around the focused one; the step's rows where the item names none (or marks are
 * off until the answer: a window centred on the item's reads would point at them); the
 * asked cell's row too, where marks show. */
static void window_rows(const vw_state *s, const vw_table *tb, const part *pt, int np, int64_t rows, int64_t n,
                        int64_t *r0)
{
    int64_t a = INT64_MAX, b = -1, focus = -1, r, c;
    const uint32_t it = vw_state_item(s), fe = vw_state_event(s);
    if (it != VW_NONE && (tb->marks || s->reveal)) {
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0; k < item->count; ++k) {
            const uint32_t id = vw_item_ev(s->idx, item, k);
            const ks_event *e = vw_event(s->tr, id);
            for (int q = 0; q < np; ++q)
                if (row_of(&pt[q], e, 0, &r, &c)) {
                    a = r < a ? r : a, b = r > b ? r : b;
                    if (id == fe) focus = r;
                }
        }
    }
    if (b < 0 && tb->row1 >= tb->row0) a = tb->row0, b = tb->row1;
    const vw_slide *sl = &s->slides[s->slide];
    if ((tb->marks || s->reveal) && sl->has_answer_cell && sl->answer_event < s->tr->nevents)
        for (int q = 0; q < np; ++q)
            if (row_of(&pt[q], vw_event(s->tr, sl->answer_event), 0, &r, &c)) a = r < a ? r : a, b = r > b ? r : b;
    int64_t mid = b < 0 ? 0 : (a + b) / 2;
    if (b >= 0 && b - a + 1 > n) mid = focus >= 0 ? focus : a + n / 2;
    int64_t start = b < 0 ? 0 : mid - (n - 1) / 2;
    if (start > rows - n) start = rows - n;
    *r0 = start < 0 ? 0 : start;
}

static void heading(const part *pt, int q, int64_t c, const vw_table *tb, char *buf, size_t n)
{
    const int64_t at = q ? pt[0].cols + c : c;
    if (at < tb->ncols && tb->col[at][0]) snprintf(buf, n, "%s", tb->col[at]);
    else snprintf(buf, n, "%lld", (long long)c);
}

/* Outlines the item's cells on the table (the focused one cyan), the asked cell in lime
 * once its answer shows; each into the record as a cell the step names. */
static void draw_marks(vw_draw *d, const vw_state *s, const vw_table *tb, const part *pt, int np, int64_t r0,
                       int64_t nrows, const int *colx, int cw, int top, int rh, vw_rec_panel *rp)
{
    int64_t r, c;
    const uint32_t it = vw_state_item(s), fe = vw_state_event(s);
    for (int pass = 0; pass < 2 && it != VW_NONE && (tb->marks || s->reveal); ++pass) { /* focused last, on top */
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0; k < item->count; ++k) {
            const uint32_t id = vw_item_ev(s->idx, item, k);
            if ((id == fe) != pass) continue;
            for (int q = 0; q < np; ++q) {
                if (!row_of(&pt[q], vw_event(s->tr, id), 0, &r, &c) || r < r0 || r >= r0 + nrows) continue;
                const vw_rect cell = {.x = colx[q] + (int)c * cw, .y = top + (int)(r - r0) * rh, .w = cw, .h = rh};
                vw_outline(d->r, cell, pass ? VW_COL_FOCUS : VW_COL_ITEM, pass ? 3 : 2, pass ? 1 : 0);
                if (rp->nfocus < VW_REC_FOCUS) rp->focus[rp->nfocus++] = cell;
            }
        }
    }
    const vw_slide *sl = &s->slides[s->slide];
    if (!s->reveal || !sl->has_answer_cell || sl->answer_event >= s->tr->nevents) return;
    for (int q = 0; q < np; ++q) {
        if (!row_of(&pt[q], vw_event(s->tr, sl->answer_event), 0, &r, &c) || r < r0 || r >= r0 + nrows) continue;
        const vw_rect cell = {.x = colx[q] + (int)c * cw, .y = top + (int)(r - r0) * rh, .w = cw, .h = rh};
        d->rec.answer_cell = 1;
        vw_outline(d->r, cell, 0x000000, 1, 8);
        vw_outline(d->r, cell, VW_COL_ANSWER, 4, 7);
        if (rp->nfocus < VW_REC_FOCUS)
            rp->focus[rp->nfocus++] = (vw_rect){.x = cell.x - 8, .y = cell.y - 8, .w = cell.w + 16, .h = cell.h + 16};
    }
}

/* One value in its cell, into the record in the tensor's own coordinates. */
static void draw_value(vw_draw *d, const vw_font *f, const part *p, int beside, int64_t r, int64_t c, vw_rect cell,
                       vw_rec_panel *rp)
{
    char buf[48];
    const int64_t off = offset_of(p, r, c);
    const double v = vw_tensor_value(p->T, off);
    const int empty = vw_cell_empty(p->T, off);
    const uint32_t bg = empty || !isfinite(v) ? 0x2C2C34 : vw_colormap(vw_colormap_t(v, p->lo, p->hi));
    vw_fill(d->r, (vw_rect){.x = cell.x + 1, .y = cell.y + 1, .w = cell.w - 2, .h = cell.h - 2}, bg);
    vw_cell_text(buf, sizeof buf, v, 0);
    const int w = (int)strlen(buf) * f->advance;
    const vw_rect at = {.x = cell.x + (cell.w - w) / 2, .y = cell.y + (cell.h - f->line) / 2, .w = w, .h = f->line};
    vw_text(f, d->r, at.x, at.y, empty ? VW_COL_DIM : ink_on(bg), 0, buf);
    if (rp->nvalues >= VW_REC_VALUES) {
        rp->values_cut = 1;
        return;
    }
    rp->value[rp->nvalues].y = (int32_t)(p->transpose ? c : r),
    rp->value[rp->nvalues].x = (int32_t)(p->transpose ? r : c);
    rp->value[rp->nvalues].box = at;
    rp->value[rp->nvalues].beside = beside;
    snprintf(rp->value[rp->nvalues++].text, sizeof rp->value[0].text, "%s", buf);
}

void vw_draw_table(vw_draw *d, const vw_state *s, const vw_layout *L, int panel, const vw_table *tb)
{
    const vw_rect area = panel ? L->output : L->input, map = vw_panel_map_area(L, panel);
    vw_rec_panel *rp = &d->rec.panel[panel];
    part pt[2];
    int np = part_of(s->tr, tb->tensor, tb->transpose, s->panel[panel].plane, &pt[0]);
    if (np && part_of(s->tr, tb->beside, 0, 0, &pt[1]) && pt[1].rows == pt[0].rows) np = 2;
    if (!np) return;
    vw_table_dims z;
    if (!vw_table_size(s->tr, tb, s->panel[panel].plane, &z)) return;
    const int64_t rows = pt[0].rows;
    const int chars = z.cell_chars, ichars = z.index_chars;
    char ib[24];
    /* the biggest legible value font whose table fits the panel's width and shows
     * TABLE_LEAST_ROWS rows (all of them where there are fewer) */
    const int fonts = vw_value_fonts(d, d->rec.h);
    int k = fonts - 1;
    for (int f = 0; f < fonts; ++f) {
        const vw_font *font = vw_value_font(d, f);
        const int width = vw_table_width(&z, font->advance);
        const int64_t fit = (map.h - 8) / (font->line + 8) - 1;
        if (width <= map.w - 8 && fit >= (rows < TABLE_LEAST_ROWS ? rows : TABLE_LEAST_ROWS)) {
            k = f;
            break;
        }
    }
    const vw_font *font = vw_value_font(d, k);
    /* a column is its widest text and half a character of room (vw_table_width) */
    const int half = (font->advance + 1) / 2, rh = font->line + 8;
    const int cw = chars * font->advance + half, iw = ichars * font->advance + half;
    int64_t nrows = (map.h - 8) / rh - 1;
    if (nrows > rows) nrows = rows;
    if (nrows < 1) nrows = 1;
    int64_t r0;
    window_rows(s, tb, pt, np, rows, nrows, &r0);
    const int total = vw_table_width(&z, font->advance);
    const int x0 = map.x + (map.w - total) / 2, head = map.y + 4, top = head + rh;
    const int colx[2] = {x0 + iw, x0 + iw + (int)pt[0].cols * cw + font->advance};
    char buf[VW_LINE_LEN];
    snprintf(buf, sizeof buf, "%s%s%s", s->tr->tensors[tb->tensor].name, np > 1 ? " | " : "",
             np > 1 ? s->tr->tensors[tb->beside].name : "");
    vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_TEXT, area.w - 8, buf);
    const SDL_Rect clip = vw_sdl(map);
    SDL_RenderSetClipRect(d->r, &clip);
    /* the headings: the rows' index, then each column's name */
    vw_text(font, d->r, x0 + iw - half - (int)strlen(tb->index) * font->advance, head + 4, VW_COL_HEAD, 0, tb->index);
    for (int q = 0; q < np; ++q)
        for (int64_t c = 0; c < pt[q].cols; ++c) {
            heading(pt, q, c, tb, buf, sizeof buf);
            const int w = (int)strlen(buf) * font->advance;
            vw_text(font, d->r, colx[q] + (int)c * cw + (cw - w) / 2, head + 4, VW_COL_HEAD, 0, buf);
        }
    for (int64_t r = r0; r < r0 + nrows; ++r) {
        const int y = top + (int)(r - r0) * rh;
        snprintf(ib, sizeof ib, "%lld", (long long)r);
        vw_text(font, d->r, x0 + iw - half - (int)strlen(ib) * font->advance, y + 4, VW_COL_DIM, 0, ib);
        for (int q = 0; q < np; ++q)
            for (int64_t c = 0; c < pt[q].cols; ++c)
                draw_value(d, font, &pt[q], q, r, c, (vw_rect){.x = colx[q] + (int)c * cw, .y = y, .w = cw, .h = rh},
                           rp);
    }
    /* the record: a window of rows, every value printed (vw_rec_panel.table) */
    rp->table = 1;
    rp->extent = (vw_rect){.x = x0, .y = head, .w = total, .h = (int)(nrows + 1) * rh};
    rp->cell = rh;
    rp->ox = colx[0], rp->oy = top - (double)r0 * rh;
    rp->values = 1;
    rp->value_px = vw_value_font_px(d, k);
    rp->value_font = k;
    rp->zoomed = nrows < rows;
    draw_marks(d, s, tb, pt, np, r0, nrows, colx, cw, top, rh, rp);
    SDL_RenderSetClipRect(d->r, NULL);
    /* the legend's line: what the window is */
    const vw_rect lg = panel ? L->output_legend : L->input_legend;
    snprintf(buf, sizeof buf, "rows %lld-%lld of %lld", (long long)r0, (long long)(r0 + nrows - 1), (long long)rows);
    vw_text(&d->font, d->r, lg.x, lg.y, VW_COL_DIM, lg.w, buf);
}
