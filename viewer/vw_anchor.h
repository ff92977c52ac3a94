/* vw_anchor.h - where a deformable sample would have been without its offset.
 * Generic over traces: a sample whose work item read (dy, dx) from a tensor named
 * "offset" at the same tap (the first two such reads, in event order) is anchored at
 * (y - dy, x - dx), the regular kernel-grid position; the viewer draws the kernel grid
 * there and an arrow to the sample. No SDL. */
#ifndef VW_ANCHOR_H
#define VW_ANCHOR_H

#include "vw_index.h"

/* 1 and (ay, ax) when sample event `s` of work item `item` has an anchor, else 0. */
int vw_sample_anchor(const ks_trace *tr, const vw_index *idx, uint32_t item, const ks_event *s, float *ay, float *ax);

#endif
