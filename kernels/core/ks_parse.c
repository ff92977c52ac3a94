/* ks_parse.c - strict parsing of user numbers (see ks_parse.h). */
#include "ks_parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_error.h"

int ks_parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s) return KS_EINVAL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s) return KS_EINVAL;
    *out = v;
    return KS_OK;
}

int ks_parse_values(const char *s, int axes, int64_t out[2])
{
    char buf[64];
    if (!s || strlen(s) >= sizeof buf) return KS_EINVAL;
    snprintf(buf, sizeof buf, "%s", s);
    char *comma = strchr(buf, ',');
    if (!comma) {
        if (ks_parse_i64(buf, &out[0])) return KS_EINVAL;
        out[1] = out[0];
        return KS_OK;
    }
    if (axes != 2) return KS_EINVAL;
    *comma = '\0';
    if (ks_parse_i64(buf, &out[0]) || ks_parse_i64(comma + 1, &out[1])) return KS_EINVAL;
    return KS_OK;
}

int ks_parse_list(const char *s, int max, int64_t *out, int *count)
{
    char buf[96];
    if (!s || max < 1 || strlen(s) >= sizeof buf) return KS_EINVAL;
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        if (n == max || ks_parse_i64(tok, &out[n])) return KS_EINVAL;
        ++n;
    }
    for (int i = n; n == 1 && i < max; ++i) out[i] = out[0];
    *count = n;
    return KS_OK;
}

int ks_parse_doubles(const char *s, int axes, double out[2])
{
    char buf[64], *end;
    if (!s || !*s || strlen(s) >= sizeof buf) return KS_EINVAL;
    snprintf(buf, sizeof buf, "%s", s);
    char *comma = strchr(buf, ',');
    if (comma) {
        if (axes != 2) return KS_EINVAL;
        *comma = '\0';
    }
    errno = 0;
    out[0] = strtod(buf, &end);
    if (errno || *end || end == buf || !isfinite(out[0])) return KS_EINVAL;
    out[1] = out[0];
    if (comma) {
        out[1] = strtod(comma + 1, &end);
        if (errno || *end || end == comma + 1 || !isfinite(out[1])) return KS_EINVAL;
    }
    return KS_OK;
}

int ks_parse_bytes(const char *s, unsigned long long *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9') return KS_EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long unit = 1;
    if (*end == 'K' || *end == 'k') unit = 1ULL << 10, end++;
    else if (*end == 'M' || *end == 'm') unit = 1ULL << 20, end++;
    else if (*end == 'G' || *end == 'g') unit = 1ULL << 30, end++;
    else if (*end == 'T' || *end == 't') unit = 1ULL << 40, end++;
    if (errno || *end || v == 0 || v > ~0ULL / unit) return KS_EINVAL;
    *out = v * unit;
    return KS_OK;
}
