/* record_runs.c - a recorded launch's records, written on the GPU in runs (record.h:
 * each thread claims KS_REC_RUN slots at a time, in its program order), put into
 * (block, thread) order: each thread's place follows from the per-thread state the GPU
 * leaves (its runs and the fill of its last), and each run's records go to their place
 * in one copy. No sort: the records are read once, as they come back through the
 * recorder's pinned window. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../trace/parallel.h"
#include "record_build.h"

struct ks_rec_runs {
    uint64_t T, lo, span, slots, total;
    uint32_t *start; /* span: each thread's first place (total < 2^32) */
    uint32_t *runs;  /* span: its runs */
    uint8_t *fill;   /* span: the records in its last run, 1..KS_REC_RUN */
    uint64_t placed_runs, placed, all_runs, seen_slots;
    int bad;
    ks_team *team;
};

ks_rec_runs *ks_rec_runs_new(const uint64_t *state, uint64_t span, uint64_t lo, const uint32_t block[3], uint64_t slots)
{
    if (span == 0 || span > KS_REC_RUNS_MAX_THREADS || slots % KS_REC_RUN || slots >= UINT32_MAX) return NULL;
    ks_rec_runs *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->T = (uint64_t)block[0] * block[1] * block[2], r->lo = lo, r->span = span, r->slots = slots;
    r->start = malloc(span * sizeof *r->start);
    r->runs = malloc(span * sizeof *r->runs);
    r->fill = malloc(span);
    r->team = ks_team_new(ks_rb_threads(slots));
    if (!r->start || !r->runs || !r->fill || !r->team) {
        ks_rec_runs_free(r);
        return NULL;
    }
    uint64_t total = 0;
    for (uint64_t k = 0; k < span; ++k) {
        /* state: runs << 32 | (the next free slot + 1); the last record is 2 below it */
        const uint32_t runs = (uint32_t)(state[k] >> 32), next1 = (uint32_t)state[k];
        r->start[k] = (uint32_t)total, r->runs[k] = runs, r->fill[k] = 0;
        if (!runs) continue;
        if (next1 < 2 || next1 - 2 >= slots) r->bad = 1; /* its last record outside the runs read */
        r->fill[k] = (uint8_t)((next1 - 2) % KS_REC_RUN + 1);
        total += (uint64_t)(runs - 1) * KS_REC_RUN + r->fill[k];
        r->all_runs += runs;
        if (total > slots) r->bad = 1;
    }
    if (r->all_runs * KS_REC_RUN != slots) r->bad = 1; /* every run read belongs to a thread */
    r->total = r->bad ? 0 : total;
    return r;
}

uint64_t ks_rec_runs_total(const ks_rec_runs *r) { return r->total; }

typedef struct runs_job {
    ks_rec_runs *r;
    const ks_rec *piece;
    ks_rec *out;
    uint64_t from, to; /* runs of the piece */
    uint64_t runs, recs;
    int bad;
} runs_job;

static void *place_runs(void *arg)
{
    runs_job *j = arg;
    const ks_rec_runs *r = j->r;
    for (uint64_t u = j->from; u < j->to; ++u) {
        const ks_rec *run = j->piece + u * KS_REC_RUN;
        const uint64_t g = (uint64_t)run->block * r->T + run->thread;
        const uint64_t k = g - r->lo;
        const uint32_t rank = run->run;
        if (g < r->lo || k >= r->span || rank >= r->runs[k]) {
            j->bad = 1;
            continue;
        }
        const uint32_t m = rank + 1 == r->runs[k] ? r->fill[k] : KS_REC_RUN;
        for (uint32_t i = 1; i < m; ++i) /* one thread's run: every record says so */
            if (run[i].block != run->block || run[i].thread != run->thread || run[i].run != rank) j->bad = 1;
        memcpy(j->out + r->start[k] + (uint64_t)rank * KS_REC_RUN, run, m * sizeof *run);
        j->runs++, j->recs += m;
    }
    return NULL;
}

int ks_rec_runs_place(ks_rec_runs *r, const ks_rec *piece, uint64_t first_slot, uint64_t len, ks_rec *out)
{
    if (r->bad || first_slot != r->seen_slots || len % KS_REC_RUN || first_slot + len > r->slots) return r->bad = 1, -1;
    r->seen_slots += len;
    runs_job jobs[KS_MAX_THREADS];
    const int nt = ks_team_size(r->team);
    const uint64_t n = len / KS_REC_RUN;
    for (int t = 0; t < nt; ++t)
        jobs[t] = (runs_job){.r = r,
                             .piece = piece,
                             .out = out,
                             .from = n * (uint64_t)t / (uint64_t)nt,
                             .to = n * (uint64_t)(t + 1) / (uint64_t)nt};
    ks_team_run(r->team, place_runs, jobs, sizeof *jobs);
    for (int t = 0; t < nt; ++t) {
        r->bad |= jobs[t].bad;
        r->placed_runs += jobs[t].runs, r->placed += jobs[t].recs;
    }
    return r->bad ? -1 : 0;
}

int ks_rec_runs_finish(ks_rec_runs *r)
{
    /* every run read once, and as many records placed as the threads' states name */
    if (r->bad || r->seen_slots != r->slots || r->placed_runs != r->all_runs || r->placed != r->total)
        return r->bad = 1, -1;
    return 0;
}

void ks_rec_runs_free(ks_rec_runs *r)
{
    if (!r) return;
    ks_team_free(r->team);
    free(r->start), free(r->runs), free(r->fill), free(r);
}
