/* memory.c - requests, sectors and lines of a trace's memory sites (memory.h). */
#include "memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

/* one lane's access: its request and its byte address */
typedef struct access {
    uint32_t block, warp, iter;
    uint16_t tap;
    uint8_t corner;
    uint8_t lane; /* not part of the request: the access's lane (kept where padding was) */
    uint64_t byte;
} access;

static int same_request(const access *a, const access *b)
{
    return a->block == b->block && a->warp == b->warp && a->iter == b->iter && a->tap == b->tap &&
           a->corner == b->corner;
}

static int by_request_byte(const void *p, const void *q)
{
    const access *a = p, *b = q;
    if (a->block != b->block) return a->block < b->block ? -1 : 1;
    if (a->warp != b->warp) return a->warp < b->warp ? -1 : 1;
    if (a->iter != b->iter) return a->iter < b->iter ? -1 : 1;
    if (a->tap != b->tap) return a->tap < b->tap ? -1 : 1;
    if (a->corner != b->corner) return a->corner < b->corner ? -1 : 1;
    return (a->byte > b->byte) - (a->byte < b->byte);
}

int64_t ks_memory_corner(const ks_trace *tr, const ks_event *e, int c)
{
    static const uint8_t valid[4] = {KS_FLAG_C00, KS_FLAG_C01, KS_FLAG_C10, KS_FLAG_C11};
    const ks_ev_sample *m = &e->u.sample;
    if (!(e->flags & valid[c]) || !isfinite(m->y) || !isfinite(m->x) || fabsf(m->y) > 1e9f || fabsf(m->x) > 1e9f)
        return -1;
    const ks_tensor *t = &tr->tensors[e->tensor];
    const int64_t W = t->ndim >= 1 ? t->shape[t->ndim - 1] : 1, H = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
    int64_t y = (int64_t)floorf(m->y), x = (int64_t)floorf(m->x);
    if (c >= 2 && !(e->flags & KS_FLAG_CLAMP_Y)) y += 1; /* a clamped corner stays on the row */
    if ((c & 1) && !(e->flags & KS_FLAG_CLAMP_X)) x += 1;
    if (y < 0 || y >= H || x < 0 || x >= W || m->plane < 0) return -1;
    return ((int64_t)m->plane * H + y) * W + x;
}

static void keep_worst(ks_mem_site *s, const ks_mem_request *r)
{
    int at = s->nworst < KS_MEM_WORST ? s->nworst++ : KS_MEM_WORST - 1;
    if (at == KS_MEM_WORST - 1 && s->nworst == KS_MEM_WORST && s->worst[at].sectors >= r->sectors) return;
    s->worst[at] = *r;
    for (; at > 0 && s->worst[at - 1].sectors < s->worst[at].sectors; --at) { /* most sectors first */
        const ks_mem_request t = s->worst[at];
        s->worst[at] = s->worst[at - 1], s->worst[at - 1] = t;
    }
}

/* The requests of one site from its sorted accesses. */
static void count_site(ks_mem_site *s, const access *a, uint64_t n, uint64_t elem)
{
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i, sectors = 0, lines = 0, distinct = 0;
        uint64_t last_byte = UINT64_MAX, last_sector = UINT64_MAX, last_line = UINT64_MAX;
        for (; j < n && same_request(&a[i], &a[j]); ++j) { /* sorted by byte within: distinct = changes */
            if (a[j].byte != last_byte) distinct++, last_byte = a[j].byte;
            if (a[j].byte / 32 != last_sector) sectors++, last_sector = a[j].byte / 32;
            if (a[j].byte / 128 != last_line) lines++, last_line = a[j].byte / 128;
        }
        const ks_mem_request r = {.block = a[i].block,
                                  .warp = a[i].warp,
                                  .iter = a[i].iter,
                                  .tap = a[i].tap,
                                  .corner = a[i].corner,
                                  .lanes = (uint32_t)(j - i),
                                  .sectors = (uint32_t)sectors,
                                  .ideal = (uint32_t)((distinct * elem + 31) / 32)};
        s->requests++, s->accesses += j - i, s->sectors += sectors, s->lines += lines, s->ideal += r.ideal;
        keep_worst(s, &r);
        i = j;
    }
}

int ks_memory_analyze(const ks_trace *tr, ks_mem_report *rep)
{
    memset(rep, 0, sizeof *rep);
    access *a = malloc((size_t)(tr->nevents * 4 + 1) * sizeof *a);
    if (!a) return ks_fail(KS_ENOMEM, "out of memory counting the accesses of %s", tr->path);
    for (int s = 0; s < tr->nsites; ++s) {
        const int kind = tr->sites[s].kind;
        if (kind != KS_EV_READ && kind != KS_EV_WRITE && kind != KS_EV_SAMPLE) continue;
        uint64_t n = 0;
        int atomic = 0;
        for (uint64_t i = 0; i < tr->nevents; ++i) {
            const ks_event *e = &tr->events[i];
            if (e->site != s) continue;
            if (e->kind != kind || e->tensor >= tr->ntensors) {
                free(a);
                return ks_fail(KS_EINVAL, "%s: event %llu does not match the site schema (kscope check tells more)",
                               tr->path, (unsigned long long)i);
            }
            const uint64_t elem = ks_dtype_size(tr->tensors[e->tensor].dtype);
            const access base = {.block = e->block, .warp = e->thread / 32, .iter = e->iter, .tap = e->tap};
            if (kind == KS_EV_SAMPLE) {
                for (int c = 0; c < 4; ++c) {
                    const int64_t off = ks_memory_corner(tr, e, c);
                    if (off < 0) continue;
                    a[n] = base, a[n].corner = (uint8_t)c, a[n++].byte = (uint64_t)off * elem;
                }
                continue;
            }
            if (e->u.access.offset < 0) continue; /* padding: no memory */
            atomic |= (e->flags & KS_FLAG_ATOMIC) != 0;
            a[n] = base, a[n++].byte = (uint64_t)e->u.access.offset * elem;
        }
        if (!n) continue;
        qsort(a, (size_t)n, sizeof *a, by_request_byte);
        ks_mem_site *ms = &rep->sites[rep->nsites++];
        ms->site = s, ms->atomic = atomic;
        count_site(ms, a, n, ks_dtype_size(tr->tensors[tr->sites[s].tensor].dtype));
    }
    free(a);
    return KS_OK;
}

/* ---- one request, and every request with its accesses (memory.h) ---- */

/* The element offset event e accesses (corner c of a sample), or -1 for no memory. */
static int64_t access_offset(const ks_trace *tr, const ks_event *e, int c)
{
    if (e->kind == KS_EV_SAMPLE) return c >= 0 && c < 4 ? ks_memory_corner(tr, e, c) : -1;
    if (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) return -1;
    return e->u.access.offset < 0 ? -1 : e->u.access.offset;
}

static int by_byte(const void *p, const void *q)
{
    const ks_mem_access *a = p, *b = q;
    return (a->byte > b->byte) - (a->byte < b->byte);
}

static int by_lane(const void *p, const void *q)
{
    const ks_mem_access *a = p, *b = q;
    if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
    return (a->event > b->event) - (a->event < b->event);
}

/* counts of one request from its accesses sorted by byte */
static void count_request(const ks_mem_access *a, uint64_t n, uint64_t elem, ks_mem_request *r)
{
    uint64_t sectors = 0, distinct = 0, last_byte = UINT64_MAX, last_sector = UINT64_MAX;
    for (uint64_t j = 0; j < n; ++j) {
        if (a[j].byte != last_byte) distinct++, last_byte = a[j].byte;
        if (a[j].byte / 32 != last_sector) sectors++, last_sector = a[j].byte / 32;
    }
    r->lanes = (uint32_t)n, r->sectors = (uint32_t)sectors, r->ideal = (uint32_t)((distinct * elem + 31) / 32);
}

int64_t ks_memory_request(const ks_trace *tr, const ks_event *e, int corner, ks_mem_access *acc, int64_t max,
                          ks_mem_request *req)
{
    memset(req, 0, sizeof *req);
    if (e->tensor >= tr->ntensors || e->site >= tr->nsites) return 0;
    const int c = e->kind == KS_EV_SAMPLE ? corner : 0;
    if (access_offset(tr, e, c) < 0) return 0;
    const uint32_t warp = e->thread / 32;
    uint64_t n = 0, cap = 64;
    ks_mem_access *a = malloc(cap * sizeof *a);
    if (!a) return -1;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *f = &tr->events[i];
        if (f->site != e->site || f->kind != e->kind || f->block != e->block || f->thread / 32 != warp ||
            f->iter != e->iter || f->tap != e->tap || f->tensor >= tr->ntensors)
            continue;
        const int64_t off = access_offset(tr, f, c);
        if (off < 0) continue;
        if (n == cap) {
            ks_mem_access *b = realloc(a, 2 * cap * sizeof *a);
            if (!b) {
                free(a);
                return -1;
            }
            a = b, cap *= 2;
        }
        a[n++] = (ks_mem_access){.event = i,
                                 .lane = f->thread % 32,
                                 .corner = (uint8_t)c,
                                 .offset = off,
                                 .byte = (uint64_t)off * ks_dtype_size(tr->tensors[f->tensor].dtype)};
    }
    qsort(a, (size_t)n, sizeof *a, by_byte);
    /* the site's tensor; the event's own when the site names none (an access event
     * pointing at a work site: a crafted trace, issue 39's fuzz_memory) */
    const int site_t = tr->sites[e->site].tensor;
    const int st = site_t >= 0 && site_t < tr->ntensors ? site_t : e->tensor;
    count_request(a, n, ks_dtype_size(tr->tensors[st].dtype), req);
    req->block = e->block, req->warp = warp, req->iter = e->iter, req->tap = e->tap, req->corner = (uint8_t)c;
    qsort(a, (size_t)n, sizeof *a, by_lane);
    for (uint64_t j = 0; j < n && (int64_t)j < max; ++j) acc[j] = a[j];
    free(a);
    return (int64_t)n;
}

/* an access with its request key, for sorting a site's accesses: 32 bytes (the lane in
 * the key's padding, the offset worked out again for each request as it is handed on),
 * where a key and a whole ks_mem_access took 56: the sort moves the elements, and its
 * arrays were most of the viewer's index build at 10 M events (fresh pages and memmove) */
typedef struct keyed {
    access k;
    uint64_t event;
} keyed;

int ks_memory_sort_depth = -1;

/* a before b: the request, the byte, then the event (a total order: any correct sort
 * gives the same array). by_request_byte's order, written out: calling it here measured
 * 10-15 % slower on the viewer's 10 M-event index. */
static inline int keyed_less(const keyed *a, const keyed *b)
{
    if (a->k.block != b->k.block) return a->k.block < b->k.block;
    if (a->k.warp != b->k.warp) return a->k.warp < b->k.warp;
    if (a->k.iter != b->k.iter) return a->k.iter < b->k.iter;
    if (a->k.tap != b->k.tap) return a->k.tap < b->k.tap;
    if (a->k.corner != b->k.corner) return a->k.corner < b->k.corner;
    if (a->k.byte != b->k.byte) return a->k.byte < b->k.byte;
    return a->event < b->event;
}

static inline void swap_keyed(keyed *a, keyed *b)
{
    const keyed t = *a;
    *a = *b, *b = t;
}

static void sift_keyed(keyed *a, size_t root, size_t n)
{
    for (size_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && keyed_less(&a[c], &a[c + 1])) ++c;
        if (!keyed_less(&a[root], &a[c])) return;
        swap_keyed(&a[root], &a[c]);
    }
}

/* Sorts in place, with the comparison inlined (introsort: quicksort on the median of
 * three, heapsort past 2 log2 n levels, insertion sort for short runs). glibc's qsort
 * merged through a copy of the array: at 10 M events its fresh pages and the calls to
 * the comparison were a third of the viewer's index build. */
static void sort_keyed(keyed *a, size_t n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) { /* heapsort: no quadratic case */
            for (size_t i = n / 2; i-- > 0;) sift_keyed(a, i, n);
            for (size_t i = n - 1; i > 0; --i) swap_keyed(&a[0], &a[i]), sift_keyed(a, 0, i);
            return;
        }
        keyed *m = &a[n / 2], *z = &a[n - 1];
        if (keyed_less(m, a)) swap_keyed(m, a);
        if (keyed_less(z, m)) {
            swap_keyed(z, m);
            if (keyed_less(m, a)) swap_keyed(m, a);
        }
        const keyed pivot = *m;
        size_t i = 0, j = n - 1;
        for (;;) { /* Hoare: a[0] <= pivot <= a[n - 1] stop both scans */
            while (keyed_less(&a[i], &pivot)) ++i;
            while (keyed_less(&pivot, &a[j])) --j;
            if (i >= j) break;
            swap_keyed(&a[i++], &a[j--]);
        }
        /* [0, j] and [j + 1, n): recurse into the smaller, loop on the larger */
        if (j + 1 < n - j - 1) {
            sort_keyed(a, j + 1, depth);
            a += j + 1, n -= j + 1;
        } else {
            sort_keyed(a + j + 1, n - j - 1, depth);
            n = j + 1;
        }
    }
    for (size_t i = 1; i < n; ++i)
        for (size_t k = i; k > 0 && keyed_less(&a[k], &a[k - 1]); --k) swap_keyed(&a[k], &a[k - 1]);
}

static void sort_keyed_all(keyed *a, uint64_t n)
{
    int depth = 0;
    for (uint64_t m = n; m > 1; m >>= 1) depth += 2;
    sort_keyed(a, (size_t)n, ks_memory_sort_depth >= 0 ? ks_memory_sort_depth : depth);
}

/* A site's accesses into request order. A trace in item order with one item a thread
 * lists them warp by warp already (its threads in order, a thread's accesses together):
 * then only each warp's accesses need sorting, each a few hundred in cache. Any other
 * order (a grid-stride loop's items come iteration by iteration) sorts them all. */
static void sort_requests(keyed *a, uint64_t n)
{
    uint64_t i = 1;
    while (i < n &&
           (a[i - 1].k.block < a[i].k.block || (a[i - 1].k.block == a[i].k.block && a[i - 1].k.warp <= a[i].k.warp)))
        ++i;
    if (i < n) {
        sort_keyed_all(a, n);
        return;
    }
    for (uint64_t from = 0, to; from < n; from = to) {
        for (to = from + 1; to < n && a[to].k.block == a[from].k.block && a[to].k.warp == a[from].k.warp;) ++to;
        sort_keyed_all(a + from, to - from);
    }
}

int ks_memory_each_request(const ks_trace *tr, ks_mem_request_fn fn, void *ctx)
{
    keyed *a = NULL;
    ks_mem_access *run = NULL;
    uint64_t run_cap = 0;
    int rc = KS_OK, stop = 0;
    for (int s = 0; s < tr->nsites && !rc && !stop; ++s) {
        const int kind = tr->sites[s].kind;
        if (kind != KS_EV_READ && kind != KS_EV_WRITE && kind != KS_EV_SAMPLE) continue;
        uint64_t n = 0, need = 0;
        for (uint64_t i = 0; i < tr->nevents; ++i) {
            const ks_event *e = &tr->events[i];
            if (e->site != s) continue;
            if (e->kind != kind || e->tensor >= tr->ntensors) {
                free(a);
                free(run);
                return ks_fail(KS_EINVAL, "%s: event %llu does not match the site schema (kscope check tells more)",
                               tr->path, (unsigned long long)i);
            }
            need += kind == KS_EV_SAMPLE ? 4 : 1;
        }
        if (!need) continue;
        free(a);
        a = malloc((size_t)need * sizeof *a);
        if (!a) {
            rc = ks_fail(KS_ENOMEM, "out of memory listing the requests of %s", tr->path);
            break;
        }
        for (uint64_t i = 0; i < tr->nevents; ++i) {
            const ks_event *e = &tr->events[i];
            if (e->site != s) continue;
            const uint64_t elem = ks_dtype_size(tr->tensors[e->tensor].dtype);
            for (int c = 0; c < (kind == KS_EV_SAMPLE ? 4 : 1); ++c) {
                const int64_t off = access_offset(tr, e, c);
                if (off < 0) continue;
                a[n++] = (keyed){.k = {.block = e->block,
                                       .warp = e->thread / 32,
                                       .iter = e->iter,
                                       .tap = e->tap,
                                       .corner = (uint8_t)c,
                                       .lane = (uint8_t)(e->thread % 32),
                                       .byte = (uint64_t)off * elem},
                                 .event = i};
            }
        }
        sort_requests(a, n);
        const uint64_t elem = ks_dtype_size(tr->tensors[tr->sites[s].tensor].dtype);
        for (uint64_t i = 0, j; i < n && !stop; i = j) {
            for (j = i; j < n && same_request(&a[i].k, &a[j].k); ++j) {}
            if (j - i > run_cap) { /* room for the longest request so far */
                free(run);
                run_cap = j - i;
                if (!(run = malloc((size_t)run_cap * sizeof *run))) {
                    rc = ks_fail(KS_ENOMEM, "out of memory listing the requests of %s", tr->path);
                    break;
                }
            }
            for (uint64_t m = i; m < j; ++m) {
                const ks_event *e = &tr->events[a[m].event];
                run[m - i] = (ks_mem_access){.event = a[m].event,
                                             .lane = a[m].k.lane,
                                             .corner = a[m].k.corner,
                                             .offset = access_offset(tr, e, a[m].k.corner),
                                             .byte = a[m].k.byte};
            }
            ks_mem_request r = {.block = a[i].k.block,
                                .warp = a[i].k.warp,
                                .iter = a[i].k.iter,
                                .tap = a[i].k.tap,
                                .corner = a[i].k.corner};
            count_request(run, j - i, elem, &r);
            if (fn(ctx, s, &r, run, (uint32_t)(j - i))) stop = 1;
        }
    }
    free(a);
    free(run);
    return rc;
}
