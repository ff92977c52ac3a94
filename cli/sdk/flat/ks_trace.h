/* <kscope/ks_trace.h> - reading traces (ks_trace_open, ks_trace_close): a flat name for
 * <kscope/trace/kst.h>, installed beside <kscope/kscope.h> (the nested name keeps
 * working). No guard of its own: it forwards. */
#include "trace/kst.h"
