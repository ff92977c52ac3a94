/* GPU suite for deformable convolution: the six kernels (three teaching, three tap) on
 * CUDA against the simulator (bitwise but for grad_input, whose atomics add in another
 * order; traced events bitwise), the layer on CUDA (cuBLAS, fp32 and TF32) against the
 * double reference and against torchvision's golden data, the fused TF32 forward against
 * the double reference, and a launch large enough that
 * every thread loops. Exits 77 without a GPU; runs without fork (CUDA is never
 * initialized in a parent that forks). */
#include <stddef.h>
#include <stdio.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/core/ks_gemm.h"
#include "deform_fixture.h"
#include "golden_util.h"

static int cmp_event(const void *a, const void *b)
{
    const ks_event *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* grad_tile's shared accesses left out (its window sums, and so which pixels its flush
 * finds touched, follow the order of the GPU's atomics; its global adds are recorded per
 * corner either way): the count kept */
static unsigned long long drop_shared(ks_event *e, unsigned long long n)
{
    unsigned long long k = 0;
    for (unsigned long long i = 0; i < n; ++i)
        if (!(e[i].flags & KS_FLAG_SHARED) || e[i].kind == KS_EV_BARRIER) e[k++] = e[i];
    return k;
}

/* bitwise; `any_seq`: but for the event's number within its thread (grad_tile: the
 * shared events left out before it may differ in number) */
static int same_event(const ks_event *a, const ks_event *b, int any_seq)
{
    ks_event x = *a, y = *b;
    if (any_seq) x.seq = y.seq = 0;
    return !memcmp(&x, &y, sizeof x);
}

static void *up(const float *h, int64_t n)
{
    void *d;
    ck_assert_int_eq(ks_cuda_malloc(&d, (size_t)(n > 0 ? n : 1) * 4), KS_OK);
    if (h) ck_assert_int_eq(ks_cuda_upload(d, h, (size_t)n * 4), KS_OK);
    else ck_assert_int_eq(ks_cuda_memset(d, 0, (size_t)(n > 0 ? n : 1) * 4), KS_OK);
    return d;
}

static float *down(void *d, int64_t n)
{
    float *h = malloc((size_t)(n > 0 ? n : 1) * 4);
    ck_assert_int_eq(ks_cuda_download(h, d, (size_t)n * 4), KS_OK);
    ks_cuda_free(d);
    return h;
}

/* the forward's tensors of c on the GPU, the output zeroed, the rest NULL */
static ks_deform_tensors up_forward(const df_case *c)
{
    ks_deform_tensors d;
    memset(&d, 0, sizeof d);
    d.input = up(c->input, c->g.input_numel), d.offset = up(c->offset, c->g.offset_numel);
    d.mask = c->p.use_mask ? up(c->mask, c->g.mask_numel) : NULL;
    d.weight = up(c->weight, c->g.weight_numel);
    d.bias = c->p.use_bias ? up(c->bias, c->p.out_channels) : NULL;
    d.output = up(NULL, c->g.output_numel);
    return d;
}

/* kernel k of chunk 0 (all images) on the GPU; outputs come back in out[0..3]:
 * columns, grad_input, grad_offset, grad_mask. in_place: grad_tap / grad_tile / grad_gather with
 * write_columns, the columns written over cols_in's copy */
static void gpu_kernel_at(const df_case *c, ks_deform_kernel k, const float *cols_in, const ks_launch *l,
                          ks_sink *host_sink, float *out[4], int in_place)
{
    ks_deform_chunk ch;
    ks_sink ds;
    memset(&ch, 0, sizeof ch);
    ch.im2col_step = c->g.im2col_step;
    ch.input = up(c->input, c->g.input_numel);
    ch.offset = up(c->offset, c->g.offset_numel);
    ch.mask = c->p.use_mask ? up(c->mask, c->g.mask_numel) : NULL;
    ch.columns_in = up(cols_in, c->g.col_numel);
    ch.columns = in_place ? (float *)ch.columns_in : up(NULL, c->g.col_numel);
    ch.write_columns = in_place;
    ch.grad_input = up(NULL, c->g.input_numel);
    ch.grad_offset = up(NULL, c->g.offset_numel);
    ch.grad_mask = up(NULL, c->g.mask_numel);
    if (host_sink) ck_assert_int_eq(ks_cuda_sink_create(&ds, 1 << 22, host_sink->filter), KS_OK);
    int rc = ks_deform_kernel_cuda(&c->p, k, &ch, l, host_sink ? &ds : NULL, NULL);
    ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_cuda_sync() == KS_OK, "%s", ks_error_message());
    if (host_sink) {
        ck_assert_int_eq(ks_cuda_sink_download(&ds, host_sink), KS_OK);
        ck_assert_uint_eq(ks_sink_dropped(host_sink), 0);
        ks_cuda_sink_free(&ds);
    }
    out[0] = down(ch.columns, c->g.col_numel);
    out[1] = down(ch.grad_input, c->g.input_numel);
    out[2] = down(ch.grad_offset, c->g.offset_numel);
    out[3] = down(ch.grad_mask, c->g.mask_numel);
    ks_cuda_free((void *)ch.input), ks_cuda_free((void *)ch.offset), ks_cuda_free((void *)ch.mask);
    if (!in_place) ks_cuda_free((void *)ch.columns_in);
}

static void gpu_kernel(const df_case *c, ks_deform_kernel k, const float *cols_in, const ks_launch *l,
                       ks_sink *host_sink, float *out[4])
{
    gpu_kernel_at(c, k, cols_in, l, host_sink, out, 0);
}

static void sim_kernel(const df_case *c, ks_deform_kernel k, const float *cols_in, const ks_launch *l, ks_sink *sink,
                       float *out[4])
{
    ks_deform_chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.im2col_step = c->g.im2col_step, ch.input = c->input, ch.offset = c->offset;
    ch.mask = c->p.use_mask ? c->mask : NULL, ch.columns_in = cols_in;
    ch.columns = out[0] = df_alloc(c->g.col_numel);
    ch.grad_input = out[1] = df_alloc(c->g.input_numel);
    ch.grad_offset = out[2] = df_alloc(c->g.offset_numel);
    ch.grad_mask = out[3] = df_alloc(c->g.mask_numel);
    ck_assert_msg(ks_deform_kernel_sim(&c->p, k, &ch, l, sink) == KS_OK, "%s", ks_error_message());
}

START_TEST(deform_kernels_cuda_equal_simulator)
{
    uint64_t s = 0x6B0;
    for (int t = 0; t < 12; ++t) {
        ks_deform_params p = df_geometry(&s);
        p.batch = p.im2col_step = 1 + t % 3;
        if (t >= 6) p.channels *= 9; /* past the tap's 32-channel blocks */
        if (t % 4 == 1) {            /* images larger than grad_tile's window, offsets past its margin */
            ks_deform_geom g;
            ks_deform_params q = p;
            q.height = 14 + t, q.width = 27 - t;
            if (ks_deform_geometry(&q, &g) == KS_OK) p = q;
        }
        static const int tiles[] = {32, 4, 64, 1, 8, 16};
        p.tile_positions = tiles[t % 6]; /* grad_tile's positions per tile */
        p.gather_positions = tiles[(t + 1) % 6], p.gather_channels = t % 3 ? 32 : 7; /* grad_gather's */
        df_case c;
        df_init(&c, &p, 900 + (uint64_t)t, t % 4 == 1 ? 9.0f : 2.5f);
        if (t % 4 == 3) /* whole-number offsets: samples on the kinks and on -1 */
            for (int64_t i = 0; i < c.g.offset_numel; ++i) c.offset[i] = roundf(c.offset[i]);
        float *cols_in = tu_random(&s, c.g.col_numel);
        ks_launch l = t % 2 ? tu_launch(64, 2) : tu_launch(0, 0);
        for (int k = 0; k <= KS_DEFORM_GRAD_GATHER; ++k) {
            const int atomics = k == KS_DEFORM_COL2IM || k >= KS_DEFORM_GRAD_TAP;
            ks_sink *ss = ks_host_sink_create(0, ks_filter_all()), *gs = ks_host_sink_create(0, ks_filter_all());
            float *a[4], *b[4], *plain[4];
            sim_kernel(&c, (ks_deform_kernel)k, cols_in, &l, ss, a);
            gpu_kernel(&c, (ks_deform_kernel)k, cols_in, &l, gs, b);
            gpu_kernel(&c, (ks_deform_kernel)k, cols_in, &l, NULL, plain);
            const int64_t n[4] = {c.g.col_numel, c.g.input_numel, c.g.offset_numel, c.g.mask_numel};
            for (int q = 0; q < 4; ++q) {
                if (atomics && q == 1) { /* another order of adds */
                    for (int64_t i = 0; i < n[q]; ++i)
                        ck_assert_msg(fabsf(a[q][i] - b[q][i]) <= 1e-5f * (1 + fabsf(a[q][i])),
                                      "geometry %d col2im grad_input[%lld]: sim %g gpu %g", t, (long long)i, a[q][i],
                                      b[q][i]);
                } else {
                    ck_assert_msg(!memcmp(a[q], b[q], (size_t)n[q] * 4), "geometry %d kernel %d output %d differs", t,
                                  k, q);
                }
                ck_assert_msg(!memcmp(plain[q], b[q], (size_t)n[q] * 4) || (atomics && q == 1),
                              "geometry %d kernel %d: plain and traced GPU outputs differ", t, k);
            }
            unsigned long long ne = ks_sink_count(ss), ng = ks_sink_count(gs);
            if (k >= KS_DEFORM_GRAD_TILE) {       /* its window follows the atomics' order: */
                ne = drop_shared(ss->events, ne); /* compare the rest */
                ng = drop_shared(gs->events, ng);
            }
            ck_assert_uint_eq(ng, ne);
            qsort(ss->events, ne, sizeof(ks_event), cmp_event);
            qsort(gs->events, ne, sizeof(ks_event), cmp_event);
            for (unsigned long long i = 0; i < ne; ++i)
                ck_assert_msg(same_event(&ss->events[i], &gs->events[i], k >= KS_DEFORM_GRAD_TILE),
                              "geometry %d kernel %d: event %llu differs between GPU and simulator", t, k, i);
            for (int q = 0; q < 4; ++q) free(a[q]), free(b[q]), free(plain[q]);
            ks_host_sink_free(ss), ks_host_sink_free(gs);
        }
        /* the backward's in-place columns: im2col_tap's bits over the gradient, the same
         * gradients as the simulator's */
        float *want[4], *tap[4];
        sim_kernel(&c, KS_DEFORM_IM2COL_TAP, NULL, &l, NULL, want);
        for (int k = KS_DEFORM_GRAD_TAP; k <= KS_DEFORM_GRAD_GATHER; ++k) {
            float *got[4];
            sim_kernel(&c, (ks_deform_kernel)k, cols_in, &l, NULL, tap);
            gpu_kernel_at(&c, (ks_deform_kernel)k, cols_in, &l, NULL, got, 1);
            ck_assert_msg(!memcmp(got[0], want[0], (size_t)c.g.col_numel * 4),
                          "geometry %d kernel %d: in-place columns differ", t, k);
            ck_assert(!memcmp(got[2], tap[2], (size_t)c.g.offset_numel * 4));
            ck_assert(!memcmp(got[3], tap[3], (size_t)c.g.mask_numel * 4));
            for (int q = 0; q < 4; ++q) free(got[q]), free(tap[q]);
        }
        for (int q = 0; q < 4; ++q) free(want[q]);
        free(cols_in);
        df_free(&c);
    }
}
END_TEST

/* the layer on the GPU (cuBLAS GEMMs) against the double reference; the last four in
 * TF32, within 2e-3 of each tensor's largest entry */
START_TEST(deform_layer_cuda_matches_reference)
{
    uint64_t s = 0x1A7E;
    for (int t = 0; t < 20; ++t) {
        ks_deform_params p = df_geometry(&s);
        if (t >= 16) p.channels *= 8, p.math = KS_MATH_TF32; /* longer sums; tensor cores */
        df_case c;
        df_init(&c, &p, 700 + (uint64_t)t, 2.5f);
        ks_deform_tensors h = df_tensors(&c), d = up_forward(&c);
        d.grad_output = up(c.grad_output, c.g.output_numel), d.grad_input = up(NULL, c.g.input_numel);
        d.grad_offset = up(NULL, c.g.offset_numel), d.grad_weight = up(NULL, c.g.weight_numel);
        d.grad_mask = p.use_mask ? up(NULL, c.g.mask_numel) : NULL;
        d.grad_bias = p.use_bias ? up(NULL, p.out_channels) : NULL;
        float *ws = up(NULL, ks_deform_workspace_floats(&p));
        ks_launch l = tu_launch(0, 0);
        ck_assert_msg(ks_deform_forward_cuda(&p, &d, ws, &l, KS_DEFORM_NONE, NULL, NULL) == KS_OK, "%s",
                      ks_error_message());
        ck_assert_msg(ks_deform_backward_cuda(&p, &d, ws, &l, KS_DEFORM_NONE, NULL, NULL) == KS_OK, "%s",
                      ks_error_message());
        ck_assert_msg(ks_cuda_sync() == KS_OK, "%s", ks_error_message());
        free(c.output), free(c.grad_input), free(c.grad_offset), free(c.grad_weight), free(c.grad_mask),
            free(c.grad_bias);
        c.output = down(d.output, c.g.output_numel), c.grad_input = down(d.grad_input, c.g.input_numel);
        c.grad_offset = down(d.grad_offset, c.g.offset_numel), c.grad_weight = down(d.grad_weight, c.g.weight_numel);
        c.grad_mask = p.use_mask ? down(d.grad_mask, c.g.mask_numel) : df_alloc(1);
        c.grad_bias = p.use_bias ? down(d.grad_bias, p.out_channels) : df_alloc(1);
        ks_deform_ref_grads g = {.grad_input = c.r_gi,
                                 .grad_offset = c.r_go,
                                 .grad_mask = c.r_gm,
                                 .grad_weight = c.r_gw,
                                 .grad_bias = c.r_gb};
        ks_deform_ref_forward(&p, &h, c.r_out);
        ks_deform_ref_backward(&p, &h, &g);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "gpu geometry %d%s", t, p.math ? " tf32" : "");
        if (p.math == KS_MATH_FP32) df_expect(&c, 2e-4, ctx);
        else df_expect_scaled(&c, 2e-3, ctx);
        void *rest[] = {(void *)d.input,
                        (void *)d.offset,
                        (void *)d.mask,
                        (void *)d.weight,
                        (void *)d.bias,
                        (void *)d.grad_output,
                        ws};
        for (size_t i = 0; i < sizeof rest / sizeof rest[0]; ++i) ks_cuda_free(rest[i]);
        df_free(&c);
    }
}
END_TEST

/* The TF32 forward's fused kernel (deform_fused.cu) against the double reference, within
 * 2e-3 of the largest output: its tile shapes (128 x 128, 256 x 64 at one and at two
 * blocks an SM, 256 x 128), groups of several row tiles,
 * outputs and columns that do not fill a tile, conv groups, offset groups, mask, bias,
 * stride, dilation, a 3x2 kernel, and chunks after one that ran im2col + GEMM (columns0
 * kept: the weight is prepared again). params.fused opts in (1: the default shape); the
 * launch count shows the fused kernel ran; fused 0 runs im2col + cuBLAS TF32 instead, also
 * within 2e-3. */
START_TEST(deform_fused_tf32_forward_matches_reference)
{
    const ks_deform_params base = {.kernel_h = 3,
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
                                   .semantics = KS_DEFORM_TORCHVISION,
                                   .math = KS_MATH_TF32};
    ks_deform_params ps[5] = {base, base, base, base, base};
    /* 3 x 13x11, C 64 -> 37, two offset groups, mask and bias: 429 columns */
    ps[0].batch = 3, ps[0].channels = 64, ps[0].height = 13, ps[0].width = 11, ps[0].out_channels = 37;
    ps[0].offset_groups = 2, ps[0].use_mask = 1, ps[0].use_bias = 1;
    /* two conv groups of 32 channels and 70 outputs, kernel 3x2, stride 2, dilation 2 */
    ps[1].batch = 2, ps[1].channels = 64, ps[1].height = 33, ps[1].width = 30, ps[1].out_channels = 140;
    ps[1].groups = 2, ps[1].kernel_w = 2, ps[1].pad_h = 2, ps[1].stride_h = ps[1].stride_w = 2;
    ps[1].dilation_h = ps[1].dilation_w = 2, ps[1].use_bias = 1;
    /* 160 outputs (the 256-row tile), three offset groups, five chunks of one image */
    ps[2].batch = 5, ps[2].channels = 96, ps[2].height = 17, ps[2].width = 15, ps[2].out_channels = 160;
    ps[2].offset_groups = 3, ps[2].im2col_step = 1, ps[2].use_mask = 1;
    ps[3] = ps[0]; /* again in the other tile shapes */
    /* two groups of 300 outputs: several row tiles a group, the last one partial */
    ps[4] = base;
    ps[4].batch = 2, ps[4].channels = 64, ps[4].height = 15, ps[4].width = 13, ps[4].out_channels = 600;
    ps[4].groups = 2, ps[4].offset_groups = 2, ps[4].use_mask = 1, ps[4].use_bias = 1;
    static const int shapes[] = {1, 1, 1, 42, 422, 44, 24, 44, 0};
    static const int which[] = {0, 1, 2, 3, 3, 3, 4, 4, 0};
    for (int t = 0; t < 9; ++t) {
        ks_deform_params p = ps[which[t]];
        p.fused = shapes[t];
        df_case c;
        df_init(&c, &p, 910 + (uint64_t)t, 2.5f);
        ks_deform_tensors h = df_tensors(&c), d = up_forward(&c);
        float *ws = up(NULL, ks_deform_workspace_floats(&p));
        float *cols0 = t == 2 ? up(NULL, c.g.col_numel) : NULL;
        d.columns0 = cols0;
        const int fused = t < 8, chunks = (int)(p.batch / c.g.im2col_step);
        ck_assert_int_eq(ks_deform_fused_fits(&p, &c.g), fused);
        const long long before = ks_deform_fused_launches();
        ks_launch l = tu_launch(0, 0);
        ck_assert_msg(ks_deform_forward_cuda(&p, &d, ws, &l, KS_DEFORM_NONE, NULL, NULL) == KS_OK, "%s",
                      ks_error_message());
        ck_assert_msg(ks_cuda_sync() == KS_OK, "%s", ks_error_message());
        ck_assert_int_eq(ks_deform_fused_launches() - before, fused ? chunks - (t == 2) : 0);
        free(c.output);
        c.output = down(d.output, c.g.output_numel);
        ks_deform_ref_forward(&p, &h, c.r_out);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "fused tf32 case %d (fused %d): output", t, shapes[t]);
        df_scaled(c.output, c.r_out, c.g.output_numel, 2e-3, ctx);
        void *rest[] = {(void *)d.input, (void *)d.offset, (void *)d.mask, (void *)d.weight, (void *)d.bias, ws, cols0};
        for (size_t i = 0; i < sizeof rest / sizeof rest[0]; ++i) ks_cuda_free(rest[i]);
        df_free(&c);
    }
}
END_TEST

/* torchvision deform_conv2d's golden data (tests/golden/d*), forward and every gradient,
 * through the CUDA layer: fp32 within 1e-4 as the simulator, TF32 within 2e-3 of each
 * tensor's largest entry */
START_TEST(deform_layer_cuda_matches_torchvision_golden)
{
    cJSON *root = listing("deform.json");
    const cJSON *g;
    int count = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "geometries"))
    {
        const int id = (int)item(g, "id", 0);
        for (int math = KS_MATH_FP32; math <= KS_MATH_TF32; ++math) {
            ks_deform_params p = golden_deform_params(g);
            p.math = math;
            ks_deform_geom geo;
            ck_assert_int_eq(ks_deform_geometry(&p, &geo), KS_OK);
            static const char *const in_names[] = {"input", "offset", "weight", "bias", "grad_output", "mask"};
            static const char *const out_names[] = {"output",      "grad_input", "grad_offset",
                                                    "grad_weight", "grad_bias",  "grad_mask"};
            const int64_t in_n[] = {geo.input_numel, geo.offset_numel, geo.weight_numel,
                                    p.out_channels,  geo.output_numel, geo.mask_numel};
            const int64_t out_n[] = {geo.output_numel, geo.input_numel, geo.offset_numel,
                                     geo.weight_numel, p.out_channels,  geo.mask_numel};
            const int nt = 5 + p.use_mask;
            ks_tensor in[6], want[6];
            void *din[6] = {NULL}, *dout[6] = {NULL};
            for (int i = 0; i < nt; ++i) {
                in[i] = load_prefixed('d', id, in_names[i]);
                want[i] = load_prefixed('d', id, out_names[i]);
                ck_assert_int_eq(ks_tensor_numel(&in[i]), in_n[i]);
                ck_assert_int_eq(ks_tensor_numel(&want[i]), out_n[i]);
                din[i] = up(in[i].data, in_n[i]);
                dout[i] = up(NULL, out_n[i]);
            }
            ks_deform_tensors t = {.input = din[0],
                                   .offset = din[1],
                                   .mask = din[5],
                                   .weight = din[2],
                                   .bias = din[3],
                                   .output = dout[0],
                                   .grad_output = din[4],
                                   .grad_input = dout[1],
                                   .grad_offset = dout[2],
                                   .grad_mask = dout[5],
                                   .grad_weight = dout[3],
                                   .grad_bias = dout[4],
                                   .columns0 = NULL};
            float *ws = up(NULL, ks_deform_workspace_floats(&p));
            ks_launch l = tu_launch(0, 0);
            ck_assert_msg(ks_deform_forward_cuda(&p, &t, ws, &l, KS_DEFORM_NONE, NULL, NULL) == KS_OK, "%s",
                          ks_error_message());
            ck_assert_msg(ks_deform_backward_cuda(&p, &t, ws, &l, KS_DEFORM_NONE, NULL, NULL) == KS_OK, "%s",
                          ks_error_message());
            ck_assert_msg(ks_cuda_sync() == KS_OK, "%s", ks_error_message());
            for (int i = 0; i < nt; ++i) {
                float *got = down(dout[i], out_n[i]);
                const float *w = want[i].data;
                double big = 0, err = 0;
                for (int64_t k = 0; k < out_n[i]; ++k) {
                    big = fmax(big, fabs(w[k]));
                    err = fmax(err, math ? fabs(got[k] - w[k]) : fabs(got[k] - w[k]) / (1 + fabs(w[k])));
                }
                ck_assert_msg(math ? err <= 2e-3 * big : err <= 1e-4, "golden %d %s: %s off by %g (largest %g)", id,
                              math ? "tf32" : "fp32", out_names[i], err, big);
                free(got);
                ks_cuda_free(din[i]);
                ks_tensor_free(&in[i]), ks_tensor_free(&want[i]);
            }
            ks_cuda_free(ws);
        }
        count++;
    }
    ck_assert_int_ge(count, 4);
    cJSON_Delete(root);
}
END_TEST

/* C*im2col_step*Ho*Wo = 136*4*64*64 > 4096*512: the capped grid loops, and the GPU still
 * equals the simulator */
START_TEST(deform_im2col_grid_stride_past_the_block_cap)
{
    ks_deform_params p = {.batch = 4,
                          .channels = 136,
                          .height = 64,
                          .width = 64,
                          .out_channels = 1,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 4,
                          .im2col_step = 4,
                          .use_mask = 1,
                          .use_bias = 0,
                          .semantics = KS_DEFORM_TORCHVISION};
    df_case c;
    df_init(&c, &p, 4242, 3.0f);
    ck_assert_int_gt(c.g.im2col_work, 4096LL * 512);
    ks_launch l = tu_launch(0, 0);
    float *a[4], *b[4];
    sim_kernel(&c, KS_DEFORM_IM2COL, NULL, &l, NULL, a);
    gpu_kernel(&c, KS_DEFORM_IM2COL, NULL, &l, NULL, b);
    ck_assert(!memcmp(a[0], b[0], (size_t)c.g.col_numel * 4));
    for (int q = 0; q < 4; ++q) free(a[q]), free(b[q]);
    df_free(&c);
}
END_TEST

int main(void)
{
    if (ks_cuda_device_count() < 1) {
        printf("SKIP: deformable GPU suite not run: no CUDA device here (or a build without CUDA)\n");
        return 77;
    }
    char name[128];
    ks_cuda_device_name(name, sizeof name);
    printf("deformable GPU suite on %s\n", name);
    Suite *s = suite_create("gpu_deform");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, deform_kernels_cuda_equal_simulator);
    tcase_add_test(tc, deform_layer_cuda_matches_reference);
    tcase_add_test(tc, deform_layer_cuda_matches_torchvision_golden);
    tcase_add_test(tc, deform_fused_tf32_forward_matches_reference);
    tcase_add_test(tc, deform_im2col_grid_stride_past_the_block_cap);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_NOFORK);
}
