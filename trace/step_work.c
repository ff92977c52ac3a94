/* step_work.c - a work item's decomposition worked out (see step_work.h). */
#include "step_work.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "formula.h"
#include "step.h"

#define MAX_VARS 8

/* What a formula's names stand for: the work event's fields, the givens worked out so
 * far (name -> printed value), and, with a trace, its parameters. */
typedef struct names {
    const ks_trace *tr; /* NULL: fields only */
    const ks_site *site;
    const ks_event *e;
    int nvars;
    char var[MAX_VARS][24];
    char val[MAX_VARS][40];
} names;

/* A number of the params JSON: key, or item `at` of the array key (at >= 0). */
static int param_at(const char *json, const char *key, int at, double *v)
{
    cJSON *root = cJSON_Parse(json);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, key);
    if (at >= 0) p = cJSON_IsArray(p) ? cJSON_GetArrayItem(p, at) : NULL;
    int found = 1;
    if (cJSON_IsNumber(p)) *v = p->valuedouble;
    else if (cJSON_IsBool(p)) *v = cJSON_IsTrue(p);
    else found = 0;
    cJSON_Delete(root);
    return found;
}

int ks_trace_param_number(const ks_trace *tr, const char *name, size_t len, double *v)
{
    char key[64];
    int at = -1;
    if (len == 0 || len >= sizeof key) return 0;
    if (!ks_op_alias(ks_op_find(tr->op), name, len, key, sizeof key, &at)) /* PH: output_size[0] */
        snprintf(key, sizeof key, "%.*s", (int)len, name);
    return param_at(tr->params, key, at, v);
}

/* The printed value of `name` (len characters), or 0 when it names nothing known. */
static int lookup(const names *x, const char *name, size_t len, char *out, size_t n)
{
    if (len == 5 && !strncmp(name, "index", 5)) return snprintf(out, n, "%lld", (long long)x->e->index), 1;
    for (int f = 0; f < x->site->nfields && f < KS_WORK_FIELDS; ++f)
        if (strlen(x->site->fields[f].name) == len && !strncmp(name, x->site->fields[f].name, len))
            return snprintf(out, n, "%lld", (long long)x->e->u.field[f]), 1;
    for (int i = 0; i < x->nvars; ++i)
        if (strlen(x->var[i]) == len && !strncmp(name, x->var[i], len)) return snprintf(out, n, "%s", x->val[i]), 1;
    double v;
    if (x->tr && ks_trace_param_number(x->tr, name, len, &v)) return ks_format_real(out, n, v), 1;
    return 0;
}

/* expr with every name it knows replaced by its value; a hex literal stays as written */
static void substitute(const names *x, const char *expr, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const char *p = expr; *p && used + 1 < n;) {
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            const char *q = p + 2;
            while (isxdigit((unsigned char)*q)) ++q;
            used += (size_t)snprintf(buf + used, n - used, "%.*s", (int)(q - p), p);
            p = q;
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *q = p;
            while (isalnum((unsigned char)*q) || *q == '_') ++q;
            char val[48];
            const char *close = *q == '[' ? strchr(q, ']') : NULL;
            if (close && lookup(x, p, (size_t)(close + 1 - p), val, sizeof val)) { /* a given such as keys[r] */
                used += (size_t)snprintf(buf + used, n - used, "%s", val);
                p = close + 1;
                continue;
            }
            if (*q != '(' && lookup(x, p, (size_t)(q - p), val, sizeof val)) /* not a function */
                used += (size_t)snprintf(buf + used, n - used, "%s", val);
            else used += (size_t)snprintf(buf + used, n - used, "%.*s", (int)(q - p), p);
            p = q;
        } else {
            buf[used++] = *p++;
            buf[used] = '\0';
        }
    }
    if (used >= n) buf[n - 1] = '\0';
}

void ks_expr_substitute(const ks_site *s, const ks_event *e, const char *expr, char *buf, size_t n)
{
    const names x = {.site = s, .e = e};
    substitute(&x, expr, buf, n);
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

/* substitute, and for `c ? a : b` the condition and only the branch taken */
static void worked(const names *x, const char *expr, char *buf, size_t n)
{
    size_t q, c;
    int64_t truth;
    char cond[KS_EXPR_LEN], branch[KS_EXPR_LEN], cond_sub[160], branch_sub[160];
    if (!split_conditional(expr, &q, &c)) {
        substitute(x, expr, buf, n);
        return;
    }
    trim_copy(cond, sizeof cond, expr, q);
    if (ks_formula_eval(cond, x->site, x->e, &truth) != KS_OK) {
        substitute(x, expr, buf, n);
        return;
    }
    if (truth) trim_copy(branch, sizeof branch, expr + q + 1, c - q - 1);
    else trim_copy(branch, sizeof branch, expr + c + 1, strlen(expr + c + 1));
    substitute(x, cond, cond_sub, sizeof cond_sub);
    substitute(x, branch, branch_sub, sizeof branch_sub);
    snprintf(buf, n, "%s%s, so %s", cond_sub, truth ? "" : " is false", branch_sub);
}

void ks_expr_worked(const ks_site *s, const ks_event *e, const char *expr, char *buf, size_t n)
{
    const names x = {.site = s, .e = e};
    worked(&x, expr, buf, n);
}

/* ---- givens: inputs that are not fields ---------------------------------------------- */

typedef struct givens {
    int n;
    char before[KS_WORK_LINES][24]; /* the field they are printed before */
    ks_work_line line[KS_WORK_LINES];
    float exact[KS_WORK_LINES]; /* each line's value, for the formulas that name it */
} givens;

static void add_given(givens *g, names *x, const char *before, const char *name, const char *expr, const char *work,
                      double v)
{
    if (g->n >= KS_WORK_LINES) return;
    ks_work_line *l = &g->line[g->n];
    g->exact[g->n] = (float)v;
    snprintf(g->before[g->n++], sizeof g->before[0], "%s", before);
    snprintf(l->name, sizeof l->name, "%s", name);
    snprintf(l->expr, sizeof l->expr, "%s", expr);
    snprintf(l->worked, sizeof l->worked, "%s", work);
    ks_format_real(l->value, sizeof l->value, v);
    l->note[0] = '\0'; /* worked out here, from the stored tensors: it holds */
    l->wrong = 0;
    if (x->nvars < MAX_VARS) {
        snprintf(x->var[x->nvars], sizeof x->var[0], "%s", name);
        snprintf(x->val[x->nvars++], sizeof x->val[0], "%s", l->value);
    }
}

/* ---- the descriptor's explain hook (registry.h): its readers of the trace ---- */

typedef struct explain_state {
    const ks_trace *tr;
    names *x;
    givens *g;
} explain_state;

static int explain_param(const ks_explain *ex, const char *name, int at, double *v)
{
    const explain_state *s = ex->state;
    if (at < 0) return ks_trace_param_number(s->tr, name, strlen(name), v);
    return param_at(s->tr->params, name, at, v);
}

static int explain_f32(const ks_explain *ex, const char *tensor, int64_t i, float *v)
{
    const ks_trace *tr = ((const explain_state *)ex->state)->tr;
    const int t = ks_trace_tensor(tr, tensor);
    if (t < 0 || tr->tensors[t].dtype != KS_F32 || !tr->tensors[t].data || i < 0 ||
        i >= ks_tensor_numel(&tr->tensors[t]))
        return 0;
    *v = ((const float *)tr->tensors[t].data)[i];
    return 1;
}

static int explain_shape(const ks_explain *ex, const char *tensor, int64_t *shape)
{
    const ks_trace *tr = ((const explain_state *)ex->state)->tr;
    const int t = ks_trace_tensor(tr, tensor);
    if (t < 0) return -1;
    for (int d = 0; d < tr->tensors[t].ndim && d < KS_MAX_DIMS; ++d) shape[d] = tr->tensors[t].shape[d];
    return tr->tensors[t].ndim;
}

static void explain_give(ks_explain *ex, const char *before, const char *name, const char *expr, const char *work,
                         double v)
{
    const explain_state *s = ex->state;
    add_given(s->g, s->x, before, name, expr, work, v);
}

static void explain_show(ks_explain *ex, const char *name, const char *text)
{
    names *x = ((const explain_state *)ex->state)->x;
    if (x->nvars >= MAX_VARS) return;
    snprintf(x->var[x->nvars], sizeof x->var[0], "%s", name);
    snprintf(x->val[x->nvars++], sizeof x->val[0], "%s", text);
}

/* the givens of the trace's operator, from its descriptor's explain hook (none for a trace
 * of no operator in the table) */
static void find_givens(const ks_trace *tr, const ks_event *e, names *x, givens *g)
{
    const ks_op *op = ks_op_find(tr->op);
    if (!op || !op->explain) return;
    explain_state st = {.tr = tr, .x = x, .g = g};
    ks_explain ex = {.site = x->site,
                     .field = e->u.field,
                     .param = explain_param,
                     .f32 = explain_f32,
                     .shape = explain_shape,
                     .give = explain_give,
                     .show = explain_show,
                     .real = ks_format_real,
                     .state = &st};
    op->explain(&ex);
}

/* Is the recorded field what its line says? A digit is recomputed from the index, an
 * integer formula from the fields, the index and the parameters (as check does); the
 * value shown is always the recorded one, so a line that does not hold, or that kscope
 * cannot recompute, says so instead of printing a false or unchecked equation. */
static void field_note(const ks_formula_params *params, const ks_site *s, const ks_event *e, int f, ks_work_line *l)
{
    char *note = l->note;
    const size_t n = sizeof l->note;
    l->wrong = 0;
    const ks_field *d = &s->fields[f];
    const int32_t rec = e->u.field[f];
    note[0] = '\0';
    if (d->digit) {
        int64_t want = e->index / d->stride;
        if (d->extent > 0) want %= d->extent;
        want += d->bias;
        if (want != rec) snprintf(note, n, "recorded %d, but the index gives %lld", rec, (long long)want), l->wrong = 1;
        return;
    }
    ks_formula_value got;
    const int rc = ks_formula_eval_value(d->expr, s, e, params, &got);
    char g[40];
    if (got.is_float) ks_format_real(g, sizeof g, got.f);
    else snprintf(g, sizeof g, "%lld", (long long)got.i);
    if (rc == KS_OK && (got.is_float ? (double)got.f != (double)rec : got.i != rec))
        snprintf(note, n, "recorded %d, but the formula gives %s", rec, g), l->wrong = 1;
    else if (rc == KS_ECHECK) snprintf(note, n, "recorded %d; the formula overflows", rec), l->wrong = 1;
    else if (rc != KS_OK) snprintf(note, n, "recorded: the formula names a tensor, not recomputed");
}

int ks_step_work_lines(const ks_trace *tr, const ks_event *e, ks_work_line *out, int max)
{
    givens g;
    names x = {.tr = tr, .site = &tr->sites[e->site], .e = e};
    g.n = 0;
    find_givens(tr, e, &x, &g);
    int n = 0;
    ks_formula_params params;
    const ks_op *op = ks_op_find(tr->op);
    ks_formula_params_from(tr->params, op ? op->aliases : NULL, &params);
    for (int k = 0; k < g.n; ++k) /* the values worked out from the tensors, exactly as floats */
        ks_formula_params_add(&params, g.line[k].name, g.exact[k]);
    for (int f = 0; f < x.site->nfields && f < KS_WORK_FIELDS; ++f) {
        const ks_field *d = &x.site->fields[f];
        for (int k = 0; k < g.n; ++k)
            if (!strcmp(g.before[k], d->name) && n < max) out[n++] = g.line[k];
        if (n >= max) break;
        ks_work_line *l = &out[n++];
        snprintf(l->name, sizeof l->name, "%s", d->name);
        snprintf(l->expr, sizeof l->expr, "%s", d->expr);
        worked(&x, d->expr, l->worked, sizeof l->worked);
        snprintf(l->value, sizeof l->value, "%lld", (long long)e->u.field[f]);
        field_note(&params, x.site, e, f, l);
    }
    for (int k = 0; k < n; ++k) /* "r = index = 3 = 3": say it once */
        if (!strcmp(out[k].worked, out[k].expr) || !strcmp(out[k].worked, out[k].value)) out[k].worked[0] = '\0';
    return n;
}
