/* record_events.c - the events of a recorded launch, from its records (record.h): the
 * records sorted whole into (block, thread) order; then, alone and in order, every kept
 * record's site and tensor (their numbers are first-met order); then the events, made on
 * up to 16 threads, each a run of blocks. The trace is the same for any number of
 * threads. */
#define _POSIX_C_SOURCE 200809L
#include "record_build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../trace/parallel.h"

typedef struct order {
    uint64_t key; /* block << 16 | thread */
    uint64_t slot;
} order;

static int cmp_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* How many threads the build uses for n records (ks_rec_build_threads, or the CPUs for a
 * launch of 65536 records or more). */
static int build_threads(uint64_t n)
{
    if (ks_rec_build_threads > 0) return ks_rec_build_threads < KS_MAX_THREADS ? ks_rec_build_threads : KS_MAX_THREADS;
    return n < 65536 ? 1 : ks_threads_for(n, 1u << 16);
}

/* One thread's share of the counting sort: records [from, to), and (pass 2) the thread
 * ids [key_from, key_to) whose places it works out. */
typedef struct sort_job {
    const ks_rec *recs;
    ks_rec *out;
    uint64_t from, to, T, lo, hi;
    uint64_t *count; /* span entries: its records of each thread id, then their first place */
    uint64_t key_from, key_to, sum, span;
    struct sort_job *all;
    int n, pass;
} sort_job;

static void *sort_pass(void *arg)
{
    sort_job *j = arg;
    const ks_rec *r = j->recs;
    switch (j->pass) {
    case 0: /* the thread ids the slice spans */
        j->lo = UINT64_MAX, j->hi = 0;
        for (uint64_t i = j->from; i < j->to; ++i) {
            const uint64_t g = (uint64_t)r[i].block * j->T + r[i].thread;
            if (g < j->lo) j->lo = g;
            if (g > j->hi) j->hi = g;
        }
        break;
    case 1: /* count the slice's records of each id */
        memset(j->count, 0, j->span * sizeof *j->count);
        for (uint64_t i = j->from; i < j->to; ++i) j->count[(uint64_t)r[i].block * j->T + r[i].thread - j->lo]++;
        break;
    case 2: /* the records of ids [key_from, key_to), over all slices */
        j->sum = 0;
        for (uint64_t k = j->key_from; k < j->key_to; ++k)
            for (int u = 0; u < j->n; ++u) j->sum += j->all[u].count[k];
        break;
    case 3: /* each slice's first place for each id: slices in order, so slot order holds */
        for (uint64_t k = j->key_from, pos = j->sum; k < j->key_to; ++k)
            for (int u = 0; u < j->n; ++u) {
                const uint64_t c = j->all[u].count[k];
                j->all[u].count[k] = pos;
                pos += c;
            }
        break;
    default: /* scatter the slice's records to their places */
        for (uint64_t i = j->from; i < j->to; ++i)
            j->out[j->count[(uint64_t)r[i].block * j->T + r[i].thread - j->lo]++] = r[i];
    }
    return NULL;
}

/* The records in (block, thread) order, each thread's in slot order, copied into `out`:
 * a counting sort over the global thread ids the records span, scattering whole records
 * (one sequential read of the GPU's order, whose threads' records lie far apart, and every
 * later pass sequential: reading the records through an index instead cost a cache miss a
 * record, twice). Each of up to 16 threads counts and scatters a slice of the records,
 * with a count per id of its own (as many threads as keep those counts within the
 * records' size); -1 when the ids are too many to count (then qsort does it). */
static int sort_by_thread(const ks_rec *recs, uint64_t n, uint64_t T, ks_rec *out)
{
    if (!n) return 0;
    sort_job jobs[KS_MAX_THREADS];
    int nt = build_threads(n);
    for (int t = 0; t < nt; ++t)
        jobs[t] = (sort_job){.recs = recs,
                             .out = out,
                             .from = n * (uint64_t)t / (uint64_t)nt,
                             .to = n * (uint64_t)(t + 1) / (uint64_t)nt,
                             .T = T};
    ks_run_parallel(sort_pass, jobs, sizeof *jobs, nt);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int t = 0; t < nt; ++t) {
        if (jobs[t].from == jobs[t].to) continue;
        if (jobs[t].lo < lo) lo = jobs[t].lo;
        if (jobs[t].hi > hi) hi = jobs[t].hi;
    }
    const uint64_t span = hi - lo + 1;
    if (span > 4 * n + 1024 || span > (1ull << 28)) return -1;
    /* the counts take nt x span words: no more threads than keep that near the records */
    const uint64_t most = (n * sizeof *recs + (64u << 20)) / (span * sizeof(uint64_t));
    if ((uint64_t)nt > most) nt = most ? (int)most : 1;
    uint64_t *counts = malloc((uint64_t)nt * span * sizeof *counts);
    if (!counts) return -1;
    for (int t = 0; t < nt; ++t) {
        sort_job *j = &jobs[t];
        *j = (sort_job){.recs = recs,
                        .out = out,
                        .from = n * (uint64_t)t / (uint64_t)nt,
                        .to = n * (uint64_t)(t + 1) / (uint64_t)nt,
                        .T = T,
                        .lo = lo,
                        .hi = hi,
                        .count = counts + (uint64_t)t * span,
                        .key_from = span * (uint64_t)t / (uint64_t)nt,
                        .key_to = span * (uint64_t)(t + 1) / (uint64_t)nt,
                        .span = span,
                        .all = jobs,
                        .n = nt};
    }
    for (int pass = 1; pass <= 4; ++pass) {
        for (int t = 0; t < nt; ++t) jobs[t].pass = pass;
        ks_run_parallel(sort_pass, jobs, sizeof *jobs, nt);
        if (pass == 2) { /* each job's ids start after the records of the ids before them */
            uint64_t base = 0;
            for (int t = 0; t < nt; ++t) {
                const uint64_t s = jobs[t].sum;
                jobs[t].sum = base, base += s;
            }
        }
    }
    free(counts);
    return 0;
}

/* The same by qsort, stable by slot: for records whose thread ids span too far to count. */
static int sort_by_thread_qsort(const ks_rec *recs, uint64_t n, ks_rec *out)
{
    order *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord) return -1;
    for (uint64_t i = 0; i < n; ++i) ord[i] = (order){(uint64_t)recs[i].block << 16 | recs[i].thread, i};
    qsort(ord, n, sizeof *ord, cmp_order);
    for (uint64_t i = 0; i < n; ++i) out[i] = recs[ord[i].slot];
    free(ord);
    return 0;
}

int ks_rec_sort(const ks_rec *recs, uint64_t n, const uint32_t block[3], ks_rec *out)
{
    const uint64_t T = (uint64_t)block[0] * block[1] * block[2];
    return sort_by_thread(recs, n, T, out) && sort_by_thread_qsort(recs, n, out) ? -1 : 0;
}

/* What the build resolved of one record, in the records' thread order, before the events
 * are made (on several threads): its site, tensor and the low bits of its tap (the
 * site's rank of its instruction), or a barrier's line. Sites and tensors are numbered in
 * the order they are first met, so this pass runs alone, in order. */
typedef struct rec_meta {
    int32_t line; /* a barrier's source line */
    uint16_t site;
    uint8_t tensor; /* 255: a barrier */
    uint8_t rank;
} rec_meta;

/* A block's records [rec, rec_end) in the sorted records and its events from `ev`. */
typedef struct block_span {
    uint32_t block;
    uint64_t rec, rec_end, ev;
} block_span;

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
    const int nt = build_threads(nr);
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

/* Pass 2, on several threads: the events of blocks [from, to) of the spans. */
typedef struct fill_job {
    const builder *b;
    const ks_rec *sorted;
    const rec_meta *meta;
    const block_span *spans;
    int64_t from, to;
    ks_event *ev;
} fill_job;

static void *fill(void *arg)
{
    const fill_job *j = arg;
    const builder *b = j->b;
    const ks_rec_launch *l = b->l;
    const uint32_t T = l->block[0] * l->block[1] * l->block[2];
    const uint32_t bx = l->block[0], by = l->block[1], gx = l->grid[0], gy = l->grid[1];
    for (int64_t k = j->from; k < j->to; ++k) {
        const block_span *sp = &j->spans[k];
        const uint32_t blk = sp->block;
        ks_event *e = j->ev + sp->ev;
        uint64_t r = sp->rec;
        for (uint32_t t = 0; t < T; ++t) {
            const int64_t index = (int64_t)blk * T + t;
            const int kept = index >= l->filter.index_lo && index < l->filter.index_hi;
            if (kept) {
                memset(e, 0, sizeof *e);
                e->kind = KS_EV_WORK, e->tensor = 255, e->block = blk, e->thread = t, e->index = index;
                const int32_t v[6] = {(int32_t)(blk / (gx * gy)), (int32_t)(blk / gx % gy), (int32_t)(blk % gx),
                                      (int32_t)(t / (bx * by)),   (int32_t)(t / bx % by),   (int32_t)(t % bx)};
                memcpy(e->u.field, v, sizeof v);
                ++e;
            }
            uint32_t seq = 1, occ_pc[64], occ_n[64], phase = 0;
            int nocc = 0, bar_line = 0;
            for (; r < sp->rec_end && j->sorted[r].thread == t; ++r) {
                if (!kept) continue;
                const ks_rec *rec = &j->sorted[r];
                const rec_meta *m = &j->meta[r];
                if (rec->flags & KS_REC_BARRIER) { /* __syncthreads(): it ends this thread's phase */
                    memset(e, 0, sizeof *e);
                    e->kind = KS_EV_BARRIER, e->site = m->site, e->tensor = 255, e->block = blk, e->thread = t;
                    e->index = index, e->seq = seq++;
                    e->u.barrier.line = m->line;
                    e->u.barrier.phase = phase++;
                    bar_line = m->line;
                    ++e;
                    continue;
                }
                const ks_rec_buf *x = b->t[m->tensor].buf;
                const int kind = rec->flags & KS_REC_WRITE ? KS_EV_WRITE : KS_EV_READ;
                const int atomic = (rec->flags & KS_REC_ATOMIC) != 0;
                /* tap: 16 x the thread's earlier runs of this instruction + its rank in the
                 * site, as cu_trace.c gives it (a 16-byte access's second half is the same run) */
                uint32_t runs = 0;
                int found = 0;
                for (int q = 0; q < nocc && !found; ++q)
                    if (occ_pc[q] == rec->pc) {
                        found = 1;
                        if (!(rec->flags & KS_REC_HALF)) occ_n[q]++;
                        runs = occ_n[q] - 1;
                    }
                if (!found && nocc < 64) occ_pc[nocc] = rec->pc, occ_n[nocc++] = 1;
                const uint16_t tap = (uint16_t)(runs << 4 | m->rank);
                const size_t el = ks_rb_elem_of(x);
                const uint64_t boff = rec->addr - x->addr;
                const int whole = rec->size >= el && rec->size % el == 0 && boff % el == 0;
                const uint32_t parts = whole ? (uint32_t)(rec->size / el) : 1;
                const uint8_t *bytes = (const uint8_t *)&rec->value;
                for (uint32_t p = 0; p < parts; ++p, ++e) {
                    memset(e, 0, sizeof *e);
                    e->kind = (uint8_t)kind, e->flags = atomic ? KS_FLAG_ATOMIC : 0, e->site = m->site;
                    if (x == &b->shared) { /* its barrier phase, as the simulator's .cu traces */
                        e->flags |= KS_FLAG_SHARED;
                        e->u.access.reserved[0] = (int32_t)phase, e->u.access.reserved[1] = bar_line;
                    }
                    e->tensor = m->tensor, e->block = blk, e->thread = t, e->index = index, e->seq = seq++;
                    e->tap = tap;
                    ks_rb_place(e, x, (int64_t)(boff / el) + p);
                    ks_rb_set_value(e, x->dtype, bytes + p * (whole ? el : 0), whole ? el : rec->size);
                }
            }
        }
    }
    return NULL;
}

int ks_rec_build_threads;                /* 0: as many as the machine has, up to 16 */
_Thread_local double ks_rec_build_ms[4]; /* per thread: launches may end on several */

double ks_rb_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

int ks_rec_build_events(builder *b, ks_event **out_events, uint64_t *out_n)
{
    const ks_rec_launch *l = b->l;
    const uint64_t nr = l->nrecs ? l->nrecs : 1;
    /* a span a block with records: no more than the records, nor than the grid's blocks */
    const uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2], nb = blocks && blocks < nr ? blocks : nr;
    ks_rec *own = l->sorted ? NULL : malloc(nr * sizeof *own);
    const ks_rec *sorted = l->sorted ? l->recs : own;
    rec_meta *meta = malloc(nr * sizeof *meta);
    block_span *spans = malloc(nb * sizeof *spans);
    ks_event *ev = NULL;
    int rc = KS_OK;
    const double t0 = ks_rb_now_ms();
    if (!sorted || !meta || !spans || (own && ks_rec_sort(l->recs, l->nrecs, l->block, own))) {
        rc = ks_fail(KS_ENOMEM, "out of memory (%llu records)", (unsigned long long)l->nrecs);
        goto out;
    }
    uint64_t n = 0;
    const double t1 = ks_rb_now_ms();
    const int64_t nspans = resolve(b, sorted, meta, spans, nb, &n);
    const double t2 = ks_rb_now_ms();
    if (nspans < 0) {
        rc = (int)-nspans;
        goto out;
    }
    /* the events, made on up to 16 threads, each a run of blocks with about as many records */
    ev = malloc((n ? n : 1) * sizeof *ev);
    if (!ev) {
        rc = ks_fail(KS_ENOMEM, "out of memory (%llu events)", (unsigned long long)n);
        goto out;
    }
    const int cpus = build_threads(l->nrecs);
    fill_job jobs[KS_MAX_THREADS];
    int64_t k = 0;
    for (int t = 0; t < cpus; ++t) {
        const uint64_t upto = l->nrecs / (uint64_t)cpus * (uint64_t)(t + 1);
        jobs[t] = (fill_job){b, sorted, meta, spans, k, k, ev};
        while (jobs[t].to < nspans && (t == cpus - 1 || spans[jobs[t].to].rec < upto)) jobs[t].to++;
        k = jobs[t].to;
    }
    ks_run_parallel(fill, jobs, sizeof *jobs, cpus);
    ks_rec_build_ms[0] = t1 - t0, ks_rec_build_ms[1] = t2 - t1, ks_rec_build_ms[2] = ks_rb_now_ms() - t2;
    *out_events = ev;
    *out_n = n;
    ev = NULL;
out:
    free(ev);
    free(own), free(meta), free(spans);
    return rc;
}
