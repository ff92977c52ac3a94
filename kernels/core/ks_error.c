#include "ks_error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char g_message[512];

int ks_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    va_end(ap);
    return code;
}

int ks_fail_at(const char *path, long long offset, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(g_message, sizeof g_message, "%s: offset %lld: ", path, offset);
    if (n < 0 || n >= (int)sizeof g_message) return KS_EFORMAT;
    va_start(ap, fmt);
    vsnprintf(g_message + n, sizeof g_message - (size_t)n, fmt, ap);
    va_end(ap);
    return KS_EFORMAT;
}

const char *ks_error_message(void) { return g_message[0] ? g_message : "no error"; }

void ks_error_clear(void) { g_message[0] = '\0'; }
