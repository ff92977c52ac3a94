/* check_shared.h - the shared-memory race, uninitialised-read and barrier checks of
 * ks_trace_check (check_shared.c). Internal to the trace library. */
#ifndef KS_CHECK_SHARED_H
#define KS_CHECK_SHARED_H

#include "check.h"

/* How a check records one violation (check.c's: kept lines and a count). */
typedef void (*ks_violation_fn)(ks_check_report *rep, uint64_t i, const ks_event *e, const char *fmt, ...);

/* Counts the shared accesses and barriers of tr into rep and records every race,
 * uninitialised read and divergent barrier through v. early_exit: a thread that ends
 * having passed fewer barriers than the others of its block is no divergence (a .cu
 * kernel's early return: exited threads count as arrived, as on sm_70 and later); threads
 * of one phase waiting at different lines still are. KS_OK or KS_ENOMEM. */
int ks_check_shared(const ks_trace *tr, ks_check_report *rep, ks_violation_fn v, int early_exit);

#endif
