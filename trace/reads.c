/* reads.c - each output element's reads in two traces, compared as multisets (reads.h). */
#include "reads.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "diff.h"
#include "memory.h"

static int by_key(const void *p, const void *q)
{
    const ks_read *x = p, *y = q;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->elem > y->elem) - (x->elem < y->elem);
}

/* A growing array of reads. */
typedef struct {
    ks_read *v;
    uint64_t n, cap;
} reads_buf;

static int push(reads_buf *b, int64_t key, int32_t t, int64_t elem)
{
    if (b->n == b->cap) {
        const uint64_t cap = b->cap ? 2 * b->cap : 1024;
        ks_read *v = realloc(b->v, (size_t)cap * sizeof *v);
        if (!v) return ks_fail(KS_ENOMEM, "out of memory collecting reads");
        b->v = v, b->cap = cap;
    }
    b->v[b->n++] = (ks_read){key, elem, t};
    return KS_OK;
}

/* The compared tensor `tensor` of side s is, or -1. */
static int compared(const ks_reads *r, int s, int tensor)
{
    for (int k = 0; k < r->ntensors; ++k)
        if (r->id[s][k] == tensor) return k;
    return -1;
}

/* Side s's reads, keyed, into r->list[s] (sorted). */
static int collect(ks_reads *r, int s, const ks_trace *tr)
{
    const ks_event **ev;
    if (ks_events_by_item(tr, &ev)) return KS_ENOMEM;
    reads_buf out = {0}, pending = {0}; /* pending: an item's reads not yet written (key unused) */
    int rc = KS_OK;
    for (uint64_t i = 0; i < tr->nevents && rc == KS_OK; ++i) {
        const ks_event *e = ev[i];
        if (i > 0 && ev[i - 1]->index != e->index) r->unattributed[s] += pending.n, pending.n = 0;
        if (e->kind == KS_EV_WRITE && r->by[s] >= 0 && e->tensor == r->by[s]) {
            for (uint64_t k = 0; k < pending.n && rc == KS_OK; ++k)
                rc = push(&out, e->u.access.offset, pending.v[k].t, pending.v[k].elem);
            pending.n = 0;
            continue;
        }
        const int t = compared(r, s, e->tensor);
        if (t < 0) continue;
        reads_buf *to = r->by[s] >= 0 ? &pending : &out;
        if (e->kind == KS_EV_READ && !(e->flags & KS_FLAG_PADDING) && e->u.access.offset >= 0) {
            rc = push(to, e->index, t, e->u.access.offset);
        } else if (e->kind == KS_EV_SAMPLE) {
            for (int c = 0; c < 4 && rc == KS_OK; ++c) {
                const int64_t at = ks_memory_corner(tr, e, c);
                if (at >= 0) rc = push(to, e->index, t, at);
            }
        }
    }
    r->unattributed[s] += pending.n;
    free(pending.v);
    free(ev);
    if (rc) {
        free(out.v);
        return rc;
    }
    if (out.n) qsort(out.v, (size_t)out.n, sizeof *out.v, by_key); /* out.v is NULL when none */
    r->list[s] = out.v, r->n[s] = out.n;
    return KS_OK;
}

static int same_shape(const ks_tensor *x, const ks_tensor *y)
{
    if (x->ndim != y->ndim) return 0;
    for (int k = 0; k < x->ndim; ++k)
        if (x->shape[k] != y->shape[k]) return 0;
    return 1;
}

/* r->names/id from `of`, or every tensor named in both but `by` */
static int choose_tensors(ks_reads *r, const ks_trace *a, const ks_trace *b, const char *by, const char *const *of,
                          int nof)
{
    const ks_trace *tr[2] = {a, b};
    for (int s = 0; s < 2; ++s) {
        r->by[s] = -1;
        if (by && (r->by[s] = ks_trace_tensor(tr[s], by)) < 0)
            return ks_fail(KS_EINVAL, "%s has no tensor '%s' to key the reads by", tr[s]->path, by);
    }
    const int n = nof ? nof : a->ntensors;
    for (int k = 0; k < n; ++k) {
        const char *name = nof ? of[k] : a->tensors[k].name;
        if (by && !strcmp(name, by)) {
            if (nof) return ks_fail(KS_EINVAL, "'%s' is the tensor the reads are keyed by, not one they read", by);
            continue;
        }
        const int ia = ks_trace_tensor(a, name), ib = ks_trace_tensor(b, name);
        if (ia < 0 || ib < 0) {
            if (nof) return ks_fail(KS_EINVAL, "%s has no tensor '%s'", (ia < 0 ? a : b)->path, name);
            continue;
        }
        if (!same_shape(&a->tensors[ia], &b->tensors[ib])) {
            char sa[96], sb[96];
            return ks_fail(KS_EINVAL, "tensor '%s' is %s in %s and %s in %s", name,
                           ks_shape_str(a->tensors[ia].ndim, a->tensors[ia].shape, sa, sizeof sa), a->path,
                           ks_shape_str(b->tensors[ib].ndim, b->tensors[ib].shape, sb, sizeof sb), b->path);
        }
        if (r->ntensors == KS_MAX_TENSORS) break;
        snprintf(r->names[r->ntensors], KS_NAME_LEN, "%s", name);
        r->id[0][r->ntensors] = ia, r->id[1][r->ntensors++] = ib;
    }
    if (!r->ntensors)
        return ks_fail(KS_EINVAL, "%s and %s name no tensor in common%s%s to compare the reads of", a->path, b->path,
                       by ? " besides " : "", by ? by : "");
    if (by && !same_shape(&a->tensors[r->by[0]], &b->tensors[r->by[1]])) {
        char sa[96], sb[96];
        return ks_fail(KS_EINVAL, "tensor '%s' is %s in %s and %s in %s", by,
                       ks_shape_str(a->tensors[r->by[0]].ndim, a->tensors[r->by[0]].shape, sa, sizeof sa), a->path,
                       ks_shape_str(b->tensors[r->by[1]].ndim, b->tensors[r->by[1]].shape, sb, sizeof sb), b->path);
    }
    return KS_OK;
}

/* The run of side s's reads with key `key` starting at *at; *at moved past it. */
static uint64_t run_of(const ks_reads *r, int s, uint64_t *at)
{
    const uint64_t from = *at;
    while (*at < r->n[s] && r->list[s][*at].key == r->list[s][from].key) ++*at;
    return *at - from;
}

int ks_reads_compare(ks_reads *r, const ks_trace *a, const ks_trace *b, const char *by, const char *const *of, int nof)
{
    memset(r, 0, sizeof *r);
    int rc = choose_tensors(r, a, b, by, of, nof);
    if (!rc) rc = collect(r, 0, a);
    if (!rc) rc = collect(r, 1, b);
    if (rc) {
        ks_reads_free(r);
        return rc;
    }
    uint64_t i = 0, j = 0;
    while (i < r->n[0] || j < r->n[1]) {
        const int64_t ka = i < r->n[0] ? r->list[0][i].key : INT64_MAX,
                      kb = j < r->n[1] ? r->list[1][j].key : INT64_MAX;
        const uint64_t i0 = i, j0 = j;
        int same = 0;
        if (ka == kb) {
            const uint64_t na = run_of(r, 0, &i), nb = run_of(r, 1, &j);
            r->keys[0]++, r->keys[1]++, r->compared++;
            same = na == nb;
            for (uint64_t k = 0; same && k < na; ++k)
                same = r->list[0][i0 + k].t == r->list[1][j0 + k].t &&
                       r->list[0][i0 + k].elem == r->list[1][j0 + k].elem;
        } else {
            const int s = ka < kb ? 0 : 1;
            run_of(r, s, s ? &j : &i);
            r->keys[s]++, r->only[s]++;
        }
        if (!same) {
            r->differing++;
            if (r->nfirst < KS_READS_FIRST) r->first[r->nfirst++] = ka < kb ? ka : kb;
        }
    }
    return KS_OK;
}

/* "name[i, j, k]" for element `at` of tensor t of tr */
static void format_elem(char *buf, size_t n, const ks_tensor *t, int64_t at)
{
    int64_t idx[KS_MAX_DIMS];
    for (int d = t->ndim - 1; d >= 0; --d) {
        const int64_t extent = t->shape[d] > 0 ? t->shape[d] : 1;
        idx[d] = d ? at % extent : at;
        at = d ? at / extent : at;
    }
    int len = snprintf(buf, n, "%s[", t->name);
    for (int d = 0; d < t->ndim && len > 0 && (size_t)len < n; ++d)
        len += snprintf(buf + len, n - (size_t)len, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (!t->ndim && len > 0 && (size_t)len < n) len += snprintf(buf + len, n - (size_t)len, "%lld", (long long)at);
    if (len > 0 && (size_t)len < n) snprintf(buf + len, n - (size_t)len, "]");
}

/* [lo, hi) of side s's reads with key `key` (binary search) */
static void key_range(const ks_reads *r, int s, int64_t key, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = 0, h = r->n[s];
    while (l < h) {
        const uint64_t m = l + (h - l) / 2;
        if (r->list[s][m].key < key) l = m + 1;
        else h = m;
    }
    *lo = l;
    while (l < r->n[s] && r->list[s][l].key == key) ++l;
    *hi = l;
}

void ks_reads_print_key(FILE *out, const ks_reads *r, const ks_trace *a, const ks_trace *b, const char *na,
                        const char *nb, int64_t key, int max_elems)
{
    const ks_trace *tr[2] = {a, b};
    const char *name[2] = {na, nb};
    char what[160];
    if (r->by[0] >= 0) format_elem(what, sizeof what, &a->tensors[r->by[0]], key);
    else snprintf(what, sizeof what, "work item %lld", (long long)key);
    uint64_t lo[2], hi[2];
    for (int s = 0; s < 2; ++s) key_range(r, s, key, &lo[s], &hi[s]);
    fprintf(out, "\n%s: %llu reads in %s, %llu in %s\n", what, (unsigned long long)(hi[0] - lo[0]), na,
            (unsigned long long)(hi[1] - lo[1]), nb);
    /* the multisets' difference: walk both sorted runs together */
    for (int s = 0; s < 2; ++s) {
        const int o = 1 - s;
        uint64_t i = lo[s], j = lo[o];
        int shown = 0, more = 0;
        while (i < hi[s]) {
            const ks_read *x = &r->list[s][i];
            uint64_t ci = 0, cj = 0;
            while (i < hi[s] && r->list[s][i].t == x->t && r->list[s][i].elem == x->elem) ++i, ++ci;
            while (j < hi[o] && (r->list[o][j].t < x->t || (r->list[o][j].t == x->t && r->list[o][j].elem < x->elem)))
                ++j;
            while (j < hi[o] && r->list[o][j].t == x->t && r->list[o][j].elem == x->elem) ++j, ++cj;
            if (ci <= cj) continue;
            if (shown == max_elems) {
                more++;
                continue;
            }
            if (!shown++) fprintf(out, "  only in %s (or more often):", name[s]);
            char el[160];
            format_elem(el, sizeof el, &tr[s]->tensors[r->id[s][x->t]], x->elem);
            fprintf(out, " %s", el);
            if (cj) fprintf(out, " x%llu (x%llu in %s)", (unsigned long long)ci, (unsigned long long)cj, name[o]);
            else if (ci > 1) fprintf(out, " x%llu", (unsigned long long)ci);
        }
        if (more) fprintf(out, " ... %d more", more);
        if (shown) fprintf(out, "\n");
    }
}

void ks_reads_free(ks_reads *r)
{
    free(r->list[0]);
    free(r->list[1]);
    r->list[0] = r->list[1] = NULL;
}
