/* cu_run.c - the parent's side of a .cu run: arguments, the shared mapping (control
 * block, buffers, events), the child and its time limit. */
#define _GNU_SOURCE
#include "cu_run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../trace/npy.h"
#include "../core/ks_error.h"
#include "../core/ks_parse.h"

void ks_cu_exec_init(ks_cu_exec *e)
{
    memset(e, 0, sizeof *e);
    e->filter = ks_filter_all();
    e->time_limit = 10.0;
    e->trace_limit = 1ull << 26;
    for (int d = 0; d < 3; ++d) e->grid[d] = e->block[d] = 1;
}

void ks_cu_exec_free(ks_cu_exec *e)
{
    for (int i = 0; i < e->nbufs; ++i) ks_tensor_free(&e->bufs[i].t);
    if (e->map) munmap(e->map, e->map_size);
    if (e->events) munmap(e->events, e->events_size);
    e->map = NULL, e->events = NULL;
    ks_cu_build_free(&e->build);
}

static int cu_type_of(ks_dtype d)
{
    static const int map[KS_DTYPES] = {
        [KS_F32] = KS_CU_F32, [KS_I32] = KS_CU_I32, [KS_I64] = KS_CU_I64, [KS_F64] = KS_CU_F64, [KS_U32] = KS_CU_U32,
        [KS_U64] = KS_CU_U64, [KS_I16] = KS_CU_I16, [KS_U16] = KS_CU_U16, [KS_I8] = KS_CU_I8,   [KS_U8] = KS_CU_U8};
    return (unsigned)d < KS_DTYPES ? map[d] : KS_CU_BAD;
}

/* "37x53" and an optional ":DTYPE" */
static int parse_shape(const char *param, const char *s, ks_tensor *t)
{
    char shape[96];
    const char *colon = strchr(s, ':');
    snprintf(shape, sizeof shape, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
    t->dtype = KS_F32;
    if (colon) {
        const int d = ks_dtype_parse(colon + 1);
        if (d < 0)
            return ks_fail(KS_EINVAL, "--arg %s: unknown dtype '%s' (f32, f64, i32, u32, i64, u64, i16, u16, i8 or u8)",
                           param, colon + 1);
        t->dtype = (ks_dtype)d;
    }
    t->ndim = 0;
    const char *p = shape;
    while (*p) {
        char *end;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 1 || v > (1ll << 40) || (*end && *end != 'x') || t->ndim == KS_MAX_DIMS)
            return ks_fail(KS_EINVAL, "--arg %s: bad SHAPE '%s' (sizes >= 1 joined by x, at most %d: 37x53)", param,
                           shape, KS_MAX_DIMS);
        t->shape[t->ndim++] = v;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return ks_fail(KS_EINVAL, "--arg %s: bad SHAPE '%s' (sizes >= 1 joined by x: 37x53)", param, shape);
    }
    if (!t->ndim) return ks_fail(KS_EINVAL, "--arg %s: empty SHAPE (sizes joined by x: 37x53)", param);
    if (ks_tensor_numel(t) < 0 || ks_tensor_numel(t) * (int64_t)ks_dtype_size(t->dtype) > (1ll << 36))
        return ks_fail(KS_EINVAL, "--arg %s: SHAPE '%s' is larger than 64 GiB", param, shape);
    return KS_OK;
}

int ks_cu_arg_parse(ks_cu_exec *e, const char *param, const char *value)
{
    for (int i = 0; i < e->nbufs; ++i)
        if (!strcmp(e->bufs[i].param, param)) return ks_fail(KS_EINVAL, "--arg %s given twice", param), -1;
    for (int i = 0; i < e->nnums; ++i)
        if (!strcmp(e->nums[i].param, param)) return ks_fail(KS_EINVAL, "--arg %s given twice", param), -1;
    if (strlen(param) >= 32) return ks_fail(KS_EINVAL, "--arg %.40s...: the name is too long", param), -1;
    const int is_buf = value[0] == '@' || !strncmp(value, "zeros:", 6) || !strncmp(value, "empty:", 6);
    if (is_buf) {
        if (e->nbufs == KS_CU_MAX_BUFS) return ks_fail(KS_EINVAL, "more than %d buffers", KS_CU_MAX_BUFS), -1;
        ks_cu_bufspec *b = &e->bufs[e->nbufs];
        memset(b, 0, sizeof *b);
        snprintf(b->param, sizeof b->param, "%s", param);
        snprintf(b->text, sizeof b->text, "%s", value);
        int rc;
        if (value[0] == '@') {
            rc = ks_npy_read(value + 1, &b->t);
        } else {
            b->empty = value[0] == 'e';
            rc = parse_shape(param, value + 6, &b->t);
        }
        if (rc) return -1;
        snprintf(b->t.name, sizeof b->t.name, "%s", param);
        e->nbufs++;
        return 1;
    }
    ks_cu_number *n = &e->nums[e->nnums];
    memset(n, 0, sizeof *n);
    snprintf(n->param, sizeof n->param, "%s", param);
    char *end;
    errno = 0;
    const long long k = strtoll(value, &end, 0);
    if (!strcmp(value, "true") || !strcmp(value, "false")) {
        n->i = value[0] == 't', n->f = (double)n->i, n->isint = 1;
    } else if (*value && !*end && !errno) {
        n->i = k, n->f = (double)k, n->isint = 1;
    } else {
        errno = 0;
        const double f = strtod(value, &end);
        if (!*value || *end || errno || !isfinite(f))
            return ks_fail(
                       KS_EINVAL,
                       "--arg %s: '%s' is neither a number nor a buffer (@FILE.npy, zeros:SHAPE[:DTYPE], empty:SHAPE[:DTYPE])",
                       param, value),
                   -1;
        n->f = f, n->isint = 0;
        if (f == floor(f) && fabs(f) < 9.2e18) n->i = (int64_t)f, n->isint = 1; /* 1e3: an integer too */
    }
    if (e->nnums == KS_CU_MAX_PARAMS) return ks_fail(KS_EINVAL, "too many arguments"), -1;
    e->nnums++;
    return 0;
}

#define KS_CU_RING (1u << 20) /* ring slots: 64 MiB */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* every parameter once, and nothing else */
static int bind(ks_cu_exec *e, ks_cu_ctl *c)
{
    const ks_cu_kernel *k = &e->build.kernel;
    char list[600] = "";
    size_t used = 0;
    for (int p = 0; p < k->nparams && used < sizeof list; ++p)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", p ? ", " : "", k->params[p]);
    /* an unknown name first: a misspelt --arg is what makes one missing */
    for (int i = 0; i < e->nbufs + e->nnums; ++i) {
        const char *given = i < e->nbufs ? e->bufs[i].param : e->nums[i - e->nbufs].param;
        int known = 0;
        for (int p = 0; p < k->nparams; ++p) known |= !strcmp(given, k->params[p]);
        if (!known)
            return ks_fail(KS_EINVAL, "--arg %s: %s has no parameter '%s' (it takes: %s)", given, k->name, given, list);
    }
    c->nparams = k->nparams;
    for (int p = 0; p < k->nparams; ++p) {
        snprintf(c->param_name[p], sizeof c->param_name[p], "%s", k->params[p]);
        c->param_buf[p] = -1;
        int found = 0;
        for (int i = 0; i < e->nbufs; ++i)
            if (!strcmp(e->bufs[i].param, k->params[p])) c->param_buf[p] = i, found = 1;
        for (int i = 0; i < e->nnums; ++i)
            if (!strcmp(e->nums[i].param, k->params[p])) {
                c->param_f[p] = e->nums[i].f, c->param_i[p] = e->nums[i].i, c->param_isint[p] = e->nums[i].isint;
                found = 1;
            }
        if (!found) return ks_fail(KS_EINVAL, "missing --arg %s=VALUE (%s takes: %s)", k->params[p], k->name, list);
    }
    return KS_OK;
}

/* copies the committed events out of the ring; returns how many */
static uint64_t drain(ks_cu_exec *e)
{
    ks_cu_ctl *c = e->ctl;
    const ks_event *ring = (const ks_event *)(e->map + c->ring_at);
    const uint64_t upto = __atomic_load_n(&c->committed, __ATOMIC_ACQUIRE), from = e->nevents;
    while (e->nevents < upto) {
        const uint64_t at = e->nevents % c->ring;
        /* in slices, so the child refills what is copied while the rest is */
        uint64_t n = upto - e->nevents < c->ring - at ? upto - e->nevents : c->ring - at;
        if (n > 8192) n = 8192;
        memcpy(e->events + e->nevents, ring + at, (size_t)n * sizeof(ks_event));
        e->nevents += n;
        __atomic_store_n(&c->consumed, e->nevents, __ATOMIC_RELEASE);
    }
    return e->nevents - from;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int ks_cu_exec_run(ks_cu_exec *e)
{
    const ks_cu_build *b = &e->build;
    if (e->build.nshared + e->nbufs + 1 > KS_MAX_TENSORS)
        return ks_fail(KS_EINVAL, "%d buffers and %d __shared__ arrays: a trace holds at most %d", e->nbufs,
                       e->build.nshared, KS_MAX_TENSORS - 1);
    /* the mapping: control block, then each buffer at a GiB boundary with at least a GiB
     * of unmapped-in-practice gap before and after it (the mapping reserves no memory: a
     * page costs only once touched), so an index well past a buffer's end or before its
     * start lands in no other buffer and is caught; then the event ring */
    const uint64_t gib = 1ull << 30;
    uint64_t at = gib, offs[KS_CU_MAX_BUFS];
    for (int i = 0; i < e->nbufs; ++i) {
        offs[i] = at;
        at = align_up(at + (uint64_t)ks_tensor_numel(&e->bufs[i].t) * ks_dtype_size(e->bufs[i].t.dtype), gib) + gib;
    }
    const uint64_t ring_at = align_up(at, 4096), ring = e->trace_limit < KS_CU_RING ? e->trace_limit : KS_CU_RING;
    e->map_size = (size_t)(ring_at + ring * sizeof(ks_event));
    e->map = mmap(NULL, e->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    e->events_size = (size_t)(e->trace_limit * sizeof(ks_event));
    e->events = mmap(NULL, e->events_size ? e->events_size : 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (e->events != MAP_FAILED) madvise(e->events, e->events_size, MADV_HUGEPAGE); /* fewer faults */
    if (e->events != MAP_FAILED && e->prefault)
        for (size_t k = 0; k < e->events_size; k += 4096) ((volatile unsigned char *)e->events)[k] = 0;
    if (e->map != MAP_FAILED && e->prefault) /* the ring, not the gaps between buffers */
        for (size_t k = (size_t)ring_at; k < e->map_size; k += 4096) ((volatile unsigned char *)e->map)[k] = 0;
    if (e->map == MAP_FAILED || e->events == MAP_FAILED) {
        if (e->map != MAP_FAILED) munmap(e->map, e->map_size);
        if (e->events != MAP_FAILED) munmap(e->events, e->events_size);
        e->map = NULL, e->events = NULL;
        return ks_fail(KS_ENOMEM, "cannot map %llu bytes for the run",
                       (unsigned long long)(e->map_size + e->events_size));
    }
    ks_cu_ctl *c = e->ctl = (ks_cu_ctl *)e->map;
    int rc = bind(e, c);
    if (rc) return rc;
    memcpy(c->grid, e->grid, sizeof c->grid);
    memcpy(c->block, e->block, sizeof c->block);
    c->shared_bytes = e->shared_bytes;
    c->nbufs = e->nbufs;
    for (int i = 0; i < e->nbufs; ++i) {
        const ks_tensor *t = &e->bufs[i].t;
        ks_cu_buf *cb = &c->bufs[i];
        snprintf(cb->name, sizeof cb->name, "%s", e->bufs[i].param);
        cb->offset = offs[i];
        cb->bytes = (uint64_t)ks_tensor_numel(t) * ks_dtype_size(t->dtype);
        cb->elem = (uint32_t)ks_dtype_size(t->dtype);
        cb->dtype = cu_type_of(t->dtype);
        cb->empty = e->bufs[i].empty;
        cb->cols = t->shape[t->ndim - 1];
        cb->rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
        if (t->data) memcpy(e->map + offs[i], t->data, cb->bytes);
        else if (cb->empty) memset(e->map + offs[i], 0xFF, cb->bytes); /* poison: NaN, -1 */
        e->out[i] = *t;
        e->out[i].data = e->map + offs[i];
    }
    c->nshared = b->nshared;
    memcpy(c->shared, b->shared, sizeof c->shared);
    snprintf(c->dyn_name, sizeof c->dyn_name, "%s", b->dyn_name[0] || !e->shared_bytes ? b->dyn_name : "dynamic");
    c->filter = e->filter;
    c->capacity = e->trace_limit;
    c->ring_at = ring_at, c->ring = ring;

    fflush(stdout), fflush(stderr);
    const double t0 = now_s();
    const pid_t pid = fork();
    if (pid < 0) return ks_fail(KS_ENOMEM, "cannot start the simulator process: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        ks_cu_child_main(e->map, b->so);
    }
    int st = 0, tty = isatty(STDERR_FILENO), shown = 0;
    double next = t0 + 2.0;
    for (;;) {
        struct rusage ru;
        const pid_t w = wait4(pid, &st, WNOHANG, &ru);
        if (w == pid)
            e->child_cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return ks_fail(KS_EIO, "lost the simulator process: %s", strerror(errno));
        const uint64_t moved = drain(e); /* the child may wait on a full ring */
        const double t = now_s();
        if (t - t0 > e->time_limit) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
            c->fault = KS_CU_F_TIMEOUT;
            c->fault_block = c->cur_block, c->fault_thread = c->cur_thread;
            st = 3 << 8;
            break;
        }
        if (!e->quiet && t >= next) {
            const uint64_t total = (uint64_t)e->grid[0] * e->grid[1] * e->grid[2];
            fprintf(stderr, "%skscope: run: simulating %s: block %llu of %llu (%d%%), %.0f s%s", tty ? "\r" : "",
                    b->kernel.name, (unsigned long long)c->blocks_done, (unsigned long long)total,
                    (int)(100 * c->blocks_done / (total ? total : 1)), t - t0, tty ? "" : "\n");
            fflush(stderr);
            next = t + 2.0, shown = 1;
        }
        if (!moved) usleep(200);
    }
    drain(e);
    if (shown && tty) fputc('\n', stderr);
    e->seconds = now_s() - t0;
    e->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (e->exit_status == -1 && !c->fault) {
        c->fault = KS_CU_F_CRASH;
        snprintf(c->error, sizeof c->error, "the simulator process died (%s)", strsignal(WTERMSIG(st)));
    }
    if (e->exit_status == 0 && !c->finished && !c->fault) { /* exit() inside the kernel */
        c->fault = KS_CU_F_CRASH, c->fault_block = c->cur_block, c->fault_thread = c->cur_thread;
        snprintf(c->error, sizeof c->error, "the kernel ended the process before the grid ran");
        e->exit_status = 3;
    }
    return KS_OK;
}
