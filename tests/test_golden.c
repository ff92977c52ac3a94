/* im2col/col2im on the simulator against torch F.unfold / F.fold golden data, and the
 * deformable convolution layer (forward and every gradient) against torchvision
 * deform_conv2d (tests/golden, made by make_golden.py on a machine with torch). */
#include <cJSON.h>
#include <stdio.h>

#include "../kernels/deform_conv/deform_body.h"
#include "../kernels/roi_align/roi_align_body.h"
#include "../trace/npy.h"
#include "../kernels/core/ks_gemm.h"
#include "golden_util.h"

static ks_tensor load(int id, const char *what) { return load_prefixed('g', id, what); }

START_TEST(simulator_matches_torch_unfold_and_fold)
{
    cJSON *root = listing("geometries.json");
    const cJSON *g;
    int count = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "geometries"))
    {
        int id = (int)item(g, "id", 0);
        ks_im2col_params p = {.batch = item(g, "batch", 0),
                              .channels = item(g, "channels", 0),
                              .height = item(g, "input_size", 0),
                              .width = item(g, "input_size", 1),
                              .kernel_h = item(g, "kernel_size", 0),
                              .kernel_w = item(g, "kernel_size", 1),
                              .pad_h = item(g, "padding", 0),
                              .pad_w = item(g, "padding", 1),
                              .stride_h = item(g, "stride", 0),
                              .stride_w = item(g, "stride", 1),
                              .dilation_h = item(g, "dilation", 0),
                              .dilation_w = item(g, "dilation", 1)};
        ks_im2col_geom geo;
        ck_assert_int_eq(ks_im2col_geometry(&p, &geo), KS_OK);
        ks_tensor in = load(id, "input"), unfold = load(id, "unfold");
        ks_tensor cols = load(id, "cols"), fold = load(id, "fold");
        ck_assert_int_eq(ks_tensor_numel(&unfold), geo.columns_numel);
        ck_assert_int_eq(ks_tensor_numel(&fold), geo.image_numel);
        float *out = malloc((size_t)geo.columns_numel * 4);
        ks_launch l = tu_launch(0, 0);
        ck_assert_int_eq(ks_im2col_sim(&p, in.data, out, &l, NULL), KS_OK);
        ck_assert_msg(!memcmp(out, unfold.data, (size_t)geo.columns_numel * 4),
                      "geometry %d: im2col differs from torch unfold", id);
        float *img = malloc((size_t)geo.image_numel * 4);
        ck_assert_int_eq(ks_col2im_sim(&p, cols.data, img, &l, NULL), KS_OK);
        const float *want = fold.data;
        for (int64_t i = 0; i < geo.image_numel; ++i) /* torch sums in another order */
            ck_assert_msg(fabsf(img[i] - want[i]) <= 1e-5f * (float)(p.kernel_h * p.kernel_w),
                          "geometry %d: fold[%lld] = %g, torch %g", id, (long long)i, img[i], want[i]);
        free(out), free(img);
        ks_tensor_free(&in), ks_tensor_free(&unfold), ks_tensor_free(&cols), ks_tensor_free(&fold);
        count++;
    }
    ck_assert_int_ge(count, 5);
    cJSON_Delete(root);
}
END_TEST

static void expect_golden(const float *got, const ks_tensor *want, int64_t n, int id, const char *what)
{
    ck_assert_int_eq(ks_tensor_numel(want), n);
    const float *w = want->data;
    for (int64_t i = 0; i < n; ++i)
        ck_assert_msg(fabsf(got[i] - w[i]) <= 1e-4f * (1 + fabsf(w[i])),
                      "geometry %d: %s[%lld] = %.7g, torchvision %.7g", id, what, (long long)i, got[i], w[i]);
}

START_TEST(simulator_matches_torchvision_deform_conv2d)
{
    cJSON *root = listing("deform.json");
    const cJSON *g;
    int count = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "geometries"))
    {
        const int id = (int)item(g, "id", 0);
        const int mask = cJSON_IsTrue(cJSON_GetObjectItem(g, "mask"));
        ks_deform_params p = golden_deform_params(g);
        ks_deform_geom geo;
        ck_assert_int_eq(ks_deform_geometry(&p, &geo), KS_OK);
        static const char *const in_names[] = {"input", "offset", "weight", "bias", "grad_output", "mask"};
        static const char *const out_names[] = {"output",      "grad_input", "grad_offset",
                                                "grad_weight", "grad_bias",  "grad_mask"};
        const int64_t sizes[] = {geo.output_numel, geo.input_numel, geo.offset_numel,
                                 geo.weight_numel, p.out_channels,  geo.mask_numel};
        ks_tensor in[6], want[6];
        float *got[6];
        for (int i = 0; i < 5 + mask; ++i) {
            in[i] = load_prefixed('d', id, in_names[i]);
            want[i] = load_prefixed('d', id, out_names[i]);
            got[i] = calloc((size_t)sizes[i], 4);
        }
        ks_deform_tensors t = {.input = in[0].data,
                               .offset = in[1].data,
                               .mask = mask ? in[5].data : NULL,
                               .weight = in[2].data,
                               .bias = in[3].data,
                               .output = got[0],
                               .grad_output = in[4].data,
                               .grad_input = got[1],
                               .grad_offset = got[2],
                               .grad_mask = mask ? got[5] : NULL,
                               .grad_weight = got[3],
                               .grad_bias = got[4],
                               .columns0 = NULL};
        ks_launch l = tu_launch(0, 0);
        ck_assert_msg(ks_deform_forward_sim(&p, &t, &l, KS_DEFORM_NONE, NULL) == KS_OK, "%s", ks_error_message());
        ck_assert_msg(ks_deform_backward_sim(&p, &t, &l, KS_DEFORM_NONE, NULL) == KS_OK, "%s", ks_error_message());
        for (int i = 0; i < 5 + mask; ++i) expect_golden(got[i], &want[i], sizes[i], id, out_names[i]);
        /* TF32 (the simulator's emulation): within 2e-3 of each tensor's largest entry */
        p.math = KS_MATH_TF32;
        ck_assert_msg(ks_deform_forward_sim(&p, &t, &l, KS_DEFORM_NONE, NULL) == KS_OK, "%s", ks_error_message());
        ck_assert_msg(ks_deform_backward_sim(&p, &t, &l, KS_DEFORM_NONE, NULL) == KS_OK, "%s", ks_error_message());
        for (int i = 0; i < 5 + mask; ++i) {
            const float *w = want[i].data;
            double big = 0, err = 0;
            for (int64_t k = 0; k < sizes[i]; ++k) big = fmax(big, fabs(w[k])), err = fmax(err, fabs(got[i][k] - w[k]));
            ck_assert_msg(err <= 2e-3 * big, "geometry %d tf32: %s off by %g (largest %g)", id, out_names[i], err, big);
            ks_tensor_free(&in[i]), ks_tensor_free(&want[i]), free(got[i]);
        }
        count++;
    }
    ck_assert_int_ge(count, 4);
    cJSON_Delete(root);
}
END_TEST

START_TEST(simulator_matches_torchvision_roi_align)
{
    cJSON *root = listing("roi_align.json");
    const cJSON *g;
    int count = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "geometries"))
    {
        const int id = (int)item(g, "id", 0);
        ks_roi_align_params p = {.batch = item(g, "batch", 0),
                                 .channels = item(g, "channels", 0),
                                 .height = item(g, "input_size", 0),
                                 .width = item(g, "input_size", 1),
                                 .num_rois = item(g, "num_rois", 0),
                                 .pooled_h = item(g, "output_size", 0),
                                 .pooled_w = item(g, "output_size", 1),
                                 .spatial_scale = (float)cJSON_GetObjectItem(g, "spatial_scale")->valuedouble,
                                 .sampling_ratio = item(g, "sampling_ratio", 0),
                                 .aligned = cJSON_IsTrue(cJSON_GetObjectItem(g, "aligned")),
                                 .pool_mode = KS_ROI_AVG};
        ks_tensor in = load_prefixed('r', id, "input"), rois = load_prefixed('r', id, "rois");
        ks_tensor gout = load_prefixed('r', id, "grad_output"), out = load_prefixed('r', id, "output");
        ks_tensor gin = load_prefixed('r', id, "grad_input");
        const int64_t n_out = ks_tensor_numel(&out), n_in = ks_tensor_numel(&in);
        float *o = calloc((size_t)n_out, 4), *gi = calloc((size_t)n_in, 4);
        ks_launch l = tu_launch(0, 0);
        ck_assert_int_eq(ks_roi_align_check_rois(&p, rois.data), KS_OK);
        ck_assert_msg(ks_roi_align_forward_sim(&p, in.data, rois.data, o, NULL, NULL, &l, NULL) == KS_OK, "%s",
                      ks_error_message());
        ck_assert_msg(ks_roi_align_backward_sim(&p, gout.data, rois.data, NULL, NULL, gi, &l, NULL) == KS_OK, "%s",
                      ks_error_message());
        char what[64];
        snprintf(what, sizeof what, "roi geometry %d output", id);
        expect_golden(o, &out, n_out, id, what);
        snprintf(what, sizeof what, "roi geometry %d grad_input", id);
        expect_golden(gi, &gin, n_in, id, what);
        free(o), free(gi);
        ks_tensor_free(&in), ks_tensor_free(&rois), ks_tensor_free(&gout), ks_tensor_free(&out), ks_tensor_free(&gin);
        count++;
    }
    ck_assert_int_ge(count, 4);
    cJSON_Delete(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("torch");
    tcase_add_test(tc, simulator_matches_torch_unfold_and_fold);
    tcase_add_test(tc, simulator_matches_torchvision_deform_conv2d);
    tcase_add_test(tc, simulator_matches_torchvision_roi_align);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
