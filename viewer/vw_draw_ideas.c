/* vw_draw_ideas.c - the ideas a lesson step draws over its panels ("draw": the slide's
 * VW_FIGURE_* bits; issue 38 D8), each worked out from the trace: the focused work
 * item's fields and events and the operator's parameters, never from the lesson text.
 *   windows-h / windows-w  col2im: every candidate window along the rows (columns) of
 *                          the focused output pixel, as a comb of its taps across the
 *                          pixel's column (row), green where a tap lands on the pixel
 *                          (the kernel's divisibility test h_k % dilation == 0 passes on
 *                          the item's padded h_im), red where the window only spans it;
 *   clamp                  RoIAlign: the focused sample where the bin's grid puts it and
 *                          an arrow to where the border clamp moves it;
 *   dropped                im2col: the window after the last one that fits, dashed, its
 *                          taps past the padded image crossed out: what the floor of the
 *                          output size drops.
 * Each figure's labels go where labels go (vw_labels: off the step's cells, leaders that
 * cross none) and every mark is recorded (vw_record.h) for --check and the tests. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_labels.h"

#define MAX_EVENTS 256 /* events of the focused item looked at */
#define MAX_NOTES 8    /* labels a figure places */

/* The focused work item's events (same index, block, thread and iteration as the
 * focused event), in recorded order: a scan, done only on a slide that draws a figure. */
static int item_events(const vw_state *s, const ks_event **out, int max)
{
    const uint32_t ev = vw_state_event(s);
    if (ev == VW_NONE || ev >= s->tr->nevents) return 0;
    const ks_event *f = vw_event(s->tr, ev);
    int n = 0;
    for (uint64_t i = 0; i < s->tr->nevents && n < max; ++i) {
        const ks_event *e = vw_event(s->tr, i);
        if (e->index == f->index && e->block == f->block && e->thread == f->thread && e->iter == f->iter) out[n++] = e;
    }
    return n;
}

static const ks_event *first_of(const ks_event *const *e, int n, int kind)
{
    for (int i = 0; i < n; ++i)
        if (e[i]->kind == kind) return e[i];
    return NULL;
}

/* Work field `name` of work event w. */
static int field(const ks_trace *tr, const ks_event *w, const char *name, int64_t *v)
{
    if (!w || w->site >= tr->nsites) return 0;
    const ks_site *site = &tr->sites[w->site];
    for (int f = 0; f < site->nfields && f < KS_WORK_FIELDS; ++f)
        if (!strcmp(site->fields[f].name, name)) {
            *v = w->u.field[f];
            return 1;
        }
    return 0;
}

/* Parameter `key` of the trace as (rows, columns): a pair, or one number for both. */
static int param_pair(const ks_trace *tr, const char *key, int64_t v[2])
{
    cJSON *j = cJSON_Parse(tr->params);
    const cJSON *p = j ? cJSON_GetObjectItemCaseSensitive(j, key) : NULL;
    int ok = 0;
    if (cJSON_IsNumber(p)) {
        v[0] = v[1] = (int64_t)p->valuedouble, ok = 1;
    } else if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(p, 0)) &&
               cJSON_IsNumber(cJSON_GetArrayItem(p, 1))) {
        v[0] = (int64_t)cJSON_GetArrayItem(p, 0)->valuedouble, v[1] = (int64_t)cJSON_GetArrayItem(p, 1)->valuedouble;
        ok = 1;
    }
    cJSON_Delete(j);
    return ok;
}

/* The convolution's geometry from the trace's parameters. */
typedef struct geom {
    int64_t k[2], pad[2], stride[2], dil[2], out[2], in[2];
} geom;

static int get_geom(const ks_trace *tr, geom *g)
{
    return param_pair(tr, "kernel_size", g->k) && param_pair(tr, "padding", g->pad) &&
           param_pair(tr, "stride", g->stride) && param_pair(tr, "dilation", g->dil) &&
           param_pair(tr, "output_size", g->out) && param_pair(tr, "input_size", g->in) && g->stride[0] > 0 &&
           g->stride[1] > 0 && g->dil[0] > 0 && g->dil[1] > 0 && g->out[0] > 0 && g->out[1] > 0;
}

static void mark(vw_draw *d, vw_rec_mark m)
{
    if (d->rec.nmarks < VW_REC_MARKS) d->rec.marks[d->rec.nmarks++] = m;
}

/* A figure's labels: texts anchored at points, placed off the step's cells and off the
 * figure's own marks (avoid), drawn in the cells' label font and recorded. */
typedef struct notes {
    int n;
    vw_label l[MAX_NOTES];
    char text[MAX_NOTES][64];
    uint32_t col[MAX_NOTES];
} notes;

static void note(notes *ns, const vw_font *f, int ax, int ay, uint32_t col, const char *text)
{
    if (ns->n >= MAX_NOTES) return;
    snprintf(ns->text[ns->n], sizeof ns->text[0], "%.63s", text);
    ns->l[ns->n] =
        (vw_label){.ax = ax, .ay = ay, .w = (int)strlen(ns->text[ns->n]) * f->advance + 10, .h = f->line + 6};
    ns->col[ns->n++] = col;
}

static void place_notes(vw_draw *d, const vw_heatmap *grid, int panel, vw_rect bounds, const vw_rect *marks, int nmarks,
                        notes *ns, int k)
{
    static vw_rect avoid[VW_REC_FOCUS + VW_REC_LABELS + 32 + VW_REC_VALUES];
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const vw_font *f = vw_value_font(d, k);
    int na = 0;
    for (int i = 0; i < rp->nfocus; ++i) avoid[na++] = rp->focus[i];
    for (int i = 0; i < d->rec.nlabels; ++i) avoid[na++] = d->rec.labels[i].box; /* the weights' labels */
    for (int i = 0; i < nmarks && i < 32; ++i) avoid[na++] = marks[i];
    /* off the numbers the cells print where there is room, else over them */
    vw_label was[MAX_NOTES];
    memcpy(was, ns->l, sizeof was);
    if (vw_place_labels(ns->l, ns->n, bounds, avoid, na + vw_value_boxes(d, panel, avoid + na, VW_REC_VALUES), 5)) {
        memcpy(ns->l, was, sizeof was);
        vw_place_labels(ns->l, ns->n, bounds, avoid, na, 5);
    }
    for (int i = 0; i < ns->n; ++i) {
        const vw_label *l = &ns->l[i];
        int pts[VW_LEADER_PTS][2], npts = 0;
        if (l->leader) { /* around the step's cells */
            npts = vw_route_leader(l, rp->focus, rp->nfocus, grid->ox, grid->oy, grid->cell, pts);
            vw_leader(d->r, pts, npts ? npts : 2, ns->col[i]);
            if (!npts) npts = 2;
        }
        const vw_rect inner = {.x = l->box.x + 3, .y = l->box.y + 3, .w = l->box.w - 6, .h = l->box.h - 6};
        vw_fill(d->r, inner, 0x000000);
        vw_text(f, d->r, inner.x + 2, inner.y, ns->col[i], 0, ns->text[i]);
        if (d->rec.nlabels < VW_REC_LABELS) {
            vw_rec_label *r = &d->rec.labels[d->rec.nlabels++];
            *r = (vw_rec_label){.panel = panel,
                                .kind = VW_LABEL_NOTE,
                                .box = l->box,
                                .ax = l->ax,
                                .ay = l->ay,
                                .leader = l->leader,
                                .npts = npts,
                                .npass = l->npass,
                                .px = vw_value_font_px(d, k)};
            memcpy(r->pass, l->pass, sizeof r->pass);
            memcpy(r->pts, pts, (size_t)npts * sizeof pts[0]);
            snprintf(r->text, sizeof r->text, "%s", ns->text[i]);
        }
    }
}

static void dot(SDL_Renderer *r, int x, int y, int half, uint32_t col)
{
    vw_fill(r, (vw_rect){.x = x - half, .y = y - half, .w = 2 * half + 1, .h = 2 * half + 1}, col);
}

static void cross(SDL_Renderer *r, int x, int y, int half, uint32_t col)
{
    vw_color(r, col);
    for (int t = -1; t <= 1; ++t) {
        SDL_RenderDrawLine(r, x - half + t, y - half, x + half + t, y + half);
        SDL_RenderDrawLine(r, x - half + t, y + half, x + half + t, y - half);
    }
}

/* A line (x0, y0)-(x1, y1) as dashes of `dash` pixels. */
static void dashed(SDL_Renderer *r, int x0, int y0, int x1, int y1, int dash, uint32_t col)
{
    const double len = hypot(x1 - x0, y1 - y0);
    vw_color(r, col);
    for (double t = 0; t < len; t += 2 * dash) {
        const double a = t / len, b = fmin(t + dash, len) / (len > 0 ? len : 1);
        for (int w = 0; w < 2; ++w)
            SDL_RenderDrawLine(r, x0 + (int)lround((x1 - x0) * a) + (y0 == y1 ? 0 : w),
                               y0 + (int)lround((y1 - y0) * a) + (y0 == y1 ? w : 0),
                               x0 + (int)lround((x1 - x0) * b) + (y0 == y1 ? 0 : w),
                               y0 + (int)lround((y1 - y0) * b) + (y0 == y1 ? w : 0));
    }
}

/* col2im's candidate windows along axis a (0: h_col, rows; 1: w_col, columns) for the
 * focused pixel, on the panel showing the pixel's output plane. */
static void draw_windows(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, int a, vw_rect bounds)
{
    static const ks_event *ev[MAX_EVENTS];
    const int n = item_events(s, ev, MAX_EVENTS);
    const ks_event *w = first_of(ev, n, KS_EV_WORK), *out = first_of(ev, n, KS_EV_WRITE);
    geom g;
    int64_t im, lo, hi;
    static const char *const names[2][4] = {{"h_im", "h_col_start", "h_col_end", "h"},
                                            {"w_im", "w_col_start", "w_col_end", "w"}};
    if (!w || !out || out->tensor != s->panel[panel].tensor || out->u.access.plane != s->panel[panel].plane ||
        !get_geom(s->tr, &g) || !field(s->tr, w, names[a][0], &im) || !field(s->tr, w, names[a][1], &lo) ||
        !field(s->tr, w, names[a][2], &hi) || hi - lo < 1 || hi - lo > 8)
        return;
    const int64_t py = out->u.access.y, px = out->u.access.x, count = hi - lo;
    const vw_rect pix = vw_heatmap_cell(m, py, px);
    const vw_font *f = vw_value_font(d, vw_label_font(d, m->cell));
    const int half = m->cell >= 40 ? 4 : 2;
    static vw_rect lanes[16];
    int nl = 0;
    notes ns = {0};
    for (int64_t c = lo; c < hi; ++c) {
        /* the kernel's test on this axis, on the padded coordinate: the tap offset divides
         * by the dilation (the item reads the window's entry when both axes pass) */
        const int64_t off = im - c * g.stride[a];
        const int pass = off % g.dil[a] == 0;
        const int64_t first = c * g.stride[a] - g.pad[a], last = first + (g.k[a] - 1) * g.dil[a];
        const uint32_t col = pass ? VW_COL_VALID : VW_COL_INVALID;
        /* lane k of count across the pixel's cell: a row of the window's taps, the first
         * half of the lanes above the cell's number, the rest below it */
        const int k = (int)(c - lo), up = (int)(count + 1) / 2, band = f->line / 2 + 4;
        const int along = a ? pix.h : pix.w, mid = along / 2, edge = along / 10;
        const int lane = k < up ? edge + (mid - band - edge) * (k + 1) / (up + 1)
                                : mid + band + (along - edge - mid - band) * (k - up + 1) / ((int)count - up + 1);
        int x0, y0, x1, y1;
        if (a) {
            const int y = pix.y + lane;
            vw_heatmap_point(m, (double)py, (double)first, &x0, &y0);
            vw_heatmap_point(m, (double)py, (double)last, &x1, &y1);
            y0 = y1 = y;
        } else {
            const int x = pix.x + lane;
            vw_heatmap_point(m, (double)first, (double)px, &x0, &y0);
            vw_heatmap_point(m, (double)last, (double)px, &x1, &y1);
            x0 = x1 = x;
        }
        vw_color(d->r, col);
        SDL_RenderDrawLine(d->r, x0, y0, x1, y1);
        SDL_RenderDrawLine(d->r, x0 + !a, y0 + a, x1 + !a, y1 + a);
        for (int64_t t = 0; t < g.k[a]; ++t) {
            const int64_t at = first + t * g.dil[a];
            int tx, ty;
            vw_heatmap_point(m, a ? (double)py : (double)at, a ? (double)at : (double)px, &tx, &ty);
            if (a) ty = y0;
            else tx = x0;
            dot(d->r, tx, ty, half, col);
            if (at == (a ? px : py)) /* the tap on the pixel: ringed */
                vw_outline(d->r,
                           (vw_rect){.x = tx - half - 3, .y = ty - half - 3, .w = 2 * half + 7, .h = 2 * half + 7}, col,
                           2, 0);
        }
        if (!pass) { /* the pixel lies between two taps: crossed out there */
            int cx, cy;
            vw_heatmap_point(m, (double)py, (double)px, &cx, &cy);
            cross(d->r, a ? cx : x0, a ? y0 : cy, half + 3, col);
        }
        char text[128];
        if (pass)
            snprintf(text, sizeof text, "%s_col %lld: %s_k %lld, %%%lld = 0: tap %lld", names[a][3], (long long)c,
                     names[a][3], (long long)off, (long long)g.dil[a], (long long)(off / g.dil[a]));
        else
            snprintf(text, sizeof text, "%s_col %lld: %s_k %lld, %%%lld = %lld", names[a][3], (long long)c, names[a][3],
                     (long long)off, (long long)g.dil[a], (long long)(off % g.dil[a]));
        note(&ns, f, x0, y0, col, text);
        lanes[nl++] = (vw_rect){.x = (x0 < x1 ? x0 : x1) - half - 3,
                                .y = (y0 < y1 ? y0 : y1) - half - 3,
                                .w = abs(x1 - x0) + 2 * half + 7,
                                .h = abs(y1 - y0) + 2 * half + 7};
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_WINDOW,
                              .axis = a,
                              .pass = pass,
                              .which = c,
                              .y0 = a ? (double)py : (double)first,
                              .x0 = a ? (double)first : (double)px,
                              .y1 = a ? (double)py : (double)last,
                              .x1 = a ? (double)last : (double)px});
    }
    place_notes(d, m, panel, bounds, lanes, nl, &ns, vw_label_font(d, m->cell));
}

/* RoIAlign: the focused sample before and after its border clamp. The grid puts sample
 * tap = iy*grid_w + ix of bin (ph, pw) at y = y0 + (ph + (iy + 0.5)/grid_h) * bin_h (x
 * likewise), the RoI's box (y0..y1, x0..x1, rows x cols bins) its region event. */
static void draw_clamp(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    static const ks_event *ev[MAX_EVENTS];
    const uint32_t fe = vw_state_event(s);
    const ks_event *f = fe == VW_NONE ? NULL : vw_event(s->tr, fe);
    if (!f || f->kind != KS_EV_SAMPLE || !(f->flags & (KS_FLAG_CLAMP_Y | KS_FLAG_CLAMP_X)) ||
        f->tensor != s->panel[panel].tensor || f->u.sample.plane != s->panel[panel].plane)
        return;
    const int n = item_events(s, ev, MAX_EVENTS);
    const ks_event *w = first_of(ev, n, KS_EV_WORK), *box = NULL;
    for (int i = 0; i < n && !box; ++i)
        if (ev[i]->kind == KS_EV_REGION && !(ev[i]->flags & KS_FLAG_GUIDE) && ev[i]->u.region.rows > 0) box = ev[i];
    int64_t ph, pw, gh, gw;
    if (!box || !field(s->tr, w, "ph", &ph) || !field(s->tr, w, "pw", &pw) || !field(s->tr, w, "grid_h", &gh) ||
        !field(s->tr, w, "grid_w", &gw) || gh < 1 || gw < 1)
        return;
    const ks_ev_region *r = &box->u.region;
    const double bin_h = (r->y1 - r->y0) / r->rows, bin_w = (r->x1 - r->x0) / r->cols;
    const int64_t iy = f->tap / gw, ix = f->tap % gw;
    const double y = r->y0 + ph * bin_h + (iy + 0.5) * bin_h / (double)gh;
    const double x = r->x0 + pw * bin_w + (ix + 0.5) * bin_w / (double)gw;
    const double cy = f->u.sample.y, cx = f->u.sample.x;
    /* the clamp only ever moves a sample back onto the last row (column) */
    if ((f->flags & KS_FLAG_CLAMP_Y) ? !(y >= cy) : fabs(y - cy) > 1e-4) return;
    if ((f->flags & KS_FLAG_CLAMP_X) ? !(x >= cx) : fabs(x - cx) > 1e-4) return;
    int rx, ry, qx, qy;
    vw_heatmap_point(m, y, x, &rx, &ry);
    vw_heatmap_point(m, cy, cx, &qx, &qy);
    /* before: a hollow orange square; an arrow to the clamped sample (its own ring) */
    const int half = m->cell >= 40 ? 6 : 4;
    const vw_rect before = {.x = rx - half, .y = ry - half, .w = 2 * half + 1, .h = 2 * half + 1};
    vw_outline(d->r, before, 0x000000, 1, 1);
    vw_outline(d->r, before, VW_COL_CLAMP, 2, 0);
    if (hypot(rx - qx, ry - qy) > 8) {
        vw_draw_arrow(d->r, rx, ry, qx, qy, VW_COL_CLAMP);
        vw_draw_arrow(d->r, rx + 1, ry, qx + 1, qy, VW_COL_CLAMP);
    }
    char a[24], b[24], text[128];
    const int along_y = (f->flags & KS_FLAG_CLAMP_Y) != 0;
    vw_cell_text(a, sizeof a, along_y ? y : x, 0);
    vw_cell_text(b, sizeof b, along_y ? cy : cx, 0);
    snprintf(text, sizeof text, "%s %s -> %s: clamped", along_y ? "y" : "x", a, b);
    const int k = vw_label_font(d, m->cell);
    notes ns = {0};
    note(&ns, vw_value_font(d, k), rx, ry, VW_COL_CLAMP, text);
    int64_t ys[2], xs[2]; /* its leader may cross the sample's corner cells (it sits among them) */
    vw_sample_corners(f, ys, xs);
    for (int c = 0; c < 4; ++c)
        if (ys[c >> 1] != INT32_MIN && xs[c & 1] != INT32_MIN)
            ns.l[0].pass[ns.l[0].npass++] = vw_heatmap_cell(m, ys[c >> 1], xs[c & 1]);
    const vw_rect marks[2] = {before, {.x = qx - 7, .y = qy - 7, .w = 15, .h = 15}};
    place_notes(d, m, panel, bounds, marks, 2, &ns, k);
    mark(d, (vw_rec_mark){.panel = panel, .kind = VW_MARK_CLAMP, .y0 = y, .x0 = x, .y1 = cy, .x1 = cx});
}

/* im2col: the window after the last that fits along rows (the focused item's h_col is
 * the last, Ho - 1) and along columns (w_col = Wo - 1), at the item's place on the other
 * axis: dashed, its taps on padding dots, those past the padded image crossed out. */
static void draw_dropped(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    static const ks_event *ev[MAX_EVENTS];
    const int n = item_events(s, ev, MAX_EVENTS);
    const ks_event *w = first_of(ev, n, KS_EV_WORK), *rd = first_of(ev, n, KS_EV_READ);
    geom g;
    int64_t o[2];
    if (!w || !rd || rd->tensor != s->panel[panel].tensor || rd->u.access.plane != s->panel[panel].plane ||
        !get_geom(s->tr, &g) || !field(s->tr, w, "h_col", &o[0]) || !field(s->tr, w, "w_col", &o[1]))
        return;
    const int k = vw_label_font(d, m->cell);
    const int half = m->cell >= 40 ? 4 : 2;
    notes ns = {0};
    vw_rect boxes[2];
    int nb = 0;
    for (int a = 0; a < 2; ++a) {
        if (o[a] != g.out[a] - 1) continue; /* the item's window is not the last along a */
        int64_t first[2], last[2];
        for (int b = 0; b < 2; ++b) {
            const int64_t at = b == a ? g.out[a] : o[b]; /* the dropped window: one past the last */
            first[b] = at * g.stride[b] - g.pad[b], last[b] = first[b] + (g.k[b] - 1) * g.dil[b];
        }
        const vw_rect c0 = vw_heatmap_cell(m, first[0], first[1]), c1 = vw_heatmap_cell(m, last[0], last[1]);
        const vw_rect box = {.x = c0.x + 2, .y = c0.y + 2, .w = c1.x + c1.w - c0.x - 4, .h = c1.y + c1.h - c0.y - 4};
        const int dash = m->cell >= 40 ? 8 : 4;
        dashed(d->r, box.x, box.y, box.x + box.w, box.y, dash, VW_COL_INVALID);
        dashed(d->r, box.x, box.y + box.h, box.x + box.w, box.y + box.h, dash, VW_COL_INVALID);
        dashed(d->r, box.x, box.y, box.x, box.y + box.h, dash, VW_COL_INVALID);
        dashed(d->r, box.x + box.w, box.y, box.x + box.w, box.y + box.h, dash, VW_COL_INVALID);
        boxes[nb++] = box;
        for (int64_t i = 0; i < g.k[0]; ++i)
            for (int64_t j = 0; j < g.k[1]; ++j) {
                const int64_t ty = first[0] + i * g.dil[0], tx = first[1] + j * g.dil[1];
                int px, py;
                vw_heatmap_point(m, (double)ty, (double)tx, &px, &py);
                /* past the padded image (rows -pad .. H - 1 + pad): no window can read it; a
                 * cross past the panel's edge is drawn at the edge, where it shows */
                if (ty > g.in[0] - 1 + g.pad[0] || tx > g.in[1] - 1 + g.pad[1]) {
                    const int ex = bounds.x + bounds.w - half - 5, ey = bounds.y + bounds.h - half - 5;
                    cross(d->r, px < ex ? px : ex, py < ey ? py : ey, half + 3, VW_COL_INVALID);
                } else if (ty >= g.in[0] || tx >= g.in[1] || ty < 0 || tx < 0) { /* padding: a dot */
                    dot(d->r, px, py, half, VW_COL_INVALID);
                }
            }
        char text[128];
        snprintf(text, sizeof text, "%s %lld: %s %lld..%lld, padding ends at %lld", a ? "w_col" : "h_col",
                 (long long)g.out[a], a ? "columns" : "rows", (long long)first[a], (long long)last[a],
                 (long long)(g.in[a] - 1 + g.pad[a]));
        /* anchored on the far edge, where the window leaves the padded image */
        note(&ns, vw_value_font(d, k), a ? box.x + box.w - 2 : box.x + box.w / 2,
             a ? box.y + box.h / 2 : box.y + box.h - 2, VW_COL_INVALID, text);
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_DROPPED,
                              .axis = a,
                              .which = g.out[a],
                              .y0 = (double)first[0],
                              .x0 = (double)first[1],
                              .y1 = (double)last[0],
                              .x1 = (double)last[1]});
    }
    place_notes(d, m, panel, bounds, boxes, nb, &ns, k);
}

void vw_draw_figures(vw_draw *d, const vw_state *s, const vw_layout *L, int panel)
{
    if (!s->nslides || s->panel[panel].tensor < 0 || vw_story_hides(s, panel)) return;
    const int fig = s->slides[s->slide].figure;
    if (!fig) return;
    const vw_heatmap m = vw_panel_map(s, L, panel);
    const vw_rect clip = vw_panel_map_area(L, panel);
    const SDL_Rect sc = vw_sdl(clip);
    SDL_RenderSetClipRect(d->r, &sc);
    if (fig & VW_FIGURE_WINDOWS_H) draw_windows(d, s, &m, panel, 0, clip);
    if (fig & VW_FIGURE_WINDOWS_W) draw_windows(d, s, &m, panel, 1, clip);
    if (fig & VW_FIGURE_CLAMP) draw_clamp(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_DROPPED) draw_dropped(d, s, &m, panel, clip);
    SDL_RenderSetClipRect(d->r, NULL);
}
