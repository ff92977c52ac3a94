/* record_trace.c - one recorded launch as a trace, laid out as a `kscope run FILE.cu`
 * trace is (cu_trace.c): a work item is a thread (index = linear block * threads per block
 * + linear thread, fields blockIdx.z/y/x and threadIdx.z/y/x), a site is a source line
 * (or, without line info, the kernel's name and the instruction's offset), a tensor is a
 * buffer. An access of S bytes is S / itemsize events of one site and tap, one per element
 * it covers, valued in the buffer's dtype; an access narrower than an element (a byte of a
 * float buffer) is one event whose value is its bytes as an integer (KS_FLAG_INT). The
 * variant is "cuda-c", as the simulator's: check, step and diff read both alike; the
 * device is the GPU's name and the params say "frontend":"record".
 *
 * Every thread of a block that made a recorded access gets a work event, so a thread that
 * touched nothing still shows (as on the simulator); a block with no recorded access has
 * none. This file keeps the launch's buffers, tensors, sites and lines (record_build.h)
 * and writes the trace; record_events.c makes the events. */
#define _POSIX_C_SOURCE 200809L
#include "record_build.h"
#include "../trace/parallel.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

void ks_rec_short_name(const char *d, char *out, size_t n)
{
    /* the identifier before the argument list: the last name at template depth 0 */
    const char *end = d + strlen(d), *paren = NULL;
    int depth = 0;
    for (const char *p = d; p < end; ++p) {
        if (*p == '<') ++depth;
        else if (*p == '>' && depth > 0) --depth;
        else if (*p == '(' && depth == 0 && p > d && !(p[1] == 'a' && !strncmp(p, "(anonymous", 10))) {
            paren = p;
            break;
        }
    }
    if (!paren) paren = end;
    const char *q = paren; /* back over a template argument list */
    if (q > d && q[-1] == '>') {
        int dd = 0;
        while (q > d) {
            --q;
            if (*q == '>') ++dd;
            else if (*q == '<' && --dd == 0) break;
        }
    }
    const char *s = q;
    while (s > d && (isalnum((unsigned char)s[-1]) || s[-1] == '_')) --s;
    size_t k = 0;
    for (const char *p = s; p < q && k + 1 < n; ++p) out[k++] = *p;
    if (k == 0)
        for (const char *p = d; *p && k + 1 < n; ++p) out[k++] = isalnum((unsigned char)*p) ? *p : '_';
    out[k] = 0;
}

static int cmp_buf_addr(const void *a, const void *b)
{
    const ks_rec_buf *x = *(const ks_rec_buf *const *)a, *y = *(const ks_rec_buf *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const ks_rec_buf *ks_rb_find_buf(const builder *b, uint64_t a)
{
    for (int i = b->nnamed; i-- > 0;) /* the latest name of a range wins */
        if (a >= b->named[i]->addr && a - b->named[i]->addr < b->named[i]->bytes) return b->named[i];
    int lo = 0, hi = b->nallocs - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        const ks_rec_buf *x = b->allocs[mid];
        if (a < x->addr) hi = mid - 1;
        else if (a - x->addr >= x->bytes) lo = mid + 1;
        else return x;
    }
    lo = 0, hi = b->nunknown - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        const ks_rec_buf *x = &b->unknown[mid];
        if (a < x->addr) hi = mid - 1;
        else if (a - x->addr >= x->bytes) lo = mid + 1;
        else return x;
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* --shared-accesses: one tensor "shared" over the part of the block's shared window the
 * recorded accesses touch, in 4-byte words (the window starts with memory the system
 * reserves, 1 KiB on sm_90, and the launch's shared size is not known here): element 0 is
 * the lowest word touched, its byte offset in the window is the params' shared_base. A
 * named range, so find_buf finds it first. The trace keeps no contents: shared memory
 * lives per block. */
/* One thread's slice of the records for the scans before the build: the shared window's
 * touched bytes [lo, hi), and the addresses in no buffer (step 2, after the window). */
typedef struct scan_job {
    const builder *b;
    uint64_t from, to, lo, hi;
    uint64_t *a; /* addresses in no buffer */
    size_t n, cap;
    int step, failed;
} scan_job;

static void *scan(void *arg)
{
    scan_job *j = arg;
    const ks_rec *r = j->b->l->recs;
    if (j->step == 0) {
        j->lo = UINT64_MAX, j->hi = 0;
        for (uint64_t i = j->from; i < j->to; ++i)
            if ((r[i].flags & KS_REC_SHARED) && r[i].addr >= KS_REC_SHARED_BASE) {
                const uint64_t a = r[i].addr - KS_REC_SHARED_BASE, e = a + r[i].size;
                if (a < j->lo) j->lo = a;
                if (e > j->hi) j->hi = e;
            }
        return NULL;
    }
    const builder *b = j->b;
    for (uint64_t i = j->from; i < j->to && !j->failed; ++i) {
        if (r[i].flags & KS_REC_BARRIER) continue; /* no memory */
        if (b->nnamed + b->nallocs && ks_rb_find_buf(b, r[i].addr)) continue;
        if (j->n && j->a[j->n - 1] == r[i].addr) continue; /* the same again: once is enough */
        if (j->n == j->cap) {
            const size_t cap = j->cap ? j->cap * 2 : 256;
            uint64_t *g = realloc(j->a, cap * sizeof *g);
            if (!g) {
                j->failed = 1;
                break;
            }
            j->a = g, j->cap = cap;
        }
        j->a[j->n++] = r[i].addr;
    }
    return NULL;
}

/* Runs scan step `step` over the records on up to 16 threads (one for a small launch). */
static int scan_records(builder *b, scan_job *jobs, int step)
{
    const uint64_t n = b->l->nrecs;
    const int nt = ks_rb_threads(n);
    for (int t = 0; t < nt; ++t) {
        if (step == 0)
            jobs[t] =
                (scan_job){.b = b, .from = n * (uint64_t)t / (uint64_t)nt, .to = n * (uint64_t)(t + 1) / (uint64_t)nt};
        jobs[t].step = step;
    }
    ks_run_parallel(scan, jobs, sizeof *jobs, nt);
    return nt;
}

/* --shared-accesses: one tensor "shared" over the part of the block's shared window the
 * recorded accesses touch, in 4-byte words (the window starts with memory the system
 * reserves, 1 KiB on sm_90, and the launch's shared size is not known here): element 0 is
 * the lowest word touched, its byte offset in the window is the params' shared_base. A
 * named range, so find_buf finds it first. The trace keeps no contents: shared memory
 * lives per block. */
static void add_shared(builder *b, const scan_job *jobs, int nt)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int t = 0; t < nt; ++t) {
        if (jobs[t].lo < lo) lo = jobs[t].lo;
        if (jobs[t].hi > hi) hi = jobs[t].hi;
    }
    if (!hi) return;
    lo &= ~(uint64_t)3;
    ks_rec_buf *x = &b->shared;
    memset(x, 0, sizeof *x);
    x->addr = KS_REC_SHARED_BASE + lo, x->bytes = ((hi + 3) & ~(uint64_t)3) - lo, x->named = 1;
    snprintf(x->name, sizeof x->name, "shared");
    x->dtype = KS_F32, x->ndim = 1, x->shape[0] = (int64_t)(x->bytes / 4);
    b->named[b->nnamed++] = x;
}

/* memory in no buffer (a __device__ variable, memory allocated before the recorder saw
 * it): ranges of touched addresses less than 64 KiB apart, 4-byte aligned, "globalN" */
static int find_unknown(builder *b, const scan_job *jobs, int nt)
{
    size_t n = 0;
    int failed = 0;
    for (int t = 0; t < nt; ++t) n += jobs[t].n, failed |= jobs[t].failed;
    uint64_t *a = failed ? NULL : malloc((n ? n : 1) * sizeof *a);
    if (!a) return ks_fail(KS_ENOMEM, "out of memory");
    size_t k = 0;
    for (int t = 0; t < nt; ++t)
        if (jobs[t].n) memcpy(a + k, jobs[t].a, jobs[t].n * sizeof *a), k += jobs[t].n;
    if (!n) {
        free(a);
        return KS_OK;
    }
    qsort(a, n, sizeof *a, cmp_u64);
    int count = 0;
    for (size_t i = 0; i < n; ++i)
        if (i == 0 || a[i] - a[i - 1] > 65536) ++count;
    b->unknown = calloc((size_t)count, sizeof *b->unknown);
    if (!b->unknown) {
        free(a);
        return ks_fail(KS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; ++i) {
        if (i == 0 || a[i] - a[i - 1] > 65536) {
            ks_rec_buf *u = &b->unknown[b->nunknown];
            snprintf(u->name, sizeof u->name, "global%d", b->nunknown);
            u->addr = a[i] & ~(uint64_t)3;
            b->nunknown++;
        }
        ks_rec_buf *u = &b->unknown[b->nunknown - 1];
        const uint64_t end = (a[i] + 16 + 3) & ~(uint64_t)3; /* room for the widest access */
        if (end - u->addr > u->bytes) u->bytes = end - u->addr;
    }
    for (int k = 0; k < b->nunknown; ++k) {
        ks_rec_buf *u = &b->unknown[k];
        u->dtype = KS_F32, u->ndim = 1, u->shape[0] = (int64_t)(u->bytes / 4);
    }
    free(a);
    return KS_OK;
}

int ks_rb_tensor_of(builder *b, const ks_rec_buf *x)
{
    for (int i = 0; i < b->nt; ++i)
        if (b->tensor_buf[i] == x) return i;
    if (b->nt == KS_MAX_TENSORS)
        return -ks_fail(KS_EINVAL,
                        "the launch touches more than %d buffers; a trace holds %d (record fewer "
                        "threads with --filter)",
                        KS_MAX_TENSORS, KS_MAX_TENSORS);
    b->tensor_buf[b->nt] = x;
    b->t[b->nt].buf = x;
    return b->nt++;
}

const ks_rec_line *ks_rb_line_for(builder *b, uint32_t pc)
{
    static const ks_rec_line none = {"", 0};
    if (!b->l->line_of) return &none;
    for (int i = 0; i < b->nlines; ++i)
        if (b->line_pcs[i] == pc) return &b->lines[i];
    if (b->nlines == b->line_cap) {
        const int cap = b->line_cap ? b->line_cap * 2 : 64;
        ks_rec_line *nl = realloc(b->lines, (size_t)cap * sizeof *nl);
        if (!nl) return &none;
        b->lines = nl;
        uint32_t *np = realloc(b->line_pcs, (size_t)cap * sizeof *np);
        if (!np) return &none;
        b->line_pcs = np;
        b->line_cap = cap;
    }
    ks_rec_line *out = &b->lines[b->nlines];
    memset(out, 0, sizeof *out);
    if (!b->l->line_of(pc, out, b->l->ctx)) out->line = 0, out->file[0] = 0;
    b->line_pcs[b->nlines] = pc;
    return &b->lines[b->nlines++];
}

static void source_text(const char *path, int line, char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char *buf = NULL;
    size_t cap = 0;
    for (int k = 1; getline(&buf, &cap, f) >= 0; ++k) /* whole lines, however long */
        if (k == line) {
            const char *p = buf;
            while (*p == ' ' || *p == '\t') ++p;
            size_t len = strcspn(p, "\r\n");
            while (len && isspace((unsigned char)p[len - 1])) --len;
            snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
            break;
        }
    free(buf);
    fclose(f);
}

/* the rank of instruction pc among its site's (the low 4 bits of tap, as cu_trace.c: the
 * instructions of one line, a loop unrolled, told apart) */
int ks_rb_rank_of(builder *b, int s, uint32_t pc)
{
    for (int k = 0; k < b->site_npcs[s]; ++k)
        if (b->site_pcs[s][k] == pc) return k;
    if (b->site_npcs[s] == 16) return 15;
    b->site_pcs[s][b->site_npcs[s]] = pc;
    return b->site_npcs[s]++;
}

/* the site of an access at instruction pc of tensor t: one per source line (or offset),
 * kind and tensor; past KS_MAX_SITES a line shares the first site of its kind and tensor,
 * and -1 (with the error set) when there is none */
int ks_rb_site_of(builder *b, uint32_t pc, int kind, int t)
{
    const ks_rec_line *ln = ks_rb_line_for(b, pc);
    ks_trace *tr = b->tr;
    int share = -1;
    for (int s = 1; s < tr->nsites; ++s) {
        const site_key *k = &b->keys[s];
        if (k->kind != kind || k->tensor != t) continue;
        if (share < 0) share = s;
        if (ln->line ? (k->line == ln->line && !strcmp(k->file, ln->file)) : (k->line == 0 && k->pc == pc)) return s;
    }
    if (tr->nsites == KS_MAX_SITES) {
        if (share >= 0) return share;
        return -ks_fail(KS_EINVAL,
                        "the launch has more than %d distinct access sites; a trace holds %d (record "
                        "fewer kernels or build with -lineinfo so sites are lines)",
                        KS_MAX_SITES - 1, KS_MAX_SITES - 1);
    }
    const int s = tr->nsites++;
    b->keys[s] = (site_key){kind, t, ln->line, pc, ""};
    snprintf(b->keys[s].file, sizeof b->keys[s].file, "%s", ln->file);
    ks_site *n = &tr->sites[s];
    memset(n, 0, sizeof *n);
    n->kind = kind, n->tensor = t, n->line = ln->line;
    if (ln->line) {
        const char *base = strrchr(ln->file, '/');
        base = base ? base + 1 : ln->file;
        char tail[16];
        const int tl = snprintf(tail, sizeof tail, ":%d", ln->line);
        const int room = (int)sizeof n->name - 1 - tl, bl = (int)strlen(base);
        if (bl > room) snprintf(n->name, sizeof n->name, "~%.*s%s", room - 1, base + bl - room + 1, tail);
        else snprintf(n->name, sizeof n->name, "%.*s%s", room, base, tail);
        source_text(ln->file, ln->line, n->code, sizeof n->code);
    } else {
        snprintf(n->name, sizeof n->name, "%.20s+0x%x", b->l->short_name, pc);
    }
    return s;
}

static int64_t floordiv(int64_t a, int64_t c) { return a >= 0 ? a / c : -((-a + c - 1) / c); }

/* one element's value into an access event, by dtype (integers exactly when they fit) */
void ks_rb_set_value(ks_event *e, ks_dtype d, const uint8_t *p, size_t n)
{
    union {
        float f;
        double g;
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
    } v = {0};
    memcpy(&v, p, n <= 8 ? n : 8);
    int64_t i = INT64_MIN;
    float f = 0.0f;
    if (n != ks_dtype_size(d)) i = (int64_t)(n == 1 ? v.u8 : n == 2 ? v.u16 : n == 4 ? v.u32 : v.i64);
    else switch (d) {
        case KS_F32: f = v.f; break;
        case KS_F64: f = (float)v.g; break;
        case KS_I8: i = v.i8; break;
        case KS_U8: i = v.u8; break;
        case KS_I16: i = v.i16; break;
        case KS_U16: i = v.u16; break;
        case KS_I32: i = v.i32; break;
        case KS_U32: i = v.u32, f = (float)v.u32; break;
        case KS_I64: i = v.i64, f = (float)v.i64; break;
        case KS_U64: i = v.u64 > INT32_MAX ? INT64_MIN : (int64_t)v.u64, f = (float)v.u64; break;
        }
    if (i >= INT32_MIN && i <= INT32_MAX) {
        e->flags |= KS_FLAG_INT;
        e->u.access.ivalue = (int32_t)i;
    } else e->u.access.value = f;
}

void ks_rb_place(ks_event *e, const ks_rec_buf *x, int64_t off)
{
    const int64_t cols = x->ndim ? x->shape[x->ndim - 1] : 1, rows = x->ndim >= 2 ? x->shape[x->ndim - 2] : 1;
    e->u.access.offset = off;
    const int64_t row = floordiv(off, cols > 0 ? cols : 1);
    e->u.access.x = (int32_t)(off - row * cols);
    e->u.access.plane = (int32_t)floordiv(row, rows > 0 ? rows : 1);
    e->u.access.y = (int32_t)(row - (int64_t)e->u.access.plane * rows);
}

static int escape_json(char *out, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 7 < n; ++s) {
        if (*s == '"' || *s == '\\') out[k++] = '\\', out[k++] = *s;
        else if ((unsigned char)*s < 0x20) k += (size_t)snprintf(out + k, n - k, "\\u%04x", (unsigned char)*s);
        else out[k++] = *s;
    }
    out[k] = 0;
    return (int)k;
}

int ks_rec_write_trace(const ks_rec_launch *l, const char *path)
{
    memset(ks_rec_build_ms, 0, sizeof ks_rec_build_ms);
    builder b;
    memset(&b, 0, sizeof b);
    b.l = l;
    ks_trace *tr = calloc(1, sizeof *tr);
    b.named = calloc((size_t)l->nbufs + 1, sizeof *b.named);
    b.allocs = calloc((size_t)l->nbufs + 1, sizeof *b.allocs);
    int rc = KS_OK;
    rec_events E;
    memset(&E, 0, sizeof E);
    void *data[KS_MAX_TENSORS] = {0};
    if (!tr || !b.named || !b.allocs) {
        rc = ks_fail(KS_ENOMEM, "out of memory");
        goto out;
    }
    b.tr = tr;
    for (int i = 0; i < l->nbufs; ++i) {
        if (l->bufs[i].named) b.named[b.nnamed++] = &l->bufs[i];
        else b.allocs[b.nallocs++] = &l->bufs[i];
    }
    qsort(b.allocs, (size_t)b.nallocs, sizeof *b.allocs, cmp_buf_addr);
    { /* two scans of the records: the shared window, then memory in no buffer */
        const double t0 = ks_rb_now_ms();
        scan_job jobs[KS_MAX_THREADS];
        memset(jobs, 0, sizeof jobs);
        const int nt = scan_records(&b, jobs, 0);
        add_shared(&b, jobs, nt);
        scan_records(&b, jobs, 1);
        rc = find_unknown(&b, jobs, nt);
        for (int t = 0; t < nt; ++t) free(jobs[t].a);
        ks_rec_build_ms[2] = ks_rb_now_ms() - t0;
        if (rc) goto out;
    }

    ks_site *w = &tr->sites[0];
    snprintf(w->name, sizeof w->name, "thread");
    w->kind = KS_EV_WORK, w->tensor = -1, w->nfields = 6;
    const int64_t T = (int64_t)l->block[0] * l->block[1] * l->block[2];
    const int64_t gx = l->grid[0], gy = l->grid[1], bx = l->block[0], by = l->block[1];
    ks_field_digit(&w->fields[0], "blockIdx.z", T * gx * gy, 0, 0);
    ks_field_digit(&w->fields[1], "blockIdx.y", T * gx, gy, 0);
    ks_field_digit(&w->fields[2], "blockIdx.x", T, gx, 0);
    ks_field_digit(&w->fields[3], "threadIdx.z", bx * by, l->block[2], 0);
    ks_field_digit(&w->fields[4], "threadIdx.y", bx, by, 0);
    ks_field_digit(&w->fields[5], "threadIdx.x", 1, bx, 0);
    tr->nsites = 1;
    if ((rc = ks_rec_events_prepare(&b, &E))) goto out;

    snprintf(tr->op, sizeof tr->op, "%.31s", l->short_name);
    snprintf(tr->variant, sizeof tr->variant, "cuda-c");
    snprintf(tr->device, sizeof tr->device, "%s", l->device);
    tr->threads = (int)T;
    tr->blocks = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
    tr->block_cap = -1;
    tr->work_items = tr->blocks * T;
    tr->filter = l->filter;
    tr->events = NULL; /* made as they are written */
    tr->nevents = E.n;
    tr->dropped = l->dropped;
    tr->zstd = l->zstd;
    for (int i = 0; i < b.nt; ++i) {
        const ks_rec_buf *x = b.t[i].buf;
        ks_tensor *t = &tr->tensors[i];
        snprintf(t->name, sizeof t->name, "%s", x->name);
        t->dtype = x->dtype, t->ndim = x->ndim;
        memcpy(t->shape, x->shape, sizeof t->shape);
        const size_t bytes = (size_t)ks_shape_numel(x->ndim, x->shape, x->dtype) * ks_rb_elem_of(x);
        data[i] = calloc(1, bytes ? bytes : 1);
        if (!data[i]) {
            rc = ks_fail(KS_ENOMEM, "out of memory (buffer %s, %zu bytes)", x->name, bytes);
            goto out;
        }
        /* the contents after the launch (a range past what was allocated stays 0) */
        const size_t have = bytes < x->bytes ? bytes : (size_t)x->bytes;
        if (have && x != &b.shared && l->copy && l->copy(data[i], x->addr, have, l->ctx) != 0)
            memset(data[i], 0, have); /* unreadable (freed, or not device memory): zeros */
        t->data = data[i];
        tr->roles[i] = b.t[i].written ? KS_ROLE_OUTPUT : KS_ROLE_INPUT;
    }
    tr->ntensors = b.nt;
    {
        char kernel[400];
        escape_json(kernel, sizeof kernel, l->kernel);
        size_t used = (size_t)snprintf(tr->params, sizeof tr->params,
                                       "{\"frontend\":\"record\",\"kernel\":\"%s\",\"launch\":%llu,"
                                       "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],",
                                       kernel, (unsigned long long)l->number, l->grid[0], l->grid[1], l->grid[2],
                                       l->block[0], l->block[1], l->block[2]);
        if (l->dyn_shared >= 0) /* known when the launch call was seen */
            used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "\"dynamic_shared\":%lld,",
                                     (long long)l->dyn_shared);
        used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "\"buffers\":{");
        for (int i = 0; i < b.nt && used + 140 < sizeof tr->params; ++i) {
            char nm[80];
            escape_json(nm, sizeof nm, b.t[i].buf->name);
            const int shared = b.t[i].buf == &b.shared; /* its address: the offset in the window */
            used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "%s\"%s\":\"%s0x%llx+%llu\"",
                                     i ? "," : "", nm, shared ? "shared:" : "",
                                     (unsigned long long)(b.t[i].buf->addr - (shared ? KS_REC_SHARED_BASE : 0)),
                                     (unsigned long long)b.t[i].buf->bytes);
        }
        snprintf(tr->params + used, sizeof tr->params - used, "}}");
    }
    const double tw = ks_rb_now_ms();
    ks_event_source src;
    ks_rec_events_source(&E, &src);
    rc = ks_trace_write_source(path, tr, &src);
    ks_rec_build_ms[3] = ks_rb_now_ms() - tw;
out:
    for (int i = 0; i < KS_MAX_TENSORS; ++i) free(data[i]);
    ks_rec_events_free(&E);
    free(b.named);
    free(b.allocs);
    free(b.unknown);
    free(b.lines);
    free(b.line_pcs);
    free(tr);
    return rc;
}
