/* vw_draw_live.c - the live-parameters panel (see vw_live.h) and cache invalidation. */
#include "vw_draw_live.h"

#include <stdlib.h>
#include <string.h>

#include "vw_draw_int.h"
#include "vw_live.h"

#define VW_COL_LIVE_BG 0x141C24

void vw_draw_live_sync(vw_draw *d, const vw_state *s)
{
    const unsigned gen = s->live ? s->live->gen : d->live_gen;
    if (gen == d->live_gen && s->tr == d->cache_tr) return;
    d->live_gen = gen;
    d->cache_tr = s->tr;
    for (int p = 0; p < 2; ++p) {
        if (d->heat[p].tex) {
            SDL_DestroyTexture(d->heat[p].tex);
            d->heat[p].tex = NULL;
        }
        d->heat[p].range_ok = 0;
    }
    free(d->grid.first); /* the grid's spans are positions in the old trace */
    d->grid.first = NULL;
    d->warp_built = 0;
    d->tile.tensor = -1; /* the shared tile's values are the old trace's */
}

/* A lesson's narration band while a re-run shows: the slides are about the opened trace. */
static void draw_story_note(vw_draw *d, const vw_live *l, const vw_layout *L)
{
    if (l->at < 0 || !l->nslides || L->story.h <= 0) return;
    vw_fill(d->r, L->story, 0x1C2230);
    vw_outline(d->r, L->story, VW_COL_HEAD, 1, 0);
    vw_text(&d->font, d->r, L->story.x + 8, L->story.y + 4, VW_COL_HEAD, L->story.w - 16,
            "A live re-run is shown: the lesson's slides describe the trace it opened. D brings it back.");
}

void vw_draw_live(vw_draw *d, const vw_state *s, const vw_layout *L)
{
    if (s->live) draw_story_note(d, s->live, L);
    static vw_lines lines; /* ~10 KB: kept off the stack */
    static const uint32_t colors[] = {VW_COL_TEXT, VW_COL_HEAD, VW_COL_FOCUS, VW_COL_DIM, VW_COL_INVALID};
    if (!s->live || !s->live->open) return;
    const vw_rect a = vw_live_area(L);
    vw_fill(d->r, a, VW_COL_LIVE_BG);
    vw_outline(d->r, a, VW_COL_HEAD, 1, 0);
    const int rows = (a.h - 6) / d->font.line, cols = (a.w - 12) / (d->font.advance > 0 ? d->font.advance : 8);
    /* the parameter rows as they are, the other lines (heading, keys, help, note, error)
     * wrapped to the panel; fewer parameter rows when the wrapped lines need the room */
    static vw_lines raw;
    for (int want = rows; want > 0; --want) {
        vw_live_lines(s->live, &raw, want);
        lines.n = 0;
        for (int i = 0; i < raw.n; ++i) {
            if (raw.style[i] == VW_STYLE_TEXT || raw.style[i] == VW_STYLE_FOCUS || (int)strlen(raw.text[i]) <= cols) {
                if (lines.n < VW_MAX_LINES) {
                    lines.style[lines.n] = raw.style[i];
                    memcpy(lines.text[lines.n++], raw.text[i], sizeof raw.text[i]);
                }
            } else {
                vw_wrap(&lines, VW_MAX_LINES, raw.style[i], raw.text[i], cols);
            }
        }
        if (lines.n <= rows) break;
    }
    if (lines.n > rows) lines.n = rows;
    for (int i = 0; i < lines.n; ++i) {
        const int y = a.y + 3 + i * d->font.line;
        if (lines.style[i] == VW_STYLE_FOCUS) { /* the selected row: a band behind it */
            const vw_rect band = {.x = a.x + 2, .y = y, .w = a.w - 4, .h = d->font.line};
            vw_fill(d->r, band, 0x203A48);
        }
        vw_text(&d->font, d->r, a.x + 6, y, colors[lines.style[i]], a.w - 12, lines.text[i]);
    }
}
