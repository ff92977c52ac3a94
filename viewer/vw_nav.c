/* vw_nav.c - replay orders and stepping (see vw_nav.h). */
#include "vw_nav.h"

#include "../kernels/core/ks_error.h"

const char *vw_order_name(vw_order o)
{
    static const char *names[] = {"recorded", "thread-major", "iteration-major"};
    return o >= 0 && o < VW_NORDERS ? names[o] : "?";
}

const char *vw_unit_name(vw_unit u)
{
    static const char *names[] = {"event", "work item", "thread", "warp", "block", "first field"};
    return u >= 0 && u < VW_NUNITS ? names[u] : "?";
}

const ks_site *vw_work_site(const ks_trace *tr)
{
    for (int i = 0; i < tr->nsites; ++i)
        if (tr->sites[i].kind == KS_EV_WORK && tr->sites[i].nfields > 0) return &tr->sites[i];
    return NULL;
}

/* The first field of the event's work item. A digit field comes from the event's own index
 * ((index / stride) % extent + bias, what `check` holds the work event to), so it needs no
 * index and orphans have one too; a derived field is read from the item's work event. */
static int64_t field_key(const vw_index *idx, const ks_event *e, uint32_t ev)
{
    const ks_site *w = vw_work_site(idx->tr);
    if (w && w->fields[0].digit && w->fields[0].stride > 0 && e->index >= 0) {
        int64_t v = e->index / w->fields[0].stride;
        if (w->fields[0].extent > 0) v %= w->fields[0].extent;
        return v + w->fields[0].bias;
    }
    uint32_t it = vw_item_of(idx, ev);
    if (w && it != VW_NONE && idx->items[it].count) {
        const ks_event *first = vw_event(idx->tr, vw_item_ev(idx, &idx->items[it], 0));
        if (first->kind == KS_EV_WORK) return first->u.field[0];
    }
    return -1 - e->index; /* no field to read: each work index is its own run */
}

/* Whether order o reads as the recorded one (no index yet, or the recorded order). */
static int recorded(const vw_index *idx, vw_order o)
{
    return o == VW_ORDER_RECORDED || o >= VW_NORDERS || !idx->orders[o].built;
}

/* The position of rank r's first event in order o (r = nitems: the order's length). */
static uint64_t cum_at(const vw_index *idx, const vw_item_order *io, uint32_t r)
{
    if (!io->by_event) return io->cum[r];
    return r < idx->nitems ? idx->items[r].first : idx->tr->nevents;
}

uint64_t vw_order_len(const vw_index *idx, vw_order o)
{
    if (recorded(idx, o)) return idx->tr->nevents;
    return cum_at(idx, &idx->orders[o], idx->nitems);
}

/* Rank r with cum[r] <= pos < cum[r+1] (items with no events never hold a position). */
static uint32_t rank_at(const vw_index *idx, const vw_item_order *io, uint64_t pos)
{
    const uint32_t n = idx->nitems;
    if (io->by_event) return pos < idx->tr->nevents ? vw_item_of(idx, (uint32_t)pos) : n - 1;
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (io->cum[mid] <= pos) lo = mid;
        else hi = mid;
    }
    while (lo + 1 < n && io->cum[lo + 1] <= pos) ++lo;
    return lo;
}

uint32_t vw_order_event(const vw_index *idx, vw_order o, uint64_t pos)
{
    if (recorded(idx, o) || idx->orders[o].by_event) return (uint32_t)pos;
    const vw_item_order *io = &idx->orders[o];
    uint32_t r = rank_at(idx, io, pos);
    const vw_item *it = &idx->items[io->ord ? io->ord[r] : r];
    return vw_item_ev(idx, it, (uint32_t)(pos - io->cum[r]));
}

uint64_t vw_order_pos(const vw_index *idx, vw_order o, uint32_t ev)
{
    if (recorded(idx, o) || idx->orders[o].by_event) return ev;
    uint32_t it = vw_item_of(idx, ev);
    if (it == VW_NONE) return 0;
    const vw_item *item = &idx->items[it];
    uint32_t k = 0;
    if (!idx->ev_perm) k = ev - item->first;
    else
        while (k < item->count && vw_item_ev(idx, item, k) != ev) ++k;
    return idx->orders[o].cum[vw_order_rank(idx, o, it)] + k;
}

void vw_item_span(const vw_index *idx, vw_order o, uint32_t item, uint64_t *first, uint64_t *last)
{
    const vw_item *it = &idx->items[item];
    if (recorded(idx, o)) {
        *first = it->count ? vw_item_ev(idx, it, 0) : 0;
        *last = it->count ? vw_item_ev(idx, it, it->count - 1) : 0;
        return;
    }
    uint64_t c = cum_at(idx, &idx->orders[o], vw_order_rank(idx, o, item));
    *first = c;
    *last = c + (it->count ? it->count - 1 : 0);
}

/* The unit key of the event at pos: events with equal keys belong to one unit. */
static int64_t unit_key(const vw_index *idx, vw_order o, uint64_t pos, vw_unit u)
{
    const ks_trace *tr = idx->tr;
    uint32_t ev = vw_order_event(idx, o, pos);
    const ks_event *e = vw_event(tr, ev);
    switch (u) {
    case VW_UNIT_ITEM: {
        const uint32_t it = vw_item_of(idx, ev);
        if (it != VW_NONE) return it;
        return -1 - (int64_t)e->index; /* no index yet: the work index stands in */
    }
    case VW_UNIT_THREAD: return vw_gthread(tr, e->block, e->thread);
    case VW_UNIT_WARP: return (int64_t)e->block * ((tr->threads + 31) / 32) + e->thread / 32;
    case VW_UNIT_BLOCK: return e->block;
    case VW_UNIT_FIELD: return field_key(idx, e, ev);
    default: return (int64_t)pos;
    }
}

uint64_t vw_step(const vw_index *idx, vw_order o, uint64_t pos, vw_unit u, int dir)
{
    uint64_t n = vw_order_len(idx, o);
    if (!n) return 0;
    if (pos >= n) pos = n - 1;
    int64_t k = unit_key(idx, o, pos, u);
    /* item orders keep a unit's events together inside one item: hop item by item */
    int hop = !recorded(idx, o) && u != VW_UNIT_EVENT;
    const vw_item_order *io = &idx->orders[o < VW_NORDERS ? o : 0];
    if (dir > 0) {
        uint64_t p = pos;
        for (;;) {
            p = hop ? cum_at(idx, io, rank_at(idx, io, p) + 1) : p + 1;
            if (p >= n) return pos;
            if (unit_key(idx, o, p, u) != k) return p;
        }
    }
    /* back to the start of this unit's run, then to the start of the previous run */
    uint64_t p = hop ? cum_at(idx, io, rank_at(idx, io, pos)) : pos;
#define BEFORE(q) (hop ? cum_at(idx, io, rank_at(idx, io, (q)-1)) : (q)-1)
    while (p > 0 && unit_key(idx, o, BEFORE(p), u) == k) p = BEFORE(p);
    if (p == 0) return 0;
    uint64_t q = BEFORE(p);
    int64_t prev = unit_key(idx, o, q, u);
    while (q > 0 && unit_key(idx, o, BEFORE(q), u) == prev) q = BEFORE(q);
#undef BEFORE
    return q;
}

int vw_jump_thread(const vw_index *idx, vw_order o, int64_t g, uint64_t *pos)
{
    const ks_trace *tr = idx->tr;
    uint64_t best = UINT64_MAX;
    if (idx->items) {
        for (uint32_t i = 0; i < idx->nitems; ++i) {
            const vw_item *it = &idx->items[i];
            if (vw_gthread(tr, it->block, it->thread) != g || !it->count) continue;
            uint64_t first, last;
            vw_item_span(idx, o, i, &first, &last);
            if (first < best) best = first;
        }
    } else {
        for (uint64_t i = 0; i < tr->nevents && best == UINT64_MAX; ++i)
            if (vw_gthread(tr, vw_event(tr, i)->block, vw_event(tr, i)->thread) == g) best = i;
    }
    if (best == UINT64_MAX)
        return ks_fail(KS_EINVAL, "thread %lld has no events in this trace (%lld blocks x %d threads)", (long long)g,
                       (long long)tr->blocks, tr->threads);
    *pos = best;
    return KS_OK;
}

int vw_jump_block(const vw_index *idx, vw_order o, int64_t b, uint64_t *pos)
{
    const ks_trace *tr = idx->tr;
    uint64_t best = UINT64_MAX;
    if (idx->items) {
        for (uint32_t i = 0; i < idx->nitems; ++i) {
            const vw_item *it = &idx->items[i];
            if ((int64_t)it->block != b || !it->count) continue;
            uint64_t first, last;
            vw_item_span(idx, o, i, &first, &last);
            if (first < best) best = first;
        }
    } else {
        for (uint64_t i = 0; i < tr->nevents && best == UINT64_MAX; ++i)
            if ((int64_t)vw_event(tr, i)->block == b) best = i;
    }
    if (best == UINT64_MAX)
        return ks_fail(KS_EINVAL,
                       "block %lld has no events in this trace (%lld blocks; the filter may have left it out)",
                       (long long)b, (long long)tr->blocks);
    *pos = best;
    return KS_OK;
}

int vw_jump_index(const vw_index *idx, vw_order o, int64_t index, uint64_t *pos)
{
    const ks_trace *tr = idx->tr;
    if (idx->items) {
        uint32_t it = vw_index_find(idx, index);
        if (it != VW_NONE && idx->items[it].count) {
            uint64_t last;
            vw_item_span(idx, o, it, pos, &last);
            return KS_OK;
        }
    } else {
        for (uint64_t i = 0; i < tr->nevents; ++i)
            if (vw_event(tr, i)->kind == KS_EV_WORK && vw_event(tr, i)->index == index) {
                *pos = i;
                return KS_OK;
            }
    }
    return ks_fail(KS_EINVAL, "work item %lld is not in this trace (%lld work items; the filter may have left it out)",
                   (long long)index, (long long)tr->work_items);
}
