/* check_shared.c - the shared-memory and barrier checks of `check`, from the trace alone.
 *
 * A shared access is a read or write event flagged KS_FLAG_SHARED, carrying its barrier
 * phase (access.reserved[0]); a barrier arrival is a KS_EV_BARRIER event (its line and the
 * phase it ends). The accesses of each slot, phase by phase in thread and program order,
 * go through ks_hazard.h, the classification the simulator applies while it runs (so the
 * two count alike): races (racecheck's hazards) and reads of uninitialised memory. Those
 * two need every access of a block: in a partial trace only the blocks whose every thread
 * with work was recorded are judged (rep->shared_blocks_judged of shared_blocks). Threads
 * of a block that arrive at one phase's barrier at different lines, or a thread of a
 * complete trace passing fewer barriers than the others of its block, are a divergent
 * barrier. Findings are reported in (block, phase, event) order: the first is the earliest.
 */
#include "check_shared.h"

#include <stdlib.h>
#include <string.h>

#include "step.h"

#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_hazard.h"

typedef struct ref {
    uint32_t block, phase, thread, iter, seq, tensor;
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
    if ((c = cmp_u64(a->block, b->block)) || (c = cmp_u64(a->tensor, b->tensor)) ||
        (c = (a->offset > b->offset) - (a->offset < b->offset)) || (c = cmp_u64(a->phase, b->phase)) ||
        (c = cmp_u64(a->thread, b->thread)) || (c = cmp_u64(a->iter, b->iter)))
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
    return (ref){.block = e->block,
                 .phase = phase,
                 .thread = e->thread,
                 .iter = e->iter,
                 .seq = e->seq,
                 .tensor = e->tensor,
                 .offset = offset,
                 .event = i};
}

static const char *slot_tensor(const ks_trace *tr, const ks_event *e)
{
    return e->tensor < tr->ntensors ? tr->tensors[e->tensor].name : "?";
}

enum { F_RACE, F_UNINIT, F_BAR_LINE, F_BAR_MISS };
enum { RAW, WAW, WAR };

/* One finding, reported after all are sorted; a..d and the lines say what (per kind). */
typedef struct finding {
    uint32_t block, phase;
    uint64_t event;
    int kind;
    uint32_t a, b, c, d, n; /* n: the divergent phases of a barrier finding */
    int32_t line1, line2;
} finding;

typedef struct findings {
    finding *f;
    size_t n, cap;
    int nomem;
} findings;

static void add(findings *fs, finding f)
{
    if (fs->n == fs->cap) {
        const size_t cap = fs->cap ? 2 * fs->cap : 64;
        finding *g = realloc(fs->f, cap * sizeof *g);
        if (!g) {
            fs->nomem = 1;
            return;
        }
        fs->f = g, fs->cap = cap;
    }
    fs->f[fs->n++] = f;
}

static int by_when(const void *pa, const void *pb)
{
    const finding *a = pa, *b = pb;
    int c;
    if ((c = cmp_u64(a->block, b->block)) || (c = cmp_u64(a->phase, b->phase))) return c;
    return cmp_u64(a->event, b->event);
}

/* blocks with shared accesses whose every thread with work left a work event */
typedef struct block_seen {
    uint32_t block, threads;
} block_seen;

static int by_block(const void *pa, const void *pb)
{
    return cmp_u64(((const block_seen *)pa)->block, ((const block_seen *)pb)->block);
}

/* Whether the block's races and uninitialised reads can be judged: a complete trace, or
 * every thread the launch gives work (index block*threads + thread < work_items) recorded. */
static int judged(const ks_trace *tr, const ks_check_report *rep, const block_seen *seen, size_t nseen, uint32_t block)
{
    if (rep->complete) return 1;
    const block_seen key = {.block = block}, *s = bsearch(&key, seen, nseen, sizeof *seen, by_block);
    const int64_t left = tr->work_items - (int64_t)block * tr->threads;
    const int64_t need = left < 0 ? 0 : left < tr->threads ? left : tr->threads;
    return (s ? (int64_t)s->threads : 0) >= need;
}

/* .cu traces: the accesses of one slot and phase [a, b) hold a race that no __syncwarp()
 * orders: two threads, one storing (atomics among themselves excepted), not lanes of one
 * warp that a __syncwarp() between them orders (an access's iter counts its thread's). */
static int unordered_conflict(const ks_trace *tr, const ref *r, uint64_t a, uint64_t b)
{
    for (uint64_t w = a; w < b; ++w) {
        const ks_event *x = &tr->events[r[w].event];
        if (x->kind != KS_EV_WRITE) continue;
        for (uint64_t k = a; k < b; ++k) {
            const ks_event *y = &tr->events[r[k].event];
            if (r[k].thread == r[w].thread) continue;
            if ((x->flags & KS_FLAG_ATOMIC) && y->kind == KS_EV_WRITE && (y->flags & KS_FLAG_ATOMIC)) continue;
            if (r[k].thread / 32 == r[w].thread / 32 && r[k].iter != r[w].iter) continue;
            return 1;
        }
    }
    return 0;
}

/* The slots of the judged blocks, each phase in thread and program order through ks_hazard. */
static void check_slots(const ks_trace *tr, ref *r, uint64_t n, const block_seen *seen, size_t nseen,
                        ks_check_report *rep, findings *fs, int cu)
{
    qsort(r, n, sizeof *r, by_slot);
    uint32_t last_block = UINT32_MAX;
    int judge = 0;
    for (uint64_t a = 0; a < n;) {
        if (r[a].block != last_block) {
            last_block = r[a].block;
            judge = judged(tr, rep, seen, nseen, last_block);
            rep->shared_blocks++;
            rep->shared_blocks_judged += (uint64_t)judge;
        }
        ks_hazard h = {0};
        uint64_t s = a; /* one slot of one block: its phases in order */
#define SAME_SLOT(x, y) (r[x].block == r[y].block && r[x].tensor == r[y].tensor && r[x].offset == r[y].offset)
        while (s < n && SAME_SLOT(s, a)) {
            uint64_t e = s, pe = s;
            while (pe < n && SAME_SLOT(pe, s) && r[pe].phase == r[s].phase) ++pe;
            const int real = !cu || unordered_conflict(tr, r, s, pe); /* cu: a __syncwarp may order it */
            for (; e < n && SAME_SLOT(e, s) && r[e].phase == r[s].phase; ++e) {
                const ks_event *ev = &tr->events[r[e].event];
                const int write = ev->kind == KS_EV_WRITE;
                if (judge && write && (ev->flags & KS_FLAG_ATOMIC)) { /* atomics race only with plain accesses */
                    if (ks_hazard_atomic(&h, r[e].phase, r[e].thread) && real)
                        add(fs, (finding){.block = r[e].block,
                                          .phase = r[e].phase,
                                          .event = r[e].event,
                                          .kind = F_RACE,
                                          .a = h.plain,
                                          .b = WAW});
                    continue;
                }
                if (!judge || !ks_hazard_access(&h, r[e].phase, r[e].thread, write, r[e].event) || !real) continue;
                const uint32_t other = !write ? h.writer : h.writer != r[e].thread ? h.writer : h.first;
                add(fs, (finding){.block = r[e].block,
                                  .phase = r[e].phase,
                                  .event = r[e].event,
                                  .kind = F_RACE,
                                  .a = other,
                                  .b = !write                    ? RAW
                                       : h.writer != r[e].thread ? WAW
                                                                 : WAR});
            }
            uint32_t th;
            uint64_t at;
            if (judge && ks_hazard_close(&h, &th, &at))
                add(fs, (finding){.block = r[s].block, .phase = r[s].phase, .event = at, .kind = F_UNINIT});
            s = e;
        }
#undef SAME_SLOT
        a = s;
    }
}

/* Barriers of one block [a, b), sorted by thread then phase: one line per phase, and (in
 * a complete trace) the same number for every thread of the block that recorded work.
 * One finding per block, its earliest, counting the block's divergent phases (as the
 * simulator counts the barriers it passes divergent). */
static int check_block_barriers(const ks_trace *tr, const ref *r, uint64_t a, uint64_t b, const unsigned char *worked,
                                const ks_check_report *rep, findings *fs, int early_exit)
{
    uint32_t most = 0, most_thread = 0;
    for (uint64_t k = a; k < b;) {
        uint64_t e = k;
        while (e < b && r[e].thread == r[k].thread) ++e;
        if (e - k > most) most = (uint32_t)(e - k), most_thread = r[k].thread;
        k = e;
    }
    uint64_t m = a; /* the most-barriers thread's arrivals, phase by phase */
    while (m < b && r[m].thread != most_thread) ++m;
    unsigned char *bad = calloc(most + 1, 1); /* the divergent phases (by arrival number) */
    if (!bad) return KS_ENOMEM;
    finding best = {.block = UINT32_MAX, .phase = UINT32_MAX, .event = UINT64_MAX};
    /* the line of each phase, as the thread with the most barriers saw it */
    for (uint64_t k = a; k < b; ++k) {
        const ks_event *e = &tr->events[r[k].event];
        uint64_t q = m;
        while (q < m + most && r[q].phase != r[k].phase) ++q;
        if (q == m + most || tr->events[r[q].event].u.barrier.line == e->u.barrier.line) continue;
        bad[q - m] = 1;
        const finding f = {.block = r[k].block,
                           .phase = r[k].phase,
                           .event = r[k].event,
                           .kind = F_BAR_LINE,
                           .a = r[k].thread,
                           .b = most_thread,
                           .line1 = e->u.barrier.line,
                           .line2 = tr->events[r[q].event].u.barrier.line};
        if (by_when(&f, &best) < 0) best = f;
    }
    for (uint32_t th = 0; rep->complete && worked && !early_exit && th < (uint32_t)tr->threads; ++th) {
        if (!worked[th]) continue;
        uint32_t mine = 0;
        for (uint64_t k = a; k < b; ++k) mine += r[k].thread == th;
        if (mine == most) continue;
        /* it misses the most-barriers thread's arrivals from number `mine` on */
        for (uint32_t p = mine; p < most; ++p) bad[p] = 1;
        const ks_event *miss = &tr->events[r[m + mine].event];
        const finding f = {.block = r[a].block,
                           .phase = miss->u.barrier.phase,
                           .event = r[m + mine].event,
                           .kind = F_BAR_MISS,
                           .a = th,
                           .b = mine,
                           .c = most_thread,
                           .d = most,
                           .line1 = miss->u.barrier.line};
        if (by_when(&f, &best) < 0) best = f;
    }
    for (uint32_t p = 0; p < most; ++p) best.n += bad[p];
    free(bad);
    if (best.event != UINT64_MAX) add(fs, best);
    return KS_OK;
}

static int check_barriers(const ks_trace *tr, ref *r, uint64_t n, const ref *work, uint64_t nw,
                          const ks_check_report *rep, findings *fs, int early_exit)
{
    unsigned char *worked = calloc((size_t)tr->threads, 1);
    if (!worked) return KS_ENOMEM;
    qsort(r, n, sizeof *r, by_thread);
    uint64_t w = 0;
    for (uint64_t a = 0; a < n;) {
        uint64_t b = a;
        while (b < n && r[b].block == r[a].block) ++b;
        for (int t = 0; t < tr->threads; ++t) worked[t] = 0;
        while (w < nw && work[w].block < r[a].block) ++w;
        for (; w < nw && work[w].block == r[a].block; ++w)
            if (work[w].thread < (uint32_t)tr->threads) worked[work[w].thread] = 1;
        const int rc = check_block_barriers(tr, r, a, b, worked, rep, fs, early_exit);
        if (rc) {
            free(worked);
            return rc;
        }
        a = b;
    }
    free(worked);
    return KS_OK;
}

/* The work events' (block, thread), sorted, and per block the number of distinct threads. */
static int work_threads(const ks_trace *tr, ref **work, uint64_t *nw, block_seen **seen, size_t *nseen)
{
    uint64_t n = 0, k = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) n += tr->events[i].kind == KS_EV_WORK;
    ref *w = malloc((size_t)(n ? n : 1) * sizeof *w);
    block_seen *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    if (!w || !s) {
        free(w), free(s);
        return KS_ENOMEM;
    }
    for (uint64_t i = 0; i < tr->nevents; ++i)
        if (tr->events[i].kind == KS_EV_WORK) w[k++] = make_ref(&tr->events[i], i, 0, 0);
    qsort(w, n, sizeof *w, by_thread);
    size_t ns = 0;
    for (uint64_t i = 0; i < n; ++i) {
        if (!ns || s[ns - 1].block != w[i].block) s[ns++] = (block_seen){.block = w[i].block};
        if (!i || w[i].block != w[i - 1].block || w[i].thread != w[i - 1].thread) s[ns - 1].threads++;
    }
    *work = w, *nw = n, *seen = s, *nseen = ns;
    return KS_OK;
}

static const char *const how[3] = {"read after write", "write after write", "write after read"};

/* Counts and reports one finding (the count first: a caller may tell kinds by it). */
static void report(const ks_trace *tr, const finding *f, ks_check_report *rep, ks_violation_fn v)
{
    const ks_event *e = &tr->events[f->event];
    switch (f->kind) {
    case F_RACE:
        rep->shared_races++;
        if (!strcmp(tr->variant, "cuda-c")) { /* a .cu trace: the element and the thread as CUDA names them */
            uint32_t G[3], B[3];
            ks_trace_dims(tr, G, B);
            v(rep, f->event, e,
              "shared-memory race: %s of %s[%lld] in phase %u, which thread (%u,%u,%u) %s with no barrier between (%s)",
              e->kind == KS_EV_WRITE ? "write" : "read", slot_tensor(tr, e), (long long)e->u.access.offset, f->phase,
              f->a % B[0], f->a / B[0] % B[1], f->a / (B[0] * B[1]), f->b == WAR ? "reads" : "writes", how[f->b]);
            break;
        }
        v(rep, f->event, e,
          "shared-memory race: %s of %s (plane %d, y %d, x %d) in phase %u, which thread %u %s with no barrier between (%s)",
          e->kind == KS_EV_WRITE ? "write" : "read", slot_tensor(tr, e), e->u.access.plane, e->u.access.y,
          e->u.access.x, f->phase, f->a, f->b == WAR ? "reads" : "writes", how[f->b]);
        break;
    case F_UNINIT:
        rep->shared_uninit++;
        if (!strcmp(tr->variant, "cuda-c")) {
            v(rep, f->event, e, "read of uninitialised shared memory %s[%lld] in phase %u: nothing wrote it before",
              slot_tensor(tr, e), (long long)e->u.access.offset, f->phase);
            break;
        }
        v(rep, f->event, e,
          "read of uninitialised shared memory %s (plane %d, y %d, x %d) in phase %u: nothing wrote it before",
          slot_tensor(tr, e), e->u.access.plane, e->u.access.y, e->u.access.x, f->phase);
        break;
    case F_BAR_LINE:
        rep->barrier_divergent += f->n;
        v(rep, f->event, e, "divergent barrier: in phase %u thread %u waits at line %d, thread %u at line %d", f->phase,
          f->a, f->line1, f->b, f->line2);
        break;
    default:
        rep->barrier_divergent += f->n;
        v(rep, f->event, e,
          "divergent barrier: block %u thread %u passes %u barriers, thread %u passes %u; thread %u never reaches the one at line %d (phase %u)",
          f->block, f->a, f->b, f->c, f->d, f->a, f->line1, f->phase);
    }
}

int ks_check_shared(const ks_trace *tr, ks_check_report *rep, ks_violation_fn v, int early_exit)
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
    ref *work = NULL;
    uint64_t nw = 0, ka = 0, kb = 0;
    block_seen *seen = NULL;
    size_t nseen = 0;
    findings fs = {0};
    int rc = acc && bar ? work_threads(tr, &work, &nw, &seen, &nseen) : KS_ENOMEM;
    for (uint64_t i = 0; i < tr->nevents && !rc; ++i) {
        const ks_event *e = &tr->events[i];
        /* an access outside its array (offset -1, or past its end) is check_access's
         * violation, no slot's */
        if (is_shared(tr, e) && e->u.access.offset >= 0 && e->tensor < tr->ntensors &&
            e->u.access.offset < ks_tensor_numel(&tr->tensors[e->tensor]))
            acc[ka++] = make_ref(e, i, (uint32_t)e->u.access.reserved[0], e->u.access.offset);
        else if (e->kind == KS_EV_BARRIER) bar[kb++] = make_ref(e, i, e->u.barrier.phase, 0);
    }
    if (!rc) check_slots(tr, acc, ka, seen, nseen, rep, &fs, early_exit);
    if (!rc && kb) rc = check_barriers(tr, bar, kb, work, nw, rep, &fs, early_exit);
    if (!rc && fs.nomem) rc = KS_ENOMEM;
    if (!rc) {
        if (fs.n) qsort(fs.f, fs.n, sizeof *fs.f, by_when);
        for (size_t k = 0; k < fs.n; ++k) report(tr, &fs.f[k], rep, v);
    }
    free(fs.f);
    free(acc);
    free(bar);
    free(work);
    free(seen);
    return rc;
}
