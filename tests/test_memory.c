/* test_memory.c - `kscope memory`'s counts (trace/memory.h): on every operator's default
 * trace (and --backward), against an independent count that shares nothing with it (a
 * quadratic scan: an access is a request's first when no earlier access of its site has
 * the same block, warp, iteration, tap and corner; a sector is new when no earlier access
 * of its request falls in it); and on hand-made warps whose sector counts are known:
 * 32 consecutive floats (4 sectors), a stride of 2 (8), one address broadcast (1), a
 * misaligned run (5). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/memory.h"
#include "../trace/run_trace.h"
#include "test_util.h"

typedef struct flat {
    int site;
    uint32_t block, warp, iter, tap, corner;
    int64_t byte;
} flat;

/* every access of the trace, one row per lane (and sample corner) */
static flat *flatten(const ks_trace *tr, int64_t *n)
{
    flat *f = malloc((size_t)(tr->nevents * 4 + 1) * sizeof *f);
    *n = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE && e->kind != KS_EV_SAMPLE) continue;
        const int64_t size = (int64_t)ks_dtype_size(tr->tensors[e->tensor].dtype);
        for (int c = 0; c < (e->kind == KS_EV_SAMPLE ? 4 : 1); ++c) {
            const int64_t off = e->kind == KS_EV_SAMPLE ? ks_memory_corner(tr, e, c) : e->u.access.offset;
            if (off < 0) continue;
            f[(*n)++] = (flat){e->site, e->block, e->thread / 32, e->iter, e->tap, (uint32_t)c, off * size};
        }
    }
    return f;
}

static int same_req(const flat *a, const flat *b)
{
    return a->site == b->site && a->block == b->block && a->warp == b->warp && a->iter == b->iter && a->tap == b->tap &&
           a->corner == b->corner;
}

/* requests, sectors and ideal sectors of `site`, by the quadratic scan */
static void brute(const flat *f, int64_t n, int site, uint64_t *req, uint64_t *sec, uint64_t *ideal, int64_t size)
{
    *req = *sec = *ideal = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (f[i].site != site) continue;
        int first = 1, new_sector = 1;
        for (int64_t j = 0; j < i && (first || new_sector); ++j) {
            if (!same_req(&f[i], &f[j])) continue;
            first = 0;
            if (f[j].byte / 32 == f[i].byte / 32) new_sector = 0;
        }
        *sec += new_sector;
        if (!first) continue;
        *req += 1;
        int64_t distinct = 0; /* this request's distinct addresses */
        for (int64_t j = i; j < n; ++j) {
            if (!same_req(&f[i], &f[j])) continue;
            int seen = 0;
            for (int64_t k = i; k < j && !seen; ++k) seen = same_req(&f[i], &f[k]) && f[k].byte == f[j].byte;
            distinct += !seen;
        }
        *ideal += (uint64_t)((distinct * size + 31) / 32);
    }
}

START_TEST(memory_counts_match_an_independent_count_on_every_operator)
{
    const ks_op *op = ks_op_at(_i);
    const int has_backward = ks_op_param(op, "backward") >= 0;
    for (int backward = 0; backward <= has_backward; ++backward) {
        static ks_run r;
        static ks_trace tr;
        static ks_mem_report rep;
        ks_run_init(&r, op);
        r.pattern = KS_PAT_RANDOM, r.seed = 3;
        r.launch = tu_launch(tu_op_threads(op, 64), 0); /* 2 warps per block, several blocks */
        if (backward) ck_assert_int_eq(ks_run_set(&r, "backward", "on"), KS_OK);
        ck_assert_ptr_nonnull(r.sink = ks_host_sink_create(0, ks_filter_all()));
        ck_assert_msg(ks_run_execute(&r) == KS_OK, "%s: %s", op->name, ks_error_message());
        ks_trace_from_run(op, &r, &tr);
        ck_assert_int_eq(ks_memory_analyze(&tr, &rep), KS_OK);
        ck_assert_msg(rep.nsites > 0, "%s: no memory site", op->name);
        int64_t n;
        flat *f = flatten(&tr, &n);
        for (int i = 0; i < rep.nsites; ++i) {
            const ks_mem_site *s = &rep.sites[i];
            uint64_t req, sec, ideal;
            brute(f, n, s->site, &req, &sec, &ideal,
                  (int64_t)ks_dtype_size(tr.tensors[tr.sites[s->site].tensor].dtype));
            ck_assert_msg(s->requests == req && s->sectors == sec && s->ideal == ideal,
                          "%s %s: requests %llu/%llu sectors %llu/%llu ideal %llu/%llu (memory/independent)", op->name,
                          tr.sites[s->site].name, (unsigned long long)s->requests, (unsigned long long)req,
                          (unsigned long long)s->sectors, (unsigned long long)sec, (unsigned long long)s->ideal,
                          (unsigned long long)ideal);
            ck_assert(s->sectors >= s->ideal && s->requests > 0);
        }
        free(f);
        ks_host_sink_free(r.sink);
        ks_run_free(&r);
    }
}
END_TEST

/* one warp's reads of a float tensor at the given element offsets */
static void one_warp(const int64_t *offsets, int n, ks_mem_report *rep)
{
    static ks_trace tr;
    static ks_event ev[64];
    static float data[4096];
    memset(&tr, 0, sizeof tr);
    tr.threads = 32, tr.blocks = 1, tr.work_items = n, tr.ntensors = 1, tr.nsites = 2;
    ks_tensor_shape(&tr.tensors[0], 1, 4096, 0, 0, 0);
    snprintf(tr.tensors[0].name, sizeof tr.tensors[0].name, "x");
    tr.tensors[0].data = data;
    ks_site_access(&tr.sites[1], "warp.read", KS_EV_READ, 0, 0);
    for (int i = 0; i < n; ++i) {
        memset(&ev[i], 0, sizeof ev[i]);
        ev[i].kind = KS_EV_READ, ev[i].site = 1, ev[i].tensor = 0, ev[i].thread = (uint32_t)i, ev[i].index = i;
        ev[i].u.access.offset = offsets[i], ev[i].u.access.x = (int32_t)offsets[i];
    }
    tr.events = ev, tr.nevents = (uint64_t)n;
    ck_assert_int_eq(ks_memory_analyze(&tr, rep), KS_OK);
    ck_assert_int_eq(rep->nsites, 1);
    ck_assert_int_eq(rep->sites[0].requests, 1);
}

START_TEST(known_warps_have_known_sector_counts)
{
    static ks_mem_report rep;
    int64_t off[32];
    for (int i = 0; i < 32; ++i) off[i] = i; /* 128 contiguous bytes from a sector boundary */
    one_warp(off, 32, &rep);
    ck_assert_int_eq(rep.sites[0].sectors, 4);
    ck_assert_int_eq(rep.sites[0].ideal, 4);
    ck_assert_int_eq(rep.sites[0].lines, 1);
    for (int i = 0; i < 32; ++i) off[i] = 2 * i; /* every other float: twice the sectors */
    one_warp(off, 32, &rep);
    ck_assert_int_eq(rep.sites[0].sectors, 8);
    ck_assert_int_eq(rep.sites[0].ideal, 4);
    for (int i = 0; i < 32; ++i) off[i] = 77; /* a broadcast: one address */
    one_warp(off, 32, &rep);
    ck_assert_int_eq(rep.sites[0].sectors, 1);
    ck_assert_int_eq(rep.sites[0].ideal, 1);
    for (int i = 0; i < 32; ++i) off[i] = 3 + i; /* misaligned by 12 bytes: one sector more */
    one_warp(off, 32, &rep);
    ck_assert_int_eq(rep.sites[0].sectors, 5);
    ck_assert_int_eq(rep.sites[0].ideal, 4);
    ck_assert_int_eq(rep.sites[0].lines, 2);
    for (int i = 0; i < 32; ++i) off[i] = 32 * i; /* a column of a 32-wide matrix: a sector each */
    one_warp(off, 32, &rep);
    ck_assert_int_eq(rep.sites[0].sectors, 32);
    ck_assert_int_eq(rep.sites[0].ideal, 4);
    ck_assert_int_eq(rep.sites[0].worst[0].sectors, 32);
    ck_assert_int_eq(rep.sites[0].worst[0].lanes, 32);
}
END_TEST


/* ks_memory_each_request's requests add up to ks_memory_analyze's report, and
 * ks_memory_request finds each request again from any of its events (same counts, same
 * accesses) */
typedef struct sums {
    const ks_trace *tr;
    uint64_t requests[KS_MAX_SITES], accesses[KS_MAX_SITES], sectors[KS_MAX_SITES], ideal[KS_MAX_SITES];
    uint64_t checked;
} sums;

static int add_request(void *ctx, int site, const ks_mem_request *r, const ks_mem_access *acc, uint32_t n)
{
    sums *u = ctx;
    u->requests[site]++, u->accesses[site] += n, u->sectors[site] += r->sectors, u->ideal[site] += r->ideal;
    ck_assert_uint_eq(r->lanes, n);
    for (uint32_t i = 1; i < n; ++i) /* by byte, then event: the same order whatever the sort */
        ck_assert(acc[i - 1].byte < acc[i].byte || (acc[i - 1].byte == acc[i].byte && acc[i - 1].event < acc[i].event));
    for (uint32_t i = 0; i < n; ++i) { /* each access's own lane, offset and byte */
        const ks_event *e = &u->tr->events[acc[i].event];
        ck_assert_uint_eq(acc[i].lane, e->thread % 32);
        ck_assert_int_eq(acc[i].offset,
                         e->kind == KS_EV_SAMPLE ? ks_memory_corner(u->tr, e, acc[i].corner) : e->u.access.offset);
        ck_assert_uint_eq(acc[i].byte, (uint64_t)acc[i].offset * ks_dtype_size(u->tr->tensors[e->tensor].dtype));
    }
    if (u->checked++ % 7) return 0; /* every seventh request: found again from its last access */
    static ks_mem_access got[4096];
    ks_mem_request q;
    const ks_event *e = &u->tr->events[acc[n - 1].event];
    const int64_t m = ks_memory_request(u->tr, e, acc[n - 1].corner, got, 4096, &q);
    ck_assert_int_eq(m, n);
    ck_assert(q.sectors == r->sectors && q.ideal == r->ideal && q.lanes == r->lanes && q.block == r->block &&
              q.warp == r->warp && q.iter == r->iter && q.tap == r->tap && q.corner == r->corner);
    uint64_t sum_a = 0, sum_b = 0;
    for (uint32_t i = 0; i < n; ++i)
        sum_a += acc[i].event * 4 + acc[i].corner, sum_b += got[i].event * 4 + got[i].corner;
    ck_assert_uint_eq(sum_a, sum_b);
    for (uint32_t i = 1; i < n; ++i) ck_assert_uint_le(got[i - 1].lane, got[i].lane);
    return 0;
}

/* events by (block, warp), then by item and seq (a warp's events in the trace's order) */
static int by_block_warp(const void *p, const void *q)
{
    const ks_event *a = p, *b = q;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->thread / 32 != b->thread / 32) return a->thread / 32 < b->thread / 32 ? -1 : 1;
    /* the same warp: their order in the trace (index, then seq, as the trace lists them) */
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* ks_memory_each_request over tr: its requests' sums per site are the report's */
static void requests_add_up(const ks_trace *tr, const ks_mem_report *rep, const char *op, const char *how)
{
    static sums u;
    memset(&u, 0, sizeof u);
    u.tr = tr;
    ck_assert_int_eq(ks_memory_each_request(tr, add_request, &u), KS_OK);
    for (int i = 0; i < rep->nsites; ++i) {
        const ks_mem_site *s = &rep->sites[i];
        ck_assert_msg(u.requests[s->site] == s->requests && u.accesses[s->site] == s->accesses &&
                          u.sectors[s->site] == s->sectors && u.ideal[s->site] == s->ideal,
                      "%s %s (%s)", op, tr->sites[s->site].name, how);
    }
}

START_TEST(each_request_adds_up_to_the_report_and_is_found_from_its_events)
{
    const ks_op *op = ks_op_at(_i);
    static ks_run r;
    static ks_trace tr;
    static ks_mem_report rep;
    ks_run_init(&r, op);
    r.pattern = KS_PAT_RANDOM, r.seed = 5;
    r.launch = tu_launch(tu_op_threads(op, 64), 0);
    ck_assert_ptr_nonnull(r.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_msg(ks_run_execute(&r) == KS_OK, "%s: %s", op->name, ks_error_message());
    ks_trace_from_run(op, &r, &tr);
    ck_assert_int_eq(ks_memory_analyze(&tr, &rep), KS_OK);
    /* the sort as it runs, then heapsort from the start and after one and three levels */
    static const int depths[] = {-1, 0, 1, 3};
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; ++d) {
        char how[32];
        snprintf(how, sizeof how, "depth %d", depths[d]);
        ks_memory_sort_depth = depths[d];
        requests_add_up(&tr, &rep, op->name, how);
    }
    ks_memory_sort_depth = -1;
    /* the same events warp by warp (each warp's in their order): the sort takes each
     * warp's accesses alone, and the requests are the same */
    static ks_trace by_warp;
    by_warp = tr;
    ks_event *ev = malloc((tr.nevents ? tr.nevents : 1) * sizeof *ev);
    ck_assert_ptr_nonnull(ev);
    memcpy(ev, tr.events, tr.nevents * sizeof *ev);
    qsort(ev, tr.nevents, sizeof *ev, by_block_warp);
    by_warp.events = ev;
    requests_add_up(&by_warp, &rep, op->name, "warp by warp");
    free(ev);
    /* a work event and a padding read touch no memory */
    for (uint64_t i = 0; i < tr.nevents; ++i) {
        const ks_event *e = &tr.events[i];
        ks_mem_request q;
        if (e->kind == KS_EV_WORK || (e->kind == KS_EV_READ && e->u.access.offset < 0))
            ck_assert_int_eq(ks_memory_request(&tr, e, 0, NULL, 0, &q), 0);
    }
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, memory_counts_match_an_independent_count_on_every_operator, 0, ks_op_count());
    tcase_add_test(tc, known_warps_have_known_sector_counts);
    tcase_add_loop_test(tc, each_request_adds_up_to_the_report_and_is_found_from_its_events, 0, ks_op_count());
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
