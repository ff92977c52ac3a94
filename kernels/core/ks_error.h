/* ks_error.h - library error codes and the message of the last failure (per thread).
 * Library functions that can fail return a ks_status (KS_OK, 0, on success; those that
 * hand back an object return NULL instead) and leave one line in ks_error_message();
 * ks_status_string names a code. */
#ifndef KS_ERROR_H
#define KS_ERROR_H

#include "ks_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ks_status {
    KS_OK = 0,
    KS_EINVAL = 1,  /* bad parameters or shapes */
    KS_ENOMEM = 2,  /* allocation failed */
    KS_EIO = 3,     /* file could not be read or written */
    KS_EFORMAT = 4, /* a file is malformed */
    KS_ECUDA = 5,   /* a CUDA call failed, or CUDA is not available */
    KS_ECHECK = 6,  /* an invariant check found violations */
    KS_ENOENT = 7   /* no such name (a parameter, a tensor) */
} ks_status;

#if defined(__GNUC__)
#define KS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KS_PRINTF(a, b)
#endif

/* Records a one-line message and returns `code`, so `return ks_fail(KS_EINVAL, ...)`. */
KS_API ks_status ks_fail(ks_status code, const char *fmt, ...) KS_PRINTF(2, 3);
/* A malformed file: records "path: offset N: problem" and returns KS_EFORMAT. */
KS_API ks_status ks_fail_at(const char *path, long long offset, const char *fmt, ...) KS_PRINTF(3, 4);
/* The last failure's message on this thread ("no error" when none). */
KS_API const char *ks_error_message(void);
KS_API void ks_error_clear(void);
/* What a code means, for any value: "ok", "invalid argument", ..., "unknown status". */
KS_API const char *ks_status_string(ks_status status);

#ifdef __cplusplus
}
#endif

#endif
