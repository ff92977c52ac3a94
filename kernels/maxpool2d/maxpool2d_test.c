/* maxpool2d_test.c - maxpool2d against its double reference and against torch's rules:
 * random geometries (odd sizes, stride above and below the kernel, dilation, padding up
 * to half the kernel, ceil_mode), ties keep the first, NaN propagates, -inf inputs, the
 * ceil_mode last-window rule, the backward with overlapping windows, traced == plain,
 * the trace passes check, and bad parameters. */
#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../trace/check.h"
#include "../../trace/npy.h"
#include "../../trace/run_trace.h"
#include "../core/ks_error.h"
#include "../registry.h"
#include "maxpool2d_body.h"
#include "test_util.h"

/* One run through the operator: the geometry as flag texts, a given input (NULL: random). */
typedef struct mp_case {
    const char *kernel, *stride, *padding, *dilation;
    int ceil_mode, backward;
    int64_t n, c, h, w;
} mp_case;

static ks_run R;

static void mp_run(const mp_case *k, const float *input, int traced)
{
    ks_run_init(&R, ks_op_find("maxpool2d"));
    ck_assert_int_eq(ks_run_set(&R, "kernel-size", k->kernel), KS_OK);
    if (k->stride) ck_assert_int_eq(ks_run_set(&R, "stride", k->stride), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "padding", k->padding ? k->padding : "0"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "dilation", k->dilation ? k->dilation : "1"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "ceil-mode", k->ceil_mode ? "on" : "off"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "backward", k->backward ? "on" : "off"), KS_OK);
    ks_tensor *in = &R.tensor[KS_MP_T_INPUT];
    ks_tensor_shape(in, 4, k->n, k->c, k->h, k->w);
    ck_assert_int_eq(ks_tensor_alloc(in), KS_OK);
    uint64_t s = (uint64_t)(k->n * 1000 + k->h * 10 + k->w);
    for (int64_t i = 0; i < ks_tensor_numel(in); ++i)
        ((float *)in->data)[i] = input ? input[i] : (float)tu_int(&s, -20, 20) * 0.25f; /* ties happen */
    R.pattern = KS_PAT_RANDOM;
    R.seed = 5;
    if (traced) ck_assert_ptr_nonnull(R.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s", ks_error_message());
}

static void mp_done(void)
{
    ks_host_sink_free(R.sink);
    R.sink = NULL;
    ks_run_free(&R);
}

/* output, indices and (backward) grad_input against the reference */
static void expect_reference(void)
{
    const ks_maxpool2d_args *a = KS_RUN_CTX(&R, const ks_maxpool2d_args);
    const int64_t no = a->batch * a->channels * a->out_h * a->out_w, ni = a->batch * a->channels * a->height * a->width;
    double *out = malloc((size_t)no * sizeof *out), *gin = malloc((size_t)ni * sizeof *gin);
    int64_t *idx = malloc((size_t)no * sizeof *idx);
    ks_maxpool2d_ref(a, R.tensor[KS_MP_T_INPUT].data, out, idx);
    const float *got = R.tensor[KS_MP_T_OUTPUT].data;
    const int64_t *got_idx = R.tensor[KS_MP_T_INDICES].data;
    for (int64_t i = 0; i < no; ++i) {
        ck_assert_msg(got_idx[i] == idx[i], "indices[%lld] = %lld, reference %lld", (long long)i, (long long)got_idx[i],
                      (long long)idx[i]);
        ck_assert_msg((isnan(got[i]) && isnan(out[i])) || got[i] == (float)out[i], "output[%lld] = %g, reference %g",
                      (long long)i, got[i], out[i]);
    }
    if (!R.absent[KS_MP_T_GRAD_INPUT]) {
        ks_maxpool2d_ref_backward(a, R.tensor[KS_MP_T_INPUT].data, R.tensor[KS_MP_T_GRAD_OUTPUT].data, gin);
        tu_expect_close(R.tensor[KS_MP_T_GRAD_INPUT].data, gin, ni, 1e-5, "grad_input");
    }
    free(out), free(gin), free(idx);
}

START_TEST(maxpool2d_matches_reference_on_random_geometries)
{
    uint64_t s = 1234 + (uint64_t)_i;
    char kernel[24], stride[24], padding[24], dilation[24];
    const int64_t kh = tu_int(&s, 1, 4), kw = tu_int(&s, 1, 4);
    snprintf(kernel, sizeof kernel, "%lld,%lld", (long long)kh, (long long)kw);
    snprintf(stride, sizeof stride, "%lld,%lld", (long long)tu_int(&s, 1, 5), (long long)tu_int(&s, 1, 3));
    snprintf(padding, sizeof padding, "%lld,%lld", (long long)tu_int(&s, 0, kh / 2), (long long)tu_int(&s, 0, kw / 2));
    snprintf(dilation, sizeof dilation, "%lld,%lld", (long long)tu_int(&s, 1, 3), (long long)tu_int(&s, 1, 2));
    const mp_case k = {.kernel = kernel,
                       .stride = _i % 3 ? stride : NULL,
                       .padding = padding,
                       .dilation = dilation,
                       .ceil_mode = (int)(_i % 2),
                       .backward = (int)(_i % 4 >= 2),
                       .n = tu_int(&s, 1, 3),
                       .c = tu_int(&s, 1, 3),
                       .h = tu_int(&s, 9, 23),
                       .w = tu_int(&s, 9, 21)};
    mp_run(&k, NULL, 0);
    expect_reference();
    mp_done();
}
END_TEST

START_TEST(stride_defaults_to_the_kernel_size)
{
    const mp_case k = {.kernel = "3,2",
                       .stride = NULL,
                       .padding = NULL,
                       .dilation = NULL,
                       .ceil_mode = 0,
                       .backward = 0,
                       .n = 1,
                       .c = 1,
                       .h = 9,
                       .w = 8};
    mp_run(&k, NULL, 0);
    ck_assert_int_eq(R.value[ks_op_param(R.op, "stride")][0], 3);
    ck_assert_int_eq(R.value[ks_op_param(R.op, "stride")][1], 2);
    ck_assert_int_eq(R.tensor[KS_MP_T_OUTPUT].shape[2], 3);
    ck_assert_int_eq(R.tensor[KS_MP_T_OUTPUT].shape[3], 4);
    ck_assert_ptr_nonnull(strstr(R.params_json, "\"stride\": [3, 2]"));
    mp_done();
}
END_TEST

/* 1x4 input [5, 5, 7, 7], kernel 2 stride 1: windows (5,5) (5,7) (7,7) -> the first max */
START_TEST(ties_keep_the_first_maximum)
{
    const float in[] = {5, 5, 7, 7};
    const mp_case k = {.kernel = "1,2",
                       .stride = "1",
                       .padding = NULL,
                       .dilation = NULL,
                       .ceil_mode = 0,
                       .backward = 0,
                       .n = 1,
                       .c = 1,
                       .h = 1,
                       .w = 4};
    mp_run(&k, in, 0);
    const int64_t *idx = R.tensor[KS_MP_T_INDICES].data;
    ck_assert_int_eq(idx[0], 0);
    ck_assert_int_eq(idx[1], 2);
    ck_assert_int_eq(idx[2], 2);
    mp_done();
}
END_TEST

/* NaN wins its windows and stays; -inf everywhere still names an element */
START_TEST(nan_propagates_and_minus_infinity_is_a_value)
{
    const float in[] = {1, NAN, 3, 4, -INFINITY, -INFINITY};
    const mp_case k = {.kernel = "1,2",
                       .stride = "1",
                       .padding = NULL,
                       .dilation = NULL,
                       .ceil_mode = 0,
                       .backward = 0,
                       .n = 1,
                       .c = 1,
                       .h = 1,
                       .w = 6};
    mp_run(&k, in, 0);
    const float *out = R.tensor[KS_MP_T_OUTPUT].data;
    const int64_t *idx = R.tensor[KS_MP_T_INDICES].data;
    ck_assert(isnan(out[0]) && isnan(out[1]));
    ck_assert_int_eq(idx[0], 1);
    ck_assert_int_eq(idx[1], 1);
    ck_assert_float_eq(out[2], 4);
    ck_assert_float_eq(out[3], 4);
    ck_assert(isinf(out[4]) && out[4] < 0);
    ck_assert_int_eq(idx[4], 4);
    expect_reference();
    mp_done();
}
END_TEST

/* torch: H=5, k=2, s=2: floor gives 2, ceil 3; H=4, k=2, s=2, p=1: ceil would give 4 but
 * the last window starts at 6 - 1 = 5 >= H + p = 5, so 3 */
START_TEST(ceil_mode_drops_a_window_starting_past_the_input)
{
    const mp_case a = {.kernel = "2",
                       .stride = "2",
                       .padding = NULL,
                       .dilation = NULL,
                       .ceil_mode = 1,
                       .backward = 0,
                       .n = 1,
                       .c = 1,
                       .h = 5,
                       .w = 5};
    mp_run(&a, NULL, 0);
    ck_assert_int_eq(R.tensor[KS_MP_T_OUTPUT].shape[2], 3);
    expect_reference();
    mp_done();
    const mp_case b = {.kernel = "2",
                       .stride = "2",
                       .padding = "1",
                       .dilation = NULL,
                       .ceil_mode = 1,
                       .backward = 0,
                       .n = 1,
                       .c = 1,
                       .h = 4,
                       .w = 4};
    mp_run(&b, NULL, 0);
    ck_assert_int_eq(R.tensor[KS_MP_T_OUTPUT].shape[2], 3);
    expect_reference();
    mp_done();
    const mp_case c = {.kernel = "2",
                       .stride = "2",
                       .padding = NULL,
                       .dilation = NULL,
                       .ceil_mode = 0,
                       .backward = 0,
                       .n = 1,
                       .c = 1,
                       .h = 5,
                       .w = 5};
    mp_run(&c, NULL, 0);
    ck_assert_int_eq(R.tensor[KS_MP_T_OUTPUT].shape[2], 2);
    mp_done();
}
END_TEST

/* stride 1 with a 3x3 kernel: the centre maximum collects the gradient of 9 windows */
START_TEST(backward_sums_overlapping_windows)
{
    float in[25];
    for (int i = 0; i < 25; ++i) in[i] = i == 12 ? 100.0f : (float)(i % 7);
    const mp_case k = {.kernel = "3",
                       .stride = "1",
                       .padding = NULL,
                       .dilation = NULL,
                       .ceil_mode = 0,
                       .backward = 1,
                       .n = 1,
                       .c = 1,
                       .h = 5,
                       .w = 5};
    mp_run(&k, in, 0);
    const float *g = R.tensor[KS_MP_T_GRAD_OUTPUT].data, *gin = R.tensor[KS_MP_T_GRAD_INPUT].data;
    float sum = 0;
    for (int i = 0; i < 9; ++i) sum += g[i];
    ck_assert_float_eq_tol(gin[12], sum, 1e-5f);
    expect_reference();
    mp_done();
}
END_TEST

START_TEST(traced_equals_plain_and_passes_check)
{
    for (int backward = 0; backward < 2; ++backward) {
        const mp_case k = {.kernel = "3,2",
                           .stride = "2,1",
                           .padding = "1,1",
                           .dilation = "2,1",
                           .ceil_mode = 1,
                           .backward = backward,
                           .n = 2,
                           .c = 3,
                           .h = 11,
                           .w = 9};
        static float out[2][2 * 3 * 6 * 9], gin[2][2 * 3 * 11 * 9]; /* at least the outputs' sizes */
        int64_t n_out = 0, n_in = 0;
        for (int traced = 0; traced < 2; ++traced) {
            mp_run(&k, NULL, traced);
            n_out = ks_tensor_numel(&R.tensor[KS_MP_T_OUTPUT]);
            n_in = backward ? ks_tensor_numel(&R.tensor[KS_MP_T_GRAD_INPUT]) : 0;
            ck_assert(n_out <= (int64_t)(sizeof out[0] / 4) && n_in <= (int64_t)(sizeof gin[0] / 4));
            memcpy(out[traced], R.tensor[KS_MP_T_OUTPUT].data, (size_t)n_out * 4);
            if (backward) memcpy(gin[traced], R.tensor[KS_MP_T_GRAD_INPUT].data, (size_t)n_in * 4);
            if (traced) {
                static ks_trace tr;
                ks_check_report rep;
                ks_trace_from_run(R.op, &R, &tr);
                ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
                ck_assert_msg(rep.violations == 0, "%s", rep.first[0]);
            }
            mp_done();
        }
        ck_assert(!memcmp(out[0], out[1], (size_t)n_out * 4));
        if (backward) ck_assert(!memcmp(gin[0], gin[1], (size_t)n_in * 4));
    }
}
END_TEST

START_TEST(bad_geometry_is_refused)
{
    static const struct {
        mp_case k;
        const char *why;
    } bad[] = {
        {.k = {.kernel = "3",
               .stride = "1",
               .padding = "2",
               .dilation = NULL,
               .ceil_mode = 0,
               .backward = 0,
               .n = 1,
               .c = 1,
               .h = 8,
               .w = 8},
         .why = "at most half the kernel"},
        {.k = {.kernel = "3",
               .stride = "1",
               .padding = NULL,
               .dilation = "4",
               .ceil_mode = 0,
               .backward = 0,
               .n = 1,
               .c = 1,
               .h = 5,
               .w = 5},
         .why = "output size"},
        {.k = {.kernel = "6",
               .stride = "1",
               .padding = NULL,
               .dilation = NULL,
               .ceil_mode = 0,
               .backward = 0,
               .n = 1,
               .c = 1,
               .h = 5,
               .w = 5},
         .why = "output size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ks_run_init(&R, ks_op_find("maxpool2d"));
        ck_assert_int_eq(ks_run_set(&R, "kernel-size", bad[i].k.kernel), KS_OK);
        ck_assert_int_eq(ks_run_set(&R, "stride", bad[i].k.stride), KS_OK);
        if (bad[i].k.padding) ck_assert_int_eq(ks_run_set(&R, "padding", bad[i].k.padding), KS_OK);
        if (bad[i].k.dilation) ck_assert_int_eq(ks_run_set(&R, "dilation", bad[i].k.dilation), KS_OK);
        ck_assert_int_eq(ks_run_set(&R, "input-size", "5"), KS_OK);
        ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
        ck_assert_msg(strstr(ks_error_message(), bad[i].why), "case %zu: %s", i, ks_error_message());
        ks_run_free(&R);
    }
    ks_run_init(&R, ks_op_find("maxpool2d"));
    ck_assert_int_eq(ks_run_set(&R, "stride", "0"), KS_EINVAL);
    ck_assert_int_eq(ks_run_set(&R, "ceil-mode", "maybe"), KS_EINVAL);
    ks_run_free(&R);
}
END_TEST

/* the h_start `step` shows (oh * sh - ph) is held to the recorded field by check */
START_TEST(check_catches_a_field_that_disagrees_with_its_formula)
{
    static ks_trace tr;
    ks_check_report rep;
    const mp_case k = {.kernel = "3",
                       .stride = "2",
                       .padding = "1",
                       .dilation = NULL,
                       .ceil_mode = 0,
                       .backward = 0,
                       .n = 1,
                       .c = 2,
                       .h = 9,
                       .w = 9};
    mp_run(&k, NULL, 1);
    ks_trace_from_run(R.op, &R, &tr);
    ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
    ck_assert_uint_eq(rep.violations, 0);
    ks_event *w = &R.sink->events[0];
    ck_assert_int_eq(w->kind, KS_EV_WORK);
    w->u.field[4] += 1; /* h_start */
    ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
    ck_assert_uint_eq(rep.violations, 1);
    ck_assert_msg(strstr(rep.first[0], "h_start") && strstr(rep.first[0], "oh * 2 - 1"), "%s", rep.first[0]);
    mp_done();
}
END_TEST

static ks_tensor golden(int id, const char *what)
{
    char path[512];
    ks_tensor t;
    snprintf(path, sizeof path, "%s/tests/golden/m%d_%s.npy", KS_SOURCE_DIR, id, what);
    ck_assert_msg(ks_npy_read(path, &t) == KS_OK, "%s (made by tests/golden/make_golden.py)", ks_error_message());
    return t;
}

static const char *pair(const cJSON *g, const char *key, char *buf, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, key);
    ck_assert(cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2);
    snprintf(buf, n, "%d,%d", cJSON_GetArrayItem(v, 0)->valueint, cJSON_GetArrayItem(v, 1)->valueint);
    return buf;
}

/* torch F.max_pool2d(return_indices=True) and its backward, made on the GPU machine */
START_TEST(maxpool2d_matches_torch_golden_data)
{
    char path[512], text[8192];
    snprintf(path, sizeof path, "%s/tests/golden/maxpool2d.json", KS_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "missing %s: run tests/golden/make_golden.py where torch exists", path);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    cJSON *root = cJSON_Parse(text);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "geometries"), *g;
    ck_assert_int_ge(cJSON_GetArraySize(list), 4);
    cJSON_ArrayForEach(g, list)
    {
        const int id = cJSON_GetObjectItemCaseSensitive(g, "id")->valueint;
        char ks[24], st[24], pd[24], dl[24];
        ks_run_init(&R, ks_op_find("maxpool2d"));
        ck_assert_int_eq(ks_run_set(&R, "kernel-size", pair(g, "kernel_size", ks, sizeof ks)), KS_OK);
        ck_assert_int_eq(ks_run_set(&R, "stride", pair(g, "stride", st, sizeof st)), KS_OK);
        ck_assert_int_eq(ks_run_set(&R, "padding", pair(g, "padding", pd, sizeof pd)), KS_OK);
        ck_assert_int_eq(ks_run_set(&R, "dilation", pair(g, "dilation", dl, sizeof dl)), KS_OK);
        ck_assert_int_eq(
            ks_run_set(&R, "ceil-mode", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "ceil_mode")) ? "on" : "off"),
            KS_OK);
        ck_assert_int_eq(ks_run_set(&R, "backward", "on"), KS_OK);
        R.tensor[KS_MP_T_INPUT] = golden(id, "input");
        R.tensor[KS_MP_T_GRAD_OUTPUT] = golden(id, "grad_output");
        ck_assert_msg(ks_run_execute(&R) == KS_OK, "golden %d: %s", id, ks_error_message());
        ks_tensor out = golden(id, "output"), idx = golden(id, "indices"), gin = golden(id, "grad_input");
        const int64_t n = ks_tensor_numel(&out);
        ck_assert_int_eq(ks_tensor_numel(&R.tensor[KS_MP_T_OUTPUT]), n);
        ck_assert_int_eq(idx.dtype, KS_I64);
        ck_assert_msg(!memcmp(out.data, R.tensor[KS_MP_T_OUTPUT].data, (size_t)n * 4), "golden %d: output", id);
        ck_assert_msg(!memcmp(idx.data, R.tensor[KS_MP_T_INDICES].data, (size_t)n * 8), "golden %d: indices", id);
        const float *want = gin.data, *got = R.tensor[KS_MP_T_GRAD_INPUT].data;
        for (int64_t i = 0; i < ks_tensor_numel(&gin); ++i)
            ck_assert_msg(fabsf(want[i] - got[i]) <= 1e-5f * (1 + fabsf(want[i])), "golden %d: grad_input[%lld]", id,
                          (long long)i);
        ks_tensor_free(&out), ks_tensor_free(&idx), ks_tensor_free(&gin);
        ks_run_free(&R);
    }
    cJSON_Delete(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("maxpool2d");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, maxpool2d_matches_reference_on_random_geometries, 0, 48);
    tcase_add_test(tc, stride_defaults_to_the_kernel_size);
    tcase_add_test(tc, ties_keep_the_first_maximum);
    tcase_add_test(tc, nan_propagates_and_minus_infinity_is_a_value);
    tcase_add_test(tc, ceil_mode_drops_a_window_starting_past_the_input);
    tcase_add_test(tc, backward_sums_overlapping_windows);
    tcase_add_test(tc, traced_equals_plain_and_passes_check);
    tcase_add_test(tc, bad_geometry_is_refused);
    tcase_add_test(tc, maxpool2d_matches_torch_golden_data);
    tcase_add_test(tc, check_catches_a_field_that_disagrees_with_its_formula);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
