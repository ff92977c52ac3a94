/* vw_draw_shared.c - the shared-tile panel (T; on by default in a trace with shared
 * memory): the focused block's shared arrays (the planes of the trace's shared tensor,
 * side by side) at the focused event's barrier phase. A cell's colour is the phase that
 * last wrote it (one hue per phase, bright when it is this phase, dim when earlier; dark:
 * never written, the simulator's poison); cells this phase reads carry a white dot, the
 * focused access a cyan outline. P / Shift+P step the focus to the next / previous phase.
 * A heatmap panel of the shared tensor shows its values at that block and phase
 * (vw_tile_for). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vw_draw_int.h"
#include "vw_phase.h"

static const uint32_t hue[8] = {0x4C78C8, 0xE0A030, 0x50B060, 0xC85050, 0x9068C0, 0x40B0B0, 0xC070A0, 0xA0A040};

static uint32_t dim(uint32_t c) { return ((c >> 1) & 0x7F7F7F) - ((c >> 3) & 0x1F1F1F); }

#define TILE_SCAN_EVENTS (1u << 24) /* 16 M events: about 50 ms a scan */

const float *vw_tile_for(vw_draw *d, const vw_state *s, int t, int64_t *key)
{
    const ks_trace *tr = s->tr;
    uint32_t ev = vw_state_event(s);
    vw_tile_values *tv = &d->tile;
    *key = -1;
    /* an answer slide whose asked cell is a word of the tile: the tile of that access's
     * block and phase (issue 38: 13 s4 asks a word thread 165 reads in block (0,1,0)'s
     * tile, on a slide about block 0) */
    if (s->nslides && s->reveal && s->slides[s->slide].has_answer_cell &&
        s->slides[s->slide].answer_event < tr->nevents && t >= 0 &&
        vw_event(tr, s->slides[s->slide].answer_event)->tensor == (uint32_t)t)
        ev = s->slides[s->slide].answer_event;
    /* a scan of every event per block and phase: not over a trace read chunk by chunk or
     * one too big to scan while the focus moves (those show the stored values) */
    if (t < 0 || ev == VW_NONE || vw_trace_lazy(tr) || tr->nevents > TILE_SCAN_EVENTS || t != vw_shared_tensor(tr))
        return NULL;
    const int64_t phase = vw_event_phase(tr, ev), n = ks_tensor_numel(&tr->tensors[t]);
    const uint32_t block = vw_event(tr, ev)->block;
    if (phase < 0 || n <= 0) return NULL;
    /* a slide that draws the tile as the focused item reads it ("as-read"): the stores
     * recorded before the item's first shared read of its phase (the simulator records a
     * block's fibers in the order they ran), NaN where none came yet (issue 38 D8: lesson
     * 11 without barrier 1, where the phase's end shows every slot stored) */
    int64_t cut = -1;
    if (s->nslides && (s->slides[s->slide].figure & VW_FIGURE_AS_READ)) {
        const ks_event *f = vw_event(tr, ev);
        for (uint64_t i = 0; i < tr->nevents && cut < 0; ++i) {
            const ks_event *e = vw_event(tr, i);
            if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_SHARED) && e->tensor == (uint32_t)t &&
                e->index == f->index && e->block == f->block && e->thread == f->thread && e->iter == f->iter &&
                e->u.access.reserved[0] == phase)
                cut = (int64_t)i;
        }
    }
    /* as read, the event alone names the tile (its block, its phase): a key of its own */
    *key = cut >= 0 ? (int64_t)1 << 62 | cut : (int64_t)block << 32 | (phase & 0xffffffff);
    if (tv->v && tv->tr == tr && tv->tensor == t && tv->block == block && tv->phase == phase && tv->n == n &&
        tv->cut == cut)
        return tv->v;
    float *v = realloc(tv->v, (size_t)n * sizeof *v);
    int32_t *when = malloc((size_t)n * sizeof *when);
    if (!v || !when) {
        free(when);
        tv->v = v, tv->tensor = -1;
        return NULL;
    }
    /* the writes of the block up to the phase, recorded order within a phase: the last
     * of the latest phase wins, as the phase's barrier leaves it */
    for (int64_t k = 0; k < n; ++k) v[k] = NAN, when[k] = -1;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = vw_event(tr, i);
        if (cut >= 0 && i >= (uint64_t)cut) break;
        if (e->kind != KS_EV_WRITE || !(e->flags & KS_FLAG_SHARED) || e->block != block || e->tensor != t) continue;
        const int64_t off = e->u.access.offset, p = e->u.access.reserved[0];
        if (off < 0 || off >= n || p > phase || p < when[off]) continue;
        when[off] = (int32_t)p;
        v[off] = (float)ks_access_value(&e->u.access, e->flags);
    }
    free(when);
    *tv = (vw_tile_values){.tr = tr,
                           .tensor = t,
                           .block = block,
                           .phase = phase,
                           .n = n,
                           .cut = cut,
                           .item = cut >= 0 ? vw_event(tr, (uint64_t)cut)->index : 0,
                           .v = v};
    return v;
}

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
