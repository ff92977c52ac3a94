/* Headless frames of traces with sites, checked by their pixels: an integer plane's -1
 * cells are background and its values start a quarter up the ramp; region points are
 * rings labelled with their tap, with an arrow from the input site to where the output site
 * sits; a one-row plane gets bars as high as its values (B hides them); the visits heatmap;
 * the command line takes --mode visits and --unit field. */
#include <sys/stat.h>
#include <unistd.h>

#include "../viewer/vw_boxes.h"
#include "../viewer/vw_plane.h"
#include "crafted_trace.h"
#include "view_fixture.h"

static ks_run run;
static ks_trace tr;
static vw_index idx;
static vw_state s;
static vf_frame f;

static const char *const subm[] = {"subm", "on", NULL};

/* sparse_conv on the simulator, traced, with flags as name, value pairs; a frame of it */
static void sparse_open(const char *const *flags)
{
    const ks_op *op = ks_op_find("sparse_conv");
    ks_run_init(&run, op);
    for (int i = 0; flags[i]; i += 2) ck_assert_int_eq(ks_run_set(&run, flags[i], flags[i + 1]), KS_OK);
    run.sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_msg(ks_run_execute(&run) == KS_OK, "%s", ks_error_message());
    ks_trace_from_run(op, &run, &tr);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    vw_state_init(&s, &tr, &idx);
    vf_open(&f, 1280, 800);
}

static void sparse_close(void)
{
    vf_close(&f);
    vw_state_free(&s);
    vw_index_free(&idx);
    tu_run_done(&run);
}

static void draw(void)
{
    vw_draw_frame(&f.d, &s, &f.L, 1000);
    SDL_RenderPresent(f.r);
}

static int tensor_named(const char *name)
{
    for (int t = 0; t < tr.ntensors; ++t)
        if (!strcmp(tr.tensors[t].name, name)) return t;
    ck_abort_msg("no tensor %s", name);
    return -1;
}

/* Pixels of colour c in the w x h box at (x, y). */
static int count_colour(int x, int y, int w, int h, uint32_t c)
{
    int n = 0;
    for (int j = y; j < y + h; ++j)
        for (int i = x; i < x + w; ++i) n += vf_pixel(f.surf, i, j) == c;
    return n;
}

/* A crafted plane of int32 sites: (1, 4, 6), every fifth cell -1 (empty), the others their
 * offset; and the same cells as int64. */
START_TEST(empty_integer_cells_are_background_and_values_start_a_quarter_up_the_ramp)
{
    static ct_trace c;
    static int32_t v32[24];
    static int64_t v64[24];
    const int64_t shape[3] = {1, 4, 6}, out_shape[1] = {4};
    ct_init(&c, 4, 1, 1);
    ct_tensor(&c, 0, "sites", KS_ROLE_INPUT, 3, shape);
    ct_tensor(&c, 1, "out", KS_ROLE_OUTPUT, 1, out_shape);
    for (int k = 0; k < 24; ++k) v32[k] = v64[k] = k % 5 == 0 ? -1 : k;
    ct_event(&c, KS_EV_WORK, 0, 0, 0, 0, 0);
    ct_access(&c, KS_EV_READ, 0, 0, 1, 1);
    for (int dt = KS_I32; dt <= KS_I64; ++dt) {
        c.tr.tensors[0].dtype = (ks_dtype)dt;
        c.tr.tensors[0].data = dt == KS_I32 ? (void *)v32 : (void *)v64;
        ck_assert_int_eq(vw_index_build(&idx, &c.tr, NULL), KS_OK);
        vw_state_init(&s, &c.tr, &idx);
        vf_open(&f, 1280, 800);
        draw();
        const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
        const double lo = 1, hi = 23;
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 6; ++x) {
                const vw_rect r = vw_heatmap_cell(&m, y, x);
                const int k = y * 6 + x;
                const uint32_t want = k % 5 == 0 ? VW_COL_PANEL : vw_colormap(0.25 + 0.75 * (k - lo) / (hi - lo));
                ck_assert_msg(vf_pixel(f.surf, VF_FILL_X(r), VF_FILL_Y(r)) == want, "dtype %d cell %d: %06x not %06x",
                              dt, k, vf_pixel(f.surf, VF_FILL_X(r), VF_FILL_Y(r)), want);
            }
        /* the legend's ramp starts where the lowest value sits */
        ck_assert_uint_eq(vf_pixel(f.surf, f.L.input_legend.x, f.L.input_legend.y + 2), vw_colormap(0.25));
        vf_close(&f);
        vw_state_free(&s);
        vw_index_free(&idx);
    }
}
END_TEST

/* the first rulebook item whose input and output sites differ */
static uint32_t pair_item(vw_box *b, int *n, int *kin, int *kout)
{
    const int in = tensor_named("in_sites"), out = tensor_named("out_sites");
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        *n = vw_item_boxes(&tr, &idx, it, b, 8);
        *kin = *kout = -1;
        for (int k = 0; k < *n; ++k) {
            if (b[k].tensor == in) *kin = k;
            if (b[k].tensor == out) *kout = k;
        }
        if (*kin >= 0 && *kout >= 0 && (b[*kin].y0 != b[*kout].y0 || b[*kin].x0 != b[*kout].x0)) return it;
    }
    ck_abort_msg("no pair with two sites");
    return VW_NONE;
}

/* along the four directions from (px, py), within `reach` pixels, a pixel of colour c */
static int ring_around(int px, int py, int reach, uint32_t c)
{
    int sides = 0;
    static const int dir[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (int d = 0; d < 4; ++d) {
        int hit = 0;
        for (int r = 2; r <= reach && !hit; ++r) hit = vf_pixel(f.surf, px + dir[d][0] * r, py + dir[d][1] * r) == c;
        sides += hit;
    }
    return sides;
}

/* the tap label of panel p reading `tap`, from the frame's record; NULL when none */
static const vw_rec_label *tap_label(int panel, int tap)
{
    char want[12];
    snprintf(want, sizeof want, "%d", tap);
    for (int i = 0; i < f.d.rec.nlabels; ++i) {
        const vw_rec_label *l = &f.d.rec.labels[i];
        if (l->panel == panel && l->kind == VW_LABEL_TAP && !strcmp(l->text, want)) return l;
    }
    return NULL;
}

START_TEST(points_are_labelled_rings_with_an_arrow_from_input_to_output_site)
{
    vw_box b[8];
    int n, kin, kout;
    sparse_open(subm);
    const uint32_t it = pair_item(b, &n, &kin, &kout);
    vw_focus_event(&s, vw_item_ev(&idx, &idx.items[it], 0));
    draw();
    ck_assert_int_eq(s.panel[0].tensor, b[kin].tensor);
    ck_assert_int_eq(s.panel[1].tensor, b[kout].tensor);
    for (int panel = 0; panel < 2; ++panel) {
        const vw_box *p = &b[panel ? kout : kin];
        const vw_heatmap m = vw_panel_map(&s, &f.L, panel);
        int px, py;
        vw_heatmap_point(&m, p->y0, p->x0, &px, &py);
        ck_assert_int_ge(m.cell, 20);
        ck_assert_int_eq(ring_around(px, py, (int)m.cell / 2, VW_COL_HEAD), 4);
        ck_assert_int_ge(ring_around(px, py, (int)m.cell / 2, 0x000000), 3); /* its dark edge */
        /* the tap beside the cell, off its number (issue 38 D3): yellow digits on a black
         * box within a cell and a half of it, recorded as the point's tap label */
        const vw_rect cell = vw_heatmap_cell(&m, (int64_t)p->y0, (int64_t)p->x0);
        const vw_rec_label *l = tap_label(panel, p->tap);
        ck_assert_ptr_nonnull(l);
        ck_assert(!vw_rect_overlap(l->box, cell));
        ck_assert_int_le(abs(l->box.x + l->box.w / 2 - (cell.x + cell.w / 2)), (int)(1.5 * m.cell) + l->box.w / 2);
        ck_assert_int_le(abs(l->box.y + l->box.h / 2 - (cell.y + cell.h / 2)), (int)(1.5 * m.cell) + l->box.h / 2);
        ck_assert_int_gt(count_colour(l->box.x, l->box.y, l->box.w, l->box.h, VW_COL_HEAD), 0);
    }
    /* the arrow on the input panel: a marker where the output site sits, a line to it */
    const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
    int px, py, qx, qy;
    vw_heatmap_point(&m, b[kin].y0, b[kin].x0, &px, &py);
    vw_heatmap_point(&m, b[kout].y0, b[kout].x0, &qx, &qy);
    ck_assert_int_ge(ring_around(qx, qy, (int)m.cell / 2, VW_COL_HEAD), 3); /* round its number */
    const int mx = (int)(px + (qx - px) * 0.6), my = (int)(py + (qy - py) * 0.6);
    ck_assert_int_gt(count_colour(mx - 1, my - 1, 3, 3, VW_COL_HEAD), 0);
    /* the focused point is cyan */
    vw_focus_event(&s, b[kin].event);
    draw();
    ck_assert_int_eq(ring_around(px, py, (int)m.cell / 2, VW_COL_FOCUS), 4);
    /* a trace whose points all have tap 0 (an argmax): no labels */
    idx.point_taps = 0;
    draw();
    ck_assert_ptr_null(tap_label(0, b[kin].tap));
    ck_assert_ptr_null(tap_label(1, b[kout].tap));
    sparse_close();
}
END_TEST

/* pair_count (K) as bars over its row of cells, in the cells' colours, each as high as its
 * count; B takes them away */
START_TEST(a_one_row_plane_gets_bars_as_high_as_its_values)
{
    sparse_open(subm);
    const int pc = tensor_named("pair_count");
    uint32_t ev = VW_NONE;
    for (uint32_t e = 0; e < tr.nevents && ev == VW_NONE; ++e)
        if (tr.events[e].kind == KS_EV_WRITE && tr.events[e].tensor == pc) ev = e;
    ck_assert_uint_ne(ev, VW_NONE);
    vw_focus_event(&s, ev);
    draw();
    ck_assert_int_eq(s.panel[1].tensor, pc);
    const int32_t *count = tr.tensors[pc].data;
    const int64_t K = tr.tensors[pc].shape[0];
    double lo = count[0], hi = count[0];
    for (int64_t k = 1; k < K; ++k) {
        if (count[k] < lo) lo = count[k];
        if (count[k] > hi) hi = count[k];
    }
    ck_assert(lo < hi);
    const vw_heatmap m = vw_panel_map(&s, &f.L, 1);
    const vw_rect room = vw_bars_area(f.L.output, &m, f.L.line);
    const int bottom = room.y + room.h;
    ck_assert_int_gt(room.h, 40);
    for (int64_t k = 0; k < K; ++k) {
        const vw_rect cell = vw_heatmap_cell(&m, 0, k);
        const int h = (int)lround(count[k] / hi * room.h), x = cell.x + 1 + cell.w / 8;
        const uint32_t col = vw_colormap(vw_colormap_t(count[k], lo, hi));
        ck_assert_uint_eq(vf_pixel(f.surf, x, bottom - 1), col);
        ck_assert_uint_eq(vf_pixel(f.surf, x, bottom - h), col);
        ck_assert_uint_eq(vf_pixel(f.surf, x, bottom - h - 1), VW_COL_PANEL);
    }
    vw_action bars;
    ck_assert_int_eq(vw_key_action("B", 0, &bars), 0);
    vw_apply(&s, &f.L, &bars);
    draw();
    const vw_rect cell = vw_heatmap_cell(&m, 0, 0);
    ck_assert_uint_eq(vf_pixel(f.surf, cell.x + cell.w / 2, bottom - 1), VW_COL_PANEL);
    sparse_close();
}
END_TEST

/* visits over in_sites: every active site is visited once per offset (the most), the rest
 * never; cells away from the focused item's points show it */
START_TEST(the_visits_heatmap_colours_cells_by_their_points)
{
    sparse_open(subm);
    ck_assert_int_eq(vw_set_mode(&s, "visits"), KS_OK);
    vw_focus_event(&s, 0);
    draw();
    const int in = tensor_named("in_sites");
    ck_assert_int_eq(s.panel[0].tensor, in);
    const vw_plane_dims d = vw_plane_dims_of(&tr.tensors[in]);
    const int32_t *map = tr.tensors[in].data;
    const vw_heatmap m = vw_panel_map(&s, &f.L, 0);
    vw_box b[8];
    const int n = vw_item_boxes(&tr, &idx, 0, b, 8);
    int checked = 0;
    for (int64_t y = 0; y < d.h; ++y)
        for (int64_t x = 0; x < d.w; ++x) {
            int near = 0;
            for (int k = 0; k < n; ++k) near |= fabs(b[k].y0 - (double)y) < 2.5 && fabs(b[k].x0 - (double)x) < 2.5;
            if (near) continue;
            const vw_rect r = vw_heatmap_cell(&m, y, x);
            ck_assert_uint_eq(vf_pixel(f.surf, VF_FILL_X(r), VF_FILL_Y(r)),
                              vw_colormap(map[y * d.w + x] >= 0 ? 1.0 : 0.0));
            checked++;
        }
    ck_assert_int_gt(checked, 100);
    sparse_close();
}
END_TEST

START_TEST(the_command_line_takes_the_visits_mode_and_the_field_unit)
{
    char dir[64], path[128], png[128], cmd[600];
    snprintf(dir, sizeof dir, "/tmp/ks_view_sites_%d", (int)getpid());
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/s.kst", dir);
    snprintf(png, sizeof png, "%s/s.png", dir);
    sparse_open(subm);
    ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
    sparse_close();
    snprintf(cmd, sizeof cmd, "%s view %s --mode visits --unit field --keys Right,6,Left,B,B --png %s > /dev/null",
             KS_CLI, path, png);
    ck_assert_int_eq(vf_sh(cmd), 0);
    SDL_Surface *img = vf_load(png);
    ck_assert_ptr_nonnull(img);
    SDL_FreeSurface(img);
    snprintf(cmd, sizeof cmd, "%s view %s --unit offset --png %s 2> %s/err.txt", KS_CLI, path, png, dir);
    ck_assert_int_eq(vf_sh(cmd), 2);
    ck_assert_ptr_nonnull(strstr(tu_slurp(dir, "err.txt"), "field"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    vf_sh(cmd);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("view_sites_render");
    TCase *tc = tcase_create("view_sites_render");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, empty_integer_cells_are_background_and_values_start_a_quarter_up_the_ramp);
    tcase_add_test(tc, points_are_labelled_rings_with_an_arrow_from_input_to_output_site);
    tcase_add_test(tc, a_one_row_plane_gets_bars_as_high_as_its_values);
    tcase_add_test(tc, the_visits_heatmap_colours_cells_by_their_points);
    tcase_add_test(tc, the_command_line_takes_the_visits_mode_and_the_field_unit);
    suite_add_tcase(su, tc);
    return tu_run_suite(su, CK_FORK);
}
