/* pz_judge_shared.c - the shared-memory rules. Races, reads of unwritten slots and
 * divergent barriers are kscope check's own analysis of the trace's shared events and
 * barrier arrivals (trace/check_shared.c: compute-sanitizer racecheck's hazards), run
 * through a callback that keeps the first finding of each kind with its thread and source
 * line and adds what to do about it; whether every block uses shared memory at all is
 * counted here. A thread that ends early without reaching a barrier the others reach is a
 * divergent barrier here (the puzzles' rule), though CUDA since sm_70 lets it pass. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../trace/check_shared.h"
#include "pz_grade.h"

enum { PZ_RACE, PZ_UNINIT, PZ_BARRIER, PZ_KINDS };

static const char *const hints[PZ_KINDS] = {
    "two threads touch one slot between the same two barriers, one of them writing: a __syncthreads() is missing "
    "between them",
    "no thread of the block stored that slot first (garbage on a GPU, NaN here): store every slot a later step "
    "reads, 0 past the data",
    "a __syncthreads() that some threads skip (inside an if, or after an early return?): every thread of the block "
    "must reach each one",
};

/* the callback's state: ks_violation_fn carries no context pointer */
static struct {
    const pz_spec *s;
    const char *src;
    const ks_trace *tr;
    pz_rule *rule[PZ_KINDS];
    uint64_t seen[PZ_KINDS];
} judged;

/* the access of another thread of e's block to e's slot in e's phase that makes the race */
static const ks_event *other_side(const ks_trace *tr, const ks_event *e)
{
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *o = &tr->events[i];
        if (o->kind != KS_EV_READ && o->kind != KS_EV_WRITE) continue;
        if (!(o->flags & KS_FLAG_SHARED) || o->block != e->block || o->thread == e->thread || o->tensor != e->tensor ||
            o->u.access.offset != e->u.access.offset || o->u.access.reserved[0] != e->u.access.reserved[0])
            continue;
        if (o->kind == KS_EV_WRITE || e->kind == KS_EV_WRITE) return o;
    }
    return NULL;
}

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
    char what[320], by[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (kind == PZ_BARRIER) { /* check's line names the threads (by their number in the block) */
        const pz_spec *s = judged.s;
        if (s->grid[1] == 1) snprintf(by, sizeof by, "block %u", e->block);
        else snprintf(by, sizeof by, "block (%u,%u)", e->block % s->grid[0], e->block / s->grid[0]);
        if (strstr(what, "block ")) snprintf(r->detail, sizeof r->detail, "%s; %s", what, hints[kind]);
        else snprintf(r->detail, sizeof r->detail, "%s (%s); %s", what, by, hints[kind]);
    } else {
        pz_who(by, sizeof by, judged.s, e);
        snprintf(r->detail, sizeof r->detail, "%s, by %s; %s", what, by, hints[kind]);
    }
    pz_where(r->where[0], sizeof r->where[0], judged.tr, judged.src, e);
    const ks_event *o = kind == PZ_RACE ? other_side(judged.tr, e) : NULL;
    if (o) {
        char line[192], who[96];
        pz_where(line, sizeof line, judged.tr, judged.src, o);
        pz_who(who, sizeof who, judged.s, o);
        const char *colon = strstr(line, ": ");
        if (colon) /* "FILE:LINE (the other thread): code" */
            snprintf(r->where[1], sizeof r->where[1], "%.*s (%s)%s", (int)(colon - line), line, who, colon);
    }
    r->ok = 0;
    r->item = e->index;
}

int pz_is_shared(const ks_event *e)
{
    return e->kind == KS_EV_BARRIER ||
           ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && (e->flags & KS_FLAG_SHARED));
}

/* Every block stores into and loads from shared memory (a block's events are together:
 * the simulator runs the blocks one after another). */
static void check_used(const pz_spec *s, const ks_trace *tr, pz_rule *used)
{
    for (uint64_t lo = 0, hi; lo < tr->nevents && used->ok; lo = hi) {
        const uint32_t block = tr->events[lo].block;
        int64_t reads = 0, writes = 0;
        for (hi = lo; hi < tr->nevents && tr->events[hi].block == block; ++hi) {
            const ks_event *e = &tr->events[hi];
            if (pz_is_shared(e) && e->kind != KS_EV_BARRIER)
                reads += e->kind == KS_EV_READ, writes += e->kind == KS_EV_WRITE;
        }
        if (reads && writes) continue;
        char name[48];
        if (s->grid[1] == 1) snprintf(name, sizeof name, "%u", block);
        else snprintf(name, sizeof name, "(%u,%u)", block % s->grid[0], block / s->grid[0]);
        snprintf(used->detail, sizeof used->detail,
                 "block %s never %s shared memory: declare the block's tile (__shared__ float tile[N];), store into "
                 "it, __syncthreads(), read from it",
                 name, writes ? "reads" : "writes");
        used->ok = 0;
        used->item = (int64_t)block * tr->threads;
    }
}

void pz_judge_shared(const pz_spec *s, const char *src, const ks_trace *tr, pz_verdict *v)
{
    static ks_check_report rep;
    memset(&rep, 0, sizeof rep);
    memset(&judged, 0, sizeof judged);
    judged.s = s, judged.src = src, judged.tr = tr;
    check_used(s, tr, pz_rule_add(v, "uses shared memory"));
    judged.rule[PZ_RACE] = pz_rule_add(v, "no shared-memory race");
    judged.rule[PZ_UNINIT] = pz_rule_add(v, "no read of unwritten shared memory");
    judged.rule[PZ_BARRIER] = pz_rule_add(v, "every barrier reached by every thread");
    rep.complete = !tr->dropped; /* a puzzle records every thread: barrier counts are comparable */
    if (ks_check_shared(tr, &rep, on_finding, 0)) {
        snprintf(judged.rule[PZ_RACE]->detail, sizeof judged.rule[PZ_RACE]->detail, "out of memory");
        judged.rule[PZ_RACE]->ok = 0;
    }
}
