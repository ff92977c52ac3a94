/* test_view_index - the index's answers (the item of each event, the events of each item,
 * the thread-major and iteration-major orders) against a brute-force reference, on random
 * traces (fixed seeds, odd sizes) in five shapes:
 *   sorted:      items by key, each item's events together, orphans between items
 *                (a format-2 file's order: the run-length index);
 *   by thread:   each item's events together, items in the simulator's thread order (not
 *                their key order: run-length with by_start);
 *   interleaved: the events of the items mixed (a version 1 GPU trace: permuted);
 *   repeated:    some key twice (a kernel visiting an index twice: permuted);
 *   orphan in:   an orphan inside an item's events (permuted).
 * The reference knows nothing of runs: an event's item is the first item (sorted by key,
 * equal keys in file order) with its key, found by a scan of all items. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../viewer/vw_nav.h"
#include "test_util.h"

enum { SORTED, BY_THREAD, INTERLEAVED, REPEATED, ORPHAN_IN, NSHAPES };

#define THREADS 7
#define BLOCKS 5

typedef struct key {
    int64_t index;
    uint32_t block, thread, iter;
} key;

static int key_cmp(const key *a, const key *b)
{
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    return (a->iter > b->iter) - (a->iter < b->iter);
}

static key key_of_event(const ks_event *e) { return (key){e->index, e->block, e->thread, e->iter}; }

static ks_event make(int kind, key k)
{
    ks_event e;
    memset(&e, 0, sizeof e);
    e.kind = (uint8_t)kind;
    e.index = k.index, e.block = k.block, e.thread = k.thread, e.iter = k.iter;
    return e;
}

/* nitems distinct keys (index 3 apart: index + 1 is a key no item has, for orphans),
 * sorted by key; block/thread/iter random so the orders differ from the key order. */
static void make_keys(uint64_t *s, key *k, int nitems)
{
    for (int i = 0; i < nitems; ++i)
        k[i] = (key){3 * i + tu_int(s, 0, 1), (uint32_t)tu_int(s, 0, BLOCKS - 1), (uint32_t)tu_int(s, 0, THREADS - 1),
                     (uint32_t)tu_int(s, 0, 6)};
}

/* A random trace of the given shape into ev (room for cap); returns the event count. */
static uint64_t make_trace(uint64_t *s, int shape, int nitems, ks_event *ev, uint64_t cap)
{
    key k[512];
    int order[512];
    make_keys(s, k, nitems);
    for (int i = 0; i < nitems; ++i) order[i] = i;
    if (shape == BY_THREAD) /* a random permutation of the items */
        for (int i = nitems - 1; i > 0; --i) {
            int j = (int)tu_int(s, 0, i), t = order[i];
            order[i] = order[j], order[j] = t;
        }
    if (shape == REPEATED && nitems > 2) k[nitems - 1] = k[1]; /* a key twice, the copy last */
    uint64_t n = 0;
    for (int i = 0; i < nitems; ++i) {
        const key kk = k[order[i]];
        const int extra = (int)tu_int(s, 0, 5);
        ev[n++] = make(KS_EV_WORK, kk);
        for (int x = 0; x < extra; ++x) ev[n++] = make(KS_EV_READ, kk);
        if (tu_int(s, 0, 3) == 0) { /* an orphan: a key no item has */
            key o = kk;
            o.index = 3 * (int64_t)nitems + 1 + tu_int(s, 0, 9);
            ev[n++] = make(KS_EV_READ, o);
        }
        if (shape == ORPHAN_IN && i == nitems / 2) { /* an orphan, then one more event of the item */
            key o = kk;
            o.iter += 100;
            ev[n++] = make(KS_EV_READ, o);
            ev[n++] = make(KS_EV_READ, kk);
        }
    }
    if (shape == INTERLEAVED) /* shuffle everything: work events need not come first */
        for (uint64_t i = n - 1; i > 0; --i) {
            uint64_t j = (uint64_t)tu_int(s, 0, (int64_t)i);
            ks_event t = ev[i];
            ev[i] = ev[j], ev[j] = t;
        }
    ck_assert_uint_le(n, cap);
    return n;
}

typedef struct ref {
    uint32_t nitems;
    key items[512];
    uint32_t item_of[8192];
    uint32_t ord[NSHAPES][512]; /* [order] rank -> item */
} ref;

static int64_t order_a(const key *k, int o)
{
    return o == VW_ORDER_THREAD ? (int64_t)k->block * THREADS + k->thread : k->iter;
}
static int64_t order_b(const key *k, int o)
{
    return o == VW_ORDER_THREAD ? k->iter : (int64_t)k->block * THREADS + k->thread;
}

/* item x before item y in order o: (a, b, index), ties by item id */
static int before(const ref *r, int o, uint32_t x, uint32_t y)
{
    const key *p = &r->items[x], *q = &r->items[y];
    if (order_a(p, o) != order_a(q, o)) return order_a(p, o) < order_a(q, o);
    if (order_b(p, o) != order_b(q, o)) return order_b(p, o) < order_b(q, o);
    if (p->index != q->index) return p->index < q->index;
    return x < y;
}

static void reference(const ks_event *ev, uint64_t n, ref *r)
{
    r->nitems = 0;
    for (uint64_t i = 0; i < n; ++i) /* insertion by key; equal keys keep file order */
        if (ev[i].kind == KS_EV_WORK) {
            key k = key_of_event(&ev[i]);
            uint32_t at = r->nitems++;
            while (at > 0 && key_cmp(&r->items[at - 1], &k) > 0) r->items[at] = r->items[at - 1], at--;
            r->items[at] = k;
        }
    for (uint64_t i = 0; i < n; ++i) {
        key k = key_of_event(&ev[i]);
        r->item_of[i] = VW_NONE;
        for (uint32_t it = 0; it < r->nitems && r->item_of[i] == VW_NONE; ++it)
            if (!key_cmp(&r->items[it], &k)) r->item_of[i] = it;
    }
    for (int o = VW_ORDER_THREAD; o <= VW_ORDER_ITER; ++o) /* selection sort */
        for (uint32_t rank = 0; rank < r->nitems; ++rank) {
            uint32_t best = VW_NONE;
            for (uint32_t it = 0; it < r->nitems; ++it) {
                int used = 0;
                for (uint32_t q = 0; q < rank && !used; ++q) used = r->ord[o][q] == it;
                if (!used && (best == VW_NONE || before(r, o, it, best))) best = it;
            }
            r->ord[o][rank] = best;
        }
}

static void check_index(const ks_event *ev, uint64_t n, int shape)
{
    static ks_trace tr;
    static vw_index idx;
    static ref r;
    memset(&tr, 0, sizeof tr);
    tr.threads = THREADS, tr.blocks = BLOCKS, tr.block_cap = -1;
    tr.nsites = 1;
    tr.sites[0].kind = KS_EV_WORK, tr.sites[0].tensor = -1;
    tr.events = (ks_event *)ev, tr.nevents = n;
    reference(ev, n, &r);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    if (shape != INTERLEAVED || n > 64) /* a few shuffled events may still sit by item */
        ck_assert_msg(!idx.ev_perm == (shape == SORTED || shape == BY_THREAD), "shape %d: run-length %d", shape,
                      !idx.ev_perm);
    ck_assert_uint_eq(idx.nitems, r.nitems);
    for (uint32_t it = 0; it < r.nitems; ++it) {
        const vw_item *x = &idx.items[it];
        ck_assert(x->index == r.items[it].index && x->block == r.items[it].block && x->thread == r.items[it].thread &&
                  x->iter == r.items[it].iter);
    }
    uint64_t orphans = 0;
    for (uint64_t e = 0; e < n; ++e) {
        ck_assert_uint_eq(vw_item_of(&idx, (uint32_t)e), r.item_of[e]);
        orphans += r.item_of[e] == VW_NONE;
    }
    ck_assert_uint_eq(idx.orphans, orphans);
    ck_assert_uint_eq(vw_item_of(&idx, (uint32_t)n), VW_NONE);
    for (uint32_t it = 0; it < r.nitems; ++it) { /* its events: those the reference gives it, in file order */
        uint32_t k = 0;
        for (uint64_t e = 0; e < n; ++e)
            if (r.item_of[e] == it) {
                ck_assert_uint_lt(k, idx.items[it].count);
                ck_assert_uint_eq(vw_item_ev(&idx, &idx.items[it], k), e);
                k++;
            }
        ck_assert_uint_eq(k, idx.items[it].count);
    }
    for (int o = VW_ORDER_THREAD; o <= VW_ORDER_ITER; ++o) {
        uint64_t pos = 0;
        for (uint32_t rank = 0; rank < r.nitems; ++rank) {
            const uint32_t it = r.ord[o][rank];
            ck_assert_uint_eq(vw_order_rank(&idx, o, it), rank);
            uint64_t first, last;
            vw_item_span(&idx, o, it, &first, &last);
            ck_assert_uint_eq(first, pos);
            for (uint64_t e = 0; e < n; ++e)
                if (r.item_of[e] == it) {
                    ck_assert_uint_eq(vw_order_event(&idx, o, pos), e);
                    ck_assert_uint_eq(vw_order_pos(&idx, o, (uint32_t)e), pos);
                    pos++;
                }
            ck_assert_uint_eq(last, pos > first ? pos - 1 : first); /* a repeated key's copy has no events */
        }
        ck_assert_uint_eq(vw_order_len(&idx, o), pos);
    }
    vw_index_free(&idx);
}

START_TEST(the_index_answers_as_the_brute_force_reference_in_every_shape)
{
    static ks_event ev[8192];
    static const int sizes[] = {1, 2, 3, 7, 31, 127, 255, 511};
    for (int shape = 0; shape < NSHAPES; ++shape)
        for (int si = 0; si < (int)(sizeof sizes / sizeof *sizes); ++si) {
            uint64_t s = 0x51ED0000ULL + (uint64_t)shape * 97 + (uint64_t)si;
            if ((shape == REPEATED && sizes[si] < 3) || (shape == ORPHAN_IN && sizes[si] < 1)) continue;
            const uint64_t n = make_trace(&s, shape, sizes[si], ev, 8192);
            check_index(ev, n, shape);
        }
}
END_TEST

/* Orphans only (no work event) and an empty trace: no items, every event an orphan. */
START_TEST(a_trace_without_work_events_has_no_items_and_every_event_is_an_orphan)
{
    static ks_event ev[13];
    for (int i = 0; i < 13; ++i) ev[i] = make(KS_EV_READ, (key){i, 0, 0, 0});
    check_index(ev, 13, SORTED);
    check_index(ev, 0, SORTED);
}
END_TEST

/* The aggregates' counts widen from 1 to 2 to 4 bytes an element as counts pass 255 and
 * 65535, and the weights (the read counts until the first sample) then sum the corner
 * weights: against counts and float sums kept per element by the test, event by event. */
START_TEST(aggregate_counts_widen_past_255_and_65535_and_weights_start_from_the_reads)
{
    enum { P = 3, H = 5, W = 7, N = P * H * W, NEV = 90001 };
    static ks_event ev[NEV];
    static ks_trace tr;
    static vw_index idx;
    static uint32_t reads[N], writes[N];
    static float weights[N];
    uint64_t s = 0xA66E0035ULL;
    memset(&tr, 0, sizeof tr);
    memset(reads, 0, sizeof reads), memset(writes, 0, sizeof writes), memset(weights, 0, sizeof weights);
    tr.threads = THREADS, tr.blocks = BLOCKS, tr.block_cap = -1, tr.nsites = 1, tr.ntensors = 1;
    tr.sites[0].kind = KS_EV_WORK, tr.sites[0].tensor = -1;
    tr.tensors[0].dtype = KS_F32, tr.tensors[0].ndim = 3;
    tr.tensors[0].shape[0] = P, tr.tensors[0].shape[1] = H, tr.tensors[0].shape[2] = W;
    for (int i = 0; i < NEV; ++i) {
        ev[i] = make(KS_EV_READ, (key){0, 0, 0, 0});
        ev[i].tensor = 0;
        /* element 0 gets most reads (past 65535), element 1 some (past 255), the rest few */
        const int64_t r = tu_int(&s, 0, 99);
        const int64_t off = r < 96 ? 0 : r < 98 ? 1 : tu_int(&s, 2, N - 1);
        const int kind = i > NEV / 2 && tu_int(&s, 0, 9) == 0 ? KS_EV_SAMPLE
                         : tu_int(&s, 0, 9) == 0              ? KS_EV_WRITE
                                                              : KS_EV_READ;
        ev[i].kind = (uint8_t)kind;
        if (kind == KS_EV_SAMPLE) { /* corner (0, 0) of a sample at (y + 0.25, x + 0.5) only */
            const int64_t at = tu_int(&s, 0, N - 1);
            ev[i].u.sample.plane = (int32_t)(at / (H * W));
            ev[i].u.sample.y = (float)(at / W % H) + 0.25f, ev[i].u.sample.x = (float)(at % W) + 0.5f;
            ev[i].u.sample.w[0] = 0.375f;
            ev[i].flags = KS_FLAG_C00;
            reads[at]++, weights[at] += 0.375f;
            continue;
        }
        ev[i].u.access.plane = (int32_t)(off / (H * W)), ev[i].u.access.y = (int32_t)(off / W % H);
        ev[i].u.access.x = (int32_t)(off % W);
        if (kind == KS_EV_WRITE) writes[off]++;
        else reads[off]++, weights[off] += 1.0f;
    }
    ck_assert_uint_gt(reads[0], 65535);
    ck_assert_uint_gt(reads[1], 255);
    tr.events = ev, tr.nevents = NEV;
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    const vw_aggregate *a = &idx.agg[0];
    ck_assert(a->on);
    ck_assert_int_eq(a->reads.width, 4);
    ck_assert_ptr_nonnull(a->weights);
    uint32_t max_reads = 0, max_writes = 0;
    for (int i = 0; i < N; ++i) {
        ck_assert_uint_eq(vw_count_at(&a->reads, i), reads[i]);
        ck_assert_uint_eq(vw_count_at(&a->writes, i), writes[i]);
        ck_assert_float_eq(vw_agg_weight(a, i), weights[i]);
        ck_assert_uint_eq(vw_count_at(&a->visits, i), 0);
        max_reads = reads[i] > max_reads ? reads[i] : max_reads;
        max_writes = writes[i] > max_writes ? writes[i] : max_writes;
    }
    ck_assert_uint_eq(a->max_reads, max_reads);
    ck_assert_uint_eq(a->max_writes, max_writes);
    ck_assert_int_eq(a->writes.width, max_writes > 65535 ? 4 : max_writes > 255 ? 2 : 1);
    vw_index_free(&idx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_index");
    TCase *tc = tcase_create("view_index");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_index_answers_as_the_brute_force_reference_in_every_shape);
    tcase_add_test(tc, a_trace_without_work_events_has_no_items_and_every_event_is_an_orphan);
    tcase_add_test(tc, aggregate_counts_widen_past_255_and_65535_and_weights_start_from_the_reads);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
