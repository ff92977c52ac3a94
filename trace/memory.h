/* memory.h - what a trace's accesses cost a GPU's memory system (`kscope memory`).
 *
 * A warp (32 consecutive threads of a block) issues one memory instruction for all its
 * threads at once: one *request*. The accesses of one request are the events of one site
 * with the same (block, warp = thread / 32, grid-stride iteration, tap); a bilinear sample
 * is four requests, one per corner it reads (corner validity and the clamp rule from its
 * flags). The memory system moves 32-byte *sectors* (of 128-byte lines): a request costs
 * the distinct sectors its addresses fall in, against the ideal of its distinct bytes / 32
 * rounded up. Addresses are element offsets times the element size from a 256-byte aligned
 * base (cudaMalloc's alignment). Padding reads touch no memory. Atomic writes count like
 * stores. The numbers depend only on the events, so the simulator's trace and the GPU's
 * trace of the same launch give the same numbers. */
#ifndef KS_MEMORY_H
#define KS_MEMORY_H

#include <stdint.h>

#include "kst.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_MEM_WORST 8 /* the costliest requests kept per site */

typedef struct ks_mem_request {
    uint32_t block, warp, iter;
    uint16_t tap;
    uint8_t corner;   /* a sample's corner 0..3, else 0 */
    uint32_t lanes;   /* accesses in it */
    uint32_t sectors; /* distinct 32-byte sectors */
    uint32_t ideal;   /* ceil(distinct bytes / 32) */
} ks_mem_request;

typedef struct ks_mem_site {
    int site; /* in the trace's schema */
    uint64_t requests, accesses, sectors, lines, ideal;
    int atomic; /* some of its writes are atomic */
    int nworst;
    ks_mem_request worst[KS_MEM_WORST]; /* the most sectors, then the lowest (block, warp, iter) */
} ks_mem_site;

typedef struct ks_mem_report {
    int nsites; /* the read, sample and write sites with accesses, in schema order */
    ks_mem_site sites[KS_MAX_SITES];
} ks_mem_report;

/* Counts every memory site of tr. KS_OK, or KS_ENOMEM / KS_EINVAL (an event that does not
 * match the schema; `kscope check` says more). */
int ks_memory_analyze(const ks_trace *tr, ks_mem_report *rep);
/* The sectors a sample event's corner `c` (0..3: (y0,x0) (y0,x1) (y1,x0) (y1,x1)) reads:
 * its element offset in tensor t, or -1 when the corner reads nothing (invalid). */
int64_t ks_memory_corner(const ks_trace *tr, const ks_event *e, int c);

/* One access of a request: the event, its lane (thread % 32), the sample corner (0 for
 * reads and writes), its element offset in the event's tensor and its byte address. */
typedef struct ks_mem_access {
    uint64_t event; /* into tr->events */
    uint32_t lane;
    uint8_t corner;
    int64_t offset;
    uint64_t byte;
} ks_mem_access;

/* The request event e (an access: read, write or sample) belongs to, for a sample the one
 * of its corner `corner` (0..3; ignored otherwise): its accesses in acc[0..max) in thread
 * order (then event order), and its counts in *req (as ks_memory_analyze counts them).
 * Returns the number of accesses (only the first max are stored: pass at least 32 for a
 * warp of single accesses), 0 when e touches no memory (padding, an invalid corner, a
 * work or region event), or -1 when out of memory. One scan of the events. */
int64_t ks_memory_request(const ks_trace *tr, const ks_event *e, int corner, ks_mem_access *acc, int64_t max,
                          ks_mem_request *req);

/* Calls fn once per request of every memory site (sites in schema order, requests in
 * (block, warp, iter, tap, corner) order) with its site, counts and accesses sorted by
 * byte address, then by event (the same order whatever the sort); fn returns 0 to go on. KS_OK, KS_ENOMEM or KS_EINVAL as
 * ks_memory_analyze; the sum of the requests' counts equals its report. */
typedef int (*ks_mem_request_fn)(void *ctx, int site, const ks_mem_request *req, const ks_mem_access *acc, uint32_t n);
int ks_memory_each_request(const ks_trace *tr, ks_mem_request_fn fn, void *ctx);
/* Tests only: the quicksort levels ks_memory_each_request's sort takes before it turns
 * to heapsort (-1, the default: 2 log2 n). */
extern int ks_memory_sort_depth;

#ifdef __cplusplus
}
#endif

#endif
