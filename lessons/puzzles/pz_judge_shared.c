/* pz_judge_shared.c - the shared-memory rules. Races, reads of unwritten slots and
 * divergent barriers are kscope check's own analysis of the trace's shared events and
 * barrier arrivals (trace/check_shared.c: compute-sanitizer racecheck's hazards), run
 * through a callback that keeps the first finding of each kind with its thread and adds
 * what to do about it; whether every block uses shared memory at all is counted here. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../trace/check_shared.h"
#include "pz_grade.h"

enum { PZ_RACE, PZ_UNINIT, PZ_BARRIER, PZ_KINDS };

static const char *const hints[PZ_KINDS] = {
    "two threads touch one slot between the same two barriers, one of them writing: a ks_syncthreads is missing "
    "between them",
    "no thread of the block stored that slot first (garbage on a GPU, NaN here): store every slot a later step "
    "reads, 0 past the data",
    "a ks_syncthreads that some threads skip (inside an if?): every thread of the block must reach each one",
};

/* the callback's state: ks_violation_fn carries no context pointer */
static struct {
    pz_rule *rule[PZ_KINDS];
    uint64_t seen[PZ_KINDS];
} judged;

/* check counts a finding before it reports it: the counter that moved names its kind */
static void on_finding(ks_check_report *rep, uint64_t i, const ks_event *e, const char *fmt, ...)
{
    const uint64_t now[PZ_KINDS] = {rep->shared_races, rep->shared_uninit, rep->barrier_divergent};
    int kind = 0;
    while (kind < PZ_KINDS - 1 && now[kind] == judged.seen[kind]) ++kind;
    memcpy(judged.seen, now, sizeof now);
    pz_rule *r = judged.rule[kind];
    (void)i;
    if (!r->ok) return;
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->detail, sizeof r->detail, "%s (thread %u of block %u, work item %lld): %s", what, e->thread, e->block,
             (long long)e->index, hints[kind]);
    r->ok = 0;
    r->item = e->index;
}

int pz_is_shared(const ks_event *e)
{
    return e->kind == KS_EV_BARRIER || ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && (e->flags & KS_FLAG_SHARED));
}

/* Every block stores into and loads from shared memory. */
static void check_used(const ks_trace *tr, pz_rule *used)
{
    for (uint64_t lo = 0, hi; lo < tr->nevents && used->ok; lo = hi) {
        const uint32_t block = tr->events[lo].block;
        int64_t reads = 0, writes = 0;
        for (hi = lo; hi < tr->nevents && tr->events[hi].block == block; ++hi) {
            const ks_event *e = &tr->events[hi];
            if (pz_is_shared(e) && e->kind != KS_EV_BARRIER) reads += e->kind == KS_EV_READ, writes += e->kind == KS_EV_WRITE;
        }
        if (reads && writes) continue;
        snprintf(used->detail, sizeof used->detail,
                 "block %u never %s shared memory: KS_SHARED declares the block's tile, ks_shared_store fills it, "
                 "ks_shared_load reads it",
                 block, writes ? "reads" : "writes");
        used->ok = 0;
        used->item = (int64_t)block * tr->threads;
    }
}

void pz_judge_shared(const ks_trace *tr, pz_verdict *v)
{
    static ks_check_report rep;
    memset(&rep, 0, sizeof rep);
    memset(&judged, 0, sizeof judged);
    check_used(tr, pz_rule_add(v, "uses shared memory"));
    judged.rule[PZ_RACE] = pz_rule_add(v, "no shared-memory race");
    judged.rule[PZ_UNINIT] = pz_rule_add(v, "no read of unwritten shared memory");
    judged.rule[PZ_BARRIER] = pz_rule_add(v, "every barrier reached by every thread");
    rep.complete = !tr->dropped; /* a puzzle records every work item: barrier counts are comparable */
    if (ks_check_shared(tr, &rep, on_finding, 0)) {
        snprintf(judged.rule[PZ_RACE]->detail, sizeof judged.rule[PZ_RACE]->detail, "out of memory");
        judged.rule[PZ_RACE]->ok = 0;
    }
}
