/* diff.h - two traces of the same work compared work item by work item (`kscope diff`).
 *
 * Traces are aligned by work item index, not by thread: a trace of another launch
 * configuration (threads, block cap, device) of the same work compares equal. Within a
 * work item the events are compared in order (seq): kind, site, tensor and tap exactly;
 * element offsets and coordinates exactly; values, sample coordinates and weights, and
 * region corners within `tol` relative (|a - b| <= tol * (1 + |a|)); the work event's
 * fields exactly. Block, thread and iteration are not compared. */
#ifndef KS_DIFF_H
#define KS_DIFF_H

#include <stdint.h>

#include "kst.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_DIFF_FIRST 64 /* the most differing work items a report lists */

/* A work item's events in one trace, in seq order (n == 0: not recorded there). */
typedef struct ks_diff_item {
    const ks_event *const *ev;
    uint64_t n;
} ks_diff_item;

typedef struct ks_diff {
    const ks_trace *a, *b;
    /* every event of each trace, sorted by (index, seq) */
    const ks_event **sorted[2];
    /* counts */
    uint64_t items[2];  /* work items recorded in a, in b */
    uint64_t compared;  /* work items in both */
    uint64_t differing; /* compared and not equal, or recorded on one side only */
    uint64_t only[2];   /* recorded in a only, in b only */
    uint64_t site_events[KS_MAX_SITES], site_differing[KS_MAX_SITES]; /* events compared per site */
    /* the first differing work items, ascending index, and where each first differs */
    int nfirst;
    int64_t first[KS_DIFF_FIRST];
    uint64_t first_event[KS_DIFF_FIRST]; /* position within the item of the first differing event */
} ks_diff;

/* KS_OK when a and b record the same work: the same sites (names, kinds, tensors, field
 * names) and the same tensors (names, dtypes, shapes); else KS_EINVAL with one line saying
 * what differs. Two .cu traces (kscope run FILE.cu) need only the same launch and the same
 * buffers by name: their sites are source lines, which two versions of a file number
 * apart, so their events are compared by kind, tensor name, element and value (a warp
 * collective by its operation, mask and result, a barrier by its phase), not by site. */
int ks_diff_compatible(const ks_trace *a, const ks_trace *b);
/* Compares a and b (compatible) into d; d holds sorted copies of the event pointers until
 * ks_diff_free. KS_OK or KS_ENOMEM. */
int ks_diff_run(ks_diff *d, const ks_trace *a, const ks_trace *b, double tol);
/* The same with each work item's events compared as a multiset (kscope diff --access-sets):
 * which elements a thread reads and writes, how often, with what values, in any order. Two
 * compilers may order a thread's independent loads differently (nvcc against the
 * simulator's clang); the set is what the index math decides. */
int ks_diff_run_sets(ks_diff *d, const ks_trace *a, const ks_trace *b, double tol);
/* Pointers to every event of tr in (work item index, seq) order, into *out (caller frees);
 * KS_OK or KS_ENOMEM. */
int ks_events_by_item(const ks_trace *tr, const ks_event ***out);
/* The events of work item `index` in trace side (0: a, 1: b). */
ks_diff_item ks_diff_find(const ks_diff *d, int side, int64_t index);
/* 1 when two events match under the rules above. */
int ks_diff_same_event(const ks_event *x, const ks_event *y, double tol);
void ks_diff_free(ks_diff *d);

#ifdef __cplusplus
}
#endif

#endif
