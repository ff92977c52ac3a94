/* record_events.c - the events of a recorded launch, from its records (record.h): the
 * records sorted whole into (block, thread) order; then, alone and in order, every kept
 * record's site and tensor (their numbers are first-met order); then the events, made on
 * up to 16 threads, each a run of blocks. The trace is the same for any number of
 * threads. */
#define _POSIX_C_SOURCE 200809L
#include "record_build.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"

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

/* The records in (block, thread) order, each thread's in slot order, copied into `out`:
 * a counting sort over the global thread ids the records span, scattering whole records
 * (one sequential read of the GPU's order, whose threads' records lie far apart, and every
 * later pass sequential: reading the records through an index instead cost a cache miss a
 * record, twice); -1 when those ids are too many to count (then qsort does it). */
static int sort_by_thread(const ks_rec *recs, uint64_t n, uint64_t T, ks_rec *out)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t g = (uint64_t)recs[i].block * T + recs[i].thread;
        if (g < lo) lo = g;
        if (g > hi) hi = g;
    }
    if (!n) return 0;
    const uint64_t span = hi - lo + 1;
    if (span > 4 * n + 1024 || span > (1ull << 28)) return -1;
    uint64_t *start = calloc(span + 1, sizeof *start);
    if (!start) return -1;
    for (uint64_t i = 0; i < n; ++i) start[(uint64_t)recs[i].block * T + recs[i].thread - lo + 1]++;
    for (uint64_t k = 0; k < span; ++k) start[k + 1] += start[k];
    for (uint64_t i = 0; i < n; ++i) out[start[(uint64_t)recs[i].block * T + recs[i].thread - lo]++] = recs[i];
    free(start);
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

/* Pass 1, alone and in order: every kept record's site and tensor, and each block's span
 * of records and events. Returns the number of blocks, or -status. */
static int64_t resolve(builder *b, const ks_rec *sorted, rec_meta *meta, block_span *spans, uint64_t nb, uint64_t *nev)
{
    const ks_rec_launch *l = b->l;
    const uint32_t T = l->block[0] * l->block[1] * l->block[2];
    memo_slot *memo = calloc(MEMO_SLOTS, sizeof *memo);
    if (!memo) return -ks_fail(KS_ENOMEM, "out of memory");
    int64_t nspans = 0;
    uint64_t n = 0;
    int rc = KS_OK;
    for (uint64_t i = 0; i < l->nrecs && rc == KS_OK;) {
        const uint32_t blk = sorted[i].block;
        if ((uint64_t)nspans == nb) { /* more blocks than the grid has: not this launch's records */
            rc = ks_fail(KS_EINVAL, "a record names block %u of a grid of %llu blocks", blk, (unsigned long long)nb);
            break;
        }
        block_span *sp = &spans[nspans++];
        sp->block = blk, sp->rec = i, sp->ev = n;
        uint64_t r = i;
        for (uint32_t t = 0; t < T && rc == KS_OK; ++t) {
            const int64_t index = (int64_t)blk * T + t;
            const int kept = index >= l->filter.index_lo && index < l->filter.index_hi;
            n += kept; /* its work event */
            for (; r < l->nrecs && sorted[r].block == blk && sorted[r].thread == t; ++r) {
                if (!kept) continue;
                const ks_rec *rec = &sorted[r];
                rec_meta *m = &meta[r];
                if (rec->flags & KS_REC_BARRIER) {
                    const int s = ks_rb_site_of(b, rec->pc, KS_EV_BARRIER, -1);
                    if (s < 0) {
                        rc = -s;
                        break;
                    }
                    *m = (rec_meta){ks_rb_line_for(b, rec->pc)->line, (uint16_t)s, 255, 0};
                    n += 1;
                    continue;
                }
                const ks_rec_buf *x = ks_rb_find_buf(b, rec->addr);
                const int ti = ks_rb_tensor_of(b, x);
                if (ti < 0) {
                    rc = -ti;
                    break;
                }
                const int kind = rec->flags & KS_REC_WRITE ? KS_EV_WRITE : KS_EV_READ;
                if (kind == KS_EV_WRITE) b->t[ti].written = 1;
                uint8_t rank = 0;
                const int s = site_rank(b, memo, rec->pc, kind, ti, &rank);
                if (s < 0) {
                    rc = -s;
                    break;
                }
                *m = (rec_meta){0, (uint16_t)s, (uint8_t)ti, rank};
                const size_t el = ks_rb_elem_of(x);
                const uint64_t boff = rec->addr - x->addr;
                const int whole = rec->size >= el && rec->size % el == 0 && boff % el == 0;
                n += whole ? rec->size / el : 1;
            }
        }
        /* records of threads past the block's size cannot be: the GPU numbers them so */
        while (r < l->nrecs && sorted[r].block == blk) ++r;
        sp->rec_end = r;
        i = r;
    }
    free(memo);
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
    long cpus = ks_rec_build_threads;
    if (cpus <= 0) cpus = l->nrecs < 65536 ? 1 : sysconf(_SC_NPROCESSORS_ONLN); /* small: not worth threads */
    if (cpus > 16) cpus = 16;
    if (cpus < 1) cpus = 1;
    fill_job jobs[16];
    pthread_t th[16];
    int started[16] = {0};
    int64_t k = 0;
    for (long t = 0; t < cpus; ++t) {
        const uint64_t upto = l->nrecs / (uint64_t)cpus * (uint64_t)(t + 1);
        jobs[t] = (fill_job){b, sorted, meta, spans, k, k, ev};
        while (jobs[t].to < nspans && (t == cpus - 1 || spans[jobs[t].to].rec < upto)) jobs[t].to++;
        k = jobs[t].to;
        if (t > 0) started[t] = pthread_create(&th[t], NULL, fill, &jobs[t]) == 0;
    }
    fill(&jobs[0]);
    for (long t = 1; t < cpus; ++t) {
        if (started[t]) pthread_join(th[t], NULL);
        else fill(&jobs[t]); /* a thread that did not start: its share here */
    }
    ks_rec_build_ms[0] = t1 - t0, ks_rec_build_ms[1] = t2 - t1, ks_rec_build_ms[2] = ks_rb_now_ms() - t2;
    *out_events = ev;
    *out_n = n;
    ev = NULL;
out:
    free(ev);
    free(own), free(meta), free(spans);
    return rc;
}
