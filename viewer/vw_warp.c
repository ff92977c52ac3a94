/* vw_warp.c - the warp strip's model (see vw_warp.h). */
#include "vw_warp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "vw_state.h"

static int by_u64(const void *p, const void *q)
{
    const uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
    return (a > b) - (a < b);
}

/* sorted distinct values of v[0..n) in place; returns how many */
static int distinct(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_u64);
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (!k || v[k - 1] != v[i]) v[k++] = v[i];
    return k;
}

static uint32_t rank_of(const uint64_t *v, int n, uint64_t x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

static int touches_memory(const ks_trace *tr, const ks_event *e)
{
    if (e->tensor >= tr->ntensors) return 0;
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) return e->u.access.offset >= 0;
    if (e->kind != KS_EV_SAMPLE) return 0;
    for (int c = 0; c < 4; ++c)
        if (ks_memory_corner(tr, e, c) >= 0) return 1;
    return 0;
}

uint32_t vw_warp_event(const vw_state *s, int *own)
{
    const uint32_t ev = vw_state_event(s), it = vw_state_item(s);
    *own = 1;
    if (ev != VW_NONE && touches_memory(s->tr, vw_event(s->tr, ev))) return ev;
    *own = 0;
    if (it == VW_NONE) return VW_NONE;
    const vw_item *item = &s->idx->items[it];
    for (uint32_t k = 0; k < item->count; ++k) {
        const uint32_t e = vw_item_ev(s->idx, item, k);
        if (touches_memory(s->tr, vw_event(s->tr, e))) return e;
    }
    return VW_NONE;
}

/* The request of event ev. A trace read chunk by chunk (vw_trace_lazy) is searched in the
 * chunks around ev's (WINDOW_CHUNKS on each side, decoded into a copy of the trace): a
 * format-2 file stores events by work item, so a warp's lanes lie next to each other. */
#define WINDOW_CHUNKS 1

static int64_t request(const ks_trace *tr, uint32_t ev, const ks_event *e, vw_warp *w)
{
    if (!vw_trace_lazy(tr)) return ks_memory_request(tr, e, w->corner, w->acc, VW_WARP_MAX, &w->req);
    const uint64_t k = ev / tr->chunk_events, k0 = k > WINDOW_CHUNKS ? k - WINDOW_CHUNKS : 0;
    ks_trace *win = malloc(sizeof *win);
    if (!win) return -1;
    *win = *tr;
    win->decoded = NULL;
    int64_t n = -1;
    if (!ks_trace_load_chunks(win, k0, k - k0 + 1 + WINDOW_CHUNKS)) {
        const ks_event self = *e;
        n = ks_memory_request(win, &self, w->corner, w->acc, VW_WARP_MAX, &w->req);
        for (int64_t i = 0; i < n && i < VW_WARP_MAX; ++i) w->acc[i].event += k0 * tr->chunk_events;
    }
    free(win->decoded);
    free(win);
    return n;
}

int vw_warp_build(const ks_trace *tr, uint32_t ev, vw_warp *w)
{
    memset(w, 0, sizeof *w);
    w->event = ev;
    w->site = -1;
    if (ev >= tr->nevents) return 0;
    const ks_event *e = vw_event(tr, ev);
    if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE && e->kind != KS_EV_SAMPLE) return 0;
    if (e->tensor >= tr->ntensors || e->site >= tr->nsites) return 0;
    w->sample = e->kind == KS_EV_SAMPLE;
    if (w->sample) {
        for (w->corner = 0; w->corner < 4 && ks_memory_corner(tr, e, w->corner) < 0; ++w->corner) {}
        if (w->corner == 4) return 0;
    }
    const int64_t n = request(tr, ev, e, w);
    if (n < 0) return ks_fail(KS_ENOMEM, "out of memory for the warp strip"), -1;
    if (n == 0) return 0;
    w->ok = 1;
    w->site = e->site;
    w->elem = (int)ks_dtype_size(tr->tensors[e->tensor].dtype);
    w->nacc = n < VW_WARP_MAX ? (int)n : VW_WARP_MAX;
    uint64_t sectors[VW_WARP_MAX];
    for (int i = 0; i < w->nacc; ++i) sectors[i] = w->acc[i].byte / 32, w->line[i] = w->acc[i].byte / 128;
    const int ns = distinct(sectors, w->nacc);
    w->nlines = distinct(w->line, w->nacc);
    for (int i = 0; i < w->nacc; ++i) w->sector[i] = rank_of(sectors, ns, w->acc[i].byte / 32);
    return 0;
}

void vw_warp_text(const ks_trace *tr, const vw_warp *w, char *buf, size_t n)
{
    if (!w->ok) {
        snprintf(buf, n, "warp strip: the focused work item touches no memory");
        return;
    }
    char corner[24] = "";
    if (w->sample) snprintf(corner, sizeof corner, ", corner %d", w->corner);
    snprintf(buf, n, "warp %u of block %u, site %s, tap %u%s: %u lanes, %u sectors (ideal %u)", w->req.warp,
             w->req.block, tr->sites[w->site].name, (unsigned)w->req.tap, corner, w->req.lanes, w->req.sectors,
             w->req.ideal);
}

double vw_warp_axis(const vw_warp *w, uint64_t b, double width)
{
    if (!w->nlines) return -1;
    double units = 0, at = -1;
    for (int k = 0; k < w->nlines; ++k) {
        if (k && w->line[k] != w->line[k - 1] + 1) units += 32; /* a gap: lines not adjacent */
        if (at < 0 && b >= w->line[k] * 128 && b <= w->line[k] * 128 + 128) at = units + (double)(b - w->line[k] * 128);
        units += 128;
    }
    return at < 0 ? -1 : at * width / units;
}

uint32_t vw_warp_color(uint32_t k)
{
    static const uint32_t pal[8] = {0xE6194B, 0x3CB44B, 0xFFE119, 0x4363D8, 0xF58231, 0xB45AE6, 0xF032E6, 0xBCF60C};
    return pal[k % 8];
}

void vw_strip_parts(vw_rect area, int line, vw_rect *lanes, vw_rect *axis)
{
    *lanes = (vw_rect){.x = area.x + 8,
                       .y = area.y + 2 * line + 6,
                       .w = area.w - 16,
                       .h = line * 3 / 5 > 12 ? line * 3 / 5 : 12};
    *axis = (vw_rect){.x = area.x + 8, .y = area.y + area.h - line - 16, .w = area.w - 16, .h = 12};
}

vw_rect vw_strip_lane(vw_rect lanes, int k)
{
    const int x0 = lanes.x + k * lanes.w / 32, x1 = lanes.x + (k + 1) * lanes.w / 32;
    return (vw_rect){.x = x0 + 1, .y = lanes.y, .w = x1 - x0 - 2 > 1 ? x1 - x0 - 2 : 1, .h = lanes.h};
}
