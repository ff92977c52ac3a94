/* RoIAlign on the simulator: mmcv's hard-coded cases, torchvision's forward geometry,
 * random geometries against the double reference (avg and max, aligned on and off,
 * several sampling ratios and scales), the border rule, degenerate RoIs, max-mode ties,
 * a launch where threads loop, zero RoIs, NaN RoIs, and traced == plain (the forward
 * bitwise, the backward's atomic adds up to their order). */
#include <float.h>

#include "../kernels/roi_align/roi_align_body.h"
#include "test_util.h"

typedef struct rcase {
    ks_roi_align_params p;
    float *input, *rois, *output, *ay, *ax, *gout, *gin;
    double *r_out, *r_gin;
    int64_t n_in, n_out;
} rcase;

static void rc_init(rcase *c, const ks_roi_align_params *p, const float *input, const float *rois)
{
    memset(c, 0, sizeof *c);
    c->p = *p;
    c->n_in = p->batch * p->channels * p->height * p->width;
    c->n_out = p->num_rois * p->channels * p->pooled_h * p->pooled_w;
    c->input = malloc((size_t)c->n_in * 4);
    memcpy(c->input, input, (size_t)c->n_in * 4);
    c->rois = malloc((size_t)(p->num_rois * 5 + 1) * 4);
    memcpy(c->rois, rois, (size_t)p->num_rois * 5 * 4);
    c->output = calloc((size_t)c->n_out + 1, 4);
    c->ay = calloc((size_t)c->n_out + 1, 4);
    c->ax = calloc((size_t)c->n_out + 1, 4);
    c->gout = calloc((size_t)c->n_out + 1, 4);
    c->gin = calloc((size_t)c->n_in, 4);
    c->r_out = calloc((size_t)c->n_out + 1, 8);
    c->r_gin = calloc((size_t)c->n_in, 8);
}

static void rc_run(rcase *c, const ks_launch *l)
{
    ck_assert_msg(ks_roi_align_check_rois(&c->p, c->rois) == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_roi_align_forward_sim(&c->p, c->input, c->rois, c->output, c->ay, c->ax, l, NULL) == KS_OK, "%s",
                  ks_error_message());
    memset(c->gin, 0, (size_t)c->n_in * 4);
    ck_assert_msg(ks_roi_align_backward_sim(&c->p, c->gout, c->rois, c->ay, c->ax, c->gin, l, NULL) == KS_OK, "%s",
                  ks_error_message());
    ks_roi_align_ref_forward(&c->p, c->input, c->rois, c->r_out);
    ks_roi_align_ref_backward(&c->p, c->input, c->rois, c->gout, c->r_gin);
}

static void rc_free(rcase *c)
{
    void *all[] = {c->input, c->rois, c->output, c->ay, c->ax, c->gout, c->gin, c->r_out, c->r_gin};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free(all[i]);
}

static ks_roi_align_params params(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t PH, int64_t PW,
                                  float scale, int64_t sr, int aligned, int mode)
{
    ks_roi_align_params p = {.batch = N,
                             .channels = C,
                             .height = H,
                             .width = W,
                             .num_rois = K,
                             .pooled_h = PH,
                             .pooled_w = PW,
                             .spatial_scale = scale,
                             .sampling_ratio = sr,
                             .aligned = aligned,
                             .pool_mode = mode};
    return p;
}

START_TEST(mmcv_hard_coded_cases_forward_and_gradient)
{
    const float in1[4] = {1, 2, 3, 4}, in2[8] = {1, 2, 3, 4, 4, 3, 2, 1};
    const float in3[16] = {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16};
    const float roi12[5] = {0, 0, 0, 1, 1}, roi3[5] = {0, 0, 0, 3, 3};
    const double out1[4] = {1.0, 1.25, 1.5, 1.75}, out2[8] = {1.0, 1.25, 1.5, 1.75, 4.0, 3.75, 3.5, 3.25};
    const double out3[4] = {1.9375, 4.75, 7.5625, 10.375};
    const double g1[4] = {3.0625, 0.4375, 0.4375, 0.0625};
    const double g3[16] = {0.47265625, 0.42968750, 0.42968750, 0.04296875, 0.42968750, 0.39062500,
                           0.39062500, 0.03906250, 0.42968750, 0.39062500, 0.39062500, 0.03906250,
                           0.04296875, 0.03906250, 0.03906250, 0.00390625};
    struct {
        int64_t C, H;
        const float *in, *roi;
        const double *out, *grad;
    } cases[3] = {{.C = 1, .H = 2, .in = in1, .roi = roi12, .out = out1, .grad = g1},
                  {.C = 2, .H = 2, .in = in2, .roi = roi12, .out = out2, .grad = NULL},
                  {.C = 1, .H = 4, .in = in3, .roi = roi3, .out = out3, .grad = g3}};
    for (int k = 0; k < 3; ++k) {
        /* roi_align(x, rois, (2, 2), 1.0, 2, 'avg', aligned=True), backward with ones */
        ks_roi_align_params p = params(1, cases[k].C, cases[k].H, cases[k].H, 1, 2, 2, 1.0f, 2, 1, KS_ROI_AVG);
        rcase c;
        rc_init(&c, &p, cases[k].in, cases[k].roi);
        for (int64_t i = 0; i < c.n_out; ++i) c.gout[i] = 1.0f;
        ks_launch l = tu_launch(0, 0);
        rc_run(&c, &l);
        for (int64_t i = 0; i < c.n_out; ++i)
            ck_assert_msg(fabs(c.output[i] - cases[k].out[i]) <= 1e-3, "case %d output[%lld] = %g, mmcv %g", k + 1,
                          (long long)i, c.output[i], cases[k].out[i]);
        for (int64_t i = 0; i < c.n_in; ++i) {
            const double want = cases[k].grad ? cases[k].grad[i] : g1[i % 4]; /* case 2: both channels as case 1 */
            ck_assert_msg(fabs(c.gin[i] - want) <= 1e-3, "case %d grad[%lld] = %g, mmcv %g", k + 1, (long long)i,
                          c.gin[i], want);
        }
        tu_expect_close(c.output, c.r_out, c.n_out, 1e-6, "reference output");
        tu_expect_close(c.gin, c.r_gin, c.n_in, 1e-6, "reference grad");
        rc_free(&c);
    }
}
END_TEST

/* [[1,2],[3,4]], roi (0, 1, 1, 3, 3), aligned False, sr 2, 2x2: [[4, 0], [0, 0]]: bin
 * (0, 0) samples 1.25 and 1.75, inside [H-1, H]: all clamp to pixel (1, 1); y > 2 is 0 */
START_TEST(samples_within_one_pixel_replicate_the_border_beyond_are_zero)
{
    const float in[4] = {1, 2, 3, 4}, roi[5] = {0, 1, 1, 3, 3};
    ks_roi_align_params p = params(1, 1, 2, 2, 1, 2, 2, 1.0f, 2, 0, KS_ROI_AVG);
    rcase c;
    rc_init(&c, &p, in, roi);
    ks_launch l = tu_launch(0, 0);
    rc_run(&c, &l);
    const float want[4] = {4, 0, 0, 0};
    for (int i = 0; i < 4; ++i) ck_assert_float_eq(c.output[i], want[i]);
    rc_free(&c);
}
END_TEST

static void random_rois(uint64_t *s, const ks_roi_align_params *p, float *rois)
{
    for (int64_t k = 0; k < p->num_rois; ++k) {
        /* boxes in image coordinates / scale, some hanging over the border */
        const float H = (float)p->height / p->spatial_scale, W = (float)p->width / p->spatial_scale;
        float x1 = (float)tu_int(s, -20, 100) / 100.0f * W, y1 = (float)tu_int(s, -20, 100) / 100.0f * H;
        float w = (float)tu_int(s, 0, 80) / 100.0f * W, h = (float)tu_int(s, 0, 80) / 100.0f * H;
        rois[k * 5] = (float)tu_int(s, 0, p->batch - 1);
        rois[k * 5 + 1] = x1, rois[k * 5 + 2] = y1, rois[k * 5 + 3] = x1 + w, rois[k * 5 + 4] = y1 + h;
    }
}

START_TEST(random_geometries_match_the_reference)
{
    uint64_t s = 0x401;
    const float scales[3] = {1.0f, 0.5f, 0.25f};
    for (int t = 0; t < 48; ++t) {
        ks_roi_align_params p = params(tu_int(&s, 1, 3), tu_int(&s, 1, 3), tu_int(&s, 2, 11), tu_int(&s, 2, 11),
                                       tu_int(&s, 1, 5), tu_int(&s, 1, 4), tu_int(&s, 1, 4), scales[t % 3],
                                       tu_int(&s, -1, 3), t % 2, (t / 2) % 2 ? KS_ROI_MAX : KS_ROI_AVG);
        const int64_t n_in = p.batch * p.channels * p.height * p.width;
        float *in = tu_random(&s, n_in), rois[25];
        random_rois(&s, &p, rois);
        rcase c;
        rc_init(&c, &p, in, rois);
        float *g = tu_random(&s, c.n_out);
        memcpy(c.gout, g, (size_t)c.n_out * 4);
        ks_launch l = t % 3 ? tu_launch(0, 0) : tu_launch(32, 1);
        rc_run(&c, &l);
        char what[64];
        snprintf(what, sizeof what, "geometry %d output", t);
        tu_expect_close(c.output, c.r_out, c.n_out, 1e-5, what);
        snprintf(what, sizeof what, "geometry %d grad_input", t);
        tu_expect_close(c.gin, c.r_gin, c.n_in, 1e-5, what);
        free(in), free(g);
        rc_free(&c);
    }
}
END_TEST

/* torchvision's forward test: x (2, 50, 10, 10), four RoIs, 5x5, scale 1, adaptive */
START_TEST(torchvision_forward_geometry_matches_the_reference)
{
    const float rois[20] = {0, 0, 0, 9, 9, 0, 0, 5, 4, 9, 0, 5, 5, 9, 9, 1, 0, 0, 9, 9};
    uint64_t s = 50;
    float *in = tu_random(&s, 2 * 50 * 100);
    for (int aligned = 0; aligned < 2; ++aligned) {
        ks_roi_align_params p = params(2, 50, 10, 10, 4, 5, 5, 1.0f, -1, aligned, KS_ROI_AVG);
        rcase c;
        rc_init(&c, &p, in, rois);
        ks_launch l = tu_launch(0, 0);
        rc_run(&c, &l);
        tu_expect_close(c.output, c.r_out, c.n_out, 1e-5, aligned ? "aligned" : "not aligned");
        rc_free(&c);
    }
    free(in);
}
END_TEST

/* torchvision's backward-test geometry: x (1, 8, 5, 5), three RoIs, 2x2, sampling ratio
 * 1, not aligned: the gradient against the reference */
START_TEST(torchvision_backward_geometry_matches_the_reference)
{
    const float rois[15] = {0, 0, 0, 4, 4, 0, 0, 2, 3, 4, 0, 2, 2, 4, 4};
    uint64_t s = 8;
    float *in = tu_random(&s, 8 * 25);
    ks_roi_align_params p = params(1, 8, 5, 5, 3, 2, 2, 1.0f, 1, 0, KS_ROI_AVG);
    rcase c;
    rc_init(&c, &p, in, rois);
    float *g = tu_random(&s, c.n_out);
    memcpy(c.gout, g, (size_t)c.n_out * 4);
    ks_launch l = tu_launch(0, 0);
    rc_run(&c, &l);
    tu_expect_close(c.output, c.r_out, c.n_out, 1e-6, "output");
    tu_expect_close(c.gin, c.r_gin, c.n_in, 1e-6, "grad_input");
    free(in), free(g);
    rc_free(&c);
}
END_TEST

/* the backward's three paths against the reference, with 5 channels (a chunk of 4 and
 * one of 1): bins narrow enough to merge per axis, bins wider than KS_ROI_SPAN pixels
 * (sample by sample), and reversed boxes (aligned keeps them; their samples walk
 * backwards, so they are not merged) */
START_TEST(backward_merged_wide_and_reversed_bins_match_the_reference)
{
    const float rois[20] = {0, 2,    3,     14, 11, /* 2x3 bins of 6 x 2.7 px: merged */
                            1, 0,    0,     47, 39, /* 2x3 bins of 15.7 x 19.5 px, 3x3 samples: too wide */
                            0, 30,   20,    10, 5,  /* reversed in x and y */
                            1, 5.5f, 7.25f, 9,  30};
    uint64_t s = 0xB4C;
    for (int ratio = 0; ratio < 4; ratio += 3) {
        ks_roi_align_params p = params(2, 5, 41, 48, 4, 2, 3, 1.0f, ratio, 1, KS_ROI_AVG);
        float *in = tu_random(&s, 2 * 5 * 41 * 48);
        rcase c;
        rc_init(&c, &p, in, rois);
        float *g = tu_random(&s, c.n_out);
        memcpy(c.gout, g, (size_t)c.n_out * 4);
        ks_launch l = ratio ? tu_launch(0, 0) : tu_launch(32, 2);
        rc_run(&c, &l);
        tu_expect_close(c.output, c.r_out, c.n_out, 1e-5, "output");
        tu_expect_close(c.gin, c.r_gin, c.n_in, 1e-5, "grad_input");
        free(in), free(g);
        rc_free(&c);
    }
}
END_TEST

/* aligned with adaptive sampling: a zero-size RoI has an empty grid (0); legacy
 * (not aligned) forces it to 1x1 and samples */
START_TEST(degenerate_rois_follow_aligned)
{
    const float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, roi[5] = {0, 1, 1, 1, 1};
    for (int aligned = 0; aligned < 2; ++aligned) {
        ks_roi_align_params p = params(1, 1, 3, 3, 1, 1, 1, 1.0f, 0, aligned, KS_ROI_AVG);
        rcase c;
        rc_init(&c, &p, in, roi);
        ks_launch l = tu_launch(0, 0);
        rc_run(&c, &l);
        /* legacy: box (1,1)-(2,2), one sample at (1.5, 1.5) = 7 */
        ck_assert_float_eq(c.output[0], aligned ? 0.0f : 7.0f);
        rc_free(&c);
    }
}
END_TEST

/* max mode: strict >, the first of equal samples wins; out-of-range samples (0) compete */
START_TEST(max_mode_ties_and_out_of_range_samples)
{
    const float flat[16] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
    const float roi[5] = {0, 0.5f, 0.5f, 2.5f, 2.5f};
    ks_roi_align_params p = params(1, 1, 4, 4, 1, 1, 1, 1.0f, 2, 0, KS_ROI_MAX);
    rcase c;
    rc_init(&c, &p, flat, roi);
    ks_launch l = tu_launch(0, 0);
    rc_run(&c, &l);
    ck_assert_float_eq(c.output[0], 5.0f);
    ck_assert_float_eq(c.ay[0], 1.0f); /* the first sample: y1 + 0.5*bin = 0.5 + 0.5 */
    ck_assert_float_eq(c.ax[0], 1.0f);
    rc_free(&c);
    /* all negative, the box half outside: out-of-range samples give 0 and win */
    float neg[16];
    for (int i = 0; i < 16; ++i) neg[i] = -1.0f - (float)i;
    const float out_roi[5] = {0, 2.0f, 2.0f, 8.0f, 8.0f};
    rc_init(&c, &p, neg, out_roi);
    rc_run(&c, &l);
    ck_assert_float_eq(c.output[0], 0.0f);
    /* sample (0, 0) at (3.5, 3.5) clamps to pixel (3, 3) = -16; sample (0, 1) at
     * (3.5, 6.5) is past W = 4: 0, which beats it */
    ck_assert_float_eq(c.ay[0], 3.5f);
    ck_assert_float_eq(c.ax[0], 6.5f);
    rc_free(&c);
}
END_TEST

/* K*C*PH*PW = 64*256*14*14 > 4096*512: each thread of the capped grid loops */
START_TEST(threads_loop_when_the_grid_is_capped)
{
    ks_roi_align_params p = params(2, 256, 12, 13, 64, 14, 14, 0.5f, 1, 1, KS_ROI_AVG);
    uint64_t s = 77;
    const int64_t n_in = 2 * 256 * 12 * 13;
    float *in = tu_random(&s, n_in), rois[64 * 5];
    random_rois(&s, &p, rois);
    rcase c;
    rc_init(&c, &p, in, rois);
    ck_assert_int_gt(c.n_out, 4096LL * 512);
    ks_launch l = tu_launch(0, 0);
    ck_assert_int_eq(ks_roi_align_forward_sim(&p, c.input, c.rois, c.output, c.ay, c.ax, &l, NULL), KS_OK);
    ks_roi_align_ref_forward(&p, c.input, c.rois, c.r_out);
    tu_expect_close(c.output, c.r_out, c.n_out, 1e-5, "capped grid");
    free(in);
    rc_free(&c);
}
END_TEST

/* no RoIs: nothing launches and nothing fails; NaN/Inf boxes read nothing and give 0;
 * a batch index outside the input is refused on the host */
START_TEST(empty_nan_and_bad_batch_rois)
{
    const float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ks_roi_align_params p = params(1, 1, 3, 3, 0, 2, 2, 1.0f, 0, 1, KS_ROI_AVG);
    ks_launch l = tu_launch(0, 0);
    ck_assert_int_eq(ks_roi_align_forward_sim(&p, in, NULL, NULL, NULL, NULL, &l, NULL), KS_OK);
    const float nan_rois[10] = {0, NAN, 0, 2, 2, 0, 0, 0, INFINITY, INFINITY};
    p.num_rois = 2;
    for (int sr = 0; sr < 3; sr += 2) {
        p.sampling_ratio = sr;
        rcase c;
        rc_init(&c, &p, in, nan_rois);
        rc_run(&c, &l);
        for (int i = 0; i < 8; ++i) ck_assert_msg(c.output[i] == 0.0f || isnan(c.output[i]) == 0, "output %d", i);
        for (int i = 0; i < 4; ++i) ck_assert_float_eq(c.output[i], 0.0f); /* NaN x: every sample out of range */
        rc_free(&c);
    }
    const float bad[5] = {1, 0, 0, 2, 2};
    p.num_rois = 1;
    ck_assert_int_eq(ks_roi_align_check_rois(&p, bad), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "outside the input's batch"), "%s", ks_error_message());
}
END_TEST

/* the RoIAlign average is linear in the input: the reference gradient equals finite
 * differences exactly up to rounding */
START_TEST(reference_gradient_matches_finite_differences)
{
    uint64_t s = 0xFD;
    ks_roi_align_params p = params(2, 2, 6, 7, 3, 2, 3, 0.5f, -1, 1, KS_ROI_AVG);
    float *in = tu_random(&s, 2 * 2 * 42), rois[15];
    random_rois(&s, &p, rois);
    float *g = tu_random(&s, 3 * 2 * 6);
    double out_up[36], out_dn[36], *gin = malloc(168 * 8);
    ks_roi_align_ref_backward(&p, in, rois, g, gin);
    for (int i = 0; i < 168; i += 5) {
        const float keep = in[i];
        in[i] = keep + 0.25f;
        ks_roi_align_ref_forward(&p, in, rois, out_up);
        in[i] = keep - 0.25f;
        ks_roi_align_ref_forward(&p, in, rois, out_dn);
        in[i] = keep;
        double fd = 0;
        for (int k = 0; k < 36; ++k) fd += g[k] * (out_up[k] - out_dn[k]) / 0.5;
        ck_assert_msg(fabs(fd - gin[i]) < 1e-9, "d/d input[%d]: analytic %g, finite difference %g", i, gin[i], fd);
    }
    free(in), free(g), free(gin);
}
END_TEST

START_TEST(traced_equals_plain)
{
    uint64_t s = 0x7A;
    for (int t = 0; t < 6; ++t) {
        ks_roi_align_params p = params(2, 3, 9, 8, 4, 3, 2, t % 2 ? 0.5f : 1.0f, t % 3 - 1, t % 2,
                                       t < 3 ? KS_ROI_AVG : KS_ROI_MAX);
        float *in = tu_random(&s, 2 * 3 * 72), rois[20];
        random_rois(&s, &p, rois);
        float *g = tu_random(&s, 4 * 3 * 6);
        float out[2][72], ay[2][72], ax[2][72], gin[2][432];
        ks_launch l = tu_launch(32, 2);
        for (int v = 0; v < 2; ++v) {
            ks_sink *sink = v ? ks_host_sink_create(0, ks_filter_all()) : NULL;
            memset(gin[v], 0, sizeof gin[v]);
            ck_assert_int_eq(ks_roi_align_forward_sim(&p, in, rois, out[v], ay[v], ax[v], &l, sink), KS_OK);
            ck_assert_int_eq(ks_roi_align_backward_sim(&p, g, rois, ay[v], ax[v], gin[v], &l, sink), KS_OK);
            ks_host_sink_free(sink);
        }
        ck_assert(!memcmp(out[0], out[1], sizeof out[0]));
        /* the backward's atomic adds: the plain kernel visits KS_ROI_CHUNK channels per
         * slot, the traced one channel, so with looping threads the adds into one element
         * come in another order (as on a GPU): equal up to rounding */
        for (int i = 0; i < 432; ++i)
            ck_assert_msg(fabsf(gin[0][i] - gin[1][i]) <= 1e-6f * (1.0f + fabsf(gin[0][i])), "grad_input[%d]: %g vs %g",
                          i, gin[0][i], gin[1][i]);
        if (p.pool_mode == KS_ROI_MAX)
            ck_assert(!memcmp(ay[0], ay[1], sizeof ay[0]) && !memcmp(ax[0], ax[1], sizeof ax[0]));
        free(in), free(g);
    }
}
END_TEST

/* The avg forward of adaptive grids sums a bin whose samples merge per axis pixel by
 * pixel (a->merge, ks_roi_fwd_merged): against the reference and against the sample-by-
 * sample sums (forward KS_ROI_FWD_SAMPLES, the same products rounded in another order: close, and not
 * bitwise equal everywhere, so the merged sums did run), for bins narrow enough to merge,
 * bins wider than KS_ROI_SPAN pixels (sample by sample), a reversed box (an adaptive grid
 * gives it no samples) and samples past the border; 5 channels (a chunk of 4 and one of
 * 1), a launch where threads loop. */
START_TEST(merged_adaptive_forward_matches_the_reference_and_the_sample_sums)
{
    uint64_t s = 0x3E6;
    for (int t = 0; t < 6; ++t) {
        ks_roi_align_params p = params(2, 5, 30 + 7 * t, 41 - 3 * t, 9, 7, t % 2 ? 5 : 7, t % 3 ? 0.5f : 1.0f, -(t % 2),
                                       t % 2, KS_ROI_AVG);
        const int64_t n_in = p.batch * p.channels * p.height * p.width;
        float *in = tu_random(&s, n_in), rois[45];
        random_rois(&s, &p, rois);
        for (int k = 0; k < 9; ++k) /* off whole bin sizes: the reference's grid is ceil() in double */
            rois[5 * k + 3] += 0.013f, rois[5 * k + 4] += 0.017f;
        rois[3] = rois[1] - 6.0f; /* RoI 0 reversed in x */
        rcase c;
        rc_init(&c, &p, in, rois);
        ks_launch l = t % 3 ? tu_launch(0, 0) : tu_launch(64, 1);
        rc_run(&c, &l);
        char what[64];
        snprintf(what, sizeof what, "merged case %d", t);
        float *plain = malloc((size_t)c.n_out * 4);
        ks_roi_align_params by_sample = p;
        by_sample.forward = KS_ROI_FWD_SAMPLES;
        const int rc = ks_roi_align_forward_sim(&by_sample, in, rois, plain, c.ay, c.ax, &l, NULL);
        ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
        int differ = 0;
        for (int64_t i = 0; i < c.n_out; ++i) {
            ck_assert_msg(fabsf(plain[i] - c.output[i]) <= 1e-6f * (1.0f + fabsf(plain[i])),
                          "%s[%lld]: %g merged, %g by sample", what, (long long)i, (double)c.output[i],
                          (double)plain[i]);
            differ |= plain[i] != c.output[i];
        }
        tu_expect_close(c.output, c.r_out, c.n_out, 1e-5, what);
        ck_assert_msg(differ, "%s: the merged sums are bitwise the per-sample ones: did they run?", what);
        free(in), free(plain);
        rc_free(&c);
    }
}
END_TEST

/* Inf and NaN pixels: the merged sums are NaN where the per-sample ones are (a pixel that
 * a sample's corner meets with weight 0 - a whole-number coordinate, the last row or
 * column - multiplies an Inf into NaN there), Inf where they are, and the traced kernel
 * gives the same bits. Two hand cases (an Inf on the clamped last pixel; an Inf that
 * integer sample coordinates meet with weight 0 and their neighbours with weight > 0),
 * then random planes with 3 % of their pixels Inf, -Inf or NaN, boxes on whole and half
 * pixels. */
static void expect_same_nonfinite(const float *a, const float *b, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; ++i) {
        const int ok = isnan(a[i]) ? isnan(b[i])
                                   : (isinf(a[i]) ? a[i] == b[i] : fabsf(a[i] - b[i]) <= 1e-6f * (1 + fabsf(a[i])));
        ck_assert_msg(ok, "%s[%lld]: merged %g, by sample %g", what, (long long)i, (double)a[i], (double)b[i]);
    }
}

static void merged_and_by_sample(const ks_roi_align_params *p, const float *in, const float *rois, float *merged,
                                 float *by_sample, float *traced)
{
    ks_launch l = tu_launch(0, 0);
    ck_assert_int_eq(ks_roi_align_forward_sim(p, in, rois, merged, NULL, NULL, &l, NULL), KS_OK);
    ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_int_eq(ks_roi_align_forward_sim(p, in, rois, traced, NULL, NULL, &l, sink), KS_OK);
    ks_host_sink_free(sink);
    ks_roi_align_params ps = *p;
    ps.forward = KS_ROI_FWD_SAMPLES;
    ck_assert_int_eq(ks_roi_align_forward_sim(&ps, in, rois, by_sample, NULL, NULL, &l, NULL), KS_OK);
}

START_TEST(merged_adaptive_forward_keeps_nan_and_inf_as_the_sample_sums)
{
    float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, out[3][1];
    const float roi_last[5] = {0, 0, 0, 3, 3}, roi_half[5] = {0, -0.5f, -0.5f, 1.5f, 1.5f};
    ks_roi_align_params p = params(1, 1, 3, 3, 1, 1, 1, 1.0f, 0, 0, KS_ROI_AVG);
    in[8] = INFINITY; /* the last pixel, which clamped samples meet with weight 0 */
    merged_and_by_sample(&p, in, roi_last, out[0], out[1], out[2]);
    ck_assert_msg(isnan(out[0][0]) && isnan(out[1][0]), "last pixel Inf: merged %g, by sample %g", out[0][0],
                  out[1][0]);
    in[8] = 9, in[4] = INFINITY; /* samples at 0, 1: pixel 1's weight is 0 from one, 1 from another */
    merged_and_by_sample(&p, in, roi_half, out[0], out[1], out[2]);
    ck_assert_msg(isnan(out[0][0]) && isnan(out[1][0]), "middle pixel Inf: merged %g, by sample %g", out[0][0],
                  out[1][0]);
    ck_assert(!memcmp(out[0], out[2], sizeof out[0]));
    uint64_t s = 0x1AF;
    for (int t = 0; t < 8; ++t) {
        ks_roi_align_params q = params(2, 3, 21 + t, 17 + 2 * t, 12, 3 + t % 3, 4, t % 2 ? 1.0f : 0.5f, 0, t % 2,
                                       KS_ROI_AVG);
        const int64_t n_in = q.batch * q.channels * q.height * q.width, n_out = 12 * 3 * q.pooled_h * 4;
        float *x = tu_random(&s, n_in), rois[60];
        const float bad[3] = {INFINITY, -INFINITY, NAN};
        for (int64_t i = 0; i < n_in; ++i)
            if (tu_int(&s, 0, 99) < 3) x[i] = bad[tu_int(&s, 0, 2)];
        random_rois(&s, &q, rois);
        for (int k = 0; k < 12; ++k) /* corners on whole or half pixels (after the scale) */
            for (int e = 1; e < 5; ++e)
                rois[5 * k + e] = roundf(rois[5 * k + e] * q.spatial_scale * 2) / 2 / q.spatial_scale;
        float *o = malloc((size_t)n_out * 12);
        merged_and_by_sample(&q, x, rois, o, o + n_out, o + 2 * n_out);
        char what[48];
        snprintf(what, sizeof what, "non-finite case %d", t);
        expect_same_nonfinite(o, o + n_out, n_out, what);
        ck_assert_msg(!memcmp(o, o + 2 * n_out, (size_t)n_out * 4), "%s: traced != plain", what);
        free(x), free(o);
    }
}
END_TEST

/* The plane forward (KS_ROI_FWD_PLANE, roi_align_plane_body.h) against the reference
 * and bitwise against the slot kernel (the simulator's default): planes that fit the
 * simulator's 48 KiB tile, planes of 300 rows cut into three bands (126 rows a tile: 8 of
 * margin, so the large RoIs' bins read corner rows past the band from global memory), a
 * row too wide for the tile (the slot kernel runs), 40 x 40 samples a bin, avg and max,
 * block sizes that are not a multiple of a warp and grids where blocks loop. The output
 * starts as NaN: a bin no band owned would show. An adaptive avg forward sums merged
 * bins (a->merge), which the plane kernel does not: the slot kernel runs there too. */
START_TEST(plane_forward_matches_the_reference_and_the_slot_kernel)
{
    uint64_t s = 0x57A6;
    for (int t = 0; t < 8; ++t) {
        const int tall = t >= 3 && t < 6, wide = t == 7;
        ks_roi_align_params p = params(2, tall ? 5 : 7, tall ? 300 : (wide ? 4 : 45), tall ? 97 : (wide ? 1600 : 61), 7,
                                       7, 5, tall ? 1.0f : 0.5f, t == 6 ? 40 : t % 3 - 1 + (t == 0), t % 2,
                                       t % 2 ? KS_ROI_MAX : KS_ROI_AVG);
        const int64_t n_in = p.batch * p.channels * p.height * p.width;
        float *in = tu_random(&s, n_in), rois[35];
        random_rois(&s, &p, rois);
        if (tall) { /* RoI 0 covers the image: bins crossing every band's margin */
            rois[1] = 0.3f, rois[2] = 0.7f;
            rois[3] = 96.6f, rois[4] = 298.2f;
        }
        rcase c;
        rc_init(&c, &p, in, rois);
        const ks_launch launches[3] = {tu_launch(0, 0), tu_launch(37, 3), tu_launch(64, 1)};
        ks_launch l = launches[t % 3];
        rc_run(&c, &l); /* the slot kernel, and the reference */
        char what[64];
        snprintf(what, sizeof what, "plane case %d", t);
        float *out = malloc((size_t)c.n_out * 4), *ay = malloc((size_t)c.n_out * 4), *ax = malloc((size_t)c.n_out * 4);
        memset(out, 0xff, (size_t)c.n_out * 4), memset(ay, 0xff, (size_t)c.n_out * 4),
            memset(ax, 0xff, (size_t)c.n_out * 4);
        const long long before = ks_roi_align_plane_launches();
        ks_roi_align_params pf = p;
        pf.forward = KS_ROI_FWD_PLANE;
        const int rc = ks_roi_align_forward_sim(&pf, in, rois, out, ay, ax, &l, NULL);
        ck_assert_msg(rc == KS_OK, "%s: %s", what, ks_error_message());
        /* the plane kernel ran, but for the row too wide for its tile and merged bins */
        const int merged = p.pool_mode == KS_ROI_AVG && p.sampling_ratio <= 0;
        ck_assert_int_eq(ks_roi_align_plane_launches() - before, wide || merged ? 0 : 1);
        /* coordinates up to ~300 (1600) are float to 3e-5 (1.2e-4), times slopes up to 2 of
         * random input */
        tu_expect_close(out, c.r_out, c.n_out, tall ? 1e-4 : (wide ? 5e-4 : 1e-5), what);
        ck_assert_msg(!memcmp(out, c.output, (size_t)c.n_out * 4), "%s: plane != slot kernel", what);
        if (p.pool_mode == KS_ROI_MAX)
            ck_assert(!memcmp(ay, c.ay, (size_t)c.n_out * 4) && !memcmp(ax, c.ax, (size_t)c.n_out * 4));
        free(in), free(out), free(ay), free(ax);
        rc_free(&c);
    }
}
END_TEST

/* The channels-last forward (KS_ROI_FWD_CL, roi_align_cl_body.h: the CUDA default for
 * the avg forward of adaptive grids) against the reference and bitwise against the slot
 * kernel (the simulator's default; a NaN where the slot kernel has one: the CPU may give
 * it another sign bit), its output starting as a sentinel no result has: 4, 2 and 1
 * channels a thread (C = 8, 6, 37), a partial channel group (C = 68: 128 a group) and
 * several (C = 129: 32 a group), sampling ratio 2, 1 and adaptive (merged bins, 3 % of the
 * pixels Inf, -Inf or NaN in one case), 14 x 14 bins (three chunks of 66 for 128 channels
 * in blocks of 256; two of 98 for 64 in blocks of 16), 20 x 20 (two of 200 for 32),
 * adaptive bins too wide to merge (2 x 1 bins at scale 1: summed sample by sample), blocks
 * of 256, 37 threads (a short warp) and 16 (16 lanes) with grids where blocks loop. Max
 * pooling and 1 x 400 bins (profiles past KS_ROI_CL_PROF_MAX) run the slot kernel: the
 * launch count says which ran. */
START_TEST(channels_last_forward_matches_the_reference_and_the_slot_kernel)
{
    uint64_t s = 0xC1A57;
    const struct {
        int C, PH, PW, sr, max, bad;
        float scale;
        int threads, cap;
    } cs[] = {{8, 7, 7, 2, 0, 0, 0.25f, 0, 0}, {6, 3, 5, 0, 0, 0, 0.5f, 37, 3},    {37, 4, 3, 1, 0, 0, 0.25f, 16, 2},
              {68, 7, 7, 0, 0, 1, 0.5f, 0, 0}, {129, 2, 3, 2, 0, 0, 0.25f, 37, 3}, {8, 14, 14, 2, 0, 0, 0.5f, 16, 2},
              {5, 3, 3, 2, 1, 0, 0.25f, 0, 0}, {3, 20, 20, 0, 0, 0, 0.5f, 37, 3},  {132, 14, 14, 0, 0, 0, 0.25f, 16, 2},
              {12, 2, 1, 0, 0, 0, 1.0f, 0, 0}, {5, 1, 400, 0, 0, 0, 1.0f, 37, 3},  {128, 14, 14, 0, 0, 0, 0.25f, 0, 0},
              {40, 5, 4, 0, 0, 1, 1.0f, 16, 2}};
    for (int t = 0; t < (int)(sizeof cs / sizeof cs[0]); ++t) {
        ks_roi_align_params p = params(2, cs[t].C, 23 + t, 31 - t, 9, cs[t].PH, cs[t].PW, cs[t].scale, cs[t].sr,
                                       t % 3 != 1, cs[t].max ? KS_ROI_MAX : KS_ROI_AVG);
        const int64_t n_in = p.batch * p.channels * p.height * p.width;
        float *in = tu_random(&s, n_in), rois[45];
        const float bad[3] = {INFINITY, -INFINITY, NAN};
        if (cs[t].bad)
            for (int64_t i = 0; i < n_in; ++i)
                if (tu_int(&s, 0, 99) < 3) in[i] = bad[tu_int(&s, 0, 2)];
        random_rois(&s, &p, rois);
        rcase c;
        rc_init(&c, &p, in, rois);
        ks_launch l = tu_launch(cs[t].threads, cs[t].cap);
        rc_run(&c, &l); /* the slot kernel, and the reference */
        char what[64];
        snprintf(what, sizeof what, "channels-last case %d", t);
        float *out = malloc((size_t)c.n_out * 4), *ay = malloc((size_t)c.n_out * 4), *ax = malloc((size_t)c.n_out * 4);
        for (int64_t i = 0; i < c.n_out; ++i) out[i] = 1e30f; /* unwritten shows */
        const long long before = ks_roi_align_cl_launches();
        ks_roi_align_params pf = p;
        pf.forward = KS_ROI_FWD_CL;
        const int rc = ks_roi_align_forward_sim(&pf, in, rois, out, ay, ax, &l, NULL);
        ck_assert_msg(rc == KS_OK, "%s: %s", what, ks_error_message());
        ck_assert_int_eq(ks_roi_align_cl_launches() - before, cs[t].max || cs[t].PH + cs[t].PW > 341 ? 0 : 1);
        if (!cs[t].bad) tu_expect_close(out, c.r_out, c.n_out, 1e-5, what);
        for (int64_t i = 0; i < c.n_out; ++i) /* bitwise, and a NaN where the slot kernel has one */
            ck_assert_msg(isnan(out[i]) ? isnan(c.output[i]) : !memcmp(&out[i], &c.output[i], 4),
                          "%s: output[%lld] %g, slot kernel %g", what, (long long)i, (double)out[i],
                          (double)c.output[i]);
        free(in), free(out), free(ay), free(ax);
        rc_free(&c);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("roi_align");
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, mmcv_hard_coded_cases_forward_and_gradient);
    tcase_add_test(tc, samples_within_one_pixel_replicate_the_border_beyond_are_zero);
    tcase_add_test(tc, random_geometries_match_the_reference);
    tcase_add_test(tc, torchvision_forward_geometry_matches_the_reference);
    tcase_add_test(tc, torchvision_backward_geometry_matches_the_reference);
    tcase_add_test(tc, degenerate_rois_follow_aligned);
    tcase_add_test(tc, backward_merged_wide_and_reversed_bins_match_the_reference);
    tcase_add_test(tc, max_mode_ties_and_out_of_range_samples);
    tcase_add_test(tc, threads_loop_when_the_grid_is_capped);
    tcase_add_test(tc, empty_nan_and_bad_batch_rois);
    tcase_add_test(tc, reference_gradient_matches_finite_differences);
    tcase_add_test(tc, traced_equals_plain);
    tcase_add_test(tc, merged_adaptive_forward_matches_the_reference_and_the_sample_sums);
    tcase_add_test(tc, merged_adaptive_forward_keeps_nan_and_inf_as_the_sample_sums);
    tcase_add_test(tc, plane_forward_matches_the_reference_and_the_slot_kernel);
    tcase_add_test(tc, channels_last_forward_matches_the_reference_and_the_slot_kernel);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
