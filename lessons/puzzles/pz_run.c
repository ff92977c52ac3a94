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
 * shared with kscope: how far it got and, at the end, the outcome and its one line.
 *
 * The student's code is not trusted (issue 39 N5; docs/puzzles.md, "What the run may
 * do"): the child starts with stdin from /dev/null, no inherited descriptor past stderr,
 * limits on CPU time, data, file size, open files and (not as root) processes, and where
 * the kernel has Landlock, writes allowed only inside the temporary folder and no signal
 * or abstract socket reaching a process outside; the kernel runs with that folder's
 * work/ as its working directory. kscope enforces the wall-clock limits itself and, being
 * a subreaper while the run lasts, ends every process the run left, a daemon included. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
static const char *g_tmpdir;   /* the run's folder (absolute), in the child */

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
    /* the kernel's process starts in the private folder work/ (a relative path it writes
     * lands there); this process goes back, for the source lines the trace quotes */
    char home[4096], work[4200];
    const int moved = getcwd(home, sizeof home) != NULL;
    snprintf(work, sizeof work, "%s/work", g_tmpdir);
    const int in_work = moved && mkdir(work, 0700) == 0 && chdir(work) == 0;
    const int ran = ks_cu_exec_run(&e);
    if (in_work && chdir(home)) {
        ks_fail(KS_EIO, "cannot return to %s: %s", home, strerror(errno));
        goto out;
    }
    if (ran) goto out;
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

/* ---- the child's limits (issue 39 N5) ---- */

/* Landlock (Linux 5.13+), spelled out here so that an older header builds: the ruleset's
 * size tells the kernel which fields we know */
enum {
    LL_FS_WRITE_FILE = 1 << 1,
    LL_FS_REMOVE_DIR = 1 << 4,
    LL_FS_REMOVE_FILE = 1 << 5,
    LL_FS_MAKE_ALL = 0x7f << 6, /* char, dir, reg, sock, fifo, block, sym */
    LL_FS_REFER = 1 << 13,      /* ABI 2 */
    LL_FS_TRUNCATE = 1 << 14,   /* ABI 3 */
    LL_NET_TCP = 3,             /* ABI 4: bind and connect */
    LL_SCOPE_ALL = 3,           /* ABI 6: abstract unix sockets and signals */
    LL_RULE_PATH_BENEATH = 1,
    LL_CREATE_RULESET_VERSION = 1
};
struct ll_ruleset {
    uint64_t fs, net, scoped;
};
struct ll_beneath {
    uint64_t allowed;
    int32_t parent_fd;
} __attribute__((packed));

/* Landlock's ABI version here, 0 where the kernel has none (or it is off) */
int pz_landlock_abi(void)
{
#if defined(__linux__) && defined(SYS_landlock_create_ruleset)
    const long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return v > 0 ? (int)v : 0;
#else
    return 0;
#endif
}

/* Writes only beneath dir (and to /dev/null); no TCP; no signal or abstract socket
 * reaching a process outside this one's descendants (ABI 6). Skipped where the kernel
 * lacks Landlock: the other limits still hold. */
static void confine_writes(const char *dir)
{
#if defined(__linux__) && defined(SYS_landlock_create_ruleset)
    const int abi = pz_landlock_abi();
    if (abi < 1) return;
    struct ll_ruleset rs = {0, 0, 0};
    rs.fs = LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_ALL;
    if (abi >= 2) rs.fs |= LL_FS_REFER;
    if (abi >= 3) rs.fs |= LL_FS_TRUNCATE;
    size_t size = sizeof rs.fs;
    if (abi >= 4) rs.net = LL_NET_TCP, size = 2 * sizeof rs.fs;
    if (abi >= 6) rs.scoped = LL_SCOPE_ALL, size = sizeof rs;
    const int fd = (int)syscall(SYS_landlock_create_ruleset, &rs, size, 0);
    if (fd < 0) return;
    struct ll_beneath in_dir = {rs.fs, open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)};
    struct ll_beneath null = {LL_FS_WRITE_FILE | (abi >= 3 ? LL_FS_TRUNCATE : 0),
                              open("/dev/null", O_PATH | O_CLOEXEC)};
    int ok = in_dir.parent_fd >= 0 && syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &in_dir, 0) == 0;
    if (null.parent_fd >= 0) syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &null, 0);
    ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && syscall(SYS_landlock_restrict_self, fd, 0) == 0;
    (void)ok; /* where it failed the run goes on with the other limits */
    if (in_dir.parent_fd >= 0) close(in_dir.parent_fd);
    if (null.parent_fd >= 0) close(null.parent_fd);
    close(fd);
#else
    (void)dir;
#endif
}

/* the processes of this real user (for RLIMIT_NPROC, which counts them all) */
static long user_processes(void)
{
    DIR *d = opendir("/proc");
    if (!d) return -1;
    long n = 0;
    struct dirent *e;
    struct stat st;
    char path[300];
    while ((e = readdir(d)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9') {
            snprintf(path, sizeof path, "/proc/%s", e->d_name);
            if (stat(path, &st) == 0 && st.st_uid == getuid()) ++n;
        }
    closedir(d);
    return n;
}

#if defined(__SANITIZE_ADDRESS__)
#define PZ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define PZ_SANITIZED 1
#endif
#endif

static void set_limit(int what, rlim_t soft, rlim_t hard)
{
    struct rlimit old, l = {soft, hard};
    if (getrlimit(what, &old) == 0 && old.rlim_max != RLIM_INFINITY) {
        if (l.rlim_max > old.rlim_max) l.rlim_max = old.rlim_max;
        if (l.rlim_cur > l.rlim_max) l.rlim_cur = l.rlim_max;
    }
    setrlimit(what, &l);
}

/* In the child, before anything of the student's is compiled or run. */
static void confine(const char *tmpdir, int compile_s)
{
    /* stdin from /dev/null; nothing inherited past stderr (kscope's staged trace, a
     * caller's descriptors) */
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0 && null != STDIN_FILENO) dup2(null, STDIN_FILENO), close(null);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
    {
        struct rlimit nf;
        const long top = getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur < 65536 ? (long)nf.rlim_cur : 65536;
        for (long fd = 3; fd < top; ++fd) close((int)fd);
    }
    /* each process: CPU seconds past every wall limit (the wall limits stop it first), no
     * core file, files of at most PZ_FILE_BYTES, PZ_OPEN_FILES descriptors, PZ_DATA_BYTES
     * of heap (the address space is not limited: the run reserves gigabytes of guard gaps
     * between its arrays; nor under a sanitizer, whose shadow memory counts as data), and
     * with the user's other processes PZ_PROCESSES more (the kernel ignores this for root) */
    const rlim_t cpu = (rlim_t)compile_s + PZ_RUN_LIMIT_S + 10;
    set_limit(RLIMIT_CPU, cpu, cpu + 5);
    set_limit(RLIMIT_CORE, 0, 0);
    set_limit(RLIMIT_FSIZE, PZ_FILE_BYTES, PZ_FILE_BYTES);
    set_limit(RLIMIT_NOFILE, PZ_OPEN_FILES, PZ_OPEN_FILES);
#ifndef PZ_SANITIZED
    set_limit(RLIMIT_DATA, PZ_DATA_BYTES, PZ_DATA_BYTES);
#endif
    const long procs = getuid() != 0 ? user_processes() : -1;
    if (procs > 0) set_limit(RLIMIT_NPROC, (rlim_t)procs + PZ_PROCESSES, (rlim_t)procs + PZ_PROCESSES);
    confine_writes(tmpdir);
}

/* ---- the parent: every process the run made ends with it ---- */

/* Kills, and reaps, every child kscope has: the run's leader, and what the subreaper
 * setting brought back (a daemon's setsid() leaves the run's group, not kscope's tree).
 * kscope puzzle has no other children. Until none is left, at most 10 s. */
static void end_all(pid_t group)
{
    const pid_t me = getpid();
    kill(-group, SIGKILL);
    const struct timespec ms = {0, 1000 * 1000};
    for (int round = 0; round < 10000; ++round) {
        int st, left = 0;
        while (waitpid(-1, &st, WNOHANG) > 0) {}
        DIR *d = opendir("/proc");
        if (!d) break;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
            char path[300], buf[512];
            snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
            const int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            const ssize_t n = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (n <= 0) continue;
            buf[n] = 0;
            const char *end = strrchr(buf, ')'); /* the name may hold anything */
            char state;
            long ppid;
            if (end && sscanf(end + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)me) {
                const pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
                kill(pid, SIGKILL);
                kill(-pid, SIGKILL); /* what it may have made in a group of its own */
                ++left;
            }
        }
        closedir(d);
        if (!left) break;
        nanosleep(&ms, NULL);
    }
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

int pz_run(const pz_spec *s, const char *src, const char *tmpdir, const char *trace_path)
{
    pz_report *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED) return ks_fail(KS_ENOMEM, "cannot start the run: %s", strerror(errno)), PZ_ERROR;
    memset(r, 0, sizeof *r);
    const int limit = compile_limit();
    fflush(stdout);
    fflush(stderr);
    /* a subreaper while the run lasts: what leaves the run's tree comes back to kscope */
    int was_reaper = 0;
    prctl(PR_GET_CHILD_SUBREAPER, &was_reaper, 0, 0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int err = errno;
        prctl(PR_SET_CHILD_SUBREAPER, was_reaper, 0, 0, 0);
        munmap(r, sizeof *r);
        return ks_fail(KS_EINVAL, "cannot start the run: %s", strerror(err)), PZ_ERROR;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(99); /* kscope died before the line above */
        const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
        for (int k = 0; k < 3; ++k) signal(sigs[k], SIG_DFL);
        confine(tmpdir, limit);
        if (setenv("TMPDIR", tmpdir, 1)) _exit(99);
        g_tmpdir = tmpdir;
        r->outcome = child(s, src, trace_path, r);
        r->phase = PZ_PH_DONE;
        fflush(NULL); /* what the kernel printed, when stdout is a file or a pipe */
        _exit(0);
    }
    setpgid(pid, pid);
    g_child = pid;
    const double t0 = now_s();
    double run_from = 0;
    int lost = 0, late = 0; /* late: 1 compiling, 2 running */
    const struct timespec tick = {0, 5 * 1000 * 1000};
    for (;;) {
        /* ended? (not reaped: its group id stays the run's until end_all) */
        siginfo_t si;
        memset(&si, 0, sizeof si);
        const int w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if (w == 0 && si.si_pid == pid) break;
        if (w < 0 && errno != EINTR) {
            lost = errno;
            break;
        }
        /* the wall-clock limits are kscope's: the run's own alarms and signals count for
         * nothing */
        const double t = now_s();
        if (r->phase >= PZ_PH_RUN && !run_from) run_from = t;
        const int compiling = r->phase < PZ_PH_RUN;
        if (compiling && t - t0 > limit) late = 1;
        if (!compiling && t - run_from > PZ_RUN_LIMIT_S + 30) late = 2;
        if (late) break;
        nanosleep(&tick, NULL);
    }
    int status = 0;
    kill(-pid, SIGKILL); /* the whole group, ended or not */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    end_all(pid);
    prctl(PR_SET_CHILD_SUBREAPER, was_reaper, 0, 0, 0);
    int outcome = PZ_ERROR;
    if (lost) {
        ks_fail(KS_EINVAL, "lost the run: %s", strerror(lost));
    } else if (late == 1) {
        ks_fail(KS_EINVAL, "%s: the compiler did not finish in %d s (KSCOPE_CC_TIMEOUT sets the limit)", src, limit);
    } else if (late == 2) {
        ks_fail(KS_EINVAL, "%s: the run did not finish", src);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->phase == PZ_PH_DONE) {
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
