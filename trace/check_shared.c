/* check_shared.c - the shared-memory and barrier checks of `check`, from the trace alone.
 *
 * A shared access is a read or write event flagged KS_FLAG_SHARED, carrying its barrier
 * phase (access.reserved[0]); a barrier arrival is a KS_EV_BARRIER event (its line and the
 * phase it ends). compute-sanitizer's racecheck is the model: within one block and one
 * phase, a slot written by one thread and read or written by another is a hazard (no
 * barrier orders them). A read of a slot no thread wrote in that block before (an earlier
 * phase, or the same thread earlier in this phase) is a read of uninitialised shared
 * memory. Threads of a block that arrive at one phase's barrier at different lines, or a
 * thread of a complete trace passing fewer barriers than the others of its block, are a
 * divergent barrier.
 */
#include "check_shared.h"

#include <stdlib.h>

#include "../kernels/core/ks_error.h"

typedef struct ref {
    uint32_t block, phase, thread, iter, seq;
    int64_t offset;
    uint64_t event;
} ref;

static int is_shared(const ks_trace *tr, const ks_event *e)
{
    return (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && (e->flags & KS_FLAG_SHARED) && e->site < tr->nsites &&
           tr->sites[e->site].kind == e->kind;
}

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

/* accesses: by block, slot, phase, thread, then program order (iter, seq) */
static int by_slot(const void *pa, const void *pb)
{
    const ref *a = pa, *b = pb;
    int c;
    if ((c = cmp_u64(a->block, b->block)) || (c = (a->offset > b->offset) - (a->offset < b->offset)) ||
        (c = cmp_u64(a->phase, b->phase)) || (c = cmp_u64(a->thread, b->thread)) || (c = cmp_u64(a->iter, b->iter)))
        return c;
    return cmp_u64(a->seq, b->seq);
}

/* barriers: by block, thread, phase */
static int by_thread(const void *pa, const void *pb)
{
    const ref *a = pa, *b = pb;
    int c;
    if ((c = cmp_u64(a->block, b->block)) || (c = cmp_u64(a->thread, b->thread))) return c;
    return cmp_u64(a->phase, b->phase);
}

static ref make_ref(const ks_event *e, uint64_t i, uint32_t phase, int64_t offset)
{
    return (ref){.block = e->block, .phase = phase, .thread = e->thread, .iter = e->iter, .seq = e->seq,
                 .offset = offset, .event = i};
}

static const char *slot_tensor(const ks_trace *tr, const ks_event *e)
{
    return e->tensor < tr->ntensors ? tr->tensors[e->tensor].name : "?";
}

/* One slot's accesses in one phase, [a, b) of the sorted refs: races and uninitialised
 * reads; *written says whether an earlier phase wrote it. */
static void check_phase(const ks_trace *tr, const ref *r, uint64_t a, uint64_t b, int *written, ks_check_report *rep,
                        ks_violation_fn v)
{
    int64_t writer = -1;   /* a thread that writes the slot in this phase */
    uint64_t wevent = 0;
    for (uint64_t k = a; k < b; ++k)
        if (tr->events[r[k].event].kind == KS_EV_WRITE && writer < 0) writer = r[k].thread, wevent = r[k].event;
    int raced = 0;
    for (uint64_t k = a; k < b; ++k) {
        const ks_event *e = &tr->events[r[k].event];
        if (writer >= 0 && r[k].thread != (uint32_t)writer && !raced) {
            raced = 1; /* one report per slot and phase */
            rep->shared_races++;
            v(rep, r[k].event, e,
              "shared race: %s of %s (plane %d, y %d, x %d) in phase %u, which thread %lld writes (event %llu) with no barrier between",
              e->kind == KS_EV_WRITE ? "write" : "read", slot_tensor(tr, e), e->u.access.plane, e->u.access.y,
              e->u.access.x, r[k].phase, (long long)writer, (unsigned long long)wevent);
        }
    }
    /* uninitialised: a read before any write of this thread, with none in an earlier phase */
    for (uint64_t k = a; k < b && !*written; ++k) {
        const ks_event *e = &tr->events[r[k].event];
        uint64_t j = a;
        while (j < k && !(r[j].thread == r[k].thread && tr->events[r[j].event].kind == KS_EV_WRITE)) ++j;
        if (e->kind == KS_EV_READ && j == k && (writer < 0 || (uint32_t)writer == r[k].thread)) {
            rep->shared_uninit++;
            v(rep, r[k].event, e, "read of uninitialised shared memory %s (plane %d, y %d, x %d) in phase %u: nothing wrote it before",
              slot_tensor(tr, e), e->u.access.plane, e->u.access.y, e->u.access.x, r[k].phase);
            break;
        }
    }
    if (writer >= 0) *written = 1;
}

static void check_slots(const ks_trace *tr, ref *r, uint64_t n, ks_check_report *rep, ks_violation_fn v)
{
    qsort(r, n, sizeof *r, by_slot);
    for (uint64_t a = 0; a < n;) {
        int written = 0;
        uint64_t s = a; /* one slot of one block: its phases in order */
        while (s < n && r[s].block == r[a].block && r[s].offset == r[a].offset) {
            uint64_t e = s;
            while (e < n && r[e].block == r[s].block && r[e].offset == r[s].offset && r[e].phase == r[s].phase) ++e;
            check_phase(tr, r, s, e, &written, rep, v);
            s = e;
        }
        a = s;
    }
}

/* Barriers of one block [a, b), sorted by thread then phase: one line per phase, and (in
 * a complete trace) the same number for every thread of the block that recorded work. */
static void check_block_barriers(const ks_trace *tr, const ref *r, uint64_t a, uint64_t b, const unsigned char *worked,
                                 ks_check_report *rep, ks_violation_fn v)
{
    uint32_t most = 0, most_thread = 0;
    for (uint64_t k = a; k < b;) {
        uint64_t e = k;
        while (e < b && r[e].thread == r[k].thread) ++e;
        if (e - k > most) most = (uint32_t)(e - k), most_thread = r[k].thread;
        k = e;
    }
    /* the line of each phase, as the thread with the most barriers saw it */
    for (uint64_t k = a; k < b; ++k) {
        const ks_event *e = &tr->events[r[k].event];
        uint64_t m = a;
        while (m < b && !(r[m].thread == most_thread && r[m].phase == r[k].phase)) ++m;
        if (m < b && tr->events[r[m].event].u.barrier.line != e->u.barrier.line) {
            rep->barrier_divergent++;
            v(rep, r[k].event, e, "divergent barrier: in phase %u thread %u waits at line %d, thread %u at line %d",
              r[k].phase, r[k].thread, e->u.barrier.line, most_thread, tr->events[r[m].event].u.barrier.line);
            return;
        }
    }
    if (!rep->complete || !worked) return;
    const uint32_t block = r[a].block;
    for (uint32_t th = 0; th < (uint32_t)tr->threads; ++th) {
        if (!worked[th]) continue;
        uint32_t mine = 0;
        for (uint64_t k = a; k < b; ++k) mine += r[k].thread == th;
        if (mine == most) continue;
        /* the first barrier it missed: the most-barriers thread's arrival number `mine` */
        uint64_t m = a;
        while (m < b && r[m].thread != most_thread) ++m;
        const ks_event *miss = &tr->events[r[m + mine].event];
        rep->barrier_divergent++;
        v(rep, r[m + mine].event, miss,
          "divergent barrier: block %u thread %u passes %u barriers, thread %u passes %u; thread %u never reaches the one at line %d (phase %u)",
          block, th, mine, most_thread, most, th, miss->u.barrier.line, miss->u.barrier.phase);
        return;
    }
}

static int check_barriers(const ks_trace *tr, ref *r, uint64_t n, ks_check_report *rep, ks_violation_fn v)
{
    uint64_t nw = 0, kw = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) nw += tr->events[i].kind == KS_EV_WORK;
    ref *work = malloc((size_t)(nw ? nw : 1) * sizeof *work); /* (block, thread) of each work event */
    unsigned char *worked = calloc((size_t)tr->threads, 1);
    if (!work || !worked) {
        free(work);
        free(worked);
        return KS_ENOMEM;
    }
    for (uint64_t i = 0; i < tr->nevents; ++i)
        if (tr->events[i].kind == KS_EV_WORK) work[kw++] = make_ref(&tr->events[i], i, 0, 0);
    qsort(work, nw, sizeof *work, by_thread);
    qsort(r, n, sizeof *r, by_thread);
    uint64_t w = 0;
    for (uint64_t a = 0; a < n;) {
        uint64_t b = a;
        while (b < n && r[b].block == r[a].block) ++b;
        for (int t = 0; t < tr->threads; ++t) worked[t] = 0;
        while (w < nw && work[w].block < r[a].block) ++w;
        for (; w < nw && work[w].block == r[a].block; ++w)
            if (work[w].thread < (uint32_t)tr->threads) worked[work[w].thread] = 1;
        check_block_barriers(tr, r, a, b, worked, rep, v);
        a = b;
    }
    free(work);
    free(worked);
    return KS_OK;
}

int ks_check_shared(const ks_trace *tr, ks_check_report *rep, ks_violation_fn v)
{
    uint64_t na = 0, nb = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        na += is_shared(tr, &tr->events[i]);
        nb += tr->events[i].kind == KS_EV_BARRIER;
    }
    rep->shared_accesses = na;
    rep->barriers = nb;
    if (!na && !nb) return KS_OK;
    ref *acc = malloc((size_t)(na ? na : 1) * sizeof *acc), *bar = malloc((size_t)(nb ? nb : 1) * sizeof *bar);
    int rc = acc && bar ? KS_OK : KS_ENOMEM;
    uint64_t ka = 0, kb = 0;
    for (uint64_t i = 0; i < tr->nevents && !rc; ++i) {
        const ks_event *e = &tr->events[i];
        if (is_shared(tr, e)) acc[ka++] = make_ref(e, i, (uint32_t)e->u.access.reserved[0], e->u.access.offset);
        else if (e->kind == KS_EV_BARRIER) bar[kb++] = make_ref(e, i, e->u.barrier.phase, 0);
    }
    if (!rc) check_slots(tr, acc, na, rep, v);
    if (!rc && nb) rc = check_barriers(tr, bar, nb, rep, v);
    free(acc);
    free(bar);
    return rc;
}
