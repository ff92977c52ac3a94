#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

#define PUT(off, v)                          \
    do {                                     \
        __typeof__(v) v_ = (v);              \
        memcpy(row + (off), &v_, sizeof v_); \
    } while (0)

/* The events row by row: from the loaded array, or (a lazily opened trace) chunk by
 * chunk as the rows reach it, so an export's memory is one chunk's. */
typedef struct event_source {
    ks_trace *tr;
    uint64_t first; /* the event number of tr->events[0] */
    int failed;     /* a chunk did not decode: the export is abandoned */
} event_source;

static const ks_event *event_at(event_source *src, int64_t i)
{
    ks_trace *tr = src->tr;
    const uint64_t at = (uint64_t)i;
    if (at >= src->first && at - src->first < tr->nevents) return &tr->events[at - src->first];
    const uint64_t k = at / tr->chunk_events;
    if (src->failed || ks_trace_load_chunks(tr, k, 1) || at - k * tr->chunk_events >= tr->nevents) {
        src->failed = 1;
        return NULL;
    }
    src->first = k * tr->chunk_events;
    return &tr->events[at - src->first];
}

static void fill_event(void *ctx, int64_t i, unsigned char *row)
{
    const ks_event *e = event_at(ctx, i);
    if (!e) return;     /* the row stays zero; the export fails */
    PUT(0, e->kind);    /* 0 */
    PUT(1, e->flags);   /* 1 */
    PUT(2, e->site);    /* 2..3 */
    PUT(4, e->tensor);  /* 4 */
    PUT(5, e->tap);     /* 5..6 */
    PUT(7, e->block);   /* 7..10 */
    PUT(11, e->thread); /* 11..14 */
    PUT(15, e->iter);   /* 15..18 */
    PUT(19, e->seq);    /* 19..22 */
    PUT(23, e->index);  /* 23..30 */
    int64_t offset = -1;
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        offset = e->u.access.offset;
        PUT(39, e->u.access.plane);
        PUT(43, e->u.access.y);
        PUT(47, e->u.access.x);
        const float v = (float)ks_access_value(&e->u.access, e->flags); /* an integer past 2^24: rounded */
        PUT(51, v);
    } else if (e->kind == KS_EV_SAMPLE) {
        PUT(39, e->u.sample.plane);
        PUT(51, e->u.sample.value);
        PUT(55, e->u.sample.y);
        PUT(59, e->u.sample.x);
        memcpy(row + 63, e->u.sample.w, 16); /* 63..78 */
    } else if (e->kind == KS_EV_REGION) {    /* y, x: the first corner; w: y1, x1, rows, cols */
        const float w[4] = {e->u.region.y1, e->u.region.x1, e->u.region.rows, e->u.region.cols};
        PUT(39, e->u.region.plane);
        PUT(55, e->u.region.y0);
        PUT(59, e->u.region.x0);
        memcpy(row + 63, w, 16);
    } else if (e->kind == KS_EV_WORK) {
        memcpy(row + 79, e->u.field, 32); /* 79..110 */
    }
    PUT(31, offset); /* 31..38 */
}

/* Every file of the export is written to its temporary first; only when all are whole
 * are they renamed into place, so a failure part-way leaves none of them behind (and
 * removes DIR when the export created it). */
/* Every file name once: two tensors of one name, or one named `events`, would make two
 * files of one name and the second would replace the first (silently dropping a tensor);
 * no file over the trace being exported. Checked before anything is made. */
static int names_ok(const ks_trace *tr, const char *dir)
{
    char path[4400];
    const char *what = tr->path[0] ? tr->path : "the trace";
    for (int i = 0; i < tr->ntensors; ++i) {
        if (!strcmp(tr->tensors[i].name, "events"))
            return ks_fail(KS_EINVAL,
                           "%s: tensor %d is named 'events', the name of the events' file: export --npy "
                           "cannot write both",
                           what, i);
        for (int j = 0; j < i; ++j)
            if (!strcmp(tr->tensors[i].name, tr->tensors[j].name))
                return ks_fail(KS_EINVAL,
                               "%s: tensors %d and %d are both named '%s': export --npy cannot write "
                               "both as %s.npy",
                               what, j, i, tr->tensors[i].name, tr->tensors[i].name);
    }
    for (int i = 0; tr->path[0] && i < tr->ntensors + 2; ++i) {
        if (i < tr->ntensors) snprintf(path, sizeof path, "%s/%s.npy", dir, tr->tensors[i].name);
        else snprintf(path, sizeof path, "%s/%s", dir, i == tr->ntensors ? "events.npy" : "header.json");
        if (ks_same_path(path, tr->path)) return ks_fail(KS_EINVAL, "%s would replace the trace %s", path, tr->path);
    }
    return KS_OK;
}

int ks_trace_export_npy(ks_trace *tr, const char *dir)
{
    enum { MAX_FILES = KS_MAX_TENSORS + 2 };
    char path[4400];
    int rc = names_ok(tr, dir);
    if (rc) return rc;
    ks_out_file *out = calloc(MAX_FILES, sizeof *out);
    int n = 0, created = 0;
    if (!out) return ks_fail(KS_ENOMEM, "%s: out of memory", dir);
    if (mkdir(dir, 0777) == 0) created = 1;
    else if (errno != EEXIST) rc = ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    for (int i = 0; i < tr->ntensors && !rc; ++i) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, tr->tensors[i].name);
        if ((rc = ks_out_open(&out[n], path))) break;
        n++;
        if (!(rc = ks_npy_put(&out[n - 1], &tr->tensors[i]))) rc = ks_out_finish(&out[n - 1]);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/events.npy", dir);
        if (!(rc = ks_out_open(&out[n], path))) {
            n++;
            /* a version 2 file opened lazily gives its chunks on demand; anything else (a
             * run's trace, version 1, a whole decode) has its events loaded */
            const int lazy = tr->map && tr->version == 2 && tr->nevents != tr->file_events;
            const uint64_t count = lazy ? tr->file_events : tr->nevents;
            event_source src = {tr, 0, 0};
            if (lazy) tr->nevents = 0;
            rc = ks_npy_put_records(&out[n - 1], KS_EVENTS_DESCR, (int64_t)count, KS_EVENTS_ROW, fill_event, &src);
            if (!rc && src.failed) rc = KS_EFORMAT; /* ks_error_message() names the chunk */
            if (!rc) rc = ks_out_finish(&out[n - 1]);
        }
    }
    if (!rc) { /* the header exactly as stored in the trace */
        const unsigned char *base = tr->map;
        uint32_t hlen = (uint32_t)base[12] | (uint32_t)base[13] << 8 | (uint32_t)base[14] << 16 |
                        (uint32_t)base[15] << 24;
        snprintf(path, sizeof path, "%s/header.json", dir);
        if (!(rc = ks_out_open(&out[n], path))) {
            n++;
            rc = ks_out_write(&out[n - 1], base + KS_KST_PREAMBLE, hlen);
            if (!rc) rc = ks_out_write(&out[n - 1], "\n", 1);
            if (!rc) rc = ks_out_finish(&out[n - 1]);
        }
    }
    for (int i = 0; i < n; ++i) {
        if (rc) ks_out_abort(&out[i]); /* also the ones after a failed rename */
        else rc = ks_out_commit(&out[i]);
    }
    if (rc && created) rmdir(dir);
    free(out);
    return rc;
}
