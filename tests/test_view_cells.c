/* Heatmap cells checked by their pixels and geometry: each cell's number printed in its
 * exact shortest form (10.125, not 10.12), an all-zero plane in the colormap's zero
 * colour, the cell a question asks about outlined once the answer shows, and a sample's
 * corner-weight labels that never overlap (clamped corners share one label). */
#include <math.h>
#include <string.h>

#include "../viewer/vw_describe.h"
#include "../viewer/vw_draw_int.h"
#include "view_fixture.h"

static tu_sample_trace st;
static vw_index idx;
static vw_state s;
static vf_frame f;

static void open_trace(void)
{
    ck_assert_int_eq(vw_index_build(&idx, &st.tr, NULL), KS_OK);
    vw_state_init(&s, &st.tr, &idx);
    vf_open(&f, 1280, 800);
}

static void draw(void) { vf_draw(&f, &s); }

static void close_trace(void)
{
    vf_close(&f);
    vw_state_free(&s);
    vw_index_free(&idx);
}

/* An independent reference for multiples of 1/8: three decimals, trailing zeros cut. */
static void exact_eighths(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.3f", v);
    char *e = buf + strlen(buf) - 1;
    while (*e == '0') *e-- = '\0';
    if (*e == '.') *e = '\0';
}

/* Columns of the cell's text line holding a pixel other than its fill: the ink's span. */
static int ink_span(vw_rect r, uint32_t fill, int line)
{
    int first = -1, last = -1;
    const int y0 = r.y + (r.h - line) / 2;
    for (int x = r.x + 1; x < r.x + r.w - 1; ++x)
        for (int y = y0; y < y0 + line; ++y)
            if (vf_at(f.surf, x, y) != fill) {
                if (first < 0) first = x;
                last = x;
                break;
            }
    return first < 0 ? 0 : last - first + 1;
}

START_TEST(cells_print_their_values_exactly)
{
    static const float w[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    uint64_t seed = 1605;
    tu_sample_trace_init(&st, 1, 3, 5);
    for (int i = 0; i < 15; ++i) st.data[i] = (float)tu_int(&seed, -160, 159) / 8.0f; /* exact eighths */
    st.data[7] = 10.125f; /* (1, 2): 6 characters, one more than a 4-digit rounding */
    st.data[3] = st.data[3] == 0 ? 0.5f : st.data[3];
    (void)w;
    open_trace();
    draw();
    const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
    ck_assert(m.cell > 6 * f.d.font.advance + 4); /* room for the longest number */
    double lo = st.data[0], hi = st.data[0];
    for (int i = 1; i < 15; ++i) lo = st.data[i] < lo ? st.data[i] : lo, hi = st.data[i] > hi ? st.data[i] : hi;
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x) {
            const vw_rect r = vw_heatmap_cell(&m, y, x);
            const double v = st.data[y * 5 + x];
            const uint32_t fill = vw_colormap((v - lo) / (hi - lo));
            char want[32];
            exact_eighths(v, want, sizeof want);
            ck_assert_uint_eq(vf_pixel(f.surf, VF_FILL_X(r), VF_FILL_Y(r)), fill);
            const int span = ink_span(r, fill, f.d.font.line), len = (int)strlen(want);
            ck_assert_msg(span > (len - 1) * f.d.font.advance && span <= len * f.d.font.advance,
                          "cell (%d, %d) = %s: ink %d px for %d characters of %d px", y, x, want, span, len,
                          f.d.font.advance);
        }
    close_trace();
    /* the same plane in cells too small for its numbers: no text at all */
    tu_sample_trace_init(&st, 1, 3, 5);
    for (int i = 0; i < 15; ++i) st.data[i] = 1000.125f + (float)i;
    open_trace();
    vf_close(&f);
    vf_open_text(&f, 1280, 800, 40); /* 40 px text: "1000.125" is wider than a cell */
    draw();
    const vw_heatmap big = vw_panel_map(&s, &f.L, 0);
    ck_assert(big.cell < 8 * f.d.font.advance + 4);
    const vw_rect r = vw_heatmap_cell(&big, 1, 2);
    ck_assert_int_eq(ink_span(r, vw_colormap(7.0 / 14.0), f.d.font.line), 0);
    close_trace();
}
END_TEST

START_TEST(an_all_zero_plane_is_drawn_in_the_zero_colour)
{
    tu_sample_trace_init(&st, 2, 4, 6);
    for (int i = 0; i < 48; ++i) st.data[i] = i < 24 ? 0.0f : 3.5f; /* plane 0 zeros, plane 1 constant */
    open_trace();
    for (int plane = 0; plane < 2; ++plane) {
        s.panel[0].plane = plane;
        s.follow = 0;
        draw();
        const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 6; ++x) {
                const vw_rect r = vw_heatmap_cell(&m, y, x);
                /* zeros: the ramp's start; another constant: mid-ramp as before */
                ck_assert_uint_eq(vf_pixel(f.surf, VF_FILL_X(r), VF_FILL_Y(r)), vw_colormap(plane ? 0.5 : 0.0));
            }
    }
    close_trace();
}
END_TEST

/* A slide focusing `event`, keeping panels, mode and lookup. */
static void plain_slide(vw_slide *sl, uint32_t event, char *text)
{
    memset(sl, 0, sizeof *sl);
    sl->title = "Step 1 of 1";
    sl->text = text;
    sl->event = event, sl->look_tensor = -1, sl->panel[0] = sl->panel[1] = -1, sl->mode = -1;
}

static int count_colour(uint32_t col) { return vf_count_colour(f.surf, col); }

START_TEST(the_answer_cell_is_highlighted_once_revealed)
{
    static const float w[4] = {0.375f, 0.375f, 0.125f, 0.125f};
    tu_sample_trace_init(&st, 1, 4, 6);
    tu_sample_add(&st, 0, 1.25f, 2.5f, TU_CORNERS_ALL, w);
    tu_sample_add(&st, 0, 1.75f, 3.25f, TU_CORNERS_ALL, w);
    open_trace();
    vw_slide sl;
    plain_slide(&sl, 1, "Where does the second sample land?");
    sl.question = "Question: which cell is nearest the sample? (y, x)";
    sl.answer = "Answer: 2, 3.";
    sl.has_answer_cell = 1, sl.answer_event = 2; /* (1.75, 3.25) rounds to cell (2, 3) */
    vw_story_set(&s, &sl, 1);
    vw_layout_for_state(&f.L, &s, f.d.font.advance, f.d.font.line, 1280, 800);
    draw();
    ck_assert_int_eq(count_colour(VW_COL_ANSWER), 0);
    vw_action reveal = {.kind = VW_ACT_REVEAL, .a = 0, .b = 0};
    vw_apply(&s, &f.L, &reveal);
    ck_assert(s.reveal);
    draw();
    const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
    const vw_rect r = vw_heatmap_cell(&m, 2, 3), other = vw_heatmap_cell(&m, 1, 1);
    /* the outline: 4 px from 4 to 7 px outside the cell, on all four sides */
    ck_assert_uint_eq(vf_pixel(f.surf, r.x + r.w / 2, r.y - 5), VW_COL_ANSWER);
    ck_assert_uint_eq(vf_pixel(f.surf, r.x - 5, r.y + r.h / 2), VW_COL_ANSWER);
    ck_assert_uint_eq(vf_pixel(f.surf, r.x + r.w + 4, r.y + r.h / 2), VW_COL_ANSWER);
    ck_assert_uint_eq(vf_pixel(f.surf, r.x + r.w / 2, r.y + r.h + 4), VW_COL_ANSWER);
    ck_assert_uint_ne(vf_pixel(f.surf, other.x + other.w / 2, other.y - 5), VW_COL_ANSWER);
    ck_assert_int_gt(count_colour(VW_COL_ANSWER), 4 * r.w);
    close_trace();
}
END_TEST

static int overlap_any(const vw_weight_label *l, int n)
{
    /* the boxes less the 2 px of their clear rims (vw_place_labels lets two rims meet: the
     * black fill is drawn 3 px inside the box) */
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            const vw_rect a = l[i].label.box, b = l[j].label.box;
            if (vw_rect_overlap((vw_rect){.x = a.x + 2, .y = a.y + 2, .w = a.w - 4, .h = a.h - 4},
                                (vw_rect){.x = b.x + 2, .y = b.y + 2, .w = b.w - 4, .h = b.h - 4}))
                return 1;
        }
    return 0;
}

/* Whether a label of l[0..n) lies nearer (its box's pixels to the cell's, each axis's
 * gap counted from the next pixel) another corner's cell than its own. */
static int astray(const vw_weight_label *l, int n)
{
    for (int i = 0; i < n; ++i) {
        const vw_rect b = l[i].label.box;
        long long d[4];
        for (int j = 0; j < n; ++j) {
            const vw_rect c = l[j].label.cell;
            const long long gx = b.x >= c.x + c.w   ? b.x - (c.x + c.w) + 1
                                 : c.x >= b.x + b.w ? c.x - (b.x + b.w) + 1
                                                    : 0;
            const long long gy = b.y >= c.y + c.h   ? b.y - (c.y + c.h) + 1
                                 : c.y >= b.y + b.h ? c.y - (b.y + b.h) + 1
                                                    : 0;
            d[j] = gx * gx + gy * gy;
        }
        for (int j = 0; j < n; ++j)
            if (d[j] < d[i]) return 1;
    }
    return 0;
}

START_TEST(weight_labels_never_overlap)
{
    static const float w[4] = {0.1875f, 0.5625f, 0.0625f, 0.1875f};
    tu_sample_trace_init(&st, 1, 6, 6);
    /* RoIAlign's clamp: y past the last row, both corner rows on row 5 */
    ks_event *clamp = tu_sample_add(&st, 0, 5.0f, 2.25f, TU_CORNERS_ALL | KS_FLAG_CLAMP_Y, w);
    open_trace();
    const vw_rect bounds = f.L.input;
    vw_heatmap m = vw_heatmap_fit(bounds, 6, 6, 0);
    vw_weight_label l[4];
    int n = vw_sample_weight_labels(clamp, &m, f.d.font.advance, f.d.font.line, bounds, l);
    ck_assert_int_eq(n, 2); /* two corner cells, two corners each */
    ck_assert_int_eq(l[0].corners + l[1].corners, 4);
    ck_assert_ptr_nonnull(strstr(l[0].text, "clamped"));
    /* in words: the corners' weights added, where the clamp put them (not "0.1875+0.0625
     * clamped") */
    ck_assert_str_eq(l[0].text, "w=0.25, 2 corners clamped to row 5, col 2");
    ck_assert(!overlap_any(l, n));
    /* random samples on cells narrower than a label (labels 6+ characters): every label
     * finds a spot of its own inside the panel, away from the corner markers */
    uint64_t seed = 77;
    m = vw_heatmap_fit(bounds, 40, 40, 0);
    ck_assert(m.cell < 7 * f.d.font.advance);
    for (int trial = 0; trial < 200; ++trial) {
        ks_event e = *clamp;
        e.flags = TU_CORNERS_ALL | (trial % 5 == 0 ? KS_FLAG_CLAMP_X : 0);
        e.u.sample.y = (float)tu_int(&seed, 0, 3800) / 100.0f;
        e.u.sample.x = (float)tu_int(&seed, 0, 3800) / 100.0f;
        for (int c = 0; c < 4; ++c) e.u.sample.w[c] = (float)tu_int(&seed, 1, 9999) / 10000.0f;
        n = vw_sample_weight_labels(&e, &m, f.d.font.advance, f.d.font.line, bounds, l);
        ck_assert_int_eq(n, trial % 5 == 0 ? 2 : 4);
        ck_assert_msg(!overlap_any(l, n), "trial %d: labels overlap", trial);
        /* and each nearer its own corner's cell than another's (issue 38 D3: 06 s5) */
        ck_assert_msg(!astray(l, n), "trial %d: a label beside another corner", trial);
        for (int i = 0; i < n; ++i) {
            const vw_rect b = l[i].label.box;
            ck_assert(b.x >= bounds.x && b.y >= bounds.y && b.x + b.w <= bounds.x + bounds.w &&
                      b.y + b.h <= bounds.y + bounds.h);
            for (int j = 0; j < n; ++j) {
                const vw_rect marker = {.x = l[j].label.ax - 4, .y = l[j].label.ay - 4, .w = 9, .h = 9};
                ck_assert(!vw_rect_overlap(b, marker));
            }
        }
    }
    close_trace();
}
END_TEST

/* the placement itself: labels on one anchor fan out, a crowded panel falls back to
 * spots farther off with leader lines, a full one reports the labels it could not place */
START_TEST(labels_fan_out_and_report_when_there_is_no_room)
{
    vw_label l[6];
    const vw_rect bounds = {.x = 0, .y = 0, .w = 200, .h = 100};
    for (int i = 0; i < 6; ++i) l[i] = (vw_label){.ax = 100, .ay = 50, .w = 60, .h = 14};
    ck_assert_int_eq(vw_place_labels(l, 6, bounds, NULL, 0, 3), 0);
    int leaders = 0;
    for (int i = 0; i < 6; ++i) {
        leaders += l[i].leader;
        for (int j = i + 1; j < 6; ++j) ck_assert(!vw_rect_overlap(l[i].box, l[j].box));
    }
    ck_assert_int_eq(leaders, 2); /* four touch the anchor, two need a line */
    const vw_rect tiny = {.x = 0, .y = 0, .w = 70, .h = 20};
    ck_assert_int_eq(vw_place_labels(l, 3, tiny, NULL, 0, 3), 2);
}
END_TEST

/* issue 38 D3 (06 s5): corner (1, 1)'s label found no room beside its cell and went to
 * the nearest free spot, beside corner (1, 0), whose label it then read as. It goes to a
 * spot nearer its own cell than any other labelled one, farther though that is. */
START_TEST(a_label_goes_nowhere_it_would_read_as_another_corners)
{
    const vw_rect a = {.x = 100, .y = 100, .w = 40, .h = 40}, b = {.x = 140, .y = 100, .w = 40, .h = 40};
    const vw_rect avoid[] = {
        a,
        b,                                      /* the two corners, named */
        {.x = 180, .y = 60, .w = 100, .h = 80}, /* right of b, below both: named cells */
        {.x = 100, .y = 140, .w = 180, .h = 40},
        {.x = 140, .y = 60, .w = 80, .h = 40},  /* above b: a marker */
        {.x = 150, .y = 112, .w = 20, .h = 16}, /* b's number */
    };
    const vw_rect bounds = {.x = 40, .y = 60, .w = 240, .h = 200};
    vw_label l[2] = {
        {.ax = 120, .ay = 120, .w = 50, .h = 20, .cell = a, .dx = -1, .dy = 0},
        {.ax = 160, .ay = 120, .w = 36, .h = 20, .cell = b, .dx = 1, .dy = 0},
    };
    ck_assert_int_eq(vw_place_labels(l, 2, bounds, avoid, 6, 5), 0);
    const vw_weight_label wl[2] = {{.label = l[0]}, {.label = l[1]}};
    ck_assert_msg(!astray(wl, 2), "b's label at (%d, %d)", l[1].box.x, l[1].box.y);
}
END_TEST

/* issue 38 D3 (06 s4 at 1024x768): a corner whose neighbours are all named (the sample's
 * other corners) and which sits at the plane's edge has no room beside it; its label goes
 * in a corner of its own cell, away from the sample and off the cell's number, not cells
 * away. Where the cell cannot hold it, the far search as before. */
START_TEST(a_label_with_no_room_beside_its_cell_takes_a_corner_of_it)
{
    const vw_rect cell = {.x = 100, .y = 100, .w = 70, .h = 70};
    const vw_rect avoid[] = {
        cell,                                   /* named: the corner itself */
        {.x = 170, .y = 100, .w = 70, .h = 70}, /* the other corners, named */
        {.x = 100, .y = 170, .w = 70, .h = 70},
        {.x = 170, .y = 170, .w = 70, .h = 70},
        {.x = 127, .y = 127, .w = 16, .h = 16}, /* its number */
        {.x = 131, .y = 131, .w = 9, .h = 9},   /* the corner's marker */
    };
    const vw_rect bounds = {.x = 100, .y = 100, .w = 400, .h = 400}; /* the plane's edge: left and top */
    vw_label l = {.ax = 135, .ay = 135, .w = 60, .h = 20, .cell = cell, .dx = -1, .dy = -1};
    ck_assert_int_eq(vw_place_labels(&l, 1, bounds, avoid, 6, 5), 0);
    ck_assert_int_eq(l.leader, 0);
    ck_assert(l.box.x >= cell.x && l.box.y >= cell.y && l.box.x + l.box.w <= cell.x + cell.w &&
              l.box.y + l.box.h <= cell.y + cell.h);
    ck_assert(!vw_rect_overlap(l.box, avoid[4]) && !vw_rect_overlap(l.box, avoid[5]));
    ck_assert_int_eq(l.box.y, cell.y); /* up and left, away from the sample below right */
    ck_assert_int_eq(l.box.x, cell.x);
    l.w = 80; /* wider than the cell: elsewhere, with a leader */
    ck_assert_int_eq(vw_place_labels(&l, 1, bounds, avoid, 6, 5), 0);
    ck_assert_int_eq(l.leader, 1);
    ck_assert(!vw_rect_overlap(l.box, cell));
}
END_TEST

/* issue 38 D3 (lesson 14 step 6): a sample clamped onto a cell's centre has its ring, a
 * pass for its labels' leaders, on that cell; the cell is still not one to cross. A
 * leader from the corner below may not run up across it; a mark within the ring may. */
START_TEST(a_pass_ring_on_a_named_cell_lets_no_leader_across_the_cell)
{
    const vw_rect cell = {.x = 100, .y = 100, .w = 40, .h = 40};              /* the other corner */
    vw_label a = {.ax = 120, .ay = 160, .w = 60, .h = 14};                    /* from the cell below */
    a.box = (vw_rect){.x = 90, .y = 40, .w = 60, .h = 14};                    /* straight up, across it */
    a.npass = 1, a.pass[0] = (vw_rect){.x = 114, .y = 114, .w = 13, .h = 13}; /* the ring */
    int pts[VW_LEADER_PTS][2];
    const int n = vw_route_leader(&a, &cell, 1, 100, 100, 40, pts); /* cells of 40 px from (100, 100) */
    ck_assert_int_eq(n, VW_LEADER_PTS);                             /* along the grid lines */
    for (int k = 0; k + 1 < n; ++k)
        ck_assert(!vw_segment_crosses(pts[k][0], pts[k][1], pts[k + 1][0], pts[k + 1][1], cell));
    const vw_rect mark = {.x = 116, .y = 116, .w = 9, .h = 9};             /* a corner's marker in the ring */
    ck_assert_int_eq(vw_route_leader(&a, &mark, 1, 100, 100, 40, pts), 2); /* straight */
}
END_TEST

/* patchify's output item has one sample: with the work item in focus (no tap named) its
 * corners and weights are drawn as if the sample were focused; with two samples not */
START_TEST(a_lone_sample_shows_its_corners_when_its_item_is_focused)
{
    static const float w[4] = {0.375f, 0.375f, 0.125f, 0.125f};
    for (int n = 1; n <= 2; ++n) {
        tu_sample_trace_init(&st, 1, 4, 6);
        tu_sample_add(&st, 0, 1.25f, 2.5f, TU_CORNERS_ALL, w);
        if (n == 2) tu_sample_add(&st, 0, 2.25f, 3.5f, TU_CORNERS_ALL, w);
        open_trace();
        ck_assert_int_eq(st.tr.events[vw_state_event(&s)].kind, KS_EV_WORK);
        draw();
        const int green = count_colour(VW_COL_VALID);
        if (n == 1) ck_assert_int_gt(green, 4 * 20); /* four corner squares, lines, labels */
        else ck_assert_int_eq(green, 0);
        close_trace();
    }
}
END_TEST

/* a slide's panel shows the plane of its focused event when that lies on the panel's
 * tensor, not the item's first plane there (lesson 04's channel-1 weights) */
START_TEST(a_slide_shows_the_plane_of_its_focused_event)
{
    static const float w[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    tu_sample_trace_init(&st, 3, 4, 6);
    tu_sample_add(&st, 0, 1.25f, 2.5f, TU_CORNERS_ALL, w);
    tu_sample_add(&st, 2, 2.25f, 3.5f, TU_CORNERS_ALL, w);
    open_trace();
    vw_slide sl;
    plain_slide(&sl, 2, "the second sample");
    sl.panel[0] = 0;
    vw_story_set(&s, &sl, 1);
    ck_assert_int_eq(s.panel[0].plane, 2);
    sl.event = 1;
    vw_story_show(&s, 0);
    ck_assert_int_eq(s.panel[0].plane, 0);
    close_trace();
}
END_TEST

/* NaN is named "NaN" whatever its sign bit: printf's "-nan" on a slide read as a value
 * (issue 38 D12: 11 s7, 13 s6, 13 s8) */
START_TEST(nan_is_printed_as_nan)
{
    char b[64];
    const double neg_nan = -(double)NAN;
    ck_assert(isnan(neg_nan) && signbit(neg_nan));
    vw_value_text(b, sizeof b, neg_nan);
    ck_assert_str_eq(b, "NaN");
    vw_value_text(b, sizeof b, (double)NAN);
    ck_assert_str_eq(b, "NaN");
    vw_cell_text(b, sizeof b, neg_nan, 1);
    ck_assert_str_eq(b, "NaN");
    vw_value_text(b, sizeof b, -(double)INFINITY);
    ck_assert_str_eq(b, "-inf");
}
END_TEST

/* a random float whose shortest name has 6 digits (05 s11's mask, 0.527412) is rounded
 * and marked like its neighbours, not shown as exact; short names and binary fractions
 * stay in full (issue 38 D9) */
START_TEST(a_long_shortest_name_is_marked_rounded)
{
    char b[64];
    vw_cell_text(b, sizeof b, (double)0.527412f, 0);
    ck_assert_str_eq(b, "~0.5274");
    vw_cell_text(b, sizeof b, (double)0.1f, 0);
    ck_assert_str_eq(b, "0.1");
    vw_cell_text(b, sizeof b, 34.46875, 0);
    ck_assert_str_eq(b, "34.46875");
    vw_cell_text(b, sizeof b, (double)0.7365423f, 0);
    ck_assert_str_eq(b, "~0.7365");
}
END_TEST

/* a slide legend's name is whole or absent: "values after phase" lost its number (11 s4,
 * s6) and "values" read "val" (14 s5) where the room ran out (issue 38 D12); it goes
 * before a colour bar of 4 characters does */
START_TEST(a_legend_name_is_never_cut)
{
    int w;
    const int adv = 10;
    ck_assert_str_eq(vw_legend_name("values after phase 1", "phase 1", 400, adv, &w), "values after phase 1");
    ck_assert_int_eq(w, 220);
    ck_assert_str_eq(vw_legend_name("values after phase 1", "phase 1", 190, adv, &w), "phase 1");
    ck_assert_int_eq(w, 90);
    ck_assert_str_eq(vw_legend_name("values after phase 1", "phase 1", 60, adv, &w), "");
    ck_assert_int_eq(w, 0);
    ck_assert_str_eq(vw_legend_name("values", NULL, 120, adv, &w), "values"); /* and a bar of 4 */
    ck_assert_int_eq(w, 80);
    /* the bar before the name (twelfth re-trial N22: "0 ~21.67 values" with no bar) */
    ck_assert_str_eq(vw_legend_name("values", NULL, 80, adv, &w), "");
    ck_assert_int_eq(w, 0);
    ck_assert_str_eq(vw_legend_name("values", NULL, 30, adv, &w), "");
    ck_assert_int_eq(w, 0);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("view_cells");
    TCase *tc = tcase_create("view_cells");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cells_print_their_values_exactly);
    tcase_add_test(tc, nan_is_printed_as_nan);
    tcase_add_test(tc, a_legend_name_is_never_cut);
    tcase_add_test(tc, a_long_shortest_name_is_marked_rounded);
    tcase_add_test(tc, a_pass_ring_on_a_named_cell_lets_no_leader_across_the_cell);
    tcase_add_test(tc, an_all_zero_plane_is_drawn_in_the_zero_colour);
    tcase_add_test(tc, the_answer_cell_is_highlighted_once_revealed);
    tcase_add_test(tc, weight_labels_never_overlap);
    tcase_add_test(tc, labels_fan_out_and_report_when_there_is_no_room);
    tcase_add_test(tc, a_label_with_no_room_beside_its_cell_takes_a_corner_of_it);
    tcase_add_test(tc, a_label_goes_nowhere_it_would_read_as_another_corners);
    tcase_add_test(tc, a_lone_sample_shows_its_corners_when_its_item_is_focused);
    tcase_add_test(tc, a_slide_shows_the_plane_of_its_focused_event);
    suite_add_tcase(su, tc);
    return tu_run_suite(su, CK_FORK);
}
