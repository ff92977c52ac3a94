/* vw_draw_int.h - drawing helpers shared by the vw_draw*.c files (internal). */
#ifndef VW_DRAW_INT_H
#define VW_DRAW_INT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_boxes.h"
#include "vw_colormap.h"
#include "vw_draw.h"
#include "vw_labels.h"

static inline void vw_color(SDL_Renderer *r, uint32_t c)
{
    SDL_SetRenderDrawColor(r, (Uint8)(c >> 16), (Uint8)(c >> 8), (Uint8)c, 255);
}

static inline SDL_Rect vw_sdl(vw_rect a)
{
    SDL_Rect s = {.x = a.x, .y = a.y, .w = a.w, .h = a.h};
    return s;
}

static inline void vw_fill(SDL_Renderer *r, vw_rect a, uint32_t c)
{
    SDL_Rect s = vw_sdl(a);
    vw_color(r, c);
    SDL_RenderFillRect(r, &s);
}

/* An outline `t` pixels thick, grown by `grow` pixels on every side. */
static inline void vw_outline(SDL_Renderer *r, vw_rect a, uint32_t c, int t, int grow)
{
    vw_color(r, c);
    for (int i = 0; i < t; ++i) {
        int g = grow - i;
        SDL_Rect s = {.x = a.x - g, .y = a.y - g, .w = a.w + 2 * g, .h = a.h + 2 * g};
        if (s.w > 0 && s.h > 0) SDL_RenderDrawRect(r, &s);
    }
}

/* A placed label (box, point, leader as drawn with its npts points, the cells it may
 * cross) into the frame's record, for --check (vw_audit) and the tests; a full record
 * keeps what it has. */
static inline void vw_rec_add_label(vw_record *rec, int panel, int kind, const vw_label *l, const int (*pts)[2],
                                    int npts, int px, const char *text)
{
    if (rec->nlabels >= VW_REC_LABELS) return;
    vw_rec_label *r = &rec->labels[rec->nlabels++];
    *r = (vw_rec_label){.panel = panel,
                        .kind = kind,
                        .box = l->box,
                        .ax = l->ax,
                        .ay = l->ay,
                        .leader = l->leader,
                        .npts = npts,
                        .npass = l->npass,
                        .cell = l->cell,
                        .px = px};
    memcpy(r->pass, l->pass, sizeof r->pass);
    if (npts > 0) memcpy(r->pts, pts, (size_t)npts * sizeof pts[0]);
    snprintf(r->text, sizeof r->text, "%.63s", text); /* the record keeps 63 characters */
}

/* A marker drawn over the cells (extent box, clear inside `clear`) into the record. */
static inline void vw_rec_add_dot(vw_record *rec, int panel, vw_rect box, vw_rect clear, int focused)
{
    if (rec->ndots < VW_REC_DOTS)
        rec->dots[rec->ndots++] = (vw_rec_dot){.panel = panel, .box = box, .clear = clear, .focused = focused};
}

/* Where value v of a heatmap in `mode` sits on the colour ramp: sectors per request on a
 * log2 scale from 1 (0) to 32 (1), so 4 (coalesced floats) and 8 (a stride of 2) stand
 * apart the same way on every plane; other modes linear between the plane's lo and hi. */
static inline double vw_heat_t(vw_mode mode, double v, double lo, double hi)
{
    if (mode == VW_MODE_SECTORS) return v > 1 ? log2(v) / 5 : 0;
    return vw_colormap_t(v, lo, hi);
}

void vw_draw_heatmap(vw_draw *d, const vw_state *s, const vw_layout *L, int panel);
/* A slide legend's name after its bar: `name` whole where it fits with a bar of 4
 * characters, else `brief` (NULL: none) with one, else the one that fits without the
 * bar, else "" (never a name cut short: "val"); *width: its pixels with its gap. */
const char *vw_legend_name(const char *name, const char *brief, int room, int adv, int *width);
void vw_draw_overlays(vw_draw *d, const vw_state *s, const vw_layout *L, int panel);
/* The ideas the shown slide asks to draw on panel `panel` (vw_slide.figure; vw_draw_ideas.c). */
void vw_draw_figures(vw_draw *d, const vw_state *s, const vw_layout *L, int panel);
void vw_draw_grid(vw_draw *d, const vw_state *s, const vw_layout *L);
/* The warp strip of the focused event's request in area (vw_draw_warp.c). */
void vw_draw_warp(vw_draw *d, const vw_state *s, vw_rect area);
/* The shared-tile panel (vw_draw_shared.c): its band, taken from the bottom of the
 * decomposition panel *decomp, and the panel drawn there. */
vw_rect vw_shared_area(vw_rect *decomp, int line);
/* The values of tensor t when it is the trace's shared tensor: the focused event's block
 * as its barrier phase leaves it (vw_tile_values, cached in d), with *key its block and
 * phase; NULL (*key -1) for any other tensor or without a phase. */
const float *vw_tile_for(vw_draw *d, const vw_state *s, int t, int64_t *key);
void vw_draw_shared(vw_draw *d, const vw_state *s, vw_rect area);
/* The schedule chart in the grid panel's place (vw_draw_gantt.c). */
void vw_draw_gantt(vw_draw *d, const vw_state *s, const vw_layout *L);
/* Bars over a one-row plane's cells (vw_draw_bars.c); c: the panel's texture cache. */
void vw_draw_bars(vw_draw *d, const vw_state *s, const vw_layout *L, int panel, const vw_heat_cache *c,
                  const vw_heatmap *m);
/* Panel p as the table tb: its header, a window of rows with their indices and every
 * value, the item's cells outlined, the answer's once revealed; all into the record. */
void vw_draw_table(vw_draw *d, const vw_state *s, const vw_layout *L, int panel, const vw_table *tb);
/* A label's leader, 2 pixels wide, through p[0..n) (vw_route_leader's points). */
static inline void vw_leader(SDL_Renderer *r, const int (*p)[2], int n, uint32_t col)
{
    vw_color(r, col);
    for (int i = 0; i + 1 < n; ++i) {
        const int vertical = abs(p[i + 1][0] - p[i][0]) < abs(p[i + 1][1] - p[i][1]);
        SDL_RenderDrawLine(r, p[i][0], p[i][1], p[i + 1][0], p[i + 1][1]);
        SDL_RenderDrawLine(r, p[i][0] + vertical, p[i][1] + !vertical, p[i + 1][0] + vertical, p[i + 1][1] + !vertical);
    }
}

/* A line from (x0, y0) to (x1, y1) with an arrowhead at (x1, y1). */
void vw_draw_arrow(SDL_Renderer *r, int x0, int y0, int x1, int y1, uint32_t col);
/* The region points among b[0..n) on the panel's tensor and plane (vw_draw_points.c), their
 * tap labels inside bounds (the panel's map area). */
void vw_draw_points(vw_draw *d, const vw_heatmap *m, const vw_state *s, int panel, const vw_box *b, int n,
                    vw_rect bounds);

/* The cells of m's plane that lie (partly) inside area: [*y0, *y1) x [*x0, *x1). */
void vw_visible_cells(const vw_heatmap *m, vw_rect area, int64_t *y0, int64_t *y1, int64_t *x0, int64_t *x1);
/* Whether the slide prints what padding taps read and write as ? (vw_slide.hide_padding:
 * the whole step, or until the answer). */
int vw_padding_hidden(const vw_state *s);
/* Whether element off of tensor t is written at a tap whose read lies in the padding (an
 * im2col column's 0 for a tap outside the image). */
int vw_padding_written(const vw_state *s, int t, int64_t off);
/* The grey of cell (y, x) outside a plane (its margin, where padding reads land), a
 * checker; a padding tap's entry that prints ? is painted so too (issue 38 D2 N6). */
/* How many of the range lo .. hi's two ends of tensor t's plane only cells that print ?
 * hold (vw_padding_written, while vw_padding_hidden): a legend that counts what it hides. */
int vw_padding_range_ends(const vw_state *s, int t, int64_t plane, double lo, double hi);
static inline uint32_t vw_margin_grey(int64_t y, int64_t x) { return ((y + x) & 1) ? 0x2C2C34 : 0x34343E; }
/* Text centred in cell (y, x) of m, dim, when it fits the cell with a value's gap and lies
 * inside area (an empty cell's value, a sparse plane's row or column number): 1 and its box
 * in *at when drawn. */
int vw_dim_text_in_cell(vw_draw *d, const vw_font *f, const vw_heatmap *m, int64_t y, int64_t x, vw_rect area,
                        const char *text, vw_rect *at);
/* The colour a heatmap built into cache c gives value v: the ramp, or grey (a picture). */
uint32_t vw_heat_colour(const vw_heat_cache *c, double v);
/* The colour (RGB) cell (y, x) of the plane was painted in c's texture, where a texel is a
 * cell and the texels are kept: 1 and *rgb, else 0. */
int vw_texel_colour(const vw_heat_cache *c, int64_t y, int64_t x, uint32_t *rgb);
/* The fewest characters a slide's one-line legend of c takes: its two ends, a bar of 4
 * and the NaN key (its name may go). */
int vw_legend_least_chars(const vw_heat_cache *c);
/* Each cell's number in its cell, when every visible cell of the plane can hold its
 * number (vw_draw_cells.c); area: the panel's map area. Returns the value font used
 * (vw_value_font), or -1 when the numbers do not fit. */
int vw_draw_cell_values(vw_draw *d, const vw_state *s, const vw_heatmap *m, vw_rect area, int panel,
                        const vw_heat_cache *c, const float *tile);
/* The cell the shown slide's question asks about, outlined in VW_COL_ANSWER once revealed,
 * and its rectangle (before the outline) on panel p: 0 when none is there. */
int vw_answer_cell_rect(const vw_state *s, const vw_heatmap *m, int panel, vw_rect *out);
void vw_draw_answer_cell(vw_draw *d, const vw_state *s, const vw_heatmap *m, int panel);
/* The focused sample's corner weights, one label per corner cell (clamped corners share
 * one: "0.25+0.25 clamped"), placed by vw_place_labels inside bounds. */
typedef struct vw_weight_label {
    int64_t y, x; /* the corner cell */
    int corners;  /* how many of the 4 corners sit on it (> 1: clamped) */
    int valid;    /* inside the tensor (its weight blends a real value) */
    int two;      /* a clamp's words on two lines, broken after the comma ("w=1," "clamped") */
    char text[80];
    vw_label label; /* anchor and box on screen */
} vw_weight_label;
/* Returns the number of labels, negated when some found no free spot. */
int vw_sample_weight_labels(const ks_event *e, const vw_heatmap *m, int advance, int line, vw_rect bounds,
                            vw_weight_label out[4]);
/* The same, keeping the labels off keep_off[0..nkeep) too (the cells the step names). */
int vw_sample_weight_labels_avoid(const ks_event *e, const vw_heatmap *m, int advance, int line, vw_rect bounds,
                                  const vw_rect *keep_off, int nkeep, vw_weight_label out[4]);
/* Draws them on panel `panel` in the value font vw_label_font picks for the cells, off
 * the cells the step names (the frame's record, vw_record.h), with leader lines; records
 * each label. */
void vw_draw_sample_weights(vw_draw *d, const vw_heatmap *m, const ks_event *e, vw_rect bounds, int panel);
int vw_label_font(const vw_draw *d, double cell);
/* The smallest value font a sample's weight label prints at beside its corner:
 * a size up from the least legible (24 px at 1920x1080, the text's own 20 and 16 px at
 * 1280x960 and 1024x768; issue 38 D12 #26). */
int vw_weight_font(const vw_draw *d);
/* The boxes of the numbers panel `panel`'s cells print (from the frame's record), at most
 * max: where a label goes only when there is no other room. */
int vw_value_boxes(const vw_draw *d, int panel, vw_rect *out, int max);
/* The cells of heatmap m on panel `panel` that print a number, each less a pixel a side,
 * but the one holding point (ax, ay) (a label's own cell; -1: none), into out[0..max):
 * what a label keeps off, since inside such a cell it reads as that cell's (issue 38
 * D3). Returns how many. */
int vw_value_cells(const vw_draw *d, int panel, const vw_heatmap *m, int ax, int ay, vw_rect *out, int max);
/* How many of labels l[0..n) on panel `panel` have their text (the box less its clear 3
 * px rim) in a cell that prints a number and is not their own (their cell's). */
int vw_labels_in_other_cells(const vw_draw *d, int panel, const vw_heatmap *m, const vw_label *l, int n);
/* The numbers of panel `panel` that a marker of the record (a sample's dot or ring, a
 * point's ring) reached, drawn again on top of it on a dark box: a cell the step names
 * keeps its number (issue 38 D3); the record marks them on_top. */
void vw_values_over_markers(vw_draw *d, int panel);
/* A sample corner's marker on panel p: a box of half sizes (*hw, *hh) around the corner's
 * cell centre, big enough to frame the cell's number where the cells print theirs (so a
 * marker never covers a value), else 3 (a 7 px square). And where the line from (px, py)
 * to the box's centre (cx, cy) meets its edge: 0 when the point lies inside. */
void vw_corner_box(const vw_draw *d, const vw_heatmap *m, int panel, int *hw, int *hh);
int vw_box_edge(int cx, int cy, int hw, int hh, int px, int py, int *ex, int *ey);

#endif
