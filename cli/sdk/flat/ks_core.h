/* <kscope/ks_core.h> - the body form (ks_thread, KS_FN, the atomics) and KS_DECLARE: a
 * flat name for <kscope/kernels/core/ks_core.h>, installed beside <kscope/kscope.h>
 * (the nested name keeps working). No guard of its own: it forwards. */
#include "kernels/core/ks_core.h"
