/* cu_rt_sched.c - the child process of `kscope run FILE.cu`: it loads the compiled
 * kernel, binds its parameters and runs the grid, one block at a time, the block's
 * threads as fibers (ks_cu_switch: a stack switch without system calls) in thread order. A fiber runs until it reaches
 * __syncthreads() or a warp collective, or ends; the block passes a barrier once every
 * thread that has not ended waits at one, and a warp collective completes once every live
 * lane of its mask arrived. Nothing waits forever: when no fiber can run, the collectives
 * waiting for lanes that will never come complete with the lanes they have (the events
 * say which were missing), then the barrier passes.
 *
 * Faults: a signal (division by zero, a stack overflow into a fiber's guard, any crash)
 * writes the thread and program counter into the control block and a FAULT event, and
 * the child exits 3; kscope writes the trace up to there.
 */
#include "cu_rt_int.h"

#include <dlfcn.h>
#include <math.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

/* ks_cu_switch(&save, load): saves the callee-saved registers, the SSE and x87 control
 * words and the stack pointer into *save, and resumes the context whose stack pointer is
 * `load` (System V x86-64). A new fiber's stack is laid out as if it had called it. */
void ks_cu_switch(void **save, void *load);
__asm__(".text\n"
        ".globl ks_cu_switch\n"
        ".type ks_cu_switch, @function\n"
        "ks_cu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size ks_cu_switch, .-ks_cu_switch\n");

ks_cu_rt ks_cu_g;
ks_cu_u3 threadIdx, blockIdx, blockDim, gridDim; /* the user's code reads them by these names */
unsigned char ks_cu_dyn_smem[KS_CU_DYN_SMEM] __attribute__((aligned(256)));

#define STACK_BYTES (256 * 1024)
#define GUARD_BYTES (64 * 1024)
static unsigned char *g_stacks;
static void (*g_entry)(void **);
static void **g_args;

static void set_builtins(const ks_cu_fib *f)
{
    threadIdx.x = f->tx, threadIdx.y = f->ty, threadIdx.z = f->tz;
    ks_cu_g.ctl->cur_thread = f->tid;
}

void ks_cu_yield(ks_cu_fib *f)
{
    ks_cu_flush_store(f);
    ks_cu_publish();
    ks_cu_g.cur = NULL;
    ks_cu_switch(&f->sp, ks_cu_g.sched_sp);
    ks_cu_g.cur = f;
    set_builtins(f);
}

void ks_cu_stop(ks_cu_fib *f, int code, uint32_t site, uint64_t address)
{
    ks_event *e = ks_cu_emit(f, KS_EV_FAULT, 0, site, -1);
    if (e) e->u.fault.code = (uint32_t)code, e->u.fault.address = address;
    ks_cu_g.ctl->stopped_threads++;
    f->st_count = 0; /* an access not made has no value to read */
    f->state = F_DONE;
    ks_cu_publish();
    ks_cu_g.cur = NULL;
    ks_cu_switch(&f->sp, ks_cu_g.sched_sp);
    abort(); /* not reached: a stopped fiber is never resumed */
}

static void flush_printf(ks_cu_fib *f);

static void fiber_main(void)
{
    ks_cu_fib *f = ks_cu_g.cur;
    g_entry(g_args);
    flush_printf(f);
    ks_cu_flush_store(f);
    f->state = F_DONE;
    ks_cu_publish();
    ks_cu_g.cur = NULL;
    ks_cu_switch(&f->sp, ks_cu_g.sched_sp);
    abort(); /* not reached */
}

/* a new fiber's stack: ks_cu_switch's saved frame (control words, six registers) and a
 * return into fiber_main, which then finds its stack aligned as after a call */
static void *fiber_stack(uintptr_t lo, size_t size)
{
    uint64_t *top = (uint64_t *)((lo + size) & ~(uintptr_t)15);
    *--top = 0; /* fiber_main's own return address: none */
    *--top = (uint64_t)(uintptr_t)fiber_main;
    for (int r = 0; r < 6; ++r) *--top = 0;
    *--top = 0x1F80ull | (0x037Full << 32); /* MXCSR default, x87 control word default */
    return top;
}

/* ---- barriers ---- */
static int barrier(int op, int pred, uintptr_t pc)
{
    ks_cu_fib *f = ks_cu_g.cur;
    if (!f) return 0;
    const uint32_t site = ks_cu_site(pc, KS_EV_BARRIER, 0);
    ks_event *e = ks_cu_emit(f, KS_EV_BARRIER, 0, site, -1);
    if (e) e->u.barrier.phase = f->phase, e->u.barrier.line = (int32_t)site; /* kscope puts the line */
    f->bar_site = site, f->bar_op = op, f->bar_pred = pred;
    f->state = F_WAIT_BAR;
    ks_cu_yield(f);
    return f->bar_res;
}

void ks_cu_syncthreads(void) { (void)barrier(-1, 0, (uintptr_t)__builtin_return_address(0) - 1); }
int ks_cu_syncthreads_op(int op, int pred) { return barrier(op, pred, (uintptr_t)__builtin_return_address(0) - 1); }

static void pass_barrier(void)
{
    int count = 0, all = 1, any = 0;
    for (int i = 0; i < ks_cu_g.nthreads; ++i) {
        const ks_cu_fib *f = &ks_cu_g.fib[i];
        if (f->state != F_WAIT_BAR) continue;
        count += f->bar_pred != 0, all &= f->bar_pred != 0, any |= f->bar_pred != 0;
    }
    for (int i = 0; i < ks_cu_g.nthreads; ++i) {
        ks_cu_fib *f = &ks_cu_g.fib[i];
        if (f->state != F_WAIT_BAR) continue;
        f->bar_res = f->bar_op == 0 ? count : f->bar_op == 1 ? all : any;
        f->phase++;
        f->bar_line_site = f->bar_site;
        f->state = F_RUN;
    }
}

/* ---- warp collectives ---- */
static unsigned lanes_of(int warp, int state)
{
    unsigned m = 0;
    for (int l = 0; l < 32 && warp * 32 + l < ks_cu_g.nthreads; ++l) {
        const ks_cu_fib *f = &ks_cu_g.fib[warp * 32 + l];
        if (state < 0 ? f->state != F_DONE : f->state == state) m |= 1u << l;
    }
    return m;
}

static unsigned long long result(const ks_cu_fib *w, unsigned group, int lane)
{
    const ks_cu_fib *f = &w[lane];
    const int width = f->w_width >= 1 && f->w_width <= 32 ? f->w_width : 32, seg = lane & ~(width - 1);
    int src = lane;
    switch (f->w_op) {
    case KS_CU_SHFL: src = seg + (f->w_arg & (width - 1)); break;
    case KS_CU_SHFL_UP: src = lane - f->w_arg >= seg ? lane - f->w_arg : lane; break;
    case KS_CU_SHFL_DOWN: src = lane + f->w_arg < seg + width ? lane + f->w_arg : lane; break;
    case KS_CU_SHFL_XOR: src = ((lane ^ f->w_arg) & ~(width - 1)) == seg ? lane ^ f->w_arg : lane; break;
    default: {
        unsigned long long ballot = 0;
        for (int l = 0; l < 32; ++l)
            if (group >> l & 1) ballot |= (unsigned long long)(w[l].w_val != 0) << l;
        if (f->w_op == KS_CU_BALLOT) return ballot;
        if (f->w_op == KS_CU_ANY) return ballot != 0;
        if (f->w_op == KS_CU_ALL) return ballot == (group & 0xffffffffull);
        if (f->w_op == KS_CU_ACTIVEMASK) return group; /* the lanes that reached it together */
        return 0;
    }
    }
    /* a source lane that is not taking part gives the caller's own value (undefined in CUDA) */
    return src >= 0 && src < 32 && (group >> src & 1) ? w[src].w_val : f->w_val;
}

/* completes the collective of warp `warp` with the lanes waiting in it plus `self` */
static void complete(int warp, ks_cu_fib *self)
{
    ks_cu_fib *w = &ks_cu_g.fib[warp * 32];
    unsigned group = lanes_of(warp, F_WAIT_WARP);
    if (self) group |= 1u << (self->tid % 32);
    for (int l = 0; l < 32; ++l)
        if (group >> l & 1) w[l].w_res = result(w, group, l);
    for (int l = 0; l < 32; ++l) {
        if (!(group >> l & 1)) continue;
        ks_cu_fib *f = &w[l];
        if (f->w_op == KS_CU_SYNCWARP) f->wphase++;
        ks_event *e = ks_cu_emit(f, KS_EV_WARP, 0, f->w_site, -1);
        if (e) {
            /* __activemask() asks for no lanes: its mask is what it found */
            e->u.warp.mask = f->w_op == KS_CU_ACTIVEMASK ? group : f->w_mask, e->u.warp.arrived = group;
            e->u.warp.op = (uint8_t)f->w_op, e->u.warp.lane = (uint8_t)l;
            e->u.warp.value = f->w_res;
            e->u.warp.line = (int32_t)f->w_site; /* kscope puts the line */
        }
        if (f != self) f->state = F_RUN;
    }
}

static unsigned long long warp_op(int op, unsigned mask, unsigned long long v, int arg, int width, uintptr_t pc)
{
    ks_cu_fib *f = ks_cu_g.cur;
    if (!f) return v;
    ks_cu_flush_store(f);
    const int lane = (int)(f->tid % 32), warp = (int)(f->tid / 32);
    f->w_op = op, f->w_mask = mask, f->w_val = v, f->w_arg = arg, f->w_width = width;
    f->w_site = ks_cu_site(pc, KS_EV_WARP, 0);
    /* the lanes it waits for: the live lanes of its mask (and itself, named or not) */
    const unsigned need = ((mask | 1u << lane) & lanes_of(warp, -1)) & ~(1u << lane);
    if ((lanes_of(warp, F_WAIT_WARP) & need) == need) {
        complete(warp, f);
        return f->w_res;
    }
    f->state = F_WAIT_WARP;
    ks_cu_yield(f);
    return f->w_res;
}

unsigned long long ks_cu_warp(int op, unsigned mask, unsigned long long v, int arg, int width)
{
    return warp_op(op, mask, v, arg, width, (uintptr_t)__builtin_return_address(0) - 1);
}

/* The lanes that reach it together: it waits for every live lane of the warp to reach a
 * collective or end, so the lanes of a partial warp past `if (i >= n) return;` are out. */
unsigned ks_cu_activemask(void)
{
    return (unsigned)warp_op(KS_CU_ACTIVEMASK, 0xffffffffu, 0, 0, 32, (uintptr_t)__builtin_return_address(0) - 1);
}

/* ---- the rest of the device API ---- */
void ks_cu_threadfence(void) {}
long long ks_cu_clock(void) { return ks_cu_g.clock += 4; }

static void print_line(const ks_cu_fib *f, const char *p, int len)
{
    printf("[block (%u,%u,%u) thread (%u,%u,%u)] %.*s\n", blockIdx.x, blockIdx.y, blockIdx.z, f->tx, f->ty, f->tz, len,
           p);
}

/* what a thread printed without a newline, at its end */
static void flush_printf(ks_cu_fib *f)
{
    if (f->plen) print_line(f, f->pbuf, f->plen);
    f->plen = 0;
}

int ks_cu_printf(const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ks_cu_fib *f = ks_cu_g.cur;
    if (!f) return printf("%s", text);
    for (const char *p = text; *p;) { /* each whole line with its thread; the rest waits for one */
        const char *nl = strchr(p, '\n');
        const int len = nl ? (int)(nl - p) : (int)strlen(p);
        const int room = (int)sizeof f->pbuf - f->plen, take = len < room ? len : room;
        memcpy(f->pbuf + f->plen, p, (size_t)take);
        f->plen += take;
        if (nl || f->plen == (int)sizeof f->pbuf) flush_printf(f);
        p += len + (nl != NULL);
    }
    return n;
}

static void assert_at(uintptr_t pc) __attribute__((noreturn));
static void assert_at(uintptr_t pc)
{
    ks_cu_fib *f = ks_cu_g.cur;
    if (f) ks_cu_stop(f, KS_CU_F_ASSERT, ks_cu_site(pc, KS_EV_FAULT, 0), 0);
    _exit(3);
}

void ks_cu_assert_fail(const char *expr, const char *file, int line)
{
    (void)expr, (void)file, (void)line;
    assert_at((uintptr_t)__builtin_return_address(0) - 1);
}

/* glibc's assert() calls this: a kernel that includes <assert.h> after kscope_cuda.h gets
 * glibc's macro back, so the runtime answers it too. Outside a kernel it does what
 * glibc's does. */
void __assert_fail(const char *expr, const char *file, unsigned int line, const char *function)
{
    if (ks_cu_g.cur) assert_at((uintptr_t)__builtin_return_address(0) - 1);
    fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, expr);
    abort();
}

void ks_cu_trap(void)
{
    ks_cu_fib *f = ks_cu_g.cur;
    if (f) ks_cu_stop(f, KS_CU_F_TRAP, ks_cu_site((uintptr_t)__builtin_return_address(0) - 1, KS_EV_FAULT, 0), 0);
    _exit(3);
}

static void run_fault(int code, uintptr_t pc, uint64_t address)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    ks_cu_fib *f = ks_cu_g.cur;
    c->fault = code;
    c->fault_block = ks_cu_g.block_lin;
    c->fault_thread = f ? f->tid : 0;
    c->fault_pc = pc >= ks_cu_g.so_base ? pc - ks_cu_g.so_base : 0;
    if (f && pc) {
        ks_event *e = ks_cu_emit(f, KS_EV_FAULT, 0, ks_cu_site(pc, KS_EV_FAULT, 0), -1);
        if (e) e->u.fault.code = (uint32_t)code, e->u.fault.address = address;
    }
}

void ks_cu_unsupported(const char *what)
{
    snprintf(ks_cu_g.ctl->error, sizeof ks_cu_g.ctl->error, "%s is not supported by the simulator", what);
    run_fault(KS_CU_F_UNSUPPORTED, (uintptr_t)__builtin_return_address(0) - 1, 0);
    fflush(stdout);
    _exit(3);
}

/* exit() called by the kernel (linked as __wrap_exit: cu_build.c) ends the run as a fault
 * of its thread; outside a kernel it is exit() */
void __wrap_exit(int code) __attribute__((noreturn));
void __wrap_exit(int code)
{
    if (!ks_cu_g.cur) exit(code); /* libc's: only the kernel's module is linked with --wrap */
    snprintf(ks_cu_g.ctl->error, sizeof ks_cu_g.ctl->error, "called exit() inside the kernel");
    run_fault(KS_CU_F_CRASH, (uintptr_t)__builtin_return_address(0) - 1, 0);
    ks_cu_g.cur = NULL;
    ks_cu_publish();
    fflush(stdout);
    _exit(3);
}

/* Calls the kernel's module may not make (linked as __wrap_NAME: cu_build.c): processes,
 * files, signals. The run stops with one line naming the call and the thread. Not a
 * sandbox against a determined program (a raw system call passes), but a kernel that
 * forks, spawns, writes files or takes over signals stops at once. */
static void refused(const char *what, uintptr_t pc) __attribute__((noreturn));
static void refused(const char *what, uintptr_t pc)
{
    snprintf(ks_cu_g.ctl->error, sizeof ks_cu_g.ctl->error,
             "called %s() inside the kernel, which the simulator refuses", what);
    run_fault(KS_CU_F_UNSUPPORTED, pc, 0);
    ks_cu_g.cur = NULL;
    ks_cu_publish();
    fflush(stdout);
    _exit(3);
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter" /* the wrappers' parameters only mirror libc's */
#define KS_CU_REFUSE(name, ret, params) \
    ret __wrap_##name params;           \
    ret __wrap_##name params { refused(#name, (uintptr_t)__builtin_return_address(0) - 1); }
KS_CU_REFUSE(fork, int, (void))
KS_CU_REFUSE(vfork, int, (void))
KS_CU_REFUSE(system, int, (const char *c))
KS_CU_REFUSE(popen, void *, (const char *c, const char *m))
KS_CU_REFUSE(execve, int, (const char *p, char *const *a, char *const *e))
KS_CU_REFUSE(execv, int, (const char *p, char *const *a))
KS_CU_REFUSE(execvp, int, (const char *p, char *const *a))
KS_CU_REFUSE(daemon, int, (int a, int b))
KS_CU_REFUSE(fopen, void *, (const char *p, const char *m))
KS_CU_REFUSE(open, int, (const char *p, int f, ...))
KS_CU_REFUSE(creat, int, (const char *p, unsigned m))
KS_CU_REFUSE(unlink, int, (const char *p))
KS_CU_REFUSE(remove, int, (const char *p))
KS_CU_REFUSE(rename, int, (const char *a, const char *b))
KS_CU_REFUSE(kill, int, (int p, int s))
KS_CU_REFUSE(signal, void *, (int s, void *h))
KS_CU_REFUSE(sigaction, int, (int s, const void *a, void *o))
KS_CU_REFUSE(alarm, unsigned, (unsigned s))
#undef KS_CU_REFUSE
#pragma GCC diagnostic pop

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    const uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    int code = sig == SIGFPE ? KS_CU_F_DIVZERO : KS_CU_F_CRASH;
    const uintptr_t a = (uintptr_t)si->si_addr;
    if ((sig == SIGSEGV || sig == SIGBUS) && g_stacks && a >= (uintptr_t)g_stacks &&
        a < (uintptr_t)g_stacks + (size_t)ks_cu_g.nthreads * (STACK_BYTES + GUARD_BYTES) &&
        (a - (uintptr_t)g_stacks) % (STACK_BYTES + GUARD_BYTES) < GUARD_BYTES)
        code = KS_CU_F_STACK;
    run_fault(code, pc, sig == SIGFPE ? 0 : a);
    ks_cu_g.cur = NULL;
    ks_cu_publish(); /* every event made so far: kscope writes the trace up to here */
    if (code == KS_CU_F_CRASH) snprintf(ks_cu_g.ctl->error, sizeof ks_cu_g.ctl->error, "%s", strsignal(sig));
    _exit(3);
}

static void install_handlers(void)
{
    static unsigned char alt[64 * 1024];
    stack_t st = {.ss_sp = alt, .ss_size = sizeof alt};
    sigaltstack(&st, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGFPE, SIGSEGV, SIGBUS, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &sa, NULL);
}

/* ---- the grid ---- */
static int filter_keep(const ks_filter *flt, int64_t index, int64_t block)
{
    return index >= flt->index_lo && index < flt->index_hi && block >= flt->block_lo && block < flt->block_hi &&
           (flt->every <= 1 || (index - flt->index_lo) % flt->every == 0);
}

static void run_block(uint32_t bx, uint32_t by, uint32_t bz)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    const uint32_t *B = c->block, *G = c->grid;
    blockIdx.x = bx, blockIdx.y = by, blockIdx.z = bz;
    ks_cu_g.block_lin = (bz * G[1] + by) * G[0] + bx;
    ks_cu_g.block_first_index = (int64_t)ks_cu_g.block_lin * ks_cu_g.nthreads;
    c->cur_block = ks_cu_g.block_lin;
    ks_cu_mem_block_start();
    for (int i = 0; i < ks_cu_g.nthreads; ++i) {
        ks_cu_fib *f = &ks_cu_g.fib[i];
        memset(f, 0, sizeof *f);
        f->tid = (uint32_t)i;
        f->tx = (uint32_t)i % B[0], f->ty = (uint32_t)i / B[0] % B[1], f->tz = (uint32_t)i / (B[0] * B[1]);
        f->stack_lo = (uintptr_t)g_stacks + (size_t)i * (STACK_BYTES + GUARD_BYTES) + GUARD_BYTES;
        f->stack_size = STACK_BYTES;
        f->keep = filter_keep(&c->filter, ks_cu_g.block_first_index + i, ks_cu_g.block_lin);
        f->sp = fiber_stack(f->stack_lo, STACK_BYTES);
        ks_event *e = ks_cu_emit(f, KS_EV_WORK, 0, 0, -1);
        if (e) {
            const int32_t v[6] = {(int32_t)bz,    (int32_t)by,    (int32_t)bx,
                                  (int32_t)f->tz, (int32_t)f->ty, (int32_t)f->tx};
            memcpy(e->u.field, v, sizeof v);
        }
    }
    ks_cu_publish(); /* the block's work events are whole: a thread that never makes another still shows */
    for (;;) {
        int ran = 0;
        for (int i = 0; i < ks_cu_g.nthreads; ++i) {
            ks_cu_fib *f = &ks_cu_g.fib[i];
            if (f->state != F_RUN) continue;
            ran = 1;
            ks_cu_g.cur = f;
            set_builtins(f);
            ks_cu_switch(&ks_cu_g.sched_sp, f->sp);
            ks_cu_g.cur = NULL;
        }
        if (ran) continue;
        int waiting_warp = -1, waiting_bar = 0;
        for (int i = 0; i < ks_cu_g.nthreads; ++i) {
            if (ks_cu_g.fib[i].state == F_WAIT_WARP && waiting_warp < 0) waiting_warp = i / 32;
            waiting_bar |= ks_cu_g.fib[i].state == F_WAIT_BAR;
        }
        if (waiting_warp >= 0) complete(waiting_warp, NULL); /* lanes that never come */
        else if (waiting_bar) pass_barrier();
        else break;
    }
}

int ks_cu_scalar_bind(const char *name, int t, double x, int64_t k, int isint, uint64_t *store, char *err, size_t n)
{
    *store = 0;
    if (t != KS_CU_F32 && t != KS_CU_F64 && !isint) {
        snprintf(err, n, "--arg %s: '%s' is an integer: give an integer (got %g)", name, name, x);
        return -1;
    }
    static const struct {
        int64_t lo;
        uint64_t hi;
        int bytes;
    } range[] = {[KS_CU_I8] = {-128, 127, 1},
                 [KS_CU_U8] = {0, 255, 1},
                 [KS_CU_I16] = {-32768, 32767, 2},
                 [KS_CU_U16] = {0, 65535, 2},
                 [KS_CU_I32] = {INT32_MIN, INT32_MAX, 4},
                 [KS_CU_U32] = {0, UINT32_MAX, 4},
                 [KS_CU_I64] = {INT64_MIN, INT64_MAX, 8},
                 [KS_CU_U64] = {0, INT64_MAX, 8},
                 [KS_CU_BOOL] = {0, 1, 1}};
    if (t == KS_CU_F32) {
        if (fabs(x) > 3.4028234663852886e38) {
            snprintf(err, n, "--arg %s: %g does not fit a float", name, x);
            return -1;
        }
        const float v = (float)x;
        memcpy(store, &v, 4);
    } else if (t == KS_CU_F64) {
        memcpy(store, &x, 8);
    } else if (t < 1 || t > KS_CU_BOOL || !range[t].bytes || k < range[t].lo || (k >= 0 && (uint64_t)k > range[t].hi)) {
        snprintf(err, n, "--arg %s: %lld does not fit the parameter's type", name, (long long)k);
        return -1;
    } else {
        memcpy(store, &k, (size_t)range[t].bytes); /* little-endian: the low bytes */
    }
    return 0;
}

static int bind_params(void **args, uint64_t *store, const uint8_t *types, int n)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    if (n != c->nparams) {
        snprintf(c->error, sizeof c->error, "the kernel takes %d parameters, its declaration names %d", n, c->nparams);
        return -1;
    }
    for (int i = 0; i < n; ++i) {
        const char *name = c->param_name[i];
        const int t = types[i];
        c->param_type[i] = (uint8_t)t;
        if (t == KS_CU_BAD || t == (KS_CU_PTR | KS_CU_BAD) || (t & KS_CU_PTR ? 0 : t == KS_CU_OPAQUE)) {
            snprintf(c->error, sizeof c->error,
                     "parameter '%s' has a type kscope cannot give (a struct, a reference or a pointer to a pointer)",
                     name);
            return -1;
        }
        args[i] = &store[i];
        if (t & KS_CU_PTR) {
            if (c->param_buf[i] < 0) {
                snprintf(
                    c->error, sizeof c->error,
                    "--arg %s: '%s' is a pointer: give a buffer (@FILE.npy, zeros:SHAPE or empty:SHAPE), not a number",
                    name, name);
                return -1;
            }
            const ks_cu_buf *b = &c->bufs[c->param_buf[i]];
            const int want = t & ~KS_CU_PTR;
            if (want != KS_CU_OPAQUE && want != b->dtype && !(want == KS_CU_BOOL && b->dtype == KS_CU_U8)) {
                static const char *const names[] = {"?",
                                                    "float (f32)",
                                                    "double (f64)",
                                                    "signed char (i8)",
                                                    "unsigned char (u8)",
                                                    "short (i16)",
                                                    "unsigned short (u16)",
                                                    "int (i32)",
                                                    "unsigned (u32)",
                                                    "long (i64)",
                                                    "unsigned long (u64)",
                                                    "bool (u8)"};
                snprintf(c->error, sizeof c->error, "--arg %s: the buffer holds %s, but '%s' points to %s", name,
                         b->dtype < 12 ? names[b->dtype] : "?", name, want < 12 ? names[want] : "?");
                return -1;
            }
            store[i] = (uint64_t)(uintptr_t)(ks_cu_g.map + b->offset);
            continue;
        }
        if (c->param_buf[i] >= 0) {
            snprintf(c->error, sizeof c->error, "--arg %s: '%s' is a scalar: give a number, not a buffer", name, name);
            return -1;
        }
        if (ks_cu_scalar_bind(name, t, c->param_f[i], c->param_i[i], c->param_isint[i], &store[i], c->error,
                              sizeof c->error))
            return -1;
    }
    return 0;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    if ((uintptr_t)info->dlpi_addr != ks_cu_g.so_base) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD)
            ks_cu_mem_ignore(info->dlpi_addr + p->p_vaddr, info->dlpi_addr + p->p_vaddr + p->p_memsz);
    }
    return 1;
}

void ks_cu_child_main(unsigned char *map, const char *so)
{
    ks_cu_ctl *c = (ks_cu_ctl *)map;
    ks_cu_g.map = map, ks_cu_g.ctl = c, ks_cu_g.ev = (ks_event *)(map + c->ring_at);
    setvbuf(stdout, NULL, _IOLBF, 0);
    void *h = dlopen(so, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        snprintf(c->error, sizeof c->error, "cannot load the compiled kernel: %s", dlerror());
        _exit(2);
    }
    g_entry = (void (*)(void **))dlsym(h, "ks_cu_entry");
    const int *np = dlsym(h, "ks_cu_nparams");
    const uint8_t *const *tp = dlsym(h, "ks_cu_param_types");
    const uint8_t *types = tp ? *tp : NULL;
    Dl_info di;
    if (!g_entry || !np || !types || !dladdr((void *)g_entry, &di)) {
        snprintf(c->error, sizeof c->error, "the compiled kernel lacks its entry point");
        _exit(2);
    }
    ks_cu_g.so_base = (uintptr_t)di.dli_fbase;
    void *args[KS_CU_MAX_PARAMS];
    uint64_t store[KS_CU_MAX_PARAMS];
    const int rc = bind_params(args, store, types, *np);
    if (rc) _exit(2);
    g_args = args;
    /* no core files, no large files, few descriptors from here on */
    const struct rlimit core = {0, 0}, fsize = {1ull << 30, 1ull << 30}, files = {64, 64};
    setrlimit(RLIMIT_CORE, &core), setrlimit(RLIMIT_FSIZE, &fsize), setrlimit(RLIMIT_NOFILE, &files);
    dl_iterate_phdr(find_module, NULL);
    ks_cu_mem_ignore((uintptr_t)&threadIdx, (uintptr_t)(&threadIdx + 1));
    ks_cu_mem_ignore((uintptr_t)&blockIdx, (uintptr_t)(&blockIdx + 1));
    ks_cu_mem_ignore((uintptr_t)&blockDim, (uintptr_t)(&blockDim + 1));
    ks_cu_mem_ignore((uintptr_t)&gridDim, (uintptr_t)(&gridDim + 1));
    ks_cu_mem_setup();
    ks_cu_g.nthreads = (int)(c->block[0] * c->block[1] * c->block[2]);
    const size_t stride = STACK_BYTES + GUARD_BYTES;
    g_stacks = mmap(NULL, stride * (size_t)ks_cu_g.nthreads, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    static ks_cu_fib fibs[1024];
    if (g_stacks == MAP_FAILED) {
        snprintf(c->error, sizeof c->error, "cannot map %d fiber stacks", ks_cu_g.nthreads);
        _exit(2);
    }
    for (int i = 0; i < ks_cu_g.nthreads; ++i) mprotect(g_stacks + (size_t)i * stride, GUARD_BYTES, PROT_NONE);
    ks_cu_g.fib = fibs;
    blockDim.x = c->block[0], blockDim.y = c->block[1], blockDim.z = c->block[2];
    gridDim.x = c->grid[0], gridDim.y = c->grid[1], gridDim.z = c->grid[2];
    install_handlers();
    c->started = 1;
    for (uint32_t bz = 0; bz < c->grid[2]; ++bz)
        for (uint32_t by = 0; by < c->grid[1]; ++by)
            for (uint32_t bx = 0; bx < c->grid[0]; ++bx) {
                run_block(bx, by, bz);
                c->blocks_done++;
            }
    c->finished = 1;
    ks_cu_publish();
    fflush(stdout);
    _exit(0);
}
