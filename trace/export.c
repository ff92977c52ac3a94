#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernels/core/ks_error.h"
#include "ks_file.h"
#include "npy.h"

/* Packed, little-endian; byte offsets in the comments. */
const char KS_EVENTS_DESCR[] =
    "[('kind', 'u1'), ('flags', 'u1'), ('site', '<u2'), ('tensor', 'u1'), ('tap', '<u2'), "
    "('block', '<u4'), ('thread', '<u4'), ('iter', '<u4'), ('seq', '<u4'), ('index', '<i8'), "
    "('offset', '<i8'), ('plane', '<i4'), ('y', '<i4'), ('x', '<i4'), ('value', '<f4'), "
    "('fy', '<f4'), ('fx', '<f4'), ('w', '<f4', (4,)), ('field', '<i4', (8,))]";

#define PUT(off, v)                            \
    do {                                       \
        __typeof__(v) v_ = (v);                \
        memcpy(row + (off), &v_, sizeof v_);   \
    } while (0)

static void fill_event(void *ctx, int64_t i, unsigned char *row)
{
    const ks_event *e = &((const ks_event *)ctx)[i];
    PUT(0, e->kind);      /* 0 */
    PUT(1, e->flags);     /* 1 */
    PUT(2, e->site);      /* 2..3 */
    PUT(4, e->tensor);    /* 4 */
    PUT(5, e->tap);       /* 5..6 */
    PUT(7, e->block);     /* 7..10 */
    PUT(11, e->thread);   /* 11..14 */
    PUT(15, e->iter);     /* 15..18 */
    PUT(19, e->seq);      /* 19..22 */
    PUT(23, e->index);    /* 23..30 */
    int64_t offset = -1;
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        offset = e->u.access.offset;
        PUT(39, e->u.access.plane);
        PUT(43, e->u.access.y);
        PUT(47, e->u.access.x);
        PUT(51, e->u.access.value);
    } else if (e->kind == KS_EV_SAMPLE) {
        PUT(39, e->u.sample.plane);
        PUT(51, e->u.sample.value);
        PUT(55, e->u.sample.y);
        PUT(59, e->u.sample.x);
        memcpy(row + 63, e->u.sample.w, 16); /* 63..78 */
    } else if (e->kind == KS_EV_WORK) {
        memcpy(row + 79, e->u.field, 32); /* 79..110 */
    }
    PUT(31, offset); /* 31..38 */
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    return KS_OK;
}

int ks_trace_export_npy(const ks_trace *tr, const char *dir)
{
    char path[4400];
    int rc = make_dir(dir);
    if (rc) return rc;
    for (int i = 0; i < tr->ntensors && !rc; ++i) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, tr->tensors[i].name);
        rc = ks_npy_write(path, &tr->tensors[i]);
    }
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/events.npy", dir);
    rc = ks_npy_write_records(path, KS_EVENTS_DESCR, (int64_t)tr->nevents, KS_EVENTS_ROW,
                              fill_event, (void *)tr->events);
    if (rc) return rc;
    /* the header exactly as stored in the trace */
    ks_out_file o;
    const unsigned char *base = tr->map;
    uint32_t hlen = (uint32_t)base[12] | (uint32_t)base[13] << 8 | (uint32_t)base[14] << 16 |
                    (uint32_t)base[15] << 24;
    snprintf(path, sizeof path, "%s/header.json", dir);
    rc = ks_out_open(&o, path);
    if (!rc) rc = ks_out_write(&o, base + KS_KST_PREAMBLE, hlen);
    if (!rc) rc = ks_out_write(&o, "\n", 1);
    if (rc) {
        if (o.f) ks_out_abort(&o);
        return rc;
    }
    return ks_out_commit(&o);
}
