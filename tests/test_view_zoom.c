/* Zoom, pan and auto-zoom, checked on screen rectangles and pixels: Z grows the focused
 * cell and X shrinks it back, the wheel keeps the point under the pointer, Shift+arrows
 * pan, R returns; a deformable convolution over a 96x128 picture zooms to its focused
 * sample and draws the picture as grey; the columns of a 480x640 image keep a useful
 * height. */

#include "../viewer/vw_draw_int.h"
#include "view_fixture.h"

static char dir[64], path[256];
static ks_trace tr;
static vw_index idx;
static vw_state s;
static vf_frame f;

static void open_kst(const char *kst)
{
    ck_assert_int_eq(ks_trace_open(kst, &tr), KS_OK);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    vw_state_init(&s, &tr, &idx);
    vf_open(&f, 1280, 800);
}

static void draw(void) { vf_draw(&f, &s); }

static void close_kst(void)
{
    vf_close(&f);
    vw_state_free(&s);
    vw_index_free(&idx);
    ks_trace_close(&tr);
}

static void key(const char *name, int shift)
{
    vw_action a;
    ck_assert_int_eq(vw_key_action(name, shift, &a), 0);
    vw_apply(&s, &f.L, &a);
}

static void make_dir(void) { vf_tmpdir(dir, sizeof dir, "ks_zoom"); }

static void remove_dir(void) { vf_rmdir(dir); }

static vw_rect focused_cell(void)
{
    const ks_event *e = &tr.events[vw_state_event(&s)];
    ck_assert_int_eq(e->kind, KS_EV_READ);
    const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
    return vw_heatmap_cell(&m, e->u.access.y, e->u.access.x);
}

START_TEST(zoom_keys_grow_the_focused_cell_and_pan_moves_it)
{
    make_dir();
    snprintf(path, sizeof path, "%s/t.kst", dir);
    vf_write_trace(path, "im2col", vf_small(), ks_filter_all(), 0);
    open_kst(path);
    ck_assert_int_eq(vw_goto(&s, "index=12"), KS_OK);
    key("Right", 0); /* tap 0's read, input (1, 1) */
    const vw_rect before = focused_cell();
    key("Z", 0);
    key("Z", 0);
    draw();
    const vw_rect after = focused_cell();
    ck_assert_int_gt(after.w, before.w * 3 / 2 - 2); /* 1.25 x 1.25 */
    ck_assert_int_gt(after.h, before.h * 3 / 2 - 2);
    ck_assert(vw_rect_overlap(after, vw_panel_map_area(&f.L, 0)));
    ck_assert_uint_eq(vf_pixel(f.surf, after.x, after.y + after.h / 2), VW_COL_FOCUS); /* drawn there */
    /* Shift+Right: the view moves right, the cell a quarter panel left */
    key("Right", 1);
    const vw_rect panned = focused_cell();
    const int quarter = vw_panel_map_area(&f.L, 0).w / 4;
    /* a quarter panel, or less where the plane's margin ends the view */
    ck_assert_int_lt(panned.x, after.x);
    ck_assert_int_le(after.x - panned.x, quarter + 1);
    ck_assert_int_eq(panned.w, after.w);
    /* X twice: back to the whole plane; R as well */
    key("X", 0);
    key("X", 0);
    vw_rect back = focused_cell();
    ck_assert_int_eq(back.w, before.w);
    key("Z", 0);
    key("R", 0);
    back = focused_cell();
    ck_assert(back.x == before.x && back.y == before.y && back.w == before.w && back.h == before.h);
    /* the wheel zooms around the pointer: once the plane overflows the panel both ways,
     * the plane point under the pointer stays under it */
    for (int i = 0; i < 6; ++i) key("Z", 0);
    const double out_zoom = s.panel[1].zoom;
    ck_assert_double_gt(out_zoom, 3.8);
    const vw_heatmap m0 = vw_panel_map(&s, &f.L, 0);
    const vw_rect mid = vw_heatmap_cell(&m0, 2, 2);
    const int px = mid.x + mid.w / 3, py = mid.y + mid.h / 3;
    vw_action wheel = {.kind = VW_ACT_ZOOM, .a = 1, .b = px, .c = py};
    vw_apply(&s, &f.L, &wheel);
    vw_apply(&s, &f.L, &wheel);
    const vw_heatmap m1 = vw_panel_map(&s, &f.L, 0);
    ck_assert(m1.cell > m0.cell * 1.4);
    const double fx0 = (px - m0.ox) / m0.cell, fx1 = (px - m1.ox) / m1.cell;
    const double fy0 = (py - m0.oy) / m0.cell, fy1 = (py - m1.oy) / m1.cell;
    ck_assert_msg(fabs(fx0 - fx1) * m1.cell <= 2 && fabs(fy0 - fy1) * m1.cell <= 2, "moved %.2f, %.2f cells", fx1 - fx0,
                  fy1 - fy0);
    /* the output panel was not under the pointer: unchanged */
    ck_assert_double_eq(s.panel[1].zoom, out_zoom);
    close_kst();
    remove_dir();
}
END_TEST

START_TEST(auto_zoom_shows_the_focused_sample_over_a_picture)
{
    char cmd[1024];
    make_dir();
    snprintf(path, sizeof path, "%s/d.kst", dir);
    snprintf(cmd, sizeof cmd,
             "%s run deform_im2col --image %s/lessons/images/shapes.pgm --image-size 96,128 "
             "--offset-pattern rotate --filter index=4990:5010 --trace %s > /dev/null",
             KS_CLI, KS_SOURCE_DIR, path);
    ck_assert_int_eq(vf_sh(cmd), 0);
    open_kst(path);
    ck_assert_int_eq(vw_goto(&s, "index=5001"), KS_OK);
    while (tr.events[vw_state_event(&s)].kind != KS_EV_SAMPLE) key("Right", 0);
    const ks_event *e = &tr.events[vw_state_event(&s)];
    ck_assert_int_eq(s.panel[0].tensor, e->tensor);
    draw();
    const vw_rect area = vw_panel_map_area(&f.L, 0);
    vw_heatmap m = vw_panel_map(&s, &f.L, 0);
    int px, py;
    vw_heatmap_point(&m, e->u.sample.y, e->u.sample.x, &px, &py);
    ck_assert(vw_rect_contains(area, px, py));
    ck_assert_double_ge(m.cell, 24);
    ck_assert_uint_eq(vf_pixel(f.surf, px, py), VW_COL_FOCUS);
    /* the picture as itself: a cell away from the marks is its value in grey */
    const float *v = tr.tensors[e->tensor].data;
    double by0, bx0, by1, bx1; /* the item's samples, arrows and labels lie around here */
    ck_assert(vw_focus_bbox(&s, 0, &by0, &bx0, &by1, &bx1));
    int checked = 0;
    for (int64_t y = 0; y < 96 && checked < 8; ++y)
        for (int64_t x = 0; x < 128 && checked < 8; ++x) {
            const vw_rect r = vw_heatmap_cell(&m, y, x);
            if (!vw_rect_contains(area, r.x, r.y) || !vw_rect_contains(area, r.x + r.w, r.y + r.h) ||
                (x >= bx0 - 2 && x <= bx1 + 2))
                continue;
            const int g = (int)lround(v[y * 128 + x] * 255);
            ck_assert_uint_eq(vf_pixel(f.surf, r.x + 2, r.y + 2), (uint32_t)(g << 16 | g << 8 | g));
            checked++;
        }
    ck_assert_msg(checked == 8, "%d cells checked; window cell %g, focus x %g..%g", checked, m.cell, bx0, bx1);
    /* V: auto-zoom off, the whole 96 x 128 plane in small cells; I: the colormap */
    key("V", 0);
    m = vw_panel_map(&s, &f.L, 0);
    ck_assert_double_lt(m.cell, 8);
    key("I", 0);
    draw();
    const vw_rect r = vw_heatmap_cell(&m, 10, 10);
    const uint32_t got = vf_pixel(f.surf, r.x, r.y);
    ck_assert_msg((got >> 16 & 255) != (got & 255) || (got >> 8 & 255) != (got & 255), "still grey: %06x", got);
    close_kst();
    remove_dir();
}
END_TEST

START_TEST(columns_of_a_640x480_image_keep_a_useful_height)
{
    char cmd[1024];
    make_dir();
    snprintf(path, sizeof path, "%s/c.kst", dir);
    snprintf(cmd, sizeof cmd,
             "%s run im2col --image %s/lessons/images/shapes.pgm --image-size 480,640 "
             "--filter index=150000:150010 --trace %s > /dev/null",
             KS_CLI, KS_SOURCE_DIR, path);
    ck_assert_int_eq(vf_sh(cmd), 0);
    open_kst(path);
    ck_assert_int_eq(vw_goto(&s, "index=150003"), KS_OK);
    draw();
    const int cols = ks_trace_tensor(&tr, "columns");
    ck_assert_int_eq(s.panel[1].tensor, cols);
    const vw_heatmap m = vw_panel_map(&s, &f.L, 1);
    const vw_rect area = vw_panel_map_area(&f.L, 1);
    /* all 9 rows, at least 200 px tall (fitting 307200 columns would give a 0.02 px strip) */
    ck_assert_int_ge((int)(m.cell * (double)m.rows), 200);
    const vw_rect top = vw_heatmap_cell(&m, 0, 150003), bottom = vw_heatmap_cell(&m, 8, 150003);
    ck_assert(vw_rect_contains(area, top.x + 1, top.y + 1));
    ck_assert(vw_rect_contains(area, bottom.x + bottom.w - 1, bottom.y + bottom.h - 1));
    ck_assert_uint_eq(vf_pixel(f.surf, top.x + top.w / 2, bottom.y + bottom.h - 1), VW_COL_ITEM); /* its outline */
    close_kst();
    remove_dir();
}
END_TEST

/* The plane's colour range is kept between frames while an automatic window follows the
 * focus (the plane is scanned once, not every frame): after stepping through a 36 x 4096
 * columns plane in values and in reads mode, each frame equals a fresh drawing of the same
 * state with no caches. */
START_TEST(a_window_that_follows_the_focus_draws_as_a_fresh_frame)
{
    make_dir();
    snprintf(path, sizeof path, "%s/w.kst", dir);
    ks_im2col_params p = vf_small();
    p.channels = 4, p.height = p.width = 64;
    vf_write_trace(path, "im2col", p, ks_filter_all(), 0);
    open_kst(path);
    static vf_frame g;
    vf_open(&g, 1280, 800);
    for (int mode = 0; mode < 2; ++mode) {
        ck_assert_int_eq(vw_set_mode(&s, mode ? "reads" : "values"), KS_OK);
        for (int k = 0; k < 12; ++k) {
            for (int j = 0; j < 1 + 7 * k; ++j) key("Right", 0);
            draw();
            vw_draw_free(&g.d); /* a fresh drawing context: no texture, no kept range */
            ck_assert_int_eq(vw_draw_init(&g.d, g.r, 13), KS_OK);
            vf_draw(&g, &s);
            ck_assert_int_eq(f.surf->pitch, g.surf->pitch);
            ck_assert_mem_eq(f.surf->pixels, g.surf->pixels, (size_t)f.surf->pitch * f.surf->h);
        }
    }
    ck_assert_int_eq(f.d.heat[1].range_ok, 1); /* the columns window kept its plane's range */
    vf_close(&g);
    close_kst();
    remove_dir();
}
END_TEST

/* A texture built on two threads (each half of the texel rows) is the one built on one:
 * the same frame pixel for pixel, whole plane and window, values and reads. */
START_TEST(a_texture_built_on_two_threads_is_the_one_built_on_one)
{
    make_dir();
    snprintf(path, sizeof path, "%s/t.kst", dir);
    ks_im2col_params p = vf_small();
    p.channels = 3, p.height = p.width = 40;
    vf_write_trace(path, "im2col", p, ks_filter_all(), 0);
    open_kst(path);
    static vf_frame g;
    vf_open(&g, 1280, 800);
    f.d.split_cells = 1 << 30; /* one thread */
    g.d.split_cells = 1;       /* two, for every texture */
    for (int k = 0; k < 8; ++k) {
        if (k == 4) ck_assert_int_eq(vw_set_mode(&s, "reads"), KS_OK);
        if (k % 2) key("V", 0); /* auto-zoom off: whole planes; on: windows */
        for (int j = 0; j < 37 * k; ++j) key("Right", 0);
        draw();
        vf_draw(&g, &s);
        ck_assert_mem_eq(f.surf->pixels, g.surf->pixels, (size_t)f.surf->pitch * f.surf->h);
    }
    vf_close(&g);
    close_kst();
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *su = suite_create("view_zoom");
    TCase *tc = tcase_create("view_zoom");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, zoom_keys_grow_the_focused_cell_and_pan_moves_it);
    tcase_add_test(tc, auto_zoom_shows_the_focused_sample_over_a_picture);
    tcase_add_test(tc, columns_of_a_640x480_image_keep_a_useful_height);
    tcase_add_test(tc, a_window_that_follows_the_focus_draws_as_a_fresh_frame);
    tcase_add_test(tc, a_texture_built_on_two_threads_is_the_one_built_on_one);
    suite_add_tcase(su, tc);
    return tu_run_suite(su, CK_FORK);
}
