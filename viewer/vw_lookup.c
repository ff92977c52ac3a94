/* vw_lookup.c - reverse lookup by a scan of the events (see vw_lookup.h). */
#include "vw_lookup.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

static int add(vw_lookup *lk, uint64_t *cap, uint32_t ev, float w)
{
    lk->total++;
    if (lk->n >= VW_LOOKUP_MAX) return KS_OK;
    if (lk->n == *cap) {
        uint64_t grown = *cap ? *cap * 2 : 64;
        vw_hit *h = realloc(lk->hits, grown * sizeof *h);
        if (!h) return ks_fail(KS_ENOMEM, "out of memory for the lookup");
        lk->hits = h;
        *cap = grown;
    }
    lk->hits[lk->n].event = ev;
    lk->hits[lk->n].weight = w;
    lk->n++;
    return KS_OK;
}

int vw_lookup_run(vw_lookup *lk, const ks_trace *tr, int tensor, int64_t plane, int64_t y, int64_t x, int writes)
{
    vw_lookup_free(lk);
    lk->tensor = tensor;
    lk->plane = plane;
    lk->y = y;
    lk->x = x;
    lk->writes = writes;
    uint64_t cap = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = vw_event(tr, i);
        int rc = KS_OK;
        if (e->tensor != tensor) continue;
        if (e->kind == (writes ? KS_EV_WRITE : KS_EV_READ)) {
            const ks_ev_access *a = &e->u.access;
            if (!(e->flags & KS_FLAG_PADDING) && a->plane == plane && a->y == y && a->x == x)
                rc = add(lk, &cap, (uint32_t)i, 1.0f);
        } else if (!writes && e->kind == KS_EV_SAMPLE && e->u.sample.plane == plane) {
            int64_t ys[2], xs[2];
            vw_sample_corners(e, ys, xs);
            float w = 0;
            int hit = 0;
            for (int c = 0; c < 4; ++c)
                if ((e->flags & (KS_FLAG_C00 << c)) && ys[c >> 1] == y && xs[c & 1] == x && e->u.sample.w[c] != 0) {
                    w += e->u.sample.w[c]; /* clamped corners can coincide: their weights add */
                    hit = 1;
                }
            if (hit) rc = add(lk, &cap, (uint32_t)i, w);
        }
        if (rc) {
            vw_lookup_free(lk);
            return rc;
        }
    }
    return KS_OK;
}

void vw_lookup_free(vw_lookup *lk)
{
    free(lk->hits);
    memset(lk, 0, sizeof *lk);
    lk->tensor = -1;
}
