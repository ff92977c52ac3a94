/* diff.c - two traces compared work item by work item (diff.h). */
#include "diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

static int close_to(double x, double y, double tol)
{
    return x == y || (isnan(x) && isnan(y)) || fabs(x - y) <= tol * (1.0 + fabs(x));
}

static int is_cu(const ks_trace *t) { return !strcmp(t->variant, "cuda-c"); }

/* two .cu traces: the same launch, and every buffer of one in the other by name, dtype and
 * shape; their sites (source lines) may differ, as two versions of a file's do */
static int cu_compatible(const ks_trace *a, const ks_trace *b)
{
    char sa[96], sb[96];
    if (a->threads != b->threads || a->blocks != b->blocks)
        return ks_fail(KS_EINVAL, "the traces ran different launches: %lld blocks x %d threads against %lld x %d",
                       (long long)a->blocks, a->threads, (long long)b->blocks, b->threads);
    for (int t = 0; t < a->ntensors; ++t) {
        const ks_tensor *x = &a->tensors[t];
        const int u = ks_trace_tensor(b, x->name);
        if (u < 0) continue; /* a shared array of one version only: its events differ */
        const ks_tensor *y = &b->tensors[u];
        int same = x->dtype == y->dtype && x->ndim == y->ndim;
        for (int k = 0; same && k < x->ndim; ++k) same = x->shape[k] == y->shape[k];
        if (!same)
            return ks_fail(KS_EINVAL, "the traces have different tensors: %s %s %s against %s %s", x->name,
                           ks_dtype_name(x->dtype), ks_shape_str(x->ndim, x->shape, sa, sizeof sa),
                           ks_dtype_name(y->dtype), ks_shape_str(y->ndim, y->shape, sb, sizeof sb));
    }
    return KS_OK;
}

/* a .cu trace's event against the other's: kind, flags, the tensor by name, element and
 * value; its site is a source line, which two versions of a file number apart */
static int cu_same_event(const ks_trace *ta, const ks_event *x, const ks_trace *tb, const ks_event *y, double tol)
{
    if (x->kind != y->kind || x->flags != y->flags || x->index != y->index) return 0;
    switch (x->kind) {
    case KS_EV_WORK: return !memcmp(x->u.field, y->u.field, sizeof x->u.field);
    case KS_EV_READ:
    case KS_EV_WRITE: {
        const int xt = x->tensor < ta->ntensors, yt = y->tensor < tb->ntensors; /* a crafted id: compared as is */
        const int same_tensor = xt && yt ? !strcmp(ta->tensors[x->tensor].name, tb->tensors[y->tensor].name)
                                         : !xt && !yt && x->tensor == y->tensor;
        /* an atomic's value is the memory around it, which other threads' atomics change
         * in any order (and the GPU recorder sees it before the operation): not compared */
        return same_tensor && x->u.access.offset == y->u.access.offset &&
               ((x->flags & KS_FLAG_ATOMIC) ||
                close_to(ks_access_value(&x->u.access, x->flags), ks_access_value(&y->u.access, y->flags), tol));
    }
    case KS_EV_BARRIER: return x->u.barrier.phase == y->u.barrier.phase;
    case KS_EV_WARP:
        return x->u.warp.op == y->u.warp.op && x->u.warp.mask == y->u.warp.mask && x->u.warp.value == y->u.warp.value;
    case KS_EV_FAULT: return x->u.fault.code == y->u.fault.code;
    default: return ks_diff_same_event(x, y, tol);
    }
}

int ks_diff_compatible(const ks_trace *a, const ks_trace *b)
{
    char sa[96], sb[96];
    if (is_cu(a) && is_cu(b)) return cu_compatible(a, b);
    if (a->nsites != b->nsites)
        return ks_fail(KS_EINVAL, "the traces have different schemas: %d sites against %d", a->nsites, b->nsites);
    for (int s = 0; s < a->nsites; ++s) {
        const ks_site *x = &a->sites[s], *y = &b->sites[s];
        if (strcmp(x->name, y->name) || x->kind != y->kind || x->tensor != y->tensor || x->nfields != y->nfields)
            return ks_fail(KS_EINVAL, "the traces have different schemas: site %d is %s (%s) against %s (%s)", s,
                           x->name, ks_event_kind_name(x->kind), y->name, ks_event_kind_name(y->kind));
        for (int f = 0; f < x->nfields; ++f)
            if (strcmp(x->fields[f].name, y->fields[f].name))
                return ks_fail(KS_EINVAL, "the traces have different schemas: %s field %d is %s against %s", x->name, f,
                               x->fields[f].name, y->fields[f].name);
    }
    if (a->ntensors != b->ntensors)
        return ks_fail(KS_EINVAL, "the traces have different tensors: %d against %d", a->ntensors, b->ntensors);
    for (int t = 0; t < a->ntensors; ++t) {
        const ks_tensor *x = &a->tensors[t], *y = &b->tensors[t];
        int same = !strcmp(x->name, y->name) && x->dtype == y->dtype && x->ndim == y->ndim;
        for (int k = 0; same && k < x->ndim; ++k) same = x->shape[k] == y->shape[k];
        if (!same)
            return ks_fail(KS_EINVAL, "the traces have different tensors: %s %s %s against %s %s %s", x->name,
                           ks_dtype_name(x->dtype), ks_shape_str(x->ndim, x->shape, sa, sizeof sa), y->name,
                           ks_dtype_name(y->dtype), ks_shape_str(y->ndim, y->shape, sb, sizeof sb));
    }
    return KS_OK;
}

static int by_index_seq(const void *p, const void *q)
{
    const ks_event *x = *(const ks_event *const *)p, *y = *(const ks_event *const *)q;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}


int ks_diff_same_event(const ks_event *x, const ks_event *y, double tol)
{
    if (x->kind != y->kind || x->site != y->site || x->tensor != y->tensor || x->tap != y->tap ||
        x->flags != y->flags || x->index != y->index)
        return 0;
    switch (x->kind) {
    case KS_EV_WORK: return !memcmp(x->u.field, y->u.field, sizeof x->u.field);
    case KS_EV_SAMPLE: {
        const ks_ev_sample *a = &x->u.sample, *b = &y->u.sample;
        int ok = a->plane == b->plane && close_to(a->y, b->y, tol) && close_to(a->x, b->x, tol) &&
                 close_to(a->value, b->value, tol);
        for (int k = 0; k < 4; ++k) ok = ok && close_to(a->w[k], b->w[k], tol);
        return ok;
    }
    case KS_EV_REGION: {
        const ks_ev_region *a = &x->u.region, *b = &y->u.region;
        return a->plane == b->plane && a->rows == b->rows && a->cols == b->cols && close_to(a->y0, b->y0, tol) &&
               close_to(a->x0, b->x0, tol) && close_to(a->y1, b->y1, tol) && close_to(a->x1, b->x1, tol);
    }
    default: {
        const ks_ev_access *a = &x->u.access, *b = &y->u.access;
        return a->offset == b->offset && a->plane == b->plane && a->y == b->y && a->x == b->x &&
               close_to(ks_access_value(a, x->flags), ks_access_value(b, y->flags), tol);
    }
    }
}

int ks_events_by_item(const ks_trace *tr, const ks_event ***out)
{
    *out = malloc((size_t)(tr->nevents ? tr->nevents : 1) * sizeof **out);
    if (!*out) return ks_fail(KS_ENOMEM, "out of memory sorting the events of %s", tr->path);
    for (uint64_t i = 0; i < tr->nevents; ++i) (*out)[i] = &tr->events[i];
    qsort(*out, (size_t)tr->nevents, sizeof **out, by_index_seq);
    return KS_OK;
}

/* One item of one side starting at position *at: its events, *at moved past them. */
static ks_diff_item take(const ks_event **ev, uint64_t n, uint64_t *at)
{
    ks_diff_item it = {ev + *at, 0};
    const int64_t index = ev[*at]->index;
    while (*at < n && ev[*at]->index == index) ++*at, ++it.n;
    return it;
}

static void note_first(ks_diff *d, int64_t index, uint64_t at)
{
    if (d->nfirst == KS_DIFF_FIRST) return;
    d->first[d->nfirst] = index;
    d->first_event[d->nfirst++] = at;
}

/* --access-sets: within an item, events in a canonical order both traces share (the
 * trace is needed for tensor names: a static, as qsort takes no context) */
static const ks_trace *g_set_trace;
static int g_set_cu; /* both traces are .cu traces: sites are compared by line, not id */

static int by_value(double vx, double vy)
{
    if (isnan(vx) || isnan(vy)) return isnan(vx) - isnan(vy); /* NaN last, all NaNs alike */
    return (vx > vy) - (vx < vy);
}

static int by_content(const void *p, const void *q)
{
    const ks_event *x = *(const ks_event *const *)p, *y = *(const ks_event *const *)q;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (!g_set_cu) { /* the operators' traces compare site and tap too: order by them first */
        if (x->site != y->site) return x->site < y->site ? -1 : 1;
        if (x->tap != y->tap) return x->tap < y->tap ? -1 : 1;
    }
    if (x->kind != KS_EV_READ && x->kind != KS_EV_WRITE) return memcmp(&x->u, &y->u, sizeof x->u);
    const ks_trace *t = g_set_trace;
    const char *nx = x->tensor < t->ntensors ? t->tensors[x->tensor].name : "",
               *ny = y->tensor < t->ntensors ? t->tensors[y->tensor].name : "";
    const int c = strcmp(nx, ny);
    if (c) return c;
    if (x->u.access.offset != y->u.access.offset) return x->u.access.offset < y->u.access.offset ? -1 : 1;
    if ((x->flags ^ y->flags) & KS_FLAG_ATOMIC) return x->flags & KS_FLAG_ATOMIC ? 1 : -1;
    if (x->flags & KS_FLAG_ATOMIC) return 0;
    return by_value(ks_access_value(&x->u.access, x->flags), ks_access_value(&y->u.access, y->flags));
}

static void sort_items(const ks_trace *tr, const ks_event **ev)
{
    g_set_trace = tr;
    for (uint64_t i = 0; i < tr->nevents;) {
        uint64_t j = i;
        while (j < tr->nevents && ev[j]->index == ev[i]->index) ++j;
        qsort(ev + i, (size_t)(j - i), sizeof *ev, by_content);
        i = j;
    }
}

static int diff_run(ks_diff *d, const ks_trace *a, const ks_trace *b, double tol, int sets);

int ks_diff_run(ks_diff *d, const ks_trace *a, const ks_trace *b, double tol) { return diff_run(d, a, b, tol, 0); }

int ks_diff_run_sets(ks_diff *d, const ks_trace *a, const ks_trace *b, double tol) { return diff_run(d, a, b, tol, 1); }

static int diff_run(ks_diff *d, const ks_trace *a, const ks_trace *b, double tol, int sets)
{
    memset(d, 0, sizeof *d);
    d->a = a, d->b = b;
    if (ks_events_by_item(a, &d->sorted[0]) || ks_events_by_item(b, &d->sorted[1])) {
        ks_diff_free(d);
        return KS_ENOMEM;
    }
    g_set_cu = is_cu(a) && is_cu(b);
    if (sets) sort_items(a, d->sorted[0]), sort_items(b, d->sorted[1]);
    uint64_t i = 0, j = 0;
    const uint64_t na = a->nevents, nb = b->nevents;
    const int cu = is_cu(a) && is_cu(b);
    while (i < na || j < nb) {
        const int64_t ia = i < na ? d->sorted[0][i]->index : INT64_MAX,
                      ib = j < nb ? d->sorted[1][j]->index : INT64_MAX;
        if (ia != ib) { /* recorded on one side only */
            const int side = ia < ib ? 0 : 1;
            ks_diff_item it = side ? take(d->sorted[1], nb, &j) : take(d->sorted[0], na, &i);
            d->items[side]++, d->only[side]++, d->differing++;
            note_first(d, it.ev[0]->index, 0);
            continue;
        }
        ks_diff_item x = take(d->sorted[0], na, &i), y = take(d->sorted[1], nb, &j);
        d->items[0]++, d->items[1]++, d->compared++;
        uint64_t first = UINT64_MAX;
        for (uint64_t k = 0; k < x.n || k < y.n; ++k) {
            const ks_event *e = k < x.n ? x.ev[k] : y.ev[k];
            const int same = k < x.n && k < y.n &&
                             (cu ? cu_same_event(a, x.ev[k], b, y.ev[k], tol)
                                 : ks_diff_same_event(x.ev[k], y.ev[k], tol));
            if (!cu && e->site < KS_MAX_SITES) { /* .cu sites differ between the two: not per site */
                d->site_events[e->site]++;
                d->site_differing[e->site] += !same;
            }
            if (!same && first == UINT64_MAX) first = k;
        }
        if (first != UINT64_MAX) {
            d->differing++;
            note_first(d, ia, first);
        }
    }
    return KS_OK;
}

ks_diff_item ks_diff_find(const ks_diff *d, int side, int64_t index)
{
    const ks_trace *tr = side ? d->b : d->a;
    const ks_event **ev = d->sorted[side];
    uint64_t lo = 0, hi = tr->nevents;
    while (lo < hi) { /* the first event with this index or a larger one */
        const uint64_t mid = lo + (hi - lo) / 2;
        if (ev[mid]->index < index) lo = mid + 1;
        else hi = mid;
    }
    ks_diff_item it = {ev + lo, 0};
    while (lo + it.n < tr->nevents && ev[lo + it.n]->index == index) it.n++;
    return it;
}

void ks_diff_free(ks_diff *d)
{
    free(d->sorted[0]);
    free(d->sorted[1]);
    d->sorted[0] = d->sorted[1] = NULL;
}
