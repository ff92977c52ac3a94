/* conv2d (im2col + GEMM, the lesson 04 operator) on the simulator: outputs against the
 * direct convolution in double, the trace against the GEMM's definition, plain vs traced
 * bitwise, and the op's input checks. */
#include "../kernels/conv2d/conv2d_body.h"
#include "test_util.h"

static ks_conv2d_params random_conv(uint64_t *s)
{
    ks_conv2d_params p;
    p.im = tu_geometry(s);
    p.out_channels = tu_int(s, 1, 5);
    return p;
}

/* Runs im2col + GEMM on the simulator; returns the output (N, O, Ho, Wo). */
static float *run_sim(const ks_conv2d_params *p, const float *in, const float *w, ks_launch l, ks_sink *sink,
                      ks_conv2d_geom *g)
{
    ck_assert_int_eq(ks_conv2d_geometry(p, g), KS_OK);
    float *cols = malloc((size_t)g->im.columns_numel * 4);
    float *out = malloc((size_t)g->output_numel * 4);
    ks_launch dflt = tu_launch(0, 0);
    ck_assert_int_eq(ks_im2col_sim(&p->im, in, cols, &dflt, NULL), KS_OK);
    ck_assert_int_eq(ks_conv_gemm_sim(p, w, cols, out, &l, sink), KS_OK);
    free(cols);
    return out;
}

START_TEST(conv2d_matches_direct_convolution_on_random_geometries)
{
    uint64_t s = 404;
    for (int k = 0; k < 60; ++k) {
        ks_conv2d_params p = random_conv(&s);
        ks_conv2d_geom g;
        ck_assert_int_eq(ks_conv2d_geometry(&p, &g), KS_OK);
        float *in = tu_random(&s, g.im.image_numel), *w = tu_random(&s, g.weight_numel);
        ks_launch l = tu_launch((int)tu_int(&s, 1, 600), tu_int(&s, 0, 1) ? 2 : -1);
        float *out = run_sim(&p, in, w, l, NULL, &g);
        double *ref = malloc((size_t)g.output_numel * sizeof *ref);
        ks_conv2d_ref(&p, in, w, ref);
        /* K float products summed in float: error ~ K * 2^-24 relative to sum |w*x| <= K */
        tu_expect_close(out, ref, g.output_numel, 1e-6 * (double)g.im.rows, "output");
        free(in), free(w), free(out), free(ref);
    }
}
END_TEST

START_TEST(conv2d_3x3_by_hand)
{
    /* 1x1x3x3 image 1..9, one 3x3 filter of ones, padding 1: each output is the sum of its
     * 3x3 neighbourhood; the centre sees all nine (45), a corner four (1+2+4+5 = 12). */
    ks_conv2d_params p = {.im = {.batch = 1,
                                 .channels = 1,
                                 .height = 3,
                                 .width = 3,
                                 .kernel_h = 3,
                                 .kernel_w = 3,
                                 .pad_h = 1,
                                 .pad_w = 1,
                                 .stride_h = 1,
                                 .stride_w = 1,
                                 .dilation_h = 1,
                                 .dilation_w = 1},
                          .out_channels = 1};
    const float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float w[9];
    for (int i = 0; i < 9; ++i) w[i] = 1;
    ks_conv2d_geom g;
    float *out = run_sim(&p, in, w, tu_launch(0, 0), NULL, &g);
    const float want[9] = {12, 21, 16, 27, 45, 33, 24, 39, 28};
    ck_assert_mem_eq(out, want, sizeof want);
    free(out);
}
END_TEST

/* Each work item reads weight[o, k] and columns[n, k, p] for k = 0..K-1 in order, then
 * writes output[n, o, h_out, w_out]; the coordinates come from the definition. */
START_TEST(conv2d_trace_follows_the_gemm_definition)
{
    uint64_t s = 405;
    for (int k = 0; k < 12; ++k) {
        ks_conv2d_params p = random_conv(&s);
        ks_conv2d_geom g;
        ck_assert_int_eq(ks_conv2d_geometry(&p, &g), KS_OK);
        float *in = tu_random(&s, g.im.image_numel), *w = tu_random(&s, g.weight_numel);
        ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
        float *out = run_sim(&p, in, w, tu_launch(7, 3), sink, &g);
        const int64_t K = g.im.rows, Ho = g.im.height_col, Wo = g.im.width_col, O = p.out_channels;
        ck_assert_uint_eq(ks_sink_count(sink), (uint64_t)g.output_numel * (2 + 2 * K));
        int64_t seen = 0;
        for (uint64_t e = 0; e < ks_sink_count(sink); ++e) {
            const ks_event *ev = &sink->events[e];
            const int64_t i = ev->index, n = i / (O * Ho * Wo), o = i / (Ho * Wo) % O;
            const int64_t y = i / Wo % Ho, x = i % Wo;
            if (ev->kind == KS_EV_WORK) {
                ck_assert_int_eq(ev->u.field[0], n);
                ck_assert_int_eq(ev->u.field[1], o);
                ck_assert_int_eq(ev->u.field[2], y);
                ck_assert_int_eq(ev->u.field[3], x);
                seen++;
            } else if (ev->kind == KS_EV_READ) {
                const int64_t kk = ev->tap;
                ck_assert_uint_eq(ev->seq, 1 + 2 * kk + (ev->tensor == KS_CONV_T_COLUMNS));
                if (ev->tensor == KS_CONV_T_WEIGHT) {
                    ck_assert_int_eq(ev->u.access.offset, o * K + kk);
                    ck_assert(ev->u.access.value == w[o * K + kk]);
                } else {
                    ck_assert_int_eq(ev->tensor, KS_CONV_T_COLUMNS);
                    ck_assert_int_eq(ev->u.access.plane, n);
                    ck_assert_int_eq(ev->u.access.y, kk);
                    ck_assert_int_eq(ev->u.access.x, y * Wo + x);
                }
            } else {
                ck_assert_int_eq(ev->kind, KS_EV_WRITE);
                ck_assert_int_eq(ev->u.access.offset, i);
                ck_assert_int_eq(ev->u.access.plane, n * O + o);
                ck_assert(ev->u.access.value == out[i]);
            }
        }
        ck_assert_int_eq(seen, g.output_numel);
        ks_host_sink_free(sink);
        free(in), free(w), free(out);
    }
}
END_TEST

START_TEST(conv2d_plain_and_traced_are_bitwise_equal)
{
    uint64_t s = 406;
    for (int k = 0; k < 30; ++k) {
        ks_conv2d_params p = random_conv(&s);
        ks_conv2d_geom g;
        ck_assert_int_eq(ks_conv2d_geometry(&p, &g), KS_OK);
        float *in = tu_random(&s, g.im.image_numel), *w = tu_random(&s, g.weight_numel);
        ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
        float *a = run_sim(&p, in, w, tu_launch(0, 0), NULL, &g);
        float *b = run_sim(&p, in, w, tu_launch(0, 0), sink, &g);
        ck_assert_mem_eq(a, b, (size_t)g.output_numel * 4);
        ks_host_sink_free(sink);
        free(in), free(w), free(a), free(b);
    }
}
END_TEST

START_TEST(conv2d_op_checks_its_inputs)
{
    const ks_op *op = ks_op_find("conv2d");
    ck_assert_ptr_nonnull(op);
    static ks_run r;
    ks_run_init(&r, op);
    ks_tensor *w = &r.tensor[ks_op_tensor(op, "weight")];
    w->dtype = KS_F32;
    w->ndim = 4;
    w->shape[0] = 3, w->shape[1] = 5, w->shape[2] = 3, w->shape[3] = 3; /* C 5, input C 2 */
    ck_assert_int_eq(ks_tensor_alloc(w), KS_OK);
    ck_assert_int_eq(ks_run_execute(&r), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "weight must have shape (3, 2, 3, 3)"));
    ks_run_free(&r);
    /* a 2x2 weight sets the kernel size; the run uses it */
    ks_run_init(&r, op);
    w = &r.tensor[ks_op_tensor(op, "weight")];
    w->dtype = KS_F32;
    w->ndim = 4;
    w->shape[0] = 4, w->shape[1] = 2, w->shape[2] = 2, w->shape[3] = 1;
    ck_assert_int_eq(ks_tensor_alloc(w), KS_OK);
    ck_assert_int_eq(ks_run_execute(&r), KS_OK);
    const ks_tensor *out = &r.tensor[ks_op_tensor(op, "output")];
    ck_assert_int_eq(out->shape[1], 4);
    ck_assert_int_eq(out->shape[2], 6); /* (5 + 2 - 2) / 1 + 1 */
    ck_assert_int_eq(out->shape[3], 7); /* (5 + 2 - 1) / 1 + 1 */
    ks_run_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conv2d");
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, conv2d_matches_direct_convolution_on_random_geometries);
    tcase_add_test(tc, conv2d_3x3_by_hand);
    tcase_add_test(tc, conv2d_trace_follows_the_gemm_definition);
    tcase_add_test(tc, conv2d_plain_and_traced_are_bitwise_equal);
    tcase_add_test(tc, conv2d_op_checks_its_inputs);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
