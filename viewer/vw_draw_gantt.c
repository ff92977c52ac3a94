/* vw_draw_gantt.c - the schedule chart (C) in place of the grid: a row per SM, each block a
 * bar from its start to its end in its colour (a ramp over the block ids), the focused
 * work item's block outlined in cyan, a time axis with ticks under it (vw_gantt.h). */
#include <stdio.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_draw_int.h"

/* dark text on a bright bar, white on a dark one */
static uint32_t ink_on(uint32_t c)
{
    const int y = (int)(((c >> 16) & 255) * 299 + ((c >> 8) & 255) * 587 + (c & 255) * 114) / 1000;
    return y > 128 ? 0x101014 : 0xFFFFFF;
}

void vw_draw_gantt(vw_draw *d, const vw_state *s, const vw_layout *L)
{
    const vw_gantt *g = &s->sched;
    const vw_rect area = L->grid, plot = vw_gantt_area(L);
    const int line = L->line, adv = d->font.advance > 0 ? d->font.advance : 8;
    char buf[160];
    vw_fill(d->r, area, VW_COL_PANEL);
    vw_gantt_title(g, buf, sizeof buf);
    vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_TEXT, area.w - 8, buf);
    vw_text(&d->font, d->r, area.x + 4, area.y + area.h - line - 2, VW_COL_DIM, area.w - 8, vw_gantt_unit(g));
    vw_fill(d->r, plot, 0x1A1A20);
    if (!g->ok || !g->nbars) return;
    /* the time axis: ticks at round numbers of the unit, faint guides across the plot */
    const double scale = vw_gantt_scale(g), span = ((double)g->t1 - (double)g->t0) * scale;
    const int max_ticks = plot.w / (10 * adv) > 1 ? plot.w / (10 * adv) : 1;
    const double step = vw_gantt_tick_step(span, max_ticks);
    for (int k = 0; k <= max_ticks + 1; ++k) {
        const double v = k * step;
        if (v > span * (1 + 1e-9) && k) break;
        const int x = vw_gantt_x(g, plot, g->t0 + (int64_t)(v / scale + 0.5));
        vw_fill(d->r, (vw_rect){.x = x, .y = plot.y, .w = 1, .h = plot.h}, 0x2E2E38);
        vw_fill(d->r, (vw_rect){.x = x, .y = plot.y + plot.h, .w = 1, .h = 4}, VW_COL_DIM);
        snprintf(buf, sizeof buf, "%g", v);
        const int tw = (int)strlen(buf) * adv;
        int tx = x - tw / 2;
        if (tx < plot.x - 4) tx = plot.x - 4;
        if (tx + tw > area.x + area.w - 2) tx = area.x + area.w - 2 - tw;
        vw_text(&d->font, d->r, tx, plot.y + plot.h + 5, VW_COL_DIM, 0, buf);
    }
    /* row labels: every row when rows are a text line high, else every k-th */
    const int every = g->nrows * line > plot.h ? (g->nrows * line + plot.h - 1) / (plot.h > 0 ? plot.h : 1) : 1;
    for (int r = 0; r < g->nrows; r += every) {
        const vw_rect rr = vw_gantt_row_rect(g, plot, r);
        vw_gantt_row_name(g, r, buf, sizeof buf);
        vw_text(&d->font, d->r, area.x + 4, rr.y + rr.h / 2 - line / 2, VW_COL_DIM, plot.x - area.x - 8, buf);
    }
    /* the bars, with the block id when it fits */
    for (int64_t i = 0; i < g->nbars; ++i) {
        const vw_rect r = vw_gantt_bar_rect(g, plot, i);
        const uint32_t col = vw_gantt_color(g, g->bars[i].block);
        vw_fill(d->r, r, col);
        if (r.w >= 6 && r.h >= 6) vw_outline(d->r, r, VW_COL_PANEL, 1, 0);
        snprintf(buf, sizeof buf, "%lld", (long long)g->bars[i].block);
        if (r.h >= line && r.w >= (int)strlen(buf) * adv + 6)
            vw_text(&d->font, d->r, r.x + 3, r.y + (r.h - line) / 2, ink_on(col), 0, buf);
    }
    /* the focused work item's block */
    const uint32_t it = vw_state_item(s), ev = vw_state_event(s);
    const int64_t block = it != VW_NONE   ? (int64_t)s->idx->items[it].block
                          : ev != VW_NONE ? (int64_t)vw_event(s->tr, ev)->block
                                          : -1;
    const int64_t f = block >= 0 ? vw_gantt_find(g, block) : -1;
    if (f >= 0) vw_outline(d->r, vw_gantt_bar_rect(g, plot, f), VW_COL_FOCUS, 2, 2);
}
