/* GPU suite for RoIAlign and patchify, through their operators on both devices: every
 * output bitwise equal to the simulator except grad_input (atomic adds in another order:
 * within rounding), every traced event bitwise; launches past the block cap; zero RoIs
 * and zero points. Exits 77 without a GPU; runs without fork. */
#include <stdio.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/registry.h"
#include "../kernels/roi_align/roi_align_body.h"
#include "test_util.h"

static int cmp_event(const void *a, const void *b)
{
    const ks_event *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void set(ks_run *r, const ks_op *op, const char *name, int64_t a, int64_t b)
{
    int i = ks_op_param(op, name);
    ck_assert_int_ge(i, 0);
    r->value[i][0] = a, r->value[i][1] = b, r->set[i] = 1;
}

/* both devices ran r[0] (sim) and r[1] (cuda): compare outputs and events */
static void compare(const ks_op *op, ks_run *r, int t)
{
    for (int i = 0; i < op->ntensors; ++i) {
        if (r[0].absent[i] || !op->tensors[i].output) continue;
        const int64_t n = ks_tensor_numel(&r[0].tensor[i]);
        const float *a = r[0].tensor[i].data, *b = r[1].tensor[i].data;
        if (!strcmp(op->tensors[i].name, "grad_input")) { /* atomics */
            for (int64_t k = 0; k < n; ++k)
                ck_assert_msg(fabsf(a[k] - b[k]) <= 1e-5f * (1 + fabsf(a[k])),
                              "%s case %d grad_input[%lld]: sim %g gpu %g", op->name, t, (long long)k, a[k], b[k]);
        } else {
            ck_assert_msg(!memcmp(a, b, (size_t)n * 4), "%s case %d: %s differs between GPU and simulator", op->name, t,
                          op->tensors[i].name);
        }
    }
    if (r[0].sink) {
        const unsigned long long n = ks_sink_count(r[0].sink);
        ck_assert_uint_eq(ks_sink_count(r[1].sink), n);
        ck_assert_uint_eq(ks_sink_dropped(r[1].sink), 0);
        qsort(r[0].sink->events, n, sizeof(ks_event), cmp_event);
        qsort(r[1].sink->events, n, sizeof(ks_event), cmp_event);
        for (unsigned long long i = 0; i < n; ++i)
            ck_assert_msg(!memcmp(&r[0].sink->events[i], &r[1].sink->events[i], sizeof(ks_event)),
                          "%s case %d: event %llu differs between GPU and simulator", op->name, t, i);
    }
    for (int d = 0; d < 2; ++d) {
        ks_host_sink_free(r[d].sink);
        ks_run_free(&r[d]);
    }
}

/* the filter of run_both's traced runs (every item unless a test sets another) */
static ks_filter roi_filter = {0, INT64_MAX, 0, INT64_MAX, 1};
/* --forward for run_both's GPU runs only (NULL: auto; its simulator runs the slot kernel),
 * and for both runs */
static const char *gpu_forward, *both_forward;
/* run_both's launch (threads, block cap; 0: the defaults) */
static int roi_threads;
static int64_t roi_cap;

static void run_both(int t, int64_t K, int64_t C, int64_t H, int64_t W, int64_t PH, int64_t sr, int aligned, int max,
                     int backward, int traced)
{
    const ks_op *op = ks_op_find("roi_align");
    static ks_run r[2];
    for (int d = 0; d < 2; ++d) {
        ks_run_init(&r[d], op);
        set(&r[d], op, "num-rois", K, 0);
        set(&r[d], op, "channels", C, 0);
        set(&r[d], op, "batch", 2, 0);
        set(&r[d], op, "input-size", H, W);
        set(&r[d], op, "output-size", PH, PH + 1);
        set(&r[d], op, "sampling-ratio", sr, 0);
        set(&r[d], op, "aligned", aligned, 0);
        set(&r[d], op, "pool-mode", max, 0);
        set(&r[d], op, "backward", backward, 0);
        r[d].fvalue[ks_op_param(op, "spatial-scale")][0] = t % 2 ? 0.25 : 0.5;
        r[d].pattern = KS_PAT_RANDOM;
        r[d].seed = (uint64_t)t;
        r[d].device = d ? KS_DEV_CUDA : KS_DEV_SIM;
        r[d].launch = tu_launch(roi_threads, roi_cap);
        r[d].sink = traced ? ks_host_sink_create(0, roi_filter) : NULL;
        const char *fw = d && gpu_forward ? gpu_forward : both_forward;
        if (fw) ck_assert_int_eq(ks_run_set(&r[d], "forward", fw), KS_OK);
        const int rc = ks_run_execute(&r[d]);
        ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    }
    compare(op, r, t);
}

static void patchify_both(int t, int64_t B, int64_t M, int64_t C, int64_t H, int64_t W, int64_t R, int backward,
                          int bilinear, int traced, int threads, int64_t cap)
{
    const ks_op *op = ks_op_find("patchify");
    static ks_run r[2];
    for (int d = 0; d < 2; ++d) {
        ks_run_init(&r[d], op);
        set(&r[d], op, "batch", B, 0);
        set(&r[d], op, "num-points", M, 0);
        set(&r[d], op, "channels", C, 0);
        set(&r[d], op, "input-size", H, W);
        set(&r[d], op, "radius", R, 0);
        set(&r[d], op, "backward", backward, 0);
        static const char *const rows[2][2] = {{"patches", "bilinear"}, {"patches_backward", "bilinear_backward"}};
        ck_assert_int_eq(ks_run_set(&r[d], "trace-kernel", rows[backward != 0][bilinear != 0]), KS_OK);
        r[d].pattern = KS_PAT_RANDOM;
        r[d].seed = (uint64_t)t;
        r[d].launch = tu_launch(threads, cap);
        r[d].device = d ? KS_DEV_CUDA : KS_DEV_SIM;
        r[d].sink = traced ? ks_host_sink_create(0, ks_filter_all()) : NULL;
        ck_assert_msg(ks_run_execute(&r[d]) == KS_OK, "%s", ks_error_message());
    }
    compare(op, r, t);
}

START_TEST(patchify_cuda_equals_simulator)
{
    for (int t = 0; t < 12; ++t)
        patchify_both(t, 1 + t % 3, 1 + t % 4, 1 + t % 3, 5 + t % 4, 6 + t % 3, t % 3, t % 2, (t / 2) % 2, 1,
                      t % 3 ? 0 : 32, t % 3 ? 0 : 2);
    patchify_both(98, 2, 0, 3, 6, 6, 1, 1, 0, 1, 0, 0); /* zero points */
    /* B*M*C*D*D = 4*4096*8*16 = 2.1M raw entries, capped at 64 blocks: threads loop */
    patchify_both(99, 4, 4096, 8, 64, 64, 1, 1, 0, 0, 0, 64);
}
END_TEST

START_TEST(roi_align_cuda_equals_simulator)
{
    for (int t = 0; t < 16; ++t)
        run_both(t, 1 + t % 5, 1 + t % 3, 7 + t % 5, 9 + t % 4, 1 + t % 3, t % 4 - 1, t % 2, (t / 2) % 2, t % 3 != 0,
                 1);
    run_both(99, 0, 2, 8, 8, 2, 2, 1, 0, 1, 1); /* zero RoIs: nothing launches */
    /* plain backward on planes whose rows all start at one place in a 16-byte line (W and
     * H*W multiples of 4): merged bins take the per-slot float4 path (ks_roi_scatter_bin4) */
    for (int t = 0; t < 6; ++t) run_both(t + 20, 30 + 7 * t, 6 + t, 37, 48, 2 + t % 4, t % 3, t % 2, 0, 1, 0);
}
END_TEST

/* traced with a block range, and with nothing recorded: RoIAlign's traced blocks run the
 * traced body whatever the filter (its plain slots take 4 channels, its traced ones 1, so
 * it has no KS_KERNEL_FAST); the events and outputs match the simulator's */
START_TEST(roi_align_cuda_filtered_equals_simulator)
{
    for (int t = 0; t < 8; ++t) {
        roi_filter = ks_filter_all();
        if (t % 2) roi_filter.index_hi = 0;
        else roi_filter.block_lo = 1, roi_filter.block_hi = 2;
        run_both(t + 40, 60 + 20 * t, 5, 9, 11, 2 + t % 3, t % 3 - 1, t % 2, (t / 2) % 2, t / 4, 1); /* 2+ blocks */
    }
    roi_filter = ks_filter_all();
}
END_TEST

START_TEST(roi_align_cuda_past_the_block_cap)
{
    /* the plain kernels' slots, K*ceil(C/KS_ROI_CHUNK)*PH*PW = 1200*32*7*8 = 2.15M > 4096*512:
     * threads loop */
    run_both(7, 1200, 256, 25, 34, 7, 2, 1, 0, 1, 0);
}
END_TEST

/* the plane forward (--forward plane) on both: 450 x 300 planes, taller than a tile
 * of the opt-in shared memory (193 rows on an H100: three bands; the simulator's 48 KiB:
 * 40 rows, nineteen), large RoIs across the bands, avg and max; a row too wide for the tile
 * (the slot kernel runs); 1200 RoIs on 40 channels of 2 images */
START_TEST(roi_align_plane_cuda_equals_simulator)
{
    both_forward = "plane";
    long long n = ks_roi_align_plane_launches();
    for (int t = 0; t < 4; ++t) run_both(t, 9 + 5 * t, 3, 450, 300, 7, t % 3 - 1, t % 2, (t / 2) % 2, 0, 0);
    /* the plane kernel ran on both in the two max-mode cases; the two avg ones are adaptive,
     * whose merged bins the slot kernel sums (a->merge) */
    ck_assert_int_eq(ks_roi_align_plane_launches() - n, 4);
    n = ks_roi_align_plane_launches();
    run_both(5, 6, 2, 5, 7400, 3, 2, 1, 0, 0, 0); /* 7400 floats a row: under 8 rows fit */
    ck_assert_int_eq(ks_roi_align_plane_launches() - n, 0);
    run_both(7, 1200, 40, 25, 34, 7, 2, 1, 1, 0, 0);
    ck_assert_int_eq(ks_roi_align_plane_launches() - n, 2);
    both_forward = NULL;
}
END_TEST

/* the channels-last forward (roi_align_cl_body.h; --forward cl) against the
 * simulator's slot kernel, bitwise: 4, 2 and 1 channels a thread (C = 256, 68, 6, 37, 1,
 * 130), sampling ratios -1 .. 2 (adaptive ones merged), 14 x 15 bins; 128 channels of
 * 14 x 15 bins (G = 128: three chunks of 70) in blocks of 256, of 48 threads (a short
 * warp: its lanes idle) and of 16 (G = 64, two chunks of 105; profiles by one lane
 * each), grids capped so blocks
 * loop, and adaptive bins of 45 samples (a profile past a warp: by one lane, then summed
 * sample by sample); by default (--forward auto) it runs for avg pooling, on adaptive
 * grids with RoIs enough that blocks loop (5000 RoIs x 2 groups > 4096 blocks) and on
 * fixed ones, not in max pooling: the launch count says which ran */
START_TEST(roi_align_channels_last_cuda_equals_simulator)
{
    const long long n = ks_roi_align_cl_launches();
    const int C[6] = {256, 68, 6, 37, 1, 130};
    gpu_forward = "cl";
    for (int t = 0; t < 12; ++t)
        run_both(t + 60, 3 + 11 * t, C[t % 6], 17 + 5 * t, 23 + 3 * t, t % 5 == 4 ? 14 : 2 + t % 6, t % 4 - 1, t % 2, 0,
                 0, 0);
    const int threads[3] = {0, 48, 16};
    for (int t = 0; t < 6; ++t) {
        roi_threads = threads[t % 3], roi_cap = t < 3 ? 0 : 3;
        run_both(t + 90, 25, 128, 41, 37, 14, t % 2 ? 0 : 2, 1, 0, 0, 0);
    }
    roi_threads = 0, roi_cap = 0;
    run_both(98, 6, 12, 60, 60, 1, 0, 1, 0, 0, 0); /* 1 x 2 bins of large RoIs: grids past 32 */
    gpu_forward = NULL;
    ck_assert_int_eq(ks_roi_align_cl_launches() - n, 19);
    run_both(80, 5000, 200, 30, 41, 7, 0, 1, 0, 0, 0);
    run_both(81, 40, 64, 30, 41, 7, 2, 1, 0, 0, 0); /* fixed grid */
    run_both(82, 40, 64, 30, 41, 7, 0, 1, 1, 0, 0); /* max */
    ck_assert_int_eq(ks_roi_align_cl_launches() - n, 21);
}
END_TEST

int main(void)
{
    if (ks_cuda_device_count() < 1) {
        printf("SKIP: RoIAlign/patchify GPU suite not run: no CUDA device here (or a build without CUDA)\n");
        return 77;
    }
    char name[128];
    ks_cuda_device_name(name, sizeof name);
    printf("RoIAlign/patchify GPU suite on %s\n", name);
    Suite *s = suite_create("gpu_ops");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, roi_align_cuda_equals_simulator);
    tcase_add_test(tc, roi_align_cuda_filtered_equals_simulator);
    tcase_add_test(tc, roi_align_cuda_past_the_block_cap);
    tcase_add_test(tc, roi_align_plane_cuda_equals_simulator);
    tcase_add_test(tc, roi_align_channels_last_cuda_equals_simulator);
    tcase_add_test(tc, patchify_cuda_equals_simulator);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_NOFORK);
}
