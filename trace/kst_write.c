/* kst_write.c - writes a .kst: preamble, JSON header, 64-byte aligned sections. */
#include <cJSON.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "crc32.h"
#include "ks_file.h"
#include "kst.h"
#include "kst_codec.h"

/* Version 2's encoded events: the chunks back to back, and their index. */
typedef struct encoded {
    unsigned char *data, *index;
    uint64_t length, nchunks;
} encoded;

static uint64_t align_up(uint64_t v) { return (v + KS_KST_ALIGN - 1) / KS_KST_ALIGN * KS_KST_ALIGN; }

/* [lo, hi] of a filter range; JSON cannot hold INT64_MAX exactly, so "no upper bound"
 * is written as -1. */
static cJSON *range(int64_t lo, int64_t hi)
{
    cJSON *arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)lo));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(hi == INT64_MAX ? -1.0 : (double)hi));
    return arr;
}

static cJSON *site_json(const ks_site *s, int id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "kind", ks_event_kind_name(s->kind));
    cJSON_AddNumberToObject(o, "tensor", s->tensor);
    cJSON_AddNumberToObject(o, "writes_per_element", s->writes_per_element);
    if (s->line > 0) {
        cJSON_AddNumberToObject(o, "line", s->line);
        cJSON_AddNumberToObject(o, "col", s->col);
        cJSON_AddStringToObject(o, "code", s->code);
    }
    cJSON *fields = cJSON_AddArrayToObject(o, "fields");
    for (int i = 0; i < s->nfields; ++i) {
        const ks_field *f = &s->fields[i];
        cJSON *fo = cJSON_CreateObject();
        cJSON_AddStringToObject(fo, "name", f->name);
        cJSON_AddBoolToObject(fo, "digit", f->digit);
        cJSON_AddNumberToObject(fo, "stride", (double)f->stride);
        cJSON_AddNumberToObject(fo, "extent", (double)f->extent);
        cJSON_AddNumberToObject(fo, "bias", (double)f->bias);
        cJSON_AddStringToObject(fo, "expr", f->expr);
        cJSON_AddItemToArray(fields, fo);
    }
    return o;
}

static char *header_json(const ks_trace *tr, int version, ks_section *tsec, ks_section *esec, const ks_section *isec)
{
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "format", "kscope-trace");
    cJSON_AddNumberToObject(h, "version", version);
    cJSON_AddStringToObject(h, "op", tr->op);
    cJSON_AddStringToObject(h, "variant", tr->variant);
    cJSON_AddStringToObject(h, "device", tr->device);
    cJSON *params = cJSON_Parse(tr->params[0] ? tr->params : "{}");
    cJSON_AddItemToObject(h, "params", params ? params : cJSON_CreateObject());
    cJSON *launch = cJSON_AddObjectToObject(h, "launch");
    cJSON_AddNumberToObject(launch, "threads_per_block", tr->threads);
    cJSON_AddNumberToObject(launch, "blocks", (double)tr->blocks);
    cJSON_AddNumberToObject(launch, "block_cap", (double)tr->block_cap);
    cJSON_AddNumberToObject(launch, "work_items", (double)tr->work_items);
    cJSON *filter = cJSON_AddObjectToObject(h, "filter");
    cJSON_AddItemToObject(filter, "index", range(tr->filter.index_lo, tr->filter.index_hi));
    cJSON_AddItemToObject(filter, "block", range(tr->filter.block_lo, tr->filter.block_hi));
    cJSON_AddNumberToObject(filter, "every", (double)tr->filter.every);
    cJSON *sites = cJSON_AddArrayToObject(h, "sites");
    for (int i = 0; i < tr->nsites; ++i) cJSON_AddItemToArray(sites, site_json(&tr->sites[i], i));
    cJSON *tensors = cJSON_AddArrayToObject(h, "tensors");
    for (int i = 0; i < tr->ntensors; ++i) {
        const ks_tensor *t = &tr->tensors[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t->name);
        cJSON_AddStringToObject(o, "role", tr->roles[i] == KS_ROLE_OUTPUT ? "output" : "input");
        cJSON_AddStringToObject(o, "dtype", ks_dtype_name(t->dtype));
        cJSON *shape = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < t->ndim; ++d) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
        cJSON_AddNumberToObject(o, "offset", (double)tsec[i].offset);
        cJSON_AddNumberToObject(o, "length", (double)tsec[i].length);
        cJSON_AddNumberToObject(o, "crc32", tsec[i].crc32);
        cJSON_AddItemToArray(tensors, o);
    }
    cJSON *ev = cJSON_AddObjectToObject(h, "events");
    if (version == 1) cJSON_AddNumberToObject(ev, "record_size", sizeof(ks_event));
    else cJSON_AddStringToObject(ev, "encoding", "kst2");
    cJSON_AddNumberToObject(ev, "count", (double)tr->nevents);
    cJSON_AddNumberToObject(ev, "dropped", (double)tr->dropped);
    if (version != 1) cJSON_AddNumberToObject(ev, "chunk_events", KS_KST2_CHUNK);
    cJSON_AddNumberToObject(ev, "offset", (double)esec->offset);
    cJSON_AddNumberToObject(ev, "length", (double)esec->length);
    if (version == 1) {
        cJSON_AddNumberToObject(ev, "crc32", esec->crc32);
    } else { /* each chunk has its CRC in the index */
        cJSON *ix = cJSON_AddObjectToObject(ev, "index");
        cJSON_AddNumberToObject(ix, "offset", (double)isec->offset);
        cJSON_AddNumberToObject(ix, "length", (double)isec->length);
        cJSON_AddNumberToObject(ix, "crc32", isec->crc32);
    }
    char *text = cJSON_Print(h);
    cJSON_Delete(h);
    return text;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

/* A run of events of one work item in a row (seq counting up), as the simulator writes a
 * thread's item; on the GPU most runs are one event. */
typedef struct item_run {
    int64_t index;
    uint32_t seq, len;
    uint64_t start;
} item_run;

static int by_item(const void *a, const void *b)
{
    const item_run *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* The events' runs in (index, seq) order, records of equal keys in their given order: a
 * chunk then holds a few neighbouring work items, so its index range finds them
 * (ks_trace_load_range), and an item's records sit together (they compress to a byte of
 * ids). NULL on out of memory. */
static item_run *item_order(const ks_trace *tr, uint64_t *nruns)
{
    if (tr->nevents > SIZE_MAX / sizeof(item_run)) return NULL;
    item_run *r = malloc((tr->nevents ? tr->nevents : 1) * sizeof *r);
    if (!r) return NULL;
    uint64_t n = 0;
    int sorted = 1;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (n && e->index == r[n - 1].index && e->seq == r[n - 1].seq + r[n - 1].len && r[n - 1].len < UINT32_MAX) {
            r[n - 1].len++;
            continue;
        }
        r[n] = (item_run){e->index, e->seq, 1, i};
        if (n && by_item(&r[n - 1], &r[n]) > 0) sorted = 0;
        n++;
    }
    if (!sorted) qsort(r, n, sizeof *r, by_item);
    /* whole runs in order are the records in order unless one run's keys interleave
     * another's (a crafted trace's repeated (index, seq)): then one record a run */
    for (uint64_t k = 1; k < n; ++k) {
        const item_run last = {r[k - 1].index, r[k - 1].seq + r[k - 1].len - 1, 1, r[k - 1].start + r[k - 1].len - 1};
        if (by_item(&last, &r[k]) < 0) continue;
        for (uint64_t i = 0; i < tr->nevents; ++i) r[i] = (item_run){tr->events[i].index, tr->events[i].seq, 1, i};
        n = tr->nevents;
        qsort(r, n, sizeof *r, by_item);
        break;
    }
    *nruns = n;
    return r;
}

/* Chunks are encoded in batches, each batch's chunks on up to KS_ENCODE_THREADS threads
 * (the encoder reads the context and its chunk only), then appended in order. */
#define KS_ENCODE_THREADS 8
#define KS_ENCODE_BATCH 64 /* chunks a batch: 64 x 4096 events, 19 MB of scratch */

typedef struct enc_job {
    const ks_trace *tr;
    const ks_kst2_ctx *ctx;
    const item_run *runs;
    const uint64_t *start_run, *start_in; /* where each chunk's events begin in runs */
    uint64_t first, count;                /* the batch: chunks first .. first + count - 1 */
    int stride, offset;                   /* this job's chunks: offset, offset + stride, ... */
    unsigned char *scratch;               /* KS_ENCODE_BATCH slots of a chunk's room */
    size_t len[KS_ENCODE_BATCH];
    ks_kst2_entry ent[KS_ENCODE_BATCH];
    ks_event *chunk;
} enc_job;

static void *encode_some(void *arg)
{
    enc_job *j = arg;
    const size_t room = (size_t)KS_KST2_CHUNK * KS_KST2_MAX_RECORD;
    for (uint64_t c = (uint64_t)j->offset; c < j->count; c += (uint64_t)j->stride) {
        const uint64_t k = j->first + c, first = k * KS_KST2_CHUNK;
        const size_t n = (size_t)(j->tr->nevents - first < KS_KST2_CHUNK ? j->tr->nevents - first : KS_KST2_CHUNK);
        uint64_t run = j->start_run[k], in_run = j->start_in[k];
        for (size_t e = 0; e < n; ++e) { /* the chunk's events in item order */
            j->chunk[e] = j->tr->events[j->runs[run].start + in_run];
            if (++in_run == j->runs[run].len) run++, in_run = 0;
        }
        unsigned char *out = j->scratch + c * room;
        j->len[c] = ks_kst2_encode(j->ctx, j->chunk, n, out, &j->ent[c]);
        j->ent[c].crc32 = ks_crc32(0, out, j->len[c]);
    }
    return NULL;
}

/* Encodes the events chunk by chunk, in (index, seq) order; the output grows as it fills
 * (about 10 bytes an event), so memory stays near the file's size whatever the count. */
static int encode(const ks_trace *tr, encoded *out, const char *path)
{
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(tr, &ctx);
    memset(out, 0, sizeof *out);
    out->nchunks = (tr->nevents + KS_KST2_CHUNK - 1) / KS_KST2_CHUNK;
    out->index = calloc(out->nchunks ? out->nchunks : 1, KS_KST2_ENTRY);
    const size_t room = (size_t)KS_KST2_CHUNK * KS_KST2_MAX_RECORD;
    const uint64_t batch = out->nchunks < KS_ENCODE_BATCH ? (out->nchunks ? out->nchunks : 1) : KS_ENCODE_BATCH;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = cpus > 1 ? (int)cpus : 1;
    if (nt > KS_ENCODE_THREADS) nt = KS_ENCODE_THREADS;
    if ((uint64_t)nt > batch) nt = (int)batch;
    unsigned char *scratch = malloc(batch * room);
    uint64_t *start_run = malloc((out->nchunks + 1) * sizeof *start_run),
             *start_in = malloc((out->nchunks + 1) * sizeof *start_in);
    enc_job *jobs = calloc((size_t)nt, sizeof *jobs);
    uint64_t nruns = 0;
    item_run *runs = item_order(tr, &nruns);
    int failed = !out->index || !scratch || !start_run || !start_in || !jobs || !runs;
    for (int t = 0; t < nt && !failed; ++t)
        failed = !(jobs[t].chunk = malloc((size_t)KS_KST2_CHUNK * sizeof(ks_event)));
    /* where each chunk starts: one pass over the runs */
    for (uint64_t k = 0, run = 0, in_run = 0, pos = 0; !failed && k < out->nchunks; ++k) {
        const uint64_t want = k * KS_KST2_CHUNK;
        while (pos < want) {
            const uint64_t step = runs[run].len - in_run < want - pos ? runs[run].len - in_run : want - pos;
            pos += step, in_run += step;
            if (in_run == runs[run].len) run++, in_run = 0;
        }
        start_run[k] = run, start_in[k] = in_run;
    }
    uint64_t cap = 0;
    for (uint64_t first = 0; first < out->nchunks && !failed; first += batch) {
        const uint64_t count = out->nchunks - first < batch ? out->nchunks - first : batch;
        pthread_t th[KS_ENCODE_THREADS];
        int started[KS_ENCODE_THREADS] = {0};
        for (int t = 0; t < nt; ++t) {
            enc_job *j = &jobs[t];
            j->tr = tr, j->ctx = &ctx, j->runs = runs, j->start_run = start_run, j->start_in = start_in;
            j->first = first, j->count = count, j->stride = nt, j->offset = t, j->scratch = scratch;
            started[t] = t > 0 && pthread_create(&th[t], NULL, encode_some, j) == 0;
        }
        for (int t = 0; t < nt; ++t)
            if (t == 0 || !started[t]) encode_some(&jobs[t]); /* this thread's share, and any not started */
        for (int t = 1; t < nt; ++t)
            if (started[t]) pthread_join(th[t], NULL);
        for (uint64_t c = 0; c < count && !failed; ++c) {
            const enc_job *j = &jobs[c % (uint64_t)nt];
            const size_t len = j->len[c];
            if (out->length + len > cap) {
                uint64_t ncap = cap ? cap * 2 : (uint64_t)KS_KST2_CHUNK * 16;
                while (ncap < out->length + len) ncap *= 2;
                unsigned char *grown = realloc(out->data, ncap);
                failed = !grown;
                if (failed) break;
                out->data = grown, cap = ncap;
            }
            memcpy(out->data + out->length, scratch + c * room, len);
            ks_kst2_entry ent = j->ent[c];
            ent.offset = out->length;
            ks_kst2_entry_put(out->index + (first + c) * KS_KST2_ENTRY, &ent);
            out->length += len;
        }
    }
    for (int t = 0; jobs && t < nt; ++t) free(jobs[t].chunk);
    free(jobs), free(scratch), free(start_run), free(start_in), free(runs);
    if (!failed) return KS_OK;
    free(out->data), free(out->index);
    memset(out, 0, sizeof *out);
    return ks_fail(KS_ENOMEM, "%s: out of memory encoding %llu events", path, (unsigned long long)tr->nevents);
}

int ks_trace_put(ks_out_file *o, const ks_trace *tr)
{
    static const unsigned char zeros[KS_KST_ALIGN];
    const char *path = o->path;
    ks_section tsec[KS_MAX_TENSORS], esec, isec = {0, 0, 0};
    uint64_t at = 0;
    const int version = tr->version ? tr->version : KS_KST_VERSION;
    if (tr->ntensors < 0 || tr->ntensors > KS_MAX_TENSORS || tr->nsites < 0 || tr->nsites > KS_MAX_SITES)
        return ks_fail(KS_EINVAL, "%s: too many tensors or sites", path);
    if (version != 1 && version != 2)
        return ks_fail(KS_EINVAL, "%s: no trace format version %d (1 or 2)", path, version);
    for (int i = 0; i < tr->ntensors; ++i) {
        const ks_tensor *t = &tr->tensors[i];
        int64_t n = ks_tensor_numel(t);
        if (n < 0) return ks_fail(KS_EINVAL, "%s: tensor %s size overflows", path, t->name);
        tsec[i].offset = at;
        tsec[i].length = (uint64_t)n * ks_dtype_size(t->dtype);
        tsec[i].crc32 = ks_crc32(0, t->data, tsec[i].length);
        at = align_up(at + tsec[i].length);
    }
    encoded enc = {NULL, NULL, 0, 0};
    esec.offset = at;
    if (version == 1) {
        esec.length = tr->nevents * sizeof(ks_event);
        esec.crc32 = ks_crc32(0, tr->events, esec.length);
    } else {
        int rc = encode(tr, &enc, path);
        if (rc) return rc;
        esec.length = enc.length;
        esec.crc32 = 0;
        isec.offset = align_up(esec.offset + esec.length);
        isec.length = enc.nchunks * KS_KST2_ENTRY;
        isec.crc32 = ks_crc32(0, enc.index, isec.length);
    }

    char *json = header_json(tr, version, tsec, &esec, &isec);
    if (!json) {
        free(enc.data), free(enc.index);
        return ks_fail(KS_ENOMEM, "%s: out of memory for the header", path);
    }
    const size_t hlen = strlen(json);
    unsigned char pre[KS_KST_PREAMBLE];
    memcpy(pre, KS_KST_MAGIC, 8);
    put_u32(pre + 8, (uint32_t)version);
    put_u32(pre + 12, (uint32_t)hlen);
    put_u32(pre + 16, ks_crc32(0, json, hlen));
    put_u32(pre + 20, 0);

    uint64_t pos = KS_KST_PREAMBLE + hlen;
    int rc = ks_out_write(o, pre, sizeof pre);
    if (!rc) rc = ks_out_write(o, json, hlen);
    if (!rc) rc = ks_out_write(o, zeros, align_up(pos) - pos);
    pos = align_up(pos);
    for (int i = 0; i < tr->ntensors && !rc; ++i) {
        rc = ks_out_write(o, tr->tensors[i].data, tsec[i].length);
        uint64_t end = pos + tsec[i].length;
        if (!rc) rc = ks_out_write(o, zeros, align_up(end) - end);
        pos = align_up(end);
    }
    if (version == 1) {
        if (!rc) rc = ks_out_write(o, tr->events, esec.length);
    } else {
        const uint64_t end = pos + esec.length;
        if (!rc) rc = ks_out_write(o, enc.data, esec.length);
        if (!rc) rc = ks_out_write(o, zeros, align_up(end) - end);
        if (!rc) rc = ks_out_write(o, enc.index, isec.length);
    }
    free(enc.data), free(enc.index);
    free(json);
    return rc;
}

int ks_trace_write(const char *path, const ks_trace *tr)
{
    ks_out_file o;
    int rc = ks_out_open(&o, path);
    if (rc) return rc;
    if ((rc = ks_trace_put(&o, tr))) {
        ks_out_abort(&o);
        return rc;
    }
    return ks_out_commit(&o);
}

/* the format fixes a record at 64 bytes (docs/trace-format.md) */
_Static_assert(sizeof(ks_event) == 64, "a trace event record is 64 bytes");

const char *ks_event_kind_name(int kind)
{
    switch (kind) {
    case KS_EV_WORK: return "work";
    case KS_EV_READ: return "read";
    case KS_EV_SAMPLE: return "sample";
    case KS_EV_WRITE: return "write";
    case KS_EV_REGION: return "region";
    case KS_EV_BARRIER: return "barrier";
    case KS_EV_WARP: return "warp";
    case KS_EV_FAULT: return "fault";
    default: return "?";
    }
}

int ks_event_kind_parse(const char *s)
{
    for (int k = KS_EV_WORK; k < KS_EV_KINDS; ++k)
        if (!strcmp(s, ks_event_kind_name(k))) return k;
    return 0;
}
