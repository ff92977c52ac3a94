/* vw_boxes.h - the regions a work item recorded (region events: RoIAlign's RoI with its
 * bins and the unshifted guide box, its argmax point, patchify's raw patch, sparse
 * convolution's sites, any kernel's ks_probe_box / ks_probe_point), for the overlay.
 * Generic: read from the events alone. Continuous coordinates, pixel centres at integers.
 * No SDL. */
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
    int tap;               /* the event's tap (sparse convolution: the kernel offset k) */
    uint32_t event;        /* the region event (an id into tr->events) */
} vw_box;

/* The regions of work item `item`, in event order (at most max); 0 when it has none. */
int vw_item_boxes(const ks_trace *tr, const vw_index *idx, uint32_t item, vw_box *boxes, int max);

static inline int vw_box_is_point(const vw_box *b) { return b->rows == 0 && b->cols == 0; }

/* Where point b[k] leads: the first point among b[0..n) on tensor `to` (another tensor)
 * whose planes have the same size as those of b[k]'s tensor, on the same plane number.
 * Sparse convolution's pair: the input site (on in_sites) and the output site it feeds (on
 * out_sites); with planes of one size (submanifold) the viewer draws an arrow from the
 * input site to where the output site sits. 1 and (*ty, *tx) when there is one, else 0
 * (planes of different sizes: a strided convolution's output grid is not the input's). */
int vw_point_target(const ks_trace *tr, const vw_box *b, int n, int k, int to, double *ty, double *tx);

#endif
