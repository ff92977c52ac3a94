/* pz_build.c - where the puzzles are, and the student's file compiled into a shared
 * object kscope loads (one compiler line, no build system: the simplest path from an
 * edited file to a verdict). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../kernels/core/ks_error.h"
#include "pz_grade.h"

#ifndef KS_PUZZLE_DIR
#define KS_PUZZLE_DIR "lessons/puzzles"
#endif
enum { PZ_CC_TIMEOUT_S = 60 };

#ifndef KS_SOURCE_ROOT
#define KS_SOURCE_ROOT "."
#endif

void pz_locate(pz_paths *p)
{
    char exe[3900], probe[4000];
    struct stat st;
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0; /* PREFIX/bin */
        snprintf(probe, sizeof probe, "%s/../share/kscope/puzzles/puzzle.h", exe);
        if (stat(probe, &st) == 0) {
            snprintf(p->dir, sizeof p->dir, "%s/../share/kscope/puzzles", exe);
            snprintf(p->include, sizeof p->include, "%s/../include/kscope", exe);
            return;
        }
    }
    snprintf(p->dir, sizeof p->dir, "%s", KS_PUZZLE_DIR);
    snprintf(p->include, sizeof p->include, "%s", KS_SOURCE_ROOT);
}

/* The compiler command: $KSCOPE_CC split at spaces (no shell: "clang -fsanitize=address"
 * is a program and an option), or cc. Returns the number of words put in argv. */
static int compiler_words(char *buf, size_t n, const char **argv, int most)
{
    const char *env = getenv("KSCOPE_CC");
    snprintf(buf, n, "%s", env && *env ? env : "cc");
    int k = 0;
    for (char *w = strtok(buf, " \t"); w && k < most; w = strtok(NULL, " \t")) argv[k++] = w;
    if (!k) argv[k++] = "cc";
    return k;
}

/* $KSCOPE_CC_TIMEOUT in seconds (1..3600), or PZ_CC_TIMEOUT_S */
static int compile_limit(void)
{
    const char *v = getenv("KSCOPE_CC_TIMEOUT");
    const long s = v && *v ? strtol(v, NULL, 10) : 0;
    return s >= 1 && s <= 3600 ? (int)s : PZ_CC_TIMEOUT_S;
}

static volatile pid_t compiling; /* the compiler's process group while it runs (0: none) */

void pz_build_interrupt(void)
{
    if (compiling > 0) kill(-compiling, SIGKILL);
}

int pz_build(const pz_paths *p, const char *src, const char *so)
{
    char words[1024];
    const char *argv[64];
    const int k = compiler_words(words, sizeof words, argv, 32);
    const char *const flags[] = {"-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter",
                                 "-Wno-unused-variable", "-Wno-unused-but-set-variable",
                                 "-Werror=implicit-function-declaration",
                                 /* a big frame meets its fiber's stack guard (ks_sim_stacks.c) */
                                 "-fstack-clash-protection", "-shared", "-fPIC", "-I", p->dir, "-I", p->include, src,
                                 "-o", so};
    /* unused names are the normal state of a stub half filled in: not worth a warning */
    int n = k;
    for (size_t f = 0; f < sizeof flags / sizeof *flags; ++f) argv[n++] = flags[f];
    argv[n] = NULL;
    const char *cc = argv[0];
    const int limit = compile_limit();
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) return ks_fail(KS_EINVAL, "cannot start %s: %s", cc, strerror(errno));
    if (pid == 0) {
        setpgid(0, 0); /* a group of its own: a timeout or Ctrl-C ends the compiler's children too */
        execvp(cc, (char *const *)argv);
        fprintf(stderr, "kscope: puzzle: cannot run the compiler '%s': %s (set KSCOPE_CC)\n", cc, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    compiling = pid;
    int status = 0;
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (long waited = 0;; ++waited) {
        const pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) break;
        if (got < 0 && errno != EINTR) {
            compiling = 0;
            return ks_fail(KS_EINVAL, "waiting for %s: %s", cc, strerror(errno));
        }
        if (waited >= 100L * limit) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            compiling = 0;
            return ks_fail(KS_EINVAL, "%s: the compiler '%s' did not finish in %d s (KSCOPE_CC_TIMEOUT sets the limit)",
                           src, cc, limit);
        }
        nanosleep(&tick, NULL);
    }
    compiling = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
        return ks_fail(KS_EINVAL, "%s: the compiler '%s' did not run", src, cc);
    if (WEXITSTATUS(status)) return ks_fail(KS_EINVAL, "%s does not compile (the compiler's messages are above)", src);
    return KS_OK;
}
