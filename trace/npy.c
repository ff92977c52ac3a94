/* npy.c - .npy reader and writer. The reader checks the magic, version, header length,
 * every key of the header dict, and that the data is exactly as long as the shape says. */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "ks_file.h"

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int write_header(ks_out_file *o, const char *descr, int ndim, const int64_t *shape)
{
    char dict[1024], shp[256];
    size_t n = 0;
    n += (size_t)snprintf(shp + n, sizeof shp - n, "(");
    for (int i = 0; i < ndim; ++i)
        n += (size_t)snprintf(shp + n, sizeof shp - n, "%lld,%s", (long long)shape[i], i + 1 < ndim ? " " : "");
    snprintf(shp + n, sizeof shp - n, ")");
    int len = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': %s, }", descr, shp);
    if (len < 0 || len + 64 >= (int)sizeof dict) return ks_fail(KS_EINVAL, "%s: npy header too long", o->path);
    /* pad with spaces so that magic + 4 + dict + '\n' is a multiple of 64 */
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    memset(dict + len, ' ', (size_t)pad);
    len += pad;
    dict[len++] = '\n';
    unsigned char pre[10];
    memcpy(pre, MAGIC, 6);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(len & 0xFF);
    pre[9] = (unsigned char)(len >> 8);
    int rc = ks_out_write(o, pre, sizeof pre);
    return rc ? rc : ks_out_write(o, dict, (size_t)len);
}

int ks_npy_put(ks_out_file *o, const ks_tensor *t)
{
    char descr[16];
    snprintf(descr, sizeof descr, "'%s'", ks_dtype_descr(t->dtype));
    int64_t n = ks_tensor_numel(t);
    if (n < 0) return ks_fail(KS_EINVAL, "%s: tensor size overflows", o->path);
    int rc = write_header(o, descr, t->ndim, t->shape);
    return rc ? rc : ks_out_write(o, t->data, (size_t)n * ks_dtype_size(t->dtype));
}

int ks_npy_put_records(ks_out_file *o, const char *descr, int64_t count, size_t itemsize, ks_npy_fill fill, void *ctx)
{
    enum { CHUNK = 4096 };
    unsigned char *buf = malloc(CHUNK * itemsize);
    if (!buf) return ks_fail(KS_ENOMEM, "%s: out of memory", o->path);
    int rc = write_header(o, descr, 1, &count);
    for (int64_t i = 0; i < count && !rc; i += CHUNK) {
        int64_t n = count - i < CHUNK ? count - i : CHUNK;
        memset(buf, 0, (size_t)n * itemsize);
        for (int64_t k = 0; k < n; ++k) fill(ctx, i + k, buf + (size_t)k * itemsize);
        rc = ks_out_write(o, buf, (size_t)n * itemsize);
    }
    free(buf);
    return rc;
}

int ks_npy_write(const char *path, const ks_tensor *t)
{
    ks_out_file o;
    int rc = ks_out_open(&o, path);
    if (rc) return rc;
    if ((rc = ks_npy_put(&o, t))) {
        ks_out_abort(&o);
        return rc;
    }
    return ks_out_commit(&o);
}

int ks_npy_write_records(const char *path, const char *descr, int64_t count, size_t itemsize, ks_npy_fill fill,
                         void *ctx)
{
    ks_out_file o;
    int rc = ks_out_open(&o, path);
    if (rc) return rc;
    if ((rc = ks_npy_put_records(&o, descr, count, itemsize, fill, ctx))) {
        ks_out_abort(&o);
        return rc;
    }
    return ks_out_commit(&o);
}

/* --- reading --- */

/* Finds 'key': in the dict text and returns the text after the colon, or NULL. */
static const char *dict_value(const char *dict, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(dict, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(dict, pat);
    }
    if (!p) return NULL;
    p += strlen(pat);
    while (isspace((unsigned char)*p)) ++p;
    if (*p != ':') return NULL;
    ++p;
    while (isspace((unsigned char)*p)) ++p;
    return p;
}

#define BAD(off, ...) ks_fail_at(path, (off), __VA_ARGS__)

static int parse_header(const char *path, const char *dict, ks_tensor *t, int *fortran)
{
    const char *d = dict_value(dict, "descr");
    if (!d) return BAD(10, "header has no 'descr'");
    static const struct {
        const char *descr;
        ks_dtype dt;
    } known[] = {{"'<f4'", KS_F32}, {"'float32'", KS_F32}, {"'<i4'", KS_I32}, {"'<i8'", KS_I64}, {"'<f8'", KS_F64},
                 {"'<u4'", KS_U32}, {"'<u8'", KS_U64},     {"'<i2'", KS_I16}, {"'<u2'", KS_U16}, {"'|i1'", KS_I8},
                 {"'<i1'", KS_I8},  {"'|u1'", KS_U8},      {"'<u1'", KS_U8},  {"'|b1'", KS_U8}};
    size_t k = 0;
    while (k < sizeof known / sizeof known[0] && strncmp(d, known[k].descr, strlen(known[k].descr))) ++k;
    if (k < sizeof known / sizeof known[0]) {
        t->dtype = known[k].dt;
    } else {
        /* the dtype string alone: up to its closing quote (or the next comma / brace) */
        const char q = *d == '\'' || *d == '"' ? *d : 0;
        const char *from = d + (q != 0), *to = from;
        while (*to && *to != (q ? q : ',') && *to != '}' && to - from < 32) ++to;
        return BAD(10, "unsupported dtype '%.*s' (need a little-endian number: <f4, <f8, <i1..<i8, <u1..<u8)",
                   (int)(to - from), from);
    }
    const char *f = dict_value(dict, "fortran_order");
    if (!f) return BAD(10, "header has no 'fortran_order'");
    if (!strncmp(f, "True", 4)) *fortran = 1; /* first index fastest: transposed after the read */
    else if (strncmp(f, "False", 5)) return BAD(10, "'fortran_order' is neither True nor False");
    const char *s = dict_value(dict, "shape");
    if (!s || *s != '(') return BAD(10, "header has no 'shape' tuple");
    ++s;
    t->ndim = 0;
    for (;;) {
        while (isspace((unsigned char)*s)) ++s;
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s)) return BAD(10, "malformed shape");
        if (t->ndim == KS_MAX_DIMS) return BAD(10, "more than %d dimensions", KS_MAX_DIMS);
        errno = 0;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (errno) return BAD(10, "shape dimension out of range");
        t->shape[t->ndim++] = v;
        s = end;
        while (isspace((unsigned char)*s)) ++s;
        if (*s == ',') ++s;
        else if (*s != ')') return BAD(10, "malformed shape");
    }
    return KS_OK;
}

/* Fortran-order data (the first index fastest: numpy writes it for a transposed or
 * broadcast result, and np.argwhere's) into C order, in place of t->data */
static int to_c_order(ks_tensor *t)
{
    const size_t es = ks_dtype_size(t->dtype);
    const int64_t n = ks_tensor_numel(t);
    unsigned char *c = malloc((size_t)n * es), *src = t->data;
    if (!c) return KS_ENOMEM;
    int64_t idx[KS_MAX_DIMS] = {0}; /* the C-order position k's index, last dimension fastest */
    for (int64_t k = 0; k < n; ++k) {
        int64_t at = 0, stride = 1;
        for (int d = 0; d < t->ndim; ++d) at += idx[d] * stride, stride *= t->shape[d];
        memcpy(c + (size_t)k * es, src + (size_t)at * es, es);
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->shape[d]; --d) idx[d] = 0;
    }
    free(t->data);
    t->data = c;
    return KS_OK;
}

int ks_npy_read(const char *path, ks_tensor *t)
{
    unsigned char pre[12];
    char *dict = NULL;
    int rc = KS_OK;
    memset(t, 0, sizeof *t);
    FILE *f = ks_in_fopen(path); /* a FIFO is refused, not waited on */
    if (!f) return KS_EIO;
    if (fseek(f, 0, SEEK_END) != 0) {
        rc = ks_fail(KS_EIO, "%s: cannot seek", path);
        goto out;
    }
    long size = ftell(f);
    rewind(f);
    if (size < 10 || fread(pre, 1, 10, f) != 10) {
        rc = BAD(0, "file too short for a .npy header");
        goto out;
    }
    if (memcmp(pre, MAGIC, 6)) {
        rc = BAD(0, "not a .npy file (bad magic)");
        goto out;
    }
    long hlen, hstart;
    if (pre[6] == 1) {
        hlen = pre[8] | (long)pre[9] << 8;
        hstart = 10;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (size < 12 || fread(pre + 10, 1, 2, f) != 2) {
            rc = BAD(8, "truncated header length");
            goto out;
        }
        hlen = pre[8] | (long)pre[9] << 8 | (long)pre[10] << 16 | (long)pre[11] << 24;
        hstart = 12;
    } else {
        rc = BAD(6, "unsupported .npy version %d.%d", pre[6], pre[7]);
        goto out;
    }
    if (hlen <= 0 || hstart + hlen > size) {
        rc = BAD(8, "header length %ld runs past the end of the file (%ld bytes)", hlen, size);
        goto out;
    }
    dict = malloc((size_t)hlen + 1);
    if (!dict) {
        rc = ks_fail(KS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (fread(dict, 1, (size_t)hlen, f) != (size_t)hlen) {
        rc = BAD(hstart, "truncated header");
        goto out;
    }
    dict[hlen] = '\0';
    if (strlen(dict) != (size_t)hlen || dict[0] != '{') {
        rc = BAD(hstart, "header is not a dict");
        goto out;
    }
    int fortran = 0;
    rc = parse_header(path, dict, t, &fortran);
    if (rc) goto out;
    int64_t n = ks_tensor_numel(t);
    if (n < 0) {
        rc = BAD(hstart, "shape overflows");
        goto out;
    }
    long data_off = hstart + hlen;
    if ((int64_t)(size - data_off) != n * (int64_t)ks_dtype_size(t->dtype)) {
        rc = BAD(data_off, "data is %ld bytes but shape needs %lld", size - data_off,
                 (long long)(n * (int64_t)ks_dtype_size(t->dtype)));
        goto out;
    }
    rc = ks_tensor_alloc(t);
    if (rc) goto out;
    if (n && fread(t->data, ks_dtype_size(t->dtype), (size_t)n, f) != (size_t)n) {
        rc = ks_fail(KS_EIO, "%s: read failed", path);
        goto out;
    }
    if (fortran && t->ndim > 1 && n && (rc = to_c_order(t))) rc = ks_fail(rc, "%s: out of memory", path);
out:
    if (rc) ks_tensor_free(t);
    free(dict);
    fclose(f);
    return rc;
}
