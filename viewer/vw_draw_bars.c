/* vw_draw_bars.c - a plane of one row (a 1-D tensor: sparse convolution's pair_count per
 * kernel offset, a bias, a hash table) as a bar chart above its row of cells: each cell's
 * bar stands over it, as high as the cell's number in the current mode, in the cell's
 * colour, with the number on top when the bar is wide enough. Empty cells (negative
 * integers) get no bar. The cells stay where they are, so clicks and overlays are those of
 * the heatmap. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_draw_int.h"
#include "vw_plane.h"

void vw_draw_bars(vw_draw *d, const vw_state *s, const vw_layout *L, int panel, const vw_heat_cache *c,
                  const vw_heatmap *m)
{
    const int t = s->panel[panel].tensor;
    const ks_tensor *T = &s->tr->tensors[t];
    const vw_plane_dims pd = vw_plane_dims_of(T);
    if (!s->bars || pd.h != 1 || pd.w > VW_BARS_MAX || pd.planes < 1) return;
    const vw_rect room = vw_bars_area(panel ? L->output : L->input, m, L->line);
    const int top = room.y, bottom = room.y + room.h;
    if (room.h < 16) return;
    const double base = c->lo < 0 ? c->lo : 0, span = c->hi - base;
    const int64_t row = s->panel[panel].plane * pd.w;
    /* a zoomed row reaches past its panel: its bars stay inside it (lesson 08 step 14's
     * hash table stood over the other panel's sites) */
    const SDL_Rect clip = vw_sdl(panel ? L->output : L->input);
    SDL_RenderSetClipRect(d->r, &clip);
    for (int64_t x = 0; x < pd.w; ++x) {
        if (c->mode == VW_MODE_VALUES && T->dtype != KS_F32 && vw_cell_empty(T, row + x)) continue;
        const double v = vw_heat_value(s, t, row + x, c->mode);
        if (!isfinite(v) || (c->mode == VW_MODE_SECTORS && v < 0)) continue;
        const vw_rect cell = vw_heatmap_cell(m, 0, x);
        const double f = span > 0 ? (v - base) / span : 0;
        const int h = (int)lround(f * (bottom - top));
        const int gap = cell.w >= 6 ? 1 + cell.w / 8 : 0;
        vw_rect bar = {.x = cell.x + gap, .y = bottom - h, .w = cell.w - 2 * gap, .h = h};
        if (bar.w < 1) bar.w = 1;
        if (h > 0) vw_fill(d->r, bar, vw_colormap(c->ramp0 + (1 - c->ramp0) * vw_heat_t(c->mode, v, c->lo, c->hi)));
        char num[24];
        snprintf(num, sizeof num, "%.4g", v);
        const int tw = (int)strlen(num) * d->font.advance, tx = cell.x + (cell.w - tw) / 2;
        /* the number whole or not at all: a bar the panel's edge cuts keeps its colour */
        if (tw + 2 <= cell.w && tx >= clip.x && tx + tw <= clip.x + clip.w)
            vw_text(&d->font, d->r, tx, bottom - h - d->font.line - 1, VW_COL_TEXT, 0, num);
    }
    /* the axis: the bars' zero */
    vw_rect axis = {.x = (int)floor(m->ox), .y = bottom, .w = (int)ceil(m->cell * (double)pd.w), .h = 1};
    vw_fill(d->r, axis, VW_COL_DIM);
    SDL_RenderSetClipRect(d->r, NULL);
}
