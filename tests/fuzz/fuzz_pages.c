/* libFuzzer: the GPU's record pages (kernels/core/ks_pages.h) round trip. The input is a
 * program of records for four threads; each is written with the probes' page writer
 * (ks_page_record, the host's one-column pages) and kept beside it as the event it means.
 * The pages decoded (ks_pages_decode) must be exactly those events: every record form
 * (long, short access, outside, repeat, short and long work), a claim that finds no
 * column inside a record (the thread's records are then dropped up to its next work
 * record, and counted), a host sink that keeps only some. Then one fuzzed word of the
 * pages is changed and they are decoded again: a status, never a crash.
 *
 * Input: byte 0 the host sink's limit (0: none) and the word to change; then records,
 * each an opcode byte (bits 0-2 what, 3-4 which thread, 5-7 a small number) and the
 * bytes its words take. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/core/ks_pages_int.h"
#include "../../kernels/core/ks_probe.h"

enum { THREADS = 4, SLOTS = 4096, MAX_EVENTS = 8192 };

typedef struct fz_thread {
    ks_thread t;
    int lost;       /* a record was dropped: the host drops the rest of its item */
    int started;    /* a work record written: the item's fields are known */
    uint32_t value; /* its last read's value */
} fz_thread;

static uint32_t g_buf[SLOTS * KS_PAGE_SLOT_WORDS];
static unsigned long long g_counters[2];
static ks_sink g_sink;
static fz_thread g_th[THREADS];
static ks_event g_want[MAX_EVENTS];
static size_t g_nwant;
static unsigned long long g_drops; /* records stored after a dropped one, before a work record */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint32_t take(reader *r, int bytes)
{
    uint32_t v = 0;
    for (int i = 0; i < bytes; ++i) {
        v = v << 8 | (r->n ? *r->p : 0);
        if (r->n) ++r->p, --r->n;
    }
    return v;
}

static int by_thread_seq(const void *pa, const void *pb)
{
    const ks_event *a = pa, *b = pb;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* One record of thread th: written to the pages and, unless the host will not see it,
 * kept as the event it means. */
static void record(fz_thread *th, int kind, int flags, int site, int tensor, int tap, uint32_t n, const uint32_t p[8],
                   int fail_claim)
{
    ks_thread *t = &th->t;
    ks_event e;
    memset(&e, 0, sizeof e);
    e.kind = (uint8_t)kind;
    e.flags = (uint8_t)flags;
    e.site = (uint16_t)site;
    e.tensor = (uint8_t)tensor;
    e.tap = (uint16_t)tap;
    e.block = ks_block_linear(t);
    e.thread = ks_thread_linear(t);
    e.iter = t->iter;
    e.index = t->work;
    e.seq = t->seq;
    memcpy(e.u.field, p, 8 * sizeof *p);
    const uint32_t seq = t->seq++;
    const unsigned long long dropped = g_counters[1], asked = g_counters[0];
    if (fail_claim && t->page_word != KS_PAGE_NONE) { /* its column ends; the claim finds none */
        ks_page_close(t);
        t->page_room &= ~0xffffu;
        g_sink.capacity = 0;
    }
    ks_page_record(t, kind, flags, site, tensor, tap, seq, n, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    if (g_sink.capacity == 0) { /* the buffer was not full: no hole where the claim's words were counted */
        g_sink.capacity = SLOTS;
        g_counters[0] = asked;
    }
    if (g_counters[1] != dropped) th->lost = 1;
    else if (th->lost && kind != KS_EV_WORK) ++g_drops;
    else if (g_nwant < MAX_EVENTS) {
        th->lost = 0;
        g_want[g_nwant++] = e;
    }
}

/* (plane, y, x) in bounds of tensor `tensor` (dims set below) and its offset */
static void place(int tensor, uint32_t plane, uint32_t y, uint32_t x, uint32_t p[8])
{
    const uint64_t rows = (uint64_t)g_sink.dim_rows[tensor], cols = (uint64_t)g_sink.dim_cols[tensor];
    y %= rows, x %= cols;
    const uint64_t off = ((uint64_t)plane * rows + y) * cols + x;
    p[0] = (uint32_t)off, p[1] = (uint32_t)(off >> 32), p[2] = plane, p[3] = y, p[4] = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096) return 0;
    reader r = {data + 2, size - 2};
    const unsigned long long keep = data[0] & 0x80 ? (unsigned long long)(data[0] & 0x7f) : 0;
    memset(g_buf, 0xa5, sizeof g_buf);
    memset(g_counters, 0, sizeof g_counters);
    memset(&g_sink, 0, sizeof g_sink);
    g_sink.events = (ks_event *)g_buf;
    g_sink.counters = g_counters;
    g_sink.capacity = SLOTS;
    g_sink.epoch = 0x9e3779b9u * (uint32_t)size;
    static const int32_t rows[4] = {7, 1, 3, 6}, cols[4] = {5, 9, 1, 6};
    for (int i = 0; i < 4; ++i) g_sink.dim_rows[i] = rows[i], g_sink.dim_cols[i] = cols[i];
    memset(g_th, 0, sizeof g_th);
    for (int i = 0; i < THREADS; ++i) {
        ks_thread *t = &g_th[i].t;
        t->grid_dim = (ks_dim3){3, 1, 1};
        t->block_dim = (ks_dim3){2, 1, 1};
        t->block_idx = (ks_dim3){(uint32_t)i / 2, 0, 0};
        t->thread_idx = (ks_dim3){(uint32_t)i % 2, 0, 0};
        t->sink = &g_sink;
        t->page_word = KS_PAGE_NONE;
        if (i % 2) t->page_room = KS_PAGE_LAZY_END; /* as KernelScope's own kernels end columns */
    }
    g_nwant = 0, g_drops = 0;
    int64_t next_index = 0;
    while (r.n) {
        const uint32_t op = take(&r, 1), what = op & 7, small = op >> 5;
        fz_thread *th = &g_th[op >> 3 & 3];
        ks_thread *t = &th->t;
        uint32_t p[8] = {0};
        const int fail = small == 7;     /* 1 in 8: the record's claim finds no column */
        if (what == 0 || !th->started) { /* a work record: fields, zeros among them; now and then past 2^32 */
            t->work = small & 1 ? next_index + ((int64_t)1 << 32) : next_index;
            next_index += 1 + small;
            t->iter = take(&r, 2);
            t->seq = 0;
            const uint32_t nf = take(&r, 1) % 9;
            for (uint32_t k = 0; k < nf; ++k) p[k] = take(&r, 1) & 1 ? take(&r, 4) : 0;
            const int flags = small == 6 ? 1 : 0; /* flags: the long form */
            th->started = 1;
            record(th, KS_EV_WORK, flags, (int)take(&r, 1), KS_NO_TENSOR, 0, 8, p, what == 0 && fail);
            if (what == 0) continue;
            memset(p, 0, sizeof p);
        }
        const int tensor = (int)(small & 3), tap = (int)take(&r, 1) << (small & 4 ? 4 : 0);
        const int site = (int)take(&r, 1) << (small == 5 ? 4 : 0), kind = what & 1 ? KS_EV_READ : KS_EV_WRITE;
        switch (what) {
        case 1: /* a read in bounds (derived), its value new */
        case 2: /* a write in bounds: of the value just read (a repeat) or another */
            place(tensor, take(&r, small == 4 ? 4 : 1), take(&r, 1), take(&r, 1), p);
            p[5] = what == 2 && !(small & 2) ? th->value : take(&r, 4);
            break;
        case 3: /* padding: offset -1, mostly value 0 and y, x in 16 bits */
            p[0] = p[1] = 0xffffffffu, p[2] = take(&r, 2);
            p[3] = (uint32_t)(int32_t)(int16_t)take(&r, 2), p[4] = (uint32_t)(int32_t)(int16_t)take(&r, 2);
            if (small & 4) p[3] += 0x10000u; /* y past 16 bits: long */
            p[5] = small & 2 ? take(&r, 4) : 0;
            break;
        case 4: /* an access whose place does not follow from its offset: long */
        case 5:
            for (int k = 0; k < 6; ++k) p[k] = take(&r, 4);
            break;
        default: /* a shared access (8 words), a sample, a region or a barrier */
            for (int k = 0; k < 8; ++k) p[k] = take(&r, 2);
        }
        if (what <= 5) {
            const int flags = what == 3 ? KS_FLAG_PADDING : (small == 6 ? 0x20 : 0);
            record(th, kind, flags, site, tensor, tap, 6, p, fail);
            th->value = p[5];
        } else {
            static const int others[] = {KS_EV_READ, KS_EV_SAMPLE, KS_EV_REGION, KS_EV_BARRIER};
            const int k = others[small & 3];
            if (k == KS_EV_BARRIER) memset(p + 2, 0, 6 * sizeof *p); /* its probe fills 2 words */
            record(th, k, 0, site, tensor, tap, k == KS_EV_BARRIER ? 2 : 8, p, fail);
        }
    }
    for (int i = 0; i < THREADS; ++i) ks_page_close(&g_th[i].t);
    if (g_nwant == MAX_EVENTS) return 0; /* more than this keeps: the count would not match */
    ks_sink *host = ks_host_sink_create(keep, ks_filter_all());
    if (!host) abort();
    unsigned long long trimmed = 0;
    if (ks_pages_decode(g_buf, g_counters[0], &g_sink, NULL, 0, host, &trimmed) != KS_OK) abort();
    const unsigned long long n = ks_sink_count(host);
    if (keep ? n != (g_nwant < keep ? g_nwant : keep) : n != g_nwant) abort();
    if (trimmed != g_drops + (g_nwant - n)) abort();
    if (!keep) {
        qsort(g_want, g_nwant, sizeof *g_want, by_thread_seq);
        qsort(host->events, n, sizeof *host->events, by_thread_seq);
        for (size_t i = 0; i < g_nwant; ++i)
            if (memcmp(&g_want[i], &host->events[i], sizeof(ks_event))) abort();
    }
    ks_host_sink_free(host);
    /* one word changed: a status, never a crash */
    if (g_counters[0]) {
        const size_t at = (size_t)(data[1] * 2654435761u % g_counters[0]);
        g_buf[at] ^= 1u << (data[0] & 31);
        host = ks_host_sink_create(0, ks_filter_all());
        if (!host) abort();
        trimmed = 0;
        (void)ks_pages_decode(g_buf, g_counters[0], &g_sink, NULL, 0, host, &trimmed);
        ks_host_sink_free(host);
    }
    return 0;
}
