/* record_sort.c - a recorded launch's records into (block, thread) order, each thread's
 * in slot order (its program order): whole, once they are all in host memory
 * (ks_rec_sort), or piece by piece as they come back through a small pinned window
 * (ks_rec_sorter). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../trace/parallel.h"
#include "record_build.h"

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
    int nt = ks_rb_threads(n);
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


/* The sorter of records read back in pieces, on a team of up to 16 threads kept for its
 * life. Counting: each thread counts a slice of the piece, per thread id (summed over the
 * pieces: each id's first place) and per owner (the thread that places an id's records:
 * ids are split among the threads in ranges). Placing each piece again: each thread
 * moves its slice's records into a scratch piece grouped by owner (slices in order), then
 * each owner places its group's records at their ids' next places, so each id's records
 * land in slot order (the same as ks_rec_sort), with no atomics and each record read
 * twice. Reading the GPU's buffer twice through a 16 MB window costs less than pinned
 * memory for all of it (0.5 ms a MB to pin; 2 ms to copy 114 MB, H200). */
struct ks_rec_sorter {
    ks_rec *out, *scratch;
    uint64_t T, lo, span, n, counted, placed, scratch_len;
    int nt, placing, bad;
    ks_team *team;
    uint32_t *counts; /* nt x span: each slice's records of each id */
    uint32_t *next;   /* span: each id's next place (n <= 2^32) */
    uint32_t *owned;  /* pieces x nt x nt: slice t of piece p's records of owner o */
    uint64_t *lens;   /* pieces: each piece's records */
    uint64_t npieces, pieces_cap, piece;
    uint64_t at[KS_MAX_THREADS][KS_MAX_THREADS]; /* the piece being placed: slice x owner -> scratch place */
    uint64_t group[KS_MAX_THREADS + 1];          /* owner o's records in scratch: [group[o], group[o + 1]) */
    uint64_t base[KS_MAX_THREADS];               /* each id range's first place */
};

typedef struct piece_job {
    ks_rec_sorter *s;
    const ks_rec *piece;
    uint64_t from, to; /* the slice */
    int t, step, bad;
    uint64_t key_from, key_to, sum;
} piece_job;

static inline uint64_t key_of_rec(const ks_rec_sorter *s, const ks_rec *r)
{
    return (uint64_t)r->block * s->T + r->thread - s->lo;
}

/* The thread that places id k's records. */
static inline int owner_of(const ks_rec_sorter *s, uint64_t k) { return (int)(k * (uint64_t)s->nt / s->span); }

static void *piece_step(void *arg)
{
    piece_job *j = arg;
    ks_rec_sorter *s = j->s;
    const ks_rec *r = j->piece;
    const uint64_t span = s->span;
    switch (j->step) {
    case 0: { /* count the slice, per id and per owner */
        uint32_t *count = s->counts + (uint64_t)j->t * span, *own = s->owned + (s->npieces * s->nt + j->t) * s->nt;
        for (uint64_t i = j->from; i < j->to; ++i) {
            const uint64_t k = key_of_rec(s, &r[i]);
            if (k >= span) {
                j->bad = 1;
                continue;
            }
            count[k]++;
            own[owner_of(s, k)]++;
        }
        break;
    }
    case 1: /* the records of ids [key_from, key_to) */
        j->sum = 0;
        for (uint64_t k = j->key_from; k < j->key_to; ++k)
            for (int u = 0; u < s->nt; ++u) j->sum += s->counts[(uint64_t)u * span + k];
        break;
    case 2: /* each id's first place */
        for (uint64_t k = j->key_from, pos = j->sum; k < j->key_to; ++k) {
            s->next[k] = (uint32_t)pos;
            for (int u = 0; u < s->nt; ++u) pos += s->counts[(uint64_t)u * span + k];
        }
        break;
    case 3: { /* the slice's records into scratch, grouped by owner */
        uint64_t *at = s->at[j->t];
        for (uint64_t i = j->from; i < j->to; ++i) {
            const uint64_t k = key_of_rec(s, &r[i]);
            const int o = k < span ? owner_of(s, k) : 0;
            if (k >= span || at[o] >= s->group[o + 1]) { /* not the records counted */
                j->bad = 1;
                continue;
            }
            s->scratch[at[o]++] = r[i];
        }
        break;
    }
    case 5: { /* each id's records all placed: its next place is where the next id's begin */
        uint64_t pos = s->base[j->t];
        for (uint64_t k = j->key_from; k < j->key_to; ++k) {
            for (int u = 0; u < s->nt; ++u) pos += s->counts[(uint64_t)u * span + k];
            if (s->next[k] != pos) j->bad = 1;
        }
        break;
    }
    default: /* this owner's records, slices in order, at their ids' next places */
        for (uint64_t i = s->group[j->t]; i < s->group[j->t + 1]; ++i) {
            const uint32_t at = s->next[key_of_rec(s, &s->scratch[i])]++;
            if (at >= s->n) j->bad = 1;
            else s->out[at] = s->scratch[i];
        }
    }
    return NULL;
}

/* Runs `step` on the team: each member a slice of the piece, or a range of ids. */
static int sorter_run(ks_rec_sorter *s, int step, const ks_rec *piece, uint64_t len)
{
    piece_job jobs[KS_MAX_THREADS];
    int bad = 0;
    for (int t = 0; t < s->nt; ++t)
        jobs[t] = (piece_job){.s = s,
                              .piece = piece,
                              .from = len * (uint64_t)t / (uint64_t)s->nt,
                              .to = len * (uint64_t)(t + 1) / (uint64_t)s->nt,
                              .t = t,
                              .step = step,
                              .key_from = s->span * (uint64_t)t / (uint64_t)s->nt,
                              .key_to = s->span * (uint64_t)(t + 1) / (uint64_t)s->nt};
    ks_team_run(s->team, piece_step, jobs, sizeof *jobs);
    if (step == 1) { /* each range's ids start after the records of the ranges before it */
        uint64_t base = 0;
        for (int t = 0; t < s->nt; ++t) {
            const uint64_t sum = jobs[t].sum;
            jobs[t].sum = s->base[t] = base, base += sum;
        }
        for (int t = 0; t < s->nt; ++t) jobs[t].step = 2;
        ks_team_run(s->team, piece_step, jobs, sizeof *jobs);
    }
    for (int t = 0; t < s->nt; ++t) bad |= jobs[t].bad;
    return bad ? -1 : 0;
}

ks_rec_sorter *ks_rec_sorter_new(const uint32_t block[3], uint64_t lo, uint64_t hi, uint64_t n, ks_rec *out)
{
    if (hi <= lo || hi - lo > (1ull << 28) || n > UINT32_MAX) return NULL;
    ks_rec_sorter *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->out = out, s->T = (uint64_t)block[0] * block[1] * block[2], s->lo = lo, s->span = hi - lo, s->n = n;
    int nt = ks_rb_threads(n);
    /* the counts take nt x span words: no more threads than keep that near the records */
    const uint64_t most = (n * sizeof(ks_rec) + (64u << 20)) / (s->span * sizeof *s->counts);
    if ((uint64_t)nt > most) nt = most ? (int)most : 1;
    s->team = ks_team_new(nt);
    s->nt = s->team ? ks_team_size(s->team) : 1;
    s->counts = calloc((size_t)s->nt * s->span, sizeof *s->counts);
    s->next = malloc(s->span * sizeof *s->next);
    if (!s->team || !s->counts || !s->next) {
        ks_rec_sorter_free(s);
        return NULL;
    }
    return s;
}

int ks_rec_sorter_count(ks_rec_sorter *s, const ks_rec *piece, uint64_t len)
{
    if (s->placing || s->bad) return -1;
    if (s->npieces == s->pieces_cap) { /* room for this piece's owner counts */
        const uint64_t cap = s->pieces_cap ? 2 * s->pieces_cap : 16;
        uint32_t *owned = realloc(s->owned, cap * (uint64_t)s->nt * s->nt * sizeof *owned);
        uint64_t *lens = owned ? realloc(s->lens, cap * sizeof *lens) : NULL;
        if (owned) s->owned = owned;
        if (!lens) return s->bad = 1, -1;
        s->lens = lens, s->pieces_cap = cap;
    }
    memset(s->owned + s->npieces * s->nt * s->nt, 0, (size_t)s->nt * s->nt * sizeof *s->owned);
    if (sorter_run(s, 0, piece, len)) s->bad = 1;
    s->lens[s->npieces++] = len;
    if (len > s->scratch_len) s->scratch_len = len;
    s->counted += len;
    return s->bad ? -1 : 0;
}

int ks_rec_sorter_place(ks_rec_sorter *s, const ks_rec *piece, uint64_t len)
{
    if (s->bad) return -1;
    if (!s->placing) { /* the first piece placed: each id's first place from the counts */
        if (s->counted != s->n || !(s->scratch = malloc((s->scratch_len ? s->scratch_len : 1) * sizeof *s->scratch)))
            return s->bad = 1, -1;
        sorter_run(s, 1, NULL, 0);
        s->placing = 1;
    }
    if (s->piece >= s->npieces || s->lens[s->piece] != len) return s->bad = 1, -1; /* not the pieces counted */
    /* where each slice's records of each owner go in scratch: owners in turn, slices in order */
    const uint32_t *own = s->owned + s->piece * s->nt * s->nt;
    uint64_t pos = 0;
    for (int o = 0; o < s->nt; ++o) {
        s->group[o] = pos;
        for (int t = 0; t < s->nt; ++t) s->at[t][o] = pos, pos += own[t * s->nt + o];
    }
    s->group[s->nt] = pos;
    if (pos != len || sorter_run(s, 3, piece, len) || sorter_run(s, 4, NULL, 0)) s->bad = 1;
    s->piece++;
    s->placed += len;
    return s->bad ? -1 : 0;
}

int ks_rec_sorter_finish(ks_rec_sorter *s)
{
    if (s->bad || !s->placing || s->placed != s->n || sorter_run(s, 5, NULL, 0)) return s->bad = 1, -1;
    return 0;
}

void ks_rec_sorter_free(ks_rec_sorter *s)
{
    if (!s) return;
    ks_team_free(s->team);
    free(s->counts), free(s->next), free(s->owned), free(s->lens), free(s->scratch), free(s);
}
