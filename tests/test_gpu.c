/* GPU suite: CUDA plain == simulator == reference, CUDA traced events == simulator events,
 * device-sink overflow, 64-bit indexing. Without a GPU it prints why and exits 77, which
 * ctest reports as "Skipped". Runs without fork (CK_NOFORK): CUDA is never initialized in
 * a parent that forks. */
#include <stdio.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/core/ks_pages.h"
#include "../kernels/conv2d/conv2d_body.h"
#include "test_util.h"

static int cmp_event(const void *a, const void *b)
{
    const ks_event *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Runs op (0 im2col, 1 col2im) on the GPU: returns the output, fills sink if given. */
static float *run_cuda(int col2im, const ks_im2col_params *p, const float *src, int64_t n_src, int64_t n_dst,
                       ks_launch l, ks_sink *host_sink, unsigned long long cap)
{
    void *d_src, *d_dst;
    ks_sink dsink;
    float *out = malloc((size_t)n_dst * 4);
    ck_assert_int_eq(ks_cuda_malloc(&d_src, (size_t)n_src * 4), KS_OK);
    ck_assert_int_eq(ks_cuda_malloc(&d_dst, (size_t)n_dst * 4), KS_OK);
    ck_assert_int_eq(ks_cuda_upload(d_src, src, (size_t)n_src * 4), KS_OK);
    ck_assert_int_eq(ks_cuda_memset(d_dst, 0xFF, (size_t)n_dst * 4), KS_OK); /* NaN poison */
    if (host_sink) ck_assert_int_eq(ks_cuda_sink_create(&dsink, cap, host_sink->filter), KS_OK);
    int rc = col2im ? ks_col2im_cuda(p, d_src, d_dst, &l, host_sink ? &dsink : NULL, NULL)
                    : ks_im2col_cuda(p, d_src, d_dst, &l, host_sink ? &dsink : NULL, NULL);
    ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_cuda_sync() == KS_OK, "%s", ks_error_message());
    ck_assert_int_eq(ks_cuda_download(out, d_dst, (size_t)n_dst * 4), KS_OK);
    if (host_sink) {
        ck_assert_int_eq(ks_cuda_sink_download(&dsink, host_sink), KS_OK);
        ks_cuda_sink_free(&dsink);
    }
    ks_cuda_free(d_src);
    ks_cuda_free(d_dst);
    return out;
}

static void expect_same_on_gpu_filtered(int col2im, const ks_im2col_params *p, ks_launch l, uint64_t seed, int traced,
                                        ks_filter filter)
{
    ks_im2col_geom g;
    uint64_t s = seed;
    ck_assert_int_eq(ks_im2col_geometry(p, &g), KS_OK);
    const int64_t n_src = col2im ? g.columns_numel : g.image_numel;
    const int64_t n_dst = col2im ? g.image_numel : g.columns_numel;
    float *src = tu_random(&s, n_src);
    float *sim = malloc((size_t)n_dst * 4);
    double *ref = malloc((size_t)n_dst * 8);
    ks_sink *sim_sink = traced ? ks_host_sink_create(0, filter) : NULL;
    ks_sink *gpu_sink = traced ? ks_host_sink_create(0, filter) : NULL;
    ck_assert_int_eq(col2im ? ks_col2im_sim(p, src, sim, &l, sim_sink) : ks_im2col_sim(p, src, sim, &l, sim_sink),
                     KS_OK);
    /* the records, and two pages a warp slot may leave unused (ks_page_claim) */
    const unsigned long long cap = (unsigned long long)n_dst *
                                       (2 + (unsigned long long)(p->kernel_h * p->kernel_w) * 2) +
                                   2ull * KS_PAGE_MAX_WORDS / KS_PAGE_SLOT_WORDS * KS_PAGE_WARP_SLOTS;
    float *gpu = run_cuda(col2im, p, src, n_src, n_dst, l, NULL, 0);
    /* same body, same order of additions: bitwise equal, including col2im's sums */
    ck_assert_mem_eq(gpu, sim, (size_t)n_dst * 4);
    if (col2im) ks_col2im_ref(p, src, ref);
    else ks_im2col_ref(p, src, ref);
    tu_expect_close(gpu, ref, n_dst, 1e-5 * (double)(p->kernel_h * p->kernel_w), "gpu");
    if (traced) {
        float *gpu_t = run_cuda(col2im, p, src, n_src, n_dst, l, gpu_sink, cap);
        ck_assert_mem_eq(gpu_t, gpu, (size_t)n_dst * 4); /* twin check on the device */
        ck_assert_uint_eq(ks_sink_dropped(gpu_sink), 0);
        ck_assert_uint_eq(ks_sink_count(gpu_sink), ks_sink_count(sim_sink));
        /* the GPU records in atomic order; (index, seq) orders both the same way */
        qsort(gpu_sink->events, ks_sink_count(gpu_sink), sizeof(ks_event), cmp_event);
        qsort(sim_sink->events, ks_sink_count(sim_sink), sizeof(ks_event), cmp_event);
        for (unsigned long long i = 0; i < ks_sink_count(sim_sink); ++i)
            ck_assert_msg(!memcmp(&gpu_sink->events[i], &sim_sink->events[i], sizeof(ks_event)),
                          "event %llu (index %lld seq %u) differs between GPU and simulator", i,
                          (long long)sim_sink->events[i].index, sim_sink->events[i].seq);
        free(gpu_t);
    }
    ks_host_sink_free(sim_sink);
    ks_host_sink_free(gpu_sink);
    free(src), free(sim), free(ref), free(gpu);
}

static void expect_same_on_gpu(int col2im, const ks_im2col_params *p, ks_launch l, uint64_t seed, int traced)
{
    expect_same_on_gpu_filtered(col2im, p, l, seed, traced, ks_filter_all());
}

START_TEST(cuda_plain_matches_simulator_and_reference)
{
    uint64_t s = 900;
    for (int k = 0; k < 60; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        ks_launch l = tu_launch((int)tu_int(&s, 1, 1024), tu_int(&s, 0, 2) == 0 ? 2 : -1);
        expect_same_on_gpu(k % 2, &p, l, (uint64_t)k, 0);
    }
    /* a real layer under a 64-block cap: each thread loops hundreds of times */
    ks_im2col_params big = {.batch = 2,
                            .channels = 64,
                            .height = 63,
                            .width = 65,
                            .kernel_h = 3,
                            .kernel_w = 3,
                            .pad_h = 1,
                            .pad_w = 1,
                            .stride_h = 1,
                            .stride_w = 1,
                            .dilation_h = 1,
                            .dilation_w = 1};
    expect_same_on_gpu(0, &big, tu_launch(512, 64), 1, 0);
    expect_same_on_gpu(1, &big, tu_launch(512, 64), 2, 0);
}
END_TEST

START_TEST(cuda_traced_events_equal_simulator_events)
{
    uint64_t s = 901;
    for (int k = 0; k < 30; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        ks_launch l = tu_launch((int)tu_int(&s, 1, 256), tu_int(&s, 0, 1) ? 3 : -1);
        expect_same_on_gpu(k % 2, &p, l, (uint64_t)k + 50, 1);
    }
}
END_TEST

/* The 3x3 stride-1 instance traced (random geometries hardly ever draw it), recording
 * everything, blocks 1-2 only, every third item, nothing, and items 5-39: a traced block
 * whose filter passes none of its items runs the plain body (KS_KERNEL_FAST), and must
 * record nothing and compute the same. A filter that keeps a quarter of the launch's
 * threads or more runs the kernel with more registers (traced32all), the others the one
 * with the plain kernel's (ks_filter_keeps_much): on the default grid (11 or 14 blocks of
 * 64) blocks 1-2 and items 5-39 take the second, on 2 blocks of 32 the first. Only the
 * 32-bit kernels: the 64-bit ones need sizes past 2^30. */
START_TEST(cuda_traced_unit3_and_filters_equal_simulator)
{
    const ks_im2col_params p = {.batch = 2,
                                .channels = 3,
                                .height = 13,
                                .width = 11,
                                .kernel_h = 3,
                                .kernel_w = 3,
                                .pad_h = 1,
                                .pad_w = 0,
                                .stride_h = 1,
                                .stride_w = 1,
                                .dilation_h = 1,
                                .dilation_w = 1};
    ks_filter f[5] = {ks_filter_all(), ks_filter_all(), ks_filter_all(), ks_filter_all(), ks_filter_all()};
    f[1].block_lo = 1, f[1].block_hi = 3; /* the 2-block launch: block 1 recorded, block 0 skipped */
    f[2].every = 3;
    f[3].index_hi = 0;
    f[4].index_lo = 5, f[4].index_hi = 40; /* 35 of 702 (im2col) or 858 items */
    for (int k = 0; k < 20; ++k)           /* im2col and col2im; the default grid, and 2 blocks of 32 that loop */
        expect_same_on_gpu_filtered(k % 2, &p, k / 2 % 2 ? tu_launch(32, 2) : tu_launch(64, -1), (uint64_t)k + 70, 1,
                                    f[k / 4]);
}
END_TEST

/* conv2d through the registry on both devices: the GEMM body uses fmaf, so the GPU's
 * output and events equal the simulator's bitwise; both match the direct convolution. */
START_TEST(conv2d_cuda_equals_simulator_bitwise)
{
    const ks_op *op = ks_op_find("conv2d");
    uint64_t s = 902;
    for (int k = 0; k < 20; ++k) {
        static ks_run r[2];
        ks_im2col_params p = tu_geometry(&s);
        const int64_t O = tu_int(&s, 1, 6);
        for (int d = 0; d < 2; ++d) {
            ks_run_init(&r[d], op);
            tu_set2(&r[d], op, "kernel-size", p.kernel_h, p.kernel_w);
            tu_set2(&r[d], op, "padding", p.pad_h, p.pad_w);
            tu_set2(&r[d], op, "stride", p.stride_h, p.stride_w);
            tu_set2(&r[d], op, "dilation", p.dilation_h, p.dilation_w);
            tu_set2(&r[d], op, "batch", p.batch, 0);
            tu_set2(&r[d], op, "channels", p.channels, 0);
            tu_set2(&r[d], op, "input-size", p.height, p.width);
            tu_set2(&r[d], op, "out-channels", O, 0);
            r[d].pattern = KS_PAT_RANDOM;
            r[d].seed = (uint64_t)k;
            r[d].launch = tu_launch(k % 2 ? 64 : 0, k % 3 ? -1 : 2);
            r[d].device = d ? KS_DEV_CUDA : KS_DEV_SIM;
            r[d].sink = ks_host_sink_create(0, ks_filter_all());
            ck_assert_msg(ks_run_execute(&r[d]) == KS_OK, "%s", ks_error_message());
        }
        for (int t = 0; t < op->ntensors; ++t)
            if (op->tensors[t].output)
                ck_assert_mem_eq(r[0].tensor[t].data, r[1].tensor[t].data,
                                 (size_t)ks_tensor_numel(&r[0].tensor[t]) * 4);
        ks_conv2d_params cp = {.im = p, .out_channels = O};
        const ks_tensor *out = &r[1].tensor[KS_CONV_T_OUTPUT];
        double *ref = malloc((size_t)ks_tensor_numel(out) * 8);
        ks_conv2d_ref(&cp, r[1].tensor[KS_CONV_T_INPUT].data, r[1].tensor[KS_CONV_T_WEIGHT].data, ref);
        tu_expect_close(out->data, ref, ks_tensor_numel(out), 1e-6 * (double)(p.channels * p.kernel_h * p.kernel_w),
                        "conv2d gpu");
        free(ref);
        const unsigned long long n = ks_sink_count(r[0].sink);
        ck_assert_uint_eq(ks_sink_count(r[1].sink), n);
        qsort(r[0].sink->events, n, sizeof(ks_event), cmp_event);
        qsort(r[1].sink->events, n, sizeof(ks_event), cmp_event);
        for (unsigned long long i = 0; i < n; ++i)
            ck_assert_msg(!memcmp(&r[0].sink->events[i], &r[1].sink->events[i], sizeof(ks_event)),
                          "conv2d event %llu differs between GPU and simulator", i);
        for (int d = 0; d < 2; ++d) tu_run_done(&r[d]);
    }
}
END_TEST

START_TEST(device_sink_overflow_counts_drops)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 8,
                          .height = 33,
                          .width = 31,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    ks_im2col_geom g;
    uint64_t s = 3;
    ks_im2col_geometry(&p, &g);
    float *src = tu_random(&s, g.image_numel);
    ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
    float *out = run_cuda(0, &p, src, g.image_numel, g.columns_numel, tu_launch(0, 0), sink, 5000);
    const uint64_t total = (uint64_t)g.im2col_work * 19;
    /* 5000 slots of 64 bytes keep at least 5000 events (compact records, ks_pages.h), not
     * all of them; what did not fit is counted */
    ck_assert_uint_ge(ks_sink_count(sink), 5000);
    ck_assert_uint_gt(ks_sink_dropped(sink), 0);
    ck_assert_uint_eq(ks_sink_count(sink) + ks_sink_dropped(sink), total);
    ks_host_sink_free(sink);
    free(src), free(out);
}
END_TEST

/* C*kh*kw*Ho*Wo > 2^31: the full launch equals per-channel launches (chunked result) */
START_TEST(sizes_past_2_31_match_the_chunked_result)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 16,
                          .height = 4099,
                          .width = 4097,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    ks_im2col_geom g, g1;
    ks_im2col_geometry(&p, &g);
    ck_assert_int_gt(g.columns_numel, 2147483648LL);
    void *d_in, *d_cols;
    if (ks_cuda_malloc(&d_cols, (size_t)g.columns_numel * 4) != KS_OK) {
        printf("SKIP sizes_past_2_31: not enough GPU memory (%s)\n", ks_error_message());
        return;
    }
    ck_assert_int_eq(ks_cuda_malloc(&d_in, (size_t)g.image_numel * 4), KS_OK);
    uint64_t s = 11;
    float *in = tu_random(&s, g.image_numel);
    ck_assert_int_eq(ks_cuda_upload(d_in, in, (size_t)g.image_numel * 4), KS_OK);
    ks_launch l = tu_launch(0, 0);
    ck_assert_int_eq(ks_im2col_cuda(&p, d_in, d_cols, &l, NULL, NULL), KS_OK);
    ck_assert_int_eq(ks_cuda_sync(), KS_OK);
    ks_im2col_params one = p;
    one.channels = 1;
    ks_im2col_geometry(&one, &g1);
    float *full = malloc((size_t)g1.columns_numel * 4);
    for (int64_t c = 0; c < p.channels; c += 5) {
        float *chunk = run_cuda(0, &one, in + c * g1.image_numel, g1.image_numel, g1.columns_numel, l, NULL, 0);
        ck_assert_int_eq(ks_cuda_download(full, (float *)d_cols + c * g1.columns_numel, (size_t)g1.columns_numel * 4),
                         KS_OK);
        ck_assert_mem_eq(full, chunk, (size_t)g1.columns_numel * 4);
        free(chunk);
    }
    /* col2im on the same columns: image of 16 channels vs per-channel folds */
    void *d_img;
    ck_assert_int_eq(ks_cuda_malloc(&d_img, (size_t)g.image_numel * 4), KS_OK);
    ck_assert_int_eq(ks_col2im_cuda(&p, d_cols, d_img, &l, NULL, NULL), KS_OK);
    ck_assert_int_eq(ks_cuda_sync(), KS_OK);
    float *img = malloc((size_t)g1.image_numel * 4);
    int64_t c = p.channels - 1;
    ck_assert_int_eq(ks_cuda_download(full, (float *)d_cols + c * g1.columns_numel, (size_t)g1.columns_numel * 4),
                     KS_OK);
    float *chunk = run_cuda(1, &one, full, g1.columns_numel, g1.image_numel, l, NULL, 0);
    ck_assert_int_eq(ks_cuda_download(img, (float *)d_img + c * g1.image_numel, (size_t)g1.image_numel * 4), KS_OK);
    ck_assert_mem_eq(img, chunk, (size_t)g1.image_numel * 4);
    free(chunk), free(img), free(full), free(in);
    ks_cuda_free(d_img), ks_cuda_free(d_in), ks_cuda_free(d_cols);
}
END_TEST

int main(void)
{
    int n = ks_cuda_device_count();
    if (n < 1) {
        printf("SKIP: GPU suite not run: no CUDA device here (or a build without CUDA)\n");
        return 77;
    }
    char name[128];
    ks_cuda_device_name(name, sizeof name);
    printf("GPU suite on %s\n", name);
    Suite *s = suite_create("gpu");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, cuda_plain_matches_simulator_and_reference);
    tcase_add_test(tc, cuda_traced_events_equal_simulator_events);
    tcase_add_test(tc, cuda_traced_unit3_and_filters_equal_simulator);
    tcase_add_test(tc, conv2d_cuda_equals_simulator_bitwise);
    tcase_add_test(tc, device_sink_overflow_counts_drops);
    tcase_add_test(tc, sizes_past_2_31_match_the_chunked_result);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_NOFORK);
}
