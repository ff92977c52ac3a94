/* pz_judge.c - the verdict on a puzzle's trace (a .cu trace: kscope run FILE.cu's tensors,
 * one per pointer parameter and per __shared__ array, sites that are source lines): the
 * output against the reference, then the access pattern the events show (bounds,
 * read-only inputs, one write per output element, global reads per thread, threads that
 * stopped) and kscope check's invariants. Every finding names the thread as CUDA does and
 * the source line of the access. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/core/ks_error.h"
#include "../../kernels/cuda_c/cu_rt.h"
#include "../../trace/check.h"
#include "../../trace/kst.h"
#include "pz_grade.h"

/* An array of the trace seen as rows x cols. */
typedef struct pz_view {
    int tensor; /* -1: not in the trace */
    int ndim;
    int64_t rows, cols;
    const float *data;
} pz_view;

static const char *const names[3] = {"a", "b", "out"};

static pz_view view_of(const ks_trace *tr, int tensor, pz_shape sh)
{
    pz_view v = {.tensor = tensor, .ndim = sh.ndim, .rows = sh.rows, .cols = sh.cols};
    v.data = (const float *)tr->tensors[tensor].data;
    return v;
}

static int outside(const pz_view *v, int64_t offset) { return offset < 0 || offset >= v->rows * v->cols; }

/* "a[4]"; with `at`, a matrix's element inside it also by row and column */
static void element(char *buf, size_t n, const char *name, const pz_view *v, int64_t offset, int at)
{
    if (at && v->ndim == 2 && !outside(v, offset))
        snprintf(buf, n, "%s[%lld] (row %lld, column %lld)", name, (long long)offset, (long long)(offset / v->cols),
                 (long long)(offset % v->cols));
    else snprintf(buf, n, "%s[%lld]", name, (long long)offset);
}

void pz_who(char *buf, size_t n, const pz_spec *s, const ks_event *e)
{
    if (s->block[1] == 1 && s->grid[1] == 1)
        snprintf(buf, n, "thread %u of block %u (work item %lld)", e->thread, e->block, (long long)e->index);
    else
        snprintf(buf, n, "thread (%u,%u) of block (%u,%u) (work item %lld)", e->thread % s->block[0],
                 e->thread / s->block[0], e->block % s->grid[0], e->block / s->grid[0], (long long)e->index);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void pz_where(char *buf, size_t n, const ks_trace *tr, const char *src, const ks_event *e)
{
    buf[0] = 0;
    if (e->site >= tr->nsites || tr->sites[e->site].line <= 0) return;
    const ks_site *site = &tr->sites[e->site];
    /* the site's name is "FILE:LINE:COL" with FILE cut to 20 characters: the graded file's
     * whole name when it is that file */
    const size_t len = strcspn(site->name, ":");
    const char *base = base_name(src);
    if (len && !strncmp(base, site->name, len)) snprintf(buf, n, "%s:%d: %s", base, site->line, site->code);
    else snprintf(buf, n, "%.*s:%d: %s", (int)len, site->name, site->line, site->code);
}

pz_rule *pz_rule_add(pz_verdict *v, const char *name)
{
    pz_rule *r = &v->rules[v->nrules++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->ok = 1;
    r->item = -1;
    return r;
}

static void fail(pz_rule *r, int64_t item)
{
    r->ok = 0;
    r->item = item;
}

/* the puzzle array (0 a, 1 b, 2 out) whose tensor an event touches, or -1 */
static int array_of(const pz_view *vw, const ks_event *e)
{
    for (int k = 0; k < 3; ++k)
        if (vw[k].tensor >= 0 && vw[k].tensor == e->tensor) return k;
    return -1;
}

static int is_access(const ks_event *e) { return e->kind == KS_EV_READ || e->kind == KS_EV_WRITE; }

/* Bounds and read-only inputs: the first access outside, the first write of an input. */
static void check_accesses(const pz_spec *s, const char *src, const ks_trace *tr, const pz_view *vw, pz_verdict *v)
{
    pz_rule *bounds = pz_rule_add(v, "no access outside an array");
    pz_rule *inputs = pz_rule_add(v, "inputs only read");
    char el[96], by[96], shape[64];
    for (uint64_t i = 0; i < tr->nevents && (bounds->ok || inputs->ok); ++i) {
        const ks_event *e = &tr->events[i];
        if (!is_access(e)) continue;
        const int k = array_of(vw, e);
        const char *verb = e->kind == KS_EV_READ ? "read" : "wrote";
        pz_who(by, sizeof by, s, e);
        if (bounds->ok && e->tensor >= tr->ntensors) {
            snprintf(
                bounds->detail, sizeof bounds->detail,
                "%s %s memory outside every array (a pointer gone astray?); the access was not made and the thread "
                "stopped there",
                by, e->kind == KS_EV_READ ? "read" : "wrote to");
            pz_where(bounds->where[0], sizeof bounds->where[0], tr, src, e);
            fail(bounds, e->index);
        } else if (bounds->ok && k >= 0 && outside(&vw[k], e->u.access.offset)) {
            element(el, sizeof el, names[k], &vw[k], e->u.access.offset, 0);
            if (vw[k].ndim == 1) snprintf(shape, sizeof shape, "%lld elements", (long long)vw[k].cols);
            else
                snprintf(shape, sizeof shape, "%lld x %lld, %lld elements", (long long)vw[k].rows,
                         (long long)vw[k].cols, (long long)(vw[k].rows * vw[k].cols));
            snprintf(bounds->detail, sizeof bounds->detail,
                     "%s %s %s, outside %s (%s): a guard is missing or off by one (the access was not made; the thread "
                     "stopped there)",
                     by, verb, el, names[k], shape);
            pz_where(bounds->where[0], sizeof bounds->where[0], tr, src, e);
            fail(bounds, e->index);
        } else if (bounds->ok && k < 0 && (e->flags & KS_FLAG_SHARED)) {
            const ks_tensor *t = &tr->tensors[e->tensor];
            const int64_t numel = ks_tensor_numel(t);
            if (e->u.access.offset < 0 || e->u.access.offset >= numel) {
                snprintf(
                    bounds->detail, sizeof bounds->detail,
                    "%s %s %s[%lld], outside the __shared__ array %s (%lld elements): a shared index is off by one "
                    "or unguarded (the access was not made; the thread stopped there)",
                    by, verb, t->name, (long long)e->u.access.offset, t->name, (long long)numel);
                pz_where(bounds->where[0], sizeof bounds->where[0], tr, src, e);
                fail(bounds, e->index);
            }
        }
        if (inputs->ok && (k == 0 || k == 1) && e->kind == KS_EV_WRITE) {
            element(el, sizeof el, names[k], &vw[k], e->u.access.offset, 1);
            snprintf(inputs->detail, sizeof inputs->detail, "%s wrote %s: %s is an input", by, el, names[k]);
            pz_where(inputs->where[0], sizeof inputs->where[0], tr, src, e);
            fail(inputs, e->index);
        }
    }
}

/* a value as the messages show it: NaN (shared memory's poison) without printf's sign */
static const char *num(char *buf, size_t n, float x)
{
    if (isnan(x)) snprintf(buf, n, "NaN");
    else snprintf(buf, n, "%g", x);
    return buf;
}

/* got and want one above the other, a line per row of a matrix */
static void table(char *buf, size_t size, const pz_view *out, const float *want)
{
    size_t len = 0;
    for (int side = 0; side < 2; ++side)
        for (int64_t r = 0; r < out->rows && len + 16 < size; ++r) {
            len += (size_t)snprintf(buf + len, size - len, "%s", r ? "       " : side ? "  want:" : "  got: ");
            for (int64_t c = 0; c < out->cols && len + 16 < size; ++c) {
                char x[32];
                num(x, sizeof x, side ? want[r * out->cols + c] : out->data[r * out->cols + c]);
                len += (size_t)snprintf(buf + len, size - len, "%5s", x);
            }
            len += (size_t)snprintf(buf + len, size - len, "\n");
        }
}

/* The output against the reference, and how often each element was written (by whom). */
static void check_output(const pz_spec *s, const char *src, const ks_trace *tr, const pz_view *vw, pz_verdict *v)
{
    pz_rule *right = pz_rule_add(v, "output matches the reference");
    pz_rule *once = pz_rule_add(v, "each output element written once");
    const int64_t n = vw[2].rows * vw[2].cols;
    float *want = calloc((size_t)n, sizeof *want);
    int64_t *count = calloc((size_t)n, sizeof *count);
    uint64_t *last = calloc((size_t)n, sizeof *last); /* the event of its last write */
    if (!want || !count || !last) {
        snprintf(right->detail, sizeof right->detail, "out of memory");
        fail(right, -1);
        free(want), free(count), free(last);
        return;
    }
    s->reference(s, vw[0].data, vw[1].tensor >= 0 ? vw[1].data : NULL, want);
    char el[96], by[96], by2[96];
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != KS_EV_WRITE || e->tensor != vw[2].tensor || outside(&vw[2], e->u.access.offset)) continue;
        const int64_t o = e->u.access.offset;
        if (count[o]++ == 1 && once->ok) {
            const ks_event *first = &tr->events[last[o]];
            element(el, sizeof el, "out", &vw[2], o, 1);
            pz_who(by, sizeof by, s, e);
            if (first->index == e->index)
                snprintf(once->detail, sizeof once->detail,
                         "%s written twice by %s: write each element once, its final "
                         "value",
                         el, by);
            else if ((first->flags & KS_FLAG_ATOMIC) && (e->flags & KS_FLAG_ATOMIC)) {
                pz_who(by2, sizeof by2, s, first);
                snprintf(once->detail, sizeof once->detail,
                         "%s updated atomically by %s and by %s (and maybe more): no race, but the puzzle wants one "
                         "write by one thread (sum in shared memory first)",
                         el, by2, by);
            } else {
                pz_who(by2, sizeof by2, s, first);
                snprintf(once->detail, sizeof once->detail,
                         "%s written by %s and by %s (and maybe more): on a GPU these writes race; one thread must "
                         "write it",
                         el, by2, by);
            }
            pz_where(once->where[0], sizeof once->where[0], tr, src, e);
            if (first->site != e->site) pz_where(once->where[1], sizeof once->where[1], tr, src, first);
            fail(once, e->index);
        }
        last[o] = i;
    }
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < n; ++i) {
        const float g = vw[2].data[i], w = want[i];
        if (!(fabsf(g - w) <= 1e-4f * (1 + fabsf(w)))) wrong += 1, first = first < 0 ? i : first;
    }
    /* an element nobody wrote has no access to point at: the lines that write out do */
    const ks_event *writer = NULL;
    for (uint64_t i = 0; i < tr->nevents && !writer; ++i)
        if (tr->events[i].kind == KS_EV_WRITE && tr->events[i].tensor == vw[2].tensor) writer = &tr->events[i];
    for (int64_t i = 0; i < n && once->ok; ++i)
        if (!count[i]) {
            element(el, sizeof el, "out", &vw[2], i, 1);
            snprintf(once->detail, sizeof once->detail, "no thread wrote %s%s%s", el,
                     wrong ? "" : ", yet it holds the right value: a write the trace cannot see (memcpy?)",
                     writer ? " (out is written at the line below: which guard or index leaves it out?)" : "");
            if (writer) pz_where(once->where[0], sizeof once->where[0], tr, src, writer);
            fail(once, -1);
        }
    if (wrong) {
        by[0] = 0;
        element(el, sizeof el, "out", &vw[2], first, 1);
        if (count[first]) pz_who(by, sizeof by, s, &tr->events[last[first]]);
        char got[32], exp[32];
        snprintf(right->detail, sizeof right->detail,
                 "%lld of %lld elements wrong; the first, %s: got %s, want %s (%s%s)", (long long)wrong, (long long)n,
                 el, num(got, sizeof got, vw[2].data[first]), num(exp, sizeof exp, want[first]),
                 count[first] ? "written last by " : "no thread wrote it", by);
        if (count[first]) pz_where(right->where[0], sizeof right->where[0], tr, src, &tr->events[last[first]]);
        else if (writer) pz_where(right->where[0], sizeof right->where[0], tr, src, writer);
        fail(right, count[first] ? tr->events[last[first]].index : -1);
        table(v->table, sizeof v->table, &vw[2], want);
    }
    free(want), free(count), free(last);
}

/* Global reads per work item (= thread): the first over the limit, and what it read. */
static void check_reads(const pz_spec *s, const char *src, const ks_trace *tr, const pz_view *vw, pz_verdict *v)
{
    char name[64];
    snprintf(name, sizeof name, "at most %d global read%s a thread", s->max_reads, s->max_reads == 1 ? "" : "s");
    pz_rule *r = pz_rule_add(v, name);
    int64_t *reads = calloc((size_t)tr->work_items + 1, sizeof *reads);
    if (!reads) {
        snprintf(r->detail, sizeof r->detail, "out of memory");
        fail(r, -1);
        return;
    }
    int64_t worst = -1;
    uint64_t over = 0; /* the read past the limit */
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != KS_EV_READ || e->index < 0 || e->index >= tr->work_items || array_of(vw, e) < 0) continue;
        if (++reads[e->index] > s->max_reads && worst < 0) worst = e->index, over = i;
    }
    if (worst >= 0) {
        char by[96];
        pz_who(by, sizeof by, s, &tr->events[over]);
        size_t len = (size_t)snprintf(r->detail, sizeof r->detail, "%s reads global memory %lld times (", by,
                                      (long long)reads[worst]);
        int shown = 0;
        for (uint64_t i = 0; i < tr->nevents && shown < 6 && len < sizeof r->detail; ++i) {
            const ks_event *e = &tr->events[i];
            const int k = array_of(vw, e);
            if (e->kind != KS_EV_READ || e->index != worst || k < 0) continue;
            char el[64];
            element(el, sizeof el, names[k], &vw[k], e->u.access.offset, 0);
            len += (size_t)snprintf(r->detail + len, sizeof r->detail - len, "%s%s", shown++ ? ", " : "", el);
        }
        if (len < sizeof r->detail)
            snprintf(r->detail + len, sizeof r->detail - len, "%s); read each value once%s",
                     shown < reads[worst] ? ", ..." : "", s->shared ? " into shared memory and use it from there" : "");
        pz_where(r->where[0], sizeof r->where[0], tr, src, &tr->events[over]);
        fail(r, worst);
    }
    free(reads);
}

/* Threads the front end stopped for a reason of their own (an access outside is the
 * bounds rule's): assert(), __trap(), a warp collective that waited in vain. */
static void check_stops(const pz_spec *s, const char *src, const ks_trace *tr, pz_verdict *v)
{
    pz_rule *r = pz_rule_add(v, "every thread runs to its end");
    for (uint64_t i = 0; i < tr->nevents && r->ok; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != KS_EV_FAULT || e->u.fault.code == KS_CU_F_OUTSIDE) continue;
        static const char *const what[] = {
            [KS_CU_F_ASSERT] = "failed an assert()",
            [KS_CU_F_TRAP] = "called __trap()",
            [KS_CU_F_DEADLOCK] = "waited in a warp collective for lanes that never came"};
        const uint32_t code = e->u.fault.code;
        char by[96];
        pz_who(by, sizeof by, s, e);
        snprintf(r->detail, sizeof r->detail, "%s %s and stopped there", by,
                 code < sizeof what / sizeof what[0] && what[code] ? what[code] : "was stopped by the simulator");
        pz_where(r->where[0], sizeof r->where[0], tr, src, e);
        fail(r, e->index);
    }
}

/* kscope check on the global accesses: the shared ones and the barriers are the shared
 * rules' (check's own lines for them would repeat those) */
static void check_invariants(const ks_trace *tr, pz_verdict *v)
{
    pz_rule *r = pz_rule_add(v, "kscope check: the trace's invariants");
    static ks_check_report rep;
    ks_trace global = *tr;
    ks_event *kept = malloc((tr->nevents + 1) * sizeof *kept);
    if (!kept) {
        snprintf(r->detail, sizeof r->detail, "out of memory");
        fail(r, -1);
        return;
    }
    global.nevents = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i)
        if (!pz_is_shared(&tr->events[i])) kept[global.nevents++] = tr->events[i];
    global.events = kept;
    const int rc = ks_trace_check(&global, &rep);
    free(kept);
    if (rc) {
        snprintf(r->detail, sizeof r->detail, "%s", ks_error_message());
        fail(r, -1);
    } else if (rep.violations) {
        /* a count violation can come without its line: kscope check lists them all */
        snprintf(r->detail, sizeof r->detail, "%llu violation%s; %s%s", (unsigned long long)rep.violations,
                 rep.violations == 1 ? "" : "s",
                 rep.first[0][0] ? "the first: " : "kscope check on the trace lists them", rep.first[0]);
        fail(r, -1);
    }
}

/* A barrier the kernel reaches through a tail call (clang's sibling-call optimisation:
 * `__syncthreads()` as the last thing a thread does on some path) is recorded at a site
 * without a line (the call's return address is outside the kernel). Such an arrival gets
 * the line its block's other threads wait at in the same phase, so it is not taken for a
 * divergent barrier. */
static int barrier_lines(const ks_trace *tr, ks_event *ev)
{
    uint64_t known = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) known += ev[i].kind == KS_EV_BARRIER && ev[i].u.barrier.line > 0;
    uint64_t *at = malloc((known + 1) * sizeof *at), k = 0;
    if (!at) return KS_ENOMEM;
    for (uint64_t i = 0; i < tr->nevents; ++i)
        if (ev[i].kind == KS_EV_BARRIER && ev[i].u.barrier.line > 0) at[k++] = i;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        ks_event *e = &ev[i];
        if (e->kind != KS_EV_BARRIER || e->u.barrier.line > 0) continue;
        for (uint64_t j = 0; j < k; ++j) {
            const ks_event *o = &ev[at[j]];
            if (o->block == e->block && o->u.barrier.phase == e->u.barrier.phase) {
                e->u.barrier.line = o->u.barrier.line;
                e->site = o->site;
                break;
            }
        }
    }
    free(at);
    return KS_OK;
}

int pz_judge(const pz_spec *s, const char *src, const char *trace_path, pz_verdict *v)
{
    static ks_trace tr;
    memset(v, 0, sizeof *v);
    int rc = ks_trace_open(trace_path, &tr);
    if (rc) return rc;
    /* the buffers come first, in the order the run gave them: a, [b,] out */
    const pz_shape shapes[3] = {s->a, s->b, s->out};
    pz_view vw[3] = {{.tensor = -1}, {.tensor = -1}, {.tensor = -1}};
    int t = 0, bad = strcmp(tr.variant, "cuda-c") != 0;
    for (int k = 0; k < 3 && !bad; ++k) {
        if (!shapes[k].rows) continue;
        bad = t >= tr.ntensors || strcmp(tr.tensors[t].name, names[k]) || tr.tensors[t].dtype != KS_F32 ||
              ks_tensor_numel(&tr.tensors[t]) != shapes[k].rows * shapes[k].cols;
        if (!bad) vw[k] = view_of(&tr, t++, shapes[k]);
    }
    ks_event *ev = bad ? NULL : malloc((tr.nevents + 1) * sizeof *ev);
    if (bad || !ev) {
        ks_trace_close(&tr);
        return bad ? ks_fail(KS_EFORMAT, "%s: not a trace of puzzle %s", trace_path, s->name)
                   : ks_fail(KS_ENOMEM, "out of memory judging %s", trace_path);
    }
    memcpy(ev, tr.events, tr.nevents * sizeof *ev);
    if ((rc = barrier_lines(&tr, ev))) {
        free(ev);
        ks_trace_close(&tr);
        return ks_fail(rc, "out of memory judging %s", trace_path);
    }
    ks_trace fixed = tr;
    fixed.events = ev;
    check_accesses(s, src, &fixed, vw, v);
    check_output(s, src, &fixed, vw, v);
    check_reads(s, src, &fixed, vw, v);
    check_stops(s, src, &fixed, v);
    if (s->shared) {
        /* a shared access outside its array is the bounds rule's finding, not a slot's:
         * the shared rules see the others only */
        ks_trace inside = fixed;
        uint64_t k = 0;
        for (uint64_t i = 0; i < tr.nevents; ++i) {
            const ks_event *e = &ev[i];
            const int out_of_array = is_access(e) && (e->flags & KS_FLAG_SHARED) &&
                                     (e->tensor >= tr.ntensors || e->u.access.offset < 0 ||
                                      e->u.access.offset >= ks_tensor_numel(&tr.tensors[e->tensor]));
            if (!out_of_array) ev[k++] = *e; /* in place: the rules above are done with ev */
        }
        inside.nevents = k;
        pz_judge_shared(s, src, &inside, v);
        fixed.nevents = k;
    }
    check_invariants(&fixed, v);
    v->passed = 1;
    v->item = -1;
    for (int i = 0; i < v->nrules; ++i)
        if (!v->rules[i].ok) {
            if (v->passed) v->item = v->rules[i].item;
            if (v->item < 0) v->item = v->rules[i].item;
            v->passed = 0;
        }
    free(ev);
    ks_trace_close(&tr);
    return KS_OK;
}
