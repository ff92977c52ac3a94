/* formula.c - a small recursive-descent evaluator for derived-field formulas. */
#include "formula.h"

#include <ctype.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

typedef struct parser {
    const char *p;
    const ks_site *site;
    const ks_event *work;
    int status; /* KS_OK, KS_ENOENT, KS_EINVAL or KS_ECHECK: the first problem wins */
    int depth;  /* nesting so far: a crafted formula cannot recurse the stack away */
} parser;

#define KS_FORMULA_DEPTH 64

static int64_t cond(parser *x);

static void fail(parser *x, int status)
{
    if (x->status == KS_OK) x->status = status;
}

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

static int64_t variable(parser *x, const char *name, size_t n)
{
    for (int f = 0; f < x->site->nfields && f < KS_WORK_FIELDS; ++f)
        if (strlen(x->site->fields[f].name) == n && !strncmp(x->site->fields[f].name, name, n))
            return x->work->u.field[f];
    fail(x, KS_ENOENT);
    return 0;
}

/* a op b in int64, or fail with KS_ECHECK when C would overflow (INT64_MIN / -1 too) */
static int64_t arith(parser *x, int op, int64_t a, int64_t b)
{
    int64_t r = 0;
    int bad = 0;
    switch (op) {
    case '+': bad = __builtin_add_overflow(a, b, &r); break;
    case '-': bad = __builtin_sub_overflow(a, b, &r); break;
    case '*': bad = __builtin_mul_overflow(a, b, &r); break;
    default:
        if (b == 0) {
            fail(x, KS_EINVAL);
            return 0;
        }
        bad = a == INT64_MIN && b == -1;
        if (!bad) r = op == '/' ? a / b : a % b;
    }
    if (bad) fail(x, KS_ECHECK);
    return bad ? 0 : r;
}

static int64_t primary(parser *x)
{
    while (isspace((unsigned char)*x->p)) x->p++;
    if (eat(x, "(")) {
        if (++x->depth > KS_FORMULA_DEPTH) {
            fail(x, KS_EINVAL);
            return 0;
        }
        const int64_t v = cond(x);
        x->depth--;
        if (!eat(x, ")")) fail(x, KS_EINVAL);
        return v;
    }
    if (isdigit((unsigned char)*x->p)) {
        int64_t v = 0;
        while (isdigit((unsigned char)*x->p)) /* a literal past 2^63 - 1 overflows like any step */
            v = arith(x, '+', arith(x, '*', v, 10), *x->p++ - '0');
        if (*x->p == '.') fail(x, KS_ENOENT); /* a float: not integer arithmetic */
        return v;
    }
    const char *name = x->p;
    while (isalnum((unsigned char)*x->p) || *x->p == '_') x->p++;
    const size_t n = (size_t)(x->p - name);
    if (n == 0) {
        fail(x, KS_EINVAL);
        return 0;
    }
    if (!eat(x, "(")) return variable(x, name, n);
    if (++x->depth > KS_FORMULA_DEPTH) {
        fail(x, KS_EINVAL);
        return 0;
    }
    const int is_min = n == 3 && !strncmp(name, "min", 3), is_max = n == 3 && !strncmp(name, "max", 3);
    if (!is_min && !is_max) fail(x, KS_ENOENT);
    const int64_t a = cond(x);
    const int64_t b = eat(x, ",") ? cond(x) : (fail(x, KS_EINVAL), 0);
    if (!eat(x, ")")) fail(x, KS_EINVAL);
    x->depth--;
    return is_min ? (a < b ? a : b) : (a > b ? a : b);
}

static int64_t unary(parser *x)
{
    if (eat(x, "-")) {
        if (++x->depth > KS_FORMULA_DEPTH) { /* "- - - - ...": as deep as parentheses */
            fail(x, KS_EINVAL);
            return 0;
        }
        const int64_t v = unary(x);
        x->depth--;
        return arith(x, '-', 0, v);
    }
    return primary(x);
}

static int64_t product(parser *x)
{
    int64_t v = unary(x);
    for (;;) {
        const int op = eat(x, "*") ? '*' : eat(x, "/") ? '/' : eat(x, "%") ? '%' : 0;
        if (!op) return v;
        const int64_t r = unary(x);
        v = arith(x, op, v, r);
        if (x->status != KS_OK) return 0;
    }
}

static int64_t sum(parser *x)
{
    int64_t v = product(x);
    for (;;) {
        if (eat(x, "+")) v = arith(x, '+', v, product(x));
        else if (eat(x, "-")) v = arith(x, '-', v, product(x));
        else return v;
    }
}

static int64_t compare(parser *x)
{
    const int64_t a = sum(x);
    if (eat(x, "<=")) return a <= sum(x);
    if (eat(x, ">=")) return a >= sum(x);
    if (eat(x, "==")) return a == sum(x);
    if (eat(x, "!=")) return a != sum(x);
    if (eat(x, "<")) return a < sum(x);
    if (eat(x, ">")) return a > sum(x);
    return a;
}

static int64_t cond(parser *x)
{
    const int64_t c = compare(x);
    if (!eat(x, "?")) return c;
    if (++x->depth > KS_FORMULA_DEPTH) {
        fail(x, KS_EINVAL);
        return 0;
    }
    const int64_t a = cond(x);
    if (!eat(x, ":")) fail(x, KS_EINVAL);
    const int64_t b = cond(x);
    x->depth--;
    return c ? a : b;
}

int ks_formula_eval(const char *expr, const ks_site *site, const ks_event *work, int64_t *out)
{
    parser x = {.p = expr, .site = site, .work = work, .status = KS_OK};
    const int64_t v = cond(&x);
    while (isspace((unsigned char)*x.p)) x.p++;
    if (*x.p) fail(&x, strchr("[]", *x.p) ? KS_ENOENT : KS_EINVAL);
    if (x.status == KS_OK) *out = v;
    return x.status;
}
