/* The mmcv hard-coded tests of DeformConv2d (v1) and ModulatedDeformConv2d (v2)
 * (operator notes section 3.6), on the simulator. Both tests put a plain convolution
 * (conv_offset) in front of the deformable one and compare the gradients of its weight
 * and bias too; this file applies the chain rule through that convolution in double. */
#include "deform_fixture.h"

/* |got - want| <= atol + rtol*|want|, as np.allclose */
static void allclose(const double *got, const double *want, int n, double rtol, const char *what)
{
    for (int i = 0; i < n; ++i)
        ck_assert_msg(fabs(got[i] - want[i]) <= 1e-8 + rtol * fabs(want[i]), "%s[%d] = %.6f, mmcv %.6f", what, i,
                      got[i], want[i]);
}

/* conv_offset: a 2x2 convolution of the 1-channel image `in` [3, 3] with padding `pad`
 * into `oc` channels of [Ho, Wo]; pixel (y, x) of the output reads in[y+i-pad, x+j-pad] */
static double pix(const double *in, int y, int x) { return y >= 0 && y < 3 && x >= 0 && x < 3 ? in[y * 3 + x] : 0.0; }

START_TEST(mmcv_deform_conv_v1_forward_and_gradients)
{
    const double in[9] = {1, 2, 3, 0, 1, 2, 3, 5, 2};
    const double ow[8][4] = {{0.1, 0.4, 0.6, 0.1}, {0.3, 0.2, 0.1, 0.3}, {0.5, 0.5, 0.2, 0.8}, {0.8, 0.3, 0.9, 0.1},
                             {0.3, 0.1, 0.2, 0.5}, {0.3, 0.7, 0.5, 0.3}, {0.6, 0.2, 0.5, 0.3}, {0.4, 0.1, 0.8, 0.4}};
    const double ob[8] = {0.7, 0.1, 0.8, 0.5, 0.6, 0.5, 0.4, 0.7};
    const float dw[4] = {0.4f, 0.2f, 0.1f, 0.9f};
    /* batch 10 (mmcv's test ignores its argument), im2col_step 2, kernel 2, no padding */
    ks_deform_params p = {.batch = 10,
                          .channels = 1,
                          .height = 3,
                          .width = 3,
                          .out_channels = 1,
                          .kernel_h = 2,
                          .kernel_w = 2,
                          .pad_h = 0,
                          .pad_w = 0,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 1,
                          .im2col_step = 2,
                          .use_mask = 0,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_MMCV};
    df_case c;
    df_init(&c, &p, 1, 0.0f);
    for (int n = 0; n < 10; ++n)
        for (int i = 0; i < 9; ++i) c.input[n * 9 + i] = (float)in[i];
    for (int n = 0; n < 10; ++n)
        for (int oc = 0; oc < 8; ++oc)
            for (int y = 0; y < 2; ++y)
                for (int x = 0; x < 2; ++x) {
                    double v = ob[oc];
                    for (int k = 0; k < 4; ++k) v += ow[oc][k] * pix(in, y + k / 2, x + k % 2);
                    c.offset[((n * 8 + oc) * 2 + y) * 2 + x] = (float)v;
                }
    memcpy(c.weight, dw, sizeof dw);
    for (int i = 0; i < 40; ++i) c.grad_output[i] = 1.0f;
    ks_launch l = tu_launch(0, 0);
    df_run(&c, &l);
    df_expect(&c, 1e-5, "mmcv v1 against the reference");

    const double gt_out[4] = {1.650, 0, 0, 0};
    const double gt_x_grad[9] = {-0.666, 0.204, 0.000, 0.030, -0.416, 0.012, 0.000, 0.252, 0.129};
    const double gt_ow_grad[32] = {1.44, 2.88,  0.00,  1.44,  -0.72, -1.44, 0.00,  -0.72, 0,     0,     0,
                                   0,    0,     0,     0,     0,     -0.10, -0.20, 0.00,  -0.10, -0.08, -0.16,
                                   0.00, -0.08, -0.54, -1.08, 0.00,  -0.54, -0.54, -1.08, 0.00,  -0.54};
    const double gt_ob_grad[8] = {1.44, -0.72, 0., 0., -0.10, -0.08, -0.54, -0.54};
    const double gt_dw_grad[4] = {3.62, 0., 0.40, 0.18};
    double out[4], xg[9] = {0}, owg[32] = {0}, obg[8] = {0}, dwg[4];
    for (int n = 0; n < 10; ++n) {
        for (int i = 0; i < 4; ++i) ck_assert_float_eq(c.output[n * 4 + i], c.output[i]); /* every image the same */
        for (int oc = 0; oc < 8; ++oc)
            for (int q = 0; q < 4; ++q) {
                const double g = c.grad_offset[(n * 8 + oc) * 4 + q] / 10.0;
                obg[oc] += g;
                for (int k = 0; k < 4; ++k) owg[oc * 4 + k] += g * pix(in, q / 2 + k / 2, q % 2 + k % 2);
            }
    }
    /* x.grad of image 0: the deformable path plus conv_offset's (transposed) */
    for (int i = 0; i < 9; ++i) xg[i] = c.grad_input[i];
    for (int oc = 0; oc < 8; ++oc)
        for (int q = 0; q < 4; ++q)
            for (int k = 0; k < 4; ++k)
                xg[(q / 2 + k / 2) * 3 + q % 2 + k % 2] += c.grad_offset[oc * 4 + q] * ow[oc][k];
    for (int i = 0; i < 4; ++i) out[i] = c.output[i], dwg[i] = c.grad_weight[i] / 10.0;
    allclose(out, gt_out, 4, 1e-3, "out");
    allclose(xg, gt_x_grad, 9, 1e-3, "x.grad");
    allclose(owg, gt_ow_grad, 32, 1e-3, "conv_offset.weight.grad");
    allclose(obg, gt_ob_grad, 8, 1e-3, "conv_offset.bias.grad");
    allclose(dwg, gt_dw_grad, 4, 1e-3, "weight.grad");
    df_free(&c);

    /* im2col_step 3 does not divide batch 10 */
    ks_deform_geom g;
    p.im2col_step = 3;
    ck_assert_int_eq(ks_deform_geometry(&p, &g), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "batch size must be divisible by im2col_step"), "%s", ks_error_message());
}
END_TEST

START_TEST(mmcv_modulated_deform_conv_v2_forward_and_gradients)
{
    /* zero offsets, mask sigmoid(0) = 0.5, weight 1, padding 1, kernel 2: every sample on
     * an integer position, some exactly at -1 and at H (the one-sided gradient rules) */
    const double in[9] = {1, 2, 3, 1, 2, 3, 1, 2, 3};
    ks_deform_params p = {.batch = 1,
                          .channels = 1,
                          .height = 3,
                          .width = 3,
                          .out_channels = 1,
                          .kernel_h = 2,
                          .kernel_w = 2,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 1,
                          .im2col_step = 32,
                          .use_mask = 1,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_MMCV};
    df_case c;
    df_init(&c, &p, 1, 0.0f);
    for (int i = 0; i < 9; ++i) c.input[i] = (float)in[i];
    memset(c.offset, 0, (size_t)c.g.offset_numel * sizeof(float));
    for (int i = 0; i < 64; ++i) c.mask[i] = 0.5f;
    for (int i = 0; i < 4; ++i) c.weight[i] = 1.0f;
    for (int i = 0; i < 16; ++i) c.grad_output[i] = 1.0f;
    ks_launch l = tu_launch(0, 0);
    df_run(&c, &l);
    df_expect(&c, 1e-5, "mmcv v2 against the reference");

    const double output_t[16] = {0.5, 1.5, 2.5, 1.5, 1.0, 3.0, 5.0, 3.0, 1.0, 3.0, 5.0, 3.0, 0.5, 1.5, 2.5, 1.5};
    const double input_grad[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
    const double w_grad[4] = {9, 9, 9, 9};
    const double ow_grad[48] = {-7.0, -4.0, 0.0,  0.0,  -9.0, 7.5,  -6.0, 5.0,  -4.0, -7.0, 0.0,  0.0,
                                -7.5, -9.0, -5.0, -6.0, -7.0, -4.0, -7.0, -4.0, -6.0, 5.0,  -9.0, 7.5,
                                -4.0, -7.0, -4.0, -7.0, -5.0, -6.0, -7.5, -9.0, 10.5, 6.0,  7.0,  4.0,
                                6.0,  10.5, 4.0,  7.0,  7.0,  4.0,  10.5, 6.0,  4.0,  7.0,  6.0,  10.5};
    const double ob_grad[12] = {-3.0, -1.5, -3.0, -1.5, -3.0, -1.5, -3.0, -1.5, 4.5, 4.5, 4.5, 4.5};
    /* conv_offset (weight 0) gives 12 channels: 8 offsets, then 4 mask logits (sigmoid'
     * = 0.25 at 0); its input pixel for output (y, x), tap k is in[y+k/2-1, x+k%2-1] */
    double out[16], xg[9], wg[4], owg[48] = {0}, obg[12] = {0};
    for (int ch = 0; ch < 12; ++ch)
        for (int q = 0; q < 16; ++q) {
            const double g = ch < 8 ? c.grad_offset[ch * 16 + q] : 0.25 * c.grad_mask[(ch - 8) * 16 + q];
            obg[ch] += g;
            for (int k = 0; k < 4; ++k) owg[ch * 4 + k] += g * pix(in, q / 4 + k / 2 - 1, q % 4 + k % 2 - 1);
        }
    for (int i = 0; i < 16; ++i) out[i] = c.output[i];
    for (int i = 0; i < 9; ++i) xg[i] = c.grad_input[i];
    for (int i = 0; i < 4; ++i) wg[i] = c.grad_weight[i];
    allclose(out, output_t, 16, 1e-2, "output");
    allclose(xg, input_grad, 9, 1e-2, "input.grad");
    allclose(wg, w_grad, 4, 1e-2, "weight.grad");
    allclose(owg, ow_grad, 48, 1e-2, "conv_offset.weight.grad");
    allclose(obg, ob_grad, 12, 1e-2, "conv_offset.bias.grad");
    df_free(&c);
}
END_TEST

/* torchvision's rule on the same input turns channel 0 row 0 of grad_offset from
 * [0, 0, 0, 0] into [0, .5, 1, 1.5] (operator notes 3.4, tv_vs_mmcv.out) */
START_TEST(torchvision_rule_changes_the_v2_offset_gradient_on_row_minus_one)
{
    const float in[9] = {1, 2, 3, 1, 2, 3, 1, 2, 3};
    for (int sem = 0; sem < 2; ++sem) {
        ks_deform_params p = {.batch = 1,
                              .channels = 1,
                              .height = 3,
                              .width = 3,
                              .out_channels = 1,
                              .kernel_h = 2,
                              .kernel_w = 2,
                              .pad_h = 1,
                              .pad_w = 1,
                              .stride_h = 1,
                              .stride_w = 1,
                              .dilation_h = 1,
                              .dilation_w = 1,
                              .groups = 1,
                              .offset_groups = 1,
                              .im2col_step = 32,
                              .use_mask = 1,
                              .use_bias = 0,
                              .semantics = sem};
        df_case c;
        df_init(&c, &p, 1, 0.0f);
        memcpy(c.input, in, sizeof in);
        memset(c.offset, 0, (size_t)c.g.offset_numel * sizeof(float));
        for (int i = 0; i < 64; ++i) c.mask[i] = 0.5f;
        for (int i = 0; i < 4; ++i) c.weight[i] = 1.0f;
        for (int i = 0; i < 16; ++i) c.grad_output[i] = 1.0f;
        ks_launch l = tu_launch(0, 0);
        df_run(&c, &l);
        const float want[2][4] = {{0, 0, 0, 0}, {0, 0.5f, 1.0f, 1.5f}};
        for (int x = 0; x < 4; ++x)
            ck_assert_msg(fabsf(c.grad_offset[x] - want[sem][x]) < 1e-6f, "%s: grad_offset[0,0,0,%d] = %g, want %g",
                          sem ? "torchvision" : "mmcv", x, c.grad_offset[x], want[sem][x]);
        df_free(&c);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("deform_conv_mmcv");
    TCase *tc = tcase_create("hard-coded");
    tcase_add_test(tc, mmcv_deform_conv_v1_forward_and_gradients);
    tcase_add_test(tc, mmcv_modulated_deform_conv_v2_forward_and_gradients);
    tcase_add_test(tc, torchvision_rule_changes_the_v2_offset_gradient_on_row_minus_one);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
