/* The schedule chart (C) without SDL, on a crafted GPU-like schedule (gantt_fixture.h: 3
 * SMs, 6 blocks that ran, one that did not, two overlapping on one SM): its rows, lanes,
 * bar geometry and hit testing, the title and axis, the C key (and what a trace without a
 * schedule says), and a click on a bar focusing the first work item of its block in the
 * recorded and the thread-major order. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../viewer/vw_colormap.h"
#include "../viewer/vw_gantt.h"
#include "../viewer/vw_state.h"
#include "gantt_fixture.h"

static ct_trace ct;
static int64_t sched[7][4];

START_TEST(rows_lanes_and_bars_of_a_crafted_schedule)
{
    gf_trace(&ct, sched, 1);
    vw_gantt g;
    ck_assert_int_eq(vw_gantt_build(&g, &ct.tr), KS_OK);
    ck_assert(g.ok);
    ck_assert_int_eq(g.clock, VW_CLOCK_NS);
    ck_assert_int_eq(g.nbars, 6); /* the -1 row is left out */
    ck_assert_int_eq(g.nrows, 3);
    ck_assert_int_eq(g.row_sm[0], 2);
    ck_assert_int_eq(g.row_sm[1], 7);
    ck_assert_int_eq(g.row_sm[2], 40);
    ck_assert_int_eq(g.row_lanes[0], 1); /* SM 2: blocks 1 and 4 one after the other */
    ck_assert_int_eq(g.row_lanes[1], 2); /* SM 7: block 2 starts while block 0 runs */
    ck_assert_int_eq(g.row_lanes[2], 1);
    ck_assert_int_eq(g.t0, 1000);
    ck_assert_int_eq(g.t1, 5000);
    const int row[6] = {1, 0, 1, 2, 0, 1}, lane[6] = {0, 0, 1, 0, 0, 0}; /* block 5 reuses lane 0 */
    for (int64_t b = 0; b < 6; ++b) {
        const int64_t i = vw_gantt_find(&g, b);
        ck_assert_int_ge(i, 0);
        ck_assert_int_eq(g.bars[i].row, row[b]);
        ck_assert_int_eq(g.bars[i].lane, lane[b]);
    }
    ck_assert_int_eq(vw_gantt_find(&g, 6), -1);
    char buf[160];
    vw_gantt_row_name(&g, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "SM 2");
    vw_gantt_row_name(&g, 2, buf, sizeof buf);
    ck_assert_str_eq(buf, "SM 40");
    vw_gantt_title(&g, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "6 blocks on 3 SMs") != NULL, "%s", buf);
    ck_assert(strstr(vw_gantt_unit(&g), "us") != NULL);
    ck_assert(fabs(vw_gantt_scale(&g) - 1e-3) < 1e-12);

    /* geometry in a 400 x 90 plot: 30 px a row (29 drawn), SM 7's row in two lanes */
    const vw_rect plot = {.x = 100, .y = 50, .w = 400, .h = 90};
    vw_rect r = vw_gantt_bar_rect(&g, plot, vw_gantt_find(&g, 0));
    ck_assert_int_eq(r.x, 100);
    ck_assert_int_eq(r.w, 200);
    ck_assert_int_eq(r.y, 80);
    ck_assert_int_eq(r.h, 14);
    r = vw_gantt_bar_rect(&g, plot, vw_gantt_find(&g, 2));
    ck_assert_int_eq(r.x, 150);
    ck_assert_int_eq(r.w, 100);
    ck_assert_int_eq(r.y, 94);
    ck_assert_int_eq(r.h, 15);
    r = vw_gantt_bar_rect(&g, plot, vw_gantt_find(&g, 3));
    ck_assert_int_eq(r.x, 200);
    ck_assert_int_eq(r.x + r.w, 500);
    ck_assert_int_eq(r.y, 110);
    ck_assert_int_eq(r.h, 29);
    r = vw_gantt_bar_rect(&g, plot, vw_gantt_find(&g, 4));
    ck_assert_int_eq(r.x, 210);
    ck_assert_int_eq(r.x + r.w, 400);
    ck_assert_int_eq(r.y, 50);
    ck_assert_int_eq(vw_gantt_x(&g, plot, 1000), 100);
    ck_assert_int_eq(vw_gantt_x(&g, plot, 5000), 500);
    ck_assert_int_eq(vw_gantt_x(&g, plot, -1000000), 100); /* clamped */

    /* hit testing: the bar under the pointer, a thin miss snaps within 3 px, else none */
    const struct {
        int x, y;
        int64_t block;
    } hits[] = {
        {200, 85, 0},  {200, 100, 2}, {148, 100, 2},  {120, 100, -1}, {150, 60, 1}, {300, 60, 4},
        {450, 60, -1}, {499, 138, 3}, {200, 139, -1}, {60, 85, -1},   {350, 85, 5}, {300, 20, -1},
    };
    for (size_t k = 0; k < sizeof hits / sizeof hits[0]; ++k) {
        const int64_t i = vw_gantt_hit(&g, plot, hits[k].x, hits[k].y);
        ck_assert_msg((i < 0 ? -1 : g.bars[i].block) == hits[k].block, "(%d, %d): bar %lld, want block %lld", hits[k].x,
                      hits[k].y, (long long)i, (long long)hits[k].block);
    }
    /* bars tile their row without overlapping one another on screen */
    for (int64_t i = 0; i < g.nbars; ++i)
        for (int64_t j = i + 1; j < g.nbars; ++j)
            if (g.bars[i].row == g.bars[j].row && g.bars[i].lane == g.bars[j].lane)
                ck_assert(!vw_rect_overlap(vw_gantt_bar_rect(&g, plot, i), vw_gantt_bar_rect(&g, plot, j)));
    /* colours: a ramp over the blocks, distinct here, never the focus cyan */
    for (int64_t b = 0; b < 6; ++b) {
        ck_assert_uint_ne(vw_gantt_color(&g, b), VW_COL_FOCUS);
        if (b) ck_assert_uint_ne(vw_gantt_color(&g, b), vw_gantt_color(&g, b - 1));
    }
    ck_assert(fabs(vw_gantt_tick_step(4, 5) - 1) < 1e-12);
    ck_assert(fabs(vw_gantt_tick_step(4000, 8) - 500) < 1e-9);
    ck_assert(fabs(vw_gantt_tick_step(7, 3) - 5) < 1e-12);
    ck_assert(fabs(vw_gantt_tick_step(0, 3) - 1) < 1e-12);
    vw_gantt_free(&g);
}
END_TEST

START_TEST(simulator_schedules_and_bad_tensors)
{
    gf_trace(&ct, sched, 1);
    /* the simulator: SM -1, block b over b*T .. (b+1)*T, a virtual clock */
    snprintf(ct.tr.params, sizeof ct.tr.params, "{\"schedule_clock\": \"virtual\"}");
    for (int b = 0; b < 7; ++b) sched[b][0] = b, sched[b][1] = -1, sched[b][2] = 2 * b, sched[b][3] = 2 * b + 2;
    vw_gantt g;
    ck_assert_int_eq(vw_gantt_build(&g, &ct.tr), KS_OK);
    ck_assert(g.ok);
    ck_assert_int_eq(g.clock, VW_CLOCK_VIRTUAL);
    ck_assert_int_eq(g.nrows, 1);
    ck_assert_int_eq(g.row_lanes[0], 1);
    char buf[160];
    vw_gantt_row_name(&g, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "sim");
    ck_assert(strstr(vw_gantt_unit(&g), "virtual ticks") != NULL);
    vw_gantt_free(&g);
    /* an end before its start is the start; no clock in the params is "unknown" */
    snprintf(ct.tr.params, sizeof ct.tr.params, "not json");
    sched[3][3] = -50;
    ck_assert_int_eq(vw_gantt_build(&g, &ct.tr), KS_OK);
    ck_assert_int_eq(g.clock, VW_CLOCK_UNKNOWN);
    ck_assert_int_eq(g.bars[vw_gantt_find(&g, 3)].end, g.bars[vw_gantt_find(&g, 3)].start);
    vw_gantt_free(&g);
    /* every row -1: a chart with nothing on it */
    for (int b = 0; b < 7; ++b) sched[b][0] = -1;
    ck_assert_int_eq(vw_gantt_build(&g, &ct.tr), KS_OK);
    ck_assert(g.ok);
    ck_assert_int_eq(g.nbars, 0);
    ck_assert_int_eq(vw_gantt_hit(&g, (vw_rect){0, 0, 100, 100}, 50, 50), -1);
    vw_gantt_free(&g);
    /* wrong type or shape: no schedule */
    ct.tr.tensors[2].dtype = KS_F32;
    ck_assert_int_eq(vw_gantt_tensor(&ct.tr), -1);
    ck_assert_int_eq(vw_gantt_build(&g, &ct.tr), KS_OK);
    ck_assert(!g.ok);
    vw_gantt_free(&g);
    ct.tr.tensors[2].dtype = KS_I64;
    ct.tr.tensors[2].shape[1] = 3;
    ck_assert_int_eq(vw_gantt_tensor(&ct.tr), -1);
}
END_TEST

static vw_action key(const char *name)
{
    vw_action a;
    ck_assert_int_eq(vw_key_action(name, 0, &a), 0);
    return a;
}

static void click_block(vw_state *s, const vw_layout *L, int64_t block)
{
    const vw_rect plot = vw_gantt_area(L);
    const vw_rect r = vw_gantt_bar_rect(&s->sched, plot, vw_gantt_find(&s->sched, block));
    vw_action c = {.kind = VW_ACT_CLICK, .a = r.x + r.w / 2, .b = r.y + r.h / 2};
    ck_assert(vw_rect_contains(L->grid, (int)c.a, (int)c.b));
    vw_apply(s, L, &c);
}

START_TEST(c_key_toggles_the_chart_and_a_click_focuses_the_blocks_first_item)
{
    gf_trace(&ct, sched, 1);
    vw_index idx;
    ck_assert_int_eq(vw_index_build(&idx, &ct.tr, NULL), KS_OK);
    vw_state s;
    vw_state_init(&s, &ct.tr, &idx);
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 16);
    ck_assert(!s.gantt);
    const vw_action c = key("C");
    ck_assert_int_eq(c.kind, VW_ACT_GANTT);
    vw_apply(&s, &L, &c);
    ck_assert(s.gantt);
    ck_assert(s.sched.ok);
    ck_assert_int_eq(s.sched.nrows, 3);
    /* recorded order (the claim order): block 3's first event is thread 1's work event */
    click_block(&s, &L, 3);
    uint32_t it = vw_state_item(&s);
    ck_assert_uint_ne(it, VW_NONE);
    ck_assert_uint_eq(idx.items[it].block, 3);
    ck_assert_uint_eq(idx.items[it].thread, 1);
    ck_assert_int_eq(ct.tr.events[vw_state_event(&s)].kind, KS_EV_WORK);
    ck_assert_msg(strstr(s.message, "block 3 on SM 40") != NULL, "%s", s.message);
    /* thread-major order: thread 0 */
    ck_assert_int_eq(vw_set_order(&s, "thread"), KS_OK);
    click_block(&s, &L, 2);
    it = vw_state_item(&s);
    ck_assert_uint_eq(idx.items[it].block, 2);
    ck_assert_uint_eq(idx.items[it].thread, 0);
    /* a click beside every bar changes nothing */
    const uint64_t pos = s.pos;
    const vw_rect plot = vw_gantt_area(&L);
    vw_action miss = {.kind = VW_ACT_CLICK, .a = plot.x + plot.w - 2, .b = vw_gantt_row_rect(&s.sched, plot, 0).y + 2};
    vw_apply(&s, &L, &miss);
    ck_assert_uint_eq(s.pos, pos);
    /* C again: the grid, whose clicks do nothing */
    vw_apply(&s, &L, &c);
    ck_assert(!s.gantt);
    click_block(&s, &L, 5);
    ck_assert_uint_eq(s.pos, pos);
    vw_state_free(&s);
    vw_index_free(&idx);
}
END_TEST

START_TEST(a_trace_without_a_schedule_says_so)
{
    gf_trace(&ct, sched, 0);
    vw_index idx;
    ck_assert_int_eq(vw_index_build(&idx, &ct.tr, NULL), KS_OK);
    vw_state s;
    vw_state_init(&s, &ct.tr, &idx);
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 16);
    const uint64_t pos = s.pos;
    const vw_action c = key("C");
    for (int k = 0; k < 2; ++k) {
        vw_apply(&s, &L, &c);
        ck_assert(!s.gantt);
        ck_assert_msg(strstr(s.message, "no schedule") != NULL, "%s", s.message);
        ck_assert_uint_eq(s.pos, pos);
    }
    vw_state_free(&s);
    vw_index_free(&idx);
}
END_TEST

/* An H100's 132 SMs, 4 blocks each (two resident at a time) in a 170 px plot: rows of a
 * pixel or two, every bar inside the plot, a click in a bar's middle hits that bar's row. */
START_TEST(many_sms_get_thin_rows_inside_the_plot)
{
    static int64_t big[528][4];
    static ct_trace c;
    gf_trace(&c, sched, 1);
    for (int b = 0; b < 528; ++b) {
        const int sm = b % 132, k = b / 132;
        big[b][0] = b, big[b][1] = sm, big[b][2] = 1000 * (k / 2) + sm, big[b][3] = 1000 * (k / 2 + 1) + sm;
    }
    c.tr.tensors[2].shape[0] = 528;
    c.tr.tensors[2].data = big;
    vw_gantt g;
    ck_assert_int_eq(vw_gantt_build(&g, &c.tr), KS_OK);
    ck_assert_int_eq(g.nrows, 132);
    for (int r = 0; r < 132; ++r) ck_assert_int_eq(g.row_lanes[r], 2);
    const vw_rect plot = {.x = 80, .y = 40, .w = 480, .h = 170};
    for (int64_t i = 0; i < g.nbars; ++i) {
        const vw_rect r = vw_gantt_bar_rect(&g, plot, i);
        ck_assert(r.w >= 1 && r.h >= 1);
        ck_assert(r.x >= plot.x && r.y >= plot.y && r.x + r.w <= plot.x + plot.w && r.y + r.h <= plot.y + plot.h);
        const int64_t h = vw_gantt_hit(&g, plot, r.x + r.w / 2, r.y);
        ck_assert_int_ge(h, 0);
        ck_assert_int_eq(g.bars[h].row, g.bars[i].row);
    }
    vw_gantt_free(&g);
}
END_TEST

START_TEST(the_plot_fits_the_grid_panel)
{
    const int sizes[][2] = {{1280, 800}, {640, 480}, {800, 1200}, {1920, 1080}};
    for (int i = 0; i < 4; ++i) {
        vw_layout L;
        vw_layout_compute(&L, sizes[i][0], sizes[i][1], 16);
        const vw_rect p = vw_gantt_area(&L);
        ck_assert(p.w > 0 && p.h > 0);
        ck_assert(p.x > L.grid.x && p.y > L.grid.y && p.x + p.w <= L.grid.x + L.grid.w &&
                  p.y + p.h <= L.grid.y + L.grid.h);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_gantt");
    TCase *tc = tcase_create("view_gantt");
    tcase_add_test(tc, rows_lanes_and_bars_of_a_crafted_schedule);
    tcase_add_test(tc, simulator_schedules_and_bad_tensors);
    tcase_add_test(tc, c_key_toggles_the_chart_and_a_click_focuses_the_blocks_first_item);
    tcase_add_test(tc, a_trace_without_a_schedule_says_so);
    tcase_add_test(tc, many_sms_get_thin_rows_inside_the_plot);
    tcase_add_test(tc, the_plot_fits_the_grid_panel);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
