/* vw_draw.c - one frame: title, the two heatmaps with their overlays, the decomposition
 * panel, the grid, the timeline, the status line and the help. */
#include "vw_draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_draw_live.h"

/* The value fonts' sizes for text of px: 4/5 and 3/5 of it, at least 8 px. */
static int small_px(int px, int k) { return (px * (k ? 3 : 4) + 2) / 5 > 8 ? (px * (k ? 3 : 4) + 2) / 5 : 8; }

int vw_draw_init(vw_draw *d, SDL_Renderer *r, int text_size)
{
    memset(d, 0, sizeof *d);
    d->r = r;
    if (vw_font_open(&d->font, r, text_size)) return -1;
    d->text_px = text_size;
    for (int k = 0; k < VW_VALUE_FONTS - 1; ++k) {
        d->small_px[k] = small_px(text_size, k);
        if (vw_font_open(&d->small[k], r, d->small_px[k])) {
            while (k-- > 0) vw_font_close(&d->small[k]);
            vw_font_close(&d->font);
            return -1;
        }
    }
    return 0;
}

int vw_draw_set_text(vw_draw *d, int text_size)
{
    vw_font f, sm[VW_VALUE_FONTS - 1];
    if (vw_font_open(&f, d->r, text_size)) return -1;
    for (int k = 0; k < VW_VALUE_FONTS - 1; ++k)
        if (vw_font_open(&sm[k], d->r, small_px(text_size, k))) {
            while (k-- > 0) vw_font_close(&sm[k]);
            vw_font_close(&f);
            return -1;
        }
    vw_font_close(&d->font);
    d->font = f;
    d->text_px = text_size;
    for (int k = 0; k < VW_VALUE_FONTS - 1; ++k) {
        vw_font_close(&d->small[k]);
        d->small[k] = sm[k];
        d->small_px[k] = small_px(text_size, k);
    }
    return 0;
}

const vw_font *vw_value_font(const vw_draw *d, int k)
{
    return k <= 0 ? &d->font : &d->small[k < VW_VALUE_FONTS - 1 ? k - 1 : VW_VALUE_FONTS - 2];
}

int vw_value_font_px(const vw_draw *d, int k)
{
    return k <= 0 ? d->text_px : d->small_px[k < VW_VALUE_FONTS - 1 ? k - 1 : VW_VALUE_FONTS - 2];
}

int vw_value_fonts(const vw_draw *d, int h)
{
    int n = 1;
    while (n < VW_VALUE_FONTS && vw_value_font_px(d, n) >= vw_legible_px(h)) n++;
    return n;
}

void vw_draw_value_metrics(const vw_draw *d, vw_layout *L)
{
    /* the smallest a slide prints at: what a cell must hold, or the slide zooms */
    const vw_font *f = vw_value_font(d, vw_value_fonts(d, L->h) - 1);
    L->vadv = f->advance, L->vline = f->line;
}

/* Room left of a slide's panel for its focused sample's four weights as a key
 * (vw_draw_sample_weights), in the font a size up from the least legible, "36 * 0.65625":
 * the layout sizes the pictures with it (issue 38 D12 #26, tenth re-trial: at 1280x960
 * and 1024x768 06 s3-s5's 6 x 6 input filled its panel beside the 2 x 2 output and the
 * weights printed at the least legible size). */
static void weights_key_room(const vw_draw *d, vw_layout *L, const vw_state *s)
{
    L->key_w[0] = L->key_w[1] = 0;
    /* not where the weights are hidden, on a question slide too (05 s6 asks one): the room
     * would stand empty there */
    if (!s->nslides || !s->idx || s->slides[s->slide].hide_weights) return;
    const uint32_t ev = vw_state_event(s);
    const ks_event *e = ev != VW_NONE ? vw_event(s->tr, ev) : NULL;
    const uint32_t all = KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11;
    if (!e || e->kind != KS_EV_SAMPLE || (e->flags & all) != all || (e->flags & (KS_FLAG_CLAMP_Y | KS_FLAG_CLAMP_X)))
        return;
    const int fonts = vw_value_fonts(d, L->want_h); /* vw_weight_font's, at this frame's height */
    const vw_font *f = vw_value_font(d, fonts >= 2 ? fonts - 2 : 0);
    for (int p = 0; p < 2; ++p)
        if (s->panel[p].tensor == (int)e->tensor && s->panel[p].plane == e->u.sample.plane)
            L->key_w[p] = 12 * f->advance + 10 + 8;
}

void vw_draw_layout(const vw_draw *d, vw_layout *L, const vw_state *s, int w, int h)
{
    vw_layout v = {.h = h < VW_MIN_H ? VW_MIN_H : h};
    vw_draw_value_metrics(d, &v);
    L->want_vadv = v.vadv, L->want_vline = v.vline, L->want_h = v.h;
    weights_key_room(d, L, s);
    vw_layout_for_state(L, s, d->font.advance, d->font.line, w, h);
    vw_draw_value_metrics(d, L);
}

void vw_draw_free(vw_draw *d)
{
    for (int p = 0; p < 2; ++p)
        if (d->heat[p].tex) SDL_DestroyTexture(d->heat[p].tex);
    for (int p = 0; p < 2; ++p) free(d->heat[p].texels), d->heat[p].texels = NULL;
    if (d->grid.tex) SDL_DestroyTexture(d->grid.tex);
    free(d->grid.first);
    free(d->grid.last);
    free(d->grid.pixels);
    free(d->tile.v);
    vw_font_close(&d->font);
    for (int k = 0; k < VW_VALUE_FONTS - 1; ++k) vw_font_close(&d->small[k]);
    memset(d, 0, sizeof *d);
}

static void draw_decomp(vw_draw *d, const vw_state *s, const vw_layout *L)
{
    static vw_lines lines; /* ~10 KB: kept off the stack */
    static const uint32_t colors[] = {VW_COL_TEXT, VW_COL_HEAD, VW_COL_FOCUS, VW_COL_DIM};
    vw_rect a = L->decomp;
    if (s->strip) vw_draw_warp(d, s, vw_strip_area(&a, L->line));
    const vw_rect shared = s->shared ? vw_shared_area(&a, L->line) : a;
    vw_fill(d->r, a, VW_COL_PANEL);
    if (s->nslides && !s->reveal && s->slides[s->slide].hide_decomp) { /* its fields would answer the question */
        d->rec.decomp_hidden = 1;
        vw_text(&d->font, d->r, a.x + 4, a.y + 2, VW_COL_TEXT, a.w - 8, "the work item's fields:");
        vw_text(&d->font, d->r, a.x + 4, a.y + 2 + d->font.line, VW_COL_TEXT, a.w - 8, "hidden until the answer");
        return;
    }
    int rows = (a.h - 4) / d->font.line;
    /* long lines wrap: no number is cut at the panel's edge */
    vw_describe_focus_wrapped(s, (a.w - 8) / (d->font.advance > 0 ? d->font.advance : 8), &lines, rows);
    vw_record *rec = &d->rec;
    vw_describe_work_names(s, rec->work_fields, sizeof rec->work_fields);
    rec->decomp_item = vw_state_item(s) == VW_NONE ? -1 : (int64_t)vw_state_item(s);
    for (int i = 0; i < lines.n && 2 + (i + 1) * d->font.line <= a.h; ++i) { /* whole lines only */
        vw_text(&d->font, d->r, a.x + 4, a.y + 2 + i * d->font.line, colors[lines.style[i]], a.w - 8, lines.text[i]);
        if (rec->decomp_lines < VW_REC_LINES)
            snprintf(rec->decomp_text[rec->decomp_lines], sizeof rec->decomp_text[0], "%s", lines.text[i]);
        rec->decomp_lines++;
        rec->decomp_later += rec->decomp_focus && lines.style[i] != VW_STYLE_FOCUS;
        rec->decomp_focus |= lines.style[i] == VW_STYLE_FOCUS && lines.text[i][0] == '>';
        /* a field's line: "  name = ..." (a continuation is indented under its value), and
         * the second field of a line that holds two */
        for (const char *t = lines.text[i]; t && lines.style[i] == VW_STYLE_TEXT; t = vw_field_second(t)) {
            const size_t len = vw_field_name_len(t);
            if (!len) break;
            const size_t used = strlen(rec->fields);
            snprintf(rec->fields + used, sizeof rec->fields - used, "%s%.*s ", used ? "" : " ", (int)len, t + 2);
        }
    }
    if (s->shared) vw_draw_shared(d, s, shared); /* after the text, which may run long */
}

static void draw_story(vw_draw *d, const vw_state *s, const vw_layout *L)
{
    static vw_lines lines;
    static const uint32_t colors[] = {VW_COL_TEXT, VW_COL_HEAD, VW_COL_FOCUS, VW_COL_DIM};
    vw_rect a = L->story;
    if (!s->nslides || a.h <= 0) return;
    vw_fill(d->r, a, 0x1C2230);
    vw_outline(d->r, a, VW_COL_HEAD, 1, 0);
    int rows = vw_band_rows(a, d->font.line), cols = vw_band_cols(a, d->font.advance);
    vw_describe_story(s, cols, &lines, rows);
    d->rec.band_rows = rows;
    d->rec.band_lines = lines.n;
    /* the narration as this band wraps it (a column beside the pictures wraps it longer
     * than a band across the frame): what a projector shows, what --check counts */
    d->rec.band_body = vw_story_narration_lines(&s->slides[s->slide], cols);
    for (int i = 0; i < lines.n; ++i) {
        vw_text(&d->font, d->r, a.x + 8, a.y + 4 + i * d->font.line, colors[lines.style[i]], a.w - 16, lines.text[i]);
        d->rec.band_cut |= !strncmp(lines.text[i], "... (the rest:", 14);
        if (i < VW_REC_LINES) snprintf(d->rec.band_text[i], sizeof d->rec.band_text[0], "%s", lines.text[i]);
    }
}

static void draw_timeline(vw_draw *d, const vw_state *s, const vw_layout *L)
{
    vw_rect t = L->timeline;
    uint64_t n = vw_state_len(s);
    vw_fill(d->r, t, VW_COL_PANEL);
    if (!n) return;
    int x = vw_timeline_x(t, n, s->pos);
    vw_rect done = {.x = t.x, .y = t.y + t.h / 2 - 3, .w = x - t.x, .h = 6};
    vw_fill(d->r, done, VW_COL_DONE);
    /* where the looked-up element's hits sit in this order */
    for (uint64_t i = 0; i < s->look.n && i < 512; ++i) {
        vw_index tmp = {0};
        tmp.tr = s->tr;
        const vw_index *idx = s->idx ? s->idx : &tmp;
        uint64_t p = vw_order_pos(idx, s->idx ? s->order : VW_ORDER_RECORDED, s->look.hits[i].event);
        vw_rect tick = {.x = vw_timeline_x(t, n, p), .y = t.y + 2, .w = 1, .h = t.h - 4};
        vw_fill(d->r, tick, VW_COL_LOOKUP);
    }
    vw_rect cur = {.x = x - 1, .y = t.y, .w = 3, .h = t.h};
    vw_fill(d->r, cur, VW_COL_CURRENT);
}

static void draw_help(vw_draw *d, const vw_layout *L)
{
    const char *const *h = vw_help_lines();
    int n = 0, w = 0;
    for (; h[n]; ++n)
        if ((int)strlen(h[n]) > w) w = (int)strlen(h[n]);
    vw_rect box = {.x = L->w / 2 - (w * d->font.advance) / 2 - 12,
                   .y = L->h / 2 - (n * d->font.line) / 2 - 12,
                   .w = w * d->font.advance + 24,
                   .h = n * d->font.line + 24};
    vw_fill(d->r, box, 0x101014);
    vw_outline(d->r, box, VW_COL_HEAD, 1, 0);
    for (int i = 0; i < n; ++i)
        vw_text(&d->font, d->r, box.x + 12, box.y + 12 + i * d->font.line, i ? VW_COL_TEXT : VW_COL_HEAD, 0, h[i]);
}


void vw_draw_frame(vw_draw *d, const vw_state *s, const vw_layout *L, int permille)
{
    char buf[512];
    vw_draw_live_sync(d, s);
    vw_record *rec = &d->rec;
    memset(rec, 0, sizeof *rec);
    d->font.cuts = &rec->cuts; /* what vw_text cuts this frame */
    for (int k = 0; k < VW_VALUE_FONTS - 1; ++k) d->small[k].cuts = &rec->cuts;
    rec->w = L->w, rec->h = L->h, rec->line = d->font.line, rec->advance = d->font.advance, rec->text_px = d->text_px;
    d->key_w[0] = L->key_w[0], d->key_w[1] = L->key_w[1];
    rec->arrangement = L->arrangement;
    rec->title = L->title, rec->story = L->story, rec->decomp = L->decomp, rec->grid = L->grid;
    rec->status = L->status;
    rec->focus_panel = vw_about_panel(s);
    vw_color(d->r, VW_COL_BG);
    SDL_RenderClear(d->r);
    static vw_lines title;
    vw_fill(d->r, L->title, 0x2A2A40);
    vw_describe_title_lines(s, (L->title.w - 12) / (d->font.advance > 0 ? d->font.advance : 8), &title);
    for (int i = 0; i < title.n && i < L->title_lines; ++i)
        vw_text(&d->font, d->r, L->title.x + 6, L->title.y + 3 + i * d->font.line, VW_COL_TEXT, L->title.w - 12,
                title.text[i]);
    for (int p = 0; p < 2; ++p) {
        vw_draw_heatmap(d, s, L, p);
        vw_draw_overlays(d, s, L, p);
        vw_draw_figures(d, s, L, p);
    }
    if (L->decomp.h > 0) draw_decomp(d, s, L);
    /* a slide's grid panel shows when it has room for its lines and a row of cells */
    if (L->grid.h >= 4 * L->line + 12 || (!L->arrangement && L->grid.h > 0)) {
        if (s->gantt && s->sched.ok) vw_draw_gantt(d, s, L);
        else vw_draw_grid(d, s, L);
    }
    draw_story(d, s, L);
    draw_timeline(d, s, L);
    vw_fill(d->r, L->status, 0x2A2A40);
    /* a slide's line fits its bar; the live viewer's keeps every part (the bar cuts it) */
    const int adv = d->font.advance > 0 ? d->font.advance : 8;
    vw_describe_status_fit(s, permille, s->nslides ? (L->status.w - 12) / adv : 0, buf, sizeof buf);
    snprintf(rec->status_text, sizeof rec->status_text, "%.*s", (int)sizeof rec->status_text - 1, buf);
    rec->status_cut = (int)strlen(buf) * adv > L->status.w - 12;
    vw_text(&d->font, d->r, L->status.x + 6, L->status.y + 3, s->prompt ? VW_COL_HEAD : VW_COL_TEXT, L->status.w - 12,
            buf);
    const vw_rect bar = vw_progress_bar(L->status, permille); /* the index build, while it runs */
    if (bar.w > 0) vw_fill(d->r, bar, VW_COL_HEAD);
    vw_draw_live(d, s, L);
    if (s->help) draw_help(d, L);
}
