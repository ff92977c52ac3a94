/* record_events.c - the events of a recorded launch, from its records (record.h): the
 * records sorted into (block, thread) order (record_sort.c); then every kept record's site
 * and tensor, resolved on up to 16 threads and numbered in the order one pass would first
 * meet them; then the events, made by cursors over the sorted records as the trace writer
 * encodes each run of chunks (ks_event_source). The trace is the same for any number of
 * threads. */
#define _POSIX_C_SOURCE 200809L
#include "record_build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../trace/parallel.h"

int ks_rb_threads(uint64_t n)
{
    if (ks_rec_build_threads > 0) return ks_rec_build_threads < KS_MAX_THREADS ? ks_rec_build_threads : KS_MAX_THREADS;
    return n < 65536 ? 1 : ks_threads_for(n, 1u << 16);
}

/* A small memo of (instruction, kind, tensor) -> site and rank: site_of and rank_of scan
 * every site, and the same few instructions come back millions of times. */
enum { MEMO_SLOTS = 4096 };
typedef struct memo_slot {
    uint64_t key; /* pc << 16 | kind << 8 | tensor, + 1 (0: empty) */
    uint16_t site;
    uint8_t rank;
} memo_slot;

/* The site and rank of access record rec of tensor ti and kind `kind`; -status on error. */
static int site_rank(builder *b, memo_slot *memo, uint32_t pc, int kind, int ti, uint8_t *rank)
{
    const uint64_t key = ((uint64_t)pc << 16 | (uint64_t)kind << 8 | (uint64_t)ti) + 1;
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (MEMO_SLOTS - 1);
    for (int probe = 0; probe < 16; ++probe, h = (h + 1) & (MEMO_SLOTS - 1)) {
        if (memo[h].key == key) {
            *rank = memo[h].rank;
            return memo[h].site;
        }
        if (!memo[h].key) break;
    }
    const int s = ks_rb_site_of(b, pc, kind, ti);
    if (s < 0) return s;
    *rank = (uint8_t)ks_rb_rank_of(b, s, pc);
    if (!memo[h].key) memo[h] = (memo_slot){key, (uint16_t)s, *rank};
    return s;
}

/* Pass 1 in three steps, so that most of it runs on several threads and the numbers
 * still come out in first-met order:
 *   a. each thread, over a run of whole blocks, finds every kept record's buffer, counts
 *      the events, and numbers the distinct (instruction, kind, buffer) keys it meets in
 *      the order it first meets them;
 *   b. alone, the threads' keys in thread order then first-met order: that is the order
 *      in which a single pass over all the records would first meet them, so tensors and
 *      sites get the same numbers (each key's tensor, site and rank);
 *   c. each thread copies its keys' results to its records. */
typedef struct rkey {
    uint32_t pc;
    int kind;            /* KS_EV_READ, KS_EV_WRITE or KS_EV_BARRIER */
    const ks_rec_buf *x; /* NULL: a barrier */
} rkey;

#define NO_KEY UINT32_MAX /* a record left out by the filter (or of a thread past the block) */

typedef struct resolve_job {
    const builder *b;
    const ks_rec *sorted;
    uint64_t from, to; /* records: whole blocks */
    uint32_t *kid;     /* each record's key number in this job (all records' array) */
    rec_meta *meta;
    block_span *spans; /* this job's blocks (grown) */
    uint64_t nspans, spans_cap, nev;
    rkey *keys;    /* in first-met order */
    rec_meta *res; /* each key's site, tensor and rank (step b) */
    uint32_t nkeys, keys_cap;
    uint32_t *hash; /* key number + 1, open addressing */
    uint32_t hash_cap;
    int failed, step;
} resolve_job;

static uint32_t key_hash(uint32_t pc, int kind, const ks_rec_buf *x)
{
    const uint64_t h = ((uint64_t)pc << 8 | (uint64_t)kind) ^ (uint64_t)(uintptr_t)x * 0x9e3779b97f4a7c15ull;
    return (uint32_t)((h * 0xff51afd7ed558ccdull) >> 32);
}

/* The job's number of key (pc, kind, x), added when first met; NO_KEY when out of memory. */
static uint32_t key_of(resolve_job *j, uint32_t pc, int kind, const ks_rec_buf *x)
{
    if (2 * (j->nkeys + 1) > j->hash_cap) { /* grow the table to keep it half empty */
        const uint32_t cap = j->hash_cap ? 2 * j->hash_cap : 1024;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h) return NO_KEY;
        for (uint32_t k = 0; k < j->nkeys; ++k) {
            uint32_t at = key_hash(j->keys[k].pc, j->keys[k].kind, j->keys[k].x) & (cap - 1);
            while (h[at]) at = (at + 1) & (cap - 1);
            h[at] = k + 1;
        }
        free(j->hash);
        j->hash = h, j->hash_cap = cap;
    }
    uint32_t at = key_hash(pc, kind, x) & (j->hash_cap - 1);
    for (; j->hash[at]; at = (at + 1) & (j->hash_cap - 1)) {
        const rkey *k = &j->keys[j->hash[at] - 1];
        if (k->pc == pc && k->kind == kind && k->x == x) return j->hash[at] - 1;
    }
    if (j->nkeys == j->keys_cap) {
        const uint32_t cap = j->keys_cap ? 2 * j->keys_cap : 256;
        rkey *k = realloc(j->keys, cap * sizeof *k);
        if (!k) return NO_KEY;
        j->keys = k, j->keys_cap = cap;
    }
    j->keys[j->nkeys] = (rkey){pc, kind, x};
    j->hash[at] = ++j->nkeys;
    return j->nkeys - 1;
}

/* Step a: the job's blocks, events and keys. */
static void resolve_keys(resolve_job *j)
{
    const builder *b = j->b;
    const ks_rec_launch *l = b->l;
    const ks_rec *sorted = j->sorted;
    const uint32_t T = l->block[0] * l->block[1] * l->block[2];
    uint64_t n = 0;
    for (uint64_t i = j->from; i < j->to && !j->failed;) {
        const uint32_t blk = sorted[i].block;
        if (j->nspans == j->spans_cap) {
            const uint64_t cap = j->spans_cap ? 2 * j->spans_cap : 64;
            block_span *sp = realloc(j->spans, cap * sizeof *sp);
            if (!sp) {
                j->failed = 1;
                break;
            }
            j->spans = sp, j->spans_cap = cap;
        }
        block_span *sp = &j->spans[j->nspans++];
        sp->block = blk, sp->rec = i, sp->ev = n;
        uint64_t r = i;
        for (uint32_t t = 0; t < T; ++t) {
            const int64_t index = (int64_t)blk * T + t;
            const int kept = index >= l->filter.index_lo && index < l->filter.index_hi;
            n += kept; /* its work event */
            for (; r < j->to && sorted[r].block == blk && sorted[r].thread == t; ++r) {
                j->kid[r] = NO_KEY;
                if (!kept) continue;
                const ks_rec *rec = &sorted[r];
                if (rec->flags & KS_REC_BARRIER) {
                    j->kid[r] = key_of(j, rec->pc, KS_EV_BARRIER, NULL);
                    n += 1;
                } else {
                    const ks_rec_buf *x = ks_rb_find_buf(b, rec->addr);
                    j->kid[r] = key_of(j, rec->pc, rec->flags & KS_REC_WRITE ? KS_EV_WRITE : KS_EV_READ, x);
                    const size_t el = ks_rb_elem_of(x);
                    const uint64_t boff = rec->addr - x->addr;
                    const int whole = rec->size >= el && rec->size % el == 0 && boff % el == 0;
                    n += whole ? rec->size / el : 1;
                }
                if (j->kid[r] == NO_KEY) j->failed = 1;
            }
        }
        /* records of threads past the block's size cannot be: the GPU numbers them so */
        for (; r < j->to && sorted[r].block == blk; ++r) j->kid[r] = NO_KEY;
        sp->rec_end = r;
        i = r;
    }
    j->nev = n;
}

static void *resolve_step(void *arg)
{
    resolve_job *j = arg;
    if (j->step == 0) resolve_keys(j);
    else /* step c */
        for (uint64_t r = j->from; r < j->to; ++r)
            if (j->kid[r] != NO_KEY) j->meta[r] = j->res[j->kid[r]];
    return NULL;
}

/* Step b, alone: each key's tensor, site and rank, numbered as first met. 0 or -status. */
static int resolve_merge(builder *b, resolve_job *jobs, int nt)
{
    memo_slot *memo = calloc(MEMO_SLOTS, sizeof *memo);
    if (!memo) return -ks_fail(KS_ENOMEM, "out of memory");
    int rc = KS_OK;
    for (int t = 0; t < nt && rc == KS_OK; ++t) {
        resolve_job *j = &jobs[t];
        if (!(j->res = malloc((j->nkeys ? j->nkeys : 1) * sizeof *j->res))) rc = ks_fail(KS_ENOMEM, "out of memory");
        for (uint32_t k = 0; k < j->nkeys && rc == KS_OK; ++k) {
            const rkey *key = &j->keys[k];
            if (key->kind == KS_EV_BARRIER) {
                const int s = ks_rb_site_of(b, key->pc, KS_EV_BARRIER, -1);
                if (s < 0) rc = -s;
                else j->res[k] = (rec_meta){ks_rb_line_for(b, key->pc)->line, (uint16_t)s, 255, 0};
                continue;
            }
            const int ti = ks_rb_tensor_of(b, key->x);
            if (ti < 0) {
                rc = -ti;
                break;
            }
            if (key->kind == KS_EV_WRITE) b->t[ti].written = 1;
            uint8_t rank = 0;
            const int s = site_rank(b, memo, key->pc, key->kind, ti, &rank);
            if (s < 0) rc = -s;
            else j->res[k] = (rec_meta){0, (uint16_t)s, (uint8_t)ti, rank};
        }
    }
    free(memo);
    return rc ? -rc : 0;
}

/* Pass 1: every kept record's site and tensor (meta), and each block's span of records
 * and events (at most nb of them). Returns the number of blocks, or -status. */
static int64_t resolve(builder *b, const ks_rec *sorted, rec_meta *meta, block_span *spans, uint64_t nb, uint64_t *nev)
{
    const ks_rec_launch *l = b->l;
    const uint64_t nr = l->nrecs;
    resolve_job jobs[KS_MAX_THREADS];
    memset(jobs, 0, sizeof jobs);
    const int nt = ks_rb_threads(nr);
    uint32_t *kid = malloc((nr ? nr : 1) * sizeof *kid);
    int64_t rc = kid ? KS_OK : ks_fail(KS_ENOMEM, "out of memory (%llu records)", (unsigned long long)nr);
    uint64_t at = 0;
    for (int t = 0; t < nt; ++t) { /* runs of whole blocks, about as many records each */
        uint64_t to = t == nt - 1 ? nr : nr * (uint64_t)(t + 1) / (uint64_t)nt;
        if (to < at) to = at;
        while (to > at && to < nr && sorted[to].block == sorted[to - 1].block) ++to;
        jobs[t] = (resolve_job){.b = b, .sorted = sorted, .from = at, .to = to, .kid = kid, .meta = meta};
        at = to;
    }
    if (rc == KS_OK) {
        ks_run_parallel(resolve_step, jobs, sizeof *jobs, nt);
        uint64_t blocks = 0;
        for (int t = 0; t < nt; ++t) {
            if (jobs[t].failed) rc = ks_fail(KS_ENOMEM, "out of memory (%llu records)", (unsigned long long)nr);
            blocks += jobs[t].nspans;
        }
        if (rc == KS_OK && blocks > nb) /* more blocks than the grid has: not this launch's records */
            rc = ks_fail(KS_EINVAL, "records name %llu blocks of a grid of %llu blocks", (unsigned long long)blocks,
                         (unsigned long long)nb);
    }
    if (rc == KS_OK) rc = -resolve_merge(b, jobs, nt);
    int64_t nspans = 0;
    uint64_t n = 0;
    if (rc == KS_OK) {
        for (int t = 0; t < nt; ++t) {
            jobs[t].step = 1;
            for (uint64_t k = 0; k < jobs[t].nspans; ++k, ++nspans) {
                spans[nspans] = jobs[t].spans[k];
                spans[nspans].ev += n;
            }
            n += jobs[t].nev;
        }
        ks_run_parallel(resolve_step, jobs, sizeof *jobs, nt);
    }
    for (int t = 0; t < nt; ++t) free(jobs[t].spans), free(jobs[t].keys), free(jobs[t].res), free(jobs[t].hash);
    free(kid);
    *nev = n;
    return rc ? -rc : nspans;
}

/* Pass 2, as the writer encodes each run of chunks (on several threads): the events
 * from a cursor over the sorted records, one at a time. A cursor holds what a thread's
 * events carry from one record to the next (seq, barrier phase, the taps' run counts). */
typedef struct ev_cursor {
    const rec_events *e;
    uint64_t pos; /* the number of the event it makes next */
    int64_t span; /* the block */
    uint32_t t;   /* its thread */
    uint64_t r;   /* the next record */
    int started, kept;
    int64_t index;
    uint32_t seq, phase, part, parts, occ_pc[64], occ_n[64];
    int nocc, bar_line;
    uint16_t tap;
} ev_cursor;

/* The events a kept record makes: a barrier one, an access one per whole element. */
static uint32_t rec_events_of(const builder *b, const ks_rec *rec, const rec_meta *m)
{
    if (rec->flags & KS_REC_BARRIER) return 1;
    const ks_rec_buf *x = b->t[m->tensor].buf;
    const size_t el = ks_rb_elem_of(x);
    const uint64_t boff = rec->addr - x->addr;
    return rec->size >= el && rec->size % el == 0 && boff % el == 0 ? (uint32_t)(rec->size / el) : 1;
}

/* The cursor's next event into *ev (NULL: only stepped over); -1 past the last. */
static int step_one(ev_cursor *c, ks_event *ev)
{
    const rec_events *E = c->e;
    const builder *b = E->b;
    const ks_rec_launch *l = b->l;
    const uint32_t T = l->block[0] * l->block[1] * l->block[2];
    for (;;) {
        if (c->span >= E->nspans) return -1;
        const block_span *sp = &E->spans[c->span];
        if (c->t == T) { /* the block's records of threads past its size cannot be: skipped */
            if (++c->span < E->nspans) c->r = E->spans[c->span].rec;
            c->t = 0, c->started = 0;
            continue;
        }
        const uint32_t blk = sp->block, t = c->t;
        if (!c->started) { /* a thread's work event, if kept */
            c->started = 1, c->index = (int64_t)blk * T + t;
            c->kept = c->index >= l->filter.index_lo && c->index < l->filter.index_hi;
            c->seq = 1, c->phase = 0, c->nocc = 0, c->bar_line = 0, c->part = 0;
            if (!c->kept) continue;
            if (ev) {
                const uint32_t bx = l->block[0], by = l->block[1], gx = l->grid[0], gy = l->grid[1];
                memset(ev, 0, sizeof *ev);
                ev->kind = KS_EV_WORK, ev->tensor = 255, ev->block = blk, ev->thread = t, ev->index = c->index;
                const int32_t v[6] = {(int32_t)(blk / (gx * gy)), (int32_t)(blk / gx % gy), (int32_t)(blk % gx),
                                      (int32_t)(t / (bx * by)),   (int32_t)(t / bx % by),   (int32_t)(t % bx)};
                memcpy(ev->u.field, v, sizeof v);
            }
            return 0;
        }
        if (c->r >= sp->rec_end || E->sorted[c->r].thread != t) { /* the thread's records are done */
            c->t++, c->started = 0;
            continue;
        }
        const ks_rec *rec = &E->sorted[c->r];
        if (!c->kept) {
            c->r++;
            continue;
        }
        const rec_meta *m = &E->meta[c->r];
        if (rec->flags & KS_REC_BARRIER) { /* __syncthreads(): it ends this thread's phase */
            if (ev) {
                memset(ev, 0, sizeof *ev);
                ev->kind = KS_EV_BARRIER, ev->site = m->site, ev->tensor = 255, ev->block = blk, ev->thread = t;
                ev->index = c->index, ev->seq = c->seq;
                ev->u.barrier.line = m->line;
                ev->u.barrier.phase = c->phase;
            }
            c->seq++, c->phase++, c->bar_line = m->line, c->r++;
            return 0;
        }
        const ks_rec_buf *x = b->t[m->tensor].buf;
        const size_t el = ks_rb_elem_of(x);
        const uint64_t boff = rec->addr - x->addr;
        const int whole = rec->size >= el && rec->size % el == 0 && boff % el == 0;
        if (c->part == 0) {
            /* tap: 16 x the thread's earlier runs of this instruction + its rank in the
             * site, as cu_trace.c gives it (a 16-byte access's second half is the same run) */
            uint32_t runs = 0;
            int found = 0;
            for (int q = 0; q < c->nocc && !found; ++q)
                if (c->occ_pc[q] == rec->pc) {
                    found = 1;
                    if (!(rec->flags & KS_REC_HALF)) c->occ_n[q]++;
                    runs = c->occ_n[q] - 1;
                }
            if (!found && c->nocc < 64) c->occ_pc[c->nocc] = rec->pc, c->occ_n[c->nocc++] = 1;
            c->tap = (uint16_t)(runs << 4 | m->rank);
            c->parts = rec_events_of(b, rec, m);
        }
        if (ev) {
            const uint32_t p = c->part;
            memset(ev, 0, sizeof *ev);
            ev->kind = (uint8_t)(rec->flags & KS_REC_WRITE ? KS_EV_WRITE : KS_EV_READ);
            ev->flags = rec->flags & KS_REC_ATOMIC ? KS_FLAG_ATOMIC : 0, ev->site = m->site;
            if (x == &b->shared) { /* its barrier phase, as the simulator's .cu traces */
                ev->flags |= KS_FLAG_SHARED;
                ev->u.access.reserved[0] = (int32_t)c->phase, ev->u.access.reserved[1] = c->bar_line;
            }
            ev->tensor = m->tensor, ev->block = blk, ev->thread = t, ev->index = c->index, ev->seq = c->seq;
            ev->tap = c->tap;
            ks_rb_place(ev, x, (int64_t)(boff / el) + p);
            ks_rb_set_value(ev, x->dtype, (const uint8_t *)&rec->value + p * (whole ? el : 0), whole ? el : rec->size);
        }
        c->seq++;
        if (++c->part == c->parts) c->part = 0, c->r++;
        return 0;
    }
}

/* step_one, counting the events made. */
static int cursor_step(ev_cursor *c, ks_event *ev)
{
    const int rc = step_one(c, ev);
    c->pos += rc == 0;
    return rc;
}

/* A cursor at event `first`: its block found by the blocks' first events, whole threads
 * before it stepped over by counting their events, then the events of its thread before
 * it made and dropped (a thread's taps depend on its earlier records). The thread's cursor
 * from its last run (`reuse`, before `first`) is moved forward instead where that is
 * fewer events than the replay: a launch of a few long threads would otherwise replay a
 * thread from its start for every run of chunks. */
static void *cursor_open(void *ctx, uint64_t first, void *reuse)
{
    const rec_events *E = ctx;
    const ks_rec_launch *l = E->b->l;
    const uint32_t T = l->block[0] * l->block[1] * l->block[2];
    ev_cursor *c = calloc(1, sizeof *c), *old = reuse;
    if (!c) {
        free(old);
        return NULL;
    }
    int64_t lo = 0, hi = E->nspans - 1;
    while (lo < hi) { /* the last block whose first event is at or before `first` */
        const int64_t mid = (lo + hi + 1) / 2;
        if (E->spans[mid].ev <= first) lo = mid;
        else hi = mid - 1;
    }
    c->e = E, c->span = lo, c->r = E->nspans ? E->spans[lo].rec : 0;
    uint64_t k = E->nspans ? E->spans[lo].ev : 0;
    while (c->span < E->nspans && c->t < T) { /* whole threads that end before `first` */
        const block_span *sp = &E->spans[c->span];
        const int64_t index = (int64_t)sp->block * T + c->t;
        const int kept = index >= l->filter.index_lo && index < l->filter.index_hi;
        uint64_t r = c->r, n = (uint64_t)kept;
        for (; r < sp->rec_end && E->sorted[r].thread == c->t; ++r)
            if (kept) n += rec_events_of(E->b, &E->sorted[r], &E->meta[r]);
        if (k + n > first) break;
        k += n, c->r = r, c->t++;
    }
    c->pos = k;
    if (old && old->pos <= first && first - old->pos < first - k) { /* moving the old one is less */
        free(c);
        c = old;
    } else free(old);
    while (c->pos < first)
        if (cursor_step(c, NULL) < 0) {
            free(c);
            return NULL;
        }
    return c;
}

static const ks_event *cursor_next(void *cursor, ks_event *buf, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (cursor_step(cursor, &buf[i]) < 0) return NULL;
    return buf;
}

static void cursor_close(void *cursor) { free(cursor); }

int ks_rec_build_threads;                /* 0: as many as the machine has, up to 16 */
_Thread_local double ks_rec_build_ms[4]; /* per thread: launches may end on several */

double ks_rb_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

int ks_rec_events_prepare(builder *b, rec_events *E)
{
    const ks_rec_launch *l = b->l;
    const uint64_t nr = l->nrecs ? l->nrecs : 1;
    /* a span a block with records: no more than the records, nor than the grid's blocks */
    const uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2], nb = blocks && blocks < nr ? blocks : nr;
    memset(E, 0, sizeof *E);
    E->b = b;
    E->own = l->sorted ? NULL : malloc(nr * sizeof *E->own);
    E->sorted = l->sorted ? l->recs : E->own;
    E->meta = malloc(nr * sizeof *E->meta);
    E->spans = malloc(nb * sizeof *E->spans);
    const double t0 = ks_rb_now_ms();
    if (!E->sorted || !E->meta || !E->spans || (E->own && ks_rec_sort(l->recs, l->nrecs, l->block, E->own))) {
        ks_rec_events_free(E);
        return ks_fail(KS_ENOMEM, "out of memory (%llu records)", (unsigned long long)l->nrecs);
    }
    const double t1 = ks_rb_now_ms();
    E->nspans = resolve(b, E->sorted, E->meta, E->spans, nb, &E->n);
    ks_rec_build_ms[0] = t1 - t0, ks_rec_build_ms[1] = ks_rb_now_ms() - t1;
    if (E->nspans < 0) {
        const int rc = (int)-E->nspans;
        ks_rec_events_free(E);
        return rc;
    }
    return KS_OK;
}

void ks_rec_events_source(const rec_events *E, ks_event_source *src)
{
    *src = (ks_event_source){(void *)E, cursor_open, cursor_next, cursor_close};
}

void ks_rec_events_free(rec_events *E)
{
    free(E->own), free(E->meta), free(E->spans);
    memset(E, 0, sizeof *E);
}
