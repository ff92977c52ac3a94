/* pz_run.c - one graded run of a student's .cu file: the CUDA C front end compiles it and
 * runs its kernel on the puzzle's launch and inputs (kernels/cuda_c/cu_run.h, the library
 * behind `kscope run FILE.cu`), and the trace is written for the judge.
 *
 * The whole of it happens in a child process with a process group of its own: the front
 * end's compiler and simulator processes are its children, so a compiler that hangs, a
 * stop (Ctrl-C, SIGTERM: pz_run_interrupt) or the time limit ends all of them at once,
 * and with TMPDIR pointing into the caller's temporary folder every file they make is
 * there. The kernel itself runs in the front end's own child (a crash, an access outside
 * every array or an endless loop cannot harm kscope). The child reports through a page
 * shared with kscope: how far it got and, at the end, the outcome and its one line. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../kernels/core/ks_error.h"
#include "../../kernels/cuda_c/cu_run.h"
#include "pz_grade.h"

/* events a run keeps: the largest puzzle makes a few thousand; a loop that runs away
 * fills this and then meets the time limit */
enum { PZ_TRACE_EVENTS = 1 << 20 };
enum { PZ_PH_START, PZ_PH_COMPILE, PZ_PH_RUN, PZ_PH_DONE };

typedef struct pz_report {
    volatile int phase;
    int outcome;
    char message[512];
} pz_report;

static volatile pid_t g_child; /* the run's process group while it runs (0: none) */

void pz_run_interrupt(void)
{
    if (g_child > 0) kill(-g_child, SIGKILL);
}

/* Inputs: integers in [-9, 9] without 0 (a dropped term always shows), from a generator
 * seeded by the puzzle's name, so a puzzle's inputs never change. */
static void fill(float *x, int64_t n, uint32_t *state)
{
    for (int64_t i = 0; i < n; ++i) {
        *state = *state * 1664525u + 1013904223u;
        const int v = (int)(*state >> 16) % 18;
        x[i] = (float)(v < 9 ? v - 9 : v - 8);
    }
}

/* Adds array `name` as the buffer of the kernel's parameter of that name: the output as
 * zeros, an input filled from the generator. */
static int add_array(ks_cu_exec *e, const char *name, pz_shape sh, int input, uint32_t *seed)
{
    char shape[64], value[96];
    if (sh.ndim == 1) snprintf(shape, sizeof shape, "%lld", (long long)sh.cols);
    else snprintf(shape, sizeof shape, "%lldx%lld", (long long)sh.rows, (long long)sh.cols);
    snprintf(value, sizeof value, "zeros:%s", shape);
    if (ks_cu_arg_parse(e, name, value) != 1) return KS_EINVAL;
    if (!input) return KS_OK;
    ks_cu_bufspec *b = &e->bufs[e->nbufs - 1];
    if (ks_tensor_alloc(&b->t)) return ks_fail(KS_ENOMEM, "out of memory for the inputs");
    fill((float *)b->t.data, sh.rows * sh.cols, seed);
    snprintf(b->text, sizeof b->text, "puzzle input %s", shape); /* the trace's params */
    return KS_OK;
}

static int describe(ks_cu_exec *e, const pz_spec *s)
{
    uint32_t seed = 2166136261u;
    for (const char *c = s->name; *c; ++c) seed = (seed ^ (uint8_t)*c) * 16777619u;
    e->quiet = 1;
    e->time_limit = PZ_RUN_LIMIT_S;
    e->trace_limit = PZ_TRACE_EVENTS;
    e->grid[0] = s->grid[0], e->grid[1] = s->grid[1], e->grid[2] = 1;
    e->block[0] = s->block[0], e->block[1] = s->block[1], e->block[2] = 1;
    int rc = add_array(e, "a", s->a, 1, &seed);
    if (!rc && s->b.rows) rc = add_array(e, "b", s->b, 1, &seed);
    if (!rc) rc = add_array(e, "out", s->out, 0, &seed);
    for (int k = 0; k < PZ_MAX_INTS && s->ints[k] && !rc; ++k) {
        char v[32];
        snprintf(v, sizeof v, "%d", s->values[k]);
        if (ks_cu_arg_parse(e, s->ints[k], v) != 0) rc = KS_EINVAL;
    }
    return rc;
}

/* The line the front end gives a run that stopped as a whole, with the code of the
 * stopped thread's last source line. */
static void stop_line(ks_cu_exec *e, const ks_trace *tr, const char *src, char *buf, size_t n)
{
    char line[300];
    ks_cu_fault_line(e, tr, line, sizeof line);
    const ks_cu_ctl *c = e->ctl;
    const char *code = "";
    for (uint64_t i = tr->nevents; i-- > 0;) {
        const ks_event *x = &tr->events[i];
        if (x->block == c->fault_block && x->thread == c->fault_thread && x->site && x->site < tr->nsites) {
            code = tr->sites[x->site].code;
            break;
        }
    }
    snprintf(buf, n, "%s: %s%s%s%s", src, line[0] ? line : "the run stopped", *code ? ": `" : "", code,
             *code ? "`" : "");
}

/* The child: compile, run, write the trace. Returns the outcome, its line in r. */
static int child(const pz_spec *s, const char *src, const char *trace_path, pz_report *r)
{
    static ks_cu_exec e;
    static ks_trace tr;
    int outcome = PZ_ERROR;
    ks_cu_exec_init(&e);
    r->phase = PZ_PH_COMPILE;
    if (describe(&e, s) || pz_build(s, src, &e.build)) goto out;
    r->phase = PZ_PH_RUN;
    if (ks_cu_exec_run(&e)) goto out;
    if (e.exit_status == 2) { /* the run could not start: a parameter's type */
        const char *why = e.ctl->error;
        const int arg = !strncmp(why, "--arg ", 6); /* the front end's words are kscope run's */
        ks_fail(KS_EINVAL, "%s: %s%s (keep the stub's signature, %s)", src, arg ? "parameter " : "",
                why + (arg ? 6 : 0), s->signature);
        goto out;
    }
    if (ks_cu_trace_make(&e, &tr)) goto out;
    if (!e.ctl->fault && !e.ctl->finished) {
        ks_fail(KS_EINVAL, "%s: the run ended before every block ran (exit() in the kernel?): nothing to grade", src);
        goto out;
    }
    if (!e.ctl->fault && tr.dropped) {
        ks_fail(KS_EINVAL,
                "%s: the kernel made more than %d memory accesses (a loop that runs too long?): nothing to grade", src,
                PZ_TRACE_EVENTS);
        goto out;
    }
    if (ks_trace_write(trace_path, &tr)) goto out;
    outcome = PZ_RAN;
    if (e.ctl->fault) {
        char line[512];
        stop_line(&e, &tr, src, line, sizeof line);
        ks_fail(KS_EINVAL, "%s", line);
        outcome = PZ_STOPPED;
    }
out:
    snprintf(r->message, sizeof r->message, "%s", outcome == PZ_RAN ? "" : ks_error_message());
    ks_cu_exec_free(&e);
    return outcome;
}

/* $KSCOPE_CC_TIMEOUT in seconds (1..3600), or PZ_COMPILE_LIMIT_S */
static int compile_limit(void)
{
    const char *v = getenv("KSCOPE_CC_TIMEOUT");
    const long sec = v && *v ? strtol(v, NULL, 10) : 0;
    return sec >= 1 && sec <= 3600 ? (int)sec : PZ_COMPILE_LIMIT_S;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void end_group(pid_t pid)
{
    int st;
    kill(-pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
}

int pz_run(const pz_spec *s, const char *src, const char *tmpdir, const char *trace_path)
{
    pz_report *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED) return ks_fail(KS_ENOMEM, "cannot start the run: %s", strerror(errno)), PZ_ERROR;
    memset(r, 0, sizeof *r);
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        munmap(r, sizeof *r);
        return ks_fail(KS_EINVAL, "cannot start the run: %s", strerror(errno)), PZ_ERROR;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
        for (int k = 0; k < 3; ++k) signal(sigs[k], SIG_DFL);
        if (setenv("TMPDIR", tmpdir, 1)) _exit(99);
        r->outcome = child(s, src, trace_path, r);
        r->phase = PZ_PH_DONE;
        fflush(NULL); /* what the kernel printed, when stdout is a file or a pipe */
        _exit(0);
    }
    setpgid(pid, pid);
    g_child = pid;
    const int limit = compile_limit();
    const double t0 = now_s();
    double run_from = 0;
    int status = 0;
    const struct timespec tick = {0, 5 * 1000 * 1000};
    for (;;) {
        const pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) break;
        if (got < 0 && errno != EINTR) {
            g_child = 0;
            end_group(pid);
            munmap(r, sizeof *r);
            return ks_fail(KS_EINVAL, "lost the run: %s", strerror(errno)), PZ_ERROR;
        }
        const double t = now_s();
        if (r->phase >= PZ_PH_RUN && !run_from) run_from = t;
        const int compiling = r->phase < PZ_PH_RUN;
        if ((compiling && t - t0 > limit) || (!compiling && t - run_from > PZ_RUN_LIMIT_S + 30)) {
            g_child = 0;
            end_group(pid);
            munmap(r, sizeof *r);
            if (compiling)
                return ks_fail(KS_EINVAL, "%s: the compiler did not finish in %d s (KSCOPE_CC_TIMEOUT sets the limit)",
                               src, limit),
                       PZ_ERROR;
            return ks_fail(KS_EINVAL, "%s: the run did not finish", src), PZ_ERROR;
        }
        nanosleep(&tick, NULL);
    }
    g_child = 0;
    int outcome = PZ_ERROR;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->phase == PZ_PH_DONE) {
        outcome = r->outcome;
        if (outcome != PZ_RAN) ks_fail(KS_EINVAL, "%s", r->message);
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        ks_fail(KS_EINVAL, "%s: the run was stopped", src);
    } else if (WIFSIGNALED(status)) {
        ks_fail(KS_EINVAL, "%s: the grader's run process died (%s)", src, strsignal(WTERMSIG(status)));
    } else {
        ks_fail(KS_EINVAL, "%s: the grader's run process ended with status %d", src, WEXITSTATUS(status));
    }
    munmap(r, sizeof *r);
    return outcome;
}
