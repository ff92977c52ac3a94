#include "check.h"

#include <cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "check_shared.h"
#include "formula.h"

static void violation(ks_check_report *rep, uint64_t i, const ks_event *e, const char *fmt, ...) KS_PRINTF(4, 5);
void ks_check_count_rule(ks_check_report *rep, const char *rule)
{
    for (int k = 0; k < rep->nrules; ++k)
        if (rep->rules[k].rule == rule || !strcmp(rep->rules[k].rule, rule)) {
            rep->rules[k].count++;
            return;
        }
    if (rep->nrules == KS_CHECK_RULES) {
        rep->rules_other++;
        return;
    }
    rep->rules[rep->nrules].rule = rule;
    rep->rules[rep->nrules++].count = 1;
}

void ks_check_rule_text(const char *rule, char *buf, size_t n)
{
    size_t o = 0;
    for (const char *c = rule; *c && o + 2 < n; ++c) {
        if (c[0] == '%' && c[1] == '%') {
            buf[o++] = '%', ++c;
        } else if (*c == '%') { /* flags, width, precision, length, then the conversion */
            ++c;
            while (*c && strchr("-+ #0123456789.*hlLzjt", *c)) ++c;
            buf[o++] = *c == 's' ? 'X' : 'N'; /* a name, or a number */
            if (!*c) break;
        } else {
            buf[o++] = *c;
        }
    }
    buf[o] = 0;
}

static void violation(ks_check_report *rep, uint64_t i, const ks_event *e, const char *fmt, ...)
{
    ks_check_count_rule(rep, fmt);
    if (rep->violations < KS_CHECK_KEEP) {
        char *line = rep->first[rep->violations];
        int n = e ? snprintf(line, 256, "event %llu (block %u thread %u index %lld): ", (unsigned long long)i, e->block,
                             e->thread, (long long)e->index)
                  : 0;
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && n < 256) vsnprintf(line + n, 256 - (size_t)n, fmt, ap);
        va_end(ap);
    }
    rep->violations++;
}

/* a * b + c in int64, or 0 when it overflows (header numbers are bounded by the reader,
 * event numbers are not: iter * grid alone can pass 2^63) */
static int mul_add(int64_t a, int64_t b, int64_t c, int64_t *out)
{
    int64_t p;
    return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(p, c, out);
}

/* NaN equals NaN here: a NaN value is reported once, as NaN, not again as a mismatch */
static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static void check_work(const ks_site *s, const ks_formula_params *params, uint64_t i, const ks_event *e,
                       ks_check_report *rep)
{
    int64_t recomposed = 0;
    int digits = 0;
    for (int f = 0; f < s->nfields; ++f) {
        const ks_field *d = &s->fields[f];
        ks_formula_value shown;
        /* a derived field holds to the formula `step` shows for it, evaluated as C types it
         * (integers exactly, floats in f32) over the fields, the index and the trace's
         * parameters; a formula naming a tensor is described only, and step says so */
        const int frc = d->digit ? KS_ENOENT : ks_formula_eval_value(d->expr, s, e, params, &shown);
        if (frc == KS_OK && (shown.is_float ? (double)shown.f != (double)e->u.field[f] : shown.i != e->u.field[f])) {
            char got[40];
            if (shown.is_float) snprintf(got, sizeof got, "%.9g", shown.f);
            else snprintf(got, sizeof got, "%lld", (long long)shown.i);
            violation(rep, i, e, "%s = %d but its formula %s gives %s", d->name, e->u.field[f], d->expr, got);
        } else if (frc == KS_ECHECK)
            violation(rep, i, e, "%s = %d but its formula %s overflows 64-bit integers", d->name, e->u.field[f],
                      d->expr);
        if (!d->digit) continue;
        int64_t want = e->index / d->stride;
        if (d->extent > 0) want %= d->extent;
        want += d->bias;
        if (e->u.field[f] != want)
            violation(rep, i, e, "%s = %d but index %lld gives %s = %lld", d->name, e->u.field[f], (long long)e->index,
                      d->expr, (long long)want);
        if (!mul_add((int64_t)e->u.field[f] - d->bias, d->stride, recomposed, &recomposed)) {
            violation(rep, i, e, "field %s = %d times stride %lld overflows", d->name, e->u.field[f],
                      (long long)d->stride);
            return;
        }
        digits++;
    }
    if (digits && recomposed != e->index)
        violation(rep, i, e, "fields recompose to %lld, not to the index", (long long)recomposed);
}

static double tensor_value(const ks_tensor *t, int64_t off) { return ks_tensor_value(t, off); }

/* Does an access's value agree with the element? An integer event (KS_FLAG_INT) holds it
 * exactly; any other holds the nearest float, so the element is compared rounded the same
 * way (an index past 2^24 recorded by an older writer is not a mismatch). */
static int value_matches(double stored, const ks_event *e)
{
    if (!(e->flags & KS_FLAG_INT)) stored = (double)(float)stored;
    return same_value(stored, ks_access_value(&e->u.access, e->flags));
}

/* An event's value as text: an integer event's exactly, a float's as %g. */
static const char *value_text(char *buf, size_t n, const ks_event *e)
{
    if (e->flags & KS_FLAG_INT) snprintf(buf, n, "%d", e->u.access.ivalue);
    else snprintf(buf, n, "%g", e->u.access.value);
    return buf;
}

/* An element as text: integers exactly (up to 2^53), floats as %g. */
static const char *stored_text(char *buf, size_t n, double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0) snprintf(buf, n, "%.0f", v);
    else snprintf(buf, n, "%g", v);
    return buf;
}

/* In-bounds accesses: offset inside the tensor and (plane, y, x) recomposing to it.
 * empty_ok: the event is a store of +-Inf by a work item that read only padding, the
 * identity of a max (or min) over no element (maxpool2d's window wholly in the padding,
 * as torch gives it): not a non-finite value to report. */
static int check_access(const ks_trace *tr, const ks_site *s, uint64_t i, const ks_event *e, ks_check_report *rep,
                        int empty_ok)
{
    const ks_tensor *t = &tr->tensors[s->tensor];
    const ks_ev_access *a = &e->u.access;
    const int64_t numel = ks_tensor_numel(t);
    const int64_t X = t->ndim >= 1 ? t->shape[t->ndim - 1] : 1;
    const int64_t Y = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
    const int shared = (e->flags & KS_FLAG_SHARED) != 0;
    const double v = ks_access_value(a, e->flags);
    char vt[32], st[32];
    /* a shared read of NaN is the simulator's poison: an uninitialised read (check_shared.c) */
    if (!isfinite(v) && !(shared && e->kind == KS_EV_READ) && !(empty_ok && isinf(v)))
        violation(rep, i, e, "value is %g", v);
    if (shared && a->offset == -1 && a->y == -1) {
        violation(rep, i, e, "shared %s of element %d of array %d (plane of %s): outside the array",
                  e->kind == KS_EV_WRITE ? "write" : "read", a->x, a->plane, t->name);
        return 0;
    }
    if (e->flags & KS_FLAG_PADDING) {
        rep->padding_reads++;
        if (e->kind != KS_EV_READ) violation(rep, i, e, "a write marked as padding");
        if (a->offset != -1) violation(rep, i, e, "padding read with offset %lld", (long long)a->offset);
        /* a kernel that refuses a coordinate (patchify at NaN, Inf or |c| >= 2^30) records
         * the padding read where its index math put it, which may be inside: counted, not
         * a violation (docs/trace-format.md) */
        if (a->y >= 0 && a->y < Y && a->x >= 0 && a->x < X) rep->padding_inside++;
        if (v != 0.0) violation(rep, i, e, "padding read of %s, not 0", value_text(vt, sizeof vt, e));
        return 0;
    }
    if (a->offset < 0 || a->offset >= numel) {
        violation(rep, i, e, "offset %lld outside %s (%lld elements)", (long long)a->offset, t->name, (long long)numel);
        return 0;
    }
    int64_t row, off;
    if (a->y < 0 || a->y >= Y || a->x < 0 || a->x >= X || !mul_add(a->plane, Y, a->y, &row) ||
        !mul_add(row, X, a->x, &off) || off != a->offset)
        violation(rep, i, e, "(plane %d, y %d, x %d) does not recompose to offset %lld of %s", a->plane, a->y, a->x,
                  (long long)a->offset, t->name);
    const double stored = tensor_value(t, a->offset);
    if (e->kind == KS_EV_READ && tr->roles[s->tensor] == KS_ROLE_INPUT && !value_matches(stored, e))
        violation(rep, i, e, "read %s but %s[%lld] holds %s", value_text(vt, sizeof vt, e), t->name,
                  (long long)a->offset, stored_text(st, sizeof st, stored));
    return 1;
}

/* A region lies on a plane of its tensor, with finite, ordered corners. */
static void check_region(const ks_trace *tr, const ks_site *s, uint64_t i, const ks_event *e, ks_check_report *rep)
{
    const ks_tensor *t = &tr->tensors[s->tensor];
    const ks_ev_region *g = &e->u.region;
    const int64_t X = t->ndim >= 1 ? t->shape[t->ndim - 1] : 1, Y = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
    const int64_t planes = X > 0 && Y > 0 ? ks_tensor_numel(t) / X / Y : 0;
    if (g->plane < 0 || g->plane >= planes)
        violation(rep, i, e, "region on plane %d of %s, which has %lld planes", g->plane, t->name, (long long)planes);
    if (!isfinite(g->y0) || !isfinite(g->x0) || !isfinite(g->y1) || !isfinite(g->x1) || g->y1 < g->y0 || g->x1 < g->x0)
        violation(rep, i, e, "region (%g, %g)-(%g, %g) is not a finite box", g->y0, g->x0, g->y1, g->x1);
    if ((g->rows == 0) != (g->cols == 0)) violation(rep, i, e, "region of %u x %u bins", g->rows, g->cols);
}

/* One float's spacing at v: what rounding can move a coordinate's fraction by. */
static double ulp_at(float v) { return (double)nextafterf(fabsf(v), INFINITY) - fabsf(v); }

/* A bilinear sample: finite value and weights; each weight in [0, 1]; the four the
 * products of the fractional position, (1-ly)(1-lx), (1-ly)lx, ly(1-lx), ly lx with
 * ly = y - floor(y), within the float rounding of the coordinates (an axis clamped to its
 * last row or column has one pixel for its two corners: only their sums are held); weight only where some corner is valid (a sample outside
 * the plane weighs nothing); and all four corners valid: weights summing to 1. An invalid
 * corner inside the plane's border may carry its weight (mmcv's rule: the weight is
 * computed, the value read is 0). */
static void check_sample(uint64_t i, const ks_event *e, ks_check_report *rep)
{
    const ks_ev_sample *m = &e->u.sample;
    const unsigned corners = e->flags & (KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11);
    const int all = corners == (KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11);
    float sum = 0.0f;
    int finite = 1, weighed = 0;
    if (!isfinite(m->value)) violation(rep, i, e, "sampled value is %g", m->value);
    for (int k = 0; k < 4; ++k) {
        if (!isfinite(m->w[k])) {
            violation(rep, i, e, "weight %d is %g", k, m->w[k]);
            finite = 0;
            continue;
        }
        if (m->w[k] < -1e-6f || m->w[k] > 1.0f + 1e-6f)
            violation(rep, i, e, "weight %d is %.7g, outside [0, 1]", k, m->w[k]);
        weighed |= m->w[k] != 0.0f;
        sum += m->w[k];
    }
    if (all && finite && fabsf(sum - 1.0f) > 1e-5f)
        violation(rep, i, e, "in-range sample weights sum to %.7g, not 1", sum);
    if (!corners && weighed) violation(rep, i, e, "no corner is valid, yet the weights are not all 0");
    if (!finite || !corners || !isfinite(m->y) || !isfinite(m->x)) return;
    const double ly = (double)m->y - floor((double)m->y), lx = (double)m->x - floor((double)m->x);
    const double want[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
    const double tol = 1e-5 + 4 * (ulp_at(m->y) + ulp_at(m->x));
    const int cy = (e->flags & KS_FLAG_CLAMP_Y) != 0, cx = (e->flags & KS_FLAG_CLAMP_X) != 0;
    if (!cy && !cx) {
        for (int k = 0; k < 4; ++k)
            if (fabs(m->w[k] - want[k]) > tol) {
                violation(rep, i, e, "weight %d is %.7g, but the position (y %.7g, x %.7g) gives %.7g", k, m->w[k],
                          m->y, m->x, want[k]);
                return;
            }
    } else if (cy != cx) {
        /* one axis clamped: its two corners are one pixel, so only their sum is known
         * (RoIAlign puts it all on the first, torch's upsample splits it by the fraction) */
        const double a = cy ? m->w[0] + m->w[2] : m->w[0] + m->w[1], b = cy ? m->w[1] + m->w[3] : m->w[2] + m->w[3];
        const double l = cy ? lx : ly;
        if (fabs(a - (1 - l)) > tol || fabs(b - l) > tol)
            violation(rep, i, e, "weights %.7g %.7g %.7g %.7g do not split as the position (y %.7g, x %.7g) says",
                      m->w[0], m->w[1], m->w[2], m->w[3], m->y, m->x);
    }
}

/* Work events that reach the "recorded twice" test: site in the schema, kind work,
 * index in range. */
static int countable_work(const ks_trace *tr, const ks_event *e)
{
    return e->kind == KS_EV_WORK && e->site < tr->nsites && tr->sites[e->site].kind == KS_EV_WORK && e->index >= 0 &&
           e->index < tr->work_items;
}

typedef struct work_ref {
    int64_t index;
    uint64_t event;
} work_ref;

static int by_index_event(const void *pa, const void *pb)
{
    const work_ref *a = pa, *b = pb;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return (a->event > b->event) - (a->event < b->event);
}

/* The work items of the trace, sorted by index (ties in event order). Memory follows the
 * events in the file, never the header's work_items: a filtered trace of a huge launch
 * needs no bitmap of the whole launch. *dup gets one bit per event: a work event whose
 * index an earlier event already had. */
static int sort_work(const ks_trace *tr, work_ref **out, uint64_t *n, unsigned char **dup)
{
    uint64_t count = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) count += countable_work(tr, &tr->events[i]);
    work_ref *w = malloc((size_t)(count ? count : 1) * sizeof *w);
    unsigned char *d = calloc((size_t)(tr->nevents / 8 + 1), 1);
    if (!w || !d) {
        free(w);
        free(d);
        return KS_ENOMEM;
    }
    int sorted = 1;
    uint64_t k = 0;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        if (!countable_work(tr, &tr->events[i])) continue;
        w[k].index = tr->events[i].index;
        w[k].event = i;
        if (k && w[k].index <= w[k - 1].index) sorted = 0;
        k++;
    }
    if (!sorted) qsort(w, count, sizeof *w, by_index_event);
    for (k = 1; k < count; ++k)
        if (w[k].index == w[k - 1].index) d[w[k].event / 8] |= (unsigned char)(1u << (w[k].event % 8));
    *out = w;
    *n = count;
    *dup = d;
    return KS_OK;
}

/* The position in the sorted `work` of the first work item numbered `index`, or nwork. */
static uint64_t find_work(const work_ref *work, uint64_t nwork, int64_t index)
{
    uint64_t lo = 0, hi = nwork;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (work[mid].index < index) lo = mid + 1;
        else hi = mid;
    }
    return lo < nwork && work[lo].index == index ? lo : nwork;
}

/* Whether event e, a store of +-Inf, is an empty window's identity (see check_access):
 * its work item read only padding. *reads (built on first need) holds what each work
 * item of `work` read: 1 only padding, 2 some element (a read or a sample), 0 nothing. */
static int empty_window(const ks_trace *tr, const work_ref *work, uint64_t nwork, unsigned char **reads,
                        const ks_event *e)
{
    if (!*reads) {
        if (!(*reads = calloc((size_t)nwork + 1, 1))) return 0;
        for (uint64_t i = 0; i < tr->nevents; ++i) {
            const ks_event *r = &tr->events[i];
            if ((r->kind != KS_EV_READ && r->kind != KS_EV_SAMPLE) || r->site >= tr->nsites ||
                tr->sites[r->site].kind != r->kind)
                continue;
            const uint64_t k = find_work(work, nwork, r->index);
            const unsigned char what = r->kind == KS_EV_READ && (r->flags & KS_FLAG_PADDING) ? 1 : 2;
            if (k < nwork && (*reads)[k] < what) (*reads)[k] = what;
        }
    }
    const uint64_t k = find_work(work, nwork, e->index);
    return k < nwork && (*reads)[k] == 1;
}

/* How a thread finds its work items: the params' "mapping" (docs/trace-format.md).
 * "grid-stride" (the default): index == block * threads + thread + iter * grid;
 * "per-thread:N": a thread does N items in a row, index == (block * threads + thread) * N
 * + iter with iter < N; "none": the kernel's own mapping, not checked.
 * A 2-D or 3-D launch (the params' "grid" and "block", as ks_user_launch_sim writes them)
 * maps a thread's global coordinates x = blockIdx.x * blockDim.x + threadIdx.x, y, z onto
 * the row-major work_shape [Z, Y, X] (the params' "work_shape", 1 to 3 numbers, last one
 * fastest; by default the launch's own extent: gridDim * blockDim, times N along x for
 * per-thread:N): the thread's items are those of row (z, y) at x' = x + iter * gridDim.x *
 * blockDim.x (grid-stride: one item per thread when iter is 0) or x' = x * N + iter
 * (per-thread:N), index == (z * Y + y) * X + x', each coordinate inside its extent. */
enum { MAP_GRID_STRIDE, MAP_PER_THREAD, MAP_NONE };

typedef struct mapping {
    int kind;
    int64_t per; /* per-thread:N's N (else 1) */
    int dims;    /* a 2-D or 3-D launch: the rest is set */
    uint32_t grid[3], block[3];
    int64_t shape[3]; /* the work's extents X, Y, Z (x first) */
} mapping;

/* grid and block of params p when they multiply to the header's blocks and threads; 1 when
 * they name a 2-D or 3-D launch */
static int launch_dims(const ks_trace *tr, const cJSON *p, uint32_t grid[3], uint32_t block[3])
{
    const cJSON *gr = cJSON_GetObjectItemCaseSensitive(p, "grid"), *bl = cJSON_GetObjectItemCaseSensitive(p, "block");
    if (cJSON_GetArraySize(gr) != 3 || cJSON_GetArraySize(bl) != 3) return 0;
    uint64_t gn = 1, bn = 1;
    int multi = 0;
    for (int d = 0; d < 3; ++d) {
        const cJSON *x = cJSON_GetArrayItem(gr, d), *y = cJSON_GetArrayItem(bl, d);
        if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y)) return 0;
        const double gv = x->valuedouble, bv = y->valuedouble;
        if (!(gv >= 1 && gv <= UINT32_MAX && gv == floor(gv) && bv >= 1 && bv <= 1024 && bv == floor(bv))) return 0;
        grid[d] = (uint32_t)gv, block[d] = (uint32_t)bv;
        gn *= grid[d], bn *= block[d];
        if (d && (grid[d] > 1 || block[d] > 1)) multi = 1;
    }
    return multi && gn == (uint64_t)tr->blocks && bn == (uint64_t)tr->threads;
}

/* bad: what is wrong with the mapping, bad_shape: with the work_shape ("" when nothing);
 * n bytes each */
static void read_mapping(const ks_trace *tr, mapping *m, char *bad, char *bad_shape, size_t n)
{
    memset(m, 0, sizeof *m);
    m->kind = MAP_GRID_STRIDE, m->per = 1;
    bad[0] = bad_shape[0] = '\0';
    cJSON *root = cJSON_Parse(tr->params);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "mapping");
    if (j) {
        long long v = 0;
        char tail;
        if (!cJSON_IsString(j)) snprintf(bad, n, "is not a string");
        else if (!strcmp(j->valuestring, "grid-stride")) m->kind = MAP_GRID_STRIDE;
        else if (!strcmp(j->valuestring, "none")) m->kind = MAP_NONE;
        else if (sscanf(j->valuestring, "per-thread:%lld%c", &v, &tail) == 1 && v >= 1 && v <= (1LL << 32))
            m->kind = MAP_PER_THREAD, m->per = v;
        else snprintf(bad, n, "'%.40s' is not grid-stride, per-thread:N or none", j->valuestring);
    }
    m->dims = launch_dims(tr, root, m->grid, m->block);
    if (m->dims) {
        for (int d = 0; d < 3; ++d) m->shape[d] = (int64_t)m->grid[d] * m->block[d];
        m->shape[0] *= m->per;
        const cJSON *ws = cJSON_GetObjectItemCaseSensitive(root, "work_shape");
        const int nd = cJSON_GetArraySize(ws);
        if (ws) {
            int64_t sh[3] = {1, 1, 1}, total = 1;
            int ok = cJSON_IsArray(ws) && nd >= 1 && nd <= 3;
            for (int d = 0; ok && d < nd; ++d) { /* C order: the last is x */
                const cJSON *x = cJSON_GetArrayItem(ws, nd - 1 - d);
                ok = cJSON_IsNumber(x) && x->valuedouble >= 1 && x->valuedouble <= 9007199254740992.0 &&
                     x->valuedouble == floor(x->valuedouble) &&
                     !__builtin_mul_overflow(total, (int64_t)x->valuedouble, &total);
                if (ok) sh[d] = (int64_t)x->valuedouble;
            }
            if (ok && total == tr->work_items) memcpy(m->shape, sh, sizeof sh);
            else
                snprintf(bad_shape, n, "is not 1 to 3 extents whose product is the %lld work items",
                         (long long)tr->work_items);
        }
    }
    cJSON_Delete(root);
}

/* The mapping's rule for event e, when it breaks it (a 2-D or 3-D launch) */
static void check_mapping_dims(const mapping *m, uint64_t i, const ks_event *e, ks_check_report *rep)
{
    const uint32_t *G = m->grid, *B = m->block;
    const int64_t bx = e->block % G[0], by = e->block / G[0] % G[1], bz = e->block / G[0] / G[1];
    const int64_t tx = e->thread % B[0], ty = e->thread / B[0] % B[1], tz = e->thread / B[0] / B[1];
    const int64_t x = bx * B[0] + tx, y = by * B[1] + ty, z = bz * B[2] + tz;
    char name[48] = "grid-stride loop";
    if (m->kind == MAP_PER_THREAD) snprintf(name, sizeof name, "per-thread:%lld mapping", (long long)m->per);
    int64_t xi; /* the item's place in its row */
    const int ok = m->kind == MAP_GRID_STRIDE ? mul_add(e->iter, (int64_t)G[0] * B[0], x, &xi)
                                              : e->iter < m->per && mul_add(x, m->per, e->iter, &xi);
    if (!ok || xi >= m->shape[0] || y >= m->shape[1] || z >= m->shape[2]) {
        violation(rep, i, e,
                  "%s over the work shape (z %lld, y %lld, x %lld): thread (x %lld, y %lld, z %lld) iter %u "
                  "has no item there",
                  name, (long long)m->shape[2], (long long)m->shape[1], (long long)m->shape[0], (long long)x,
                  (long long)y, (long long)z, e->iter);
        return;
    }
    const int64_t want = (z * m->shape[1] + y) * m->shape[0] + xi; /* < work_items: no overflow */
    if (want != e->index)
        violation(rep, i, e,
                  "%s over the work shape (z %lld, y %lld, x %lld): thread (x %lld, y %lld, z %lld) iter %u "
                  "does item (%lld, %lld, %lld) = index %lld",
                  name, (long long)m->shape[2], (long long)m->shape[1], (long long)m->shape[0], (long long)x,
                  (long long)y, (long long)z, e->iter, (long long)z, (long long)y, (long long)xi, (long long)want);
}

int ks_trace_check(const ks_trace *tr, ks_check_report *rep)
{
    if (!strcmp(tr->variant, "cuda-c")) return ks_check_cu(tr, rep); /* check_cu.c */
    memset(rep, 0, sizeof *rep);
    const ks_filter all = ks_filter_all();
    rep->complete = tr->dropped == 0 && !memcmp(&tr->filter, &all, sizeof all);
    const int64_t grid = tr->blocks * tr->threads; /* the reader bounds both: no overflow */
    work_ref *work = NULL;
    uint64_t nwork = 0;
    unsigned char *dup = NULL, *reads = NULL;
    uint32_t *writes[KS_MAX_TENSORS] = {0};
    uint32_t *atomics[KS_MAX_TENSORS] = {0};
    ks_formula_params params; /* about 2 KB */
    const ks_op *op = ks_op_find(tr->op);
    ks_formula_params_from(tr->params, op ? op->aliases : NULL, &params);
    mapping mp;
    char bad_map[128], bad_shape[128];
    read_mapping(tr, &mp, bad_map, bad_shape, sizeof bad_map);
    const int map = mp.kind;
    const int64_t per = mp.per;
    if (bad_map[0]) violation(rep, 0, NULL, "the params' mapping %s: checked as grid-stride", bad_map);
    if (bad_shape[0]) violation(rep, 0, NULL, "the params' work_shape %s: checked over the launch's extent", bad_shape);
    int rc = sort_work(tr, &work, &nwork, &dup);
    /* shared memory and barriers first: their findings lead the kept lines */
    if (!rc) rc = ks_check_shared(tr, rep, violation, 0);
    for (int s = 0; s < tr->nsites && !rc; ++s) {
        int t = tr->sites[s].tensor;
        if (tr->sites[s].kind != KS_EV_WRITE || t < 0 || writes[t]) continue;
        /* the reader checked the tensor's bytes lie in the file: these follow its size */
        size_t n = (size_t)ks_tensor_numel(&tr->tensors[t]) + 1;
        writes[t] = calloc(n, sizeof(uint32_t));
        atomics[t] = calloc(n, sizeof(uint32_t));
        if (!writes[t] || !atomics[t]) rc = KS_ENOMEM;
    }
    if (rc) goto out;
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        const ks_event *e = &tr->events[i];
        if (e->kind >= 1 && e->kind < KS_EV_KINDS) rep->by_kind[e->kind]++;
        if (e->site >= tr->nsites) {
            violation(rep, i, e, "site %u is not in the schema (%d sites)", e->site, tr->nsites);
            continue;
        }
        const ks_site *s = &tr->sites[e->site];
        if (e->kind != s->kind) {
            violation(rep, i, e, "kind %s at site %s, which records %s", ks_event_kind_name(e->kind), s->name,
                      ks_event_kind_name(s->kind));
            continue;
        }
        if (e->block >= tr->blocks || e->thread >= (uint32_t)tr->threads)
            violation(rep, i, e, "thread outside the launch (%lld blocks x %d threads)", (long long)tr->blocks,
                      tr->threads);
        if (e->index < 0 || e->index >= tr->work_items) {
            violation(rep, i, e, "index outside 0..%lld", (long long)tr->work_items - 1);
            continue;
        }
        int64_t at;
        const int64_t gthread = (int64_t)e->block * tr->threads + e->thread;
        if (mp.dims && map != MAP_NONE) check_mapping_dims(&mp, i, e, rep);
        else if (map == MAP_GRID_STRIDE && (!mul_add(e->iter, grid, gthread, &at) || at != e->index))
            violation(rep, i, e, "grid-stride loop: block %u * %d + thread %u + iter %u * %lld != index", e->block,
                      tr->threads, e->thread, e->iter, (long long)grid);
        else if (map == MAP_PER_THREAD && (e->iter >= per || !mul_add(gthread, per, e->iter, &at) || at != e->index))
            violation(rep, i, e, "per-thread:%lld mapping: (block %u * %d + thread %u) * %lld + iter %u != index",
                      (long long)per, e->block, tr->threads, e->thread, (long long)per, e->iter);
        if (s->kind == KS_EV_WORK) {
            if (dup[i / 8] & (1u << (i % 8))) violation(rep, i, e, "work item recorded twice");
            check_work(s, &params, i, e, rep);
            continue;
        }
        if (e->tensor != s->tensor) {
            violation(rep, i, e, "tensor %u but site %s touches tensor %d", e->tensor, s->name, s->tensor);
            continue;
        }
        if (s->kind == KS_EV_SAMPLE) {
            check_sample(i, e, rep);
            continue;
        }
        if (s->kind == KS_EV_REGION) {
            check_region(tr, s, i, e, rep);
            continue;
        }
        if (s->kind == KS_EV_BARRIER) continue; /* ks_check_shared */
        const int empty_ok = s->kind == KS_EV_WRITE && !(e->flags & (KS_FLAG_SHARED | KS_FLAG_INT)) &&
                             isinf(e->u.access.value) && empty_window(tr, work, nwork, &reads, e);
        if (!check_access(tr, s, i, e, rep, empty_ok) || s->kind != KS_EV_WRITE) continue;
        const int64_t off = e->u.access.offset;
        writes[s->tensor][off]++;
        if (e->flags & KS_FLAG_ATOMIC) {
            if (++atomics[s->tensor][off] == 2) rep->atomic_collisions++;
        } else if (s->writes_per_element == 1 && tr->roles[s->tensor] == KS_ROLE_OUTPUT &&
                   !value_matches(tensor_value(&tr->tensors[s->tensor], off), e)) {
            char vt[32], st[32];
            violation(rep, i, e, "stored %s but %s[%lld] holds %s", value_text(vt, sizeof vt, e),
                      tr->tensors[s->tensor].name, (long long)off,
                      stored_text(st, sizeof st, tensor_value(&tr->tensors[s->tensor], off)));
        }
    }
    if (rep->complete) {
        int64_t next = 0; /* the first index not yet seen, walking the sorted items */
        for (uint64_t k = 0; k < nwork && work[k].index <= next; ++k)
            if (work[k].index == next) next++;
        if (next < tr->work_items) violation(rep, 0, NULL, "work item %lld never recorded", (long long)next);
        for (int s = 0; s < tr->nsites; ++s) {
            const ks_site *site = &tr->sites[s];
            if (site->kind != KS_EV_WRITE || site->writes_per_element <= 0) continue;
            const int64_t n = ks_tensor_numel(&tr->tensors[site->tensor]);
            for (int64_t k = 0; k < n; ++k)
                if (writes[site->tensor][k] != (uint32_t)site->writes_per_element) {
                    violation(rep, 0, NULL, "%s[%lld] written %u times, expected %d", tr->tensors[site->tensor].name,
                              (long long)k, writes[site->tensor][k], site->writes_per_element);
                    break;
                }
        }
    }
out:
    free(work);
    free(dup);
    free(reads);
    for (int t = 0; t < KS_MAX_TENSORS; ++t) {
        free(writes[t]);
        free(atomics[t]);
    }
    return rc ? ks_fail(rc, "out of memory for the checks") : KS_OK;
}
