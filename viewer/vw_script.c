/* vw_script.c - key scripts (see vw_script.h). */
#include "vw_script.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

static int push(vw_action **out, size_t *n, size_t *cap, vw_action a)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 16;
        vw_action *p = realloc(*out, grown * sizeof *p);
        if (!p) return ks_fail(KS_ENOMEM, "out of memory for the key script");
        *out = p;
        *cap = grown;
    }
    (*out)[(*n)++] = a;
    return KS_OK;
}

static int parse_step(const char *tok, vw_action **out, size_t *n, size_t *cap)
{
    vw_action a = {.kind = VW_ACT_NONE, .a = 0, .b = 0};
    char *end;
    if (!strncmp(tok, "type:", 5)) {
        for (const char *p = tok + 5; *p; ++p) {
            vw_action t = {.kind = VW_ACT_TEXT, .a = (unsigned char)*p, .b = 0};
            if (push(out, n, cap, t)) return KS_ENOMEM;
        }
        return KS_OK;
    }
    if (!strncmp(tok, "click:", 6)) {
        a.kind = VW_ACT_CLICK;
        a.a = strtol(tok + 6, &end, 10);
        if (end == tok + 6 || *end != ':') goto bad;
        const char *y = end + 1;
        a.b = strtol(y, &end, 10);
        if (end == y || *end) goto bad;
        return push(out, n, cap, a);
    }
    if (!strncmp(tok, "wheel:", 6)) { /* wheel:X:Y:+1 zooms in around (X, Y), wheel:X:Y:-1 out */
        long v[3];
        const char *p = tok + 6;
        for (int i = 0; i < 3; ++i) {
            v[i] = strtol(p, &end, 10);
            if (end == p || *end != (i < 2 ? ':' : '\0') || (i == 2 && v[i] != 1 && v[i] != -1)) goto bad;
            p = end + 1;
        }
        a = (vw_action){.kind = VW_ACT_ZOOM, .a = v[2], .b = v[0], .c = v[1]};
        return push(out, n, cap, a);
    }
    if (!strncmp(tok, "wait:", 5)) {
        long k = strtol(tok + 5, &end, 10);
        if (end == tok + 5 || *end || k < 0 || k > 100000) goto bad;
        for (long i = 0; i < k; ++i)
            if (push(out, n, cap, a)) return KS_ENOMEM;
        return KS_OK;
    }
    int shift = !strncmp(tok, "Shift+", 6) && strcmp(tok, "Shift+Tab");
    if (!vw_key_action(shift ? tok + 6 : tok, shift, &a)) return push(out, n, cap, a);
bad:
    return ks_fail(
        KS_EINVAL,
        "--keys: unknown step '%s' (key names like Right, Space, O, Shift+N; type:TEXT; click:X:Y; wheel:X:Y:+1|-1; wait:N)",
        tok);
}

int vw_script_parse(const char *keys, vw_action **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    char tok[128];
    for (const char *p = keys; *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (!len || len >= sizeof tok) {
            free(*out);
            *out = NULL;
            *n = 0;
            return ks_fail(KS_EINVAL, "--keys: %s step at '%.20s'", len ? "too long a" : "an empty", p);
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        int rc = parse_step(tok, out, n, &cap);
        if (rc) {
            free(*out);
            *out = NULL;
            *n = 0;
            return rc;
        }
        p = q ? q + 1 : p + len;
    }
    return KS_OK;
}
