/* vw_index_decode.c - the index pass's chunks decoded ahead on other threads (see
 * vw_index_int.h). Chunks go in batches of BATCH (one hand-over, one lock, per batch,
 * not per chunk): batch b goes to slot b % nslots; decoder thread t decodes batches t,
 * t + nthreads, ... each once its slot is free (batch b - nslots done with), and the pass
 * takes them in order. With two decoders or more an aggregator thread also takes every
 * batch in order and sums the aggregates (vw_agg_event), so the building thread only
 * collects the items; a slot is free once both are done with it. On one core of this
 * project's 2-core machine the pass is about 40 % decoding, 30 % aggregates and 10 %
 * items, so the threads shorten the building thread's path to about a third where the
 * cores exist. Two cores get one decoder (no aggregator): on this project's 2-core
 * machine, idle, the 100 M-event index took 1.49-1.58 s with it against 2.19-2.23 s
 * without (10 M: 1.70-1.77 against 2.37-2.60); with the other core busy the two measured
 * about the same (bench/RESULTS.md). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"

#include "vw_index_int.h"

#define MAX_DECODERS 7
#define SLOTS_PER_DECODER 2
#define BATCH 8 /* chunks a slot: 8 x 4096 events, 2 MB */

typedef struct slot {
    ks_event *ev;    /* BATCH chunks' room */
    uint64_t b;      /* the batch it holds, when full */
    size_t m[BATCH]; /* each chunk's events */
    int full, ok;    /* ok: every chunk of it decoded */
} slot;

typedef struct worker {
    struct vw_decoder *d;
    int t;
} worker;

struct vw_decoder {
    const ks_trace *tr;
    uint64_t nchunks, nbatches, consumed; /* batches the pass is done with */
    int nthreads, nslots, stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th[MAX_DECODERS];
    /* the aggregator, when on: batches it is done with, its failure */
    vw_index *idx;
    pthread_t agg;
    int has_agg, agg_rc;
    uint64_t agg_done;
    char agg_msg[512];
    worker w[MAX_DECODERS];
    slot s[MAX_DECODERS * SLOTS_PER_DECODER + 2];
};

static int want_decoders = -1; /* -1: from the cores online */

/* Batches every consumer is done with: their slots may be filled again. */
static uint64_t released(const struct vw_decoder *d)
{
    return d->has_agg && d->agg_done < d->consumed ? d->agg_done : d->consumed;
}

void vw_index_set_decoders(int n) { want_decoders = n < 0 ? -1 : n > MAX_DECODERS ? MAX_DECODERS : n; }

static void *work(void *arg)
{
    worker *w = arg;
    struct vw_decoder *d = w->d;
    const uint64_t ce = d->tr->chunk_events;
    for (uint64_t b = (uint64_t)w->t; b < d->nbatches; b += (uint64_t)d->nthreads) {
        slot *s = &d->s[b % (uint64_t)d->nslots];
        pthread_mutex_lock(&d->mu);
        while (!d->stop && b >= released(d) + (uint64_t)d->nslots) pthread_cond_wait(&d->cv, &d->mu);
        const int stop = d->stop;
        pthread_mutex_unlock(&d->mu);
        if (stop) break;
        int ok = 1;
        for (uint64_t i = 0; i < BATCH && b * BATCH + i < d->nchunks && ok; ++i)
            ok = !vw_decode_chunk(d->tr, b * BATCH + i, s->ev + i * ce, &s->m[i]);
        pthread_mutex_lock(&d->mu);
        s->b = b, s->ok = ok, s->full = 1;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}

/* Every batch in order, its events into the aggregates; stops at the first failure (kept
 * with its message for the building thread) or a batch that does not decode (the
 * building thread reports it). */
static void *aggregate(void *arg)
{
    struct vw_decoder *d = arg;
    const uint64_t ce = d->tr->chunk_events;
    int rc = KS_OK;
    for (uint64_t b = 0; b < d->nbatches && !rc; ++b) {
        slot *s = &d->s[b % (uint64_t)d->nslots];
        pthread_mutex_lock(&d->mu);
        while (!d->stop && !(s->full && s->b == b)) pthread_cond_wait(&d->cv, &d->mu);
        const int stop = d->stop;
        pthread_mutex_unlock(&d->mu);
        if (stop || !s->ok) break;
        for (uint64_t i = 0; i < BATCH && b * BATCH + i < d->nchunks && !rc; ++i)
            for (size_t j = 0; j < s->m[i] && !rc; ++j) rc = vw_agg_event(d->idx, &s->ev[i * ce + j]);
        if (rc) {
            d->agg_rc = rc;
            snprintf(d->agg_msg, sizeof d->agg_msg, "%s", ks_error_message());
        }
        pthread_mutex_lock(&d->mu);
        d->agg_done = rc ? UINT64_MAX / 2 : b + 1; /* failed: it holds no slot back */
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_lock(&d->mu);
    d->agg_done = UINT64_MAX / 2;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

vw_decoder *vw_decoder_start(const ks_trace *tr, uint64_t nchunks, vw_index *idx)
{
    int n = want_decoders;
    if (n < 0) { /* 2 cores: one decoder; 3: one and the aggregator; more: cores - 2 and it */
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores <= 1 || nchunks < 16 ? 0
            : cores == 2               ? 1
            : cores == 3               ? -1
                                       : (int)(cores - 2 < MAX_DECODERS ? cores - 2 : MAX_DECODERS);
    }
    const int with_agg = n >= 2 || n == -1;
    if (n == -1) n = 1;
    if (!n || !vw_trace_lazy(tr)) return NULL;
    struct vw_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->tr = tr, d->nchunks = nchunks, d->nbatches = (nchunks + BATCH - 1) / BATCH;
    d->nthreads = n, d->nslots = n * SLOTS_PER_DECODER + (with_agg ? 2 : 0);
    d->idx = idx;
    for (int i = 0; i < d->nslots; ++i)
        if (!(d->s[i].ev = malloc(BATCH * tr->chunk_events * sizeof *d->s[i].ev))) goto fail;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->has_agg = with_agg && !pthread_create(&d->agg, NULL, aggregate, d); /* before the decoders read it */
    for (int t = 0; t < n; ++t) {
        d->w[t] = (worker){d, t};
        if (pthread_create(&d->th[t], NULL, work, &d->w[t])) {
            d->nthreads = t; /* the threads started so far stop; the pass decodes itself */
            vw_decoder_stop(d, 0);
            return NULL;
        }
    }
    return d;
fail:
    for (int i = 0; i < d->nslots; ++i) free(d->s[i].ev);
    free(d);
    return NULL;
}

const ks_event *vw_decoder_next(vw_decoder *d, uint64_t k, size_t *m)
{
    const uint64_t b = k / BATCH, i = k % BATCH;
    slot *s = &d->s[b % (uint64_t)d->nslots];
    if (!i) { /* a new batch: wait for it */
        pthread_mutex_lock(&d->mu);
        while (!(s->full && s->b == b)) pthread_cond_wait(&d->cv, &d->mu);
        pthread_mutex_unlock(&d->mu);
    }
    ks_event *ev = s->ev + i * d->tr->chunk_events;
    if (!s->ok) { /* again on this thread: which chunk failed, and the message (per thread) */
        return vw_decode_chunk(d->tr, k, ev, m) ? NULL : ev;
    }
    *m = s->m[i];
    return ev;
}

void vw_decoder_done(vw_decoder *d, uint64_t k)
{
    if (k % BATCH != BATCH - 1 && k + 1 != d->nchunks) return; /* the batch goes back whole */
    pthread_mutex_lock(&d->mu);
    d->consumed = k / BATCH + 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

int vw_decoder_aggregates(const vw_decoder *d) { return d && d->has_agg; }

int vw_decoder_stop(vw_decoder *d, int finish)
{
    if (!d) return KS_OK;
    if (d->has_agg && finish) pthread_join(d->agg, NULL); /* every batch summed */
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    for (int t = 0; t < d->nthreads; ++t) pthread_join(d->th[t], NULL);
    if (d->has_agg && !finish) pthread_join(d->agg, NULL);
    int rc = finish && d->agg_rc ? ks_fail(d->agg_rc, "%s", d->agg_msg) : KS_OK;
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    for (int i = 0; i < d->nslots; ++i) free(d->s[i].ev);
    free(d);
    return rc;
}
