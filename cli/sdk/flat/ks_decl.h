/* <kscope/ks_decl.h> - KS_DECLARE, a kernel's tensors and sites declared once: a flat name
 * for <kscope/kernels/core/ks_decl.h>, installed beside <kscope/kscope.h> (the nested name
 * keeps working). No guard of its own: it forwards. */
#include "kernels/core/ks_decl.h"
