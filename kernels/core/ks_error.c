#include "ks_error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char g_message[512];

ks_status ks_fail(ks_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    va_end(ap);
    return code;
}

ks_status ks_fail_at(const char *path, long long offset, const char *fmt, ...)
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

const char *ks_status_string(ks_status status)
{
    switch (status) {
    case KS_OK: return "ok";
    case KS_EINVAL: return "invalid argument";
    case KS_ENOMEM: return "out of memory";
    case KS_EIO: return "input/output error";
    case KS_EFORMAT: return "malformed file";
    case KS_ECUDA: return "CUDA error or no CUDA";
    case KS_ECHECK: return "check found violations";
    case KS_ENOENT: return "no such name";
    }
    return "unknown status";
}
