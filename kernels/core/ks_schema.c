#include "ks_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_error.h"

static const struct {
    const char *name, *descr, *longname;
    size_t size;
} k_dtypes[KS_DTYPES] = {
    [KS_F32] = {"f32", "<f4", "float32 (<f4)", 4}, [KS_I32] = {"i32", "<i4", "int32 (<i4)", 4},
    [KS_I64] = {"i64", "<i8", "int64 (<i8)", 8},   [KS_F64] = {"f64", "<f8", "float64 (<f8)", 8},
    [KS_U32] = {"u32", "<u4", "uint32 (<u4)", 4},  [KS_U64] = {"u64", "<u8", "uint64 (<u8)", 8},
    [KS_I16] = {"i16", "<i2", "int16 (<i2)", 2},   [KS_U16] = {"u16", "<u2", "uint16 (<u2)", 2},
    [KS_I8] = {"i8", "|i1", "int8 (|i1)", 1},      [KS_U8] = {"u8", "|u1", "uint8 (|u1)", 1},
};

static int dtype_ok(ks_dtype d) { return (unsigned)d < KS_DTYPES; }

size_t ks_dtype_size(ks_dtype d) { return dtype_ok(d) ? k_dtypes[d].size : 4; }
const char *ks_dtype_name(ks_dtype d) { return dtype_ok(d) ? k_dtypes[d].name : "?"; }
const char *ks_dtype_long_name(ks_dtype d) { return dtype_ok(d) ? k_dtypes[d].longname : "?"; }
const char *ks_dtype_descr(ks_dtype d) { return dtype_ok(d) ? k_dtypes[d].descr : "?"; }

int ks_dtype_parse(const char *name)
{
    for (int d = 0; d < KS_DTYPES; ++d)
        if (!strcmp(name, k_dtypes[d].name)) return d;
    return -1;
}

double ks_tensor_value(const ks_tensor *t, int64_t i)
{
    const void *p = t->data;
    switch (t->dtype) {
    case KS_F32: return ((const float *)p)[i];
    case KS_I32: return ((const int32_t *)p)[i];
    case KS_I64: return (double)((const int64_t *)p)[i];
    case KS_F64: return ((const double *)p)[i];
    case KS_U32: return ((const uint32_t *)p)[i];
    case KS_U64: return (double)((const uint64_t *)p)[i];
    case KS_I16: return ((const int16_t *)p)[i];
    case KS_U16: return ((const uint16_t *)p)[i];
    case KS_I8: return ((const int8_t *)p)[i];
    case KS_U8: return ((const uint8_t *)p)[i];
    }
    return 0.0;
}

int64_t ks_shape_numel(int ndim, const int64_t *shape, ks_dtype d)
{
    const int64_t limit = INT64_MAX / (int64_t)ks_dtype_size(d);
    int64_t n = 1;
    if (ndim < 0 || ndim > KS_MAX_DIMS) return -1;
    for (int i = 0; i < ndim; ++i) {
        if (shape[i] < 0) return -1;
        if (shape[i] != 0 && n > limit / shape[i]) return -1;
        n *= shape[i];
    }
    return n;
}

int64_t ks_tensor_numel(const ks_tensor *t) { return ks_shape_numel(t->ndim, t->shape, t->dtype); }

ks_status ks_tensor_alloc(ks_tensor *t)
{
    int64_t n = ks_tensor_numel(t);
    if (n < 0) return ks_fail(KS_EINVAL, "tensor %s: size overflows", t->name);
    t->data = calloc(n ? (size_t)n : 1, ks_dtype_size(t->dtype));
    if (!t->data) return ks_fail(KS_ENOMEM, "tensor %s: out of memory for %lld elements", t->name, (long long)n);
    return KS_OK;
}

void ks_tensor_shape(ks_tensor *t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t s[4] = {a, b, c, d};
    t->dtype = KS_F32;
    t->ndim = ndim;
    for (int i = 0; i < ndim && i < 4; ++i) t->shape[i] = s[i];
}

ks_status ks_check_sizes(const ks_size_check *c, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (c[i].v < c[i].lo)
            return ks_fail(KS_EINVAL, "%s must be >= %lld (got %lld)", c[i].name, (long long)c[i].lo,
                           (long long)c[i].v);
        if (c[i].v > INT32_MAX)
            return ks_fail(KS_EINVAL, "%s must be <= %lld (got %lld)", c[i].name, (long long)INT32_MAX,
                           (long long)c[i].v);
    }
    return KS_OK;
}

void ks_tensor_free(ks_tensor *t)
{
    if (!t) return;
    free(t->data);
    t->data = NULL;
}

const char *ks_shape_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (used < n) snprintf(buf + used, n - used, ")");
    return buf;
}

/* A digit field: name = (index / stride) % extent + bias. */
void ks_field_digit(ks_field *f, const char *name, int64_t stride, int64_t extent, int64_t bias)
{
    char part[40];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->digit = 1;
    f->stride = stride;
    f->extent = extent;
    f->bias = bias;
    if (stride == 1) snprintf(part, sizeof part, "index");
    else snprintf(part, sizeof part, "index / %lld", (long long)stride);
    if (extent > 0) snprintf(f->expr, sizeof f->expr, "%s %% %lld", part, (long long)extent);
    else snprintf(f->expr, sizeof f->expr, "%s", part);
    if (bias) {
        size_t n = strlen(f->expr);
        snprintf(f->expr + n, sizeof f->expr - n, " + %lld", (long long)bias);
    }
}

void ks_field_derived(ks_field *f, const char *name, const char *expr)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->expr, sizeof f->expr, "%s", expr);
}

void ks_site_access(ks_site *s, const char *name, int kind, int tensor, int writes)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = kind;
    s->tensor = tensor;
    s->writes_per_element = writes;
}
