/* conv2d_op.h - the registry entry of conv2d (im2col + GEMM). */
#ifndef KS_CONV2D_OP_H
#define KS_CONV2D_OP_H

#include "../registry.h"

extern const ks_op ks_op_conv2d;

#endif
