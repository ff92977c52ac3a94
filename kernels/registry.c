/* registry.c - the operator table, parameters and the helpers prepare steps use.
 * The run itself (execute, device moves, trace sizing, params JSON) is in run.c. */
#include "registry.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ks_error.h"
#include "core/ks_parse.h"
#include "ops.h"

#define KS_OP(name) &ks_op_##name,
static const ks_op *const table[] = {
#include "ops.def"
};
#undef KS_OP

int ks_op_count(void) { return KS_COUNT(table); }

const ks_op *ks_op_at(int i) { return i >= 0 && i < ks_op_count() ? table[i] : NULL; }

const ks_op *ks_op_find(const char *name)
{
    for (int i = 0; i < ks_op_count(); ++i)
        if (!strcmp(table[i]->name, name)) return table[i];
    return NULL;
}

int ks_op_param(const ks_op *op, const char *name)
{
    for (int i = 0; i < op->nparams; ++i)
        if (!strcmp(op->params[i].name, name)) return i;
    return -1;
}

int ks_op_tensor(const ks_op *op, const char *name)
{
    for (int i = 0; i < op->ntensors; ++i)
        if (!strcmp(op->tensors[i].name, name)) return i;
    return -1;
}

int ks_site_field(const ks_site *s, const char *name)
{
    for (int f = 0; f < s->nfields && f < KS_WORK_FIELDS; ++f)
        if (!strcmp(s->fields[f].name, name)) return f;
    return -1;
}

int ks_op_alias(const ks_op *op, const char *name, size_t len, char *key, size_t n, int *at)
{
    for (const char *a = op ? op->aliases : NULL; a && *a;) {
        const size_t m = strcspn(a, " "), eq = strcspn(a, "=");
        if (eq < m && eq == len && !strncmp(a, name, len)) {
            const size_t kl = strcspn(a + eq + 1, " [");
            snprintf(key, n, "%.*s", (int)kl, a + eq + 1);
            *at = a[eq + 1 + kl] == '[' ? atoi(a + eq + 2 + kl) : -1;
            return 1;
        }
        a += m + (a[m] == ' ');
    }
    return 0;
}

int ks_param_choice(const ks_param_spec *s, const char *word)
{
    const char *c = s->choices;
    size_t n = strlen(word);
    for (int k = 0; c && *c; ++k) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, word, n)) return k;
        if (!bar) break;
        c = bar + 1;
    }
    return -1;
}

void ks_run_init(ks_run *r, const ks_op *op)
{
    memset(r, 0, sizeof *r);
    r->op = op;
    r->trace_kernel = -1;
    for (int i = 0; i < op->nparams; ++i) {
        r->value[i][0] = op->params[i].def[0];
        r->value[i][1] = op->params[i].axes >= 2 ? op->params[i].def[1] : op->params[i].def[0];
        r->value[i][2] = op->params[i].axes == 3 ? op->params[i].def[2] : r->value[i][1];
        r->fvalue[i][0] = op->params[i].fdef[0];
        r->fvalue[i][1] = op->params[i].axes == 2 ? op->params[i].fdef[1] : op->params[i].fdef[0];
    }
    for (int i = 0; i < op->ntensors; ++i) snprintf(r->tensor[i].name, KS_NAME_LEN, "%s", op->tensors[i].name);
}

void ks_run_free(ks_run *r)
{
    for (int i = 0; i < KS_OP_TENSORS; ++i) ks_tensor_free(&r->tensor[i]);
    free(r->schedule_data);
    r->schedule_data = NULL, r->schedule_blocks = 0;
}

/* An integer parameter's value against its smallest and the kernels' largest (every size
 * a kernel takes is below 2^31: ks_check_sizes), named by its flag. */
static int int_in_range(const char *name, const ks_param_spec *s, int64_t v)
{
    if (v < s->min) return ks_fail(KS_EINVAL, "--%s must be >= %lld (got %lld)", name, (long long)s->min, (long long)v);
    if (v > INT32_MAX) return ks_fail(KS_EINVAL, "--%s must be <= %d (got %lld)", name, INT32_MAX, (long long)v);
    return KS_OK;
}

/* --trace-kernel WORD: "auto" (the mode's default) or a kernel row that records */
static int set_trace_kernel(ks_run *r, const char *text)
{
    const ks_op *op = r->op;
    int k = strcmp(text, "auto") ? ks_kernel_find(op->kernels, op->nkernels, text) : -1;
    if (k >= 0 && (op->kernels[k].plain_only || op->kernels[k].no_trace)) k = -2;
    if (k == -1 && !strcmp(text, "auto")) {
        r->trace_kernel = -1;
        return KS_OK;
    }
    if (k >= 0) {
        r->trace_kernel = k;
        return KS_OK;
    }
    char words[256] = "auto";
    size_t n = strlen(words);
    for (int i = 0; i < op->nkernels && n < sizeof words; ++i)
        if (!op->kernels[i].plain_only && !op->kernels[i].no_trace)
            n += (size_t)snprintf(words + n, sizeof words - n, "|%s", op->kernels[i].name);
    return ks_fail(KS_EINVAL, "--trace-kernel must be one of %s (got '%s')", words, text);
}

int ks_run_set(ks_run *r, const char *name, const char *text)
{
    int rc;
    const int p = ks_op_param(r->op, name);
    if (p < 0 && r->op->nkernels && !strcmp(name, "trace-kernel")) return set_trace_kernel(r, text);
    if (p < 0) return ks_fail(KS_ENOENT, "%s has no parameter '%s' (kscope list %s)", r->op->name, name, r->op->name);
    const ks_param_spec *s = &r->op->params[p];
    const int axes = s->axes == 2 ? 2 : 1;
    switch (s->kind) {
    case KS_PARAM_SWITCH:
        if (strcmp(text, "on") && strcmp(text, "off"))
            return ks_fail(KS_EINVAL, "--%s takes on or off (got '%s')", name, text);
        r->value[p][0] = r->value[p][1] = !strcmp(text, "on");
        break;
    case KS_PARAM_CHOICE: {
        const int k = ks_param_choice(s, text);
        if (k < 0) return ks_fail(KS_EINVAL, "--%s must be one of %s (got '%s')", name, s->choices, text);
        r->value[p][0] = r->value[p][1] = k;
        break;
    }
    case KS_PARAM_FLOAT:
        if (ks_parse_doubles(text, axes, r->fvalue[p]))
            return ks_fail(KS_EINVAL, "--%s: '%s' is not %s", name, text,
                           axes == 2 ? "a number or two (A,B)" : "a number");
        break;
    default: {
        int64_t v[KS_PARAM_AXES];
        int count = 1;
        if (s->axes == 3) {
            if (ks_parse_list(text, 3, v, &count))
                return ks_fail(KS_EINVAL, "--%s: '%s' is not N, H,W or D,H,W", name, text);
            for (int a = 0; a < count; ++a)
                if ((rc = int_in_range(name, s, v[a]))) return rc;
            memcpy(r->value[p], v, sizeof v);
            r->nvalues[p] = count;
            break;
        }
        if (ks_parse_values(text, axes, v))
            return ks_fail(KS_EINVAL, "--%s: '%s' is not %s", name, text, axes == 2 ? "N or H,W" : "an integer");
        for (int a = 0; a < axes; ++a)
            if ((rc = int_in_range(name, s, v[a]))) return rc;
        r->value[p][0] = v[0], r->value[p][1] = v[1], r->value[p][2] = v[1];
    }
    }
    r->set[p] = 1;
    return KS_OK;
}

int64_t ks_run_int(const ks_run *r, int p, int axis) { return r->value[p][axis]; }

double ks_run_float(const ks_run *r, int p, int axis) { return r->fvalue[p][axis]; }

int ks_run_take(ks_run *r, int t, int ndim, const ks_dim_bind *b, int n)
{
    const ks_tensor *x = &r->tensor[t];
    char got[96];
    if (!x->data) return KS_OK;
    if (x->ndim != ndim)
        return ks_fail(KS_EINVAL, "%s must have shape %s (%d dimensions); got %s", x->name, r->op->tensors[t].shape,
                       ndim, ks_shape_str(x->ndim, x->shape, got, sizeof got));
    int rc = KS_OK;
    for (int k = 0; k < n && !rc; ++k) rc = ks_run_bind(r, t, b[k].param, b[k].axis, x->shape[b[k].dim]);
    return rc;
}

int ks_run_take_nchw(ks_run *r, int t, int p_batch, int p_channels, int p_hw)
{
    const ks_dim_bind dims[] = {{.dim = 0, .param = p_batch, .axis = 0},
                                {.dim = 1, .param = p_channels, .axis = 0},
                                {.dim = 2, .param = p_hw, .axis = 0},
                                {.dim = 3, .param = p_hw, .axis = 1}};
    return ks_run_take(r, t, 4, dims, KS_COUNT(dims));
}

int ks_run_bind(ks_run *r, int t, int p, int axis, int64_t size)
{
    if (r->set[p] && r->value[p][axis] != size)
        return ks_fail(KS_EINVAL, "--%s %lld disagrees with the %s tensor given (%lld)", r->op->params[p].name,
                       (long long)r->value[p][axis], r->tensor[t].name, (long long)size);
    r->value[p][axis] = size;
    if (r->op->params[p].axes < 2) r->value[p][1] = r->value[p][2] = size;
    return KS_OK;
}

void ks_run_shape(ks_run *r, int t, int ndim, const int64_t *shape)
{
    ks_tensor *x = &r->tensor[t];
    r->absent[t] = 0;
    if (x->data) { /* given: ks_run_execute compares; remember what was expected */
        r->expect_ndim[t] = ndim;
        memcpy(r->expect[t], shape, (size_t)ndim * sizeof *shape);
        return;
    }
    x->dtype = (ks_dtype)r->op->tensors[t].dtype;
    x->ndim = ndim;
    memset(x->shape, 0, sizeof x->shape);
    memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
    r->expect_ndim[t] = ndim;
    memcpy(r->expect[t], shape, (size_t)ndim * sizeof *shape);
}

void ks_run_shape4(ks_run *r, int t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t s[4] = {a, b, c, d};
    ks_run_shape(r, t, ndim, s);
}

void ks_run_absent(ks_run *r, int t)
{
    r->absent[t] = 1;
    r->expect_ndim[t] = 0;
}

void ks_run_fact(ks_run *r, const char *key, const char *fmt, ...)
{
    int i = 0;
    while (i < r->nfacts && strcmp(r->fact_key[i], key)) ++i;
    if (i == KS_RUN_FACTS) return; /* a descriptor bug; the JSON just lacks it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->fact_json[i], sizeof r->fact_json[i], fmt, ap);
    va_end(ap);
    snprintf(r->fact_key[i], sizeof r->fact_key[i], "%s", key);
    if (i == r->nfacts) r->nfacts++;
}

/* splitmix64: a tiny, well-mixed generator, so patterns are the same everywhere */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

float ks_rand_unit(uint64_t *state) { return (float)((next(state) >> 40) * (1.0 / 16777216.0)); }

int ks_fill_pattern(ks_tensor *t, int pattern, uint64_t seed)
{
    int rc = ks_tensor_alloc(t);
    if (rc) return rc;
    const int64_t n = ks_tensor_numel(t);
    float *d = t->data;
    uint64_t s = seed;
    for (int64_t i = 0; i < n; ++i) {
        if (pattern == KS_PAT_ONES) d[i] = 1.0f;
        else if (pattern == KS_PAT_RANDOM) d[i] = ks_rand_unit(&s) * 2.0f - 1.0f;
        else d[i] = (float)(i + 1); /* 1, 2, 3, ...: value v sits at memory position v - 1 */
    }
    return KS_OK;
}

int ks_op_check(const ks_op *op)
{
    const char *who = op && op->name ? op->name : "an operator";
    if (!op || !op->name || !op->summary || !op->prepare || !op->launch == !op->run || (op->run && !op->kernels))
        return ks_fail(KS_EINVAL, "%s: a descriptor needs a name, a summary, prepare, and launch or kernels and run",
                       who);
    if (op->nparams > KS_MAX_PARAMS || op->ntensors > KS_OP_TENSORS)
        return ks_fail(KS_EINVAL, "%s: more than %d parameters or %d tensors", who, KS_MAX_PARAMS, KS_OP_TENSORS);
    for (int i = 0; i < op->nparams; ++i) {
        const ks_param_spec *s = &op->params[i];
        if (!s->name || !*s->name) return ks_fail(KS_EINVAL, "%s: parameter row %d is missing", who, i);
        if (!s->help || !*s->help) return ks_fail(KS_EINVAL, "%s: --%s has no help", who, s->name);
        if (ks_op_param(op, s->name) != i) return ks_fail(KS_EINVAL, "%s: --%s appears twice", who, s->name);
        if (s->kind < KS_PARAM_INT || s->kind > KS_PARAM_CHOICE || s->axes < 0 || s->axes > KS_PARAM_AXES)
            return ks_fail(KS_EINVAL, "%s: --%s: kind or axes out of range", who, s->name);
        if (s->kind == KS_PARAM_CHOICE && (!s->choices || s->def[0] < 0))
            return ks_fail(KS_EINVAL, "%s: --%s: a choice needs its words", who, s->name);
        if (op->nkernels && !strcmp(s->name, "trace-kernel"))
            return ks_fail(KS_EINVAL, "%s: --trace-kernel is the registry's (its kernel rows' names)", who);
    }
    for (int i = 0; i < op->ntensors; ++i) {
        const ks_tensor_spec *t = &op->tensors[i];
        if (!t->name || !*t->name || !t->shape) return ks_fail(KS_EINVAL, "%s: tensor row %d is missing", who, i);
        if (ks_op_tensor(op, t->name) != i) return ks_fail(KS_EINVAL, "%s: tensor %s appears twice", who, t->name);
    }
    return op->kernels ? ks_kernel_rows_check(who, op->kernels, op->nkernels) : KS_OK;
}

int ks_run_trace_row(ks_run *r, int def) { return r->traced_row = r->trace_kernel >= 0 ? r->trace_kernel : def; }

ks_exec ks_exec_for(const ks_run *r, ks_sink *sink)
{
    ks_exec x = ks_exec_make(r->op->kernels, r->op->nkernels, r->device, &r->launch);
    x.sink = sink, x.trace = r->traced_row, x.twins = r->twins;
    for (int i = 0; i < r->op->ntensors; ++i)
        if (!r->absent[i]) ks_exec_size(&x, ks_tensor_numel(&r->tensor[i]));
    return x;
}

static int is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

static int is_ident(int c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/* field i of site s: a name; a digit's stride; a derived formula's names and numbers */
static int field_check(const ks_op *o, const ks_site *s, const ks_field *f)
{
    const char *op = o->name;
    if (!is_ident_start((unsigned char)f->name[0]))
        return ks_fail(KS_EINVAL, "%s: site %s: field '%s' is not a name", op, s->name, f->name);
    for (const char *c = f->name; *c; ++c)
        if (!is_ident((unsigned char)*c))
            return ks_fail(KS_EINVAL, "%s: site %s: field '%s' is not a name", op, s->name, f->name);
    if (f->digit) {
        if (f->stride < 1 || f->extent < 0)
            return ks_fail(KS_EINVAL, "%s: site %s: field %s: stride %lld, extent %lld", op, s->name, f->name,
                           (long long)f->stride, (long long)f->extent);
        return KS_OK;
    }
    const size_t len = strlen(f->expr);
    if (!len || len >= KS_EXPR_LEN - 1)
        return ks_fail(KS_EINVAL, "%s: site %s: field %s: formula %s", op, s->name, f->name,
                       len ? "cut short" : "empty");
    for (const char *c = f->expr; *c;) {
        if (is_ident_start((unsigned char)*c)) {
            const char *b = c;
            while (is_ident((unsigned char)*c)) ++c;
            const size_t n = (size_t)(c - b);
            /* min, max; floor and (int) of a float field; an op tensor's element, t[i, j] (a
             * load: step describes it, check cannot evaluate it) */
            int known = (n == 3 && (!strncmp(b, "min", 3) || !strncmp(b, "max", 3) || !strncmp(b, "int", 3))) ||
                        (n == 5 && !strncmp(b, "floor", 5)) || (n == 4 && !strncmp(b, "ceil", 4));
            for (int t = 0; t < o->ntensors && !known && *c == '['; ++t)
                known = strlen(o->tensors[t].name) == n && !strncmp(o->tensors[t].name, b, n);
            for (const char *y = o->symbols; y && *y && !known;) { /* the descriptor's own names */
                const size_t m = strcspn(y, " ");
                known = m == n && !strncmp(y, b, n);
                y += m + (y[m] == ' ');
            }
            for (int k = 0; k < s->nfields && !known; ++k)
                known = &s->fields[k] != f && strlen(s->fields[k].name) == n && !strncmp(s->fields[k].name, b, n);
            if (!known)
                return ks_fail(KS_EINVAL, "%s: site %s: field %s: formula '%s' names '%.*s', not a field", op, s->name,
                               f->name, f->expr, (int)n, b);
        } else if (*c >= '0' && *c <= '9') {
            if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X'))
                for (c += 2; strchr("0123456789abcdefABCDEF", *c) && *c;) ++c;
            while (*c >= '0' && *c <= '9') ++c;
            if (*c == '.' || *c == 'e' || *c == 'E' || is_ident_start((unsigned char)*c))
                return ks_fail(KS_EINVAL, "%s: site %s: field %s: formula '%s' has a number that is not an integer", op,
                               s->name, f->name, f->expr);
        } else if (strchr(" +-*/%()<>=!?:,[]&|^", *c)) {
            ++c;
        } else {
            return ks_fail(KS_EINVAL, "%s: site %s: field %s: formula '%s' has '%c'", op, s->name, f->name, f->expr,
                           *c);
        }
    }
    return KS_OK;
}

int ks_op_sites_check(const ks_op *o, const ks_site *sites, int n)
{
    const char *op = o->name;
    if (n < 1 || n > KS_MAX_SITES) return ks_fail(KS_EINVAL, "%s: %d sites", op, n);
    for (int i = 0; i < n; ++i) {
        const ks_site *s = &sites[i];
        if (!s->name[0])
            return ks_fail(KS_EINVAL, "%s: site %d is not filled (sites are the first ids, as many as .sites returns)",
                           op, i);
        if (s->kind < 1 || s->kind >= KS_EV_KINDS)
            return ks_fail(KS_EINVAL, "%s: site %s: kind %d", op, s->name, s->kind);
        if (s->kind == KS_EV_WORK ? s->tensor != -1 : (s->tensor < -1 || s->tensor >= o->ntensors))
            return ks_fail(KS_EINVAL, "%s: site %s: tensor %d", op, s->name, s->tensor);
        if (s->nfields < 0 || s->nfields > (int)KS_COUNT(s->fields))
            return ks_fail(KS_EINVAL, "%s: site %s: %d fields", op, s->name, s->nfields);
        for (int k = 0; k < s->nfields; ++k) {
            int rc = field_check(o, s, &s->fields[k]);
            if (rc) return rc;
        }
    }
    return KS_OK;
}

/* row k's schema on the state prepare left; 0 for a row never traced */
static int row_sites(const ks_op *op, int k, const void *state, ks_site *out)
{
    memset(out, 0, sizeof(ks_site) * KS_MAX_SITES);
    return op->kernels[k].sites ? op->kernels[k].sites(state, out) : 0;
}

int ks_run_sites_check(ks_run *r)
{
    const ks_op *op = r->op;
    if (op->kernels) { /* the traced row's schema (run.c refuses a row that is not traceable) */
        const int k = r->traced_row;
        if (k < 0 || k >= op->nkernels || !op->kernels[k].sites)
            return ks_fail(KS_EINVAL, "%s: prepare chose no kernel row to trace", op->name);
        r->nsites = row_sites(op, k, r->ctx.bytes, r->sites);
    }
    return ks_op_sites_check(op, r->sites, r->nsites);
}

int ks_op_row_sites(const ks_op *op, int k, ks_site *out)
{
    if (k < 0 || k >= op->nkernels) return ks_fail(KS_EINVAL, "%s has no kernel row %d", op->name, k), -1;
    if (!op->kernels[k].sites) return 0;
    ks_run *r = malloc(sizeof *r);
    if (!r) return ks_fail(KS_ENOMEM, "no memory for a run"), -1;
    ks_run_init(r, op);
    int n = op->prepare(r) ? -1 : row_sites(op, k, r->ctx.bytes, out);
    ks_run_free(r);
    free(r);
    return n;
}
