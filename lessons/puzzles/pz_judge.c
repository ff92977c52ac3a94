/* pz_judge.c - the verdict on a puzzle's trace: the output against the reference, then
 * the access pattern the events show (bounds, read-only inputs, one write per output
 * element, global reads per thread) and kscope check's invariants. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/core/ks_error.h"
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

static pz_view view_of(const ks_trace *tr, const char *name)
{
    pz_view v = {.tensor = ks_trace_tensor(tr, name)};
    if (v.tensor < 0) return v;
    const ks_tensor *t = &tr->tensors[v.tensor];
    v.ndim = t->ndim;
    v.rows = t->ndim == 2 ? t->shape[0] : 1;
    v.cols = t->shape[t->ndim - 1];
    v.data = (const float *)t->data;
    return v;
}

static int outside(const pz_view *v, const ks_ev_access *a)
{
    return a->offset < 0 || a->offset >= v->rows * v->cols || a->y < 0 || a->y >= v->rows || a->x < 0 ||
           a->x >= v->cols;
}

/* "a[4]", "a[1][3]", or "a[7] (flat)" for a 2-D array indexed by one number out of it */
static void element(char *buf, size_t n, const char *name, const pz_view *v, const ks_ev_access *a)
{
    if (v->ndim == 1) snprintf(buf, n, "%s[%lld]", name, (long long)a->offset);
    else if (a->y < 0) snprintf(buf, n, "%s[%lld] (flat)", name, (long long)a->offset);
    else snprintf(buf, n, "%s[%d][%d]", name, a->y, a->x);
}

static void who(char *buf, size_t n, const ks_event *e)
{
    snprintf(buf, n, "thread %u of block %u (work item %lld)", e->thread, e->block, (long long)e->index);
}

pz_rule *pz_rule_add(pz_verdict *v, const char *name)
{
    pz_rule *r = &v->rules[v->nrules++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->ok = 1;
    r->detail[0] = 0;
    r->item = -1;
    return r;
}

static void fail(pz_rule *r, int64_t item)
{
    r->ok = 0;
    r->item = item;
}

static const char *const names[3] = {"a", "b", "out"};

/* Bounds and read-only inputs: the first access outside, the first write of an input. */
static void check_accesses(const ks_trace *tr, const pz_view *vw, pz_verdict *v)
{
    pz_rule *bounds = pz_rule_add(v, "no access outside an array");
    pz_rule *inputs = pz_rule_add(v, "inputs only read");
    char el[64], by[96];
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) continue;
        /* a shared index outside its KS_SHARED array: recorded at offset -1 (ks_shared.h) */
        if (bounds->ok && pz_is_shared(e) && e->u.access.offset < 0) {
            who(by, sizeof by, e);
            snprintf(bounds->detail, sizeof bounds->detail,
                     "%s %s element %d of shared array %d (the KS_SHARED arrays are numbered in first-use order from 0), "
                     "outside it: a shared index is off by one or unguarded",
                     by, e->kind == KS_EV_READ ? "read" : "wrote", e->u.access.x, e->u.access.plane);
            fail(bounds, e->index);
        }
        for (int k = 0; k < 3; ++k) {
            if (vw[k].tensor != e->tensor) continue;
            element(el, sizeof el, names[k], &vw[k], &e->u.access);
            who(by, sizeof by, e);
            if (bounds->ok && outside(&vw[k], &e->u.access)) {
                char shape[64];
                if (vw[k].ndim == 1) snprintf(shape, sizeof shape, "%lld elements", (long long)vw[k].cols);
                else snprintf(shape, sizeof shape, "%lld x %lld", (long long)vw[k].rows, (long long)vw[k].cols);
                snprintf(bounds->detail, sizeof bounds->detail, "%s %s %s, outside %s (%s): a guard is missing or off by one",
                         by, e->kind == KS_EV_READ ? "read" : "wrote", el, names[k], shape);
                fail(bounds, e->index);
            }
            if (inputs->ok && k < 2 && e->kind == KS_EV_WRITE) {
                snprintf(inputs->detail, sizeof inputs->detail, "%s wrote %s: %s is an input", by, el, names[k]);
                fail(inputs, e->index);
            }
        }
    }
}

/* got and want one above the other, a line per row of a matrix */
static void table(char *buf, size_t size, const pz_view *out, const float *want)
{
    size_t len = 0;
    for (int side = 0; side < 2; ++side)
        for (int64_t r = 0; r < out->rows && len + 16 < size; ++r) {
            len += (size_t)snprintf(buf + len, size - len, "%s", r ? "       " : side ? "  want:" : "  got: ");
            for (int64_t c = 0; c < out->cols && len + 16 < size; ++c)
                len += (size_t)snprintf(buf + len, size - len, "%5g", side ? want[r * out->cols + c] : out->data[r * out->cols + c]);
            len += (size_t)snprintf(buf + len, size - len, "\n");
        }
}

/* The output against the reference, and how often each element was written (by whom). */
static void check_output(const pz_spec *s, const ks_trace *tr, const pz_view *vw, pz_verdict *v)
{
    pz_rule *right = pz_rule_add(v, "output matches the reference");
    pz_rule *once = pz_rule_add(v, "each output element written once");
    const int64_t n = vw[2].rows * vw[2].cols;
    float *want = calloc((size_t)n, sizeof *want);
    int64_t *count = calloc((size_t)n, sizeof *count), *last = calloc((size_t)n, sizeof *last);
    if (!want || !count || !last) {
        snprintf(right->detail, sizeof right->detail, "out of memory");
        fail(right, -1);
        free(want), free(count), free(last);
        return;
    }
    s->reference(s, vw[0].data, vw[1].tensor >= 0 ? vw[1].data : NULL, want);
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind == KS_EV_WRITE && e->tensor == vw[2].tensor && !outside(&vw[2], &e->u.access)) {
            const int64_t o = e->u.access.offset;
            if (count[o]++ == 1 && once->ok) {
                snprintf(once->detail, sizeof once->detail,
                         "out element %lld written by work items %lld and %lld (and maybe more): on a GPU these "
                         "writes race; one thread must write it",
                         (long long)o, (long long)last[o], (long long)e->index);
                fail(once, e->index);
            }
            last[o] = e->index;
        }
    }
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < n; ++i) {
        const float g = vw[2].data[i], w = want[i];
        if (!(fabsf(g - w) <= 1e-4f * (1 + fabsf(w)))) wrong += 1, first = first < 0 ? i : first;
    }
    for (int64_t i = 0; i < n && once->ok; ++i)
        if (!count[i]) {
            snprintf(once->detail, sizeof once->detail, "no thread wrote out element %lld%s", (long long)i,
                     wrong ? "" : " through pz_store (a write through ->data is not traced)");
            fail(once, -1);
        }
    if (wrong) {
        char el[64], by[96] = "no thread wrote it";
        const ks_ev_access at = {.offset = first, .y = (int32_t)(first / vw[2].cols), .x = (int32_t)(first % vw[2].cols)};
        element(el, sizeof el, "out", &vw[2], &at);
        if (count[first]) snprintf(by, sizeof by, "written last by work item %lld", (long long)last[first]);
        snprintf(right->detail, sizeof right->detail, "%lld of %lld elements wrong; the first, %s: got %g, want %g (%s)",
                 (long long)wrong, (long long)n, el, vw[2].data[first], want[first], by);
        fail(right, count[first] ? last[first] : -1);
        table(v->table, sizeof v->table, &vw[2], want);
    }
    free(want), free(count), free(last);
}

/* Global reads per work item (= thread): the first over the limit, and what it read. */
static void check_reads(const pz_spec *s, const ks_trace *tr, const pz_view *vw, pz_verdict *v)
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
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != KS_EV_READ || e->index < 0 || e->index >= tr->work_items) continue;
        for (int k = 0; k < 3; ++k)
            if (vw[k].tensor == e->tensor && ++reads[e->index] > s->max_reads && worst < 0) worst = e->index;
    }
    if (worst >= 0) {
        size_t len = (size_t)snprintf(r->detail, sizeof r->detail, "work item %lld reads global memory %lld times (",
                                      (long long)worst, (long long)reads[worst]);
        int shown = 0;
        for (uint64_t i = 0; i < tr->nevents && shown < 6; ++i) {
            const ks_event *e = &tr->events[i];
            if (e->kind != KS_EV_READ || e->index != worst) continue;
            for (int k = 0; k < 3; ++k)
                if (vw[k].tensor == e->tensor) {
                    char el[64];
                    element(el, sizeof el, names[k], &vw[k], &e->u.access);
                    len += (size_t)snprintf(r->detail + len, sizeof r->detail - len, "%s%s", shown++ ? ", " : "", el);
                }
        }
        snprintf(r->detail + len, sizeof r->detail - len, "%s); read each value once%s", shown < reads[worst] ? ", ..." : "",
                 s->shared ? " into shared memory and use it from there" : "");
        fail(r, worst);
    }
    free(reads);
}

/* kscope check on the global accesses: the shared ones and the barriers are the shared
 * rules' (check does not model a per-block memory whose tensor holds no final values) */
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
                 rep.violations == 1 ? "" : "s", rep.first[0][0] ? "the first: " : "kscope check on the trace lists them",
                 rep.first[0]);
        fail(r, -1);
    }
}

int pz_judge(const pz_spec *s, const char *trace_path, pz_verdict *v)
{
    static ks_trace tr;
    memset(v, 0, sizeof *v);
    int rc = ks_trace_open(trace_path, &tr);
    if (rc) return rc;
    const pz_view vw[3] = {view_of(&tr, "a"), view_of(&tr, "b"), view_of(&tr, "out")};
    if (vw[0].tensor < 0 || vw[2].tensor < 0 || (s->b.rows && vw[1].tensor < 0)) {
        ks_trace_close(&tr);
        return ks_fail(KS_EFORMAT, "%s: not a trace of puzzle %s", trace_path, s->name);
    }
    check_accesses(&tr, vw, v);
    check_output(s, &tr, vw, v);
    check_reads(s, &tr, vw, v);
    if (s->shared) pz_judge_shared(&tr, v);
    check_invariants(&tr, v);
    v->passed = 1;
    v->item = -1;
    for (int i = 0; i < v->nrules; ++i)
        if (!v->rules[i].ok) {
            if (v->passed) v->item = v->rules[i].item;
            if (v->item < 0) v->item = v->rules[i].item;
            v->passed = 0;
        }
    ks_trace_close(&tr);
    return KS_OK;
}
