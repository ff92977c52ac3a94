/* ks_pages.c - the GPU's record pages (ks_pages.h) back into 64-byte events.
 *
 * Pages are walked in buffer order, a page's columns by lane. A thread's columns lie in
 * the order it wrote them, so a thread's state (its last work record's iter and index,
 * the next seq) carries from one of its columns to the next; threads are found by
 * (block, thread) in a hash table looked up once a column, not once a record.
 */
#include "ks_pages_int.h"

#include <stdlib.h>

#include "ks_error.h"

typedef struct thread_state {
    uint64_t key; /* block << 32 | thread, + 1 (0: an empty slot) */
    int64_t index;
    uint32_t iter, seq;
    int lost;        /* records were dropped: the item is not known until the next work record */
    int value_known; /* the last record was a read (6 words) of this value: */
    uint32_t value;  /* a short repeat's (ks_pages.h) */
} thread_state;

typedef struct state_table {
    thread_state *slot;
    size_t mask;
} state_table;

/* The state of thread `key`, made as ks_thread_from_builtins starts it (index 0, iter 0,
 * seq 0) when first seen. */
static thread_state *state_of(state_table *tb, uint64_t key)
{
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & tb->mask;
    while (tb->slot[h].key && tb->slot[h].key != key) h = (h + 1) & tb->mask;
    if (!tb->slot[h].key) tb->slot[h].key = key;
    return &tb->slot[h];
}

/* Appends e to the host sink unless it is at its limit. */
static int store(ks_sink *host, const ks_event *e)
{
    if (host->counters[0] >= host->capacity && ks_host_sink_grow(host) != KS_OK) return 0;
    host->events[host->counters[0]++] = *e;
    return 1;
}

static ks_status damaged(unsigned long long page, uint32_t column, const char *why)
{
    return ks_fail(KS_EFORMAT, "GPU trace: the record page at word %llu (column %u) is damaged: %s", page, column, why);
}

/* One column (c: its word 0; word k at c[n * k]) into events. */
static ks_status column(const uint32_t *c, uint32_t n, unsigned long long pg, uint32_t lane, const ks_sink *dev,
                        state_table *tb, ks_sink *host, unsigned long long *trimmed)
{
    const uint32_t block = c[n], thread = c[2 * n] & ~KS_PAGE_THREAD_GAP, gap = c[2 * n] & KS_PAGE_THREAD_GAP;
    if (c[n * KS_COL_HEAD] == 0 && !gap) return KS_OK; /* no records: a page claimed ahead that no lane reached */
    thread_state *st = state_of(tb, ((uint64_t)block << 32 | thread) + 1);
    if (gap) st->lost = 1; /* records before this column were dropped */
    for (uint32_t k = KS_COL_HEAD; k < KS_COL_WORDS && c[n * k] != 0;) {
        const uint32_t w0 = c[n * k];
        const int kind = (int)(w0 & 0xf);
        const int outside = (w0 >> 4 & 0xf) == KS_W0_OUTSIDE, repeat = (w0 >> 4 & 0xf) == KS_W0_REPEAT;
        const int is_short = (w0 >> 4 & 0xf) == KS_W0_SHORT || outside || repeat;
        const int short_access = is_short && (kind == KS_EV_READ || kind == KS_EV_WRITE);
        const int short_work = is_short && kind == KS_EV_WORK;
        if (is_short && !short_access && !short_work)
            return damaged(pg, lane, "a short record that is not a read, a write or a work record");
        if ((outside && !short_access) || (repeat && kind != KS_EV_WRITE))
            return damaged(pg, lane, "an outside record that is not a read or a write, or a repeat not a write");
        /* payload words: a short access has the offset and the value, a short work record
         * says how many fields in bits 8-11 */
        const uint32_t m = repeat ? 1u : short_access ? 2u : short_work ? w0 >> 8 & 0xf : w0 >> 4 & 0xf;
        const uint32_t head = short_access ? 1u : short_work ? 3u : 2u;
        const uint32_t words = short_access || short_work ? head + m : ks_page_record_words(kind, m);
        if (k + words > KS_COL_WORDS) return damaged(pg, lane, "a record runs past its column");
        /* a short record has no word 1: its tensor, tap and the derived bit are implied */
        const uint32_t w1 = short_access ? (w0 >> 18 & 0xf) | (outside ? 0u : KS_W1_DERIVED) | (w0 >> 22) << 16
                            : short_work ? (uint32_t)KS_PAGE_NO_TENSOR
                                         : c[n * (k + 1)];
        const int derived = (w1 & KS_W1_DERIVED) != 0;
        if (kind < 1 || kind >= KS_EV_KINDS || m > KS_WORK_FIELDS || (derived && !repeat && m != 2 && m != 3))
            return damaged(pg, lane, "a record of an unknown kind or length");
        /* a read of 6 words (a short access, a derived long one, or 6 words long): a write
         * right after it may repeat its value, the last payload word (0 outside) */
        const int read6 = kind == KS_EV_READ && (short_access || derived || m == 6);
        const uint32_t last_value = st->value;
        /* (after dropped records the read a repeat follows may be one the host never saw:
         * the repeat goes with the rest of its item, below) */
        if (repeat && !st->value_known && !st->lost)
            return damaged(pg, lane, "a repeated value with no read before it");
        st->value_known = read6;
        st->value = read6 && !outside ? c[n * (k + head + m - 1)] : 0;
        if (st->lost && kind != KS_EV_WORK) { /* of an item whose work record was dropped */
            ++*trimmed;
            k += words;
            continue;
        }
        st->lost = 0;
        ks_event e;
        memset(&e, 0, sizeof e);
        e.kind = (uint8_t)kind;
        e.flags = (uint8_t)(short_access ? w0 >> 8 & 0xf : short_work ? 0 : w0 >> 8);
        e.site = (uint16_t)(short_access ? w0 >> 12 & 0x3f : w0 >> 16);
        e.tensor = (uint8_t)w1;
        e.tap = (uint16_t)(w1 >> 16);
        e.block = block;
        e.thread = thread;
        uint32_t at = k + head;
        if (short_work) {
            st->iter = c[n * (k + 1)];
            st->index = (int64_t)c[n * (k + 2)];
            st->seq = 0;
        } else if (kind == KS_EV_WORK) {
            st->iter = c[n * at];
            st->index = (int64_t)((uint64_t)c[n * (at + 1)] | (uint64_t)c[n * (at + 2)] << 32);
            st->seq = 0;
            at += 3;
        }
        if (head == 2 && (st->seq & 0x7f) != (w1 >> 8 & 0x7f))
            return damaged(pg, lane, "a thread's records out of order");
        e.iter = st->iter;
        e.index = st->index;
        e.seq = st->seq++;
        for (uint32_t i = 0; i < m; ++i) e.u.field[i] = (int32_t)c[n * (at + i)];
        if (outside) { /* offset -1 and value 0 implied; the plane, then y and x in 16 bits each */
            const uint32_t yx = (uint32_t)e.u.field[1];
            e.u.access.offset = -1;
            e.u.access.plane = (int32_t)c[n * at];
            e.u.access.y = (int16_t)(yx & 0xffff);
            e.u.access.x = (int16_t)(yx >> 16);
            e.u.field[5] = 0;
        } else if (derived) { /* offset and value stored; (plane, y, x) from the dims */
            if (e.tensor >= KS_SINK_DIMS || dev->dim_rows[e.tensor] <= 0 || dev->dim_cols[e.tensor] <= 0)
                return damaged(pg, lane, "a derived access without its tensor's dims");
            const int64_t rows = dev->dim_rows[e.tensor], cols = dev->dim_cols[e.tensor];
            const int64_t off = m == 3 ? e.u.access.offset : (int64_t)(uint32_t)e.u.field[0];
            if (off < 0) return damaged(pg, lane, "a derived access at a negative offset");
            /* the value's bits, stored after the offset, or the record before's (a repeat) */
            e.u.field[5] = repeat ? (int32_t)last_value : e.u.field[m - 1];
            if (m == 2) e.u.field[1] = 0;
            e.u.access.plane = (int32_t)(off / cols / rows);
            e.u.access.y = (int32_t)(off / cols % rows);
            e.u.access.x = (int32_t)(off % cols);
        }
        if (!store(host, &e)) ++*trimmed;
        k += words;
    }
    return KS_OK;
}

/* Column c of the n-column page at word `pos` has its header: a lane took it. */
static int column_ok(const uint32_t *w, unsigned long long pos, uint32_t n, uint32_t c, uint32_t epoch)
{
    return w[pos + c] == w[pos] && w[pos + 3 * n + c] == ks_page_tag(epoch, pos, c);
}

/* The page at word `pos` starts with an intact header: column 0 (the lane that claimed
 * a page takes its column 0; of its other columns, those no lane took have none). */
static int page_ok(const uint32_t *w, unsigned long long pos, unsigned long long stored, uint32_t epoch, uint32_t *n)
{
    *n = w[pos] & 0xffff;
    if (w[pos] >> 16 != KS_PAGE_MAGIC || *n < 1 || *n > 32 || pos + (unsigned long long)*n * KS_COL_WORDS > stored)
        return 0;
    return column_ok(w, pos, *n, 0, epoch);
}

static int cmp_u64(const void *a, const void *b)
{
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

size_t ks_pages_unreached(const unsigned long long *slots, unsigned long long *out)
{
    size_t n = 0;
    for (uint32_t i = 0; i < KS_PAGE_WARP_SLOTS; ++i) {
        const unsigned long long *slot = slots + (size_t)i * KS_PAGE_WARP_WORDS, drawn = slot[0];
        if (!drawn) continue;
        /* the last group drawn, q, claimed group q + 1's page (word 1 + (q + 1) % 4) */
        const unsigned long long ahead = (drawn - 1) / 32 + 1, e = slot[1 + ahead % 4];
        if ((uint32_t)(e >> 32) != (uint32_t)ahead || (uint32_t)e == 0) continue; /* not named: none */
        out[n++] = ((e & 0xffffffffull) - 1) * KS_PAGE_MAX_WORDS;
    }
    qsort(out, n, sizeof *out, cmp_u64);
    return n;
}

ks_status ks_pages_decode(const uint32_t *w, unsigned long long claimed, const ks_sink *dev,
                          const unsigned long long *unreached, size_t nunreached, ks_sink *host,
                          unsigned long long *trimmed)
{
    const unsigned long long cap = dev->capacity * KS_PAGE_SLOT_WORDS, stored = claimed < cap ? claimed : cap;
    state_table tb = {NULL, 0};
    size_t slots = 64;
    while (slots <= stored / KS_COL_WORDS) slots *= 2; /* more slots than columns: never full */
    tb.slot = (thread_state *)calloc(slots, sizeof *tb.slot);
    if (!tb.slot) return ks_fail(KS_ENOMEM, "GPU trace: no memory to decode %llu words of records", stored);
    tb.mask = slots - 1;
    ks_status rc = KS_OK;
    unsigned long long pos = 0;
    while (!rc && pos + KS_COL_WORDS <= stored) {
        uint32_t n;
        while (nunreached && *unreached < pos) ++unreached, --nunreached;
        if (nunreached && *unreached == pos) { /* claimed ahead, reached by no lane: no header */
            if (page_ok(w, pos, stored, dev->epoch, &n)) {
                rc = damaged(pos, 0, "a page the slots say no lane reached has a header");
                break;
            }
            pos += KS_PAGE_MAX_WORDS;
            continue;
        }
        if (!page_ok(w, pos, stored, dev->epoch, &n)) {
            /* only the page claimed across the buffer's end was not stored */
            if (claimed > cap && cap - pos < KS_PAGE_MAX_WORDS) break;
            rc = damaged(pos, 0, "no page header where a page was stored");
            break;
        }
        for (uint32_t c = 0; c < n && !rc; ++c)
            if (column_ok(w, pos, n, c, dev->epoch)) rc = column(w + pos + c, n, pos, c, dev, &tb, host, trimmed);
        pos += (unsigned long long)n * KS_COL_WORDS;
    }
    if (!rc && pos < stored && claimed <= cap) rc = damaged(pos, 0, "the pages end before the claimed words");
    free(tb.slot);
    return rc;
}
