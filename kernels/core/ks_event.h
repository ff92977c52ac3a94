/* ks_event.h - trace event records and the trace sink (public, plain C).
 *
 * One record is 64 bytes, little-endian, the same in memory, on the GPU and in .kst files
 * (docs/trace-format.md gives every byte). Every event belongs to the work item `index`
 * that the thread (block, thread) processed in grid-stride iteration `iter`; `seq` numbers
 * the events of one work item (0 is its work event), so (index, seq) orders a trace the
 * same way on every device.
 */
#ifndef KS_EVENT_H
#define KS_EVENT_H

#include <stdint.h>

#include "ks_api.h"
#include "ks_error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ks_event_kind {
    KS_EV_WORK = 1,    /* a grid-stride iteration: index and its decomposition */
    KS_EV_READ = 2,    /* an integer-position read (or padding) */
    KS_EV_SAMPLE = 3,  /* a bilinear sample */
    KS_EV_WRITE = 4,   /* a plain store or an atomic add */
    KS_EV_REGION = 5,  /* a rectangle (or a grid of bins, or a point) on a tensor plane */
    KS_EV_BARRIER = 6, /* a thread arriving at a block barrier (__syncthreads) */
    KS_EV_WARP = 7,    /* a lane's part in a warp collective (.cu kernels: __shfl_sync, ...) */
    KS_EV_FAULT = 8    /* a thread stopped by a fault (.cu kernels: outside, assert, ...) */
};
#define KS_EV_KINDS 9 /* kinds are 1..KS_EV_KINDS-1 */

enum ks_event_flags {
    KS_FLAG_PADDING = 1u << 0, /* read: position outside the tensor, value is the pad 0 */
    KS_FLAG_ATOMIC = 1u << 1,  /* write: atomic add rather than a store */
    /* sample: validity of the corners (y0,x0) (y0,x1) (y1,x0) (y1,x1) */
    KS_FLAG_C00 = 1u << 2,
    KS_FLAG_C01 = 1u << 3,
    KS_FLAG_C10 = 1u << 4,
    KS_FLAG_C11 = 1u << 5,
    KS_FLAG_CLAMP_Y = 1u << 6, /* sample: corners clamped to the last row (RoIAlign rule) */
    KS_FLAG_CLAMP_X = 1u << 7,
    KS_FLAG_GUIDE = 1u << 0, /* region: a guide drawn faintly (the box before a shift) */
    /* read, write: block-shared memory (ks_shared.h); reserved[0] holds the barrier phase */
    KS_FLAG_SHARED = 1u << 2,
    /* read, write: the element is an integer and `ivalue` holds it exactly (a float would
     * round values past 2^24); set by the _int probes when it fits 32 bits */
    KS_FLAG_INT = 1u << 3
};

#define KS_WORK_FIELDS 8

/* Read/write payload. `offset` is the element offset into the tensor (-1 for padding);
 * (plane, y, x) are the coordinates of that element when the tensor is seen as planes of
 * its last two dimensions: offset == (plane * dim[-2] + y) * dim[-1] + x when in bounds. */
typedef struct ks_ev_access {
    int64_t offset;
    int32_t plane, y, x;
    union {
        float value;    /* what was read or written */
        int32_t ivalue; /* the same, exactly, when the event has KS_FLAG_INT */
    };
    int32_t reserved[2];
} ks_ev_access;

/* An access's value whichever way it is held. */
static inline double ks_access_value(const ks_ev_access *a, unsigned flags)
{
    return flags & KS_FLAG_INT ? (double)a->ivalue : (double)a->value;
}

typedef struct ks_ev_sample {
    int32_t plane;
    float y, x;
    float w[4]; /* weights of the corners in KS_FLAG_C00..C11 order */
    float value;
} ks_ev_sample;

/* A region an item works in, for overlays: the rectangle [y0, y1] x [x0, x1] of plane
 * `plane` in continuous coordinates (pixel centres at integers), divided into rows x cols
 * bins (1 x 1: a plain box; 0 x 0: the point (y0, x0)). What it is, is its site's name
 * ("roi_align.roi", "patchify.patch"). */
typedef struct ks_ev_region {
    int32_t plane;
    float y0, x0, y1, x1;
    uint16_t rows, cols;
    int32_t reserved[2];
} ks_ev_region;

/* A barrier arrival: the source line of the ks_syncthreads() and the phase it ends (the
 * number of barriers this thread passed before it in its block). */
typedef struct ks_ev_barrier {
    int32_t line;
    uint32_t phase;
    int32_t reserved[6];
} ks_ev_barrier;

/* A lane's part in a warp collective (kscope run FILE.cu): the collective's source line,
 * the mask the lane passed, the lanes that took part (arrived), the operation (cu_rt.h's
 * ks_cu_warp_op), the lane, and the value it got back (the shuffled bits, the ballot). */
typedef struct ks_ev_warp {
    int32_t line;
    uint32_t mask, arrived;
    uint8_t op, lane;
    uint16_t reserved0;
    uint64_t value;
    int32_t reserved[2];
} ks_ev_warp;

/* Why a thread stopped (kscope run FILE.cu): cu_rt.h's ks_cu_fault code, the source
 * line, and the address it touched (outside) or 0. */
typedef struct ks_ev_fault {
    int32_t line;
    uint32_t code;
    uint64_t address;
    int32_t reserved[4];
} ks_ev_fault;

typedef struct ks_event {
    uint8_t kind;   /* ks_event_kind */
    uint8_t flags;  /* ks_event_flags */
    uint16_t site;  /* index into the trace's site schema */
    uint8_t tensor; /* index into the trace's tensor list (255: none) */
    uint8_t reserved;
    uint16_t tap;    /* site-defined sub-step: kernel tap i*kw+j, gathered entry number */
    uint32_t block;  /* linear block index */
    uint32_t thread; /* thread index within the block */
    uint32_t iter;   /* grid-stride iteration of this thread */
    uint32_t seq;    /* event number within the work item */
    int64_t index;   /* linear work index */
    union {
        int32_t field[KS_WORK_FIELDS]; /* work: decomposition, named by the site schema */
        ks_ev_access access;           /* read, write */
        ks_ev_sample sample;           /* sample */
        ks_ev_region region;           /* region */
        ks_ev_barrier barrier;         /* barrier */
        ks_ev_warp warp;               /* warp */
        ks_ev_fault fault;             /* fault */
    } u;
} ks_event;

/* Which work items are recorded: index in [index_lo, index_hi), block in
 * [block_lo, block_hi), and (index - index_lo) % every == 0. A work item is kept or
 * dropped together with all its reads, samples and writes. */
typedef struct ks_filter {
    int64_t index_lo, index_hi;
    int64_t block_lo, block_hi;
    int64_t every;
} ks_filter;

#define KS_SINK_DIMS 16

/* Where events go. On the GPU `events` and `counters` are device memory and `capacity`
 * is fixed: slots are claimed with an atomic cursor and an overflow is only counted.
 * In the simulator they are host memory and the array grows up to `capacity`.
 * counters[0] = cursor (events claimed), counters[1] = dropped events. */
typedef struct ks_sink {
    ks_event *events;
    unsigned long long *counters;
    unsigned long long capacity; /* slots allocated now */
    unsigned long long limit;    /* simulator: most slots it may grow to */
    ks_filter filter;
    /* Optional (NULL: none): the schedule of the traced launch, 4 int64 per block
     * (block, SM id, start, end): the GPU's %smid and %globaltimer (ns), the simulator's
     * SM -1 and a virtual clock (thread bodies run before). Same memory space as events. */
    int64_t *schedule;
    int64_t schedule_blocks;
    /* simulator: bytes of address space reserved for `events` up front (0: malloc'd, grown
     * by copying); pages are only touched as events arrive */
    unsigned long long reserved_bytes;
    /* GPU (ks_pages.h): a number that differs from every earlier launch's into this
     * memory (ks_cuda_sink_create and _reset set it), and the planes' rows x cols of the
     * first KS_SINK_DIMS tensors (0: not given), from which a read's or write's (plane,
     * y, x) need not be stored. */
    uint32_t epoch;
    int32_t dim_rows[KS_SINK_DIMS], dim_cols[KS_SINK_DIMS];
} ks_sink;

/* The filter that keeps everything. */
KS_API ks_filter ks_filter_all(void);

/* Simulator sink: room for `limit` events (0: 1<<26), then it counts drops. The room is
 * address space reserved at once (no copy as it fills; huge pages where the kernel gives
 * them), or where the system refuses that, an array that starts small and grows. Returns
 * NULL with ks_error_message() set on allocation failure. */
KS_API ks_sink *ks_host_sink_create(unsigned long long limit, ks_filter filter);
KS_API void ks_host_sink_free(ks_sink *s);
KS_API unsigned long long ks_sink_count(const ks_sink *s);   /* events stored */
KS_API unsigned long long ks_sink_dropped(const ks_sink *s); /* events lost to the capacity */
/* Used by the probes when the simulator's array is full: KS_OK if it grew, KS_ENOMEM
 * when it is at its limit or memory ran out (no message: the probes count the drops). */
KS_API ks_status ks_host_sink_grow(ks_sink *s);

#ifdef __cplusplus
}
#endif

#endif /* KS_EVENT_H */
