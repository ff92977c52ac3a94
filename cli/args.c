#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "cli.h"

int ks_cli_error(const char *ctx, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kscope: %s: ", ctx);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return KS_EXIT_ERROR;
}

static int parse_range(const char *s, int64_t *lo, int64_t *hi)
{
    char buf[64];
    if (strlen(s) >= sizeof buf) return KS_EINVAL;
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':');
    if (!colon) return KS_EINVAL;
    *colon = '\0';
    if (ks_parse_i64(buf, lo) || *lo < 0) return KS_EINVAL;
    if (colon[1] == '\0') {
        *hi = INT64_MAX;
        return KS_OK;
    }
    if (ks_parse_i64(colon + 1, hi) || *hi < *lo) return KS_EINVAL;
    return KS_OK;
}

int ks_parse_filter(const char *s, ks_filter *f)
{
    char buf[256];
    *f = ks_filter_all();
    if (!s || strlen(s) >= sizeof buf || !*s) return KS_EINVAL;
    snprintf(buf, sizeof buf, "%s", s);
    /* items split on ',' by hand: strtok would skip an empty item ("index=1:2,,every=2") */
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        if (!*tok) return KS_EINVAL;
        if (!strncmp(tok, "index=", 6)) {
            if (parse_range(tok + 6, &f->index_lo, &f->index_hi)) return KS_EINVAL;
        } else if (!strncmp(tok, "block=", 6)) {
            if (parse_range(tok + 6, &f->block_lo, &f->block_hi)) return KS_EINVAL;
        } else if (!strncmp(tok, "every=", 6)) {
            if (ks_parse_i64(tok + 6, &f->every) || f->every < 1) return KS_EINVAL;
        } else {
            return KS_EINVAL;
        }
    }
    return KS_OK;
}

int ks_flag(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) || strncmp(a + 2, name, n)) return 0;
    if (a[2 + n] == '=') {
        *value = a + 3 + n;
        return 1;
    }
    if (a[2 + n] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}
