/* cu_build.c - finds clang, preprocesses, rewrites, adds the entry point and compiles a
 * .cu file into a shared object for the runtime (cu_build.h). */
#define _GNU_SOURCE
#include "cu_build.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/ks_error.h"

/* ---- the temporary folder goes on SIGINT, SIGTERM, SIGHUP (its files are known) ---- */
static const char *const k_files[] = {"kscope_cuda.h",
                                      "cuda_runtime.h",
                                      "cuda.h",
                                      "cuda_runtime_api.h",
                                      "device_launch_parameters.h",
                                      "device_functions.h",
                                      "vector_types.h",
                                      "sm_60_atomic_functions.h",
                                      "math_constants.h",
                                      "cooperative_groups.h",
                                      "cuda_fp16.h",
                                      "cuda_bf16.h",
                                      "pre.ii",
                                      "kernel.ii",
                                      "kernel.so",
                                      "compile.err"};
#define NFILES (sizeof k_files / sizeof k_files[0])
static char g_paths[NFILES + 1][4400]; /* the files, then the folder: made before a signal can need them */
static volatile sig_atomic_t g_armed;
static volatile pid_t g_compiler;

/* Stops a compiler child: SIGTERM first, so clang removes the temporaries it made in
 * $TMPDIR (LLVM deletes its registered files on that signal; SIGKILL left a kernel-*.o
 * behind), then SIGKILL if it has not gone within a second. Async-signal-safe. */
static void stop_child(pid_t pid)
{
    int st;
    kill(pid, SIGTERM);
    for (int i = 0; i < 100; ++i) {
        if (waitpid(pid, &st, WNOHANG) == pid) return;
        const struct timespec ten_ms = {0, 10000000};
        nanosleep(&ten_ms, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
}

static void on_stop(int sig)
{
    const int saved = errno;
    if (g_compiler > 0) stop_child(g_compiler);
    errno = saved;
    if (g_armed) {
        for (size_t i = 0; i < NFILES; ++i) unlink(g_paths[i]); /* async-signal-safe */
        if (rmdir(g_paths[NFILES]) != 0) {
            /* the compiler's own temporaries are in it too (its TMPDIR): fork and exec are
             * async-signal-safe, a directory walk here is not */
            const pid_t rm = fork();
            if (rm == 0) {
                execl("/bin/rm", "rm", "-rf", "--", g_paths[NFILES], (char *)NULL);
                _exit(127);
            }
            int st;
            if (rm > 0)
                while (waitpid(rm, &st, 0) < 0 && errno == EINTR) {}
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_cleanup(const char *dir)
{
    for (size_t i = 0; i < NFILES; ++i) snprintf(g_paths[i], sizeof g_paths[i], "%s/%s", dir, k_files[i]);
    snprintf(g_paths[NFILES], sizeof g_paths[NFILES], "%s", dir);
    g_armed = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* seconds a compiler step may take: $KSCOPE_CC_TIMEOUT, default 60 */
static double compile_limit(void)
{
    const char *v = getenv("KSCOPE_CC_TIMEOUT");
    const double s = v ? atof(v) : 0;
    return s > 0 ? s : 60.0;
}

/* runs argv with stdout to `out` (or, out NULL, to the descriptor out_fd when >= 0) and
 * stderr to `err` (NULL: ours, or /dev/null when quiet_err); returns its exit status, -1
 * if it did not run, -2 past the time limit */
static int run_tool_fd(char *const *argv, const char *out, int out_fd, const char *err, int quiet_err)
{
    fflush(stdout), fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* the compiler's temporaries (clang's kernel-*.o) go into kscope's own folder,
         * which every exit removes, a signal's too */
        if (g_armed && setenv("TMPDIR", g_paths[NFILES], 1) != 0) _exit(127);
        if (!out && out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0) _exit(127);
        if (out && !freopen(out, "w", stdout)) _exit(127);
        if (err ? !freopen(err, "w", stderr) : quiet_err && !freopen("/dev/null", "w", stderr)) _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    g_compiler = pid;
    const double limit = compile_limit();
    int st = 0;
    for (double waited = 0;; waited += 0.01) {
        const pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            g_compiler = 0;
            return -1;
        }
        if (waited > limit) {
            stop_child(pid);
            g_compiler = 0;
            return -2;
        }
        usleep(10000);
    }
    g_compiler = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_tool(char *const *argv, const char *out, const char *err, int quiet_err)
{
    return run_tool_fd(argv, out, -1, err, quiet_err);
}

static int spawn(char *const *argv, const char *out, int quiet_err) { return run_tool(argv, out, NULL, quiet_err); }

/* 1 when every "error:" line of clang's output is about kscope's appended entry point */
static int only_entry_errors(const char *diag)
{
    int entry = 0, other = 0;
    for (const char *line = diag; line && *line;) {
        const char *nl = strchr(line, '\n');
        const size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *err = strstr(line, ": error: ");
        if (err && (size_t)(err - line) < len) {
            if (!strncmp(line, "<kscope entry>", 14)) entry++;
            else other++;
        }
        line = nl ? nl + 1 : NULL;
    }
    return entry && !other;
}

static int spawn_err(char *const *argv, const char *errs) { return run_tool(argv, NULL, errs, 0); }

/* clang's major version from its first line of `--version`, read through a pipe (a
 * temporary file here was left behind when kscope was stopped between making and
 * removing it); 0 when it is not clang or did not run */
static int clang_major(const char *exe)
{
    int p[2];
    if (pipe(p) != 0) return 0;
    char *argv[] = {(char *)exe, "--version", NULL};
    int major = 0;
    const int st = run_tool_fd(argv, NULL, p[1], NULL, 1); /* its output fits the pipe's buffer */
    close(p[1]);
    char line[256];
    ssize_t got = st == 0 ? read(p[0], line, sizeof line - 1) : -1;
    close(p[0]);
    if (got > 0) {
        line[got] = '\0';
        const char *v = strstr(line, "clang version ");
        if (v) major = atoi(v + 14);
    }
    return major;
}

int ks_cu_find_clang(char *out, size_t n)
{
    const char *env = getenv("KSCOPE_CLANG");
    if (env && *env) {
        const int m = clang_major(env);
        if (m >= 16) return snprintf(out, n, "%s", env), KS_OK;
        return ks_fail(KS_ENOENT, "KSCOPE_CLANG=%s is not clang 16 or newer%s", env, m ? "" : " (it did not run)");
    }
    static const char *const names[] = {"clang++-20", "clang++-19", "clang++-18",
                                        "clang++-17", "clang++-16", "clang++"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (clang_major(names[i]) >= 16) return snprintf(out, n, "%s", names[i]), KS_OK;
    return ks_fail(
        KS_ENOENT,
        "no clang 16 or newer found: install the Debian package clang-16 (apt-get install clang-16) or set KSCOPE_CLANG");
}

static int write_text(const char *dir, const char *name, const char *text)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return ks_fail(KS_EIO, "%s: cannot write: %s", path, strerror(errno));
    const int bad = fputs(text, f) < 0;
    if (fclose(f) || bad) return ks_fail(KS_EIO, "%s: cannot write", path);
    return KS_OK;
}

/* the headers a .cu file may include, all answered by kscope_cuda.h (or refused) */
static int write_headers(const char *dir)
{
    static const char *const same[] = {
        "cuda_runtime.h",     "cuda.h",         "cuda_runtime_api.h",      "device_launch_parameters.h",
        "device_functions.h", "vector_types.h", "sm_60_atomic_functions.h"};
    int rc = write_text(dir, "kscope_cuda.h", (const char *)ks_cu_header_bytes);
    for (size_t i = 0; i < sizeof same / sizeof same[0] && !rc; ++i)
        rc = write_text(dir, same[i], "#include \"kscope_cuda.h\"\n");
    if (!rc)
        rc = write_text(dir, "math_constants.h",
                        "#define CUDART_PI_F 3.141592654f\n#define CUDART_PI 3.1415926535897931e+0\n"
                        "#define CUDART_INF_F __builtin_huge_valf()\n#define CUDART_NAN_F __builtin_nanf(\"\")\n");
    if (!rc)
        rc = write_text(dir, "cooperative_groups.h",
                        "#error \"kscope: cooperative groups are not supported by the simulator\"\n");
    if (!rc)
        rc = write_text(dir, "cuda_fp16.h",
                        "#error \"kscope: half precision (cuda_fp16.h) is not supported by the simulator\"\n");
    if (!rc)
        rc = write_text(dir, "cuda_bf16.h",
                        "#error \"kscope: bfloat16 (cuda_bf16.h) is not supported by the simulator\"\n");
    return rc;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = 0, cap = 1 << 16;
    char *s = malloc(cap);
    size_t got;
    while (s && (got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *g = realloc(s, cap *= 2);
            if (!g) free(s);
            s = g;
        }
    }
    fclose(f);
    if (s) s[n] = 0;
    return s;
}

/* the entry point: the kernel's parameter types as cu_rt.h codes, and a caller that
 * unpacks an array of argument pointers; neither is instrumented (their loads are of
 * kscope's memory, not the kernel's) */
static const char *const k_entry =
    "\n# 1 \"<kscope entry>\"\n" KS_CU_ENTRY_TYPES

    "static constexpr auto ks_cu_the_kernel = &%s;\n"
    "using ks_cu_sig_t = ks_cu_entry_ns::sig<typename std::remove_const<decltype(ks_cu_the_kernel)>::type>;\n"
    "extern \"C\" const int ks_cu_nparams = ks_cu_sig_t::n;\n"
    "extern \"C\" const unsigned char *const ks_cu_param_types = ks_cu_sig_t::types;\n"
    "extern \"C\" __attribute__((no_sanitize(\"coverage\"))) void ks_cu_entry(void **a) { ks_cu_sig_t::run(ks_cu_the_kernel, a); }\n";

static int valid_expr(const char *s)
{
    if (!*s || strlen(s) >= 200 || !(isalpha((unsigned char)*s) || *s == '_' || *s == ':')) return 0;
    for (; *s; ++s)
        if (!isalnum((unsigned char)*s) && !strchr("_:<>, *&", *s)) return 0;
    return 1;
}

static int rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    return rmdir(dir);
}

void ks_cu_build_free(ks_cu_build *b)
{
    if (b->dir[0]) rm_tree(b->dir);
    b->dir[0] = 0;
    g_armed = 0;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP}; /* the next writer (ks_file.c) installs its own */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == on_stop) signal(sigs[i], SIG_DFL);
    }
}

static int list_kernels(char *buf, size_t n, const ks_cu_kernel *k, int nk)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < nk && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", k[i].name);
    return nk;
}

int ks_cu_build_run(ks_cu_build *b, const ks_cu_build_opts *o)
{
    char pre[4400], full[4400], msg[600];
    char *text = NULL, *out = NULL;
    int rc;
    if (!valid_expr(o->kernel))
        return ks_fail(KS_EINVAL,
                       "--kernel '%s' is not a function name (a template as C++ writes it: 'scale<float, 4>')",
                       o->kernel);
    snprintf(b->expr, sizeof b->expr, "%s", o->kernel);
    snprintf(b->opts_file, sizeof b->opts_file, "%s", o->file);
    if ((rc = ks_cu_find_clang(b->clang, sizeof b->clang))) return rc;
    const char *tmp = getenv("TMPDIR");
    snprintf(b->dir, sizeof b->dir, "%s/kscope-cu.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(b->dir)) {
        b->dir[0] = 0;
        return ks_fail(KS_EIO, "cannot create a temporary folder: %s", strerror(errno));
    }
    arm_cleanup(b->dir);
    if ((rc = write_headers(b->dir))) goto fail;
    /* 1. preprocess, kscope_cuda.h first */
    snprintf(pre, sizeof pre, "%s/pre.ii", b->dir);
    snprintf(full, sizeof full, "%s/kscope_cuda.h", b->dir);
    {
        char *argv[16 + 2 * 64 + 8];
        int a = 0;
        argv[a++] = b->clang, argv[a++] = "-E", argv[a++] = "-x", argv[a++] = "c++", argv[a++] = "-std=c++17";
        argv[a++] = "-I", argv[a++] = b->dir, argv[a++] = "-include", argv[a++] = full;
        for (int i = 0; i < o->ndefines; ++i) argv[a++] = "-D", argv[a++] = (char *)o->defines[i];
        for (int i = 0; i < o->nincludes; ++i) argv[a++] = "-I", argv[a++] = (char *)o->includes[i];
        argv[a++] = (char *)o->file, argv[a++] = "-o", argv[a++] = pre, argv[a] = NULL;
        const int st = spawn(argv, NULL, 0);
        if (st == -2) {
            rc = ks_fail(KS_EINVAL, "%s: the preprocessor ran past %g s (KSCOPE_CC_TIMEOUT)", o->file, compile_limit());
            goto fail;
        }
        if (st != 0) {
            rc = ks_fail(KS_EINVAL, "%s: the preprocessor failed (%s; its messages are above)", o->file, b->clang);
            goto fail;
        }
    }
    if (!(text = read_all(pre))) {
        rc = ks_fail(KS_EIO, "%s: cannot read", pre);
        goto fail;
    }
    /* 2. the kernel */
    {
        ks_cu_kernel ks[64];
        const int nk = ks_cu_scan_kernels(text, ks, 64);
        char base[200], names[400];
        snprintf(base, sizeof base, "%s", o->kernel);
        base[strcspn(base, "<")] = 0;
        char *colon = strrchr(base, ':');
        const char *bare = colon ? colon + 1 : base;
        for (size_t k = strlen(bare); k && isspace((unsigned char)bare[k - 1]); --k) ((char *)bare)[k - 1] = 0;
        int found = -1;
        for (int i = 0; i < nk; ++i)
            if (!strcmp(ks[i].name, bare)) found = i;
        if (found < 0) {
            list_kernels(names, sizeof names, ks, nk);
            rc = ks_fail(KS_EINVAL, "%s: no __global__ function '%s' (%s%s)", o->file, bare,
                         nk ? "the file's kernels: " : "the file has no __global__ function", names);
            goto fail;
        }
        if (ks[found].bad[0]) {
            rc = ks_fail(KS_EINVAL, "%s: %s", o->file, ks[found].bad);
            goto fail;
        }
        if (ks[found].is_template && !strchr(o->kernel, '<')) {
            rc = ks_fail(
                KS_EINVAL,
                "%s: %s is a template: name an instantiation, as C++ writes it (--kernel '%s<float>', with its own arguments)",
                o->file, bare, bare);
            goto fail;
        }
        b->kernel = ks[found];
    }
    /* 3. rewrite, the entry point, compile */
    if (!(out = ks_cu_rewrite(text, b->dyn_name, sizeof b->dyn_name, b->shared, KS_CU_MAX_SHARED, &b->nshared))) {
        rc = ks_fail(
            KS_EINVAL,
            "%s: a __shared__ declaration kscope cannot read (at most %d static arrays; write them as __shared__ T name[N]; and extern __shared__ T name[];)",
            o->file, KS_CU_MAX_SHARED);
        goto fail;
    }
    {
        char path[4400];
        snprintf(path, sizeof path, "%s/kernel.ii", b->dir);
        FILE *f = fopen(path, "w");
        /* a bare name of a kernel inside a namespace is called through it */
        char callee[400];
        snprintf(callee, sizeof callee, "%s%s", strstr(o->kernel, "::") ? "" : b->kernel.ns, o->kernel);
        if (!f || fputs(out, f) < 0 || fprintf(f, k_entry, callee) < 0) {
            if (f) fclose(f);
            rc = ks_fail(KS_EIO, "%s: cannot write", path);
            goto fail;
        }
        if (fclose(f)) {
            rc = ks_fail(KS_EIO, "%s: cannot write", path);
            goto fail;
        }
        snprintf(b->so, sizeof b->so, "%s/kernel.so", b->dir);
        char errs[4400];
        snprintf(errs, sizeof errs, "%s/compile.err", b->dir);
        char *argv[] = {b->clang, "-x", "c++-cpp-output", "-std=c++17", "-O1", "-g", "-gdwarf-aranges", "-fPIC",
                        "-shared",
                        /* no tail calls: a runtime call's return address must be the user's line;
                         * stack-clash protection: a huge frame meets its fiber's guard */
                        "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-fstack-clash-protection",
                        "-fsanitize-coverage=inline-bool-flag,trace-loads,trace-stores",
                        /* memcpy, memset and memmove calls of the kernel go through the runtime
                         * (checked and recorded), and so does exit() */
                        "-fno-builtin-memcpy", "-fno-builtin-memset", "-fno-builtin-memmove",
                        "-Wl,--wrap=memcpy,--wrap=memset,--wrap=memmove,--wrap=exit",
                        /* what a kernel has no business calling: a fault naming it (cu_rt_sched.c) */
                        "-Wl,--wrap=fork,--wrap=vfork,--wrap=system,--wrap=popen,--wrap=execve,--wrap=execv,"
                        "--wrap=execvp,--wrap=daemon,--wrap=fopen,--wrap=open,--wrap=creat,--wrap=unlink,"
                        "--wrap=remove,--wrap=rename,--wrap=kill,--wrap=signal,--wrap=sigaction,--wrap=alarm",
                        "-Wno-unused-command-line-argument", path, "-o", b->so, NULL};
        const int st = spawn_err(argv, errs);
        char *diag = read_all(errs);
        if (st != 0 && diag && only_entry_errors(diag)) {
            /* only kscope's entry point failed: --kernel names nothing callable */
            rc = ks_fail(KS_EINVAL,
                         "%s: --kernel '%s' names no function kscope can call as written (%s%s is declared %s%s)",
                         o->file, o->kernel, b->kernel.ns, b->kernel.name,
                         b->kernel.is_template ? "as a template: give its arguments as C++ writes them"
                                               : "with other parameters",
                         b->kernel.ns[0] ? " in a namespace" : "");
            free(diag);
            goto fail;
        }
        if (diag) fputs(diag, stderr); /* the compiler's own words: warnings, or the errors */
        free(diag);
        if (st == -2) {
            rc = ks_fail(KS_EINVAL, "%s: the compiler ran past %g s (KSCOPE_CC_TIMEOUT)", o->file, compile_limit());
            goto fail;
        }
        if (st != 0) {
            snprintf(msg, sizeof msg, "%s: compilation failed (%s; its messages are above)", o->file, b->clang);
            rc = ks_fail(KS_EINVAL, "%s", msg);
            goto fail;
        }
    }
    free(text), free(out);
    return KS_OK;
fail:
    free(text), free(out);
    ks_cu_build_free(b);
    return rc;
}
