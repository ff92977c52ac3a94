/* vw_describe.h - the viewer's words: title, panel headers, the index-decomposition
 * panel, the status line and the key help, as plain strings (pure, tested as text). */
#ifndef VW_DESCRIBE_H
#define VW_DESCRIBE_H

#include <stddef.h>

#include "vw_state.h"

#define VW_MAX_LINES 48
#define VW_LINE_LEN 200

enum vw_line_style { VW_STYLE_TEXT = 0, VW_STYLE_HEAD = 1, VW_STYLE_FOCUS = 2, VW_STYLE_DIM = 3 };

/* Between two fields a slide's decomposition prints on one line (vw_describe_focus_wrapped) */
#define VW_FIELD_GAP "      "

/* A decomposition line's field: the length of "  name = ..."'s name, 0 where the line is
 * no field's own (an event, a continuation); the second field of a line that holds two,
 * as "  name = ..." (NULL: none). */
size_t vw_field_name_len(const char *t);
const char *vw_field_second(const char *t);

typedef struct vw_lines {
    int n;
    int style[VW_MAX_LINES];
    char text[VW_MAX_LINES][VW_LINE_LEN];
} vw_lines;

/* The focused work item: its thread and iteration, every field of its decomposition
 * with the division and modulo evaluated, then its events with the focused one marked,
 * keeping at most max_lines lines (the events scroll around the focused one). A
 * reverse lookup in progress comes first. */
void vw_describe_focus(const vw_state *s, vw_lines *out, int max_lines);
/* The same, long lines wrapped at `cols` (continuations indented under the value), in at
 * most max_lines lines: nothing is cut at the panel's edge; fields give way to fit as in
 * a short panel. And how many such lines the focus needs: the fields the slide's
 * narration names and the worked-out ones (the index's digits the header gives), the
 * event header and the focused event. */
void vw_describe_focus_wrapped(const vw_state *s, int cols, vw_lines *out, int max_lines);
int vw_describe_focus_needed(const vw_state *s, int cols);
/* The same (least 0), or the fewest lines that keep every field the narration names with
 * the header, the index line, the event header and the focused event (least 1). */
int vw_describe_focus_lines(const vw_state *s, int cols, int least);
/* Where the events panel's list of work item `item`'s count events, the focused one at
 * `focus`, ends (one past the last shown): a question slide before its answer lists none
 * of the asked item's events after the focused one (the answer reads them: issue 38
 * D2), else all count. */
uint32_t vw_describe_events_end(const vw_state *s, uint32_t item, uint32_t count, uint32_t focus);
/* How many events of each site the work item has, in site order, the work event left out
 * and the operator's prefix dropped: "3 read_site, 1 input_site, 2 hash_probe, ..." (a
 * sparse rulebook lookup's hash probes at a glance). "" for an item out of range. */
/* The names of the focused work item's decomposition lines (its fields and the values
 * worked out before them, as `kscope step` lists them) as " a b c " in buf; "" when the
 * focus has no work item. */
void vw_describe_work_names(const vw_state *s, char *buf, size_t n);
void vw_describe_item_sites(const ks_trace *tr, const vw_index *idx, uint32_t it, char *buf, size_t n);
/* One event as a line: "tap 2 read input[0, 0, 1, 3] = 7". */
void vw_describe_event(const ks_trace *tr, const ks_event *e, char *buf, size_t n);
void vw_describe_title(const vw_state *s, char *buf, size_t n);
/* "input (1, 2, 5, 5)  plane 1 of 2 = [0, 1]  values 1 .. 50" */
void vw_describe_panel(const vw_state *s, int panel, double lo, double hi, char *buf, size_t n);
/* The same, shortened to `cols` characters where it can be: without the mode and range
 * (the legend says them), then the follow state, then the shape. */
void vw_describe_panel_fit(const vw_state *s, int panel, double lo, double hi, int cols, char *buf, size_t n);
/* The plane a panel shows, "columns[0, :, :]" (vw_describe_panel_fit's shortest but for a
 * tensor of one plane, whose name alone says it). */
void vw_describe_panel_where(const vw_state *s, int panel, char *where, size_t n);
/* Position, order, unit, playback, mode, index progress (permille < 1000: building),
 * value under the pointer and the last message. */
void vw_describe_status(const vw_state *s, int permille, char *buf, size_t n);
/* The same in at most `cols` characters on a slide (cols <= 0, or the live viewer: the
 * whole line): the slide's keys (shortened where they do not fit), then warnings, the
 * message, the value under the pointer, the event's place, the order, the unit, the
 * playback and the modes, each where it still fits. */
void vw_describe_status_fit(const vw_state *s, int permille, int cols, char *buf, size_t n);
/* The slide being shown, wrapped at `cols` characters into at most max_lines lines:
 * its title, run line, narration, table, question and (once revealed) answer. The keys
 * ("slide 3 of 12   PageDown next ...") lead the status line (vw_describe_story_keys). */
void vw_describe_story(const vw_state *s, int cols, vw_lines *out, int max_lines);
void vw_describe_story_keys(const vw_state *s, char *buf, size_t n);
/* The keys, shorter (`shorter`: "slide 3/12  PgDn next  PgUp back  A answer  H keys"). */
void vw_describe_story_keys_fit(const vw_state *s, int shorter, char *buf, size_t n);
/* The lines slide sl's band needs at cols columns: the question slide's (title, body,
 * question) or the answer slide's (title, question, answer and a line saying the text
 * was the slide before), whichever is more; and its narration's lines alone (the run
 * line and the text: everything between the title and the question). */
int vw_story_band_needed(const vw_slide *sl, int cols);
int vw_story_narration_lines(const vw_slide *sl, int cols);
/* The title line (vw_describe_title) wrapped at cols characters into out; returns the
 * number of lines (at least 1). */
int vw_describe_title_lines(const vw_state *s, int cols, vw_lines *out);
/* The most lines any of the n slides' bands needs at cols characters (vw_story_band_needed). */
int vw_story_lines_needed(const vw_slide *slides, int n, int cols);
/* A value as slides and lessons print it: in full when it is exact there, a whole number
 * (20), a binary fraction whose decimal expansion is short (34.46875, 0.03125: at most 9
 * significant digits) or a float whose shortest text reads back as itself and has at most
 * KS_EXACT_DIGITS digits (0.1); otherwise rounded to 4 significant digits (0.7365 for
 * 0.73645231), which the caller marks as rounded ("about", "~"). Returns 1 when the text
 * is exact, 0 when it is rounded. */
int vw_value_text(char *buf, size_t n, double v);
/* A heatmap cell's number: exact values in full (34.46875 beside 26.375), a rounded one
 * marked "~" (issue 38 D9); `narrow`: an exact value longer than its rounded form is
 * rounded and marked too, for cells too small for the full text. */
void vw_cell_text(char *buf, size_t n, double v, int narrow);
/* Text wrapped at cols characters (at spaces; '\n' breaks), each line added with `style`. */
void vw_wrap(vw_lines *out, int max_lines, int style, const char *text, int cols);

/* The key help, NULL-terminated. */
const char *const *vw_help_lines(void);

/* Whether needle stands in text as a whole token: not part of a longer number or word
 * ("18", "0.75" and "8x8" hold no 8; "-8" holds none either unless word; a range's
 * ends do: "4..7" holds 4 and 7); word: compared
 * without case (a choice's words). What a drawing or a narration gives away is searched
 * this way (lessons' --check). */
int vw_text_has_token(const char *text, const char *needle, int word);

#endif
