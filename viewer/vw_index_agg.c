/* vw_index_agg.c - the per-element aggregates of the index (see vw_index.h): summed
 * event by event during the build's pass over the trace, and the sectors per request.
 * Event contents are not trusted: a site, tensor or coordinate out of range is skipped,
 * never used as an index. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/memory.h"
#include "vw_index_int.h"
#include "vw_plane.h"

/* Element offset of (plane, y, x) in t, or -1 when outside it. */
static int64_t element(const ks_tensor *t, int64_t plane, int64_t y, int64_t x)
{
    vw_plane_dims d = vw_plane_dims_of(t);
    if (plane < 0 || plane >= d.planes || y < 0 || y >= d.h || x < 0 || x >= d.w) return -1;
    return (plane * d.h + y) * d.w + x;
}

static int agg_tensor(vw_index *idx, int t, vw_aggregate **out)
{
    vw_aggregate *a = &idx->agg[t];
    *out = a->on ? a : NULL; /* on already: the usual case, per event */
    if (a->on) return KS_OK;
    int64_t n = ks_tensor_numel(&idx->tr->tensors[t]);
    if (n <= 0 || n > VW_AGG_MAX_ELEMENTS) return KS_OK;
    a->on = 1, a->n = n;
    *out = a;
    return KS_OK;
}

/* c's elements twice as wide, the counts copied. Returns 0, or -1 out of memory. */
static int widen(vw_counts *c, int64_t n)
{
    void *w = malloc((size_t)n * (size_t)c->width * 2);
    if (!w) return -1;
    if (c->width == 1)
        for (int64_t i = 0; i < n; ++i) ((uint16_t *)w)[i] = ((const uint8_t *)c->v)[i];
    else
        for (int64_t i = 0; i < n; ++i) ((uint32_t *)w)[i] = ((const uint16_t *)c->v)[i];
    free(c->v);
    c->v = w, c->width *= 2;
    return 0;
}

/* One more at element off of a's counts c (allocated or widened as it needs); the new
 * count (saturating at 2^32 - 1), or 0 out of memory (ks_error_message() set). */
static uint32_t count_add(const vw_aggregate *a, vw_counts *c, int64_t off)
{
    if (!c->v) {
        c->v = calloc((size_t)a->n, 1);
        c->width = 1;
        if (!c->v) goto oom;
    }
    for (;;) {
        if (c->width == 1) {
            uint8_t *v = c->v;
            if (v[off] < UINT8_MAX) return ++v[off];
        } else if (c->width == 2) {
            uint16_t *v = c->v;
            if (v[off] < UINT16_MAX) return ++v[off];
        } else {
            uint32_t *v = c->v;
            return v[off] < UINT32_MAX ? ++v[off] : v[off];
        }
        if (widen(c, a->n)) goto oom;
    }
oom:
    ks_fail(KS_ENOMEM, "out of memory for the aggregates (%lld elements)", (long long)a->n);
    return 0;
}

/* The first weight other than 1: the weights so far are the read counts. */
static int start_weights(vw_aggregate *a)
{
    a->weights = malloc((size_t)a->n * sizeof *a->weights);
    if (!a->weights) return ks_fail(KS_ENOMEM, "out of memory for the aggregates (%lld elements)", (long long)a->n);
    for (int64_t i = 0; i < a->n; ++i) a->weights[i] = (float)vw_count_at(&a->reads, i);
    return KS_OK;
}

/* Padding reads and sample corners may fall outside a plane: remember how far (up to 4
 * cells) so the heatmap leaves room to show them. */
static void note_margin(vw_index *idx, int tensor, int64_t y, int64_t x)
{
    vw_plane_dims d = vw_plane_dims_of(&idx->tr->tensors[tensor]);
    int64_t out = 0;
    if (y < 0) out = -y;
    if (y >= d.h && y - d.h + 1 > out) out = y - d.h + 1;
    if (x < 0 && -x > out) out = -x;
    if (x >= d.w && x - d.w + 1 > out) out = x - d.w + 1;
    if (out > 4) out = 4;
    if (out > idx->margin[tensor]) idx->margin[tensor] = (int)out;
}

/* A region point (rows = cols = 0) visits the cell it lies in; boxes visit nothing. */
static int visit(vw_index *idx, const ks_event *e)
{
    const ks_ev_region *g = &e->u.region;
    vw_aggregate *a;
    if (g->rows || g->cols) return KS_OK;
    if (e->tap) idx->point_taps = 1;
    int rc = agg_tensor(idx, e->tensor, &a);
    if (rc || !a || !(fabsf(g->y0) < 1e9f) || !(fabsf(g->x0) < 1e9f)) return rc; /* NaN fails < */
    int64_t off = element(&idx->tr->tensors[e->tensor], g->plane, (int64_t)floorf(g->y0 + 0.5f),
                          (int64_t)floorf(g->x0 + 0.5f));
    if (off < 0) return KS_OK;
    const uint32_t v = count_add(a, &a->visits, off);
    if (!v) return KS_ENOMEM;
    if (v > a->max_visits) a->max_visits = v;
    return KS_OK;
}

int vw_agg_event(vw_index *idx, const ks_event *e)
{
    const ks_trace *tr = idx->tr;
    vw_aggregate *a;
    if (e->kind == KS_EV_WORK || e->tensor >= tr->ntensors) return KS_OK;
    if (e->kind == KS_EV_REGION) return visit(idx, e);
    const ks_tensor *t = &tr->tensors[e->tensor];
    int rc = agg_tensor(idx, e->tensor, &a);
    if (rc) return rc;
    if (e->kind == KS_EV_READ && (e->flags & KS_FLAG_PADDING)) {
        note_margin(idx, e->tensor, e->u.access.y, e->u.access.x);
        return KS_OK;
    }
    /* a read or write outside its tensor, or a sample on a plane it does not have: never
     * used as an index, counted for the status line */
    const vw_plane_dims pd = vw_plane_dims_of(t);
    if (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) {
        const ks_ev_access *x = &e->u.access;
        if (x->plane < 0 || x->plane >= pd.planes || x->y < 0 || x->y >= pd.h || x->x < 0 || x->x >= pd.w) {
            idx->outside++;
            return KS_OK;
        }
        if (!a) return KS_OK;
        const int64_t off = ((int64_t)x->plane * pd.h + x->y) * pd.w + x->x;
        vw_counts *c = e->kind == KS_EV_WRITE ? &a->writes : &a->reads;
        uint32_t v;
        if (c->width == 1 && ((uint8_t *)c->v)[off] < UINT8_MAX) /* the usual case: a byte's count */
            v = ++((uint8_t *)c->v)[off];
        else if (!(v = count_add(a, c, off))) return KS_ENOMEM;
        if (e->kind == KS_EV_WRITE) {
            if (v > a->max_writes) a->max_writes = v;
        } else {
            if (v > a->max_reads) a->max_reads = v;
            if (a->weights) a->weights[off] += 1.0f;
            const float w = a->weights ? a->weights[off] : (float)v;
            if (w > a->max_weight) a->max_weight = w;
        }
        return KS_OK;
    }
    if (e->kind == KS_EV_SAMPLE && (e->u.sample.plane < 0 || e->u.sample.plane >= pd.planes)) idx->outside++;
    if (!a || e->kind != KS_EV_SAMPLE) return KS_OK;
    int64_t ys[2], xs[2];
    vw_sample_corners(e, ys, xs);
    for (int c = 0; c < 4; ++c) {
        if (ys[c >> 1] != INT32_MIN && xs[c & 1] != INT32_MIN) note_margin(idx, e->tensor, ys[c >> 1], xs[c & 1]);
        if (!(e->flags & (KS_FLAG_C00 << c))) continue;
        int64_t off = element(t, e->u.sample.plane, ys[c >> 1], xs[c & 1]);
        float w = e->u.sample.w[c];
        if (off < 0 || !isfinite(w)) continue;
        if (!a->weights && (rc = start_weights(a))) return rc;
        const uint32_t v = count_add(a, &a->reads, off);
        if (!v) return KS_ENOMEM;
        if (v > a->max_reads) a->max_reads = v;
        a->weights[off] += w;
        if (a->weights[off] > a->max_weight) a->max_weight = a->weights[off];
    }
    return KS_OK;
}

double vw_sectors_at(const vw_index *idx, int t, int64_t off)
{
    if (t < 0 || t >= KS_MAX_TENSORS || !idx->agg[t].sector_n || off < 0 ||
        off >= ks_tensor_numel(&idx->tr->tensors[t]) || !idx->agg[t].sector_n[off])
        return -1;
    return idx->agg[t].sector_sum[off] / idx->agg[t].sector_n[off];
}

/* One request: its sectors go to every element it touched, once per element. */
typedef struct sectors_ctx {
    vw_index *idx;
    const ks_trace *tr; /* idx->tr, or a copy of it with every event decoded */
} sectors_ctx;

static int add_sectors(void *ctx, int site, const ks_mem_request *r, const ks_mem_access *acc, uint32_t n)
{
    vw_index *idx = ((sectors_ctx *)ctx)->idx;
    const ks_trace *tr = ((sectors_ctx *)ctx)->tr;
    (void)site;
    for (uint32_t i = 0; i < n; ++i) {
        const ks_event *e = &tr->events[acc[i].event];
        vw_aggregate *a = &idx->agg[e->tensor];
        if (!a->sector_n || acc[i].offset >= ks_tensor_numel(&idx->tr->tensors[e->tensor])) continue;
        if (i && acc[i - 1].offset == acc[i].offset && tr->events[acc[i - 1].event].tensor == e->tensor)
            continue; /* sorted by byte: the same element again (a broadcast) */
        a->sector_sum[acc[i].offset] += (float)r->sectors;
        a->sector_n[acc[i].offset]++;
    }
    return 0;
}

/* The sectors-per-request aggregate of every tensor that has aggregates; a failure (out
 * of memory, a trace too big) leaves it out and the index stands. A lazily opened trace
 * (at most VW_SECTORS_MAX_EVENTS events) is decoded whole for it, then let go. */
void vw_agg_sectors(vw_index *idx)
{
    const ks_trace *tr = idx->tr;
    if (tr->nevents > VW_SECTORS_MAX_EVENTS) return;
    sectors_ctx ctx = {idx, tr};
    ks_trace *full = NULL;
    if (vw_trace_lazy(tr)) {
        full = malloc(sizeof *full);
        if (!full) return;
        *full = *tr;
        full->decoded = NULL;
        if (ks_trace_load_chunks(full, 0, UINT64_MAX)) {
            free(full->decoded);
            free(full);
            return;
        }
        ctx.tr = full;
    }
    int any = 0;
    for (int t = 0; t < tr->ntensors && t < KS_MAX_TENSORS; ++t) {
        vw_aggregate *a = &idx->agg[t];
        if (!a->on) continue;
        const int64_t n = ks_tensor_numel(&tr->tensors[t]);
        a->sector_sum = calloc((size_t)n, sizeof *a->sector_sum);
        a->sector_n = calloc((size_t)n, sizeof *a->sector_n);
        if (!a->sector_sum || !a->sector_n) goto drop;
        any = 1;
    }
    if (any && ks_memory_each_request(ctx.tr, add_sectors, &ctx) == KS_OK) goto done;
drop:
    for (int t = 0; t < KS_MAX_TENSORS; ++t) {
        free(idx->agg[t].sector_sum);
        free(idx->agg[t].sector_n);
        idx->agg[t].sector_sum = NULL;
        idx->agg[t].sector_n = NULL;
    }
done:
    if (full) free(full->decoded);
    free(full);
}

void vw_agg_free(vw_index *idx)
{
    for (int t = 0; t < KS_MAX_TENSORS; ++t) {
        free(idx->agg[t].reads.v);
        free(idx->agg[t].weights);
        free(idx->agg[t].writes.v);
        free(idx->agg[t].visits.v);
        free(idx->agg[t].sector_sum);
        free(idx->agg[t].sector_n);
    }
    memset(idx->agg, 0, sizeof idx->agg);
}
