#include "vw_boxes.h"

int vw_item_boxes(const ks_trace *tr, const vw_index *idx, uint32_t item, vw_box *boxes, int max)
{
    if (item >= idx->nitems) return 0;
    const vw_item *it = &idx->items[item];
    int n = 0;
    for (uint32_t k = 0; k < it->count && n < max; ++k) {
        const ks_event *e = &tr->events[idx->by_item[it->first + k]];
        if (e->kind != KS_EV_REGION || e->tensor >= tr->ntensors || e->site >= tr->nsites) continue;
        const ks_ev_region *g = &e->u.region;
        boxes[n++] = (vw_box){.y0 = g->y0, .x0 = g->x0, .y1 = g->y1, .x1 = g->x1, .rows = g->rows, .cols = g->cols,
                              .plane = g->plane, .dim = (e->flags & KS_FLAG_GUIDE) != 0, .tensor = e->tensor,
                              .site = e->site};
    }
    return n;
}
