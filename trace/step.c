#include "step.h"

#include "step_work.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

void ks_format_element(const ks_trace *tr, int tensor, int64_t plane, int64_t y, int64_t x, char *buf, size_t n)
{
    const ks_tensor *t = &tr->tensors[tensor];
    int64_t lead[KS_MAX_DIMS];
    int nlead = t->ndim >= 2 ? t->ndim - 2 : 0;
    /* plane = ((d0 * D1) + d1) * D2 + ... over the leading dimensions */
    for (int d = nlead - 1; d >= 0; --d) {
        int64_t ext = t->shape[d] > 0 ? t->shape[d] : 1;
        lead[d] = d == 0 ? plane : plane % ext;
        plane = d == 0 ? 0 : plane / ext;
    }
    size_t used = (size_t)snprintf(buf, n, "%s[", t->name);
    for (int d = 0; d < nlead && used < n; ++d)
        used += (size_t)snprintf(buf + used, n - used, "%lld, ", (long long)lead[d]);
    if (used < n) {
        if (t->ndim >= 2) snprintf(buf + used, n - used, "%lld, %lld]", (long long)y, (long long)x);
        else snprintf(buf + used, n - used, "%lld]", (long long)x);
    }
}

/* A step line as the terminal shows it: at most KS_STEP_COLUMNS characters, the rest
 * on continuation lines under the line's value (after its first " = ", or four in). A
 * line breaks before its last run of spaces that fits (the fields' separators:
 * "   (note)", "  weights"), else at its last space that fits, else where it must. */
void ks_step_put_line(FILE *out, const char *line)
{
    const char *eq = strstr(line, " = ");
    const size_t lead = strspn(line, " ");
    const size_t cont = eq && (size_t)(eq - line) + 3 < 40 ? (size_t)(eq - line) + 3 : lead + 4;
    int first = 1;
    for (;;) {
        const size_t room = first ? KS_STEP_COLUMNS : KS_STEP_COLUMNS - cont, len = strlen(line);
        if (len <= room) break;
        const size_t from = strspn(line, " ") + 8; /* a piece is more than its indent */
        size_t cut = 0;
        for (size_t i = room; i > from && !cut; --i)
            if (line[i] == ' ' && line[i - 1] == ' ') {
                cut = i - 1;
                while (cut > from && line[cut - 1] == ' ') --cut; /* the start of the run */
            }
        for (size_t i = room; i > from && !cut; --i)
            if (line[i] == ' ') cut = i;
        if (!cut) cut = room;
        fprintf(out, "%*s%.*s\n", first ? 0 : (int)cont, "", (int)cut, line);
        line += cut;
        line += strspn(line, " ");
        first = 0;
    }
    fprintf(out, "%*s%s\n", first ? 0 : (int)cont, "", line);
}

/* A line put together piece by piece, then written by ks_step_put_line. */
typedef struct step_text {
    char s[1024];
    size_t n;
} step_text;

static void add(step_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(step_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (t->n < sizeof t->s) {
        const int k = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
        t->n = k < 0 ? t->n : t->n + (size_t)k < sizeof t->s ? t->n + (size_t)k : sizeof t->s - 1;
    }
    va_end(ap);
}

static int by_index_seq(const void *a, const void *b)
{
    const ks_event *x = *(const ks_event *const *)a, *y = *(const ks_event *const *)b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* digits of the shortest text that reads back as the same float (1..9) */
/* Whether v's text of p significant digits (1..9) reads back as the same float. */
static int reads_back(double v, int p)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.*g", p < 1 ? 1 : p > 9 ? 9 : p, v);
    return (float)strtod(buf, NULL) == (float)v;
}

int ks_real_digits(double v)
{
    for (int p = 1; p < 9; ++p) /* every precision in turn: test_step_work's reference */
        if (reads_back(v, p)) return p;
    return 9;
}

int ks_real_digits_upto(double v, int most)
{
    most = most < 1 ? 1 : most > 9 ? 9 : most; /* 9 digits name any float */
    if (!reads_back(v, most)) return most + 1; /* nor does any shorter one */
    for (int p = 1; p < most; ++p)
        if (reads_back(v, p)) return p;
    return most;
}

void ks_format_real(char *buf, size_t n, double v)
{
    if (isnan(v)) { /* "NaN" whatever its sign bit (printf says "-nan"; issue 38 D12) */
        snprintf(buf, n, "NaN");
        return;
    }
    if (!isfinite(v)) { /* inf, -inf */
        snprintf(buf, n, "%g", v);
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) { /* 20, not 2e+01 */
        snprintf(buf, n, "%lld", (long long)v);
        return;
    }
    const int p = ks_real_digits_upto(v, KS_EXACT_DIGITS);
    if (p <= KS_EXACT_DIGITS) { /* 0.1, 10.125: the float's own shortest name */
        snprintf(buf, n, "%.*g", p, v);
        return;
    }
    /* a binary fraction's decimals end: in full up to 9 significant digits (34.46875, not
     * 34.47 beside an exact 26.375: issue 38 D9) */
    for (int k = 1; k <= 40; ++k) {
        const double s = ldexp(v, k);
        if (s != floor(s)) continue;
        if (fabs(s) >= 9007199254740992.0) break;
        char full[96];
        snprintf(full, sizeof full, "%.*f", k, v);
        int sig = 0, lead = 1;
        for (const char *c = full; *c; ++c) {
            if (*c < '0' || *c > '9') continue;
            if (*c != '0') lead = 0;
            sig += !lead;
        }
        if (sig <= 9) {
            snprintf(buf, n, "%s", full);
            return;
        }
        break;
    }
    snprintf(buf, n, "~%.4g", v); /* rounded, and says so */
}

int ks_trace_dims(const ks_trace *tr, uint32_t grid[3], uint32_t block[3])
{
    for (int d = 0; d < 3; ++d) grid[d] = block[d] = 1;
    grid[0] = tr->blocks > 0 ? (uint32_t)tr->blocks : 1, block[0] = tr->threads > 0 ? (uint32_t)tr->threads : 1;
    if (strcmp(tr->variant, "cuda-c")) return 0;
    /* "grid":[x,y,z],"block":[x,y,z] of the params kscope run FILE.cu wrote */
    const char *g = strstr(tr->params, "\"grid\":["), *b = strstr(tr->params, "\"block\":[");
    unsigned long long gv[3], bv[3];
    if (!g || !b || sscanf(g, "\"grid\":[%llu,%llu,%llu]", &gv[0], &gv[1], &gv[2]) != 3 ||
        sscanf(b, "\"block\":[%llu,%llu,%llu]", &bv[0], &bv[1], &bv[2]) != 3)
        return 0;
    unsigned long long gn = 1, bn = 1;
    for (int d = 0; d < 3; ++d) {
        if (!gv[d] || !bv[d] || gv[d] > UINT32_MAX || bv[d] > 1024) return 0;
        gn *= gv[d], bn *= bv[d];
    }
    if ((int64_t)gn != tr->blocks || (int64_t)bn != tr->threads) return 0;
    for (int d = 0; d < 3; ++d) grid[d] = (uint32_t)gv[d], block[d] = (uint32_t)bv[d];
    return 1;
}

void ks_step_thread_name(const ks_trace *tr, uint32_t block, uint32_t thread, char *buf, size_t n)
{
    uint32_t G[3], B[3];
    if (ks_trace_dims(tr, G, B))
        snprintf(buf, n, "thread (%u,%u,%u) of block (%u,%u,%u)", thread % B[0], thread / B[0] % B[1],
                 thread / (B[0] * B[1]), block % G[0], block / G[0] % G[1], block / (G[0] * G[1]));
    else snprintf(buf, n, "block %u, thread %u", block, thread);
}

void ks_step_print_work(FILE *out, const ks_trace *tr, const ks_event *e)
{
    if (!ks_event_fits(tr, e) || e->kind != KS_EV_WORK) {
        char line[240];
        ks_step_describe_event(tr, e, line, sizeof line);
        fputc('\n', out);
        ks_step_put_line(out, line);
        return;
    }
    ks_work_line lines[KS_WORK_LINES];
    const int n = ks_step_work_lines(tr, e, lines, KS_WORK_LINES);
    int width = 0;
    for (int k = 0; k < n; ++k) {
        int len = (int)strlen(lines[k].name);
        if (len > width) width = len;
    }
    char who[96];
    step_text t = {.n = 0};
    ks_step_thread_name(tr, e->block, e->thread, who, sizeof who);
    if (!strcmp(tr->variant, "cuda-c"))
        add(&t, "%s: global thread %lld (= block %u * %d + thread %u)", who, (long long)e->index, e->block, tr->threads,
            e->thread);
    else
        add(&t, "work item index %lld  (block %u, thread %u, iteration %u: %u * %d + %u + %u * %lld)",
            (long long)e->index, e->block, e->thread, e->iter, e->block, tr->threads, e->thread, e->iter,
            (long long)tr->blocks * tr->threads);
    fputc('\n', out);
    ks_step_put_line(out, t.s);
    for (int k = 0; k < n; ++k) {
        const ks_work_line *l = &lines[k];
        t.n = 0;
        add(&t, "  %-*s = %s%s%s = %s%s%s%s", width, l->name, l->expr, l->worked[0] ? " = " : "", l->worked, l->value,
            l->note[0] ? "   (" : "", l->note, l->note[0] ? ")" : "");
        ks_step_put_line(out, t.s);
    }
}

/* "0.75", "10.125", "2.121" (see ks_format_real), into a caller's small buffer */
static const char *real(char *buf, double v)
{
    ks_format_real(buf, 24, v);
    return buf;
}

/* col2im's gather counts its reads 0, 1, 2 in its loop over the windows; the kernel tap a
 * read belongs to is its row of columns (N, C*kh*kw, Ho*Wo) modulo kh*kw (issue 38 D12:
 * lesson 03's "tap 0/1/2" were kernel taps 7, 4 and 1). -1 for any other event. */
static int64_t col2im_kernel_tap(const ks_trace *tr, const ks_event *e)
{
    if (strcmp(tr->op, "col2im") || e->kind != KS_EV_READ || e->tensor >= tr->ntensors) return -1;
    const ks_tensor *c = &tr->tensors[e->tensor];
    const int out = ks_trace_tensor(tr, "output");
    if (strcmp(c->name, "columns") || c->ndim != 3 || out < 0 || tr->tensors[out].ndim != 4) return -1;
    const int64_t kk = tr->tensors[out].shape[1] > 0 ? c->shape[1] / tr->tensors[out].shape[1] : 0;
    if (kk <= 0 || (e->flags & KS_FLAG_PADDING) || e->u.access.y < 0) return -1;
    return e->u.access.y % kk;
}

/* "tap 3", or "shared" for a shared-memory access (its tap is always 0: the phase and the
 * slot say where it belongs), or "" for col2im's write: the sum of all its taps, no tap
 * of its own ("tap 0 write" under "tap 0 (kernel tap 7)" read as kernel tap 7's: issue
 * 38's eleventh re-trial, N17) */
static const char *tap_label(const ks_trace *tr, const ks_event *e, char *buf, size_t n)
{
    if (tr->sites[e->site].line > 0) snprintf(buf, n, "%s", e->flags & KS_FLAG_SHARED ? "shared" : "global");
    else if (e->flags & KS_FLAG_SHARED) snprintf(buf, n, "shared");
    else if (e->kind == KS_EV_WRITE && !strcmp(tr->op, "col2im")) snprintf(buf, n, "%s", "");
    else if (col2im_kernel_tap(tr, e) >= 0) /* its loop's count, and the kernel's tap it reads */
        snprintf(buf, n, "tap %u (kernel tap %lld)", e->tap, (long long)col2im_kernel_tap(tr, e));
    else snprintf(buf, n, "tap %u", e->tap);
    return buf;
}

/* The element an access names; a shared index outside its array (offset -1: ks_shared.h)
 * says so instead. */
static void access_element(const ks_trace *tr, const ks_event *e, char *where, size_t n)
{
    const ks_ev_access *a = &e->u.access;
    if (e->tensor >= tr->ntensors) /* a .cu thread's access outside every buffer */
        snprintf(where, n, "(outside every buffer)");
    else if (tr->sites[e->site].line > 0 && (a->offset < 0 || a->offset >= ks_tensor_numel(&tr->tensors[e->tensor])))
        snprintf(where, n, "%s[%lld]", tr->tensors[e->tensor].name, (long long)a->offset); /* past its end */
    else if ((e->flags & KS_FLAG_SHARED) && a->offset < 0 && tr->sites[e->site].line <= 0)
        snprintf(where, n, "shared array %d [%d], outside it", a->plane, a->x);
    else ks_format_element(tr, e->tensor, a->plane, a->y, a->x, where, n);
}

void ks_step_describe_event(const ks_trace *tr, const ks_event *e, char *buf, size_t n)
{
    char where[160], r[6][64];
    if (!ks_event_fits(tr, e)) {
        snprintf(buf, n, "(an event of kind %u at site %u, tensor %u: not in the header's %d sites and %d tensors)",
                 e->kind, e->site, e->tensor, tr->nsites, tr->ntensors);
        return;
    }
    if (e->kind == KS_EV_WORK) {
        snprintf(buf, n, "work  index %lld", (long long)e->index);
        return;
    }
    if (e->kind == KS_EV_BARRIER) {
        snprintf(buf, n, "barrier __syncthreads() at line %d: phase %u ends", e->u.barrier.line, e->u.barrier.phase);
        return;
    }
    if (e->kind == KS_EV_WARP) {
        static const char *const op[] = {"__shfl_sync",     "__shfl_up_sync", "__shfl_down_sync",
                                         "__shfl_xor_sync", "__ballot_sync",  "__any_sync",
                                         "__all_sync",      "__syncwarp",     "__activemask"};
        const ks_ev_warp *w = &e->u.warp;
        const size_t used = (size_t)snprintf(buf, n, "warp  %s lane %u, mask 0x%08x, lanes taking part 0x%08x",
                                             w->op < 9 ? op[w->op] : "?", w->lane, w->mask, w->arrived);
        if (used >= n) return;
        if (w->op <= 3) { /* a shuffle moves bits: as a float and as an int, which the kernel's type says */
            float f;
            const uint32_t lo = (uint32_t)w->value;
            memcpy(&f, &lo, 4);
            snprintf(buf + used, n - used, ": got 0x%llx (%s as a float, %d as an int)", (unsigned long long)w->value,
                     real(r[0], f), (int32_t)lo);
        } else if (w->op != 7) {
            snprintf(buf + used, n - used, ": got 0x%llx", (unsigned long long)w->value);
        }
        return;
    }
    if (e->kind == KS_EV_FAULT) {
        static const char *const why[] = {"",
                                          "an access outside its buffer (not made)",
                                          "assert() failed",
                                          "__trap()",
                                          "integer division by zero",
                                          "stack overflow",
                                          "crashed",
                                          "time limit",
                                          "unsupported",
                                          "warp collective deadlock"};
        snprintf(buf, n, "fault %s: the thread stops here", e->u.fault.code < 10 ? why[e->u.fault.code] : "?");
        return;
    }
    const char *tensor = tr->tensors[e->tensor].name;
    if (e->kind == KS_EV_REGION) {
        const ks_ev_region *g = &e->u.region;
        const char *what = tr->sites[e->site].name;
        if (g->rows == 0)
            snprintf(buf, n, "%s: the point (y %s, x %s) on %s plane %d", what, real(r[0], g->y0), real(r[1], g->x0),
                     tensor, g->plane);
        else
            snprintf(buf, n, "%s: y %s..%s, x %s..%s, %ux%u bin%s on %s plane %d%s", what, real(r[0], g->y0),
                     real(r[1], g->y1), real(r[2], g->x0), real(r[3], g->x1), g->rows, g->cols,
                     g->rows == 1 && g->cols == 1 ? "" : "s", tensor, g->plane,
                     e->flags & KS_FLAG_GUIDE ? " (guide)" : "");
        return;
    }
    if (e->kind == KS_EV_SAMPLE) {
        const ks_ev_sample *m = &e->u.sample;
        snprintf(buf, n, "tap %u sample %s plane %d at (y %s, x %s) = %s", e->tap, tensor, m->plane, real(r[0], m->y),
                 real(r[1], m->x), real(r[2], m->value));
        return;
    }
    const ks_ev_access *a = &e->u.access;
    access_element(tr, e, where, sizeof where);
    if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING))
        snprintf(buf, n, "tap %u read  %s = 0 (padding: outside the tensor)", e->tap, where);
    else if (tap_label(tr, e, r[1], sizeof r[1]))
        snprintf(buf, n, "%s%s%s %s = %s", r[1], r[1][0] ? " " : "",
                 e->kind == KS_EV_READ         ? "read "
                 : (e->flags & KS_FLAG_ATOMIC) ? "atomicAdd"
                                               : "write",
                 where, real(r[0], ks_access_value(a, e->flags)));
    if ((e->flags & KS_FLAG_SHARED) && strlen(buf) + 16 < n)
        snprintf(buf + strlen(buf), n - strlen(buf), " (phase %d)", a->reserved[0]);
}

/* a sample: its bilinear weights and which corners lie inside the tensor, beside the line */
static void print_sample_detail(step_text *out, const ks_event *e)
{
    const ks_ev_sample *m = &e->u.sample;
    char r[4][24];
    add(out, "  weights %s %s %s %s  corners valid %c%c%c%c", real(r[0], m->w[0]), real(r[1], m->w[1]),
        real(r[2], m->w[2]), real(r[3], m->w[3]), e->flags & KS_FLAG_C00 ? 'y' : 'n',
        e->flags & KS_FLAG_C01 ? 'y' : 'n', e->flags & KS_FLAG_C10 ? 'y' : 'n', e->flags & KS_FLAG_C11 ? 'y' : 'n');
}

void ks_step_print_event(FILE *out, const ks_trace *tr, const ks_event *e)
{
    char line[320];
    step_text lt = {.n = 0};
    if (!ks_event_fits(tr, e)) {
        ks_step_describe_event(tr, e, line, sizeof line);
        add(&lt, "  %s", line);
        ks_step_put_line(out, lt.s);
        return;
    }
    if (e->kind == KS_EV_WORK) {
        ks_step_print_work(out, tr, e);
        return;
    }
    const ks_site *site = &tr->sites[e->site];
    if (e->kind == KS_EV_BARRIER || e->kind == KS_EV_WARP || e->kind == KS_EV_FAULT) {
        ks_step_describe_event(tr, e, line, sizeof line);
        add(&lt, "  %s", line);
        if (site->line > 0) add(&lt, "   %s  %s", site->name, site->code);
        ks_step_put_line(out, lt.s);
        return;
    }
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) { /* in columns: a table of accesses */
        const ks_ev_access *a = &e->u.access;
        char where[160], v[24];
        access_element(tr, e, where, sizeof where);
        if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING))
            add(&lt, "  tap %-3u read  %-28s = 0 (padding: outside the tensor)", e->tap, where);
        else {
            char tap[64];
            const int64_t numel = e->tensor < tr->ntensors ? ks_tensor_numel(&tr->tensors[e->tensor]) : 0;
            /* a .cu thread's access outside its buffer was not made (the thread stopped);
             * a probed body's was (check reports both) */
            const int beyond = a->offset < 0 || a->offset >= numel, outside = site->line > 0 && beyond;
            add(&lt, "  %-7s %s %-28s = %-12s (offset %lld", tap_label(tr, e, tap, sizeof tap),
                e->kind == KS_EV_READ         ? "read "
                : (e->flags & KS_FLAG_ATOMIC) ? "atomic"
                                              : "write",
                where, outside ? "-" : real(v, ks_access_value(a, e->flags)), (long long)a->offset);
            if (e->flags & KS_FLAG_SHARED) add(&lt, ", phase %d", a->reserved[0]);
            if (outside)
                add(&lt, ", OUTSIDE %s: not made",
                    e->tensor < tr->ntensors ? tr->tensors[e->tensor].name : "every buffer");
            else if (beyond && !(e->flags & KS_FLAG_SHARED))
                add(&lt, ", OUTSIDE %s (%lld elements)",
                    e->tensor < tr->ntensors ? tr->tensors[e->tensor].name : "every buffer", (long long)numel);
            else if (!beyond) { /* the coordinates shown must be the offset's (check's rule) */
                const ks_tensor *t = &tr->tensors[e->tensor];
                const int64_t X = t->ndim >= 1 ? t->shape[t->ndim - 1] : 1,
                              Y = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
                int64_t at;
                if (a->y < 0 || a->y >= Y || a->x < 0 || a->x >= X ||
                    __builtin_mul_overflow((int64_t)a->plane, Y, &at) ||
                    __builtin_add_overflow(at, (int64_t)a->y, &at) || __builtin_mul_overflow(at, X, &at) ||
                    __builtin_add_overflow(at, (int64_t)a->x, &at) || at != a->offset)
                    add(&lt, ", BUT its (plane, y, x) is not this offset");
            }
            add(&lt, ")");
            if (site->line > 0) add(&lt, "   %s  %s", site->name, site->code);
        }
        ks_step_put_line(out, lt.s);
        return;
    }
    ks_step_describe_event(tr, e, line, sizeof line);
    add(&lt, "  %s", line);
    if (e->kind == KS_EV_SAMPLE) print_sample_detail(&lt, e);
    ks_step_put_line(out, lt.s);
}

int64_t ks_step_print(FILE *out, const ks_trace *tr, int64_t thread, int64_t index)
{
    size_t n = 0, cap = 64;
    const ks_event **sel = malloc(cap * sizeof *sel);
    if (!sel) return -ks_fail(KS_ENOMEM, "out of memory selecting the events");
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        int64_t g = (int64_t)e->block * tr->threads + e->thread;
        if (thread >= 0 ? g != thread : e->index != index) continue;
        const int free_kind = e->kind == KS_EV_WORK || e->kind == KS_EV_WARP || e->kind == KS_EV_FAULT ||
                              (e->site < tr->nsites && tr->sites[e->site].line > 0 && e->kind != KS_EV_SAMPLE &&
                               e->kind != KS_EV_REGION); /* .cu: barriers, and accesses outside every buffer */
        if (e->site >= tr->nsites || e->kind != tr->sites[e->site].kind || (!free_kind && e->tensor >= tr->ntensors)) {
            free(sel);
            /* version 1: the record's own offset; version 2: its section's (records vary in size,
             * and a lazily opened trace holds only some) */
            const long long at = (long long)(tr->data_start + tr->event_sec.offset) +
                                 (tr->version == 1 ? (long long)(i * sizeof *e) : 0);
            return -ks_fail_at(tr->path, at,
                               "an event of work item %lld (site %u) does not match the header's sites and tensors "
                               "(kscope check tells more)",
                               (long long)e->index, e->site);
        }
        if (n == cap) {
            const ks_event **grown = realloc(sel, (cap *= 2) * sizeof *sel);
            if (!grown) {
                free(sel);
                return -ks_fail(KS_ENOMEM, "out of memory selecting the events");
            }
            sel = grown;
        }
        sel[n++] = e;
    }
    qsort(sel, n, sizeof *sel, by_index_seq);
    int64_t items = 0;
    for (size_t k = 0; k < n; ++k) {
        items += sel[k]->kind == KS_EV_WORK;
        ks_step_print_event(out, tr, sel[k]);
    }
    free(sel);
    if (!items) {
        if (thread >= 0)
            ks_fail(
                KS_EINVAL,
                "no work item of thread %lld in this trace (launch: %lld blocks x %d threads = %lld threads, %lld work items; filter and dropped events may hide some)",
                (long long)thread, (long long)tr->blocks, tr->threads, (long long)tr->blocks * tr->threads,
                (long long)tr->work_items);
        else
            ks_fail(KS_EINVAL, "work item %lld is not in this trace (%lld work items; the filter may have excluded it)",
                    (long long)index, (long long)tr->work_items);
    }
    return items;
}
