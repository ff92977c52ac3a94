/* ks_probe.h - probes: the lines a traced kernel body adds to its plain twin.
 *
 * A body is included twice, once with KS_TRACED 0 and KS_VARIANT(name) -> name##_plain,
 * once with KS_TRACED 1 and KS_VARIANT(name) -> name##_traced. Probe lines are written
 * as KS_PROBE(ks_probe_xxx(...)) (a statement; commas need no parentheses); with KS_TRACED 0 they become `if (0) {...}` and the
 * compiler removes them, so the plain variant is the hand-written kernel.
 */
#ifndef KS_PROBE_H
#define KS_PROBE_H

#include "ks_core.h"

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

#define KS_NO_TENSOR 255

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

/* Claim one slot and copy the event there; an event that finds no room is counted.
 * On the GPU the lanes of a warp that put an event together claim their slots with one
 * atomicAdd between them (the lowest lane adds the group's size and shares the base;
 * each lane takes base + its rank among the group), so the cursor sees one atomic per
 * warp and probe instead of 32, and the group's events land in consecutive slots: the
 * 64-byte events are written as four 16-byte stores that together cover whole lines
 * (measured faster than a structure copy, which stores field by field).
 * Slots are claimed in a different order than one atomic per lane would: traces compare
 * as sorted records (docs/trace-format.md). */
KS_FN void ks_sink_put(ks_sink *s, const ks_event *e)
{
#if defined(__CUDA_ARCH__)
    const unsigned group = __activemask();
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    const int leader = __ffs(group) - 1;
    unsigned long long base = 0;
    if ((int)lane == leader) base = atomicAdd(&s->counters[0], (unsigned long long)__popc(group));
    base = __shfl_sync(group, base, leader);
    const unsigned long long slot = base + (unsigned long long)__popc(group & ((1u << lane) - 1u));
    if (slot < s->capacity) {
        const uint2 *src = (const uint2 *)e; /* the event is 8-byte aligned, 64 bytes */
        uint4 *dst = (uint4 *)(s->events + slot);
        for (int q = 0; q < 4; ++q) dst[q] = make_uint4(src[2 * q].x, src[2 * q].y, src[2 * q + 1].x, src[2 * q + 1].y);
    }
    const unsigned over = __ballot_sync(group, slot >= s->capacity);
    if (over && (int)lane == leader) atomicAdd(&s->counters[1], (unsigned long long)__popc(over));
#else
    if (s->counters[0] >= s->capacity && ks_host_sink_grow(s) != 0) {
        s->counters[1]++;
        return;
    }
    s->events[s->counters[0]++] = *e;
#endif
}

KS_FN void ks_probe_head(ks_thread *t, ks_event *e, int kind, int site, int tensor, int tap)
{
    e->kind = (uint8_t)kind;
    e->flags = 0;
    e->site = (uint16_t)site;
    e->tensor = (uint8_t)tensor;
    e->reserved = 0;
    e->tap = (uint16_t)tap;
    e->block = t->block_idx.x;
    e->thread = t->thread_idx.x;
    e->iter = t->iter;
    e->seq = t->seq++;
    e->index = t->work;
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
    t->keep = t->sink != 0 && ks_filter_pass(&t->sink->filter, index, t->block_idx.x);
    return t->keep;
}

/* The work event of an item ks_probe_start kept: its decomposition f0..f7 (named by the
 * site schema; unused fields 0). */
KS_FN void ks_probe_fields(ks_thread *t, int site, int64_t f0, int64_t f1, int64_t f2, int64_t f3, int64_t f4,
                           int64_t f5, int64_t f6, int64_t f7)
{
    ks_event e;
    ks_probe_head(t, &e, KS_EV_WORK, site, KS_NO_TENSOR, 0);
    e.u.field[0] = (int32_t)f0;
    e.u.field[1] = (int32_t)f1;
    e.u.field[2] = (int32_t)f2;
    e.u.field[3] = (int32_t)f3;
    e.u.field[4] = (int32_t)f4;
    e.u.field[5] = (int32_t)f5;
    e.u.field[6] = (int32_t)f6;
    e.u.field[7] = (int32_t)f7;
    ks_sink_put(t->sink, &e);
}

/* Both: start a work item and, when kept, record its decomposition. */
KS_FN void ks_probe_work(ks_thread *t, int site, int64_t index, uint32_t iter, int64_t f0,
                         int64_t f1, int64_t f2, int64_t f3, int64_t f4, int64_t f5,
                         int64_t f6, int64_t f7)
{
    if (ks_probe_start(t, index, iter)) ks_probe_fields(t, site, f0, f1, f2, f3, f4, f5, f6, f7);
}

/* A read or write at element `offset` of tensor `tensor` (offset -1: padding), at
 * (plane, y, x) in the tensor's own last-two-dimension view. */
KS_FN void ks_probe_access(ks_thread *t, int kind, int site, int tensor, int tap,
                           int64_t offset, int64_t plane, int64_t y, int64_t x,
                           float value, int flags)
{
    ks_event e;
    if (!t->keep) return;
    ks_probe_head(t, &e, kind, site, tensor, tap);
    e.flags = (uint8_t)flags;
    e.u.access.offset = offset;
    e.u.access.plane = (int32_t)plane;
    e.u.access.y = (int32_t)y;
    e.u.access.x = (int32_t)x;
    e.u.access.value = value;
    e.u.access.reserved[0] = 0;
    e.u.access.reserved[1] = 0;
    ks_sink_put(t->sink, &e);
}

KS_FN void ks_probe_read(ks_thread *t, int site, int tensor, int tap, int64_t offset,
                         int64_t plane, int64_t y, int64_t x, float value)
{
    ks_probe_access(t, KS_EV_READ, site, tensor, tap, offset, plane, y, x, value,
                    offset < 0 ? KS_FLAG_PADDING : 0);
}

KS_FN void ks_probe_write(ks_thread *t, int site, int tensor, int tap, int64_t offset,
                          int64_t plane, int64_t y, int64_t x, float value, int atomic)
{
    ks_probe_access(t, KS_EV_WRITE, site, tensor, tap, offset, plane, y, x, value,
                    atomic ? KS_FLAG_ATOMIC : 0);
}

/* A bilinear sample at float (y, x) of plane `plane`; flags carry corner validity and
 * clamping, w the four corner weights, value the blended result. */
KS_FN void ks_probe_sample(ks_thread *t, int site, int tensor, int tap, int64_t plane,
                           float y, float x, float w00, float w01, float w10, float w11,
                           float value, int flags)
{
    ks_event e;
    if (!t->keep) return;
    ks_probe_head(t, &e, KS_EV_SAMPLE, site, tensor, tap);
    e.flags = (uint8_t)flags;
    e.u.sample.plane = (int32_t)plane;
    e.u.sample.y = y;
    e.u.sample.x = x;
    e.u.sample.w[0] = w00;
    e.u.sample.w[1] = w01;
    e.u.sample.w[2] = w10;
    e.u.sample.w[3] = w11;
    e.u.sample.value = value;
    ks_sink_put(t->sink, &e);
}

/* A region of plane `plane` of tensor `tensor` the item works in (see ks_ev_region):
 * RoIAlign's RoI with its bins, patchify's patch. guide: drawn faintly. */
KS_FN void ks_probe_box(ks_thread *t, int site, int tensor, int64_t plane, float y0, float x0, float y1,
                        float x1, int rows, int cols, int guide)
{
    ks_event e;
    if (!t->keep) return;
    ks_probe_head(t, &e, KS_EV_REGION, site, tensor, 0);
    e.flags = (uint8_t)(guide ? KS_FLAG_GUIDE : 0);
    e.u.region.plane = (int32_t)plane;
    e.u.region.y0 = y0;
    e.u.region.x0 = x0;
    e.u.region.y1 = y1;
    e.u.region.x1 = x1;
    e.u.region.rows = (uint16_t)rows;
    e.u.region.cols = (uint16_t)cols;
    e.u.region.reserved[0] = e.u.region.reserved[1] = 0;
    ks_sink_put(t->sink, &e);
}

/* A point (y, x) of plane `plane` (a region of 0 x 0 bins): a sparse site; `tap` labels
 * it (the kernel offset a pair came through). */
KS_FN void ks_probe_point(ks_thread *t, int site, int tensor, int tap, int64_t plane, int64_t y, int64_t x)
{
    ks_event e;
    if (!t->keep) return;
    ks_probe_head(t, &e, KS_EV_REGION, site, tensor, tap);
    e.u.region.plane = (int32_t)plane;
    e.u.region.y0 = e.u.region.y1 = (float)y;
    e.u.region.x0 = e.u.region.x1 = (float)x;
    e.u.region.rows = e.u.region.cols = 0;
    e.u.region.reserved[0] = e.u.region.reserved[1] = 0;
    ks_sink_put(t->sink, &e);
}

#endif /* KS_PROBE_H */
