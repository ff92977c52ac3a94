#include "vw_anchor.h"

#include <string.h>

int vw_sample_anchor(const ks_trace *tr, const vw_index *idx, uint32_t item, const ks_event *s, float *ay, float *ax)
{
    float d[2];
    int found = 0;
    if (s->kind != KS_EV_SAMPLE || item >= idx->nitems) return 0;
    const vw_item *it = &idx->items[item];
    for (uint32_t k = 0; k < it->count && found < 2; ++k) {
        const ks_event *e = vw_event(tr, vw_item_ev(idx, it, k));
        if (e->kind != KS_EV_READ || e->tap != s->tap || e->tensor >= tr->ntensors) continue;
        if (strcmp(tr->tensors[e->tensor].name, "offset")) continue;
        d[found++] = (float)ks_access_value(&e->u.access, e->flags);
    }
    if (found < 2) return 0;
    *ay = s->u.sample.y - d[0];
    *ax = s->u.sample.x - d[1];
    return 1;
}
