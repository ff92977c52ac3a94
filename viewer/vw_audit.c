/* vw_audit.c - slides drawn headless and checked from what the drawing records (see
 * vw_audit.h). */
#include "vw_audit.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "vw_describe.h"
#include "vw_draw.h"
#include "vw_labels.h"

const int vw_audit_size[VW_AUDIT_SIZES][2] = {{1920, 1080}, {1280, 960}, {1024, 768}};

int vw_audit_slides(const vw_slide *slides, int n, const char *title, const ks_trace *tr, const vw_index *idx, int w,
                    int h, int text_px, vw_audit_fn fn, void *ctx)
{
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    static vw_draw d;
    static vw_state s;
    vw_layout L;
    int rc = 0;
    if (!r) {
        SDL_FreeSurface(surf);
        return -ks_fail(KS_ENOMEM, "cannot create a %dx%d frame: %s", w, h, SDL_GetError());
    }
    if (vw_draw_init(&d, r, text_px > 0 ? text_px : vw_text_px(w, h))) {
        rc = -1;
        goto out;
    }
    vw_state_init(&s, tr, idx);
    s.title = title;            /* the lesson's title bar, not the trace's path (its lines move the layout) */
    vw_set_order(&s, "thread"); /* as kscope lesson --view and --frames play them */
    vw_story_set(&s, slides, n);
    for (int k = 0; k < n; ++k)
        for (int reveal = 0; reveal < 2; ++reveal) {
            if (reveal && !slides[k].question) break;
            vw_story_show(&s, k);
            vw_story_reveal(&s, reveal);
            vw_draw_layout(&d, &L, &s, w, h);
            vw_draw_frame(&d, &s, &L, 1000);
            fn(ctx, k, reveal, &d.rec, &s);
        }
    vw_state_free(&s);
    vw_draw_free(&d);
out:
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    return rc;
}

int vw_audit_narration_lines(const vw_slide *sl, int w, int h)
{
    /* the band across the frame: the width less the frame's margins (vw_layout_slide) */
    const int px = vw_text_px(w, h);
    vw_font f;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 8, 8, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    int adv = px * 3 / 5, lines = -1;
    if (r && !vw_font_open(&f, r, px)) {
        adv = f.advance;
        vw_font_close(&f);
    }
    const vw_rect band = {.x = 8, .y = 0, .w = w - 16, .h = 100};
    lines = vw_story_narration_lines(sl, vw_band_cols(band, adv));
    if (r) SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    return lines;
}

int vw_audit_grid_drawn(const vw_rec_panel *rp)
{
    if (rp->fill_rows > 0 && !rp->table) return rp->fill.h > 0 ? rp->fill.h : 0; /* a sparse plane's filled cells */
    if (rp->table || rp->margin <= 0) return rp->extent.h;
    /* the margin's rows above and below (the padding ring), as far as the map shows them */
    const double top = fmax(rp->map.y, rp->oy - rp->side[VW_SIDE_TOP] * rp->cell);
    const double bottom = fmin(rp->map.y + rp->map.h,
                               rp->oy + (double)(rp->rows + rp->side[VW_SIDE_BOTTOM]) * rp->cell);
    const int h = (int)floor(bottom - top);
    return h > rp->extent.h ? h : rp->extent.h;
}

int vw_audit_grid_need(const vw_rec_panel *rp, int w, int h, int line)
{
    if (rp->tensor < 0) return 0;
    if (rp->fill_rows > 0 && !rp->table) return vw_grid_need(rp->fill_rows, rp->fill_cols, NULL, 0, w, h, line);
    return vw_grid_need(rp->rows, rp->cols, rp->table ? NULL : rp->side, rp->table ? rp->cell : 0, w, h, line);
}

vw_rect vw_label_ink(const vw_rec_label *l)
{
    return (vw_rect){.x = l->box.x + 3, .y = l->box.y + 3, .w = l->box.w - 6, .h = l->box.h - 6};
}

int vw_label_in_own_cell(const vw_rec_label *l, vw_rect f)
{
    const vw_rect b = vw_label_ink(l);
    return l->ax >= f.x && l->ax < f.x + f.w && l->ay >= f.y && l->ay < f.y + f.h && b.x >= f.x && b.y >= f.y &&
           b.x + b.w <= f.x + f.w && b.y + b.h <= f.y + f.h;
}

int vw_audit_say(vw_rule_fn fn, void *ctx, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (fn) fn(ctx, msg);
    return 1;
}

/* The cell the question asks about, when its answer event is an access or a sample (the
 * sample's nearest cell): 1 with its tensor, plane and (y, x). */
static int asked_cell(const vw_slide *sl, int *t, int64_t *plane, int64_t *y, int64_t *x)
{
    if (!sl->has_answer_cell || !sl->trace || sl->answer_event >= sl->trace->nevents) return 0;
    const ks_event *e = vw_event(sl->trace, sl->answer_event);
    *t = e->tensor;
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        *plane = e->u.access.plane, *y = e->u.access.y, *x = e->u.access.x;
        return 1;
    }
    if (e->kind == KS_EV_SAMPLE && fabsf(e->u.sample.y) < 1e6f && fabsf(e->u.sample.x) < 1e6f) {
        *plane = e->u.sample.plane;
        *y = (int64_t)floorf(e->u.sample.y + 0.5f), *x = (int64_t)floorf(e->u.sample.x + 0.5f);
        return 1;
    }
    return 0;
}

#define LEAK_NAMED 4 /* a step naming at most this many cells on a panel: each stands out */

static int answer_in_cells(const vw_slide *sl, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    char full[48], narrow[48];
    vw_cell_text(full, sizeof full, sl->answer_value, 0);
    vw_cell_text(narrow, sizeof narrow, sl->answer_value, 1);
    const int whole = sl->answer_value == floor(sl->answer_value);
    int t = -1, bad = 0;
    int64_t plane = 0, ay = 0, ax = 0;
    const int asked = asked_cell(sl, &t, &plane, &ay, &ax);
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->tensor < 0 || rp->hidden) continue;
        for (int i = 0; i < rp->nvalues; ++i) {
            const char *v = rp->value[i].text;
            if (strcmp(v, full) && strcmp(v, narrow)) continue;
            const int64_t y = rp->value[i].y, x = rp->value[i].x;
            const int here = asked && rp->tensor == t && rp->plane == plane && y == ay && x == ax &&
                             !rp->value[i].beside;
            /* the cell as drawn, less a pixel a side (a neighbour's outline touches it) */
            vw_rect c = {.x = (int)lround(rp->ox + (double)x * rp->cell) + 1,
                         .y = (int)lround(rp->oy + (double)y * rp->cell) + 1,
                         .w = (int)rp->cell - 2 > 1 ? (int)rp->cell - 2 : 1,
                         .h = (int)rp->cell - 2 > 1 ? (int)rp->cell - 2 : 1};
            if (rp->table) c = rp->value[i].box; /* a table's cell: where its value stands */
            /* a named cell among a few: a highlighted number reads as the answer (among
             * a whole column of them, a whole number that equals it is chance) */
            int named = 0;
            for (int j = 0; j < rp->nfocus && rp->nfocus <= LEAK_NAMED && !named; ++j) {
                const vw_rect f = rp->focus[j]; /* a cell, or the answer's outline (8 px out): not a region */
                named = (rp->table || (f.w <= rp->cell + 18 && f.h <= rp->cell + 18)) && vw_rect_overlap(c, f);
            }
            if (here || named || !whole) {
                bad += vw_audit_say(
                    fn, ctx,
                    "the question slide at %dx%d prints its answer %s in the %s panel's cell (%lld, %lld)%s: "
                    "hide that panel until the answer (\"hide\") or show another",
                    rec->w, rec->h, full, p ? "right" : "left", (long long)y, (long long)x,
                    here    ? ", the cell it asks about"
                    : named ? ", a cell the step names"
                            : "");
                break;
            }
        }
    }
    return bad;
}

/* Cell values and labels at a size a room reads (issue 38 D1: 18 px at 1080p, so 13 px
 * at 768 rows: the frame projected as tall; 1024x768's 3/5 text was 10 px). */
static int legible(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    const int least = vw_legible_px(rec->h);
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->tensor >= 0 && !rp->hidden && rp->values && rp->value_px < least)
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the %s panel prints its values at %d px (at least %d: 18 px at 1080p)",
                                which, rec->w, rec->h, p ? "right" : "left", rp->value_px, least);
    }
    for (int i = 0; i < rec->nlabels; ++i)
        if (rec->labels[i].px < least) {
            bad += vw_audit_say(fn, ctx, "%s at %dx%d: the label '%s' is %d px (at least %d: 18 px at 1080p)", which,
                                rec->w, rec->h, rec->labels[i].text, rec->labels[i].px, least);
            break;
        }
    /* a colour bar of 4 characters at least: colours without their key read as nothing
     * (issue 38 D12, twelfth re-trial N22: 05 s2 at 1024x768 drew "0 ~21.67 values", no bar) */
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->tensor < 0 || rp->hidden || !rp->legend_bar || rp->legend_bar - 1 >= 4 * rp->legend_adv) continue;
        bad += vw_audit_say(fn, ctx, "%s at %dx%d: the %s panel's colour bar is %d px (at least 4 characters, %d px)",
                            which, rec->w, rec->h, p ? "right" : "left", rp->legend_bar - 1, 4 * rp->legend_adv);
    }
    /* a sample's corner weight (a 0 past the image too), a size up (issue 38 D12 #26,
     * tenth re-trial: 06 s3-s5's weights and s8's corner 0s at 16 and 13 px per em, digits
     * 11 and 9 px tall at 1280x960 and 1024x768, passed: the rule above held every label
     * to the least legible size); a clamp's words too ("w=1, clamped": 14 s6's printed at
     * the least legible size at 1280x960 and 1024x768 until they broke onto two lines) */
    const int weight = vw_weight_legible_px(rec->h, rec->text_px);
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        if ((l->kind == VW_LABEL_WEIGHT || l->kind == VW_LABEL_CLAMP) && l->px >= least && l->px < weight) {
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the corner's label '%s' is %d px (at least %d: 22 px at 1080p, a "
                                "size up from the least legible)",
                                which, rec->w, rec->h, l->text, l->px, weight);
            break;
        }
    }
    return bad;
}

/* Whether the answer of slide sl stands in text as drawn: its text as a token (a
 * choice's words without case, or its number: "zero" as 0). */
static int holds_answer(const vw_slide *sl, const char *text)
{
    return vw_text_has_token(text, sl->asked, sl->asked_words) ||
           (sl->asked_digit[0] && vw_text_has_token(text, sl->asked_digit, 0));
}

/* Whether value (the text after a line's " = ") starts with the whole-number answer of
 * sl, its digits or a choice's number word as digits ("zero": 0). */
static int focused_value(const vw_slide *sl, const char *value)
{
    const char *want = sl->asked_digit[0] ? sl->asked_digit : sl->asked;
    const size_t n = strlen(want);
    return !strncmp(value, want, n) && (value[n] == 0 || value[n] == ' ' || value[n] == ',');
}

/* Whether an answer found in a drawing is chance rather than a give-away: a whole number
 * (an arange input, an index, a count print small whole numbers everywhere) outside the
 * places that name what is asked. Fractions, cells "y, x" and words are no chance. */
static int whole_number(const vw_slide *sl)
{
    char *end;
    const double v = strtod(sl->asked, &end);
    if (sl->asked_words) return sl->asked_digit[0] != 0; /* "zero": a 0 by chance, as any */
    return end != sl->asked && !*end && v == floor(v);
}

int vw_audit_answer_in_labels(const vw_slide *sl, const vw_record *rec, const char *where, vw_rule_fn fn, void *ctx)
{
    if (!sl->asked[0] || whole_number(sl)) return 0;
    /* labels name what the step is about: a weight, a clamp (a tap's number or a weight
     * of 0 or 1 is a whole number by chance) */
    for (int i = 0; i < rec->nlabels; ++i)
        if (holds_answer(sl, rec->labels[i].text))
            return vw_audit_say(fn, ctx, "the %s at %dx%d draws its answer %s as the label '%s' on the %s panel", where,
                                rec->w, rec->h, sl->asked, rec->labels[i].text,
                                rec->labels[i].panel ? "right" : "left");
    return 0;
}

int vw_audit_answer_in_text(const vw_slide *sl, const vw_record *rec, const char *where, vw_rule_fn fn, void *ctx)
{
    if (!sl->asked[0]) return 0;
    const int chance = whole_number(sl);
    int bad = vw_audit_answer_in_labels(sl, rec, where, fn, ctx);
    /* the decomposition and events panel: the focused item's lines; a whole number only
     * as the value of the focused event ('>' ... " = 0"), the one the step is about
     * (lesson 02 step 5's padding read "= 0" beside "what does im2col write there?") */
    for (int i = 0; i < rec->decomp_lines && i < VW_REC_LINES && !rec->decomp_hidden; ++i) {
        const char *t = rec->decomp_text[i], *eq = t[0] == '>' ? strstr(t, " = ") : NULL;
        while (eq && strstr(eq + 1, " = ")) eq = strstr(eq + 1, " = ");
        if (chance ? eq && focused_value(sl, eq + 3) : holds_answer(sl, t)) {
            bad += vw_audit_say(fn, ctx,
                                "the %s at %dx%d prints its answer %s in the decomposition and events panel: \"%s\"",
                                where, rec->w, rec->h, sl->asked, t);
            break;
        }
    }
    /* the band above the question: title, run line, narration, table (a prompt of its
     * own is the lesson check's; a choice's own line holds its words) */
    for (int i = 0; i < rec->band_lines && i < VW_REC_LINES && !chance; ++i) {
        if (!strncmp(rec->band_text[i], "Question:", 9)) break;
        if (holds_answer(sl, rec->band_text[i])) {
            bad += vw_audit_say(fn, ctx, "the %s at %dx%d prints its answer %s above the question: \"%s\"", where,
                                rec->w, rec->h, sl->asked, rec->band_text[i]);
            break;
        }
    }
    /* the cells: a fraction anywhere (the cell rule of answer_in_cells covers the asked
     * and named ones); only on a slide before the question (the question's own slide
     * has answer_in_cells) */
    for (int p = 0; p < 2 && strcmp(where, "question slide") && !chance; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->tensor < 0 || rp->hidden) continue;
        for (int i = 0; i < rp->nvalues; ++i)
            if (holds_answer(sl, rp->value[i].text)) {
                bad += vw_audit_say(fn, ctx, "the %s at %dx%d prints its answer %s in the %s panel's cell (%d, %d)",
                                    where, rec->w, rec->h, sl->asked, p ? "right" : "left", rp->value[i].y,
                                    rp->value[i].x);
                break;
            }
    }
    return bad;
}

static int answer_in_text(const vw_slide *sl, const vw_record *rec, const char *where, vw_rule_fn fn, void *ctx)
{
    return vw_audit_answer_in_text(sl, rec, where, fn, ctx);
}

/* Markers (a sample's dot and ring, the regular position's square, a site's ring) keep
 * off the numbers the cells print (issue 38 D3: 06 step 7's and 14 step 6's dots hid
 * the focused cells' numbers): a number inside a ring's clear middle shows, and so does
 * one the drawing put back on top (on_top). */
static int markers_over_numbers(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    for (int i = 0; i < rec->ndots; ++i) {
        const vw_rec_dot *m = &rec->dots[i];
        const vw_rec_panel *rp = &rec->panel[m->panel];
        if (rp->hidden) continue;
        for (int j = 0; j < rp->nvalues; ++j) {
            if (rp->value[j].on_top) continue; /* drawn again over the marker */
            const vw_rect v = vw_value_ink(rp->value[j].box), c = m->clear;
            const int inside = c.w > 0 && v.x >= c.x && v.y >= c.y && v.x + v.w <= c.x + c.w && v.y + v.h <= c.y + c.h;
            if (vw_rect_overlap(m->box, v) && !inside) {
                bad += vw_audit_say(
                    fn, ctx, "%s at %dx%d: a marker covers the number %s of the %s panel's cell (%d, %d)", which,
                    rec->w, rec->h, rp->value[j].text, m->panel ? "right" : "left", rp->value[j].y, rp->value[j].x);
                return bad;
            }
        }
    }
    return bad;
}

/* Squared distance between two rectangles' pixels (0 where they touch or overlap). */
static long long gap2(vw_rect a, vw_rect b)
{
    const long long dx = a.x + a.w <= b.x ? b.x - (a.x + a.w) + 1 : b.x + b.w <= a.x ? a.x - (b.x + b.w) + 1 : 0;
    const long long dy = a.y + a.h <= b.y ? b.y - (a.y + a.h) + 1 : b.y + b.h <= a.y ? a.y - (b.y + b.h) + 1 : 0;
    return dx * dx + dy * dy;
}

static int same_rect(vw_rect a, vw_rect b) { return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h; }

/* A label reads as its nearest cell's (issue 38 D3: 06 s5's 0.65625, the weight of
 * corner (1, 1), beside corner (1, 0); 05 s9's 0.125 beside corner (0, -1)): a label
 * that names a cell sits nearer that cell than any other labelled one. And no leader
 * runs across another label's text (11 s9's "2nd" leader through "1st"). */
static int labels_beside_others(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        if (l->cell.w <= 0 || rec->panel[l->panel].hidden) continue;
        const long long own = gap2(l->box, l->cell);
        for (int j = 0; j < rec->nlabels; ++j) {
            const vw_rec_label *o = &rec->labels[j];
            if (j == i || o->panel != l->panel || o->cell.w <= 0 || same_rect(o->cell, l->cell)) continue;
            if (gap2(l->box, o->cell) < own) {
                bad += vw_audit_say(
                    fn, ctx,
                    "%s at %dx%d: the label '%s' sits nearer the cell of '%s' than its own: it reads as that "
                    "one's",
                    which, rec->w, rec->h, l->text, o->text);
                break;
            }
        }
    }
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        if (rec->panel[l->panel].hidden) continue;
        for (int j = 0; j < rec->nlabels; ++j) {
            const vw_rec_label *o = &rec->labels[j];
            int crosses = 0;
            for (int k = 0; j != i && k + 1 < l->npts && !crosses; ++k)
                crosses = vw_segment_crosses(l->pts[k][0], l->pts[k][1], l->pts[k + 1][0], l->pts[k + 1][1], o->box);
            if (crosses) {
                bad += vw_audit_say(fn, ctx, "%s at %dx%d: the leader line of label '%s' crosses the label '%s'", which,
                                    rec->w, rec->h, l->text, o->text);
                break;
            }
        }
    }
    return bad;
}

/* Whether panel p's grid is one the pictures' rule holds to: the panel the step is about
 * (its focused event's); where the step is about neither (a work item, the launch), the
 * taller of the two as their needs go (one picture at the share; the other beside it). */
/* A race the slide draws names its two threads at every size, the store and the read
 * after it (issue 38 N20: 11 s9 at 1280x960 and 1024x768 drew the red slot without "1st:
 * thread 21 writes -1 over 2" and "2nd: thread 22 reads -1 (phase 1)"): a label on the
 * race's panel with "T writes" for the storing thread, one with "T reads" for the reader. */
static int race_named(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    for (int m = 0; m < rec->nmarks; ++m) {
        const vw_rec_mark *mk = &rec->marks[m];
        if (mk->kind != VW_MARK_RACE) continue;
        char w[32], r[32];
        snprintf(w, sizeof w, "%d writes", mk->pass);
        snprintf(r, sizeof r, "%lld reads", (long long)mk->which);
        int wrote = 0, read = 0;
        for (int i = 0; i < rec->nlabels; ++i) {
            if (rec->labels[i].panel != mk->panel) continue;
            wrote |= strstr(rec->labels[i].text, w) != NULL;
            read |= strstr(rec->labels[i].text, r) != NULL;
        }
        if (!wrote || !read)
            bad += vw_audit_say(
                fn, ctx, "%s at %dx%d: the race on the %s panel's slot (%g, %g) does not name %s (no label '%s')",
                which, rec->w, rec->h, mk->panel ? "right" : "left", mk->y0, mk->x0,
                !wrote ? "the thread that stores first" : "the thread that reads after it", !wrote ? w : r);
    }
    return bad;
}

static int grid_counts(const vw_slide *sl, int reveal, const vw_record *rec, int p)
{
    /* the panel whose cell the question asks, besides the step's (issue 38 D1 N9, tenth
     * re-trial: 09 s7 asked a cell of its input, drawn 335 px tall at 1920x1080, 31 %,
     * while the output beside it, the focused item's panel, took the room) */
    int t;
    int64_t plane, y, x;
    /* on the question slide (its answer keeps the layout, or brings the answer's tensor
     * into view, 08 s3's pair_table); the asked tensor's panel though it draws another
     * plane than the asked cell's (09 s7 asks item 9's cell of plane 0 over plane 1: the
     * student reads the pattern there), unless the other panel draws that plane */
    if (sl->question && !reveal && asked_cell(sl, &t, &plane, &y, &x) && rec->panel[p].tensor == t &&
        (rec->panel[p].plane == plane || rec->panel[!p].tensor != t || rec->panel[!p].plane != plane))
        return 2;
    if (rec->focus_panel >= 0) return p == rec->focus_panel;
    const vw_rec_panel *a = &rec->panel[p], *b = &rec->panel[!p];
    if (b->tensor < 0 || b->hidden) return 1;
    const int na = vw_audit_grid_need(a, rec->w, rec->h, rec->line),
              nb = vw_audit_grid_need(b, rec->w, rec->h, rec->line);
    const double ra = na > 0 ? (double)vw_audit_grid_drawn(a) / na : 1,
                 rb = nb > 0 ? (double)vw_audit_grid_drawn(b) / nb : 1;
    return ra > rb || (ra == rb && p == 0);
}

int vw_audit_rules(const vw_slide *sl, int reveal, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    const char *which = reveal ? "its answer slide" : "the slide";
    /* pictures first */
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->tensor < 0) continue;
        if (rp->rect.h * 100 < VW_SLIDE_PICTURE * rec->h)
            bad += vw_audit_say(
                fn, ctx, "%s at %dx%d: the %s heatmap takes %d%% of the height (the pictures take %d%% at least)",
                which, rec->w, rec->h, p ? "right" : "left", rp->rect.h * 100 / rec->h, VW_SLIDE_PICTURE);
        /* the picture itself, not its panel (issue 38 D1: three-column slides drew a 16 x 16
         * input 300 px tall in a panel of 60 %): the grid as drawn takes VW_SLIDE_PICTURE of
         * the height, or as much as its shape allows in half the frame's width (a 9 x 16
         * plane cannot be square); a table as much as its rows at its text take */
        const int need = vw_audit_grid_need(rp, rec->w, rec->h, rec->line), drawn = vw_audit_grid_drawn(rp);
        const int head = vw_panel_header_h(rec->line);
        const int counts = grid_counts(sl, reveal, rec, p);
        if (!rp->hidden && drawn < need && counts)
            bad += vw_audit_say(
                fn, ctx,
                "%s at %dx%d: the %s panel's header and %s%s take %d px, %d%% of the height (at least %d px: "
                "%d%% of the height or what its shape allows)",
                which, rec->w, rec->h, p ? "right" : "left", rp->table ? "table" : "grid",
                p == rec->focus_panel ? " (the step's)"
                : counts == 2         ? " (the asked)"
                                      : " (the taller)",
                head + drawn, (head + drawn) * 100 / rec->h, head + need, VW_SLIDE_PICTURE);
        /* a plane printing its values prints them in the cells its map's edge cuts too,
         * in the part that shows (issue 38: 08 s5's last column and 11 s9's last row were
         * strips of colour without their numbers): a cut row or column at the edge
         * prints some number where the row or column inside it does, when what shows of
         * it holds a number's line (a thinner strip is the plane going on: whole_cells
         * drops it, unless the picture's share needs it); a sparse plane's empty cells
         * print none anywhere */
        if (!rp->hidden && !rp->table && rp->values && !rp->sparse && rp->cell >= 8 && rp->nvalues > 0) {
            const int vline = rp->value[0].box.h, vwide = rp->value[0].box.w;
            const vw_rect e = rp->extent, mp = rp->map;
            const double o[2] = {rp->ox, rp->oy};
            const int lo[2] = {e.x, e.y}, hi[2] = {e.x + e.w, e.y + e.h};
            const int mlo[2] = {mp.x, mp.y}, mhi[2] = {mp.x + mp.w, mp.y + mp.h};
            int cut = -1;
            for (int k = 0; k < 4 && cut < 0; ++k) {
                const int ax = k & 1, at_lo = k < 2;
                const double f = ((at_lo ? lo[ax] : hi[ax]) - o[ax]) / rp->cell, gap = 2 / rp->cell;
                const double frac = f - floor(f);
                const double shows = (at_lo ? 1 - frac : frac) * rp->cell;
                if ((at_lo ? lo[ax] > mlo[ax] : hi[ax] < mhi[ax]) || frac <= gap || frac >= 1 - gap ||
                    shows < (ax ? vline : vwide))
                    continue;
                const int edge = (int)floor(f), inner = at_lo ? edge + 1 : edge - 1;
                int on_edge = 0, on_inner = 0;
                for (int j = 0; j < rp->nvalues; ++j) {
                    const int v = ax ? rp->value[j].y : rp->value[j].x;
                    on_edge += v == edge, on_inner += v == inner;
                }
                if (!on_edge && on_inner) cut = ax;
            }
            if (cut >= 0)
                bad += vw_audit_say(fn, ctx,
                                    "%s at %dx%d: the %s panel shows a %s its map's edge cuts without its numbers",
                                    which, rec->w, rec->h, p ? "right" : "left", cut ? "row" : "column");
        }
        /* a window of the plane that leaves out most of the focused item's cells (issue
         * 38 D1, ninth re-trial: 10 s14's window held the focused read, 3 of item 20's 9
         * reads, under "Item 20 makes 9 reads"), and an outline drawn past the cells in
         * view (its 1024x768 slide outlined a read out of the window in the margin) */
        /* on the step's panel, and on a window of the other's (tenth re-trial, N10: 05 s8's
         * columns held 3 of item 12's 9 writes, its focused event an offset read on
         * neither panel; and a zoom to the focused tap's cells for their values was let
         * off, where another layout holds all 9 with theirs), but for a panel the question
         * covers, whose answer shows the asked cell in the room the question left it */
        if ((p == rec->focus_panel || (rp->window && !rp->covered)) && !rp->hidden && !rp->table &&
            rp->item_cells >= 3 && rp->item_shown * 2 < rp->item_cells)
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the %s panel shows %d of the focused item's %d cells: zoom to all of "
                                "them, or focus on what the window holds",
                                which, rec->w, rec->h, p ? "right" : "left", rp->item_shown, rp->item_cells);
        /* a question that asks a cell as (y, x) on a panel without row and column numbers
         * (issue 38 D12, ninth re-trial: 02 s4 and s10, 03 s7, 05 s5, 12 s5, 14 s3) */
        if (rp->yx && !rp->hidden && !rp->table && rp->axes == 0)
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the question asks (y, x) of the %s panel, which prints no row and "
                                "column numbers",
                                which, rec->w, rec->h, p ? "right" : "left");
        /* what the slide prints as ? (a padding tap's entry a later step asks) is no value of
         * its picture: not an end of the legend's range, nor painted a value's colour (issue
         * 38 D2 N6, tenth re-trial: 02 s1-s3's columns legend "0 .. 70" where every 0
         * printed ?, each ? on the 0 colour) */
        if (!rp->hidden && rp->hidden_ends > 0)
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the %s panel's colour bar %s .. %s reaches a value only its ? cells "
                                "hold: leave what the slide hides out of the range",
                                which, rec->w, rec->h, p ? "right" : "left", rp->ends[0], rp->ends[1]);
        if (!rp->hidden && rp->hidden_painted > 0)
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the %s panel paints %d of its %d ? cells a value's colour (grey, as "
                                "the margin, hides it)",
                                which, rec->w, rec->h, p ? "right" : "left", rp->hidden_painted, rp->hidden_cells);
        if (rp->marks_out > 0)
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the %s panel draws %d outline%s outside the cells in view (a cell "
                                "out of the window marked in the margin)",
                                which, rec->w, rec->h, p ? "right" : "left", rp->marks_out,
                                rp->marks_out > 1 ? "s" : "");
        /* a one-row plane of many cells drawn as a hairline (issue 38 D1: 13's 256-word
         * tile, 1 x 256 cells of 4 px): no cell a room sees, no value it reads */
        if (!rp->hidden && !rp->table && rp->rows == 1 && rp->cols > 1 && rp->fill_rows <= 0 &&
            rp->cell < vw_legible_px(rec->h))
            bad += vw_audit_say(
                fn, ctx,
                "%s at %dx%d: the %s panel draws a 1 x %lld strip %.0f px tall, a hairline: give the tensor "
                "a shape (a run's \"shape\") or show another panel",
                which, rec->w, rec->h, p ? "right" : "left", (long long)rp->cols, rp->cell);
        /* a count (reads, writes, weights, pairs) that is 0 in every cell draws a blank
         * picture (issue 38 D12: 03 s2's output by reads, which col2im never reads) */
        if (!rp->hidden && !rp->table && rp->mode != VW_MODE_VALUES && rp->mode != VW_MODE_SECTORS && rp->lo == 0 &&
            rp->hi == 0)
            bad += vw_audit_say(
                fn, ctx,
                "%s at %dx%d: the %s panel counts %s and every cell is 0, a blank picture: show its values "
                "or what the step counts",
                which, rec->w, rec->h, p ? "right" : "left", vw_mode_name((vw_mode)rp->mode));
        /* a window of the plane names its rows and columns in the header (issue 38 D12: 11
         * s1's and 08 s8's zoomed panels under a header of the whole shape, 13 s10's zoom
         * left column 0 out unsaid) */
        if (!rp->hidden && !rp->table && rp->window && !rp->window_named)
            bad += vw_audit_say(
                fn, ctx,
                "%s at %dx%d: the %s panel shows a window of its plane and its header does not name the "
                "window's rows and columns",
                which, rec->w, rec->h, p ? "right" : "left");
        /* values: printed where they fit, else zoomed to the step's cells where that makes them fit */
        if (!rp->hidden && !rp->values && rp->need_cell > 0 &&
            (rp->cell >= rp->need_cell || (rp->focus_cell >= rp->need_cell && !rp->zoomed)))
            bad += vw_audit_say(
                fn, ctx, "%s at %dx%d: the %s panel's cells (%.0f px) print no values though they need %.0f px%s",
                which, rec->w, rec->h, p ? "right" : "left", rp->cell, rp->need_cell,
                rp->cell >= rp->need_cell ? "" : " and the step's cells could zoom to that");
    }
    /* the band: the text whole (an answer slide may leave the step's text to the slide before) */
    if (rec->band_cut)
        bad += vw_audit_say(fn, ctx,
                            "%s at %dx%d: the narration does not fit its band (%d rows): shorten it or move some to "
                            "\"notes\" (the terminal player's)",
                            which, rec->w, rec->h, rec->band_rows);
    /* as the band wraps it: a column beside the pictures holds fewer words a line than
     * the frame (issue 38 D1: lesson 01 step 8 took 14 lines there, 5 across the frame) */
    if (!reveal && rec->w == VW_NARRATION_W && rec->h == VW_NARRATION_H && rec->band_body > VW_NARRATION_LINES)
        bad += vw_audit_say(fn, ctx,
                            "the narration takes %d lines at 1024x768 (at most %d): shorten it or move some to "
                            "\"notes\" (the terminal player's)",
                            rec->band_body, VW_NARRATION_LINES);
    /* the status line whole (issue 38: cut on every slide at the three sizes) */
    if (rec->status_cut)
        bad += vw_audit_say(fn, ctx, "%s at %dx%d: the status line is cut: '%s'", which, rec->w, rec->h,
                            rec->status_text);
    bad += legible(which, rec, fn, ctx);
    /* no text cut: a caption, a title or a line that loses characters loses what it says */
    for (int i = 0; i < rec->cuts.n && i < VW_REC_CUTS; ++i) {
        static const char *const how[] = {"", "at its width", "at its panel's edge", "at the frame's edge"};
        const vw_rect b = rec->cuts.cut[i].box;
        bad += vw_audit_say(fn, ctx, "%s at %dx%d: the text '%s' at (%d, %d) is cut %s", which, rec->w, rec->h,
                            rec->cuts.cut[i].text, b.x, b.y, how[rec->cuts.cut[i].why]);
    }
    /* the panel the step is about stays in view on its question slide (issue 38 D8: 05
     * step 6 covered the input its weights are drawn on, 10 step 3 the input whose
     * sectors it is about) */
    if (!reveal && rec->focus_panel >= 0 && rec->panel[rec->focus_panel].hidden)
        bad += vw_audit_say(fn, ctx,
                            "the question slide at %dx%d hides the %s panel, the one the step is about (its focused "
                            "event's): ask about what the picture does not show instead of covering it",
                            rec->w, rec->h, rec->focus_panel ? "right" : "left");
    if (!reveal && sl->asked[0]) bad += answer_in_text(sl, rec, "question slide", fn, ctx);
    /* a question slide's events list of the asked item ends at the focused event: the
     * later ones are what the answer reads (issue 38 D2: 05 s10 listed its tap's "sample
     * ... = 0"); another item's (13 s3: what one thread does, a question on another) may go on */
    if (!reveal && sl->question && rec->decomp_later > 0 && !rec->decomp_hidden &&
        (!sl->asked_item || sl->asked_item - 1 == rec->decomp_item))
        bad += vw_audit_say(
            fn, ctx,
            "the question slide at %dx%d lists %d line%s of the item's events after the focused one: its "
            "answer may read them",
            rec->w, rec->h, rec->decomp_later, rec->decomp_later == 1 ? "" : "s");
    bad += markers_over_numbers(which, rec, fn, ctx);
    /* the decomposition keeps every field the narration names, and the focused event */
    char fields[sizeof sl->fields], *save = NULL;
    snprintf(fields, sizeof fields, "%s", sl->fields);
    for (char *name = rec->decomp_hidden ? NULL : strtok_r(fields, " ", &save); name;
         name = strtok_r(NULL, " ", &save)) {
        char key[80], part[80];
        snprintf(key, sizeof key, " %s ", name);
        snprintf(part, sizeof part, " %s.", name); /* {work.threadIdx}: its lines threadIdx.x ... */
        char whole[80] = "";                       /* threadIdx.x: the line threadIdx = (x,y,z) */
        const char *dot = strchr(name, '.');
        if (dot) snprintf(whole, sizeof whole, " %.*s ", (int)(dot - name), name);
        if (!strstr(rec->fields, key) && !strstr(rec->fields, part) && !(whole[0] && strstr(rec->fields, whole)))
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the decomposition panel leaves out %s, which the narration names", which,
                                rec->w, rec->h, name);
    }
    /* and no line worked out of a field whose own line it leaves out (issue 38 D4: 10
     * s11's "j = floor(x) + jj - R" without jj, s15's "w = w_col * 1 - 1 ..." without w_col) */
    for (int i = 0; i < 2 * rec->decomp_lines && i < 2 * VW_REC_LINES && !rec->decomp_hidden; ++i) {
        /* each line's first field, then the second of a line that holds two (vw_field_second) */
        const int second = i >= rec->decomp_lines;
        const char *line = rec->decomp_text[second ? i - rec->decomp_lines : i];
        const char *next = vw_field_second(line), *from = second ? next : line;
        if (!from) continue;
        char seg[VW_REC_LINE];
        snprintf(seg, sizeof seg, "%.*s", (int)(!second && next ? next - line : (ptrdiff_t)strlen(from)), from);
        const char *t = seg, *eq = strstr(t, " = ");
        char name[80];
        /* a field's own line ("  name = ..."), not an event's or a continuation */
        const char *own = t + strspn(t, " ");
        const size_t len = strcspn(own, " ");
        if (t[0] != ' ' || !eq || !len || len + 3 > sizeof name) continue;
        snprintf(name, sizeof name, " %.*s ", (int)len, own);
        /* a line the narration names stands for itself; one shown for the room comes
         * with the lines it is worked out of */
        if (!strstr(rec->fields, name) || strstr(sl->fields, name)) continue;
        const char *missing = NULL;
        for (const char *p = rec->work_fields; *p && !missing;) {
            while (*p == ' ') p++;
            const size_t n = strcspn(p, " ");
            if (!n || n >= sizeof name) break;
            memcpy(name, p, n), name[n] = 0;
            char key[84];
            snprintf(key, sizeof key, " %s ", name);
            if (!strstr(rec->fields, key) && vw_text_has_token(eq + 3, name, 0)) missing = p;
            p += n;
        }
        if (missing) {
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the decomposition panel works \"%s\" out of %.*s without its line", which,
                                rec->w, rec->h, t + strspn(t, " "), (int)strcspn(missing, " "), missing);
            break;
        }
    }
    if (rec->decomp.h > 0 && !rec->decomp_focus && !rec->decomp_hidden)
        bad += vw_audit_say(fn, ctx, "%s at %dx%d: the decomposition panel leaves out the focused event", which, rec->w,
                            rec->h);
    /* an answer slide outlines the cell its question asks about */
    if (reveal && sl->has_answer_cell && !rec->answer_cell)
        bad += vw_audit_say(fn, ctx, "its answer slide at %dx%d: the cell the question asks about is not outlined",
                            rec->w, rec->h);
    /* a question slide's cells do not print its answer: in the asked cell, in one of the
     * few cells the step names, and a number that is not a whole one anywhere (a whole
     * one elsewhere is the kind of value an arange input prints in every lesson) */
    if (!reveal && sl->has_answer_value) bad += answer_in_cells(sl, rec, fn, ctx);
    /* labels keep off the cells the step names, and so do their leader lines */
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        const vw_rec_panel *rp = &rec->panel[l->panel];
        for (int j = 0; l->leader && j < rp->nfocus; ++j) {
            const vw_rect f = rp->focus[j];
            /* only the cell it starts from: a leader across its sample's other corners hides
             * them as much as any (issue 38 D3: 06 steps 4-5, 05 steps 4-9) */
            const int holds = l->ax >= f.x && l->ax < f.x + f.w && l->ay >= f.y && l->ay < f.y + f.h;
            int crosses = 0;
            for (int k = 0; k + 1 < l->npts && !holds && !crosses; ++k)
                crosses = vw_segment_crosses(l->pts[k][0], l->pts[k][1], l->pts[k + 1][0], l->pts[k + 1][1], f);
            if (crosses) {
                bad += vw_audit_say(fn, ctx, "%s at %dx%d: the leader line of label '%s' crosses a cell the step names",
                                    which, rec->w, rec->h, l->text);
                break;
            }
        }
    }
    /* labels keep off every number the cells print (issue 38 D3: 06 step 3's 0.09375 over
     * 19): the label's black box (its 3 px rim is clear) against each text as drawn */
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        const vw_rec_panel *rp = &rec->panel[l->panel];
        const vw_rect ink = {.x = l->box.x + 3, .y = l->box.y + 3, .w = l->box.w - 6, .h = l->box.h - 6};
        for (int j = 0; j < rp->nvalues && !rp->hidden; ++j)
            if (vw_rect_overlap(ink, rp->value[j].box)) {
                bad += vw_audit_say(fn, ctx,
                                    "%s at %dx%d: the label '%s' covers the number %s of the %s panel's cell (%d, %d)",
                                    which, rec->w, rec->h, l->text, rp->value[j].text, l->panel ? "right" : "left",
                                    rp->value[j].y, rp->value[j].x);
                break;
            }
    }
    bad += labels_beside_others(which, rec, fn, ctx);
    bad += race_named(which, rec, fn, ctx);
    bad += vw_audit_cell_rules(sl, reveal, rec, fn, ctx);
    /* labels keep off the cells the step names, but for the one they name: a weight on
     * its own corner's cell, off its number (the rule above), covers no other's data */
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        const vw_rec_panel *rp = &rec->panel[l->panel];
        for (int j = 0; j < rp->nfocus; ++j)
            if (vw_rect_overlap(vw_label_ink(l), rp->focus[j]) && !vw_label_in_own_cell(l, rp->focus[j])) {
                bad += vw_audit_say(fn, ctx, "%s at %dx%d: the label '%s' covers a cell the step names", which, rec->w,
                                    rec->h, l->text);
                break;
            }
    }
    return bad;
}
