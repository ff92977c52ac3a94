/* kst_write.c - writes a .kst: preamble, JSON header, 64-byte aligned sections. */
#define _GNU_SOURCE /* sync_file_range */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "crc32.h"
#include "ks_file.h"
#include "kst.h"
#include "kst_codec.h"
#include "parallel.h"

/* Version 2's encoded events: each chunk's bytes (written back to back), and the index. */
typedef struct encoded {
    unsigned char **chunk, *index;
    size_t *len;
    ks_kst2_entry *ent;
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
    else cJSON_AddStringToObject(ev, "encoding", tr->zstd ? "kst2+zstd" : "kst2");
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

_Thread_local double ks_kst_write_ms[5];
int ks_kst_write_threads;

/* The threads for `work` units of at least per_thread each (ks_kst_write_threads if set). */
static int write_threads(uint64_t work, uint64_t per_thread)
{
    const int set = ks_kst_write_threads > KS_MAX_THREADS ? KS_MAX_THREADS : ks_kst_write_threads;
    return set > 0 ? set : ks_threads_for(work, per_thread);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* Whether events [from, to) (and the one before `from`) are in (index, seq) order. */
typedef struct order_job {
    const ks_event *ev;
    uint64_t from, to;
    int ok;
} order_job;

static void *check_order(void *arg)
{
    order_job *j = arg;
    j->ok = 1;
    for (uint64_t i = j->from ? j->from : 1; i < j->to; ++i) {
        const ks_event *a = &j->ev[i - 1], *b = &j->ev[i];
        if (a->index > b->index || (a->index == b->index && a->seq > b->seq)) {
            j->ok = 0;
            break;
        }
    }
    return NULL;
}

/* The events already in (index, seq) order, as the recorder and the simulator's
 * per-thread traces make them: then a chunk is simply the next 4096 events. */
static int in_item_order(const ks_trace *tr)
{
    order_job jobs[KS_MAX_THREADS];
    const int nt = write_threads(tr->nevents, 1u << 20);
    for (int t = 0; t < nt; ++t)
        jobs[t] = (order_job){tr->events, tr->nevents * (uint64_t)t / (uint64_t)nt,
                              tr->nevents * (uint64_t)(t + 1) / (uint64_t)nt, 0};
    ks_run_parallel(check_order, jobs, sizeof *jobs, nt);
    for (int t = 0; t < nt; ++t)
        if (!jobs[t].ok) return 0;
    return 1;
}

/* The two sources of a trace's own events: in item order already (a chunk is the next
 * 4096 of them, read in place), or gathered run by run. */
typedef struct mem_source {
    const ks_trace *tr;
    const item_run *runs;                 /* NULL: in item order */
    const uint64_t *start_run, *start_in; /* where each chunk's events begin in runs */
} mem_source;

typedef struct mem_cursor {
    const mem_source *m;
    uint64_t pos, run, in_run;
} mem_cursor;

static void *mem_open(void *ctx, uint64_t first, void *reuse)
{
    const mem_source *m = ctx;
    mem_cursor *c = reuse ? reuse : malloc(sizeof *c); /* any place opens at once: reused as it is */
    if (!c) return NULL;
    const uint64_t k = first / KS_KST2_CHUNK; /* cursors open at a chunk's start */
    *c = (mem_cursor){m, first, m->runs ? m->start_run[k] : 0, m->runs ? m->start_in[k] : 0};
    return c;
}

static const ks_event *mem_next(void *cursor, ks_event *buf, size_t n)
{
    mem_cursor *c = cursor;
    const ks_trace *tr = c->m->tr;
    if (!c->m->runs) {
        c->pos += n;
        return tr->events + c->pos - n;
    }
    for (size_t e = 0; e < n; ++e) {
        const item_run *r = &c->m->runs[c->run];
        buf[e] = tr->events[r->start + c->in_run];
        if (++c->in_run == r->len) c->run++, c->in_run = 0;
    }
    return buf;
}

static void mem_close(void *cursor) { free(cursor); }

/* The chunks in flight: each thread takes the next chunk from a shared counter, opens the
 * source at it, encodes it into a buffer of its own (cut to its length) and marks it done;
 * the calling thread hands the chunks to the sink in order as soon as each and those
 * before it are done (the file is written while the rest are encoded), and frees them. */
typedef struct chunk_sink {
    int (*put)(void *arg, const unsigned char *bytes, size_t len);
    void *arg;
} chunk_sink;

typedef struct enc_stream {
    const ks_trace *tr;
    const ks_kst2_ctx *ctx;
    const ks_event_source *src;
    encoded *out;
    uint64_t next;     /* the next chunk to take (atomic) */
    uint64_t batch;    /* chunks taken at once */
    signed char *done; /* each chunk: 1 encoded, -1 no memory, -2 the source failed */
    int stop;          /* the sink failed: take no more (under mu) */
    uint64_t written;  /* chunks the calling thread has handed to the sink */
    uint64_t ahead;    /* the most chunks taken past those written (memory stays bounded) */
    pthread_mutex_t mu;
    pthread_cond_t cv, room;
} enc_stream;

static void *encode_chunks(void *arg)
{
    enc_stream *st = arg;
    const size_t room = (size_t)KS_KST2_CHUNK * KS_KST2_MAX_RECORD;
    ks_event *buf = malloc((size_t)KS_KST2_CHUNK * sizeof *buf);
    unsigned char *scratch = malloc(room); /* a chunk is encoded here, then copied out at its length */
    /* zstd: the chunk's frame, compressed from scratch */
    const size_t zroom = st->tr->zstd ? ks_kst2_compress_bound(room) : 0;
    unsigned char *zbuf = zroom ? malloc(zroom) : NULL;
    void *cctx = NULL;
    if (zroom && !zbuf) free(scratch), scratch = NULL; /* every chunk fails: out of memory */
    const uint64_t nchunks = st->out->nchunks;
    void *cur = NULL; /* kept from batch to batch: the source may move it forward */
    for (;;) {
        /* a batch of chunks in a row, read from one cursor, taken no further than `ahead`
         * past the chunks written */
        const uint64_t k0 = __atomic_fetch_add(&st->next, st->batch, __ATOMIC_RELAXED);
        if (k0 >= nchunks) break;
        pthread_mutex_lock(&st->mu);
        while (k0 >= st->written && k0 - st->written >= st->ahead && !st->stop) pthread_cond_wait(&st->room, &st->mu);
        const int stop = st->stop;
        pthread_mutex_unlock(&st->mu);
        if (stop) break;
        const uint64_t k1 = nchunks - k0 < st->batch ? nchunks : k0 + st->batch;
        cur = buf && scratch ? st->src->open(st->src->ctx, k0 * KS_KST2_CHUNK, cur) : NULL;
        for (uint64_t k = k0; k < k1; ++k) {
            const uint64_t first = k * KS_KST2_CHUNK;
            const size_t n = (size_t)(st->tr->nevents - first < KS_KST2_CHUNK ? st->tr->nevents - first
                                                                              : KS_KST2_CHUNK);
            const ks_event *ev = cur ? st->src->next(cur, buf, n) : NULL;
            signed char state = buf && scratch ? -2 : -1;
            if (ev) {
                ks_kst2_entry ent;
                const unsigned char *bytes = scratch;
                size_t len = ks_kst2_encode(st->ctx, ev, n, scratch, &ent);
                if (zroom) { /* the frame is what the file stores (0: the compressor failed) */
                    len = ks_kst2_compress(&cctx, scratch, len, zbuf, zroom);
                    ent.length = (uint32_t)len, bytes = zbuf;
                }
                unsigned char *out = len ? malloc(len) : NULL;
                state = -1;
                if (out) {
                    memcpy(out, bytes, len);
                    ent.crc32 = ks_crc32(0, out, len);
                    st->out->chunk[k] = out;
                    st->out->len[k] = len;
                    st->out->ent[k] = ent;
                    state = 1;
                }
            }
            if (state < 0 && cur) st->src->close(cur), cur = NULL; /* the rest of the batch fails too */
            pthread_mutex_lock(&st->mu);
            st->done[k] = state;
            pthread_cond_broadcast(&st->cv);
            pthread_mutex_unlock(&st->mu);
        }
    }
    if (cur) st->src->close(cur);
    free(buf), free(scratch), free(zbuf);
    ks_kst2_cctx_free(cctx);
    return NULL;
}

static void encoded_free(encoded *e)
{
    for (uint64_t k = 0; e->chunk && k < e->nchunks; ++k) free(e->chunk[k]);
    free(e->chunk), free(e->len), free(e->ent), free(e->index);
    memset(e, 0, sizeof *e);
}

/* Encodes the events chunk by chunk, in (index, seq) order (about 10 bytes an event), on
 * up to 16 threads, handing each chunk to the sink in order, and makes the index. The
 * events come from src, or (NULL) from tr->events. A sink's error is returned as is. */
static int encode(const ks_trace *tr, const ks_event_source *src, encoded *out, const char *path,
                  const chunk_sink *sink)
{
    const double t0 = now_ms();
    ks_kst_write_ms[4] = 0;
    ks_kst2_ctx ctx;
    ks_kst2_ctx_make(tr, &ctx);
    memset(out, 0, sizeof *out);
    const uint64_t nchunks = (tr->nevents + KS_KST2_CHUNK - 1) / KS_KST2_CHUNK, nc = nchunks ? nchunks : 1;
    out->nchunks = nchunks;
    out->chunk = calloc(nc, sizeof *out->chunk);
    out->len = calloc(nc, sizeof *out->len);
    out->ent = calloc(nc, sizeof *out->ent);
    out->index = calloc(nc, KS_KST2_ENTRY);
    mem_source mem = {tr, NULL, NULL, NULL};
    ks_event_source own = {&mem, mem_open, mem_next, mem_close};
    uint64_t *start_run = NULL, *start_in = NULL;
    item_run *runs = NULL;
    enc_stream st = {.tr = tr, .ctx = &ctx, .out = out, .done = calloc(nc, 1)};
    int failed = !out->chunk || !out->len || !out->ent || !out->index || !st.done;
    if (!failed && !src && !in_item_order(tr)) {
        uint64_t nruns = 0;
        runs = item_order(tr, &nruns);
        start_run = malloc(nc * sizeof *start_run), start_in = malloc(nc * sizeof *start_in);
        failed = !runs || !start_run || !start_in;
        /* where each chunk starts: one pass over the runs */
        for (uint64_t k = 0, run = 0, in_run = 0, pos = 0; !failed && k < nchunks; ++k) {
            const uint64_t want = k * KS_KST2_CHUNK;
            while (pos < want) {
                const uint64_t step = runs[run].len - in_run < want - pos ? runs[run].len - in_run : want - pos;
                pos += step, in_run += step;
                if (in_run == runs[run].len) run++, in_run = 0;
            }
            start_run[k] = run, start_in[k] = in_run;
        }
        mem.runs = runs, mem.start_run = start_run, mem.start_in = start_in;
    }
    st.src = src ? src : &own;
    ks_kst_write_ms[0] = now_ms() - t0;
    const double t1 = now_ms();
    int rc = failed
                 ? ks_fail(KS_ENOMEM, "%s: out of memory encoding %llu events", path, (unsigned long long)tr->nevents)
                 : KS_OK;
    if (rc == KS_OK) {
        pthread_mutex_init(&st.mu, NULL);
        pthread_cond_init(&st.cv, NULL);
        pthread_cond_init(&st.room, NULL);
        pthread_t th[KS_MAX_THREADS];
        const int nt = write_threads(nchunks, 4);
        /* batches of up to 4 chunks, as long as each thread still gets 4 batches */
        st.batch = nchunks / (16u * (uint64_t)nt);
        if (st.batch < 1) st.batch = 1;
        if (st.batch > 4) st.batch = 4;
        st.ahead = 4 * (uint64_t)nt * st.batch;
        int started = 0;
        for (int t = 0; t < nt; ++t) started += pthread_create(&th[started], NULL, encode_chunks, &st) == 0;
        if (!started) { /* no thread: all here, then written */
            st.ahead = UINT64_MAX;
            encode_chunks(&st);
        }
        for (uint64_t k = 0; k < nchunks; ++k) {
            pthread_mutex_lock(&st.mu);
            while (!st.done[k]) pthread_cond_wait(&st.cv, &st.mu);
            pthread_mutex_unlock(&st.mu);
            if (rc == KS_OK && st.done[k] == -2)
                rc = ks_fail(KS_EINVAL, "%s: the events of chunk %llu could not be made", path, (unsigned long long)k);
            else if (rc == KS_OK && st.done[k] < 0)
                rc = ks_fail(KS_ENOMEM, "%s: out of memory encoding %llu events", path,
                             (unsigned long long)tr->nevents);
            if (rc == KS_OK) {
                out->ent[k].offset = out->length;
                ks_kst2_entry_put(out->index + k * KS_KST2_ENTRY, &out->ent[k]);
                out->length += out->len[k];
                const double tp = now_ms();
                rc = sink->put(sink->arg, out->chunk[k], out->len[k]);
                ks_kst_write_ms[4] += now_ms() - tp;
            }
            free(out->chunk[k]), out->chunk[k] = NULL;
            pthread_mutex_lock(&st.mu); /* room for one more chunk, or (failed) none */
            st.written = k + 1;
            if (rc != KS_OK) st.stop = 1;
            pthread_cond_broadcast(&st.room);
            pthread_mutex_unlock(&st.mu);
            if (rc != KS_OK) break; /* the threads finish what they took; encoded_free frees it */
        }
        for (int t = 0; t < started; ++t) pthread_join(th[t], NULL);
        pthread_mutex_destroy(&st.mu);
        pthread_cond_destroy(&st.cv);
        pthread_cond_destroy(&st.room);
    }
    ks_kst_write_ms[1] = now_ms() - t1;
    free(start_run), free(start_in), free(runs), free(st.done);
    if (rc == KS_OK) return KS_OK;
    encoded_free(out);
    return rc;
}

/* The preamble of a header of hlen bytes. */
static void make_preamble(unsigned char pre[KS_KST_PREAMBLE], int version, const char *json, size_t hlen)
{
    memcpy(pre, KS_KST_MAGIC, 8);
    put_u32(pre + 8, (uint32_t)version);
    put_u32(pre + 12, (uint32_t)hlen);
    put_u32(pre + 16, ks_crc32(0, json, hlen));
    put_u32(pre + 20, 0);
}

/* The sink of a version 2 file's chunks: written in order, and (ks_out_durable) every 8
 * MB their writeback started, so that the commit's fsync finds little left to write. */
typedef struct file_sink {
    ks_out_file *o;
    uint64_t written, synced; /* file offsets: the end of what was written, and of what was synced */
} file_sink;

static int file_put(void *arg, const unsigned char *bytes, size_t len)
{
    file_sink *f = arg;
    const int rc = ks_out_write(f->o, bytes, len);
    f->written += len;
#ifdef __linux__
    if (!rc && ks_out_durable && f->written - f->synced >= (8u << 20) && fflush(f->o->f) == 0) {
        sync_file_range(fileno(f->o->f), (off64_t)f->synced, (off64_t)(f->written - f->synced), SYNC_FILE_RANGE_WRITE);
        f->synced = f->written;
    }
#endif
    return rc;
}

static int put(ks_out_file *o, const ks_trace *tr, const ks_event_source *src)
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
    if (src && version != 2) return ks_fail(KS_EINVAL, "%s: events from a source are written as version 2", path);
    for (int i = 0; i < tr->ntensors; ++i) {
        const ks_tensor *t = &tr->tensors[i];
        int64_t n = ks_tensor_numel(t);
        if (n < 0) return ks_fail(KS_EINVAL, "%s: tensor %s size overflows", path, t->name);
        tsec[i].offset = at;
        tsec[i].length = (uint64_t)n * ks_dtype_size(t->dtype);
        tsec[i].crc32 = ks_crc32(0, t->data, tsec[i].length);
        at = align_up(at + tsec[i].length);
    }
    esec.offset = at;
    /* version 2's header is written last, over room reserved for it: the numbers not yet
     * known are reserved as 15 digits, and the header is padded with spaces (JSON allows
     * them) to the room */
    const uint64_t wide = 999999999999999ull;
    if (version == 1) {
        esec.length = tr->nevents * sizeof(ks_event);
        esec.crc32 = ks_crc32(0, tr->events, esec.length);
    } else {
        esec.length = wide, esec.crc32 = 0;
        isec = (ks_section){wide, wide, UINT32_MAX};
    }
    char *json = header_json(tr, version, tsec, &esec, &isec);
    if (!json) return ks_fail(KS_ENOMEM, "%s: out of memory for the header", path);
    const size_t hlen = strlen(json);
    unsigned char pre[KS_KST_PREAMBLE];
    make_preamble(pre, version, json, hlen);
    const long start = ftell(o->f);

    const double tw = now_ms();
    uint64_t pos = KS_KST_PREAMBLE + hlen;
    int rc = start < 0 ? ks_fail(KS_EIO, "%s: cannot tell the position: %s", path, strerror(errno)) : KS_OK;
    if (!rc) rc = ks_out_write(o, pre, sizeof pre);
    if (!rc) rc = ks_out_write(o, json, hlen);
    if (!rc) rc = ks_out_write(o, zeros, align_up(pos) - pos);
    pos = align_up(pos);
    for (int i = 0; i < tr->ntensors && !rc; ++i) {
        rc = ks_out_write(o, tr->tensors[i].data, tsec[i].length);
        uint64_t end = pos + tsec[i].length;
        if (!rc) rc = ks_out_write(o, zeros, align_up(end) - end);
        pos = align_up(end);
    }
    free(json);
    if (version == 1) {
        if (!rc) rc = ks_out_write(o, tr->events, esec.length);
        ks_kst_write_ms[2] = now_ms() - tw;
        return rc;
    }
    encoded enc;
    memset(&enc, 0, sizeof enc);
    file_sink fs = {o, (uint64_t)start + pos, (uint64_t)start + pos}; /* file offsets: the events start here */
    const chunk_sink sink = {file_put, &fs};
    if (!rc) rc = encode(tr, src, &enc, path, &sink);
    const double ti = now_ms();
    if (!rc) {
        esec.length = enc.length;
        isec.offset = align_up(esec.offset + esec.length);
        isec.length = enc.nchunks * KS_KST2_ENTRY;
        isec.crc32 = ks_crc32(0, enc.index, isec.length);
        const uint64_t end = pos + esec.length;
        rc = ks_out_write(o, zeros, align_up(end) - end);
        if (!rc) rc = ks_out_write(o, enc.index, isec.length);
    }
    if (!rc) { /* the header, now that its numbers are known, over its room */
        json = header_json(tr, version, tsec, &esec, &isec);
        char *room = json ? malloc(hlen) : NULL;
        const size_t used = json ? strlen(json) : 0;
        if (!room) rc = ks_fail(KS_ENOMEM, "%s: out of memory for the header", path);
        else if (used > hlen) rc = ks_fail(KS_EINVAL, "%s: the header outgrew the room reserved for it", path);
        else {
            memcpy(room, json, used);
            memset(room + used, ' ', hlen - used);
            make_preamble(pre, version, room, hlen);
            const int fd = fileno(o->f);
            errno = EIO; /* a short write sets none */
            if (fflush(o->f) != 0 || pwrite(fd, pre, sizeof pre, (off_t)start) != (ssize_t)sizeof pre ||
                pwrite(fd, room, hlen, (off_t)start + KS_KST_PREAMBLE) != (ssize_t)hlen)
                rc = ks_fail(KS_EIO, "%s: write failed: %s", path, strerror(errno));
        }
        free(room), free(json);
    }
    ks_kst_write_ms[2] = now_ms() - ti;
    encoded_free(&enc);
    return rc;
}

int ks_trace_put(ks_out_file *o, const ks_trace *tr) { return put(o, tr, NULL); }

static int write_file(const char *path, const ks_trace *tr, const ks_event_source *src)
{
    ks_out_file o;
    int rc = ks_out_open(&o, path);
    if (rc) return rc;
    memset(ks_kst_write_ms, 0, sizeof ks_kst_write_ms);
    if ((rc = put(&o, tr, src))) {
        ks_out_abort(&o);
        return rc;
    }
    const double tc = now_ms();
    rc = ks_out_commit(&o);
    ks_kst_write_ms[3] = now_ms() - tc;
    return rc;
}

int ks_trace_write(const char *path, const ks_trace *tr) { return write_file(path, tr, NULL); }

int ks_trace_write_source(const char *path, const ks_trace *tr, const ks_event_source *src)
{
    return write_file(path, tr, src);
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
