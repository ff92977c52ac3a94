/* step_work.c - a work item's decomposition worked out (see step_work.h). */
#include "step_work.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
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

int ks_trace_param_number(const ks_trace *tr, const char *name, size_t len, double *v)
{
    static const struct {
        const char *alias, *key;
        int at;
    } short_names[] = {{"PH", "output_size", 0}, {"PW", "output_size", 1}, {"R", "radius", -1}};
    char key[64];
    int at = -1;
    if (len == 0 || len >= sizeof key) return 0;
    snprintf(key, sizeof key, "%.*s", (int)len, name);
    for (size_t i = 0; i < sizeof short_names / sizeof short_names[0]; ++i)
        if (!strcmp(key, short_names[i].alias)) {
            snprintf(key, sizeof key, "%s", short_names[i].key);
            at = short_names[i].at;
        }
    cJSON *root = cJSON_Parse(tr->params);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, key);
    if (at >= 0) p = cJSON_IsArray(p) ? cJSON_GetArrayItem(p, at) : NULL;
    int found = 1;
    if (cJSON_IsNumber(p)) *v = p->valuedouble;
    else if (cJSON_IsBool(p)) *v = cJSON_IsTrue(p);
    else found = 0;
    cJSON_Delete(root);
    return found;
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

static int field_of(const ks_site *s, const char *name)
{
    for (int f = 0; f < s->nfields && f < KS_WORK_FIELDS; ++f)
        if (!strcmp(s->fields[f].name, name)) return f;
    return -1;
}

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

/* A stored f32 tensor's element (row-major over its shape), or 0 when it is not there. */
static int f32_at(const ks_trace *tr, const char *tensor, int64_t i, float *v)
{
    const int t = ks_trace_tensor(tr, tensor);
    if (t < 0 || tr->tensors[t].dtype != KS_F32 || !tr->tensors[t].data || i < 0 ||
        i >= ks_tensor_numel(&tr->tensors[t]))
        return 0;
    *v = ((const float *)tr->tensors[t].data)[i];
    return 1;
}

/* RoIAlign: the box scaled and shifted, its height and width, the bin size (the kernel's
 * float arithmetic, fmaf included, so the printed values are the ones it used). */
static void roi_givens(const ks_trace *tr, const ks_event *e, names *x, givens *g)
{
    const int fn = field_of(x->site, "n"), fgh = field_of(x->site, "grid_h"), fgw = field_of(x->site, "grid_w");
    double scale, aligned, P[2];
    float roi[5];
    if (fn < 0 || fgh < 0 || fgw < 0 || !ks_trace_param_number(tr, "spatial_scale", 13, &scale) ||
        !ks_trace_param_number(tr, "aligned", 7, &aligned) || !ks_trace_param_number(tr, "PH", 2, &P[0]) ||
        !ks_trace_param_number(tr, "PW", 2, &P[1]))
        return;
    if (!(P[0] >= 1 && P[0] <= 65535 && P[1] >= 1 && P[1] <= 65535)) return; /* a damaged trace's */
    for (int k = 0; k < 5; ++k)
        if (!f32_at(tr, "rois", (int64_t)e->u.field[fn] * 5 + k, &roi[k])) return;
    const float off = aligned ? 0.5f : 0.0f, s = (float)scale;
    const char *axis[2][4] = {{"y1", "y2", "roi_h", "bin_h"}, {"x1", "x2", "roi_w", "bin_w"}};
    char expr[KS_EXPR_LEN], work[192], a[40], b[40], c[40];
    for (int d = 0; d < 2; ++d) {
        const char *before = d ? "grid_w" : "grid_h", *const *nm = axis[d];
        float lo_hi[2];
        for (int k = 0; k < 2; ++k) {
            const int col = 2 - d + 2 * k; /* (b, x1, y1, x2, y2) */
            lo_hi[k] = fmaf(roi[col], s, -off);
            ks_format_real(a, sizeof a, roi[col]);
            ks_format_real(b, sizeof b, s);
            snprintf(expr, sizeof expr, "rois[n, %d] * spatial_scale%s", col, aligned ? " - 0.5" : "");
            snprintf(work, sizeof work, "%s * %s%s", a, b, aligned ? " - 0.5" : "");
            add_given(g, x, before, nm[k], expr, work, lo_hi[k]);
        }
        float size = lo_hi[1] - lo_hi[0];
        ks_format_real(a, sizeof a, lo_hi[1]);
        ks_format_real(b, sizeof b, lo_hi[0]);
        if (aligned) {
            snprintf(expr, sizeof expr, "%s - %s", nm[1], nm[0]);
            snprintf(work, sizeof work, "%s - %s", a, b);
        } else { /* legacy: a malformed RoI is forced to 1x1 */
            snprintf(expr, sizeof expr, "max(%s - %s, 1)", nm[1], nm[0]);
            snprintf(work, sizeof work, "max(%s - %s, 1)", a, b);
            size = fmaxf(size, 1.0f);
        }
        add_given(g, x, before, nm[2], expr, work, size);
        ks_format_real(c, sizeof c, size);
        snprintf(expr, sizeof expr, "%s / %s", nm[2], d ? "PW" : "PH");
        snprintf(work, sizeof work, "%s / %lld", c, (long long)P[d]);
        add_given(g, x, before, nm[3], expr, work, size / (float)P[d]);
    }
}

/* patchify: the point's (x, y) from coords[b, m] (x first, as DPVO stores it). */
static void patch_givens(const ks_trace *tr, const ks_event *e, names *x, givens *g)
{
    const int fb = field_of(x->site, "b"), fm = field_of(x->site, "m");
    const int t = ks_trace_tensor(tr, "coords");
    if (fb < 0 || fm < 0 || t < 0 || field_of(x->site, "i") < 0 || tr->tensors[t].ndim != 3) return;
    const int64_t B = tr->tensors[t].shape[0], M = tr->tensors[t].shape[1], b = e->u.field[fb], m = e->u.field[fm];
    if (b < 0 || b >= B || m < 0 || m >= M) return; /* a damaged trace's fields */
    const int64_t at = (b * M + m) * 2;
    char expr[KS_EXPR_LEN], work[192];
    float v;
    for (int k = 1; k >= 0; --k) { /* y (before i), then x (before j) */
        if (!f32_at(tr, "coords", at + k, &v)) return;
        snprintf(expr, sizeof expr, "coords[b, m, %d]", k);
        snprintf(work, sizeof work, "coords[%lld, %lld, %d]", (long long)b, (long long)m, k);
        add_given(g, x, k ? "i" : "j", k ? "y" : "x", expr, work, v);
    }
}

/* sparse_conv's insert: the site's key, which the later fields decode (regular,
 * transposed: keys[r], the r-th sorted output key) or the hash uses (submanifold: made
 * from the input site). key = ((b*S0 + d0)*S1 + d1)[*S2 + d2]. */
static void key_givens(const ks_trace *tr, const ks_event *e, names *x, givens *g)
{
    const int fh = field_of(x->site, "home");
    if (fh < 1) return;
    uint64_t key = 0; /* unsigned: a damaged trace's fields wrap instead of overflowing */
    char expr[KS_EXPR_LEN] = "", work[192] = "";
    const int subm = strstr(x->site->fields[1].expr, "indices") != NULL;
    cJSON *root = subm ? cJSON_Parse(tr->params) : NULL;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(root, "spatial_shape");
    for (int f = 1; f < fh; ++f) {
        long long below = 1, v = e->u.field[f];
        if (subm) { /* the product of the axes after this one */
            for (int a = f; a < fh - 1; ++a) {
                const cJSON *s = cJSON_GetArrayItem(shape, a - 1);
                const int ok = cJSON_IsNumber(s) && s->valuedouble >= 1 && s->valuedouble <= 65536;
                below = ok && below <= INT32_MAX ? below * (long long)s->valuedouble : 0;
            }
        } else {
            const char *slash = strchr(x->site->fields[f].expr, '/');
            below = slash ? strtoll(slash + 1, NULL, 10) : 0;
        }
        if (below <= 0 || below > INT32_MAX) break;
        key += (uint64_t)v * (uint64_t)below;
        size_t ue = strlen(expr), uw = strlen(work);
        if (below > 1) {
            snprintf(expr + ue, sizeof expr - ue, "%s%s * %lld", f > 1 ? " + " : "", x->site->fields[f].name, below);
            snprintf(work + uw, sizeof work - uw, "%s%lld * %lld", f > 1 ? " + " : "", v, below);
        } else {
            snprintf(expr + ue, sizeof expr - ue, "%s%s", f > 1 ? " + " : "", x->site->fields[f].name);
            snprintf(work + uw, sizeof work - uw, "%s%lld", f > 1 ? " + " : "", v);
        }
    }
    cJSON_Delete(root);
    if (subm) add_given(g, x, "home", "key", expr, work, (double)(int64_t)key);
    else /* the r-th sorted output key: the value the fields below decode */
        add_given(g, x, x->site->fields[1].name, "key", "keys[r]", "", (double)(int64_t)key);
    if (!subm && x->nvars < MAX_VARS) { /* the fields decode keys[r]: show its value there */
        snprintf(x->var[x->nvars], sizeof x->var[0], "keys[r]");
        snprintf(x->val[x->nvars++], sizeof x->val[0], "%lld", (long long)(int64_t)key);
    }
}

static void find_givens(const ks_trace *tr, const ks_event *e, names *x, givens *g)
{
    const char *site = x->site->name;
    if (!strncmp(site, "roi_align", 9)) roi_givens(tr, e, x, g);
    else if (!strncmp(site, "patchify", 8)) patch_givens(tr, e, x, g);
    else if (!strcmp(site, "sparse_conv.insert")) key_givens(tr, e, x, g);
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
    ks_formula_params_from(tr->params, &params);
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
