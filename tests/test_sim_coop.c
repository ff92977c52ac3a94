/* test_sim_coop.c - the cooperative launch (threads of a block as fibers): barriers order
 * shared-memory traffic, the race check finds hazards between threads of one phase, and
 * divergent barriers are reported. Small bodies written here, each against a reference
 * computed directly (a reversal, a sum). */
#include "test_util.h"

#include "../kernels/core/ks_shared.h"

typedef struct rev_args {
    const float *in;
    float *out;
    int64_t n;
    int plant; /* 0: correct, 1: no barrier, 2: only threads below 8 reach it */
} rev_args;

/* out[block*B + th] = in[block*B + (B - 1 - th)]: each thread stores its element, then
 * reads its mirror, which another thread stored. */
static void reverse_body(ks_thread *t, const void *va)
{
    const rev_args *a = va;
    KS_SHARED(float, buf, 1024);
    const int64_t B = t->block_dim.x, th = t->thread_idx.x, i = t->block_idx.x * B + th;
    ks_shared_store(t, buf, th, i < a->n ? a->in[i] : 0.0f);
    if (a->plant == 0 || (a->plant == 2 && th < 8)) ks_syncthreads(t);
    const float v = ks_shared_load(t, buf, B - 1 - th);
    if (i < a->n) a->out[i] = v;
}

/* Tree sum of each block's elements into out[block]: log2(B) phases, each read then
 * written by distinct threads, a barrier between. */
static void sum_body(ks_thread *t, const void *va)
{
    const rev_args *a = va;
    KS_SHARED(float, part, 1024);
    const int64_t B = t->block_dim.x, th = t->thread_idx.x, i = t->block_idx.x * B + th;
    ks_shared_store(t, part, th, i < a->n ? a->in[i] : 0.0f);
    ks_syncthreads(t);
    for (int64_t half = B / 2; half > 0; half /= 2) {
        float v = 0.0f;
        if (th < half) v = ks_shared_load(t, part, th) + ks_shared_load(t, part, th + half);
        ks_syncthreads(t);
        if (th < half) ks_shared_store(t, part, th, v);
        ks_syncthreads(t);
    }
    if (th == 0) a->out[t->block_idx.x] = ks_shared_load(t, part, 0);
}

static rev_args make(uint64_t *seed, int64_t n, int plant, float **in, float **out)
{
    *in = tu_random(seed, n);
    *out = calloc((size_t)n, sizeof **out);
    return (rev_args){.in = *in, .out = *out, .n = n, .plant = plant};
}

START_TEST(barrier_orders_a_block_reversal)
{
    uint64_t seed = 11;
    for (int round = 0; round < 4; ++round) {
        const int B = (int)tu_int(&seed, 2, 200), blocks = (int)tu_int(&seed, 1, 7);
        const int64_t n = (int64_t)B * blocks - tu_int(&seed, 0, B - 1);
        float *in, *out;
        rev_args a = make(&seed, n, 0, &in, &out);
        ks_sim_report rep;
        ck_assert_int_eq(ks_sim_launch_coop(blocks, B, reverse_body, &a, NULL, &rep), KS_OK);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t b = i / B, mirror = b * B + (B - 1 - i % B);
            if (mirror < n) ck_assert_msg(out[i] == in[mirror], "B=%d i=%lld", B, (long long)i);
        }
        ck_assert_uint_eq(rep.races, 0);
        ck_assert_uint_eq(rep.divergent_barriers, 0);
        ck_assert_uint_eq(rep.uninit_reads, 0);
        ck_assert_uint_eq(rep.barriers, (uint64_t)B * blocks);
        free(in), free(out);
    }
}
END_TEST

START_TEST(tree_sum_matches_a_direct_sum)
{
    uint64_t seed = 23;
    const int B = 64, blocks = 5;
    const int64_t n = B * blocks - 13;
    float *in, *out;
    rev_args a = make(&seed, n, 0, &in, &out);
    ks_sim_report rep;
    ck_assert_int_eq(ks_sim_launch_coop(blocks, B, sum_body, &a, NULL, &rep), KS_OK);
    for (int b = 0; b < blocks; ++b) {
        double want = 0;
        for (int64_t i = (int64_t)b * B; i < (int64_t)(b + 1) * B && i < n; ++i) want += in[i];
        ck_assert_msg(fabs(out[b] - want) < 1e-4, "block %d: %g vs %g", b, out[b], want);
    }
    ck_assert_uint_eq(rep.races, 0);
    ck_assert_uint_eq(rep.divergent_barriers, 0);
    free(in), free(out);
}
END_TEST

START_TEST(a_missing_barrier_is_a_race)
{
    uint64_t seed = 5;
    float *in, *out;
    rev_args a = make(&seed, 3 * 37, 1, &in, &out);
    ks_sim_report rep;
    ck_assert_int_eq(ks_sim_launch_coop(3, 37, reverse_body, &a, NULL, &rep), KS_OK);
    /* threads 0..17 read a mirror not yet written (uninitialised: NaN); 19..36 read one
     * written by another thread in the same phase; thread 18 reads its own */
    ck_assert_uint_eq(rep.uninit_reads, 3 * 18);
    ck_assert_uint_eq(rep.races, 3 * 36); /* and 19..36 overwrite what 0..17 read: write after read */
    ck_assert_ptr_nonnull(strstr(rep.first[0], "thread 19 writes buf[19] that thread 17 read"));
    ck_assert_ptr_nonnull(strstr(rep.first[1], "uninitialised"));
    ck_assert(isnan(out[0]));
    free(in), free(out);
}
END_TEST

START_TEST(a_barrier_some_threads_skip_is_reported)
{
    uint64_t seed = 7;
    float *in, *out;
    rev_args a = make(&seed, 2 * 20, 2, &in, &out);
    ks_sim_report rep;
    ck_assert_int_eq(ks_sim_launch_coop(2, 20, reverse_body, &a, NULL, &rep), KS_OK);
    ck_assert_uint_eq(rep.divergent_barriers, 2);
    ck_assert_msg(strstr(rep.first[2], "line") && strstr(rep.first[2], "threads 0-7 only") &&
                      strstr(rep.first[2], "threads 8-19 finished"),
                  "%s", rep.first[2]);
    free(in), free(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_coop");
    TCase *tc = tcase_create("fibers");
    tcase_add_test(tc, barrier_orders_a_block_reversal);
    tcase_add_test(tc, tree_sum_matches_a_direct_sum);
    tcase_add_test(tc, a_missing_barrier_is_a_race);
    tcase_add_test(tc, a_barrier_some_threads_skip_is_reported);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
