/* test_pages.c - the GPU's compact record pages (ks_pages.h) on the CPU: the page writer
 * the probes use on the device, driven here by interleaved simulated threads, and the
 * host decoder that turns pages back into events. The reference is the list of events
 * the threads meant, built field by field beside the writer; the decoded events must
 * equal it exactly, in any interleaving, with drops counted when the buffer is short. */
#include "test_util.h"

#include "../kernels/core/ks_pages_int.h"
#include "../kernels/core/ks_probe.h"

enum { THREADS = 37 };

typedef struct sim_thread {
    ks_thread t;
    int items_left;
    int events_left; /* of the current item; -1: the next event starts an item */
    int64_t next_index;
    int lost;       /* a record of it was dropped: the host drops the rest of its item */
    uint32_t value; /* its last access's value (a write's short repeat, ks_pages.h) */
} sim_thread;

typedef struct expected {
    ks_event *ev;
    size_t n, cap;
    unsigned long long host_drops; /* records stored after a lost column, before a work record */
    unsigned long long total;      /* every record the threads wrote */
} expected;

/* One step in g_gaps (0: never) loses a thread's column, as a lane whose page word was
 * overwritten before it read it does on the GPU (ks_page_claim) */
static int g_gaps;

/* The pages write_pages claimed ahead that no thread reached (no header: the GPU's last
 * page of a warp slot, ks_pages_unreached), ascending; decode steps over them. */
enum { AHEAD_MAX = 4096 };
static unsigned long long g_ahead[AHEAD_MAX];
static size_t g_nahead;

static int is_ahead(unsigned long long pos)
{
    for (size_t i = 0; i < g_nahead; ++i)
        if (g_ahead[i] == pos) return 1;
    return 0;
}

static void expect(expected *x, const ks_event *e)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 1024;
        x->ev = realloc(x->ev, x->cap * sizeof *x->ev);
        ck_assert_ptr_nonnull(x->ev);
    }
    x->ev[x->n++] = *e;
}

static uint32_t rnd32(uint64_t *s) { return (uint32_t)tu_next(s); }

/* The sink the threads write into: its epoch, and dims for tensors 0-3 (planes of 7 x 5,
 * 1 x 9, 3 x 1, 6 x 6), so that some accesses are stored derived (ks_pages.h). */
static ks_sink g_sink;
static const int32_t dim_rows[4] = {7, 1, 3, 6}, dim_cols[4] = {5, 9, 1, 6};

/* One event of thread st: a work record when an item starts, else a random kind with the
 * payload words its probe fills (the others 0), written by ks_page_record and expected. */
static void step(sim_thread *st, uint64_t *s, expected *x)
{
    ks_thread *t = &st->t;
    ks_event e;
    memset(&e, 0, sizeof e);
    uint32_t p[8] = {0};
    uint32_t n;
    if (st->events_left < 0) {
        t->work = st->next_index;
        t->iter = (uint32_t)tu_int(s, 0, 70000); /* past a byte and a short */
        t->seq = 0;
        /* mostly below 2^32 (a short work record), now and then past it (a long one) */
        st->next_index += tu_int(s, 0, 9) == 0 ? tu_int(s, 1, 1ll << 33) : tu_int(s, 1, 5000);
        st->events_left = (int)tu_int(s, 0, 300); /* seq past 255 */
        e.kind = KS_EV_WORK;
        e.tensor = KS_NO_TENSOR;
        n = 8;
        const int nonzero = (int)tu_int(s, 0, 8);
        for (int k = 0; k < nonzero; ++k) p[k] = tu_int(s, 0, 4) ? rnd32(s) : 0; /* zeros inside too */
        if (tu_int(s, 0, 15) == 0) e.flags = (uint8_t)tu_int(s, 1, 255);         /* flags: the long form */
    } else {
        static const uint8_t kinds[] = {KS_EV_READ, KS_EV_WRITE, KS_EV_SAMPLE, KS_EV_REGION, KS_EV_BARRIER};
        e.kind = kinds[tu_int(s, 0, 4)];
        e.tensor = (uint8_t)tu_int(s, 0, 255);
        /* half the time small enough for a short access (ks_pages.h: KS_SHORT_*) */
        e.tap = (uint16_t)tu_int(s, 0, tu_int(s, 0, 1) ? 1023 : 65535);
        e.flags = (uint8_t)tu_int(s, 0, tu_int(s, 0, 1) ? 15 : 255);
        n = e.kind == KS_EV_SAMPLE ? 8 : e.kind == KS_EV_BARRIER ? 2 : 6;
        if ((e.kind == KS_EV_READ || e.kind == KS_EV_WRITE) && tu_int(s, 0, 3) == 0) n = 8; /* shared */
        for (uint32_t k = 0; k < n; ++k) p[k] = rnd32(s);
        if (n == 6 && tu_int(s, 0, 1)) { /* in bounds of a tensor with dims: derivable */
            e.tensor = (uint8_t)tu_int(s, 0, 3);
            const int32_t rows = dim_rows[e.tensor], cols = dim_cols[e.tensor];
            const int64_t plane = tu_int(s, 0, 1 << 30), y = tu_int(s, 0, rows - 1), x = tu_int(s, 0, cols - 1);
            const int64_t off = (plane * rows + y) * cols + x;
            p[0] = (uint32_t)off, p[1] = (uint32_t)(off >> 32), p[2] = (uint32_t)plane, p[3] = (uint32_t)y;
            p[4] = (uint32_t)x;
            if (tu_int(s, 0, 3) == 0) p[4] = (uint32_t)(x + cols), p[3] = (uint32_t)(y - 1); /* same offset: explicit */
        } else if (n == 6 && tu_int(s, 0, 2) == 0) { /* padding: offset -1, mostly value 0 and y, x in 16 bits */
            p[0] = p[1] = 0xffffffffu;
            const int64_t lim = tu_int(s, 0, 3) ? 32768 : 40000;
            p[3] = (uint32_t)(int32_t)tu_int(s, -lim, lim - 1), p[4] = (uint32_t)(int32_t)tu_int(s, -lim, lim - 1);
            if (tu_int(s, 0, 3)) p[5] = 0;
        }
        /* a write of the value read just before: mostly a short repeat (a read of the value
         * before is not: only writes repeat) */
        if (n == 6 && tu_int(s, 0, 2) == 0) p[5] = st->value;
        st->value = p[5];
        --st->events_left;
    }
    e.site = (uint16_t)tu_int(s, 0, tu_int(s, 0, 1) ? 63 : 65535);
    e.block = ks_block_linear(t);
    e.thread = ks_thread_linear(t);
    e.iter = t->iter;
    e.index = t->work;
    e.seq = t->seq;
    memcpy(e.u.field, p, sizeof p);
    if (st->events_left == 0) {
        st->events_left = -1;
        --st->items_left;
    }
    const uint32_t seq = t->seq++;
    const unsigned long long dropped = t->sink->counters[1];
    ++x->total;
    /* now and then the claim inside this record finds no column (as on the GPU, after the
     * record's form was chosen): its column ends here, the buffer is full for the claim */
    const int fail_claim = g_gaps && tu_int(s, 0, g_gaps - 1) == 0 && t->page_word != KS_PAGE_NONE;
    const unsigned long long capacity = t->sink->capacity, asked = t->sink->counters[0];
    if (fail_claim) {
        ks_page_close(t);
        t->page_room &= ~0xffffu;
        t->sink->capacity = 0;
    }
    ks_page_record(t, e.kind, e.flags, e.site, e.tensor, e.tap, seq, n, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    if (fail_claim) { /* the buffer was not full: no hole where the claim's words were counted */
        t->sink->capacity = capacity;
        t->sink->counters[0] = asked;
    }
    if (t->sink->counters[1] != dropped) st->lost = 1; /* no column: dropped here, counted */
    else if (st->lost && e.kind != KS_EV_WORK) ++x->host_drops;
    else {
        st->lost = 0;
        expect(x, &e);
    }
}

static int by_thread_seq(const void *pa, const void *pb)
{
    const ks_event *a = pa, *b = pb;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* As the lanes of a warp short of room do on the GPU: 2-6 threads take a column each of
 * one new page (their current columns end where their records do): a page of their
 * number of columns, or of 32 with gaps no thread took. */
static void group_claim(sim_thread *th, uint64_t *s)
{
    int pick[6], k = (int)tu_int(s, 2, 6), got = 0;
    for (int tries = 0; tries < 40 && got < k; ++tries) {
        const int i = (int)tu_int(s, 0, THREADS - 1);
        int seen = th[i].items_left <= 0;
        for (int j = 0; j < got; ++j) seen |= pick[j] == i;
        if (!seen) pick[got++] = i;
    }
    if (got < 2) return;
    ks_sink *sink = th[pick[0]].t.sink;
    const unsigned long long page = sink->counters[0];
    if (tu_int(s, 0, 1)) { /* a page of as many columns as threads */
        sink->counters[0] += (unsigned long long)got * KS_COL_WORDS;
        for (int j = 0; j < got; ++j) ks_page_column(&th[pick[j]].t, page, (uint32_t)got, (uint32_t)j);
        return;
    }
    /* as the GPU does: a page of 32 columns, column 0 and a few others taken in order, the
     * rest left without a header (the buffer holds 0xa5 bytes there) */
    sink->counters[0] += KS_PAGE_MAX_WORDS;
    uint32_t col = 0;
    for (int j = 0; j < got; ++j) {
        ks_page_column(&th[pick[j]].t, page, 32, col);
        col += (uint32_t)tu_int(s, 1, 5);
    }
}

/* Runs THREADS simulated threads of a 2-D grid, interleaved at random, into a buffer of
 * `slots` 64-byte slots; returns the words claimed. */
static unsigned long long write_pages(uint64_t seed, unsigned long long slots, uint32_t **buf, expected *x,
                                      unsigned long long *dropped)
{
    uint64_t s = seed;
    /* not zeros: a column whose end word was never written must not read as ended */
    *buf = malloc((slots * KS_PAGE_SLOT_WORDS + 1) * sizeof(uint32_t));
    ck_assert_ptr_nonnull(*buf);
    memset(*buf, 0xa5, (slots * KS_PAGE_SLOT_WORDS + 1) * sizeof(uint32_t));
    unsigned long long counters[2] = {0, 0};
    g_nahead = 0;
    ks_sink *sink = &g_sink;
    memset(sink, 0, sizeof *sink);
    sink->events = (ks_event *)*buf;
    sink->counters = counters;
    sink->capacity = slots;
    sink->epoch = (uint32_t)seed * 2654435761u;
    for (int i = 0; i < 4; ++i) sink->dim_rows[i] = dim_rows[i], sink->dim_cols[i] = dim_cols[i];
    sim_thread th[THREADS];
    memset(th, 0, sizeof th);
    for (int i = 0; i < THREADS; ++i) {
        ks_thread *t = &th[i].t;
        /* a 2-D grid of 5 x 3 blocks of 4 x 2 threads: thread i is block i / 8, thread i % 8 */
        t->grid_dim = (ks_dim3){5, 3, 1};
        t->block_dim = (ks_dim3){4, 2, 1};
        t->block_idx = (ks_dim3){(uint32_t)(i / 8 % 5), (uint32_t)(i / 8 / 5), 0};
        t->thread_idx = (ks_dim3){(uint32_t)(i % 8 % 4), (uint32_t)(i % 8 / 4), 0};
        t->sink = sink;
        th[i].items_left = (int)tu_int(&s, 0, 4);
        th[i].events_left = -1;
        th[i].next_index = i;
        /* odd threads end their columns lazily, as KernelScope's own traced kernels do */
        if (i % 2) t->page_room = KS_PAGE_LAZY_END;
    }
    for (;;) {
        int live = 0;
        for (int i = 0; i < THREADS; ++i) live += th[i].items_left > 0;
        if (!live) break;
        int k = (int)tu_int(&s, 0, live - 1), i = 0;
        for (;; ++i)
            if (th[i].items_left > 0 && k-- == 0) break;
        if (tu_int(&s, 0, 3) == 0) group_claim(th, &s);
        if (g_gaps && tu_int(&s, 0, g_gaps - 1) == 0 && th[i].t.page_word != KS_PAGE_NONE) {
            /* as a claim that found no column leaves it: no column, a column's room */
            ks_page_close(&th[i].t);
            th[i].t.page_word = KS_PAGE_NONE;
            th[i].t.page_room = (th[i].t.page_room & ~0xffffu) | (KS_COL_WORDS - KS_COL_HEAD) | KS_PAGE_GAP;
        }
        if (tu_int(&s, 0, 15) == 0) { /* a page claimed ahead that no lane reaches: no header */
            ck_assert_uint_lt(g_nahead, AHEAD_MAX);
            g_ahead[g_nahead++] = sink->counters[0];
            if (tu_int(&s, 0, 1)) { /* or an earlier launch's (another epoch), left in the buffer */
                sink->epoch ^= 0x5bd1e995u;
                ks_page_column_at(sink, sink->counters[0], 32, 0, 3, 4);
                sink->epoch ^= 0x5bd1e995u;
            }
            sink->counters[0] += KS_PAGE_MAX_WORDS;
        }
        const int burst = (int)tu_int(&s, 1, 9);
        for (int b = 0; b < burst && th[i].items_left > 0; ++b) step(&th[i], &s, x);
    }
    for (int i = 0; i < THREADS; ++i) ks_page_close(&th[i].t); /* each thread done */
    *dropped = counters[1];
    return counters[0];
}

static ks_sink *decode(const uint32_t *buf, unsigned long long words, unsigned long long slots, unsigned long long keep,
                       unsigned long long *trimmed, ks_status *rc)
{
    ks_sink *host = ks_host_sink_create(keep == ~0ull ? 0 : keep, ks_filter_all());
    ck_assert_ptr_nonnull(host);
    g_sink.capacity = slots;
    *trimmed = 0;
    *rc = ks_pages_decode(buf, words, &g_sink, g_ahead, g_nahead, host, trimmed);
    return host;
}

/* The decoded events are the expected ones (x.n of them), in (block, thread, index, seq) order. */
static void expect_same_events(expected *x, ks_sink *host, uint64_t seed)
{
    ck_assert_uint_eq(ks_sink_count(host), x->n);
    qsort(x->ev, x->n, sizeof *x->ev, by_thread_seq);
    qsort(host->events, x->n, sizeof *x->ev, by_thread_seq);
    for (size_t i = 0; i < x->n; ++i)
        ck_assert_msg(!memcmp(&x->ev[i], &host->events[i], sizeof(ks_event)),
                      "seed %llu: event %zu (block %u thread %u seq %u kind %d) differs", (unsigned long long)seed, i,
                      x->ev[i].block, x->ev[i].thread, x->ev[i].seq, x->ev[i].kind);
}

START_TEST(pages_give_back_every_event)
{
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        expected x = {0};
        uint32_t *buf;
        unsigned long long dropped, trimmed;
        const unsigned long long slots = 1 << 19;
        const unsigned long long words = write_pages(seed, slots, &buf, &x, &dropped);
        ck_assert_uint_eq(dropped, 0);
        ck_assert_uint_eq(words % KS_COL_WORDS, 0);
        ck_assert_uint_gt(x.n, 200);
        ks_status rc;
        ks_sink *host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
        ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
        ck_assert_uint_eq(trimmed, 0);
        ck_assert_uint_eq(ks_sink_count(host), x.n);
        expect_same_events(&x, host, seed);
        ks_host_sink_free(host);
        free(buf), free(x.ev);
    }
}
END_TEST

/* A short buffer keeps whole pages; the records that found none are counted, and the
 * words claimed are what a large enough buffer took (kernels/run.c sizes its rerun so). */
START_TEST(short_buffer_counts_drops_and_the_words_needed)
{
    expected big = {0}, x = {0};
    uint32_t *bbuf, *buf;
    unsigned long long bdropped, dropped, trimmed;
    const unsigned long long need = write_pages(11, 1 << 19, &bbuf, &big, &bdropped);
    const unsigned long long slots = 40 * KS_COL_WORDS / KS_PAGE_SLOT_WORDS + 3; /* 40 columns and a part */
    const unsigned long long words = write_pages(11, slots, &buf, &x, &dropped);
    ck_assert_uint_eq(words, need);
    ck_assert_uint_gt(dropped, 0);
    ks_status rc;
    ks_sink *host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_OK);
    ck_assert_uint_eq(ks_sink_count(host) + dropped + trimmed, x.total);
    ck_assert_uint_eq(ks_sink_count(host) + trimmed, x.n + x.host_drops);
    ck_assert_uint_gt(ks_sink_count(host), 20); /* 40 columns, some in pages with gaps: records kept */
    /* every kept event is one the threads meant */
    qsort(x.ev, x.n, sizeof *x.ev, by_thread_seq);
    for (unsigned long long i = 0; i < ks_sink_count(host); ++i)
        ck_assert_ptr_nonnull(bsearch(&host->events[i], x.ev, x.n, sizeof *x.ev, by_thread_seq));
    ks_host_sink_free(host);
    /* keep: at most that many stored, the rest counted */
    host = decode(bbuf, need, 1 << 19, 101, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_OK);
    ck_assert_uint_eq(ks_sink_count(host), 101);
    ck_assert_uint_eq(trimmed, big.n - 101);
    ks_host_sink_free(host);
    free(buf), free(bbuf), free(x.ev), free(big.ev);
}
END_TEST

/* word k of the first column of the pg-th page (a page's first word: its columns) */
static uint32_t *first_column_word(uint32_t *buf, unsigned pg, unsigned k, unsigned long long *pos)
{
    *pos = 0;
    for (unsigned i = 0;; ++i) {
        while (is_ahead(*pos)) *pos += KS_PAGE_MAX_WORDS;
        if (i == pg) break;
        *pos += (buf[*pos] & 0xffff) * KS_COL_WORDS;
    }
    return buf + *pos + k * (buf[*pos] & 0xffff);
}

START_TEST(damaged_columns_are_refused_by_number)
{
    expected x = {0};
    uint32_t *buf;
    unsigned long long dropped, trimmed;
    const unsigned long long slots = 1 << 19, words = write_pages(5, slots, &buf, &x, &dropped);
    ck_assert_uint_gt(words / KS_COL_WORDS, 40);
    ks_status rc;
    unsigned long long pos;
    /* the first page whose first record is long (the short forms have no seq bits; a page
     * claimed ahead has none) */
    unsigned pg = 2;
    for (uint32_t h = *first_column_word(buf, pg, KS_COL_HEAD, &pos); h == 0 || (h >> 4 & 0xf) >= KS_W0_REPEAT;
         h = *first_column_word(buf, ++pg, KS_COL_HEAD, &pos))
        ck_assert_uint_lt(pg, 30);
    uint32_t *w1 = first_column_word(buf, pg, KS_COL_HEAD + 1, &pos);
    *w1 ^= 0x100; /* the first record's seq bits */
    ks_sink *host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    char at[64];
    snprintf(at, sizeof at, "page at word %llu (column 0)", pos);
    ck_assert_msg(strstr(ks_error_message(), at) && strstr(ks_error_message(), "out of order"), "%s",
                  ks_error_message());
    ks_host_sink_free(host);
    *w1 ^= 0x100;
    uint32_t *w0 = first_column_word(buf, 3, KS_COL_HEAD, &pos);
    const uint32_t keep0 = *w0;
    *w0 = (*w0 & ~0xfu) | 0xc; /* kind 12 */
    host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    snprintf(at, sizeof at, "page at word %llu (column 0)", pos);
    ck_assert_msg(strstr(ks_error_message(), at), "%s", ks_error_message());
    ks_host_sink_free(host);
    *w0 = keep0;
    host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_OK);
    const unsigned long long all = ks_sink_count(host);
    ck_assert_uint_eq(all, x.n);
    ks_host_sink_free(host);
    /* read as the next launch's (another epoch): no page is its, which is refused */
    g_sink.epoch += 1;
    host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    ck_assert_msg(strstr(ks_error_message(), "no page header"), "%s", ks_error_message());
    ks_host_sink_free(host);
    g_sink.epoch -= 1;
    /* a page header broken: refused, not skipped */
    uint32_t *tag = first_column_word(buf, 4, 3, &pos);
    *tag ^= 1;
    host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    ks_host_sink_free(host);
    *tag ^= 1;
    free(buf), free(x.ev);
}
END_TEST

/* A thread that lost a column (its page word overwritten before it read it, on the GPU):
 * the records it wrote with no column are counted as dropped on the device, its next
 * column says so, and the host drops that column's records up to the thread's next work
 * record (their item is not known) and counts them; every other event comes back. */
START_TEST(a_lost_column_drops_records_up_to_the_next_work_record)
{
    g_gaps = 25;
    for (uint64_t seed = 11; seed <= 13; ++seed) {
        expected x = {0};
        uint32_t *buf;
        unsigned long long dropped, trimmed;
        const unsigned long long slots = 1 << 19;
        const unsigned long long words = write_pages(seed, slots, &buf, &x, &dropped);
        ck_assert_uint_gt(dropped, 0);
        ck_assert_uint_gt(x.host_drops, 0);
        ks_status rc;
        ks_sink *host = decode(buf, words, slots, ~0ull, &trimmed, &rc);
        ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
        ck_assert_uint_eq(trimmed, x.host_drops);
        ck_assert_uint_eq(ks_sink_count(host), x.n);
        expect_same_events(&x, host, seed);
        ks_host_sink_free(host);
        free(buf), free(x.ev);
    }
    g_gaps = 0;
}
END_TEST

/* g_sink over buf (bytes long), tensor 1 planes of 1 x 9, and one thread t of a 1 x 1
 * grid writing into it, without a column yet: the tests of single records. */
static void one_thread_sink(uint32_t *buf, size_t bytes, unsigned long long counters[2], ks_thread *t)
{
    g_nahead = 0;
    memset(&g_sink, 0, sizeof g_sink);
    g_sink.events = (ks_event *)buf;
    g_sink.counters = counters;
    g_sink.capacity = bytes / 4 / KS_PAGE_SLOT_WORDS;
    g_sink.dim_rows[1] = 1, g_sink.dim_cols[1] = 9;
    memset(t, 0, sizeof *t);
    t->grid_dim = t->block_dim = (ks_dim3){1, 1, 1};
    t->sink = &g_sink;
    t->page_word = KS_PAGE_NONE;
}

/* A read dropped (its claim found no column) and the write of its value in the thread's
 * next column: the write is a short repeat of a value the host never saw, in a column
 * marked as coming after dropped records, so the host drops it with the rest of the item,
 * not the launch as a damaged buffer. */
START_TEST(a_repeat_after_a_dropped_read_is_dropped_with_its_item)
{
    uint32_t buf[4 * KS_COL_WORDS];
    memset(buf, 0xa5, sizeof buf);
    unsigned long long counters[2] = {0, 0};
    ks_thread t;
    one_thread_sink(buf, sizeof buf, counters, &t);
    t.work = 7, t.iter = 0;
    const uint32_t v = 0x40490fdb; /* 3.14159f */
    ks_page_record(&t, KS_EV_WORK, 0, 3, KS_NO_TENSOR, 0, 0, 8, 1, 2, 3, 4, 0, 0, 0, 0);
    ks_page_record(&t, KS_EV_WRITE, 0, 6, 1, 0, 1, 6, 2, 0, 0, 0, 2, 0x3f800000, 0, 0); /* stored */
    /* the read's claim finds no column */
    const unsigned long long capacity = g_sink.capacity;
    ks_page_close(&t);
    t.page_room &= ~0xffffu;
    g_sink.capacity = 0;
    const unsigned long long asked = counters[0];
    ks_page_record(&t, KS_EV_READ, 0, 5, 1, 1, 2, 6, 13, 0, 1, 0, 4, v, 0, 0);
    ck_assert_uint_eq(counters[1], 1);
    counters[0] = asked; /* the buffer was not full: no hole where the claim's words were counted */
    /* its virtual room used up; the write's claim finds one: a repeat, after a gap */
    g_sink.capacity = capacity;
    t.page_room &= ~0xffffu;
    ks_page_record(&t, KS_EV_WRITE, 0, 6, 1, 1, 3, 6, 3, 0, 0, 0, 3, v, 0, 0);
    ck_assert_uint_eq(counters[1], 1);
    unsigned long long pos;
    const uint32_t *w0 = first_column_word(buf, 1, KS_COL_HEAD, &pos);
    ck_assert_uint_eq(*w0 >> 4 & 0xf, KS_W0_REPEAT);
    ck_assert_uint_ne(first_column_word(buf, 1, 2, &pos)[0] & KS_PAGE_THREAD_GAP, 0);
    /* a new item: stored and read back */
    t.work = 8, t.iter = 1;
    ks_page_record(&t, KS_EV_WORK, 0, 3, KS_NO_TENSOR, 0, 0, 8, 5, 6, 7, 8, 0, 0, 0, 0);
    ks_page_close(&t);
    unsigned long long trimmed;
    ks_status rc;
    ks_sink *host = decode(buf, counters[0], capacity, ~0ull, &trimmed, &rc);
    ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    ck_assert_uint_eq(trimmed, 1); /* the write */
    ck_assert_uint_eq(ks_sink_count(host), 3);
    ck_assert(host->events[1].kind == KS_EV_WRITE && host->events[1].index == 7);
    ck_assert(host->events[2].kind == KS_EV_WORK && host->events[2].index == 8 && host->events[2].u.field[3] == 8);
    ks_host_sink_free(host);
}
END_TEST

/* The pages claimed ahead that no lane reached come from the warp slots' words: each
 * slot that drew columns names, for the group after its last, the page its last group
 * claimed; the decoder steps over those and only those. */
START_TEST(pages_no_lane_reached_are_named_by_the_slots)
{
    static unsigned long long slots[KS_PAGE_WARP_SLOTS * KS_PAGE_WARP_WORDS], out[KS_PAGE_WARP_SLOTS];
    unsigned long long *s5 = slots + 5 * KS_PAGE_WARP_WORDS, *s9 = slots + 9 * KS_PAGE_WARP_WORDS;
    unsigned long long *s11 = slots + 11 * KS_PAGE_WARP_WORDS, *s2047 = slots + 2047 * KS_PAGE_WARP_WORDS;
    s5[0] = 32, s5[1] = 0ull << 32 | 12, s5[2] = 1ull << 32 | 8; /* group 0 drawn: page 7 ahead */
    s9[0] = 100, s9[4] = 3ull << 32 | 2, s9[1] = 4ull << 32 | 4; /* groups 0-3: group 4's page 3 */
    s11[0] = 64, s11[3] = 6ull << 32 | 5;                        /* group 2's word from elsewhere */
    s2047[0] = 33, s2047[3] = 2ull << 32 | 1;                    /* groups 0-1: page 0 ahead */
    slots[12 * KS_PAGE_WARP_WORDS + 2] = 1ull << 32 | 9;         /* nothing drawn: none */
    const size_t n = ks_pages_unreached(slots, out);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(out[0], 0);
    ck_assert_uint_eq(out[1], 3ull * KS_PAGE_MAX_WORDS);
    ck_assert_uint_eq(out[2], 7ull * KS_PAGE_MAX_WORDS);
    /* a page without a header that the slots do not name is damage */
    expected x = {0};
    uint32_t *buf;
    unsigned long long dropped, trimmed;
    const unsigned long long words = write_pages(21, 1 << 19, &buf, &x, &dropped);
    ck_assert_uint_gt(g_nahead, 2);
    ks_status rc;
    ks_sink *host = decode(buf, words, 1 << 19, ~0ull, &trimmed, &rc);
    ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    expect_same_events(&x, host, 21);
    ks_host_sink_free(host);
    /* a page a thread wrote, named as one no lane reached: refused, not skipped */
    unsigned long long first;
    first_column_word(buf, 0, 0, &first);
    const size_t keep_n = g_nahead;
    unsigned long long keep[AHEAD_MAX];
    memcpy(keep, g_ahead, keep_n * sizeof *keep);
    size_t at = 0;
    while (at < g_nahead && g_ahead[at] < first) ++at;
    memmove(g_ahead + at + 1, g_ahead + at, (g_nahead - at) * sizeof *g_ahead);
    g_ahead[at] = first, g_nahead++;
    host = decode(buf, words, 1 << 19, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    ck_assert_msg(strstr(ks_error_message(), "has a header"), "%s", ks_error_message());
    ks_host_sink_free(host);
    memcpy(g_ahead, keep, keep_n * sizeof *keep), g_nahead = keep_n;
    g_ahead[1] = g_ahead[2]; /* the second no longer named */
    host = decode(buf, words, 1 << 19, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    ck_assert_msg(strstr(ks_error_message(), "no page header"), "%s", ks_error_message());
    ks_host_sink_free(host);
    free(buf), free(x.ev);
}
END_TEST

/* The words docs/trace-format.md gives for one column (a thread claiming alone, so a
 * column of one: word k at k): a short work record, a short read, a long derived write
 * (its site past KS_SHORT_SITES), the end word. Written out by hand from the doc. */
START_TEST(documented_words_of_the_five_forms)
{
    uint32_t buf[2 * KS_COL_WORDS] = {0};
    unsigned long long counters[2] = {0, 0};
    ks_thread t;
    one_thread_sink(buf, sizeof buf, counters, &t);
    t.work = 7, t.iter = 2;
    const uint32_t v = 0x3fc00000; /* 1.5f */
    /* work: site 3, fields 3, 0, 5 (and a 0: at least 4 are stored; the zeros after them are not) */
    ks_page_record(&t, KS_EV_WORK, 0, 3, KS_NO_TENSOR, 0, 0, 8, 3, 0, 5, 0, 0, 0, 0, 0);
    /* read: site 5, tensor 1, tap 9, offset 13 = (plane 1, y 0, x 4) */
    ks_page_record(&t, KS_EV_READ, 0, 5, 1, 9, 1, 6, 13, 0, 1, 0, 4, v, 0, 0);
    /* atomic write at site 70: long, derived, seq 2 */
    ks_page_record(&t, KS_EV_WRITE, KS_FLAG_ATOMIC, 70, 1, 9, 2, 6, 13, 0, 1, 0, 4, v, 0, 0);
    /* padding read at site 5, tensor 1, tap 2, (plane 6, y -1, x 300), value 0: outside */
    ks_page_record(&t, KS_EV_READ, KS_FLAG_PADDING, 5, 1, 2, 3, 6, 0xffffffffu, 0xffffffffu, 6, (uint32_t)-1, 300, 0, 0,
                   0);
    /* write of that 0 at offset 11 = (plane 1, y 0, x 2), site 6, tap 2: a short repeat */
    ks_page_record(&t, KS_EV_WRITE, 0, 6, 1, 2, 4, 6, 11, 0, 1, 0, 2, 0, 0, 0);
    const uint32_t want[] = {0x000304f1, 2,          7,          3, 0, 5, 0, 0x024450f2, 13, v, /* work, read */
                             0x00460224, 0x00098201, 13,         v,                             /* write */
                             0x008451e2, 6,          0x012cffff,                                /* outside */
                             0x008460d4, 11,         0};                                        /* repeat, end */
    ck_assert_uint_eq(buf[0], KS_PAGE_MAGIC << 16 | 1);
    for (unsigned k = 0; k < sizeof want / sizeof *want; ++k)
        ck_assert_msg(buf[KS_COL_HEAD + k] == want[k], "word %u: %08x, documented %08x", KS_COL_HEAD + k,
                      buf[KS_COL_HEAD + k], want[k]);
    unsigned long long trimmed;
    ks_status rc;
    ks_sink *host = decode(buf, counters[0], g_sink.capacity, ~0ull, &trimmed, &rc);
    ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    ck_assert_uint_eq(ks_sink_count(host), 5);
    const ks_event *e = host->events;
    ck_assert(e[0].kind == KS_EV_WORK && e[0].site == 3 && e[0].index == 7 && e[0].iter == 2 && e[0].tensor == 255);
    ck_assert(e[0].u.field[0] == 3 && e[0].u.field[1] == 0 && e[0].u.field[2] == 5 && e[0].u.field[7] == 0);
    for (int i = 1; i < 3; ++i) {
        ck_assert(e[i].tensor == 1 && e[i].tap == 9 && e[i].seq == (uint32_t)i && e[i].index == 7);
        ck_assert(e[i].u.access.offset == 13 && e[i].u.access.plane == 1 && e[i].u.access.y == 0);
        ck_assert(e[i].u.access.x == 4 && e[i].u.field[5] == (int32_t)v);
    }
    ck_assert(e[1].kind == KS_EV_READ && e[1].site == 5 && e[1].flags == 0);
    ck_assert(e[2].kind == KS_EV_WRITE && e[2].site == 70 && e[2].flags == KS_FLAG_ATOMIC);
    ck_assert(e[3].kind == KS_EV_READ && e[3].site == 5 && e[3].flags == KS_FLAG_PADDING && e[3].seq == 3);
    ck_assert(e[3].tensor == 1 && e[3].tap == 2 && e[3].u.access.offset == -1 && e[3].u.access.plane == 6);
    ck_assert(e[3].u.access.y == -1 && e[3].u.access.x == 300 && e[3].u.field[5] == 0 && e[3].u.field[6] == 0);
    ck_assert(e[4].kind == KS_EV_WRITE && e[4].site == 6 && e[4].tap == 2 && e[4].seq == 4 && e[4].flags == 0);
    ck_assert(e[4].u.access.offset == 11 && e[4].u.access.plane == 1 && e[4].u.access.y == 0);
    ck_assert(e[4].u.access.x == 2 && e[4].u.field[5] == 0);
    ks_host_sink_free(host);
    /* the record before the repeat a write, not a read: refused, not given a value */
    uint32_t *outside_w0 = &buf[KS_COL_HEAD + 14];
    *outside_w0 = (*outside_w0 & ~0xfu) | KS_EV_WRITE;
    host = decode(buf, counters[0], g_sink.capacity, ~0ull, &trimmed, &rc);
    ck_assert_int_eq(rc, KS_EFORMAT);
    ck_assert_msg(strstr(ks_error_message(), "no read before it"), "%s", ks_error_message());
    ks_host_sink_free(host);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("pages");
    TCase *tc = tcase_create("pages");
    tcase_add_test(tc, pages_give_back_every_event);
    tcase_add_test(tc, a_lost_column_drops_records_up_to_the_next_work_record);
    tcase_add_test(tc, a_repeat_after_a_dropped_read_is_dropped_with_its_item);
    tcase_add_test(tc, short_buffer_counts_drops_and_the_words_needed);
    tcase_add_test(tc, damaged_columns_are_refused_by_number);
    tcase_add_test(tc, pages_no_lane_reached_are_named_by_the_slots);
    tcase_add_test(tc, documented_words_of_the_five_forms);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
