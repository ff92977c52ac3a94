/* formula.c - a small recursive-descent evaluator for derived-field formulas. */
#include "formula.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

/* A value as C types it: an integer (int64, exact, overflow-checked) or a float (f32,
 * each operation rounded as the kernel's float arithmetic rounds it). */
typedef struct val {
    int fl;
    int64_t i;
    float f;
} val;

typedef struct parser {
    const char *p;
    const ks_site *site;
    const ks_event *work;
    const ks_formula_params *params; /* NULL: fields only */
    int status;                      /* KS_OK, KS_ENOENT, KS_EINVAL or KS_ECHECK: the first problem wins */
    int depth;                       /* nesting so far: a crafted formula cannot recurse the stack away */
} parser;

#define KS_FORMULA_DEPTH 64

static val cond(parser *x);

static void fail(parser *x, int status)
{
    if (x->status == KS_OK) x->status = status;
}

static val I(int64_t i) { return (val){0, i, 0.0f}; }
static val F(float f) { return (val){1, 0, f}; }
static float as_f(val v) { return v.fl ? v.f : (float)v.i; }

static int eat(parser *x, const char *tok)
{
    while (isspace((unsigned char)*x->p)) x->p++;
    const size_t n = strlen(tok);
    if (strncmp(x->p, tok, n)) return 0;
    /* "<" must not match the start of "<=" */
    if (n == 1 && strchr("<>=!", tok[0]) && x->p[1] == '=') return 0;
    x->p += n;
    return 1;
}

static int deeper(parser *x)
{
    if (++x->depth <= KS_FORMULA_DEPTH) return 1;
    fail(x, KS_EINVAL);
    return 0;
}

static val variable(parser *x, const char *name, size_t n)
{
    for (int f = 0; f < x->site->nfields && f < KS_WORK_FIELDS; ++f)
        if (strlen(x->site->fields[f].name) == n && !strncmp(x->site->fields[f].name, name, n))
            return I(x->work->u.field[f]);
    if (x->params) {
        if (n == 5 && !strncmp(name, "index", 5)) return I(x->work->index);
        const ks_formula_params *p = x->params;
        for (int i = 0; i < p->n; ++i)
            if (strlen(p->name[i]) == n && !strncmp(p->name[i], name, n))
                return p->is_float[i] ? F(p->fvalue[i]) : I(p->value[i]);
    }
    fail(x, KS_ENOENT);
    return I(0);
}

/* a op b: in int64 when both are integers (KS_ECHECK when C would overflow, INT64_MIN / -1
 * too), else in float as C converts (an integer operand becomes a float) */
static val arith(parser *x, int op, val a, val b)
{
    if (a.fl || b.fl) {
        const float p = as_f(a), q = as_f(b);
        switch (op) {
        case '+': return F(p + q);
        case '-': return F(p - q);
        case '*': return F(p * q);
        case '/': return F(p / q);
        default: fail(x, KS_EINVAL); return I(0); /* % of a float is not C */
        }
    }
    int64_t r = 0;
    int bad = 0;
    switch (op) {
    case '+': bad = __builtin_add_overflow(a.i, b.i, &r); break;
    case '-': bad = __builtin_sub_overflow(a.i, b.i, &r); break;
    case '*': bad = __builtin_mul_overflow(a.i, b.i, &r); break;
    default:
        if (b.i == 0) {
            fail(x, KS_EINVAL);
            return I(0);
        }
        bad = a.i == INT64_MIN && b.i == -1;
        if (!bad) r = op == '/' ? a.i / b.i : a.i % b.i;
    }
    if (bad) fail(x, KS_ECHECK);
    return I(bad ? 0 : r);
}

/* (int) of a float: C's truncation, refused where C's is undefined */
static val to_int(parser *x, val v)
{
    if (!v.fl) return v;
    if (!(v.f > -9.2e18f && v.f < 9.2e18f)) { /* NaN and Inf too */
        fail(x, KS_ECHECK);
        return I(0);
    }
    return I((int64_t)v.f);
}

static val number(parser *x)
{
    const char *start = x->p;
    while (isdigit((unsigned char)*x->p)) x->p++;
    const int fl = *x->p == '.' || *x->p == 'e' || *x->p == 'E';
    if (fl) {
        char *end;
        const float f = strtof(start, &end);
        x->p = end;
        if (*x->p == 'f' || *x->p == 'F') x->p++;
        return F(f);
    }
    val v = I(0); /* a literal past 2^63 - 1 overflows like any step */
    for (const char *c = start; c < x->p && x->status == KS_OK; ++c)
        v = arith(x, '+', arith(x, '*', v, I(10)), I(*c - '0'));
    return v;
}

static val unary(parser *x);

static val primary(parser *x)
{
    while (isspace((unsigned char)*x->p)) x->p++;
    if (eat(x, "(")) {
        if (!deeper(x)) return I(0);
        val v;
        if (eat(x, "int)")) v = to_int(x, unary(x)); /* C casts */
        else if (eat(x, "float)")) v = F(as_f(unary(x)));
        else {
            v = cond(x);
            if (!eat(x, ")")) fail(x, KS_EINVAL);
        }
        x->depth--;
        return v;
    }
    if (isdigit((unsigned char)*x->p) || (*x->p == '.' && isdigit((unsigned char)x->p[1]))) return number(x);
    const char *name = x->p;
    while (isalnum((unsigned char)*x->p) || *x->p == '_') x->p++;
    const size_t n = (size_t)(x->p - name);
    if (n == 0) {
        fail(x, KS_EINVAL);
        return I(0);
    }
    if (!eat(x, "(")) return variable(x, name, n);
    if (!deeper(x)) return I(0);
    static const char *const fns[] = {"min", "max", "floor", "ceil", "floorf", "ceilf", "fminf", "fmaxf"};
    int fn = -1;
    for (int k = 0; k < 8; ++k)
        if (strlen(fns[k]) == n && !strncmp(name, fns[k], n)) fn = k;
    if (fn < 0) fail(x, KS_ENOENT); /* a function it does not know */
    const val a = cond(x);
    val r = a;
    if (fn == 0 || fn == 1 || fn >= 6) {
        const val b = eat(x, ",") ? cond(x) : (fail(x, KS_EINVAL), I(0));
        const int lo = fn == 0 || fn == 6;
        if (a.fl || b.fl || fn >= 6) r = F(lo ? fminf(as_f(a), as_f(b)) : fmaxf(as_f(a), as_f(b)));
        else r = lo ? (a.i < b.i ? a : b) : (a.i > b.i ? a : b);
    } else if (fn >= 2) {
        r = F(fn == 2 || fn == 4 ? floorf(as_f(a)) : ceilf(as_f(a)));
    }
    if (!eat(x, ")")) fail(x, KS_EINVAL);
    x->depth--;
    return r;
}

static val unary(parser *x)
{
    if (eat(x, "-")) {
        if (!deeper(x)) return I(0); /* "- - - - ...": as deep as parentheses */
        const val v = unary(x);
        x->depth--;
        return v.fl ? F(-v.f) : arith(x, '-', I(0), v);
    }
    return primary(x);
}

static val product(parser *x)
{
    val v = unary(x);
    for (;;) {
        const int op = eat(x, "*") ? '*' : eat(x, "/") ? '/' : eat(x, "%") ? '%' : 0;
        if (!op) return v;
        const val r = unary(x);
        v = arith(x, op, v, r);
        if (x->status != KS_OK) return I(0);
    }
}

static val sum(parser *x)
{
    val v = product(x);
    for (;;) {
        if (eat(x, "+")) v = arith(x, '+', v, product(x));
        else if (eat(x, "-")) v = arith(x, '-', v, product(x));
        else return v;
    }
}

/* a comparison is an int, 1 or 0; mixed operands compare as floats */
static val compare(parser *x)
{
    const val a = sum(x);
    static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
    for (int k = 0; k < 6; ++k)
        if (eat(x, ops[k])) {
            const val b = sum(x);
            int r;
            if (a.fl || b.fl) {
                const float p = as_f(a), q = as_f(b);
                r = k == 0 ? p <= q : k == 1 ? p >= q : k == 2 ? p == q : k == 3 ? p != q : k == 4 ? p < q : p > q;
            } else {
                const int64_t p = a.i, q = b.i;
                r = k == 0 ? p <= q : k == 1 ? p >= q : k == 2 ? p == q : k == 3 ? p != q : k == 4 ? p < q : p > q;
            }
            return I(r);
        }
    return a;
}

static val cond(parser *x)
{
    const val c = compare(x);
    if (!eat(x, "?")) return c;
    if (!deeper(x)) return I(0);
    const val a = cond(x);
    if (!eat(x, ":")) fail(x, KS_EINVAL);
    const val b = cond(x);
    x->depth--;
    return (c.fl ? c.f != 0.0f : c.i != 0) ? a : b;
}

static void add_param(ks_formula_params *p, const char *name, const cJSON *v)
{
    double d;
    if (cJSON_IsBool(v)) d = cJSON_IsTrue(v);
    else if (cJSON_IsNumber(v)) d = v->valuedouble;
    else return;
    if (p->n >= KS_FORMULA_PARAMS || strlen(name) >= KS_NAME_LEN || !isfinite(d)) return;
    const int integer = d == floor(d) && fabs(d) <= 9007199254740992.0;
    snprintf(p->name[p->n], KS_NAME_LEN, "%s", name);
    p->is_float[p->n] = !integer;
    p->value[p->n] = integer ? (int64_t)d : 0;
    p->fvalue[p->n++] = (float)d;
}

int ks_formula_params_add(ks_formula_params *p, const char *name, float v)
{
    if (p->n >= KS_FORMULA_PARAMS || strlen(name) >= KS_NAME_LEN) return -1;
    snprintf(p->name[p->n], KS_NAME_LEN, "%s", name);
    p->is_float[p->n] = 1;
    p->value[p->n] = 0;
    p->fvalue[p->n++] = v;
    return 0;
}

void ks_formula_params_from(const char *params_json, const char *aliases, ks_formula_params *p)
{
    p->n = 0;
    cJSON *root = cJSON_Parse(params_json ? params_json : "{}");
    const cJSON *v;
    if (cJSON_IsObject(root)) cJSON_ArrayForEach(v, root)
        {
            if (v->string) add_param(p, v->string, v);
        }
    /* the operator's short names: NAME=key or NAME=key[i], space-separated */
    for (const char *a = aliases; a && *a;) {
        const size_t m = strcspn(a, " "), eq = strcspn(a, "=");
        if (eq < m && eq < KS_NAME_LEN) {
            char name[KS_NAME_LEN], key[KS_NAME_LEN];
            const size_t kl = strcspn(a + eq + 1, " [");
            snprintf(name, sizeof name, "%.*s", (int)eq, a);
            snprintf(key, sizeof key, "%.*s", (int)(kl < KS_NAME_LEN ? kl : KS_NAME_LEN - 1), a + eq + 1);
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, key);
            if (a[eq + 1 + kl] == '[') k = cJSON_IsArray(k) ? cJSON_GetArrayItem(k, atoi(a + eq + 2 + kl)) : NULL;
            if (k) add_param(p, name, k);
        }
        a += m + (a[m] == ' ');
    }
    cJSON_Delete(root);
}

int ks_formula_eval_value(const char *expr, const ks_site *site, const ks_event *work, const ks_formula_params *params,
                          ks_formula_value *out)
{
    parser x = {.p = expr, .site = site, .work = work, .params = params, .status = KS_OK};
    const val v = cond(&x);
    while (isspace((unsigned char)*x.p)) x.p++;
    if (*x.p) fail(&x, strchr("[]", *x.p) ? KS_ENOENT : KS_EINVAL);
    if (x.status == KS_OK) out->is_float = v.fl, out->i = v.i, out->f = v.f;
    return x.status;
}

int ks_formula_eval_with(const char *expr, const ks_site *site, const ks_event *work, const ks_formula_params *params,
                         int64_t *out)
{
    ks_formula_value v;
    const int rc = ks_formula_eval_value(expr, site, work, params, &v);
    if (rc == KS_OK && v.is_float) return KS_ENOENT; /* float arithmetic: not this function's */
    if (rc == KS_OK) *out = v.i;
    return rc;
}

int ks_formula_eval(const char *expr, const ks_site *site, const ks_event *work, int64_t *out)
{
    return ks_formula_eval_with(expr, site, work, NULL, out);
}
