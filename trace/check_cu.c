/* check_cu.c - `kscope check` on a trace of an unmodified .cu kernel (check.h's
 * ks_check_cu). The sites are source lines and the work items threads, so the rules are
 * the ones compute-sanitizer's tools apply, judged from the recorded accesses. */
#include "check.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "check_shared.h"

/* the launch's shape, for naming threads as CUDA does */
static struct {
    uint32_t grid[3], block[3];
    const ks_trace *tr;
} g;

static void load_launch(const ks_trace *tr, int *empty)
{
    g.tr = tr;
    for (int d = 0; d < 3; ++d) g.grid[d] = g.block[d] = 1;
    /* a crafted trace may say 0 blocks: 1, so naming a thread never divides by 0 */
    g.block[0] = tr->threads > 0 ? (uint32_t)tr->threads : 1, g.grid[0] = tr->blocks > 0 ? (uint32_t)tr->blocks : 1;
    cJSON *p = cJSON_Parse(tr->params);
    if (!p) return;
    const cJSON *gr = cJSON_GetObjectItemCaseSensitive(p, "grid"), *bl = cJSON_GetObjectItemCaseSensitive(p, "block");
    if (cJSON_GetArraySize(gr) == 3 && cJSON_GetArraySize(bl) == 3) {
        uint32_t gg[3], bb[3];
        uint64_t gn = 1, bn = 1;
        for (int d = 0; d < 3; ++d) {
            const double x = cJSON_GetNumberValue(cJSON_GetArrayItem(gr, d)),
                         y = cJSON_GetNumberValue(cJSON_GetArrayItem(bl, d));
            gg[d] = x >= 1 && x < 4294967296.0 ? (uint32_t)x : 1, bb[d] = y >= 1 && y <= 1024 ? (uint32_t)y : 1;
            gn *= gg[d], bn *= bb[d];
        }
        if ((int64_t)gn == tr->blocks && (int64_t)bn == tr->threads)
            memcpy(g.grid, gg, sizeof gg), memcpy(g.block, bb, sizeof bb);
    }
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(p, "args"), *a;
    cJSON_ArrayForEach(a, args)
    {
        if (!cJSON_IsString(a) || strncmp(a->valuestring, "empty:", 6)) continue;
        const int t = ks_trace_tensor(tr, a->string);
        if (t >= 0) empty[t] = 1;
    }
    cJSON_Delete(p);
}

static void cu_violation(ks_check_report *rep, uint64_t i, const ks_event *e, const char *fmt, ...) KS_PRINTF(4, 5);
static void cu_violation(ks_check_report *rep, uint64_t i, const ks_event *e, const char *fmt, ...)
{
    (void)i;
    ks_check_count_rule(rep, fmt);
    if (rep->violations < KS_CHECK_KEEP) {
        char *line = rep->first[rep->violations];
        int n = 0;
        if (e) {
            const uint32_t *B = g.block, *G = g.grid, t = e->thread, b = e->block;
            n = snprintf(line, 256, "thread (%u,%u,%u) of block (%u,%u,%u)", t % B[0], t / B[0] % B[1],
                         t / (B[0] * B[1]), b % G[0], b / G[0] % G[1], b / (G[0] * G[1]));
            if (e->site < g.tr->nsites && g.tr->sites[e->site].line > 0) {
                const char *name = g.tr->sites[e->site].name;
                const char *c2 = strchr(name, ':');
                c2 = c2 ? strchr(c2 + 1, ':') : NULL;
                n += snprintf(line + n, 256 - (size_t)n, " at %.*s", c2 ? (int)(c2 - name) : (int)strlen(name), name);
            }
            n += snprintf(line + n, 256 - (size_t)n, ": ");
        }
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && n < 256) vsnprintf(line + n, 256 - (size_t)n, fmt, ap);
        va_end(ap);
    }
    rep->violations++;
}

/* "a[3, 7]" of the tensor's shape, or "a[offset]" */
static void element(const ks_trace *tr, const ks_event *e, char *buf, size_t n)
{
    const ks_tensor *t = &tr->tensors[e->tensor];
    int64_t off = e->u.access.offset, idx[KS_MAX_DIMS];
    const int64_t numel = ks_tensor_numel(t);
    if (off < 0 || off >= numel || t->ndim < 2) {
        snprintf(buf, n, "%s[%lld]", t->name, (long long)off);
        return;
    }
    for (int d = t->ndim - 1; d >= 0; --d) idx[d] = off % t->shape[d], off /= t->shape[d];
    size_t used = (size_t)snprintf(buf, n, "%s[", t->name);
    for (int d = 0; d < t->ndim && used < n; ++d)
        used += (size_t)snprintf(buf + used, n - used, "%lld%s", (long long)idx[d], d + 1 < t->ndim ? ", " : "]");
}

typedef struct gref {
    int64_t offset;
    uint32_t block, phase, thread, seq;
    uint64_t event;
    uint8_t tensor, write, atomic;
} gref;

static int by_element(const void *pa, const void *pb)
{
    const gref *a = pa, *b = pb;
    if (a->tensor != b->tensor) return a->tensor < b->tensor ? -1 : 1;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->phase != b->phase) return a->phase < b->phase ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* ordered: the same thread, or the same block in different barrier phases */
static int ordered(const gref *a, const gref *b)
{
    return a->block == b->block && (a->thread == b->thread || a->phase != b->phase);
}

/* One element's accesses [a, b), sorted by block, phase, thread, program order. */
static void judge_element(const ks_trace *tr, const gref *r, uint64_t a, uint64_t b, int empty, ks_check_report *rep)
{
    char el[96];
    /* a race: a plain store and an access of another thread not ordered with it */
    for (uint64_t k = a; k < b; ++k) {
        if (!r[k].write || r[k].atomic) continue;
        for (uint64_t q = a; q < b; ++q) {
            if (q == k || ordered(&r[k], &r[q])) continue;
            if (r[q].block == r[k].block && r[q].phase != r[k].phase) continue;
            const ks_event *e = &tr->events[r[k].event], *o = &tr->events[r[q].event];
            element(tr, e, el, sizeof el);
            const uint32_t *B = g.block, *G = g.grid;
            rep->global_races++;
            cu_violation(
                rep, r[k].event, e,
                "global-memory race: stores %s, which thread (%u,%u,%u) of block (%u,%u,%u) %s with no barrier or atomic between",
                el, o->thread % B[0], o->thread / B[0] % B[1], o->thread / (B[0] * B[1]), o->block % G[0],
                o->block / G[0] % G[1], o->block / (G[0] * G[1]),
                r[q].atomic  ? "updates atomically"
                : r[q].write ? "also stores"
                             : "reads");
            return; /* one line an element */
        }
    }
    if (!empty) return;
    /* a read (or atomic) of an `empty:` element with no store happening before it */
    for (uint64_t k = a; k < b; ++k) {
        if (r[k].write && !r[k].atomic) continue;
        int fed = 0;
        for (uint64_t q = a; q < b && !fed; ++q)
            fed = r[q].write && r[q].block == r[k].block &&
                  (r[q].phase < r[k].phase ||
                   (r[q].thread == r[k].thread && r[q].phase == r[k].phase && r[q].seq < r[k].seq));
        if (fed) continue;
        const ks_event *e = &tr->events[r[k].event];
        element(tr, e, el, sizeof el);
        rep->unwritten_reads++;
        cu_violation(rep, r[k].event, e, "%s %s, never written before (%s is empty:, not initialised)",
                     r[k].atomic ? "updates" : "reads", el, tr->tensors[e->tensor].name);
        return;
    }
}

static int check_globals(const ks_trace *tr, const int *empty, ks_check_report *rep)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        n += (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && !(e->flags & KS_FLAG_SHARED) &&
             e->tensor < tr->ntensors;
    }
    if (!n) return KS_OK;
    gref *r = malloc((size_t)n * sizeof *r);
    if (!r) return KS_ENOMEM;
    uint64_t k = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (!((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && !(e->flags & KS_FLAG_SHARED) &&
              e->tensor < tr->ntensors))
            continue;
        const int64_t off = e->u.access.offset;
        if (off < 0 || off >= ks_tensor_numel(&tr->tensors[e->tensor])) continue; /* outside: its own rule */
        r[k++] = (gref){.offset = off,
                        .block = e->block,
                        .phase = (uint32_t)e->u.access.reserved[0],
                        .thread = e->thread,
                        .seq = e->seq,
                        .event = i,
                        .tensor = e->tensor,
                        .write = e->kind == KS_EV_WRITE,
                        .atomic = (e->flags & KS_FLAG_ATOMIC) != 0};
    }
    qsort(r, k, sizeof *r, by_element);
    for (uint64_t a = 0; a < k;) {
        uint64_t b = a;
        int plain_write = 0;
        while (b < k && r[b].tensor == r[a].tensor && r[b].offset == r[a].offset)
            plain_write |= r[b].write && !r[b].atomic, ++b;
        /* an element only read, or only updated by atomics and read, cannot race; a big
         * group of one thread (a loop over its own element) needs no pairing either */
        if (plain_write || empty[r[a].tensor]) {
            int one_thread = 1;
            for (uint64_t q = a + 1; q < b && one_thread; ++q)
                one_thread = r[q].block == r[a].block && r[q].thread == r[a].thread;
            if (!one_thread || empty[r[a].tensor]) judge_element(tr, r, a, b, empty[r[a].tensor], rep);
        }
        a = b;
    }
    free(r);
    return KS_OK;
}

/* ---- barriers a thread skips and runs past ----
 * A thread that ends having passed fewer barriers than the others of its block returned
 * early (allowed, as on sm_70 and later: it counts as arrived) unless it went on past the
 * barrier it skipped: an event of it after its last barrier at a line at or below that
 * barrier's, the code the others only reach through the barrier. */
typedef struct tref {
    uint32_t block, thread, seq;
    int32_t line;
    uint8_t barrier;
    uint64_t event;
} tref;

static int by_thread_seq(const void *pa, const void *pb)
{
    const tref *a = pa, *b = pb;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static void skipped_barriers_of_block(const ks_trace *tr, const tref *r, uint64_t a, uint64_t b, ks_check_report *rep)
{
    uint64_t most = 0, most_at = a; /* the thread with the most barriers: where its events start */
    for (uint64_t k = a; k < b;) {
        uint64_t e = k, n = 0;
        while (e < b && r[e].thread == r[k].thread) n += r[e++].barrier;
        if (n > most) most = n, most_at = k;
        k = e;
    }
    if (!most) return;
    for (uint64_t k = a; k < b;) {
        uint64_t e = k, n = 0, last = k;
        int32_t after = 0; /* the highest line after its last barrier */
        while (e < b && r[e].thread == r[k].thread) {
            if (r[e].barrier) n++, last = e, after = 0;
            else if (r[e].line > after) after = r[e].line;
            ++e;
        }
        if (n < most) {
            uint64_t q = most_at, seen = 0; /* the barrier it skipped: the (n+1)-th of the other */
            for (; q < b && r[q].thread == r[most_at].thread; ++q)
                if (r[q].barrier && seen++ == n) break;
            if (q < b && r[q].barrier && after >= r[q].line) {
                const ks_event *ev = &tr->events[r[last].event];
                const uint32_t *B = g.block, t = r[most_at].thread;
                rep->barrier_divergent++;
                cu_violation(
                    rep, r[last].event, ev,
                    "divergent barrier: it skips the __syncthreads() at line %d that thread (%u,%u,%u) waits at, and runs on to line %d",
                    r[q].line, t % B[0], t / B[0] % B[1], t / (B[0] * B[1]), after);
            }
        }
        k = e;
    }
}

static int check_skipped_barriers(const ks_trace *tr, ks_check_report *rep)
{
    uint64_t n = 0, bars = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        n += e->kind != KS_EV_WORK && ks_event_fits(tr, e);
        bars += e->kind == KS_EV_BARRIER;
    }
    if (!bars) return KS_OK;
    tref *r = malloc((size_t)n * sizeof *r);
    if (!r) return KS_ENOMEM;
    uint64_t k = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind == KS_EV_WORK || !ks_event_fits(tr, e)) continue;
        r[k++] = (tref){.block = e->block,
                        .thread = e->thread,
                        .seq = e->seq,
                        .line = tr->sites[e->site].line,
                        .barrier = e->kind == KS_EV_BARRIER,
                        .event = i};
    }
    qsort(r, k, sizeof *r, by_thread_seq);
    for (uint64_t a = 0; a < k;) {
        uint64_t b = a;
        while (b < k && r[b].block == r[a].block) ++b;
        skipped_barriers_of_block(tr, r, a, b, rep);
        a = b;
    }
    free(r);
    return KS_OK;
}

static const char *const k_fault[] = {[2] = "assert() failed",
                                      [3] = "__trap() called",
                                      [4] = "integer division by zero: the run stopped here",
                                      [5] = "stack overflow: the run stopped here",
                                      [6] = "crashed: the run stopped here",
                                      [7] = "still running when the time limit passed",
                                      [8] = "uses what the simulator does not support",
                                      [9] = "a warp collective waited for lanes that never came"};

static const char *const k_warp_op[] = {"__shfl_sync",   "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                        "__ballot_sync", "__any_sync",     "__all_sync",       "__syncwarp"};

int ks_check_cu(const ks_trace *tr, ks_check_report *rep)
{
    memset(rep, 0, sizeof *rep);
    int empty[KS_MAX_TENSORS] = {0};
    load_launch(tr, empty);
    const ks_filter all = ks_filter_all();
    rep->complete = tr->dropped == 0 && !memcmp(&tr->filter, &all, sizeof all);
    /* a skipped barrier first: the races after it are its symptoms */
    int rc = rep->complete ? check_skipped_barriers(tr, rep) : KS_OK;
    if (!rc) rc = ks_check_shared(tr, rep, cu_violation, 1);
    char el[96];
    for (uint64_t i = 0; i < tr->nevents && !rc; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind >= 1 && e->kind < KS_EV_KINDS) rep->by_kind[e->kind]++;
        if (e->site >= tr->nsites || e->kind != tr->sites[e->site].kind) {
            cu_violation(rep, i, NULL, "event %llu: kind %s at site %u, which the schema does not give it",
                         (unsigned long long)i, ks_event_kind_name(e->kind), e->site);
            continue;
        }
        if (e->block >= tr->blocks || e->thread >= (uint32_t)tr->threads ||
            e->index != (int64_t)e->block * tr->threads + e->thread) {
            cu_violation(rep, i, NULL, "event %llu: block %u thread %u index %lld is not a thread of the launch",
                         (unsigned long long)i, e->block, e->thread, (long long)e->index);
            continue;
        }
        switch (e->kind) {
        case KS_EV_WORK: {
            const ks_site *s = &tr->sites[e->site];
            /* unsigned: a crafted field or stride wraps instead of overflowing (then it mismatches) */
            uint64_t back = 0;
            for (int f = 0; f < s->nfields && f < KS_WORK_FIELDS; ++f)
                back += (uint64_t)(int64_t)e->u.field[f] * (uint64_t)s->fields[f].stride;
            if ((int64_t)back != e->index)
                cu_violation(rep, i, e, "its blockIdx and threadIdx make index %lld, not %lld", (long long)back,
                             (long long)e->index);
            break;
        }
        case KS_EV_READ:
        case KS_EV_WRITE: {
            const char *verb = e->flags & KS_FLAG_ATOMIC ? "atomic on" : e->kind == KS_EV_READ ? "reads" : "stores";
            if (e->tensor >= tr->ntensors) {
                rep->outside++;
                cu_violation(rep, i, e,
                             "%s memory outside every buffer, shared array and its stack (the thread stopped)", verb);
                break;
            }
            const int64_t numel = ks_tensor_numel(&tr->tensors[e->tensor]), off = e->u.access.offset;
            if (off < 0 || off >= numel) {
                rep->outside++;
                element(tr, e, el, sizeof el);
                cu_violation(rep, i, e,
                             "%s %s, outside %s (%lld elements%s): the access was not made and the thread stopped",
                             verb, el, tr->tensors[e->tensor].name, (long long)numel,
                             e->flags & KS_FLAG_SHARED ? ", shared" : "");
            }
            break;
        }
        case KS_EV_WARP: {
            const ks_ev_warp *w = &e->u.warp;
            const char *op = w->op < 8 ? k_warp_op[w->op] : "a warp collective";
            const uint32_t warp_first = e->thread / 32 * 32, lanes = (uint32_t)tr->threads - warp_first;
            const uint32_t exist = lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1;
            if (w->lane >= 32 || !(w->mask >> w->lane & 1)) { /* a crafted lane past 31: no shift past the word */
                rep->warp_mask++;
                cu_violation(rep, i, e, "lane %u calls %s with mask 0x%08x, which leaves the calling lane out", w->lane,
                             op, w->mask);
            } else if (w->mask & exist & ~w->arrived) {
                rep->warp_mask++;
                cu_violation(
                    rep, i, e,
                    "%s with mask 0x%08x names lanes that did not take part (0x%08x arrived): they had ended or were elsewhere",
                    op, w->mask, w->arrived);
            }
            break;
        }
        case KS_EV_FAULT:
            if (e->u.fault.code == 1) break; /* outside: its access event says it */
            rep->faults++;
            cu_violation(rep, i, e, "%s",
                         e->u.fault.code < 10 && k_fault[e->u.fault.code] ? k_fault[e->u.fault.code]
                                                                          : "stopped by a fault");
            break;
        default: break;
        }
    }
    if (!rep->complete) memset(empty, 0, sizeof empty); /* unrecorded threads may have written them */
    if (!rc) rc = check_globals(tr, empty, rep);
    return rc ? ks_fail(rc, "out of memory for the checks") : KS_OK;
}
