/* kscope record end to end: an ordinary CUDA program (tests/record/record_target.cu) runs
 * under the recorder, and every thread's recorded accesses are compared, in order, with
 * what the kernels' source says each thread reads and writes, computed here from the
 * inputs this test wrote. Bad input gets exit 2 and one line everywhere; the GPU part
 * skips with a message without a GPU or without the recorder (no Compute Sanitizer API
 * at configure time). */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../record/record.h"
#include "../trace/kst.h"
#include "../trace/npy.h"
#include "test_util.h"

#define H 37
#define W 53
#define NB 13

static char dir[64];
static float g_x[H * W];
static int g_idx[H * W];

static int kscope(const char *args)
{
    char cmd[4096];
    /* a recorder that hangs fails here instead of holding the suite (exit 124) */
    snprintf(cmd, sizeof cmd, "cd %s && timeout -k 5 120 %s %s >out 2>err", dir, KS_CLI, args);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *name) { return tu_slurp(dir, name); }

static int lines(const char *s)
{
    int n = 0;
    for (; s && *s; ++s) n += *s == '\n';
    return n;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ks_rec_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    uint64_t seed = 20261128;
    for (int i = 0; i < H * W; ++i) {
        g_x[i] = (float)((tu_next(&seed) >> 40) * (1.0 / 8388608.0) - 1.0);
        g_idx[i] = (int)tu_int(&seed, 0, H * W - 1);
    }
    char p[128];
    snprintf(p, sizeof p, "%s/x.bin", dir);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(g_x, sizeof g_x, 1, f), 1);
    fclose(f);
    snprintf(p, sizeof p, "%s/idx.bin", dir);
    f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(g_idx, sizeof g_idx, 1, f), 1);
    fclose(f);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* ---- bad input: no GPU needed ---- */
START_TEST(bad_input_one_line_exit_2)
{
    static const char *const cases[] = {
        "record",
        "record --",
        "record --filter block=5:2 -- true",
        "record --filter warp=0:1 -- true",
        "record --filter block=0:x -- true",
        "record --launch -1 -- true",
        "record --launch first -- true",
        "record --max-events 12 -- true",
        "record --kernel '(' -- true",
        "record --bogus -- true",
        "record --out",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        ck_assert_msg(kscope(cases[i]) == 2, "%s: exit code", cases[i]);
        char *err = slurp("err");
        ck_assert_msg(lines(err) == 1 && strstr(err, "kscope: record: "), "%s: stderr '%s'", cases[i], err);
    }
    struct stat st;
    char p[128];
    snprintf(p, sizeof p, "%s/kscope-record", dir);
    ck_assert_msg(stat(p, &st) != 0, "a refused command made its output folder");
}
END_TEST

/* kscope record's side of the status protocol, without a GPU: a stand-in library (any
 * file: the program below never starts CUDA) and a program that writes the lines the
 * recorder would (tab-separated trace lines, a path with spaces), then exits as told */
static int fake_record(const char *flags, const char *lines, int code)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p fake && : > fake/libkscope_record.so && : > fake/kscope_record_patches.fatbin && "
             "KS_RECORD_LIB=$PWD/fake/libkscope_record.so timeout 60 %s record %s -- sh -c "
             "'printf \"%s\" >> \"$KS_RECORD_STATUS\"; exit %d' >out 2>err",
             dir, KS_CLI, flags, lines, code);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(record_reports_what_the_recorder_said)
{
    ck_assert_int_eq(fake_record("--out 'my traces'",
                                 "start 1\\nseen k\\ntrace\\t5\\t0\\t/x/my traces/0000-k.kst\\tk(int)\\n"
                                 "trace\\t9\\t2\\t/x/my traces/0001-k.kst\\tk(int)\\nnote launch 2 ran while\\n",
                                 0),
                     0);
    char *err = slurp("err");
    ck_assert_msg(strstr(err, "/x/my traces/0000-k.kst: 5 accesses\n") &&
                      strstr(err, "/x/my traces/0001-k.kst: 9 accesses, 2 more dropped") &&
                      strstr(err, "2 traces in my traces") && strstr(err, "kscope record: launch 2 ran while"),
                  "%s", err);
    ck_assert_int_eq(fake_record("--out rec", "start 1\\nerror the disk is full\\n", 0), 2);
    ck_assert_msg(strstr(slurp("err"), "kscope: record: the disk is full"), "%s", slurp("err"));
    ck_assert_int_eq(fake_record("--out rec --kernel nomatch", "start 1\\nseen alpha\\nseen beta\\n", 0), 2);
    ck_assert_msg(strstr(slurp("err"), "no launch matched --kernel nomatch (launched: alpha, beta)"), "%s",
                  slurp("err"));
    struct stat st;
    char p[128];
    snprintf(p, sizeof p, "%s/rec", dir);
    ck_assert_msg(stat(p, &st) != 0, "a recording with no trace left its folder");
    ck_assert_int_eq(fake_record("--out rec", "start 1\\n", 7), 7); /* the program's status */
    ck_assert_int_eq(fake_record("--out rec", "", 0), 2);           /* never started */
    ck_assert_msg(strstr(slurp("err"), "the recorder never started"), "%s", slurp("err"));
}
END_TEST

/* the Python naming module outside kscope record: it does nothing and says so */
START_TEST(python_module_is_inert_outside_record)
{
    if (system("command -v python3 >/dev/null 2>&1") != 0) {
        printf("SKIP python_module_is_inert_outside_record: no python3\n");
        return;
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "cd %s && env -u KS_RECORD_LIB -u CUDA_INJECTION64_PATH PYTHONPATH=%s/record python3 -c \""
             "import kscope_record as k\n"
             "assert not k.active()\n"
             "with k.names(x=(0x1000, 64, 'float32', (4, 4)), y=(0x2000, 16)):\n"
             "    pass\n"
             "k.name('z', 0x3000, 4)\n"
             "print('inert')\" >out 2>err",
             dir, KS_SOURCE_DIR);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_str_eq(slurp("out"), "inert\n");
}
END_TEST

#ifdef KS_RECORD_TARGET
static void record(const char *flags, const char *tail, int want)
{
    char args[2048];
    snprintf(args, sizeof args, "record %s -- %s x.bin idx.bin y.bin %s", flags, KS_RECORD_TARGET, tail);
    const int rc = kscope(args);
    char *err = slurp("err");
    ck_assert_msg(rc == want, "kscope %s: exit %d, want %d: %s", args, rc, want, err);
}

static void open_trace(const char *name, ks_trace *tr)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    ck_assert_msg(ks_trace_open(p, tr) == KS_OK, "%s: %s", p, ks_error_message());
}

/* what one recorded access must be */
typedef struct want_ev {
    int kind, flags;
    const char *tensor; /* NULL: an allocation ("allocN") */
    int64_t offset;
    int is_int;
    double value; /* NAN: not compared (an atomic's memory before it) */
} want_ev;

static void expect_thread(const ks_trace *tr, uint64_t *pos, int64_t index, const want_ev *w, int n)
{
    const ks_event *e = &tr->events[*pos];
    ck_assert_msg(*pos < tr->nevents && e->kind == KS_EV_WORK && e->index == index, "thread %lld: no work event",
                  (long long)index);
    ++*pos;
    for (int k = 0; k < n; ++k, ++*pos) {
        ck_assert_msg(*pos < tr->nevents, "thread %lld: %d of %d accesses", (long long)index, k, n);
        e = &tr->events[*pos];
        ck_assert_msg(e->index == index && e->kind == w[k].kind && e->seq == (uint32_t)k + 1,
                      "thread %lld access %d: kind %d index %lld seq %u", (long long)index, k, e->kind,
                      (long long)e->index, e->seq);
        ck_assert_int_eq(e->flags & KS_FLAG_ATOMIC, w[k].flags & KS_FLAG_ATOMIC);
        const char *tn = tr->tensors[e->tensor].name;
        if (w[k].tensor) ck_assert_str_eq(tn, w[k].tensor);
        else ck_assert_msg(!strncmp(tn, "alloc", 5), "thread %lld: tensor %s", (long long)index, tn);
        ck_assert_int_eq(e->u.access.offset, w[k].offset);
        if (isnan(w[k].value)) continue;
        ck_assert_int_eq(!!(e->flags & KS_FLAG_INT), w[k].is_int);
        const double got = ks_access_value(&e->u.access, e->flags);
        ck_assert_msg(got == w[k].value, "thread %lld access %d: value %g, want %g", (long long)index, k, got,
                      w[k].value);
    }
}

/* the line of the first source line holding `text` in record_target.cu */
static int source_line_of(const char *text)
{
    FILE *f = fopen(KS_RECORD_CU, "r");
    ck_assert_ptr_nonnull(f);
    char buf[512];
    int n = 0, found = 0;
    while (!found && fgets(buf, sizeof buf, f)) ++n, found = strstr(buf, text) ? n : 0;
    fclose(f);
    ck_assert_msg(found, "%s not in the source", text);
    return found;
}

/* every access of `kind` to tensor `name` comes from one site, named FILE:LINE of `text` */
static void expect_site(const ks_trace *tr, int kind, const char *name, const char *text)
{
    const int t = ks_trace_tensor(tr, name), line = source_line_of(text);
    char want[64];
    snprintf(want, sizeof want, "record_target.cu:%d", line);
    int seen = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != kind || e->tensor != t) continue;
        ck_assert_str_eq(tr->sites[e->site].name, want);
        ck_assert_int_eq(tr->sites[e->site].line, line);
        seen = 1;
    }
    ck_assert_msg(seen, "no %s event of %s", ks_event_kind_name(kind), name);
}

START_TEST(record_every_access_of_an_unmodified_program)
{
    record("--out rec", "", 0);
    char *out = slurp("out");
    ck_assert_msg(strstr(out, "record_target: done"), "the program's own output: %s", out);

    /* gather2d: a 2-D grid of 2-D blocks, every thread in range reads idx then x and
     * writes y */
    ks_trace tr;
    open_trace("rec/0000-gather2d.kst", &tr);
    ck_assert_str_eq(tr.op, "gather2d");
    ck_assert_str_eq(tr.variant, "cuda-c");
    ck_assert_msg(strstr(tr.params, "\"frontend\":\"record\""), "%s", tr.params);
    ck_assert_int_eq(tr.threads, 64);
    ck_assert_int_eq(tr.blocks, 40);
    ck_assert_int_eq(tr.dropped, 0);
    ck_assert_int_eq(ks_trace_tensor(&tr, "x") >= 0 && ks_trace_tensor(&tr, "idx") >= 0, 1);
    const ks_tensor *tx = &tr.tensors[ks_trace_tensor(&tr, "x")];
    ck_assert_int_eq(tx->ndim, 2);
    ck_assert_int_eq(tx->shape[0], H);
    ck_assert_int_eq(tx->shape[1], W);
    uint64_t pos = 0;
    const int gx = (W + 15) / 16;
    for (int64_t index = 0; index < 40 * 64; ++index) {
        const int blk = (int)(index / 64), t = (int)(index % 64);
        const int c = blk % gx * 16 + t % 16, r = blk / gx * 4 + t / 16;
        if (r < H && c < W) {
            const int k = g_idx[r * W + c];
            const want_ev w[3] = {{KS_EV_READ, 0, "idx", r * W + c, 1, g_idx[r * W + c]},
                                  {KS_EV_READ, 0, "x", k, 0, g_x[k]},
                                  {KS_EV_WRITE, 0, NULL, r * W + c, 0, g_x[k] * 2.0f + 1.0f}};
            expect_thread(&tr, &pos, index, w, 3);
        } else expect_thread(&tr, &pos, index, NULL, 0);
    }
    ck_assert_int_eq(pos, tr.nevents);
    /* sites are source lines (the program is built with -lineinfo) */
    expect_site(&tr, KS_EV_READ, "idx", "const int k = idx[");
    expect_site(&tr, KS_EV_READ, "x", "y[r * w + c] = x[k]");
    ck_assert_msg(strcmp(tr.device, "cuda") && strlen(tr.device) > 4, "device %s", tr.device);
    ks_trace_close(&tr);
    ck_assert_int_eq(kscope("check rec/0000-gather2d.kst"), 0);

    /* hist, twice: grid-stride, each item reads idx[i] and adds 1 to its bin atomically;
     * the second launch's bins are the histogram of both */
    const int launches[2][3] = {{3, 64, H * W}, {2, 96, 301}};
    int bins[NB] = {0};
    for (int L = 0; L < 2; ++L) {
        char name[64];
        snprintf(name, sizeof name, "rec/%04d-hist.kst", L + 1);
        open_trace(name, &tr);
        const int nthreads = launches[L][0] * launches[L][1], n = launches[L][2];
        pos = 0;
        for (int g = 0; g < nthreads; ++g) {
            want_ev w[64];
            int m = 0;
            for (int i = g; i < n; i += nthreads) {
                w[m++] = (want_ev){KS_EV_READ, 0, "idx", i, 1, g_idx[i]};
                w[m++] = (want_ev){KS_EV_WRITE, KS_FLAG_ATOMIC, "bins", g_idx[i] % NB, 1, NAN};
                bins[g_idx[i] % NB]++;
            }
            expect_thread(&tr, &pos, g, w, m);
        }
        ck_assert_int_eq(pos, tr.nevents);
        expect_site(&tr, KS_EV_WRITE, "bins", "atomicAdd(&bins");
        if (L == 1) {
            const ks_tensor *tb = &tr.tensors[ks_trace_tensor(&tr, "bins")];
            ck_assert_int_eq(tb->dtype, KS_I32);
            ck_assert_mem_eq(tb->data, bins, sizeof bins);
        }
        ks_trace_close(&tr);
    }
}
END_TEST

START_TEST(record_chooses_kernel_launch_and_threads)
{
    record("--out rec --kernel '^hist' --launch 1 --filter block=1:2", "", 0);
    struct stat st;
    char p[128];
    snprintf(p, sizeof p, "%s/rec/0000-gather2d.kst", dir);
    ck_assert_int_ne(stat(p, &st), 0);
    snprintf(p, sizeof p, "%s/rec/0001-hist.kst", dir);
    ck_assert_int_ne(stat(p, &st), 0);
    ks_trace tr;
    open_trace("rec/0002-hist.kst", &tr);
    ck_assert_int_eq(tr.filter.block_lo, 1);
    ck_assert_int_eq(tr.filter.block_hi, 2);
    uint64_t works = 0;
    for (uint64_t i = 0; i < tr.nevents; ++i) {
        ck_assert_int_eq(tr.events[i].block, 1);
        works += tr.events[i].kind == KS_EV_WORK;
    }
    ck_assert_int_eq(works, 96);
    /* block 1 of hist<<<2, 96>>> over 301 items: threads 96..191 take i and i + 192 */
    uint64_t accesses = 0;
    for (int g = 96; g < 192; ++g)
        for (int i = g; i < 301; i += 192) accesses += 2;
    ck_assert_int_eq(tr.nevents, works + accesses);
    ks_trace_close(&tr);

    /* a bounded buffer: what did not fit is counted, exactly. With runs allowed, a launch
     * keeps at least what the bound below says (up to KS_REC_RUN - 1 slots a thread go
     * unused; this one's 192 threads x 7 pass a quarter of 1024, so it records a slot a
     * record); with KS_RECORD_RUNS=0 it fills all 1024 */
    for (int runs = 1; runs >= 0; --runs) {
        if (!runs) setenv("KS_RECORD_RUNS", "0", 1);
        record("--out rec2 --kernel hist --launch 0 --max-events 1024", "", 0);
        unsetenv("KS_RECORD_RUNS");
        open_trace("rec2/0001-hist.kst", &tr);
        uint64_t kept = 0, threads = 0;
        for (uint64_t i = 0; i < tr.nevents; ++i) tr.events[i].kind == KS_EV_WORK ? ++threads : ++kept;
        ck_assert_uint_eq(kept + tr.dropped, 2 * H * W);
        if (runs)
            ck_assert_msg(kept <= 1024 && kept + (KS_REC_RUN - 1) * threads >= 1024, "%llu kept by %llu threads",
                          (unsigned long long)kept, (unsigned long long)threads);
        else ck_assert_uint_eq(kept, 1024);
        ks_trace_close(&tr);
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf %s/rec2", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

/* --kernel leaves a module holding no kernel it takes unpatched (kscope's own modules
 * here: KS_RECORD_TIMES counts them), and what it records is what recording with every
 * module patched gives, launch by launch */
START_TEST(kernel_regex_leaves_other_modules_unpatched)
{
    char args[2048];
    snprintf(args, sizeof args,
             "record --kernel roi_align --out a -- %s run roi_align --forward slot --device cuda --quiet", KS_CLI);
    setenv("KS_RECORD_TIMES", "1", 1);
    int rc = kscope(args);
    unsetenv("KS_RECORD_TIMES");
    const char *err = slurp("err"), *at = strstr(err, "recorder: ");
    ck_assert_msg(rc == 0 && at, "exit %d: %s", rc, err);
    int patched = -1, skipped = -1;
    ck_assert_int_eq(sscanf(at, "recorder: %d module(s) patched, %d with no kernel", &patched, &skipped), 2);
    ck_assert_msg(patched >= 1 && skipped >= 1, "%d patched, %d left: %s", patched, skipped, err);
    snprintf(args, sizeof args, "record --out b -- %s run roi_align --forward slot --device cuda --quiet", KS_CLI);
    rc = kscope(args);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, slurp("err"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s && n=0 && for f in a/*.kst; do %s diff \"$f\" \"b/${f#a/}\" >>diffs || exit 1; n=$((n + 1)); done; "
             "test $n -ge 1",
             dir, KS_CLI);
    ck_assert_msg(system(cmd) == 0, "the traces differ: %s", slurp("diffs"));
}
END_TEST

/* Runs (each thread claiming KS_REC_RUN slots at a time, placed by the threads' states)
 * and a slot a record (sorted by thread) give the same traces of kscope's RoIAlign (the
 * slot forward) and im2col launches, event for event */
START_TEST(runs_and_single_slots_record_the_same)
{
    char args[2048], cmd[1024];
    /* deterministic launches: the channels-last forward orders its RoIs with atomics */
    const char *ops[2] = {"roi_align --forward slot --num-rois 37 --sampling-ratio 0",
                          "im2col --channels 5 --input-size 29,31"};
    for (int o = 0; o < 2; ++o) {
        for (int runs = 1; runs >= 0; --runs) {
            if (!runs) setenv("KS_RECORD_RUNS", "0", 1);
            snprintf(args, sizeof args, "record --out %s%d -- %s run %s --device cuda --quiet", runs ? "r" : "s", o,
                     KS_CLI, ops[o]);
            const int rc = kscope(args);
            unsetenv("KS_RECORD_RUNS");
            ck_assert_msg(rc == 0, "%s: exit %d: %s", args, rc, slurp("err"));
        }
        snprintf(cmd, sizeof cmd,
                 "cd %s && ls r%d >names_r && ls s%d >names_s && cmp names_r names_s >>diffs && n=0 && "
                 "for f in r%d/*.kst; do %s diff \"$f\" \"s%d/${f#r%d/}\" >>diffs || exit 1; "
                 "n=$((n + 1)); done; test $n -ge 1",
                 dir, o, o, o, KS_CLI, o, o);
        ck_assert_msg(system(cmd) == 0, "%s: the traces differ: %s", ops[o], slurp("diffs"));
    }
}
END_TEST

START_TEST(record_failures_pass_through_and_explain)
{
    record("--out rec", "--fail 3", 3); /* the program's status, its traces kept */
    struct stat st;
    char p[128];
    snprintf(p, sizeof p, "%s/rec/0002-hist.kst", dir);
    ck_assert_int_eq(stat(p, &st), 0);
    record("--out rec3 --kernel nomatch", "", 2);
    char *err = slurp("err");
    ck_assert_msg(strstr(err, "no launch matched --kernel nomatch") && strstr(err, "gather2d"), "%s", err);
    ck_assert_int_eq(kscope("record -- ./no-such-program"), 2);
    err = slurp("err");
    ck_assert_msg(lines(err) == 1 && strstr(err, "no-such-program"), "%s", err);
}
END_TEST
/* kscope run FILE.cu --device cuda against the simulator: the same file, launch and
 * inputs; every thread's accesses equal (kscope diff) and the outputs within float
 * rounding (the GPU contracts a * b + c into one FMA, the simulator's x86 build does not).
 * Kernels with shared memory, barriers or warp collectives (histogram.cu, reduce_sum.cu,
 * transpose_tiled.cu) are left out: the GPU recorder records global memory only. */
static void write_npy(const char *name, ks_dtype d, int ndim, int64_t d0, int64_t d1, int64_t d2, uint64_t seed)
{
    ks_tensor t = {.dtype = d, .ndim = ndim, .shape = {d0, d1, d2}};
    const int64_t n = ks_tensor_numel(&t);
    if (d == KS_F32) t.data = tu_random(&seed, n);
    else {
        int32_t *v = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; ++i) v[i] = (int32_t)tu_int(&seed, 0, 100000);
        t.data = v;
    }
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    ck_assert_int_eq(ks_npy_write(p, &t), KS_OK);
    free(t.data);
}

START_TEST(run_cu_on_the_gpu_equals_the_simulator)
{
    static const struct {
        const char *file, *launch, *args;
    } k[] = {
        {"vadd.cu", "--kernel vadd --grid 3 --block 128",
         "--arg a=@a.npy --arg b=@b.npy --arg c=empty:1001 --arg n=1001"},
        {"transpose_naive.cu", "--kernel transpose_naive --grid 4,5 --block 16,8",
         "--arg in=@in.npy --arg out=empty:53x37 --arg rows=37 --arg cols=53"},
        {"im2col.cu", "--kernel 'im2col_gpu_kernel<float>' --grid 2 --block 64",
         "--arg n=189 --arg data_im=@im.npy --arg height=13 --arg width=11 --arg kernel_h=3 --arg kernel_w=2 "
         "--arg pad_h=1 --arg pad_w=0 --arg stride_h=2 --arg stride_w=1 --arg dilation_h=1 --arg dilation_w=2 "
         "--arg height_col=7 --arg width_col=9 --arg data_col=empty:18x63"},
        {"resize_bilinear.cu", "--kernel resize_bilinear --grid 2,7,3 --block 16,8",
         "--arg in=@img.npy --arg out=empty:3x50x29 --arg in_h=37 --arg in_w=53 --arg out_h=50 --arg out_w=29"},
    };
    write_npy("a.npy", KS_F32, 1, 1001, 0, 0, 1);
    write_npy("b.npy", KS_F32, 1, 1001, 0, 0, 2);
    write_npy("in.npy", KS_F32, 2, 37, 53, 0, 3);
    write_npy("im.npy", KS_F32, 3, 3, 13, 11, 4);
    write_npy("img.npy", KS_F32, 3, 3, 37, 53, 5);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) {
        char args[1400];
        for (int gpu = 0; gpu < 2; ++gpu) {
            snprintf(args, sizeof args, "run %s/tests/cuda_c/%s %s %s --quiet --trace %s.kst --save %s %s",
                     KS_SOURCE_DIR, k[i].file, k[i].launch, k[i].args, gpu ? "cuda" : "sim",
                     gpu ? "out_cuda" : "out_sim", gpu ? "--device cuda" : "");
            const int rc = kscope(args);
            ck_assert_msg(rc == 0, "%s: kscope %.300s: exit %d: %.300s", k[i].file, args, rc, slurp("err"));
        }
        /* the same elements, counts and values; in the same order too, except where nvcc
         * orders a thread's independent loads its own way (resize's four corners) */
        int rc = kscope("diff sim.kst cuda.kst --access-sets --max 3");
        ck_assert_msg(rc == 0, "%s: diff --access-sets sim cuda: exit %d: %.600s", k[i].file, rc, slurp("out"));
        rc = kscope("diff sim.kst cuda.kst --max 3");
        if (strcmp(k[i].file, "resize_bilinear.cu"))
            ck_assert_msg(rc == 0, "%s: diff sim cuda: exit %d: %.600s", k[i].file, rc, slurp("out"));
        ks_trace tr;
        open_trace("cuda.kst", &tr);
        ck_assert_msg(strstr(tr.params, "\"device\":\"cuda\""), "%s", tr.params);
        ck_assert_int_eq(tr.dropped, 0);
        ks_trace_close(&tr);
        /* outputs: the same files, equal to float rounding */
        snprintf(args, sizeof args,
                 "cd %s && for f in out_sim/*.npy; do cmp -s $f out_cuda/${f#out_sim/} || "
                 "echo $f; done > differ",
                 dir);
        ck_assert_int_eq(system(args), 0);
        char *d = slurp("differ");
        ck_assert_msg(!strcmp(k[i].file, "resize_bilinear.cu") || !d[0], "%s: outputs differ: %s", k[i].file, d);
        snprintf(args, sizeof args, "rm -rf %s/out_sim %s/out_cuda %s/sim.kst %s/cuda.kst", dir, dir, dir, dir);
        ck_assert_int_eq(system(args), 0);
    }
}
END_TEST

/* --shared-accesses on a real kernel (tests/record/shared_target.cu): with its barrier,
 * every thread's shared store (phase 0), the barrier and its shared load (phase 1) are
 * recorded at the source lines, and check passes; without it, check names the race */
START_TEST(record_shared_accesses_and_find_a_race)
{
    char args[600];
    snprintf(args, sizeof args, "record --shared-accesses --kernel reverse_block --out rec -- %s", KS_SHARED_TARGET);
    int rc = kscope(args);
    ck_assert_msg(rc == 0, "exit %d: %.600s", rc, slurp("err"));
    ck_assert_msg(strstr(slurp("out"), "shared_target: done"), "%s", slurp("out"));
    ks_trace tr;
    open_trace("rec/0000-reverse_block.kst", &tr);
    const int sh = ks_trace_tensor(&tr, "shared");
    ck_assert_msg(sh >= 0, "no shared tensor");
    ck_assert_int_eq(tr.tensors[sh].shape[0], 128);
    ck_assert_msg(strstr(tr.params, "\"dynamic_shared\":256,"), "%s", tr.params);
    uint64_t bars = 0, stores = 0, loads = 0;
    for (uint64_t i = 0; i < tr.nevents; ++i) {
        const ks_event *e = &tr.events[i];
        const int t = (int)e->thread;
        if (e->kind == KS_EV_BARRIER) {
            ck_assert_uint_eq(e->u.barrier.phase, 0);
            ck_assert_int_eq(tr.sites[e->site].line, 15);
            bars++;
        } else if (e->kind != KS_EV_WORK && e->tensor == sh) {
            ck_assert(e->flags & KS_FLAG_SHARED);
            const int store = e->kind == KS_EV_WRITE;
            ck_assert_int_eq(e->u.access.offset, store ? t : 127 - t);
            ck_assert_int_eq(e->u.access.reserved[0], !store); /* the phase */
            ck_assert_int_eq(tr.sites[e->site].line, store ? 14 : 16);
            stores += store, loads += !store;
        }
    }
    ck_assert_uint_eq(bars, 384);
    ck_assert_uint_eq(stores, 384);
    ck_assert_uint_eq(loads, 300); /* the threads with i < n */
    ks_trace_close(&tr);
    open_trace("rec/0001-reverse_block.kst", &tr);
    ck_assert_msg(strstr(tr.params, "\"dynamic_shared\":0,"), "%s", tr.params);
    ks_trace_close(&tr);
    ck_assert_int_eq(kscope("check rec/0000-reverse_block.kst"), 0);
    ck_assert_int_eq(kscope("check rec/0001-reverse_block.kst"), 1);
    ck_assert_msg(strstr(slurp("out"), "shared-memory race"), "%s", slurp("out"));
    /* without the flag nothing of shared memory is recorded */
    snprintf(args, sizeof args, "record --kernel reverse_block --out plain -- %s", KS_SHARED_TARGET);
    ck_assert_int_eq(kscope(args), 0);
    open_trace("plain/0000-reverse_block.kst", &tr);
    ck_assert_int_lt(ks_trace_tensor(&tr, "shared"), 0);
    ks_trace_close(&tr);
}
END_TEST

/* issue 36 item 4: torchvision's roi_align (4 modes), deform_conv2d's im2col, ATen's
 * im2col / col2im and max_pool2d recorded on the GPU read, for every output element (deform:
 * every work item), exactly the input elements our operators' traces read
 * (tests/record/upstream_reads.py; skipped when python3 has no torch/torchvision) */
START_TEST(upstream_kernels_read_what_ours_read)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd %s && timeout -k 5 500 python3 %s/tests/record/upstream_reads.py %s up >out 2>err",
             dir, KS_SOURCE_DIR, KS_CLI);
    const int st = system(cmd), rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc == 77) {
        printf("SKIP: upstream kernels against ours: %s", slurp("out"));
        return;
    }
    ck_assert_msg(rc == 0, "upstream_reads.py: exit %d: %.2000s %.600s", rc, slurp("out"), slurp("err"));
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60); /* python3 starting cold on a fresh machine took seconds */
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, bad_input_one_line_exit_2);
    tcase_add_test(tc, python_module_is_inert_outside_record);
    tcase_add_test(tc, record_reports_what_the_recorder_said);
    suite_add_tcase(s, tc);
#ifdef KS_RECORD_TARGET
    if (ks_cuda_device_count() >= 1) {
        TCase *g = tcase_create("gpu");
        tcase_set_timeout(g, 600);
        tcase_add_checked_fixture(g, setup, teardown);
        tcase_add_test(g, record_every_access_of_an_unmodified_program);
        tcase_add_test(g, record_chooses_kernel_launch_and_threads);
        tcase_add_test(g, record_failures_pass_through_and_explain);
        tcase_add_test(g, kernel_regex_leaves_other_modules_unpatched);
        tcase_add_test(g, runs_and_single_slots_record_the_same);
        tcase_add_test(g, run_cu_on_the_gpu_equals_the_simulator);
        tcase_add_test(g, record_shared_accesses_and_find_a_race);
        tcase_add_test(g, upstream_kernels_read_what_ours_read);
        suite_add_tcase(s, g);
    } else printf("SKIP: the recorder's GPU tests not run: no CUDA device here\n");
#else
    printf("SKIP: the recorder's GPU tests not run: built without the Compute Sanitizer API (docs/record.md)\n");
#endif
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
