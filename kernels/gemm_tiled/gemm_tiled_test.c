/* gemm_tiled_test.c - gemm_tiled against its double reference on odd sizes (not multiples
 * of the tile) with random inputs, the built-in integer inputs exactly, traced == plain, a
 * tile loop over several blocks; the race and barrier checks: the correct kernel is clean
 * in the simulator and in `check`, each planted bug is caught by both; a barrier kernel's
 * trace has its phases; bad parameters. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../trace/check.h"
#include "../../trace/run_trace.h"
#include "../core/ks_error.h"
#include "../registry.h"
#include "gemm_tiled_body.h"
#include "test_util.h"

static ks_run R;
static ks_trace TR;

/* c of a (m, k) @ b (k, n) against the reference: within float accumulation error */
static void expect_reference(const ks_gemm_tiled_args *a)
{
    double *want = malloc((size_t)(a->m * a->n) * sizeof *want);
    ks_gemm_tiled_ref(a, a->a, a->b, want);
    for (int64_t i = 0; i < a->m * a->n; ++i)
        ck_assert_msg(fabs(a->c[i] - want[i]) <= 1e-5 * (double)a->k * (1.0 + fabs(want[i])),
                      "m=%lld k=%lld n=%lld T=%lld: c[%lld] = %.9g, reference %.9g", (long long)a->m, (long long)a->k,
                      (long long)a->n, (long long)a->tile, (long long)i, a->c[i], want[i]);
    free(want);
}

START_TEST(random_odd_sizes_match_the_reference)
{
    uint64_t s = 41;
    for (int round = 0; round < 8; ++round) {
        ks_gemm_tiled_args a = {.m = tu_int(&s, 1, 45),
                                .k = tu_int(&s, 1, 70),
                                .n = tu_int(&s, 1, 45),
                                .tile = round % 2 ? 32 : 16};
        float *A = tu_random(&s, a.m * a.k), *B = tu_random(&s, a.k * a.n);
        a.a = A, a.b = B, a.c = calloc((size_t)(a.m * a.n), sizeof *a.c);
        ks_sim_report rep;
        const ks_launch l = tu_launch(0, round % 3 ? -1 : 1); /* one block looping over every tile too */
        ck_assert_int_eq(ks_gemm_tiled_sim(&a, &l, NULL, &rep), KS_OK);
        expect_reference(&a);
        ck_assert_uint_eq(rep.races + rep.uninit_reads + rep.divergent_barriers, 0);
        ck_assert_uint_gt(rep.barriers, 0);
        /* the naive form sums the same products in the same order: the same bits */
        ks_gemm_tiled_args naive = a;
        naive.naive = 1;
        naive.c = calloc((size_t)(a.m * a.n), sizeof *a.c);
        ck_assert_int_eq(ks_gemm_tiled_sim(&naive, &l, NULL, &rep), KS_OK);
        ck_assert_int_eq(memcmp(naive.c, a.c, (size_t)(a.m * a.n) * sizeof *a.c), 0);
        ck_assert_uint_eq(rep.barriers + rep.shared_accesses, 0);
        free(A), free(B), free(a.c), free(naive.c);
    }
}
END_TEST

/* A run through the registry, traced or not, with flag texts; then check on its trace. */
/* ... recording only the work items [0, upto) (0: all) */
static void run_op_upto(const char *plant, const char *tile, int traced, int64_t upto, ks_check_report *rep)
{
    ks_filter f = ks_filter_all();
    if (upto) f.index_hi = upto;
    ks_run_init(&R, ks_op_find("gemm_tiled"));
    ck_assert_int_eq(ks_run_set(&R, "plant", plant), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "tile", tile), KS_OK);
    if (traced) ck_assert_ptr_nonnull(R.sink = ks_host_sink_create(0, f));
    ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s", ks_error_message());
    if (!traced) return;
    ks_trace_from_run(R.op, &R, &TR);
    ck_assert_int_eq(ks_trace_check(&TR, rep), KS_OK);
}

static void run_op(const char *plant, const char *tile, int traced, ks_check_report *rep)
{
    run_op_upto(plant, tile, traced, 0, rep);
}

static void run_done(void)
{
    ks_host_sink_free(R.sink);
    R.sink = NULL;
    ks_run_free(&R);
}

START_TEST(built_in_integers_are_exact_and_traced_equals_plain)
{
    ks_check_report rep;
    run_op("none", "16", 0, &rep);
    const int64_t n = 19 * 17;
    float *plain = malloc((size_t)n * sizeof *plain);
    memcpy(plain, R.tensor[KS_GT_T_C].data, (size_t)n * sizeof *plain);
    ks_gemm_tiled_args a = {.m = 19, .k = 23, .n = 17, .tile = 16};
    double *want = malloc((size_t)n * sizeof *want);
    ks_gemm_tiled_ref(&a, R.tensor[KS_GT_T_A].data, R.tensor[KS_GT_T_B].data, want);
    int nonzero = 0;
    for (int64_t i = 0; i < n; ++i) {
        ck_assert_msg(plain[i] == want[i] && plain[i] == rintf(plain[i]), "c[%lld] = %g, reference %g", (long long)i,
                      plain[i], want[i]);
        nonzero += plain[i] != 0.0f;
    }
    ck_assert_int_gt(nonzero, n / 2);
    run_done();
    run_op("none", "16", 1, &rep);
    ck_assert_int_eq(memcmp(plain, R.tensor[KS_GT_T_C].data, (size_t)n * sizeof *plain), 0);
    ck_assert_msg(rep.violations == 0, "%s", rep.first[0]);
    run_done();
    free(plain), free(want);
}
END_TEST

START_TEST(the_correct_kernel_is_clean_in_check)
{
    for (int tile = 0; tile < 2; ++tile) {
        ks_check_report rep;
        run_op("none", tile ? "32" : "16", 1, &rep);
        ck_assert_msg(rep.violations == 0, "%s", rep.first[0]);
        ck_assert(rep.complete);
        ck_assert_uint_gt(rep.shared_accesses, 0);
        ck_assert_uint_eq(rep.barriers, (uint64_t)R.blocks * R.threads * 2 * (tile ? 1 : 2)); /* k=23: 1 or 2 steps */
        ck_assert_uint_eq(rep.shared_races + rep.shared_uninit + rep.barrier_divergent, 0);
        run_done();
    }
}
END_TEST

/* Each plant: the simulator's own report and `check` on its trace both catch it. */
START_TEST(planted_barrier_bugs_are_caught)
{
    const char *plant[] = {"no-first-barrier", "no-second-barrier", "divergent-barrier"};
    for (int p = 0; p < 3; ++p) {
        ks_gemm_tiled_args a = {.m = 19, .k = 23, .n = 17, .tile = 16, .plant = p + 1};
        uint64_t s = 3;
        float *A = tu_random(&s, a.m * a.k), *B = tu_random(&s, a.k * a.n);
        a.a = A, a.b = B, a.c = calloc((size_t)(a.m * a.n), sizeof *a.c);
        ks_sim_report sim;
        ck_assert_int_eq(ks_gemm_tiled_sim(&a, &(ks_launch){0}, NULL, &sim), KS_OK);
        free(A), free(B), free(a.c);
        ks_check_report rep;
        run_op(plant[p], "16", 1, &rep);
        ck_assert_uint_gt(rep.violations, 0);
        /* one classification (ks_hazard.h): the run and check count alike */
        ck_assert_msg(sim.races == rep.shared_races && sim.uninit_reads == rep.shared_uninit &&
                          sim.divergent_barriers == rep.barrier_divergent,
                      "%s: simulator %llu races, %llu uninitialised, %llu divergent; check %llu, %llu, %llu", plant[p],
                      (unsigned long long)sim.races, (unsigned long long)sim.uninit_reads,
                      (unsigned long long)sim.divergent_barriers, (unsigned long long)rep.shared_races,
                      (unsigned long long)rep.shared_uninit, (unsigned long long)rep.barrier_divergent);
        /* the root cause leads the kept lines; the poison read is no "value is nan" line */
        ck_assert_msg(strstr(rep.first[0], p < 2 ? "shared-memory race" : "divergent barrier"), "%s: %s", plant[p],
                      rep.first[0]);
        for (int k = 0; k < KS_CHECK_KEEP && k < (int)rep.violations; ++k)
            ck_assert_msg(!strstr(rep.first[k], "shared") || !strstr(rep.first[k], "value is"), "%s", rep.first[k]);
        if (p < 2) {
            ck_assert_msg(sim.races > 0 && rep.shared_races > 0, "%s: %llu, %llu", plant[p],
                          (unsigned long long)sim.races, (unsigned long long)rep.shared_races);
            ck_assert_ptr_nonnull(strstr(sim.first[0], "no barrier between"));
            ck_assert_uint_eq(rep.barrier_divergent, 0);
            /* without barrier 2: one race per slot of both tiles (2 x 256) in each of the 4 blocks (lesson 11) */
            if (p == 1) ck_assert_uint_eq(rep.violations, 2048);
        } else {
            ck_assert(sim.divergent_barriers > 0 && rep.barrier_divergent > 0);
            ck_assert(sim.uninit_reads > 0 && rep.shared_uninit > 0); /* the skipped threads never load their slots */
            ck_assert_ptr_nonnull(strstr(sim.first[2], "divergent barrier: the barrier at line"));
        }
        run_done();
    }
}
END_TEST

/* The first finding is the earliest: block 0, phase 0, the first event that makes a race. */
START_TEST(the_first_finding_is_the_earliest)
{
    ks_check_report rep;
    run_op("no-first-barrier", "16", 1, &rep);
    /* thread 0 reads a_tile[0..15] and b_tile[0, 16, ..] first; thread 1 then writes a_tile[1]:
     * the first write after another thread's read of the launch (block 0, phase 0) */
    ck_assert_msg(
        strstr(
            rep.first[0],
            "(block 0 thread 1 index 1): shared-memory race: write of shared (plane 0, y 0, x 1) in phase 0, which thread 0 reads"),
        "%s", rep.first[0]);
    for (int k = 1; k < KS_CHECK_KEEP; ++k) {
        const unsigned long long prev = strtoull(rep.first[k - 1] + 6, NULL, 10),
                                 now = strtoull(rep.first[k] + 6, NULL, 10);
        ck_assert_msg(prev < now, "%s, then %s", rep.first[k - 1], rep.first[k]); /* event order within the phase */
    }
    run_done();
}
END_TEST

/* A filtered trace: only the blocks whose every thread was recorded are judged for races
 * and uninitialised reads (a partial block misses writes its reads depend on). */
START_TEST(a_filtered_trace_judges_only_whole_blocks)
{
    ks_check_report rep;
    run_op_upto("none", "16", 1, 100, &rep); /* block 0, threads 0..99 */
    ck_assert(!rep.complete);
    ck_assert_msg(rep.violations == 0, "%s", rep.first[0]);
    ck_assert_uint_eq(rep.shared_blocks, 1);
    ck_assert_uint_eq(rep.shared_blocks_judged, 0);
    run_done();
    run_op_upto("no-second-barrier", "16", 1, 2 * 256 + 7, &rep); /* blocks 0 and 1 whole, 7 threads of 2 */
    ck_assert_uint_eq(rep.shared_blocks, 3);
    ck_assert_uint_eq(rep.shared_blocks_judged, 2);
    ck_assert_uint_eq(rep.shared_races, 2 * 512); /* both tiles' 256 slots, in 2 blocks */
    ck_assert_uint_eq(rep.shared_uninit, 0);
    run_done();
}
END_TEST

/* The phases in the trace: with k = 23 and T = 16 a tile takes two steps, so a block on
 * its first tile writes the shared tiles in phases 0 and 2 and reads them in 1 and 3; its
 * barriers alternate between two lines. */
START_TEST(a_barrier_trace_has_phases)
{
    ks_check_report rep;
    run_op("none", "16", 1, &rep);
    int line[2] = {0, 0};
    uint64_t seen[4][2] = {{0}};
    for (uint64_t i = 0; i < TR.nevents; ++i) {
        const ks_event *e = &TR.events[i];
        if (e->kind == KS_EV_BARRIER) {
            ck_assert_uint_lt(e->u.barrier.phase, 4 * (uint64_t)(e->iter + 1));
            int *l = &line[e->u.barrier.phase % 2];
            if (!*l) *l = e->u.barrier.line;
            ck_assert_int_eq(*l, e->u.barrier.line);
            continue;
        }
        if (!(e->flags & KS_FLAG_SHARED)) continue;
        ck_assert_int_eq(e->tensor, KS_GT_T_SHARED);
        const int32_t ph = e->u.access.reserved[0];
        ck_assert_int_ge(ph, 4 * (int32_t)e->iter);
        ck_assert_int_lt(ph, 4 * (int32_t)e->iter + 4);
        ck_assert_int_eq(ph % 2, e->kind == KS_EV_READ); /* writes in even phases, reads in odd */
        seen[ph % 4][e->kind == KS_EV_READ]++;
    }
    ck_assert(line[0] > 0 && line[1] > line[0]);
    for (int p = 0; p < 4; ++p) ck_assert_uint_gt(seen[p][p % 2], 0);
    run_done();
}
END_TEST

/* Global reads per item: 2K in the naive form, 2 per step of T in the tiled one. */
START_TEST(tiles_cut_the_global_reads)
{
    ks_check_report rep;
    for (int naive = 0; naive < 2; ++naive) {
        ks_run_init(&R, ks_op_find("gemm_tiled"));
        ck_assert_int_eq(ks_run_set(&R, "algorithm", naive ? "naive" : "tiled"), KS_OK);
        ck_assert_ptr_nonnull(R.sink = ks_host_sink_create(0, ks_filter_all()));
        ck_assert_int_eq(ks_run_execute(&R), KS_OK);
        ks_trace_from_run(R.op, &R, &TR);
        ck_assert_int_eq(ks_trace_check(&TR, &rep), KS_OK);
        ck_assert_msg(rep.violations == 0, "%s", rep.first[0]);
        uint64_t reads = 0, item0 = 0, a00 = 0;
        for (uint64_t i = 0; i < TR.nevents; ++i) {
            const ks_event *e = &TR.events[i];
            if (e->kind != KS_EV_READ || e->tensor == KS_GT_T_SHARED) continue;
            reads++;
            item0 += e->index == 0;
            a00 += e->tensor == KS_GT_T_A && e->u.access.offset == 0;
        }
        ck_assert_uint_eq(a00, naive ? 17 : 2); /* every output of row 0; every tile column (lesson 11) */
        /* m=19 k=23 n=17: naive 2*23 per element; tiled: a read by 2 tile columns, b by 2 tile rows */
        ck_assert_uint_eq(reads, naive ? 19 * 17 * 46 : 19 * 23 * 2 + 23 * 17 * 2);
        ck_assert_uint_eq(item0, naive ? 46 : 4);
        run_done();
    }
}
END_TEST

START_TEST(bad_parameters_are_one_clear_error)
{
    ks_run_init(&R, ks_op_find("gemm_tiled"));
    R.launch = tu_launch(64, 0);
    ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "--tile 16 needs 256 threads"));
    ks_run_free(&R);
    ks_run_init(&R, ks_op_find("gemm_tiled"));
    ck_assert_int_eq(ks_run_set(&R, "tile", "8"), KS_EINVAL);
    ck_assert_int_eq(ks_run_set(&R, "k", "0"), KS_EINVAL);
    /* a given a of (37, 53) and b of (52, 29): their K disagree, and the error says so */
    ks_tensor_shape(&R.tensor[KS_GT_T_A], 2, 37, 53, 0, 0);
    ks_tensor_shape(&R.tensor[KS_GT_T_B], 2, 52, 29, 0, 0);
    ck_assert_int_eq(ks_tensor_alloc(&R.tensor[KS_GT_T_A]), KS_OK);
    ck_assert_int_eq(ks_tensor_alloc(&R.tensor[KS_GT_T_B]), KS_OK);
    ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "a has K = 53 columns but b has 52 rows"), "%s", ks_error_message());
    ks_run_free(&R);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gemm_tiled");
    TCase *tc = tcase_create("gemm_tiled");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_odd_sizes_match_the_reference);
    tcase_add_test(tc, built_in_integers_are_exact_and_traced_equals_plain);
    tcase_add_test(tc, the_correct_kernel_is_clean_in_check);
    tcase_add_test(tc, planted_barrier_bugs_are_caught);
    tcase_add_test(tc, the_first_finding_is_the_earliest);
    tcase_add_test(tc, a_filtered_trace_judges_only_whole_blocks);
    tcase_add_test(tc, a_barrier_trace_has_phases);
    tcase_add_test(tc, tiles_cut_the_global_reads);
    tcase_add_test(tc, bad_parameters_are_one_clear_error);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
