/* <kscope/ks_probe.h> - the probes (KS_PROBE, ks_probe_work/read/write/sample/box): a
 * flat name for <kscope/kernels/core/ks_probe.h>, installed beside <kscope/kscope.h>
 * (the nested name keeps working). No guard of its own: it forwards. */
#include "kernels/core/ks_probe.h"
