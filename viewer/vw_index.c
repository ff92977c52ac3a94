/* vw_index.c - reading a trace's events for the viewer, and its work items (see
 * vw_index.h); the aggregates are in vw_index_agg.c, the orders in vw_index_order.c.
 * Event contents are not trusted: a key no item has makes an orphan, never an index. */
#define _DEFAULT_SOURCE /* madvise */
#include "vw_index.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../trace/kst_codec.h"
#include "vw_index_int.h"

int vw_trace_lazy(const ks_trace *tr) { return !tr->events && tr->version == 2 && tr->nevents && tr->map; }

int vw_trace_open(const char *path, ks_trace *tr)
{
    int rc = ks_trace_open_lazy(path, tr);
    if (!rc && tr->version == 2) tr->nevents = tr->file_events; /* read through vw_event */
    return rc;
}

int vw_decode_chunk(const ks_trace *tr, uint64_t k, ks_event *out, size_t *n)
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
    if (!ks_kst2_decode_stored(&ctx, tr->zstd, base + tr->event_sec.offset + e.offset, e.length, NULL, out, *n, &bad,
                               &why))
        return 0;
    if (tr->zstd && bad == KS_KST2_FRAME_BAD) /* the frame itself */
        ks_fail_at(tr->path, (long long)(tr->data_start + tr->event_sec.offset + e.offset), "chunk %llu: %s",
                   (unsigned long long)k, why);
    else if (tr->zstd) /* the place is one in the inflated frame */
        ks_fail_at(tr->path, (long long)(tr->data_start + tr->event_sec.offset + e.offset),
                   "chunk %llu: %s (byte %zu of its zstd frame inflated)", (unsigned long long)k, why, bad);
    else
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
    if (vw_decode_chunk(tr, k, old->ev, &n)) memset(old->ev, 0, tr->chunk_events * sizeof *old->ev);
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

uint32_t vw_item_of(const vw_index *idx, uint32_t ev)
{
    if (!idx->items || ev >= idx->tr->nevents) return VW_NONE;
    if (idx->ev_item) return idx->ev_item[ev];
    /* run-length: the last item (in file order) starting at or before ev, if ev is in it */
    const uint32_t *by = idx->by_start;
    uint32_t lo = 0, hi = idx->nitems;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (idx->items[by ? by[mid] : mid].first <= ev) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return VW_NONE;
    const uint32_t it = by ? by[lo - 1] : lo - 1;
    return ev - idx->items[it].first < idx->items[it].count ? it : VW_NONE;
}

static void progress_set(vw_progress *p, int permille)
{
    if (p) p->permille = permille;
}

static int cancelled(const vw_progress *p) { return p && p->cancel; }

/* Events k * csize .. of a trace read csize at a time: a pointer into tr->events, or
 * chunk k decoded into buf (csize is then the file's chunk size). NULL when it does not
 * decode (ks_error_message() says where). */
static const ks_event *events_at(const ks_trace *tr, uint64_t k, uint64_t csize, ks_event *buf, size_t *m)
{
    const uint64_t first = k * csize;
    if (vw_trace_lazy(tr)) return vw_decode_chunk(tr, k, buf, m) ? NULL : buf;
    *m = (size_t)(tr->nevents - first < csize ? tr->nevents - first : csize);
    return tr->events + first;
}

/* Gives back the mapped file pages of the events before chunk k of a lazily opened trace
 * (the pass has read them; *done: where the pages given back so far end). The page cache
 * keeps them, so a frame that needs one maps it again at the cost of a minor fault; the
 * viewer's resident size then holds the file's pages only where it looks, not the
 * whole events section once indexed. */
static void release_before(const ks_trace *tr, uint64_t k, uint64_t nchunks, uint64_t *done)
{
    const unsigned char *base = tr->map;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t end = tr->data_start + tr->event_sec.offset + tr->event_sec.length;
    if (k < nchunks) {
        ks_kst2_entry e;
        ks_kst2_entry_get(base + tr->data_start + tr->index_sec.offset + k * KS_KST2_ENTRY, &e);
        end = tr->data_start + tr->event_sec.offset + e.offset;
    }
    end &= ~(page - 1);
    if (end <= *done || end > tr->map_size) return;
    madvise((void *)(base + *done), end - *done, MADV_DONTNEED); /* a hint: a failure changes nothing */
    *done = end;
}

/* By the item key, then by when the work event came (its event id in `first`). */
static int by_key_then_first(const void *pa, const void *pb)
{
    const vw_item *a = pa, *b = pb;
    int c = item_cmp(a, b->index, b->block, b->thread, b->iter);
    return c ? c : (a->first > b->first) - (a->first < b->first);
}

/* An event that is not the next of the item just appended: resolved once all items are
 * known (an orphan, or an item whose events do not sit together). */
typedef struct pending {
    int64_t index;
    uint32_t block, thread, iter;
} pending;

/* The pass over the events (each chunk decoded once, never all at once), in file order.
 * Items are appended as their work events come with first = the work event's id; an event
 * with the key of the item just appended, right after its events, extends that item's
 * run; any other event waits in a list (its key only). *split is set when an event of the
 * item just appended comes after another event. The aggregates are summed on the way.
 * Progress 0 .. 800. */
static int scan(vw_index *idx, ks_event *buf, uint64_t csize, pending **pend, uint64_t *npend, int *split,
                vw_progress *progress)
{
    const ks_trace *tr = idx->tr;
    const uint64_t n = tr->nevents, nchunks = (n + csize - 1) / csize;
    uint64_t cap = tr->work_items > 0 && (uint64_t)tr->work_items < n ? (uint64_t)tr->work_items : 1024, pcap = 0;
    idx->items = malloc(cap * sizeof *idx->items);
    if (!idx->items) return ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
    vw_item *last = NULL;
    vw_decoder *dec = vw_decoder_start(tr, nchunks, idx); /* NULL: decode here */
    const int agg_here = !vw_decoder_aggregates(dec);
    int rc = KS_OK;
    uint64_t released = (tr->data_start + tr->event_sec.offset) & ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
    for (uint64_t k = 0; k < nchunks && !rc; ++k) {
        size_t m;
        const ks_event *ev = dec ? vw_decoder_next(dec, k, &m) : events_at(tr, k, csize, buf, &m);
        if (!ev) {
            rc = KS_EFORMAT;
            break;
        }
        for (size_t j = 0; j < m && !rc; ++j) {
            const ks_event *e = &ev[j];
            const uint32_t id = (uint32_t)(k * csize + j);
            if (e->kind == KS_EV_WORK) {
                if (idx->nitems == cap) {
                    vw_item *g = realloc(idx->items, 2 * cap * sizeof *g);
                    if (!g) {
                        rc = ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
                        break;
                    }
                    idx->items = g, cap *= 2;
                }
                last = &idx->items[idx->nitems++];
                *last = (vw_item){e->index, e->block, e->thread, e->iter, id, 1};
            } else if (last && !item_cmp(last, e->index, e->block, e->thread, e->iter)) {
                if (last->first + last->count == id) last->count++;
                else *split = 1; /* an orphan came between: the permuted index will place it */
            } else {
                if (*npend == pcap) {
                    pcap = pcap ? 2 * pcap : 1024;
                    pending *g = realloc(*pend, pcap * sizeof *g);
                    if (!g) {
                        rc = ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
                        break;
                    }
                    *pend = g;
                }
                (*pend)[(*npend)++] = (pending){e->index, e->block, e->thread, e->iter};
            }
            if (agg_here) rc = vw_agg_event(idx, e);
        }
        if (dec) vw_decoder_done(dec, k);
        if ((k & 63) == 63 && vw_trace_lazy(tr)) release_before(tr, k + 1, nchunks, &released);
        if ((k & 63) == 0) {
            progress_set(progress, (int)(800 * k / nchunks));
            if (!rc && cancelled(progress)) rc = ks_fail(KS_EINVAL, "indexing cancelled");
        }
    }
    const int agg_rc = vw_decoder_stop(dec, !rc);
    if (!rc) rc = agg_rc;
    if (!rc && vw_trace_lazy(tr)) release_before(tr, nchunks, nchunks, &released);
    return rc;
}

/* The permuted index (see vw_index.h), over items sorted by key: a second pass gives each
 * event its item (the first of equal keys, as find_item does), then ev_perm groups the
 * event ids by item, in file order within one; items[].first/count index ev_perm. */
static int build_permuted(vw_index *idx, ks_event *buf, uint64_t csize)
{
    const ks_trace *tr = idx->tr;
    const uint64_t n = tr->nevents, nchunks = (n + csize - 1) / csize;
    uint32_t *count = calloc((size_t)idx->nitems + 1, sizeof *count);
    idx->ev_item = malloc((n ? n : 1) * sizeof *idx->ev_item);
    idx->ev_perm = malloc((n ? n : 1) * sizeof *idx->ev_perm);
    if (!count || !idx->ev_item || !idx->ev_perm) {
        free(count);
        return ks_fail(KS_ENOMEM, "out of memory indexing %llu events", (unsigned long long)n);
    }
    uint32_t last = VW_NONE;
    idx->orphans = 0;
    for (uint64_t k = 0; k < nchunks; ++k) {
        size_t m;
        const ks_event *ev = events_at(tr, k, csize, buf, &m);
        if (!ev) {
            free(count);
            return KS_EFORMAT;
        }
        for (size_t j = 0; j < m; ++j) {
            const ks_event *e = &ev[j];
            const uint32_t it = last != VW_NONE && !item_cmp(&idx->items[last], e->index, e->block, e->thread, e->iter)
                                    ? last
                                    : find_item(idx, e);
            idx->ev_item[k * csize + j] = it;
            if (it != VW_NONE) last = it, count[it]++;
            else idx->orphans++;
        }
    }
    uint32_t at = 0;
    for (uint32_t it = 0; it < idx->nitems; ++it) {
        idx->items[it].first = at;
        at += count[it];
        count[it] = idx->items[it].first;
    }
    for (uint64_t i = 0; i < n; ++i)
        if (idx->ev_item[i] != VW_NONE) idx->ev_perm[count[idx->ev_item[i]]++] = (uint32_t)i;
    for (uint32_t it = 0; it < idx->nitems; ++it) idx->items[it].count = count[it] - idx->items[it].first;
    free(count);
    return KS_OK;
}

typedef struct start_of {
    uint32_t first, id;
} start_of;

static int by_first(const void *pa, const void *pb)
{
    const start_of *a = pa, *b = pb;
    return (a->first > b->first) - (a->first < b->first);
}

/* The run-length index's by_start, when the items' key order is not their file order. */
static int build_by_start(vw_index *idx)
{
    uint32_t i = 1;
    while (i < idx->nitems && idx->items[i - 1].first < idx->items[i].first) ++i;
    if (i >= idx->nitems) return KS_OK;
    start_of *s = malloc((size_t)idx->nitems * sizeof *s);
    idx->by_start = malloc((size_t)idx->nitems * sizeof *idx->by_start);
    if (!s || !idx->by_start) {
        free(s);
        return ks_fail(KS_ENOMEM, "out of memory for the items' starts");
    }
    for (i = 0; i < idx->nitems; ++i) s[i] = (start_of){idx->items[i].first, i};
    qsort(s, idx->nitems, sizeof *s, by_first);
    for (i = 0; i < idx->nitems; ++i) idx->by_start[i] = s[i].id;
    free(s);
    return KS_OK;
}

/* The pass, then the items sorted (stably: equal keys keep their file order), then the
 * run-length index when every item's events sit together and no key repeats, else the
 * permuted one (a second pass). */
static int build(vw_index *idx, vw_progress *progress)
{
    const ks_trace *tr = idx->tr;
    const uint64_t csize = vw_trace_lazy(tr) ? tr->chunk_events : 4096;
    ks_event *buf = vw_trace_lazy(tr) ? malloc(csize * sizeof *buf) : NULL;
    pending *pend = NULL;
    uint64_t npend = 0;
    int split = 0;
    int rc = vw_trace_lazy(tr) && !buf ? ks_fail(KS_ENOMEM, "out of memory indexing") : KS_OK;
    if (!rc) rc = scan(idx, buf, csize, &pend, &npend, &split, progress);
    if (rc) goto out;
    int sorted = 1;
    for (uint32_t i = 1; i < idx->nitems && sorted; ++i)
        sorted = by_key_then_first(&idx->items[i - 1], &idx->items[i]) < 0;
    if (!sorted) qsort(idx->items, idx->nitems, sizeof *idx->items, by_key_then_first);
    for (uint32_t i = 1; i < idx->nitems && !split; ++i) split = !by_key(&idx->items[i - 1], &idx->items[i]);
    for (uint64_t p = 0; p < npend && !split; ++p) {
        const ks_event e = {.index = pend[p].index,
                            .block = pend[p].block,
                            .thread = pend[p].thread,
                            .iter = pend[p].iter};
        split = find_item(idx, &e) != VW_NONE; /* an event of an item, away from its run */
    }
    free(pend), pend = NULL;
    progress_set(progress, 850);
    if (split) {
        rc = build_permuted(idx, buf, csize);
    } else {
        idx->orphans = npend;
        rc = build_by_start(idx);
    }
    free(buf), buf = NULL;
    if (!rc) rc = vw_orders_build(idx);
    progress_set(progress, 900);
out:
    free(buf), free(pend);
    return rc;
}

int vw_index_build(vw_index *idx, const ks_trace *tr, vw_progress *progress)
{
    memset(idx, 0, sizeof *idx);
    idx->tr = tr;
    if (tr->nevents >= VW_NONE)
        return ks_fail(KS_EINVAL, "%llu events; the viewer handles at most %u (record fewer with --filter)",
                       (unsigned long long)tr->nevents, VW_NONE - 1);
    int rc = build(idx, progress);
    if (rc) {
        vw_index_free(idx);
        return rc;
    }
    vw_agg_sectors(idx);
    progress_set(progress, 1000);
    return KS_OK;
}

void vw_index_free(vw_index *idx)
{
    free(idx->items);
    free(idx->by_start);
    free(idx->ev_perm);
    free(idx->ev_item);
    for (int o = 0; o < VW_NORDERS; ++o) {
        free(idx->orders[o].ord);
        free(idx->orders[o].cum);
    }
    vw_agg_free(idx);
    const ks_trace *tr = idx->tr;
    memset(idx, 0, sizeof *idx);
    idx->tr = tr;
}
