/* check.h - the invariants of DESIGN section 7, checked from the trace alone. */
#ifndef KS_CHECK_H
#define KS_CHECK_H

#include "kst.h"

#define KS_CHECK_KEEP 100 /* violation lines kept (kscope check --max N prints up to this) */
#define KS_CHECK_RULES 64 /* distinct rules counted (by their message's template) */

/* How many violations one rule produced: `rule` is its message template ("value is %g"). */
typedef struct ks_check_rule {
    const char *rule;
    uint64_t count;
} ks_check_rule;

typedef struct ks_check_report {
    uint64_t violations;
    char first[KS_CHECK_KEEP][256];      /* the first violations, one line each */
    ks_check_rule rules[KS_CHECK_RULES]; /* violations per rule, in order of first appearance */
    int nrules;
    uint64_t rules_other;          /* violations of rules past KS_CHECK_RULES */
    uint64_t by_kind[KS_EV_KINDS]; /* events per ks_event_kind */
    uint64_t padding_reads;
    uint64_t atomic_collisions; /* elements receiving more than one atomic add */
    uint64_t padding_inside;    /* padding reads recorded at in-bounds (y, x): a kernel
                                     * that refused its coordinate (patchify at NaN) */
    int complete;               /* no filter and no dropped events: counts are checked */
    /* block-shared memory and barriers (check_shared.c) */
    uint64_t shared_accesses, barriers;
    uint64_t shared_blocks;        /* blocks with shared accesses, and those judged for */
    uint64_t shared_blocks_judged; /* races and uninitialised reads (every thread recorded) */
    uint64_t shared_races;         /* slots touched by two threads of one phase, one writing */
    uint64_t shared_uninit;        /* reads of a slot nothing wrote before */
    uint64_t barrier_divergent;    /* barriers not reached alike by the threads of a block */
    /* .cu traces (check_cu.c) */
    uint64_t outside;         /* accesses outside every buffer */
    uint64_t global_races;    /* elements two threads touch unordered, one writing plainly */
    uint64_t unwritten_reads; /* reads of `empty:` elements nothing wrote before */
    uint64_t warp_mask;       /* warp collectives whose mask leaves out or names wrongly */
    uint64_t faults;          /* threads stopped: assert, trap, division by zero, ... */
} ks_check_report;

/* Checks every event: site and kind agree with the schema; the thread follows the
 * grid-stride loop (index == block*threads + thread + iter*blocks*threads) or the mapping
 * the params declare ("per-thread:N", "none"; a 2-D or 3-D launch over the params'
 * "work_shape": docs/trace-format.md); work fields
 * recompose to the index; reads/writes are in bounds, or padding reads marked as such,
 * with coordinates that recompose to the offset; read values equal the stored input;
 * plain stores equal the stored output; no NaN/Inf (a store of +-Inf by a work item that
 * read only padding is the max of an empty window: allowed); bilinear weights of in-range
 * samples sum to 1; each work item appears once; in a complete trace every work item appears and
 * every element of a written tensor is written the site's expected number of times.
 * Shared memory (events flagged KS_FLAG_SHARED, barrier events): no two threads of a block
 * touch one slot in one barrier phase with one of them writing (racecheck's hazards), no
 * read of a never-written slot (both judged only in blocks whose every thread with work
 * was recorded), no access outside its array, every thread of a block meets the same
 * barriers. These come first among the kept lines, earliest first: a race is the cause of
 * the wrong values the other rules see. A NaN read from shared memory is not reported
 * again as a NaN (it is the poison of an uninitialised slot, reported as such).
 * Returns KS_OK (violations may be > 0) or KS_ENOMEM. */
int ks_trace_check(const ks_trace *tr, ks_check_report *rep);

/* The checks of a .cu trace (variant "cuda-c": kscope run FILE.cu), which
 * ks_trace_check runs instead of the operator rules: every site, kind and thread in the
 * launch; accesses inside their buffer (an access outside every buffer is how a thread
 * stopped); shared-memory races, uninitialised shared reads and divergent barriers
 * (check_shared.c, a thread's early return allowed); global-memory races (two threads, not
 * ordered by a barrier of their block, touch an element and one of them stores to it
 * plainly; atomics among themselves and reads beside atomics are fine); reads of an
 * `empty:` buffer's element no write happened before; warp collectives whose mask leaves
 * out the calling lane or names lanes that did not take part; and every fault. Each line
 * names the thread as (x,y,z) of block (x,y,z) and the source line. */
int ks_check_cu(const ks_trace *tr, ks_check_report *rep);

/* Counts one violation of `rule` (its message template) in rep's per-rule summary; the
 * checks' violation functions call it. */
void ks_check_count_rule(ks_check_report *rep, const char *rule);
/* A rule's template for people: a number's conversion becomes "N", a string's "X"
 * ("value is %g" -> "value is N"). */
void ks_check_rule_text(const char *rule, char *buf, size_t n);

#endif
