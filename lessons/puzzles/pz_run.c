/* pz_run.c - one run of a student's puzzle body on the simulator, in a child process,
 * traced through the SDK's descriptor (trace/ks_user.h) like any kernel of your own: the
 * tensors a, b, out, a work site (one work item per thread: block, thread) and a read and a
 * write site per array, which puzzle.h's pz_load / pz_store probe. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kernels/core/ks_error.h"
#include "../../trace/ks_user.h"
#include "pz_grade.h"
#include "puzzle.h"

enum { PZ_TIMEOUT_S = 10, PZ_MAX_ELEMS = 64 };
enum { PZ_SITE_WORK = 0 };
/* the child's exit codes, told apart by the parent; a run that ends well also says
 * PZ_DONE on the pipe once its trace is written, so a body that calls exit(0) itself is
 * not taken for a finished run */
enum { PZ_CHILD_OK = 0, PZ_CHILD_LOAD = 3, PZ_CHILD_NOFN = 4, PZ_CHILD_TRACE = 5 };
static const char PZ_DONE[] = "\001kscope-puzzle-run-done";

typedef void (*pz_kernel)(ks_thread *t, const pz_args *p);

typedef struct pz_launch {
    pz_kernel kernel;
    pz_args args;
    int shared_tensor, shared_site; /* the shared tensor, its read, write and barrier sites */
} pz_launch;

/* The simulator's body: a work item per thread (its global number), shared accesses
 * traced on the tensor `shared`, then the student's body. */
static void run_thread(ks_thread *t, const void *v)
{
    const pz_launch *l = (const pz_launch *)v;
    const int64_t item = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    ks_probe_work(t, PZ_SITE_WORK, item, 0, t->block_idx.x, t->thread_idx.x, 0, 0, 0, 0, 0, 0);
    ks_shared_trace(t, l->shared_tensor, l->shared_site, PZ_SHARED_ROWS, PZ_SHARED_COLS);
    l->kernel(t, &l->args);
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

/* Adds array `name` (shape sh) as a tensor and gives it its read and write sites. */
static int add_array(ks_user_trace *d, const char *name, pz_shape sh, float *data, int output, pz_array *a)
{
    const int64_t shape[2] = {sh.rows, sh.cols};
    a->data = data;
    a->size = sh.rows * sh.cols, a->rows = sh.rows, a->cols = sh.cols;
    a->tensor = ks_user_tensor(d, name, KS_F32, sh.ndim, sh.ndim == 1 ? shape + 1 : shape, data, output);
    return a->tensor < 0;
}

static int add_sites(ks_user_trace *d, const pz_spec *s, const char *name, pz_array *a, int output)
{
    char site[KS_NAME_LEN];
    a->read_site = d->nsites;
    snprintf(site, sizeof site, "%s.%s.read", s->name, name);
    if (!ks_user_site(d, a->read_site, site, KS_EV_READ, a->tensor, 0)) return 1;
    a->write_site = d->nsites;
    snprintf(site, sizeof site, "%s.%s.write", s->name, name);
    return !ks_user_site(d, a->write_site, site, KS_EV_WRITE, a->tensor, output); /* out: each element once */
}

static int describe(ks_user_trace *d, const pz_spec *s, pz_launch *l, float (*mem)[PZ_MAX_ELEMS])
{
    static float shared[KS_SHARED_ARRAYS * PZ_SHARED_SLOTS];
    const int64_t shared_shape[3] = {KS_SHARED_ARRAYS, PZ_SHARED_ROWS, PZ_SHARED_COLS};
    pz_args *p = &l->args;
    static char params[128];
    ks_user_trace_init(d, s->name, (int64_t)s->blocks * s->threads);
    snprintf(params, sizeof params, "{\"puzzle\": \"%s\", \"size\": %d}", s->name, s->size);
    d->params = params;
    p->size = s->size;
    if (add_array(d, "a", s->a, mem[0], 0, &p->a)) return 1;
    if (s->b.rows && add_array(d, "b", s->b, mem[1], 0, &p->b)) return 1;
    if (add_array(d, "out", s->out, mem[2], 1, &p->out)) return 1;
    ks_site *w = ks_user_site(d, PZ_SITE_WORK, "puzzle.work", KS_EV_WORK, -1, 0);
    if (!w || ks_user_field_digit(w, "block", s->threads, 0) || ks_user_field_digit(w, "thread", 1, s->threads))
        return 1;
    if (add_sites(d, s, "a", &p->a, 0)) return 1;
    if (s->b.rows && add_sites(d, s, "b", &p->b, 0)) return 1;
    if (add_sites(d, s, "out", &p->out, 1)) return 1;
    /* an output that no site counts (as gemm_tiled's): check compares no value with it */
    l->shared_tensor = ks_user_tensor(d, "shared", KS_F32, 3, shared_shape, shared, 1);
    l->shared_site = d->nsites;
    return l->shared_tensor < 0 || !ks_user_site(d, l->shared_site, "shared.read", KS_EV_READ, l->shared_tensor, 0) ||
           !ks_user_site(d, l->shared_site + 1, "shared.write", KS_EV_WRITE, l->shared_tensor, 0) ||
           !ks_user_site(d, l->shared_site + 2, "shared.barrier", KS_EV_BARRIER, l->shared_tensor, 0);
}

/* The child's error line goes to the parent through `fd`, which reports it as its own. */
static int child(const pz_spec *s, const char *so, const char *trace_path, int fd)
{
    alarm(PZ_TIMEOUT_S);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        dprintf(fd, "cannot load the compiled puzzle: %s", dlerror());
        return PZ_CHILD_LOAD;
    }
    char fn[96];
    snprintf(fn, sizeof fn, "%s_kernel", s->name);
    static pz_launch l;
    *(void **)&l.kernel = dlsym(h, fn);
    if (!l.kernel) return PZ_CHILD_NOFN;
    static float mem[3][PZ_MAX_ELEMS];
    uint32_t seed = 2166136261u;
    for (const char *c = s->name; *c; ++c) seed = (seed ^ (uint8_t)*c) * 16777619u;
    fill(mem[0], s->a.rows * s->a.cols, &seed);
    fill(mem[1], s->b.rows * s->b.cols, &seed);
    /* the cooperative launch (threads of a block as fibers) for every puzzle, so that a
     * barrier works wherever a student puts one; the grader reads races from the trace */
    static ks_user_trace d;
    ks_sink *sink = NULL;
    int rc = describe(&d, s, &l, mem) ? KS_EINVAL : KS_OK;
    if (!rc && !(sink = ks_host_sink_create(0, d.filter))) rc = KS_ENOMEM;
    if (!rc) rc = ks_sim_launch_coop(s->blocks, s->threads, run_thread, &l, sink, NULL);
    if (!rc) rc = ks_user_write(&d, s->threads, s->blocks, sink, "sim", trace_path);
    ks_host_sink_free(sink);
    if (rc) dprintf(fd, "%s", ks_error_message());
    else dprintf(fd, "%s", PZ_DONE);
    return rc ? PZ_CHILD_TRACE : PZ_CHILD_OK;
}

int pz_run(const pz_spec *s, const char *so, const char *trace_path)
{
    if (s->a.rows * s->a.cols > PZ_MAX_ELEMS || s->b.rows * s->b.cols > PZ_MAX_ELEMS ||
        s->out.rows * s->out.cols > PZ_MAX_ELEMS)
        return ks_fail(KS_EINVAL, "%s: arrays over %d elements", s->name, PZ_MAX_ELEMS);
    int fds[2];
    char why[512] = "";
    if (pipe(fds)) return ks_fail(KS_EINVAL, "cannot start the run: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return ks_fail(KS_EINVAL, "cannot start the run: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        const int code = child(s, so, trace_path, fds[1]);
        fflush(NULL); /* what the body printed, when stdout is a file or a pipe */
        _exit(code);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof why && ((n = read(fds[0], why + got, sizeof why - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
        got += n > 0 ? (size_t)n : 0;
    why[got] = 0;
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return ks_fail(KS_EINVAL, "waiting for the run: %s", strerror(errno));
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return ks_fail(KS_EINVAL, "%s_kernel did not finish in %d s (a loop that never ends? a barrier some "
                       "threads never reach?)", s->name, PZ_TIMEOUT_S);
    if (WIFSIGNALED(status))
        return ks_fail(KS_EINVAL, "%s_kernel crashed (%s): an access through ->data outside an array? "
                       "pz_load / pz_store check the bounds", s->name, strsignal(WTERMSIG(status)));
    switch (WEXITSTATUS(status)) {
    case PZ_CHILD_OK:
        if (!strcmp(why, PZ_DONE)) return KS_OK;
        remove(trace_path); /* whatever it left is no trace of a finished run */
        return ks_fail(KS_EINVAL, "%s_kernel ended the run itself (exit() or _exit() in the body?) before its trace "
                       "was written", s->name);
    case PZ_CHILD_NOFN:
        return ks_fail(KS_EINVAL, "the file has no function %s_kernel (keep the stub's name and signature)",
                       s->name);
    case PZ_CHILD_LOAD:
    case PZ_CHILD_TRACE: return ks_fail(KS_EINVAL, "%s", why);
    default: /* a sanitizer's report ends the process with a status of its own, as does exit() */
        return ks_fail(KS_EINVAL, "%s_kernel crashed (the run ended with status %d: see the report above)", s->name,
                       WEXITSTATUS(status));
    }
}
