/* cu_scan.c - what kscope reads from the preprocessed .cu text: the __global__ functions
 * with their parameter names, and the two rewrites clang needs: `extern __shared__`
 * (into a pointer to the dynamic shared memory) and host launches `k<<<g, b>>>(args)`
 * (into a call that is never run). Line markers and literals pass through unchanged, so
 * clang's diagnostics and the debug lines still name the user's file and lines. */
#include "cu_build.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"

#define GLOBAL_MARK "annotate(\"ks_global\")))"
#define SHARED_MARK "static __attribute__((section(\"ks_cu_shared\")))"

/* the end of a string or char literal starting at p (p at the quote) */
static const char *skip_literal(const char *p)
{
    const char q = *p++;
    while (*p && *p != q) p += (*p == '\\' && p[1]) ? 2 : 1;
    return *p ? p + 1 : p;
}

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* p at '(' -> after its matching ')' (literals skipped) */
static const char *match_paren(const char *p)
{
    int depth = 0;
    for (; *p; ++p) {
        if (*p == '"' || *p == '\'') {
            p = skip_literal(p) - 1;
            continue;
        }
        if (*p == '(') depth++;
        if (*p == ')' && --depth == 0) return p + 1;
    }
    return p;
}

static void strip_spaces(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    size_t k = 0;
    while (isspace((unsigned char)s[k])) k++;
    memmove(s, s + k, n - k + 1);
}

/* the parameter names of "(const float *a, int n)" */
static int read_params(const char *open, const char *close, ks_cu_kernel *k)
{
    k->nparams = 0;
    const char *p = open + 1, *start = p;
    int depth = 0;
    for (; p <= close; ++p) {
        if (p < close && (*p == '(' || *p == '[' || *p == '<')) depth++;
        else if (p < close && (*p == ')' || *p == ']' || *p == '>')) depth--;
        if (p < close && !(*p == ',' && depth == 0)) continue;
        char one[256];
        size_t len = (size_t)(p - start) < sizeof one - 1 ? (size_t)(p - start) : sizeof one - 1;
        memcpy(one, start, len);
        one[len] = 0;
        start = p + 1;
        char *eq = strchr(one, '=');
        if (eq) *eq = 0;
        char *br = strchr(one, '[');
        if (br) *br = 0;
        strip_spaces(one);
        if (!one[0] || (!strcmp(one, "void") && k->nparams == 0 && p == close)) continue;
        size_t e = strlen(one), b = e;
        while (b && is_ident(one[b - 1])) b--;
        if (b == e || b == 0 || isdigit((unsigned char)one[b])) {
            snprintf(k->bad, sizeof k->bad, "parameter %d of %s has no name", k->nparams + 1, k->name);
            return -1;
        }
        if (k->nparams >= KS_CU_MAX_PARAMS) {
            snprintf(k->bad, sizeof k->bad, "%s has more than %d parameters", k->name, KS_CU_MAX_PARAMS);
            return -1;
        }
        snprintf(k->params[k->nparams++], sizeof k->params[0], "%.*s", (int)(e - b), one + b);
    }
    return 0;
}

/* whether the declaration whose __global__ expansion starts at `at` is a template:
 * "template <...>" right before it */
static int after_template(const char *text, const char *at)
{
    const char *q = at;
    while (q > text && isspace((unsigned char)q[-1])) q--;
    if (q == text || q[-1] != '>') return 0;
    int depth = 0;
    do {
        --q;
        if (*q == '>') depth++;
        if (*q == '<') depth--;
    } while (q > text && depth);
    while (q > text && isspace((unsigned char)q[-1])) q--;
    return q - text >= 8 && !strncmp(q - 8, "template", 8);
}

/* The namespaces open at `at` ("a::b::"): every `namespace NAME {` before it whose brace
 * has not closed (literals and line markers skipped; anonymous namespaces add nothing). */
static void namespaces_at(const char *text, const char *at, char *out, size_t n)
{
    struct {
        int depth;
        char name[64];
    } open[16];
    int nopen = 0, depth = 0;
    for (const char *p = text; p < at; ++p) {
        if (*p == '"' || *p == '\'') {
            p = skip_literal(p) - 1;
            continue;
        }
        if (*p == '#' && (p == text || p[-1] == '\n')) {
            const char *nl = strchr(p, '\n');
            if (!nl || nl >= at) break;
            p = nl;
            continue;
        }
        if (*p == '{') depth++;
        if (*p == '}') {
            depth--;
            while (nopen && open[nopen - 1].depth > depth) nopen--;
        }
        if (!strncmp(p, "namespace", 9) && (p == text || !is_ident(p[-1])) && !is_ident(p[9])) {
            const char *q = p + 9;
            while (isspace((unsigned char)*q)) q++;
            const char *name = q;
            while (is_ident(*q) || *q == ':') q++;
            const char *brace = q;
            while (isspace((unsigned char)*brace)) brace++;
            if (*brace == '{' && nopen < 16) {
                snprintf(open[nopen].name, sizeof open[nopen].name, "%.*s", (int)(q - name), name);
                open[nopen++].depth = depth + 1;
            }
        }
    }
    size_t used = 0;
    out[0] = 0;
    for (int k = 0; k < nopen && used < n; ++k)
        if (open[k].name[0]) used += (size_t)snprintf(out + used, n - used, "%s::", open[k].name);
}

int ks_cu_scan_kernels(const char *text, ks_cu_kernel *out, int max)
{
    int n = 0;
    for (const char *p = strstr(text, GLOBAL_MARK); p; p = strstr(p, GLOBAL_MARK)) {
        const char *attr = p;
        while (attr > text && strncmp(attr, "__attribute__", 13)) --attr; /* the expansion's start */
        const int is_template = after_template(text, attr);
        p += strlen(GLOBAL_MARK);
        const char *paren = strchr(p, '(');
        if (!paren) break;
        const char *e = paren;
        while (e > p && isspace((unsigned char)e[-1])) e--;
        const char *b = e;
        while (b > p && is_ident(b[-1])) b--;
        const char *close = match_paren(paren);
        const char *after = close;
        while (isspace((unsigned char)*after)) after++;
        if (b == e || *after == ';') { /* a declaration: the definition names the parameters */
            p = close;
            continue;
        }
        ks_cu_kernel k;
        memset(&k, 0, sizeof k);
        snprintf(k.name, sizeof k.name, "%.*s", (int)(e - b), b);
        k.is_template = is_template;
        namespaces_at(text, attr, k.ns, sizeof k.ns);
        read_params(paren, close - 1, &k);
        int dup = 0;
        for (int i = 0; i < n && i < max; ++i) dup |= !strcmp(out[i].name, k.name);
        if (dup) { /* an overload: the name alone cannot say which */
            for (int i = 0; i < n && i < max; ++i)
                if (!strcmp(out[i].name, k.name)) snprintf(out[i].bad, sizeof out[i].bad, "%s is overloaded", k.name);
        } else if (n < max) {
            out[n++] = k;
        }
        p = close;
    }
    return n;
}

/* ---- rewrites ---- */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static int put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *g = realloc(b->s, cap);
        if (!g) return -1;
        b->s = g, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
    return 0;
}

static int puts_(sbuf *b, const char *s) { return put(b, s, strlen(s)); }

/* drops every __attribute__((...)) of s */
static void drop_attributes(char *s)
{
    char *a;
    while ((a = strstr(s, "__attribute__"))) {
        char *open = strchr(a, '(');
        if (!open) break;
        const char *end = match_paren(open);
        memmove(a, end, strlen(end) + 1);
    }
    strip_spaces(s);
}

/* the start of the callee before `<<<` at p: an identifier, `::` parts, template args */
static const char *callee_start(const char *text, const char *p)
{
    const char *q = p;
    while (q > text && isspace((unsigned char)q[-1])) q--;
    for (;;) {
        if (q > text && q[-1] == '>') {
            int depth = 0;
            do {
                --q;
                if (*q == '>') depth++;
                if (*q == '<') depth--;
            } while (q > text && depth);
        }
        while (q > text && is_ident(q[-1])) q--;
        if (q - text >= 2 && q[-1] == ':' && q[-2] == ':') {
            q -= 2;
            continue;
        }
        return q;
    }
}

/* `static __shared__ SPEC a[4][5], b;` (p after the marker, up to its ';'): each
 * declarator becomes a reference to a block-wide slot the runtime hands out, so each array
 * has a guard gap after it and an index one past its end is caught, not another array's */
static int shared_decl(sbuf *b, const char *q, const char *semi, ks_cu_sharr *shared, int max, int *nshared)
{
    /* SPEC: up to the first declarator's name, the identifier before its '[' or ',' or ';' */
    const char *first_end = q;
    int depth = 0;
    for (; first_end < semi; ++first_end) {
        if (!depth && (*first_end == '[' || *first_end == ',')) break;
        if (*first_end == '(') depth++;
        if (*first_end == ')') depth--;
    }
    const char *ne = first_end;
    while (ne > q && isspace((unsigned char)ne[-1])) ne--;
    const char *nb = ne;
    while (nb > q && is_ident(nb[-1])) nb--;
    if (nb == ne || nb == q) return -1;
    char spec[512];
    snprintf(spec, sizeof spec, "%.*s", (int)(nb - q), q);
    drop_attributes(spec);
    /* each declarator: NAME DIMS */
    for (const char *d = nb; d < semi;) {
        const char *end = d;
        depth = 0;
        for (; end < semi; ++end) {
            if (*end == '(' || *end == '[') depth++;
            if (*end == ')' || *end == ']') depth--;
            if (!depth && *end == ',') break;
        }
        while (d < end && isspace((unsigned char)*d)) d++;
        const char *n_end = d;
        while (n_end < end && is_ident(*n_end)) n_end++;
        if (n_end == d || *nshared >= max) return -1;
        char name[32], dims[256], line[3072];
        snprintf(name, sizeof name, "%.*s", (int)(n_end - d), d);
        snprintf(dims, sizeof dims, "%.*s", (int)(end - n_end), n_end);
        strip_spaces(dims);
        const int id = (*nshared)++;
        snprintf(shared[id].name, sizeof shared[id].name, "%s", name);
        /* not static: a local reference lives in a register (a static one would be a guarded
         * variable loaded again at every access, each load a callback) */
        if (dims[0])
            snprintf(line, sizeof line,
                     "%s (&%s)%s = *reinterpret_cast<%s (*)%s>(ks_cu_shared_slot(%d, sizeof(%s %s)));", spec, name,
                     dims, spec, dims, id, spec, dims);
        else
            snprintf(line, sizeof line, "%s &%s = *reinterpret_cast<%s *>(ks_cu_shared_slot(%d, sizeof(%s)));", spec,
                     name, spec, id, spec);
        if (puts_(b, line)) return -2;
        d = end < semi ? end + 1 : end;
    }
    return 0;
}

char *ks_cu_rewrite(const char *text, char *dyn_name, size_t dyn_cap, ks_cu_sharr *shared, int max, int *nshared)
{
    sbuf b = {0};
    const char *p = text, *copied = text;
    dyn_name[0] = 0;
    *nshared = 0;
    while (*p) {
        if (*p == '"' || *p == '\'') {
            p = skip_literal(p);
            continue;
        }
        if (*p == '#' && (p == text || p[-1] == '\n')) { /* a line marker or pragma */
            const char *nl = strchr(p, '\n');
            p = nl ? nl + 1 : p + strlen(p);
            continue;
        }
        if (!strncmp(p, "extern", 6) && (p == text || !is_ident(p[-1])) && !is_ident(p[6])) {
            const char *q = p + 6;
            while (isspace((unsigned char)*q)) q++;
            if (!strncmp(q, SHARED_MARK, strlen(SHARED_MARK))) {
                q += strlen(SHARED_MARK);
                const char *semi = strchr(q, ';');
                const char *br = semi ? memchr(q, '[', (size_t)(semi - q)) : NULL;
                if (!br) {
                    free(b.s);
                    return NULL;
                }
                const char *ne = br;
                while (ne > q && isspace((unsigned char)ne[-1])) ne--;
                const char *nb = ne;
                while (nb > q && is_ident(nb[-1])) nb--;
                char spec[512], name[64], line[1400];
                snprintf(spec, sizeof spec, "%.*s", (int)(nb - q), q);
                snprintf(name, sizeof name, "%.*s", (int)(ne - nb), nb);
                drop_attributes(spec);
                if (!dyn_name[0]) snprintf(dyn_name, dyn_cap, "%s", name);
                snprintf(line, sizeof line, "%s *const %s = reinterpret_cast<%s *>(ks_cu_dyn_smem);", spec, name, spec);
                if (put(&b, copied, (size_t)(p - copied)) || puts_(&b, line)) goto oom;
                p = copied = semi + 1;
                continue;
            }
        }
        if (!strncmp(p, SHARED_MARK, strlen(SHARED_MARK))) { /* a static __shared__ declaration */
            const char *q = p + strlen(SHARED_MARK), *semi = strchr(q, ';');
            if (!semi || put(&b, copied, (size_t)(p - copied))) goto oom;
            if (shared_decl(&b, q, semi, shared, max, nshared)) goto oom;
            p = copied = semi + 1;
            continue;
        }
        if (p[0] == '<' && p[1] == '<' && p[2] == '<') {
            const char *end = strstr(p, ">>>");
            if (!end) break;
            const char *start = callee_start(text, p);
            if (start < copied) start = copied;
            if (put(&b, copied, (size_t)(start - copied)) || puts_(&b, "(ks_cu_host_launch(") ||
                put(&b, p + 3, (size_t)(end - p - 3)) || puts_(&b, "), ") || put(&b, start, (size_t)(p - start)) ||
                puts_(&b, ")"))
                goto oom;
            p = copied = end + 3;
            continue;
        }
        p++;
    }
    if (put(&b, copied, strlen(copied))) goto oom;
    return b.s;
oom:
    free(b.s);
    return NULL;
}
