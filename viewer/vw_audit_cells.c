/* vw_audit_cells.c - the rules of vw_audit_cell_rules (vw_audit.h): what a slide's cells,
 * labels, headers and legends say, read off the drawing's record (issue 38, the seventh
 * re-trial's list of what `kscope lesson --check` did not catch). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vw_audit.h"

/* Printed value j's cell on heatmap panel rp as drawn, less 2 px a side (a label's clear
 * rim or a neighbour's outline may touch a cell's edge; what reads as inside is the rest). */
static vw_rect value_cell(const vw_rec_panel *rp, int j)
{
    const int in = rp->cell > 8 ? 2 : 0, side = (int)rp->cell - 2 * in;
    return (vw_rect){.x = (int)lround(rp->ox + rp->value[j].x * rp->cell) + in,
                     .y = (int)lround(rp->oy + rp->value[j].y * rp->cell) + in,
                     .w = side > 1 ? side : 1,
                     .h = side > 1 ? side : 1};
}

/* Whether a label's text reads as a number (a weight "0.375", a tap "1", "~0.53"), as
 * a cell's value would; a figure's words ("wave 1", "w_col 0: ...") name a region. */
static int reads_as_number(const char *t)
{
    if (*t == '~' || *t == '-') t++;
    return isdigit((unsigned char)*t) && strspn(t, "0123456789.") == strlen(t);
}

/* A number label's ink inside a cell that prints a number of its own and is not the
 * cell the label names (issue 38 D3: 08 s4's tap label "1" of site 6 in site 4's cell
 * read "4 1"; weight labels in the neighbours' cells, 05 s7 and 07 s4-s9): the two
 * numbers read as one cell's. A weight in its own corner's cell is where it belongs. */
static int labels_in_other_cells(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    for (int i = 0; i < rec->nlabels; ++i) {
        const vw_rec_label *l = &rec->labels[i];
        const vw_rec_panel *rp = &rec->panel[l->panel];
        if (rp->hidden || rp->table || !rp->values || rp->cell <= 0 || !reads_as_number(l->text)) continue;
        const vw_rect ink = vw_label_ink(l);
        const int ox = l->cell.x + l->cell.w / 2, oy = l->cell.y + l->cell.h / 2;
        for (int j = 0; j < rp->nvalues; ++j) {
            const vw_rect c = value_cell(rp, j);
            const int own = l->cell.w > 0 && ox >= c.x - 2 && ox < c.x + c.w + 2 && oy >= c.y - 2 && oy < c.y + c.h + 2;
            if (own || !vw_rect_overlap(ink, c)) continue;
            bad += vw_audit_say(
                fn, ctx,
                "%s at %dx%d: the label '%s' lies inside the %s panel's cell (%d, %d), which prints %s and is "
                "not the cell it names: it reads as that cell's",
                which, rec->w, rec->h, l->text, l->panel ? "right" : "left", rp->value[j].y, rp->value[j].x,
                rp->value[j].text);
            break;
        }
    }
    return bad;
}

/* Whether panel p counts something (reads, writes, weights, visits, pairs) and its
 * printed cells all print one count. */
static int one_count(const vw_record *rec, int p)
{
    const vw_rec_panel *rp = &rec->panel[p];
    if (rp->tensor < 0 || rp->hidden || rp->table || rp->mode == VW_MODE_VALUES || rp->mode == VW_MODE_SECTORS ||
        !rp->values || rp->nvalues < 2 || rp->values_cut)
        return 0;
    for (int j = 1; j < rp->nvalues; ++j)
        if (strcmp(rp->value[j].text, rp->value[0].text)) return 0;
    return 1;
}

/* Whether the band says count (a cell's text) is the point: "... read 16 times". */
static int band_says_times(const vw_record *rec, const char *count)
{
    static char text[VW_REC_LINES * VW_REC_LINE];
    char want[32];
    size_t used = 0;
    text[0] = 0;
    for (int i = 0; i < rec->band_lines && i < VW_REC_LINES && used < sizeof text; ++i)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s ", rec->band_text[i]);
    snprintf(want, sizeof want, " %s times", count);
    return strstr(text, want) != NULL;
}

/* The panel a step is about (its focused event's, or the one it names in "about")
 * counting something with one count in every cell draws nothing the step can point at,
 * nor do two panels that both do on a step about neither (issue 38 D8: 09 s7's transpose
 * as input by reads and output by writes, every cell 1), unless that count is what the
 * narration says ("every weight is read 16 times", 04 s8). A panel beside the step's
 * may count writes to keep a later answer's values covered (06's and 07's outputs). */
static int same_count_everywhere(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    const int shown = (rec->panel[0].tensor >= 0 && !rec->panel[0].hidden) +
                      (rec->panel[1].tensor >= 0 && !rec->panel[1].hidden);
    const int both = rec->focus_panel < 0 && shown > 0 &&
                     (rec->panel[0].tensor < 0 || rec->panel[0].hidden || one_count(rec, 0)) &&
                     (rec->panel[1].tensor < 0 || rec->panel[1].hidden || one_count(rec, 1));
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (one_count(rec, p) && (p == rec->focus_panel || both) && !band_says_times(rec, rp->value[0].text))
            bad += vw_audit_say(
                fn, ctx,
                "%s at %dx%d: the %s panel counts %s and every cell prints %s: a picture with nothing to "
                "point at (show its values, or what the step counts)",
                which, rec->w, rec->h, p ? "right" : "left", vw_mode_name((vw_mode)rp->mode), rp->value[0].text);
    }
    return bad;
}

/* Whether number token t (as printed, no "~" before it) rounds v without being v: "21.67"
 * for 21.666..., not "21.67" for 21.67 nor "0" for 0. */
static int rounds(const char *t, double v)
{
    char *end;
    const double x = strtod(t, &end);
    if (end == t || x == v || !isfinite(v)) return 0;
    const char *dot = memchr(t, '.', (size_t)(end - t));
    const int decimals = dot ? (int)(end - dot - 1) : 0;
    return fabs(x - v) <= 0.5 * pow(10.0, -decimals) * (1 + 1e-9);
}

/* The next number of text from *p: its characters in t (a sentence's full stop left
 * out), its value, its decimals, whether ~ or ≈ marks it rounded ("~21.67", "≈21.67": its
 * UTF-8 ends in 0x88); *p past it. 0 at the text's end. */
static int next_number(const char **p, const char *text, char t[48], double *v, int *decimals, int *marked)
{
    for (const char *q = *p; *q; ++q) {
        const int starts = (isdigit((unsigned char)*q) || (*q == '-' && isdigit((unsigned char)q[1]))) &&
                           (q == text || !(isalnum((unsigned char)q[-1]) || q[-1] == '.' || q[-1] == '_'));
        if (!starts) continue;
        size_t len = strspn(q + (*q == '-'), "0123456789.") + (*q == '-');
        while (len && q[len - 1] == '.') len--; /* a sentence's full stop */
        snprintf(t, 48, "%.*s", (int)(len < 48 ? len : 47), q);
        const char *dot = strchr(t, '.');
        *v = strtod(t, NULL), *decimals = dot ? (int)strlen(dot + 1) : 0;
        *marked = q > text && (q[-1] == '~' || (unsigned char)q[-1] == 0x88);
        *p = q + (len ? len : 1);
        return 1;
    }
    return 0;
}

int vw_text_rounds_unmarked(const char *text, double lo, double hi, char *token, size_t n)
{
    char t[48];
    double v;
    int decimals, marked;
    for (const char *p = text; next_number(&p, text, t, &v, &decimals, &marked);)
        if (!marked && (rounds(t, lo) || rounds(t, hi))) {
            snprintf(token, n, "%s", t);
            return 1;
        }
    return 0;
}

/* A header or legend printing its range rounded says so (issue 38 D9: 05's columns
 * header "values 0 .. 21.67" beside the legend's "~21.67"). */
static int rounded_ranges(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->tensor < 0 || rp->hidden) continue;
        /* the header's range "lo .. hi" (its other numbers are a plane's place, a shape) */
        char range[96] = "";
        const char *dots = strstr(rp->head, " .. ");
        if (dots) {
            const char *from = dots;
            while (from > rp->head && from[-1] != ' ') from--;
            snprintf(range, sizeof range, "%.*s", (int)strcspn(dots + 4, " ") + (int)(dots + 4 - from), from);
        }
        const char *texts[3] = {range, rp->ends[0], rp->ends[1]};
        for (int k = 0; k < 3; ++k) {
            char t[48];
            if (!vw_text_rounds_unmarked(texts[k], rp->lo, rp->hi, t, sizeof t)) continue;
            bad += vw_audit_say(fn, ctx,
                                "%s at %dx%d: the %s panel's %s prints %s, a rounded end of its range, without ~",
                                which, rec->w, rec->h, p ? "right" : "left", k ? "legend" : "header", t);
            break;
        }
    }
    return bad;
}

/* A decimal the narration rounds where the events panel prints the value in full says so
 * with ~ (issue 38 D9, tenth re-trial: 06 s8's "samples at 7.09 and 8.03" over events at
 * y 7.09375 and 8.03125). */
static int rounded_narration(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    for (int i = 0; i < rec->band_lines && i < VW_REC_LINES; ++i) {
        const char *p = rec->band_text[i];
        double x, u;
        int dx, du, marked, um;
        char t[48];
        while (next_number(&p, rec->band_text[i], t, &x, &dx, &marked)) {
            if (marked || dx < 1) continue;
            for (int j = 0; j < rec->decomp_lines && j < VW_REC_LINES && !rec->decomp_hidden; ++j)
                for (const char *q = rec->decomp_text[j]; next_number(&q, rec->decomp_text[j], t, &u, &du, &um);)
                    if (!um && du > dx && u != x && fabs(u - x) <= 0.5 * pow(10.0, -dx) * (1 + 1e-9))
                        return vw_audit_say(fn, ctx,
                                            "%s at %dx%d: the narration prints %.*f, %g rounded (the events "
                                            "print it in full), without ~",
                                            which, rec->w, rec->h, dx, x, u);
        }
    }
    return 0;
}

/* A sparse plane's dim row and column numbers keep off the numbers the cells print
 * (issue 38 D3, eighth re-trial: 08 s8's in_sites by visits printed 0 in every cell, and
 * the row numbers over them read "0" over "2"). */
static int axes_over_numbers(const char *which, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    int bad = 0;
    for (int p = 0; p < 2; ++p) {
        const vw_rec_panel *rp = &rec->panel[p];
        if (rp->hidden) continue;
        for (int a = 0; a < rp->axes && a < 64; ++a)
            for (int j = 0; j < rp->nvalues; ++j)
                if (vw_rect_overlap(rp->axes_box[a], vw_value_ink(rp->value[j].box))) {
                    bad += vw_audit_say(
                        fn, ctx,
                        "%s at %dx%d: a row or column number of the %s panel lies over the number %s of its "
                        "cell (%d, %d)",
                        which, rec->w, rec->h, p ? "right" : "left", rp->value[j].text, rp->value[j].y, rp->value[j].x);
                    return bad;
                }
    }
    return bad;
}

int vw_audit_cell_rules(const vw_slide *sl, int reveal, const vw_record *rec, vw_rule_fn fn, void *ctx)
{
    (void)sl;
    const char *which = reveal ? "its answer slide" : "the slide";
    return labels_in_other_cells(which, rec, fn, ctx) + same_count_everywhere(which, rec, fn, ctx) +
           rounded_ranges(which, rec, fn, ctx) + axes_over_numbers(which, rec, fn, ctx) +
           rounded_narration(which, rec, fn, ctx);
}
