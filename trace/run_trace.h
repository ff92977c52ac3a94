/* run_trace.h - a finished traced run (kernels/registry.h) as a ks_trace, ready to write. */
#ifndef KS_RUN_TRACE_H
#define KS_RUN_TRACE_H

#include "../kernels/registry.h"
#include "kst.h"

/* Fills tr from op and r (r->sink must be set); tr borrows r's tensors and events. */
void ks_trace_from_run(const ks_op *op, const ks_run *r, ks_trace *tr);

#endif
