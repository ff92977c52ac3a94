/* ks_error.h - library error codes and the message of the last failure (per thread).
 * Library functions return a ks_status (or NULL) and leave one line in ks_error_message(). */
#ifndef KS_ERROR_H
#define KS_ERROR_H

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
int ks_fail(int code, const char *fmt, ...) KS_PRINTF(2, 3);
/* A malformed file: records "path: offset N: problem" and returns KS_EFORMAT. */
int ks_fail_at(const char *path, long long offset, const char *fmt, ...) KS_PRINTF(3, 4);
const char *ks_error_message(void);
void ks_error_clear(void);

#ifdef __cplusplus
}
#endif

#endif
