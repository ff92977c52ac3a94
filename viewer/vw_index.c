/* vw_index.c - work items, replay orders and aggregates of a trace (see vw_index.h).
 * Event contents are not trusted: a site, tensor or coordinate out of range is skipped,
 * never used as an index. */
#include "vw_index.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/kst_codec.h"
#include "../trace/memory.h"
#include "vw_plane.h"

int vw_trace_lazy(const ks_trace *tr) { return !tr->events && tr->version == 2 && tr->nevents && tr->map; }

int vw_trace_open(const char *path, ks_trace *tr)
{
    int rc = ks_trace_open_lazy(path, tr);
    if (!rc && tr->version == 2) tr->nevents = tr->file_events; /* read through vw_event */
    return rc;
}

/* Chunk k of a lazily opened trace into out (room for tr->chunk_events); its event count
 * in *n. Returns 0, or -1 with ks_error_message() saying where it failed. */
static int decode_chunk(const ks_trace *tr, uint64_t k, ks_event *out, size_t *n)
{
    const unsigned char *base = (const unsigned char *)tr->map + tr->data_start;
    const uint64_t first = k * tr->chunk_events;
    ks_kst2_entry e;
    ks_kst2_ctx ctx;
    size_t bad;
    const char *why;
    ks_kst2_entry_get(base + tr->index_sec.offset + k * KS_KST2_ENTRY, &e);
    *n = (size_t)(tr->nevents - first < tr->chunk_events ? tr->nevents - first : tr->chunk_events);
    ks_kst2_ctx_make(tr, &ctx);
    if (!ks_kst2_decode(&ctx, base + tr->event_sec.offset + e.offset, e.length, out, *n, &bad, &why)) return 0;
    ks_fail_at(tr->path, (long long)(tr->data_start + tr->event_sec.offset + e.offset + bad), "chunk %llu: %s",
               (unsigned long long)k, why);
    return -1;
}

typedef struct chunk_slot {
    const ks_trace *tr;
    const void *map;
    uint64_t k, used, cap;
    ks_event *ev;
} chunk_slot;

static _Thread_local chunk_slot cache[VW_EVENT_CACHE];
static _Thread_local uint64_t cache_clock;

const ks_event *vw_event(const ks_trace *tr, uint64_t id)
{
    static const ks_event bad; /* kind 0: fits no site */
    if (tr->events || !vw_trace_lazy(tr)) return tr->events ? &tr->events[id] : &bad;
    if (id >= tr->nevents) return &bad;
    const uint64_t k = id / tr->chunk_events, at = id % tr->chunk_events;
    chunk_slot *old = &cache[0];
    for (int i = 0; i < VW_EVENT_CACHE; ++i) {
        chunk_slot *c = &cache[i];
        if (c->tr == tr && c->map == tr->map && c->k == k) {
            c->used = ++cache_clock;
            return c->ev ? &c->ev[at] : &bad;
        }
        if (c->used < old->used) old = c;
    }
    if (old->cap < tr->chunk_events) {
        free(old->ev);
        old->ev = malloc(tr->chunk_events * sizeof *old->ev);
        old->cap = old->ev ? tr->chunk_events : 0;
    }
    size_t n;
    old->tr = tr, old->map = tr->map, old->k = k, old->used = ++cache_clock;
    if (!old->ev) return &bad;
    if (decode_chunk(tr, k, old->ev, &n)) memset(old->ev, 0, tr->chunk_events * sizeof *old->ev);
    return &old->ev[at];
}

void vw_trace_close(ks_trace *tr)
{
    for (int i = 0; i < VW_EVENT_CACHE; ++i)
        if (cache[i].tr == tr) {
            free(cache[i].ev);
            memset(&cache[i], 0, sizeof cache[i]);
        }
    ks_trace_close(tr);
}

int64_t vw_gthread(const ks_trace *tr, uint32_t block, uint32_t thread)
{
    return (int64_t)block * tr->threads + thread;
}

void vw_sample_corners(const ks_event *e, int64_t y[2], int64_t x[2])
{
    float fy = e->u.sample.y, fx = e->u.sample.x;
    /* NaN or huge coordinates: a corner far outside every tensor, never a valid cell */
    y[0] = isfinite(fy) && fabsf(fy) < 1e9f ? (int64_t)floorf(fy) : INT32_MIN;
    x[0] = isfinite(fx) && fabsf(fx) < 1e9f ? (int64_t)floorf(fx) : INT32_MIN;
    y[1] = (e->flags & KS_FLAG_CLAMP_Y) ? y[0] : y[0] + 1;
    x[1] = (e->flags & KS_FLAG_CLAMP_X) ? x[0] : x[0] + 1;
}

static int item_cmp(const vw_item *a, int64_t index, uint32_t block, uint32_t thread, uint32_t iter)
{
    if (a->index != index) return a->index < index ? -1 : 1;
    if (a->block != block) return a->block < block ? -1 : 1;
    if (a->thread != thread) return a->thread < thread ? -1 : 1;
    if (a->iter != iter) return a->iter < iter ? -1 : 1;
    return 0;
}

static int by_key(const void *pa, const void *pb)
{
    const vw_item *b = pb;
    return item_cmp(pa, b->index, b->block, b->thread, b->iter);
}

/* The item an event belongs to: same index, block, thread and iteration. */
static uint32_t find_item(const vw_index *idx, const ks_event *e)
{
    uint32_t lo = 0, hi = idx->nitems;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (item_cmp(&idx->items[mid], e->index, e->block, e->thread, e->iter) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < idx->nitems && !item_cmp(&idx->items[lo], e->index, e->block, e->thread, e->iter)) return lo;
    return VW_NONE;
}

uint32_t vw_index_find(const vw_index *idx, int64_t index)
{
    uint32_t lo = 0, hi = idx->nitems;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (idx->items[mid].index < index) lo = mid + 1;
        else hi = mid;
    }
    return lo < idx->nitems && idx->items[lo].index == index ? lo : VW_NONE;
}

/* Sort keys for the item orders: (a, b, c) ascending, ties by item id. */
typedef struct order_key {
    int64_t a, b, c;
    uint32_t id;
} order_key;

static int by_order_key(const void *pa, const void *pb)
{
    const order_key *x = pa, *y = pb;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    if (x->c != y->c) return x->c < y->c ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* keys[i] (id i) stably by their first key into ord, when its range is at most n values
 * (count: room for n + 1, used as scratch). Returns 0 when the range is wider. */
static int counting_sort(const order_key *keys, uint32_t n, uint32_t *ord, uint32_t *count)
{
    if (!n) return 0;
    int64_t lo = keys[0].a, hi = keys[0].a;
    for (uint32_t i = 1; i < n; ++i) lo = keys[i].a < lo ? keys[i].a : lo, hi = keys[i].a > hi ? keys[i].a : hi;
    if ((uint64_t)(hi - lo) >= n) return 0;
    const uint32_t m = (uint32_t)(hi - lo) + 1;
    memset(count, 0, (size_t)m * sizeof *count);
    for (uint32_t i = 0; i < n; ++i) count[keys[i].a - lo]++;
    for (uint32_t v = 0, at = 0; v < m; ++v) {
        const uint32_t c = count[v];
        count[v] = at, at += c;
    }
    for (uint32_t i = 0; i < n; ++i) ord[count[keys[i].a - lo]++] = i;
    return 1;
}

static int build_order(vw_index *idx, vw_order which, order_key *keys)
{
    vw_item_order *o = &idx->orders[which];
    uint32_t n = idx->nitems;
    o->ord = malloc((n ? n : 1) * sizeof *o->ord);
    o->rank = malloc((n ? n : 1) * sizeof *o->rank);
    o->cum = malloc(((size_t)n + 1) * sizeof *o->cum);
    if (!o->ord || !o->rank || !o->cum) return ks_fail(KS_ENOMEM, "out of memory for the replay orders");
    for (uint32_t i = 0; i < n; ++i) {
        const vw_item *it = &idx->items[i];
        int64_t g = vw_gthread(idx->tr, it->block, it->thread);
        keys[i].a = which == VW_ORDER_THREAD ? g : it->iter;
        keys[i].b = which == VW_ORDER_THREAD ? it->iter : g;
        keys[i].c = it->index;
        keys[i].id = i;
    }
    /* items come sorted by index: the iteration-major keys of a grid-stride loop are in
     * order already, and the thread-major ones are once stably sorted by thread (a counting
     * sort into ord). Either is checked against the full key, else the keys are sorted. */
    int done = 1;
    for (uint32_t i = 1; i < n && done; ++i) done = by_order_key(&keys[i - 1], &keys[i]) < 0;
    if (done) {
        for (uint32_t i = 0; i < n; ++i) o->ord[i] = i;
    } else if (counting_sort(keys, n, o->ord, o->rank)) {
        done = 1;
        for (uint32_t r = 1; r < n && done; ++r) done = by_order_key(&keys[o->ord[r - 1]], &keys[o->ord[r]]) < 0;
    }
    if (!done) {
        qsort(keys, n, sizeof *keys, by_order_key);
        for (uint32_t r = 0; r < n; ++r) o->ord[r] = keys[r].id;
    }
    o->cum[0] = 0;
    for (uint32_t r = 0; r < n; ++r) {
        o->rank[o->ord[r]] = r;
        o->cum[r + 1] = o->cum[r] + idx->items[o->ord[r]].count;
    }
    return KS_OK;
}

static void progress_set(vw_progress *p, int permille)
{
    if (p) p->permille = permille;
}

static int cancelled(const vw_progress *p) { return p && p->cancel; }

/* Element offset of (plane, y, x) in t, or -1 when outside it. */
static int64_t element(const ks_tensor *t, int64_t plane, int64_t y, int64_t x)
{
    vw_plane_dims d = vw_plane_dims_of(t);
    if (plane < 0 || plane >= d.planes || y < 0 || y >= d.h || x < 0 || x >= d.w) return -1;
    return (plane * d.h + y) * d.w + x;
}

static int agg_tensor(vw_index *idx, int t, vw_aggregate **out)
{
    vw_aggregate *a = &idx->agg[t];
    *out = a->reads ? a : NULL; /* allocated already: the usual case, per event */
    if (a->reads) return KS_OK;
    int64_t n = ks_tensor_numel(&idx->tr->tensors[t]);
    if (n <= 0 || n > VW_AGG_MAX_ELEMENTS) return KS_OK;
    if (!a->reads) {
        a->reads = calloc((size_t)n, sizeof *a->reads);
        a->weights = calloc((size_t)n, sizeof *a->weights);
        a->writes = calloc((size_t)n, sizeof *a->writes);
        a->visits = calloc((size_t)n, sizeof *a->visits);
        if (!a->reads || !a->weights || !a->writes || !a->visits)
            return ks_fail(KS_ENOMEM, "out of memory for the aggregates of %s", idx->tr->tensors[t].name);
    }
    *out = a;
    return KS_OK;
}

/* Padding reads and sample corners may fall outside a plane: remember how far (up to 4
 * cells) so the heatmap leaves room to show them. */
static void note_margin(vw_index *idx, int tensor, int64_t y, int64_t x)
{
    vw_plane_dims d = vw_plane_dims_of(&idx->tr->tensors[tensor]);
    int64_t out = 0;
    if (y < 0) out = -y;
    if (y >= d.h && y - d.h + 1 > out) out = y - d.h + 1;
    if (x < 0 && -x > out) out = -x;
    if (x >= d.w && x - d.w + 1 > out) out = x - d.w + 1;
    if (out > 4) out = 4;
    if (out > idx->margin[tensor]) idx->margin[tensor] = (int)out;
}

/* A region point (rows = cols = 0) visits the cell it lies in; boxes visit nothing. */
static int visit(vw_index *idx, const ks_event *e)
{
    const ks_ev_region *g = &e->u.region;
    vw_aggregate *a;
    if (g->rows || g->cols) return KS_OK;
    if (e->tap) idx->point_taps = 1;
    int rc = agg_tensor(idx, e->tensor, &a);
    if (rc || !a || !(fabsf(g->y0) < 1e9f) || !(fabsf(g->x0) < 1e9f)) return rc; /* NaN fails < */
    int64_t off = element(&idx->tr->tensors[e->tensor], g->plane, (int64_t)floorf(g->y0 + 0.5f),
                          (int64_t)floorf(g->x0 + 0.5f));
    if (off >= 0 && ++a->visits[off] > a->max_visits) a->max_visits = a->visits[off];
    return KS_OK;
}

static int aggregate(vw_index *idx, const ks_event *e)
{
    const ks_trace *tr = idx->tr;
    vw_aggregate *a;
    if (e->kind == KS_EV_WORK || e->tensor >= tr->ntensors) return KS_OK;
    if (e->kind == KS_EV_REGION) return visit(idx, e);
    const ks_tensor *t = &tr->tensors[e->tensor];
    int rc = agg_tensor(idx, e->tensor, &a);
    if (rc) return rc;
    if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING)) {
        note_margin(idx, e->tensor, e->u.access.y, e->u.access.x);
        return KS_OK;
    }
    /* a read or write outside its tensor, or a sample on a plane it does not have: never
     * used as an index, counted for the status line */
    const vw_plane_dims pd = vw_plane_dims_of(t);
    if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) &&
        element(t, e->u.access.plane, e->u.access.y, e->u.access.x) < 0)
        idx->outside++;
    if (e->kind == KS_EV_SAMPLE && (e->u.sample.plane < 0 || e->u.sample.plane >= pd.planes)) idx->outside++;
    if (!a) return KS_OK;
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        int64_t off = element(t, e->u.access.plane, e->u.access.y, e->u.access.x);
        if (off < 0) return KS_OK;
        if (e->kind == KS_EV_WRITE) {
            if (++a->writes[off] > a->max_writes) a->max_writes = a->writes[off];
        } else {
            if (++a->reads[off] > a->max_reads) a->max_reads = a->reads[off];
            a->weights[off] += 1.0f;
            if (a->weights[off] > a->max_weight) a->max_weight = a->weights[off];
        }
    } else if (e->kind == KS_EV_SAMPLE) {
        int64_t ys[2], xs[2];
        vw_sample_corners(e, ys, xs);
        for (int c = 0; c < 4; ++c) {
            if (ys[c >> 1] != INT32_MIN && xs[c & 1] != INT32_MIN) note_margin(idx, e->tensor, ys[c >> 1], xs[c & 1]);
            if (!(e->flags & (KS_FLAG_C00 << c))) continue;
            int64_t off = element(t, e->u.sample.plane, ys[c >> 1], xs[c & 1]);
            float w = e->u.sample.w[c];
            if (off < 0 || !isfinite(w)) continue;
            if (++a->reads[off] > a->max_reads) a->max_reads = a->reads[off];
            a->weights[off] += w;
            if (a->weights[off] > a->max_weight) a->max_weight = a->weights[off];
        }
    }
    return KS_OK;
}

double vw_sectors_at(const vw_index *idx, int t, int64_t off)
{
    if (t < 0 || t >= KS_MAX_TENSORS || !idx->agg[t].sector_n || off < 0 ||
        off >= ks_tensor_numel(&idx->tr->tensors[t]) || !idx->agg[t].sector_n[off])
        return -1;
    return idx->agg[t].sector_sum[off] / idx->agg[t].sector_n[off];
}

/* One request: its sectors go to every element it touched, once per element. */
typedef struct sectors_ctx {
    vw_index *idx;
    const ks_trace *tr; /* idx->tr, or a copy of it with every event decoded */
} sectors_ctx;

static int add_sectors(void *ctx, int site, const ks_mem_request *r, const ks_mem_access *acc, uint32_t n)
{
    vw_index *idx = ((sectors_ctx *)ctx)->idx;
    const ks_trace *tr = ((sectors_ctx *)ctx)->tr;
    (void)site;
    for (uint32_t i = 0; i < n; ++i) {
        const ks_event *e = &tr->events[acc[i].event];
        vw_aggregate *a = &idx->agg[e->tensor];
        if (!a->sector_n || acc[i].offset >= ks_tensor_numel(&idx->tr->tensors[e->tensor])) continue;
        if (i && acc[i - 1].offset == acc[i].offset && tr->events[acc[i - 1].event].tensor == e->tensor)
            continue; /* sorted by byte: the same element again (a broadcast) */
        a->sector_sum[acc[i].offset] += (float)r->sectors;
        a->sector_n[acc[i].offset]++;
    }
    return 0;
}

/* The sectors-per-request aggregate of every tensor that has aggregates; a failure (out
 * of memory, a trace too big) leaves it out and the index stands. A lazily opened trace
 * (at most VW_SECTORS_MAX_EVENTS events) is decoded whole for it, then let go. */
static void build_sectors(vw_index *idx)
{
    const ks_trace *tr = idx->tr;
    if (tr->nevents > VW_SECTORS_MAX_EVENTS) return;
    sectors_ctx ctx = {idx, tr};
    ks_trace *full = NULL;
    if (vw_trace_lazy(tr)) {
        full = malloc(sizeof *full);
        if (!full) return;
        *full = *tr;
        full->decoded = NULL;
        if (ks_trace_load_chunks(full, 0, UINT64_MAX)) {
            free(full->decoded);
            free(full);
            return;
        }
        ctx.tr = full;
    }
    int any = 0;
    for (int t = 0; t < tr->ntensors && t < KS_MAX_TENSORS; ++t) {
        vw_aggregate *a = &idx->agg[t];
        if (!a->reads) continue;
        const int64_t n = ks_tensor_numel(&tr->tensors[t]);
        a->sector_sum = calloc((size_t)n, sizeof *a->sector_sum);
        a->sector_n = calloc((size_t)n, sizeof *a->sector_n);
        if (!a->sector_sum || !a->sector_n) goto drop;
        any = 1;
    }
    if (any && ks_memory_each_request(ctx.tr, add_sectors, &ctx) == KS_OK) goto done;
drop:
    for (int t = 0; t < KS_MAX_TENSORS; ++t) {
        free(idx->agg[t].sector_sum);
        free(idx->agg[t].sector_n);
        idx->agg[t].sector_sum = NULL;
        idx->agg[t].sector_n = NULL;
    }
done:
    if (full) free(full->decoded);
    free(full);
}

/* What follows item_of: each item's run of events in by_item (file order = seq order per
 * thread), the item orders and the sectors aggregate. Progress from 600 to 800. */
static int index_tail(vw_index *idx, vw_progress *progress)
{
    const uint64_t n = idx->tr->nevents;
    uint32_t *count = calloc((size_t)idx->nitems + 1, sizeof *count);
    order_key *keys = malloc((idx->nitems ? idx->nitems : 1) * sizeof *keys);
    if (!count || !keys) {
        free(count), free(keys);
        return ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
    }
    idx->orphans = 0;
    for (uint64_t i = 0; i < n; ++i) {
        if (idx->item_of[i] == VW_NONE) idx->orphans++;
        else count[idx->item_of[i]]++;
    }
    uint64_t at = 0;
    for (uint32_t it = 0; it < idx->nitems; ++it) {
        idx->items[it].first = (uint32_t)at;
        at += count[it];
        count[it] = idx->items[it].first;
    }
    for (uint64_t i = 0; i < n; ++i)
        if (idx->item_of[i] != VW_NONE) idx->by_item[count[idx->item_of[i]]++] = (uint32_t)i;
    for (uint32_t it = 0; it < idx->nitems; ++it) idx->items[it].count = count[it] - idx->items[it].first;
    progress_set(progress, 700);
    int rc = build_order(idx, VW_ORDER_THREAD, keys);
    if (!rc) rc = build_order(idx, VW_ORDER_ITER, keys);
    free(keys), free(count);
    progress_set(progress, 800);
    return rc;
}

/* A trace in memory (or mapped): items from its work events, sorted; every event to its
 * item; the tail; the aggregates over the events. */
static int build_loaded(vw_index *idx, vw_progress *progress)
{
    const ks_trace *tr = idx->tr;
    const uint64_t n = tr->nevents;
    const ks_event *ev = tr->events;
    /* pass 1: one item per work event */
    uint64_t nwork = 0;
    for (uint64_t i = 0; i < n; ++i) nwork += ev[i].kind == KS_EV_WORK;
    idx->items = malloc((nwork ? nwork : 1) * sizeof *idx->items);
    idx->item_of = malloc((n ? n : 1) * sizeof *idx->item_of);
    idx->by_item = malloc((n ? n : 1) * sizeof *idx->by_item);
    if (!idx->items || !idx->item_of || !idx->by_item)
        return ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
    for (uint64_t i = 0; i < n; ++i) {
        if (ev[i].kind != KS_EV_WORK) continue;
        vw_item *it = &idx->items[idx->nitems++];
        it->index = ev[i].index;
        it->block = ev[i].block;
        it->thread = ev[i].thread;
        it->iter = ev[i].iter;
        it->first = it->count = 0;
    }
    progress_set(progress, 100);
    qsort(idx->items, idx->nitems, sizeof *idx->items, by_key);
    progress_set(progress, 200);
    /* pass 2: each event to its item; consecutive events usually share one */
    uint32_t last = VW_NONE;
    for (uint64_t i = 0; i < n; ++i) {
        const ks_event *e = &ev[i];
        uint32_t it = last != VW_NONE && !item_cmp(&idx->items[last], e->index, e->block, e->thread, e->iter)
                          ? last
                          : find_item(idx, e);
        idx->item_of[i] = it;
        if (it != VW_NONE) last = it;
        if ((i & 0xFFFFF) == 0) {
            progress_set(progress, 200 + (int)(400 * i / n));
            if (cancelled(progress)) return ks_fail(KS_EINVAL, "indexing cancelled");
        }
    }
    int rc = index_tail(idx, progress);
    for (uint64_t i = 0; i < n && !rc; ++i) {
        rc = aggregate(idx, &ev[i]);
        if ((i & 0xFFFFF) == 0) {
            progress_set(progress, 800 + (int)(199 * i / n));
            if (cancelled(progress)) return ks_fail(KS_EINVAL, "indexing cancelled");
        }
    }
    return rc;
}

/* By the item key, then by when the work event came (kept in `first` while sorting). */
static int by_key_then_order(const void *pa, const void *pb)
{
    const vw_item *a = pa, *b = pb;
    int c = item_cmp(a, b->index, b->block, b->thread, b->iter);
    return c ? c : (a->first > b->first) - (a->first < b->first);
}

/* An event whose item was not the one just before it: resolved once all items are known. */
typedef struct pending {
    uint32_t id, block, thread, iter;
    int64_t index;
} pending;

/* A lazily opened trace, in one pass over its chunks (each decoded once, never all at
 * once): items are appended as their work events come (a format-2 file stores events by
 * item, so an item's events follow its work event), every other event goes to the item
 * just before it when it has its key, else waits in a list; the aggregates are summed on
 * the way. Then the items are sorted (stably: equal keys go to the first, as find_item
 * gives), item_of renumbered and the waiting events looked up. Same index as build_loaded. */
static int build_lazy(vw_index *idx, vw_progress *progress)
{
    const ks_trace *tr = idx->tr;
    const uint64_t n = tr->nevents, nchunks = (n + tr->chunk_events - 1) / tr->chunk_events;
    uint64_t cap = tr->work_items > 0 && (uint64_t)tr->work_items < n ? (uint64_t)tr->work_items : 1024;
    uint64_t npend = 0, pcap = 0;
    pending *pend = NULL;
    uint32_t *renum = NULL;
    ks_event *buf = malloc(tr->chunk_events * sizeof *buf);
    idx->items = malloc(cap * sizeof *idx->items);
    idx->item_of = malloc(n * sizeof *idx->item_of);
    idx->by_item = malloc(n * sizeof *idx->by_item);
    int rc = KS_OK;
    if (!buf || !idx->items || !idx->item_of || !idx->by_item) {
        rc = ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
        goto out;
    }
    uint32_t last = VW_NONE;
    for (uint64_t k = 0; k < nchunks && !rc; ++k) {
        size_t m;
        if (decode_chunk(tr, k, buf, &m)) {
            rc = KS_EFORMAT;
            goto out;
        }
        for (size_t j = 0; j < m; ++j) {
            const ks_event *e = &buf[j];
            const uint64_t id = k * tr->chunk_events + j;
            if (e->kind == KS_EV_WORK) {
                if (idx->nitems == cap) {
                    vw_item *g = realloc(idx->items, 2 * cap * sizeof *g);
                    if (!g) {
                        rc = ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
                        goto out;
                    }
                    idx->items = g, cap *= 2;
                }
                vw_item *it = &idx->items[idx->nitems];
                *it = (vw_item){e->index, e->block, e->thread, e->iter, idx->nitems, 0};
                last = idx->nitems++;
                idx->item_of[id] = last;
            } else if (last != VW_NONE && !item_cmp(&idx->items[last], e->index, e->block, e->thread, e->iter)) {
                idx->item_of[id] = last;
            } else {
                if (npend == pcap) {
                    pcap = pcap ? 2 * pcap : 1024;
                    pending *g = realloc(pend, pcap * sizeof *g);
                    if (!g) {
                        rc = ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
                        goto out;
                    }
                    pend = g;
                }
                pend[npend++] = (pending){(uint32_t)id, e->block, e->thread, e->iter, e->index};
                idx->item_of[id] = VW_NONE;
            }
            if ((rc = aggregate(idx, e))) goto out;
        }
        if ((k & 63) == 0) {
            progress_set(progress, (int)(500 * k / nchunks));
            if (cancelled(progress)) {
                rc = ks_fail(KS_EINVAL, "indexing cancelled");
                goto out;
            }
        }
    }
    progress_set(progress, 500);
    /* sort the items, their append number in `first`; renum: append number -> sorted id,
     * equal keys to the first of them */
    int sorted = 1;
    for (uint32_t i = 1; i < idx->nitems && sorted; ++i)
        sorted = by_key_then_order(&idx->items[i - 1], &idx->items[i]) < 0;
    if (!sorted) qsort(idx->items, idx->nitems, sizeof *idx->items, by_key_then_order);
    renum = malloc(((size_t)idx->nitems + 1) * sizeof *renum);
    if (!renum) {
        rc = ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
        goto out;
    }
    for (uint32_t i = 0, canon = 0; i < idx->nitems; ++i) {
        const vw_item *it = &idx->items[i];
        if (!i || by_key(&idx->items[i - 1], it)) canon = i;
        renum[it->first] = canon;
    }
    for (uint64_t i = 0; i < n; ++i)
        if (idx->item_of[i] != VW_NONE) idx->item_of[i] = renum[idx->item_of[i]];
    for (uint64_t p = 0; p < npend; ++p) {
        const ks_event e = {.index = pend[p].index,
                            .block = pend[p].block,
                            .thread = pend[p].thread,
                            .iter = pend[p].iter};
        idx->item_of[pend[p].id] = find_item(idx, &e);
    }
    progress_set(progress, 600);
    rc = index_tail(idx, progress);
out:
    free(buf), free(pend), free(renum);
    return rc;
}

int vw_index_build(vw_index *idx, const ks_trace *tr, vw_progress *progress)
{
    memset(idx, 0, sizeof *idx);
    idx->tr = tr;
    if (tr->nevents >= VW_NONE)
        return ks_fail(KS_EINVAL, "%llu events; the viewer handles at most %u (record fewer with --filter)",
                       (unsigned long long)tr->nevents, VW_NONE - 1);
    int rc = vw_trace_lazy(tr) ? build_lazy(idx, progress) : build_loaded(idx, progress);
    if (rc) {
        vw_index_free(idx);
        return rc;
    }
    build_sectors(idx);
    progress_set(progress, 1000);
    return KS_OK;
}

void vw_index_free(vw_index *idx)
{
    free(idx->items);
    free(idx->by_item);
    free(idx->item_of);
    for (int o = 0; o < VW_NORDERS; ++o) {
        free(idx->orders[o].ord);
        free(idx->orders[o].rank);
        free(idx->orders[o].cum);
    }
    for (int t = 0; t < KS_MAX_TENSORS; ++t) {
        free(idx->agg[t].reads);
        free(idx->agg[t].weights);
        free(idx->agg[t].writes);
        free(idx->agg[t].visits);
        free(idx->agg[t].sector_sum);
        free(idx->agg[t].sector_n);
    }
    const ks_trace *tr = idx->tr;
    memset(idx, 0, sizeof *idx);
    idx->tr = tr;
}
