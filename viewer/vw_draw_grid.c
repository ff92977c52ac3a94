/* vw_draw_grid.c - the launch as a grid of blocks (rows) x threads (columns), each screen
 * cell coloured by where its work stands at the current position: done, running (some
 * items done), pending, or idle (no work item in the trace); the focused thread in cyan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_draw_int.h"

/* Per screen cell, the first and last position of its items in the current order. */
static int rebuild(vw_grid_cache *c, const vw_state *s, vw_grid g)
{
    free(c->first);
    free(c->last);
    free(c->pixels);
    size_t n = (size_t)(g.rows * g.cols);
    c->first = malloc(n * sizeof *c->first);
    c->last = malloc(n * sizeof *c->last);
    c->pixels = malloc(n * sizeof *c->pixels);
    if (!c->first || !c->last || !c->pixels) return -1;
    for (size_t i = 0; i < n; ++i) {
        c->first[i] = UINT64_MAX;
        c->last[i] = 0;
    }
    const vw_index *idx = s->idx;
    for (uint32_t i = 0; idx && i < idx->nitems; ++i) {
        const vw_item *it = &idx->items[i];
        if (!it->count || it->block >= g.blocks || it->thread >= g.threads) continue;
        size_t cell = (size_t)((int64_t)it->block / g.bg * g.cols + (int64_t)it->thread / g.tg);
        uint64_t first, last;
        vw_item_span(idx, s->order, i, &first, &last);
        if (first < c->first[cell]) c->first[cell] = first;
        if (last > c->last[cell]) c->last[cell] = last;
    }
    c->g = g;
    c->order = s->order;
    c->indexed = idx != NULL;
    if (c->tex) SDL_DestroyTexture(c->tex);
    c->tex = NULL;
    return 0;
}

void vw_draw_grid(vw_draw *d, const vw_state *s, const vw_layout *L)
{
    const ks_trace *tr = s->tr;
    vw_rect area = L->grid;
    vw_fill(d->r, area, VW_COL_PANEL);
    vw_rect cells = {.x = area.x + 4, .y = area.y + 2 * L->line + 6, .w = area.w - 8, .h = area.h - 3 * L->line - 12};
    vw_grid g = vw_grid_fit(cells, tr->blocks, tr->threads);
    char head[160];
    /* the longest wording that fits (issue 38: lesson 01's narrow grid panel cut "(one
     * cell per thread)" to "(one cel") */
    static const char *const heads[] = {"grid: %lld block(s) x %d threads  (one cell per thread)",
                                        "grid: %lld block(s) x %d threads  (a cell per thread)",
                                        "grid: %lld block(s) x %d threads", "grid: %lld x %d threads",
                                        "%lld x %d threads"};
    for (int k = g.bg > 1 || g.tg > 1 ? 2 : 0; k < 5; ++k) {
        snprintf(head, sizeof head, heads[k], (long long)tr->blocks, tr->threads);
        if ((int)strlen(head) * d->font.advance <= area.w - 8) break;
    }
    vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_TEXT, area.w - 8, head);
    if (g.bg > 1 || g.tg > 1) {
        /* the longest wording that fits the panel (a slide's grid panel is narrow) */
        static const char *const forms[] = {"one cell = %lld block(s) x %lld thread(s)",
                                            "cell = %lld x %lld (block x thread)", "cell = %lld x %lld"};
        for (int k = 0; k < 3; ++k) {
            snprintf(head, sizeof head, forms[k], (long long)g.bg, (long long)g.tg);
            if ((int)strlen(head) * d->font.advance <= area.w - 8) break;
        }
        vw_text(&d->font, d->r, area.x + 4, area.y + 2 + L->line, VW_COL_DIM, area.w - 8, head);
    }
    vw_grid_cache *c = &d->grid;
    if (!c->first || c->order != s->order || c->indexed != (s->idx != NULL) || memcmp(&c->g, &g, sizeof g))
        if (rebuild(c, s, g)) return;
    uint64_t pos = s->pos;
    for (int64_t i = 0; i < g.rows * g.cols; ++i) {
        uint32_t col = VW_COL_IDLE;
        if (c->first[i] != UINT64_MAX)
            col = c->last[i] < pos ? VW_COL_DONE : c->first[i] > pos ? VW_COL_PENDING : VW_COL_RUNNING;
        c->pixels[i] = 0xFF000000u | col;
    }
    if (!c->tex)
        c->tex = SDL_CreateTexture(d->r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, (int)g.cols,
                                   (int)g.rows);
    if (c->tex) {
        SDL_UpdateTexture(c->tex, NULL, c->pixels, (int)g.cols * 4);
        vw_rect last = vw_grid_cell(&g, g.rows - 1, g.cols - 1);
        SDL_Rect dst = {.x = cells.x, .y = cells.y, .w = last.x + last.w - cells.x, .h = last.y + last.h - cells.y};
        SDL_RenderCopy(d->r, c->tex, NULL, &dst);
    }
    uint32_t ev = vw_state_event(s);
    if (ev != VW_NONE) {
        const ks_event *e = vw_event(tr, ev);
        if (e->block < g.blocks && e->thread < g.threads) {
            vw_rect cur = vw_grid_cell(&g, e->block / g.bg, e->thread / g.tg);
            vw_fill(d->r, cur, VW_COL_CURRENT);
            vw_outline(d->r, cur, VW_COL_CURRENT, 2, 2);
        }
    }
    int ly = area.y + area.h - L->line - 2, lx = area.x + 4;
    static const struct {
        uint32_t col;
        const char *name;
    } key[] = {{.col = VW_COL_DONE, .name = "done"},
               {.col = VW_COL_RUNNING, .name = "running"},
               {.col = VW_COL_PENDING, .name = "pending"},
               {.col = VW_COL_IDLE, .name = "no work"},
               {.col = VW_COL_CURRENT, .name = "focused"}};
    for (size_t k = 0; k < sizeof key / sizeof key[0]; ++k) {
        int need = 14 + (int)strlen(key[k].name) * d->font.advance;
        if (lx + need > area.x + area.w - 4) break; /* a narrow panel shows what fits */
        vw_rect sw = {.x = lx, .y = ly + 3, .w = 10, .h = 10};
        vw_fill(d->r, sw, key[k].col);
        lx += 14 + vw_text(&d->font, d->r, lx + 14, ly, VW_COL_DIM, 0, key[k].name) + 8;
    }
}
