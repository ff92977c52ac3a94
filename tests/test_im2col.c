/* im2col and col2im on the simulator against the independent reference, hand-checked
 * cases, coverage, the twin check and launch shapes. */
#include "../trace/check.h"
#include "../kernels/im2col/im2col_body.h"
#include "test_util.h"

static void expect_im2col_matches(const ks_im2col_params *p, ks_launch l, uint64_t seed)
{
    ks_im2col_geom g;
    uint64_t s = seed;
    ck_assert_int_eq(ks_im2col_geometry(p, &g), KS_OK);
    float *in = tu_random(&s, g.image_numel);
    float *cols = malloc((size_t)g.columns_numel * sizeof *cols);
    double *ref = malloc((size_t)g.columns_numel * sizeof *ref);
    for (int64_t i = 0; i < g.columns_numel; ++i) cols[i] = NAN; /* poison: all must be written */
    ck_assert_int_eq(ks_im2col_sim(p, in, cols, &l, NULL), KS_OK);
    ks_im2col_ref(p, in, ref);
    tu_expect_close(cols, ref, g.columns_numel, 0.0, "columns");
    free(in), free(cols), free(ref);
}

static void expect_col2im_matches(const ks_im2col_params *p, ks_launch l, uint64_t seed)
{
    ks_im2col_geom g;
    uint64_t s = seed;
    ck_assert_int_eq(ks_im2col_geometry(p, &g), KS_OK);
    float *cols = tu_random(&s, g.columns_numel);
    float *out = malloc((size_t)g.image_numel * sizeof *out);
    double *ref = malloc((size_t)g.image_numel * sizeof *ref);
    for (int64_t i = 0; i < g.image_numel; ++i) out[i] = NAN;
    ck_assert_int_eq(ks_col2im_sim(p, cols, out, &l, NULL), KS_OK);
    ks_col2im_ref(p, cols, ref);
    /* float sums of at most kh*kw terms in [-1, 1) */
    tu_expect_close(out, ref, g.image_numel, 1e-5 * (double)(p->kernel_h * p->kernel_w), "output");
    free(cols), free(out), free(ref);
}

START_TEST(im2col_matches_reference_on_random_geometries)
{
    uint64_t s = 2024;
    for (int k = 0; k < 250; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        /* vary the launch too: tiny blocks and caps make threads loop */
        ks_launch l = tu_launch((int)tu_int(&s, 1, 64), tu_int(&s, 0, 3) == 0 ? 2 : -1);
        expect_im2col_matches(&p, l, (uint64_t)k);
    }
}
END_TEST

START_TEST(col2im_matches_reference_on_random_geometries)
{
    uint64_t s = 4048;
    for (int k = 0; k < 250; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        ks_launch l = tu_launch((int)tu_int(&s, 1, 64), tu_int(&s, 0, 3) == 0 ? 3 : -1);
        expect_col2im_matches(&p, l, (uint64_t)k + 7);
    }
}
END_TEST

/* --algorithm scatter (a thread per columns entry, atomic adds into the image) gives the
 * reference too, on random geometries and launches that loop; its trace passes check
 * (the adds flagged atomic; every entry read once) */
START_TEST(col2im_scatter_matches_reference_on_random_geometries)
{
    uint64_t s = 777;
    for (int k = 0; k < 120; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        ks_im2col_args a;
        ks_im2col_geom g;
        ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_OK);
        uint64_t r = (uint64_t)k + 99;
        float *cols = tu_random(&r, g.columns_numel), *out = calloc((size_t)g.image_numel, sizeof *out);
        double *ref = malloc((size_t)g.image_numel * sizeof *ref);
        ck_assert_int_eq(ks_im2col_args_make(&p, cols, out, &a, &g), KS_OK);
        const ks_launch l = tu_launch((int)tu_int(&s, 1, 64), tu_int(&s, 0, 3) == 0 ? 3 : -1);
        ck_assert_int_eq(ks_im2col_launch_sim(&a, KS_COL2IM_SCATTER, &l, NULL), KS_OK);
        ks_col2im_ref(&p, cols, ref);
        tu_expect_close(out, ref, g.image_numel, 1e-5 * (double)(p.kernel_h * p.kernel_w), "scatter output");
        free(cols), free(out), free(ref);
    }
    static ks_run r;
    static ks_trace tr;
    ks_check_report rep;
    ks_run_init(&r, ks_op_find("col2im"));
    ck_assert_int_eq(ks_run_set(&r, "algorithm", "scatter"), KS_OK);
    ck_assert_int_eq(ks_run_set(&r, "stride", "1,2"), KS_OK);
    r.pattern = KS_PAT_RANDOM;
    ck_assert_ptr_nonnull(r.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_int_eq(ks_run_execute(&r), KS_OK);
    ks_trace_from_run(r.op, &r, &tr);
    ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
    ck_assert_msg(rep.violations == 0 && rep.complete, "%s", rep.first[0]);
    ck_assert_str_eq(tr.sites[0].name, "col2im_scatter.work");
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
}
END_TEST

/* reference section 7 case 2: 1x4x4 image holding 1..16, k3 p1 s2 d1 -> 2x2 output */
START_TEST(im2col_4x4_image_by_hand)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 1,
                          .height = 4,
                          .width = 4,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 2,
                          .stride_w = 2,
                          .dilation_h = 1,
                          .dilation_w = 1};
    float in[16], cols[9 * 4];
    for (int i = 0; i < 16; ++i) in[i] = (float)(i + 1);
    /* row (i, j) of the columns matrix, columns (oh, ow) = (0,0) (0,1) (1,0) (1,1);
     * window origin (oh*2 - 1, ow*2 - 1), written out by hand */
    static const float want[9][4] = {
        {0, 0, 0, 6},   {0, 0, 5, 7},  {0, 0, 6, 8},   {0, 2, 0, 10},  {1, 3, 9, 11},
        {2, 4, 10, 12}, {0, 6, 0, 14}, {5, 7, 13, 15}, {6, 8, 14, 16},
    };
    ks_launch l = tu_launch(0, 0);
    ck_assert_int_eq(ks_im2col_sim(&p, in, cols, &l, NULL), KS_OK);
    for (int r = 0; r < 9; ++r)
        for (int c = 0; c < 4; ++c)
            ck_assert_msg(cols[r * 4 + c] == want[r][c], "row %d col %d: %g, want %g", r, c, cols[r * 4 + c],
                          want[r][c]);
}
END_TEST

/* reference section 7 case 1: catches h/w, kh/kw and row-order swaps */
START_TEST(im2col_asymmetric_geometry_matches_brute_force)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 2,
                          .height = 5,
                          .width = 4,
                          .kernel_h = 3,
                          .kernel_w = 2,
                          .pad_h = 1,
                          .pad_w = 0,
                          .stride_h = 2,
                          .stride_w = 1,
                          .dilation_h = 2,
                          .dilation_w = 1};
    ks_im2col_geom g;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_OK);
    ck_assert_int_eq(g.height_col, 2);
    ck_assert_int_eq(g.width_col, 3);
    float in[40], cols[12 * 6];
    for (int i = 0; i < 40; ++i) in[i] = (float)(i + 1);
    ks_launch l = tu_launch(0, 0);
    ck_assert_int_eq(ks_im2col_sim(&p, in, cols, &l, NULL), KS_OK);
    /* row (c*3 + i)*2 + j, column oh*3 + ow reads in[c, oh*2 - 1 + 2i, ow + j] */
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 2; ++j)
                for (int oh = 0; oh < 2; ++oh)
                    for (int ow = 0; ow < 3; ++ow) {
                        int y = oh * 2 - 1 + 2 * i, x = ow + j;
                        float want = (y >= 0 && y < 5 && x < 4) ? in[(c * 5 + y) * 4 + x] : 0.0f;
                        ck_assert_float_eq(cols[((c * 3 + i) * 2 + j) * 6 + oh * 3 + ow], want);
                    }
}
END_TEST

/* col2im(im2col(ones)) counts, per pixel, the windows that cover it */
static void expect_coverage(ks_im2col_params p)
{
    ks_im2col_geom g;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_OK);
    float *ones = malloc((size_t)g.image_numel * sizeof(float));
    float *cols = malloc((size_t)g.columns_numel * sizeof(float));
    float *cover = malloc((size_t)g.image_numel * sizeof(float));
    for (int64_t i = 0; i < g.image_numel; ++i) ones[i] = 1.0f;
    ks_launch l = tu_launch(32, 1);
    ck_assert_int_eq(ks_im2col_sim(&p, ones, cols, &l, NULL), KS_OK);
    ck_assert_int_eq(ks_col2im_sim(&p, cols, cover, &l, NULL), KS_OK);
    for (int64_t y = 0; y < p.height; ++y)
        for (int64_t x = 0; x < p.width; ++x) {
            int count = 0; /* counting reference: every (window, tap) landing on (y, x) */
            for (int64_t oh = 0; oh < g.height_col; ++oh)
                for (int64_t ow = 0; ow < g.width_col; ++ow)
                    for (int64_t i = 0; i < p.kernel_h; ++i)
                        for (int64_t j = 0; j < p.kernel_w; ++j)
                            count += oh * p.stride_h - p.pad_h + i * p.dilation_h == y &&
                                     ow * p.stride_w - p.pad_w + j * p.dilation_w == x;
            for (int64_t c = 0; c < p.batch * p.channels; ++c)
                ck_assert_msg(cover[(c * p.height + y) * p.width + x] == (float)count,
                              "pixel (%lld, %lld): %g windows, counted %d", (long long)y, (long long)x,
                              cover[(c * p.height + y) * p.width + x], count);
        }
    free(ones), free(cols), free(cover);
}

START_TEST(col2im_of_im2col_ones_counts_coverage)
{
    expect_coverage((ks_im2col_params){.batch = 1,
                                       .channels = 1,
                                       .height = 7,
                                       .width = 6,
                                       .kernel_h = 3,
                                       .kernel_w = 3,
                                       .pad_h = 1,
                                       .pad_w = 1,
                                       .stride_h = 2,
                                       .stride_w = 2,
                                       .dilation_h = 2,
                                       .dilation_w = 2});
    expect_coverage((ks_im2col_params){.batch = 1,
                                       .channels = 1,
                                       .height = 5,
                                       .width = 5,
                                       .kernel_h = 3,
                                       .kernel_w = 3,
                                       .pad_h = 2,
                                       .pad_w = 2,
                                       .stride_h = 1,
                                       .stride_w = 1,
                                       .dilation_h = 2,
                                       .dilation_w = 2});
    expect_coverage((ks_im2col_params){.batch = 2,
                                       .channels = 3,
                                       .height = 9,
                                       .width = 11,
                                       .kernel_h = 2,
                                       .kernel_w = 4,
                                       .pad_h = 3,
                                       .pad_w = 0,
                                       .stride_h = 3,
                                       .stride_w = 1,
                                       .dilation_h = 1,
                                       .dilation_w = 3});
}
END_TEST

START_TEST(output_size_truncates_toward_zero)
{
    /* H=2, k=3, p=0, s=2: (2 - 3) / 2 + 1 = 0 + 1 = 1 in C (torch unfold rejects it) */
    ks_im2col_params p = {.batch = 1,
                          .channels = 1,
                          .height = 2,
                          .width = 2,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 0,
                          .pad_w = 0,
                          .stride_h = 2,
                          .stride_w = 2,
                          .dilation_h = 1,
                          .dilation_w = 1};
    ks_im2col_geom g;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_OK);
    ck_assert_int_eq(g.height_col, 1);
    ck_assert_int_eq(g.width_col, 1);
    expect_im2col_matches(&p, tu_launch(0, 0), 3);
    expect_col2im_matches(&p, tu_launch(0, 0), 4);
}
END_TEST

START_TEST(geometry_rejects_bad_parameters)
{
    const ks_im2col_params good = {.batch = 1,
                                   .channels = 1,
                                   .height = 5,
                                   .width = 5,
                                   .kernel_h = 3,
                                   .kernel_w = 3,
                                   .pad_h = 1,
                                   .pad_w = 1,
                                   .stride_h = 1,
                                   .stride_w = 1,
                                   .dilation_h = 1,
                                   .dilation_w = 1};
    ks_im2col_geom g;
    ks_im2col_params p = good;
    p.height = 1, p.pad_h = 0, p.kernel_h = 3, p.stride_h = 1; /* (1 - 3)/1 + 1 = -1 */
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "output size"));
    p = good, p.stride_w = 0;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "stride_w"));
    p = good, p.dilation_h = -1;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
    p = good, p.channels = 0;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
    p = good, p.pad_w = -1;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
    /* products that pass 2^63 / 8 are rejected, not wrapped */
    p = good, p.batch = 2000000000, p.channels = 2000000000, p.height = 2000, p.width = 2000;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "too large"));
    /* huge dilation: negative output sizes do not cancel (pytorch#68875) */
    p = good, p.dilation_h = 100, p.dilation_w = 100;
    ck_assert_int_eq(ks_im2col_geometry(&p, &g), KS_EINVAL);
}
END_TEST

/* the traced variant computes exactly what the plain one does */
START_TEST(plain_and_traced_outputs_are_bitwise_equal)
{
    uint64_t s = 77;
    for (int k = 0; k < 40; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        ks_im2col_geom g;
        ks_im2col_geometry(&p, &g);
        float *in = tu_random(&s, g.image_numel), *cols = tu_random(&s, g.columns_numel);
        float *a = malloc((size_t)g.columns_numel * 4), *b = malloc((size_t)g.columns_numel * 4);
        float *c = malloc((size_t)g.image_numel * 4), *d = malloc((size_t)g.image_numel * 4);
        ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
        ks_launch l = tu_launch(0, 0);
        ck_assert_int_eq(ks_im2col_sim(&p, in, a, &l, NULL), KS_OK);
        ck_assert_int_eq(ks_im2col_sim(&p, in, b, &l, sink), KS_OK);
        ck_assert_int_eq(ks_col2im_sim(&p, cols, c, &l, NULL), KS_OK);
        ck_assert_int_eq(ks_col2im_sim(&p, cols, d, &l, sink), KS_OK);
        ck_assert_int_gt(ks_sink_count(sink), 0);
        ck_assert_mem_eq(a, b, (size_t)g.columns_numel * 4);
        ck_assert_mem_eq(c, d, (size_t)g.image_numel * 4);
        ks_host_sink_free(sink);
        free(in), free(cols), free(a), free(b), free(c), free(d);
    }
}
END_TEST

/* The 3x3 stride-1 dilation-1 layer runs its own instance of the bodies (sizes as
 * constants, ks_im2col_is_unit3). On random sizes, pads 0-3 and looping launches:
 * im2col equals the reference exactly; col2im equals, bit for bit, a float sum written
 * here in the documented order (taps from (2, 2) down, +0.0f for a tap outside), and the
 * traced instance computes the same. */
START_TEST(unit3_layer_matches_reference_bitwise)
{
    uint64_t s = 3313;
    for (int k = 0; k < 60; ++k) {
        ks_im2col_params p = {.batch = tu_int(&s, 1, 3),
                              .channels = tu_int(&s, 1, 5),
                              .height = tu_int(&s, 1, 17),
                              .width = tu_int(&s, 1, 19),
                              .kernel_h = 3,
                              .kernel_w = 3,
                              .pad_h = tu_int(&s, 0, 3),
                              .pad_w = tu_int(&s, 0, 3),
                              .stride_h = 1,
                              .stride_w = 1,
                              .dilation_h = 1,
                              .dilation_w = 1};
        ks_im2col_geom g;
        if (ks_im2col_geometry(&p, &g) != KS_OK) continue; /* a window larger than the padded image */
        const ks_launch l = tu_launch((int)tu_int(&s, 1, 96), tu_int(&s, 0, 2) == 0 ? 2 : -1);
        expect_im2col_matches(&p, l, (uint64_t)k + 5);
        float *cols = tu_random(&s, g.columns_numel);
        float *out = malloc((size_t)g.image_numel * 4), *traced = malloc((size_t)g.image_numel * 4);
        ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
        ck_assert_int_eq(ks_col2im_sim(&p, cols, out, &l, NULL), KS_OK);
        ck_assert_int_eq(ks_col2im_sim(&p, cols, traced, &l, sink), KS_OK);
        ck_assert_mem_eq(out, traced, (size_t)g.image_numel * 4);
        const int64_t H = p.height, W = p.width, Ho = g.height_col, Wo = g.width_col;
        for (int64_t plane = 0; plane < p.batch * p.channels; ++plane)
            for (int64_t y = 0; y < H; ++y)
                for (int64_t x = 0; x < W; ++x) {
                    float want = 0.0f;
                    for (int64_t i = 2; i >= 0; --i)
                        for (int64_t j = 2; j >= 0; --j) {
                            const int64_t oy = y + p.pad_h - i, ox = x + p.pad_w - j;
                            const int in = oy >= 0 && oy < Ho && ox >= 0 && ox < Wo;
                            want += in ? cols[((plane * 9 + i * 3 + j) * Ho + oy) * Wo + ox] : 0.0f;
                        }
                    const float got = out[(plane * H + y) * W + x];
                    ck_assert_msg(memcmp(&got, &want, 4) == 0, "geometry %d plane %lld (%lld, %lld): %a, want %a", k,
                                  (long long)plane, (long long)y, (long long)x, got, want);
                }
        ks_host_sink_free(sink);
        free(cols), free(out), free(traced);
    }
}
END_TEST

/* one block of 32 threads: each thread loops over many work items */
START_TEST(tiny_grid_and_block_caps_loop_threads)
{
    ks_im2col_params p = {.batch = 2,
                          .channels = 3,
                          .height = 17,
                          .width = 19,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    expect_im2col_matches(&p, tu_launch(32, 1), 1);
    expect_col2im_matches(&p, tu_launch(32, 1), 2);
    expect_im2col_matches(&p, tu_launch(33, 5), 3);
    expect_col2im_matches(&p, tu_launch(1, 1), 4);
    int threads;
    int64_t blocks;
    ks_launch l = tu_launch(32, 1);
    ck_assert_int_eq(ks_launch_resolve(&l, 512, -1, 2 * 3 * 17 * 19, &threads, &blocks), KS_OK);
    ck_assert_int_eq(threads, 32);
    ck_assert_int_eq(blocks, 1);
    l = tu_launch(0, 0); /* reference defaults: 512 threads, no cap */
    ck_assert_int_eq(ks_launch_resolve(&l, 512, -1, 10000, &threads, &blocks), KS_OK);
    ck_assert_int_eq(threads, 512);
    ck_assert_int_eq(blocks, 20);
    l = tu_launch(2048, 0);
    ck_assert_int_eq(ks_launch_resolve(&l, 512, -1, 10, &threads, &blocks), KS_EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("im2col");
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, im2col_matches_reference_on_random_geometries);
    tcase_add_test(tc, col2im_matches_reference_on_random_geometries);
    tcase_add_test(tc, col2im_scatter_matches_reference_on_random_geometries);
    tcase_add_test(tc, im2col_4x4_image_by_hand);
    tcase_add_test(tc, im2col_asymmetric_geometry_matches_brute_force);
    tcase_add_test(tc, col2im_of_im2col_ones_counts_coverage);
    tcase_add_test(tc, output_size_truncates_toward_zero);
    tcase_add_test(tc, geometry_rejects_bad_parameters);
    tcase_add_test(tc, plain_and_traced_outputs_are_bitwise_equal);
    tcase_add_test(tc, unit3_layer_matches_reference_bitwise);
    tcase_add_test(tc, tiny_grid_and_block_caps_loop_threads);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
