/* deform_op.h - the registry entries `deform_conv` (the layer, forward and backward) and
 * `deform_im2col` (the sampling step alone, what a lesson traces). */
#ifndef KS_DEFORM_OP_H
#define KS_DEFORM_OP_H

#include "../registry.h"

extern const ks_op ks_op_deform_conv;
extern const ks_op ks_op_deform_im2col;

#endif
