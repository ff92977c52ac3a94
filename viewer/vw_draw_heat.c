/* vw_draw_heat.c - a tensor plane as a heatmap, its legend, and the focused work item's
 * cells, padding reads and sample points drawn over it. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/step.h"
#include "vw_anchor.h"
#include "vw_boxes.h"
#include "vw_colormap.h"
#include "vw_describe.h"
#include "vw_draw_int.h"
#include "vw_plane.h"
#include "vw_view.h"

/* A picture: an input of shape (N, 1 or 3, H, W), at least 16 x 16, every value in
 * [0, 1] (what --image and --in of a PNG/PGM/PPM give): 1 (grey) or 3 (RGB), else 0. */
static int picture_channels(const vw_state *s, int t)
{
    const ks_tensor *T = &s->tr->tensors[t];
    if (!s->picture || T->dtype != KS_F32 || T->ndim != 4 || s->tr->roles[t] != KS_ROLE_INPUT ||
        (T->shape[1] != 1 && T->shape[1] != 3) || T->shape[2] < 16 || T->shape[3] < 16)
        return 0;
    const int64_t n = T->shape[0] * T->shape[1] * T->shape[2] * T->shape[3];
    const float *v = T->data;
    for (int64_t i = 0; i < n; ++i)
        if (!(v[i] >= 0 && v[i] <= 1)) return 0;
    return (int)T->shape[1];
}

/* The mean of the non-empty cells of [y0, y1) x [x0, x1) of the plane at base (*used: how
 * many), counting empty cells into *empty. */
static double block_mean(const vw_state *s, const float *tile, int t, vw_mode mode, int64_t base, int64_t w, int64_t y0,
                         int64_t y1, int64_t x0, int64_t x1, int64_t *used, int64_t *empty)
{
    const ks_tensor *T = &s->tr->tensors[t];
    const int sparse = mode == VW_MODE_VALUES && T->dtype != KS_F32 && !tile;
    /* a padding tap's entry that prints ? (vw_padding_hidden) is no value of the picture:
     * not in the mean, not in the range (issue 38 D2 N6, tenth re-trial: 02's columns
     * legend read "0 .. 70" over ?s painted the 0 colour) */
    const int hide = mode == VW_MODE_VALUES && vw_padding_hidden(s);
    double sum = 0;
    *used = 0;
    if (mode == VW_MODE_VALUES && ((T->dtype == KS_F32 && T->data) || tile) &&
        !hide) { /* the usual case, read directly:
        the whole-plane overview of a 47 M-cell plane is the first frame's main cost (the shared tile: its
        values at the focused phase) */
        const float *f = tile ? tile : T->data;
        for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x) sum += f[base + y * w + x];
        *used = y1 > y0 && x1 > x0 ? (y1 - y0) * (x1 - x0) : 0;
        return *used ? sum / (double)*used : 0;
    }
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            const int64_t off = base + y * w + x;
            if (sparse && vw_cell_empty(T, off)) {
                ++*empty;
                continue;
            }
            if (hide && vw_padding_written(s, t, off)) continue;
            const double v = tile && mode == VW_MODE_VALUES ? tile[off] : vw_heat_value(s, t, off, mode);
            if (mode == VW_MODE_SECTORS && v < 0) continue; /* no request touched it */
            sum += v;
            ++*used;
        }
    return *used ? sum / (double)*used : 0;
}

uint32_t vw_heat_colour(const vw_heat_cache *c, double v)
{
    if (c->picture) {
        const int g = (int)lround((v < 0 ? 0 : v > 1 ? 1 : v) * 255);
        return (uint32_t)(g << 16 | g << 8 | g);
    }
    return isfinite(v) ? vw_colormap(c->ramp0 + (1 - c->ramp0) * vw_heat_t((vw_mode)c->mode, v, c->lo, c->hi))
                       : VW_COL_NAN;
}

/* Rebuilds the panel's texture for the cells [c->wy0, c->wy1) x [c->wx0, c->wx1) of the
 * plane (those in view): one texel per cell, or the mean of a block of cells when the
 * window has more cells than the panel has pixels. The colour range is the plane's: the
 * texels' when the window is the whole plane, else every cell's, so panning never
 * recolours a cell. Values of an integer tensor's empty cells (negative) are left out: a
 * texel with only empty cells is background. A picture is drawn as itself: grey, or its
 * image's three channels as RGB. */
#define RANGE_CELLS (1 << 20)        /* most cells a window's colour range scans */
#define TEXEL_THREAD_CELLS (1 << 22) /* a texture over more cells is built on two threads */

/* Texel rows [ty0, ty1) of a texture being built: their block means into acc and none,
 * the range of a whole plane's texels and its empty cells. */
typedef struct texel_rows {
    const vw_state *s;
    const vw_heat_cache *c;
    int t;
    vw_mode mode;
    int64_t base, w, ny, nx;
    const float *tile;
    int tw, th, whole, ty0, ty1;
    int hide; /* padding taps' entries print ? (vw_padding_hidden): a texel of only those is grey */
    double *acc;
    uint8_t *none; /* 1: no cell to show (background), 2: only cells that print ? */
    double lo, hi;
    int64_t empty;
} texel_rows;

static void *texel_span(void *arg)
{
    texel_rows *r = arg;
    int64_t used, ignored = 0;
    for (int ty = r->ty0; ty < r->ty1; ++ty) {
        int64_t y0 = r->c->wy0 + ty * r->ny / r->th, y1 = r->c->wy0 + (ty + 1) * r->ny / r->th;
        for (int tx = 0; tx < r->tw; ++tx) {
            int64_t x0 = r->c->wx0 + tx * r->nx / r->tw, x1 = r->c->wx0 + (tx + 1) * r->nx / r->tw;
            const int64_t was = r->whole ? r->empty : ignored;
            const double v = block_mean(r->s, r->tile, r->t, r->mode, r->base, r->w, y0, y1, x0, x1, &used,
                                        r->whole ? &r->empty : &ignored);
            const int64_t emptied = (r->whole ? r->empty : ignored) - was;
            r->acc[(size_t)ty * r->tw + tx] = v;
            r->none[(size_t)ty * r->tw + tx] = used ? 0 : r->hide && emptied < (y1 - y0) * (x1 - x0) ? 2 : 1;
            if (!used || !r->whole) continue;
            if (isfinite(v) && v < r->lo) r->lo = v;
            if (isfinite(v) && v > r->hi) r->hi = v;
        }
    }
    return NULL;
}

int vw_texel_colour(const vw_heat_cache *c, int64_t y, int64_t x, uint32_t *rgb)
{
    if (!c->tex || !c->texels || c->ntx != c->wx1 - c->wx0 || c->nty != c->wy1 - c->wy0 || y < c->wy0 || y >= c->wy1 ||
        x < c->wx0 || x >= c->wx1)
        return 0;
    *rgb = c->texels[(y - c->wy0) * c->ntx + (x - c->wx0)] & 0xFFFFFFu;
    return 1;
}

static void build_texture(vw_draw *d, const vw_state *s, int panel, vw_heat_cache *c, const vw_heatmap *m,
                          const float *tile)
{
    int t = s->panel[panel].tensor;
    vw_plane_dims pd = vw_plane_dims_of(&s->tr->tensors[t]);
    int64_t plane = s->panel[panel].plane;
    vw_mode mode = vw_effective_mode(s, panel);
    if (plane < 0 || plane >= pd.planes) plane = 0, pd.h = pd.w = 0; /* never read outside the tensor */
    const int pic = mode == VW_MODE_VALUES ? picture_channels(s, t) : 0;
    const int hide = mode == VW_MODE_VALUES && !pic && vw_padding_hidden(s);
    const int64_t base = plane * pd.h * pd.w, ny = c->wy1 - c->wy0, nx = c->wx1 - c->wx0;
    const int whole = ny == pd.h && nx == pd.w;
    double vw = m->cell * (double)nx, vh = m->cell * (double)ny;
    int tw = nx < vw ? (int)nx : (int)(vw > 1 ? vw : 1);
    int th = ny < vh ? (int)ny : (int)(vh > 1 ? vh : 1);
    free(c->texels);
    c->texels = NULL;
    double *acc = malloc((size_t)tw * th * sizeof *acc);
    uint32_t *px = malloc((size_t)tw * th * sizeof *px);
    uint8_t *none = malloc((size_t)tw * th); /* a texel with no cell to show: background */
    double lo = INFINITY, hi = -INFINITY;
    int64_t empty = 0, used, ignored = 0;
    if (!acc || !px || !none) goto out;
    /* the texels' block means, the lower half of the rows on a second thread when the
     * plane is big (each texel as one thread would compute it: the same pixels) */
    texel_rows half[2] = {
        {s, c, t, mode, base, pd.w, ny, nx, tile, tw, th, whole, 0, th, hide, acc, none, INFINITY, -INFINITY, 0},
        {s, c, t, mode, base, pd.w, ny, nx, tile, tw, th, whole, 0, th, hide, acc, none, INFINITY, -INFINITY, 0}};
    pthread_t helper;
    const int two = ny * nx >= (d->split_cells > 0 ? d->split_cells : TEXEL_THREAD_CELLS) && th > 1;
    if (two) half[0].ty1 = half[1].ty0 = th / 2;
    const int started = two && pthread_create(&helper, NULL, texel_span, &half[1]) == 0;
    texel_span(&half[0]);
    if (started) pthread_join(helper, NULL);
    else if (two) texel_span(&half[1]);
    for (int k = 0; k < 1 + two; ++k) {
        lo = fmin(lo, half[k].lo), hi = fmax(hi, half[k].hi);
        empty += half[k].empty;
    }
    const int same_range = c->range_ok && c->range_tensor == t && c->range_plane == plane && c->range_mode == mode &&
                           c->range_indexed == (s->idx != NULL) && c->range_hide == hide;
    if (!whole && same_range) /* a window of a plane scanned before */
        lo = c->range_lo, hi = c->range_hi, empty = c->range_empty;
    /* a window: the range of the plane's cells; of every stride-th cell of a plane over
     * RANGE_CELLS (a 100 M-event trace's columns plane has 47 M: the first frame would
     * wait a second for them), its empty cells counted as stride each */
    const int64_t cells = pd.h * pd.w, stride = cells > RANGE_CELLS ? (cells + RANGE_CELLS - 1) / RANGE_CELLS : 1;
    for (int64_t i = 0; !whole && !same_range && i < cells; i += stride) {
        const int64_t y = i / pd.w, x = i % pd.w, was = empty;
        const double v = block_mean(s, tile, t, mode, base, pd.w, y, y + 1, x, x + 1, &used, &empty);
        empty += (empty - was) * (stride - 1);
        if (used && isfinite(v) && v < lo) lo = v;
        if (used && isfinite(v) && v > hi) hi = v;
    }
    if (!whole && !same_range) {
        c->range_ok = 1, c->range_tensor = t, c->range_plane = plane, c->range_mode = mode;
        c->range_indexed = s->idx != NULL, c->range_hide = hide;
        c->range_lo = lo, c->range_hi = hi, c->range_empty = empty;
    }
    if (mode != VW_MODE_VALUES && lo > 0) lo = 0; /* counts start at zero */
    if (!(lo <= hi)) lo = hi = 0;
    if (mode == VW_MODE_SECTORS) lo = 1, hi = 32; /* one scale for every plane and trace */
    c->ramp0 = empty ? 0.25 : 0;
    c->lo = lo, c->hi = hi, c->mode = mode, c->picture = pic;
    const int64_t chan = pic == 3 ? pd.h * pd.w : 0, first = pic == 3 ? plane / 3 * 3 * pd.h * pd.w : base;
    c->nan = 0;
    for (int ty = 0; ty < th; ++ty)
        for (int tx = 0; tx < tw; ++tx) {
            const size_t i = (size_t)ty * tw + tx;
            c->nan += !none[i] && !pic && isnan(acc[i]);
            /* a texel of only ?s: the grey of the input's margin, where padding lies (issue 38 N6) */
            uint32_t col = none[i] == 2 ? vw_margin_grey(c->wy0 + ty * ny / th, c->wx0 + tx * nx / tw)
                           : none[i]    ? VW_COL_PANEL
                                        : vw_heat_colour(c, acc[i]);
            if (pic == 3 && !none[i]) { /* the image's R, G and B planes, block means each */
                int64_t y0 = c->wy0 + ty * ny / th, y1 = c->wy0 + (ty + 1) * ny / th;
                int64_t x0 = c->wx0 + tx * nx / tw, x1 = c->wx0 + (tx + 1) * nx / tw;
                col = 0;
                for (int k = 0; k < 3; ++k)
                    col = col << 8 | (vw_heat_colour(c, block_mean(s, tile, t, mode, first + k * chan, pd.w, y0, y1, x0,
                                                                   x1, &used, &ignored)) &
                                      255);
            }
            px[i] = 0xFF000000u | col;
        }
    c->tex = SDL_CreateTexture(d->r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STATIC, tw, th);
    if (c->tex) SDL_UpdateTexture(c->tex, NULL, px, tw * (int)sizeof *px);
    if ((int64_t)tw * th <= 20000) { /* kept for the record (vw_texel_colour) */
        free(c->texels);
        c->texels = px, px = NULL;
        c->ntx = tw, c->nty = th;
    }
out:
    free(acc);
    free(px);
    free(none);
    c->lo = lo;
    c->hi = hi;
    c->empty = empty;
    c->mode = mode;
}

/* Margin cells (outside the plane, where padding reads land) as a dim checkerboard. */
/* The ring of cells outside the plane, a grey checker. On a slide that draws the dropped
 * window (lesson 12) the padding, which windows read as zeros, is blue-grey, apart from
 * the rows and columns past it, which no window can read (issue 38 D8). */
static void draw_margin(SDL_Renderer *r, const vw_state *s, int panel, const vw_heatmap *m, vw_rect area)
{
    if (!m->margin || m->cell < 4) return;
    /* the race's room for its labels above the shared tile is no cells of it */
    if (!vw_margin_cells(s)) return;
    vw_fig_dropped dr;
    const int padded = s->nslides && (s->slides[s->slide].figure & VW_FIGURE_DROPPED) &&
                       vw_fig_dropped_find(s, panel, &dr) && dr.g.in[0] == m->rows && dr.g.in[1] == m->cols;
    for (int64_t y = -m->side[VW_SIDE_TOP]; y < m->rows + m->side[VW_SIDE_BOTTOM]; ++y)
        for (int64_t x = -m->side[VW_SIDE_LEFT]; x < m->cols + m->side[VW_SIDE_RIGHT]; ++x) {
            if (!vw_rect_overlap(vw_heatmap_cell(m, y, x), area)) continue;
            if (y >= 0 && y < m->rows && x >= 0 && x < m->cols) continue;
            const int pad = padded && y >= -dr.g.pad[0] && y < m->rows + dr.g.pad[0] && x >= -dr.g.pad[1] &&
                            x < m->cols + dr.g.pad[1];
            const uint32_t c = pad ? (((y + x) & 1) ? 0x2E3C5C : 0x364668) : vw_margin_grey(y, x);
            vw_fill(r, vw_heatmap_cell(m, y, x), c);
        }
}

const char *vw_legend_name(const char *name, const char *brief, int room, int adv, int *width)
{
    const int full = ((int)strlen(name) + 2) * adv, shortw = brief ? ((int)strlen(brief) + 2) * adv : 0;
    *width = full;
    if (room - full >= 4 * adv) return name; /* the whole name and a bar of 4 characters */
    if (brief && room - shortw >= 4 * adv) return *width = shortw, brief;
    /* a bar of 4 characters before the name: colours without their key read as nothing
     * (issue 38 D12, twelfth re-trial N22: 05 s2 at 1024x768 drew "0 ~21.67 values", no
     * bar; s8 and s12 a 12 px one) */
    if (room >= 4 * adv) return *width = 0, "";
    if (room >= full) return name; /* no bar: the name whole */
    if (brief && room >= shortw) return *width = shortw, brief;
    *width = 0;
    return ""; /* no room for it whole: none of it */
}

/* The ends of the legend's range as the cells print them: exact, or marked rounded
 * (issue 38 D9). */
static void legend_ends(const vw_heat_cache *c, char lo[48], char hi[48])
{
    char t[40];
    snprintf(lo, 48, "%s%s", vw_value_text(t, sizeof t, c->picture ? 0 : c->lo) ? "" : "~", t);
    snprintf(hi, 48, "%s%s", vw_value_text(t, sizeof t, c->picture ? 1 : c->hi) ? "" : "~", t);
}

int vw_legend_least_chars(const vw_heat_cache *c)
{
    char lo[48], hi[48];
    legend_ends(c, lo, hi);
    /* lo, a bar of 4, hi, and the NaN key (vw_legend_name: the name may go) */
    return (int)(strlen(lo) + strlen(hi)) + 2 + 4 + (c->nan ? 6 : 0);
}

static void draw_legend(vw_draw *d, const vw_state *s, const vw_layout *L, int panel, const vw_heat_cache *c)
{
    vw_rect lg = panel ? L->output_legend : L->input_legend;
    if (L->legend_top & (1 << panel)) { /* on the header line, after the header */
        lg.w = lg.x + lg.w - 4 - d->legend_x[panel];
        lg.x = d->legend_x[panel];
    }
    int bar_w = lg.w < 512 ? lg.w : 512, bar_x = lg.x, bar_y = lg.y, bar_h = 10;
    char lo[48], hi[48], mid[64];
    legend_ends(c, lo, hi);
    if (L->arrangement) {     /* a slide's legend is one line: lo [bar] hi  mode */
        char phase[48];       /* the shared tile: the values as the focused block's phase leaves them */
        if (d->tile.cut >= 0) /* "as-read": the tile as the focused item's first read finds it */
            snprintf(phase, sizeof phase, "values item %u reads", d->tile.item);
        else snprintf(phase, sizeof phase, "values after phase %lld", (long long)d->tile.phase);
        char shortname[48];
        if (d->tile.cut >= 0) snprintf(shortname, sizeof shortname, "as read");
        else snprintf(shortname, sizeof shortname, "phase %lld", (long long)d->tile.phase);
        /* the ends exact in the text's font, then in a smaller legible one, then in their
         * narrow form (14 s5's output, 266 px at 1920x1080: "126.828125" ran into the
         * band), as the cells print: the first that keeps a bar of 4 characters (issue 38
         * D12: a narrow panel's "113.0625 126.828125" left a 16 px bar at 1280x960, a
         * revealed 190 px strip none at 1920x1080) */
        const int fonts = vw_value_fonts(d, d->rec.h);
        const vw_font *f = &d->font;
        const char *name = "";
        int nw = 0, lw = 0, hw = 0, nanw = 0;
        for (int form = 0; form < 2 * fonts; ++form) {
            const int narrow = form >= fonts, k = form % fonts;
            if (narrow && c->picture) break;
            f = k ? vw_value_font(d, k) : &d->font;
            const int adv = f->advance > 0 ? f->advance : 8;
            legend_ends(c, lo, hi);
            if (narrow) vw_cell_text(lo, 48, c->lo, 1), vw_cell_text(hi, 48, c->hi, 1);
            lw = (int)strlen(lo) * adv, hw = (int)strlen(hi) * adv;
            /* NaN cells (the simulator's poison for a slot never written) are magenta, off
             * the ramp: a swatch and the word say so (issue 38 D12: 11 s7, 13 s2-s8) */
            nanw = c->nan ? 6 * adv : 0;
            /* the name whole or not at all ("values after phase" lost its number, "values"
             * read "val": issue 38 D12): a short bar, then "phase 1", then no bar, then no
             * name; the bar and the name a character clear of the next panel's legend */
            const int room = lg.w - lw - hw - nanw - 3 * adv;
            name = vw_legend_name(c->tile_key >= 0 ? phase : vw_mode_name((vw_mode)c->mode),
                                  c->tile_key >= 0 ? shortname : NULL, room, adv, &nw);
            nw += nanw;
            bar_w = lg.w - lw - hw - nw - 3 * adv;
            if (bar_w >= 4 * adv) break;
        }
        const int adv = f->advance > 0 ? f->advance : 8, ty = lg.y + (d->font.line - f->line) / 2;
        bar_x = lg.x + lw + adv;
        if (bar_w > 400) bar_w = 400;
        bar_h = f->line / 2;
        bar_y = ty + (f->line - bar_h) / 2;
        vw_text(f, d->r, lg.x, ty, VW_COL_TEXT, 0, lo);
        if (bar_w > 8)
            for (int i = 0; i < bar_w; ++i) {
                vw_rect px = {.x = bar_x + i, .y = bar_y, .w = 1, .h = bar_h};
                const double t = (double)i / (bar_w > 1 ? bar_w - 1 : 1);
                vw_fill(d->r, px, c->picture ? vw_heat_colour(c, t) : vw_colormap(c->ramp0 + (1 - c->ramp0) * t));
            }
        const int hx = bar_x + (bar_w > 8 ? bar_w : 0) + adv;
        vw_text(f, d->r, hx, ty, VW_COL_TEXT, 0, hi);
        int nx = hx + hw + 2 * adv;
        if (c->nan) {
            vw_fill(d->r, (vw_rect){.x = nx, .y = bar_y, .w = adv, .h = bar_h}, VW_COL_NAN);
            vw_text(f, d->r, nx + adv + adv / 2, ty, VW_COL_TEXT, 0, "NaN");
            nx += nanw;
        }
        vw_text(f, d->r, nx, ty, VW_COL_DIM, lg.x + lg.w - nx, name);
        const int end = name[0] ? nx + (int)strlen(name) * adv : nx - 2 * adv;
        vw_rec_panel *rp = &d->rec.panel[panel];
        rp->legend = (vw_rect){.x = lg.x, .y = lg.y, .w = end - lg.x, .h = d->font.line};
        snprintf(rp->ends[0], sizeof rp->ends[0], "%s", lo);
        snprintf(rp->ends[1], sizeof rp->ends[1], "%s", hi);
        rp->mode = c->tile_key >= 0 ? VW_MODE_VALUES : (int)c->mode, rp->lo = c->lo, rp->hi = c->hi;
        rp->legend_bar = 1 + (bar_w > 8 ? bar_w : 0), rp->legend_adv = adv;
        return;
    }
    for (int i = 0; i < bar_w; ++i) {
        vw_rect px = {.x = bar_x + i, .y = bar_y, .w = 1, .h = bar_h};
        const double f = (double)i / (bar_w > 1 ? bar_w - 1 : 1);
        vw_fill(d->r, px, c->picture ? vw_heat_colour(c, f) : vw_colormap(c->ramp0 + (1 - c->ramp0) * f));
    }
    snprintf(mid, sizeof mid, "%s", vw_mode_name((vw_mode)c->mode));
    const vw_mode want = vw_panel_mode(s, panel);
    if (want != c->mode)
        snprintf(mid, sizeof mid, "values (%s: %s)", vw_mode_name(want),
                 s->idx ? (want == VW_MODE_SECTORS ? "trace too big" : "tensor too big") : "after indexing");
    else if (c->empty) snprintf(mid, sizeof mid, "values, %lld empty (< 0)", (long long)c->empty);
    else if (c->mode == VW_MODE_SECTORS) snprintf(mid, sizeof mid, "sectors per request (log2 scale)");
    else if (c->picture)
        snprintf(mid, sizeof mid, "picture, %s 0 .. 1 (I: colormap)", c->picture == 3 ? "RGB" : "grey");
    int ty = lg.y + 12;
    vw_text(&d->font, d->r, lg.x, ty, VW_COL_TEXT, 0, lo);
    vw_text(&d->font, d->r, lg.x + bar_w - (int)strlen(hi) * d->font.advance, ty, VW_COL_TEXT, 0, hi);
    vw_text(&d->font, d->r, lg.x + bar_w / 2 - (int)strlen(mid) * d->font.advance / 2, ty, VW_COL_DIM, 0, mid);
}


/* map narrowed where the plane (its margin included) reaches past it, to the edges of
 * the last columns and rows whole within it, so no cell shows as a strip of colour too
 * thin for its number (issue 38: 08 s5's last column, 11 s9's last row); cells under
 * 8 px stay as they are. Rows stay where dropping the cut one would take the grid under
 * `need` px (vw_grid_need: the height the 55 % rule measures) while it held it. */
static vw_rect whole_cells(const vw_heatmap *m, vw_rect map, int need)
{
    if (m->cell < 8) return map;
    const double lo[2] = {m->ox - m->side[VW_SIDE_LEFT] * m->cell, m->oy - m->side[VW_SIDE_TOP] * m->cell};
    const double hi[2] = {m->ox + (double)(m->cols + m->side[VW_SIDE_RIGHT]) * m->cell,
                          m->oy + (double)(m->rows + m->side[VW_SIDE_BOTTOM]) * m->cell};
    const double o[2] = {m->ox, m->oy};
    int a[2] = {map.x, map.y}, b[2] = {map.x + map.w, map.y + map.h};
    for (int k = 0; k < 2; ++k) {
        const int a0 = a[k], b0 = b[k];
        if (lo[k] < a[k] - 0.5) a[k] = (int)floor(o[k] + ceil((a[k] - o[k]) / m->cell - 1e-9) * m->cell + 1e-9);
        if (hi[k] > b[k] + 0.5) b[k] = (int)floor(o[k] + floor((b[k] - o[k]) / m->cell + 1e-9) * m->cell + 1e-9);
        const double before = fmin(b0, hi[k]) - fmax(a0, lo[k]), after = fmin(b[k], hi[k]) - fmax(a[k], lo[k]);
        if (k == 1 && after < need && before >= need) a[k] = a0, b[k] = b0;
    }
    if (b[0] <= a[0] || b[1] <= a[1]) return map;
    return (vw_rect){.x = a[0], .y = a[1], .w = b[0] - a[0], .h = b[1] - a[1]};
}

static int rect_inside(vw_rect r, vw_rect in)
{
    return r.x >= in.x && r.y >= in.y && r.x + r.w <= in.x + in.w && r.y + r.h <= in.y + in.h;
}

void vw_draw_heatmap(vw_draw *d, const vw_state *s, const vw_layout *L, int panel)
{
    vw_rect area = panel ? L->output : L->input;
    vw_heat_cache *c = &d->heat[panel];
    int t = s->panel[panel].tensor;
    char head[VW_LINE_LEN];
    vw_rec_panel *rp = &d->rec.panel[panel];
    rp->tensor = t;
    rp->plane = s->panel[panel].plane;
    rp->rect = area;
    rp->map = vw_panel_map_area(L, panel);
    vw_fill(d->r, area, VW_COL_PANEL);
    if (t < 0) {
        vw_describe_panel_fit(s, panel, 0, 0, (area.w - 8) / (d->font.advance > 0 ? d->font.advance : 8), head,
                              sizeof head);
        vw_text(&d->font, d->r, area.x + 4, area.y + 2, VW_COL_DIM, area.w - 8, head);
        return;
    }
    if (vw_story_hides(s, panel)) {
        /* the slide's question is about these values: nothing of them until the answer
         * (not the range in the header or legend either) */
        const ks_tensor *T = &s->tr->tensors[t];
        rp->hidden = 1;
        snprintf(head, sizeof head, "%s: hidden until the answer", T->name);
        /* a narrow panel takes it on as many lines as it needs, not cut (issue 38 D12:
         * "hidden until the a"; lesson 10 step 8's "columns: hidde" at 1280x960) */
        static vw_lines hl;
        hl.n = 0;
        vw_wrap(&hl, 4, VW_STYLE_TEXT, head, (area.w - 8) / (d->font.advance > 0 ? d->font.advance : 8));
        for (int i = 0; i < hl.n; ++i)
            vw_text(&d->font, d->r, area.x + 4, area.y + 2 + i * d->font.line, VW_COL_TEXT, area.w - 8, hl.text[i]);
        const char *q = "?";
        vw_text(&d->font, d->r, area.x + area.w / 2 - d->font.advance / 2, area.y + area.h / 2 - d->font.line / 2,
                VW_COL_DIM, 0, q);
        return;
    }
    const vw_table *tb = vw_panel_table(s, panel);
    if (tb) { /* a narrow index tensor the step reads row by row */
        vw_draw_table(d, s, L, panel, tb);
        return;
    }
    vw_heatmap m = vw_panel_map(s, L, panel);
    /* a slide (and the gallery) shows a window of a plane in whole cells: a column or row
     * the map's edge cut kept its colour without its number (issue 38: 08 s5, 11 s9; the
     * gallery's last column cut to half its width) */
    const vw_rect map = s->nslides || s->whole_cells
                            ? whole_cells(&m, vw_panel_map_area(L, panel),
                                          vw_grid_need(m.rows, m.cols, m.side, 0, L->w, L->h, L->line))
                            : vw_panel_map_area(L, panel);
    int64_t wy0, wy1, wx0, wx1, tile_key;
    vw_visible_cells(&m, map, &wy0, &wy1, &wx0, &wx1);
    d->cells_map[panel] = map;
    const float *tile = vw_effective_mode(s, panel) == VW_MODE_VALUES ? vw_tile_for(d, s, t, &tile_key) : NULL;
    if (!tile) tile_key = -1;
    if (!c->tex || c->tensor != t || c->plane != s->panel[panel].plane || c->indexed != (s->idx != NULL) ||
        (c->mode != vw_effective_mode(s, panel)) || memcmp(&c->area, &area, sizeof area) || c->wy0 != wy0 ||
        c->wy1 != wy1 || c->wx0 != wx0 || c->wx1 != wx1 || c->cell != m.cell || c->pictures != s->picture ||
        c->tile_key != tile_key || c->hide != vw_padding_hidden(s)) {
        if (c->tex) SDL_DestroyTexture(c->tex);
        c->tex = NULL;
        c->tensor = t;
        c->plane = s->panel[panel].plane;
        c->indexed = s->idx != NULL;
        c->area = area;
        c->wy0 = wy0, c->wy1 = wy1, c->wx0 = wx0, c->wx1 = wx1, c->cell = m.cell, c->pictures = s->picture;
        c->hide = vw_padding_hidden(s);
        if (c->tile_key != tile_key) c->range_ok = 0; /* another phase: another range */
        c->tile_key = tile_key;
        build_texture(d, s, panel, c, &m, tile);
    }
    const SDL_Rect clip = vw_sdl(map); /* a zoomed plane reaches past its panel */
    SDL_RenderSetClipRect(d->r, &clip);
    draw_margin(d->r, s, panel, &m, map);
    int x0 = (int)floor(m.ox + m.cell * (double)wx0), y0 = (int)floor(m.oy + m.cell * (double)wy0);
    SDL_Rect dst = {.x = x0,
                    .y = y0,
                    .w = (int)floor(m.ox + m.cell * (double)wx1) - x0,
                    .h = (int)floor(m.oy + m.cell * (double)wy1) - y0};
    if (dst.w < 1) dst.w = 1;
    if (dst.h < 1) dst.h = 1;
    int tw = 0, th = 0;
    if (c->tex) SDL_QueryTexture(c->tex, NULL, NULL, &tw, &th);
    const int past = dst.x < clip.x || dst.y < clip.y || dst.x + dst.w > clip.x + clip.w ||
                     dst.y + dst.h > clip.y + clip.h;
    if (c->tex && wy1 > wy0 && wx1 > wx0 && past && tw == wx1 - wx0 && th == wy1 - wy0 && (int64_t)tw * th <= 20000) {
        /* a texel a cell, the plane reaching past the map: cell by cell, each where
         * vw_heatmap_cell puts it (SDL's software renderer scaled the whole texture into
         * the clipped part of one destination: 08 s5's ring at 1280x960 drew its colours
         * a third of a cell off its numbers) */
        for (int ty = 0; ty < th; ++ty)
            for (int tx = 0; tx < tw; ++tx) {
                const vw_rect r = vw_heatmap_cell(&m, wy0 + ty, wx0 + tx);
                if (!vw_rect_overlap(r, map)) continue;
                const SDL_Rect src = {.x = tx, .y = ty, .w = 1, .h = 1}, to = vw_sdl(r);
                SDL_RenderCopy(d->r, c->tex, &src, &to);
            }
    } else if (c->tex && wy1 > wy0 && wx1 > wx0) SDL_RenderCopy(d->r, c->tex, NULL, &dst);
    const int k = vw_draw_cell_values(d, s, &m, map, panel, c, tile);
    rp->axes = 0;
    if (m.axes && k >= 0) { /* a sparse plane's row and column numbers, dim, round its filled cells */
        const vw_font *f = vw_value_font(d, k);
        const int64_t lr = m.fill[0] - 1, lc = m.fill[1] - 1;
        rp->axes_row = lr, rp->axes_col = lc;
        const ks_tensor *T = &s->tr->tensors[t];
        const int64_t base = s->panel[panel].plane * m.rows * m.cols;
        for (int a = 0; a < 2; ++a)
            for (int64_t i = m.fill[a]; i <= m.fill[a + 2]; ++i) {
                const int64_t y = a ? lr : i, x = a ? i : lc;
                if (i < 0 || i >= (a ? m.cols : m.rows)) continue;
                if (y >= 0 && x >= 0 && y < m.rows && x < m.cols && !vw_cell_empty(T, base + y * m.cols + x)) continue;
                /* nor in a cell that prints a count of its own (issue 38 D3, eighth re-trial:
                 * 08 s8's in_sites by visits printed 0 in every cell, the numbers over them) */
                int taken = 0;
                for (int j = 0; j < rp->nvalues && !taken; ++j) taken = rp->value[j].y == y && rp->value[j].x == x;
                if (taken) continue;
                char num[24];
                snprintf(num, sizeof num, "%lld", (long long)i);
                vw_rect at;
                if (!vw_dim_text_in_cell(d, f, &m, y, x, map, num, &at)) continue;
                if (rp->axes < 64) rp->axes_box[rp->axes] = at;
                rp->axes++;
            }
    }
    /* a (y, x) question's panel: row numbers in the ring left of the plane (and its margin),
     * column numbers in the ring above, dim, a size under the values' (issue 38 D12) */
    if (vw_panel_asks_yx(s, panel) && !m.axes) {
        const int nf = vw_value_fonts(d, d->rec.h);
        const int64_t ar = -m.side[VW_SIDE_TOP], ac = -m.side[VW_SIDE_LEFT];
        rp->axes_row = ar, rp->axes_col = ac;
        for (int a = 0; a < 2; ++a)
            for (int64_t i = a ? wx0 - m.side[VW_SIDE_LEFT] + 1 : wy0 - m.side[VW_SIDE_TOP] + 1;
                 i < (a ? wx1 + m.side[VW_SIDE_RIGHT] : wy1 + m.side[VW_SIDE_BOTTOM]); ++i) {
                char num[24];
                snprintf(num, sizeof num, "%lld", (long long)i);
                vw_rect at;
                /* the biggest value font the number fits its cell in */
                for (int f = k > 0 ? k : 0; f < nf; ++f)
                    if (vw_dim_text_in_cell(d, vw_value_font(d, f), &m, a ? ar : i, a ? i : ac, map, num, &at)) {
                        if (rp->axes < 64) rp->axes_box[rp->axes] = at;
                        rp->axes++;
                        break;
                    }
            }
    }
    /* the record: the plane's extent in view, its cells, their values and the step's cells */
    {
        vw_rect ext = {.x = dst.x, .y = dst.y, .w = dst.w, .h = dst.h};
        const int x1 = ext.x + ext.w < map.x + map.w ? ext.x + ext.w : map.x + map.w;
        const int y1 = ext.y + ext.h < map.y + map.h ? ext.y + ext.h : map.y + map.h;
        ext.x = ext.x > map.x ? ext.x : map.x, ext.y = ext.y > map.y ? ext.y : map.y;
        ext.w = x1 - ext.x, ext.h = y1 - ext.y;
        rp->extent = ext;
        rp->rows = m.rows, rp->cols = m.cols, rp->margin = m.margin;
        /* the sides as cells: a figure's label room is no part of the grid the share measures */
        if (vw_margin_cells(s)) memcpy(rp->side, m.side, sizeof rp->side);
        else memset(rp->side, 0, sizeof rp->side);
        rp->cell = m.cell;
        rp->ox = m.ox, rp->oy = m.oy;
        rp->values = k >= 0;
        rp->sparse = c->empty > 0;
        int64_t fy0, fx0, fy1, fx1;
        if (rp->sparse && vw_filled_box(s, panel, &fy0, &fx0, &fy1, &fx1)) {
            const vw_rect a = vw_heatmap_cell(&m, fy0, fx0), b = vw_heatmap_cell(&m, fy1, fx1);
            const int top = a.y > map.y ? a.y : map.y, left = a.x > map.x ? a.x : map.x;
            const int bottom = b.y + b.h < map.y + map.h ? b.y + b.h : map.y + map.h;
            const int right = b.x + b.w < map.x + map.w ? b.x + b.w : map.x + map.w;
            rp->fill_rows = fy1 - fy0 + 1, rp->fill_cols = fx1 - fx0 + 1;
            rp->fill = (vw_rect){.x = left, .y = top, .w = right - left, .h = bottom - top};
        }
        rp->value_px = k >= 0 ? vw_value_font_px(d, k) : 0;
        rp->value_font = k;
        vw_values_need(s, L, panel, &rp->need_cell, &rp->focus_cell);
        rp->zoomed = vw_panel_zoomed(s, L, panel);
        rp->nfocus = vw_focus_cells(s, panel, &m, rp->focus, VW_REC_FOCUS);
        rp->item_cells = vw_step_cells_shown(s, panel, &m, map, &rp->item_shown);
        rp->covered = vw_story_covers(s, panel);
        rp->tap_zoom = vw_panel_tap_zoom(s, L, panel);
        rp->yx = vw_panel_asks_yx(s, panel);
        if (c->mode == VW_MODE_VALUES && c->tile_key < 0)
            rp->hidden_ends = vw_padding_range_ends(s, t, s->panel[panel].plane, c->lo, c->hi);
        vw_rect ans; /* the answer's outline too, once it shows */
        if (rp->nfocus < VW_REC_FOCUS && vw_answer_cell_rect(s, &m, panel, &ans))
            rp->focus[rp->nfocus++] = (vw_rect){.x = ans.x - 8, .y = ans.y - 8, .w = ans.w + 16, .h = ans.h + 16};
    }
    SDL_RenderSetClipRect(d->r, NULL);
    /* the header, and a legend on its line (a slide's layout for a taller picture) after it */
    const int adv = d->font.advance > 0 ? d->font.advance : 8, top = (L->legend_top >> panel) & 1;
    int cols = (area.w - 8) / adv;
    if (top) { /* the legend's name whole where the header's shortest form leaves room, else a bar of 4 */
        const int least = vw_legend_least_chars(c) + 2, named = least + (int)strlen(vw_mode_name((vw_mode)c->mode)) + 2;
        vw_describe_panel_fit(s, panel, c->lo, c->hi, cols - named > 1 ? cols - named : 1, head, sizeof head);
        cols -= (int)strlen(head) <= cols - named ? named : least;
    }
    /* a slide's window of the plane says which rows and columns it shows, after the
     * header's shortest form that leaves room for it */
    char win[112];
    const vw_font *font = &d->font;
    /* the cells in view: those that print their numbers where the cells print them (a
     * cell the map's edge cuts keeps its colour without one), else the whole ones */
    const double cw = m.cell > 0 ? m.cell : 1;
    int64_t vy0 = (int64_t)fmax(0, ceil((map.y - m.oy) / cw - 1e-6)),
            vy1 = (int64_t)fmin((double)m.rows, floor((map.y + map.h - m.oy) / cw + 1e-6)),
            vx0 = (int64_t)fmax(0, ceil((map.x - m.ox) / cw - 1e-6)),
            vx1 = (int64_t)fmin((double)m.cols, floor((map.x + map.w - m.ox) / cw + 1e-6));
    /* and those that print a number in what shows of them; a whole cell that prints none
     * (a NaN slot of 11 s7's poisoned tile) is in view all the same (issue 38 D12: its
     * header read "rows 0..1" over 16 rows) */
    if (rp->values && rp->nvalues > 0 && !rp->values_cut && !rp->sparse) {
        for (int j = 0; j < rp->nvalues; ++j) {
            const int64_t y = rp->value[j].y, x = rp->value[j].x;
            vy0 = y < vy0 ? y : vy0, vx0 = x < vx0 ? x : vx0;
            vy1 = y + 1 > vy1 ? y + 1 : vy1, vx1 = x + 1 > vx1 ? x + 1 : vx1;
        }
    }
    /* (the gallery's columns too: issue 38 N14, "columns[0, :, :] (1, 9, 49)" over 9 of them) */
    const int window = (s->nslides || s->whole_cells) &&
                       vw_window_text(s, panel, &m, vy0, vy1, vx0, vx1, win, sizeof win);
    int named = 0;
    if (window) {
        /* as a slice of the plane, the header's own notation, "in[:15, 1:7]": one notation
         * on every slide (issue 38 D12, eighth re-trial: 13 s6 headed one panel
         * "in[:15, 1:7]", exclusive, the other "rows 0..14, cols 1..7", inclusive) */
        char sl[224] = "";
        if (!named && vw_window_slice(s, panel, &m, vy0, vy1, vx0, vx1, cols, sl, sizeof sl))
            snprintf(head, sizeof head, "%s", sl), named = 1;
        /* else in a smaller value font a room still reads (a narrow strip: 10's columns) */
        for (int k = 1; !named && k < vw_value_fonts(d, d->rec.h); ++k) {
            const vw_font *f = vw_value_font(d, k);
            const int kc = f->advance > 0 ? (top ? cols * adv : area.w - 8) / f->advance : 0;
            if (vw_window_slice(s, panel, &m, vy0, vy1, vx0, vx1, kc, sl, sizeof sl))
                snprintf(head, sizeof head, "%s", sl), named = 1, font = f;
        }
    }
    /* else, where the layout gave the header a second line (vw_layout.header_two), the
     * slice on two: the tensor's name over its brackets ("columns" over "[0,:24,16:19]") */
    char second[224] = "";
    if (window && !named && ((L->header_two >> panel) & 1)) {
        char sl[224];
        for (int k = 0; !named && k < vw_value_fonts(d, d->rec.h); ++k) {
            const vw_font *f = k ? vw_value_font(d, k) : &d->font;
            const int kc = f->advance > 0 ? (area.w - 8) / f->advance : 0;
            char *br = vw_window_slice(s, panel, &m, vy0, vy1, vx0, vx1, 1 << 20, sl, sizeof sl) ? strchr(sl, '[') : 0;
            if (!br) break;
            size_t n = 0; /* without the spaces after its commas, as a strip writes it */
            for (const char *q = br; *q && n + 1 < sizeof second; ++q)
                if (!(*q == ' ' && q > br && q[-1] == ',')) second[n++] = *q;
            second[n] = 0, *br = 0;
            if ((int)strlen(sl) <= kc && (int)n <= kc) snprintf(head, sizeof head, "%.99s", sl), named = 1, font = f;
        }
        if (!named) second[0] = 0;
    }
    if (!named) vw_describe_panel_fit(s, panel, c->lo, c->hi, cols > 1 ? cols : 1, head, sizeof head);
    vw_text(font, d->r, area.x + 4, area.y + 2 + (d->font.line - font->line) / 2, VW_COL_TEXT,
            top ? cols * adv : area.w - 8, head);
    if (second[0])
        vw_text(font, d->r, area.x + 4, area.y + 2 + d->font.line + (d->font.line - font->line) / 2, VW_COL_TEXT,
                area.w - 8, second);
    d->legend_x[panel] = area.x + 4 + (int)strlen(head) * font->advance + 2 * adv;
    snprintf(rp->head, sizeof rp->head, "%s%s%s", head, second[0] ? " " : "", second);
    rp->window = window, rp->window_named = named;
    vw_draw_bars(d, s, L, panel, c, &m);
    draw_legend(d, s, L, panel, c);
}

/* A cell's outline that stays visible on tiny cells: at least 7 px across. */
static vw_rect visible(vw_rect r)
{
    if (r.w < 7) {
        r.x -= (7 - r.w) / 2;
        r.w = 7;
    }
    if (r.h < 7) {
        r.y -= (7 - r.h) / 2;
        r.h = 7;
    }
    return r;
}

/* The regular kernel-grid position (a hollow square) and an arrow from it to the sample:
 * the deformable-convolution picture. */
static void draw_anchor(vw_draw *d, const vw_heatmap *m, const float anchor[2], int px, int py, int focused, int panel)
{
    int ax, ay;
    if (!isfinite(anchor[0]) || !isfinite(anchor[1]) || fabsf(anchor[0]) > 1e6f || fabsf(anchor[1]) > 1e6f) return;
    vw_heatmap_point(m, anchor[0], anchor[1], &ax, &ay);
    const unsigned col = focused ? VW_COL_FOCUS : VW_COL_HEAD;
    vw_rect box = {.x = ax - 3, .y = ay - 3, .w = 7, .h = 7};
    vw_outline(d->r, box, col, 1, 0);
    vw_draw_arrow(d->r, ax, ay, px, py, col);
    vw_rec_add_dot(&d->rec, panel, box, (vw_rect){.x = box.x + 1, .y = box.y + 1, .w = 5, .h = 5}, focused);
}

void vw_corner_box(const vw_draw *d, const vw_heatmap *m, int panel, int *hw, int *hh)
{
    const vw_rec_panel *rp = &d->rec.panel[panel];
    *hw = *hh = 3;
    if (!rp->values || rp->value_font < 0) return;
    const vw_font *f = vw_value_font(d, rp->value_font);
    const int w = f->advance * 5 + 8, h = f->line + 6, most = (int)m->cell - 6;
    *hw = (w < most ? w : most) / 2, *hh = (h < most ? h : most) / 2;
    if (*hw < 3) *hw = 3;
    if (*hh < 3) *hh = 3;
}

int vw_box_edge(int cx, int cy, int hw, int hh, int px, int py, int *ex, int *ey)
{
    const double dx = px - cx, dy = py - cy;
    if (fabs(dx) <= hw && fabs(dy) <= hh) return 0; /* the point is inside the box */
    const double t = fmin(dx ? hw / fabs(dx) : INFINITY, dy ? hh / fabs(dy) : INFINITY);
    *ex = cx + (int)lround(dx * t), *ey = cy + (int)lround(dy * t);
    return 1;
}

static void draw_sample(vw_draw *d, const vw_heatmap *m, const ks_event *e, int focused, const float *anchor,
                        vw_rect bounds, int panel, int weights)
{
    int64_t ys[2], xs[2];
    int px, py;
    /* NaN, Inf or absurd coordinates (a broken kernel's) have no place to draw */
    if (!isfinite(e->u.sample.y) || !isfinite(e->u.sample.x) || fabsf(e->u.sample.y) > 1e6f ||
        fabsf(e->u.sample.x) > 1e6f)
        return;
    vw_sample_corners(e, ys, xs);
    vw_heatmap_point(m, e->u.sample.y, e->u.sample.x, &px, &py);
    if (anchor) draw_anchor(d, m, anchor, px, py, focused, panel);
    for (int c = 0; c < 4; ++c) {
        int cx, cy;
        int valid = (e->flags & (KS_FLAG_C00 << c)) != 0;
        if (ys[c >> 1] == INT32_MIN || xs[c & 1] == INT32_MIN) continue;
        vw_heatmap_point(m, (double)ys[c >> 1], (double)xs[c & 1], &cx, &cy);
        if (focused) { /* the corner's box: around its cell's number where the cells print them */
            int hw, hh, ex, ey;
            vw_corner_box(d, m, panel, &hw, &hh);
            vw_color(d->r, valid ? VW_COL_VALID : VW_COL_INVALID);
            if (vw_box_edge(cx, cy, hw, hh, px, py, &ex, &ey)) SDL_RenderDrawLine(d->r, px, py, ex, ey);
            vw_rect corner = {.x = cx - hw, .y = cy - hh, .w = 2 * hw + 1, .h = 2 * hh + 1};
            vw_outline(d->r, corner, valid ? VW_COL_VALID : VW_COL_INVALID, 2, 0);
        }
    }
    if (focused && weights && m->cell >= vw_value_font(d, VW_VALUE_FONTS - 1)->line)
        vw_draw_sample_weights(d, m, e, bounds, panel);
    /* a sample on a printed number (clamped to its cell's centre: RoIAlign at the border)
     * gets a frame round the number, outside its corner's box, not a dot over it (issue
     * 38 D3: a marker never hides a cell the step names) */
    static vw_rect nums[VW_REC_VALUES];
    const int nn = vw_value_boxes(d, panel, nums, VW_REC_VALUES);
    for (int i = 0; i < nn; ++i) {
        const vw_rect *v = &nums[i];
        if (px < v->x || px >= v->x + v->w || py < v->y || py >= v->y + v->h) continue;
        int hw, hh;
        vw_corner_box(d, m, panel, &hw, &hh);
        const int cx = v->x + v->w / 2, cy = v->y + v->h / 2;
        const vw_rect frame = {.x = cx - hw - 4, .y = cy - hh - 4, .w = 2 * hw + 9, .h = 2 * hh + 9};
        vw_outline(d->r, frame, focused ? VW_COL_FOCUS : VW_COL_ITEM, 2, 0);
        return;
    }
    vw_rect dot = {.x = px - 2, .y = py - 2, .w = 5, .h = 5};
    vw_fill(d->r, dot, focused ? VW_COL_FOCUS : VW_COL_ITEM);
    vw_rec_add_dot(&d->rec, panel, dot, (vw_rect){0}, focused);
    if (focused) {
        vw_rect ring = {.x = px - 6, .y = py - 6, .w = 13, .h = 13};
        vw_outline(d->r, ring, VW_COL_FOCUS, 2, 0);
        vw_rec_add_dot(&d->rec, panel, ring, (vw_rect){.x = px - 4, .y = py - 4, .w = 9, .h = 9}, 1);
    }
}

static int on_panel(const vw_state *s, int panel, const ks_event *e)
{
    if (e->kind == KS_EV_WORK || e->kind == KS_EV_REGION || e->tensor != s->panel[panel].tensor) return 0;
    return (e->kind == KS_EV_SAMPLE ? e->u.sample.plane : e->u.access.plane) == s->panel[panel].plane;
}

static void draw_event(vw_draw *d, const vw_heatmap *m, const ks_event *e, int focused, const vw_state *s,
                       uint32_t item, vw_rect bounds, int panel)
{
    if (e->kind == KS_EV_SAMPLE) {
        float a[2];
        const int anchored = vw_sample_anchor(s->tr, s->idx, item, e, &a[0], &a[1]);
        /* a slide before a weight question, or the question's own before its answer,
         * keeps the corner weights off (vw_slide.hide_weights) */
        const int hidden = s->nslides ? s->slides[s->slide].hide_weights : 0;
        draw_sample(d, m, e, focused, anchored ? a : NULL, bounds, panel,
                    !(hidden == 1 || (hidden == 2 && !s->reveal)));
        return;
    }
    const ks_ev_access *a = &e->u.access;
    int pad = e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING);
    /* cells beyond the drawn margin are not drawn */
    if (!vw_heatmap_holds(m, a->y, a->x)) return;
    vw_rect cell = vw_heatmap_cell(m, a->y, a->x);
    /* nor, on a slide, cells out of the window in view: their outline showed as a stray
     * mark in the margin past the grid (issue 38 D12, ninth re-trial: 10 s14 at 1024x768) */
    if (!rect_inside(cell, d->cells_map[panel])) {
        if (s->nslides) return;
        if (vw_rect_overlap(cell, bounds)) d->rec.panel[panel].marks_out++;
    }
    /* a cell that prints its number is framed on its edge and outside it, a pixel clear
     * of the number (issue 38: the frames ran into 04 step 9's two-digit values); the
     * frame goes into the record as a ring, its clear inside what a number keeps to */
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const int framed = rp->values && !rp->hidden && m->cell >= 12;
    const int t = focused ? 3 : m->cell >= 12 ? 2 : 1, grow = (focused ? 1 : 0) + framed;
    const vw_rect at = focused || m->cell < 7 ? visible(cell) : cell;
    /* a dark pixel round it, so a white or cyan frame shows on a pale cell too (issue 38
     * D12: 01 s7's and s9's white outline on the palest cells read as no outline) */
    const int dark = m->cell >= 12;
    if (dark) vw_outline(d->r, at, 0x000000, 1, grow + 1);
    vw_outline(d->r, at, focused ? VW_COL_FOCUS : pad ? VW_COL_PADDING : VW_COL_ITEM, t, grow);
    if (framed) {
        const int in = t - grow + 1, out = grow + dark; /* the first pixel inside the innermost ring, then one of air */
        vw_rec_add_dot(&d->rec, panel,
                       (vw_rect){.x = at.x - out, .y = at.y - out, .w = at.w + 2 * out, .h = at.h + 2 * out},
                       (vw_rect){.x = at.x + in, .y = at.y + in, .w = at.w - 2 * in, .h = at.h - 2 * in}, focused);
    }
    /* a padding read's 0, unless the question asks what padding holds (lesson 02 step 5) */
    if (pad && m->cell >= 14)
        vw_text(&d->font, d->r, cell.x + cell.w / 2 - d->font.advance / 2, cell.y + cell.h / 2 - d->font.line / 2,
                VW_COL_PADDING, 0, vw_padding_hidden(s) ? "?" : "0");
}

/* A region's edge, horizontal or vertical, from (xa, ya) to (xb, yb), broken where it
 * would cross a number the panel's cells print (issue 38 D3: RoIAlign's bin lines run
 * through cell centres, across 8-11, 14, 20-23 in lesson 06): the numbers stay legible,
 * the edge shows on either side of them. */
static void gapped_line(vw_draw *d, int panel, int xa, int ya, int xb, int yb)
{
    const vw_rec_panel *rp = &d->rec.panel[panel];
    const int horiz = ya == yb;
    if ((!horiz && xa != xb) || !rp->values || rp->hidden) {
        SDL_RenderDrawLine(d->r, xa, ya, xb, yb);
        return;
    }
    int lo = horiz ? (xa < xb ? xa : xb) : (ya < yb ? ya : yb);
    const int hi = horiz ? (xa < xb ? xb : xa) : (ya < yb ? yb : ya), at = horiz ? ya : xa;
    while (lo <= hi) { /* from lo: up to the nearest number across the line, then past it */
        int stop = hi + 1, skip = lo;
        for (int j = 0; j < rp->nvalues; ++j) {
            const vw_rect v = rp->value[j].box;
            const int a0 = horiz ? v.y - 1 : v.x - 1, a1 = horiz ? v.y + v.h : v.x + v.w;         /* across */
            const int s0 = horiz ? v.x - 2 : v.y - 2, s1 = horiz ? v.x + v.w + 1 : v.y + v.h + 1; /* along */
            if (at < a0 || at > a1 || s1 < lo || s0 > hi) continue;
            if (s0 <= lo) { /* lo is on this number: past it */
                if (s1 + 1 > skip) skip = s1 + 1;
            } else if (s0 < stop) stop = s0;
        }
        if (skip > lo) {
            lo = skip;
            continue;
        }
        if (horiz) SDL_RenderDrawLine(d->r, lo, at, stop - 1, at);
        else SDL_RenderDrawLine(d->r, at, lo, at, stop - 1);
        lo = stop;
    }
}

/* gapped_line two pixels wide in colour col, the second beside the first (issue 38 D12:
 * 1 px RoI and bin lines were lost on orange and yellow cells, lessons 06 and 14), with
 * a dark pixel on either side (ninth re-trial: the yellow lines on the pale-yellow last
 * row, 06 s8's 34-36 and 14 s6's 124-127, barely showed) */
static void wide_gapped_line(vw_draw *d, int panel, int xa, int ya, int xb, int yb, uint32_t col, int edge)
{
    const int horiz = ya == yb, vert = xa == xb;
    if (edge) { /* the dark edges first, all of them, then the lines over them (no notch where two cross) */
        if (!horiz && !vert) return;
        vw_color(d->r, 0x000000);
        for (int o = -1; o <= 2; o += 3) {
            const int dy = horiz ? o : 0, dx = vert && !horiz ? o : 0;
            /* the edge runs a pixel past the line's ends, so its ends are framed too */
            const int ex = horiz ? 1 : 0, ey = horiz ? 0 : 1;
            gapped_line(d, panel, (xa < xb ? xa : xb) - ex + dx, (ya < yb ? ya : yb) - ey + dy,
                        (xa < xb ? xb : xa) + ex + dx, (ya < yb ? yb : ya) + ey + dy);
        }
        return;
    }
    vw_color(d->r, col);
    gapped_line(d, panel, xa, ya, xb, yb);
    if (horiz) gapped_line(d, panel, xa, ya + 1, xb, yb + 1);
    else if (vert) gapped_line(d, panel, xa + 1, ya, xb + 1, yb);
}

/* the item's region events (a RoI and its bins, a patch, points): outlines in continuous
 * coordinates on the panel showing their tensor and plane; points in vw_draw_points */
static void draw_boxes(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, uint32_t it, vw_rect bounds)
{
    static vw_box b[1024]; /* a reduce item's sites: one per contributing offset */
    const int n = vw_item_boxes(s->tr, s->idx, it, b, 1024);
    for (int k = n - 1; k >= 0; --k) {
        /* all four corners finite and near the plane (a NaN y1 used to reach an int cast) */
        if (vw_box_is_point(&b[k]) || b[k].tensor != s->panel[panel].tensor || b[k].plane != s->panel[panel].plane ||
            !(fabs(b[k].y0) <= 1e6) || !(fabs(b[k].x0) <= 1e6) || !(fabs(b[k].y1) <= 1e6) || !(fabs(b[k].x1) <= 1e6))
            continue;
        const uint32_t col = b[k].dim ? VW_COL_DIM : VW_COL_HEAD;
        for (int edge = 1; edge >= 0; --edge) {
            for (int i = 0; i <= b[k].rows; ++i) { /* horizontal lines: edges and bin rows */
                int xa, ya, xb, yb;
                const double y = b[k].y0 + (b[k].y1 - b[k].y0) * i / (b[k].rows ? b[k].rows : 1);
                vw_heatmap_point(m, y, b[k].x0, &xa, &ya);
                vw_heatmap_point(m, y, b[k].x1, &xb, &yb);
                wide_gapped_line(d, panel, xa, ya, xb, yb, col, edge);
            }
            for (int j = 0; j <= b[k].cols; ++j) {
                int xa, ya, xb, yb;
                const double x = b[k].x0 + (b[k].x1 - b[k].x0) * j / (b[k].cols ? b[k].cols : 1);
                vw_heatmap_point(m, b[k].y0, x, &xa, &ya);
                vw_heatmap_point(m, b[k].y1, x, &xb, &yb);
                wide_gapped_line(d, panel, xa, ya, xb, yb, col, edge);
            }
        }
    }
    vw_draw_points(d, m, s, panel, b, n, bounds);
}

/* The item's one sample event, or NULL when it has none or several. */
static const ks_event *lone_sample(const vw_state *s, uint32_t it)
{
    const vw_item *item = &s->idx->items[it];
    const ks_event *one = NULL;
    for (uint32_t k = 0; k < item->count; ++k) {
        const ks_event *e = vw_event(s->tr, vw_item_ev(s->idx, item, k));
        if (e->kind != KS_EV_SAMPLE) continue;
        if (one) return NULL;
        one = e;
    }
    return one;
}

void vw_draw_overlays(vw_draw *d, const vw_state *s, const vw_layout *L, int panel)
{
    /* a table draws its own marks (vw_draw_table.c) */
    if (s->panel[panel].tensor < 0 || vw_story_hides(s, panel) || vw_panel_table(s, panel)) return;
    vw_heatmap m = vw_panel_map(s, L, panel);
    vw_rect clip = vw_panel_map_area(L, panel); /* below the header: a zoomed plane reaches past it */
    SDL_Rect sc = vw_sdl(clip);
    SDL_RenderSetClipRect(d->r, &sc);
    uint32_t ev = vw_state_event(s), it = vw_state_item(s);
    const ks_trace *tr = s->tr;
    /* the focused event, and its partner of the same tap (im2col's read and the columns
     * entry it is copied to), in cyan; the rest of the work item in white */
    const ks_event *f = ev != VW_NONE ? vw_event(tr, ev) : NULL;
    const ks_event *partner = NULL;
    /* a shared panel showing another block's tile (an answer slide's, vw_tile_for) has
     * none of the item's accesses: its block's tile is another */
    if (f && d->rec.panel[panel].tensor == (int)d->tile.tensor && d->tile.tensor >= 0 && d->heat[panel].tile_key >= 0 &&
        d->tile.block != f->block)
        it = VW_NONE, f = NULL;
    if (it != VW_NONE) draw_boxes(d, &m, s, panel, it, clip);
    if (it != VW_NONE) {
        const vw_item *item = &s->idx->items[it];
        for (uint32_t k = 0; k < item->count; ++k) {
            const ks_event *e = vw_event(tr, vw_item_ev(s->idx, item, k));
            int pair = f && f->kind != KS_EV_WORK && e != f && e->tap == f->tap && e->kind != f->kind &&
                       e->kind != KS_EV_WORK && e->kind != KS_EV_REGION;
            if (pair && !partner) partner = e;
            else if (e != f && on_panel(s, panel, e)) draw_event(d, &m, e, 0, s, it, clip, panel);
        }
    }
    if (partner && on_panel(s, panel, partner)) draw_event(d, &m, partner, 1, s, it, clip, panel);
    if (f && on_panel(s, panel, f)) draw_event(d, &m, f, 1, s, it, clip, panel);
    else if (f && f->kind == KS_EV_WORK && it != VW_NONE) {
        /* the work item as a whole is in focus: a lone sample (patchify's output, one
         * RoIAlign sample) shows its corners and weights as if focused */
        const ks_event *one = lone_sample(s, it);
        if (one && on_panel(s, panel, one)) draw_event(d, &m, one, 1, s, it, clip, panel);
    }
    vw_values_over_markers(d, panel);
    /* the answer's outline over the focused event's lines and leaders: it stays whole
     * (labels keep off it: the record lists it among the step's cells) */
    vw_draw_answer_cell(d, s, &m, panel);
    const vw_lookup *lk = &s->look;
    if (lk->tensor == s->panel[panel].tensor && lk->plane == s->panel[panel].plane)
        vw_outline(d->r, visible(vw_heatmap_cell(&m, lk->y, lk->x)), VW_COL_LOOKUP, 2, 3);
    if (s->hover && s->hover_panel == panel && m.cell >= 4)
        vw_outline(d->r, vw_heatmap_cell(&m, s->hover_y, s->hover_x), VW_COL_DIM, 1, 0);
    SDL_RenderSetClipRect(d->r, NULL);
}
