/* vw_warp.h - the warp strip's model: the warp request (trace/memory.h) the focused event
 * belongs to, its lanes' byte addresses and the sectors and lines they fall in, and the
 * strip's address axis. Pure C, no SDL: the tests check it against kscope memory.
 *
 * A request is the events of one site with the same block, warp (thread / 32),
 * grid-stride iteration and tap; a bilinear sample is four requests, one per corner: the
 * strip shows the focused sample's first valid corner and says which. The axis puts the
 * request's 128-byte lines side by side in address order, a gap marking where lines are
 * not adjacent, so a strided request (lines far apart) still shows every sector. */
#ifndef VW_WARP_H
#define VW_WARP_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/memory.h"
#include "vw_layout.h"

#define VW_WARP_MAX 256 /* accesses kept (a request of single accesses has at most 32) */

typedef struct vw_warp {
    int ok;                         /* the event touches memory (not padding, work or region) */
    uint32_t event;                 /* the event it was built for */
    int site, sample, corner, elem; /* elem: bytes per element */
    ks_mem_request req;             /* lanes (accesses), sectors, ideal, and the key */
    int nacc;                       /* accesses kept, in lane order: min(req.lanes, VW_WARP_MAX) */
    ks_mem_access acc[VW_WARP_MAX];
    uint32_t sector[VW_WARP_MAX]; /* per kept access: its sector's rank among the request's sectors */
    int nlines;
    uint64_t line[VW_WARP_MAX]; /* the distinct 128-byte lines (byte / 128), ascending */
} vw_warp;

/* The event the strip shows for the focus: the focused event when it touches memory,
 * else (a work event, a padding read, a region) the focused work item's first event that
 * does; VW_NONE when there is none. Sets *own to whether it is the focused event. */
struct vw_state;
uint32_t vw_warp_event(const struct vw_state *s, int *own);

/* The request of event ev of tr (for a sample: its first valid corner). 0, or -1 when out
 * of memory; w->ok = 0 for an event that touches no memory. One scan of the events. */
int vw_warp_build(const ks_trace *tr, uint32_t ev, vw_warp *w);
/* "warp 1 of block 0, site im2col.read_input, tap 4: 32 lanes, 8 sectors (ideal 4)"
 * (", corner 2" after the tap for a sample), or that there is none. */
void vw_warp_text(const ks_trace *tr, const vw_warp *w, char *buf, size_t n);
/* Where byte address b (inside one of the request's lines, or just past its end) sits on an axis `width` wide
 * (0 .. width); the axis gives every line 128 units and a gap of 32 between lines that
 * are not adjacent. -1 for a byte outside the request's lines. */
double vw_warp_axis(const vw_warp *w, uint64_t b, double width);
/* The colour (0xRRGGBB) of the request's k-th sector: eight colours in turn, none of them
 * the focus cyan. */
uint32_t vw_warp_color(uint32_t k);

/* The strip's parts in its area (vw_strip_area): the row of 32 lane boxes and the
 * address axis under it; lane k's box. */
void vw_strip_parts(vw_rect area, int line, vw_rect *lanes, vw_rect *axis);
vw_rect vw_strip_lane(vw_rect lanes, int k);

#endif
