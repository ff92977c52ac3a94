/* cmd_record.c - kscope record: run an unmodified CUDA program with the recorder
 * (libkscope_record.so, record/record_inject.c) injected through CUDA_INJECTION64_PATH,
 * and report the traces it wrote. The program's output is its own and its exit status is
 * passed through; kscope's own failures exit 2 with one line. docs/record.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../trace/ks_file.h"
#include "cli.h"

#define CTX "record"

static void usage(FILE *out)
{
    fprintf(out, "usage: kscope record [--kernel REGEX] [--launch K|all] [--out DIR] [--filter block=A:B,thread=A:B]\n"
                 "                     [--max-events N] [--shared-accesses] [--compress] [--fsync]\n"
                 "                     -- COMMAND [ARGS...]\n\n"
                 "Runs COMMAND (a CUDA program, or python script.py with PyTorch) unmodified, with KernelScope's\n"
                 "recorder injected through NVIDIA's Compute Sanitizer API, and writes DIR/NNNN-KERNEL.kst for\n"
                 "every launch it records: every global load, store and atomic of every thread, with its value,\n"
                 "size, source line (when built with -lineinfo) and the buffer it falls in. The traces read with\n"
                 "info, step, check, view, diff, memory and export.\n\n"
                 "  --kernel REGEX   record launches whose demangled kernel name matches (extended regex);\n"
                 "                   default: every launch\n"
                 "  --launch K|all   only the K-th matching launch (from 0), or all of them (default)\n"
                 "  --out DIR        where the traces go (default kscope-record; made if missing)\n"
                 "  --filter F       record only blocks A..B-1 (block=A:B) and/or global threads A..B-1\n"
                 "                   (thread=A:B), linear ids (x fastest)\n"
                 "  --max-events N   record slots a launch has on the GPU (default 8388608, 32 bytes each;\n"
                 "                   threads claim 8 at a time when a quarter of N covers 7 a thread, so at\n"
                 "                   least 3/4 N are kept); what does not fit is dropped and counted in the\n"
                 "                   trace (a launch cannot be rerun)\n"
                 "  --shared-accesses  also every shared-memory load, store and atomic (tensor 'shared': the\n"
                 "                   block's shared window in 4-byte words) and every __syncthreads(), so\n"
                 "                   kscope check finds shared-memory races on the GPU's own run\n"
                 "  --compress       the traces' chunks compressed with zstd (smaller files; each chunk\n"
                 "                   is decompressed as it is read)\n"
                 "  --fsync          sync each trace to disk before it is renamed into place (5-20 ms a\n"
                 "                   launch); without it a trace is still whole or absent if the program\n"
                 "                   crashes, but a power loss may cut it short\n\n"
                 "Python programs name tensors for the trace with the kscope_record module (on PYTHONPATH\n"
                 "under kscope record):  with kscope_record.names(input=x, output=y): ...\n"
                 "Exit: the program's own status when it fails; 2 when kscope cannot record (no command, program\n"
                 "not found, recorder library missing, no Sanitizer API, no launch matched, a trace not written).\n");
}

/* the folder of this executable */
static int exe_dir(char *out, size_t n)
{
    char self[PATH_MAX];
    const ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) return -1;
    self[k] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = 0;
    snprintf(out, n, "%s", self);
    return 0;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir + tail into out (n bytes); -1 when it does not fit */
static int join(char *out, size_t n, const char *dir, const char *tail)
{
    const size_t a = strlen(dir), b = strlen(tail);
    if (a + b + 1 > n) return -1;
    memcpy(out, dir, a);
    memcpy(out + a, tail, b + 1);
    return 0;
}

/* libkscope_record.so: $KS_RECORD_LIB, beside kscope (a build tree), or PREFIX/lib/kscope;
 * and the folder of kscope_record.py (the same two places) into py, or "" */
static int find_lib(char *lib, char *py)
{
    const char *env = getenv("KS_RECORD_LIB");
    char dir[PATH_MAX], cand[PATH_MAX];
    py[0] = 0;
    if (exe_dir(dir, sizeof dir) == 0) {
        if (!join(cand, sizeof cand, dir, "/kscope_record.py") && is_file(cand)) join(py, PATH_MAX, dir, "");
        else if (!join(cand, sizeof cand, dir, "/../share/kscope/python/kscope_record.py") && is_file(cand))
            join(py, PATH_MAX, dir, "/../share/kscope/python");
        if (!env) {
            if (!join(cand, sizeof cand, dir, "/libkscope_record.so") && is_file(cand) && realpath(cand, lib)) return 0;
            if (!join(cand, sizeof cand, dir, "/../lib/kscope/libkscope_record.so") && is_file(cand) &&
                realpath(cand, lib))
                return 0;
        }
    }
    if (env && is_file(env) && realpath(env, lib)) return 0;
    return -1;
}

int ks_record_paths_find(ks_record_paths *p)
{
    if (find_lib(p->lib, p->pydir)) return -1;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", p->lib);
    *strrchr(dir, '/') = 0;
    if (join(p->patches, sizeof p->patches, dir, "/kscope_record_patches.fatbin") || !is_file(p->patches)) return -2;
    return 0;
}

/* the environment of a recorded program (its child process, before CUDA starts) */
static void set_env(const ks_record_paths *p, const char *out, const char *status)
{
    setenv("CUDA_INJECTION64_PATH", p->lib, 1);
    setenv("KS_RECORD_OUT", out, 1);
    setenv("KS_RECORD_STATUS", status, 1);
    setenv("KS_RECORD_PATCHES", p->patches, 1);
    setenv("KS_RECORD_LIB", p->lib, 1); /* for kscope_record.py */
    setenv("KS_RECORD_LAUNCH", p->launch[0] ? p->launch : "all", 1);
    if (p->shared) setenv("KS_RECORD_SHARED", "1", 1);
    else unsetenv("KS_RECORD_SHARED");
    if (p->zstd) setenv("KS_RECORD_ZSTD", "1", 1);
    else unsetenv("KS_RECORD_ZSTD");
    if (p->fsync) setenv("KS_RECORD_FSYNC", "1", 1);
    else unsetenv("KS_RECORD_FSYNC");
    const struct {
        const char *name, *value;
    } opt[] = {{"KS_RECORD_KERNEL", p->kernel},
               {"KS_RECORD_BLOCKS", p->blocks},
               {"KS_RECORD_THREADS", p->threads},
               {"KS_RECORD_MAX_EVENTS", p->max_events}};
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; ++i)
        if (opt[i].value[0]) setenv(opt[i].name, opt[i].value, 1);
        else unsetenv(opt[i].name);
    /* modules load whole, so every kernel is patched before its first launch */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    if (p->pydir[0]) {
        const char *old = getenv("PYTHONPATH");
        const size_t n = strlen(p->pydir) + (old ? strlen(old) : 0) + 2;
        char *pp = malloc(n);
        if (pp) {
            snprintf(pp, n, "%s%s%s", p->pydir, old && *old ? ":" : "", old && *old ? old : "");
            setenv("PYTHONPATH", pp, 1);
            free(pp);
        }
    }
}

void ks_record_child_env(void *ctx, const char *out, const char *status) { set_env(ctx, out, status); }

static int parse_filter(const char *s, char *blocks, char *threads, size_t n)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) return -1;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        if (!eq) return -1;
        *eq = 0;
        char *end;
        errno = 0;
        const unsigned long long a = strtoull(eq + 1, &end, 10);
        if (end == eq + 1 || *end != ':' || eq[1] == '-') return -1;
        const char *hs = end + 1;
        const unsigned long long b = strtoull(hs, &end, 10);
        if (end == hs || *end || *hs == '-' || errno || b <= a) return -1;
        if (!strcmp(part, "block")) snprintf(blocks, n, "%llu:%llu", a, b);
        else if (!strcmp(part, "thread")) snprintf(threads, n, "%llu:%llu", a, b);
        else return -1;
    }
    return 0;
}

static volatile sig_atomic_t g_child = 0;
static void forward(int sig)
{
    if (g_child > 0) kill((pid_t)g_child, sig);
}

typedef struct summary {
    int started, traces, errors;
    char seen[2048];
} summary;

/* the recorder's status lines: what it wrote, what it saw, what failed */
static void report(const char *status_path, summary *s)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(status_path, "r");
    if (!f) return;
    char line[1400];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "start ", 6)) s->started = 1;
        else if (!strncmp(line, "trace\t", 6)) { /* trace RECORDS DROPPED PATH KERNEL, tab separated */
            char *f[5] = {line + 6, NULL, NULL, NULL, NULL};
            for (int k = 1; k < 5 && f[k - 1]; ++k) {
                char *tab = strchr(f[k - 1], '\t');
                if (tab) *tab = 0, f[k] = tab + 1;
            }
            if (f[3]) {
                const unsigned long long recs = strtoull(f[0], NULL, 10), dropped = strtoull(f[1], NULL, 10);
                s->traces++;
                fprintf(stderr, "kscope record: %s: %llu accesses%s", f[2], recs, dropped ? "" : "\n");
                if (dropped) fprintf(stderr, ", %llu more dropped (raise --max-events or --filter)\n", dropped);
            }
        } else if (!strncmp(line, "seen ", 5)) {
            const size_t u = strlen(s->seen);
            if (u + strlen(line + 5) + 3 < sizeof s->seen)
                snprintf(s->seen + u, sizeof s->seen - u, "%s%s", u ? ", " : "", line + 5);
        } else if (!strncmp(line, "error ", 6)) {
            s->errors++;
            fprintf(stderr, "kscope: record: %s\n", line + 6);
        } else if (!strncmp(line, "note ", 5)) fprintf(stderr, "kscope record: %s\n", line + 5);
    }
    fclose(f);
}

int ks_cmd_record(int argc, char **argv)
{
    const char *kernel = NULL, *launch = "all", *out = "kscope-record", *filter = NULL, *max_events = NULL;
    int i = 1, cmd = -1, shared = 0, zstd = 0, fsync = 0;
    for (; i < argc; ++i) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (!strcmp(a, "--")) {
            cmd = i + 1;
            break;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return KS_EXIT_OK;
        }
        if (!strcmp(a, "--shared-accesses")) {
            shared = 1;
            continue;
        }
        if (!strcmp(a, "--compress")) {
            zstd = 1;
            continue;
        }
        if (!strcmp(a, "--fsync")) {
            fsync = 1;
            continue;
        }
        if ((m = ks_flag(argc, argv, &i, "kernel", &v)) || (m = ks_flag(argc, argv, &i, "launch", &v)) ||
            (m = ks_flag(argc, argv, &i, "out", &v)) || (m = ks_flag(argc, argv, &i, "filter", &v)) ||
            (m = ks_flag(argc, argv, &i, "max-events", &v))) {
            if (m < 0) return ks_cli_error(CTX, "%s needs a value", a);
            if (!strncmp(a, "--kernel", 8)) kernel = v;
            else if (!strncmp(a, "--launch", 8)) launch = v;
            else if (!strncmp(a, "--out", 5)) out = v;
            else if (!strncmp(a, "--filter", 8)) filter = v;
            else max_events = v;
            continue;
        }
        if (a[0] == '-') return ks_cli_error(CTX, "unknown flag %s (kscope record --help)", a);
        cmd = i; /* a command without "--" */
        break;
    }
    if (cmd < 0 || cmd >= argc)
        return ks_cli_error(CTX, "no command to run (kscope record [FLAGS] -- COMMAND ARGS...)");
    if (kernel) {
        regex_t re;
        if (regcomp(&re, kernel, REG_EXTENDED | REG_NOSUB)) return ks_cli_error(CTX, "bad --kernel regex: %s", kernel);
        regfree(&re);
    }
    if (strcmp(launch, "all")) {
        char *end;
        errno = 0;
        const long long k = strtoll(launch, &end, 10);
        if (!*launch || *end || errno || k < 0)
            return ks_cli_error(CTX, "--launch must be all or a number >= 0: %s", launch);
    }
    char blocks[64] = "", threads[64] = "";
    if (filter && parse_filter(filter, blocks, threads, sizeof blocks))
        return ks_cli_error(CTX, "bad --filter %s (block=A:B and/or thread=A:B, A < B, comma separated)", filter);
    if (max_events) {
        char *end;
        errno = 0;
        const long long n = strtoll(max_events, &end, 10);
        if (!*max_events || *end || errno || n < 1024 || n > (1ll << 32))
            return ks_cli_error(CTX, "--max-events must be a number from 1024 to 4294967296: %s", max_events);
    }
    static ks_record_paths rp;
    char *const lib = rp.lib;
    if (find_lib(rp.lib, rp.pydir))
        return ks_cli_error(CTX, "the recorder library libkscope_record.so is not built or installed (it needs the "
                                 "Compute Sanitizer API at configure time: docs/record.md)");
    if (ks_record_paths_find(&rp)) return ks_cli_error(CTX, "%s: missing (the recorder's device code)", rp.patches);
    snprintf(rp.kernel, sizeof rp.kernel, "%s", kernel ? kernel : "");
    snprintf(rp.launch, sizeof rp.launch, "%s", launch);
    snprintf(rp.blocks, sizeof rp.blocks, "%s", blocks);
    snprintf(rp.threads, sizeof rp.threads, "%s", threads);
    snprintf(rp.max_events, sizeof rp.max_events, "%s", max_events ? max_events : "");
    rp.shared = shared;
    rp.zstd = zstd;
    rp.fsync = fsync;
    if (ks_out_dir_check(out)) return ks_cli_error(CTX, "%s", ks_error_message());
    const int made = mkdir(out, 0777) == 0;
    if (!made && errno != EEXIST) return ks_cli_error(CTX, "%s: cannot create directory: %s", out, strerror(errno));
    char outabs[PATH_MAX];
    if (!realpath(out, outabs)) return ks_cli_error(CTX, "%s: %s", out, strerror(errno));
    char status_path[PATH_MAX + 64];
    snprintf(status_path, sizeof status_path, "%s/.kscope-record-XXXXXX", outabs);
    const int sfd = mkstemp(status_path);
    if (sfd < 0) return ks_cli_error(CTX, "%s: cannot write: %s", outabs, strerror(errno));
    close(sfd);

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC)) {
        unlink(status_path);
        return ks_cli_error(CTX, "pipe: %s", strerror(errno));
    }
    /* as system() does: the terminal's Ctrl-C and Ctrl-\ reach the program itself (its
     * process group), so kscope ignores them while it waits; SIGTERM and SIGHUP sent to
     * kscope are passed on. They are blocked across the fork so none is lost. */
    struct sigaction ign, fwd, old_int, old_quit, old_term, old_hup;
    memset(&ign, 0, sizeof ign);
    memset(&fwd, 0, sizeof fwd);
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward;
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        close(pipefd[0]);
        set_env(&rp, outabs, status_path);
        execvp(argv[cmd], argv + cmd);
        const int e = errno;
        if (write(pipefd[1], &e, sizeof e) != (ssize_t)sizeof e) _exit(127);
        _exit(127);
    }
    if (pid > 0) g_child = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (pid < 0) {
        const int e = errno;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        unlink(status_path);
        if (made) rmdir(outabs);
        return ks_cli_error(CTX, "fork: %s", strerror(e));
    }
    close(pipefd[1]);
    int exec_errno = 0;
    ssize_t got;
    do got = read(pipefd[0], &exec_errno, sizeof exec_errno);
    while (got < 0 && errno == EINTR);
    close(pipefd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (got == (ssize_t)sizeof exec_errno) {
        unlink(status_path);
        if (made) rmdir(outabs);
        return ks_cli_error(CTX, "%s: cannot run: %s", argv[cmd], strerror(exec_errno));
    }
    summary s;
    report(status_path, &s);
    unlink(status_path);
    if (made && !s.traces) rmdir(outabs); /* nothing recorded: no empty folder stays */
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "kscope: record: %s was killed by signal %d (%s); %d trace%s written before it\n", argv[cmd],
                WTERMSIG(st), strsignal(WTERMSIG(st)), s.traces, s.traces == 1 ? "" : "s");
        return 128 + WTERMSIG(st);
    }
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : KS_EXIT_ERROR;
    if (code != 0) {
        fprintf(stderr, "kscope record: %s exited with status %d; %d trace%s written\n", argv[cmd], code, s.traces,
                s.traces == 1 ? "" : "s");
        return code;
    }
    if (!s.started)
        return ks_cli_error(CTX,
                            "the recorder never started: %s made no CUDA call, or the CUDA driver could not "
                            "load %s",
                            argv[cmd], lib);
    if (s.errors) return KS_EXIT_ERROR;
    if (!s.traces) {
        if (kernel)
            return ks_cli_error(CTX, "no launch matched --kernel %s (launched: %s)", kernel,
                                s.seen[0] ? s.seen : "none");
        if (strcmp(launch, "all"))
            return ks_cli_error(CTX, "no launch %s (launched: %s)", launch, s.seen[0] ? s.seen : "none");
        return ks_cli_error(CTX, "%s launched no kernel", argv[cmd]);
    }
    fprintf(stderr, "kscope record: %d trace%s in %s\n", s.traces, s.traces == 1 ? "" : "s", out);
    return KS_EXIT_OK;
}
