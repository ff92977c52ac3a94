/* crafted_trace.h - hand-made traces for the reliability tests: a launch, tensors and
 * events chosen by the test, written with the ordinary writer (which writes whatever
 * numbers it is given), so the reader, check and the viewer see exactly what an attacker
 * could put in a file. */
#ifndef KS_CRAFTED_TRACE_H
#define KS_CRAFTED_TRACE_H

#include "../trace/crc32.h"
#include "../trace/kst.h"
#include "test_util.h"

#define CT_MAX_EVENTS 64

typedef struct ct_trace {
    ks_trace tr;
    ks_event ev[CT_MAX_EVENTS];
    float data[KS_MAX_TENSORS][64];
} ct_trace;

/* One work site (site 0) with one digit field `i` = index; a read site (1) and a write
 * site (2) touching tensors 0 and 1 when they exist. */
static inline void ct_init(ct_trace *c, int threads, int64_t blocks, int64_t work_items)
{
    ks_trace *tr = &c->tr;
    memset(c, 0, sizeof *c);
    snprintf(tr->op, sizeof tr->op, "crafted");
    snprintf(tr->variant, sizeof tr->variant, "traced");
    snprintf(tr->device, sizeof tr->device, "sim");
    snprintf(tr->params, sizeof tr->params, "{}");
    tr->threads = threads;
    tr->blocks = blocks;
    tr->block_cap = -1;
    tr->work_items = work_items;
    tr->filter = ks_filter_all();
    tr->nsites = 3;
    snprintf(tr->sites[0].name, KS_NAME_LEN, "c.work");
    tr->sites[0].kind = KS_EV_WORK;
    tr->sites[0].tensor = -1;
    tr->sites[0].nfields = 1;
    snprintf(tr->sites[0].fields[0].name, sizeof tr->sites[0].fields[0].name, "i");
    snprintf(tr->sites[0].fields[0].expr, sizeof tr->sites[0].fields[0].expr, "index");
    tr->sites[0].fields[0].digit = 1;
    tr->sites[0].fields[0].stride = 1;
    snprintf(tr->sites[1].name, KS_NAME_LEN, "c.read");
    tr->sites[1].kind = KS_EV_READ;
    tr->sites[1].tensor = 0;
    snprintf(tr->sites[2].name, KS_NAME_LEN, "c.write");
    tr->sites[2].kind = KS_EV_WRITE;
    tr->sites[2].tensor = 1;
    tr->events = c->ev;
}

/* Tensor i: f32 of the given shape (at most 64 elements of data), values 1, 2, 3, ... */
static inline void ct_tensor(ct_trace *c, int i, const char *name, int role, int ndim, const int64_t *shape)
{
    ks_tensor *t = &c->tr.tensors[i];
    snprintf(t->name, KS_NAME_LEN, "%s", name);
    t->dtype = KS_F32;
    t->ndim = ndim;
    for (int d = 0; d < ndim; ++d) t->shape[d] = shape[d];
    t->data = c->data[i];
    for (int k = 0; k < 64; ++k) c->data[i][k] = (float)(k + 1);
    c->tr.roles[i] = role;
    if (i >= c->tr.ntensors) c->tr.ntensors = i + 1;
}

static inline ks_event *ct_event(ct_trace *c, int kind, int site, int64_t index, uint32_t block, uint32_t thread,
                                 uint32_t iter)
{
    ck_assert_uint_lt(c->tr.nevents, CT_MAX_EVENTS);
    ks_event *e = &c->ev[c->tr.nevents++];
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->site = (uint16_t)site;
    e->tensor = kind == KS_EV_WORK ? 255 : (uint8_t)c->tr.sites[site].tensor;
    e->block = block;
    e->thread = thread;
    e->iter = iter;
    e->index = index;
    if (kind == KS_EV_WORK) e->u.field[0] = (int32_t)index;
    return e;
}

/* A read or write of element (plane, y, x) of its site's tensor, in bounds or not. */
static inline ks_event *ct_access(ct_trace *c, int kind, int64_t index, int plane, int y, int x)
{
    ks_event *e = ct_event(c, kind, kind == KS_EV_READ ? 1 : 2, index, 0, (uint32_t)index, 0);
    const ks_tensor *t = &c->tr.tensors[c->tr.sites[e->site].tensor];
    const int64_t H = t->shape[t->ndim - 2], W = t->shape[t->ndim - 1];
    e->u.access.plane = plane;
    e->u.access.y = y;
    e->u.access.x = x;
    e->u.access.offset = ((int64_t)plane * H + y) * W + x;
    e->u.access.value = e->u.access.offset >= 0 && e->u.access.offset < 64 ? c->data[e->tensor][e->u.access.offset] : 0;
    return e;
}

/* Writes the trace to path and opens it again; returns ks_trace_open's status. */
static inline int ct_roundtrip(ct_trace *c, const char *path, ks_trace *out)
{
    ck_assert_int_eq(ks_trace_write(path, &c->tr), KS_OK);
    return ks_trace_open(path, out);
}

/* Replaces the first `from` in the header of the trace at path with `to`, moving the
 * data area to the new alignment and fixing the header length and CRC: a header the
 * writer would never write, with every section still where the header says. */
static inline void ct_patch(const char *path, const char *from, const char *to)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *old = malloc((size_t)size);
    ck_assert_int_eq(fread(old, 1, (size_t)size, f), size);
    fclose(f);
    uint32_t hlen = (uint32_t)old[12] | (uint32_t)old[13] << 8 | (uint32_t)old[14] << 16 | (uint32_t)old[15] << 24;
    char *h = malloc(hlen + 1);
    memcpy(h, old + 24, hlen);
    h[hlen] = 0;
    char *at = strstr(h, from);
    ck_assert_msg(at != NULL, "ct_patch: no '%s' in the header", from);
    size_t nlen = hlen - strlen(from) + strlen(to);
    char *nh = malloc(nlen + 1);
    snprintf(nh, nlen + 1, "%.*s%s%s", (int)(at - h), h, to, at + strlen(from));
    const long old_data = (24 + (long)hlen + 63) / 64 * 64, new_data = (24 + (long)nlen + 63) / 64 * 64;
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned char pre[24];
    memcpy(pre, old, 24);
    uint32_t crc = ks_crc32(0, nh, nlen);
    for (int i = 0; i < 4; ++i)
        pre[12 + i] = (unsigned char)(nlen >> (8 * i)), pre[16 + i] = (unsigned char)(crc >> (8 * i));
    static const unsigned char zeros[64];
    ck_assert_int_eq(fwrite(pre, 1, 24, f), 24);
    ck_assert_int_eq(fwrite(nh, 1, nlen, f), nlen);
    ck_assert_int_eq(fwrite(zeros, 1, (size_t)(new_data - 24 - (long)nlen), f), new_data - 24 - (long)nlen);
    ck_assert_int_eq(fwrite(old + old_data, 1, (size_t)(size - old_data), f), size - old_data);
    ck_assert_int_eq(fclose(f), 0);
    free(old), free(h), free(nh);
}

#endif
