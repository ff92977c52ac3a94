/* vw_plane.h - a tensor seen as planes of its last two dimensions, the way events
 * address it: (plane, y, x) with offset (plane * h + y) * w + x. A 1-D tensor is one
 * plane of one row; a 0-D tensor one plane of one element. */
#ifndef VW_PLANE_H
#define VW_PLANE_H

#include <stdint.h>

#include "../kernels/core/ks_schema.h"

typedef struct vw_plane_dims {
    int64_t planes, h, w;
} vw_plane_dims;

static inline vw_plane_dims vw_plane_dims_of(const ks_tensor *t)
{
    vw_plane_dims d = {.planes = 1, .h = 1, .w = 1};
    if (t->ndim >= 1) d.w = t->shape[t->ndim - 1];
    if (t->ndim >= 2) d.h = t->shape[t->ndim - 2];
    for (int i = 0; i + 2 < t->ndim; ++i) d.planes *= t->shape[i];
    if (d.h <= 0 || d.w <= 0) d.planes = 0;
    return d;
}

/* The value of element (plane, y, x) as a double (f32, i32 or i64 tensors). */
static inline double vw_tensor_value(const ks_tensor *t, int64_t offset) { return ks_tensor_value(t, offset); }

/* An integer tensor's negative element is an empty cell: index maps mark "nothing here"
 * with -1 (no site at this position, no pair, a free hash slot), so the heatmap draws it
 * as background and leaves it out of the colour range. Float tensors have no empty cells. */
static inline int vw_cell_empty(const ks_tensor *t, int64_t offset)
{
    return t->dtype != KS_F32 && t->dtype != KS_F64 && ks_tensor_value(t, offset) < 0;
}

#endif
