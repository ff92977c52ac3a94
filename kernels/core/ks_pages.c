/* ks_pages.c - the GPU's record pages (ks_pages.h) back into 64-byte events.
 *
 * Pages are walked in buffer order. A thread's pages lie in the order it wrote them, so
 * a thread's state (its last work record's iter and index, the next seq) carries from
 * one of its pages to the next; threads are found by (block, thread) in a hash table
 * looked up once a page, not once a record.
 */
#include "ks_pages.h"

#include <stdlib.h>

#include "ks_error.h"

typedef struct thread_state {
    uint64_t key; /* block << 32 | thread, + 1 (0: an empty slot) */
    int64_t index;
    uint32_t iter, seq;
} thread_state;

typedef struct state_table {
    thread_state *slot;
    size_t mask;
} state_table;

/* The state of thread `key`, made as ks_thread_from_builtins starts it (index 0, iter 0,
 * seq 0) when first seen. The table holds at least one slot more than there are pages,
 * so it never fills. */
static thread_state *state_of(state_table *tb, uint64_t key)
{
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & tb->mask;
    while (tb->slot[h].key && tb->slot[h].key != key) h = (h + 1) & tb->mask;
    if (!tb->slot[h].key) tb->slot[h].key = key;
    return &tb->slot[h];
}

/* Appends e to the host sink unless `keep` events are there or the sink is at its limit. */
static int store(ks_sink *host, unsigned long long keep, const ks_event *e)
{
    if (host->counters[0] >= keep) return 0;
    if (host->counters[0] >= host->capacity && ks_host_sink_grow(host) != KS_OK) return 0;
    host->events[host->counters[0]++] = *e;
    return 1;
}

static ks_status damaged(unsigned long long page, const char *why)
{
    return ks_fail(KS_EFORMAT, "GPU trace: page %llu of the record buffer is damaged: %s", page, why);
}

ks_status ks_pages_decode(const uint32_t *w, unsigned long long nwords, ks_sink *host, unsigned long long keep,
                          unsigned long long *trimmed)
{
    const unsigned long long npages = nwords / KS_PAGE_WORDS;
    state_table tb = {NULL, 0};
    size_t slots = 16;
    while (slots <= npages) slots *= 2;
    tb.slot = (thread_state *)calloc(slots, sizeof *tb.slot);
    if (!tb.slot) return ks_fail(KS_ENOMEM, "GPU trace: no memory to decode %llu record pages", npages);
    tb.mask = slots - 1;
    ks_status rc = KS_OK;
    for (unsigned long long pg = 0; pg < npages && !rc; ++pg) {
        const uint32_t *p = w + pg * KS_PAGE_WORDS;
        if (p[2] != KS_PAGE_MAGIC || p[3] != 0) {
            rc = damaged(pg, "no page header");
            break;
        }
        const uint32_t block = p[0], thread = p[1];
        thread_state *st = state_of(&tb, ((uint64_t)block << 32 | thread) + 1);
        for (uint32_t q = KS_PAGE_HEAD; q < KS_PAGE_WORDS && p[q] != 0;) {
            const uint32_t w0 = p[q], w1 = p[q + 1];
            const int kind = (int)(w0 & 0xf);
            const uint32_t n = w0 >> 4 & 0xf;
            const uint32_t words = ks_page_record_words(kind, n);
            if (kind < 1 || kind >= KS_EV_KINDS || n > KS_WORK_FIELDS) {
                rc = damaged(pg, "a record of an unknown kind or length");
                break;
            }
            if (q + words > KS_PAGE_WORDS) {
                rc = damaged(pg, "a record runs past the page");
                break;
            }
            ks_event e;
            memset(&e, 0, sizeof e);
            e.kind = (uint8_t)kind;
            e.flags = (uint8_t)(w0 >> 8);
            e.site = (uint16_t)(w0 >> 16);
            e.tensor = (uint8_t)w1;
            e.tap = (uint16_t)(w1 >> 16);
            e.block = block;
            e.thread = thread;
            const uint32_t *pay = p + q + 2;
            if (kind == KS_EV_WORK) {
                st->iter = p[q + 2];
                st->index = (int64_t)((uint64_t)p[q + 3] | (uint64_t)p[q + 4] << 32);
                st->seq = 0;
                pay = p + q + 5;
            }
            if ((st->seq & 0xff) != (w1 >> 8 & 0xff)) {
                rc = damaged(pg, "a thread's records out of order");
                break;
            }
            e.iter = st->iter;
            e.index = st->index;
            e.seq = st->seq++;
            memcpy(e.u.field, pay, n * sizeof(uint32_t));
            if (!store(host, keep, &e)) ++*trimmed;
            q += words;
        }
    }
    free(tb.slot);
    return rc;
}
