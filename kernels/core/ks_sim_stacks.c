/* ks_sim_stacks.c - fiber stacks with guard regions and the overflow handler (see
 * ks_sim_stacks.h). A guard as large as the stack catches a frame that skips up to a whole
 * stack of pages in one step; the build adds -fstack-clash-protection where the compiler
 * has it, so larger frames touch their pages in order and meet the guard too. */
#define _GNU_SOURCE
#include "ks_sim_stacks.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ks_error.h"

/* KS_OVERFLOW_EXIT: kscope's exit status for an error (cli.h's KS_EXIT_ERROR) */
enum { KS_MIN_KIB = 16, KS_MAX_KIB = 65536, KS_ALT_BYTES = 64 * 1024, KS_OVERFLOW_EXIT = 2 };

/* what the handler reads: one cooperative launch at a time (ks_sim_launch_coop refuses nesting) */
static struct {
    unsigned char *base;
    size_t stride, guard;
    int n;
    volatile int thread;
    volatile uint32_t block;
    struct sigaction old;
    stack_t old_alt;
    void *alt;
} g;

/* appends the decimal digits of v to buf at *len (async-signal-safe) */
static void put_u(char *buf, size_t *len, unsigned long long v)
{
    char d[24];
    int k = 0;
    do d[k++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (k) buf[(*len)++] = d[--k];
}

static void put_s(char *buf, size_t *len, const char *s)
{
    while (*s) buf[(*len)++] = *s++;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    const unsigned char *a = si->si_addr;
    if (g.base && a >= g.base && a < g.base + g.stride * (size_t)g.n && (size_t)(a - g.base) % g.stride < g.guard) {
        char line[256];
        size_t len = 0;
        put_s(line, &len, "kscope: simulator: thread ");
        put_u(line, &len, (unsigned)g.thread);
        put_s(line, &len, " of block ");
        put_u(line, &len, g.block);
        put_s(line, &len, " overflowed its fiber stack (");
        put_u(line, &len, (g.stride - g.guard) / 1024);
        put_s(line, &len, " KiB); set KSCOPE_FIBER_STACK=");
        put_u(line, &len, (g.stride - g.guard) / 1024 * 4);
        put_s(line, &len, " (KiB) for larger stacks, or keep big arrays off the stack\n");
        ssize_t w = write(STDERR_FILENO, line, len);
        (void)w;
        _exit(KS_OVERFLOW_EXIT);
    }
    /* not ours: the previous handler (or the default action) gets the fault again */
    sigaction(sig, &g.old, NULL);
}

/* $KSCOPE_FIBER_STACK in KiB, or the default; 0 when it is not a number in range */
static size_t stack_bytes(void)
{
    const char *v = getenv("KSCOPE_FIBER_STACK");
    if (!v || !*v) return (size_t)KS_FIBER_STACK_KIB * 1024;
    char *end;
    const long kib = strtol(v, &end, 10);
    return *end || kib < KS_MIN_KIB || kib > KS_MAX_KIB ? 0 : (size_t)kib * 1024;
}

int ks_sim_stacks_open(ks_sim_stacks *s, int n)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = stack_bytes();
    memset(s, 0, sizeof *s);
    if (!bytes)
        return ks_fail(KS_EINVAL, "KSCOPE_FIBER_STACK must be a stack size in KiB, %d..%d (got '%s')", KS_MIN_KIB,
                       KS_MAX_KIB, getenv("KSCOPE_FIBER_STACK"));
    if (g.base) return ks_fail(KS_EINVAL, "a cooperative launch inside another");
    s->stack = (bytes + page - 1) / page * page;
    s->stride = 2 * s->stack; /* a guard as large as the stack, then the stack */
    s->n = n;
    void *m = mmap(NULL, s->stride * (size_t)n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return ks_fail(KS_ENOMEM, "out of address space for %d fiber stacks of %zu KiB", n, s->stack / 1024);
    s->base = m;
    for (int th = 0; th < n; ++th)
        if (mprotect(ks_sim_stacks_at(s, th), s->stack, PROT_READ | PROT_WRITE) != 0) {
            ks_sim_stacks_close(s);
            return ks_fail(KS_ENOMEM, "cannot map the fiber stacks");
        }
    g.alt = malloc(KS_ALT_BYTES);
    stack_t alt = {.ss_sp = g.alt, .ss_size = KS_ALT_BYTES};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (!g.alt || sigaltstack(&alt, &g.old_alt) != 0 || sigaction(SIGSEGV, &sa, &g.old) != 0) {
        free(g.alt), g.alt = NULL;
        munmap(s->base, s->stride * (size_t)n), s->base = NULL;
        return ks_fail(KS_ENOMEM, "cannot install the fiber stacks' overflow handler");
    }
    g.base = s->base, g.stride = s->stride, g.guard = s->stride - s->stack, g.n = n;
    return KS_OK;
}

unsigned char *ks_sim_stacks_at(const ks_sim_stacks *s, int th)
{
    return s->base + (size_t)th * s->stride + (s->stride - s->stack);
}

void ks_sim_stacks_running(int thread, uint32_t block)
{
    g.thread = thread;
    g.block = block;
}

void ks_sim_stacks_close(ks_sim_stacks *s)
{
    if (g.base && g.base == s->base) {
        sigaction(SIGSEGV, &g.old, NULL);
        sigaltstack(&g.old_alt, NULL);
        free(g.alt);
        g.alt = NULL;
        g.base = NULL;
    }
    if (s->base) munmap(s->base, s->stride * (size_t)s->n);
    s->base = NULL;
}
