/* ks_pages.h - how the GPU records events: compact records, a column per thread in
 * pages the lanes of a warp claim together.
 *
 * A 64-byte event per probe, each claimed with its own atomicAdd on one counter, made
 * every-event tracing 42x the plain im2col on the H200: 3.8 M same-address atomics (one
 * a warp and event) and 244 MB of events. A page per thread cut the atomics but made the
 * stores scattered (81x). So the lanes of a warp share pages of 32 columns, a column each
 * as they run short of room (ks_page_claim: one atomicAdd a column on the warp's slot, one
 * a page on the buffer's cursor); each writes its records in program order down its
 * column, and the page's columns are interleaved (word k of column c at k * columns + c):
 * lanes storing the same record word together write contiguous bytes; a column no lane
 * took has no header (the host skips it). The host (ks_pages_decode) turns the columns
 * back into the 64-byte events (ks_event.h) the simulator writes; docs/trace-format.md
 * gives the words.
 *
 * A page of n columns is n * KS_COL_WORDS words. A column: 4 header words (KS_PAGE_MAGIC
 * << 16 | n, block, thread, ks_page_tag), then records, then a 0 word where they end
 * (unless the column is full). A record:
 *   w0  kind (bits 0-3) | payload words m (4-7) | flags (8-15) | site (16-31)
 *   w1  tensor (0-7) | seq & 0x7f (8-14) | derived (15) | tap (16-31)
 *   a work record: w2 iter, w3-w4 the index (low, high)
 *   then the m payload words (ks_event's union words 0..m-1; the rest are 0). A read or
 *   write whose (plane, y, x) follow from its offset and the sink's dims for its tensor
 *   is `derived`: its payload is the offset and the value only (m = 2: the offset's low
 *   word, it is below 2^32; m = 3: both words).
 * What a record leaves out comes back from the thread's order: its block and thread from
 * the column, its iter and index from the thread's last work record, its seq by counting
 * from there (the low bits stored check it).
 *
 * Pages are claimed with atomicAdd on counters[0], in words, back to back from word 0, so
 * the buffer reads as a walk of pages and a thread's columns lie in the order it wrote
 * them (a later column is in a later page, or later in the same page). A page that does
 * not fit the buffer is not stored: its records are counted as dropped (counters[1]), and
 * counters[0] keeps counting the words the launch asked for (kernels/run.c sizes its
 * second launch from it).
 */
#ifndef KS_PAGES_H
#define KS_PAGES_H

#include <stdint.h>
#include <string.h>

#include "ks_core.h"

#ifndef KS_COL_WORDS
#define KS_COL_WORDS 128u /* a lane's column: 512 bytes (-DKS_COL_WORDS=N to compare, host and GPU alike) */
#endif
/* a column holds its header and the longest record (a long work record: 13 words), and
 * its room fits page_room's 16 bits */
#ifdef __cplusplus
static_assert(KS_COL_WORDS >= 17 && KS_COL_WORDS - 4 <= 0xffff, "KS_COL_WORDS");
#else
_Static_assert(KS_COL_WORDS >= 17 && KS_COL_WORDS - 4 <= 0xffff, "KS_COL_WORDS");
#endif
#define KS_COL_HEAD 4u        /* magic | columns, block, thread, tag */
#define KS_PAGE_MAGIC 0x4b53u /* "KS" */
#define KS_PAGE_MAX_WORDS (32u * KS_COL_WORDS)
/* counters[2..]: the warps' slots, each a column count and four page words (ks_page_claim) */
#define KS_PAGE_WARP_SLOTS 2048u
#define KS_PAGE_WARP_WORDS 5u
#define KS_PAGE_CONTROL_WORDS (2u + KS_PAGE_WARP_SLOTS * KS_PAGE_WARP_WORDS)
#define KS_PAGE_SLOT_WORDS 16u /* buffers are sized in 64-byte slots */
#define KS_W1_DERIVED 0x8000u
#define KS_W0_SHORT 15u          /* w0's payload-length nibble of a short record */
#define KS_W0_OUTSIDE 14u        /* and of a short access outside its tensor (padding), */
#define KS_W0_REPEAT 13u         /* of a write of the value the read just before it read */
#define KS_WORK_MIN_FIELDS 4u    /* a short work record's fields: at least this many */
#define KS_SHORT_FLAGS 16u       /* what fits a short access: flags, */
#define KS_SHORT_SITES 64u       /* site, */
#define KS_SHORT_TENSORS 16u     /* tensor */
#define KS_SHORT_TAPS 1024u      /* and tap */
#define KS_PAGE_NO_TENSOR 255    /* a work record's tensor (KS_NO_TENSOR of ks_probe.h) */
#define KS_PAGE_NONE 0xffffffffu /* page_word of a thread without a stored column */
/* page_room: the words left in the column (bits 0-15), the page's columns (16-23), and
 * KS_PAGE_LAZY_END: the thread ends its column when it leaves it (a new column, or
 * ks_page_close when the thread is done: KernelScope's own traced kernels), not after
 * every record (a probe in any other kernel, which has no such end) */
#define KS_PAGE_LAZY_END 0x80000000u
/* KS_PAGE_GAP: the thread's last claim found no column, so records were dropped; its next
 * column's thread word carries KS_PAGE_THREAD_GAP */
#define KS_PAGE_GAP 0x40000000u
/* KS_PAGE_VALUE_KNOWN: the thread's last record of its item was a read (6 words), whose
 * value page_value holds (a write that repeats it leaves it out) */
#define KS_PAGE_VALUE_KNOWN 0x20000000u
#define KS_PAGE_THREAD_GAP 0x80000000u
/* a buffer's words are numbered in 32 bits: at most 2^32 - 1 of them (16 GB) */
#define KS_PAGE_MAX_SLOTS ((1ull << 32) / KS_PAGE_SLOT_WORDS - KS_PAGE_MAX_WORDS)

/* The words of a record with n payload words. */
KS_FN_INLINE uint32_t ks_page_record_words(int kind, uint32_t n) { return 2u + (kind == KS_EV_WORK ? 3u : 0u) + n; }

/* A column's last header word: which launch, page and column wrote it. */
KS_FN_INLINE uint32_t ks_page_tag(uint32_t epoch, unsigned long long page_word, uint32_t column)
{
    return epoch ^ (uint32_t)page_word ^ (uint32_t)(page_word >> 32) ^ (column + 1u) * 0x9e3779b9u;
}

/* (plane, y, x) of an in-bounds offset (off_hi << 32 | off_lo) of a tensor of planes of
 * rows x cols. Unsigned 32-bit fields and a product taken mod 2^64: a plane, y or x below
 * 0 reads as 2^31 or more and fails its bound, and the GPU compares with one 32 x 32 ->
 * 64 multiply-add a step instead of sign-extended 64-bit products. */
KS_FN_INLINE int ks_page_derivable(const ks_sink *s, int tensor, uint32_t off_lo, uint32_t off_hi, uint32_t plane,
                                   uint32_t y, uint32_t x)
{
    if ((uint32_t)tensor >= KS_SINK_DIMS || (off_hi | plane) >> 31) return 0;
    const uint32_t rows = (uint32_t)s->dim_rows[tensor], cols = (uint32_t)s->dim_cols[tensor];
    if ((rows | cols) >> 31 || y >= rows || x >= cols) return 0; /* a dimension 0 or below: none */
    return ((uint64_t)plane * rows + y) * cols + x == ((uint64_t)off_hi << 32 | off_lo);
}

/* The header of column `column` of the `columns` of the page at word `page_word`, for
 * thread (block, thread); returns the thread's next word in it, or KS_PAGE_NONE when the
 * page does not fit the buffer (records dropped until the next). */
KS_FN_INLINE uint32_t ks_page_column_at(ks_sink *s, unsigned long long page_word, uint32_t columns, uint32_t column,
                                        uint32_t block, uint32_t thread)
{
    if (page_word + (unsigned long long)columns * KS_COL_WORDS > s->capacity * KS_PAGE_SLOT_WORDS) return KS_PAGE_NONE;
    uint32_t *col = (uint32_t *)s->events + page_word + column;
    col[0] = KS_PAGE_MAGIC << 16 | columns;
    col[columns] = block;
    col[2 * columns] = thread;
    col[3 * columns] = ks_page_tag(s->epoch, page_word, column);
    col[KS_COL_HEAD * columns] = 0; /* no records yet: a column left empty reads as ended */
    return (uint32_t)page_word + column + KS_COL_HEAD * columns;
}

/* The 0 word after a lazily ended column's last record, when the column has room left. */
KS_FN_INLINE void ks_page_close(ks_thread *t)
{
    if ((t->page_room & KS_PAGE_LAZY_END) && (t->page_room & 0xffffu) && t->page_word != KS_PAGE_NONE)
        ((uint32_t *)t->sink->events)[t->page_word] = 0;
}

/* Column `column` of the `columns` of the page at word `page_word` becomes this thread's. */
KS_FN_INLINE void ks_page_column(ks_thread *t, unsigned long long page_word, uint32_t columns, uint32_t column)
{
    ks_page_close(t);
    const uint32_t gap = t->page_room & KS_PAGE_GAP ? KS_PAGE_THREAD_GAP : 0u;
    t->page_room = (KS_COL_WORDS - KS_COL_HEAD) | columns << 16 | (t->page_room & KS_PAGE_LAZY_END);
    t->page_word = ks_page_column_at(t->sink, page_word, columns, column, ks_block_linear(t),
                                     ks_thread_linear(t) | gap);
    if (t->page_word == KS_PAGE_NONE) t->page_room |= KS_PAGE_GAP;
}

#if defined(__CUDA_ARCH__)
/* This lane's next column on the GPU. A warp's lanes draw columns from a slot of the
 * sink's control words (counters + 2 + KS_PAGE_WARP_WORDS * (key % KS_PAGE_WARP_SLOTS)):
 * word 0 counts the columns drawn; draw d is column d % 32 of the slot's page q = d / 32.
 * Words 1-4 hold the pages of groups q = 0..3 mod 4 as q << 32 | page number + 1. The
 * lane that draws a group's column 0 claims the next group's page (atomicAdd on
 * counters[0]; draw 0 claims pages 0 and 1) once its own group's is named, so a slot's
 * pages lie in the order of their groups and a lane usually finds its page named: one
 * atomicAdd a column, the four page words read while it is in flight. A lane whose page
 * is not named yet waits for the lane that names it, which has drawn before it (so the
 * waits end at draw 0; independent thread scheduling runs the lane waited for). A page
 * word overwritten before it was read (four groups later: the lane's warp ran on to a
 * barrier while it slept) leaves the lane without a column: its records are counted as
 * dropped, and its next column is marked so that the host drops what follows up to its
 * next work record. Returns the next word (KS_PAGE_NONE: none) and, above bit 32, the
 * room.
 *
 * Every word of a page is written by the lane whose column it is, so no lane orders its
 * stores after another's (no fence). The page a slot's last group claimed ahead is
 * reached by no lane and has no header at all: the host finds those pages from the slot
 * words (ks_pages_unreached) and steps over them. Writing a placeholder header into them
 * instead, ordered by two fences a page, cost every-event im2col 19.4x plain against
 * 16.5x without (H200, 2026-11-29).
 *
 * No lane depends on which lanes came with it: a claim in which the active lanes
 * (__activemask) elected a leader and shared one page by __shfl_sync hung the H200
 * (test_gpu_deform, deform grad_gather traced: a lane that came late to the record before
 * a barrier waited in the shuffle for lanes already at the barrier). Warps that share a
 * slot share its pages; each thread's columns still come in the order it drew them. */
__device__ static __forceinline__ unsigned long long ks_page_claim(ks_sink *s, uint32_t key, uint32_t block,
                                                                   uint32_t thread)
{
    unsigned long long *slot = s->counters + 2 + KS_PAGE_WARP_WORDS * (key & (KS_PAGE_WARP_SLOTS - 1u));
    volatile unsigned long long *named = slot + 1;
    const unsigned long long room = (unsigned long long)((KS_COL_WORDS - KS_COL_HEAD) | 32u << 16) << 32;
    const unsigned long long n0 = named[0], n1 = named[1], n2 = named[2], n3 = named[3];
    const unsigned long long d = atomicAdd(slot, 1ull);
    const uint32_t q = (uint32_t)(d / 32u), column = (uint32_t)(d % 32u);
    unsigned long long e = q & 2u ? (q & 1u ? n3 : n2) : (q & 1u ? n1 : n0), next = 0;
    int gone = 0;
    if (d == 0) { /* the slot's first draw: the pages of groups 0 and 1 */
        const unsigned long long first = atomicAdd(&s->counters[0], 2ull * KS_PAGE_MAX_WORDS) / KS_PAGE_MAX_WORDS;
        e = first + 1u; /* group 0: its page number + 1 */
        next = first + 1u;
        atomicExch(slot + 1, e);
    } else {
        while ((uint32_t)(e >> 32) != q || (uint32_t)e == 0u) {
            if ((uint32_t)(e >> 32) > q) { /* named again: this page is gone */
                gone = 1;
                break;
            }
            __nanosleep(32);
            e = named[q & 3u];
        }
        /* the next group's page is claimed after this group's is named, so a slot's pages
         * lie in the order of their groups (a thread's columns in the order it drew them) */
        if (column == 0) next = atomicAdd(&s->counters[0], (unsigned long long)KS_PAGE_MAX_WORDS) / KS_PAGE_MAX_WORDS;
    }
    if (column == 0) atomicExch(slot + 1 + ((q + 1u) & 3u), (unsigned long long)(q + 1u) << 32 | (next + 1u));
    if (gone) return room | KS_PAGE_NONE;
    return room | ks_page_column_at(s, ((e & 0xffffffffull) - 1u) * KS_PAGE_MAX_WORDS, 32u, column, block, thread);
}
#endif

/* Room for `words` more words in this thread's column: on the GPU the next column of its
 * warp's page (ks_page_claim); on the host a thread claims a page of one column. */
KS_FN_INLINE void ks_page_room(ks_thread *t, uint32_t words)
{
    if ((t->page_room & 0xffffu) >= words) return;
#if defined(__CUDA_ARCH__)
    const uint32_t thread = ks_thread_linear(t), block = ks_block_linear(t);
    const uint32_t warps = (t->block_dim.x * t->block_dim.y * t->block_dim.z + 31u) / 32u;
    /* a column after records that found none says so in its thread word (the host drops
     * the thread's records up to its next work record: their item is not known) */
    const uint32_t gap = t->page_room & KS_PAGE_GAP ? KS_PAGE_THREAD_GAP : 0u;
    const unsigned long long got = ks_page_claim(t->sink, block * warps + thread / 32u, block, thread | gap);
    ks_page_close(t);
    t->page_word = (uint32_t)got;
    t->page_room = (uint32_t)(got >> 32) | (t->page_room & KS_PAGE_LAZY_END) |
                   ((uint32_t)got == KS_PAGE_NONE ? KS_PAGE_GAP : 0u);
#else
    const unsigned long long page = t->sink->counters[0];
    t->sink->counters[0] += KS_COL_WORDS;
    ks_page_column(t, page, 1, 0);
#endif
}

/* The number of payload words up to the last nonzero one (a work record's fields). */
KS_FN_INLINE uint32_t ks_page_used_words(uint32_t p0, uint32_t p1, uint32_t p2, uint32_t p3, uint32_t p4, uint32_t p5,
                                         uint32_t p6, uint32_t p7)
{
    return p7 ? 8u : p6 ? 7u : p5 ? 6u : p4 ? 5u : p3 ? 4u : p2 ? 3u : p1 ? 2u : p0 ? 1u : 0u;
}

/* Claims `words` words of this thread's column for one record: where the record goes, or
 * NULL when there is no column (the record is counted as dropped). *stride is the word
 * distance between a record's consecutive words (the page's columns). */
KS_FN_INLINE uint32_t *ks_page_take(ks_thread *t, uint32_t words, uint32_t *stride)
{
    ks_page_room(t, words);
    t->page_room -= words;
    if (t->page_word == KS_PAGE_NONE) {
#if defined(__CUDA_ARCH__)
        atomicAdd(&t->sink->counters[1], 1ull);
#else
        ++t->sink->counters[1];
#endif
        return NULL;
    }
#if defined(__CUDA_ARCH__)
    *stride = 32u; /* a GPU column is always one of its page's 32 (ks_page_claim): stores at constant strides */
#else
    *stride = t->page_room >> 16 & 0xffu;
#endif
    uint32_t *p = (uint32_t *)t->sink->events + t->page_word;
    t->page_word += *stride * words;
    return p;
}

/* The 0 word after a record of `words` words at p, unless the column is ended lazily
 * or full. */
KS_FN_INLINE void ks_page_mark_end(const ks_thread *t, uint32_t *p, uint32_t stride, uint32_t words)
{
    if (!(t->page_room & KS_PAGE_LAZY_END) && (t->page_room & 0xffffu)) p[stride * words] = 0;
}

/* y and x of an access outside its tensor fit a short outside record: 16 signed bits each */
KS_FN_INLINE int ks_page_fits16(uint32_t v) { return v + 32768u < 65536u; }

/* The common record, a read or write (6 words) in a short form, straight through: one
 * claim site a probe (ks_page_take inlines the claim) and two or three stores at constant
 * strides on the GPU. Returns 0, writing nothing, when the access takes another form
 * (ks_page_record then writes it; the same words either way). */
KS_FN_INLINE int ks_page_short_access(ks_thread *t, int kind, int flags, int site, int tensor, int tap, uint32_t p0,
                                      uint32_t p1, uint32_t p2, uint32_t p3, uint32_t p4, uint32_t p5)
{
    if ((uint32_t)flags >= KS_SHORT_FLAGS || (uint32_t)site >= KS_SHORT_SITES || (uint32_t)tensor >= KS_SHORT_TENSORS ||
        (uint32_t)tap >= KS_SHORT_TAPS)
        return 0;
    const int derived = p1 == 0 && ks_page_derivable(t->sink, tensor, p0, 0u, p2, p3, p4);
    const int outside = !derived && (p0 & p1) == 0xffffffffu && p5 == 0 && ks_page_fits16(p3) && ks_page_fits16(p4);
    if (!derived && !outside) return 0;
    const int repeats = derived && kind == KS_EV_WRITE && (t->page_room & KS_PAGE_VALUE_KNOWN) && t->page_value == p5;
    const uint32_t words = repeats ? 2u : 3u;
    t->page_value = p5;
    uint32_t stride;
    uint32_t *p = ks_page_take(t, words, &stride);
    /* a read's value is the one the next record may repeat (set after the take, whose new
     * column starts a fresh room word; dropped or not: ks_page_record) */
    t->page_room = kind == KS_EV_READ ? t->page_room | KS_PAGE_VALUE_KNOWN : t->page_room & ~KS_PAGE_VALUE_KNOWN;
    if (!p) return 1;
    p[0] = (uint32_t)kind |
           (outside   ? KS_W0_OUTSIDE
            : repeats ? KS_W0_REPEAT
                      : KS_W0_SHORT)
               << 4 |
           (uint32_t)flags << 8 | (uint32_t)site << 12 | (uint32_t)tensor << 18 | (uint32_t)tap << 22;
    p[stride] = outside ? p2 : p0;
    if (!repeats) p[2 * stride] = outside ? (p3 & 0xffffu) | p4 << 16 : p5;
    ks_page_mark_end(t, p, stride, words);
    return 1;
}

/* One record of the current item: its header words and payload words p0..p(n-1) (n <= 8,
 * a constant at each probe; the stores past n are predicated off). Five forms:
 *   long      w0 w1 [work: iter, index low, index high] payload
 *   short access (a derived read or write below 2^32 whose flags, site, tensor and tap
 *             fit KS_SHORT_*): w0 = kind | 15 << 4 | flags << 8 | site << 12 | tensor << 18
 *             | tap << 22, then the offset and the value: 3 words instead of 4
 *   short outside (a read or write at offset -1, value 0, y and x in 16 bits, the rest as
 *             a short access): w0 as a short access with 14 for 15, then the plane and
 *             (y & 0xffff) | x << 16: 3 words instead of 8
 *   short repeat (a short write whose value is the value of the thread's record before
 *             it, a read of the same item): w0 with 13 for 15, then the offset: 2 words (a
 *             copy's write after its read)
 *   short work (an index below 2^32; no flags, tensor or tap): w0 = kind | 15 << 4 | m << 8
 *             | site << 16, then iter, the index, and the m fields up to the last nonzero
 *             one, at least KS_WORK_MIN_FIELDS: 3 + m words instead of 13
 * The short forms carry no seq check bits. Lanes of a warp that write as many words stay
 * in step, so each 128-byte row of their page is written whole by one store: a padding
 * read in the long form (8 words) or a work record one field shorter (x = 0) put the
 * lanes at an image's left and right edge out of step, and their rows were written in
 * pieces, which the H200's L2 reads back from DRAM before writing (N8 C64 128x128 im2col
 * every event: 223 MB of DRAM reads for 2.7 GB written, where the kernel reads 34 MB). */
KS_FN_INLINE void ks_page_record(ks_thread *t, int kind, int flags, int site, int tensor, int tap, uint32_t seq,
                                 uint32_t n, uint32_t p0, uint32_t p1, uint32_t p2, uint32_t p3, uint32_t p4,
                                 uint32_t p5, uint32_t p6, uint32_t p7)
{
    if ((kind == KS_EV_READ || kind == KS_EV_WRITE) && n == 6 &&
        ks_page_short_access(t, kind, flags, site, tensor, tap, p0, p1, p2, p3, p4, p5))
        return;
    uint32_t derived = 0, h0, h1 = 0, h2 = 0, head;
    /* a read of 6 words: its value (p5) is the one a write right after it may repeat. Only
     * a write after a read: which records repeat must not depend on the data more than
     * that, or lanes of a warp would write different numbers of words (a copy kernel's
     * writes all repeat; with reads repeating writes too, im2col's lanes went out of step
     * on equal neighbouring values, 10.5x -> 12.4x plain). Here, past the short forms, no
     * record repeats; a read still names its value for the write after it. */
    const int read6 = kind == KS_EV_READ && n == 6;
    t->page_value = p5;
    if ((kind == KS_EV_READ || kind == KS_EV_WRITE) && n == 6 &&
        ks_page_derivable(t->sink, tensor, p0, p1, p2, p3, p4)) {
        derived = KS_W1_DERIVED;
        if (p1 == 0) { /* an offset below 2^32: one word */
            n = 2;
            p1 = p5;
        } else {
            n = 3;
            p2 = p5;
        }
    }
    const uint64_t index = (uint64_t)t->work;
    if (kind == KS_EV_WORK && flags == 0 && tensor == KS_PAGE_NO_TENSOR && tap == 0 && index >> 32 == 0) {
        /* at least KS_WORK_MIN_FIELDS: an item whose last fields are 0 (x = 0) writes as many
         * words as its warp's others */
        n = ks_page_used_words(p0, p1, p2, p3, p4, p5, p6, p7);
        if (n < KS_WORK_MIN_FIELDS) n = KS_WORK_MIN_FIELDS;
        head = 3;
        h0 = (uint32_t)kind | KS_W0_SHORT << 4 | n << 8 | (uint32_t)(site & 0xffff) << 16;
        h1 = t->iter;
        h2 = (uint32_t)index;
    } else {
        head = 2;
        h0 = (uint32_t)(kind & 0xf) | n << 4 | (uint32_t)(flags & 0xff) << 8 | (uint32_t)(site & 0xffff) << 16;
        h1 = (uint32_t)(tensor & 0xff) | (seq & 0x7f) << 8 | derived | (uint32_t)(tap & 0xffff) << 16;
    }
    const int long_work = kind == KS_EV_WORK && head == 2;
    const uint32_t words = head + n + (long_work ? 3u : 0u);
    uint32_t n32;
    uint32_t *p = ks_page_take(t, words, &n32);
    /* the next record may repeat this one's value when it is a read (set after the take,
     * whose new column starts a fresh room word). Dropped or not: the words a launch asks
     * for do not depend on its buffer, and the host drops a thread's records after one that
     * found no column up to its next work record, which clears this. */
    t->page_room = read6 ? t->page_room | KS_PAGE_VALUE_KNOWN : t->page_room & ~KS_PAGE_VALUE_KNOWN;
    if (!p) return;
    uint32_t *const start = p;
    p[0] = h0;
    if (head > 1) p[n32] = h1;
    if (head > 2) p[2 * n32] = h2;
    p += head * n32;
    if (long_work) {
        p[0] = t->iter;
        p[n32] = (uint32_t)index;
        p[2 * n32] = (uint32_t)(index >> 32);
        p += 3 * n32;
    }
    /* one predicated store a word, spelled out: a loop over an array of the words was
     * left rolled at some of the 19 probes of an im2col item, the array in local memory */
    if (n > 0) p[0] = p0;
    if (n > 1) p[n32] = p1;
    if (n > 2) p[2 * n32] = p2;
    if (n > 3) p[3 * n32] = p3;
    if (n > 4) p[4 * n32] = p4;
    if (n > 5) p[5 * n32] = p5;
    if (n > 6) p[6 * n32] = p6;
    if (n > 7) p[7 * n32] = p7;
    /* where the records end, until the next one (a lazily ended column: when it is left) */
    ks_page_mark_end(t, start, n32, words);
}

#endif /* KS_PAGES_H */
