/* vw_story.c - showing a slide: the viewer state a lesson step asks for. */
#include <string.h>

#include "vw_describe.h"
#include "vw_live.h"
#include "vw_phase.h"
#include "vw_state.h"

void vw_story_set(vw_state *s, const vw_slide *slides, int n)
{
    s->story_tr = s->tr;
    s->story_idx = s->idx;
    s->slides = slides;
    s->nslides = n;
    s->slide = 0;
    if (n) vw_story_show(s, 0);
}

/* Shows trace tr (index idx) when it is not the one shown: what pointed into the old one
 * goes (position, lookup, hover, zoom, schedule chart), the panels follow the new focus
 * until the slide places them, and live parameters start from the new trace. */
static void show_trace(vw_state *s, const ks_trace *tr, const vw_index *idx)
{
    if (!tr || !idx || (s->tr == tr && s->idx == idx)) return;
    s->tr = tr;
    s->idx = idx;
    s->pos = 0;
    s->hover = 0;
    vw_lookup_free(&s->look);
    s->look.tensor = -1;
    const int gantt = s->gantt;
    vw_gantt_free(&s->sched);
    s->gantt = 0;
    if (gantt && !vw_gantt_build(&s->sched, tr)) s->gantt = s->sched.ok;
    s->shared = vw_shared_tensor(tr) >= 0;
    vw_view_reset(s);
    for (int p = 0; p < 2; ++p) s->panel[p].plane = 0;
    s->follow = 1;
    if (s->live && s->live->at < 0) { /* D goes back to this slide's trace */
        const char *dir = s->live->dir;
        vw_live_free(s->live);
        if (vw_live_init(s->live, tr)) s->live = NULL;
        else s->live->dir = dir;
    }
    vw_state_clamp(s);
    vw_follow_focus(s);
}

void vw_story_show(vw_state *s, int k)
{
    if (!s->nslides) return;
    if (k < 0) k = 0;
    if (k >= s->nslides) k = s->nslides - 1;
    const vw_slide *sl = &s->slides[k];
    s->slide = k;
    s->reveal = 0;
    s->playing = 0;
    if (!s->live || s->live->at < 0)
        show_trace(s, sl->trace ? sl->trace : s->story_tr, sl->trace ? sl->index : s->story_idx);
    /* panels first: with explicit panels the focus must not move them */
    if (sl->panel[0] >= 0 || sl->panel[1] >= 0) s->follow = 0;
    for (int p = 0; p < 2; ++p)
        if (sl->panel[p] >= 0 && sl->panel[p] < s->tr->ntensors) {
            s->panel[p].tensor = sl->panel[p];
            s->panel[p].plane = 0;
        }
    /* a slide's mode applies to both panels; a per-panel mode on top of it */
    if (sl->mode >= 0 && sl->mode < VW_NMODES) {
        s->mode = (vw_mode)sl->mode;
        s->panel[0].mode = s->panel[1].mode = -1;
    }
    for (int p = 0; p < 2; ++p)
        if (sl->panel_mode[p] > 0 && sl->panel_mode[p] <= VW_NMODES) s->panel[p].mode = sl->panel_mode[p] - 1;
    vw_focus_event(s, sl->event);
    /* show the planes the focused event touches on the chosen panels: the focused event's
     * own plane where it lies on the panel's tensor (lesson 04's channel-1 tap shows
     * weight[1, 1], not the item's first weight plane), else the item's first access there */
    uint32_t it = vw_state_item(s), ev = vw_state_event(s);
    if (it != VW_NONE && !s->follow) {
        const vw_item *item = &s->idx->items[it];
        for (int p = 0; p < 2; ++p)
            for (uint32_t j = 0; j <= item->count; ++j) {
                const uint32_t id = j ? s->idx->by_item[item->first + j - 1] : ev;
                if (id == VW_NONE) continue;
                const ks_event *e = vw_event(s->tr, id);
                if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE || e->kind == KS_EV_SAMPLE) &&
                    e->tensor == s->panel[p].tensor) {
                    s->panel[p].plane = e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane;
                    break;
                }
            }
    }
    if (sl->look_tensor >= 0) {
        vw_lookup_run(&s->look, s->tr, sl->look_tensor, sl->look_plane, sl->look_y, sl->look_x, sl->look_writes);
        for (int p = 0; p < 2; ++p)
            if (s->panel[p].tensor == sl->look_tensor) s->panel[p].plane = sl->look_plane;
    } else {
        vw_lookup_free(&s->look);
        s->look.tensor = -1;
    }
    vw_state_clamp(s);
}

int vw_story_hides(const vw_state *s, int p)
{
    if (!s->nslides || s->reveal || p < 0 || p > 1 || s->panel[p].tensor < 0) return 0;
    const vw_slide *sl = &s->slides[s->slide];
    for (int i = 0; i < sl->nhide && i < 2; ++i)
        if (sl->hide[i] == s->panel[p].tensor) return 1;
    return 0;
}

/* The decomposition lines the slides need whole at `cols` columns (their most): each
 * slide's focus in its trace, as vw_story_show will show it, plus its lookup's line. */
static int decomp_lines_needed(const vw_state *s, int cols)
{
    static vw_state tmp;
    int most = 0;
    for (int k = 0; k < s->nslides; ++k) {
        const vw_slide *sl = &s->slides[k];
        memset(&tmp, 0, sizeof tmp);
        tmp.tr = sl->trace ? sl->trace : s->story_tr;
        tmp.idx = sl->trace ? sl->index : s->story_idx;
        if (!tmp.tr || !tmp.idx || sl->event == VW_NONE || sl->event >= tmp.tr->nevents) continue;
        tmp.order = VW_ORDER_RECORDED;
        tmp.pos = vw_order_pos(tmp.idx, VW_ORDER_RECORDED, sl->event);
        tmp.look.tensor = -1;
        tmp.slides = s->slides, tmp.nslides = s->nslides, tmp.slide = k;
        const int n = vw_describe_focus_needed(&tmp, cols) + (sl->look_tensor >= 0);
        if (n > most) most = n;
    }
    return most;
}

void vw_layout_for_state(vw_layout *L, const vw_state *s, int advance, int line, int w, int h)
{
    static vw_lines lines;
    const int adv = advance > 0 ? advance : 8, ww = w < VW_MIN_W ? VW_MIN_W : w;
    /* the columns vw_draw_frame and draw_story wrap at: the bars' and band's insides */
    const int title = vw_describe_title_lines(s, (ww - 12) / adv, &lines);
    int story = 0, decomp = 0;
    if (s->nslides) {
        story = vw_story_lines_needed(s->slides, s->nslides, (ww - 32) / adv);
        if (story < 4) story = 4;
        decomp = decomp_lines_needed(s, (vw_layout_decomp_width(ww, 1) - 8) / adv);
    }
    vw_layout_compute_slides(L, w, h, line, story, title, decomp);
}
