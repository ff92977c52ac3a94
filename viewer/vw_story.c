/* vw_story.c - showing a slide: the viewer state a lesson step asks for. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vw_describe.h"
#include "vw_live.h"
#include "vw_phase.h"
#include "vw_plane.h"
#include "vw_state.h"
#include "vw_view.h"

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

/* Puts back the right panel a shown answer took (answer_swap). */
static void unswap_answer(vw_state *s)
{
    if (!s->answer_swap) return;
    s->panel[1].tensor = s->answer_swap - 1;
    s->panel[1].plane = s->answer_plane;
    s->follow = s->answer_follow;
    s->answer_swap = 0;
}

void vw_story_show(vw_state *s, int k)
{
    if (!s->nslides) return;
    unswap_answer(s);
    if (k < 0) k = 0;
    if (k >= s->nslides) k = s->nslides - 1;
    const vw_slide *sl = &s->slides[k];
    s->slide = k;
    s->reveal = 0;
    s->playing = 0;
    if (!s->live || s->live->at < 0)
        show_trace(s, sl->trace ? sl->trace : s->story_tr, sl->trace ? sl->index : s->story_idx);
    /* a slide's decomposition panel is the step's work item: the shared-tile strip (U)
     * would take its room, and a heatmap panel shows the shared tensor where a step is
     * about it */
    s->shared = 0;
    s->strip = sl->strip == 1; /* a slide shows the warp strip where the step asks */
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
    if (sl->order > 0 && sl->order <= VW_NORDERS) s->order = (vw_order)(sl->order - 1);
    vw_focus_event(s, sl->event);
    /* show the planes the focused event touches on the chosen panels: the focused event's
     * own plane where it lies on the panel's tensor (lesson 04's channel-1 tap shows
     * weight[1, 1], not the item's first weight plane), else the item's first access there */
    uint32_t it = vw_state_item(s), ev = vw_state_event(s);
    if (it != VW_NONE && !s->follow) {
        const vw_item *item = &s->idx->items[it];
        for (int p = 0; p < 2; ++p)
            for (uint32_t j = 0; j <= item->count; ++j) {
                const uint32_t id = j ? vw_item_ev(s->idx, item, j - 1) : ev;
                if (id == VW_NONE) continue;
                const ks_event *e = vw_event(s->tr, id);
                if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE || e->kind == KS_EV_SAMPLE) &&
                    e->tensor == s->panel[p].tensor) {
                    s->panel[p].plane = e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane;
                    break;
                }
            }
    }
    for (int p = 0; p < 2; ++p) /* a plane the step names (one the item does not access) */
        if (sl->panel_plane[p] > 0) s->panel[p].plane = sl->panel_plane[p] - 1;
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

void vw_story_reveal(vw_state *s, int reveal)
{
    s->reveal = reveal;
    if (!s->nslides) return;
    const vw_slide *sl = &s->slides[s->slide];
    if (sl->strip) s->strip = sl->strip == 1 || reveal;
    if (!reveal) {
        unswap_answer(s);
        vw_state_clamp(s);
        return;
    }
    if (!sl->has_answer_cell || sl->answer_event >= s->tr->nevents) return;
    const ks_event *e = vw_event(s->tr, sl->answer_event);
    if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE && e->kind != KS_EV_SAMPLE) return;
    const int64_t plane = e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane;
    /* the answer's plane on the panel of its tensor; on the right panel when neither
     * shows it (issue 38 D12: an answer on a plane the slide does not show had no outline) */
    int p = s->panel[0].tensor == (int)e->tensor ? 0 : s->panel[1].tensor == (int)e->tensor ? 1 : -1;
    if (p < 0 && e->tensor < s->tr->ntensors) {
        p = 1;
        if (!s->answer_swap)
            s->answer_swap = s->panel[p].tensor + 1, s->answer_plane = s->panel[p].plane, s->answer_follow = s->follow;
        s->panel[p].tensor = (int)e->tensor;
        s->follow = 0;
    }
    if (p >= 0) s->panel[p].plane = plane;
    vw_state_clamp(s);
}

int vw_about_panel(const vw_state *s)
{
    const int about = s->nslides ? s->slides[s->slide].about - 1 : -1;
    for (int p = 0; p < 2 && about >= 0; ++p)
        if (s->panel[p].tensor == about) return p;
    return vw_focus_panel(s);
}

/* Whether the shown slide's question covers panel p (its "hide"), answered or not: the
 * layout sizes no picture there on the question slide or on its answer, so the answer
 * slide keeps the question's layout (nothing jumps). */
static int covered(const vw_state *s, int p)
{
    if (!s->nslides || p < 0 || p > 1 || s->panel[p].tensor < 0) return 0;
    const vw_slide *sl = &s->slides[s->slide];
    for (int i = 0; i < sl->nhide && i < 2; ++i)
        if (sl->hide[i] == s->panel[p].tensor) return 1;
    return 0;
}

int vw_story_covers(const vw_state *s, int p) { return covered(s, p); }

int vw_story_hides(const vw_state *s, int p)
{
    if (!s->nslides || s->reveal || p < 0 || p > 1 || s->panel[p].tensor < 0) return 0;
    const vw_slide *sl = &s->slides[s->slide];
    for (int i = 0; i < sl->nhide && i < 2; ++i)
        if (sl->hide[i] == s->panel[p].tensor) return 1;
    return 0;
}

const vw_table *vw_panel_table(const vw_state *s, int panel)
{
    if (!s->nslides || panel < 0 || panel > 1 || s->panel[panel].tensor < 0) return NULL;
    const vw_slide *sl = &s->slides[s->slide];
    for (int i = 0; i < sl->ntables && i < 2; ++i)
        if (sl->tables[i].tensor == s->panel[panel].tensor) return &sl->tables[i];
    return NULL;
}

/* Rows and columns of tensor t's plane as a table reads it (a one-row plane, or a
 * transposed one, as a column); 0 when it has no values. */
static int table_dims(const ks_trace *tr, int t, int transpose, int64_t *rows, int64_t *cols)
{
    if (t < 0 || t >= tr->ntensors || !tr->tensors[t].data) return 0;
    const vw_plane_dims d = vw_plane_dims_of(&tr->tensors[t]);
    if (d.planes < 1) return 0;
    const int tr_ = transpose || d.h == 1;
    *rows = tr_ ? d.w : d.h, *cols = tr_ ? d.h : d.w;
    return 1;
}

#define TABLE_SCAN (1 << 16) /* values a table's widths are taken from */

int vw_table_size(const ks_trace *tr, const vw_table *tb, int64_t plane, vw_table_dims *z)
{
    int64_t rows, cols, brows = 0, bcols = 0;
    if (!table_dims(tr, tb->tensor, tb->transpose, &rows, &cols)) return 0;
    const int beside = table_dims(tr, tb->beside, 0, &brows, &bcols) && brows == rows;
    const vw_plane_dims d = vw_plane_dims_of(&tr->tensors[tb->tensor]);
    if (plane < 0 || plane >= d.planes) plane = 0;
    char buf[48];
    size_t most = 2;
    /* every value of the plane, so the widths stay as the rows scroll; a table is for a
     * narrow tensor a step reads row by row: past TABLE_SCAN values, the first ones */
    for (int q = 0; q < 1 + beside; ++q) {
        const ks_tensor *T = &tr->tensors[q ? tb->beside : tb->tensor];
        const int64_t base = q ? 0 : plane * d.h * d.w, all = rows * (q ? bcols : cols);
        const int64_t n = all < TABLE_SCAN ? all : TABLE_SCAN;
        for (int64_t i = 0; i < n; ++i) {
            vw_cell_text(buf, sizeof buf, ks_tensor_value(T, base + i), 0);
            most = strlen(buf) > most ? strlen(buf) : most;
        }
    }
    for (int c = 0; c < tb->ncols; ++c) most = strlen(tb->col[c]) > most ? strlen(tb->col[c]) : most;
    snprintf(buf, sizeof buf, "%lld", (long long)(rows - 1));
    z->rows = rows, z->cols = cols, z->beside_cols = beside ? bcols : 0;
    z->cell_chars = (int)most;
    z->index_chars = (int)(strlen(tb->index) > strlen(buf) ? strlen(tb->index) : strlen(buf));
    if (z->index_chars < 3) z->index_chars = 3; /* the "..." between two runs of rows, whole */
    return 1;
}

int vw_table_width(const vw_table_dims *z, int adv)
{
    /* the index column and the cells, half a character of room each, a character's gap
     * before beside's columns */
    return z->index_chars * adv + (adv + 1) / 2 +
           (int)(z->cols + z->beside_cols) * (z->cell_chars * adv + (adv + 1) / 2) + (z->beside_cols ? adv : 0);
}

/* How big a slide's pictures come out in layout L: the smaller of the two panels' cells
 * with each plane fitted whole (1 when no panel shows a tensor). A table (vw_table) does
 * not limit it where its columns fit the panel's width at the smallest value text (about
 * 3/5 of the text's advance adv), and rules the layout out (half a pixel) where they do not:
 * 1024x768's three columns cut pair_table's last ones. */
static double picture_cells(const vw_state *s, const vw_layout *L, int adv)
{
    double least = INFINITY;
    for (int p = 0; p < 2; ++p) {
        const int t = s->panel[p].tensor;
        /* a panel covered until the answer is no picture to size (issue 38 D1: 05 s10's
         * hidden columns took half the width from its 5 x 5 image) */
        if (t < 0 || covered(s, p)) continue;
        const vw_table *tb = vw_panel_table(s, p);
        vw_table_dims z;
        if (tb && vw_table_size(s->tr, tb, s->panel[p].plane, &z)) {
            /* the smallest value font's advance, rounded up and a pixel more: fonts round */
            const vw_rect a = vw_panel_map_area(L, p);
            if (a.w - 8 < vw_table_width(&z, (adv * 3 + 4) / 5 + 1)) {
                least = fmin(least, 0.5);
                continue;
            }
            /* as big as the biggest of the value fonts (the text's, 4/5 and 3/5 of it) that
             * shows every row, header and all (vw_draw_table): its line */
            double big = 1;
            for (int k = 5; k >= 3 && big <= 1; --k) {
                const int fl = (L->line * k + 2) / 5, fa = (adv * k + 4) / 5 + 1;
                if ((int64_t)(a.h - 8) / (fl + 8) >= z.rows + 1 && vw_table_width(&z, fa) <= a.w - 8) big = fl;
            }
            least = fmin(least, big);
            continue;
        }
        vw_plane_dims d = vw_plane_dims_of(&s->tr->tensors[t]);
        const int margin = s->idx && d.h * d.w <= 4096 ? s->idx->margin[t] : 0;
        const vw_heatmap m = vw_heatmap_fit(vw_panel_map_area(L, p), d.h < 1 ? 1 : d.h, d.w < 1 ? 1 : d.w, margin);
        if (m.cell < least) least = m.cell;
    }
    return isfinite(least) ? least : 1;
}

/* How near a slide layout comes to the pictures' share measured on the grids as drawn
 * (issue 38 D1: a three-column slide gave a 16 x 16 input 300 px of a 1080 px frame):
 * each panel's grid height over vw_grid_need, at most 1, in share[p] (1 where no
 * tensor). A table counts its panel's share (its rows are what they are). */
/* L0 with the value text the drawing zooms for (vw_draw_value_metrics): the smallest of
 * the text, 4/5 and 3/5 of it that is legible, its advance and line scaled from the text's */
static vw_layout with_values(const vw_layout *L0, int adv)
{
    vw_layout M = *L0;
    const int px = vw_text_px(L0->w, L0->h), legible = vw_legible_px(L0->h);
    int vpx = px;
    for (int k = 4; k >= 3; --k) {
        const int q = (px * k + 2) / 5 > 8 ? (px * k + 2) / 5 : 8;
        if (q >= legible) vpx = q;
    }
    M.vadv = (adv * vpx + px / 2) / px, M.vline = (L0->line * vpx + px / 2) / px;
    if (L0->want_vadv > 0 && L0->want_h == L0->h) M.vadv = L0->want_vadv, M.vline = L0->want_vline;
    return M;
}

/* How a layout's panels show their cells, smaller better: 3 for each that prints no
 * values though it needs them, 1 for each zoomed to a window of its plane for them. */
static int zoomed_panels(const vw_state *s, const vw_layout *L0, int adv)
{
    const vw_layout M = with_values(L0, adv);
    int n = 0;
    for (int p = 0; p < 2; ++p) {
        if (s->panel[p].tensor < 0 || vw_panel_table(s, p) || covered(s, p)) continue;
        double need = 0, focus = 0;
        vw_values_need(s, &M, p, &need, &focus);
        const vw_heatmap m = vw_panel_map(s, &M, p);
        n += need > 0 && m.cell < need ? 3 : vw_panel_zoomed(s, &M, p);
    }
    return n;
}

/* The focused item's cells the panels leave out of view (vw_panel_items_out): the one
 * the slide is about, and the other too (issue 38 D1 N10, tenth re-trial: 05 s8's
 * columns held 3 of item 12's 9 writes under "9 column writes", its focused event an
 * offset read on neither panel). */
static int items_out(const vw_state *s, const vw_layout *L0, int adv)
{
    const vw_layout M = with_values(L0, adv);
    const int about = vw_about_panel(s);
    int out = 0;
    for (int p = 0; p < 2; ++p) {
        if (s->panel[p].tensor < 0 || covered(s, p) || vw_panel_table(s, p)) continue;
        int n;
        const int o = vw_panel_items_out(s, &M, p, &n);
        /* the other panel's cells all in view as a thumbnail whose values do not print
         * show none of them legibly (05 s8 at 1024x768: a 9 x 25 plane of 8 px cells) */
        double need, fc;
        vw_values_need(s, &M, p, &need, &fc);
        out += p != about && o == 0 && n >= 3 && need > 0 && vw_panel_map(s, &M, p).cell < need ? n : o;
    }
    return out;
}

static void picture_shares(const vw_state *s, const vw_layout *L0, int adv, double share[2])
{
    const vw_layout M = with_values(L0, adv);
    const vw_layout *L = &M;
    for (int p = 0; p < 2; ++p) {
        const int t = s->panel[p].tensor;
        share[p] = 1;
        if (t < 0 || covered(s, p)) continue; /* covered: no picture to size */
        const vw_rect area = vw_panel_map_area(L, p);
        if (vw_panel_table(s, p)) {
            /* its rows as they fit the map (a row of the text's line and 8 px at the most,
             * the map's 8 px of room), header and all, against their need */
            vw_table_dims z;
            const vw_table *tb = vw_panel_table(s, p);
            const int rh = L->line + 8;
            if (!vw_table_size(s->tr, tb, s->panel[p].plane, &z)) continue;
            const int64_t fit = (area.h - 8) / rh, all = z.rows + 1;
            const int need = vw_grid_need(all, 1, NULL, rh, L->w, L->h, L->line);
            if (need > 0) share[p] = fmin(1, (double)((fit < all ? fit : all) * rh) / need);
            continue;
        }
        /* the plane as drawn (a zoom, a window of a wide plane), as the audit measures it: a
         * sparse plane's filled cells where it prints their values (08's ring, not the empty
         * rows round it; another mode prints the empty cells too) */
        const vw_heatmap m = vw_panel_map(s, L, p);
        const int cells = vw_margin_cells(s); /* the race's label rows are no grid (issue 38 N19) */
        int64_t y0 = cells ? -m.side[VW_SIDE_TOP] : 0, x0 = 0, y1 = m.rows + (cells ? m.side[VW_SIDE_BOTTOM] : 0) - 1,
                x1 = m.cols - 1;
        const int fill = vw_effective_mode(s, p) == VW_MODE_VALUES && vw_filled_box(s, p, &y0, &x0, &y1, &x1);
        const double top = fmax(area.y, m.oy + (double)y0 * m.cell);
        const double bottom = fmin(area.y + area.h, m.oy + (double)(y1 + 1) * m.cell);
        const int need = fill ? vw_grid_need(y1 - y0 + 1, x1 - x0 + 1, NULL, 0, L->w, L->h, L->line)
                              : vw_grid_need(m.rows, m.cols, cells ? m.side : NULL, 0, L->w, L->h, L->line);
        if (need > 0) share[p] = fmin(1, fmax(0, bottom - top) / need);
    }
}

/* The characters a legend on the header line is given room for (two ends of up to 9
 * characters, a bar; a table's "rows 40-47, 48-55 of 96"): vw_legend_least_chars's at most. */
#define LEGEND_TOP_CHARS 24

/* Whether each panel's header, at its shortest (vw_describe_panel_fit), fits its width,
 * with the legend beside it where the layout puts it there. */
static int headers_fit(const vw_state *s, const vw_layout *L, int adv)
{
    const int fp = vw_about_panel(s);
    for (int p = 0; p < 2; ++p) {
        const vw_rect pa = p ? L->output : L->input;
        char head[256];
        if (s->panel[p].tensor < 0) continue;
        /* the panel beside the step's may give way to its name alone (a tensor of one
         * plane); a panel the step may be about keeps its plane's place */
        if (fp >= 0 && p != fp) vw_describe_panel_fit(s, p, 0, 1, 1, head, sizeof head);
        else vw_describe_panel_where(s, p, head, sizeof head);
        const int legend = (L->legend_top >> p) & 1 ? LEGEND_TOP_CHARS + 2 : 0;
        if (((int)strlen(head) + legend) * adv > pa.w - 8) return 0;
    }
    return 1;
}

/* The cells of a slide's "about" panel p as they grow past its share (issue 38 D1: 11
 * s1's c kept 26 px cells at 1280x960 so that a beside it kept its share), in pixels: up
 * to the cell its values need at the next value size (4/3 the smallest's need), 0 where
 * the step names no panel or it prints no values. */
static double about_cells(const vw_state *s, const vw_layout *L0, int adv, int p)
{
    if (!s->nslides || s->slides[s->slide].about <= 0 || vw_panel_table(s, p)) return 0;
    const vw_layout M = with_values(L0, adv);
    double need = 0, focus = 0;
    vw_values_need(s, &M, p, &need, &focus);
    const vw_heatmap m = vw_panel_map(s, &M, p);
    return floor(fmin(m.cell, need * 4 / 3));
}

/* A layout's pictures as one number, bigger better: first the grid of the panel the step
 * is about (vw_about_panel; the taller of the two where it is about neither), to 1 %;
 * then the other's; then the smaller cells (picture_cells). A step that names the panel
 * it is about ("about") grows that one's cells (about_cells) before the other's share. */
static double picture_rank(const vw_state *s, const vw_layout *L, int adv)
{
    double sh[2];
    picture_shares(s, L, adv, sh);
    int fp = vw_about_panel(s);
    /* about neither: the taller, but a panel covered until the answer is no picture */
    for (int p = 0; p < 2 && fp < 0; ++p)
        if (covered(s, p) && s->panel[!p].tensor >= 0) fp = !p;
    const double main = fp >= 0 ? sh[fp] : fmax(sh[0], sh[1]), other = fp >= 0 ? sh[!fp] : fmin(sh[0], sh[1]);
    const double grow = fp >= 0 ? fmin(about_cells(s, L, adv, fp), 999) : 0;
    if (grow > 0) return floor(main * 100) * 1e7 + grow * 1e4 + floor(other * 100) * 10;
    return floor(main * 100) * 1e7 + floor(other * 100) * 1e4 + fmin(picture_cells(s, L, adv), 9999);
}

/* Whether a slide layout holds what it was made for: the band's and the decomposition's
 * lines, the heatmaps at least VW_SLIDE_PICTURE of the height. */
static int slide_fits(const vw_layout *L, const vw_slide_geom *g)
{
    if (vw_band_rows(L->story, L->line) < g->band_lines) return 0;
    if ((L->decomp.h - 2) / L->line < g->decomp_lines) return 0;
    if (L->story.y + L->story.h > L->timeline.y || L->decomp.y + L->decomp.h > L->timeline.y) return 0;
    return L->input.h * 100 >= VW_SLIDE_PICTURE * L->h;
}

/* A slide's layout (issue 38 D1: pictures first): of the arrangements STACKED, SIDE and
 * RIGHT with the decomposition whole or at its least (the fields the narration names),
 * the one that holds this slide's text and gives the biggest pictures; the band as tall
 * as this slide (its question and its answer) needs. When none holds it, STACKED with
 * the heatmaps at VW_SLIDE_PICTURE of the height and the band giving way. */
static void slide_layout(vw_layout *L, const vw_state *s, int adv, int line, int w, int h, int title)
{
    const vw_slide *sl = &s->slides[s->slide];
    static const struct {
        int arr, column; /* the column's width in percent of the frame's */
        double pref;
    } forms[] = {{VW_ARR_STACKED, 0, 1.0},   {VW_ARR_SIDE, 38, 0.985},   {VW_ARR_SIDE, 45, 0.98},
                 {VW_ARR_RIGHT, 30, 0.975},  {VW_ARR_RIGHT, 33, 0.972},  {VW_ARR_RIGHT, 36, 0.97},
                 {VW_ARR_RIGHT, 42, 0.965},  {VW_ARR_RIGHT, 46, 0.962},  {VW_ARR_RIGHT, 50, 0.96},
                 {VW_ARR_COLUMN, 30, 0.962}, {VW_ARR_COLUMN, 33, 0.961}, {VW_ARR_COLUMN, 36, 0.96},
                 {VW_ARR_COLUMN, 42, 0.955}, {VW_ARR_COLUMN, 50, 0.95}};
    const int grid = sl->grid ? 4 : 0;
    /* the warp strip's room under the decomposition (vw_strip_area), in lines; kept on a
     * question slide that hides it, so its answer slide has the same layout (nothing jumps) */
    const int strip = s->strip || sl->strip ? (vw_strip_height(line) + 4 + line - 1) / line : 0;
    double best = -1;
    int least_short = 1 << 30; /* band lines a layout leaves out: none where one holds it all */
    /* narration past VW_NARRATION_LINES as the band wraps it: a column beside the pictures
     * wraps it longer than a band across the frame, and a slide reads in 5 lines (issue
     * 38 D1); of the layouts that hold the band, the one that keeps nearest to them wins
     * over bigger pictures */
    double best_key[8] = {0};
    vw_slide_geom pick = {.arrangement = VW_ARR_STACKED,
                          .title_lines = title,
                          .band_lines = 1,
                          .decomp_lines = 0,
                          .column_w = 0,
                          .grid_lines = grid};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; ++f)
        for (int least = 0; least < 2; ++least) {
            vw_slide_geom g = {.arrangement = forms[f].arr,
                               .title_lines = title,
                               .column_w = w * forms[f].column / 100,
                               .grid_lines = grid};
            int band_w, decomp_w;
            vw_slide_widths(w, &g, &band_w, &decomp_w);
            const int need = vw_story_band_needed(sl, (band_w - 16) / adv);
            static const int splits[] = {500, 460, 540, 420, 580, 380, 620, 340, 660, 300, 700, 260, 740, 200, 800};
            const int body = vw_story_narration_lines(sl, (band_w - 16) / adv);
            const int over = body > VW_NARRATION_LINES ? body - VW_NARRATION_LINES : 0;

            g.decomp_lines = vw_describe_focus_lines(s, (decomp_w - 8) / adv, least) + strip;
            /* where it does not hold it all, the narration gives way, a line at a time */
            for (g.band_lines = need; g.band_lines >= 1 && need - g.band_lines <= least_short; g.band_lines--) {
                vw_layout_slide(L, w, h, line, &g);
                if (!slide_fits(L, &g)) continue;
                /* the split between the pictures that gives the grids the most height; where
                 * none gives the step's grid its share, the legends on the header lines too */
                double top = -1;
                int at = 500, at_legend = 0;
                /* a table's legend ("rows 0-23 of 24") on its header line: a row more */
                const int tables = (vw_panel_table(s, 0) ? 1 : 0) | (vw_panel_table(s, 1) ? 2 : 0);
                for (int lt = 0; lt < 2 && (lt == 0 || top < 1e12); ++lt)
                    for (size_t q = 0; q < sizeof splits / sizeof splits[0]; ++q) {
                        g.split = splits[q];
                        g.legend_top = lt ? 3 : tables;
                        vw_layout_slide(L, w, h, line, &g);
                        if ((q > 0 || lt) && !headers_fit(s, L, adv)) continue; /* a narrow panel cuts its header */
                        /* the step's grid at its share, then no panel zoomed to a window of its
                         * plane, then the rank */
                        const double r = picture_rank(s, L, adv);
                        const double v = (r >= 100e7 ? 1e12 : 0) - items_out(s, L, adv) * 5e11 -
                                         zoomed_panels(s, L, adv) * 1e11 + r;
                        if (v > top + 1e-9) top = v, at = splits[q], at_legend = g.legend_top;
                    }
                g.split = at;
                g.legend_top = at_legend;
                vw_layout_slide(L, w, h, line, &g);
                const int shortfall = need - g.band_lines;
                const double score = picture_cells(s, L, adv) * forms[f].pref * (least ? 0.97 : 1.0);
                const double share = floor(picture_rank(s, L, adv) / 1e4);
                /* first the band whole; the narration's lines where they are a rule (at
                 * VW_NARRATION_W x _H), the pictures' share everywhere; then panels whole,
                 * not zoomed to a window of their plane (11 s7's second tile lost 5 of its
                 * 16 columns); the narration's lines; the shares; the cells */
                const int hard = w == VW_NARRATION_W && h == VW_NARRATION_H;
                /* a window that leaves out most of the item's cells shows another step
                 * than the narration's: before the panels' zoom (issue 38 D1: 10 s14) */
                const double key[8] = {
                    shortfall, hard && over > 0, share < 100e3, items_out(s, L, adv), zoomed_panels(s, L, adv),
                    over,      -share,           -score};
                int better = best < 0;
                for (int i = 0; i < 8 && !better; ++i) {
                    if (key[i] != best_key[i]) {
                        better = key[i] < best_key[i];
                        break;
                    }
                }
                if (better) {
                    memcpy(best_key, key, sizeof key);
                    least_short = shortfall, best = score, pick = g;
                }
                break;
            }
        }
    if (best < 0) { /* nothing holds even the least: STACKED, the pictures keep their share */
        int band_w, decomp_w;
        pick.arrangement = VW_ARR_STACKED;
        vw_slide_widths(w, &pick, &band_w, &decomp_w);
        pick.decomp_lines = vw_describe_focus_lines(s, (decomp_w - 8) / adv, 1) + strip;
        for (pick.band_lines = vw_story_band_needed(sl, (band_w - 16) / adv); pick.band_lines > 1; pick.band_lines--) {
            vw_layout_slide(L, w, h, line, &pick);
            if (L->input.h * 100 >= VW_SLIDE_PICTURE * L->h) break;
        }
    }
    vw_layout_slide(L, w, h, line, &pick);
    /* a panel too narrow to name the window of its plane it shows on one line, even as a
     * slice in the smallest value text, names it on two (issue 38 D12: 10 s2's and s4's
     * columns strip, 113 px at 1024x768, had no room for "columns[0,:18,:2]"); one covered
     * until the answer too, which keeps the question's layout */
    const vw_layout M = with_values(L, adv);
    for (int p = 0; p < 2; ++p) {
        const vw_rect pa = p ? L->output : L->input;
        if (s->panel[p].tensor < 0 || vw_panel_table(s, p)) continue;
        if (vw_window_name_chars(s, &M, p) * M.vadv > pa.w - 8) L->header_two |= 1 << p;
    }
}

void vw_layout_for_state(vw_layout *L, const vw_state *s, int advance, int line, int w, int h)
{
    static vw_lines lines;
    const int adv = advance > 0 ? advance : 8, ww = w < VW_MIN_W ? VW_MIN_W : w;
    /* the columns vw_draw_frame wraps the title at: the bar's inside */
    const int title = vw_describe_title_lines(s, (ww - 12) / adv, &lines);
    if (s->nslides) {
        slide_layout(L, s, adv, line, w, h, title);
        vw_value_metrics(L, adv, line);
        return;
    }
    vw_layout_compute_slides(L, w, h, line, 0, title, 0);
}
