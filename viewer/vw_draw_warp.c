/* vw_draw_warp.c - the warp strip: the focused event's warp request as 32 lane boxes over
 * a byte-address axis of its 128-byte lines, sector boundaries (32 B) as short ticks and
 * line boundaries as tall ones, each access a box on the axis in its sector's colour with
 * a link up to its lane; inactive lanes stay empty outlines. The numbers are
 * trace/memory.c's (vw_warp.h). */
#include <stdio.h>
#include <string.h>

#include "vw_colormap.h"
#include "vw_draw_int.h"

void vw_draw_warp(vw_draw *d, const vw_state *s, vw_rect area)
{
    int own;
    const uint32_t ev = vw_warp_event(s, &own);
    if (!d->warp_built || d->warp.event != ev) {
        if (ev == VW_NONE || vw_warp_build(s->tr, ev, &d->warp)) d->warp.ok = 0;
        d->warp.event = ev;
        d->warp_built = 1;
    }
    const vw_warp *w = &d->warp;
    char text[256];
    vw_fill(d->r, area, VW_COL_PANEL);
    vw_outline(d->r, area, VW_COL_DIM, 1, 0);
    /* two lines: which request (warp, block, tap, the site), then its counts; each in
     * the longest wording that fits the column (issue 38: the site's name was cut) */
    const int room = area.w - 8, adv = d->font.advance > 0 ? d->font.advance : 8;
    char counts[128] = "";
    if (w->ok) {
        char corner[24] = "";
        if (w->sample) snprintf(corner, sizeof corner, ", corner %d", w->corner);
        for (int k = 0; k < 3; ++k) {
            if (k == 0)
                snprintf(text, sizeof text, "warp %u of block %u, tap %u%s, site %s", w->req.warp, w->req.block,
                         (unsigned)w->req.tap, corner, s->tr->sites[w->site].name);
            else
                snprintf(text, sizeof text, k == 1 ? "warp %u of block %u, tap %u%s" : "warp %u, block %u, tap %u%s",
                         w->req.warp, w->req.block, (unsigned)w->req.tap, corner);
            if ((int)strlen(text) * adv <= room) break;
        }
        for (int k = 0; k < 3; ++k) {
            static const char *const first[] = {"  [the item's first access]", "  [its first access]", ""};
            snprintf(counts, sizeof counts, "%u lanes, %u sectors (ideal %u)%s", w->req.lanes, w->req.sectors,
                     w->req.ideal, own ? "" : first[k]);
            if ((int)strlen(counts) * adv <= room) break;
        }
    } else {
        vw_warp_text(s->tr, w, text, sizeof text);
    }
    vw_text(&d->font, d->r, area.x + 4, area.y + 2, w->ok ? VW_COL_HEAD : VW_COL_DIM, room, text);
    if (counts[0]) vw_text(&d->font, d->r, area.x + 4, area.y + 2 + d->font.line, VW_COL_HEAD, room, counts);
    vw_rect lanes, axis;
    vw_strip_parts(area, d->font.line, &lanes, &axis);
    if (lanes.w < 64 || axis.y < lanes.y + lanes.h + 4) return;
    for (int k = 0; k < 32; ++k) vw_outline(d->r, vw_strip_lane(lanes, k), 0x3A3A46, 1, 0);
    if (!w->ok) return;
    /* the axis: each line's background, its sector ticks, its start tick and address */
    for (int k = 0; k < w->nlines; ++k) {
        const int x0 = axis.x + (int)vw_warp_axis(w, w->line[k] * 128, axis.w);
        const int x1 = axis.x + (int)vw_warp_axis(w, w->line[k] * 128 + 128, axis.w) - 1;
        vw_fill(d->r, (vw_rect){.x = x0, .y = axis.y, .w = x1 - x0, .h = axis.h}, 0x34343E);
        for (int q = 1; q < 4; ++q) {
            const int xs = axis.x + (int)vw_warp_axis(w, w->line[k] * 128 + 32 * (uint64_t)q, axis.w);
            vw_fill(d->r, (vw_rect){.x = xs, .y = axis.y + axis.h - 4, .w = 1, .h = 4}, VW_COL_DIM);
        }
        vw_fill(d->r, (vw_rect){.x = x0, .y = axis.y - 3, .w = 1, .h = axis.h + 6}, VW_COL_TEXT);
        vw_fill(d->r, (vw_rect){.x = x1, .y = axis.y - 3, .w = 1, .h = axis.h + 6}, VW_COL_TEXT);
        /* each sector's first byte where its label fits in the sector, else the line's */
        for (int q = 0; q < 4; ++q) {
            char addr[32];
            snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)(w->line[k] * 128 + 32 * (uint64_t)q));
            const int xs = axis.x + (int)vw_warp_axis(w, w->line[k] * 128 + 32 * (uint64_t)q, axis.w);
            const int tw = (int)strlen(addr) * d->font.advance;
            if (q ? tw + 6 < (x1 - x0) / 4 : tw + 4 < x1 - x0 || w->nlines == 1)
                vw_text(&d->font, d->r, xs + 2, axis.y + axis.h + 2, VW_COL_DIM, 0, addr);
        }
    }
    /* the accesses: a box on the axis, a link up to the lane, the lane filled */
    const uint32_t lane_of_ev = vw_event(s->tr, ev)->thread % 32;
    for (int i = w->nacc - 1; i >= 0; --i) {
        const ks_mem_access *a = &w->acc[i];
        const uint32_t col = vw_warp_color(w->sector[i]);
        const int bx = axis.x + (int)vw_warp_axis(w, a->byte, axis.w);
        int bw = axis.x + (int)vw_warp_axis(w, a->byte + (uint64_t)w->elem, axis.w) - bx - 1;
        if (bw < 2) bw = 2;
        vw_fill(d->r, (vw_rect){.x = bx, .y = axis.y + 1, .w = bw, .h = axis.h - 5}, col);
        const vw_rect lane = vw_strip_lane(lanes, (int)a->lane);
        vw_color(d->r, col);
        SDL_RenderDrawLine(d->r, lane.x + lane.w / 2, lane.y + lane.h, bx + bw / 2, axis.y);
        vw_fill(d->r, lane, col);
    }
    for (int i = 0; i < w->nacc; ++i)
        if (w->acc[i].event == ev) vw_outline(d->r, vw_strip_lane(lanes, (int)lane_of_ev), VW_COL_FOCUS, 2, 2);
}
