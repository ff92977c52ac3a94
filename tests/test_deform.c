/* Deformable convolution on the simulator: the layer against the independent double
 * reference on random geometries, the reference against finite differences, the
 * offset-channel probe, the zero blend at borders, the mmcv/torchvision differences,
 * chunking, and the traced variant against the plain one. */
#include "../kernels/core/ks_gemm.h"
#include "../kernels/deform_conv/deform_body.h"
#include "deform_fixture.h"

START_TEST(layer_matches_reference_on_random_geometries)
{
    uint64_t s = 0xDEF0;
    for (int k = 0; k < 40; ++k) {
        ks_deform_params p = df_geometry(&s);
        df_case c;
        df_init(&c, &p, 100 + (uint64_t)k, 2.5f);
        ks_launch l = tu_launch(0, 0);
        df_run(&c, &l);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "geometry %d", k);
        df_expect(&c, 2e-4, ctx);
        df_free(&c);
    }
}
END_TEST

/* torchvision's test geometry: C 6 -> 2, conv groups 2, offset groups 3, kernel (3, 2),
 * stride (2, 1), padding (1, 0), dilation (2, 1), input 5x4, batch 33, mask, bias */
START_TEST(layer_matches_reference_on_torchvision_test_geometry)
{
    ks_deform_params p = {.batch = 33,
                          .channels = 6,
                          .height = 5,
                          .width = 4,
                          .out_channels = 2,
                          .kernel_h = 3,
                          .kernel_w = 2,
                          .pad_h = 1,
                          .pad_w = 0,
                          .stride_h = 2,
                          .stride_w = 1,
                          .dilation_h = 2,
                          .dilation_w = 1,
                          .groups = 2,
                          .offset_groups = 3,
                          .im2col_step = 32,
                          .use_mask = 1,
                          .use_bias = 1,
                          .semantics = KS_DEFORM_TORCHVISION};
    df_case c;
    df_init(&c, &p, 7, 2.0f);
    ck_assert_int_eq(c.g.height_out, 2);
    ck_assert_int_eq(c.g.width_out, 3);
    ck_assert_int_eq(c.g.im2col_step, 11); /* the largest divisor of 33 below 32 */
    ks_launch l = tu_launch(0, 0);
    df_run(&c, &l);
    df_expect(&c, 2e-4, "torchvision geometry");
    df_free(&c);
}
END_TEST

/* loss = sum(output * grad_output) on the reference, in double */
static double loss(const df_case *c)
{
    ks_deform_tensors t = df_tensors(c);
    ks_deform_ref_forward(&c->p, &t, c->r_out);
    double l = 0;
    for (int64_t i = 0; i < c->g.output_numel; ++i) l += c->r_out[i] * c->grad_output[i];
    return l;
}

/* central difference with a step of 2^-10, exact in float for |x| < 2^13 */
static double fd(df_case *c, float *x)
{
    const float h = 1.0f / 1024.0f, keep = *x;
    *x = keep + h;
    double up = loss(c);
    *x = keep - h;
    double down = loss(c);
    *x = keep;
    return (up - down) / (2.0 * h);
}

START_TEST(reference_gradients_match_finite_differences)
{
    uint64_t s = 0xF1D;
    for (int k = 0; k < 6; ++k) {
        ks_deform_params p = df_geometry(&s);
        df_case c;
        df_init(&c, &p, 300 + (uint64_t)k, 1.0f);
        /* offsets an integer plus a fraction in [0.2, 0.8]: no sample within 2^-10 of a
         * kink, where the derivative is one-sided */
        uint64_t r = 77 + (uint64_t)k;
        for (int64_t i = 0; i < c.g.offset_numel; ++i)
            c.offset[i] = (float)tu_int(&r, -2, 1) + 0.2f + 0.6f * (float)(tu_next(&r) % 1000) / 1000.0f;
        ks_deform_tensors t = df_tensors(&c);
        ks_deform_ref_grads g = {.grad_input = c.r_gi,
                                 .grad_offset = c.r_go,
                                 .grad_mask = c.r_gm,
                                 .grad_weight = c.r_gw,
                                 .grad_bias = c.r_gb};
        ks_deform_ref_backward(&c.p, &t, &g);
        struct {
            float *x;
            double *g;
            int64_t n;
            const char *name;
        } v[] = {{.x = c.input, .g = c.r_gi, .n = c.g.input_numel, .name = "input"},
                 {.x = c.offset, .g = c.r_go, .n = c.g.offset_numel, .name = "offset"},
                 {.x = c.weight, .g = c.r_gw, .n = c.g.weight_numel, .name = "weight"},
                 {.x = c.mask, .g = c.r_gm, .n = p.use_mask ? c.g.mask_numel : 0, .name = "mask"},
                 {.x = c.bias, .g = c.r_gb, .n = p.use_bias ? p.out_channels : 0, .name = "bias"}};
        for (size_t q = 0; q < sizeof v / sizeof v[0]; ++q)
            for (int trial = 0; trial < 8 && v[q].n > 0; ++trial) {
                const int64_t i = tu_int(&r, 0, v[q].n - 1);
                const double want = v[q].g[i], got = fd(&c, &v[q].x[i]);
                ck_assert_msg(fabs(got - want) <= 1e-6 * (1 + fabs(want)),
                              "geometry %d: d loss / d %s[%lld]: analytic %.9g, finite difference %.9g", k, v[q].name,
                              (long long)i, want, got);
            }
        df_free(&c);
    }
}
END_TEST

/* deformable im2col of one image into columns [C*kh*kw, Ho*Wo] */
static void im2col(const ks_deform_params *p, const float *in, const float *off, const float *mask, float *cols,
                   const ks_launch *l, ks_sink *sink)
{
    ks_deform_chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.im2col_step = p->batch, ch.input = in, ch.offset = off, ch.mask = mask, ch.columns = cols;
    ck_assert_msg(ks_deform_kernel_sim(p, KS_DEFORM_IM2COL, &ch, l, sink) == KS_OK, "%s", ks_error_message());
}

/* +1 on the y channel of one (group, tap) moves exactly that tap of that group's
 * channels one row down; +1 on the x channel one column right (reference test 7) */
START_TEST(offset_channel_probe_moves_one_tap_of_one_group)
{
    ks_deform_params p = {.batch = 1,
                          .channels = 6,
                          .height = 5,
                          .width = 4,
                          .out_channels = 1,
                          .kernel_h = 3,
                          .kernel_w = 2,
                          .pad_h = 1,
                          .pad_w = 0,
                          .stride_h = 2,
                          .stride_w = 1,
                          .dilation_h = 2,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 3,
                          .im2col_step = 1,
                          .use_mask = 0,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_MMCV};
    ks_deform_geom g;
    ck_assert_int_eq(ks_deform_geometry(&p, &g), KS_OK);
    uint64_t s = 5;
    float *in = tu_random(&s, g.input_numel), *off = df_alloc(g.offset_numel);
    float *cols = df_alloc(g.col_numel);
    const int64_t P = g.height_out * g.width_out, kk = 6;
    ks_launch l = tu_launch(0, 0);
    for (int dir = 0; dir < 2; ++dir)
        for (int64_t grp = 0; grp < 3; ++grp)
            for (int64_t tap = 0; tap < kk; ++tap) {
                memset(off, 0, (size_t)g.offset_numel * sizeof(float));
                for (int64_t q = 0; q < P; ++q) off[(grp * 2 * kk + 2 * tap + dir) * P + q] = 1.0f;
                im2col(&p, in, off, NULL, cols, &l, NULL);
                for (int64_t c = 0; c < 6; ++c)
                    for (int64_t t = 0; t < kk; ++t)
                        for (int64_t q = 0; q < P; ++q) {
                            const int moved = c / 2 == grp && t == tap;
                            int64_t y = (q / g.width_out) * 2 - 1 + (t / 2) * 2 + (moved && dir == 0);
                            int64_t x = (q % g.width_out) * 1 - 0 + (t % 2) * 1 + (moved && dir == 1);
                            float want = y >= 0 && y < 5 && x >= 0 && x < 4 ? in[(c * 5 + y) * 4 + x] : 0.0f;
                            ck_assert_msg(
                                cols[(c * kk + t) * P + q] == want,
                                "dir %d group %lld tap %lld: channel %lld tap %lld position %lld = %g, want %g", dir,
                                (long long)grp, (long long)tap, (long long)c, (long long)t, (long long)q,
                                cols[(c * kk + t) * P + q], want);
                        }
            }
    free(in), free(off), free(cols);
}
END_TEST

/* [[1,2],[3,4]], 1x1 kernel: samples at (-0.5, 0), (-1, 1), (1.5, 0), (0.5, 0.5) */
START_TEST(border_samples_blend_with_zero_not_clamp)
{
    ks_deform_params p = {.batch = 1,
                          .channels = 1,
                          .height = 2,
                          .width = 2,
                          .out_channels = 1,
                          .kernel_h = 1,
                          .kernel_w = 1,
                          .pad_h = 0,
                          .pad_w = 0,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 1,
                          .im2col_step = 1,
                          .use_mask = 0,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_MMCV};
    const float in[4] = {1, 2, 3, 4};
    /* offset [1, 2, 2, 2]: dy plane then dx plane, positions (0,0) (0,1) (1,0) (1,1) */
    const float off[8] = {-0.5f, -1.0f, 0.5f, -0.5f, 0, 0, 0, -0.5f};
    float cols[4];
    ks_launch l = tu_launch(0, 0);
    im2col(&p, in, off, NULL, cols, &l, NULL);
    ck_assert_float_eq(cols[0], 0.5f); /* half of in[0][0]; a clamp gives 1 */
    ck_assert_float_eq(cols[1], 0.0f); /* y == -1 is outside the open box */
    ck_assert_float_eq(cols[2], 1.5f); /* half of in[1][0]; a clamp gives 3 */
    ck_assert_float_eq(cols[3], 2.5f); /* the centre */
}
END_TEST

/* mmcv and torchvision differ exactly at y == -1: sample (-1, 0) on [[1,2],[3,4]] */
START_TEST(coordinate_gradient_at_minus_one_follows_the_semantics)
{
    for (int sem = 0; sem < 2; ++sem) {
        ks_deform_params p = {.batch = 1,
                              .channels = 1,
                              .height = 2,
                              .width = 2,
                              .out_channels = 1,
                              .kernel_h = 1,
                              .kernel_w = 1,
                              .pad_h = 0,
                              .pad_w = 0,
                              .stride_h = 1,
                              .stride_w = 1,
                              .dilation_h = 1,
                              .dilation_w = 1,
                              .groups = 1,
                              .offset_groups = 1,
                              .im2col_step = 1,
                              .use_mask = 0,
                              .use_bias = 0,
                              .semantics = sem};
        df_case c;
        df_init(&c, &p, 1, 0.0f);
        const float in[4] = {1, 2, 3, 4};
        memcpy(c.input, in, sizeof in);
        memset(c.offset, 0, 8 * sizeof(float));
        c.offset[0] = -1.0f; /* position (0, 0) samples (-1, 0) */
        c.offset[3] = 0.25f; /* position (1, 1) samples (1.25, 1): inside, same for both */
        c.weight[0] = 1.0f;
        for (int i = 0; i < 4; ++i) c.grad_output[i] = 1.0f;
        ks_launch l = tu_launch(0, 0);
        df_run(&c, &l);
        ck_assert_float_eq(c.output[0], 0.0f);
        /* torchvision: the inside corners only, (0, 0) = 1 below the missing row -1 */
        ck_assert_float_eq(c.grad_offset[0], sem == KS_DEFORM_MMCV ? 0.0f : 1.0f);
        ck_assert_float_eq(c.grad_offset[3], 0.0f - 4.0f); /* below row 1 is the zero padding */
        df_expect(&c, 1e-6, sem ? "torchvision" : "mmcv");
        df_free(&c);
    }
}
END_TEST

/* y in (-1, 0): the gradient lands on row 0 with weight 1 - |y| (floor, not trunc) */
START_TEST(col2im_above_the_image_lands_on_row_zero)
{
    ks_deform_params p = {.batch = 1,
                          .channels = 1,
                          .height = 3,
                          .width = 3,
                          .out_channels = 1,
                          .kernel_h = 1,
                          .kernel_w = 1,
                          .pad_h = 0,
                          .pad_w = 0,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 1,
                          .im2col_step = 1,
                          .use_mask = 0,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_MMCV};
    df_case c;
    df_init(&c, &p, 2, 0.0f);
    memset(c.offset, 0, 18 * sizeof(float));
    memset(c.grad_output, 0, 9 * sizeof(float));
    c.offset[1] = -0.3f; /* position (0, 1) samples (-0.3, 1) */
    c.grad_output[1] = 2.0f;
    c.weight[0] = 1.0f;
    ks_launch l = tu_launch(0, 0);
    df_run(&c, &l);
    for (int i = 0; i < 9; ++i)
        ck_assert_msg(fabsf(c.grad_input[i] - (i == 1 ? 1.4f : 0.0f)) < 1e-6f, "grad_input[%d] = %g", i,
                      c.grad_input[i]);
    df_free(&c);
}
END_TEST

START_TEST(chunks_give_the_same_results)
{
    ks_deform_params p = {.batch = 10,
                          .channels = 4,
                          .height = 7,
                          .width = 6,
                          .out_channels = 3,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 2,
                          .im2col_step = 1,
                          .use_mask = 1,
                          .use_bias = 1,
                          .semantics = KS_DEFORM_MMCV};
    df_case ref;
    df_init(&ref, &p, 11, 2.0f);
    ks_launch l = tu_launch(0, 0);
    df_run(&ref, &l);
    const int64_t steps[] = {2, 5, 10, 32};
    for (int k = 0; k < 4; ++k) {
        p.im2col_step = steps[k];
        df_case c;
        df_init(&c, &p, 11, 2.0f);
        df_run(&c, &l);
        for (int64_t i = 0; i < c.g.output_numel; ++i) ck_assert_float_eq(c.output[i], ref.output[i]);
        tu_expect_close(c.grad_weight, ref.r_gw, c.g.weight_numel, 1e-4, "grad_weight");
        tu_expect_close(c.grad_input, ref.r_gi, c.g.input_numel, 1e-4, "grad_input");
        df_free(&c);
    }
    df_free(&ref);
    ks_deform_geom g;
    p.im2col_step = 3;
    ck_assert_int_eq(ks_deform_geometry(&p, &g), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "batch size must be divisible by im2col_step"), "%s", ks_error_message());
    p.semantics = KS_DEFORM_TORCHVISION;
    ck_assert_int_eq(ks_deform_geometry(&p, &g), KS_OK);
    ck_assert_int_eq(g.im2col_step, 2);
}
END_TEST

/* zero offsets and mask 1: a grouped convolution (conv groups 2, offset groups 3) */
START_TEST(zero_offsets_are_a_grouped_convolution)
{
    ks_deform_params p = {.batch = 2,
                          .channels = 6,
                          .height = 6,
                          .width = 5,
                          .out_channels = 4,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 2,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 2,
                          .offset_groups = 3,
                          .im2col_step = 32,
                          .use_mask = 1,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_TORCHVISION};
    df_case c;
    df_init(&c, &p, 3, 0.0f);
    for (int64_t i = 0; i < c.g.mask_numel; ++i) c.mask[i] = 1.0f;
    ks_launch l = tu_launch(0, 0);
    df_run(&c, &l);
    const int64_t Ho = c.g.height_out, Wo = c.g.width_out;
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t o = 0; o < 4; ++o)
            for (int64_t y = 0; y < Ho; ++y)
                for (int64_t x = 0; x < Wo; ++x) {
                    double acc = 0;
                    for (int64_t cl = 0; cl < 3; ++cl)
                        for (int64_t i = 0; i < 3; ++i)
                            for (int64_t j = 0; j < 3; ++j) {
                                const int64_t yy = y * 2 - 1 + i, xx = x - 1 + j, ch = (o / 2) * 3 + cl;
                                if (yy < 0 || yy >= 6 || xx < 0 || xx >= 5) continue;
                                acc += (double)c.weight[((o * 3 + cl) * 3 + i) * 3 + j] *
                                       c.input[((n * 6 + ch) * 6 + yy) * 5 + xx];
                            }
                    const float got = c.output[((n * 4 + o) * Ho + y) * Wo + x];
                    ck_assert_msg(fabs(got - acc) < 1e-5, "output[%lld,%lld,%lld,%lld] = %g, conv %g", (long long)n,
                                  (long long)o, (long long)y, (long long)x, got, acc);
                }
    df_free(&c);
}
END_TEST

static void run_kernel(const df_case *c, ks_deform_kernel k, const float *cols_in, float *cols, float *gi, float *go,
                       float *gm, const ks_launch *l, ks_sink *sink)
{
    ks_deform_chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.im2col_step = c->g.im2col_step, ch.input = c->input, ch.offset = c->offset;
    ch.mask = c->p.use_mask ? c->mask : NULL;
    ch.columns_in = cols_in, ch.columns = cols, ch.grad_input = gi, ch.grad_offset = go, ch.grad_mask = gm;
    ck_assert_msg(ks_deform_kernel_sim(&c->p, k, &ch, l, sink) == KS_OK, "%s", ks_error_message());
}

/* grad_tap / grad_tile / grad_gather with write_columns: buf holds the column gradient, then im2col's columns */
static void run_kernel_in_place(const df_case *c, ks_deform_kernel k, float *buf, float *gi, float *go, float *gm,
                                const ks_launch *l)
{
    ks_deform_chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.im2col_step = c->g.im2col_step, ch.input = c->input, ch.offset = c->offset;
    ch.mask = c->p.use_mask ? c->mask : NULL;
    ch.columns_in = buf, ch.columns = buf, ch.grad_input = gi, ch.grad_offset = go, ch.grad_mask = gm;
    ch.write_columns = 1;
    ck_assert_msg(ks_deform_kernel_sim(&c->p, k, &ch, l, NULL) == KS_OK, "%s", ks_error_message());
}

/* the traced variant computes the same bits as the plain one under the same launch (the
 * simulator's atomics add in thread order), also when a capped grid makes every thread
 * loop; and records one sample per tap */
START_TEST(traced_equals_plain_bitwise_for_every_kernel)
{
    uint64_t s = 0x7ACE;
    for (int k = 0; k < 8; ++k) {
        ks_deform_params p = df_geometry(&s);
        p.batch = p.im2col_step = 1 + k % 3;
        df_case c;
        df_init(&c, &p, 500 + (uint64_t)k, 2.0f);
        const int64_t nc = c.g.col_numel;
        float *cols_in = tu_random(&s, nc);
        float *out[2][4];
        for (int v = 0; v < 2; ++v) {
            ks_launch l = k % 2 ? tu_launch(32, 3) : tu_launch(0, 0);
            ks_sink *sink = v ? ks_host_sink_create(0, ks_filter_all()) : NULL;
            out[v][0] = df_alloc(nc), out[v][1] = df_alloc(c.g.input_numel);
            out[v][2] = df_alloc(c.g.offset_numel), out[v][3] = df_alloc(c.g.mask_numel);
            run_kernel(&c, KS_DEFORM_IM2COL, NULL, out[v][0], NULL, NULL, NULL, &l, sink);
            if (sink) {
                int64_t samples = 0;
                for (unsigned long long e = 0; e < ks_sink_count(sink); ++e)
                    samples += sink->events[e].kind == KS_EV_SAMPLE;
                ck_assert_int_eq(samples,
                                 p.channels * p.batch * c.g.height_out * c.g.width_out * p.kernel_h * p.kernel_w);
            }
            run_kernel(&c, KS_DEFORM_COL2IM, cols_in, NULL, out[v][1], NULL, NULL, &l, sink);
            run_kernel(&c, KS_DEFORM_COORD, cols_in, NULL, NULL, out[v][2], out[v][3], &l, sink);
            ks_host_sink_free(sink);
        }
        ck_assert(!memcmp(out[0][0], out[1][0], (size_t)nc * 4));
        ck_assert(!memcmp(out[0][1], out[1][1], (size_t)c.g.input_numel * 4));
        ck_assert(!memcmp(out[0][2], out[1][2], (size_t)c.g.offset_numel * 4));
        ck_assert(!memcmp(out[0][3], out[1][3], (size_t)c.g.mask_numel * 4));
        for (int v = 0; v < 2; ++v)
            for (int q = 0; q < 4; ++q) free(out[v][q]);
        free(cols_in);
        df_free(&c);
    }
}
END_TEST

/* The layer's tap kernels against the teaching kernels on the simulator: im2col_tap is
 * bitwise deformable_im2col; grad_tap's, grad_tile's and grad_gather's grad_offset and
 * grad_mask are bitwise col2im_coord's, their grad_input col2im's up to the order of the
 * adds. With write_columns (rejected with a sink), grad_tap, grad_tile and grad_gather leave
 * im2col's columns, bitwise, in the buffer they read the column gradient from, and the
 * same gradients. Channel counts cross the tap's 32-channel blocks; every third case has
 * whole-number offsets, so samples sit on the kinks, on -1 and on the far border; every
 * fourth has offsets up to 9, past the tiles' window margin; tiles of 1 to 64 positions,
 * 1 or 3 windows, 1, 5 or 32 channels a gather block. The traced variants compute the same bits and record one sample per
 * channel and tap. */
START_TEST(tap_kernels_equal_the_teaching_kernels)
{
    uint64_t s = 0x7A9;
    static const int tiles[] = {32, 4, 1, 64, 8, 2}, gather_channels[] = {32, 5, 1};
    enum { NV = 7 }; /* 0 teaching; 1, 2 grad_tap; 3, 4 grad_tile; 5, 6 grad_gather (plain, traced) */
    for (int k = 0; k < 12; ++k) {
        ks_deform_params p = df_geometry(&s);
        p.channels *= tu_int(&s, 1, 17);
        if (k % 2) { /* images larger than a tile's window */
            ks_deform_geom g;
            ks_deform_params q = p;
            q.height = tu_int(&s, 14, 31), q.width = tu_int(&s, 14, 31);
            if (ks_deform_geometry(&q, &g) == KS_OK) p = q;
        }
        df_case c;
        df_init(&c, &p, 900 + (uint64_t)k, k % 4 == 1 ? 9.0f : 2.5f);
        c.p.tile_positions = tiles[k % 6], c.p.tile_windows = k % 3 ? 3 : 1;
        c.p.gather_positions = tiles[(k + 3) % 6], c.p.gather_channels = gather_channels[k % 3];
        ck_assert_int_eq(ks_deform_geometry(&c.p, &c.g), KS_OK);
        if (k % 3 == 2)
            for (int64_t i = 0; i < c.g.offset_numel; ++i) c.offset[i] = roundf(c.offset[i]);
        const int64_t nc = c.g.col_numel;
        float *cols_in = tu_random(&s, nc);
        float *out[NV][4];
        const ks_launch l = k % 2 ? tu_launch(32, 3) : tu_launch(0, 0);
        for (int v = 0; v < NV; ++v) {
            out[v][0] = df_alloc(nc), out[v][1] = df_alloc(c.g.input_numel);
            out[v][2] = df_alloc(c.g.offset_numel), out[v][3] = df_alloc(c.g.mask_numel);
        }
        run_kernel(&c, KS_DEFORM_IM2COL, NULL, out[0][0], NULL, NULL, NULL, &l, NULL);
        run_kernel(&c, KS_DEFORM_COL2IM, cols_in, NULL, out[0][1], NULL, NULL, &l, NULL);
        run_kernel(&c, KS_DEFORM_COORD, cols_in, NULL, NULL, out[0][2], out[0][3], &l, NULL);
        for (int v = 1; v < NV; ++v) {
            ks_sink *sk = v % 2 ? NULL : ks_host_sink_create(0, ks_filter_all());
            run_kernel(&c, KS_DEFORM_IM2COL_TAP, NULL, out[v][0], NULL, NULL, NULL, &l, sk);
            if (sk) {
                int64_t samples = 0;
                for (unsigned long long e = 0; e < ks_sink_count(sk); ++e)
                    samples += sk->events[e].kind == KS_EV_SAMPLE;
                ck_assert_int_eq(samples, c.g.im2col_work * p.kernel_h * p.kernel_w);
            }
            const ks_deform_kernel kv = v < 3   ? KS_DEFORM_GRAD_TAP
                                        : v < 5 ? KS_DEFORM_GRAD_TILE
                                                : KS_DEFORM_GRAD_GATHER;
            run_kernel(&c, kv, cols_in, NULL, out[v][1], out[v][2], out[v][3], &l, sk);
            if (v == 2) { /* write_columns is for untraced launches */
                ks_deform_chunk ch;
                memset(&ch, 0, sizeof ch);
                ch.im2col_step = c.g.im2col_step, ch.input = c.input, ch.offset = c.offset;
                ch.mask = p.use_mask ? c.mask : NULL, ch.columns_in = ch.columns = out[v][0];
                ch.grad_input = out[v][1], ch.grad_offset = out[v][2], ch.grad_mask = out[v][3], ch.write_columns = 1;
                ck_assert_int_eq(ks_deform_kernel_sim(&p, kv, &ch, &l, sk), KS_EINVAL);
                ck_assert(strstr(ks_error_message(), "write_columns"));
            }
            if (v % 2) { /* again, writing the columns over the gradient it reads */
                float *buf = malloc((size_t)nc * 4), *gi = df_alloc(c.g.input_numel);
                float *go = df_alloc(c.g.offset_numel), *gm = df_alloc(c.g.mask_numel);
                memcpy(buf, cols_in, (size_t)nc * 4);
                run_kernel_in_place(&c, kv, buf, gi, go, gm, &l);
                ck_assert_msg(!memcmp(buf, out[0][0], (size_t)nc * 4), "case %d: variant %d: columns differ", k, v);
                ck_assert(!memcmp(gi, out[v][1], (size_t)c.g.input_numel * 4));
                ck_assert(!memcmp(go, out[v][2], (size_t)c.g.offset_numel * 4));
                ck_assert(!p.use_mask || !memcmp(gm, out[v][3], (size_t)c.g.mask_numel * 4));
                free(buf), free(gi), free(go), free(gm);
            }
            ks_host_sink_free(sk);
        }
        for (int v = 1; v < NV; ++v) {
            ck_assert_msg(!memcmp(out[0][0], out[v][0], (size_t)nc * 4), "case %d: im2col_tap differs", k);
            ck_assert_msg(!memcmp(out[0][2], out[v][2], (size_t)c.g.offset_numel * 4), "case %d: grad_offset differs",
                          k);
            ck_assert_msg(!p.use_mask || !memcmp(out[0][3], out[v][3], (size_t)c.g.mask_numel * 4),
                          "case %d: grad_mask differs", k);
            if (v % 2 == 0) /* traced == plain */
                for (int q = 1; q < 4; ++q)
                    ck_assert(!memcmp(out[v - 1][q], out[v][q],
                                      (size_t)(q == 1   ? c.g.input_numel
                                               : q == 2 ? c.g.offset_numel
                                                        : c.g.mask_numel) *
                                          4));
            for (int64_t i = 0; i < c.g.input_numel; ++i)
                ck_assert_msg(fabsf(out[0][1][i] - out[v][1][i]) <= 1e-5f * (1 + fabsf(out[0][1][i])),
                              "case %d: grad_input[%lld] col2im %g, variant %d %g", k, (long long)i, out[0][1][i], v,
                              out[v][1][i]);
        }
        for (int v = 0; v < NV; ++v)
            for (int q = 0; q < 4; ++q) free(out[v][q]);
        free(cols_in);
        df_free(&c);
    }
}
END_TEST

/* grad_gather's tile halves until one channel's lists fit: a 3x3 kernel dilated by 45 has a
 * window too wide for the default 32 positions but not for 8; the gather then runs (it does
 * not fall back) and gives grad_tap's grad_offset and grad_mask bitwise and its grad_input
 * within rounding. A 23x23 kernel (529 taps, a thread each) does not fit at all. */
START_TEST(gather_tile_halves_until_its_lists_fit)
{
    ks_deform_params p;
    memset(&p, 0, sizeof p);
    p.batch = p.im2col_step = 1, p.channels = 3, p.out_channels = 2, p.groups = p.offset_groups = 1;
    p.height = 13, p.width = 97, p.kernel_h = p.kernel_w = 3, p.stride_h = p.stride_w = 1;
    p.dilation_h = p.dilation_w = 45, p.pad_h = p.pad_w = 45, p.use_mask = 1;
    df_case c;
    df_init(&c, &p, 4242, 3.0f);
    ks_deform_chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.im2col_step = 1;
    ks_deform_args a;
    ks_deform_args_fill(&p, &c.g, &ch, &a);
    ck_assert_int_eq(a.gather_positions, KS_DEFORM_GATHER_POSITIONS);
    const ks_deform_gather gs = ks_deform_gather_of(&a);
    ck_assert_int_ge(gs.nb, 1);
    ck_assert_int_lt(gs.w.th * gs.w.tw, KS_DEFORM_GATHER_POSITIONS); /* halved */
    ck_assert_int_le(gs.floats, KS_DEFORM_GATHER_CAP);
    ck_assert(ks_deform_gather_fits(&p, &c.g));
    uint64_t s = 77;
    float *cols_in = tu_random(&s, c.g.col_numel);
    float *gi[2], *go[2], *gm[2];
    const ks_launch l = tu_launch(0, 0);
    for (int v = 0; v < 2; ++v) {
        gi[v] = df_alloc(c.g.input_numel), go[v] = df_alloc(c.g.offset_numel), gm[v] = df_alloc(c.g.mask_numel);
        run_kernel(&c, v ? KS_DEFORM_GRAD_GATHER : KS_DEFORM_GRAD_TAP, cols_in, NULL, gi[v], go[v], gm[v], &l, NULL);
    }
    ck_assert(!memcmp(go[0], go[1], (size_t)c.g.offset_numel * 4));
    ck_assert(!memcmp(gm[0], gm[1], (size_t)c.g.mask_numel * 4));
    double big = 0;
    for (int64_t i = 0; i < c.g.input_numel; ++i) {
        ck_assert_msg(fabsf(gi[0][i] - gi[1][i]) <= 1e-5f * (1 + fabsf(gi[0][i])), "grad_input[%lld]: %g %g",
                      (long long)i, gi[0][i], gi[1][i]);
        big = fmax(big, fabs(gi[0][i]));
    }
    ck_assert(big > 0.1); /* samples landed */
    for (int v = 0; v < 2; ++v) free(gi[v]), free(go[v]), free(gm[v]);
    free(cols_in);
    df_free(&c);
    /* 23x23 taps: one thread each passes 512 */
    ks_deform_params q = p;
    q.kernel_h = q.kernel_w = 23, q.dilation_h = q.dilation_w = 1, q.pad_h = q.pad_w = 11, q.height = 30;
    ks_deform_geom g;
    ck_assert_msg(ks_deform_geometry(&q, &g) == KS_OK, "%s", ks_error_message());
    ck_assert(!ks_deform_gather_fits(&q, &g));
}
END_TEST

/* ks_round_tf32 keeps 10 mantissa bits, ties away from zero; the layer with TF32 math
 * stays within 2e-3 of the double reference (relative to each tensor's largest entry:
 * the output and every gradient), and differs from the fp32 layer (random inputs are not
 * TF32 numbers, so the rounding shows) */
START_TEST(tf32_math_rounds_the_gemm_inputs)
{
    ck_assert_float_eq(ks_round_tf32(1.0f + 0x1p-12f), 1.0f);
    ck_assert_float_eq(ks_round_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);
    ck_assert_float_eq(ks_round_tf32(-(1.0f + 0x1p-11f)), -(1.0f + 0x1p-10f));
    ck_assert_float_eq(ks_round_tf32(1.0f + 0x1p-10f + 0x1p-13f), 1.0f + 0x1p-10f);
    ck_assert(isinf(ks_round_tf32(INFINITY)) && isnan(ks_round_tf32(NAN)));
    uint64_t s = 0x7F32;
    for (int k = 0; k < 6; ++k) {
        ks_deform_params p = df_geometry(&s);
        p.channels *= 8; /* longer sums */
        df_case c, f;
        df_init(&c, &p, 300 + (uint64_t)k, 2.5f);
        df_init(&f, &p, 300 + (uint64_t)k, 2.5f);
        c.p.math = KS_MATH_TF32;
        ks_launch l = tu_launch(0, 0);
        df_run(&c, &l);
        df_run(&f, &l);
        int differs = 0;
        for (int64_t i = 0; i < c.g.output_numel; ++i) differs |= c.output[i] != f.output[i];
        char ctx[48];
        snprintf(ctx, sizeof ctx, "tf32 case %d", k);
        df_expect_scaled(&c, 2e-3, ctx); /* output and every gradient */
        ck_assert_msg(differs, "case %d: TF32 output equals fp32", k);
        df_free(&c), df_free(&f);
    }
}
END_TEST

START_TEST(bad_parameters_are_rejected_with_a_reason)
{
    ks_deform_params ok = {.batch = 2,
                           .channels = 4,
                           .height = 5,
                           .width = 5,
                           .out_channels = 2,
                           .kernel_h = 3,
                           .kernel_w = 3,
                           .pad_h = 1,
                           .pad_w = 1,
                           .stride_h = 1,
                           .stride_w = 1,
                           .dilation_h = 1,
                           .dilation_w = 1,
                           .groups = 1,
                           .offset_groups = 1,
                           .im2col_step = 32,
                           .use_mask = 0,
                           .use_bias = 0,
                           .semantics = KS_DEFORM_MMCV};
    ks_deform_geom g;
    ck_assert_int_eq(ks_deform_geometry(&ok, &g), KS_OK);
    struct {
        ks_deform_params p;
        const char *msg;
    } bad[] = {
        {.p = ok, .msg = "groups"},   {.p = ok, .msg = "offset_groups"}, {.p = ok, .msg = "smaller than kernel"},
        {.p = ok, .msg = "stride_h"}, {.p = ok, .msg = "output size"},   {.p = ok, .msg = "math must be fp32 or tf32"},
    };
    bad[0].p.groups = 3;
    bad[1].p.offset_groups = 3;
    bad[2].p.height = 2, bad[2].p.pad_h = 2;
    bad[3].p.stride_h = 0;
    bad[4].p.semantics = KS_DEFORM_TORCHVISION, bad[4].p.height = 1, bad[4].p.pad_h = 0;
    bad[5].p.math = 2;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ck_assert_int_eq(ks_deform_geometry(&bad[i].p, &g), KS_EINVAL);
        ck_assert_msg(strstr(ks_error_message(), bad[i].msg), "case %zu: %s", i, ks_error_message());
    }
}
END_TEST

/* when the CUDA layer takes the fused TF32 forward: opted in, TF32, blocks of 32 channels
 * inside one conv group and one offset group, room for the prepared weight */
START_TEST(fused_forward_runs_only_where_it_applies)
{
    ks_deform_params p = {.batch = 2,
                          .channels = 64,
                          .height = 12,
                          .width = 10,
                          .out_channels = 40,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 2,
                          .im2col_step = 32,
                          .semantics = KS_DEFORM_TORCHVISION,
                          .math = KS_MATH_TF32};
    ks_deform_geom g;
    ck_assert_int_eq(ks_deform_geometry(&p, &g), KS_OK);
    ck_assert_int_eq(ks_deform_fused_fits(&p, &g), 0); /* not opted in */
    p.fused = 1;
    ck_assert_int_eq(ks_deform_fused_fits(&p, &g), 1);
    ks_deform_params q = p;
    q.math = KS_MATH_FP32;
    ck_assert_int_eq(ks_deform_fused_fits(&q, &g), 0);
    q = p, q.offset_groups = 4; /* 16 channels an offset group */
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_OK);
    ck_assert_int_eq(ks_deform_fused_fits(&q, &g), 0);
    q = p, q.groups = 4, q.offset_groups = 1; /* 16 channels a conv group */
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_OK);
    ck_assert_int_eq(ks_deform_fused_fits(&q, &g), 0);
    q = p, q.channels = 96, q.offset_groups = 3, q.height = q.width = 16;
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_OK);
    ck_assert_int_eq(ks_deform_fused_fits(&q, &g), 1);
    q.fused = 7; /* only 1 or a tile shape opts in; anything else is refused */
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_EINVAL);
    ck_assert(strstr(ks_error_message(), "fused must be"));
    q.fused = 422;
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_OK);
    ck_assert_int_eq(ks_deform_fused_fits(&q, &g), 1);
    q = p, q.fused = 44, q.height = q.width = 2, q.batch = 1, q.pad_h = q.pad_w = 0, q.kernel_h = q.kernel_w = 1;
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_OK); /* 4 columns: no room for 256 weight rows */
    ck_assert_int_eq(ks_deform_fused_fits(&q, &g), 0);
    /* the tile choices' ranges */
    q = p, q.tile_positions = 48; /* not a power of 2 */
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_EINVAL);
    q = p, q.gather_channels = 33;
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_EINVAL);
    q = p, q.grad_kernel = 3;
    ck_assert_int_eq(ks_deform_geometry(&q, &g), KS_EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("deform_conv");
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, layer_matches_reference_on_random_geometries);
    tcase_add_test(tc, layer_matches_reference_on_torchvision_test_geometry);
    tcase_add_test(tc, reference_gradients_match_finite_differences);
    tcase_add_test(tc, offset_channel_probe_moves_one_tap_of_one_group);
    tcase_add_test(tc, border_samples_blend_with_zero_not_clamp);
    tcase_add_test(tc, coordinate_gradient_at_minus_one_follows_the_semantics);
    tcase_add_test(tc, col2im_above_the_image_lands_on_row_zero);
    tcase_add_test(tc, chunks_give_the_same_results);
    tcase_add_test(tc, zero_offsets_are_a_grouped_convolution);
    tcase_add_test(tc, traced_equals_plain_bitwise_for_every_kernel);
    tcase_add_test(tc, tap_kernels_equal_the_teaching_kernels);
    tcase_add_test(tc, gather_tile_halves_until_its_lists_fit);
    tcase_add_test(tc, tf32_math_rounds_the_gemm_inputs);
    tcase_add_test(tc, bad_parameters_are_rejected_with_a_reason);
    tcase_add_test(tc, fused_forward_runs_only_where_it_applies);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
