/* ops.h - declares every descriptor listed in ops.def. */
#ifndef KS_OPS_H
#define KS_OPS_H

#include "registry.h"

#define KS_OP(name) extern const ks_op ks_op_##name;
#include "ops.def"
#undef KS_OP

#endif
