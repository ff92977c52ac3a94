/* patchify_op.h - the registry entry `patchify`. */
#ifndef KS_PATCHIFY_OP_H
#define KS_PATCHIFY_OP_H

#include "../registry.h"

extern const ks_op ks_op_patchify;

#endif
