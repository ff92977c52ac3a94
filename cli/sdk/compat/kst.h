/* <kscope/trace/kst.h> - KernelScope 0.3's name for reading traces, kept for 0.4 and to be
 * removed in 0.5: the public trace API is <kscope/ks_trace.h> (an opaque ks_trace with
 * ks_trace_load / ks_trace_destroy; docs/your-own-kernel.md lists what changed). No guard
 * of its own: it forwards. */
#include "ks_trace.h"
