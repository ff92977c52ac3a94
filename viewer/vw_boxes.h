/* vw_boxes.h - the regions a work item recorded (region events: RoIAlign's RoI with its
 * bins and the unshifted guide box, its argmax point, patchify's raw patch, any kernel's
 * ks_probe_box), for the overlay. Generic: read from the events alone. Continuous
 * coordinates, pixel centres at integers. No SDL. */
#ifndef VW_BOXES_H
#define VW_BOXES_H

#include "vw_index.h"

typedef struct vw_box {
    double y0, x0, y1, x1; /* corners, continuous coordinates */
    int rows, cols;        /* grid lines inside: bins (1, 1: none); 0, 0: a point (y0, x0) */
    int plane;             /* the plane of `tensor` it lies on */
    int dim;               /* a guide, drawn faintly (the box before the half-pixel shift) */
    int tensor;            /* the trace tensor it lies on */
    int site;              /* the site that recorded it: its name says what it is */
} vw_box;

/* The regions of work item `item`, in event order (at most max); 0 when it has none. */
int vw_item_boxes(const ks_trace *tr, const vw_index *idx, uint32_t item, vw_box *boxes, int max);

#endif
