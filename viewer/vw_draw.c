/* vw_draw.c - one frame: title, the two heatmaps with their overlays, the decomposition
 * panel, the grid, the timeline, the status line and the help. */
#include "vw_draw.h"

#include <stdio.h>
#include <stdlib.h>

#include "vw_colormap.h"
#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_draw_live.h"

int vw_draw_init(vw_draw *d, SDL_Renderer *r, int text_size)
{
    memset(d, 0, sizeof *d);
    d->r = r;
    return vw_font_open(&d->font, r, text_size) ? -1 : 0;
}

int vw_draw_set_text(vw_draw *d, int text_size)
{
    vw_font f;
    if (vw_font_open(&f, d->r, text_size)) return -1;
    vw_font_close(&d->font);
    d->font = f;
    return 0;
}

void vw_draw_free(vw_draw *d)
{
    for (int p = 0; p < 2; ++p)
        if (d->heat[p].tex) SDL_DestroyTexture(d->heat[p].tex);
    if (d->grid.tex) SDL_DestroyTexture(d->grid.tex);
    free(d->grid.first);
    free(d->grid.last);
    free(d->grid.pixels);
    vw_font_close(&d->font);
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
    int rows = (a.h - 4) / d->font.line;
    /* long lines wrap: no number is cut at the panel's edge */
    vw_describe_focus_wrapped(s, (a.w - 8) / (d->font.advance > 0 ? d->font.advance : 8), &lines, rows);
    for (int i = 0; i < lines.n && 2 + (i + 1) * d->font.line <= a.h; ++i) /* whole lines only */
        vw_text(&d->font, d->r, a.x + 4, a.y + 2 + i * d->font.line, colors[lines.style[i]], a.w - 8, lines.text[i]);
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
    int rows = (a.h - 8) / d->font.line, cols = (a.w - 16) / (d->font.advance > 0 ? d->font.advance : 8);
    vw_describe_story(s, cols, &lines, rows);
    for (int i = 0; i < lines.n; ++i)
        vw_text(&d->font, d->r, a.x + 8, a.y + 4 + i * d->font.line, colors[lines.style[i]], a.w - 16, lines.text[i]);
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
    }
    draw_decomp(d, s, L);
    if (s->gantt && s->sched.ok) vw_draw_gantt(d, s, L);
    else vw_draw_grid(d, s, L);
    draw_story(d, s, L);
    draw_timeline(d, s, L);
    vw_fill(d->r, L->status, 0x2A2A40);
    vw_describe_status(s, permille, buf, sizeof buf);
    vw_text(&d->font, d->r, L->status.x + 6, L->status.y + 3, s->prompt ? VW_COL_HEAD : VW_COL_TEXT, L->status.w - 12,
            buf);
    const vw_rect bar = vw_progress_bar(L->status, permille); /* the index build, while it runs */
    if (bar.w > 0) vw_fill(d->r, bar, VW_COL_HEAD);
    vw_draw_live(d, s, L);
    if (s->help) draw_help(d, L);
}
