/* vw_follow.c - what the panels show while they follow the focus (F): the tensor and
 * plane of the focused event, else of what its work item reads (input side) and writes
 * (output side), with the tensors the item only has regions on first (see vw_state.h). */
#include "vw_state.h"

#include "vw_plane.h"

static int valid_tensor(const ks_trace *tr, const ks_event *e)
{
    /* regions are overlays (vw_boxes), not accesses to focus */
    return (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE || e->kind == KS_EV_SAMPLE) && e->tensor < tr->ntensors;
}

static int64_t event_plane(const ks_event *e)
{
    return e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane;
}

/* The focused item's region-only tensors: those it has region events on but neither reads
 * nor writes (sparse convolution's site maps, where the item's sites are points), in the
 * order of the trace's tensors; a region on a tensor the item reads or writes (RoIAlign's
 * RoI on its input) leaves that tensor to the read/write rule. At most two are kept, each
 * as its first region event, or the focused event when that is one of its regions. */
static int region_only(const vw_state *s, uint32_t it, const ks_event *focus, const ks_event *regions[2])
{
    const ks_trace *tr = s->tr;
    const vw_item *item = &s->idx->items[it];
    uint8_t touched[KS_MAX_TENSORS] = {0}; /* bit 0: region, bit 1: read or write */
    const ks_event *first[KS_MAX_TENSORS] = {0};
    for (uint32_t k = 0; k < item->count; ++k) {
        const ks_event *f = vw_event(tr, vw_item_ev(s->idx, item, k));
        if (f->tensor >= tr->ntensors || f->tensor >= KS_MAX_TENSORS) continue;
        if (f->kind == KS_EV_REGION) {
            touched[f->tensor] |= 1;
            if (!first[f->tensor]) first[f->tensor] = f;
        } else if (valid_tensor(tr, f)) {
            touched[f->tensor] |= 2;
        }
    }
    if (focus->kind == KS_EV_REGION && focus->tensor < KS_MAX_TENSORS) first[focus->tensor] = focus;
    int n = 0;
    for (int t = 0; t < tr->ntensors && t < KS_MAX_TENSORS && n < 2; ++t)
        if (touched[t] == 1) regions[n++] = first[t];
    return n;
}

static int64_t region_plane(const ks_event *e) { return e->kind == KS_EV_REGION ? e->u.region.plane : event_plane(e); }

/* Panels follow the focused event: the input side shows what it reads, the output side
 * what it writes; a work event looks ahead into its item. Tensors the item only has
 * regions on come first (the first on the input side, the second on the output side):
 * they are the picture of what the item works on. */
void vw_follow_focus(vw_state *s)
{
    const ks_trace *tr = s->tr;
    uint32_t ev = vw_state_event(s);
    if (!s->follow || ev == VW_NONE) return;
    const ks_event *e = vw_event(tr, ev);
    const ks_event *cand[2] = {NULL, NULL};
    if (valid_tensor(tr, e)) cand[e->kind == KS_EV_WRITE] = e;
    uint32_t it = vw_state_item(s);
    if (it != VW_NONE) {
        const ks_event *reg[2];
        const int nreg = region_only(s, it, e, reg);
        for (int r = 0; r < nreg; ++r) {
            /* a focused read or write keeps its side: the focused event stays in view */
            int side = nreg == 2 ? r : 0;
            if (!cand[side]) cand[side] = reg[r];
        }
        const vw_item *item = &s->idx->items[it];
        /* both sides regions: the input side takes the output side's plane when the item
         * has a region there too (a 3-D sparse site's slice: the in-slice pairs show), unless
         * the focused region is on the input side: it stays in view */
        for (uint32_t k = 0; nreg == 2 && cand[0] == reg[0] && cand[1] == reg[1] && reg[0] != e && k < item->count;
             ++k) {
            const ks_event *f = vw_event(tr, vw_item_ev(s->idx, item, k));
            if (f->kind == KS_EV_REGION && f->tensor == reg[0]->tensor && f->u.region.plane == reg[1]->u.region.plane) {
                cand[0] = f;
                break;
            }
        }
        for (uint32_t k = 0; k < item->count && !(cand[0] && cand[1]); ++k) {
            const ks_event *f = vw_event(tr, vw_item_ev(s->idx, item, k));
            if (valid_tensor(tr, f) && !cand[f->kind == KS_EV_WRITE]) cand[f->kind == KS_EV_WRITE] = f;
        }
    }
    for (int p = 0; p < 2; ++p) {
        if (!cand[p]) continue;
        vw_plane_dims d = vw_plane_dims_of(&tr->tensors[cand[p]->tensor]);
        int64_t plane = region_plane(cand[p]);
        /* a plane the event names outside its tensor (a crafted or buggy trace) is not
         * followed; a switch of tensor starts at plane 0, never at the old tensor's plane */
        if (s->panel[p].tensor != cand[p]->tensor) s->panel[p].plane = 0;
        s->panel[p].tensor = cand[p]->tensor;
        if (plane >= 0 && plane < d.planes) s->panel[p].plane = plane;
    }
    vw_state_clamp(s);
}
