/* pz_judge_shared.c - the shared-memory rules, read from the trace alone: shared
 * accesses are events flagged KS_FLAG_SHARED with the thread's barrier phase
 * (access.reserved[0]), barrier arrivals KS_EV_BARRIER events (ks_shared.h). A block's
 * events are contiguous and in execution order (the simulator runs a block at a time),
 * so one pass with a shadow of each slot, reset at every block, finds what racecheck
 * would: two threads touching one slot in one phase, one of them writing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pz_grade.h"

enum { PZ_SLOTS = KS_SHARED_ARRAYS * PZ_SHARED_SLOTS, PZ_MAX_BARRIERS = 256 };

typedef struct slot {
    int64_t wphase, writer, rphase, reader; /* phase + 1 of the last write / read (0: none), by whom */
    int written;                            /* written in this block at all */
} slot;

int pz_is_shared(const ks_event *e)
{
    return e->kind == KS_EV_BARRIER || ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && (e->flags & KS_FLAG_SHARED));
}

static void slot_name(char *buf, size_t n, const ks_event *e)
{
    snprintf(buf, n, "element %lld of shared array %d", (long long)(e->u.access.offset % PZ_SHARED_SLOTS),
             (int)(e->u.access.offset / PZ_SHARED_SLOTS));
}

/* One shared access against the shadow: the first race and read of an unwritten slot. */
static void on_access(slot *sl, const ks_event *e, pz_rule *race, pz_rule *uninit)
{
    const int64_t o = e->u.access.offset, ph = (int64_t)e->u.access.reserved[0] + 1, me = e->thread;
    if (o < 0 || o >= PZ_SLOTS) return;
    slot *s = &sl[o];
    char el[80];
    slot_name(el, sizeof el, e);
    if (e->kind == KS_EV_READ) {
        if (!s->written && uninit->ok) {
            snprintf(uninit->detail, sizeof uninit->detail,
                     "block %u: thread %u reads %s, which no thread of the block wrote before (garbage on a GPU, "
                     "NaN here): store every slot a later step reads, 0 past the data",
                     e->block, e->thread, el);
            uninit->ok = 0, uninit->item = e->index;
        } else if (s->wphase == ph && s->writer != me && race->ok) {
            snprintf(race->detail, sizeof race->detail,
                     "block %u, phase %lld: thread %u reads %s that thread %lld wrote with no barrier between "
                     "(read after write): a ks_syncthreads is missing",
                     e->block, (long long)ph - 1, e->thread, el, (long long)s->writer);
            race->ok = 0, race->item = e->index;
        }
        if (s->rphase != ph) s->rphase = ph, s->reader = me;
        else if (s->reader != me) s->reader = -1; /* several readers */
        return;
    }
    if (race->ok && s->wphase == ph && s->writer != me) {
        snprintf(race->detail, sizeof race->detail,
                 "block %u, phase %lld: threads %lld and %u both write %s with no barrier between (write after write)",
                 e->block, (long long)ph - 1, (long long)s->writer, e->thread, el);
        race->ok = 0, race->item = e->index;
    } else if (race->ok && s->rphase == ph && s->reader != me) {
        snprintf(race->detail, sizeof race->detail,
                 "block %u, phase %lld: thread %u writes %s that %s read with no barrier between (write after read): "
                 "a ks_syncthreads is missing between the reads and this write",
                 e->block, (long long)ph - 1, e->thread, el, s->reader < 0 ? "other threads" : "another thread");
        race->ok = 0, race->item = e->index;
    }
    s->wphase = ph, s->writer = me, s->written = 1;
}

/* The barriers of one block: every thread passes the same ones (lines), in the same order. */
static void barriers(const ks_trace *tr, uint64_t lo, const int32_t *lines, int *count, pz_rule *r)
{
    const int n = tr->threads;
    for (int th = 0; th < n && r->ok; ++th) {
        if (count[th] == count[0]) {
            for (int k = 0; k < count[0] && k < PZ_MAX_BARRIERS && r->ok; ++k)
                if (lines[th * PZ_MAX_BARRIERS + k] != lines[k]) {
                    snprintf(r->detail, sizeof r->detail,
                             "block %u: barrier %d of thread 0 is at line %d, of thread %d at line %d: threads wait at "
                             "different barriers",
                             tr->events[lo].block, k, lines[k], th, lines[th * PZ_MAX_BARRIERS + k]);
                    r->ok = 0, r->item = (int64_t)tr->events[lo].block * n + th;
                }
            continue;
        }
        const int few = count[th] < count[0] ? th : 0, many = few ? 0 : th;
        snprintf(r->detail, sizeof r->detail,
                 "block %u: thread %d passes %d barrier%s, thread %d %d: a ks_syncthreads that some threads skip "
                 "(inside an if?); every thread of the block must reach each one",
                 tr->events[lo].block, many, count[many], count[many] == 1 ? "" : "s", few, count[few]);
        r->ok = 0, r->item = (int64_t)tr->events[lo].block * n + few;
    }
}

void pz_judge_shared(const ks_trace *tr, pz_verdict *v)
{
    pz_rule *used = pz_rule_add(v, "uses shared memory");
    pz_rule *race = pz_rule_add(v, "no shared-memory race");
    pz_rule *uninit = pz_rule_add(v, "no read of unwritten shared memory");
    pz_rule *sync = pz_rule_add(v, "every barrier reached by every thread");
    const int n = tr->threads;
    slot *sl = calloc(PZ_SLOTS, sizeof *sl);
    int32_t *lines = calloc((size_t)n * PZ_MAX_BARRIERS, sizeof *lines);
    int *count = calloc((size_t)n, sizeof *count);
    if (!sl || !lines || !count) {
        snprintf(used->detail, sizeof used->detail, "out of memory");
        used->ok = 0;
        free(sl), free(lines), free(count);
        return;
    }
    for (uint64_t lo = 0, hi; lo < tr->nevents; lo = hi) {
        const uint32_t block = tr->events[lo].block;
        int64_t reads = 0, writes = 0;
        memset(sl, 0, PZ_SLOTS * sizeof *sl);
        memset(count, 0, (size_t)n * sizeof *count);
        for (hi = lo; hi < tr->nevents && tr->events[hi].block == block; ++hi) {
            const ks_event *e = &tr->events[hi];
            if (!pz_is_shared(e)) continue;
            if (e->kind == KS_EV_BARRIER) {
                if (e->thread < (uint32_t)n && count[e->thread] < PZ_MAX_BARRIERS)
                    lines[e->thread * PZ_MAX_BARRIERS + count[e->thread]] = e->u.barrier.line;
                if (e->thread < (uint32_t)n) count[e->thread]++;
                continue;
            }
            reads += e->kind == KS_EV_READ, writes += e->kind == KS_EV_WRITE;
            on_access(sl, e, race, uninit);
        }
        if (used->ok && (!reads || !writes)) {
            snprintf(used->detail, sizeof used->detail,
                     "block %u never %s shared memory: KS_SHARED declares the block's tile, ks_shared_store fills "
                     "it, ks_shared_load reads it",
                     block, writes ? "reads" : "writes");
            used->ok = 0, used->item = (int64_t)block * n;
        }
        if (sync->ok) barriers(tr, lo, lines, count, sync);
    }
    free(sl), free(lines), free(count);
}
