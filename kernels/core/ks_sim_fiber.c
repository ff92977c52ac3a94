/* ks_sim_fiber.c - the cooperative launch: the threads of a block as fibers (glibc
 * ucontext), a per-block shared arena, barriers, and the race check of every shared access.
 *
 * One block at a time: each runnable thread runs until it reaches a barrier or finishes,
 * in thread order; when none is runnable the block passes the barrier (its phase goes up
 * by one) and the waiting threads run again. A barrier not reached by every unfinished
 * thread, or threads waiting at different lines, is reported and passed anyway, so the run
 * (and its trace) completes. Each 4-byte slot of the arena keeps ks_hazard.h's state, the
 * same classification `kscope check` applies to the trace: racecheck's hazards between two
 * threads of one phase, reads of uninitialised memory; an index outside its array is
 * reported and not made. Stacks and their overflow handler: ks_sim_stacks.c.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "ks_error.h"
#include "ks_hazard.h"
#include "ks_sim.h"
#include "ks_sim_stacks.h"

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

#define MAX_DECLS KS_SHARED_ARRAYS /* as many as a trace names apart (ks_shared.h) */

enum { RUNNABLE, WAITING, DONE };
enum { K_RACE, K_UNINIT, K_BARRIER, K_OUTSIDE }; /* ks_sim_report.first[] */

typedef struct fiber {
    ucontext_t ctx;
    int state, line;
} fiber;

typedef struct decl {
    const char *name;
    size_t off, bytes;
} decl;

typedef struct coop {
    fiber *f;
    ks_thread *t;
    int n, cur;
    uint32_t block;
    ucontext_t sched;
    ks_sim_stacks stacks;
    ks_sim_body body;
    const void *args;
    unsigned char arena[KS_SIM_SHARED_BYTES];
    ks_hazard sh[KS_SIM_SHARED_BYTES / 4];     /* per 4-byte slot: ks_hazard.h's classification */
    uint16_t touched[KS_SIM_SHARED_BYTES / 4]; /* the slots of this phase, to close at its end */
    int ntouched;
    uint64_t seq; /* shared accesses so far: the order of findings */
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

static unsigned char *stack_of(const coop *c, int th) { return ks_sim_stacks_at(&c->stacks, th); }

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
    ks_sim_stacks_running(th, c->block);
#ifdef KS_ASAN_FIBERS
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, stack_of(c, th), c->stacks.stack);
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
    if (c->ndecl == MAX_DECLS)
        fatal("more than %d shared arrays in a block (KS_SHARED_ARRAYS): declaring %s", MAX_DECLS, name);
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

/* The declaration array `p` belongs to, or NULL. */
static const decl *decl_of(const coop *c, const void *p)
{
    for (int k = 0; k < c->ndecl; ++k)
        if ((const unsigned char *)p == c->arena + c->d[k].off) return &c->d[k];
    return NULL;
}

/* The hazard state of element i of shared array `arr`, its slot marked touched in this
 * phase (*off: its byte offset in the arena); NULL when i is outside the array (noted:
 * the thread `verb`s, `tail` after "not made"). `what` names the call for a pointer that
 * is not a KS_SHARED array. */
static ks_hazard *slot_of(coop *c, const ks_thread *t, const void *arr, int64_t i, const char *what, const char *verb,
                          const char *tail, size_t *off)
{
    const decl *d = decl_of(c, arr);
    if (!d) fatal("%s of an address that is not a KS_SHARED array", what);
    if (c->rep) c->rep->shared_accesses++;
    if (i < 0 || (uint64_t)i >= d->bytes / 4) {
        if (c->rep) c->rep->outside++;
        note(c, K_OUTSIDE, "block %u phase %u: thread %u %s %s[%lld], outside the array (%zu elements; not made%s)",
             t->block_idx.x, c->phase, t->thread_idx.x, verb, d->name, (long long)i, d->bytes / 4, tail);
        return NULL;
    }
    *off = d->off + (size_t)i * 4;
    ks_hazard *h = &c->sh[*off / 4];
    if (h->phase != c->phase + 1) c->touched[c->ntouched++] = (uint16_t)(*off / 4); /* first touch this phase */
    return h;
}

int ks_sim_shared_atomic(const ks_thread *t, const void *arr, int64_t i)
{
    coop *c = g_coop;
    if (!c) fatal("a shared-memory atomic in a kernel launched without ks_sim_launch_coop");
    size_t off;
    ks_hazard *h = slot_of(c, t, arr, i, "ks_shared_atomic_add", "adds to", "", &off);
    if (!h) return 0;
    c->seq++;
    if (!ks_hazard_atomic(h, c->phase, t->thread_idx.x) || !c->rep) return 1;
    c->rep->races++;
    char slot[96];
    slot_name(c, off, slot, sizeof slot);
    note(c, K_RACE,
         "block %u phase %u: thread %u adds atomically to %s, which another thread reads or writes "
         "plainly with no barrier between",
         t->block_idx.x, c->phase, t->thread_idx.x, slot);
    return 1;
}

int ks_sim_shared_access(const ks_thread *t, const void *arr, int64_t i, int write)
{
    coop *c = g_coop;
    if (!c) fatal("a shared-memory access in a kernel launched without ks_sim_launch_coop");
    size_t off;
    ks_hazard *h = slot_of(c, t, arr, i, write ? "ks_shared_store" : "ks_shared_load", write ? "writes" : "reads",
                           write ? "" : ", it reads 0", &off);
    if (!h) return 0;
    ks_sim_report *r = c->rep;
    const uint32_t me = t->thread_idx.x;
    const int race = ks_hazard_access(h, c->phase, me, write, c->seq++);
    if (!race || !r) return 1;
    r->races++;
    char slot[96];
    slot_name(c, off, slot, sizeof slot);
    if (race == 2)
        note(c, K_RACE,
             "block %u phase %u: thread %u %s %s, which another thread adds to atomically with no "
             "barrier between",
             t->block_idx.x, c->phase, me, write ? "writes" : "reads", slot);
    else if (!write)
        note(c, K_RACE,
             "block %u phase %u: thread %u reads %s written by thread %u with no barrier between (read after write)",
             t->block_idx.x, c->phase, me, slot, h->writer);
    else if (h->writer != me)
        note(c, K_RACE,
             "block %u phase %u: threads %u and %u both write %s with no barrier between (write after write)",
             t->block_idx.x, c->phase, h->writer, me, slot);
    else
        note(c, K_RACE,
             "block %u phase %u: thread %u writes %s that thread %u read with no barrier between (write after read)",
             t->block_idx.x, c->phase, me, slot, h->first);
    return 1;
}

/* The end of a phase: every slot's uninitialised reads counted, the earliest noted. */
static void close_phase(coop *c)
{
    uint64_t best = UINT64_MAX;
    uint32_t who = 0;
    size_t where = 0;
    for (int k = 0; k < c->ntouched; ++k) {
        const size_t w = c->touched[k];
        uint32_t th;
        uint64_t at;
        if (!ks_hazard_close(&c->sh[w], &th, &at)) continue;
        if (c->rep) c->rep->uninit_reads++;
        if (at < best) best = at, who = th, where = w * 4;
    }
    c->ntouched = 0;
    if (best == UINT64_MAX) return;
    char slot[96];
    slot_name(c, where, slot, sizeof slot);
    note(c, K_UNINIT, "block %u thread %u: read of uninitialised shared memory %s (phase %u)", c->block, who, slot,
         c->phase);
}

/* "0-15, 32" for the threads in state `st` (at `line` when line >= 0); a list too long
 * for buf ends "... and N more" (N threads left out) */
static void thread_list(const coop *c, int st, int line, char *buf, size_t n)
{
    size_t len = 0;
    int more = 0;
    buf[0] = 0;
    for (int a = 0; a < c->n; ++a) {
        if (c->f[a].state != st || (line >= 0 && c->f[a].line != line)) continue;
        int b = a;
        while (b + 1 < c->n && c->f[b + 1].state == st && (line < 0 || c->f[b + 1].line == line)) ++b;
        if (len + 32 < n) {
            len += (size_t)snprintf(buf + len, n - len, len ? ", %d" : "%d", a);
            if (b > a) len += (size_t)snprintf(buf + len, n - len, "-%d", b);
        } else {
            more += b - a + 1;
        }
        a = b;
    }
    if (more) snprintf(buf + len, n - len, " ... and %d more", more);
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
        char in[64], out[64];
        const int line = c->f[first].line;
        if (c->rep) c->rep->divergent_barriers++;
        thread_list(c, WAITING, line, in, sizeof in);
        if (other >= 0) {
            thread_list(c, WAITING, c->f[other].line, out, sizeof out);
            note(c, K_BARRIER,
                 "block %u phase %u: divergent barrier: threads %s wait at line %d, threads %s at line %d", block,
                 c->phase, in, line, out, c->f[other].line);
        } else {
            thread_list(c, DONE, -1, out, sizeof out);
            note(
                c, K_BARRIER,
                "block %u phase %u: divergent barrier: the barrier at line %d is reached only by threads %s; threads %s finished",
                block, c->phase, line, in, out);
        }
    }
    for (int th = 0; th < c->n; ++th)
        if (c->f[th].state == WAITING) c->f[th].state = RUNNABLE;
    close_phase(c);
    c->phase++;
}

/* Thread th's fiber, ready to start at fiber_entry on its own stack. getcontext only
 * fills the context here (makecontext redirects it), but GCC cannot know that it never
 * returns twice: outside the block loop, no loop variable is live across it. */
static void make_fiber(coop *c, int th)
{
    fiber *f = &c->f[th];
    f->state = RUNNABLE;
    f->line = 0;
    if (getcontext(&f->ctx) != 0) fatal("getcontext failed");
    f->ctx.uc_stack.ss_sp = stack_of(c, th);
    f->ctx.uc_stack.ss_size = c->stacks.stack;
    f->ctx.uc_link = NULL;
    makecontext(&f->ctx, fiber_entry, 0);
}

static void run_block(coop *c, const ks_thread *base, uint32_t b)
{
    memset(c->arena, 0xff, c->used);
    memset(c->sh, 0, (c->used + 3) / 4 * sizeof *c->sh);
    c->ntouched = 0;
    c->phase = 0;
    c->block = b;
    for (int th = 0; th < c->n; ++th) {
        c->t[th] = *base;
        c->t[th].block_idx.x = b;
        c->t[th].thread_idx.x = (uint32_t)th;
        make_fiber(c, th);
    }
    for (;;) {
        int waiting = 0;
        for (int th = 0; th < c->n; ++th)
            if (c->f[th].state == RUNNABLE) resume(c, th);
        for (int th = 0; th < c->n; ++th) waiting += c->f[th].state == WAITING;
        if (!waiting) {
            close_phase(c);
            return;
        }
        pass_barrier(c, b);
    }
}

ks_status ks_sim_launch_coop(int64_t blocks, int threads, ks_sim_body body, const void *args, ks_sink *sink,
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
    c->f = calloc((size_t)threads, sizeof *c->f);
    c->t = calloc((size_t)threads, sizeof *c->t);
    int rc = c->f && c->t ? KS_OK : ks_fail(KS_ENOMEM, "out of memory for %d fibers", threads);
    if (!rc) rc = ks_sim_stacks_open(&c->stacks, threads);
    if (!rc) {
        ks_thread base;
        ks_sim_ticker tick;
        ks_sim_thread_init(&base, blocks, threads, sink);
        ks_sim_ticker_start(&tick);
        g_coop = c;
        for (int64_t b = 0; b < blocks; ++b) {
            run_block(c, &base, (uint32_t)b);
            ks_sim_schedule_block(sink, b, threads);
            if (b + 1 < blocks) ks_sim_ticker_block(&tick, b + 1, blocks);
        }
        g_coop = NULL;
        ks_sim_ticker_end(&tick, blocks);
    }
    ks_sim_stacks_close(&c->stacks);
    free(c->f);
    free(c->t);
    free(c);
    return rc;
}

static _Thread_local int g_quiet; /* ks_sim_quiet_warnings */

int ks_sim_quiet_warnings(int on)
{
    const int was = g_quiet;
    g_quiet = on;
    return was;
}

uint64_t ks_sim_report_warn(const ks_sim_report *rep, const char *what)
{
    const uint64_t n[4] = {rep->races, rep->uninit_reads, rep->divergent_barriers, rep->outside};
    const char *kind[4] = {"shared-memory races", "reads of uninitialised shared memory", "divergent barriers",
                           "shared accesses outside their array"};
    for (int k = 0; k < 4 && !g_quiet; ++k)
        if (n[k])
            fprintf(stderr, "kscope: warning: %s: %llu %s; first: %s\n", what, (unsigned long long)n[k], kind[k],
                    rep->first[k]);
    return n[0] + n[1] + n[2] + n[3];
}
