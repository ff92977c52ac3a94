/* ks_probe.h - probes: the lines a traced kernel body adds to its plain twin.
 *
 * A body is included twice, once with KS_TRACED 0 and KS_VARIANT(name) -> name##_plain,
 * once with KS_TRACED 1 and KS_VARIANT(name) -> name##_traced. Probe lines are written
 * as KS_PROBE(ks_probe_xxx(...)) (a statement; commas need no parentheses); with KS_TRACED 0 they become `if (0) {...}` and the
 * compiler removes them, so the plain variant is the hand-written kernel.
 */
#ifndef KS_PROBE_H
#define KS_PROBE_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "ks_core.h"
#include "ks_pages.h"

#define KS_PROBE_IF(cond, ...) \
    do {                       \
        if (cond) {            \
            __VA_ARGS__;       \
        }                      \
    } while (0)
#define KS_PROBE(...) KS_PROBE_IF(KS_TRACED, __VA_ARGS__)
/* A probe inside an item function whose constant argument `probing` is 0 in the plain
 * variant and for the items a traced kernel's filter drops: those run the plain code (the
 * traced kernel instantiates the item twice, e.g. im2col_body.h). */
#define KS_ITEM_PROBE(...) KS_PROBE_IF(probing, __VA_ARGS__)

#define KS_NO_TENSOR KS_PAGE_NO_TENSOR /* 255: the tensor of an event that has none */

KS_FN int ks_filter_pass(const ks_filter *f, int64_t index, int64_t block)
{
    if (index < f->index_lo || index >= f->index_hi) return 0;
    if (block < f->block_lo || block >= f->block_hi) return 0;
    return f->every <= 1 || (index - f->index_lo) % f->every == 0;
}

/* No item of block `block` can pass f, whatever its index: the index range is empty or
 * the block lies outside the block range. */
KS_FN int ks_filter_drops_block(const ks_filter *f, int64_t block)
{
    return f->index_lo >= f->index_hi || block < f->block_lo || block >= f->block_hi;
}

/* How many items of a launch's first pass (item i on thread i of blocks x block_threads
 * threads) f keeps: in its index range, on its blocks, and (i - index_lo) % every == 0.
 * The launcher's choice of traced kernel (ks_cuda.h). In doubles, exact below 2^53 (a
 * 3-D grid's thread count can pass 2^63). */
KS_FN double ks_filter_first_pass(const ks_filter *f, double blocks, double block_threads)
{
    const double b_lo = f->block_lo > 0 ? (double)f->block_lo : 0,
                 b_hi = (double)f->block_hi < blocks ? (double)f->block_hi : blocks;
    const double lo = (double)f->index_lo > b_lo * block_threads ? (double)f->index_lo : b_lo * block_threads;
    const double hi = (double)f->index_hi < b_hi * block_threads ? (double)f->index_hi : b_hi * block_threads;
    if (!(hi > lo)) return 0;
    const double every = f->every > 1 ? (double)f->every : 1;
    /* the first index at or past lo that `every` keeps, counted from index_lo */
    const double first = (double)f->index_lo + ceil((lo - (double)f->index_lo) / every) * every;
    return first < hi ? floor((hi - 1 - first) / every) + 1 : 0;
}

/* The byte layout of ks_event (ks_event.h, docs/trace-format.md) that ks_probe_emit
 * writes as sixteen little-endian 32-bit words: 0 kind | flags << 8 | site << 16,
 * 1 tensor | tap << 16, 2 block, 3 thread, 4 iter, 5 seq, 6-7 index, 8-15 the union. */
#ifdef __cplusplus
#define KS_LAYOUT(cond) static_assert(cond, "ks_event layout")
#else
#define KS_LAYOUT(cond) _Static_assert(cond, "ks_event layout")
#endif
KS_LAYOUT(sizeof(ks_event) == 64 && offsetof(ks_event, flags) == 1 && offsetof(ks_event, site) == 2);
KS_LAYOUT(offsetof(ks_event, tensor) == 4 && offsetof(ks_event, tap) == 6 && offsetof(ks_event, block) == 8);
KS_LAYOUT(offsetof(ks_event, thread) == 12 && offsetof(ks_event, iter) == 16 && offsetof(ks_event, seq) == 20);
KS_LAYOUT(offsetof(ks_event, index) == 24 && offsetof(ks_event, u) == 32);
KS_LAYOUT(offsetof(ks_ev_access, plane) == 8 && offsetof(ks_ev_access, value) == 20);
KS_LAYOUT(offsetof(ks_ev_sample, w) == 12 && offsetof(ks_ev_sample, value) == 28);
KS_LAYOUT(offsetof(ks_ev_region, rows) == 20 && offsetof(ks_ev_region, cols) == 22);
KS_LAYOUT(offsetof(ks_ev_barrier, phase) == 4);
#undef KS_LAYOUT

KS_FN_INLINE uint32_t ks_f32_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

/* A record's first two words: kind | flags << 8 | site << 16, and tensor | tap << 16
 * (byte 5 is reserved, 0). The GPU stores them as they are; test_trace checks them
 * against the documented bytes. */
KS_FN_INLINE uint32_t ks_event_word0(int kind, int flags, int site)
{
    return (uint32_t)(kind & 0xff) | (uint32_t)(flags & 0xff) << 8 | (uint32_t)(site & 0xffff) << 16;
}

KS_FN_INLINE uint32_t ks_event_word1(int tensor, int tap)
{
    return (uint32_t)(tensor & 0xff) | (uint32_t)(tap & 0xffff) << 16;
}

/* Record one event of the item ks_probe_start kept: the header from t (seq advances)
 * and the union's eight words p0..p7, of which the first n can be nonzero (a constant at
 * each probe). On the GPU the event becomes a compact record in the thread's page
 * (ks_pages.h: one atomicAdd a column, not an event; 8 or 12 bytes for most reads and
 * writes instead of 64); the host turns the pages back into these events. The simulator writes the
 * 64-byte event itself. */
KS_FN_INLINE void ks_probe_emit_n(ks_thread *t, int kind, int flags, int site, int tensor, int tap, uint32_t n,
                                  uint32_t p0, uint32_t p1, uint32_t p2, uint32_t p3, uint32_t p4, uint32_t p5,
                                  uint32_t p6, uint32_t p7)
{
    const uint32_t seq = t->seq++;
#if defined(__CUDA_ARCH__)
    ks_page_record(t, kind, flags, site, tensor, tap, seq, n, p0, p1, p2, p3, p4, p5, p6, p7);
#else
    (void)n;
    /* the simulator: host memory that grows; the same record written through its fields */
    ks_sink *s = t->sink;
    if (s->counters[0] >= s->capacity && ks_host_sink_grow(s) != 0) {
        s->counters[1]++;
        return;
    }
    ks_event *e = &s->events[s->counters[0]++];
    e->kind = (uint8_t)kind;
    e->flags = (uint8_t)flags;
    e->site = (uint16_t)site;
    e->tensor = (uint8_t)tensor;
    e->reserved = 0;
    e->tap = (uint16_t)tap;
    e->block = ks_block_linear(t);
    e->thread = ks_thread_linear(t);
    e->iter = t->iter;
    e->seq = seq;
    e->index = t->work;
    const uint32_t p[8] = {p0, p1, p2, p3, p4, p5, p6, p7};
    for (int k = 0; k < 8; ++k) e->u.field[k] = (int32_t)p[k];
#endif
}

/* The same with all eight words (ks_shared.h's accesses carry their phase and line). */
KS_FN_INLINE void ks_probe_emit(ks_thread *t, int kind, int flags, int site, int tensor, int tap, uint32_t p0,
                                uint32_t p1, uint32_t p2, uint32_t p3, uint32_t p4, uint32_t p5, uint32_t p6,
                                uint32_t p7)
{
    ks_probe_emit_n(t, kind, flags, site, tensor, tap, 8, p0, p1, p2, p3, p4, p5, p6, p7);
}

/* Start a work item: decides (by the sink's filter) whether this item is recorded and
 * returns it; nothing else. A body calls it before working out the item's decomposition,
 * so that an item the filter drops costs one test:
 *   KS_PROBE(if (ks_probe_start(t, index, iter)) ks_probe_fields(t, SITE, f0, ..., f7)); */
KS_FN int ks_probe_start(ks_thread *t, int64_t index, uint32_t iter)
{
    t->work = index;
    t->iter = iter;
    t->seq = 0;
    t->keep = t->sink != 0 && ks_filter_pass(&t->sink->filter, index, ks_block_linear(t));
    return t->keep;
}

/* The work event of an item ks_probe_start kept: its decomposition f0..f7 (named by the
 * site schema; unused fields 0). */
KS_FN void ks_probe_fields(ks_thread *t, int site, int64_t f0, int64_t f1, int64_t f2, int64_t f3, int64_t f4,
                           int64_t f5, int64_t f6, int64_t f7)
{
    ks_probe_emit(t, KS_EV_WORK, 0, site, KS_NO_TENSOR, 0, (uint32_t)f0, (uint32_t)f1, (uint32_t)f2, (uint32_t)f3,
                  (uint32_t)f4, (uint32_t)f5, (uint32_t)f6, (uint32_t)f7);
}

/* Both: start a work item and, when kept, record its decomposition. */
KS_FN void ks_probe_work(ks_thread *t, int site, int64_t index, uint32_t iter, int64_t f0, int64_t f1, int64_t f2,
                         int64_t f3, int64_t f4, int64_t f5, int64_t f6, int64_t f7)
{
    if (ks_probe_start(t, index, iter)) ks_probe_fields(t, site, f0, f1, f2, f3, f4, f5, f6, f7);
}

/* A read or write at element `offset` of tensor `tensor` (offset -1: padding), at
 * (plane, y, x) in the tensor's own last-two-dimension view. */
KS_FN void ks_probe_access(ks_thread *t, int kind, int site, int tensor, int tap, int64_t offset, int64_t plane,
                           int64_t y, int64_t x, float value, int flags)
{
    if (!t->keep) return;
    ks_probe_emit_n(t, kind, flags, site, tensor, tap, 6, (uint32_t)(uint64_t)offset,
                    (uint32_t)((uint64_t)offset >> 32), (uint32_t)plane, (uint32_t)y, (uint32_t)x, ks_f32_bits(value),
                    0, 0);
}

KS_FN void ks_probe_read(ks_thread *t, int site, int tensor, int tap, int64_t offset, int64_t plane, int64_t y,
                         int64_t x, float value)
{
    ks_probe_access(t, KS_EV_READ, site, tensor, tap, offset, plane, y, x, value, offset < 0 ? KS_FLAG_PADDING : 0);
}

KS_FN void ks_probe_write(ks_thread *t, int site, int tensor, int tap, int64_t offset, int64_t plane, int64_t y,
                          int64_t x, float value, int atomic)
{
    ks_probe_access(t, KS_EV_WRITE, site, tensor, tap, offset, plane, y, x, value, atomic ? KS_FLAG_ATOMIC : 0);
}

/* A read or write of an integer element (indices, hash keys, counts): the value is kept
 * exactly (KS_FLAG_INT) when it fits 32 bits, else as the nearest float. */
KS_FN void ks_probe_access_int(ks_thread *t, int kind, int site, int tensor, int tap, int64_t offset, int64_t plane,
                               int64_t y, int64_t x, int64_t value, int flags)
{
    if (!t->keep) return;
    const int fits = value >= INT32_MIN && value <= INT32_MAX;
    ks_probe_emit_n(t, kind, flags | (fits ? KS_FLAG_INT : 0), site, tensor, tap, 6, (uint32_t)(uint64_t)offset,
                    (uint32_t)((uint64_t)offset >> 32), (uint32_t)plane, (uint32_t)y, (uint32_t)x,
                    fits ? (uint32_t)value : ks_f32_bits((float)value), 0, 0);
}

KS_FN void ks_probe_read_int(ks_thread *t, int site, int tensor, int tap, int64_t offset, int64_t plane, int64_t y,
                             int64_t x, int64_t value)
{
    ks_probe_access_int(t, KS_EV_READ, site, tensor, tap, offset, plane, y, x, value, offset < 0 ? KS_FLAG_PADDING : 0);
}

KS_FN void ks_probe_write_int(ks_thread *t, int site, int tensor, int tap, int64_t offset, int64_t plane, int64_t y,
                              int64_t x, int64_t value, int atomic)
{
    ks_probe_access_int(t, KS_EV_WRITE, site, tensor, tap, offset, plane, y, x, value, atomic ? KS_FLAG_ATOMIC : 0);
}

/* A bilinear sample at float (y, x) of plane `plane`; flags carry corner validity and
 * clamping, w the four corner weights, value the blended result. */
KS_FN void ks_probe_sample(ks_thread *t, int site, int tensor, int tap, int64_t plane, float y, float x, float w00,
                           float w01, float w10, float w11, float value, int flags)
{
    if (!t->keep) return;
    ks_probe_emit(t, KS_EV_SAMPLE, flags, site, tensor, tap, (uint32_t)plane, ks_f32_bits(y), ks_f32_bits(x),
                  ks_f32_bits(w00), ks_f32_bits(w01), ks_f32_bits(w10), ks_f32_bits(w11), ks_f32_bits(value));
}

/* A region of plane `plane` of tensor `tensor` the item works in (see ks_ev_region):
 * RoIAlign's RoI with its bins, patchify's patch. guide: drawn faintly. */
KS_FN void ks_probe_box(ks_thread *t, int site, int tensor, int64_t plane, float y0, float x0, float y1, float x1,
                        int rows, int cols, int guide)
{
    if (!t->keep) return;
    ks_probe_emit_n(t, KS_EV_REGION, guide ? KS_FLAG_GUIDE : 0, site, tensor, 0, 6, (uint32_t)plane, ks_f32_bits(y0),
                    ks_f32_bits(x0), ks_f32_bits(y1), ks_f32_bits(x1),
                    (uint32_t)(rows & 0xffff) | (uint32_t)(cols & 0xffff) << 16, 0, 0);
}

/* A point (y, x) of plane `plane` (a region of 0 x 0 bins): a sparse site; `tap` labels
 * it (the kernel offset a pair came through). */
KS_FN void ks_probe_point(ks_thread *t, int site, int tensor, int tap, int64_t plane, int64_t y, int64_t x)
{
    if (!t->keep) return;
    const uint32_t fy = ks_f32_bits((float)y), fx = ks_f32_bits((float)x);
    ks_probe_emit_n(t, KS_EV_REGION, 0, site, tensor, tap, 6, (uint32_t)plane, fy, fx, fy, fx, 0, 0, 0);
}

#endif /* KS_PROBE_H */
