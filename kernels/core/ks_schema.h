/* ks_schema.h - host-side descriptions of a launch: tensors and probe sites.
 * The trace header is written from these, so the viewer and `check` need no
 * operator-specific code. */
#ifndef KS_SCHEMA_H
#define KS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "ks_api.h"
#include "ks_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_MAX_DIMS 6
#define KS_NAME_LEN 32
#define KS_EXPR_LEN 96
#define KS_MAX_SITES 64
#define KS_CODE_LEN 120

/* Element types. f32, i32 and i64 are the operators'; the others come with .cu buffers
 * (kscope run FILE.cu --arg x=@x.npy). The numbers are stored nowhere: names are. */
typedef enum ks_dtype {
    KS_F32 = 0,
    KS_I32 = 1,
    KS_I64 = 2,
    KS_F64 = 3,
    KS_U32 = 4,
    KS_U64 = 5,
    KS_I16 = 6,
    KS_U16 = 7,
    KS_I8 = 8,
    KS_U8 = 9
} ks_dtype;
#define KS_DTYPES 10

/* A host tensor, C-contiguous. Owns `data` when created by ks_tensor_alloc. */
typedef struct ks_tensor {
    char name[KS_NAME_LEN];
    ks_dtype dtype;
    int ndim;
    int64_t shape[KS_MAX_DIMS];
    void *data;
} ks_tensor;

KS_API size_t ks_dtype_size(ks_dtype d);
KS_API const char *ks_dtype_name(ks_dtype d);      /* "f32", "i32", "i64" */
KS_API const char *ks_dtype_long_name(ks_dtype d); /* "float32 (<f4)", ... as .npy files say it */
KS_API const char *ks_dtype_descr(ks_dtype d);     /* the .npy descr: "<f4", "|u1", ... */
/* The dtype called `name` ("f32", ...), or -1. */
KS_API int ks_dtype_parse(const char *name);
/* Element i of a tensor's data as a double, whatever its dtype. */
KS_API double ks_tensor_value(const ks_tensor *t, int64_t i);
/* Elements of `shape`, or -1 if the product (times the element size) overflows or a
 * dimension is negative. */
KS_API int64_t ks_shape_numel(int ndim, const int64_t *shape, ks_dtype d);
KS_API int64_t ks_tensor_numel(const ks_tensor *t);
/* Sets t to float32 with the first `ndim` (<= 4) of the sizes a, b, c, d; no data. */
KS_API void ks_tensor_shape(ks_tensor *t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d);
/* A size to validate: lo <= v <= INT32_MAX (coordinates fit the trace's 32-bit fields). */
typedef struct ks_size_check {
    const char *name;
    int64_t v, lo;
} ks_size_check;
/* KS_OK, or KS_EINVAL with "NAME must be >= LO (got V)" (or "<= 2147483647") for the
 * first size out of range. */
KS_API ks_status ks_check_sizes(const ks_size_check *c, size_t n);
/* The rows of a sliding window's sizes for a struct with the fields kernel_h, kernel_w,
 * pad_h, pad_w, stride_h, stride_w (and, for KS_WINDOW_SIZE_CHECKS, dilation_h and
 * dilation_w): one table, every windowed operator; a window without dilation (average
 * pooling) takes the first. */
#define KS_WINDOW_SIZE_CHECKS_UNDILATED(p)                                                                \
    {.name = "kernel_h", .v = (p)->kernel_h, .lo = 1}, {.name = "kernel_w", .v = (p)->kernel_w, .lo = 1}, \
        {.name = "pad_h", .v = (p)->pad_h, .lo = 0}, {.name = "pad_w", .v = (p)->pad_w, .lo = 0},         \
        {.name = "stride_h", .v = (p)->stride_h, .lo = 1},                                                \
    {                                                                                                     \
        .name = "stride_w", .v = (p)->stride_w, .lo = 1                                                   \
    }
#define KS_WINDOW_SIZE_CHECKS(p)                                                               \
    KS_WINDOW_SIZE_CHECKS_UNDILATED(p), {.name = "dilation_h", .v = (p)->dilation_h, .lo = 1}, \
    {                                                                                          \
        .name = "dilation_w", .v = (p)->dilation_w, .lo = 1                                    \
    }

/* A pooling window's output size along one axis, torch's rule (F.max_pool2d, F.avg_pool2d):
 * floor((in + 2p - d(k-1) - 1 + (ceil_mode ? s - 1 : 0)) / s) + 1, and with ceil_mode a last
 * window that would start past the input and its left padding is dropped. < 1 when no
 * window fits. Every argument < 2^31: no overflow. */
static inline int64_t ks_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode)
{
    const int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) --o;
    return o;
}

/* Allocates zeroed data for t (name/dtype/ndim/shape already set). */
KS_API ks_status ks_tensor_alloc(ks_tensor *t);
KS_API void ks_tensor_free(ks_tensor *t);
/* "(1, 2, 5, 5)" into buf. */
KS_API const char *ks_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

/* One field of a work event's decomposition. A digit field is
 * field = (index / stride) % extent + bias (extent 0 on the slowest digit: no modulo);
 * a derived field (digit == 0) is computed from other fields; `expr` shows how, with the
 * launch's constants substituted, in the same names the kernel body uses. */
typedef struct ks_field {
    char name[KS_NAME_LEN];
    int digit;
    int64_t stride, extent, bias;
    char expr[KS_EXPR_LEN];
} ks_field;

typedef struct ks_site {
    char name[KS_NAME_LEN];
    int kind;   /* ks_event_kind */
    int tensor; /* read/write/sample: the tensor it touches; -1 for work */
    int nfields;
    ks_field fields[8];
    /* write sites: how many times each element of `tensor` is written in a full launch
     * (0: not checked) */
    int writes_per_element;
    /* a site of a .cu kernel (kscope run FILE.cu) is a source location: its line and
     * column (0: none) and the text of that line, trimmed (cut at KS_CODE_LEN - 1) */
    int line, col;
    char code[KS_CODE_LEN];
} ks_site;

/* Schema builders. A digit field: name = (index / stride) % extent + bias (extent 0: no
 * modulo), with its expression written out. A derived field: shown by `expr` only. An
 * access site (read, write or sample) of `tensor`, each element written `writes` times
 * in a full launch (0: not checked). */
KS_API void ks_field_digit(ks_field *f, const char *name, int64_t stride, int64_t extent, int64_t bias);
KS_API void ks_field_derived(ks_field *f, const char *name, const char *expr);
KS_API void ks_site_access(ks_site *s, const char *name, int kind, int tensor, int writes);

#ifdef __cplusplus
}
#endif

#endif
