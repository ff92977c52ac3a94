/* vw_boxes.h - the boxes an operator's work item covers on its input, for the overlay:
 * RoIAlign's RoI (scaled, with aligned's half-pixel shift, and the unshifted box dimmed
 * when they differ) divided into its PH x PW bins; patchify's raw patch (D x D pixels
 * around the point). Read from the trace's tensors and parameters; other operators have
 * none. Continuous coordinates, pixel centres at integers. No SDL. */
#ifndef VW_BOXES_H
#define VW_BOXES_H

#include "vw_index.h"

typedef struct vw_box {
    double y0, x0, y1, x1; /* corners, continuous coordinates */
    int rows, cols;        /* grid lines inside: bins (1, 1: none); 0, 0: a point (y0, x0),
                              RoIAlign max mode's argmax */
    int plane;             /* the input plane it lies on */
    int dim;               /* a reference outline (the box before the half-pixel shift) */
} vw_box;

/* The boxes of work item `item` (at most max); 0 when the operator has none. */
int vw_item_boxes(const ks_trace *tr, const vw_index *idx, uint32_t item, vw_box *boxes, int max);

#endif
