/* test_gpu_each_op.c - every operator in the table on the GPU against the simulator,
 * without naming any: defaults and --backward, traced; outputs equal (float outputs
 * within 1e-5 relative: atomic adds sum in another order, cuBLAS rounds unlike the
 * simulator's GEMM), every event equal after sorting by (index, seq): bitwise but for
 * float values, which may come from a GEMM (within 1e-5). Then the self-sizing trace buffer: a launch of more
 * events than the first buffer holds is rerun once and loses nothing, and --trace-limit
 * keeps exactly the limit on both devices and counts the same drops. Exits 77 without a
 * GPU; runs without fork (CUDA in the parent). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "test_util.h"
#include "twins.h"

static int by_item(const void *a, const void *b)
{
    const ks_event *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static ks_run R[2]; /* [0] simulator, [1] GPU */

static void run_both(const ks_op *op, int backward, const char *const *set, unsigned long long limit)
{
    for (int d = 0; d < 2; ++d) {
        ks_run_init(&R[d], op);
        R[d].device = d ? KS_DEV_CUDA : KS_DEV_SIM;
        R[d].pattern = KS_PAT_RANDOM;
        R[d].seed = 99;
        if (backward) ck_assert_int_eq(ks_run_set(&R[d], "backward", "on"), KS_OK);
        for (int k = 0; set && set[k]; k += 2) ck_assert_int_eq(ks_run_set(&R[d], set[k], set[k + 1]), KS_OK);
        ck_assert_ptr_nonnull(R[d].sink = ks_host_sink_create(limit, ks_filter_all()));
        ck_assert_msg(ks_run_execute(&R[d]) == KS_OK, "%s on %s: %s", op->name, d ? "cuda" : "sim", ks_error_message());
    }
}

static void expect_same_outputs(const ks_op *op)
{
    for (int i = 0; i < op->ntensors; ++i) {
        if (R[0].absent[i] || !op->tensors[i].output) continue;
        const ks_tensor *a = &R[0].tensor[i], *b = &R[1].tensor[i];
        const int64_t n = ks_tensor_numel(a);
        if (a->dtype != KS_F32) {
            ck_assert_msg(!memcmp(a->data, b->data, (size_t)n * ks_dtype_size(a->dtype)), "%s: %s differs", op->name,
                          a->name);
            continue;
        }
        const float *x = a->data, *y = b->data;
        for (int64_t k = 0; k < n; ++k)
            ck_assert_msg(fabsf(x[k] - y[k]) <= 1e-5f * (1 + fabsf(x[k])), "%s: %s[%lld] sim %g gpu %g", op->name,
                          a->name, (long long)k, x[k], y[k]);
    }
}

static int close(float x, float y)
{
    return x == y || (isnan(x) && isnan(y)) || fabsf(x - y) <= 1e-5f * (1 + fabsf(x));
}

/* Everything bitwise (who, where, which element, corner flags) except the float values a
 * kernel read from a GEMM's result (cuBLAS and the simulator's GEMM round differently):
 * those within 1e-5 relative. */
static int same_event(const ks_event *a, const ks_event *b)
{
    if (memcmp(a, b, offsetof(ks_event, u))) return 0;
    if (a->kind == KS_EV_WORK) return !memcmp(&a->u, &b->u, sizeof a->u);
    if (a->kind == KS_EV_SAMPLE) {
        const ks_ev_sample *x = &a->u.sample, *y = &b->u.sample;
        int ok = x->plane == y->plane && close(x->y, y->y) && close(x->x, y->x) && close(x->value, y->value);
        for (int k = 0; k < 4; ++k) ok = ok && close(x->w[k], y->w[k]);
        return ok;
    }
    const ks_ev_access *x = &a->u.access, *y = &b->u.access;
    return x->offset == y->offset && x->plane == y->plane && x->y == y->y && x->x == y->x && close(x->value, y->value);
}

static void expect_same_events(const ks_op *op)
{
    const unsigned long long n = ks_sink_count(R[0].sink);
    ck_assert_msg(ks_sink_count(R[1].sink) == n, "%s: %llu GPU events, %llu simulated", op->name,
                  ks_sink_count(R[1].sink), n);
    ck_assert_uint_eq(ks_sink_dropped(R[1].sink), ks_sink_dropped(R[0].sink));
    qsort(R[0].sink->events, n, sizeof(ks_event), by_item);
    qsort(R[1].sink->events, n, sizeof(ks_event), by_item);
    for (unsigned long long i = 0; i < n; ++i) {
        const ks_event *a = &R[0].sink->events[i], *b = &R[1].sink->events[i];
        ck_assert_msg(same_event(a, b),
                      "%s: event %llu (index %lld seq %u kind %d site %d tap %d) differs between GPU and simulator",
                      op->name, i, (long long)a->index, a->seq, a->kind, a->site, a->tap);
    }
}

static void done(void)
{
    for (int d = 0; d < 2; ++d) {
        ks_host_sink_free(R[d].sink);
        R[d].sink = NULL;
        ks_run_free(&R[d]);
    }
}

START_TEST(every_operator_traces_the_same_on_gpu_and_simulator)
{
    const ks_op *op = ks_op_at(_i);
    const int has_backward = ks_op_param(op, "backward") >= 0;
    for (int backward = 0; backward <= has_backward; ++backward) {
        run_both(op, backward, NULL, 0);
        expect_same_outputs(op);
        expect_same_events(op);
        ck_assert_int_eq(R[1].reruns, 0);
        printf("  %-14s %-9s %6llu events, equal\n", op->name, backward ? "backward" : "forward",
               ks_sink_count(R[0].sink));
        done();
    }
}
END_TEST

/* sparse_conv in each mode and with each kernel traced: the hash table (ordered linear
 * probing: the same table in any thread order), rulebook, site maps bitwise; a table
 * just above the 24 sites of the ring collides, and still builds the same on the GPU */
START_TEST(sparse_conv_is_the_same_on_gpu_in_every_mode)
{
    static const char *const modes[][16] = {
        {"stride", "2", "padding", "1", "in-channels", "3", "out-channels", "5", "bias", "on", NULL},
        {"subm", "on", "spatial-shape", "5,9,11", "in-channels", "2", "out-channels", "3", NULL},
        {"transposed", "on", "stride", "2", "kernel-size", "3,2", "output-padding", "1,0", "in-channels", "4", NULL},
        {"subm", "on", "hash-slots", "32", "dilation", "2", NULL},
        {"spatial-shape", "4,7,9", "kernel-size", "3,3,2", "stride", "2", "dilation", "1,1,2", "batch-size", "2", NULL},
    };
    static const char *const kernels[] = {"rulebook", "insert", "gather", "reduce"};
    const ks_op *op = ks_op_find("sparse_conv");
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; ++m)
        for (int k = 0; k < 4; ++k) {
            const char *set[20];
            int n = 0;
            for (; modes[m][n]; ++n) set[n] = modes[m][n];
            set[n++] = "trace-kernel", set[n++] = kernels[k], set[n] = NULL;
            run_both(op, 1, set, 0);
            expect_same_outputs(op);
            /* the insert kernel's own probes depend on which thread displaces which key
             * first (its table does not): its events are compared as counts only */
            if (k == 1) ck_assert_int_eq(ks_sink_count(R[1].sink) > 0, ks_sink_count(R[0].sink) > 0);
            else expect_same_events(op);
            done();
        }
}
END_TEST

/* --schedule on the GPU: every block's line filled, on a real SM, start <= end on the
 * nanosecond clock; the events are still the simulator's */
/* col2im's scatter form on the GPU: atomics in another order, the same sums (1e-5) and
 * the same events */
/* gemm_tiled (barriers, shared memory) on odd sizes, both tiles, with a tile loop: c
 * bitwise equal (fmaf in k order on both), every event bitwise equal after sorting, the
 * barrier phases of the shared accesses and the barrier lines included */
START_TEST(gemm_tiled_is_bitwise_the_same_on_gpu)
{
    static const char *const sizes[][12] = {
        {"m", "37", "k", "41", "n", "29", "tile", "16", NULL},
        {"m", "45", "k", "70", "n", "33", "tile", "32", NULL},
        {"m", "19", "k", "23", "n", "17", "tile", "16", NULL},
    };
    const ks_op *op = ks_op_find("gemm_tiled");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        run_both(op, 0, sizes[k], 0);
        const ks_tensor *c0 = &R[0].tensor[ks_op_tensor(op, "c")], *c1 = &R[1].tensor[ks_op_tensor(op, "c")];
        ck_assert_int_eq(memcmp(c0->data, c1->data, (size_t)ks_tensor_numel(c0) * sizeof(float)), 0);
        const unsigned long long n = ks_sink_count(R[0].sink);
        ck_assert_uint_eq(ks_sink_count(R[1].sink), n);
        qsort(R[0].sink->events, n, sizeof(ks_event), by_item);
        qsort(R[1].sink->events, n, sizeof(ks_event), by_item);
        for (unsigned long long i = 0; i < n; ++i)
            ck_assert_msg(!memcmp(&R[0].sink->events[i], &R[1].sink->events[i], sizeof(ks_event)),
                          "gemm_tiled case %zu: event %llu (index %lld seq %u kind %d) differs", k, i,
                          (long long)R[0].sink->events[i].index, R[0].sink->events[i].seq, R[0].sink->events[i].kind);
        done();
    }
}
END_TEST

START_TEST(col2im_scatter_is_the_same_on_gpu)
{
    static const char *const set[] = {"algorithm", "scatter", "channels", "3", "output-size",
                                      "9,11",      "stride",  "1,2",      NULL};
    run_both(ks_op_find("col2im"), 0, set, 0);
    expect_same_outputs(ks_op_find("col2im"));
    expect_same_events(ks_op_find("col2im"));
    done();
}
END_TEST

START_TEST(gpu_schedule_records_every_block)
{
    static const char *const set[] = {"channels", "8", "input-size", "32", NULL};
    for (int d = 0; d < 2; ++d) R[d].schedule = 0;
    const ks_op *op = ks_op_find("im2col");
    for (int d = 0; d < 2; ++d) {
        ks_run_init(&R[d], op);
        R[d].device = d ? KS_DEV_CUDA : KS_DEV_SIM;
        R[d].schedule = 1;
        R[d].launch = tu_launch(64, 0);
        for (int k = 0; set[k]; k += 2) ck_assert_int_eq(ks_run_set(&R[d], set[k], set[k + 1]), KS_OK);
        ck_assert_ptr_nonnull(R[d].sink = ks_host_sink_create(0, ks_filter_all()));
        ck_assert_msg(ks_run_execute(&R[d]) == KS_OK, "%s", ks_error_message());
    }
    expect_same_events(op);
    const int64_t blocks = R[1].schedule_blocks, *s = R[1].schedule_data;
    ck_assert_int_eq(blocks, 8 * 32 * 32 / 64);
    int sms = 0, seen[1024] = {0};
    for (int64_t b = 0; b < blocks; ++b) {
        ck_assert_int_eq(s[4 * b], b);
        ck_assert(s[4 * b + 1] >= 0 && s[4 * b + 1] < 1024);
        ck_assert(s[4 * b + 2] > 0 && s[4 * b + 3] >= s[4 * b + 2]);
        sms += !seen[s[4 * b + 1]]++;
    }
    ck_assert(strstr(R[1].params_json, "globaltimer_ns") && strstr(R[0].params_json, "\"virtual\""));
    printf("  schedule: %lld blocks on %d SMs\n", (long long)blocks, sms);
    done();
}
END_TEST

/* 1 x 16 x 64 x 64 im2col with a 3x3 kernel: 16*64*64*19 events, past the first buffer */
START_TEST(gpu_trace_buffer_sizes_itself)
{
    static const char *const big[] = {"batch", "1", "channels", "16", "input-size", "64", NULL};
    run_both(ks_op_find("im2col"), 0, big, 0);
    ck_assert_int_eq(R[1].reruns, 1);
    ck_assert_uint_eq(ks_sink_count(R[1].sink), 1ULL * 16 * 64 * 64 * 19);
    ck_assert_uint_eq(ks_sink_dropped(R[1].sink), 0);
    expect_same_outputs(ks_op_find("im2col"));
    expect_same_events(ks_op_find("im2col"));
    done();
}
END_TEST

START_TEST(trace_limit_keeps_the_limit_and_counts_the_rest)
{
    static const char *const big[] = {"batch", "2", "channels", "16", "input-size", "32", NULL};
    run_both(ks_op_find("im2col"), 0, big, 5000);
    for (int d = 0; d < 2; ++d) {
        ck_assert_uint_eq(ks_sink_count(R[d].sink), 5000);
        ck_assert_uint_eq(ks_sink_dropped(R[d].sink), 2ULL * 16 * 32 * 32 * 19 - 5000);
    }
    expect_same_outputs(ks_op_find("im2col"));
    done();
}
END_TEST

/* the one-body rule on the GPU: every plain_only row (the CUDA kernels that run by default
 * without a traced variant, and deform's opt-in fused TF32 forward) against its twin, from
 * the rows alone (twins.h); none may be skipped here, where every row has its CUDA entry */
START_TEST(every_plain_only_kernel_equals_its_twin_on_gpu)
{
    const ks_op *op = ks_op_at(_i);
    int rows = 0;
    for (int k = 0; k < op->nkernels; ++k) rows += op->kernels[k].plain_only;
    ck_assert_int_eq(twins_check(op, KS_DEV_CUDA), rows);
}
END_TEST

int main(void)
{
    if (ks_cuda_device_count() < 1) {
        printf("test_gpu_each_op: skipped: no CUDA device (%s)\n", ks_error_message());
        return 77;
    }
    Suite *s = suite_create("gpu_each_op");
    TCase *tc = tcase_create("ops");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, every_operator_traces_the_same_on_gpu_and_simulator, 0, ks_op_count());
    tcase_add_loop_test(tc, every_plain_only_kernel_equals_its_twin_on_gpu, 0, ks_op_count());
    tcase_add_test(tc, sparse_conv_is_the_same_on_gpu_in_every_mode);
    tcase_add_test(tc, col2im_scatter_is_the_same_on_gpu);
    tcase_add_test(tc, gemm_tiled_is_bitwise_the_same_on_gpu);
    tcase_add_test(tc, gpu_schedule_records_every_block);
    tcase_add_test(tc, gpu_trace_buffer_sizes_itself);
    tcase_add_test(tc, trace_limit_keeps_the_limit_and_counts_the_rest);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_NOFORK);
}
