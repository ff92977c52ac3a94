/* kst_read.c - maps a .kst and validates it; trusts nothing in the file. */
#define _POSIX_C_SOURCE 200809L
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "crc32.h"
#include "ks_file.h"
#include "kst.h"
#include "kst_codec.h"

#define MAX_EXACT 9007199254740992.0 /* 2^53: the largest integer a JSON double holds */
/* Launch bounds: an event's block is a u32, so blocks * threads stays below 2^42 and
 * every product of header numbers that check, step and the viewer form fits int64. */
#define MAX_BLOCKS 4294967295.0
#define MAX_FIELD_BIAS 2147483648.0 /* fields are i32: a bias beyond that matches nothing */

typedef struct reader {
    const char *path;
    const unsigned char *base;
    uint64_t size;
} reader;

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Header errors are reported at the header's offset with the JSON path of the value. */
static int hbad(const reader *r, const char *where, const char *what)
{
    return ks_fail_at(r->path, KS_KST_PREAMBLE, "header: %s %s", where, what);
}

static int get_int(const reader *r, const cJSON *o, const char *key, double lo, double hi, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return hbad(r, key, "is missing");
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)) return hbad(r, key, "is not an integer");
    if (v->valuedouble < lo || v->valuedouble > hi || fabs(v->valuedouble) > MAX_EXACT)
        return hbad(r, key, "is out of range");
    *out = (int64_t)v->valuedouble;
    return KS_OK;
}

static int get_str(const reader *r, const cJSON *o, const char *key, char *buf, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return hbad(r, key, "is missing");
    if (!cJSON_IsString(v)) return hbad(r, key, "is not a string");
    if (strlen(v->valuestring) >= n) return hbad(r, key, "is too long");
    snprintf(buf, n, "%s", v->valuestring);
    return KS_OK;
}

static const cJSON *get_obj(const cJSON *o, const char *key, int array)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v && (array ? cJSON_IsArray(v) : cJSON_IsObject(v)) ? v : NULL;
}

static int get_range(const reader *r, const cJSON *filter, const char *key, int64_t *lo, int64_t *hi)
{
    const cJSON *a = get_obj(filter, key, 1);
    if (!a || cJSON_GetArraySize(a) != 2) return hbad(r, key, "is not a [lo, hi] pair");
    const cJSON *l = cJSON_GetArrayItem(a, 0), *h = cJSON_GetArrayItem(a, 1);
    if (!cJSON_IsNumber(l) || !cJSON_IsNumber(h) || l->valuedouble < 0 || l->valuedouble > MAX_EXACT ||
        h->valuedouble < -1 || h->valuedouble > MAX_EXACT)
        return hbad(r, key, "range is out of range");
    *lo = (int64_t)l->valuedouble;
    *hi = h->valuedouble < 0 ? INT64_MAX : (int64_t)h->valuedouble;
    return KS_OK;
}

static int parse_site(const reader *r, const cJSON *o, ks_site *s)
{
    int64_t v;
    char kind[16];
    int rc = get_str(r, o, "name", s->name, sizeof s->name);
    if (!rc) rc = get_str(r, o, "kind", kind, sizeof kind);
    if (rc) return rc;
    s->kind = ks_event_kind_parse(kind);
    if (!s->kind) return hbad(r, "site kind", "is unknown");
    if ((rc = get_int(r, o, "tensor", -1, KS_MAX_TENSORS - 1, &v))) return rc;
    s->tensor = (int)v;
    if ((rc = get_int(r, o, "writes_per_element", 0, 1 << 30, &v))) return rc;
    s->writes_per_element = (int)v;
    s->line = s->col = 0, s->code[0] = 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "line")) { /* a .cu site: its source location */
        if ((rc = get_int(r, o, "line", 1, INT32_MAX, &v))) return rc;
        s->line = (int)v;
        if ((rc = get_int(r, o, "col", 0, INT32_MAX, &v))) return rc;
        s->col = (int)v;
        if ((rc = get_str(r, o, "code", s->code, sizeof s->code))) return rc;
    }
    const cJSON *fields = get_obj(o, "fields", 1);
    if (!fields) return hbad(r, "site fields", "is not an array");
    if (cJSON_GetArraySize(fields) > KS_WORK_FIELDS) return hbad(r, "site fields", "has more than 8 entries");
    s->nfields = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fields)
    {
        ks_field *d = &s->fields[s->nfields++];
        const cJSON *digit = cJSON_GetObjectItemCaseSensitive(f, "digit");
        if (!cJSON_IsObject(f)) return hbad(r, "site field", "is not an object");
        if ((rc = get_str(r, f, "name", d->name, sizeof d->name))) return rc;
        if ((rc = get_str(r, f, "expr", d->expr, sizeof d->expr))) return rc;
        if (!cJSON_IsBool(digit)) return hbad(r, "field digit", "is not a boolean");
        d->digit = cJSON_IsTrue(digit);
        if ((rc = get_int(r, f, "stride", 0, MAX_EXACT, &d->stride))) return rc;
        if ((rc = get_int(r, f, "extent", 0, MAX_EXACT, &d->extent))) return rc;
        if ((rc = get_int(r, f, "bias", -MAX_FIELD_BIAS, MAX_FIELD_BIAS, &d->bias))) return rc;
        if (d->digit && d->stride < 1) return hbad(r, "field stride", "must be >= 1 for a digit");
    }
    return KS_OK;
}

/* Checks that a section lies inside the file, aligned; records where. */
static int check_section(const reader *r, uint64_t data_start, const ks_section *s, const char *name)
{
    if (s->offset % KS_KST_ALIGN)
        return ks_fail_at(r->path, (long long)(data_start + s->offset), "section %s is not %d-byte aligned", name,
                          KS_KST_ALIGN);
    if (data_start + s->offset > r->size || s->length > r->size - data_start - s->offset)
        return ks_fail_at(r->path, (long long)(data_start + s->offset),
                          "section %s (%llu bytes) runs past the end of the file (%llu bytes)", name,
                          (unsigned long long)s->length, (unsigned long long)r->size);
    return KS_OK;
}

/* Tensor names become file names (export writes DIR/<name>.npy): letters, digits, '_',
 * '-' and '.', not starting with '.', so no name reaches outside DIR or hides a file. */
static int plain_name(const char *s)
{
    if (!*s || *s == '.') return 0;
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            return 0;
    return 1;
}

static int parse_tensor(const reader *r, const cJSON *o, ks_trace *tr, int i)
{
    ks_tensor *t = &tr->tensors[i];
    ks_section *s = &tr->tensor_sec[i];
    char role[16], dtype[8];
    int64_t v;
    int rc = get_str(r, o, "name", t->name, sizeof t->name);
    if (!rc) rc = get_str(r, o, "role", role, sizeof role);
    if (!rc) rc = get_str(r, o, "dtype", dtype, sizeof dtype);
    if (rc) return rc;
    if (!plain_name(t->name)) return hbad(r, "tensor name", "is not a plain name (letters, digits, _ - .)");
    if (!strcmp(role, "input")) tr->roles[i] = KS_ROLE_INPUT;
    else if (!strcmp(role, "output")) tr->roles[i] = KS_ROLE_OUTPUT;
    else return hbad(r, "tensor role", "is not input or output");
    const int dt = ks_dtype_parse(dtype);
    if (dt < 0) return hbad(r, "tensor dtype", "is not one of f32, i32, i64, f64, u32, u64, i16, u16, i8, u8");
    t->dtype = (ks_dtype)dt;
    const cJSON *shape = get_obj(o, "shape", 1);
    if (!shape) return hbad(r, "tensor shape", "is not an array");
    if (cJSON_GetArraySize(shape) > KS_MAX_DIMS) return hbad(r, "tensor shape", "has more than 6 dimensions");
    t->ndim = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape)
    {
        if (!cJSON_IsNumber(d) || d->valuedouble != floor(d->valuedouble) || d->valuedouble < 0 ||
            d->valuedouble > MAX_EXACT)
            return hbad(r, "tensor shape", "has a dimension that is not a size");
        t->shape[t->ndim++] = (int64_t)d->valuedouble;
    }
    int64_t numel = ks_tensor_numel(t);
    if (numel < 0) return hbad(r, "tensor shape", "overflows");
    /* numel * 8 could wrap around to a small length: bound the count by the file first */
    if ((uint64_t)numel > r->size) return hbad(r, "tensor shape", "has more elements than the file has bytes");
    if ((rc = get_int(r, o, "offset", 0, MAX_EXACT, &v))) return rc;
    s->offset = (uint64_t)v;
    if ((rc = get_int(r, o, "length", 0, MAX_EXACT, &v))) return rc;
    s->length = (uint64_t)v;
    if ((rc = get_int(r, o, "crc32", 0, 4294967295.0, &v))) return rc;
    s->crc32 = (uint32_t)v;
    if (s->length != (uint64_t)numel * ks_dtype_size(t->dtype))
        return ks_fail_at(r->path, KS_KST_PREAMBLE,
                          "header: tensor %s length %llu does not match its shape (%lld elements)", t->name,
                          (unsigned long long)s->length, (long long)numel);
    if ((rc = check_section(r, tr->data_start, s, t->name))) return rc;
    t->data = (void *)(r->base + tr->data_start + s->offset);
    return KS_OK;
}

int ks_event_fits(const ks_trace *tr, const ks_event *e)
{
    if (e->site >= tr->nsites || e->kind != tr->sites[e->site].kind) return 0;
    switch (e->kind) {
    case KS_EV_READ:
    case KS_EV_WRITE:
    case KS_EV_SAMPLE:
    case KS_EV_REGION: return e->tensor < tr->ntensors;
    default: return 1;
    }
}

static int overlaps(const ks_section *a, const ks_section *b)
{
    return a->length && b->length && a->offset < b->offset + b->length && b->offset < a->offset + a->length;
}

static int parse_events_v1(const reader *r, const cJSON *ev, ks_trace *tr)
{
    int64_t v;
    int rc;
    if ((rc = get_int(r, ev, "record_size", 0, 1e9, &v))) return rc;
    if (v != (int64_t)sizeof(ks_event)) return hbad(r, "events record_size", "is not 64");
    if ((rc = get_int(r, ev, "count", 0, MAX_EXACT, &v))) return rc;
    tr->nevents = (uint64_t)v;
    if ((rc = get_int(r, ev, "dropped", 0, MAX_EXACT, &v))) return rc;
    tr->dropped = (uint64_t)v;
    if ((rc = get_int(r, ev, "offset", 0, MAX_EXACT, &v))) return rc;
    tr->event_sec.offset = (uint64_t)v;
    if ((rc = get_int(r, ev, "length", 0, MAX_EXACT, &v))) return rc;
    tr->event_sec.length = (uint64_t)v;
    if ((rc = get_int(r, ev, "crc32", 0, 4294967295.0, &v))) return rc;
    tr->event_sec.crc32 = (uint32_t)v;
    tr->file_events = tr->nevents;
    if (tr->event_sec.length / sizeof(ks_event) != tr->nevents || tr->event_sec.length % sizeof(ks_event))
        return hbad(r, "events length", "does not match count * 64");
    if ((rc = check_section(r, tr->data_start, &tr->event_sec, "events"))) return rc;
    tr->events = (const ks_event *)(r->base + tr->data_start + tr->event_sec.offset);
    return KS_OK;
}

/* Version 2: the chunk index is checked whole (its CRC too: it is small), then every
 * chunk is decoded into tr->decoded; a chunk's own CRC waits for ks_trace_verify. */
static int parse_events_v2(const reader *r, const cJSON *ev, ks_trace *tr)
{
    int64_t v;
    char enc[16];
    int rc = get_str(r, ev, "encoding", enc, sizeof enc);
    if (rc) return rc;
    if (strcmp(enc, "kst2") && strcmp(enc, "kst2+zstd")) return hbad(r, "events encoding", "is not kst2 or kst2+zstd");
    tr->zstd = !strcmp(enc, "kst2+zstd");
    if ((rc = get_int(r, ev, "count", 0, MAX_EXACT, &v))) return rc;
    tr->nevents = tr->file_events = (uint64_t)v;
    if ((rc = get_int(r, ev, "dropped", 0, MAX_EXACT, &v))) return rc;
    tr->dropped = (uint64_t)v;
    if ((rc = get_int(r, ev, "chunk_events", 1, 1 << 20, &v))) return rc;
    tr->chunk_events = (uint64_t)v;
    if ((rc = get_int(r, ev, "offset", 0, MAX_EXACT, &v))) return rc;
    tr->event_sec.offset = (uint64_t)v;
    if ((rc = get_int(r, ev, "length", 0, MAX_EXACT, &v))) return rc;
    tr->event_sec.length = (uint64_t)v;
    const cJSON *ix = get_obj(ev, "index", 0);
    if (!ix) return hbad(r, "events index", "is not an object");
    if ((rc = get_int(r, ix, "offset", 0, MAX_EXACT, &v))) return rc;
    tr->index_sec.offset = (uint64_t)v;
    if ((rc = get_int(r, ix, "length", 0, MAX_EXACT, &v))) return rc;
    tr->index_sec.length = (uint64_t)v;
    if ((rc = get_int(r, ix, "crc32", 0, 4294967295.0, &v))) return rc;
    tr->index_sec.crc32 = (uint32_t)v;
    if ((rc = check_section(r, tr->data_start, &tr->event_sec, "events"))) return rc;
    if ((rc = check_section(r, tr->data_start, &tr->index_sec, "index"))) return rc;
    /* every record takes at least 2 bytes: the count cannot ask for more memory than that.
     * A zstd frame can inflate thousands of times, so a compressed file's chunks hold at
     * most KS_KST2_CHUNK events: its count is bounded by its index (32 bytes a chunk) */
    if (!tr->zstd && tr->nevents > tr->event_sec.length / KS_KST2_MIN_RECORD)
        return hbad(r, "events count", "is more than its section's bytes could hold");
    if (tr->zstd && tr->chunk_events > KS_KST2_CHUNK)
        return hbad(r, "events chunk_events", "is more than 4096 in a file of zstd chunks");
    const uint64_t nchunks = (tr->nevents + tr->chunk_events - 1) / tr->chunk_events;
    if (tr->index_sec.length != nchunks * KS_KST2_ENTRY)
        return hbad(r, "events index length", "does not match one 32-byte entry per chunk");
    if (overlaps(&tr->index_sec, &tr->event_sec))
        return ks_fail_at(r->path, (long long)(tr->data_start + tr->index_sec.offset),
                          "section index overlaps section events");
    const unsigned char *index = r->base + tr->data_start + tr->index_sec.offset;
    if (ks_crc32(0, index, tr->index_sec.length) != tr->index_sec.crc32)
        return ks_fail_at(r->path, (long long)(tr->data_start + tr->index_sec.offset), "index checksum mismatch");
    uint64_t at = 0; /* the chunks follow each other and fill the section: checked once, here */
    for (uint64_t k = 0; k < nchunks; ++k) {
        ks_kst2_entry e;
        ks_kst2_entry_get(index + k * KS_KST2_ENTRY, &e);
        if (e.offset != at || e.length > tr->event_sec.length - at)
            return ks_fail_at(r->path, (long long)(tr->data_start + tr->index_sec.offset + k * KS_KST2_ENTRY),
                              "chunk %llu does not follow the one before inside the events", (unsigned long long)k);
        at += e.length;
    }
    if (at != tr->event_sec.length)
        return ks_fail_at(r->path, (long long)(tr->data_start + tr->event_sec.offset + at),
                          "the events section holds bytes after its last chunk");
    tr->events = NULL; /* decoded by ks_trace_open, or chunk by chunk (ks_trace_load_range) */
    tr->nevents = 0;
    return KS_OK;
}

/* Decodes the chunks k0 <= k < k1 whose index range meets [lo, hi] (all of them:
 * INT64_MIN, INT64_MAX, 0, UINT64_MAX) into tr->decoded, in file order; a chunk that does not decode is reported as damaged
 * when its CRC says so. */
/* One thread's share of a whole decode: chunks [k_begin, k_end), each at its own place
 * (chunk k's events start at event k * chunk_events); the first chunk that fails stops it. */
typedef struct decode_job {
    const ks_trace *tr;
    const ks_kst2_ctx *ctx;
    uint64_t k_begin, k_end, k0;
    ks_event *out;
    uint64_t fail_k; /* UINT64_MAX: none */
    size_t bad;
    const char *why;
} decode_job;

static void *decode_span(void *arg)
{
    decode_job *j = arg;
    const ks_trace *tr = j->tr;
    const unsigned char *base = (const unsigned char *)tr->map + tr->data_start;
    unsigned char *scratch = tr->zstd ? malloc(tr->chunk_events * KS_KST2_MAX_RECORD) : NULL; /* a frame inflated */
    for (uint64_t k = j->k_begin; k < j->k_end; ++k) {
        ks_kst2_entry e;
        ks_kst2_entry_get(base + tr->index_sec.offset + k * KS_KST2_ENTRY, &e);
        const uint64_t first = k * tr->chunk_events;
        const uint64_t n = tr->file_events - first < tr->chunk_events ? tr->file_events - first : tr->chunk_events;
        if (ks_kst2_decode_stored(j->ctx, tr->zstd, base + tr->event_sec.offset + e.offset, e.length, scratch,
                                  j->out + (first - j->k0 * tr->chunk_events), (size_t)n, &j->bad, &j->why)) {
            j->fail_k = k;
            break;
        }
    }
    free(scratch);
    return NULL;
}

/* The message for a chunk that did not decode: damage when its CRC fails, else what. */
static int chunk_failed(const ks_trace *tr, uint64_t k, size_t bad, const char *why)
{
    const unsigned char *base = (const unsigned char *)tr->map + tr->data_start;
    ks_kst2_entry e;
    ks_kst2_entry_get(base + tr->index_sec.offset + k * KS_KST2_ENTRY, &e);
    const long long at = (long long)(tr->data_start + tr->event_sec.offset + e.offset);
    if (ks_crc32(0, base + tr->event_sec.offset + e.offset, e.length) != e.crc32) /* damage, not a writer's bug */
        return ks_fail_at(tr->path, at, "events checksum mismatch in chunk %llu", (unsigned long long)k);
    if (tr->zstd && bad == KS_KST2_FRAME_BAD) /* the frame itself */
        return ks_fail_at(tr->path, at, "chunk %llu: %s", (unsigned long long)k, why);
    if (tr->zstd) /* the place is one in the inflated frame */
        return ks_fail_at(tr->path, at, "chunk %llu: %s (byte %zu of its zstd frame inflated)", (unsigned long long)k,
                          why, bad);
    return ks_fail_at(tr->path, at + (long long)bad, "chunk %llu: %s", (unsigned long long)k, why);
}

#define KS_DECODE_THREADS 8

/* Decodes the chunks k0 <= k < k1 whose index range meets [lo, hi] (all of them:
 * INT64_MIN, INT64_MAX, 0, UINT64_MAX) into tr->decoded, in file order. Chunks decode
 * alone, so a whole decode of many is shared among threads (up to 8, the online CPUs);
 * the error reported is the first failing chunk's, as one thread would find it. */
static int decode_chunks(ks_trace *tr, int64_t lo, int64_t hi, uint64_t k0, uint64_t k1)
{
    const unsigned char *base = (const unsigned char *)tr->map + tr->data_start;
    const unsigned char *index = base + tr->index_sec.offset;
    const uint64_t nchunks = tr->index_sec.length / KS_KST2_ENTRY, total = tr->file_events;
    const int all = lo == INT64_MIN && hi == INT64_MAX;
    uint64_t want = 0;
    if (k1 > nchunks) k1 = nchunks;
    if (k0 > k1) k0 = k1;
    for (uint64_t k = k0; k < k1; ++k) {
        ks_kst2_entry e;
        ks_kst2_entry_get(index + k * KS_KST2_ENTRY, &e);
        const uint64_t first = k * tr->chunk_events;
        if (all || (e.index_lo <= hi && e.index_hi >= lo))
            want += total - first < tr->chunk_events ? total - first : tr->chunk_events;
    }
    free(tr->decoded);
    tr->decoded = malloc(want ? want * sizeof(ks_event) : 1);
    tr->events = NULL;
    if (!tr->decoded)
        return ks_fail(KS_ENOMEM, "%s: out of memory for %llu events", tr->path, (unsigned long long)want);
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(tr, &ctx);
    uint64_t got = 0;
    if (all) {
        const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t nt = cpus > 1 ? (uint64_t)cpus : 1;
        if (nt > KS_DECODE_THREADS) nt = KS_DECODE_THREADS;
        if (nt > (k1 - k0) / 16) nt = (k1 - k0) / 16 ? (k1 - k0) / 16 : 1; /* 16 chunks a thread at least */
        decode_job jobs[KS_DECODE_THREADS];
        pthread_t th[KS_DECODE_THREADS];
        int started[KS_DECODE_THREADS] = {0};
        for (uint64_t t = 0; t < nt; ++t) {
            jobs[t] = (decode_job){
                tr, &ctx, k0 + (k1 - k0) * t / nt, k0 + (k1 - k0) * (t + 1) / nt, k0, tr->decoded, UINT64_MAX, 0, NULL};
            started[t] = t > 0 && pthread_create(&th[t], NULL, decode_span, &jobs[t]) == 0;
        }
        for (uint64_t t = 0; t < nt; ++t) /* the first share here, and any thread that did not start */
            if (!started[t]) decode_span(&jobs[t]);
        for (uint64_t t = 0; t < nt; ++t)
            if (started[t]) pthread_join(th[t], NULL);
        for (uint64_t t = 0; t < nt; ++t)
            if (jobs[t].fail_k != UINT64_MAX) return chunk_failed(tr, jobs[t].fail_k, jobs[t].bad, jobs[t].why);
        got = want;
    } else {
        for (uint64_t k = k0; k < k1; ++k) {
            ks_kst2_entry e;
            ks_kst2_entry_get(index + k * KS_KST2_ENTRY, &e);
            if (!(e.index_lo <= hi && e.index_hi >= lo)) continue;
            const uint64_t first = k * tr->chunk_events;
            const uint64_t n = total - first < tr->chunk_events ? total - first : tr->chunk_events;
            size_t bad;
            const char *why;
            if (ks_kst2_decode_stored(&ctx, tr->zstd, base + tr->event_sec.offset + e.offset, e.length, NULL,
                                      tr->decoded + got, (size_t)n, &bad, &why))
                return chunk_failed(tr, k, bad, why);
            got += n;
        }
    }
    tr->events = tr->decoded;
    tr->nevents = got;
    return KS_OK;
}

ks_status ks_trace_load_range(ks_trace *tr, int64_t lo, int64_t hi)
{
    if (tr->version == 1) return KS_OK; /* mapped whole: every event is there */
    return decode_chunks(tr, lo, hi, 0, UINT64_MAX);
}

uint64_t ks_trace_chunks(const ks_trace *tr) { return tr->version == 1 ? 1 : tr->index_sec.length / KS_KST2_ENTRY; }

ks_status ks_trace_load_chunks(ks_trace *tr, uint64_t first, uint64_t count)
{
    if (tr->version == 1) return KS_OK;
    return decode_chunks(tr, INT64_MIN, INT64_MAX, first, count > UINT64_MAX - first ? UINT64_MAX : first + count);
}

static int parse_header(const reader *r, const cJSON *h, ks_trace *tr)
{
    char fmt[32];
    int64_t v;
    int rc;
    if (!cJSON_IsObject(h)) return hbad(r, "root", "is not an object");
    if ((rc = get_str(r, h, "format", fmt, sizeof fmt))) return rc;
    if (strcmp(fmt, "kscope-trace")) return hbad(r, "format", "is not kscope-trace");
    if ((rc = get_int(r, h, "version", 0, 1e9, &v))) return rc;
    if (v != tr->version) return hbad(r, "version", "differs from the preamble's");
    if ((rc = get_str(r, h, "op", tr->op, sizeof tr->op))) return rc;
    if ((rc = get_str(r, h, "variant", tr->variant, sizeof tr->variant))) return rc;
    if ((rc = get_str(r, h, "device", tr->device, sizeof tr->device))) return rc;
    const cJSON *params = get_obj(h, "params", 0);
    if (!params) return hbad(r, "params", "is not an object");
    if (!cJSON_PrintPreallocated((cJSON *)params, tr->params, sizeof tr->params, 0))
        return hbad(r, "params", "is too long");
    const cJSON *launch = get_obj(h, "launch", 0);
    if (!launch) return hbad(r, "launch", "is not an object");
    if ((rc = get_int(r, launch, "threads_per_block", 1, 1024, &v))) return rc;
    tr->threads = (int)v;
    if ((rc = get_int(r, launch, "blocks", 0, MAX_BLOCKS, &tr->blocks))) return rc;
    if ((rc = get_int(r, launch, "block_cap", -1, MAX_BLOCKS, &tr->block_cap))) return rc;
    if ((rc = get_int(r, launch, "work_items", 0, MAX_EXACT, &tr->work_items))) return rc;
    const cJSON *filter = get_obj(h, "filter", 0);
    if (!filter) return hbad(r, "filter", "is not an object");
    if ((rc = get_range(r, filter, "index", &tr->filter.index_lo, &tr->filter.index_hi))) return rc;
    if ((rc = get_range(r, filter, "block", &tr->filter.block_lo, &tr->filter.block_hi))) return rc;
    if ((rc = get_int(r, filter, "every", 1, MAX_EXACT, &tr->filter.every))) return rc;

    const cJSON *tensors = get_obj(h, "tensors", 1);
    if (!tensors) return hbad(r, "tensors", "is not an array");
    if (cJSON_GetArraySize(tensors) > KS_MAX_TENSORS) return hbad(r, "tensors", "has too many entries");
    const cJSON *o;
    cJSON_ArrayForEach(o, tensors)
    {
        if (!cJSON_IsObject(o)) return hbad(r, "tensor", "is not an object");
        if ((rc = parse_tensor(r, o, tr, tr->ntensors))) return rc;
        tr->ntensors++;
    }
    const cJSON *sites = get_obj(h, "sites", 1);
    if (!sites) return hbad(r, "sites", "is not an array");
    if (cJSON_GetArraySize(sites) > KS_MAX_SITES) return hbad(r, "sites", "has too many entries");
    cJSON_ArrayForEach(o, sites)
    {
        ks_site *s = &tr->sites[tr->nsites];
        if (!cJSON_IsObject(o)) return hbad(r, "site", "is not an object");
        if ((rc = parse_site(r, o, s))) return rc;
        if (s->tensor >= tr->ntensors) return hbad(r, "site tensor", "names no tensor");
        if (s->tensor < 0 && s->kind != KS_EV_WORK && s->kind != KS_EV_BARRIER && s->kind != KS_EV_WARP &&
            s->kind != KS_EV_FAULT)
            return hbad(r, "site tensor", "is -1 for a site that touches a tensor");
        tr->nsites++;
    }
    const cJSON *ev = get_obj(h, "events", 0);
    if (!ev) return hbad(r, "events", "is not an object");
    if ((rc = tr->version == 1 ? parse_events_v1(r, ev, tr) : parse_events_v2(r, ev, tr))) return rc;
    for (int i = 0; i < tr->ntensors; ++i) {
        if (overlaps(&tr->tensor_sec[i], &tr->event_sec))
            return ks_fail_at(r->path, (long long)(tr->data_start + tr->event_sec.offset),
                              "section events overlaps tensor %s", tr->tensors[i].name);
        if (overlaps(&tr->tensor_sec[i], &tr->index_sec))
            return ks_fail_at(r->path, (long long)(tr->data_start + tr->index_sec.offset),
                              "section index overlaps tensor %s", tr->tensors[i].name);
        for (int j = 0; j < i; ++j)
            if (overlaps(&tr->tensor_sec[i], &tr->tensor_sec[j]))
                return ks_fail_at(r->path, (long long)(tr->data_start + tr->tensor_sec[i].offset),
                                  "section %s overlaps tensor %s", tr->tensors[i].name, tr->tensors[j].name);
    }
    return KS_OK;
}

static int open_trace(const char *path, ks_trace *tr, int lazy)
{
    struct stat st;
    reader r;
    int rc;
    memset(tr, 0, sizeof *tr);
    snprintf(tr->path, sizeof tr->path, "%s", path);
    r.path = path;
    int fd = ks_in_open(path); /* a FIFO is refused, not waited on */
    if (fd < 0) return KS_EIO;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return ks_fail(KS_EIO, "%s: cannot stat: %s", path, strerror(errno));
    }
    r.size = (uint64_t)st.st_size;
    if (r.size < KS_KST_PREAMBLE) {
        close(fd);
        return ks_fail_at(path, 0, "file is %llu bytes, too short for the %d-byte preamble", (unsigned long long)r.size,
                          KS_KST_PREAMBLE);
    }
    void *map = mmap(NULL, (size_t)r.size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return ks_fail(KS_EIO, "%s: cannot map: %s", path, strerror(errno));
    tr->map = map;
    tr->map_size = (size_t)r.size;
    r.base = map;
    if (memcmp(r.base, KS_KST_MAGIC, 8)) {
        rc = ks_fail_at(path, 0, "not a KernelScope trace (bad magic)");
        goto fail;
    }
    uint32_t version = get_u32(r.base + 8), hlen = get_u32(r.base + 12);
    if (version != 1 && version != 2) {
        rc = ks_fail_at(path, 8, "unsupported version %u (this reader knows 1 and 2)", version);
        goto fail;
    }
    tr->version = (int)version;
    if (hlen == 0 || hlen > r.size - KS_KST_PREAMBLE) {
        rc = ks_fail_at(path, 12, "header length %u runs past the end of the file (%llu bytes)", hlen,
                        (unsigned long long)r.size);
        goto fail;
    }
    const char *json = (const char *)r.base + KS_KST_PREAMBLE;
    if (ks_crc32(0, json, hlen) != get_u32(r.base + 16)) {
        rc = ks_fail_at(path, 16, "header checksum mismatch");
        goto fail;
    }
    const char *end = NULL;
    cJSON *h = cJSON_ParseWithLengthOpts(json, hlen, &end, 0);
    if (!h) {
        long long at = KS_KST_PREAMBLE + (end ? (long long)(end - json) : 0);
        rc = ks_fail_at(path, at, "header is not valid JSON");
        goto fail;
    }
    tr->data_start = (KS_KST_PREAMBLE + (uint64_t)hlen + KS_KST_ALIGN - 1) / KS_KST_ALIGN * KS_KST_ALIGN;
    rc = parse_header(&r, h, tr);
    cJSON_Delete(h);
    if (!rc && tr->version == 2 && !lazy) rc = decode_chunks(tr, INT64_MIN, INT64_MAX, 0, UINT64_MAX);
    if (rc) goto fail;
    return KS_OK;
fail:
    munmap(map, (size_t)r.size);
    tr->map = NULL;
    free(tr->decoded);
    tr->decoded = NULL;
    tr->events = NULL;
    return rc;
}

int ks_trace_open(const char *path, ks_trace *tr) { return open_trace(path, tr, 0); }

int ks_trace_open_lazy(const char *path, ks_trace *tr) { return open_trace(path, tr, 1); }

ks_status ks_trace_verify(const ks_trace *tr)
{
    for (int i = 0; i < tr->ntensors; ++i) {
        const ks_section *s = &tr->tensor_sec[i];
        if (ks_crc32(0, tr->tensors[i].data, s->length) != s->crc32)
            return ks_fail_at(tr->path, (long long)(tr->data_start + s->offset), "tensor %s checksum mismatch",
                              tr->tensors[i].name);
    }
    const unsigned char *base = (const unsigned char *)tr->map + tr->data_start;
    if (tr->version == 1) {
        if (ks_crc32(0, tr->events, tr->event_sec.length) != tr->event_sec.crc32)
            return ks_fail_at(tr->path, (long long)(tr->data_start + tr->event_sec.offset), "events checksum mismatch");
        return KS_OK;
    }
    for (uint64_t k = 0; k < tr->index_sec.length / KS_KST2_ENTRY; ++k) { /* the index was checked at open */
        ks_kst2_entry e;
        ks_kst2_entry_get(base + tr->index_sec.offset + k * KS_KST2_ENTRY, &e);
        if (ks_crc32(0, base + tr->event_sec.offset + e.offset, e.length) != e.crc32)
            return ks_fail_at(tr->path, (long long)(tr->data_start + tr->event_sec.offset + e.offset),
                              "events checksum mismatch in chunk %llu", (unsigned long long)k);
    }
    return KS_OK;
}

void ks_trace_close(ks_trace *tr)
{
    if (tr->map) munmap(tr->map, tr->map_size);
    tr->map = NULL;
    free(tr->decoded);
    tr->decoded = NULL;
}

int ks_trace_tensor(const ks_trace *tr, const char *name)
{
    for (int i = 0; i < tr->ntensors; ++i)
        if (!strcmp(tr->tensors[i].name, name)) return i;
    return -1;
}
