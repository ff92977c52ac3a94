/* The slide rules of kscope lesson --check (vw_audit_rules, vw_audit_answer_in_text)
 * on frames' records built by hand: each rule fails a constructed bad slide and passes
 * the same slide made good (issue 38: the defects a teacher's re-trial found that the
 * check had passed). The expectations are written out here (13 px at 768 rows, the
 * messages' words), not taken from the code under test. */
#include <string.h>

#include "../viewer/vw_audit.h"
#include "../viewer/vw_describe.h"
#include "../viewer/vw_font.h"
#include "test_util.h"

static int said;
static char last[600];

static void note(void *ctx, const char *msg)
{
    (void)ctx;
    said++;
    if (getenv("KS_AUDIT_SAY")) fprintf(stderr, "%s\n", msg);
    snprintf(last, sizeof last, "%s", msg);
}

static vw_record rec;
static vw_slide sl;

/* A w x h frame with two heatmaps of 20 px cells from (100, 100) and (600, 100), each
 * 60 % of the height, nothing on them: a slide that keeps every rule. */
static void frame(int w, int h)
{
    memset(&rec, 0, sizeof rec);
    memset(&sl, 0, sizeof sl);
    rec.w = w, rec.h = h, rec.text_px = 30 * w / 1920;
    rec.focus_panel = -1;
    for (int p = 0; p < 2; ++p) {
        vw_rec_panel *rp = &rec.panel[p];
        rp->tensor = p;
        rp->rect = (vw_rect){.x = 100 + 500 * p, .y = 60, .w = 400, .h = h * 60 / 100};
        rp->map = rp->rect;
        rp->cell = 20;
        rp->ox = rp->rect.x, rp->oy = rp->rect.y;
    }
}

static int rules(int reveal)
{
    said = 0, last[0] = 0;
    return vw_audit_rules(&sl, reveal, &rec, note, NULL);
}

/* cell (y, x) of panel p prints text, as the drawing records it (centred, 12 x 14 px) */
static void value(int p, int y, int x, const char *text)
{
    vw_rec_panel *rp = &rec.panel[p];
    rp->values = 1, rp->value_px = 18; /* legible at every size */
    rp->value[rp->nvalues].y = y, rp->value[rp->nvalues].x = x;
    snprintf(rp->value[rp->nvalues].text, sizeof rp->value[0].text, "%s", text);
    rp->value[rp->nvalues++].box =
        (vw_rect){.x = (int)rp->ox + 20 * x + 4, .y = (int)rp->oy + 20 * y + 3, .w = 12, .h = 14};
}

START_TEST(a_good_slide_keeps_every_rule)
{
    frame(1024, 768);
    ck_assert_int_eq(rules(0), 0);
    ck_assert_int_eq(rules(1), 0);
}
END_TEST

/* D1: 02 step 2's and 11 step 6's cells printed 10 px values at 1024x768; at least 18 px
 * at 1080 rows, 16 at 960, 13 at 768 */
START_TEST(values_and_labels_below_a_legible_size_fail)
{
    static const int sizes[3][3] = {{1920, 1080, 18}, {1280, 960, 16}, {1024, 768, 13}};
    for (int z = 0; z < 3; ++z) {
        frame(sizes[z][0], sizes[z][1]);
        value(1, 0, 0, "7");
        rec.panel[1].value_px = sizes[z][2] - 1;
        ck_assert_int_eq(rules(0), 1);
        ck_assert_ptr_nonnull(strstr(last, "prints its values at"));
        rec.panel[1].value_px = sizes[z][2];
        ck_assert_int_eq(rules(0), 0);
        rec.nlabels = 1;
        rec.labels[0] =
            (vw_rec_label){.panel = 0, .box = {.x = 300, .y = 300, .w = 40, .h = 20}, .px = sizes[z][2] - 1};
        snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "0.25");
        ck_assert_int_eq(rules(0), 1);
        rec.labels[0].px = sizes[z][2];
        ck_assert_int_eq(rules(0), 0);
    }
}
END_TEST

/* D12 #26 (tenth re-trial): 06 s3-s5's weights and s8's corner 0s printed at the least
 * legible size, digits 11 px tall at 1280x960 and 9 at 1024x768, and passed; a sample's
 * corner weight prints a size up: 22 px at 1080 rows, 20 at 960, 16 at 768 (the text's
 * own there), a clamp's words too (14 s6's "w=1, clamped" printed at the least legible
 * size at 1280x960 and 1024x768); a note may take the least legible size */
START_TEST(a_corner_weight_at_the_least_legible_size_fails)
{
    static const int sizes[3][4] = {{1920, 1080, 18, 22}, {1280, 960, 16, 20}, {1024, 768, 13, 16}};
    for (int z = 0; z < 3; ++z) {
        frame(sizes[z][0], sizes[z][1]);
        rec.nlabels = 1;
        rec.labels[0] = (vw_rec_label){.panel = 0,
                                       .kind = VW_LABEL_WEIGHT,
                                       .box = {.x = 300, .y = 300, .w = 90, .h = 24},
                                       .px = sizes[z][2]};
        snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "0.65625");
        ck_assert_int_eq(rules(0), 1);
        ck_assert_ptr_nonnull(strstr(last, "corner's label '0.65625'"));
        rec.labels[0].px = sizes[z][3] - 1;
        ck_assert_int_eq(rules(0), 1);
        rec.labels[0].px = sizes[z][3];
        ck_assert_int_eq(rules(0), 0);
        rec.labels[0].px = sizes[z][2];
        rec.labels[0].kind = VW_LABEL_CLAMP;
        snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "w=1, clamped");
        ck_assert_int_eq(rules(0), 1);
        ck_assert_ptr_nonnull(strstr(last, "corner's label 'w=1, clamped'"));
        rec.labels[0].px = sizes[z][3];
        ck_assert_int_eq(rules(0), 0);
        rec.labels[0].px = sizes[z][2];
        rec.labels[0].kind = VW_LABEL_NOTE;
        ck_assert_int_eq(rules(0), 0);
    }
}
END_TEST

/* D12 (twelfth re-trial N22): 05 s2 at 1024x768 drew "0 ~21.67 values", no bar, and 14
 * s7's output at 1280x960 a 16 px one: a legend's colour bar is 4 of its characters wide
 * at least; a panel that draws no legend, or hides its values, is not measured */
START_TEST(a_colour_bar_under_four_characters_fails)
{
    frame(1280, 960);
    rec.panel[1].legend_adv = 12;
    rec.panel[1].legend_bar = 1 + 16;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "right panel's colour bar is 16 px"));
    rec.panel[1].legend_bar = 1; /* the ends alone, no bar */
    ck_assert_int_eq(rules(0), 1);
    rec.panel[1].legend_bar = 1 + 47;
    ck_assert_int_eq(rules(0), 1);
    rec.panel[1].legend_bar = 1 + 48;
    ck_assert_int_eq(rules(0), 0);
    rec.panel[1].legend_adv = 9; /* a smaller font's ends: 4 of its characters */
    rec.panel[1].legend_bar = 1 + 36;
    ck_assert_int_eq(rules(0), 0);
    rec.panel[1].legend_bar = 1 + 35;
    ck_assert_int_eq(rules(0), 1);
    rec.panel[1].hidden = 1;
    ck_assert_int_eq(rules(0), 0);
    rec.panel[1].hidden = 0, rec.panel[1].legend_bar = 0;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D2: 05 step 10 and 07 steps 4-5 drew the asked weight as a label */
START_TEST(an_answer_drawn_as_a_label_fails)
{
    frame(1920, 1080);
    snprintf(sl.asked, sizeof sl.asked, "0.375");
    rec.nlabels = 1;
    rec.labels[0] = (vw_rec_label){.panel = 0, .box = {.x = 300, .y = 300, .w = 60, .h = 24}, .px = 18};
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "0.375");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "as the label '0.375'"));
    ck_assert_int_eq(rules(1), 0); /* the answer slide may */
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "0.625");
    ck_assert_int_eq(rules(0), 0);
    /* a whole-number answer: a tap's label 4 is chance */
    snprintf(sl.asked, sizeof sl.asked, "4");
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "4");
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D2: 02 step 5 printed the padding read's 0 in the events panel beside "what does
 * im2col write for a tap outside the image?" (a choice, "zero") */
START_TEST(an_answer_in_the_events_panel_fails)
{
    frame(1920, 1080);
    snprintf(sl.asked, sizeof sl.asked, "zero");
    sl.asked_words = 1;
    snprintf(sl.asked_digit, sizeof sl.asked_digit, "0");
    rec.decomp_lines = 3;
    snprintf(rec.decomp_text[0], sizeof rec.decomp_text[0], "work item 0: block 0, thread 0");
    snprintf(rec.decomp_text[1], sizeof rec.decomp_text[1], "  tap 4 read  input[0, 0, 0, 0] = 1");
    snprintf(rec.decomp_text[2], sizeof rec.decomp_text[2], "> tap 0 read  input[0, 0, -1, -1] = 0");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "decomposition and events panel"));
    /* the 0s of block 0 and of another event's value are chance */
    snprintf(rec.decomp_text[2], sizeof rec.decomp_text[2], "> tap 4 read  input[0, 0, 0, 0] = 1");
    snprintf(rec.decomp_text[1], sizeof rec.decomp_text[1], "  tap 0 read  input[0, 0, -1, -1] = 0");
    ck_assert_int_eq(rules(0), 0);
    /* a fraction anywhere in the panel */
    memset(&sl, 0, sizeof sl);
    snprintf(sl.asked, sizeof sl.asked, "9.75");
    snprintf(rec.decomp_text[1], sizeof rec.decomp_text[1], "  tap 2 sample input at (y 1.5, x 2) = 9.75");
    ck_assert_int_eq(rules(0), 1);
    rec.decomp_hidden = 1; /* covered until the answer */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D2 (fifth re-trial): 05 step 10's events list went on past the focused event to the
 * asked tap's "sample ... = 0"; a question slide lists none of the item's later events,
 * its answer slide may */
START_TEST(a_later_event_in_a_question_slides_list_fails)
{
    static char asks[] = "Question: What value does tap 6 of work item 22 sample?";
    frame(1920, 1080);
    sl.question = asks;
    rec.decomp_lines = 2, rec.decomp_focus = 1;
    snprintf(rec.decomp_text[0], sizeof rec.decomp_text[0], "> tap 6 read  offset[0, 12, 4, 2] = 0.5");
    snprintf(rec.decomp_text[1], sizeof rec.decomp_text[1], "  tap 6 sample input plane 0 at (y 5.5, x 1.25) = 0");
    rec.decomp_later = 1;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "after the focused one"));
    ck_assert_int_eq(rules(1), 0);                /* the answer slide */
    sl.asked_item = 1 + 22, rec.decomp_item = 22; /* the asked item by its number */
    ck_assert_int_eq(rules(0), 1);
    sl.asked_item = 1 + 83; /* a question on another item (13 s3: what one thread does) */
    ck_assert_int_eq(rules(0), 0);
    sl.asked_item = 0;
    sl.question = NULL; /* a slide that asks nothing */
    ck_assert_int_eq(rules(0), 0);
    sl.question = asks;
    rec.decomp_later = 0, rec.decomp_lines = 1;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D12 (fifth re-trial): 03 s2 drew col2im's output by reads, which the kernel never
 * makes: every cell 0, a blank picture (07 s10's patches by writes too) */
START_TEST(a_count_of_zero_everywhere_fails)
{
    frame(1920, 1080);
    rec.panel[1].mode = VW_MODE_READS;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel counts reads and every cell is 0"));
    ck_assert_int_eq(rules(1), 1); /* its answer slide too */
    rec.panel[1].mode = VW_MODE_WRITES;
    ck_assert_int_eq(rules(0), 1);
    rec.panel[1].hi = 1; /* one cell counted: a picture */
    ck_assert_int_eq(rules(0), 0);
    rec.panel[1].hi = 0, rec.panel[1].mode = VW_MODE_VALUES; /* values that are all 0 are what they are */
    ck_assert_int_eq(rules(0), 0);
    rec.panel[1].mode = VW_MODE_READS, rec.panel[1].hidden = 1; /* covered until the answer */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D7: literal text above the prompt (a run line, a table) holds the answer */
START_TEST(an_answer_in_the_band_above_the_question_fails)
{
    frame(1920, 1080);
    snprintf(sl.asked, sizeof sl.asked, "3, 2");
    rec.band_lines = 3;
    snprintf(rec.band_text[0], sizeof rec.band_text[0], "Step 2 of 9: a tap");
    snprintf(rec.band_text[1], sizeof rec.band_text[1], "  thread 6 reads (3, 2) first");
    snprintf(rec.band_text[2], sizeof rec.band_text[2], "Question: which cell does it read?");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "above the question"));
    snprintf(rec.band_text[1], sizeof rec.band_text[1], "  thread 6 reads (3, 1) first");
    ck_assert_int_eq(rules(0), 0);
    /* a choice's own line holds its words: not above the question */
    memset(&sl, 0, sizeof sl);
    snprintf(sl.asked, sizeof sl.asked, "the grid-stride loop");
    sl.asked_words = 1;
    snprintf(rec.band_text[2], sizeof rec.band_text[2], "Question: what is missing?");
    snprintf(rec.band_text[1], sizeof rec.band_text[1], "Step 8 of 9: why the block cap");
    rec.band_lines = 4;
    snprintf(rec.band_text[3], sizeof rec.band_text[3], "  2) the grid-stride loop");
    ck_assert_int_eq(rules(0), 0);
    snprintf(rec.band_text[1], sizeof rec.band_text[1], "The Grid-Stride Loop fixes it.");
    ck_assert_int_eq(rules(0), 1);
}
END_TEST

/* D3: 06 step 7's and 14 step 6's sample dots sat on the focused cells' numbers */
START_TEST(a_marker_over_a_printed_number_fails)
{
    frame(1920, 1080);
    value(0, 1, 1, "36");
    rec.panel[0].nfocus = 1;
    rec.panel[0].focus[0] = (vw_rect){.x = 120, .y = 80, .w = 20, .h = 20};
    rec.ndots = 1;
    rec.dots[0] = (vw_rec_dot){.panel = 0, .box = {.x = 128, .y = 88, .w = 5, .h = 5}};
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "a marker covers the number 36"));
    rec.dots[0].box.x = 150; /* in the next cell, clear of the number */
    ck_assert_int_eq(rules(0), 0);
    /* a ring round the number, its middle clear */
    rec.dots[0].box = (vw_rect){.x = 120, .y = 80, .w = 21, .h = 21};
    rec.dots[0].clear = (vw_rect){.x = 122, .y = 82, .w = 17, .h = 17};
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D2: the slide before a question (07 step 5 before step 6) draws its answer: in any
 * cell there too, not only the ones the step names */
START_TEST(the_slide_before_a_question_drawing_its_answer_fails)
{
    frame(1920, 1080);
    snprintf(sl.asked, sizeof sl.asked, "0.375");
    value(0, 2, 3, "0.375");
    said = 0;
    ck_assert_int_eq(vw_audit_answer_in_text(&sl, &rec, "slide before its question", note, NULL), 1);
    ck_assert_ptr_nonnull(strstr(last, "cell (2, 3)"));
    rec.panel[0].hidden = 1;
    ck_assert_int_eq(vw_audit_answer_in_text(&sl, &rec, "slide before its question", note, NULL), 0);
    rec.panel[0].hidden = 0;
    snprintf(rec.panel[0].value[0].text, sizeof rec.panel[0].value[0].text, "0.625");
    ck_assert_int_eq(vw_audit_answer_in_text(&sl, &rec, "slide before its question", note, NULL), 0);
}
END_TEST

/* D8: 05 step 6 covered the input its weights are drawn on until the answer */
START_TEST(a_question_slide_hiding_the_steps_own_panel_fails)
{
    frame(1280, 960);
    rec.focus_panel = 0;
    rec.panel[0].hidden = 1;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "hides the left panel"));
    ck_assert_int_eq(rules(1), 0);                    /* the answer shows it */
    rec.panel[0].hidden = 0, rec.panel[1].hidden = 1; /* the other panel: a picture of the answer */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D3: 06 steps 4-5's leaders ran across the sample's other corners, which the rule let
 * pass; a leader may cross only the cell it starts from */
START_TEST(a_leader_across_another_named_corner_fails)
{
    frame(1920, 1080);
    vw_rec_panel *rp = &rec.panel[0];
    rp->nfocus = 2;
    rp->focus[0] = (vw_rect){.x = 100, .y = 100, .w = 20, .h = 20}; /* its corner */
    rp->focus[1] = (vw_rect){.x = 120, .y = 100, .w = 20, .h = 20}; /* the sample's other corner */
    rec.nlabels = 1;
    vw_rec_label *l = &rec.labels[0];
    *l = (vw_rec_label){.panel = 0, .ax = 110, .ay = 110, .leader = 1, .npts = 2, .px = 18};
    l->box = (vw_rect){.x = 200, .y = 104, .w = 50, .h = 12};
    l->pts[0][0] = 110, l->pts[0][1] = 110, l->pts[1][0] = 200, l->pts[1][1] = 110;
    l->npass = 1, l->pass[0] = rp->focus[1];
    snprintf(l->text, sizeof l->text, "0.375");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "crosses a cell the step names"));
    l->pts[1][1] = 140, l->box.y = 134; /* down and away, under the row */
    l->pts[0][1] = 119;
    l->pts[1][0] = 110;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D1 (13 s1's answer): a 256-word tile with no shape drew as 1 x 256 cells of 4-9 px, a
 * hairline across the panel; a one-row plane of cells a room sees passes. */
START_TEST(a_one_row_hairline_strip_fails)
{
    frame(1920, 1080);
    vw_rec_panel *rp = &rec.panel[1];
    rp->rows = 1, rp->cols = 256, rp->cell = 4;
    rp->extent = (vw_rect){.x = 600, .y = 300, .w = 1024, .h = 4};
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel draws a 1 x 256 strip 4 px tall, a hairline"));
    rp->cols = 16, rp->cell = 24; /* a row of 16 words a room reads: no hairline */
    ck_assert_int_eq(rules(0), 0);
    rp->cell = 17; /* 17 px at 1080 rows: under the 18 px a room reads */
    ck_assert_int_eq(rules(0), 1);
    frame(1024, 768);
    rec.panel[0].rows = 1, rec.panel[0].cols = 16, rec.panel[0].cell = 13; /* 13 px at 768: legible */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D3 (06 s5): the weight 0.65625 of corner (1, 1) sat left of corner (1, 0), whose own
 * label sat below it: a label beside another labelled corner reads as that one's. */
START_TEST(a_label_beside_another_corner_fails)
{
    frame(1920, 1080);
    /* corners (1, 0) and (1, 1) of a sample: cells at x 100 and 120, y 120 */
    const vw_rect c10 = {.x = 100, .y = 120, .w = 20, .h = 20}, c11 = {.x = 120, .y = 120, .w = 20, .h = 20};
    rec.nlabels = 2;
    rec.labels[0] = (vw_rec_label){.panel = 0, .ax = 110, .ay = 130, .cell = c10, .px = 18};
    rec.labels[0].box = (vw_rect){.x = 90, .y = 142, .w = 40, .h = 14}; /* under (1, 0) */
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "0.09375");
    rec.labels[1] = (vw_rec_label){.panel = 0, .ax = 130, .ay = 130, .cell = c11, .px = 18};
    rec.labels[1].box = (vw_rect){.x = 50, .y = 123, .w = 48, .h = 14}; /* left of (1, 0): 2 px off it */
    snprintf(rec.labels[1].text, sizeof rec.labels[1].text, "0.65625");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the label '0.65625' sits nearer the cell of '0.09375' than its own"));
    rec.labels[1].box = (vw_rect){.x = 142, .y = 123, .w = 48, .h = 14}; /* right of (1, 1) */
    ck_assert_int_eq(rules(0), 0);
    /* as far from both (a label between them, above the row) reads as either: no fail */
    rec.labels[1].box = (vw_rect){.x = 100, .y = 100, .w = 40, .h = 14};
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D3 (seventh re-trial, 08 s4 and s17): a tap label "1" of site 6 sat inside site 4's
 * cell, which prints 4: the cell read "4 1". A number label inside a printed cell not
 * its own fails; in its own cell, beside the cells, or a figure's words (a region's
 * name) pass. */
START_TEST(a_number_label_inside_another_printed_cell_fails)
{
    frame(1920, 1080);
    value(0, 0, 0, "4");
    value(0, 0, 1, "6");
    /* cell (0, 0) spans x 100..119, y 60..79; the label names cell (0, 1) at x 120 */
    const vw_rect own = {.x = 120, .y = 60, .w = 20, .h = 20};
    rec.nlabels = 1;
    rec.labels[0] = (vw_rec_label){.panel = 0, .kind = VW_LABEL_TAP, .ax = 126, .ay = 66, .cell = own, .px = 18};
    rec.labels[0].box = (vw_rect){.x = 104, .y = 64, .w = 14, .h = 14}; /* ink 107..114: in cell (0, 0) */
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "1");
    rec.panel[0].value[0].box = (vw_rect){.x = 100, .y = 60, .w = 3, .h = 3}; /* the 4 clear of the label */
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the label '1' lies inside the left panel's cell (0, 0), which prints 4"));
    /* in its own cell (0, 1), off its number: it names that one */
    rec.panel[0].value[1].box = (vw_rect){.x = 120, .y = 60, .w = 3, .h = 3};
    rec.labels[0].box = (vw_rect){.x = 124, .y = 64, .w = 14, .h = 14};
    ck_assert_int_eq(rules(0), 0);
    /* beside the cells, below row 0: no cell of theirs */
    rec.labels[0].box = (vw_rect){.x = 104, .y = 84, .w = 14, .h = 14};
    ck_assert_int_eq(rules(0), 0);
    /* a figure's words over the cell name a region, not a value */
    rec.labels[0].box = (vw_rect){.x = 104, .y = 64, .w = 14, .h = 14};
    rec.labels[0].kind = VW_LABEL_NOTE, rec.labels[0].cell = (vw_rect){0};
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "wave 1");
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D8 (seventh re-trial, 09 s7): the step's transpose drawn as input by reads and output
 * by writes, every cell 1: two pictures with nothing to point at. The panel the step is
 * about, or both on a step about neither, fails; a count the narration says is the point
 * ("read 16 times") or cells that differ pass. */
START_TEST(a_panel_of_one_count_everywhere_fails)
{
    frame(1920, 1080);
    for (int p = 0; p < 2; ++p) {
        rec.panel[p].mode = p ? VW_MODE_WRITES : VW_MODE_READS, rec.panel[p].lo = 0, rec.panel[p].hi = 1;
        for (int x = 0; x < 3; ++x) value(p, 0, x, "1");
    }
    ck_assert_int_eq(rules(0), 2);
    ck_assert_ptr_nonnull(strstr(last, "the right panel counts writes and every cell prints 1"));
    /* the output by values: the input alone is uniform, and the step is about neither */
    rec.panel[1].mode = VW_MODE_VALUES;
    ck_assert_int_eq(rules(0), 0);
    /* the input the step is about (its focused read's panel): it fails on its own */
    rec.focus_panel = 0;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the left panel counts reads and every cell prints 1"));
    /* unless the narration says that count is the point */
    rec.band_lines = 2;
    snprintf(rec.band_text[0], sizeof rec.band_text[0], "Colours are read counts: every input");
    snprintf(rec.band_text[1], sizeof rec.band_text[1], "pixel is read 1 times, by one thread.");
    ck_assert_int_eq(rules(0), 0);
    rec.band_lines = 0;
    snprintf(rec.panel[0].value[2].text, sizeof rec.panel[0].value[2].text, "2");
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D9 (seventh re-trial, 05's columns): the header read "values 0 .. 21.67" for a range
 * ending at 21.666..., where the legend read "~21.67". A header or legend printing an
 * end rounded without "~" fails; exact ends, marked ones and the header's other numbers
 * pass. */
START_TEST(a_rounded_range_without_a_tilde_fails)
{
    char t[48];
    const double hi = 65.0 / 3;
    ck_assert(vw_text_rounds_unmarked("values 0 .. 21.67", 0, hi, t, sizeof t));
    ck_assert_str_eq(t, "21.67");
    ck_assert(!vw_text_rounds_unmarked("values 0 .. ~21.67", 0, hi, t, sizeof t));
    ck_assert(!vw_text_rounds_unmarked("values 0 .. \xe2\x89\x88"
                                       "21.67",
                                       0, hi, t, sizeof t)); /* the UTF-8 of ≈ */
    ck_assert(!vw_text_rounds_unmarked("values 0 .. 21.5", 0, 21.5, t, sizeof t));
    ck_assert(vw_text_rounds_unmarked("-0.33", -1.0 / 3, 1, t, sizeof t));
    frame(1920, 1080);
    rec.panel[1].lo = 0, rec.panel[1].hi = hi;
    snprintf(rec.panel[1].head, sizeof rec.panel[1].head, "columns (9, 25)  plane 0 of 1  values 0 .. 21.67");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel's header prints 21.67, a rounded end of its range, without ~"));
    snprintf(rec.panel[1].head, sizeof rec.panel[1].head, "columns (9, 25)  plane 0 of 1  values 0 .. ~21.67");
    ck_assert_int_eq(rules(0), 0);
    snprintf(rec.panel[1].ends[1], sizeof rec.panel[1].ends[1], "21.667");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel's legend prints 21.667"));
    /* the header's plane and shape are no ends: 0.4375 .. 1 over "plane 0 of 1" */
    snprintf(rec.panel[1].ends[1], sizeof rec.panel[1].ends[1], "~21.67");
    rec.panel[1].lo = 0.4375, rec.panel[1].hi = 1;
    snprintf(rec.panel[1].head, sizeof rec.panel[1].head, "mask (1, 9, 5, 5)  plane 0 of 1  values 0.4375 .. 1");
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D3 (eighth re-trial, 08 s8-s9): in_sites by visits printed 0 in every cell, and the
 * ring's dim row numbers were drawn over them ("0" over "2"). A row or column number
 * over a printed number fails; one in a cell that prints none passes. */
START_TEST(a_row_number_over_a_printed_number_fails)
{
    frame(1920, 1080);
    value(0, 1, 0, "0"); /* its box: x 104..115, y 83..96 */
    rec.panel[0].axes = 1;
    rec.panel[0].axes_box[0] = (vw_rect){.x = 106, .y = 84, .w = 8, .h = 12};
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "a row or column number of the left panel lies over the number 0"));
    rec.panel[0].axes_box[0] = (vw_rect){.x = 106, .y = 64, .w = 8, .h = 12}; /* row 0's cell: no number */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D3 (11 s9): the "2nd" label's leader ran up through the "1st" label's text. */
START_TEST(a_leader_across_another_label_fails)
{
    frame(1920, 1080);
    rec.nlabels = 2;
    rec.labels[0] = (vw_rec_label){.panel = 0, .ax = 170, .ay = 110, .px = 18, .leader = 1, .npts = 2};
    rec.labels[0].box = (vw_rect){.x = 100, .y = 70, .w = 200, .h = 20};
    rec.labels[0].pts[0][0] = 170, rec.labels[0].pts[0][1] = 110, rec.labels[0].pts[1][0] = 170;
    rec.labels[0].pts[1][1] = 89;
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "1st: thread 21 writes -1 over 2");
    rec.labels[1] = (vw_rec_label){.panel = 0, .ax = 170, .ay = 130, .px = 18, .leader = 1, .npts = 2};
    rec.labels[1].box = (vw_rect){.x = 100, .y = 40, .w = 200, .h = 20};
    rec.labels[1].pts[0][0] = 170, rec.labels[1].pts[0][1] = 130, rec.labels[1].pts[1][0] = 170;
    rec.labels[1].pts[1][1] = 59; /* straight up, through the first label */
    snprintf(rec.labels[1].text, sizeof rec.labels[1].text, "2nd: thread 22 reads -1");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the leader line of label '2nd: thread 22 reads -1' crosses the label '1st"));
    /* round it: right along the row line, up past the first label's end, into the second */
    const int route[4][2] = {{170, 130}, {320, 130}, {320, 50}, {299, 50}};
    memcpy(rec.labels[1].pts, route, sizeof route);
    rec.labels[1].npts = 4;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D8 N20: 11 s9 at 1280x960 and 1024x768 drew the race's red slot without either label:
 * a race mark names its storing and its reading thread, in any form */
START_TEST(a_race_without_its_threads_named_fails)
{
    frame(1024, 768);
    rec.nmarks = 1;
    rec.marks[0] =
        (vw_rec_mark){.panel = 0, .kind = VW_MARK_RACE, .which = 22, .pass = 21, .y0 = 1, .x0 = 5, .y1 = 1, .x1 = 5};
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(
        strstr(last, "the race on the left panel's slot (1, 5) does not name the thread that stores"));
    rec.nlabels = 1;
    rec.labels[0] = (vw_rec_label){.panel = 0, .ax = 210, .ay = 120, .px = 18};
    rec.labels[0].box = (vw_rect){.x = 110, .y = 62, .w = 200, .h = 20};
    snprintf(rec.labels[0].text, sizeof rec.labels[0].text, "1st: 21 writes -1");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "does not name the thread that reads after it (no label '22 reads')"));
    /* on the other panel it names nothing here */
    rec.nlabels = 2;
    rec.labels[1] = (vw_rec_label){.panel = 1, .ax = 710, .ay = 120, .px = 18};
    rec.labels[1].box = (vw_rect){.x = 610, .y = 62, .w = 200, .h = 20};
    snprintf(rec.labels[1].text, sizeof rec.labels[1].text, "2nd: 22 reads -1");
    ck_assert_int_eq(rules(0), 1);
    rec.labels[1].panel = 0, rec.labels[1].ax = 210;
    rec.labels[1].box = (vw_rect){.x = 110, .y = 84, .w = 200, .h = 20};
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D1: 01 step 8's narration ran 14 lines in the column beside the pictures at 1024x768,
 * 5 across the frame; the rule counted the latter. It counts the lines as drawn. */
START_TEST(narration_over_five_lines_as_the_band_wraps_it_fails)
{
    frame(1024, 768);
    rec.band_body = 6;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the narration takes 6 lines at 1024x768"));
    rec.band_body = 5;
    ck_assert_int_eq(rules(0), 0);
    frame(1920, 1080); /* the rule is the 1024x768 frame's */
    rec.band_body = 6;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* a slide's narration as the band wraps it: its run line counts with the text (issue 38
 * D1: everything in the band between the title and the question; 01 s9's thread table
 * under the text was left out of the count and took 16 lines at 1024x768) */
START_TEST(narration_lines_count_the_run_line_and_the_text)
{
    vw_slide s = {0};
    s.text = "one two three";
    ck_assert_int_eq(vw_story_narration_lines(&s, 40), 1);
    s.pre = "[run 'b': another run]";
    ck_assert_int_eq(vw_story_narration_lines(&s, 40), 2);
    /* at 8 columns: "[run", "'b':", "another", "run"; "one two", "three" */
    ck_assert_int_eq(vw_story_narration_lines(&s, 8), 4 + 2);
    /* lines the text breaks itself count one each */
    s.text = "a\nb\nc";
    ck_assert_int_eq(vw_story_narration_lines(&s, 40), 1 + 3);
}
END_TEST

/* issue 38: the status line was cut on every slide at the three sizes */
START_TEST(a_cut_status_line_fails)
{
    frame(1024, 768);
    rec.status_cut = 1;
    snprintf(rec.status_text, sizeof rec.status_text, "slide 3 of 12   PageDown next   PageUp back");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the status line is cut"));
    rec.status_cut = 0;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* issue 38: captions, titles and lines cut at their width or a panel's edge (08's table
 * captions, 01's grid title at 1024x768, 09 step 8's grey line) passed every rule */
START_TEST(a_cut_text_fails)
{
    frame(1024, 768);
    rec.cuts.n = 1;
    rec.cuts.cut[0].why = VW_CUT_WIDTH;
    snprintf(rec.cuts.cut[0].text, sizeof rec.cuts.cut[0].text, "rows 2-21 of 32");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the text 'rows 2-21 of 32'"));
    ck_assert_ptr_nonnull(strstr(last, "is cut at its width"));
    rec.cuts.n = 0;
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* issue 38: 11 s9's last row (and 08 s5's last column) showed as colour without numbers
 * where the map's edge cut them; a strip thinner than a number's line is the plane going
 * on, not a missing number */
START_TEST(a_cut_row_without_its_numbers_fails)
{
    frame(1920, 1080);
    vw_rec_panel *rp = &rec.panel[0];
    rp->map.h = 156; /* 7 rows of 20 px and 16 px of the 8th: a 14 px number fits there */
    rp->extent = (vw_rect){.x = 100, .y = 60, .w = 200, .h = 156};
    for (int x = 0; x < 10; ++x) value(0, 6, x, "5");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "shows a row its map's edge cuts without its numbers"));
    value(0, 7, 3, "5"); /* printed in what shows of it */
    ck_assert_int_eq(rules(0), 0);
    rp->nvalues = 10;
    rp->map.h = rp->extent.h = 150; /* 10 px of the 8th row: too thin for a number */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* issue 38 D4: 10 s11's panel worked "j = floor(x) + jj - R" out with no line for jj; a
 * line the narration names stands for itself */
START_TEST(a_field_worked_out_of_a_missing_line_fails)
{
    frame(1920, 1080);
    rec.decomp.h = 200, rec.decomp_focus = 1;
    snprintf(rec.work_fields, sizeof rec.work_fields, " b m jj ii x j ");
    snprintf(rec.fields, sizeof rec.fields, " b m ii x j ");
    static const char *const drawn[] = {
        "work item 1: block 0, thread 1", "  b  = index / 64 = 0", "  x  = coords[b, m, 0] = ~10.24",
        "  j  = floor(x) + jj - R = floor(~10.24) + 0 - 1 = 9", "  tap 0 read  input[0, 0, 11, 9] = 186"};
    rec.decomp_lines = 5;
    for (int i = 0; i < 5; ++i) snprintf(rec.decomp_text[i], sizeof rec.decomp_text[0], "%s", drawn[i]);
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "works \"j  = floor(x) + jj - R"));
    ck_assert_ptr_nonnull(strstr(last, "out of jj without its line"));
    snprintf(sl.fields, sizeof sl.fields, " j "); /* the narration names j: it stays as it is */
    ck_assert_int_eq(rules(0), 0);
    sl.fields[0] = 0;
    snprintf(rec.fields, sizeof rec.fields, " b m jj ii x j "); /* jj's line drawn */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* vw_text records what it cuts: characters past its width, glyphs past the clip or the
 * frame; a text wholly outside the clip is not drawn, so not cut */
START_TEST(text_drawing_records_what_it_cuts)
{
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 400, 200, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    vw_font f;
    ck_assert_msg(vw_font_open(&f, r, 20) == 0, "%s", ks_error_message());
    vw_text_cuts cuts;
    memset(&cuts, 0, sizeof cuts);
    f.cuts = &cuts;
    const int adv = f.advance;
    vw_text(&f, r, 10, 10, 0xFFFFFF, 10 * adv, "ten chars!");  /* exactly its width */
    vw_text(&f, r, 10, 10, 0xFFFFFF, 0, "trailing blanks   "); /* no width: whole */
    ck_assert_int_eq(cuts.n, 0);
    vw_text(&f, r, 10, 40, 0xFFFFFF, 9 * adv, "ten chars!");
    ck_assert_int_eq(cuts.n, 1);
    ck_assert_int_eq(cuts.cut[0].why, VW_CUT_WIDTH);
    ck_assert_str_eq(cuts.cut[0].text, "ten chars!");
    const SDL_Rect clip = {.x = 0, .y = 0, .w = 100, .h = 100};
    SDL_RenderSetClipRect(r, &clip);
    vw_text(&f, r, 200, 10, 0xFFFFFF, 0, "outside"); /* not drawn at all */
    ck_assert_int_eq(cuts.n, 1);
    vw_text(&f, r, 100 - 3 * adv, 10, 0xFFFFFF, 0, "across the edge");
    ck_assert_int_eq(cuts.n, 2);
    ck_assert_int_eq(cuts.cut[1].why, VW_CUT_CLIP);
    SDL_RenderSetClipRect(r, NULL);
    vw_text(&f, r, 400 - 2 * adv, 100, 0xFFFFFF, 0, "past the frame");
    ck_assert_int_eq(cuts.n, 3);
    ck_assert_int_eq(cuts.cut[2].why, VW_CUT_FRAME);
    f.cuts = NULL; /* nowhere to record: drawn as before */
    vw_text(&f, r, 10, 40, 0xFFFFFF, 9 * adv, "ten chars!");
    ck_assert_int_eq(cuts.n, 3);
    vw_font_close(&f);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
}
END_TEST

/* D1 (ninth re-trial, 10 s14): a window of the columns that held the focused read and 3
 * of item 20's 9 reads, under "Item 20 makes 9 reads"; D12 (its 1024x768 slide): a read
 * out of the window outlined in the margin past the grid */
START_TEST(a_window_leaving_out_most_of_the_items_cells_fails)
{
    frame(1920, 1080);
    rec.focus_panel = 0;
    vw_rec_panel *rp = &rec.panel[0];
    rp->window = rp->window_named = 1;
    rp->item_cells = 9, rp->item_shown = 3;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the left panel shows 3 of the focused item's 9 cells"));
    rp->item_shown = 5; /* most of them in view */
    ck_assert_int_eq(rules(0), 0);
    rp->item_shown = 3, rec.focus_panel = 1, rp->window = 0; /* the panel beside the step's, whole */
    ck_assert_int_eq(rules(0), 0);
    /* N10 (tenth re-trial, 05 s8): a window of the panel beside the step's, zoomed to the
     * focused tap for its values, 3 of item 12's 9 writes under "9 column writes" */
    rp->window = 1, rp->tap_zoom = 1;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the left panel shows 3 of the focused item's 9 cells"));
    rec.focus_panel = 0; /* on the step's own panel too */
    ck_assert_int_eq(rules(0), 1);
    rec.focus_panel = 1, rp->covered = 1; /* the question covers it: its answer has the question's room */
    ck_assert_int_eq(rules(1), 0);
    rp->covered = rp->tap_zoom = 0, rp->item_shown = 9;
    rec.panel[1].marks_out = 1;
    ck_assert_int_eq(rules(1), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel draws 1 outline outside the cells in view"));
}
END_TEST

/* D12 (ninth re-trial): 02 s4 asked "which input cell ... (y, x)" over an input that
 * printed no row or column numbers to read the cell by */
START_TEST(a_yx_question_without_row_and_column_numbers_fails)
{
    frame(1024, 768);
    rec.panel[0].yx = 1;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the question asks (y, x) of the left panel, which prints no row and column"));
    rec.panel[0].axes = 12; /* its numbers round the plane */
    ck_assert_int_eq(rules(0), 0);
    rec.panel[0].axes = 0, rec.panel[0].hidden = 1; /* covered until the answer */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D2 N6 (tenth re-trial): 02 s1-s3's columns printed every padding entry as ? under a
 * colour bar "0 .. 70" whose 0 only those cells held, each ? on the 0 colour */
START_TEST(a_colour_bar_counting_what_the_slide_hides_fails)
{
    frame(1920, 1080);
    vw_rec_panel *rp = &rec.panel[1];
    snprintf(rp->ends[0], sizeof rp->ends[0], "0"), snprintf(rp->ends[1], sizeof rp->ends[1], "70");
    rp->hidden_cells = 120, rp->hidden_ends = 1;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel's colour bar 0 .. 70 reaches a value only its ? cells hold"));
    rp->hidden_ends = 0, rp->hidden_painted = 120;
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the right panel paints 120 of its 120 ? cells a value's colour"));
    rp->hidden_painted = 0; /* 1 .. 70, the ?s grey */
    ck_assert_int_eq(rules(0), 0);
    rp->hidden_ends = 1, rp->hidden = 1; /* covered until the answer: no bar drawn */
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

/* D9 (tenth re-trial, 06 s8): the narration's "samples at 7.09 and 8.03", rounded
 * without ~, over an events panel that prints 7.09375 and 8.03125 */
START_TEST(a_rounded_number_in_the_narration_without_a_tilde_fails)
{
    frame(1920, 1080);
    rec.band_lines = 1, rec.decomp_lines = 1;
    snprintf(rec.band_text[0], sizeof rec.band_text[0], "RoI 1's bin (1, 1) samples at 7.09 and 8.03, past H = 6.");
    snprintf(rec.decomp_text[0], sizeof rec.decomp_text[0],
             "  tap 0 sample input plane 0 at (y 7.09375, x 8.03125) = 0");
    ck_assert_int_eq(rules(0), 1);
    ck_assert_ptr_nonnull(strstr(last, "the narration prints 7.09, 7.09375 rounded"));
    snprintf(rec.band_text[0], sizeof rec.band_text[0], "RoI 1's bin (1, 1) samples at ~7.09 and ~8.03, past H = 6.");
    ck_assert_int_eq(rules(0), 0);
    /* in full, or a whole number beside the events' decimals ("H = 6"), is no rounding */
    snprintf(rec.band_text[0], sizeof rec.band_text[0], "samples at 7.09375 and 8.03125, past H = 7 and W = 8.");
    ck_assert_int_eq(rules(0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_audit");
    TCase *tc = tcase_create("view_audit");
    tcase_add_test(tc, a_good_slide_keeps_every_rule);
    tcase_add_test(tc, values_and_labels_below_a_legible_size_fail);
    tcase_add_test(tc, a_corner_weight_at_the_least_legible_size_fails);
    tcase_add_test(tc, a_colour_bar_under_four_characters_fails);
    tcase_add_test(tc, an_answer_drawn_as_a_label_fails);
    tcase_add_test(tc, an_answer_in_the_events_panel_fails);
    tcase_add_test(tc, a_later_event_in_a_question_slides_list_fails);
    tcase_add_test(tc, a_count_of_zero_everywhere_fails);
    tcase_add_test(tc, an_answer_in_the_band_above_the_question_fails);
    tcase_add_test(tc, a_marker_over_a_printed_number_fails);
    tcase_add_test(tc, the_slide_before_a_question_drawing_its_answer_fails);
    tcase_add_test(tc, a_question_slide_hiding_the_steps_own_panel_fails);
    tcase_add_test(tc, a_leader_across_another_named_corner_fails);
    tcase_add_test(tc, a_label_beside_another_corner_fails);
    tcase_add_test(tc, a_one_row_hairline_strip_fails);
    tcase_add_test(tc, a_leader_across_another_label_fails);
    tcase_add_test(tc, a_race_without_its_threads_named_fails);
    tcase_add_test(tc, a_number_label_inside_another_printed_cell_fails);
    tcase_add_test(tc, a_panel_of_one_count_everywhere_fails);
    tcase_add_test(tc, a_rounded_range_without_a_tilde_fails);
    tcase_add_test(tc, a_row_number_over_a_printed_number_fails);
    tcase_add_test(tc, narration_over_five_lines_as_the_band_wraps_it_fails);
    tcase_add_test(tc, narration_lines_count_the_run_line_and_the_text);
    tcase_add_test(tc, a_cut_status_line_fails);
    tcase_add_test(tc, a_cut_text_fails);
    tcase_add_test(tc, a_cut_row_without_its_numbers_fails);
    tcase_add_test(tc, a_field_worked_out_of_a_missing_line_fails);
    tcase_add_test(tc, text_drawing_records_what_it_cuts);
    tcase_add_test(tc, a_window_leaving_out_most_of_the_items_cells_fails);
    tcase_add_test(tc, a_yx_question_without_row_and_column_numbers_fails);
    tcase_add_test(tc, a_colour_bar_counting_what_the_slide_hides_fails);
    tcase_add_test(tc, a_rounded_number_in_the_narration_without_a_tilde_fails);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
