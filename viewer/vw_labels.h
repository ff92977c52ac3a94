/* vw_labels.h - places text labels next to the points they name so that no two overlap:
 * a sample's corner weights (two clamped corners on one cell, four corners a cell
 * apart with labels wider than a cell). Pure (no SDL), tested in test_view_core. */
#ifndef VW_LABELS_H
#define VW_LABELS_H

#include "vw_layout.h"

typedef struct vw_label {
    int ax, ay;  /* the anchor: the screen point the label names */
    int w, h;    /* the label's size in pixels */
    vw_rect box; /* where it went (set by vw_place_labels) */
    int leader;  /* 1: placed away from its anchor, draw a line from the anchor to it */
} vw_label;

/* Places l[0..n) in order, each on the first free spot: first the four spots touching
 * its anchor (right-below, right-above, left-below, left-above, `gap` pixels off), then
 * the free spot of a grid over `bounds` nearest the anchor (with a leader line). A spot is
 * free when it lies inside bounds and overlaps no earlier label and none of
 * avoid[0..navoid) (the markers). Returns how many labels found no free spot (they sit
 * on their first spot, overlapping): 0 when every label has room. */
int vw_place_labels(vw_label *l, int n, vw_rect bounds, const vw_rect *avoid, int navoid, int gap);

#endif
