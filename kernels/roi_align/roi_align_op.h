/* roi_align_op.h - the registry entry `roi_align`. */
#ifndef KS_ROI_ALIGN_OP_H
#define KS_ROI_ALIGN_OP_H

#include "../registry.h"

extern const ks_op ks_op_roi_align;

#endif
