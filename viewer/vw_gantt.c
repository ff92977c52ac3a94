/* vw_gantt.c - the schedule chart's model (see vw_gantt.h). The tensor's contents are not
 * trusted: rows with a negative block are skipped, an end before its start counts as the
 * start, and times far apart are mapped through doubles. */
#include "vw_gantt.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "vw_colormap.h"

#define MAX_LANES 64 /* a GPU keeps at most 32 blocks on an SM; more lanes share the last ones */

int vw_gantt_tensor(const ks_trace *tr)
{
    const int t = ks_trace_tensor(tr, "schedule");
    if (t < 0 || !tr->tensors[t].data) return -1;
    const ks_tensor *T = &tr->tensors[t];
    return T->dtype == KS_I64 && T->ndim == 2 && T->shape[0] >= 0 && T->shape[1] == 4 ? t : -1;
}

static vw_gantt_clock clock_of(const ks_trace *tr)
{
    cJSON *j = cJSON_Parse(tr->params);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "schedule_clock");
    vw_gantt_clock k = VW_CLOCK_UNKNOWN;
    if (cJSON_IsString(c) && !strcmp(c->valuestring, "globaltimer_ns")) k = VW_CLOCK_NS;
    if (cJSON_IsString(c) && !strcmp(c->valuestring, "virtual")) k = VW_CLOCK_VIRTUAL;
    cJSON_Delete(j);
    return k;
}

static int by_i64(const void *p, const void *q)
{
    const int64_t a = *(const int64_t *)p, b = *(const int64_t *)q;
    return (a > b) - (a < b);
}

static const vw_gantt_bar *sort_bars; /* qsort has no context argument */

/* bar ids by (row, start, block) */
static int by_row_start(const void *p, const void *q)
{
    const vw_gantt_bar *a = &sort_bars[*(const int64_t *)p], *b = &sort_bars[*(const int64_t *)q];
    if (a->row != b->row) return a->row < b->row ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return (a->block > b->block) - (a->block < b->block);
}

int vw_gantt_build(vw_gantt *g, const ks_trace *tr)
{
    memset(g, 0, sizeof *g);
    g->built = 1;
    const int t = vw_gantt_tensor(tr);
    if (t < 0) return KS_OK;
    const int64_t *s = tr->tensors[t].data, n = tr->tensors[t].shape[0];
    g->clock = clock_of(tr);
    int64_t nb = 0;
    for (int64_t i = 0; i < n; ++i) nb += s[4 * i] >= 0;
    g->bars = malloc((size_t)(nb ? nb : 1) * sizeof *g->bars);
    g->row_sm = malloc((size_t)(nb ? nb : 1) * sizeof *g->row_sm);
    int64_t *order = malloc((size_t)(nb ? nb : 1) * sizeof *order);
    if (!g->bars || !g->row_sm || !order) {
        free(order);
        vw_gantt_free(g);
        return ks_fail(KS_ENOMEM, "out of memory for the schedule chart");
    }
    g->t0 = INT64_MAX;
    g->t1 = INT64_MIN;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t *r = s + 4 * i;
        if (r[0] < 0) continue; /* a block that did not run */
        vw_gantt_bar *b = &g->bars[g->nbars];
        b->block = r[0];
        b->sm = r[1];
        b->start = r[2];
        b->end = r[3] > r[2] ? r[3] : r[2];
        if (b->start < g->t0) g->t0 = b->start;
        if (b->end > g->t1) g->t1 = b->end;
        if (b->block > g->max_block) g->max_block = b->block;
        g->row_sm[g->nbars++] = b->sm;
    }
    if (!g->nbars) g->t0 = g->t1 = 0;
    /* rows: the distinct SM ids, ascending */
    qsort(g->row_sm, (size_t)g->nbars, sizeof *g->row_sm, by_i64);
    for (int64_t i = 0; i < g->nbars; ++i)
        if (!g->nrows || g->row_sm[g->nrows - 1] != g->row_sm[i]) g->row_sm[g->nrows++] = g->row_sm[i];
    g->row_lanes = calloc((size_t)(g->nrows ? g->nrows : 1), sizeof *g->row_lanes);
    if (!g->row_lanes) {
        free(order);
        vw_gantt_free(g);
        return ks_fail(KS_ENOMEM, "out of memory for the schedule chart");
    }
    for (int64_t i = 0; i < g->nbars; ++i) {
        const int64_t *at = bsearch(&g->bars[i].sm, g->row_sm, (size_t)g->nrows, sizeof *g->row_sm, by_i64);
        g->bars[i].row = (int)(at - g->row_sm);
        order[i] = i;
    }
    /* lanes: each block in the first lane of its row that is free at its start */
    sort_bars = g->bars;
    qsort(order, (size_t)g->nbars, sizeof *order, by_row_start);
    int64_t lane_end[MAX_LANES];
    int lanes = 0, row = -1;
    for (int64_t k = 0; k < g->nbars; ++k) {
        vw_gantt_bar *b = &g->bars[order[k]];
        if (b->row != row) row = b->row, lanes = 0;
        int lane = -1;
        for (int l = 0; l < lanes && lane < 0; ++l)
            if (lane_end[l] <= b->start) lane = l;
        if (lane < 0 && lanes < MAX_LANES) lane = lanes++;
        if (lane < 0) { /* all lanes busy: the one that frees first */
            lane = 0;
            for (int l = 1; l < lanes; ++l)
                if (lane_end[l] < lane_end[lane]) lane = l;
        }
        lane_end[lane] = b->end;
        b->lane = lane;
        if (lanes > g->row_lanes[row]) g->row_lanes[row] = lanes;
    }
    free(order);
    g->ok = 1;
    return KS_OK;
}

void vw_gantt_free(vw_gantt *g)
{
    free(g->bars);
    free(g->row_sm);
    free(g->row_lanes);
    memset(g, 0, sizeof *g);
}

void vw_gantt_row_name(const vw_gantt *g, int row, char *buf, size_t n)
{
    if (row < 0 || row >= g->nrows) snprintf(buf, n, "?");
    else if (g->row_sm[row] < 0) snprintf(buf, n, "sim");
    else snprintf(buf, n, "SM %lld", (long long)g->row_sm[row]);
}

void vw_gantt_title(const vw_gantt *g, char *buf, size_t n)
{
    if (!g->ok) {
        snprintf(buf, n, "schedule: none in this trace");
        return;
    }
    const int sim = g->nrows == 1 && g->row_sm[0] < 0;
    snprintf(buf, n, "schedule: %lld block%s on %d SM%s%s", (long long)g->nbars, g->nbars == 1 ? "" : "s", g->nrows,
             g->nrows == 1 ? "" : "s",
             sim                       ? " (the simulator: one row)"
             : g->clock == VW_CLOCK_NS ? " (%globaltimer)"
                                       : "");
}

const char *vw_gantt_unit(const vw_gantt *g)
{
    switch (g->clock) {
    case VW_CLOCK_NS: return "time: us since the first block started";
    case VW_CLOCK_VIRTUAL: return "time: virtual ticks (blocks one after another)";
    default: return "time: clock units (schedule_clock unknown)";
    }
}

double vw_gantt_scale(const vw_gantt *g) { return g->clock == VW_CLOCK_NS ? 1e-3 : 1.0; }

vw_rect vw_gantt_plot(vw_rect panel, int line)
{
    const int label_w = 4 * line, top = line + 8, bottom = 2 * line + 10;
    vw_rect r = {.x = panel.x + 6 + label_w,
                 .y = panel.y + top,
                 .w = panel.w - 14 - label_w,
                 .h = panel.h - top - bottom};
    if (r.w < 1) r.w = 1;
    if (r.h < 1) r.h = 1;
    return r;
}

int vw_gantt_x(const vw_gantt *g, vw_rect plot, int64_t t)
{
    const double span = g->t1 > g->t0 ? (double)g->t1 - (double)g->t0 : 1;
    double f = ((double)t - (double)g->t0) / span;
    if (!(f >= 0)) f = 0;
    if (f > 1) f = 1;
    return plot.x + (int)floor(f * plot.w);
}

vw_rect vw_gantt_row_rect(const vw_gantt *g, vw_rect plot, int row)
{
    const int n = g->nrows > 0 ? g->nrows : 1;
    int y0 = plot.y + (int)((int64_t)row * plot.h / n), y1 = plot.y + (int)((int64_t)(row + 1) * plot.h / n);
    if (y1 - y0 >= 5) y1--; /* a pixel between rows when there is room */
    if (y1 <= y0) y1 = y0 + 1;
    return (vw_rect){.x = plot.x, .y = y0, .w = plot.w, .h = y1 - y0};
}

vw_rect vw_gantt_bar_rect(const vw_gantt *g, vw_rect plot, int64_t i)
{
    const vw_gantt_bar *b = &g->bars[i];
    const vw_rect rr = vw_gantt_row_rect(g, plot, b->row);
    const int lanes = g->row_lanes[b->row] > 0 ? g->row_lanes[b->row] : 1;
    int y0 = rr.y + b->lane * rr.h / lanes, y1 = rr.y + (b->lane + 1) * rr.h / lanes;
    if (y1 <= y0) y1 = y0 + 1;
    int x0 = vw_gantt_x(g, plot, b->start), x1 = vw_gantt_x(g, plot, b->end);
    if (x0 > plot.x + plot.w - 1) x0 = plot.x + plot.w - 1;
    if (x1 <= x0) x1 = x0 + 1;
    return (vw_rect){.x = x0, .y = y0, .w = x1 - x0, .h = y1 - y0};
}

int64_t vw_gantt_hit(const vw_gantt *g, vw_rect plot, int x, int y)
{
    if (!g->ok || !vw_rect_contains((vw_rect){plot.x - 3, plot.y, plot.w + 6, plot.h}, x, y)) return -1;
    for (int64_t i = g->nbars - 1; i >= 0; --i)
        if (vw_rect_contains(vw_gantt_bar_rect(g, plot, i), x, y)) return i;
    /* thin bars (many blocks): the nearest one within 3 pixels on the row */
    int64_t best = -1;
    int dist = 4;
    for (int64_t i = g->nbars - 1; i >= 0; --i) {
        const vw_rect r = vw_gantt_bar_rect(g, plot, i);
        if (y < r.y || y >= r.y + r.h) continue;
        const int d = x < r.x ? r.x - x : x - (r.x + r.w - 1);
        if (d < dist) dist = d, best = i;
    }
    return best;
}

int64_t vw_gantt_find(const vw_gantt *g, int64_t block)
{
    for (int64_t i = 0; i < g->nbars; ++i)
        if (g->bars[i].block == block) return i;
    return -1;
}

uint32_t vw_gantt_color(const vw_gantt *g, int64_t block)
{
    const double f = g->max_block > 0 ? (double)block / (double)g->max_block : 0;
    return vw_colormap(0.25 + 0.75 * (f < 0 ? 0 : f > 1 ? 1 : f));
}

double vw_gantt_tick_step(double span, int max_ticks)
{
    if (!(span > 0) || max_ticks < 1) return 1;
    const double raw = span / max_ticks, mag = pow(10, floor(log10(raw)));
    static const double m[] = {1, 2, 5, 10};
    for (int k = 0; k < 4; ++k)
        if (m[k] * mag >= raw) return m[k] * mag;
    return 10 * mag;
}
