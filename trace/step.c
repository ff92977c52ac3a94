#include "step.h"

#include "formula.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

void ks_format_element(const ks_trace *tr, int tensor, int64_t plane, int64_t y, int64_t x,
                       char *buf, size_t n)
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
        if (t->ndim >= 2)
            snprintf(buf + used, n - used, "%lld, %lld]", (long long)y, (long long)x);
        else
            snprintf(buf + used, n - used, "%lld]", (long long)x);
    }
}

void ks_expr_substitute(const ks_site *s, const ks_event *e, const char *expr, char *buf,
                        size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const char *p = expr; *p && used + 1 < n;) {
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *q = p;
            while (isalnum((unsigned char)*q) || *q == '_') ++q;
            size_t len = (size_t)(q - p);
            long long value = 0;
            int found = 0;
            if (len == 5 && !strncmp(p, "index", 5)) {
                value = e->index;
                found = 1;
            }
            for (int f = 0; f < s->nfields && !found; ++f)
                if (strlen(s->fields[f].name) == len && !strncmp(p, s->fields[f].name, len)) {
                    value = e->u.field[f];
                    found = 1;
                }
            if (found)
                used += (size_t)snprintf(buf + used, n - used, "%lld", value);
            else
                used += (size_t)snprintf(buf + used, n - used, "%.*s", (int)len, p);
            p = q;
        } else {
            buf[used++] = *p++;
            buf[used] = '\0';
        }
    }
    if (used >= n) buf[n - 1] = '\0';
}

/* The top-level `?` and `:` of expr (outside parentheses), or 0. */
static int split_conditional(const char *expr, size_t *q, size_t *c)
{
    int depth = 0;
    *q = *c = 0;
    for (size_t i = 0; expr[i]; ++i) {
        if (expr[i] == '(') depth++;
        else if (expr[i] == ')') depth--;
        else if (depth == 0 && expr[i] == '?' && !*q) *q = i;
        else if (depth == 0 && expr[i] == ':' && *q && !*c) *c = i;
    }
    return *q && *c;
}

static void trim_copy(char *dst, size_t n, const char *src, size_t len)
{
    while (len && (*src == ' ')) src++, len--;
    while (len && src[len - 1] == ' ') len--;
    snprintf(dst, n, "%.*s", (int)len, src);
}

void ks_expr_worked(const ks_site *s, const ks_event *e, const char *expr, char *buf, size_t n)
{
    size_t q, c;
    int64_t truth;
    char cond[KS_EXPR_LEN], branch[KS_EXPR_LEN], cond_sub[160], branch_sub[160];
    if (!split_conditional(expr, &q, &c)) {
        ks_expr_substitute(s, e, expr, buf, n);
        return;
    }
    trim_copy(cond, sizeof cond, expr, q);
    if (ks_formula_eval(cond, s, e, &truth) != KS_OK) {
        ks_expr_substitute(s, e, expr, buf, n);
        return;
    }
    if (truth) trim_copy(branch, sizeof branch, expr + q + 1, c - q - 1);
    else trim_copy(branch, sizeof branch, expr + c + 1, strlen(expr + c + 1));
    ks_expr_substitute(s, e, cond, cond_sub, sizeof cond_sub);
    ks_expr_substitute(s, e, branch, branch_sub, sizeof branch_sub);
    snprintf(buf, n, "%s%s, so %s", cond_sub, truth ? "" : " is false", branch_sub);
}

static int by_index_seq(const void *a, const void *b)
{
    const ks_event *x = *(const ks_event *const *)a, *y = *(const ks_event *const *)b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void ks_step_print_work(FILE *out, const ks_trace *tr, const ks_event *e)
{
    const ks_site *s = &tr->sites[e->site];
    char sub[256];
    int width = 0;
    for (int f = 0; f < s->nfields; ++f) {
        int len = (int)strlen(s->fields[f].name);
        if (len > width) width = len;
    }
    fprintf(out, "\nwork item index %lld  (block %u, thread %u, iteration %u: %u * %d + %u + %u * %lld)\n",
            (long long)e->index, e->block, e->thread, e->iter, e->block, tr->threads,
            e->thread, e->iter, (long long)tr->blocks * tr->threads);
    for (int f = 0; f < s->nfields; ++f) {
        const ks_field *d = &s->fields[f];
        ks_expr_worked(s, e, d->expr, sub, sizeof sub);
        fprintf(out, "  %-*s = %s = %s = %d\n", width, d->name, d->expr, sub, e->u.field[f]);
    }
}

static void print_access(FILE *out, const ks_trace *tr, const ks_event *e)
{
    char where[160];
    const ks_ev_access *a = &e->u.access;
    ks_format_element(tr, e->tensor, a->plane, a->y, a->x, where, sizeof where);
    if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING)) {
        fprintf(out, "  tap %-3u read  %-28s = 0 (padding: outside the tensor)\n", e->tap, where);
        return;
    }
    fprintf(out, "  tap %-3u %s %-28s = %-12g (offset %lld", e->tap,
            e->kind == KS_EV_READ ? "read " : (e->flags & KS_FLAG_ATOMIC) ? "atomicAdd" : "write",
            where, a->value, (long long)a->offset);
    if (e->flags & KS_FLAG_SHARED) fprintf(out, ", phase %d", a->reserved[0]);
    fprintf(out, ")\n");
}

static void print_barrier(FILE *out, const ks_event *e)
{
    fprintf(out, "  barrier __syncthreads() at line %d: phase %u ends\n", e->u.barrier.line, e->u.barrier.phase);
}

static void print_sample(FILE *out, const ks_trace *tr, const ks_event *e)
{
    const ks_ev_sample *m = &e->u.sample;
    fprintf(out, "  tap %-3u sample %s plane %d at (y %.4f, x %.4f) = %g  weights %.4f %.4f %.4f %.4f  corners valid %c%c%c%c\n",
            e->tap, tr->tensors[e->tensor].name, m->plane, m->y, m->x, m->value, m->w[0],
            m->w[1], m->w[2], m->w[3], e->flags & KS_FLAG_C00 ? 'y' : 'n',
            e->flags & KS_FLAG_C01 ? 'y' : 'n', e->flags & KS_FLAG_C10 ? 'y' : 'n',
            e->flags & KS_FLAG_C11 ? 'y' : 'n');
}

static void print_region(FILE *out, const ks_trace *tr, const ks_event *e)
{
    const ks_ev_region *g = &e->u.region;
    const char *what = tr->sites[e->site].name;
    if (g->rows == 0) {
        fprintf(out, "  region  %s: the point (y %.4f, x %.4f) of %s plane %d\n", what, g->y0, g->x0,
                tr->tensors[e->tensor].name, g->plane);
        return;
    }
    fprintf(out, "  region  %s: %s plane %d, y %.4f..%.4f, x %.4f..%.4f, %u x %u bin%s%s\n", what,
            tr->tensors[e->tensor].name, g->plane, g->y0, g->y1, g->x0, g->x1, g->rows, g->cols,
            g->rows * g->cols == 1 ? "" : "s", e->flags & KS_FLAG_GUIDE ? " (guide)" : "");
}

void ks_step_print_event(FILE *out, const ks_trace *tr, const ks_event *e)
{
    if (e->kind == KS_EV_WORK) ks_step_print_work(out, tr, e);
    else if (e->kind == KS_EV_SAMPLE) print_sample(out, tr, e);
    else if (e->kind == KS_EV_REGION) print_region(out, tr, e);
    else if (e->kind == KS_EV_BARRIER) print_barrier(out, e);
    else print_access(out, tr, e);
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
        if (e->site >= tr->nsites || e->kind != tr->sites[e->site].kind ||
            (e->kind != KS_EV_WORK && e->tensor >= tr->ntensors)) {
            free(sel);
            return -ks_fail_at(tr->path, (long long)(tr->data_start + tr->event_sec.offset + i * sizeof *e),
                               "event %llu does not match the header's sites and tensors (kscope check tells more)",
                               (unsigned long long)i);
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
            ks_fail(KS_EINVAL, "no work item of thread %lld in this trace (launch: %lld blocks x %d threads = %lld threads, %lld work items; filter and dropped events may hide some)",
                    (long long)thread, (long long)tr->blocks, tr->threads,
                    (long long)tr->blocks * tr->threads, (long long)tr->work_items);
        else
            ks_fail(KS_EINVAL, "work item %lld is not in this trace (%lld work items; the filter may have excluded it)",
                    (long long)index, (long long)tr->work_items);
    }
    return items;
}
