/* im2col_op.h - the registry entries of im2col and col2im. */
#ifndef KS_IM2COL_OP_H
#define KS_IM2COL_OP_H

#include "../registry.h"

extern const ks_op ks_op_im2col;
extern const ks_op ks_op_col2im;

#endif
