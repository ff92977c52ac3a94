/* <kscope/ks_variants.h> - a body compiled in every variant (#define KS_BODY first): a
 * flat name for <kscope/kernels/core/ks_variants.h>, installed beside <kscope/kscope.h>
 * (the nested name keeps working). No guard of its own: it forwards. */
#include "kernels/core/ks_variants.h"
