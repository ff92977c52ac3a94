/* test_props.c - a seeded random property test over every operator in kernels/ops.def,
 * without naming any (a new operator is covered by its line there).
 *
 * For each operator and mode (forward; --backward where the op has that SWITCH; each word
 * --trace-kernel takes, "auto" and the kernel rows that record (or an operator's own
 * "trace-kernel" CHOICE), with and without --backward) it draws random parameter sets
 * from the operator's own rows: INT rows in [min, 2 * default + 1] per axis (odd sizes,
 * batch and channels > 1 often, small so a Debug build runs them fast), FLOAT rows around
 * their default, SWITCH and CHOICE rows at random (a "plant" choice, a planted bug meant
 * to fail check, keeps its default), and a launch that is the reference one, or 1..3
 * blocks of the reference or of 32..128 threads (so grid-stride loops iterate). A draw the
 * operator refuses (KS_EINVAL: invalid geometry) is redrawn; each mode must reach its count
 * of draws within MAX_TRIES times as many tries (a mode no draw runs in is allowed only for
 * a trace-kernel word that runs in the other setting of --backward). Each accepted draw must
 *   1. run traced on the simulator into a complete trace that ks_trace_check finds no
 *      violation in, and
 *   2. give, run plain (no sink), outputs bitwise equal to the traced run's.
 * A failure names the op, the mode, every parameter (as the CLI command that reproduces
 * it, and the params JSON) and the first violation.
 *
 * Built as test_gpu_props (KS_PROPS_GPU), each accepted draw also
 *   3. runs traced on CUDA with the same seed: outputs equal the simulator's (bitwise but
 *      for float atomics and GEMM sums, within 1e-5 relative) and so do the events, sorted
 *      (the sparse insert kernel's probes depend on which thread displaces which key
 *      first: both record, no more); --math tf32 is not drawn (cuBLAS's tensor cores
 *      against an emulation). Without a GPU it exits 77 (skipped) with a message.
 *
 * KS_PROPS_DRAWS: accepted draws per op/mode (default 6; `make test-props` runs 50).
 * KS_PROPS_SEED: another fixed stream of draws (default 1), to explore.
 * KS_PROPS_VERBOSE=1: one line of counts per op/mode on stderr (silent otherwise); 2: also
 * each rejected draw and why. */
#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>
#include <stddef.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/check.h"
#include "../trace/run_trace.h"
#include "test_util.h" /* tu_next: splitmix64 */

#define MAX_TRIES 60 /* draws tried per draw wanted before the generator counts as broken */

/* One drawn parameter set: the flags as ks_run_set takes them and as the CLI writes them. */
typedef struct draw {
    int n;
    char name[KS_MAX_PARAMS][KS_NAME_LEN];
    char text[KS_MAX_PARAMS][64];
    char cli[1024]; /* "kscope run OP --flag v ... --seed S [--threads T --block-cap B]" */
    ks_launch launch;
    uint64_t seed;
} draw;

static ks_run traced, plain, gpu; /* large: off the stack */
#ifndef KS_PROPS_GPU
#define KS_PROPS_GPU 0
#endif

static int env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

/* The draw being run (traced, then plain), for the signal handler: a crash names its
 * command line too. */
static char current[sizeof(((draw *)0)->cli)];

static void on_signal(int sig)
{
    static const char head[] = "test_props: crashed on the draw (add --trace t.kst): ";
    if (write(2, head, sizeof head - 1) < 0 || write(2, current, strlen(current)) < 0 || write(2, "\n", 1) < 0) {}
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Word k of a CHOICE row's "a|b|c" into buf (NULL: none); returns the number of words. */
static int choice_word(const ks_param_spec *s, int k, char *buf, size_t size)
{
    int i = 0;
    for (const char *p = s->choices; *p; ++i) {
        const size_t len = strcspn(p, "|");
        if (i == k && buf) snprintf(buf, size, "%.*s", (int)len, p);
        p += len + (p[len] == '|');
    }
    return i;
}

/* Appends to the string in buf (size bytes), cutting what does not fit. */
static void cat(char *buf, size_t size, const char *fmt, ...)
{
    const size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

static void add(draw *d, const char *name, const char *text, const char *cli)
{
    snprintf(d->name[d->n], KS_NAME_LEN, "%s", name);
    snprintf(d->text[d->n], sizeof d->text[0], "%s", text);
    cat(d->cli, sizeof d->cli, " %s", cli);
    d->n++;
}

static void add_switch(draw *d, const char *name, int on)
{
    char cli[KS_NAME_LEN + 8];
    snprintf(cli, sizeof cli, "--%s%s", on ? "" : "no-", name);
    add(d, name, on ? "on" : "off", cli);
}

/* Word k of the op's --trace-kernel into buf (NULL: none): a CHOICE row of that name, or
 * "auto" and the kernel rows that can record. Returns the number of words, 0: none. */
static int tk_word(const ks_op *op, int k, char *buf, size_t size)
{
    const int p = ks_op_param(op, "trace-kernel");
    if (p >= 0) return op->params[p].kind == KS_PARAM_CHOICE ? choice_word(&op->params[p], k, buf, size) : 0;
    if (!op->nkernels) return 0;
    int n = 1;
    if (k == 0 && buf) snprintf(buf, size, "auto");
    for (int i = 0; i < op->nkernels; ++i)
        if (!op->kernels[i].plain_only && !op->kernels[i].no_trace && n++ == k && buf)
            snprintf(buf, size, "%s", op->kernels[i].name);
    return n;
}

/* A draw of the mode's flags only (p_bwd: the backward row, -1 where the op has none;
 * word: the trace-kernel word, -1 where it has none), the rest at their defaults. */
static void draw_mode(const ks_op *op, int p_bwd, int backward, int word, draw *d)
{
    char text[64], cli[KS_NAME_LEN + 80];
    memset(d, 0, sizeof *d);
    snprintf(d->cli, sizeof d->cli, "kscope run %s", op->name);
    if (p_bwd >= 0) add_switch(d, "backward", backward);
    if (word >= 0) {
        tk_word(op, word, text, sizeof text);
        snprintf(cli, sizeof cli, "--trace-kernel %s", text);
        add(d, "trace-kernel", text, cli);
    }
}

/* A random parameter set for op in a mode (as draw_mode). */
static void draw_params(uint64_t *rng, const ks_op *op, int p_bwd, int backward, int word, draw *d)
{
    char text[64], cli[KS_NAME_LEN + 80];
    draw_mode(op, p_bwd, backward, word, d);
    const int dims = (int)tu_int(rng, 2, 3); /* the values of every 3-axis row: H,W or D,H,W */
    for (int p = 0; p < op->nparams; ++p) {
        const ks_param_spec *s = &op->params[p];
        /* the mode's rows are set above; a planted bug is meant to fail check */
        if (p == p_bwd || !strcmp(s->name, "trace-kernel") || !strcmp(s->name, "plant")) continue;
        /* on the GPU, --math tf32 is cuBLAS's tensor cores against the simulator's emulation:
         * equal only to ~1e-3 (test_gpu_deform holds it to that); the draws keep fp32 there */
        if (KS_PROPS_GPU && !strcmp(s->name, "math")) continue;
        /* how often a row keeps its default (is not set): an INT or FLOAT row a third of
         * the time, an "auto" INT row (default 0, below its min) three times in four,
         * switches and choices half the time (so switches that exclude each other seldom
         * meet); a 3-axis row never: its values set the space's axes, `dims` of them */
        const int autodef = s->kind == KS_PARAM_INT && s->def[0] == 0 && s->min > 0;
        const int keep = s->axes == 3 ? 0 : autodef ? 75 : s->kind <= KS_PARAM_FLOAT ? 33 : 50;
        if (tu_int(rng, 0, 99) < keep) continue;
        text[0] = '\0';
        if (s->kind == KS_PARAM_SWITCH) {
            add_switch(d, s->name, (int)tu_int(rng, 0, 1));
            continue;
        }
        if (s->kind == KS_PARAM_CHOICE) {
            choice_word(s, (int)tu_int(rng, 0, choice_word(s, 0, NULL, 0) - 1), text, sizeof text);
        }
        /* set numbers: the default's, given explicitly, a quarter of the time (a 3-axis
         * row half: output-padding, stride, padding are often meant to stay 0 or 1) */
        const int as_default = !autodef && tu_int(rng, 0, 99) < (s->axes == 3 ? 50 : 25);
        const int values = s->kind == KS_PARAM_CHOICE ? 0 : s->axes == 3 ? dims : s->axes == 2 ? 2 : 1;
        for (int a = 0; a < values; ++a) {
            const size_t len = strlen(text);
            if (s->kind == KS_PARAM_FLOAT) {
                /* eighths, so the text is exact: 0..2, or 0.5..1.5 times a non-zero default */
                const double def = s->fdef[a < 2 ? a : 1];
                const double v = as_default ? def
                                 : def == 0 ? tu_int(rng, 0, 16) / 8.0
                                            : def * tu_int(rng, 4, 12) / 8.0;
                snprintf(text + len, sizeof text - len, "%s%g", a ? "," : "", v);
            } else {
                /* [min, 2 * default + 1] (a default of 0 means auto: [min, min + 3]),
                 * never below -1 (sampling-ratio's min is -2^31 + 1) */
                const int64_t lo = s->min > -1 ? s->min : -1, def = s->def[a];
                const int64_t hi = def > 0 ? (2 * def + 1 > lo ? 2 * def + 1 : lo) : lo + 3;
                const int64_t v = as_default && def >= lo ? def : tu_int(rng, lo, hi);
                snprintf(text + len, sizeof text - len, "%s%lld", a ? "," : "", (long long)v);
            }
        }
        snprintf(cli, sizeof cli, "--%s %s", s->name, text);
        add(d, s->name, text, cli);
    }
    /* the launch: the reference one, or 1..3 blocks of the reference's threads or of 32..128 */
    const int kind = (int)tu_int(rng, 0, 2);
    d->launch.threads = kind == 2 ? (int)tu_int(rng, 32, 128) : 0;
    d->launch.block_cap = kind ? tu_int(rng, 1, 3) : 0;
    d->seed = (uint64_t)tu_int(rng, 0, 9999);
    cat(d->cli, sizeof d->cli, " --pattern random --seed %llu", (unsigned long long)d->seed);
    if (d->launch.threads) cat(d->cli, sizeof d->cli, " --threads %d", d->launch.threads);
    if (d->launch.block_cap) cat(d->cli, sizeof d->cli, " --block-cap %lld", (long long)d->launch.block_cap);
}

/* ks_run_execute of draw d on the simulator (or on CUDA for r == &gpu), traced (with a
 * host sink) or plain. */
static int run(ks_run *r, const ks_op *op, const draw *d, int with_sink)
{
    ks_run_init(r, op);
    r->device = r == &gpu ? KS_DEV_CUDA : KS_DEV_SIM;
    for (int i = 0; i < d->n; ++i)
        ck_assert_msg(ks_run_set(r, d->name[i], d->text[i]) == KS_OK, "%s: %s", d->cli, ks_error_message());
    r->pattern = KS_PAT_RANDOM;
    r->seed = d->seed;
    r->launch = d->launch;
    if (with_sink) ck_assert_ptr_nonnull(r->sink = ks_host_sink_create(0, ks_filter_all()));
    return ks_run_execute(r);
}

static void done(ks_run *r)
{
    if (r->sink) ks_host_sink_free(r->sink);
    r->sink = NULL;
    ks_run_free(r);
}

static int close_f(float x, float y)
{
    return !memcmp(&x, &y, 4) || (isnan(x) && isnan(y)) || fabsf(x - y) <= 1e-5f * (1 + fabsf(x));
}

/* events in (index, seq) order, ties by the rest of the record */
static int by_item(const void *pa, const void *pb)
{
    const ks_event *a = pa, *b = pb;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return memcmp(a, b, sizeof *a);
}

/* Who, where and which element bitwise; float values (GEMM sums and atomics round
 * differently) within 1e-5 relative. */
static int same_event(const ks_event *a, const ks_event *b)
{
    if (memcmp(a, b, offsetof(ks_event, u))) return 0;
    if (a->kind == KS_EV_WORK) return !memcmp(&a->u, &b->u, sizeof a->u);
    if (a->kind == KS_EV_SAMPLE) {
        const ks_ev_sample *x = &a->u.sample, *y = &b->u.sample;
        int ok = x->plane == y->plane && close_f(x->y, y->y) && close_f(x->x, y->x) && close_f(x->value, y->value);
        for (int k = 0; k < 4; ++k) ok = ok && close_f(x->w[k], y->w[k]);
        return ok;
    }
    const ks_ev_access *x = &a->u.access, *y = &b->u.access;
    return x->offset == y->offset && x->plane == y->plane && x->y == y->y && x->x == y->x &&
           close_f(x->value, y->value);
}

/* Property 3: draw d on CUDA equals the simulator's traced run. */
static void check_gpu(const ks_op *op, const draw *d)
{
    const int rc = run(&gpu, op, d, 1);
    ck_assert_msg(rc == KS_OK, "%s --device cuda: %s", d->cli, ks_error_message());
    for (int t = 0; t < op->ntensors; ++t) {
        if (!op->tensors[t].output || traced.absent[t]) continue;
        const ks_tensor *a = &traced.tensor[t], *b = &gpu.tensor[t];
        const int64_t n = ks_tensor_numel(a);
        if (a->dtype != KS_F32) {
            ck_assert_msg(!memcmp(a->data, b->data, (size_t)n * ks_dtype_size(a->dtype)),
                          "%s --device cuda: %s differs", d->cli, a->name);
            continue;
        }
        const float *x = a->data, *y = b->data;
        for (int64_t k = 0; k < n; ++k)
            ck_assert_msg(close_f(x[k], y[k]), "%s --device cuda: %s[%lld] sim %.9g gpu %.9g", d->cli, a->name,
                          (long long)k, x[k], y[k]);
    }
    const unsigned long long n = ks_sink_count(traced.sink);
    /* the sparse insert kernel's probes (its probing steps) depend on which thread displaces
     * which key first, so their number too: both record something; its table is an output */
    if (op->nkernels && traced.traced_row >= 0 && !strcmp(op->kernels[traced.traced_row].name, "insert")) {
        ck_assert_msg((ks_sink_count(gpu.sink) > 0) == (n > 0), "%s --device cuda: events on one device only", d->cli);
    } else {
        ck_assert_msg(ks_sink_count(gpu.sink) == n, "%s --device cuda: %llu events, the simulator %llu", d->cli,
                      ks_sink_count(gpu.sink), n);
        qsort(traced.sink->events, n, sizeof(ks_event), by_item);
        qsort(gpu.sink->events, n, sizeof(ks_event), by_item);
        for (unsigned long long i = 0; i < n; ++i) {
            const ks_event *a = &traced.sink->events[i], *b = &gpu.sink->events[i];
            ck_assert_msg(same_event(a, b), "%s --device cuda: event %llu (index %lld seq %u kind %d site %d) differs",
                          d->cli, i, (long long)a->index, a->seq, a->kind, a->site);
        }
    }
    done(&gpu);
}

/* The properties of one accepted draw (traced holds its traced run). */
static void check_draw(const ks_op *op, const draw *d)
{
    static ks_trace tr;
    ks_check_report rep;
    ks_trace_from_run(op, &traced, &tr);
    ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
    ck_assert_msg(rep.violations == 0 && rep.complete,
                  "%s --trace t.kst && kscope check t.kst\n  params %s\n  launch %lld blocks x %d threads\n"
                  "  %llu violations%s, first: %s",
                  d->cli, traced.params_json, (long long)traced.blocks, traced.threads,
                  (unsigned long long)rep.violations, rep.complete ? "" : " (incomplete trace)", rep.first[0]);
    const int rc = run(&plain, op, d, 0);
    ck_assert_msg(rc == KS_OK, "%s: traced ran, plain failed: %s", d->cli, ks_error_message());
    for (int t = 0; t < op->ntensors; ++t) {
        if (!op->tensors[t].output) continue;
        const ks_tensor *a = &traced.tensor[t], *b = &plain.tensor[t];
        ck_assert_msg(a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof a->shape), "%s: %s: shapes differ",
                      d->cli, a->name);
        const size_t size = ks_dtype_size(a->dtype);
        int64_t i = 0, n = ks_tensor_numel(a);
        while (i < n && !memcmp((const char *)a->data + i * size, (const char *)b->data + i * size, size)) ++i;
        ck_assert_msg(i == n,
                      "%s: %s[%lld] is %.9g traced, %.9g plain (compare `--save A` with `--trace t.kst --save B`)"
                      "\n  params %s",
                      d->cli, a->name, (long long)i, ks_tensor_value(a, i), ks_tensor_value(b, i), traced.params_json);
    }
    done(&plain);
    if (KS_PROPS_GPU) check_gpu(op, d);
}

/* The modes of an op: backward off/on (where it has that switch) x each trace-kernel word
 * (where it has them); mode m is backward = m % 2, word = m / 2. */
static int mode_op[256], mode_m[256], nmodes;

static int backward_row(const ks_op *op)
{
    const int p = ks_op_param(op, "backward");
    return p >= 0 && op->params[p].kind == KS_PARAM_SWITCH ? p : -1;
}

/* Draws for op in a mode until `want` run (each, with check, held to the properties) or
 * want * MAX_TRIES were tried; returns how many ran, *rejected the others. */
static int run_draws(uint64_t *rng, const ks_op *op, int p_bwd, int backward, int word, int want, int check,
                     int *rejected)
{
    const int verbose = env_int("KS_PROPS_VERBOSE", 0);
    int accepted = 0;
    *rejected = 0;
    while (accepted < want && accepted + *rejected < want * MAX_TRIES) {
        draw d;
        draw_params(rng, op, p_bwd, backward, word, &d);
        memcpy(current, d.cli, sizeof current);
        const int rc = run(&traced, op, &d, 1);
        ck_assert_msg(rc == KS_OK || rc == KS_EINVAL, "%s: %s", d.cli, ks_error_message());
        if (rc == KS_OK) {
            if (check) check_draw(op, &d);
            accepted++;
        } else {
            ++*rejected;
            if (verbose > 1) fprintf(stderr, "  rejected: %s: %s\n", d.cli, ks_error_message());
        }
        done(&traced);
    }
    return accepted;
}

START_TEST(random_parameters_trace_cleanly_and_match_the_plain_run)
{
    const ks_op *op = ks_op_at(mode_op[_i]);
    const int p_bwd = backward_row(op), m = mode_m[_i], backward = m % 2, word = tk_word(op, 0, NULL, 0) ? m / 2 : -1;
    const int p_tk = ks_op_param(op, "trace-kernel"), def_word = p_tk >= 0 ? (int)op->params[p_tk].def[0] : 0;
    char mode[96];
    snprintf(mode, sizeof mode, "%s%s", p_bwd >= 0 && backward ? " --backward" : "",
             word >= 0 ? " --trace-kernel " : "");
    if (word >= 0) tk_word(op, word, mode + strlen(mode), sizeof mode - strlen(mode));
    /* one stream per op and mode: a mode's draws do not depend on the others */
    uint64_t rng = (uint64_t)env_int("KS_PROPS_SEED", 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)mode_op[_i] << 32 ^
                   (uint64_t)m;
    const int want = env_int("KS_PROPS_DRAWS", 6) > 0 ? env_int("KS_PROPS_DRAWS", 6) : 6;
    int rejected, other;
    signal(SIGSEGV, on_signal), signal(SIGABRT, on_signal), signal(SIGBUS, on_signal), signal(SIGFPE, on_signal);
    const int accepted = run_draws(&rng, op, p_bwd, backward, word, want, 1, &rejected);
    if (env_int("KS_PROPS_VERBOSE", 0))
        fprintf(stderr, "%-14s%-34s accepted %3d rejected %4d\n", op->name, *mode ? mode : " (forward)", accepted,
                rejected);
    /* a kernel that runs only with (or only without) --backward (deform_conv's col2im and
     * coord) is refused in the other setting whatever the draw: there, no draw runs, and
     * the word must run in its own setting; the default word runs in both */
    if (accepted == 0 && p_bwd >= 0 && word >= 0 && word != def_word) {
        ck_assert_msg(run_draws(&rng, op, p_bwd, !backward, word, 1, 0, &other) == 1,
                      "%s%s: no draw runs, with or without --backward", op->name, mode);
        return;
    }
    ck_assert_msg(accepted == want, "%s%s: only %d of %d draws valid in %d tries: the generator is broken", op->name,
                  mode, accepted, want, accepted + rejected);
}
END_TEST

int main(void)
{
    if (KS_PROPS_GPU && ks_cuda_device_count() < 1) {
        printf("test_gpu_props: skipped: no CUDA device (%s)\n", ks_error_message());
        return 77;
    }
    for (int i = 0; i < ks_op_count(); ++i) {
        const ks_op *op = ks_op_at(i);
        const int words = tk_word(op, 0, NULL, 0) ? tk_word(op, 0, NULL, 0) : 1;
        for (int m = 0; m < 2 * words; ++m) {
            if (m % 2 && backward_row(op) < 0) continue;
            if (nmodes < (int)(sizeof mode_op / sizeof mode_op[0])) mode_op[nmodes] = i, mode_m[nmodes++] = m;
        }
    }
    Suite *s = suite_create("props");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, random_parameters_trace_cleanly_and_match_the_plain_run, 0, nmodes);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, KS_PROPS_GPU ? CK_NOFORK : CK_FORK); /* CUDA does not survive a fork */
}
