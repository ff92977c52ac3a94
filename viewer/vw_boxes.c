#include "vw_boxes.h"

#include "vw_plane.h"

int vw_item_boxes(const ks_trace *tr, const vw_index *idx, uint32_t item, vw_box *boxes, int max)
{
    if (item >= idx->nitems) return 0;
    const vw_item *it = &idx->items[item];
    int n = 0;
    for (uint32_t k = 0; k < it->count && n < max; ++k) {
        const uint32_t id = vw_item_ev(idx, it, k);
        const ks_event *e = vw_event(tr, id);
        if (e->kind != KS_EV_REGION || e->tensor >= tr->ntensors || e->site >= tr->nsites) continue;
        const ks_ev_region *g = &e->u.region;
        boxes[n++] = (vw_box){.y0 = g->y0,
                              .x0 = g->x0,
                              .y1 = g->y1,
                              .x1 = g->x1,
                              .rows = g->rows,
                              .cols = g->cols,
                              .plane = g->plane,
                              .dim = (e->flags & KS_FLAG_GUIDE) != 0,
                              .tensor = e->tensor,
                              .site = e->site,
                              .tap = e->tap,
                              .event = id};
    }
    return n;
}

int vw_point_target(const ks_trace *tr, const vw_box *b, int n, int k, int to, double *ty, double *tx)
{
    if (k < 0 || k >= n || !vw_box_is_point(&b[k]) || to < 0 || to >= tr->ntensors || to == b[k].tensor) return 0;
    const vw_plane_dims a = vw_plane_dims_of(&tr->tensors[b[k].tensor]), c = vw_plane_dims_of(&tr->tensors[to]);
    if (a.h != c.h || a.w != c.w || a.planes != c.planes) return 0;
    for (int j = 0; j < n; ++j)
        if (vw_box_is_point(&b[j]) && b[j].tensor == to && b[j].plane == b[k].plane) {
            *ty = b[j].y0;
            *tx = b[j].x0;
            return 1;
        }
    return 0;
}
