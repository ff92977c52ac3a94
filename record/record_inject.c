/* record_inject.c - libkscope_record.so, the library `kscope record` injects into an
 * unmodified CUDA program (CUDA_INJECTION64_PATH). Through NVIDIA's Compute Sanitizer API
 * it patches every global memory instruction of each module the program loads with
 * ks_rec_global (record_patch.cu), follows the allocations, and around each launch that
 * matches the recording's choice: gives the launch a device state (a record buffer and
 * the filter), waits for it at its end, copies the records back and writes the trace
 * DIR/NNNN-KERNEL.kst (record_trace.c). Launches not recorded run with a state that
 * records nothing.
 *
 * Its settings come from the environment kscope record sets: KS_RECORD_OUT (folder),
 * KS_RECORD_KERNEL (extended regex on the demangled name), KS_RECORD_LAUNCH ("all" or the
 * K-th matching launch, from 0), KS_RECORD_BLOCKS / KS_RECORD_THREADS ("A:B", linear ids),
 * KS_RECORD_MAX_EVENTS (records per launch), KS_RECORD_SHARED ("1": shared accesses and
 * barriers too), KS_RECORD_RUNS ("0": a slot a record, record.h), KS_RECORD_FSYNC ("1":
 * each trace synced to disk before it is renamed into place), KS_RECORD_PATCHES (the patch fatbin; default:
 * beside this library) and KS_RECORD_STATUS, a file it appends one line per happening to
 * ("trace\tRECORDS\tDROPPED\tPATH\tKERNEL" with tabs, "seen KERNEL", "note ...", "error MESSAGE"), which kscope
 * record reads when the program ends.
 *
 * A program names a range of memory (a tensor) with kscope_record_name, found with
 * dlsym: the Python module kscope_record does that through ctypes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sanitizer.h>

#include "../kernels/core/ks_error.h"
#include "cubin_lines.h"
#include "record_int.h"
#include "../trace/ks_file.h"
#include "../trace/parallel.h"

#define KS_API __attribute__((visibility("default")))

#define MAX_CTX 16
#define MAX_LIVE 64
#define MAX_MODULES 256

/* the source lines of a module built with -lineinfo, read when it loads */
typedef struct module_lines {
    CUmodule module;
    ks_cubin_lines lines;
} module_lines;

typedef struct ctx_state {
    CUcontext ctx;
    int patches;                /* the patch module is loaded in this context */
    ks_rec_state *on_d, *off_d; /* device states: recording, and recording nothing */
    ks_rec *recs_d;
    unsigned long long capacity; /* records recs_d holds */
    int busy;                    /* a recorded launch owns on_d and recs_d until its trace is written */
    /* a pinned window the records come back through, KS_STAGE_RECORDS at a time (owned
     * with recs_d): into pageable memory the copy ran at 0.7-1.5 GB/s, and pinning memory
     * for all of a launch's records cost 0.5 ms a MB (H200) */
    ks_rec *stage_h;
    unsigned long long *runs_d; /* the threads' states of a launch recorded in runs (record.h) */
    uint64_t runs_cap;          /* states runs_d holds */
} ctx_state;
#ifndef KS_STAGE_RECORDS
#define KS_STAGE_RECORDS (1u << 19) /* 16 MB (-DKS_STAGE_RECORDS=N to compare) */
#endif
_Static_assert(KS_STAGE_RECORDS % KS_REC_RUN == 0, "a piece of the window holds whole runs");

/* a recorded launch between its begin and end callbacks; the grid, the block and the
 * name are valid only at the begin */
typedef struct live_launch {
    Sanitizer_LaunchHandle handle;
    int used;
    uint64_t number;
    ks_rec_state host;
    ctx_state *ctx;
    uint64_t fn_size;
    uint32_t grid[3], block[3];
    int64_t dyn_shared; /* the launch's dynamic shared bytes, -1 unknown */
    uint64_t lo, hi;    /* the global thread ids it records can have (thread_span) */
    int runs;           /* recorded in runs: its threads' states in ctx->runs_d */
    char kernel[512];
    char mangled[512];
    CUmodule module;
} live_launch;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* The dynamic shared memory a launch asks for is not in the Sanitizer API's launch data:
 * the runtime or driver call that launches it gives it, on the same thread, just before
 * the launch callback (-1: no launch call seen; note_launch_call sets it). */
static __thread int64_t t_dyn_shared = -1;

static struct {
    pthread_mutex_t mu;
    int ready;
    char out[2048], status[2048], patches[2048];
    int have_regex, launch_all;
    int shared; /* KS_RECORD_SHARED=1: shared accesses and barriers patched too */
    int zstd;   /* KS_RECORD_ZSTD=1: traces' chunks compressed with zstd (--compress) */
    int runs;   /* records claimed in runs where the threads' states fit (KS_RECORD_RUNS=0: never) */
    int times;  /* KS_RECORD_TIMES=1: a note of each recorded launch's times, and at exit the
                 * modules' patching and the buffers' setup */
    int npatched, nskipped;
    double ms_patch, ms_lines, ms_buffers;
    double ms_last_end, ms_exit;   /* KS_RECORD_TIMES: the last recorded launch's end, exit()'s start */
    CUmodule skipped[MAX_MODULES]; /* modules left unpatched (the first MAX_MODULES) */
    pid_t pid;                     /* the process InitializeInjection ran in (not a fork's child) */
    regex_t regex;
    unsigned long long launch_k, max_records;
    uint64_t block_lo, block_hi, thread_lo, thread_hi;
    uint64_t launches, matched;
    ctx_state ctx[MAX_CTX];
    live_launch live[MAX_LIVE];
    ks_rec_buf *bufs; /* named ranges and allocations */
    int nbufs, cap_bufs, next_alloc;
    char seen[32][64];
    int nseen;
    module_lines modules[MAX_MODULES];
    int nmodules;
    int building; /* traces being built with the lock released: module lines stay */
    Sanitizer_SubscriberHandle sub;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void status(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    for (int i = 0; i < n; ++i)
        if (line[i] == '\n') line[i] = ' ';
    line[n++] = '\n';
    if (!g.status[0]) {
        fwrite(line, 1, (size_t)n, stderr);
        return;
    }
    const int fd = open(g.status, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) != n) { /* nothing more to do: the status is lost */
    }
    close(fd);
}

static const char *san_error(SanitizerResult r)
{
    const char *s = NULL;
    if (sanitizerGetResultString(r, &s) != SANITIZER_SUCCESS || !s) s = "unknown error";
    return s;
}

static void demangle(const char *name, char *out, size_t n)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static demangle_fn fn;
    static int looked;
    if (!looked) {
        looked = 1;
        fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (!fn) {
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h) fn = (demangle_fn)dlsym(h, "__cxa_demangle");
        }
    }
    int st = -1;
    char *d = fn && name ? fn(name, NULL, NULL, &st) : NULL;
    snprintf(out, n, "%s", d && st == 0 ? d : name ? name : "?");
    free(d);
}

static void device_name(CUcontext c, char *out, size_t n)
{
    (void)c;
    typedef CUresult (*get_dev)(CUdevice *);
    typedef CUresult (*get_name)(char *, int, CUdevice);
    /* the driver is loaded (it loaded us), maybe not globally: ask it by name */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    get_dev gd = (get_dev)dlsym(h ? h : RTLD_DEFAULT, "cuCtxGetDevice");
    get_name gn = (get_name)dlsym(h ? h : RTLD_DEFAULT, "cuDeviceGetName");
    CUdevice dev;
    snprintf(out, n, "cuda");
    if (gd && gn && gd(&dev) == CUDA_SUCCESS) gn(out, (int)n, dev);
    if (h) dlclose(h);
}

static ctx_state *ctx_of(CUcontext c)
{
    for (int i = 0; i < MAX_CTX; ++i)
        if (g.ctx[i].ctx == c) return &g.ctx[i];
    for (int i = 0; i < MAX_CTX; ++i)
        if (!g.ctx[i].ctx && !g.ctx[i].busy) { /* a busy slot's context ended: its build owns it */
            memset(&g.ctx[i], 0, sizeof g.ctx[i]);
            g.ctx[i].ctx = c;
            return &g.ctx[i];
        }
    return NULL;
}

static int add_buf(const ks_rec_buf *b)
{
    if (g.nbufs == g.cap_bufs) {
        const int cap = g.cap_bufs ? g.cap_bufs * 2 : 256;
        ks_rec_buf *nb = realloc(g.bufs, (size_t)cap * sizeof *nb);
        if (!nb) return -1;
        g.bufs = nb, g.cap_bufs = cap;
    }
    g.bufs[g.nbufs++] = *b;
    return 0;
}

static void drop_bufs(uint64_t addr, int named)
{
    int k = 0;
    for (int i = 0; i < g.nbufs; ++i)
        if (!(g.bufs[i].named == named && g.bufs[i].addr == addr)) g.bufs[k++] = g.bufs[i];
    g.nbufs = k;
}

static void on_alloc(const Sanitizer_ResourceMemoryData *m)
{
    if (!m || !m->address || !m->size) return;
    ks_rec_buf b;
    memset(&b, 0, sizeof b);
    b.addr = m->address, b.bytes = m->size;
    snprintf(b.name, sizeof b.name, "alloc%d", g.next_alloc++);
    /* 4-byte elements unless the size says otherwise (a name gives the real dtype) */
    b.dtype = m->size % 4 ? KS_U8 : KS_F32;
    b.ndim = 1, b.shape[0] = (int64_t)(m->size / ks_dtype_size(b.dtype));
    drop_bufs(b.addr, 0);
    if (add_buf(&b)) status("error out of memory");
}

/* Whether --kernel's regex (or none) takes the kernel of this mangled name: its demangled
 * name, or the identifier alone (a template kernel's name starts with its return type). */
static int kernel_wanted(const char *mangled, char *name, size_t name_size, char short_name[64])
{
    demangle(mangled, name, name_size);
    ks_rec_short_name(name, short_name, 64);
    return !g.have_regex || regexec(&g.regex, name, 0, NULL, 0) == 0 || regexec(&g.regex, short_name, 0, NULL, 0) == 0;
}

/* Whether a module may hold a kernel to record: with --kernel, a cubin none of whose
 * functions the regex takes is left unpatched, so its kernels run at full speed (patching
 * took 3-5 ms a module); an image that is not an ELF cubin is patched. */
static int module_wanted(const Sanitizer_ResourceModuleData *m)
{
    char **fns, name[512], short_name[64];
    int n, want = 0;
    if (!g.have_regex || !m->pCubin || ks_cubin_functions(m->pCubin, m->cubinSize, &fns, &n)) return 1;
    for (int i = 0; i < n && !want; ++i) want = kernel_wanted(fns[i], name, sizeof name, short_name);
    ks_cubin_names_free(fns, n);
    return want || n == 0; /* no function found: a layout not understood, patched */
}

static void on_module(const Sanitizer_ResourceModuleData *m)
{
    ctx_state *c = ctx_of(m->context);
    if (!c) {
        status("error more than %d CUDA contexts", MAX_CTX);
        return;
    }
    SanitizerResult r;
    const double t0 = now_ms();
    if (!module_wanted(m)) {
        if (g.nskipped < MAX_MODULES) g.skipped[g.nskipped] = m->module;
        g.nskipped++, g.ms_patch += now_ms() - t0;
        return;
    }
    if (!c->patches) {
        if ((r = sanitizerAddPatchesFromFile(g.patches, m->context)) != SANITIZER_SUCCESS) {
            status("error cannot load the recorder's patches %s: %s", g.patches, san_error(r));
            return;
        }
        c->patches = 1;
    }
    ks_cubin_lines lines;
    const double t1 = now_ms();
    if (m->pCubin && ks_cubin_lines_read(m->pCubin, m->cubinSize, &lines) == 0) {
        if (lines.nrows && g.nmodules < MAX_MODULES) {
            g.modules[g.nmodules].module = m->module;
            g.modules[g.nmodules++].lines = lines;
        } else ks_cubin_lines_free(&lines);
    }
    g.ms_lines += now_ms() - t1;
    if ((r = sanitizerPatchInstructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, m->module, "ks_rec_global")) !=
            SANITIZER_SUCCESS ||
        (g.shared && ((r = sanitizerPatchInstructions(SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS, m->module,
                                                      "ks_rec_shared")) != SANITIZER_SUCCESS ||
                      (r = sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BARRIER, m->module, "ks_rec_barrier")) !=
                          SANITIZER_SUCCESS)) ||
        (r = sanitizerPatchModule(m->module)) != SANITIZER_SUCCESS)
        status("error cannot patch a module: %s", san_error(r));
    g.npatched++, g.ms_patch += now_ms() - t0;
}

/* the device states of a context, and (recording) a record buffer of up to max_records */
static int ctx_buffers_make(ctx_state *c, Sanitizer_StreamHandle st, int recording)
{
    if (!c->off_d) {
        ks_rec_state *off = NULL, *on = NULL, zero;
        memset(&zero, 0, sizeof zero);
        int ok = sanitizerAlloc(c->ctx, (void **)&off, sizeof *off) == SANITIZER_SUCCESS;
        ok = ok && sanitizerAlloc(c->ctx, (void **)&on, sizeof *on) == SANITIZER_SUCCESS;
        ok = ok && sanitizerMemcpyHostToDeviceAsync(off, &zero, sizeof zero, st) == SANITIZER_SUCCESS &&
             sanitizerStreamSynchronize(st) == SANITIZER_SUCCESS;
        if (!ok) {
            if (off) sanitizerFree(c->ctx, off);
            if (on) sanitizerFree(c->ctx, on);
            status("error cannot set up the recorder's state on the GPU");
            return -1;
        }
        c->off_d = off, c->on_d = on;
    }
    if (recording && !c->recs_d) {
        for (unsigned long long cap = g.max_records; cap >= 1024; cap /= 2)
            if (sanitizerAlloc(c->ctx, (void **)&c->recs_d, cap * sizeof(ks_rec)) == SANITIZER_SUCCESS) {
                c->capacity = cap;
                if (cap < g.max_records)
                    status("note the GPU had room for %llu records a launch, not %llu", cap, g.max_records);
                break;
            }
        if (!c->recs_d) {
            status("error cannot allocate a record buffer on the GPU");
            return -1;
        }
    }
    return 0;
}

static int ctx_buffers(ctx_state *c, Sanitizer_StreamHandle st, int recording)
{
    if (c->off_d && (c->recs_d || !recording)) return 0;
    const double t0 = now_ms();
    const int rc = ctx_buffers_make(c, st, recording);
    g.ms_buffers += now_ms() - t0;
    return rc;
}

/* a context going away: its device memory goes with it, and its slot is free again (a
 * new context may get the same handle) */
static void on_context_destroy(CUcontext ctx)
{
    for (int i = 0; i < MAX_CTX; ++i)
        if (g.ctx[i].ctx == ctx) {
            ctx_state *c = &g.ctx[i];
            if (c->busy) { /* a trace is being read out of it on another thread: leave it */
                c->ctx = NULL;
                continue;
            }
            if (c->off_d) sanitizerFree(ctx, c->off_d);
            if (c->on_d) sanitizerFree(ctx, c->on_d);
            if (c->recs_d) sanitizerFree(ctx, c->recs_d);
            if (c->stage_h) sanitizerFreeHost(ctx, c->stage_h);
            if (c->runs_d) sanitizerFree(ctx, c->runs_d);
            memset(c, 0, sizeof *c);
        }
}

static void note_seen(const char *s)
{
    for (int i = 0; i < g.nseen; ++i)
        if (!strcmp(g.seen[i], s)) return;
    if (g.nseen == 32) return;
    snprintf(g.seen[g.nseen++], sizeof g.seen[0], "%s", s);
    status("seen %s", s);
}

/* The global thread ids [lo, hi) a launch of `grid` x `block` records: the grid's, within
 * the filter (the device callbacks' `kept`). */
static void thread_span(const uint32_t grid[3], const uint32_t block[3], uint64_t *lo, uint64_t *hi)
{
    const uint64_t T = (uint64_t)block[0] * block[1] * block[2], blocks = (uint64_t)grid[0] * grid[1] * grid[2];
    *lo = (g.block_lo < blocks ? g.block_lo : blocks) * T, *hi = blocks * T;
    if (g.block_hi < blocks) *hi = g.block_hi * T;
    if (g.thread_lo > *lo) *lo = g.thread_lo < *hi ? g.thread_lo : *hi;
    if (g.thread_hi < *hi) *hi = g.thread_hi > *lo ? g.thread_hi : *lo;
}

/* Runs for a launch recording threads [v->lo, v->hi): their states zeroed on its stream,
 * in the context's state buffer (grown as needed). 0 when the launch records a slot a
 * record instead: runs are off; the threads are so many that the slots their last runs
 * may leave unused (KS_REC_RUN - 1 each) could pass a quarter of the buffer (2 M threads
 * of 3 accesses each would keep 3 M of 6 M accesses in runs, all of them a slot a record);
 * the grid's blocks pass 2^32 (the callbacks' 32-bit block ids wrap: two threads would
 * share a state); the buffer holds 2^32 records or more; or the states cannot be made. */
static int runs_begin(ctx_state *c, live_launch *v, Sanitizer_StreamHandle st)
{
    const uint64_t span = v->hi - v->lo, blocks = (uint64_t)v->grid[0] * v->grid[1] * v->grid[2];
    if (!g.runs || span == 0 || span > KS_REC_RUNS_MAX_THREADS || (KS_REC_RUN - 1) * span > c->capacity / 4 ||
        blocks > UINT32_MAX || c->capacity / KS_REC_RUN * KS_REC_RUN >= UINT32_MAX || c->capacity < KS_REC_RUN)
        return 0;
    if (span > c->runs_cap) {
        if (c->runs_d) sanitizerFree(c->ctx, c->runs_d);
        c->runs_d = NULL, c->runs_cap = 0;
        if (sanitizerAlloc(c->ctx, (void **)&c->runs_d, span * sizeof *c->runs_d) != SANITIZER_SUCCESS) {
            c->runs_d = NULL;
            return 0;
        }
        c->runs_cap = span;
    }
    return sanitizerMemset(c->runs_d, 0, span * sizeof *c->runs_d, st) == SANITIZER_SUCCESS;
}

static void on_launch_begin(const Sanitizer_LaunchData *l)
{
    const uint64_t number = g.launches++;
    ctx_state *c = ctx_of(l->context);
    if (!c) return;
    char name[512], short_name[64];
    int rec = kernel_wanted(l->functionName, name, sizeof name, short_name);
    note_seen(short_name);
    for (int i = 0; rec && i < g.nskipped && i < MAX_MODULES; ++i)
        if (g.skipped[i] == l->module) { /* its cubin listed no function --kernel takes: never so */
            status("error launch %llu (%s) is in a module the recorder left unpatched, its cubin listing no "
                   "kernel --kernel takes; record without --kernel",
                   (unsigned long long)number, short_name);
            rec = 0;
        }
    if (rec) {
        rec = g.launch_all || g.matched == g.launch_k;
        g.matched++;
    }
    if (rec && c->busy) { /* the record buffer is another launch's until its trace is out */
        status("note launch %llu (%s) ran while another was being recorded: not recorded", (unsigned long long)number,
               short_name);
        rec = 0;
    }
    if (ctx_buffers(c, l->hStream, rec)) rec = 0;
    int slot = -1;
    for (int i = 0; i < MAX_LIVE && rec && slot < 0; ++i)
        if (!g.live[i].used) slot = i;
    if (rec && slot < 0) rec = 0;
    if (!rec) {
        sanitizerSetLaunchCallbackData(l->hLaunch, l->function, l->hStream, c->off_d);
        return;
    }
    live_launch *v = &g.live[slot];
    memset(v, 0, sizeof *v);
    v->used = 1, v->handle = l->hLaunch, v->number = number;
    v->grid[0] = l->gridDim_x, v->grid[1] = l->gridDim_y, v->grid[2] = l->gridDim_z;
    v->dyn_shared = t_dyn_shared; /* what this thread's launch call asked for */
    t_dyn_shared = -1;
    v->block[0] = l->blockDim_x, v->block[1] = l->blockDim_y, v->block[2] = l->blockDim_z;
    snprintf(v->kernel, sizeof v->kernel, "%s", name);
    snprintf(v->mangled, sizeof v->mangled, "%s", l->functionName ? l->functionName : "");
    v->module = l->module;
    v->ctx = c;
    ks_rec_state *h = &v->host;
    h->recs = c->recs_d, h->capacity = c->capacity, h->on = 1;
    thread_span(v->grid, v->block, &v->lo, &v->hi);
    if ((v->runs = runs_begin(c, v, l->hStream)))
        h->runs = c->runs_d, h->runs_lo = v->lo, h->capacity = c->capacity / KS_REC_RUN * KS_REC_RUN;
    uint64_t pc = 0, size = 0;
    if (sanitizerGetFunctionPcAndSize(l->module, l->functionName, &pc, &size) != SANITIZER_SUCCESS) pc = 0;
    h->fn_pc = pc;
    v->fn_size = size;
    h->block_lo = (uint32_t)(g.block_lo > 0xffffffffull ? 0xffffffffull : g.block_lo);
    h->block_hi = (uint32_t)(g.block_hi > 0xffffffffull ? 0xffffffffull : g.block_hi);
    h->thread_lo = g.thread_lo, h->thread_hi = g.thread_hi;
    if (sanitizerMemcpyHostToDeviceAsync(c->on_d, h, sizeof *h, l->hStream) != SANITIZER_SUCCESS ||
        sanitizerSetLaunchCallbackData(l->hLaunch, l->function, l->hStream, c->on_d) != SANITIZER_SUCCESS) {
        status("error cannot set up the recording of launch %llu", (unsigned long long)number);
        v->used = 0;
        sanitizerSetLaunchCallbackData(l->hLaunch, l->function, l->hStream, c->off_d);
        return;
    }
    c->busy = 1;
}

typedef struct copy_ctx {
    Sanitizer_StreamHandle stream;
    const ks_cubin_lines *lines; /* NULL: the module has no line info */
    const char *mangled;
    uint64_t fn_size; /* an offset past the kernel's code is a called function's: no line */
} copy_ctx;

static int line_of(uint32_t pc, ks_rec_line *out, void *ctx)
{
    const copy_ctx *cc = ctx;
    const char *file;
    int line;
    if (!cc->lines || pc >= cc->fn_size || !ks_cubin_line_of(cc->lines, cc->mangled, pc, &file, &line)) return 0;
    snprintf(out->file, sizeof out->file, "%s", file);
    out->line = line;
    return 1;
}

static int copy_back(void *dst, uint64_t addr, size_t bytes, void *ctx)
{
    const copy_ctx *cc = ctx;
    return sanitizerMemcpyDeviceToHost(dst, (void *)(uintptr_t)addr, bytes, cc->stream) == SANITIZER_SUCCESS ? 0 : -1;
}

/* Pageable memory's pages made before a copy into it, on up to 16 threads: a copy into
 * fresh memory takes a page fault a page on the copying thread. */
typedef struct touch_job {
    unsigned char *p;
    size_t n;
} touch_job;

static void *touch(void *arg)
{
    const touch_job *j = arg;
    memset(j->p, 0, j->n);
    return NULL;
}

static void prefault(void *p, size_t bytes)
{
    touch_job jobs[KS_MAX_THREADS];
    const int nt = ks_threads_for(bytes, 8u << 20);
    for (int t = 0; t < nt; ++t) {
        const size_t from = bytes * (size_t)t / (size_t)nt, to = bytes * (size_t)(t + 1) / (size_t)nt;
        jobs[t] = (touch_job){(unsigned char *)p + from, to - from};
    }
    ks_run_parallel(touch, jobs, sizeof *jobs, nt);
}

/* One piece of a read-back: `bytes` of device memory at `src` copied into the window
 * `win`, without the lock (a device call under it could wait on a thread that waits for
 * it; a context the program destroys meanwhile fails the copy, or is seen next). Then the
 * lock is taken and the launch's context checked: a context ending frees its pinned
 * memory, and its callback takes the lock. Returns 1 with the lock HELD, so the caller
 * reads the window and releases it, or -1 (said) with the lock released. */
static int window_piece(const ctx_state *c, const Sanitizer_LaunchData *l, const live_launch *me, void *win, void *src,
                        size_t bytes, double ms[3])
{
    const double t = now_ms();
    int rc = 1;
    if (sanitizerMemcpyDeviceToHost(win, src, bytes, l->hStream) != SANITIZER_SUCCESS) {
        status("error cannot read the records of launch %llu", (unsigned long long)me->number);
        rc = -1;
    }
    ms[1] += now_ms() - t;
    pthread_mutex_lock(&g.mu);
    if (rc == 1 && c->ctx != l->context) {
        status("error launch %llu's context ended before its records were read", (unsigned long long)me->number);
        rc = -1;
    }
    if (rc != 1) pthread_mutex_unlock(&g.mu);
    return rc;
}

/* A launch's n records read back through the context's pinned window, twice (counted,
 * then placed: ks_rec_sorter), into *out in (block, thread) order, a window_piece at a
 * time. Returns 1, 0 when there is no window (read the records another way), -1 on an
 * error (said). */
static int read_back_sorted(ctx_state *c, const Sanitizer_LaunchData *l, const live_launch *me, uint64_t n, uint64_t lo,
                            uint64_t hi, ks_rec **out, double ms[3])
{
    double t = now_ms();
    if (!c->stage_h &&
        sanitizerAllocHost(l->context, (void **)&c->stage_h, KS_STAGE_RECORDS * sizeof(ks_rec)) != SANITIZER_SUCCESS)
        c->stage_h = NULL;
    ks_rec *sorted = c->stage_h ? malloc(n * sizeof *sorted) : NULL;
    ks_rec_sorter *so = sorted ? ks_rec_sorter_new(me->block, lo, hi, n, sorted) : NULL;
    ms[0] += now_ms() - t;
    if (!so) {
        free(sorted);
        return 0;
    }
    int rc = 1;
    for (int pass = 0; pass < 2 && rc == 1; ++pass)
        for (uint64_t at = 0; at < n && rc == 1; at += KS_STAGE_RECORDS) {
            const uint64_t len = n - at < KS_STAGE_RECORDS ? n - at : KS_STAGE_RECORDS;
            rc = window_piece(c, l, me, c->stage_h, c->recs_d + at, len * sizeof(ks_rec), ms);
            if (rc != 1) break;
            t = now_ms();
            if (pass ? ks_rec_sorter_place(so, c->stage_h, len) : ks_rec_sorter_count(so, c->stage_h, len)) {
                status("error launch %llu's records name threads outside its grid, or changed between two reads",
                       (unsigned long long)me->number);
                rc = -1;
            }
            pthread_mutex_unlock(&g.mu);
            ms[2] += now_ms() - t;
        }
    t = now_ms();
    if (rc == 1 && ks_rec_sorter_finish(so)) rc = -1;
    ms[2] += now_ms() - t;
    ks_rec_sorter_free(so);
    if (rc == 1) *out = sorted;
    else free(sorted);
    return rc;
}

/* A launch recorded in runs: its threads' states, then its `slots` slots (whole runs) read
 * back through the context's pinned window once, each run copied to its thread's place
 * (ks_rec_runs): *out gets the records in (block, thread) order and *n their number. The
 * window is read a window_piece at a time (without a pinned one, a pageable one). Returns 1,
 * 0 when there is no memory (a run's unused slots hold anything: there is no other way
 * to read them), -1 on an error (said). */
static int read_back_runs(ctx_state *c, const Sanitizer_LaunchData *l, const live_launch *me, uint64_t slots,
                          ks_rec **out, unsigned long long *n, double ms[3])
{
    double t = now_ms();
    if (!c->stage_h &&
        sanitizerAllocHost(l->context, (void **)&c->stage_h, KS_STAGE_RECORDS * sizeof(ks_rec)) != SANITIZER_SUCCESS)
        c->stage_h = NULL;
    /* no pinned window: a pageable one of the same size (slower copies, the same reading) */
    ks_rec *own = c->stage_h ? NULL : malloc(KS_STAGE_RECORDS * sizeof *own), *win = c->stage_h ? c->stage_h : own;
    const uint64_t span = me->hi - me->lo, per = KS_STAGE_RECORDS * sizeof(ks_rec) / sizeof(uint64_t);
    uint64_t *state = win ? malloc(span * sizeof *state) : NULL;
    ms[0] += now_ms() - t;
    if (!state) {
        free(own);
        return 0;
    }
    int rc = 1;
    for (uint64_t at = 0; at < span && rc == 1; at += per) { /* the states, through the window */
        const uint64_t len = span - at < per ? span - at : per;
        rc = window_piece(c, l, me, win, c->runs_d + at, len * sizeof *state, ms);
        if (rc != 1) break;
        memcpy(state + at, win, len * sizeof *state);
        pthread_mutex_unlock(&g.mu);
    }
    t = now_ms();
    ks_rec_runs *r = rc == 1 ? ks_rec_runs_new(state, span, me->lo, me->block, slots) : NULL;
    free(state);
    const uint64_t total = r ? ks_rec_runs_total(r) : 0;
    ks_rec *sorted = r && total ? malloc(total * sizeof *sorted) : NULL;
    ms[0] += now_ms() - t;
    if (rc == 1 && (!r || (total && !sorted))) rc = 0; /* no memory: the records another way */
    if (rc == 1 && !total && slots) {
        status("error launch %llu's records do not match its threads' states", (unsigned long long)me->number);
        rc = -1;
    }
    for (uint64_t at = 0; at < slots && rc == 1; at += KS_STAGE_RECORDS) {
        const uint64_t len = slots - at < KS_STAGE_RECORDS ? slots - at : KS_STAGE_RECORDS;
        rc = window_piece(c, l, me, win, c->recs_d + at, len * sizeof(ks_rec), ms);
        if (rc != 1) break;
        t = now_ms();
        if (ks_rec_runs_place(r, win, at, len, sorted)) {
            status("error launch %llu's records name threads outside its grid, or hold runs its threads' states "
                   "do not account for",
                   (unsigned long long)me->number);
            rc = -1;
        }
        pthread_mutex_unlock(&g.mu);
        ms[2] += now_ms() - t;
    }
    if (rc == 1 && ks_rec_runs_finish(r)) {
        status("error launch %llu's records do not match its threads' states", (unsigned long long)me->number);
        rc = -1;
    }
    ks_rec_runs_free(r);
    free(own);
    if (rc == 1) *out = sorted, *n = total;
    else free(sorted);
    return rc;
}

/* The end of a recorded launch: wait for it, read its records back and write its trace.
 * Called with the lock held; the wait and the trace are made with it released, so other
 * threads' CUDA calls go on meanwhile (the launch's record buffer stays its own: `busy`). */
static void on_launch_end(const Sanitizer_LaunchData *l)
{
    live_launch *v = NULL;
    for (int i = 0; i < MAX_LIVE && !v; ++i)
        if (g.live[i].used && g.live[i].handle == l->hLaunch) v = &g.live[i];
    if (!v) return;
    live_launch me = *v;
    v->used = 0;
    ctx_state *c = me.ctx;
    /* what the build reads, copied: the buffers may change while the lock is released */
    ks_rec_buf *bufs = malloc((size_t)(g.nbufs ? g.nbufs : 1) * sizeof *bufs);
    const int nbufs = bufs ? g.nbufs : 0;
    if (bufs) memcpy(bufs, g.bufs, (size_t)nbufs * sizeof *bufs);
    copy_ctx cc = {l->hStream, NULL, me.mangled, me.fn_size};
    for (int i = 0; i < g.nmodules; ++i)
        if (g.modules[i].module == me.module) cc.lines = &g.modules[i].lines;
    const int have_filter = !(g.block_lo == 0 && g.block_hi == UINT64_MAX && g.thread_lo == 0 &&
                              g.thread_hi == UINT64_MAX);
    ks_rec_state dev;
    ks_rec *recs = NULL;
    unsigned long long n = 0;
    char path[2400];
    g.building++;
    pthread_mutex_unlock(&g.mu);

    const double t0 = now_ms();
    SanitizerResult r = sanitizerStreamSynchronize(l->hStream);
    const double t1 = now_ms();
    int ok = r == SANITIZER_SUCCESS;
    if (!ok) status("error launch %llu did not finish: %s", (unsigned long long)me.number, san_error(r));
    if (ok && !(ok = sanitizerMemcpyDeviceToHost(&dev, c->on_d, sizeof dev, l->hStream) == SANITIZER_SUCCESS))
        status("error cannot read the records of launch %llu", (unsigned long long)me.number);
    double back_ms[3] = {0, 0, 0}; /* room for the records, their copies, their sort */
    ks_rec *sorted = NULL;
    /* the slots claimed within the buffer (in runs: whole runs, all part full or full) */
    if (ok) n = dev.counters[0] < me.host.capacity ? dev.counters[0] : me.host.capacity;
    if (ok && n && !(ok = bufs != NULL)) status("error out of memory for %llu records", n);
    if (ok && n) {
        const uint64_t lo = me.lo, hi = me.hi; /* the global thread ids the records can have */
        int staged = 0;
        if (me.runs) staged = read_back_runs(c, l, &me, n, &sorted, &n, back_ms);
        else if (hi - lo <= 4 * n + 1024) staged = read_back_sorted(c, l, &me, n, lo, hi, &sorted, back_ms);
        if (staged < 0) ok = 0;
        else if (staged) recs = sorted;
        else if (me.runs)
            ok = 0, status("error out of memory for the records of launch %llu", (unsigned long long)me.number);
        else { /* ids too far apart to count, or no pinned window: all at once, sorted in the build */
            double tb = now_ms();
            if ((recs = malloc(n * sizeof *recs))) prefault(recs, n * sizeof *recs); /* its pages on all CPUs */
            else ok = 0, status("error out of memory for %llu records", n);
            back_ms[0] += now_ms() - tb, tb = now_ms();
            if (ok &&
                !(ok = sanitizerMemcpyDeviceToHost(recs, c->recs_d, n * sizeof *recs, l->hStream) == SANITIZER_SUCCESS))
                status("error cannot read the records of launch %llu", (unsigned long long)me.number);
            back_ms[1] += now_ms() - tb;
        }
    }
    if (ok) {
        ks_rec_launch L;
        memset(&L, 0, sizeof L);
        L.number = me.number;
        snprintf(L.kernel, sizeof L.kernel, "%s", me.kernel);
        ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
        device_name(l->context, L.device, sizeof L.device);
        memcpy(L.grid, me.grid, sizeof L.grid);
        L.dyn_shared = me.dyn_shared;
        memcpy(L.block, me.block, sizeof L.block);
        const uint64_t T = (uint64_t)L.block[0] * L.block[1] * L.block[2];
        const uint64_t blocks = (uint64_t)L.grid[0] * L.grid[1] * L.grid[2];
        L.filter.block_lo = (int64_t)(g.block_lo < blocks ? g.block_lo : blocks);
        L.filter.block_hi = (int64_t)(g.block_hi < blocks ? g.block_hi : blocks);
        L.filter.index_lo = (int64_t)(g.thread_lo < blocks * T ? g.thread_lo : blocks * T);
        L.filter.index_hi = (int64_t)(g.thread_hi < blocks * T ? g.thread_hi : blocks * T);
        if (L.filter.index_lo < L.filter.block_lo * (int64_t)T) L.filter.index_lo = L.filter.block_lo * (int64_t)T;
        if (L.filter.index_hi > L.filter.block_hi * (int64_t)T) L.filter.index_hi = L.filter.block_hi * (int64_t)T;
        L.filter.every = 1;
        if (!have_filter) L.filter = ks_filter_all(); /* nothing left out: check's whole-launch rules apply */
        L.recs = recs, L.nrecs = n, L.sorted = sorted != NULL && recs == sorted;
        L.dropped = dev.counters[1];
        L.zstd = g.zstd;
        L.bufs = bufs, L.nbufs = nbufs;
        L.copy = copy_back, L.ctx = &cc;
        L.line_of = line_of;
        /* another process of the same recording (a child, a second run) may have written
         * this launch number: never replace its trace */
        snprintf(path, sizeof path, "%s/%04llu-%s.kst", g.out, (unsigned long long)me.number, L.short_name);
        if (access(path, F_OK) == 0)
            snprintf(path, sizeof path, "%s/%04llu-%s-p%d.kst", g.out, (unsigned long long)me.number, L.short_name,
                     (int)getpid());
        const double t2 = now_ms();
        if (ks_rec_write_trace(&L, path) != KS_OK) status("error %s: %s", path, ks_error_message());
        else status("trace\t%llu\t%llu\t%s\t%s", n, (unsigned long long)L.dropped, path, L.kernel);
        if (g.times) /* KS_RECORD_TIMES=1: where a recorded launch's time goes */
            status("note launch %llu: kernel %.1f ms, records back %.1f ms (room %.1f, copy %.1f, sort %.1f), "
                   "trace built and written %.1f ms (sort %.1f, scans %.1f, sites %.1f, write %.1f: events made and "
                   "encoded %.1f with the file written meanwhile %.1f, index and header %.1f, commit %.1f)",
                   (unsigned long long)me.number, t1 - t0, t2 - t1, back_ms[0], back_ms[1], back_ms[2], now_ms() - t2,
                   ks_rec_build_ms[0], ks_rec_build_ms[2], ks_rec_build_ms[1], ks_rec_build_ms[3], ks_kst_write_ms[1],
                   ks_kst_write_ms[4], ks_kst_write_ms[2], ks_kst_write_ms[3]);
    }
    free(recs);
    free(bufs);
    pthread_mutex_lock(&g.mu);
    g.ms_last_end = now_ms();
    g.building--;
    c->busy = 0;
    if (!c->ctx) memset(c, 0, sizeof *c); /* its context ended meanwhile, and its memory with it */
}

/* A callback the recorder's own Sanitizer API calls cause (an allocation, the patch
 * module loading, a memset's launch) comes on the same thread while the first one holds
 * the lock: it is not the program's, so it is passed over, and the lock is never taken
 * twice. */
static __thread int t_inside;

/* The leading fields of the launch calls' parameter blocks the API callbacks pass (the
 * toolkit's generated_cuda_*_meta.h spell them; those headers follow the toolkit's exact
 * version, these prefixes do not change): the runtime's cudaLaunchKernel (dim3 is three
 * unsigned ints), cudaLaunchKernelExC's config (cudaLaunchConfig_t), the driver's
 * cuLaunchKernel and cuLaunchCooperativeKernel. cuLaunchKernelEx's config is cuda.h's. */
typedef struct {
    const void *func;
    unsigned grid[3], block[3];
    void **args;
    size_t shared_mem;
} rt_launch_params;
typedef struct {
    unsigned grid[3], block[3];
    size_t dynamic_smem_bytes;
} rt_launch_config;
typedef struct {
    CUfunction f;
    unsigned grid[3], block[3];
    unsigned shared_mem_bytes;
} drv_launch_params;

static void note_launch_call(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void *data)
{
    const Sanitizer_CallbackData *d = data;
    if (d->callbackSite != SANITIZER_API_ENTER || !d->functionParams) return;
    const void *p = d->functionParams;
    if (domain == SANITIZER_CB_DOMAIN_RUNTIME_API) {
        switch (cbid) {
        case SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel:
        case SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel_ptsz:
            t_dyn_shared = (int64_t)((const rt_launch_params *)p)->shared_mem;
            break;
        case SANITIZER_CBID_RUNTIME_API_cudaLaunchKernelExC:
        case SANITIZER_CBID_RUNTIME_API_cudaLaunchKernelExC_ptsz: {
            const rt_launch_config *c = *(const rt_launch_config *const *)p; /* its first field */
            if (c) t_dyn_shared = (int64_t)c->dynamic_smem_bytes;
            break;
        }
        default: break;
        }
    } else {
        switch (cbid) {
        case SANITIZER_CBID_DRIVER_API_cuLaunchKernel:
        case SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz:
        case SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel:
            t_dyn_shared = ((const drv_launch_params *)p)->shared_mem_bytes;
            break;
        case SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx:
        case SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz: {
            const CUlaunchConfig *c = *(const CUlaunchConfig *const *)p; /* its first field */
            if (c) t_dyn_shared = c->sharedMemBytes;
            break;
        }
        default: break;
        }
    }
}

static void SANITIZERAPI on_callback(void *user, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                                     const void *data)
{
    (void)user;
    if (domain == SANITIZER_CB_DOMAIN_RUNTIME_API || domain == SANITIZER_CB_DOMAIN_DRIVER_API) {
        note_launch_call(domain, cbid, data); /* no lock: every API call comes here */
        return;
    }
    if (t_inside) return;
    t_inside = 1;
    pthread_mutex_lock(&g.mu);
    if (domain == SANITIZER_CB_DOMAIN_RESOURCE) {
        switch (cbid) {
        case SANITIZER_CBID_RESOURCE_MODULE_LOADED: on_module(data); break;
        case SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
            on_context_destroy(((const Sanitizer_ResourceContextData *)data)->context);
            break;
        case SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING: {
            const Sanitizer_ResourceModuleData *m = data;
            for (int i = 0; i < g.nmodules && !g.building; ++i) /* a trace being built may read them */
                if (g.modules[i].module == m->module) {
                    ks_cubin_lines_free(&g.modules[i].lines);
                    g.modules[i] = g.modules[--g.nmodules];
                    break;
                }
            break;
        }
        case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC:
        case SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC: on_alloc(data); break;
        case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE:
        case SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC: {
            const Sanitizer_ResourceMemoryData *m = data;
            if (m) drop_bufs(m->address, 0);
            break;
        }
        default: break;
        }
    } else if (domain == SANITIZER_CB_DOMAIN_LAUNCH) {
        if (cbid == SANITIZER_CBID_LAUNCH_BEGIN) on_launch_begin(data);
        else if (cbid == SANITIZER_CBID_LAUNCH_END) on_launch_end(data);
    }
    pthread_mutex_unlock(&g.mu);
    t_inside = 0;
}

static int range_env(const char *name, uint64_t *lo, uint64_t *hi)
{
    *lo = 0, *hi = UINT64_MAX;
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    char *end;
    unsigned long long a = strtoull(s, &end, 10), b;
    if (*end != ':') return -1;
    b = strtoull(end + 1, &end, 10);
    if (*end || b <= a) return -1;
    *lo = a, *hi = b;
    return 0;
}

/* KS_RECORD_TIMES=1: at exit, what the recorder cost besides its launches */
__attribute__((destructor)) static void times_at_exit(void)
{
    /* never a blocking lock at exit (a thread may hold it), and not from a fork's child */
    if (!g.ready || !g.times || g.pid != getpid() || pthread_mutex_trylock(&g.mu)) return;
    const double now = now_ms();
    char after[160] = "no launch recorded";
    if (g.ms_last_end > 0 && g.ms_exit > 0)
        snprintf(after, sizeof after,
                 "the program ran on %.1f ms after the last recorded launch, then its exit %.1f ms",
                 g.ms_exit - g.ms_last_end, now - g.ms_exit);
    status("note recorder: %d module(s) patched, %d with no kernel --kernel takes left as they are, in %.1f ms "
           "(line tables read %.1f ms); device buffers %.1f ms; %s",
           g.npatched, g.nskipped, g.ms_patch, g.ms_lines, g.ms_buffers, after);
    pthread_mutex_unlock(&g.mu);
}

/* KS_RECORD_TIMES=1: when exit() starts (registered after the CUDA runtime's own exit
 * handler, so it runs before it) */
static void note_exit_start(void)
{
    if (g.times && g.pid == getpid()) g.ms_exit = now_ms();
}

KS_API int InitializeInjection(void)
{
    pthread_mutex_lock(&g.mu);
    if (g.ready) {
        pthread_mutex_unlock(&g.mu);
        return 1;
    }
    g.ready = 1;
    const char *s;
    snprintf(g.status, sizeof g.status, "%s", (s = getenv("KS_RECORD_STATUS")) ? s : "");
    snprintf(g.out, sizeof g.out, "%s", (s = getenv("KS_RECORD_OUT")) && *s ? s : ".");
    if ((s = getenv("KS_RECORD_PATCHES")) && *s) snprintf(g.patches, sizeof g.patches, "%s", s);
    else {
        Dl_info info;
        const char *dir = ".";
        char self[2048] = ".";
        if (dladdr((void *)InitializeInjection, &info) && info.dli_fname) {
            snprintf(self, sizeof self, "%s", info.dli_fname);
            char *slash = strrchr(self, '/');
            if (slash) *slash = 0, dir = self;
        }
        snprintf(g.patches, sizeof g.patches, "%s/kscope_record_patches.fatbin", dir);
    }
    if ((s = getenv("KS_RECORD_KERNEL")) && *s) {
        if (regcomp(&g.regex, s, REG_EXTENDED | REG_NOSUB)) status("error bad --kernel regex: %s", s);
        else g.have_regex = 1;
    }
    g.shared = (s = getenv("KS_RECORD_SHARED")) && !strcmp(s, "1");
    g.zstd = (s = getenv("KS_RECORD_ZSTD")) && !strcmp(s, "1");
    g.times = (s = getenv("KS_RECORD_TIMES")) && !strcmp(s, "1");
    g.runs = !((s = getenv("KS_RECORD_RUNS")) && !strcmp(s, "0"));
    /* traces renamed into place whole, not synced to disk unless asked (ks_file.h): this
     * library's own copy of the writer, not the program's */
    ks_out_durable = (s = getenv("KS_RECORD_FSYNC")) && !strcmp(s, "1");
    if (g.times) atexit(note_exit_start);
    s = getenv("KS_RECORD_LAUNCH");
    g.launch_all = !s || !*s || !strcmp(s, "all");
    if (!g.launch_all) g.launch_k = strtoull(s, NULL, 10);
    s = getenv("KS_RECORD_MAX_EVENTS");
    g.max_records = s && *s ? strtoull(s, NULL, 10) : (8ull << 20);
    if (g.max_records < 1024) g.max_records = 1024;
    if (range_env("KS_RECORD_BLOCKS", &g.block_lo, &g.block_hi) ||
        range_env("KS_RECORD_THREADS", &g.thread_lo, &g.thread_hi))
        status("error bad filter range");
    SanitizerResult r;
    if ((r = sanitizerSubscribe(&g.sub, on_callback, NULL)) != SANITIZER_SUCCESS ||
        (r = sanitizerEnableDomain(1, g.sub, SANITIZER_CB_DOMAIN_RESOURCE)) != SANITIZER_SUCCESS ||
        (r = sanitizerEnableDomain(1, g.sub, SANITIZER_CB_DOMAIN_LAUNCH)) != SANITIZER_SUCCESS ||
        (r = sanitizerEnableDomain(1, g.sub, SANITIZER_CB_DOMAIN_RUNTIME_API)) != SANITIZER_SUCCESS ||
        (r = sanitizerEnableDomain(1, g.sub, SANITIZER_CB_DOMAIN_DRIVER_API)) != SANITIZER_SUCCESS) {
        status("error the Compute Sanitizer API is not available: %s", san_error(r));
        pthread_mutex_unlock(&g.mu);
        return 0;
    }
    g.pid = getpid();
    status("start %d", (int)g.pid);
    pthread_mutex_unlock(&g.mu);
    return 1;
}

/* Names [ptr, ptr + bytes) for the traces of later launches: `name` (at most 31
 * characters), dtype ("f32", "float32", "torch.float32", "int64", ...; half and bfloat16
 * are shown as their 16 bits, "u16") and a C-order shape of ndim dimensions (0: 1-D,
 * bytes / itemsize). Returns 0, or -1 for a bad argument. */
KS_API int kscope_record_name(const void *ptr, uint64_t bytes, const char *name, const char *dtype, int ndim,
                              const int64_t *shape)
{
    if (!ptr || !bytes || !name || !*name || ndim < 0 || ndim > KS_MAX_DIMS || (ndim && !shape)) return -1;
    const char *d = dtype ? dtype : "f32";
    if (!strncmp(d, "torch.", 6)) d += 6;
    static const char *const alias[][2] = {{"float32", "f32"}, {"float", "f32"},  {"float64", "f64"}, {"double", "f64"},
                                           {"int32", "i32"},   {"int", "i32"},    {"int64", "i64"},   {"long", "i64"},
                                           {"int16", "i16"},   {"short", "i16"},  {"int8", "i8"},     {"uint8", "u8"},
                                           {"bool", "u8"},     {"uint16", "u16"}, {"uint32", "u32"},  {"uint64", "u64"},
                                           {"float16", "u16"}, {"half", "u16"},   {"bfloat16", "u16"}};
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; ++i)
        if (!strcmp(d, alias[i][0])) d = alias[i][1];
    const int dt = ks_dtype_parse(d);
    if (dt < 0) return -1;
    ks_rec_buf b;
    memset(&b, 0, sizeof b);
    b.addr = (uint64_t)(uintptr_t)ptr, b.bytes = bytes, b.named = 1, b.dtype = (ks_dtype)dt;
    snprintf(b.name, sizeof b.name, "%s", name);
    const size_t el = ks_dtype_size(b.dtype);
    if (ndim == 0) b.ndim = 1, b.shape[0] = (int64_t)(bytes / el);
    else {
        b.ndim = ndim;
        uint64_t numel = 1;
        for (int i = 0; i < ndim; ++i) {
            if (shape[i] < 0 || __builtin_mul_overflow(numel, (uint64_t)shape[i], &numel)) return -1;
            b.shape[i] = shape[i];
        }
        uint64_t need;
        if (__builtin_mul_overflow(numel, (uint64_t)el, &need) || need > bytes) return -1;
    }
    pthread_mutex_lock(&g.mu);
    drop_bufs(b.addr, 1);
    const int rc = add_buf(&b);
    pthread_mutex_unlock(&g.mu);
    return rc;
}

/* Forgets the name given at ptr (NULL: every name). */
KS_API void kscope_record_unname(const void *ptr)
{
    pthread_mutex_lock(&g.mu);
    if (ptr) drop_bufs((uint64_t)(uintptr_t)ptr, 1);
    else {
        int k = 0;
        for (int i = 0; i < g.nbufs; ++i)
            if (!g.bufs[i].named) g.bufs[k++] = g.bufs[i];
        g.nbufs = k;
    }
    pthread_mutex_unlock(&g.mu);
}
