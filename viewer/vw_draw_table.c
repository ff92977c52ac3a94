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

/* The rows a table shows, top to bottom; -1 for a gap between two runs of them. */
#define TABLE_SHOWN 256
typedef struct shown_rows {
    int64_t row[TABLE_SHOWN];
    int n;
} shown_rows;

static void run_of_rows(shown_rows *out, int64_t start, int64_t n, int64_t rows)
{
    if (start > rows - n) start = rows - n;
    if (start < 0) start = 0;
    out->n = 0;
    for (int64_t r = start; r < start + n && r < rows && out->n < TABLE_SHOWN; ++r) out->row[out->n++] = r;
}

/* The marked rows m[0..nm) (sorted) each with `above` rows before it and `below` after,
 * runs that meet merged, a gap row between runs: into out when that takes at most n rows. */
static int runs_each(const int64_t *m, int nm, const int64_t *above, const int64_t *below, int64_t rows, int64_t n,
                     shown_rows *out)
{
    out->n = 0;
    int64_t last = -2; /* the last row taken */
    for (int i = 0; i < nm; ++i) {
        const int64_t lo = m[i] - above[i] < 0 ? 0 : m[i] - above[i],
                      hi = m[i] + below[i] >= rows ? rows - 1 : m[i] + below[i];
        if (lo > last + 1 && last >= 0) { /* a gap; one left-out row is shown instead */
            if (out->n >= n || out->n >= TABLE_SHOWN) return 0;
            out->row[out->n++] = lo == last + 2 ? last + 1 : -1;
        }
        for (int64_t r = lo > last + 1 ? lo : last + 1; r <= hi; ++r) {
            if (out->n >= n || out->n >= TABLE_SHOWN) return 0;
            out->row[out->n++] = r;
        }
        last = hi > last ? hi : last;
    }
    return 1;
}

/* The same with as many rows round each: above before it, below after. */
static int runs_around(const int64_t *m, int nm, int64_t above, int64_t below, int64_t rows, int64_t n, shown_rows *out)
{
    int64_t a[64], b[64];
    for (int i = 0; i < nm && i < 64; ++i) a[i] = above, b[i] = below;
    return runs_each(m, nm, a, b, rows, n, out);
}

/* The rows shown, at most n: the item's cells on the table and the asked cell's row
 * (where marks show) with as many rows around them as fit: one run when they lie close,
 * else a run around each, gaps between (lesson 08 s12's products 24, 48 and 56 at
 * 1024x768); the focused one's run when even that does not fit. The step's rows where
 * the item names none, or marks are off until the answer (a window centred on the
 * item's reads would point at them). */
static void pick_rows(const vw_state *s, const vw_table *tb, const part *pt, int np, int64_t rows, int64_t n,
                      shown_rows *out)
{
    int64_t m[64], r, c, focus = -1;
    int nm = 0;
    const int marks = tb->marks || s->reveal;
    const uint32_t it = vw_state_item(s), fe = vw_state_event(s);
    const vw_slide *sl = &s->slides[s->slide];
    for (uint32_t k = 0; marks && it != VW_NONE && k <= s->idx->items[it].count; ++k) {
        const int answer = k == s->idx->items[it].count; /* the asked cell last */
        const uint32_t id = answer ? (sl->has_answer_cell ? sl->answer_event : VW_NONE)
                                   : vw_item_ev(s->idx, &s->idx->items[it], k);
        if (id == VW_NONE || id >= s->tr->nevents) continue;
        for (int q = 0; q < np; ++q) {
            if (!row_of(&pt[q], vw_event(s->tr, id), 0, &r, &c)) continue;
            if (id == fe) focus = r;
            int at = 0;
            while (at < nm && m[at] < r) at++;
            if ((at < nm && m[at] == r) || nm == 64) continue;
            memmove(m + at + 1, m + at, (size_t)(nm - at) * sizeof m[0]);
            m[at] = r, nm++;
        }
    }
    /* and the step's rows, where it names them and the item's cells are drawn: both ends
     * in view where they fit (issue 38 D1, eighth re-trial: 08 s11's gathered showed rows
     * 42-54 round row 48 and cut offset 5's eighth pair, row 55 of the named 48..55) */
    for (int e = 0; nm && tb->row1 >= tb->row0 && e < 2 && nm < 64; ++e) {
        const int64_t want = e ? tb->row1 : tb->row0;
        int at = 0;
        while (at < nm && m[at] < want) at++;
        if (want < 0 || want >= rows || (at < nm && m[at] == want)) continue;
        memmove(m + at + 1, m + at, (size_t)(nm - at) * sizeof m[0]);
        m[at] = want, nm++;
    }
    if (!nm) { /* the step's rows, else the top */
        const int64_t a = tb->row1 >= tb->row0 ? tb->row0 : 0, b = tb->row1 >= tb->row0 ? tb->row1 : 0;
        run_of_rows(out, b - a + 1 > n ? a : (a + b) / 2 - (n - 1) / 2, n, rows);
        return;
    }
    if (m[nm - 1] - m[0] + 1 <= n) {
        run_of_rows(out, (m[0] + m[nm - 1]) / 2 - (n - 1) / 2, n, rows);
        return;
    }
    /* as many rows round each as fit, then a row more below each, then above, while that
     * still fits: the table fills its panel (issue 38 D1: 08 s12's answer left 3 of 14
     * rows empty, and at 1280x960 2 of 16) */
    for (int64_t ctx = n; ctx >= 0; --ctx)
        if (runs_around(m, nm, ctx, ctx, rows, n, out)) {
            static shown_rows more;
            int64_t above[64], below[64];
            for (int i = 0; i < nm; ++i) above[i] = below[i] = ctx;
            /* then run by run, a row below, then above, while one still fits */
            for (int grew = 1; grew;) {
                grew = 0;
                for (int i = 0; i < nm; ++i)
                    for (int side = 0; side < 2; ++side) {
                        int64_t *e = side ? &above[i] : &below[i];
                        if (*e >= rows) continue;
                        ++*e;
                        if (runs_each(m, nm, above, below, rows, n, &more) && more.n > out->n) *out = more, grew = 1;
                        else --*e;
                    }
            }
            return;
        }
    run_of_rows(out, (focus >= 0 ? focus : m[0]) - (n - 1) / 2, n, rows);
}

/* Where row r stands among the shown rows, or -1. */
static int shown_at(const shown_rows *sh, int64_t r)
{
    for (int i = 0; i < sh->n; ++i)
        if (sh->row[i] == r) return i;
    return -1;
}

static void heading(const part *pt, int q, int64_t c, const vw_table *tb, char *buf, size_t n)
{
    const int64_t at = q ? pt[0].cols + c : c;
    if (at < tb->ncols && tb->col[at][0]) snprintf(buf, n, "%s", tb->col[at]);
    else snprintf(buf, n, "%lld", (long long)c);
}

/* Outlines the item's cells on the table (the focused one cyan), the asked cell in lime
 * once its answer shows; each into the record as a cell the step names. */
static void draw_marks(vw_draw *d, const vw_state *s, const vw_table *tb, const part *pt, int np, const shown_rows *sh,
                       const int *colx, int cw, int top, int rh, vw_rec_panel *rp)
{
    int64_t r, c;
    int at;
    const uint32_t it = vw_state_item(s), fe = vw_state_event(s);
    for (int pass = 0; pass < 2 && it != VW_NONE && (tb->marks || s->reveal); ++pass) { /* focused last, on top */
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0; k < item->count; ++k) {
            const uint32_t id = vw_item_ev(s->idx, item, k);
            if ((id == fe) != pass) continue;
            for (int q = 0; q < np; ++q) {
                if (!row_of(&pt[q], vw_event(s->tr, id), 0, &r, &c) || (at = shown_at(sh, r)) < 0) continue;
                const vw_rect cell = {.x = colx[q] + (int)c * cw, .y = top + at * rh, .w = cw, .h = rh};
                vw_outline(d->r, cell, pass ? VW_COL_FOCUS : VW_COL_ITEM, pass ? 3 : 2, pass ? 1 : 0);
                if (rp->nfocus < VW_REC_FOCUS) rp->focus[rp->nfocus++] = cell;
            }
        }
    }
    const vw_slide *sl = &s->slides[s->slide];
    if (!s->reveal || !sl->has_answer_cell || sl->answer_event >= s->tr->nevents) return;
    for (int q = 0; q < np; ++q) {
        if (!row_of(&pt[q], vw_event(s->tr, sl->answer_event), 0, &r, &c) || (at = shown_at(sh, r)) < 0) continue;
        const vw_rect cell = {.x = colx[q] + (int)c * cw, .y = top + at * rh, .w = cw, .h = rh};
        d->rec.answer_cell = 1;
        vw_outline(d->r, cell, 0x000000, 1, 8);
        vw_outline(d->r, cell, VW_COL_ANSWER, 4, 7);
        if (rp->nfocus < VW_REC_FOCUS)
            rp->focus[rp->nfocus++] = (vw_rect){.x = cell.x - 8, .y = cell.y - 8, .w = cell.w + 16, .h = cell.h + 16};
    }
}

/* The legend of the rows a table shows, each run first-last: "rows 2-21 of 32", or with
 * form 1 the shorter "rows 2-21/32". */
static void rows_text(char *buf, size_t n, const shown_rows *sh, int64_t rows, int form)
{
    size_t used = (size_t)snprintf(buf, n, "rows ");
    for (int i = 0; i < sh->n && used < n; ++i) {
        if (sh->row[i] < 0 || (i && sh->row[i - 1] >= 0)) continue;
        int j = i;
        while (j + 1 < sh->n && sh->row[j + 1] >= 0) j++;
        used += (size_t)snprintf(buf + used, n - used, "%s%lld-%lld", i ? (form ? "," : ", ") : "",
                                 (long long)sh->row[i], (long long)sh->row[j]);
    }
    if (used < n) snprintf(buf + used, n - used, form ? "/%lld" : " of %lld", (long long)rows);
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
    /* the biggest legible value font whose table fits the panel's width and shows every
     * row (issue 38 D1: 08 s6's pair_table showed rows 0-22 of 24 at the bigger one), else
     * TABLE_LEAST_ROWS rows */
    const int fonts = vw_value_fonts(d, d->rec.h);
    int k = -1;
    for (int want = 0; want < 2 && k < 0; ++want)
        for (int f = 0; f < fonts; ++f) {
            const vw_font *font = vw_value_font(d, f);
            const int width = vw_table_width(&z, font->advance);
            const int64_t fit = (map.h - 8) / (font->line + 8) - 1;
            if (width <= map.w - 8 && fit >= (want == 0 || rows < TABLE_LEAST_ROWS ? rows : TABLE_LEAST_ROWS)) {
                k = f;
                break;
            }
        }
    if (k < 0) k = fonts - 1;
    const vw_font *font = vw_value_font(d, k);
    /* a column is its widest text and half a character of room (vw_table_width) */
    const int half = (font->advance + 1) / 2, rh = font->line + 8;
    const int cw = chars * font->advance + half, iw = ichars * font->advance + half;
    int64_t nrows = (map.h - 8) / rh - 1;
    if (nrows > rows) nrows = rows;
    if (nrows < 1) nrows = 1;
    if (nrows > TABLE_SHOWN) nrows = TABLE_SHOWN;
    static shown_rows sh;
    pick_rows(s, tb, pt, np, rows, nrows, &sh);
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
    for (int i = 0; i < sh.n; ++i) {
        const int64_t r = sh.row[i];
        const int y = top + i * rh;
        if (r < 0) { /* rows left out between two runs */
            vw_text(font, d->r, x0 + iw - half - 3 * font->advance, y + 4, VW_COL_DIM, 0, "...");
            continue;
        }
        snprintf(ib, sizeof ib, "%lld", (long long)r);
        vw_text(font, d->r, x0 + iw - half - (int)strlen(ib) * font->advance, y + 4, VW_COL_DIM, 0, ib);
        for (int q = 0; q < np; ++q)
            for (int64_t c = 0; c < pt[q].cols; ++c)
                draw_value(d, font, &pt[q], q, r, c, (vw_rect){.x = colx[q] + (int)c * cw, .y = y, .w = cw, .h = rh},
                           rp);
    }
    /* the record: a window of rows, every value printed (vw_rec_panel.table) */
    rp->table = 1;
    rp->extent = (vw_rect){.x = x0, .y = head, .w = total, .h = (sh.n + 1) * rh};
    rp->rows = rows + 1, rp->cols = np, rp->margin = 0; /* its header and every row */
    memset(rp->side, 0, sizeof rp->side);
    rp->cell = rh;
    rp->ox = colx[0], rp->oy = top; /* the first row shown: a table's cells are its value boxes */
    rp->values = 1;
    rp->value_px = vw_value_font_px(d, k);
    rp->value_font = k;
    rp->zoomed = sh.n < rows;
    draw_marks(d, s, tb, pt, np, &sh, colx, cw, top, rh, rp);
    SDL_RenderSetClipRect(d->r, NULL);
    /* the legend's line: what the window is; on the header line after the header where
     * the layout puts it there */
    vw_rect lg = panel ? L->output_legend : L->input_legend;
    if ((L->legend_top >> panel) & 1) {
        const int x = area.x + 4 +
                      ((int)strlen(s->tr->tensors[tb->tensor].name) +
                       (np > 1 ? 3 + (int)strlen(s->tr->tensors[tb->beside].name) : 0) + 2) *
                          d->font.advance;
        lg.w = area.x + area.w - 4 - x, lg.x = x;
    }
    /* "rows 2-21 of 32", else "rows 2-21/32", in the text's font, else in a smaller value
     * font (at least the legible one): the first that fits whole (issue 38: lesson 08's
     * "rows 2" on a narrow panel); on the header line where the layout puts it, and where
     * it fits there in none, under the rows when they leave a line free. None fits: no
     * legend, rather than a cut one. */
    const int below = rp->extent.y + rp->extent.h + 4;
    for (int pass = 0; pass < 2; ++pass) {
        for (int form = 0; form < 2; ++form) {
            rows_text(buf, sizeof buf, &sh, rows, form);
            for (int f = 0; f < vw_value_fonts(d, L->h); ++f) {
                const vw_font *lf = vw_value_font(d, f);
                if ((int)strlen(buf) * lf->advance > lg.w || lg.y + lf->line > area.y + area.h) continue;
                vw_text(lf, d->r, lg.x, lg.y, VW_COL_DIM, lg.w, buf);
                return;
            }
        }
        if (pass || !((L->legend_top >> panel) & 1)) break;
        lg = (vw_rect){.x = map.x + 4, .y = below, .w = map.w - 8, .h = d->font.line};
    }
}
