/* DPVO patchify on the simulator: the operator notes' test 20 and 21 cases, random
 * geometries against the double reference (forward and backward), overlapping patches,
 * NaN coordinates, and traced == plain. */
#include "../kernels/patchify/patchify_body.h"
#include "test_util.h"

typedef struct pcase {
    ks_patchify_params p;
    float *input, *coords, *patches, *output, *gout, *gpatch, *gin;
    double *r_patches, *r_out, *r_gin;
    int64_t n_in, n_patch, n_out;
} pcase;

static void pc_init(pcase *c, const ks_patchify_params *p, const float *input, const float *coords, uint64_t seed)
{
    const int64_t D = 2 * p->radius + 2, d = D - 1, BMC = p->batch * p->num_points * p->channels;
    uint64_t s = seed;
    memset(c, 0, sizeof *c);
    c->p = *p;
    c->n_in = p->batch * p->channels * p->height * p->width;
    c->n_patch = BMC * D * D;
    c->n_out = BMC * d * d;
    c->input = malloc((size_t)c->n_in * 4);
    memcpy(c->input, input, (size_t)c->n_in * 4);
    c->coords = malloc((size_t)(p->batch * p->num_points * 2 + 1) * 4);
    memcpy(c->coords, coords, (size_t)p->batch * p->num_points * 2 * 4);
    c->patches = calloc((size_t)c->n_patch + 1, 4);
    c->output = calloc((size_t)c->n_out + 1, 4);
    c->gout = tu_random(&s, c->n_out);
    c->gpatch = calloc((size_t)c->n_patch + 1, 4);
    c->gin = calloc((size_t)c->n_in, 4);
    c->r_patches = calloc((size_t)c->n_patch + 1, 8);
    c->r_out = calloc((size_t)c->n_out + 1, 8);
    c->r_gin = calloc((size_t)c->n_in, 8);
}

static void pc_run(pcase *c, const ks_launch *l, ks_sink *sink)
{
    ks_patchify_tensors t = {.input = c->input,
                             .coords = c->coords,
                             .patches = c->patches,
                             .output = c->output,
                             .grad_output = c->gout,
                             .grad_patches = c->gpatch,
                             .grad_input = c->gin};
    memset(c->gin, 0, (size_t)c->n_in * 4);
    for (int k = 0; k < 4; ++k)
        ck_assert_msg(ks_patchify_kernel_sim(&c->p, (ks_patchify_kernel)k, &t, l, sink) == KS_OK, "%s",
                      ks_error_message());
    ks_patchify_ref(&c->p, c->input, c->coords, c->r_patches, c->r_out);
    ks_patchify_ref_backward(&c->p, c->coords, c->gout, c->r_gin);
}

static void pc_expect(const pcase *c, const char *ctx)
{
    char what[96];
    snprintf(what, sizeof what, "%s patches", ctx);
    tu_expect_close(c->patches, c->r_patches, c->n_patch, 0, what); /* copies: exact */
    snprintf(what, sizeof what, "%s output", ctx);
    tu_expect_close(c->output, c->r_out, c->n_out, 1e-6, what);
    snprintf(what, sizeof what, "%s grad_input", ctx);
    tu_expect_close(c->gin, c->r_gin, c->n_in, 1e-5, what);
}

static void pc_free(pcase *c)
{
    void *all[] = {c->input,  c->coords, c->patches,   c->output, c->gout,
                   c->gpatch, c->gin,    c->r_patches, c->r_out,  c->r_gin};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free(all[i]);
}

/* arange(16) as 4x4 (value 4*y + x), R = 1 at (x, y) = (1.5, 1.25), (0.5, 0.5), (3, 3),
 * (-0.25, 1.0): catches x/y order, the ii/jj roles and zero padding */
START_TEST(arange_points_in_x_y_order)
{
    float in[16];
    for (int i = 0; i < 16; ++i) in[i] = (float)i;
    const float xy[8] = {1.5f, 1.25f, 0.5f, 0.5f, 3.0f, 3.0f, -0.25f, 1.0f};
    ks_patchify_params p = {.batch = 1, .channels = 1, .height = 4, .width = 4, .num_points = 4, .radius = 1};
    pcase c;
    pc_init(&c, &p, in, xy, 1);
    ks_launch l = tu_launch(0, 0);
    pc_run(&c, &l, NULL);
    pc_expect(&c, "R=1");
    /* point 0: output[R][R] = input(y, x) = 4*1.25 + 1.5; the raw patch starts at (0, 0) */
    ck_assert_float_eq_tol(c.output[4], 6.5f, 1e-6f);
    ck_assert_float_eq(c.patches[0], 0.0f);
    ck_assert_float_eq(c.patches[1], 1.0f); /* (ii 0, jj 1): row 0, column 1 */
    ck_assert_float_eq(c.patches[4], 4.0f); /* (ii 1, jj 0): row 1, column 0 */
    /* point 2 at (3, 3): centre 15, the next row and column are outside: 0 */
    ck_assert_float_eq(c.output[2 * 9 + 4], 15.0f);
    ck_assert_float_eq(c.output[2 * 9 + 8], 0.0f);
    /* point 3 at x = -0.25: floor -1, its raw columns -2 and -1 are zeros */
    for (int ii = 0; ii < 4; ++ii) ck_assert_float_eq(c.patches[3 * 16 + ii * 4], 0.0f);
    pc_free(&c);
    /* R = 0 at (3.5, 3.5): D = 2, one output, the bilinear blend of pixel 15 and zeros */
    const float xy0[2] = {3.5f, 3.5f};
    ks_patchify_params p0 = {.batch = 1, .channels = 1, .height = 4, .width = 4, .num_points = 1, .radius = 0};
    pc_init(&c, &p0, in, xy0, 2);
    pc_run(&c, &l, NULL);
    pc_expect(&c, "R=0");
    ck_assert_float_eq_tol(c.output[0], 15.0f * 0.25f, 1e-6f);
    pc_free(&c);
}
END_TEST

static float *random_coords(uint64_t *s, const ks_patchify_params *p)
{
    const int64_t n = p->batch * p->num_points;
    float *xy = malloc((size_t)(2 * n + 1) * 4);
    for (int64_t k = 0; k < n; ++k) {
        xy[2 * k] = (float)tu_int(s, -150, (p->width + 1) * 100) / 100.0f;
        xy[2 * k + 1] = (float)tu_int(s, -150, (p->height + 1) * 100) / 100.0f;
    }
    return xy;
}

START_TEST(random_geometries_match_the_reference)
{
    uint64_t s = 0x9A7;
    for (int t = 0; t < 40; ++t) {
        ks_patchify_params p = {.batch = tu_int(&s, 1, 3),
                                .channels = tu_int(&s, 1, 4),
                                .height = tu_int(&s, 2, 9),
                                .width = tu_int(&s, 2, 9),
                                .num_points = tu_int(&s, 1, 5),
                                .radius = tu_int(&s, 0, 2)};
        float *in = tu_random(&s, p.batch * p.channels * p.height * p.width), *xy = random_coords(&s, &p);
        pcase c;
        pc_init(&c, &p, in, xy, (uint64_t)t);
        ks_launch l = t % 3 ? tu_launch(0, 0) : tu_launch(32, 2);
        pc_run(&c, &l, NULL);
        char ctx[32];
        snprintf(ctx, sizeof ctx, "geometry %d", t);
        pc_expect(&c, ctx);
        free(in), free(xy);
        pc_free(&c);
    }
}
END_TEST

/* B = 2, M = 3, all three points of an image on nearly the same spot: their gradients
 * add up in the pixels they share (reference test 21) */
START_TEST(overlapping_patches_sum_their_gradients)
{
    uint64_t s = 21;
    ks_patchify_params p = {.batch = 2, .channels = 2, .height = 6, .width = 5, .num_points = 3, .radius = 1};
    float *in = tu_random(&s, 2 * 2 * 30);
    const float xy[12] = {2.25f, 2.5f, 2.75f, 2.5f, 2.0f, 3.0f, 1.5f, 1.5f, 1.5f, 1.75f, 4.5f, 5.5f};
    pcase c;
    pc_init(&c, &p, in, xy, 3);
    for (int64_t i = 0; i < c.n_out; ++i) c.gout[i] = 1.0f;
    ks_launch l = tu_launch(0, 0);
    pc_run(&c, &l, NULL);
    pc_expect(&c, "overlap");
    /* pixel (2, 2) of image 0 lies in all three patches: more than any single patch gives */
    ck_assert_float_gt(c.gin[2 * 5 + 2], 1.0f);
    free(in);
    pc_free(&c);
}
END_TEST

/* the output is linear in the input: the reference gradient equals central differences */
START_TEST(reference_gradient_matches_finite_differences)
{
    uint64_t s = 0xFD2;
    ks_patchify_params p = {.batch = 2, .channels = 2, .height = 5, .width = 6, .num_points = 3, .radius = 1};
    float *in = tu_random(&s, 2 * 2 * 30), *xy = random_coords(&s, &p), *g = tu_random(&s, 2 * 3 * 2 * 9);
    double *patches = malloc(2 * 3 * 2 * 16 * 8), up[108], dn[108], gin[120];
    ks_patchify_ref_backward(&p, xy, g, gin);
    for (int i = 0; i < 120; i += 3) {
        const float keep = in[i];
        in[i] = keep + 0.25f;
        ks_patchify_ref(&p, in, xy, patches, up);
        in[i] = keep - 0.25f;
        ks_patchify_ref(&p, in, xy, patches, dn);
        in[i] = keep;
        double fd = 0;
        for (int k = 0; k < 108; ++k) fd += g[k] * (up[k] - dn[k]) / 0.5;
        ck_assert_msg(fabs(fd - gin[i]) < 1e-9, "d/d input[%d]: analytic %g, finite difference %g", i, gin[i], fd);
    }
    free(in), free(xy), free(g), free(patches);
}
END_TEST

START_TEST(nan_coordinates_read_nothing)
{
    float in[12];
    for (int i = 0; i < 12; ++i) in[i] = (float)i + 1;
    const float xy[4] = {NAN, 1.0f, 1.0f, INFINITY};
    ks_patchify_params p = {.batch = 1, .channels = 1, .height = 3, .width = 4, .num_points = 2, .radius = 1};
    pcase c;
    pc_init(&c, &p, in, xy, 4);
    ks_launch l = tu_launch(0, 0);
    pc_run(&c, &l, NULL);
    for (int64_t i = 0; i < c.n_patch; ++i) ck_assert_float_eq(c.patches[i], 0.0f);
    for (int64_t i = 0; i < c.n_in; ++i) ck_assert_float_eq(c.gin[i], 0.0f);
    pc_free(&c);
}
END_TEST

START_TEST(traced_equals_plain_bitwise)
{
    uint64_t s = 0x7B;
    for (int t = 0; t < 6; ++t) {
        ks_patchify_params p = {.batch = 2, .channels = 3, .height = 7, .width = 6, .num_points = 3, .radius = t % 3};
        float *in = tu_random(&s, 2 * 3 * 42), *xy = random_coords(&s, &p);
        pcase c[2];
        ks_launch l = tu_launch(t % 2 ? 32 : 0, t % 2 ? 1 : 0);
        for (int v = 0; v < 2; ++v) {
            ks_sink *sink = v ? ks_host_sink_create(0, ks_filter_all()) : NULL;
            pc_init(&c[v], &p, in, xy, 9);
            pc_run(&c[v], &l, sink);
            if (sink) ck_assert_uint_gt(ks_sink_count(sink), 0);
            ks_host_sink_free(sink);
        }
        ck_assert(!memcmp(c[0].patches, c[1].patches, (size_t)c[0].n_patch * 4));
        ck_assert(!memcmp(c[0].output, c[1].output, (size_t)c[0].n_out * 4));
        ck_assert(!memcmp(c[0].gin, c[1].gin, (size_t)c[0].n_in * 4));
        free(in), free(xy);
        pc_free(&c[0]), pc_free(&c[1]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("patchify");
    TCase *tc = tcase_create("sim");
    tcase_add_test(tc, arange_points_in_x_y_order);
    tcase_add_test(tc, random_geometries_match_the_reference);
    tcase_add_test(tc, overlapping_patches_sum_their_gradients);
    tcase_add_test(tc, reference_gradient_matches_finite_differences);
    tcase_add_test(tc, nan_coordinates_read_nothing);
    tcase_add_test(tc, traced_equals_plain_bitwise);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
