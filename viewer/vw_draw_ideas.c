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
 *                          output size drops;
 *   window                 the focused item's kernel window over the input, outlined,
 *                          its taps on the padding dotted (conv2d reads the columns, not
 *                          the input: this is where they came from);
 *   waves                  the grid-stride loop: each iteration of the whole grid (a wave)
 *                          outlines the cells its threads touched, wave 0, 1, ... in turn;
 *   block                  the cells the focused item's block writes, one outlined shape:
 *                          a tiled kernel's block is a tile of its output;
 *   race                   the focused item's first shared store another thread of its
 *                          block reads after it in the same phase: the slot in red,
 *                          "1st: thread 21 writes -1 over 2", "2nd: thread 22 reads -1";
 *   samples:RUN            another run's samples of the focused work item, a dot each
 *                          (a recorded kernel's trace has loads, not sample points);
 *   input                  a transposed convolution's input (col2im's scatter): each
 *                          pixel framed in blue on the output cell its centre tap reaches;
 *   warp                   the focused request: each lane's cell outlined, in its
 *                          sector's colour where the warp strip shows (else one colour:
 *                          a question that hides the strip asks for its sectors);
 *   sectors                the 32-byte sectors of the focused access's tensor: a bar
 *                          where each begins (every 8 floats), the cells between are one;
 *   extent:RUN             the same tensor's extent in run RUN, outlined and labelled
 *                          (lesson 12: a 7 x 7 output over the 8 x 8 one);
 *   point:Y,X              up to two points of the left panel's plane, each marked with
 *                          the value a bilinear read there gives (lesson 07 s1: the
 *                          points the patches are cut around);
 *   swap                   with two points: the second red, a dashed line from the
 *                          first (lesson 07 s8: the read and the swapped one).
 * Each figure's labels go where labels go (vw_labels: off the step's cells, leaders that
 * cross none) and every mark is recorded (vw_record.h) for --check and the tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_labels.h"
#include "vw_phase.h"
#include "vw_plane.h"
#include "vw_view.h"
#include "vw_warp.h"

#define MAX_NOTES 8 /* labels a figure places */

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

static int notes_fit_at(vw_draw *d, int panel, vw_rect bounds, const vw_rect *marks, int nmarks, const notes *ns,
                        int *dist);

/* ns's labels resized to value font k. */
static void notes_in_font(notes *ns, const vw_font *f)
{
    for (int i = 0; i < ns->n; ++i) ns->l[i].w = (int)strlen(ns->text[i]) * f->advance + 10, ns->l[i].h = f->line + 6;
}

/* place_notes, drawing and recording them where draw is set; returns the most points a
 * label's leader takes (2: a straight line; more: routed round what it keeps off) */
static void place_notes(vw_draw *d, const vw_heatmap *grid, int panel, vw_rect bounds, const vw_rect *marks, int nmarks,
                        notes *ns, int k)
{
    static vw_rect avoid[VW_REC_FOCUS + VW_REC_LABELS + 32 + VW_REC_VALUES];
    const vw_rec_panel *rp = &d->rec.panel[panel];
    /* in a bigger font than the cells' labels where they find room in it off the step's
     * cells, the marks and the numbers (issue 38 D1: 12 s5's dropped-window label, at
     * the least legible size in a margin with room for more) */
    int near[MAX_NOTES];
    notes_in_font(ns, vw_value_font(d, k));
    notes_fit_at(d, panel, bounds, marks, nmarks, ns, near);
    for (int big = 0; big < k; ++big) {
        notes_in_font(ns, vw_value_font(d, big));
        int at[MAX_NOTES], ok = notes_fit_at(d, panel, bounds, marks, nmarks, ns, at);
        /* as near its point as the small font's, or within two cells: a big label
         * far off with a long leader reads worse than a small one beside its point */
        for (int i = 0; i < ns->n && ok; ++i) ok = at[i] <= near[i] || at[i] <= 2 * grid->cell;
        if (ok) {
            k = big;
            break;
        }
    }
    notes_in_font(ns, vw_value_font(d, k));
    const vw_font *f = vw_value_font(d, k);
    int na = 0;
    for (int i = 0; i < rp->nfocus; ++i) avoid[na++] = rp->focus[i];
    for (int i = 0; i < d->rec.nlabels; ++i) avoid[na++] = d->rec.labels[i].box; /* the weights' labels */
    for (int i = 0; i < nmarks && i < 32; ++i) avoid[na++] = marks[i];
    for (int i = 0; i < ns->n; ++i) /* leaders may run along the cells' grid lines */
        ns->l[i].gx = grid->ox, ns->l[i].gy = grid->oy, ns->l[i].gcell = grid->cell;
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
        if (l->leader) { /* around the step's cells, and the numbers where a route misses them
                          * (issue 38 D3: 03 s5's leader ran across the 300 below its comb) */
            static vw_rect keep[4 + VW_REC_FOCUS + VW_REC_VALUES + VW_REC_LABELS + MAX_NOTES];
            int nk = 0, nl = 0;
            /* inside the bounds, where it shows: a route outside them is cut (issue 38,
             * fourteenth re-trial N30: 11 s9's "2nd" leader ran down the panel's edge,
             * unseen, and showed as a stray line along row 1) */
            const int far = 1 << 14;
            keep[nk++] = (vw_rect){.x = bounds.x - far, .y = bounds.y - far, .w = far, .h = bounds.h + 2 * far};
            keep[nk++] = (vw_rect){.x = bounds.x + bounds.w, .y = bounds.y - far, .w = far, .h = bounds.h + 2 * far};
            keep[nk++] = (vw_rect){.x = bounds.x - far, .y = bounds.y - far, .w = bounds.w + 2 * far, .h = far};
            keep[nk++] = (vw_rect){.x = bounds.x - far, .y = bounds.y + bounds.h, .w = bounds.w + 2 * far, .h = far};
            /* and off the other labels (issue 38 D3: 11 s9's "2nd" leader through "1st") */
            for (int j = 0; j < ns->n; ++j)
                if (j != i) keep[nk++] = ns->l[j].box;
            for (int j = 0; j < d->rec.nlabels; ++j) keep[nk++] = d->rec.labels[j].box;
            nl = nk;
            for (int j = 0; j < rp->nfocus; ++j) keep[nk++] = rp->focus[j];
            const int nf = nk;
            nk += vw_value_boxes(d, panel, keep + nk, VW_REC_VALUES);
            npts = vw_route_leader(l, keep, nk, grid->ox, grid->oy, grid->cell, pts);
            if (!npts) npts = vw_route_leader(l, keep, nf, grid->ox, grid->oy, grid->cell, pts);
            if (!npts) npts = vw_route_leader(l, keep + nl, nf - nl, grid->ox, grid->oy, grid->cell, pts);
            vw_leader(d->r, pts, npts ? npts : 2, ns->col[i]);
            if (!npts) npts = 2;
        }
        const vw_rect inner = {.x = l->box.x + 3, .y = l->box.y + 3, .w = l->box.w - 6, .h = l->box.h - 6};
        vw_fill(d->r, inner, 0x000000);
        vw_text(f, d->r, inner.x + 2, inner.y, ns->col[i], 0, ns->text[i]);
        vw_rec_add_label(&d->rec, panel, VW_LABEL_NOTE, l, pts, npts, vw_value_font_px(d, k), ns->text[i]);
    }
}

/* Whether ns's labels find room off the step's cells, the marks and every printed number
 * (place_notes puts them over the numbers where they do not). */
/* notes_fit, and where each label lands: dist[i], how far its box lies from its point
 * in pixels (0 beside it; dist may be NULL). */
static int notes_fit_at(vw_draw *d, int panel, vw_rect bounds, const vw_rect *marks, int nmarks, const notes *ns,
                        int *dist)
{
    static vw_rect avoid[VW_REC_FOCUS + 32 + VW_REC_VALUES];
    static vw_label l[MAX_NOTES];
    const vw_rec_panel *rp = &d->rec.panel[panel];
    int na = 0;
    for (int i = 0; i < rp->nfocus; ++i) avoid[na++] = rp->focus[i];
    for (int i = 0; i < nmarks && i < 32; ++i) avoid[na++] = marks[i];
    na += vw_value_boxes(d, panel, avoid + na, VW_REC_VALUES);
    memcpy(l, ns->l, sizeof l);
    const int ok = vw_place_labels(l, ns->n, bounds, avoid, na, 5) == 0;
    for (int i = 0; i < ns->n && dist; ++i) dist[i] = vw_label_far(&l[i]);
    return ok;
}

static int notes_fit(vw_draw *d, int panel, vw_rect bounds, const vw_rect *marks, int nmarks, const notes *ns)
{
    return notes_fit_at(d, panel, bounds, marks, nmarks, ns, NULL);
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

/* A padding tap's dot on cell point (x, y) of panel `panel`: in the cell's lower right
 * corner where the cell is big enough to print a number (a value, or a padding read's
 * 0: issue 38 D3, 12 s5's dot lay over the focused padding cell's 0), else on its
 * centre; recorded as a marker for the audit. */
static void tap_dot(vw_draw *d, const vw_heatmap *m, int panel, int x, int y, int half, uint32_t col)
{
    vw_rect r = {.x = x - half, .y = y - half, .w = 2 * half + 1, .h = 2 * half + 1};
    if (m->cell >= 14) {
        const int edge = (int)(m->cell / 2) - 4;
        r.x = x + edge - r.w, r.y = y + edge - r.h;
    }
    dot(d->r, r.x + half, r.y + half, half, col);
    vw_rec_add_dot(&d->rec, panel, r, (vw_rect){0}, 0);
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

/* col2im's candidate windows along axis a for the focused pixel, on the panel showing
 * the pixel's output plane. */
static void draw_windows(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, int a, vw_rect bounds)
{
    static const char *const axis_name[2] = {"h", "w"};
    vw_fig_windows wn;
    if (!vw_fig_windows_find(s, panel, a, &wn)) return;
    const vw_fig_geom g = wn.g;
    const int64_t im = wn.im, lo = wn.lo, hi = wn.hi, py = wn.py, px = wn.px, count = hi - lo;
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
        int64_t first, last;
        vw_fig_window_taps(&g, a, c, &first, &last);
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
            snprintf(text, sizeof text, "%s_col %lld: %s_k %lld, %%%lld = 0: tap %lld", axis_name[a], (long long)c,
                     axis_name[a], (long long)off, (long long)g.dil[a], (long long)(off / g.dil[a]));
        else
            snprintf(text, sizeof text, "%s_col %lld: %s_k %lld, %%%lld = %lld", axis_name[a], (long long)c,
                     axis_name[a], (long long)off, (long long)g.dil[a], (long long)(off % g.dil[a]));
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
/* A clamped sample where its bin put it, (y, x): a hollow orange square, and an arrow
 * from it to where the clamp moved it, (cy, cx); both markers of the record. Returns the
 * square. */
static vw_rect clamp_arrow(vw_draw *d, const vw_heatmap *m, int panel, double y, double x, double cy, double cx)
{
    int rx, ry, qx, qy;
    vw_heatmap_point(m, y, x, &rx, &ry);
    vw_heatmap_point(m, cy, cx, &qx, &qy);
    const int half = m->cell >= 40 ? 6 : 4;
    const vw_rect before = {.x = rx - half, .y = ry - half, .w = 2 * half + 1, .h = 2 * half + 1};
    vw_outline(d->r, before, 0x000000, 1, 1);
    vw_outline(d->r, before, VW_COL_CLAMP, 2, 0);
    if (hypot(rx - qx, ry - qy) > 8) {
        vw_draw_arrow(d->r, rx, ry, qx, qy, VW_COL_CLAMP);
        vw_draw_arrow(d->r, rx + 1, ry, qx + 1, qy, VW_COL_CLAMP);
    }
    /* the square and the arrow are markers of the record: the number they reach (the
     * clamped sample's cell's, where the arrow ends) comes back on top (issue 38 D3: 06
     * step 7's square and arrowhead sat on the 36) */
    const int ax0 = rx < qx ? rx : qx, ay0 = ry < qy ? ry : qy;
    vw_rec_add_dot(&d->rec, panel, before,
                   (vw_rect){.x = before.x + 2, .y = before.y + 2, .w = before.w - 4, .h = before.h - 4}, 0);
    vw_rec_add_dot(&d->rec, panel, (vw_rect){.x = ax0 - 4, .y = ay0 - 4, .w = abs(rx - qx) + 9, .h = abs(ry - qy) + 9},
                   (vw_rect){0}, 0);
    vw_values_over_markers(d, panel);
    return before;
}

static void draw_clamp(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    double y, x;
    const ks_event *f = vw_fig_clamped_sample(s, panel, &y, &x);
    if (!f) return;
    const double cy = f->u.sample.y, cx = f->u.sample.x;
    int rx, ry, qx, qy;
    vw_heatmap_point(m, y, x, &rx, &ry);
    vw_heatmap_point(m, cy, cx, &qx, &qy);
    const vw_rect before = clamp_arrow(d, m, panel, y, x, cy, cx);
    char a[24], b[24], a2[24], b2[24], text[128];
    const int along_y = (f->flags & KS_FLAG_CLAMP_Y) != 0, along_x = (f->flags & KS_FLAG_CLAMP_X) != 0;
    vw_cell_text(a, sizeof a, along_y ? y : x, 0);
    vw_cell_text(b, sizeof b, along_y ? cy : cx, 0);
    if (along_y && along_x) { /* a corner: both move (lesson 06's (5.1875, 5.1875) -> (5, 5)) */
        vw_cell_text(a2, sizeof a2, x, 0);
        vw_cell_text(b2, sizeof b2, cx, 0);
        snprintf(text, sizeof text, "(%s, %s) -> (%s, %s): clamped", a, a2, b, b2);
    } else snprintf(text, sizeof text, "%s %s -> %s: clamped", along_y ? "y" : "x", a, b);
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

/* The bilinear value of plane `plane` of tensor T at (y, x), zero outside (patchify's
 * padding, deformable sampling's): what a read there gives. */
static double bilinear_at(const ks_tensor *T, int64_t plane, double y, double x)
{
    const vw_plane_dims pd = vw_plane_dims_of(T);
    const double y0 = floor(y), x0 = floor(x), ly = y - y0, lx = x - x0;
    double v = 0;
    for (int c = 0; c < 4; ++c) {
        const int64_t yy = (int64_t)y0 + (c >> 1), xx = (int64_t)x0 + (c & 1);
        if (yy < 0 || xx < 0 || yy >= pd.h || xx >= pd.w) continue;
        const double w = ((c >> 1) ? ly : 1 - ly) * ((c & 1) ? lx : 1 - lx);
        v += w * ks_tensor_value(T, (plane * pd.h + yy) * pd.w + xx);
    }
    return v;
}

/* "point:Y,X": up to two points of the left panel's plane, each a hollow green square
 * with the value a bilinear read there gives, "(1.25, 2.5) = 11". With "swap" the second
 * is red, "(2.5, 1.25) = 17.25", with a dashed line from the first (issue 38 D8, ninth
 * re-trial: 07 s8 narrated the read of swapped coordinates and drew nothing of it;
 * eleventh: 07 s1 named its two points and drew neither). */
static void draw_points(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    const vw_slide *sl = &s->slides[s->slide];
    const int n = sl->npoints < 2 ? sl->npoints : 2;
    if (panel != 0 || n < 1) return;
    const ks_tensor *T = &s->tr->tensors[s->panel[panel].tensor];
    int px[2], py[2];
    vw_rect sq[2];
    const int half = m->cell >= 40 ? 7 : 5;
    for (int i = 0; i < n; ++i) {
        vw_heatmap_point(m, sl->point[i][0], sl->point[i][1], &px[i], &py[i]);
        sq[i] = (vw_rect){.x = px[i] - half, .y = py[i] - half, .w = 2 * half + 1, .h = 2 * half + 1};
    }
    const int swap = (sl->figure & VW_FIGURE_SWAP) && n == 2;
    const double len = swap ? hypot(px[1] - px[0], py[1] - py[0]) : 0;
    vw_color(d->r, VW_COL_INVALID);
    for (double t = half; len > 2 * half && t < len - half; t += 8) { /* dashed: 5 on, 3 off */
        const double t1 = fmin(t + 5, len - half);
        const int ax = px[0] + (int)lround((px[1] - px[0]) * t / len),
                  ay = py[0] + (int)lround((py[1] - py[0]) * t / len);
        const int bx = px[0] + (int)lround((px[1] - px[0]) * t1 / len),
                  by = py[0] + (int)lround((py[1] - py[0]) * t1 / len);
        SDL_RenderDrawLine(d->r, ax, ay, bx, by);
        SDL_RenderDrawLine(d->r, ax + 1, ay, bx + 1, by);
    }
    const int k = vw_label_font(d, m->cell);
    notes ns = {0};
    for (int i = 0; i < n; ++i) {
        const uint32_t col = i && swap ? VW_COL_INVALID : VW_COL_VALID;
        vw_outline(d->r, sq[i], 0x000000, 1, 1);
        vw_outline(d->r, sq[i], col, 2, 0);
        vw_rec_add_dot(&d->rec, panel, sq[i],
                       (vw_rect){.x = sq[i].x + 2, .y = sq[i].y + 2, .w = sq[i].w - 4, .h = sq[i].h - 4}, 0);
        char a[24], b[24], v[32], text[96];
        vw_cell_text(a, sizeof a, sl->point[i][0], 0);
        vw_cell_text(b, sizeof b, sl->point[i][1], 0);
        vw_cell_text(v, sizeof v, bilinear_at(T, s->panel[panel].plane, sl->point[i][0], sl->point[i][1]), 0);
        snprintf(text, sizeof text, "(%s, %s) = %s", a, b, v);
        note(&ns, vw_value_font(d, k), px[i], py[i], col, text);
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_POINT,
                              .which = i,
                              .y0 = sl->point[i][0],
                              .x0 = sl->point[i][1],
                              .y1 = sl->point[i][0],
                              .x1 = sl->point[i][1]});
    }
    vw_values_over_markers(d, panel);
    place_notes(d, m, panel, bounds, sq, n, &ns, k);
}

/* im2col: the window after the last that fits along rows (the focused item's h_col is
 * the last, Ho - 1) and along columns (w_col = Wo - 1), at the item's place on the other
 * axis: dashed, its taps on padding dots, those past the padded image crossed out. */
static void draw_dropped(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    vw_fig_dropped dr;
    if (!vw_fig_dropped_find(s, panel, &dr)) return;
    const vw_fig_geom g = dr.g;
    const int k = vw_label_font(d, m->cell);
    const int half = m->cell >= 40 ? 4 : 2;
    notes ns = {0}, brief = {0};
    vw_rect boxes[2];
    int nb = 0;
    for (int wi = 0; wi < dr.n; ++wi) {
        const int a = dr.axis[wi];
        const int64_t *first = dr.first[wi], *last = dr.last[wi];
        const vw_rect c0 = vw_heatmap_cell(m, first[0], first[1]), c1 = vw_heatmap_cell(m, last[0], last[1]);
        /* outside the window's cells, 4 px thick: inside them its first row's edge lay
         * under the last window's outlines (issue 38 D6: 12 step 5 read as rows 8-9 under
         * a label saying rows 7..9) */
        const int out = m->cell >= 20 ? 5 : 2;
        const vw_rect box = {.x = c0.x - out,
                             .y = c0.y - out,
                             .w = c1.x + c1.w - c0.x + 2 * out,
                             .h = c1.y + c1.h - c0.y + 2 * out};
        const int dash = m->cell >= 40 ? 8 : 4;
        for (int in = 0; in <= (m->cell >= 20 ? 2 : 0); in += 2) {
            const vw_rect b = {.x = box.x + in, .y = box.y + in, .w = box.w - 2 * in, .h = box.h - 2 * in};
            dashed(d->r, b.x, b.y, b.x + b.w, b.y, dash, VW_COL_INVALID);
            dashed(d->r, b.x, b.y + b.h, b.x + b.w, b.y + b.h, dash, VW_COL_INVALID);
            dashed(d->r, b.x, b.y, b.x, b.y + b.h, dash, VW_COL_INVALID);
            dashed(d->r, b.x + b.w, b.y, b.x + b.w, b.y + b.h, dash, VW_COL_INVALID);
        }
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
                    tap_dot(d, m, panel, px, py, half, VW_COL_INVALID);
                }
            }
        char text[128];
        snprintf(text, sizeof text, "%s %lld: %s %lld..%lld, padding ends at %lld", a ? "w_col" : "h_col",
                 (long long)g.out[a], a ? "columns" : "rows", (long long)first[a], (long long)last[a],
                 (long long)(g.in[a] - 1 + g.pad[a]));
        /* anchored on the far edge, where the window leaves the padded image */
        note(&ns, vw_value_font(d, k), a ? box.x + box.w - 2 : box.x + box.w / 2,
             a ? box.y + box.h / 2 : box.y + box.h - 2, VW_COL_INVALID, text);
        snprintf(text, sizeof text, "%s %lld: %s %lld..%lld", a ? "w_col" : "h_col", (long long)g.out[a],
                 a ? "columns" : "rows", (long long)first[a], (long long)last[a]);
        note(&brief, vw_value_font(d, k), ns.l[ns.n - 1].ax, ns.l[ns.n - 1].ay, VW_COL_INVALID, text);
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_DROPPED,
                              .axis = a,
                              .which = g.out[a],
                              .y0 = (double)first[0],
                              .x0 = (double)first[1],
                              .y1 = (double)last[0],
                              .x1 = (double)last[1]});
    }
    /* without "padding ends at" (the crosses show it) where the whole text finds room
     * only far off (issue 38 D3: 12 s5 at 1024x768, 7 rows above its window) */
    int far[MAX_NOTES], near[MAX_NOTES], worse = 0;
    notes_fit_at(d, panel, bounds, boxes, nb, &ns, far);
    notes_fit_at(d, panel, bounds, boxes, nb, &brief, near);
    for (int i = 0; i < ns.n; ++i) worse += far[i] > 1.5 * m->cell && near[i] < far[i];
    place_notes(d, m, panel, bounds, boxes, nb, worse ? &brief : &ns, k);
}

static void draw_window(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    vw_fig_geom g;
    int64_t first[2], last[2];
    if (!vw_fig_window_find(s, panel, &g, first, last)) return;
    const vw_rect c0 = vw_heatmap_cell(m, first[0], first[1]), c1 = vw_heatmap_cell(m, last[0], last[1]);
    const vw_rect box = {.x = c0.x + 2, .y = c0.y + 2, .w = c1.x + c1.w - c0.x - 4, .h = c1.y + c1.h - c0.y - 4};
    vw_outline(d->r, box, VW_COL_FOCUS, 3, 0);
    const int half = m->cell >= 40 ? 4 : 2;
    int pads = 0;
    for (int64_t i = 0; i < g.k[0]; ++i)
        for (int64_t j = 0; j < g.k[1]; ++j) {
            const int64_t ty = first[0] + i * g.dil[0], tx = first[1] + j * g.dil[1];
            if (ty >= 0 && tx >= 0 && ty < g.in[0] && tx < g.in[1]) continue;
            int px, py; /* a tap on the padding: a dot in its cell */
            vw_heatmap_point(m, (double)ty, (double)tx, &px, &py);
            tap_dot(d, m, panel, px, py, half, VW_COL_FOCUS);
            pads++;
        }
    char text[128];
    snprintf(text, sizeof text, "%d taps on padding", pads);
    const int k = vw_label_font(d, m->cell);
    notes ns = {0};
    if (pads) note(&ns, vw_value_font(d, k), box.x + box.w / 2, box.y + box.h - 2, VW_COL_FOCUS, text);
    place_notes(d, m, panel, bounds, &box, 1, &ns, k);
    mark(d, (vw_rec_mark){.panel = panel,
                          .kind = VW_MARK_KWINDOW,
                          .pass = pads,
                          .y0 = (double)first[0],
                          .x0 = (double)first[1],
                          .y1 = (double)last[0],
                          .x1 = (double)last[1]});
}

/* The waves of a grid-stride loop on panel p's plane: each cell gets the iteration of the
 * first access to it (every thread's iteration k is wave k), and each wave's cells are
 * outlined together, inset from the cells' edges so the focus outline stays clear. */
#define WAVE_CELLS 4096
/* The cells of an R x C plane whose mask is `w`, outlined in col as one shape: an edge
 * where the region ends, inset `in` pixels, two pixels wide; inside it the outline runs
 * on to the cell's edge so its cells read as one. The region's first and last cells in
 * row-major order go to *first and *last (-1: none). */
static void outline_region(vw_draw *d, const vw_heatmap *m, const int *mask, int w, int in, uint32_t col,
                           int64_t *first, int64_t *last)
{
    const int64_t R = m->rows, C = m->cols;
    *first = *last = -1;
    vw_color(d->r, col);
    for (int64_t y = 0; y < R; ++y)
        for (int64_t x = 0; x < C; ++x) {
            if (mask[y * C + x] != w) continue;
            if (*first < 0) *first = y * C + x;
            *last = y * C + x;
            const vw_rect c = vw_heatmap_cell(m, y, x);
            const int x0 = c.x + in, y0 = c.y + in, x1 = c.x + c.w - 1 - in, y1 = c.y + c.h - 1 - in;
            const int up = y > 0 && mask[(y - 1) * C + x] == w, down = y + 1 < R && mask[(y + 1) * C + x] == w;
            const int left = x > 0 && mask[y * C + x - 1] == w, right = x + 1 < C && mask[y * C + x + 1] == w;
            const int xa = left ? c.x : x0, xb = right ? c.x + c.w - 1 : x1;
            const int ya = up ? c.y : y0, yb = down ? c.y + c.h - 1 : y1;
            for (int k = 0; k < 2; ++k) {
                if (!up) SDL_RenderDrawLine(d->r, xa, y0 + k, xb, y0 + k);
                if (!down) SDL_RenderDrawLine(d->r, xa, y1 - k, xb, y1 - k);
                if (!left) SDL_RenderDrawLine(d->r, x0 + k, ya, x0 + k, yb);
                if (!right) SDL_RenderDrawLine(d->r, x1 - k, ya, x1 - k, yb);
            }
        }
}

static void draw_waves(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    static const uint32_t col[3] = {VW_COL_VALID, VW_COL_CLAMP, VW_COL_LOOKUP};
    static int wave[WAVE_CELLS];
    const int t = s->panel[panel].tensor;
    const int64_t plane = s->panel[panel].plane, R = m->rows, C = m->cols;
    if (R < 2 || C < 1 || R * C > WAVE_CELLS) return; /* a bar chart, or too big to outline */
    for (int64_t i = 0; i < R * C; ++i) wave[i] = -1;
    int top = -1;
    for (uint64_t i = 0; i < s->tr->nevents; ++i) {
        const ks_event *e = vw_event(s->tr, i);
        if ((e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) || e->tensor != t || e->u.access.plane != plane ||
            e->u.access.y < 0 || e->u.access.y >= R || e->u.access.x < 0 || e->u.access.x >= C || e->iter > 64)
            continue;
        int *w = &wave[e->u.access.y * C + e->u.access.x];
        if (*w < 0 || (int)e->iter < *w) *w = (int)e->iter;
        if (*w > top) top = *w;
    }
    if (top < 1) return; /* one wave: nothing to tell apart */
    const int in = m->cell >= 40 ? 7 : 3;
    notes ns = {0};
    for (int w = 0; w <= top && w < MAX_NOTES; ++w) {
        int64_t first = -1, last = -1;
        outline_region(d, m, wave, w, in, col[w % 3], &first, &last);
        if (first < 0) continue;
        const vw_rect c = vw_heatmap_cell(m, first / C, first % C);
        char text[32];
        snprintf(text, sizeof text, "wave %d", w);
        note(&ns, vw_value_font(d, vw_label_font(d, m->cell)), c.x + in, c.y + in, col[w % 3], text);
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_WAVE,
                              .which = w,
                              .y0 = (double)(first / C),
                              .x0 = (double)(first % C),
                              .y1 = (double)(last / C),
                              .x1 = (double)(last % C)});
    }
    place_notes(d, m, panel, bounds, NULL, 0, &ns, vw_label_font(d, m->cell));
}

/* The cells the focused item's block writes on the panel's plane, outlined as one shape
 * and labelled: a block of a tiled kernel is one tile of its output (lesson 11 step 1). */
static void draw_block(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    static int mask[WAVE_CELLS];
    const uint32_t fe = vw_state_event(s);
    const int t = s->panel[panel].tensor;
    const int64_t plane = s->panel[panel].plane, R = m->rows, C = m->cols;
    if (fe == VW_NONE || R < 2 || C < 1 || R * C > WAVE_CELLS) return;
    const uint32_t block = vw_event(s->tr, fe)->block;
    for (int64_t i = 0; i < R * C; ++i) mask[i] = 0;
    for (uint64_t i = 0; i < s->tr->nevents; ++i) {
        const ks_event *e = vw_event(s->tr, i);
        if (e->kind != KS_EV_WRITE || e->block != block || e->tensor != (uint32_t)t || e->u.access.plane != plane ||
            e->u.access.y < 0 || e->u.access.y >= R || e->u.access.x < 0 || e->u.access.x >= C)
            continue;
        mask[e->u.access.y * C + e->u.access.x] = 1;
    }
    int64_t first, last;
    const int in = m->cell >= 40 ? 5 : 2;
    outline_region(d, m, mask, 1, in, VW_COL_VALID, &first, &last); /* green: off the palette's oranges */
    if (first < 0) return;
    notes ns = {0};
    char text[48];
    snprintf(text, sizeof text, "block %u", block);
    const vw_rect c = vw_heatmap_cell(m, first / C, first % C);
    note(&ns, vw_value_font(d, vw_label_font(d, m->cell)), c.x + in, c.y + in, VW_COL_VALID, text);
    mark(d, (vw_rec_mark){.panel = panel,
                          .kind = VW_MARK_BLOCK,
                          .which = block,
                          .y0 = (double)(first / C),
                          .x0 = (double)(first % C),
                          .y1 = (double)(last / C),
                          .x1 = (double)(last % C)});
    place_notes(d, m, panel, bounds, NULL, 0, &ns, vw_label_font(d, m->cell));
}

/* Another run's samples of the focused work item (same index) on the panel's tensor (by
 * name) and plane: a green dot each, recorded as a marker and a mark; a number a dot
 * lands on is drawn again on top (lesson 14: torchvision's trace has the loads, ours the
 * points they serve). */
static void draw_guide_samples(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel)
{
    const ks_trace *g = s->slides[s->slide].guide;
    const uint32_t it = vw_state_item(s);
    const int t = s->panel[panel].tensor;
    if (!g || it == VW_NONE || t < 0) return;
    const int gt = ks_trace_tensor(g, s->tr->tensors[t].name);
    const int64_t index = s->idx->items[it].index, plane = s->panel[panel].plane;
    const int half = m->cell >= 40 ? 5 : 3;
    static vw_rect nums[VW_REC_VALUES];
    const int nn = vw_value_boxes(d, panel, nums, VW_REC_VALUES);
    for (uint64_t i = 0; gt >= 0 && i < g->nevents; ++i) {
        const ks_event *e = vw_event(g, i);
        if (e->kind != KS_EV_SAMPLE || (int64_t)e->index != index || e->tensor != (uint32_t)gt ||
            e->u.sample.plane != plane || !(fabsf(e->u.sample.y) < 1e6f) || !(fabsf(e->u.sample.x) < 1e6f))
            continue;
        int px, py;
        vw_heatmap_point(m, e->u.sample.y, e->u.sample.x, &px, &py);
        /* a sample on a printed number (clamped onto a cell's centre) frames the number: a
         * dot there would go under it again (the numbers come back on top) */
        int on_number = 0;
        for (int v = 0; v < nn && !on_number; ++v)
            if (px >= nums[v].x && px < nums[v].x + nums[v].w && py >= nums[v].y && py < nums[v].y + nums[v].h) {
                vw_outline(d->r,
                           (vw_rect){.x = nums[v].x - 3, .y = nums[v].y - 3, .w = nums[v].w + 6, .h = nums[v].h + 6},
                           VW_COL_VALID, 2, 0);
                on_number = 1;
            }
        if (!on_number) {
            const vw_rect dotr = {.x = px - half, .y = py - half, .w = 2 * half + 1, .h = 2 * half + 1};
            vw_fill(d->r, (vw_rect){.x = dotr.x - 1, .y = dotr.y - 1, .w = dotr.w + 2, .h = dotr.h + 2}, 0x000000);
            vw_fill(d->r, dotr, VW_COL_VALID);
            vw_rec_add_dot(&d->rec, panel, dotr, (vw_rect){0}, 0);
        }
        /* a clamped one from where its bin put it (issue 38 D8: 14 s5 narrates the sample
         * at x 7.71875, past the last column, that torchvision loads as column 7) */
        double uy, ux;
        if (vw_guide_sample_unclamped(g, e, &uy, &ux)) {
            clamp_arrow(d, m, panel, uy, ux, e->u.sample.y, e->u.sample.x);
            mark(d, (vw_rec_mark){.panel = panel,
                                  .kind = VW_MARK_CLAMP,
                                  .which = e->tap,
                                  .y0 = uy,
                                  .x0 = ux,
                                  .y1 = e->u.sample.y,
                                  .x1 = e->u.sample.x});
        }
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_SAMPLE,
                              .which = e->tap,
                              .y0 = e->u.sample.y,
                              .x0 = e->u.sample.x,
                              .y1 = e->u.sample.y,
                              .x1 = e->u.sample.x});
    }
    vw_values_over_markers(d, panel); /* the numbers the dots reach, back on top */
}

/* The race (lesson 11 without barrier 2): the first of the focused item's shared stores
 * that another thread of its block reads afterwards in the same phase, in the trace's
 * order (the order the simulator ran them; vw_fig_race_find). The slot is outlined in
 * red, with the store (its value over the one the slot held) and the later read named:
 * which came first, which the panel's tile, the values a phase leaves, cannot show (issue
 * 38 D8). Named at every size (issue 38 N20: at 1280x960 and 1024x768 neither label was
 * drawn): in the room the layout keeps above the tile (vw_figure_extent), in a shorter
 * form where the whole one finds none. */
static void draw_race(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    vw_fig_race rc;
    if (!vw_fig_race_find(s, panel, &rc)) return;
    const ks_event *w = rc.store, *later = rc.read;
    const vw_rect c = vw_heatmap_cell(m, w->u.access.y, w->u.access.x);
    vw_outline(d->r, (vw_rect){.x = c.x - 3, .y = c.y - 3, .w = c.w + 6, .h = c.h + 6}, VW_COL_INVALID, 3, 0);
    mark(d, (vw_rec_mark){.panel = panel,
                          .kind = VW_MARK_RACE,
                          .which = later->thread,
                          .pass = (int)w->thread,
                          .y0 = (double)w->u.access.y,
                          .x0 = (double)w->u.access.x,
                          .y1 = (double)w->u.access.y,
                          .x1 = (double)w->u.access.x});
    char v[24], old[24], first[96], second[96];
    vw_cell_text(v, sizeof v, w->u.access.value, 0);
    vw_cell_text(old, sizeof old, rc.before ? rc.before->u.access.value : NAN, 0);
    const vw_font *f = vw_value_font(d, vw_label_font(d, m->cell));
    /* the whole form, then without the value overwritten and the phase, then the threads'
     * numbers alone; named where there is room off the tile's numbers */
    for (int form = 0; form < 3; ++form) {
        if (form == 0 && rc.before)
            snprintf(first, sizeof first, "1st: thread %u writes %s over %s", w->thread, v, old);
        else if (form < 2) snprintf(first, sizeof first, "1st: thread %u writes %s", w->thread, v);
        else snprintf(first, sizeof first, "1st: %u writes %s", w->thread, v);
        if (form == 0)
            snprintf(second, sizeof second, "2nd: thread %u reads %s (phase %d)", later->thread, v, rc.phase);
        else if (form == 1) snprintf(second, sizeof second, "2nd: thread %u reads %s", later->thread, v);
        else snprintf(second, sizeof second, "2nd: %u reads %s", later->thread, v);
        notes ns = {0};
        note(&ns, f, c.x + c.w / 2, c.y, VW_COL_INVALID, first);
        note(&ns, f, c.x + c.w / 2, c.y, VW_COL_INVALID, second);
        if (!notes_fit(d, panel, bounds, &c, 1, &ns)) continue;
        place_notes(d, m, panel, bounds, &c, 1, &ns, vw_label_font(d, m->cell));
        return;
    }
}

static void draw_warp(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel)
{
    static int64_t yx[VW_WARP_MAX][2];
    static int lane[VW_WARP_MAX], sector[VW_WARP_MAX];
    const int n = vw_fig_warp_cells(s, panel, yx, lane, sector, VW_WARP_MAX);
    const int in = m->cell >= 24 ? 3 : 1, thick = m->cell >= 24 ? 3 : 2;
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const int framed = rp->values && !rp->hidden && m->cell >= 12;
    for (int k = 0; k < n; ++k) {
        if (yx[k][0] < -m->margin || yx[k][0] >= m->rows + m->margin || yx[k][1] < -m->margin ||
            yx[k][1] >= m->cols + m->margin)
            continue;
        const vw_rect c = vw_heatmap_cell(m, yx[k][0], yx[k][1]);
        const uint32_t col = s->strip ? vw_warp_color((uint32_t)sector[k]) : VW_COL_CLAMP;
        if (framed) { /* on the cell's edge and a pixel outside it, clear of its number (issue
                       * 38: 10 s6's inset frames cut 101's digits at 1024x768); a marker of the
                       * record, its clear inside what a number keeps to */
            vw_outline(d->r, c, col, 2, 1);
            vw_rec_add_dot(&d->rec, panel, (vw_rect){.x = c.x - 1, .y = c.y - 1, .w = c.w + 2, .h = c.h + 2},
                           (vw_rect){.x = c.x + 1, .y = c.y + 1, .w = c.w - 2, .h = c.h - 2}, 0);
        } else {
            const vw_rect box = {.x = c.x + in, .y = c.y + in, .w = c.w - 2 * in, .h = c.h - 2 * in};
            vw_outline(d->r, box, col, thick, 0);
        }
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_WARP,
                              .which = lane[k],
                              .y0 = (double)yx[k][0],
                              .x0 = (double)yx[k][1],
                              .y1 = (double)yx[k][0],
                              .x1 = (double)yx[k][1]});
    }
}

/* A transposed convolution's input (col2im's scatter: each column of the columns matrix
 * is one input pixel, its rows the kernel's taps): each pixel drawn as a blue frame on the
 * output cell its centre tap reaches, the focused item's pixel in cyan, so the 4 x 4 input
 * shows spread over the output at the stride, as conv_arithmetic draws it (issue 38: lesson
 * 12 steps 8-10 drew only the columns). Worked out from the trace: the work items that
 * read the middle row of the columns (the centre tap) and the cell each writes. */
static void draw_input(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    const int t = s->panel[panel].tensor;
    const int64_t plane = s->panel[panel].plane;
    const uint32_t fit = vw_state_item(s);
    int64_t focus_x = -1;
    int ncol = 0;
    struct {
        int64_t x, y, j;
    } at[64];
    for (uint32_t i = 0; i < s->idx->nitems; ++i) {
        const vw_item *item = &s->idx->items[i];
        const ks_event *rd = NULL, *wr = NULL;
        for (uint32_t k = 0; k < item->count; ++k) {
            const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
            if (e->kind == KS_EV_READ && e->tensor != (uint32_t)t && !rd) rd = e;
            if (e->kind == KS_EV_WRITE && e->tensor == (uint32_t)t && e->u.access.plane == plane) wr = e;
        }
        if (!rd) continue;
        const vw_plane_dims cd = vw_plane_dims_of(&s->tr->tensors[rd->tensor]);
        if (i == fit) focus_x = rd->u.access.x;
        if (!wr || rd->u.access.y != (cd.h - 1) / 2 || wr->u.access.y < 0 || wr->u.access.y >= m->rows ||
            wr->u.access.x < 0 || wr->u.access.x >= m->cols || ncol >= 64)
            continue;
        at[ncol].y = wr->u.access.y, at[ncol].x = wr->u.access.x, at[ncol].j = rd->u.access.x, ncol++;
    }
    if (!ncol) return;
    const int in = m->cell >= 40 ? 4 : 2, thick = m->cell >= 40 ? 3 : 2;
    notes ns = {0};
    for (int i = 0; i < ncol; ++i) {
        const vw_rect c = vw_heatmap_cell(m, at[i].y, at[i].x);
        const int focused = at[i].j == focus_x;
        const vw_rect box = {.x = c.x + in, .y = c.y + in, .w = c.w - 2 * in, .h = c.h - 2 * in};
        vw_outline(d->r, box, focused ? VW_COL_FOCUS : VW_COL_INPUT, thick, 0);
        vw_rec_add_dot(
            &d->rec, panel, box,
            (vw_rect){.x = box.x + thick, .y = box.y + thick, .w = box.w - 2 * thick, .h = box.h - 2 * thick}, focused);
        mark(d, (vw_rec_mark){.panel = panel,
                              .kind = VW_MARK_INPUT,
                              .which = at[i].j,
                              .pass = focused,
                              .y0 = (double)at[i].y,
                              .x0 = (double)at[i].x,
                              .y1 = (double)at[i].y,
                              .x1 = (double)at[i].x});
    }
    /* one label, at the first pixel: what the frames are */
    int rows = 0, cols = 0; /* the input's shape: the distinct rows and columns it lands on */
    for (int i = 0; i < ncol; ++i) {
        int ry = 1, rx = 1;
        for (int j = 0; j < i; ++j) ry &= at[j].y != at[i].y, rx &= at[j].x != at[i].x;
        rows += ry, cols += rx;
    }
    char text[48];
    if (rows * cols == ncol) snprintf(text, sizeof text, "input: %d x %d pixels", rows, cols);
    else snprintf(text, sizeof text, "input: %d pixels", ncol);
    const vw_rect c0 = vw_heatmap_cell(m, at[0].y, at[0].x);
    note(&ns, vw_value_font(d, vw_label_font(d, m->cell)), c0.x + in, c0.y + in, VW_COL_INPUT, text);
    place_notes(d, m, panel, bounds, NULL, 0, &ns, vw_label_font(d, m->cell));
    vw_values_over_markers(d, panel);
}

/* The 32-byte sectors of the panel's tensor, as kscope memory counts them (offset x
 * element size from an aligned base): a bar on the left edge of each cell a sector begins
 * at, and the plane's right edge, so each row reads as its runs of 8 floats (lesson 10
 * step 3: the picture shows what a sector is, the question counts the next warp's). */
static void draw_sectors(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    const uint32_t fe = vw_state_event(s); /* on the tensor the focused access is to */
    if (fe == VW_NONE || vw_event(s->tr, fe)->tensor != (uint32_t)s->panel[panel].tensor) return;
    const ks_tensor *T = &s->tr->tensors[s->panel[panel].tensor];
    const int64_t esize = (int64_t)ks_dtype_size(T->dtype), per = esize > 0 ? 32 / esize : 0;
    const int64_t base = s->panel[panel].plane * m->rows * m->cols;
    if (m->cell < 6 || per < 2) return;
    int64_t y0, y1, x0, x1;
    vw_visible_cells(m, bounds, &y0, &y1, &x0, &x1);
    const int thick = m->cell >= 40 ? 5 : m->cell >= 20 ? 4 : 3;
    int64_t first = -1;
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x <= x1 && x <= m->cols; ++x) {
            const int64_t off = base + y * m->cols + x;
            if (x < m->cols && off % per) continue;
            if (x == m->cols && x != x1) continue;
            const vw_rect c = vw_heatmap_cell(m, y, x < m->cols ? x : x - 1);
            const int bx = x < m->cols ? c.x : c.x + c.w;
            vw_fill(d->r, (vw_rect){.x = bx - thick / 2, .y = c.y - 1, .w = thick, .h = c.h + 2}, VW_COL_TEXT);
            if (x < m->cols) {
                const int64_t last = (off / per + 1) * per - 1 - base;
                if (first < 0 && x > 0) first = y * m->cols + x;
                mark(d, (vw_rec_mark){.panel = panel,
                                      .kind = VW_MARK_SECTOR,
                                      .which = off / per,
                                      .y0 = (double)y,
                                      .x0 = (double)x,
                                      .y1 = (double)(last / m->cols),
                                      .x1 = (double)(last % m->cols)});
            }
        }
    if (first < 0) return;
    notes ns = {0};
    char text[48];
    snprintf(text, sizeof text, "| sector: %lld %s, 32 bytes", (long long)per, T->dtype == KS_F32 ? "floats" : "words");
    const vw_rect c = vw_heatmap_cell(m, first / m->cols, first % m->cols);
    note(&ns, vw_value_font(d, vw_label_font(d, m->cell)), c.x, c.y, VW_COL_TEXT, text);
    /* off the warp's lanes where the slide outlines them too */
    static int64_t yx[VW_WARP_MAX][2];
    const int nw = vw_fig_warp_cells(s, panel, yx, NULL, NULL, VW_WARP_MAX);
    vw_rect lanes = {0};
    for (int k = 0; k < nw; ++k) {
        const vw_rect r = vw_heatmap_cell(m, yx[k][0], yx[k][1]);
        if (!k) lanes = r;
        const int x1 = lanes.x + lanes.w > r.x + r.w ? lanes.x + lanes.w : r.x + r.w;
        const int y1 = lanes.y + lanes.h > r.y + r.h ? lanes.y + lanes.h : r.y + r.h;
        lanes.x = lanes.x < r.x ? lanes.x : r.x, lanes.y = lanes.y < r.y ? lanes.y : r.y;
        lanes.w = x1 - lanes.x, lanes.h = y1 - lanes.y;
    }
    if (notes_fit(d, panel, bounds, &lanes, nw > 0, &ns))
        place_notes(d, m, panel, bounds, &lanes, nw > 0, &ns, vw_label_font(d, m->cell));
}

/* The same tensor's extent in another run (the slide's guide), outlined from cell (0, 0):
 * lesson 12 step 11's 7 x 7 output inside the 8 x 8 one, both from one 4 x 4 input. */
static void draw_extent(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel, vw_rect bounds)
{
    const ks_trace *g = s->slides[s->slide].guide;
    const int t = s->panel[panel].tensor;
    if (!g) return;
    const int gt = ks_trace_tensor(g, s->tr->tensors[t].name);
    if (gt < 0) return;
    const vw_plane_dims gd = vw_plane_dims_of(&g->tensors[gt]);
    if (gd.h <= 0 || gd.w <= 0 || (gd.h == m->rows && gd.w == m->cols)) return; /* the same size: nothing to show */
    const vw_rect a = vw_heatmap_cell(m, 0, 0), b = vw_heatmap_cell(m, gd.h - 1, gd.w - 1);
    const int thick = m->cell >= 40 ? 5 : 3;
    const vw_rect box = {.x = a.x - thick / 2,
                         .y = a.y - thick / 2,
                         .w = b.x + b.w - a.x + thick,
                         .h = b.y + b.h - a.y + thick};
    vw_outline(d->r, box, VW_COL_HEAD, thick, 0);
    mark(d, (vw_rec_mark){.panel = panel,
                          .kind = VW_MARK_EXTENT,
                          .y0 = 0,
                          .x0 = 0,
                          .y1 = (double)(gd.h - 1),
                          .x1 = (double)(gd.w - 1)});
    notes ns = {0};
    char text[64];
    snprintf(text, sizeof text, "%lld x %lld %s", (long long)gd.h, (long long)gd.w, s->tr->tensors[t].name);
    note(&ns, vw_value_font(d, vw_label_font(d, m->cell)), b.x + b.w, b.y + b.h, VW_COL_HEAD, text);
    place_notes(d, m, panel, bounds, NULL, 0, &ns, vw_label_font(d, m->cell));
}

/* The focused event's tap as every work item takes it (lesson 02 step 7: "row 4 holds tap
 * (1, 1) for every output position"), the items whose tap reads the focused one's plane:
 * each access of the panel's plane with that tap, outlined in the head colour; on a plane
 * where they fill one row (the columns), the row as one box (the slide numbers its rows:
 * ls_slides sets asks_yx). */
static void draw_tap(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel)
{
    const uint32_t ev = vw_state_event(s), fit = vw_state_item(s);
    const ks_event *f = ev != VW_NONE ? vw_event(s->tr, ev) : NULL;
    const int t = s->panel[panel].tensor;
    const int64_t plane = s->panel[panel].plane;
    if (!f || !s->idx || fit == VW_NONE) return;
    /* the items whose tap reads the plane the focused item's reads (im2col's channel: the
     * second channel's items write their own rows of the columns) */
    uint32_t src_t = UINT32_MAX;
    int64_t src_p = -1;
    const vw_item *fi = &s->idx->items[fit];
    for (uint32_t k = 0; k < fi->count && src_t == UINT32_MAX; ++k) {
        const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, fi, k));
        if (e->kind == KS_EV_READ && e->tap == f->tap) src_t = e->tensor, src_p = e->u.access.plane;
    }
    int64_t y0 = INT64_MAX, y1 = INT64_MIN, x0 = INT64_MAX, x1 = INT64_MIN, n = 0;
    const int in = m->cell >= 40 ? 3 : 1, thick = m->cell >= 40 ? 3 : 2;
    for (int pass = 0; pass < 2; ++pass)
        for (uint32_t i = 0; i < s->idx->nitems; ++i) {
            const vw_item *it = &s->idx->items[i];
            int same = src_t == UINT32_MAX;
            for (uint32_t k = 0; k < it->count && !same; ++k) {
                const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, it, k));
                same = e->kind == KS_EV_READ && e->tap == f->tap && e->tensor == src_t && e->u.access.plane == src_p;
            }
            if (!same) continue;
            for (uint32_t k = 0; k < it->count; ++k) {
                const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, it, k));
                if ((e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) || e->tensor != (uint32_t)t || e->tap != f->tap ||
                    e->u.access.plane != plane)
                    continue;
                const int64_t y = e->u.access.y, x = e->u.access.x;
                if (y < -m->margin || y >= m->rows + m->margin || x < -m->margin || x >= m->cols + m->margin) continue;
                if (pass == 0) {
                    y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1, x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1, n++;
                    continue;
                }
                if (y0 == y1 && n > 1) continue; /* one row: drawn whole below */
                const vw_rect c = vw_heatmap_cell(m, y, x);
                const vw_rect box = {.x = c.x + in, .y = c.y + in, .w = c.w - 2 * in, .h = c.h - 2 * in};
                vw_outline(d->r, box, VW_COL_HEAD, thick, 0);
                vw_rec_add_dot(
                    &d->rec, panel, box,
                    (vw_rect){.x = box.x + thick, .y = box.y + thick, .w = box.w - 2 * thick, .h = box.h - 2 * thick},
                    0);
            }
        }
    if (!n) return;
    mark(d, (vw_rec_mark){.panel = panel,
                          .kind = VW_MARK_TAP,
                          .which = (int)n,
                          .pass = (int)f->tap,
                          .y0 = (double)y0,
                          .x0 = (double)x0,
                          .y1 = (double)y1,
                          .x1 = (double)x1});
    if (y0 != y1 || n < 2) return;
    /* the row: a box round it, just outside its cells, over no number: no marker of the
     * record (one put 02 s7's last number of the row back on a black plate at 1024x768,
     * the fourteenth re-trial's N29) */
    const vw_rect a = vw_heatmap_cell(m, y0, x0), b = vw_heatmap_cell(m, y1, x1);
    const vw_rect row = {.x = a.x - thick, .y = a.y - thick, .w = b.x + b.w - a.x + 2 * thick, .h = a.h + 2 * thick};
    vw_outline(d->r, row, VW_COL_HEAD, thick, 0);
}

void vw_draw_figures(vw_draw *d, const vw_state *s, const vw_layout *L, int panel)
{
    if (!s->nslides || s->panel[panel].tensor < 0 || vw_story_hides(s, panel) || vw_panel_table(s, panel)) return;
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
    if (fig & VW_FIGURE_WINDOW) draw_window(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_WAVES) draw_waves(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_WARP) draw_warp(d, s, &m, panel);
    if (fig & VW_FIGURE_BLOCK) draw_block(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_SAMPLES) draw_guide_samples(d, s, &m, panel);
    if (fig & VW_FIGURE_RACE) draw_race(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_INPUT) draw_input(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_SECTORS) draw_sectors(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_EXTENT) draw_extent(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_POINTS) draw_points(d, s, &m, panel, clip);
    if (fig & VW_FIGURE_TAP) draw_tap(d, s, &m, panel);
    SDL_RenderSetClipRect(d->r, NULL);
}
