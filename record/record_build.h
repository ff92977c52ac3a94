/* record_build.h - inside record_trace.c and record_events.c: the state of one launch's
 * trace while it is built (its buffers, tensors, sites and source lines), the lookups
 * record_trace.c keeps, and the event making record_events.c does. Not installed. */
#ifndef KS_RECORD_BUILD_H
#define KS_RECORD_BUILD_H

#include "record_int.h"

typedef struct tens {
    const ks_rec_buf *buf; /* the buffer (or a range of unknown memory, in `own`) */
    ks_rec_buf own;
    int written;
} tens;

typedef struct site_key {
    int kind, tensor, line;
    uint32_t pc;
    char file[256]; /* a copy: the line cache it came from grows */
} site_key;

typedef struct builder {
    const ks_rec_launch *l;
    const ks_rec_buf **named, **allocs; /* allocations sorted by address */
    int nnamed, nallocs;
    ks_rec_buf *unknown; /* ranges of memory in no buffer, sorted */
    int nunknown;
    ks_rec_buf shared; /* --shared-accesses: the block's shared window, as 4-byte words */
    tens t[KS_MAX_TENSORS];
    int nt;
    const ks_rec_buf *tensor_buf[KS_MAX_TENSORS];
    ks_trace *tr;
    site_key keys[KS_MAX_SITES];
    uint32_t site_pcs[KS_MAX_SITES][16]; /* the instructions of a site, for tap */
    int site_npcs[KS_MAX_SITES];
    ks_rec_line *lines; /* one per distinct pc, found lazily */
    uint32_t *line_pcs;
    int nlines, line_cap;
} builder;

/* The buffer address a falls in: a named range (the latest name wins), an allocation, or
 * a range of memory in no buffer (find_unknown made one for every address); NULL: none. */
const ks_rec_buf *ks_rb_find_buf(const builder *b, uint64_t a);
/* The trace tensor of buffer x, added when first met; -status past KS_MAX_TENSORS. */
int ks_rb_tensor_of(builder *b, const ks_rec_buf *x);
/* The source of instruction pc (cached; line 0: none). */
const ks_rec_line *ks_rb_line_for(builder *b, uint32_t pc);
/* The site of an access at instruction pc of kind `kind` and tensor t (one per source
 * line, or offset, kind and tensor), added when first met; -status when none is left. */
int ks_rb_site_of(builder *b, uint32_t pc, int kind, int t);
/* The rank of instruction pc among site s's (the low 4 bits of a tap). */
int ks_rb_rank_of(builder *b, int s, uint32_t pc);
/* An access event's offset and (plane, y, x) in buffer x, and its value by dtype. */
void ks_rb_place(ks_event *e, const ks_rec_buf *x, int64_t off);
void ks_rb_set_value(ks_event *e, ks_dtype d, const uint8_t *p, size_t n);
/* The element size of a buffer as the trace describes it. */
static inline size_t ks_rb_elem_of(const ks_rec_buf *x) { return ks_dtype_size(x->dtype); }

/* A block's records [rec, rec_end) in the sorted records, and its first event's number. */
typedef struct block_span {
    uint32_t block;
    uint64_t rec, rec_end, ev;
} block_span;
/* What the build resolved of one record (its site, tensor and the low bits of its tap:
 * the site's rank of its instruction; or a barrier's line). */
typedef struct rec_meta {
    int32_t line; /* a barrier's source line */
    uint16_t site;
    uint8_t tensor; /* 255: a barrier */
    uint8_t rank;
} rec_meta;
/* The launch's events, ready to be made on demand in (block, thread) order: a work event
 * for each kept thread of a block with records, then its accesses and barriers
 * (record_events.c). */
typedef struct rec_events {
    const builder *b;
    const ks_rec *sorted;
    ks_rec *own; /* the sorted records, when the launch's were not */
    rec_meta *meta;
    block_span *spans;
    int64_t nspans;
    uint64_t n; /* events */
} rec_events;
/* Sorts the records (unless sorted) and resolves every kept record's site and tensor,
 * numbering both in first-met order; the tensors' `written` flags are set. */
int ks_rec_events_prepare(builder *b, rec_events *E);
/* The source the writer takes the events from (E stays alive while it writes). */
void ks_rec_events_source(const rec_events *E, ks_event_source *src);
void ks_rec_events_free(rec_events *E);
/* The threads the build uses for n records: ks_rec_build_threads, or the CPUs (at most
 * 16) for a launch of 65536 records or more, else one. */
int ks_rb_threads(uint64_t n);
/* Milliseconds now (CLOCK_MONOTONIC). */
double ks_rb_now_ms(void);

#endif
