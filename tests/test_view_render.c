/* Headless frames checked by their pixels: the focused cell's highlight where the layout
 * puts it, heatmap colours at known cells, sample overlays at their coordinates; the CLI's
 * --png equal to an in-process frame; bad and odd traces; the schedule chart's bars and
 * focus outline (a crafted 3-SM schedule, and a simulator run through the CLI). */
#include <sys/stat.h>
#include <unistd.h>

#include "../viewer/vw_describe.h"
#include "../viewer/vw_warp.h"
#include "gantt_fixture.h"
#include "view_fixture.h"

static char dir[64];
static char path[256];

static void make_dir(void)
{
    vf_tmpdir(dir, sizeof dir, "ks_view");
    snprintf(path, sizeof path, "%s/t.kst", dir);
    vf_write_trace(path, "im2col", vf_small(), ks_filter_all(), 0);
}

static void remove_dir(void) { vf_rmdir(dir); }

/* Opens path and renders the frame after `spec` and `steps` single-event steps. */
typedef struct opened {
    ks_trace tr;
    vw_index idx;
    vw_state s;
    vf_frame f;
} opened;

static opened o;

static void open_at(const char *spec, int steps)
{
    ck_assert_int_eq(ks_trace_open(path, &o.tr), KS_OK);
    ck_assert_int_eq(vw_index_build(&o.idx, &o.tr, NULL), KS_OK);
    vw_state_init(&o.s, &o.tr, &o.idx);
    vf_open(&o.f, 1280, 800);
    ck_assert_int_eq(vw_goto(&o.s, spec), KS_OK);
    vw_action right = {.kind = VW_ACT_STEP, .a = 1, .b = 0};
    for (int i = 0; i < steps; ++i) vw_apply(&o.s, &o.f.L, &right);
    vw_draw_frame(&o.f.d, &o.s, &o.f.L, 1000);
    SDL_RenderPresent(o.f.r);
}

static void close_opened(void)
{
    vf_close(&o.f);
    vw_state_free(&o.s);
    vw_index_free(&o.idx);
    ks_trace_close(&o.tr);
}

START_TEST(focused_read_is_outlined_where_the_layout_puts_its_cell)
{
    make_dir();
    for (int steps = 1; steps <= 17; steps += 2) { /* the reads of work item 7, tap by tap */
        open_at("index=7", steps);
        const ks_event *e = &o.tr.events[vw_state_event(&o.s)];
        ck_assert_int_eq(e->kind, KS_EV_READ);
        vw_heatmap m = vw_panel_map(&o.s, &o.f.L, 0);
        vw_rect c = vw_heatmap_cell(&m, e->u.access.y, e->u.access.x);
        /* item 7 is h_col 1, w_col 2: tap (i, j) reads (i, 1 + j) */
        ck_assert_int_eq(e->u.access.y, e->tap / 3);
        ck_assert_int_eq(e->u.access.x, 1 + e->tap % 3);
        ck_assert_uint_eq(vf_pixel(o.f.surf, c.x, c.y + c.h / 2), VW_COL_FOCUS);
        ck_assert_uint_eq(vf_pixel(o.f.surf, c.x + c.w / 2, c.y), VW_COL_FOCUS);
        ck_assert_uint_eq(vf_pixel(o.f.surf, c.x + c.w, c.y + c.h / 2), VW_COL_FOCUS);
        /* the cell's inside keeps its heatmap colour */
        ck_assert_uint_ne(vf_pixel(o.f.surf, c.x + c.w / 2, c.y + c.h / 2), VW_COL_FOCUS);
        close_opened();
    }
    remove_dir();
}
END_TEST

START_TEST(heatmap_cells_show_the_colormap_of_their_values)
{
    make_dir();
    open_at("index=0", 0);
    const ks_tensor *t = &o.tr.tensors[0];
    const float *v = t->data;
    for (int64_t plane = 0; plane < 2; ++plane) {
        if (plane) { /* the other channel */
            vw_action a = {.kind = VW_ACT_PLANE, .a = 0, .b = 1};
            vw_apply(&o.s, &o.f.L, &a);
            ck_assert_int_eq(o.s.panel[0].plane, 1);
            vw_draw_frame(&o.f.d, &o.s, &o.f.L, 1000);
        }
        const float *pv = v + plane * 25;
        double lo = pv[0], hi = pv[0];
        for (int i = 1; i < 25; ++i) {
            if (pv[i] < lo) lo = pv[i];
            if (pv[i] > hi) hi = pv[i];
        }
        vw_heatmap m = vw_panel_map(&o.s, &o.f.L, 0);
        for (int y = 0; y < 5; ++y)
            for (int x = 0; x < 5; ++x) {
                vw_rect c = vw_heatmap_cell(&m, y, x);
                uint32_t want = vw_colormap((pv[y * 5 + x] - lo) / (hi - lo));
                ck_assert_msg(vf_pixel(o.f.surf, VF_FILL_X(c), VF_FILL_Y(c)) == want,
                              "plane %lld cell (%d, %d): pixel %06x, colormap %06x", (long long)plane, y, x,
                              vf_pixel(o.f.surf, VF_FILL_X(c), VF_FILL_Y(c)), want);
            }
    }
    /* the read-count heatmap: the centre cell is read 9 times, the most */
    vw_action mode = {.kind = VW_ACT_MODE, .a = 0, .b = 0};
    vw_apply(&o.s, &o.f.L, &mode);
    vw_draw_frame(&o.f.d, &o.s, &o.f.L, 1000);
    vw_heatmap m = vw_panel_map(&o.s, &o.f.L, 0);
    vw_rect c = vw_heatmap_cell(&m, 2, 2), corner = vw_heatmap_cell(&m, 0, 0);
    ck_assert_uint_eq(vf_pixel(o.f.surf, VF_FILL_X(c), VF_FILL_Y(c)), vw_colormap(1.0));
    ck_assert_uint_eq(vf_pixel(o.f.surf, VF_FILL_X(corner), VF_FILL_Y(corner)), vw_colormap(4.0 / 9.0));
    close_opened();
    remove_dir();
}
END_TEST

/* Two samples: all corners inside, and one whose right corners are outside. */
static tu_sample_trace st;
static const ks_event *sev;

static void sample_trace(ks_trace *tr)
{
    static const float w[4] = {0.375f, 0.375f, 0.125f, 0.125f};
    tu_sample_trace_init(&st, 1, 4, 6);
    tu_sample_add(&st, 0, 1.25f, 2.5f, TU_CORNERS_ALL, w);
    tu_sample_add(&st, 0, 2.75f, 5.5f, KS_FLAG_C00 | KS_FLAG_C10, w);
    tu_sample_add(&st, 0, NAN, INFINITY, 0, w); /* a broken kernel's sample: nothing to draw */
    sev = st.ev;
    *tr = st.tr;
}

START_TEST(sample_points_and_their_corners_are_drawn_at_their_coordinates)
{
    ks_trace tr;
    vw_index idx;
    static vw_state s;
    vf_frame f;
    sample_trace(&tr);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    vw_state_init(&s, &tr, &idx);
    vf_open(&f, 1280, 800);
    for (int k = 1; k <= 2; ++k) {
        vw_action seek = {.kind = VW_ACT_SEEK, .a = k, .b = 0};
        vw_apply(&s, &f.L, &seek);
        vw_draw_frame(&f.d, &s, &f.L, 1000);
        const ks_ev_sample *m = &sev[k].u.sample;
        vw_heatmap map = vw_panel_map(&s, &f.L, 0);
        int px, py;
        vw_heatmap_point(&map, m->y, m->x, &px, &py);
        ck_assert_uint_eq(vf_pixel(f.surf, px, py), VW_COL_FOCUS);
        int64_t ys[2], xs[2];
        vw_sample_corners(&sev[k], ys, xs);
        for (int c = 0; c < 4; ++c) {
            int cx, cy;
            vw_heatmap_point(&map, (double)ys[c >> 1], (double)xs[c & 1], &cx, &cy);
            uint32_t want = (sev[k].flags & (KS_FLAG_C00 << c)) ? VW_COL_VALID : VW_COL_INVALID;
            ck_assert_msg(vf_pixel(f.surf, cx - 3, cy) == want, "event %d corner %d: %06x", k, c,
                          vf_pixel(f.surf, cx - 3, cy));
        }
    }
    /* the NaN sample draws no marker and crashes nothing; its line says where it was */
    vw_action seek = {.kind = VW_ACT_SEEK, .a = 3, .b = 0};
    vw_apply(&s, &f.L, &seek);
    vw_draw_frame(&f.d, &s, &f.L, 1000);
    static vw_lines lines;
    vw_describe_focus(&s, &lines, 20);
    ck_assert_ptr_nonnull(strstr(lines.text[lines.n - 1], "NaN"));
    vf_close(&f);
    vw_state_free(&s);
    vw_index_free(&idx);
}
END_TEST

START_TEST(cli_png_is_the_frame_rendered_in_process)
{
    char cmd[1024], png[300];
    make_dir();
    snprintf(png, sizeof png, "%s/f.png", dir);
    snprintf(cmd, sizeof cmd,
             "%s view %s --goto index=12 --keys 2,Right,1,Right,Right --text-size 13 --png %s > /dev/null", KS_CLI,
             path, png);
    ck_assert_int_eq(vf_sh(cmd), 0);
    SDL_Surface *img = vf_load(png);
    ck_assert_ptr_nonnull(img);
    ck_assert(img->w == 1280 && img->h == 800);
    open_at("index=13", 2);
    ck_assert_int_eq(o.tr.events[vw_state_event(&o.s)].index, 13);
    for (int y = 0; y < 800; ++y)
        ck_assert_msg(!memcmp((uint8_t *)img->pixels + (size_t)y * img->pitch,
                              (uint8_t *)o.f.surf->pixels + (size_t)y * o.f.surf->pitch, 1280 * 4),
                      "row %d differs", y);
    SDL_FreeSurface(img);
    close_opened();
    remove_dir();
}
END_TEST

START_TEST(bad_traces_fail_with_the_readers_error_and_write_nothing)
{
    char cmd[1024], png[300], bad[300], err[300];
    make_dir();
    snprintf(png, sizeof png, "%s/never.png", dir);
    snprintf(bad, sizeof bad, "%s/bad.kst", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(cmd, sizeof cmd, "head -c 100 %s > %s", path, bad);
    ck_assert_int_eq(vf_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s view %s --png %s 2> %s", KS_CLI, bad, png, err);
    ck_assert_int_eq(vf_sh(cmd), 2);
    ck_assert_int_ne(access(png, F_OK), 0);
    FILE *e = fopen(err, "r");
    char line[512] = "", more[8];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, e));
    ck_assert_ptr_null(fgets(more, sizeof more, e)); /* one line */
    fclose(e);
    ck_assert_ptr_nonnull(strstr(line, "kscope: view: "));
    ck_assert_ptr_nonnull(strstr(line, "bad.kst"));
    const char *bad_args[] = {"--goto index=999", "--order sideways", "--keys Nope",
                              "--size 10x10",     "--headless",       "--every 0 --frames x"};
    for (size_t i = 0; i < sizeof bad_args / sizeof bad_args[0]; ++i) {
        snprintf(cmd, sizeof cmd, "%s view %s %s --png %s 2> %s", KS_CLI, path, bad_args[i],
                 strstr(bad_args[i], "headless") ? "" : png, err);
        if (strstr(bad_args[i], "headless"))
            snprintf(cmd, sizeof cmd, "%s view %s --headless 2> %s", KS_CLI, path, err);
        ck_assert_msg(vf_sh(cmd) == 2, "%s", bad_args[i]);
        ck_assert_int_ne(access(png, F_OK), 0);
    }
    remove_dir();
}
END_TEST

START_TEST(empty_single_dropped_and_huge_traces_render)
{
    char cmd[1024], png[400], frames[300];
    make_dir();
    snprintf(png, sizeof png, "%s/odd.png", dir);
    ks_filter none = ks_filter_all(), one = ks_filter_all();
    none.index_lo = none.index_hi = 3; /* records nothing */
    one.index_lo = 3;
    one.index_hi = 4;
    ks_im2col_params big = {.batch = 1,
                            .channels = 1,
                            .height = 1500,
                            .width = 1300,
                            .kernel_h = 1,
                            .kernel_w = 1,
                            .pad_h = 0,
                            .pad_w = 0,
                            .stride_h = 1,
                            .stride_w = 1,
                            .dilation_h = 1,
                            .dilation_w = 1};
    struct {
        ks_im2col_params p;
        ks_filter f;
        unsigned long long limit;
        const char *op;
    } cases[] = {{.p = vf_small(), .f = none, .limit = 0, .op = "im2col"},
                 {.p = vf_small(), .f = one, .limit = 1, .op = "im2col"},
                 {.p = vf_small(), .f = ks_filter_all(), .limit = 40, .op = "col2im"},
                 {.p = big, .f = one, .limit = 0, .op = "im2col"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        vf_write_trace(path, cases[i].op, cases[i].p, cases[i].f, cases[i].limit);
        snprintf(cmd, sizeof cmd, "%s view %s --png %s --keys Right,2,Right,O,M,Left > /dev/null", KS_CLI, path, png);
        ck_assert_msg(vf_sh(cmd) == 0, "case %zu", i);
        SDL_Surface *img = vf_load(png);
        ck_assert_ptr_nonnull(img);
        SDL_FreeSurface(img);
        remove(png);
    }
    /* a sequence of frames */
    vf_write_trace(path, "im2col", vf_small(), ks_filter_all(), 0);
    snprintf(frames, sizeof frames, "%s/frames", dir);
    snprintf(cmd, sizeof cmd, "%s view %s --frames %s --every 100 > /dev/null", KS_CLI, path, frames);
    ck_assert_int_eq(vf_sh(cmd), 0);
    for (int k = 0; k < 10; ++k) { /* 950 events: positions 0, 100, ..., 900 */
        snprintf(png, sizeof png, "%s/frame-%06d.png", frames, k);
        ck_assert_msg(access(png, F_OK) == 0, "%s", png);
    }
    snprintf(png, sizeof png, "%s/frame-%06d.png", frames, 10);
    ck_assert_int_ne(access(png, F_OK), 0);
    remove_dir();
}
END_TEST

/* kscope lesson --frames: one slide per step and one more per question, at the lesson
 * size; a question's answer slide differs from it only in the narration band. */
START_TEST(lesson_frames_are_slides_of_every_step)
{
    char cmd[1024], png[400], frames[300];
    make_dir();
    snprintf(frames, sizeof frames, "%s/slides", dir);
    snprintf(cmd, sizeof cmd, "KSCOPE_LESSONS=%s/lessons %s lesson 03 --frames %s > /dev/null", KS_SOURCE_DIR, KS_CLI,
             frames);
    ck_assert_int_eq(vf_sh(cmd), 0);
    for (int k = 1; k <= 10; ++k) {
        snprintf(png, sizeof png, "%s/step-%02d.png", frames, k);
        SDL_Surface *img = vf_load(png);
        ck_assert_msg(img != NULL, "%s", png);
        ck_assert_int_eq(img->w, 1280);
        ck_assert_int_eq(img->h, 960);
        SDL_FreeSurface(img);
    }
    int answers = 0;
    for (int k = 1; k <= 10; ++k) {
        snprintf(png, sizeof png, "%s/step-%02d-answer.png", frames, k);
        answers += access(png, F_OK) == 0;
    }
    ck_assert_int_eq(answers, 6); /* lesson 03 asks 6 questions */
    snprintf(png, sizeof png, "%s/step-02.png", frames);
    SDL_Surface *q = vf_load(png);
    snprintf(png, sizeof png, "%s/step-02-answer.png", frames);
    SDL_Surface *a = vf_load(png);
    /* a question and its answer share one layout (each slide is laid out for its own
     * text): the band is where its fill is, the status line (its keys: A shows / hides
     * the answer) the bar at the bottom */
    int bx0 = 1280, by0 = 960, bx1 = -1, by1 = -1, status = 960;
    for (int y = 0; y < 960; ++y)
        for (int x = 0; x < 1280; ++x)
            if (vf_at(q, x, y) == 0x1C2230)
                bx0 = x < bx0 ? x : bx0, by0 = y < by0 ? y : by0, bx1 = x > bx1 ? x : bx1, by1 = y > by1 ? y : by1;
    while (status > 0 && vf_at(q, 1, status - 1) == 0x2A2A40) status--;
    ck_assert_int_gt(bx1, bx0);
    ck_assert_int_lt(status, 960);
    int differ_in_band = 0, differ_above = 0;
    for (int y = 0; y < 960; ++y)
        for (int x = 0; x < 1280; ++x)
            if (vf_at(q, x, y) != vf_at(a, x, y)) {
                if ((x >= bx0 - 1 && x <= bx1 + 1 && y >= by0 - 1 && y <= by1 + 1) || y >= status) differ_in_band++;
                else differ_above++;
            }
    ck_assert_int_gt(differ_in_band, 100);
    ck_assert_int_eq(differ_above, 0);
    SDL_FreeSurface(q);
    SDL_FreeSurface(a);
    remove_dir();
}
END_TEST


/* W: the warp strip carved out of the decomposition panel; the focused access's lane box
 * in its sector's colour, outlined in cyan; without W the panel is as before */
START_TEST(warp_strip_colours_the_focused_lane_by_its_sector)
{
    make_dir();
    open_at("index=7", 1); /* tap 0's read, inside the plane */
    const uint32_t ev = vw_state_event(&o.s);
    ck_assert_int_eq(o.tr.events[ev].kind, KS_EV_READ);
    vw_rect dec = o.f.L.decomp;
    const vw_rect strip = vw_strip_area(&dec, o.f.L.line);
    vw_rect lanes, axis;
    vw_strip_parts(strip, o.f.L.line, &lanes, &axis);
    static vw_warp w;
    ck_assert_int_eq(vw_warp_build(&o.tr, ev, &w), 0);
    ck_assert(w.ok);
    int k = 0;
    while (w.acc[k].event != ev) ++k;
    const vw_rect box = vw_strip_lane(lanes, (int)w.acc[k].lane);
    const uint32_t want = vw_warp_color(w.sector[k]);
    ck_assert_uint_ne(vf_pixel(o.f.surf, box.x + box.w / 2, box.y + box.h / 2), want); /* no strip yet */
    vw_action key;
    ck_assert_int_eq(vw_key_action("W", 0, &key), 0);
    vw_apply(&o.s, &o.f.L, &key);
    vw_draw_frame(&o.f.d, &o.s, &o.f.L, 1000);
    SDL_RenderPresent(o.f.r);
    ck_assert_uint_eq(vf_pixel(o.f.surf, box.x + box.w / 2, box.y + box.h / 2), want);
    ck_assert_uint_eq(vf_pixel(o.f.surf, box.x - 2, box.y + box.h / 2), VW_COL_FOCUS);
    /* its access on the axis, in the same colour */
    const int ax = axis.x + (int)vw_warp_axis(&w, w.acc[k].byte, axis.w);
    ck_assert_uint_eq(vf_pixel(o.f.surf, ax + 1, axis.y + 3), want);
    close_opened();
    remove_dir();
}
END_TEST

/* Every bar's middle in its block's colour, the focused item's block outlined in cyan. */
static void check_bars(SDL_Surface *surf, const vw_gantt *g, vw_rect plot, int64_t focus)
{
    for (int64_t i = 0; i < g->nbars; ++i) {
        const vw_rect r = vw_gantt_bar_rect(g, plot, i);
        ck_assert_msg(vf_pixel(surf, r.x + r.w / 2, r.y + r.h / 2) == vw_gantt_color(g, g->bars[i].block), "block %lld",
                      (long long)g->bars[i].block);
    }
    const vw_rect f = vw_gantt_bar_rect(g, plot, vw_gantt_find(g, focus));
    ck_assert_uint_eq(vf_pixel(surf, f.x + f.w / 2, f.y - 2), VW_COL_FOCUS);
    ck_assert_uint_eq(vf_pixel(surf, f.x + f.w / 2, f.y + f.h + 1), VW_COL_FOCUS);
}

START_TEST(schedule_chart_draws_bars_and_outlines_the_focused_block)
{
    static ct_trace ct;
    static int64_t sched[7][4];
    gf_trace(&ct, sched, 1);
    vw_index idx;
    ck_assert_int_eq(vw_index_build(&idx, &ct.tr, NULL), KS_OK);
    vf_frame f;
    vf_open(&f, 1280, 800);
    vw_state s;
    vw_state_init(&s, &ct.tr, &idx);
    ck_assert_int_eq(vw_goto(&s, "index=8"), KS_OK); /* block 4, on SM 2 */
    vw_action c;
    ck_assert_int_eq(vw_key_action("C", 0, &c), 0);
    vw_apply(&s, &f.L, &c);
    vw_draw_frame(&f.d, &s, &f.L, 1000);
    SDL_RenderPresent(f.r);
    check_bars(f.surf, &s.sched, vw_gantt_area(&f.L), 4);
    /* C again: the grid is back, no bar colour where block 4's bar was */
    const vw_rect b4 = vw_gantt_bar_rect(&s.sched, vw_gantt_area(&f.L), vw_gantt_find(&s.sched, 4));
    vw_apply(&s, &f.L, &c);
    vw_draw_frame(&f.d, &s, &f.L, 1000);
    SDL_RenderPresent(f.r);
    ck_assert_uint_ne(vf_pixel(f.surf, b4.x + b4.w / 2, b4.y + b4.h / 2), vw_gantt_color(&s.sched, 4));
    vw_state_free(&s);
    vf_close(&f);
    vw_index_free(&idx);
}
END_TEST

START_TEST(cli_schedule_chart_of_a_simulator_run)
{
    char cmd[1024], png[300], kst[300];
    make_dir();
    snprintf(kst, sizeof kst, "%s/s.kst", dir);
    snprintf(png, sizeof png, "%s/s.png", dir);
    snprintf(cmd, sizeof cmd,
             "%s run im2col --channels 2 --input-size 8,8 --threads 32 --trace %s --schedule > /dev/null", KS_CLI, kst);
    ck_assert_int_eq(vf_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s view %s --goto index=70 --keys C --text-size 13 --png %s > /dev/null", KS_CLI, kst,
             png);
    ck_assert_int_eq(vf_sh(cmd), 0);
    ks_trace tr;
    ck_assert_int_eq(ks_trace_open(kst, &tr), KS_OK);
    vw_gantt g;
    ck_assert_int_eq(vw_gantt_build(&g, &tr), KS_OK);
    ck_assert(g.ok && g.nrows == 1 && g.row_sm[0] == -1 && g.nbars == tr.blocks);
    vf_frame f;
    vf_open(&f, 1280, 800); /* the layout the CLI used (--text-size 13) */
    SDL_Surface *img = vf_load(png);
    ck_assert_ptr_nonnull(img);
    check_bars(img, &g, vw_gantt_area(&f.L), 70 / 32);
    SDL_FreeSurface(img);
    vf_close(&f);
    vw_gantt_free(&g);
    ks_trace_close(&tr);
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_render");
    TCase *tc = tcase_create("view_render");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, focused_read_is_outlined_where_the_layout_puts_its_cell);
    tcase_add_test(tc, warp_strip_colours_the_focused_lane_by_its_sector);
    tcase_add_test(tc, heatmap_cells_show_the_colormap_of_their_values);
    tcase_add_test(tc, sample_points_and_their_corners_are_drawn_at_their_coordinates);
    tcase_add_test(tc, cli_png_is_the_frame_rendered_in_process);
    tcase_add_test(tc, bad_traces_fail_with_the_readers_error_and_write_nothing);
    tcase_add_test(tc, empty_single_dropped_and_huge_traces_render);
    tcase_add_test(tc, lesson_frames_are_slides_of_every_step);
    tcase_add_test(tc, schedule_chart_draws_bars_and_outlines_the_focused_block);
    tcase_add_test(tc, cli_schedule_chart_of_a_simulator_run);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
