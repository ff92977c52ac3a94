/* ks_pages.h - how the GPU records events: compact records in per-thread pages.
 *
 * A 64-byte event per probe, each claimed with its own atomicAdd, made every-event
 * tracing 40x the plain kernel on the H200: the threads waited on the atomic's round trip
 * before every store (Nsight Compute: 84 % of stalls on the L1TEX scoreboard) and wrote
 * 64 bytes where 32 carry the event. So on the GPU a thread claims a page of
 * KS_PAGE_WORDS 32-bit words at a time and writes its events into it in program order,
 * as compact records; the host (ks_pages_decode) turns the pages back into the same
 * 64-byte events (ks_event.h) the simulator writes. docs/trace-format.md gives the bytes.
 *
 * A page: 4 header words (block, thread, KS_PAGE_MAGIC, 0), then records, each a multiple
 * of 4 words (16-byte stores), then a 0 word where the records end (unless the page is
 * full). A record:
 *   w0  kind (bits 0-3) | payload words n (4-7) | flags (8-15) | site (16-31)
 *   w1  tensor (0-7) | seq & 0xff (8-15) | tap (16-31)
 *   a work record: w2 iter, w3-w4 the index (low, high)
 *   then the n payload words (ks_event's union words 0..n-1; the rest are 0), zero-padded
 *   to the 4-word boundary.
 * What a record leaves out comes back from the thread's order: its block and thread from
 * the page, its iter and index from the thread's last work record, its seq by counting
 * from that record (the low byte stored checks it).
 *
 * A thread's pages are claimed with atomicAdd on counters[0], in words, so the pages of
 * one thread lie in the order it wrote them. A claim past the buffer gives a page that
 * is not stored: its records are counted as dropped (counters[1]), and counters[0] keeps
 * counting the words the launch asked for, which is exactly what a buffer large enough
 * for it needs (kernels/run.c sizes its second launch from it).
 */
#ifndef KS_PAGES_H
#define KS_PAGES_H

#include <stdint.h>
#include <string.h>

#include "ks_core.h"

#define KS_PAGE_WORDS 64u         /* 256 bytes: an im2col item (19 events) takes 3 */
#define KS_PAGE_HEAD 4u           /* block, thread, magic, 0 */
#define KS_PAGE_MAGIC 0x5047534bu /* "KSGP" */
#define KS_PAGE_SLOT_WORDS 16u    /* the device buffer is sized in 64-byte event slots */

/* The words of a record with n payload words: 2 (+3 for a work record) + n, rounded up
 * to a multiple of 4. */
KS_FN_INLINE uint32_t ks_page_record_words(int kind, uint32_t n)
{
    return (2u + (kind == KS_EV_WORK ? 3u : 0u) + n + 3u) & ~3u;
}

#if defined(__CUDA_ARCH__)
#define KS_PAGE_CLAIM(counter, n) atomicAdd((counter), (unsigned long long)(n))
#define KS_PAGE_COUNT_DROP(counter) atomicAdd((counter), 1ull)
#else
/* the host's stand-in (tests/test_pages.c writes pages on the CPU): one writer at a time */
#define KS_PAGE_CLAIM(counter, n) ((*(counter) += (n)) - (n))
#define KS_PAGE_COUNT_DROP(counter) (++*(counter))
#endif

/* Four words to p, 16-byte aligned: one vector store on the GPU. */
KS_FN_INLINE void ks_page_put4(uint32_t *p, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
#if defined(__CUDA_ARCH__)
    *(uint4 *)p = make_uint4(a, b, c, d);
#else
    const uint32_t w[4] = {a, b, c, d};
    memcpy(p, w, sizeof w);
#endif
}

/* Opens the thread's next page (after the current one is full): claims KS_PAGE_WORDS
 * words and writes the header, or, past the buffer, leaves page_at NULL (records dropped
 * until the next page). Either way the page has room for KS_PAGE_WORDS - KS_PAGE_HEAD. */
KS_FN void ks_page_open(ks_thread *t, uint32_t block, uint32_t thread)
{
    ks_sink *s = t->sink;
    const unsigned long long at = KS_PAGE_CLAIM(&s->counters[0], KS_PAGE_WORDS);
    t->page_room = KS_PAGE_WORDS - KS_PAGE_HEAD;
    if (at + KS_PAGE_WORDS > s->capacity * KS_PAGE_SLOT_WORDS) {
        t->page_at = 0;
        return;
    }
    uint32_t *page = (uint32_t *)s->events + at;
    ks_page_put4(page, block, thread, KS_PAGE_MAGIC, 0);
    t->page_at = page + KS_PAGE_HEAD;
}

/* One record of the current item: the header words, and payload words p0..p(n-1)
 * (n <= 8; a constant at every probe, so the stores below are resolved at compile time). */
KS_FN_INLINE void ks_page_record(ks_thread *t, int kind, int flags, int site, int tensor, int tap, uint32_t seq,
                                 uint32_t n, uint32_t p0, uint32_t p1, uint32_t p2, uint32_t p3, uint32_t p4,
                                 uint32_t p5, uint32_t p6, uint32_t p7)
{
    const uint32_t words = ks_page_record_words(kind, n);
    if (t->page_room < words) ks_page_open(t, ks_block_linear(t), ks_thread_linear(t));
    uint32_t *p = t->page_at;
    t->page_room -= words;
    if (!p) {
        KS_PAGE_COUNT_DROP(&t->sink->counters[1]);
        return;
    }
    t->page_at = p + words;
    const uint32_t w0 = (uint32_t)(kind & 0xf) | n << 4 | (uint32_t)(flags & 0xff) << 8 |
                        (uint32_t)(site & 0xffff) << 16;
    const uint32_t w1 = (uint32_t)(tensor & 0xff) | (seq & 0xff) << 8 | (uint32_t)(tap & 0xffff) << 16;
    /* the payload words past n are 0 (the probes pass 0 there), so they pad the record */
    if (kind == KS_EV_WORK) {
        const uint64_t index = (uint64_t)t->work;
        ks_page_put4(p, w0, w1, t->iter, (uint32_t)index);
        ks_page_put4(p + 4, (uint32_t)(index >> 32), p0, p1, p2);
        ks_page_put4(p + 8, p3, p4, p5, p6);
        ks_page_put4(p + 12, p7, 0, 0, 0);
    } else {
        ks_page_put4(p, w0, w1, p0, p1);
        if (words > 4) ks_page_put4(p + 4, p2, p3, p4, p5);
        if (words > 8) ks_page_put4(p + 8, p6, p7, 0, 0);
    }
    if (t->page_room) p[words] = 0; /* where the records end, until the next one */
}

/* The host side (ks_pages.c, inside libkscope; not exported): the first `nwords` words of
 * a downloaded page buffer back into events appended to `host`, in page order. At most
 * `keep` events are stored (and no more than the host sink holds); the rest are added
 * to *trimmed. Returns KS_EFORMAT, with the page named, on a damaged page (a bad magic, a
 * record past its page, a kind or length out of range, a seq out of order). */
#ifdef __cplusplus
extern "C" {
#endif
ks_status ks_pages_decode(const uint32_t *words, unsigned long long nwords, ks_sink *host, unsigned long long keep,
                          unsigned long long *trimmed);
#ifdef __cplusplus
}
#endif

#endif /* KS_PAGES_H */
