/* perfetto.h - the schedule a trace recorded (`kscope run --schedule`: each block's SM,
 * start and end) as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open: one process, one track (thread) per SM, one complete event
 * ("ph": "X") per block, ts and dur in microseconds from the first block's start (the
 * simulator's virtual clock: one tick each), "otherData" naming the clock. */
#ifndef KS_PERFETTO_H
#define KS_PERFETTO_H

#include "kst.h"

/* Writes the JSON to path (whole or not at all). KS_EINVAL when the trace has no
 * schedule tensor. */
int ks_trace_export_perfetto(const ks_trace *tr, const char *path);

#endif
