/* vw_draw_shared.c - the shared-tile panel (T; on by default in a trace with shared
 * memory): the focused block's shared arrays (the planes of the trace's shared tensor,
 * side by side) at the focused event's barrier phase. A cell's colour is the phase that
 * last wrote it (one hue per phase, bright when it is this phase, dim when earlier; dark:
 * never written, the simulator's poison); cells this phase reads carry a white dot, the
 * focused access a cyan outline. P / Shift+P step the focus to the next / previous phase. */
#include <stdio.h>
#include <stdlib.h>

#include "vw_draw_int.h"
#include "vw_phase.h"

static const uint32_t hue[8] = {0x4C78C8, 0xE0A030, 0x50B060, 0xC85050, 0x9068C0, 0x40B0B0, 0xC070A0, 0xA0A040};

static uint32_t dim(uint32_t c) { return ((c >> 1) & 0x7F7F7F) - ((c >> 3) & 0x1F1F1F); }

vw_rect vw_shared_area(vw_rect *decomp, int line)
{
    int h = decomp->h - 2 * line - 8; /* two lines of the decomposition stay */
    if (h < 3 * line) h = decomp->h;
    vw_rect a = {.x = decomp->x, .y = decomp->y + decomp->h - h, .w = decomp->w, .h = h};
    decomp->h -= h + 4;
    if (decomp->h < 0) decomp->h = 0;
    return a;
}

void vw_draw_shared(vw_draw *d, const vw_state *s, vw_rect area)
{
    const ks_trace *tr = s->tr;
    const int t = vw_shared_tensor(tr);
    const uint32_t ev = vw_state_event(s);
    char text[160];
    vw_fill(d->r, area, VW_COL_PANEL);
    vw_outline(d->r, area, VW_COL_DIM, 1, 0);
    const int64_t phase = ev == VW_NONE ? -1 : vw_event_phase(tr, ev);
    if (t < 0 || phase < 0) {
        vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_DIM, area.w - 8,
                "shared memory: the focused item has no shared access (P: next barrier phase)");
        return;
    }
    const ks_tensor *ts = &tr->tensors[t];
    const int64_t n = ks_tensor_numel(ts), X = ts->ndim >= 1 ? ts->shape[ts->ndim - 1] : 1,
                  Y = ts->ndim >= 2 ? ts->shape[ts->ndim - 2] : 1, planes = X * Y > 0 ? n / (X * Y) : 0;
    const uint32_t block = vw_event(tr, ev)->block;
    snprintf(text, sizeof text, "shared: block %u, phase %lld (P / Shift+P: next / previous phase)", block,
             (long long)phase);
    vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_HEAD, area.w - 8, text);
    vw_text(&d->font, d->r, area.x + 4, area.y + 2 + d->font.line, VW_COL_DIM, area.w - 8,
            "colour: the phase that last wrote a cell (bright: this one; dark: never); dot: read in this phase");
    int32_t *last = malloc((size_t)(n ? n : 1) * sizeof *last);
    unsigned char *touched = malloc((size_t)(n ? n : 1));
    if (!last || !touched || !planes) {
        free(last), free(touched);
        return;
    }
    vw_shared_tile(tr, block, phase, last, touched, n);
    /* the planes side by side, square cells, under the text line */
    const int top = area.y + 2 * d->font.line + 4, avail_h = area.y + area.h - top - 4;
    int cell = (int)((area.w - 8 - 8 * (planes - 1)) / (planes * X));
    if (cell > avail_h / (int)Y) cell = avail_h / (int)Y;
    if (cell > 16) cell = 16;
    const int64_t focus_off = vw_event(tr, ev)->kind != KS_EV_BARRIER && (vw_event(tr, ev)->flags & KS_FLAG_SHARED)
                                  ? vw_event(tr, ev)->u.access.offset
                                  : -1;
    for (int64_t p = 0; cell >= 2 && p < planes; ++p)
        for (int64_t y = 0; y < Y; ++y)
            for (int64_t x = 0; x < X; ++x) {
                const int64_t k = (p * Y + y) * X + x;
                const vw_rect c = {.x = area.x + 4 + (int)(p * (X * cell + 8) + x * cell),
                                   .y = top + (int)(y * cell),
                                   .w = cell - (cell > 3),
                                   .h = cell - (cell > 3)};
                const uint32_t col = last[k] < 0        ? 0x2C2C34
                                     : last[k] == phase ? hue[last[k] % 8]
                                                        : dim(hue[last[k] % 8]);
                vw_fill(d->r, c, col);
                if (touched[k] & 1) { /* read in this phase: a white dot */
                    const int dot = cell / 3 > 1 ? cell / 3 : 1;
                    vw_fill(d->r, (vw_rect){.x = c.x + (c.w - dot) / 2, .y = c.y + (c.h - dot) / 2, .w = dot, .h = dot},
                            VW_COL_ITEM);
                }
                if (k == focus_off) vw_outline(d->r, c, VW_COL_FOCUS, 2, 1);
            }
    free(last), free(touched);
}
