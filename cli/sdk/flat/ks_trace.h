/* <kscope/ks_trace.h> - reading traces (ks_trace_load, ks_trace_destroy and the accessors):
 * a flat name for <kscope/trace/ks_trace.h>, installed beside <kscope/kscope.h> (the nested
 * name keeps working). No guard of its own: it forwards. */
#include "trace/ks_trace.h"
