/* test_sim_coop.c - the cooperative launch (threads of a block as fibers): barriers order
 * shared-memory traffic, the race check finds hazards between threads of one phase, and
 * divergent barriers are reported. Small bodies written here, each against a reference
 * computed directly (a reversal, a sum). */
#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include "../kernels/core/ks_shared.h"

typedef struct rev_args {
    const float *in;
    float *out;
    int64_t n;
    int plant; /* 0: correct, 1: no barrier, 2: only threads below 8 reach it, 3: odd and
                * even threads wait at two different barriers */
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
    if (a->plant == 3 && th % 2) ks_syncthreads(t);
    if (a->plant == 3 && !(th % 2)) ks_syncthreads(t);
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
    /* slot s is written by thread s and read by thread 36 - s in the one phase: a race for
     * every slot but 18 (its own); a read before another thread's write is that write's
     * hazard (write after read), not an uninitialised read, as racecheck and check say */
    ck_assert_uint_eq(rep.uninit_reads, 0);
    ck_assert_uint_eq(rep.races, 3 * 36);
    ck_assert_ptr_nonnull(strstr(rep.first[0], "thread 19 writes buf[19] that thread 17 read"));
    ck_assert(isnan(out[0])); /* thread 0 still read the poison of a slot not yet stored */
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
    ck_assert_msg(strstr(rep.first[2], "line") && strstr(rep.first[2], "reached only by threads 0-7;") &&
                      strstr(rep.first[2], "threads 8-19 finished"),
                  "%s", rep.first[2]);
    free(in), free(out);
    a = make(&seed, 9, 3, &in, &out);
    ck_assert_int_eq(ks_sim_launch_coop(1, 9, reverse_body, &a, NULL, &rep), KS_OK);
    ck_assert_uint_eq(rep.divergent_barriers, 1);
    ck_assert_msg(strstr(rep.first[2], "threads 0, 2, 4, 6, 8 wait at line") &&
                      strstr(rep.first[2], "threads 1, 3, 5, 7 at line"),
                  "%s", rep.first[2]);
    free(in), free(out);
    /* 301 threads: 151 even ones at one line, 150 odd ones at another; a list too long
     * for the line ends "... and N more", and what it shows plus N is every thread */
    a = make(&seed, 301, 3, &in, &out);
    ck_assert_int_eq(ks_sim_launch_coop(1, 301, reverse_body, &a, NULL, &rep), KS_OK);
    const char *more = strstr(rep.first[2], " ... and ");
    ck_assert_msg(more, "%s", rep.first[2]);
    int shown = 0;
    for (const char *c = strstr(rep.first[2], "threads 0, 2"); c < more; ++c) shown += *c == ',';
    ck_assert_int_eq(shown + 1 + atoi(more + 9), 151);
    ck_assert_msg(strstr(more, " more wait at line"), "%s", rep.first[2]);
    free(in), free(out);
}
END_TEST

/* Reads buf[B + th] (nobody writes it) twice and buf[th] after storing it: one
 * uninitialised read per slot and phase, no race. */
static void unfed_body(ks_thread *t, const void *va)
{
    (void)va;
    KS_SHARED(float, buf, 2048);
    const int64_t B = t->block_dim.x, th = t->thread_idx.x;
    ks_shared_store(t, buf, th, 1.0f);
    (void)ks_shared_load(t, buf, th);
    (void)ks_shared_load(t, buf, B + th);
    (void)ks_shared_load(t, buf, B + th);
    ks_syncthreads(t);
    (void)ks_shared_load(t, buf, B + th);
}

START_TEST(an_uninitialised_read_counts_once_per_slot_and_phase)
{
    ks_sim_report rep;
    ck_assert_int_eq(ks_sim_launch_coop(2, 29, unfed_body, NULL, NULL, &rep), KS_OK);
    ck_assert_uint_eq(rep.uninit_reads, 2 * 29 * 2); /* 29 slots a block, in both phases */
    ck_assert_uint_eq(rep.races, 0);
    ck_assert_msg(strstr(rep.first[1], "block 0 thread 0: read of uninitialised shared memory buf[29] (phase 0)"), "%s",
                  rep.first[1]);
}
END_TEST

/* A histogram in shared memory: every thread adds 1 to bin (thread % 5) with atomic adds,
 * then (after a barrier, unless planted) thread b < 5 reads bin b. Atomic adds of many
 * threads to one bin are no race; a plain read in the same phase as other threads' adds
 * is. */
static void histogram_body(ks_thread *t, const void *va)
{
    const int plant = *(const int *)va;
    KS_SHARED(float, bins, 8);
    const uint32_t th = t->thread_idx.x;
    if (th < 5) ks_shared_store(t, bins, th, 0.0f);
    ks_syncthreads(t);
    ks_shared_atomic_add(t, bins, th % 5, 1.0f);
    if (!plant) ks_syncthreads(t);
    if (th < 5) {
        const float v = ks_shared_load(t, bins, th);
        if (!plant) ck_assert_float_eq(v, (float)((t->block_dim.x - th + 4) / 5));
    }
}

START_TEST(atomic_adds_race_only_with_plain_accesses)
{
    ks_sim_report rep;
    int plant = 0;
    ck_assert_int_eq(ks_sim_launch_coop(2, 23, histogram_body, &plant, NULL, &rep), KS_OK);
    ck_assert_uint_eq(rep.races, 0);
    ck_assert_uint_eq(rep.uninit_reads, 0);
    plant = 1; /* no barrier between the adds and the reads */
    ck_assert_int_eq(ks_sim_launch_coop(2, 23, histogram_body, &plant, NULL, &rep), KS_OK);
    ck_assert_uint_eq(rep.races, 2 * 5); /* each bin once per block */
    ck_assert_msg(strstr(rep.first[0], "atomically") != NULL, "%s", rep.first[0]);
}
END_TEST

/* tile[th + 1] of a tile of B: the last thread reads past it */
static void off_by_one_body(ks_thread *t, const void *va)
{
    float *out = (float *)va;
    KS_SHARED(float, tile, 13);
    const int64_t th = t->thread_idx.x;
    ks_shared_store(t, tile, th, (float)th + 1.0f);
    ks_syncthreads(t);
    out[t->block_idx.x * 13 + th] = ks_shared_load(t, tile, th + 1);
}

START_TEST(an_index_outside_the_array_is_reported_not_made)
{
    float out[3 * 13] = {0};
    ks_sim_report rep;
    ck_assert_int_eq(ks_sim_launch_coop(3, 13, off_by_one_body, out, NULL, &rep), KS_OK);
    ck_assert_uint_eq(rep.outside, 3);
    ck_assert_msg(strstr(rep.first[3], "block 0 phase 1: thread 12 reads tile[13], outside the array (13 elements"),
                  "%s", rep.first[3]);
    for (int i = 0; i < 3 * 13; ++i) ck_assert_float_eq(out[i], i % 13 == 12 ? 0.0f : (float)(i % 13 + 2));
}
END_TEST

/* Six arrays, traced: thread th stores arrays[k][th], then reads arrays[k][(th+1) % B]. */
static void six_arrays_body(ks_thread *t, const void *va)
{
    (void)va;
    KS_SHARED(float, a0, 8);
    KS_SHARED(float, a1, 8);
    KS_SHARED(float, a2, 8);
    KS_SHARED(float, a3, 8);
    KS_SHARED(float, a4, 8);
    KS_SHARED(float, a5, 8);
    float *const arr[6] = {a0, a1, a2, a3, a4, a5};
    const int64_t B = t->block_dim.x, th = t->thread_idx.x;
    t->keep = 1; /* record every access (a work probe would) */
    ks_shared_trace(t, 0, 0, 1, 8);
    for (int k = 0; k < 6; ++k) ks_shared_store(t, arr[k], th, (float)(10 * k + th));
    ks_syncthreads(t);
    for (int k = 0; k < 6; ++k) (void)ks_shared_load(t, arr[k], (th + 1) % B);
    if (th == 0) (void)ks_shared_load(t, a5, 9); /* outside a5: recorded at offset -1 */
}

START_TEST(more_than_four_arrays_keep_their_own_planes_in_the_trace)
{
    ks_sink *sink = ks_host_sink_create(0, ks_filter_all());
    ks_sim_report rep;
    ck_assert_ptr_nonnull(sink);
    ck_assert_int_eq(ks_sim_launch_coop(1, 7, six_arrays_body, NULL, sink, &rep), KS_OK);
    ck_assert_uint_eq(rep.races, 0);
    ck_assert_uint_eq(rep.outside, 1);
    int outside = 0;
    for (unsigned long long i = 0; i < ks_sink_count(sink); ++i) {
        const ks_event *e = &sink->events[i];
        if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) continue;
        if (e->u.access.offset < 0) {
            ck_assert_int_eq(e->u.access.y, -1);
            ck_assert_int_eq(e->u.access.x, 9);
            ck_assert_int_eq(e->u.access.plane, 5);
            outside++;
            continue;
        }
        /* the value names its array: 10 * k + the storing thread */
        const int k = (int)(e->u.access.value / 10);
        ck_assert_int_eq(e->u.access.plane, k);
        ck_assert_int_eq(e->u.access.offset, k * 8 + e->u.access.x);
    }
    ck_assert_int_eq(outside, 1);
    ks_host_sink_free(sink);
}
END_TEST

/* Thread 3 of block 1 takes a frame of twice the stack. */
static __attribute__((noinline)) void deep_frame(int64_t i)
{
    volatile char buf[512 * 1024];
    buf[i] = 1;
    buf[sizeof buf - 1 - i] = 2;
}

static void deep_body(ks_thread *t, const void *va)
{
    (void)va;
    if (t->block_idx.x == 1 && t->thread_idx.x == 3) deep_frame(7);
}

/* Runs deep_body in a child with $KSCOPE_FIBER_STACK = kib (NULL: unset): its exit status,
 * its stderr in err. */
static int run_deep(const char *kib, char *err, size_t n)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fileno(f), 2);
        if (kib) setenv("KSCOPE_FIBER_STACK", kib, 1);
        else unsetenv("KSCOPE_FIBER_STACK");
        const int rc = ks_sim_launch_coop(2, 5, deep_body, NULL, NULL, NULL);
        if (rc) fprintf(stderr, "%s\n", ks_error_message());
        _exit(rc ? 9 : 0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    rewind(f);
    const size_t got = fread(err, 1, n - 1, f);
    err[got] = 0;
    fclose(f);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(a_fiber_stack_overflow_names_its_thread)
{
    char err[512];
    ck_assert_int_eq(run_deep(NULL, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "kscope: simulator: thread 3 of block 1 overflowed its fiber stack (256 KiB); set "
                              "KSCOPE_FIBER_STACK="),
                  "%s", err);
    ck_assert_int_eq(run_deep("1024", err, sizeof err), 0); /* a larger stack holds the frame */
    ck_assert_int_eq(run_deep("12x", err, sizeof err), 9);
    ck_assert_msg(strstr(err, "KSCOPE_FIBER_STACK must be a stack size in KiB"), "%s", err);
}
END_TEST

/* Progress (ks_sim_set_progress): with every_ms 0 the callback sees each block done, in
 * order, then the total, for both launches; a body counts its threads so the calls are
 * checked against the work done at the time; the next launch is numbered 2; with every_ms
 * large, no calls (a short launch says nothing); off again, none. */
typedef struct prog_log {
    int64_t done[16], total[16], ran_at[16];
    int launch[16], n;
    int64_t ran; /* bodies run so far */
} prog_log;
static prog_log plog;
static void prog_fn(void *ctx, int launch, int64_t done, int64_t total)
{
    prog_log *l = ctx;
    if (l->n < 16)
        l->launch[l->n] = launch, l->done[l->n] = done, l->total[l->n] = total, l->ran_at[l->n] = l->ran, ++l->n;
}
static void count_body(ks_thread *t, const void *a)
{
    (void)t, (void)a;
    ++plog.ran;
}

START_TEST(progress_reports_blocks_in_order)
{
    for (int coop = 0; coop < 2; ++coop) {
        memset(&plog, 0, sizeof plog);
        ks_sim_set_progress(prog_fn, &plog, 0);
        const int64_t blocks = 5 + coop;
        if (coop) ck_assert_int_eq(ks_sim_launch_coop(blocks, 3, count_body, NULL, NULL, NULL), KS_OK);
        else ks_sim_launch(blocks, 3, count_body, NULL, NULL);
        ck_assert_int_eq(plog.n, blocks);
        for (int i = 0; i < plog.n; ++i) {
            ck_assert_int_eq(plog.launch[i], 1);
            ck_assert_int_eq(plog.done[i], i + 1);
            ck_assert_int_eq(plog.total[i], blocks);
            ck_assert_int_eq(plog.ran_at[i], 3 * (i + 1)); /* called after the block ran */
        }
        /* a second launch: numbered 2 */
        plog.n = 0;
        ks_sim_launch(2, 3, count_body, NULL, NULL);
        ck_assert_int_eq(plog.n, 2);
        ck_assert(plog.launch[0] == 2 && plog.launch[1] == 2 && plog.done[1] == 2 && plog.total[1] == 2);
        memset(&plog, 0, sizeof plog);
        ks_sim_set_progress(prog_fn, &plog, 60000);
        ks_sim_launch(blocks, 3, count_body, NULL, NULL);
        ck_assert_int_eq(plog.n, 0);
        ks_sim_set_progress(NULL, NULL, 0);
        ks_sim_launch(blocks, 3, count_body, NULL, NULL);
        ck_assert_int_eq(plog.n, 0);
        ck_assert_int_eq(plog.ran, 6 * blocks);
    }
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
    tcase_add_test(tc, an_uninitialised_read_counts_once_per_slot_and_phase);
    tcase_add_test(tc, atomic_adds_race_only_with_plain_accesses);
    tcase_add_test(tc, an_index_outside_the_array_is_reported_not_made);
    tcase_add_test(tc, more_than_four_arrays_keep_their_own_planes_in_the_trace);
    tcase_add_test(tc, a_fiber_stack_overflow_names_its_thread);
    tcase_add_test(tc, progress_reports_blocks_in_order);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
