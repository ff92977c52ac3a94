/* vw_index.h - what the viewer derives from a trace's events, built once per trace
 * (in a background thread for big traces, so the first frame never waits for it):
 *   - work items: one per work event, sorted by (index, block, thread, iter), each with
 *     its events (in seq order), read with vw_item_ev; an event's item with vw_item_of;
 *   - the three replay orders (recorded, thread-major, iteration-major);
 *   - aggregates per tensor element: reads (read events + valid sample corners), weight
 *     sums (1 per read, the corner weight per sample), writes (stores + atomic adds),
 *     visits (region points: ks_probe_point, e.g. the sites a sparse rulebook pairs).
 * Pure C, no SDL: the tests drive it directly. Event ids are uint32: traces with more
 * than 2^32 - 1 events are refused with a clear error.
 *
 * How an item holds its events, two shapes:
 *   - run-length (a trace whose every item's events sit together in file order: format-2
 *     files, stored by item, and the simulator's sinks, which run a thread's item whole):
 *     item i's events are the event ids items[i].first .. first + count - 1, and an
 *     event's item is a binary search over the items' first events. Nothing per event;
 *     4 bytes an item more (by_start) when the items' key order is not their file order.
 *   - permuted (the events of items interleave or an item repeats: a version 1 GPU trace,
 *     a kernel that visits an index twice): ev_perm lists the event ids grouped by item
 *     (items[i].first indexes it) and ev_item gives each event's item: 8 bytes an event.
 * Read both through vw_item_ev / vw_item_of, never the arrays.
 */
#ifndef VW_INDEX_H
#define VW_INDEX_H

#include <stdint.h>

#include "../trace/kst.h"

#define VW_NONE UINT32_MAX

typedef enum vw_order {
    VW_ORDER_RECORDED = 0, /* events exactly as the trace stores them (file order) */
    VW_ORDER_THREAD = 1,   /* by (block, thread), then grid-stride iteration */
    VW_ORDER_ITER = 2,     /* by iteration, then (block, thread): the grid sweeping the data */
    VW_NORDERS = 3
} vw_order;

typedef struct vw_item {
    int64_t index;
    uint32_t block, thread, iter;
    uint32_t first; /* its first event (run-length) or its place in ev_perm (permuted) */
    uint32_t count; /* events of the item, the work event first */
} vw_item;

/* One order over work items (thread/iteration-major): rank r shows item ord[r], whose
 * events sit at positions cum[r] .. cum[r+1]-1. The recorded order needs no arrays, nor
 * does an order that is the items' own (ord NULL) and, when those cover every event in
 * file order, no cum either (by_event: a position is an event id). An item's rank is a
 * binary search over ord (it is sorted by the order's key), so no inverse is kept. */
typedef struct vw_item_order {
    int built;     /* 0: no index (yet): the order reads as the recorded one */
    int by_event;  /* positions are event ids: the recorded order, cut into items */
    uint32_t *ord; /* rank -> item; NULL: rank r is item r */
    uint32_t *cum; /* nitems + 1 entries (NULL when by_event) */
} vw_item_order;

/* A count per element, as narrow as its largest count: 1 byte an element, widened to 2
 * and then 4 (one copy each) by the first count that does not fit. Most elements of the
 * big tensors are counted a few times (an im2col's columns are written once each), so a
 * 47 M-element tensor's counts take 47 MB, not 190. Read with vw_count_at. */
typedef struct vw_counts {
    void *v;   /* NULL: never counted (all zero) */
    int width; /* bytes an element: 1, 2 or 4 */
} vw_counts;

static inline uint32_t vw_count_at(const vw_counts *c, int64_t off)
{
    if (!c->v) return 0;
    if (c->width == 1) return ((const uint8_t *)c->v)[off];
    if (c->width == 2) return ((const uint16_t *)c->v)[off];
    return ((const uint32_t *)c->v)[off];
}

typedef struct vw_aggregate {
    int on;    /* the tensor has aggregates (touched by an event, at most VW_AGG_MAX_ELEMENTS) */
    int64_t n; /* its elements */
    /* per element of the tensor, allocated by the first event that counts there */
    vw_counts reads, writes;
    vw_counts visits; /* region points on the element (rounded to the nearest cell) */
    float *weights;   /* NULL while every read weighed 1 (no sample yet): the weight is reads */
    /* sectors per request: the sum of the sectors of the warp requests (trace/memory.h)
     * that touched the element, and how many did (one per request, however many of its
     * lanes hit the element); NULL when the trace is too big (VW_SECTORS_MAX_EVENTS) */
    float *sector_sum;
    uint32_t *sector_n;
    uint32_t max_reads, max_writes, max_visits;
    float max_weight;
} vw_aggregate;

/* The weight sum of element off (the read count while no sample has weighed in). */
static inline float vw_agg_weight(const vw_aggregate *a, int64_t off)
{
    return a->weights ? a->weights[off] : (float)vw_count_at(&a->reads, off);
}

typedef struct vw_index {
    const ks_trace *tr;
    uint32_t nitems;
    vw_item *items;
    uint32_t *by_start;               /* run-length: item ids by first event; NULL when that is item order */
    uint32_t *ev_perm;                /* permuted: event ids grouped by item (NULL when run-length) */
    uint32_t *ev_item;                /* permuted: per event, its item or VW_NONE (NULL when run-length) */
    uint64_t orphans;                 /* events whose work item is not in the trace */
    uint64_t outside;                 /* reads/writes outside their tensor, samples on a plane it lacks */
    vw_item_order orders[VW_NORDERS]; /* [VW_ORDER_RECORDED] unused */
    vw_aggregate agg[KS_MAX_TENSORS];
    int margin[KS_MAX_TENSORS]; /* how many cells outside a plane padding reads reach (0..4) */
    int point_taps;             /* some region point has a tap other than 0: points are labelled with it */
} vw_index;

/* Traces the viewer opens: a format-2 file opens with its header and chunk index only
 * (ks_trace_open_lazy), so the first frame waits for no decoding: tr->events stays NULL
 * and tr->nevents is the file's count. Its events are read through vw_event, which
 * decodes their chunk on demand into a small cache (one per thread: the index thread
 * decodes on its own, chunk by chunk, and never holds all events). A version 1 file and a
 * trace in memory (tr->events set) are read in place. vw_trace_close drops the calling
 * thread's cached chunks of tr and closes it. */
int vw_trace_open(const char *path, ks_trace *tr);
void vw_trace_close(ks_trace *tr);
/* Event id of tr (< tr->nevents). A pointer into the cache stays valid until
 * VW_EVENT_CACHE other chunks have been read on the same thread; a chunk that does not
 * decode (a damaged file) reads as an event of kind 0, which ks_event_fits rejects. */
#define VW_EVENT_CACHE 16
const ks_event *vw_event(const ks_trace *tr, uint64_t id);
/* Whether tr's events are read chunk by chunk (opened by vw_trace_open, format 2). */
int vw_trace_lazy(const ks_trace *tr);

/* Progress of a build in [0, 1000], readable from another thread while it runs. */
typedef struct vw_progress {
    volatile int permille;
    volatile int cancel; /* set to stop a build early (it returns KS_EINVAL) */
} vw_progress;

/* Most elements a tensor may have to get aggregates (bigger ones show values only). */
#define VW_AGG_MAX_ELEMENTS (1LL << 26)

/* Most events a trace may have to get the sectors-per-request aggregate (it sorts every
 * site's accesses). */
#define VW_SECTORS_MAX_EVENTS (1ULL << 25)

/* The sectors-per-request of element off of tensor t: the mean over the requests that
 * touched it, or -1 when none did or the aggregate is missing. */
double vw_sectors_at(const vw_index *idx, int t, int64_t off);

/* Builds the index of tr (which must stay open while idx lives). progress may be NULL.
 * Returns KS_OK, or an error with ks_error_message() set and idx left empty. */
int vw_index_build(vw_index *idx, const ks_trace *tr, vw_progress *progress);
void vw_index_free(vw_index *idx);
/* Threads that decode a format-2 trace's chunks for the build, beside it: -1 (the
 * default) from the cores online (1 or 2 cores: none; 3: one and an aggregator thread
 * that sums the aggregates; more: cores - 2, at most 7, and the aggregator; none for a
 * trace under 16 chunks), 0 none (the build decodes itself), 1 one, n >= 2: n and the
 * aggregator. The index is the same either way. */
void vw_index_set_decoders(int n);

/* The item of event ev, VW_NONE for an event without a work item (an orphan), an id out of
 * range or an index not built. */
uint32_t vw_item_of(const vw_index *idx, uint32_t ev);

/* Event k (< it->count) of item it (an element of idx->items), the work event first. */
static inline uint32_t vw_item_ev(const vw_index *idx, const vw_item *it, uint32_t k)
{
    return idx->ev_perm ? idx->ev_perm[it->first + k] : it->first + k;
}

/* The rank of item `item` in order o (o must be built; the recorded order: VW_NONE). */
uint32_t vw_order_rank(const vw_index *idx, vw_order o, uint32_t item);

/* The item whose index is `index` (the first of several, if a kernel repeated it), or
 * VW_NONE. */
uint32_t vw_index_find(const vw_index *idx, int64_t index);

/* Global thread of an event or item: block * threads + thread. */
int64_t vw_gthread(const ks_trace *tr, uint32_t block, uint32_t thread);

/* Corner cells of a sample event: rows y[0], y[1] and columns x[0], x[1] in the
 * KS_FLAG_C00..C11 order (y0,x0) (y0,x1) (y1,x0) (y1,x1). Normally floor and floor + 1;
 * with KS_FLAG_CLAMP_Y (RoIAlign at the last row) both rows are floor(y); same for x. */
void vw_sample_corners(const ks_event *e, int64_t y[2], int64_t x[2]);

#endif
