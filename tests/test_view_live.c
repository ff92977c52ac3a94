/* Live parameters (viewer/vw_live.h), headless: a changed kernel size or stride re-runs
 * im2col on the same random input, and the new trace's work items and columns match the
 * output-size formula and a direct im2col computed here; the focus stays on its work
 * index (else the nearest); refused values keep the old trace and show the error; inputs
 * that no longer fit are built in and said; D brings back the opened trace and a lesson's
 * slides; T writes the shown trace; every operator's every parameter steps without harm;
 * the panel's pixels. */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../trace/run_params.h"
#include "../viewer/vw_live.h"
#include "../viewer/vw_script.h"
#include "view_fixture.h"

/* im2col on a random (2, 3, 7, 6) input, 3x3, padding 1: odd sizes, two images. */
static const ks_im2col_params geometry = {.batch = 2,
                                          .channels = 3,
                                          .height = 7,
                                          .width = 6,
                                          .kernel_h = 3,
                                          .kernel_w = 3,
                                          .pad_h = 1,
                                          .pad_w = 1,
                                          .stride_h = 1,
                                          .stride_w = 1,
                                          .dilation_h = 1,
                                          .dilation_w = 1};

typedef struct fixture {
    ks_run run;
    ks_trace tr;
    vw_index idx;
    vw_state s;
    vw_live live;
    vw_layout L;
} fixture;

static fixture F; /* large: off the stack */

static void open_trace(const char *op_name, const ks_im2col_params *p)
{
    memset(&F, 0, sizeof F);
    if (p) {
        tu_run_traced(&F.run, op_name, p, ks_filter_all(), 0, 64, -1);
    } else { /* the operator's defaults */
        ks_run_init(&F.run, ks_op_find(op_name));
        F.run.sink = ks_host_sink_create(0, ks_filter_all());
        ck_assert_msg(ks_run_execute(&F.run) == KS_OK, "%s: %s", op_name, ks_error_message());
    }
    ks_trace_from_run(F.run.op, &F.run, &F.tr);
    ck_assert_int_eq(vw_index_build(&F.idx, &F.tr, NULL), KS_OK);
    vw_state_init(&F.s, &F.tr, &F.idx);
    ck_assert_int_eq(vw_live_init(&F.live, &F.tr), KS_OK);
    F.s.live = &F.live;
    vw_layout_compute(&F.L, 1280, 800, 17);
}

static void close_trace(void)
{
    vw_state_free(&F.s);
    vw_live_free(&F.live);
    vw_index_free(&F.idx);
    tu_run_done(&F.run);
}

/* A key as the window and --keys scripts give it. */
static void key(const char *name)
{
    vw_action a;
    ck_assert_int_eq(vw_key_action(name, 0, &a), 0);
    vw_apply(&F.s, &F.L, &a);
}

/* Selects parameter `name` on the open panel with J / K. */
static void select_param(const char *name)
{
    const int p = ks_op_param(F.live.op, name);
    ck_assert_int_ge(p, 0);
    while (F.live.sel < p) key("J");
    while (F.live.sel > p) key("K");
}

static int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil)
{
    return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

/* The shown trace is im2col of the opened trace's input with kernel k, stride st (both
 * axes), padding 1, dilation 1: its work items, columns shape and every column entry. */
static void expect_im2col(int64_t k, int64_t st)
{
    const ks_im2col_params *g = &geometry;
    const ks_trace *tr = F.s.tr;
    const int64_t Ho = out_size(g->height, k, g->pad_h, st, 1), Wo = out_size(g->width, k, g->pad_w, st, 1);
    ck_assert_int_eq(tr->work_items, g->batch * g->channels * Ho * Wo);
    ck_assert_uint_eq(F.s.idx->nitems, (uint32_t)(g->batch * g->channels * Ho * Wo));
    const int ti = ks_trace_tensor(tr, "input"), tc = ks_trace_tensor(tr, "columns");
    const ks_tensor *in = &tr->tensors[ti], *col = &tr->tensors[tc];
    ck_assert_int_eq(col->ndim, 3);
    ck_assert_int_eq(col->shape[0], g->batch);
    ck_assert_int_eq(col->shape[1], g->channels * k * k);
    ck_assert_int_eq(col->shape[2], Ho * Wo);
    /* the same input: the opened trace's random values */
    const ks_tensor *in0 = &F.tr.tensors[ks_trace_tensor(&F.tr, "input")];
    ck_assert_int_eq(ks_tensor_numel(in), ks_tensor_numel(in0));
    ck_assert_int_eq(memcmp(in->data, in0->data, (size_t)ks_tensor_numel(in0) * sizeof(float)), 0);
    const float *x = in->data, *c = col->data;
    int64_t nonzero = 0;
    for (int64_t n = 0; n < g->batch; ++n)
        for (int64_t ch = 0; ch < g->channels; ++ch)
            for (int64_t i = 0; i < k; ++i)
                for (int64_t j = 0; j < k; ++j)
                    for (int64_t ho = 0; ho < Ho; ++ho)
                        for (int64_t wo = 0; wo < Wo; ++wo) {
                            const int64_t y = ho * st - g->pad_h + i, xx = wo * st - g->pad_w + j;
                            const float want = y >= 0 && y < g->height && xx >= 0 && xx < g->width
                                                   ? x[((n * g->channels + ch) * g->height + y) * g->width + xx]
                                                   : 0.0f;
                            const float got =
                                c[(n * g->channels * k * k + (ch * k + i) * k + j) * Ho * Wo + ho * Wo + wo];
                            ck_assert_float_eq(got, want);
                            nonzero += want != 0.0f;
                        }
    ck_assert_int_gt(nonzero, 0);
}

START_TEST(kernel_size_and_stride_rerun_im2col_with_the_formula_s_shapes)
{
    open_trace("im2col", &geometry);
    key("L");
    ck_assert(F.live.open);
    select_param("kernel-size");
    key(".");
    ck_assert_msg(F.s.tr != &F.tr, "%s | %s", F.live.error, F.s.message);
    ck_assert_str_eq(F.live.error, "");
    expect_im2col(4, 1);
    select_param("stride");
    key("Period");
    expect_im2col(4, 2);
    key("Comma"); /* stride 1 again */
    expect_im2col(4, 1);
    select_param("kernel-size");
    key(",");
    key(","); /* kernel 2 */
    expect_im2col(2, 1);
    close_trace();
}
END_TEST

/* The focused item's work index and which of its events is focused. */
static void focused(int64_t *index, uint32_t *k)
{
    const uint32_t it = vw_state_item(&F.s), ev = vw_state_event(&F.s);
    ck_assert_uint_ne(it, VW_NONE);
    const vw_item *item = &F.s.idx->items[it];
    *index = item->index;
    for (*k = 0; *k < item->count && vw_item_ev(F.s.idx, item, *k) != ev; ++*k) {}
}

START_TEST(focus_stays_on_the_same_work_index_else_the_nearest)
{
    open_trace("im2col", &geometry);
    ck_assert_int_eq(vw_set_order(&F.s, "iter"), KS_OK);
    ck_assert_int_eq(vw_goto(&F.s, "index=41"), KS_OK);
    for (int i = 0; i < 5; ++i) key("Right");
    int64_t index;
    uint32_t k;
    focused(&index, &k);
    ck_assert_int_eq(index, 41);
    ck_assert_uint_eq(k, 5);
    key("L");
    select_param("kernel-size");
    key("."); /* 2 * 3 * 6 * 5 = 180 items: 41 is still there */
    focused(&index, &k);
    ck_assert_int_eq(index, 41);
    ck_assert_uint_eq(k, 5);
    ck_assert_int_eq(F.s.order, VW_ORDER_ITER);
    ck_assert_int_eq(vw_goto(&F.s, "index=179"), KS_OK);
    select_param("stride");
    key("."); /* 2 * 3 * 3 * 3 = 54 items: 179 is gone, 53 is the nearest */
    focused(&index, &k);
    ck_assert_int_eq(index, 53);
    ck_assert_uint_eq(k, 0);
    ck_assert_ptr_nonnull(strstr(F.s.message, "179 is gone"));
    close_trace();
}
END_TEST

/* The panel's lines hold a line of style `style` containing `text`. */
static int panel_says(int style, const char *text)
{
    static vw_lines lines;
    vw_live_lines(&F.live, &lines, 40);
    for (int i = 0; i < lines.n; ++i)
        if (lines.style[i] == style && strstr(lines.text[i], text)) return 1;
    return 0;
}

START_TEST(refused_values_keep_the_old_trace_and_show_the_error)
{
    open_trace("im2col", &geometry);
    key("L");
    select_param("stride");
    const uint64_t n = F.s.tr->nevents;
    const uint64_t pos = F.s.pos;
    key(","); /* stride 0: the registry refuses it */
    ck_assert_ptr_eq(F.s.tr, &F.tr);
    ck_assert_uint_eq(F.s.tr->nevents, n);
    ck_assert_uint_eq(F.s.pos, pos);
    ck_assert_ptr_nonnull(strstr(F.live.error, "--stride must be >= 1"));
    ck_assert(panel_says(VW_LIVE_STYLE_ERROR, "--stride must be >= 1"));
    ck_assert_ptr_nonnull(strstr(F.s.message, "--stride must be >= 1"));
    ck_assert(panel_says(VW_STYLE_FOCUS, "stride")); /* the value shown stays 1,1 */
    ck_assert(panel_says(VW_STYLE_FOCUS, "1,1"));
    /* the operator refuses a kernel larger than the padded input (6 + 2 < 9) */
    select_param("kernel-size");
    for (int k = 4; k <= 8; ++k) key(".");
    ck_assert_str_eq(F.live.error, "");
    const ks_trace *kept = F.s.tr;
    const uint64_t kept_n = kept->nevents;
    expect_im2col(8, 1);
    key(".");
    ck_assert_ptr_eq(F.s.tr, kept);
    ck_assert_uint_eq(F.s.tr->nevents, kept_n);
    ck_assert_str_ne(F.live.error, "");
    ck_assert(panel_says(VW_LIVE_STYLE_ERROR, "refused"));
    expect_im2col(8, 1);
    key("."); /* the value shown stayed 8: 9 again, refused again */
    ck_assert_ptr_eq(F.s.tr, kept);
    key(","); /* 7: runs, and the error goes */
    expect_im2col(7, 1);
    ck_assert_str_eq(F.live.error, "");
    close_trace();
}
END_TEST

START_TEST(inputs_that_no_longer_fit_are_built_in_and_said)
{
    open_trace("im2col", &geometry);
    key("L");
    select_param("channels");
    key("."); /* 4 channels: the trace's (2, 3, 7, 6) input no longer fits */
    ck_assert_str_eq(F.live.error, "");
    ck_assert_int_eq(F.s.tr->work_items, 2 * 4 * 7 * 6);
    const ks_tensor *in = &F.s.tr->tensors[ks_trace_tensor(F.s.tr, "input")];
    ck_assert_int_eq(in->shape[1], 4);
    ck_assert_float_eq(((const float *)in->data)[0], 1.0f); /* the built-in arange */
    ck_assert_ptr_nonnull(strstr(F.live.note, "built-in input"));
    ck_assert(panel_says(VW_STYLE_DIM, "built-in input"));
    key(","); /* 3 again: the trace's input fits again and is used */
    ck_assert_str_eq(F.live.note, "");
    expect_im2col(3, 1);
    close_trace();
}
END_TEST

START_TEST(revert_brings_back_the_opened_trace_and_a_lesson_s_slides)
{
    open_trace("im2col", &geometry);
    vw_slide slides[2];
    memset(slides, 0, sizeof slides);
    for (int i = 0; i < 2; ++i) {
        slides[i].title = "step";
        slides[i].text = "text";
        slides[i].event = (uint32_t)(10 + i);
        slides[i].look_tensor = -1;
        slides[i].panel[0] = slides[i].panel[1] = -1;
        slides[i].mode = -1;
    }
    vw_story_set(&F.s, slides, 2);
    key("PageDown");
    ck_assert_int_eq(F.s.slide, 1);
    key("L");
    select_param("padding");
    key(",");
    ck_assert_ptr_ne(F.s.tr, &F.tr);
    ck_assert_int_eq(F.s.nslides, 0); /* the narration is about the opened trace */
    ck_assert_int_eq(F.s.tr->work_items, 2 * 3 * 5 * 4);
    key("D");
    ck_assert_ptr_eq(F.s.tr, &F.tr);
    ck_assert_ptr_eq(F.s.idx, &F.idx);
    ck_assert_int_eq(F.s.nslides, 2);
    ck_assert_int_eq(F.s.slide, 1);
    ck_assert_uint_eq(vw_state_event(&F.s), 11);
    ck_assert(panel_says(VW_STYLE_FOCUS, "1,1")); /* padding shown as opened */
    close_trace();
}
END_TEST

START_TEST(t_writes_the_shown_trace)
{
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/ks_live_%d", (int)getpid());
    mkdir(dir, 0777);
    open_trace("im2col", &geometry);
    F.live.dir = dir;
    key("T"); /* the panel is closed: T is not the viewer's key then, nothing is written */
    snprintf(path, sizeof path, "%s/kscope-live-001.kst", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_str_eq(F.s.message, "L opens the live parameters");
    key("L");
    select_param("dilation");
    key(".");
    key("T");
    snprintf(path, sizeof path, "%s/kscope-live-001.kst", dir);
    static ks_trace back;
    ck_assert_msg(ks_trace_open(path, &back) == KS_OK, "%s", ks_error_message());
    ck_assert_uint_eq(back.nevents, F.s.tr->nevents);
    ck_assert_int_eq(back.work_items, 2 * 3 * 5 * 4); /* dilation 2: Ho = 7 + 2 - 4 - 1 + 1 */
    ks_trace_close(&back);
    remove(path);
    rmdir(dir);
    close_trace();
}
END_TEST

/* gemm_tiled's block is its tile: a trace of the default launch (16 x 16 threads) re-runs
 * with --tile 32 on 32 x 32 threads, and the new c is A B of the same inputs. */
START_TEST(the_tile_of_gemm_tiled_changes_live)
{
    open_trace("gemm_tiled", NULL);
    ck_assert_int_eq(F.tr.threads, 256);
    key("L");
    select_param("tile");
    key(".");
    ck_assert_msg(F.s.tr != &F.tr && !F.live.error[0], "%s | %s", F.live.error, F.s.message);
    ck_assert_int_eq(F.s.tr->threads, 1024);
    const ks_tensor *a = &F.s.tr->tensors[ks_trace_tensor(F.s.tr, "a")],
                    *b = &F.s.tr->tensors[ks_trace_tensor(F.s.tr, "b")],
                    *c = &F.s.tr->tensors[ks_trace_tensor(F.s.tr, "c")];
    const int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
    ck_assert_int_eq(c->shape[0] * c->shape[1], M * N);
    const float *A = a->data, *B = b->data, *C = c->data;
    int nonzero = 0;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double want = 0; /* small integers: exact in float */
            for (int64_t k = 0; k < K; ++k) want += (double)A[i * K + k] * B[k * N + j];
            ck_assert_msg(C[i * N + j] == want, "c[%lld, %lld] = %g, want %g", (long long)i, (long long)j, C[i * N + j],
                          want);
            nonzero += want != 0;
        }
    ck_assert_int_gt(nonzero, 0);
    key(","); /* back to 16: 256 threads again */
    ck_assert_int_eq(F.s.tr->threads, 256);
    close_trace();
}
END_TEST

/* Every parameter of every operator's default trace, one step up and one down: either a
 * new trace of the same operator with the focus inside it, or the old one and an error. */
START_TEST(every_operator_s_parameters_step_or_refuse)
{
    for (int o = 0; o < ks_op_count(); ++o) {
        const ks_op *op = ks_op_at(o);
        open_trace(op->name, NULL);
        ck_assert_ptr_eq(F.live.op, op);
        key("L");
        for (int p = 0; p < op->nparams; ++p) {
            select_param(op->params[p].name);
            for (int dir = 0; dir < 2; ++dir) {
                const ks_trace *before = F.s.tr;
                key(dir ? "," : ".");
                ck_assert_msg(F.s.tr != before || F.live.error[0], "%s --%s: neither a re-run nor an error", op->name,
                              op->params[p].name);
                ck_assert_str_eq(F.s.tr->op, op->name);
                ck_assert(vw_state_len(&F.s) == 0 || F.s.pos < vw_state_len(&F.s));
            }
        }
        close_trace();
    }
}
END_TEST

START_TEST(keys_and_scripts_reach_the_panel_and_unknown_operators_say_why)
{
    vw_action *acts = NULL;
    size_t n = 0;
    ck_assert_int_eq(vw_script_parse("L,J,K,Period,Comma,.,D,T", &acts, &n), KS_OK);
    ck_assert_uint_eq(n, 8); /* "," separates steps: "." stands alone, Comma names "," */
    static const int64_t cmd[] = {VW_LIVE_PANEL, VW_LIVE_SELECT, VW_LIVE_SELECT, VW_LIVE_STEP,
                                  VW_LIVE_STEP,  VW_LIVE_STEP,   VW_LIVE_REVERT, VW_LIVE_SAVE};
    static const int64_t dir[] = {0, 1, -1, 1, -1, 1, 0, 0};
    for (size_t i = 0; i < n; ++i) {
        ck_assert_int_eq(acts[i].kind, VW_ACT_LIVE);
        ck_assert_int_eq(acts[i].a, cmd[i]);
        ck_assert_int_eq(acts[i].b, dir[i]);
    }
    free(acts);
    /* a trace of an operator this build does not know (a user's own kernel) */
    open_trace("im2col", &geometry);
    static ks_trace mine;
    mine = F.tr;
    snprintf(mine.op, sizeof mine.op, "my_kernel");
    static vw_live none;
    ck_assert_int_eq(vw_live_init(&none, &mine), KS_OK);
    ck_assert_ptr_null(none.op);
    ck_assert_ptr_nonnull(strstr(none.why, "my_kernel"));
    vw_live *keep = F.s.live;
    F.s.live = &none;
    key("L");
    ck_assert(none.open);
    key(".");
    ck_assert_ptr_nonnull(strstr(F.s.message, "no live parameters"));
    ck_assert_ptr_eq(F.s.tr, &F.tr);
    F.s.live = keep;
    vw_live_free(&none);
    close_trace();
}
END_TEST

START_TEST(panel_is_drawn_over_the_grid_with_the_selected_row_and_the_error)
{
    open_trace("im2col", &geometry);
    vf_frame f;
    vf_open(&f, 1280, 800);
    F.L = f.L;
    const vw_rect a = vw_live_area(&f.L);
    vw_draw_frame(&f.d, &F.s, &f.L, 1000);
    ck_assert_uint_ne(vf_pixel(f.surf, a.x + a.w - 4, a.y + a.h / 2), 0x141C24); /* closed: the grid */
    key("L");
    select_param("stride");
    key(",");
    vw_draw_frame(&f.d, &F.s, &f.L, 1000);
    ck_assert_uint_eq(vf_pixel(f.surf, a.x, a.y + a.h / 2), VW_COL_HEAD); /* the outline */
    ck_assert_uint_eq(vf_pixel(f.surf, a.x + a.w - 4, a.y + a.h - 4), 0x141C24);
    /* the selected row (line 2 + its number) has its band; the row above does not */
    const int line = f.d.font.line, sel = 2 + ks_op_param(F.live.op, "stride");
    ck_assert_uint_eq(vf_pixel(f.surf, a.x + a.w - 4, a.y + 3 + sel * line + line / 2), 0x203A48);
    ck_assert_uint_eq(vf_pixel(f.surf, a.x + a.w - 4, a.y + 3 + (sel - 1) * line + line / 2), 0x141C24);
    /* the error line is red: some pixel of the panel has the colour */
    int red = 0;
    for (int y = a.y; y < a.y + a.h; ++y)
        for (int x = a.x; x < a.x + a.w / 2; ++x) red += vf_pixel(f.surf, x, y) == VW_COL_INVALID;
    ck_assert_int_gt(red, 10);
    /* a re-run redraws the heatmaps from the new trace: the columns panel changes size */
    select_param("kernel-size");
    key(".");
    vw_draw_frame(&f.d, &F.s, &f.L, 1000);
    ck_assert_int_eq(f.d.live_gen, F.live.gen);
    vf_close(&f);
    close_trace();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("view_live");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, kernel_size_and_stride_rerun_im2col_with_the_formula_s_shapes);
    tcase_add_test(tc, focus_stays_on_the_same_work_index_else_the_nearest);
    tcase_add_test(tc, refused_values_keep_the_old_trace_and_show_the_error);
    tcase_add_test(tc, inputs_that_no_longer_fit_are_built_in_and_said);
    tcase_add_test(tc, revert_brings_back_the_opened_trace_and_a_lesson_s_slides);
    tcase_add_test(tc, t_writes_the_shown_trace);
    tcase_add_test(tc, every_operator_s_parameters_step_or_refuse);
    tcase_add_test(tc, the_tile_of_gemm_tiled_changes_live);
    tcase_add_test(tc, keys_and_scripts_reach_the_panel_and_unknown_operators_say_why);
    tcase_add_test(tc, panel_is_drawn_over_the_grid_with_the_selected_row_and_the_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run_suite(suite(), CK_FORK); }
