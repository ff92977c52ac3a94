/* ks_sim_fiber.c - the cooperative launch: the threads of a block as fibers (glibc
 * ucontext), a per-block shared arena, barriers, and the race check of every shared access.
 *
 * One block at a time: each runnable thread runs until it reaches a barrier or finishes,
 * in thread order; when none is runnable the block passes the barrier (its phase goes up
 * by one) and the waiting threads run again. A barrier not reached by every unfinished
 * thread, or threads waiting at different lines, is reported and passed anyway, so the run
 * (and its trace) completes. Shadow state per 4-byte word of the arena says who last wrote
 * and read it in which phase; racecheck's hazards between two threads of one phase follow.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "ks_error.h"
#include "ks_sim.h"

#if defined(__SANITIZE_ADDRESS__)
#define KS_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KS_ASAN_FIBERS 1
#endif
#endif
#ifdef KS_ASAN_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif

#define STACK_BYTES (64 * 1024)
#define MAX_DECLS 16
#define MANY UINT32_MAX /* shadow: more than one reader in the phase */

enum { RUNNABLE, WAITING, DONE };

typedef struct fiber {
    ucontext_t ctx;
    int state, line;
} fiber;

typedef struct shadow { /* phase + 1 of the last write / read (0: none) and by whom */
    uint32_t wphase, writer, rphase, reader;
} shadow;

typedef struct decl {
    const char *name;
    size_t off, bytes;
} decl;

typedef struct coop {
    fiber *f;
    ks_thread *t;
    int n, cur;
    ucontext_t sched;
    unsigned char *stacks; /* n stacks, each above a guard page */
    size_t stride, page;
    ks_sim_body body;
    const void *args;
    unsigned char arena[KS_SIM_SHARED_BYTES];
    shadow sh[KS_SIM_SHARED_BYTES / 4];
    size_t used;
    decl d[MAX_DECLS];
    int ndecl;
    uint32_t phase;
    ks_sim_report *rep;
#ifdef KS_ASAN_FIBERS
    const void *sched_bottom;
    size_t sched_size;
#endif
} coop;

static _Thread_local coop *g_coop;

static void fatal(const char *fmt, ...) KS_PRINTF(1, 2);
static void fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kscope: simulator: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static unsigned char *stack_of(const coop *c, int th)
{
    return c->stacks + (size_t)th * c->stride + c->page;
}

/* The first problem of a kind is kept as a line; all are counted by the caller. */
static void note(coop *c, int kind, const char *fmt, ...) KS_PRINTF(3, 4);
static void note(coop *c, int kind, const char *fmt, ...)
{
    if (!c->rep || c->rep->first[kind][0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->rep->first[kind], sizeof c->rep->first[kind], fmt, ap);
    va_end(ap);
}

static void fiber_entry(void)
{
    coop *c = g_coop;
#ifdef KS_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(NULL, &c->sched_bottom, &c->sched_size);
#endif
    const int th = c->cur;
    c->body(&c->t[th], c->args);
    c->f[th].state = DONE;
#ifdef KS_ASAN_FIBERS
    __sanitizer_start_switch_fiber(NULL, c->sched_bottom, c->sched_size); /* this stack ends */
#endif
    swapcontext(&c->f[th].ctx, &c->sched);
}

/* Runs thread th until it waits at a barrier or finishes. */
static void resume(coop *c, int th)
{
    c->cur = th;
#ifdef KS_ASAN_FIBERS
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, stack_of(c, th), STACK_BYTES);
#endif
    if (swapcontext(&c->sched, &c->f[th].ctx) != 0) fatal("swapcontext failed");
#ifdef KS_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void ks_sim_barrier(ks_thread *t, int line)
{
    coop *c = g_coop;
    if (!c) fatal("ks_syncthreads (line %d) in a kernel launched without ks_sim_launch_coop", line);
    const int th = (int)t->thread_idx.x;
    c->f[th].state = WAITING;
    c->f[th].line = line;
    if (c->rep) c->rep->barriers++;
#ifdef KS_ASAN_FIBERS
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, c->sched_bottom, c->sched_size);
#endif
    swapcontext(&c->f[th].ctx, &c->sched);
#ifdef KS_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(fake, &c->sched_bottom, &c->sched_size);
#endif
}

void *ks_sim_shared_alloc(size_t bytes, const char *name)
{
    coop *c = g_coop;
    if (!c) fatal("KS_SHARED(%s) in a kernel launched without ks_sim_launch_coop", name);
    for (int k = 0; k < c->ndecl; ++k) {
        if (strcmp(c->d[k].name, name) != 0) continue;
        if (c->d[k].bytes != bytes)
            fatal("shared array %s declared with %zu bytes and with %zu", name, c->d[k].bytes, bytes);
        return c->arena + c->d[k].off;
    }
    const size_t off = (c->used + 15) & ~(size_t)15;
    if (c->ndecl == MAX_DECLS) fatal("more than %d shared arrays", MAX_DECLS);
    if (bytes > KS_SIM_SHARED_BYTES - off)
        fatal("shared array %s (%zu bytes) does not fit the block's %d bytes (%zu used)", name, bytes,
              KS_SIM_SHARED_BYTES, off);
    c->d[c->ndecl++] = (decl){.name = name, .off = off, .bytes = bytes};
    memset(c->arena + off, 0xff, bytes); /* the poison: NaN as a float */
    c->used = off + bytes;
    return c->arena + off;
}

/* "name[i]" of the arena byte offset `off` */
static void slot_name(const coop *c, size_t off, char *buf, size_t n)
{
    for (int k = 0; k < c->ndecl; ++k)
        if (off >= c->d[k].off && off < c->d[k].off + c->d[k].bytes) {
            snprintf(buf, n, "%s[%zu]", c->d[k].name, (off - c->d[k].off) / 4);
            return;
        }
    snprintf(buf, n, "shared byte %zu", off);
}

void ks_sim_shared_access(const ks_thread *t, const void *p, int write)
{
    coop *c = g_coop;
    if (!c) fatal("a shared-memory access in a kernel launched without ks_sim_launch_coop");
    const unsigned char *b = p;
    if (b < c->arena || b + 4 > c->arena + c->used)
        fatal("ks_shared_%s of an address outside the block's shared arrays", write ? "store" : "load");
    const size_t off = (size_t)(b - c->arena);
    shadow *s = &c->sh[off / 4];
    const uint32_t ph = c->phase + 1, me = t->thread_idx.x;
    ks_sim_report *r = c->rep;
    char slot[96];
    if (r) r->shared_accesses++;
    if (!write) {
        if (!s->wphase) {
            if (r) r->uninit_reads++;
            slot_name(c, off, slot, sizeof slot);
            note(c, 1, "block %u thread %u: read of uninitialised shared memory %s (phase %u)", t->block_idx.x, me, slot,
                 c->phase);
        } else if (s->wphase == ph && s->writer != me) {
            if (r) r->races++;
            slot_name(c, off, slot, sizeof slot);
            note(c, 0, "block %u phase %u: thread %u reads %s written by thread %u with no barrier between (read after write)",
                 t->block_idx.x, c->phase, me, slot, s->writer);
        }
        if (s->rphase == ph && s->reader != me) s->reader = MANY;
        else if (s->rphase != ph) s->rphase = ph, s->reader = me;
        return;
    }
    const int waw = s->wphase == ph && s->writer != me, war = s->rphase == ph && s->reader != me;
    if (waw || war) {
        if (r) r->races++;
        slot_name(c, off, slot, sizeof slot);
        if (waw)
            note(c, 0, "block %u phase %u: threads %u and %u both write %s with no barrier between (write after write)",
                 t->block_idx.x, c->phase, s->writer, me, slot);
        else if (s->reader == MANY)
            note(c, 0, "block %u phase %u: thread %u writes %s that other threads read with no barrier between (write after read)",
                 t->block_idx.x, c->phase, me, slot);
        else
            note(c, 0, "block %u phase %u: thread %u writes %s that thread %u read with no barrier between (write after read)",
                 t->block_idx.x, c->phase, me, slot, s->reader);
    }
    s->wphase = ph, s->writer = me;
}

/* "0-15, 32" for the threads in state `st` (at `line` when line >= 0) */
static void thread_list(const coop *c, int st, int line, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int a = 0; a < c->n && len + 24 < n; ++a) {
        if (c->f[a].state != st || (line >= 0 && c->f[a].line != line)) continue;
        int b = a;
        while (b + 1 < c->n && c->f[b + 1].state == st && (line < 0 || c->f[b + 1].line == line)) ++b;
        len += (size_t)snprintf(buf + len, n - len, len ? ", %d" : "%d", a);
        if (b > a) len += (size_t)snprintf(buf + len, n - len, "-%d", b);
        a = b;
    }
}

/* Every unfinished thread waits: checks they all wait at one barrier and none finished. */
static void pass_barrier(coop *c, uint32_t block)
{
    int first = -1, done = 0, other = -1;
    for (int th = 0; th < c->n; ++th) {
        if (c->f[th].state == DONE) done++;
        else if (first < 0) first = th;
        else if (c->f[th].line != c->f[first].line && other < 0) other = th;
    }
    if (done || other >= 0) {
        char in[96], out[96];
        const int line = c->f[first].line;
        if (c->rep) c->rep->divergent_barriers++;
        thread_list(c, WAITING, line, in, sizeof in);
        if (other >= 0) {
            thread_list(c, WAITING, c->f[other].line, out, sizeof out);
            note(c, 2, "block %u phase %u: divergent barrier: threads %s wait at line %d, threads %s at line %d", block,
                 c->phase, in, line, out, c->f[other].line);
        } else {
            thread_list(c, DONE, -1, out, sizeof out);
            note(c, 2, "block %u phase %u: divergent barrier: the barrier at line %d is reached by threads %s only; threads %s finished",
                 block, c->phase, line, in, out);
        }
    }
    for (int th = 0; th < c->n; ++th)
        if (c->f[th].state == WAITING) c->f[th].state = RUNNABLE;
    c->phase++;
}

static void run_block(coop *c, const ks_thread *base, uint32_t b)
{
    memset(c->arena, 0xff, c->used);
    memset(c->sh, 0, (c->used + 3) / 4 * sizeof *c->sh);
    c->phase = 0;
    for (int th = 0; th < c->n; ++th) {
        c->t[th] = *base;
        c->t[th].block_idx.x = b;
        c->t[th].thread_idx.x = (uint32_t)th;
        fiber *f = &c->f[th];
        f->state = RUNNABLE;
        f->line = 0;
        if (getcontext(&f->ctx) != 0) fatal("getcontext failed");
        f->ctx.uc_stack.ss_sp = stack_of(c, th);
        f->ctx.uc_stack.ss_size = STACK_BYTES;
        f->ctx.uc_link = NULL;
        makecontext(&f->ctx, fiber_entry, 0);
    }
    for (;;) {
        int waiting = 0;
        for (int th = 0; th < c->n; ++th)
            if (c->f[th].state == RUNNABLE) resume(c, th);
        for (int th = 0; th < c->n; ++th) waiting += c->f[th].state == WAITING;
        if (!waiting) return;
        pass_barrier(c, b);
    }
}

int ks_sim_launch_coop(int64_t blocks, int threads, ks_sim_body body, const void *args, ks_sink *sink,
                       ks_sim_report *rep)
{
    if (threads < 1 || threads > 1024)
        return ks_fail(KS_EINVAL, "threads per block must be in 1..1024 (got %d)", threads);
    if (g_coop) return ks_fail(KS_EINVAL, "a cooperative launch inside another");
    coop *c = calloc(1, sizeof *c);
    if (rep) memset(rep, 0, sizeof *rep);
    if (!c) return ks_fail(KS_ENOMEM, "out of memory for the block's fibers");
    c->n = threads;
    c->body = body;
    c->args = args;
    c->rep = rep;
    c->page = (size_t)sysconf(_SC_PAGESIZE);
    c->stride = STACK_BYTES + c->page;
    c->f = calloc((size_t)threads, sizeof *c->f);
    c->t = calloc((size_t)threads, sizeof *c->t);
    void *m = mmap(NULL, c->stride * (size_t)threads, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    c->stacks = m == MAP_FAILED ? NULL : m;
    int rc = KS_OK;
    if (!c->f || !c->t || !c->stacks) rc = ks_fail(KS_ENOMEM, "out of memory for %d fiber stacks", threads);
    for (int th = 0; !rc && th < threads; ++th) /* a guard page below each stack */
        if (mprotect(c->stacks + (size_t)th * c->stride, c->page, PROT_NONE) != 0)
            rc = ks_fail(KS_ENOMEM, "cannot protect the fiber stacks' guard pages");
    if (!rc) {
        ks_thread base;
        memset(&base, 0, sizeof base);
        base.grid_dim.x = (uint32_t)blocks;
        base.grid_dim.y = base.grid_dim.z = 1;
        base.block_dim.x = (uint32_t)threads;
        base.block_dim.y = base.block_dim.z = 1;
        base.sink = sink;
        base.shared_tensor = 255;
        g_coop = c;
        for (int64_t b = 0; b < blocks; ++b) {
            run_block(c, &base, (uint32_t)b);
            if (sink && sink->schedule && b < sink->schedule_blocks) { /* the virtual clock of ks_sim_launch */
                int64_t *s = sink->schedule + 4 * b;
                s[0] = b, s[1] = -1, s[2] = b * threads, s[3] = (b + 1) * threads;
            }
        }
        g_coop = NULL;
    }
    if (c->stacks) munmap(c->stacks, c->stride * (size_t)threads);
    free(c->f);
    free(c->t);
    free(c);
    return rc;
}

uint64_t ks_sim_report_warn(const ks_sim_report *rep, const char *what)
{
    const uint64_t n[3] = {rep->races, rep->uninit_reads, rep->divergent_barriers};
    const char *kind[3] = {"shared-memory races", "reads of uninitialised shared memory", "divergent barriers"};
    for (int k = 0; k < 3; ++k)
        if (n[k])
            fprintf(stderr, "kscope: warning: %s: %llu %s; first: %s\n", what, (unsigned long long)n[k], kind[k],
                    rep->first[k]);
    return n[0] + n[1] + n[2];
}
