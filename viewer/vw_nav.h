/* vw_nav.h - positions in a replay order and stepping through them (pure functions).
 *
 * A position is a number in [0, vw_order_len) for the chosen order. The recorded order
 * is the file's event order and needs no index; the thread-major and iteration-major
 * orders list work items (each with its events, work event first) and need a built
 * vw_index. Stepping by a unit (work item, thread, warp, block, first field) moves to the
 * first event of the next (or previous) run of events that differ in that unit.
 */
#ifndef VW_NAV_H
#define VW_NAV_H

#include "vw_index.h"

typedef enum vw_unit {
    VW_UNIT_EVENT = 0,
    VW_UNIT_ITEM = 1,
    VW_UNIT_THREAD = 2,
    VW_UNIT_WARP = 3, /* 32 consecutive threads of one block */
    VW_UNIT_BLOCK = 4,
    /* the work site's first field (its slowest digit): a run of work items with one value
     * of it, e.g. one kernel offset k of a sparse rulebook, one output site o of its
     * reduce, one pair p of its gather, one image n of im2col */
    VW_UNIT_FIELD = 5,
    VW_NUNITS = 6
} vw_unit;

const char *vw_order_name(vw_order o); /* "recorded", "thread-major", "iteration-major" */
const char *vw_unit_name(vw_unit u);   /* "event", "work item", ..., "first field" */
/* The trace's work site (the first site of kind work with a field), or NULL. */
const ks_site *vw_work_site(const ks_trace *tr);

/* Events the order visits (the recorded order: all; the others: those with a work item). */
uint64_t vw_order_len(const vw_index *idx, vw_order o);
/* The event at position pos (< vw_order_len). */
uint32_t vw_order_event(const vw_index *idx, vw_order o, uint64_t pos);
/* The position of event ev in order o; for an event the order leaves out, the position
 * of the nearest following one (or 0). */
uint64_t vw_order_pos(const vw_index *idx, vw_order o, uint32_t ev);

/* The position one unit forward (dir > 0) or back (dir < 0) from pos; pos itself when
 * there is no further unit that way. */
uint64_t vw_step(const vw_index *idx, vw_order o, uint64_t pos, vw_unit u, int dir);

/* First position (in order o) of an event of global thread g / of work item `index`.
 * Return 0 and set *pos, or KS_EINVAL with ks_error_message() saying why not. */
int vw_jump_thread(const vw_index *idx, vw_order o, int64_t g, uint64_t *pos);
/* First position (in order o) of an event of block b: its first work item there. */
int vw_jump_block(const vw_index *idx, vw_order o, int64_t b, uint64_t *pos);
int vw_jump_index(const vw_index *idx, vw_order o, int64_t index, uint64_t *pos);

/* First and last position (in order o) of the events of an item. */
void vw_item_span(const vw_index *idx, vw_order o, uint32_t item, uint64_t *first, uint64_t *last);

#endif
