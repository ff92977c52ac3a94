/* vw_phase.c - barrier phases of a trace for the viewer: see vw_phase.h. */
#include "vw_phase.h"

#include <stdio.h>

#include "vw_index.h"
#include "vw_state.h"

static int is_phased(const ks_event *e)
{
    return e->kind == KS_EV_BARRIER ||
           ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && (e->flags & KS_FLAG_SHARED));
}

static int64_t own_phase(const ks_event *e)
{
    return e->kind == KS_EV_BARRIER ? (int64_t)e->u.barrier.phase : (int64_t)e->u.access.reserved[0];
}

/* A trace read chunk by chunk (vw_trace_lazy) is looked at in its first chunks only: a
 * whole scan would decode every event before the first frame. */
#define SHARED_SCAN_CHUNKS 8

int vw_shared_tensor(const ks_trace *tr)
{
    uint64_t n = tr->nevents;
    if (vw_trace_lazy(tr) && n > SHARED_SCAN_CHUNKS * tr->chunk_events) n = SHARED_SCAN_CHUNKS * tr->chunk_events;
    for (uint64_t i = 0; i < n; ++i) {
        const ks_event *e = vw_event(tr, i);
        if (is_phased(e) && e->kind != KS_EV_BARRIER && e->tensor < tr->ntensors) return e->tensor;
    }
    return -1;
}

#define NEAR 65536 /* how far to look for an item's phased event */

int64_t vw_event_phase(const ks_trace *tr, uint32_t ev)
{
    if (ev >= tr->nevents) return -1;
    const ks_event *e = vw_event(tr, ev);
    if (is_phased(e)) return own_phase(e);
    for (uint64_t i = ev + 1; i < tr->nevents && i <= (uint64_t)ev + NEAR; ++i) {
        const ks_event *f = vw_event(tr, i);
        if (f->index == e->index && f->block == e->block && f->thread == e->thread && is_phased(f)) return own_phase(f);
    }
    for (uint64_t i = ev; i-- > 0 && i + NEAR >= ev;) {
        const ks_event *f = vw_event(tr, i);
        if (f->index == e->index && f->block == e->block && f->thread == e->thread && is_phased(f)) return own_phase(f);
    }
    return -1;
}

uint32_t vw_phase_step(const ks_trace *tr, uint32_t ev, int dir)
{
    if (ev >= tr->nevents) return VW_NONE;
    const int64_t want = vw_event_phase(tr, ev) + (dir > 0 ? 1 : -1);
    const uint32_t block = vw_event(tr, ev)->block;
    if (want < 0) return VW_NONE;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *f = vw_event(tr, i);
        if (f->block == block && is_phased(f) && own_phase(f) == want) return (uint32_t)i;
    }
    return VW_NONE;
}

void vw_shared_tile(const ks_trace *tr, uint32_t block, int64_t phase, int32_t *last, unsigned char *touched, int64_t n)
{
    for (int64_t k = 0; k < n; ++k) last[k] = -1, touched[k] = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = vw_event(tr, i);
        if (e->block != block || !is_phased(e) || e->kind == KS_EV_BARRIER) continue;
        const int64_t p = own_phase(e), off = e->u.access.offset;
        if (off < 0 || off >= n || p > phase) continue;
        if (e->kind == KS_EV_WRITE && p > last[off]) last[off] = (int32_t)p;
        if (p == phase) touched[off] |= (unsigned char)(e->kind == KS_EV_WRITE ? 2 : 1);
    }
}

void vw_phase_focus(vw_state *s, int dir)
{
    const uint32_t ev = vw_state_event(s);
    const uint32_t to = ev == VW_NONE ? VW_NONE : vw_phase_step(s->tr, ev, dir);
    if (to == VW_NONE) {
        snprintf(s->message, sizeof s->message, "no %s barrier phase in this block", dir > 0 ? "later" : "earlier");
        return;
    }
    vw_focus_event(s, to);
    snprintf(s->message, sizeof s->message, "block %u, phase %lld", vw_event(s->tr, to)->block,
             (long long)vw_event_phase(s->tr, to));
}
