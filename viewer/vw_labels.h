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
    /* cells its leader may cross (a sample's other corners: a weight label of a sample
     * at the image's corner has no way out but across them) */
    int npass;
    vw_rect pass[4];
    /* the cell the anchor names (w 0: just the point) and the side of it the label would
     * rather take (dx, dy in -1, 0, 1: a sample's top-left corner, up and left, away from
     * the sample): a label goes next to its cell before anywhere farther */
    vw_rect cell;
    int dx, dy;
    /* the grid its leader may run along (vw_route_leader: cells gcell pixels wide from
     * (gx, gy)); gcell 0: straight leaders only */
    double gx, gy, gcell;
} vw_label;

/* Whether the segment from (x0, y0) to (x1, y1) passes through r (inside its 2-pixel rim). */
int vw_segment_crosses(int x0, int y0, int x1, int y1, vw_rect r);
/* Where a's leader line meets its box: the box's point nearest the anchor. */
void vw_label_leader_end(const vw_label *a, int *x, int *y);

/* A leader from a's anchor to its box that crosses none of avoid[0..na) but those the
 * anchor lies in or a->pass names: straight where that is clear (2 points), else along
 * the grid lines of cells `cell` pixels wide starting at (ox, oy), which cross no cell:
 * to a corner of the anchor's cell, along a row line and a column line to the grid point
 * nearest the box, then to the box (VW_LEADER_PTS points). Writes the points to pts and
 * returns their count; 0 when no such path exists (pts: the straight one). */
#define VW_LEADER_PTS 5
int vw_route_leader(const vw_label *a, const vw_rect *avoid, int na, double ox, double oy, double cell,
                    int pts[VW_LEADER_PTS][2]);

/* Whether spot r for label l[k] lies no nearer another label's cell (l[j].cell, one of
 * l[0..n) but k's own) than k's own cell: a label beside another corner reads as that
 * corner's (issue 38 D3). Labels without a cell: 1. */
int vw_label_reads_as_own(const vw_label *l, int n, int k, vw_rect r);
/* How many of the placed l[0..n) do not (vw_label_reads_as_own of their boxes). */
int vw_labels_astray(const vw_label *l, int n);
/* How far placed label l's box lies from its anchor (ax, ay), in pixels along the farther
 * axis (0: the anchor lies at or within its box's edges). */
int vw_label_far(const vw_label *l);

/* Places l[0..n) in order, each on the first free spot: first the four spots touching
 * its anchor (right-below, right-above, left-below, left-above, `gap` pixels off), or
 * with a cell the spots around that cell `gap` pixels off it, its preferred side first
 * (with a short leader line); then the free spot of a grid over `bounds` nearest the
 * anchor's cell (with a leader line), a quarter of a label apart, so a near spot wins
 * over one lined up with the others (issue 38 D3): one a straight leader reaches, else
 * one a leader along the grid lines reaches (gcell), else the nearest. A spot is
 * free when it lies inside bounds and overlaps no earlier label and none of
 * avoid[0..navoid) (the markers), and a leader to it crosses none of avoid but those
 * holding the anchor or lying in the label's pass cells (issue 38 D3: a leader never
 * runs over a cell the step names); where no spot has such a leader, the nearest free
 * spot whatever its leader crosses. A spot nearer another label's cell than its own
 * (vw_label_reads_as_own) is taken only where no other is free, and no spot lies on an
 * earlier label's leader or puts its own leader across an earlier label (issue 38 D3).
 * Returns how many labels found no free spot (they sit on their first spot,
 * overlapping): 0 when every label has room. */
int vw_place_labels(vw_label *l, int n, vw_rect bounds, const vw_rect *avoid, int navoid, int gap);

#endif
