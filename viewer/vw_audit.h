/* vw_audit.h - slides checked as they are drawn (issue 38): every slide of a lesson, and
 * its answer, rendered headless at a size in the order PageDown shows them, with the
 * frame's record (vw_record.h) handed to a callback; and the rules a slide a projector
 * can show keeps, read off that record. `kscope lesson --check` runs them at 1920x1080,
 * 1280x960 and 1024x768; test_view_slides asserts them on its own. */
#ifndef VW_AUDIT_H
#define VW_AUDIT_H

#include "vw_record.h"
#include "vw_slide.h"
#include "vw_state.h"

/* The sizes slides are checked at. */
#define VW_AUDIT_SIZES 3
extern const int vw_audit_size[VW_AUDIT_SIZES][2];

typedef void (*vw_audit_fn)(void *ctx, int slide, int reveal, const vw_record *rec, const vw_state *s);

/* Draws slides[0..n) (each with its answer after it when it asks a question) in a w x h
 * frame, text of text_px (0: the default for the size), on trace tr / index idx under
 * the title bar `title` (the lesson's; NULL: the trace's) as a lesson's --frames does,
 * calling fn after each. Returns 0, or -1 with ks_error_message(). */
int vw_audit_slides(const vw_slide *slides, int n, const char *title, const ks_trace *tr, const vw_index *idx, int w,
                    int h, int text_px, vw_audit_fn fn, void *ctx);

/* The narration's lines on a slide wrapped across a w wide frame at the default text
 * size (the least the band can wrap it to; --check counts them as drawn). */
int vw_audit_narration_lines(const vw_slide *sl, int w, int h);

/* The rules (issue 38 D1, D3, D4) slide `sl` drawn into `rec` breaks, each as one
 * sentence through fn (msg); returns how many:
 *   pictures: the heatmap panels take at least VW_SLIDE_PICTURE % of the height, and
 *             the panel the step is about (the taller where it is about neither) takes
 *             it literally: its header line and its grid as drawn (vw_audit_grid_need);
 *   text: the band shows the slide's text whole (an answer slide may leave the step's
 *         text to the slide before), narration (run line and text) at most
 *         VW_NARRATION_LINES at 1024x768 as the band wraps it;
 *   values: a panel prints its cells' values when they fit at the smallest value text,
 *           or zooms to the step's cells where that makes them fit;
 *   blank: no panel counts (reads, writes, weights, pairs) 0 in every cell;
 *   fields: the decomposition shows every field the narration names and the focused
 *           event;
 *   labels: no label (a weight, a clamp, a site's tap) covers a cell the step names or
 *           any number the cells print, no leader line crosses a named cell but the
 *           cell it starts from (its sample's other corners included);
 *   leak: a number question's slide prints its answer in no cell it asks about or the
 *         step names (at most 4 on the panel: each stands out), and a number that is
 *         not a whole one in no cell at all;
 *   answer: an answer slide outlines the cell its question asks about;
 *   legible: cell values and labels at vw_legible_px(h) at least;
 *   hidden: a question slide does not cover the panel of the step's focused event;
 *   given away: vw_audit_answer_in_text on the question slide, and no event of the
 *               asked item after the focused one in its events list;
 *   markers: no sample dot, ring or square over a number a cell prints;
 *   status: the status line fits its bar. */
/* The least height in pixels panel rp's grid as drawn (its extent) must take in a w x h
 * frame: VW_SLIDE_PICTURE % of h less the panel's header line, or what the plane's
 * shape allows in a panel half the frame wide (a wide plane's square cells; a sparse
 * plane's filled cells, fill_rows x fill_cols), or a table's header and rows at its text. */
int vw_audit_grid_need(const vw_rec_panel *rp, int w, int h, int line);
/* The height in pixels panel rp's grid is drawn at: its cells in view and the margin's
 * (the padding ring round a plane), a sparse plane's filled cells (08's ring of sites,
 * not the empty rows round it), a table's header and rows. */
int vw_audit_grid_drawn(const vw_rec_panel *rp);

/* Label l's black box, its text's: its box less the 3 px rim drawn clear (the rim may
 * lie over a neighbour's edge; the text covers what the ink does). */
vw_rect vw_label_ink(const vw_rec_label *l);
/* Whether label l's ink sits inside cell f, the one holding the point it names (a weight
 * on its own corner's cell: the one named cell a label may take). */
int vw_label_in_own_cell(const vw_rec_label *l, vw_rect f);

typedef void (*vw_rule_fn)(void *ctx, const char *msg);
/* One rule's message (printf-style) to fn, when there is one; returns 1 (a rule broken):
 * the rules' shared way to report (vw_audit.c, vw_audit_cells.c). */
int vw_audit_say(vw_rule_fn fn, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vw_audit_rules(const vw_slide *sl, int reveal, const vw_record *rec, vw_rule_fn fn, void *ctx);

/* The rules about what cells, labels and ranges say (vw_audit_cells.c; vw_audit_rules
 * runs them too), each broken one a sentence through fn; returns how many:
 *   label in another cell: no label's text lies inside a cell that prints a number and
 *       is not the cell the label names (it reads as that cell's);
 *   same count: no panel counting reads, writes, weights, visits or pairs prints one
 *       count in every cell (a picture with nothing to point at);
 *   rounded range: a header or legend that prints an end of its panel's range rounded
 *       marks it "~" (or "≈");
 *   axes: a sparse plane's row and column numbers lie over no number a cell prints. */
int vw_audit_cell_rules(const vw_slide *sl, int reveal, const vw_record *rec, vw_rule_fn fn, void *ctx);
/* Whether text prints lo or hi rounded without a "~" or "≈" before it ("values 0 ..
 * 21.67" for 21.666...): 1 with that number's text in token. */
int vw_text_rounds_unmarked(const char *text, double lo, double hi, char *token, size_t n);

/* Whether the drawing in rec gives the answer of slide sl's question away (sl->asked),
 * `where` naming the frame in the message ("question slide", "slide before its
 * question"): as a label's text; a fraction, cell or choice's words in the
 * decomposition and events panel or in the band above the question; on a slide before
 * the question also in any cell (on the question's own slide vw_audit_rules judges the
 * cells). A whole number (a choice's "zero" too) counts only as the value the focused
 * event's line prints ("> tap 0 read ... = 0"): elsewhere it stands by chance (a tap, a
 * block, an index). One sentence per place through fn; returns how many. */
int vw_audit_answer_in_text(const vw_slide *sl, const vw_record *rec, const char *where, vw_rule_fn fn, void *ctx);
/* Its labels alone (a corner's weight, a clamp's words; not a whole number, which a
 * label may print by chance): a slide steps before a question draws nothing that
 * answers it either (issue 38 D2, thirteenth re-trial N27: 05 s3 drew 0.375, the weight
 * s6 asks). */
int vw_audit_answer_in_labels(const vw_slide *sl, const vw_record *rec, const char *where, vw_rule_fn fn, void *ctx);

#endif
