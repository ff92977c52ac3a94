/* The viewer's model without SDL: work items, replay orders, stepping, jumps, aggregates,
 * reverse lookup, layout and hit-testing, key scripts and the decomposition text, each
 * checked against an independent computation (sorting, geometry loops, brute force). */
#include <stdio.h>
#include <unistd.h>

#include "../trace/run_trace.h"
#include "../viewer/vw_describe.h"
#include "../viewer/vw_script.h"
#include "../viewer/vw_anchor.h"
#include "../trace/check.h"
#include "../viewer/vw_boxes.h"
#include "test_util.h"

/* A traced im2col or col2im run on a random geometry and launch (threads loop). */
typedef struct fixture {
    ks_run r;
    ks_trace tr;
    vw_index idx;
    ks_im2col_params p;
    ks_im2col_geom g;
} fixture;

static fixture fx;

/* im2col on (1, 6, 20, 20), 3x3, padding 1: 45600 events, 12 chunks of format 2. */
static ks_im2col_params vf_big(void)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 6,
                          .height = 20,
                          .width = 20,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    return p;
}

static void setup_run(const char *op, uint64_t *seed)
{
    fx.p = tu_geometry(seed);
    ck_assert_int_eq(ks_im2col_geometry(&fx.p, &fx.g), KS_OK);
    int threads = (int)tu_int(seed, 1, 70);
    int64_t cap = tu_int(seed, 0, 2) ? tu_int(seed, 1, 3) : -1;
    tu_run_traced(&fx.r, op, &fx.p, ks_filter_all(), 0, threads, cap);
    ks_trace_from_run(ks_op_find(op), &fx.r, &fx.tr);
    ck_assert_int_eq(vw_index_build(&fx.idx, &fx.tr, NULL), KS_OK);
}

static void teardown_run(void)
{
    vw_index_free(&fx.idx);
    tu_run_done(&fx.r);
}

START_TEST(every_event_lands_in_its_work_item_in_seq_order)
{
    uint64_t s = 101 + (uint64_t)_i;
    setup_run(_i % 2 ? "col2im" : "im2col", &s);
    uint64_t total = 0;
    ck_assert_uint_gt(fx.idx.nitems, 0);
    for (uint32_t it = 0; it < fx.idx.nitems; ++it) {
        const vw_item *item = &fx.idx.items[it];
        total += item->count;
        for (uint32_t k = 0; k < item->count; ++k) {
            const ks_event *e = &fx.tr.events[vw_item_ev(&fx.idx, item, k)];
            ck_assert_int_eq(e->index, item->index);
            ck_assert_uint_eq(e->thread, item->thread);
            ck_assert_uint_eq(e->iter, item->iter);
            ck_assert_uint_eq(e->seq, k);
            ck_assert_int_eq(e->kind == KS_EV_WORK, k == 0);
        }
        if (it) ck_assert_int_lt(fx.idx.items[it - 1].index, item->index);
    }
    ck_assert_uint_eq(total, fx.tr.nevents);
    ck_assert_uint_eq(fx.idx.orphans, 0);
    ck_assert_uint_eq(fx.idx.nitems, (uint64_t)fx.tr.work_items);
    teardown_run();
}
END_TEST

/* The reference orders: every event sorted by an explicit key. */
static int cmp_thread_major(const void *a, const void *b)
{
    const ks_event *x = &fx.tr.events[*(const uint32_t *)a], *y = &fx.tr.events[*(const uint32_t *)b];
    int64_t gx = (int64_t)x->block * fx.tr.threads + x->thread, gy = (int64_t)y->block * fx.tr.threads + y->thread;
    if (gx != gy) return gx < gy ? -1 : 1;
    if (x->iter != y->iter) return x->iter < y->iter ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_iter_major(const void *a, const void *b)
{
    const ks_event *x = &fx.tr.events[*(const uint32_t *)a], *y = &fx.tr.events[*(const uint32_t *)b];
    if (x->iter != y->iter) return x->iter < y->iter ? -1 : 1;
    return cmp_thread_major(a, b);
}

START_TEST(orders_match_sorting_the_events)
{
    uint64_t s = 211 + (uint64_t)_i;
    setup_run(_i % 2 ? "col2im" : "im2col", &s);
    uint64_t n = fx.tr.nevents;
    uint32_t *ref = malloc(n * sizeof *ref);
    for (int o = VW_ORDER_THREAD; o <= VW_ORDER_ITER; ++o) {
        for (uint64_t i = 0; i < n; ++i) ref[i] = (uint32_t)i;
        qsort(ref, n, sizeof *ref, o == VW_ORDER_THREAD ? cmp_thread_major : cmp_iter_major);
        ck_assert_uint_eq(vw_order_len(&fx.idx, o), n);
        for (uint64_t i = 0; i < n; ++i) {
            ck_assert_uint_eq(vw_order_event(&fx.idx, o, i), ref[i]);
            ck_assert_uint_eq(vw_order_pos(&fx.idx, o, ref[i]), i);
        }
    }
    for (uint64_t i = 0; i < n; ++i) ck_assert_uint_eq(vw_order_event(&fx.idx, VW_ORDER_RECORDED, i), i);
    free(ref);
    teardown_run();
}
END_TEST

/* The unit an event belongs to, computed from the event alone (the first field: from the
 * field its item's work event recorded). */
static int64_t unit_of(const ks_event *e, vw_unit u)
{
    int64_t g = (int64_t)e->block * fx.tr.threads + e->thread;
    const vw_item *it = &fx.idx.items[vw_item_of(&fx.idx, e - fx.tr.events)];
    switch (u) {
    case VW_UNIT_FIELD: return fx.tr.events[vw_item_ev(&fx.idx, it, 0)].u.field[0];
    case VW_UNIT_ITEM: return e->index;
    case VW_UNIT_THREAD: return g;
    case VW_UNIT_WARP: return (int64_t)e->block * 1000000 + e->thread / 32;
    case VW_UNIT_BLOCK: return e->block;
    default: return -1;
    }
}

START_TEST(stepping_visits_the_start_of_every_unit_run_both_ways)
{
    uint64_t s = 307 + (uint64_t)_i;
    setup_run(_i % 2 ? "col2im" : "im2col", &s);
    uint64_t n = fx.tr.nevents, *fwd = malloc((n + 1) * sizeof *fwd);
    for (int o = 0; o < VW_NORDERS; ++o)
        for (int u = 0; u < VW_NUNITS; ++u) {
            /* the expected stops: positions where the unit differs from the one before */
            uint64_t nstops = 0;
            for (uint64_t p = 0; p < n; ++p) {
                const ks_event *e = &fx.tr.events[vw_order_event(&fx.idx, o, p)];
                const ks_event *prev = p ? &fx.tr.events[vw_order_event(&fx.idx, o, p - 1)] : NULL;
                if (!p || u == VW_UNIT_EVENT || unit_of(e, u) != unit_of(prev, u)) fwd[nstops++] = p;
            }
            uint64_t pos = 0;
            for (uint64_t k = 1; k < nstops; ++k) {
                pos = vw_step(&fx.idx, o, pos, u, 1);
                ck_assert_uint_eq(pos, fwd[k]);
            }
            ck_assert_uint_eq(vw_step(&fx.idx, o, pos, u, 1), pos); /* the end stays */
            for (uint64_t k = nstops - 1; k > 0; --k) {
                pos = vw_step(&fx.idx, o, pos, u, -1);
                ck_assert_uint_eq(pos, fwd[k - 1]);
            }
            ck_assert_uint_eq(vw_step(&fx.idx, o, 0, u, -1), 0);
        }
    free(fwd);
    teardown_run();
}
END_TEST

START_TEST(jumps_find_the_first_event_of_a_thread_and_of_a_work_item)
{
    uint64_t s = 401;
    setup_run("im2col", &s);
    uint64_t pos;
    for (int o = 0; o < VW_NORDERS; ++o)
        for (int64_t index = 0; index < fx.tr.work_items; index += 7) {
            ck_assert_int_eq(vw_jump_index(&fx.idx, o, index, &pos), KS_OK);
            const ks_event *e = &fx.tr.events[vw_order_event(&fx.idx, o, pos)];
            ck_assert_int_eq(e->index, index);
            ck_assert_int_eq(e->kind, KS_EV_WORK);
            /* thread of that item: its first event is no later than this one */
            int64_t g = (int64_t)e->block * fx.tr.threads + e->thread;
            uint64_t tpos;
            ck_assert_int_eq(vw_jump_thread(&fx.idx, o, g, &tpos), KS_OK);
            ck_assert_uint_le(tpos, pos);
            for (uint64_t p = 0; p < tpos; ++p) {
                const ks_event *f = &fx.tr.events[vw_order_event(&fx.idx, o, p)];
                ck_assert_int_ne((int64_t)f->block * fx.tr.threads + f->thread, g);
            }
        }
    ck_assert_int_eq(vw_jump_index(&fx.idx, 0, fx.tr.work_items, &pos), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "is not in this trace"));
    ck_assert_int_eq(vw_jump_thread(&fx.idx, 0, fx.tr.blocks * fx.tr.threads + 5, &pos), KS_EINVAL);
    teardown_run();
}
END_TEST

/* How many (h_col, w_col, i, j) read input row y, column x: straight from the geometry. */
static uint32_t geometry_reads(int64_t y, int64_t x)
{
    const ks_im2col_params *p = &fx.p;
    uint32_t n = 0;
    for (int64_t hc = 0; hc < fx.g.height_col; ++hc)
        for (int64_t i = 0; i < p->kernel_h; ++i)
            if (hc * p->stride_h - p->pad_h + i * p->dilation_h == y)
                for (int64_t wc = 0; wc < fx.g.width_col; ++wc)
                    for (int64_t j = 0; j < p->kernel_w; ++j) n += wc * p->stride_w - p->pad_w + j * p->dilation_w == x;
    return n;
}

/* How far outside the image the farthest padding read lands (capped at 4). */
static int geometry_margin(void)
{
    const ks_im2col_params *p = &fx.p;
    int64_t out = 0;
    for (int64_t hc = 0; hc < fx.g.height_col; ++hc)
        for (int64_t i = 0; i < p->kernel_h; ++i) {
            int64_t y = hc * p->stride_h - p->pad_h + i * p->dilation_h;
            int64_t d = y < 0 ? -y : y >= p->height ? y - p->height + 1 : 0;
            if (d > out) out = d;
        }
    for (int64_t wc = 0; wc < fx.g.width_col; ++wc)
        for (int64_t j = 0; j < p->kernel_w; ++j) {
            int64_t x = wc * p->stride_w - p->pad_w + j * p->dilation_w;
            int64_t d = x < 0 ? -x : x >= p->width ? x - p->width + 1 : 0;
            if (d > out) out = d;
        }
    return (int)(out > 4 ? 4 : out);
}

START_TEST(aggregates_and_lookups_match_the_geometry)
{
    uint64_t s = 503 + (uint64_t)_i;
    setup_run("im2col", &s);
    const vw_aggregate *in = &fx.idx.agg[0], *col = &fx.idx.agg[1];
    ck_assert(in->on);
    int64_t planes = fx.p.batch * fx.p.channels;
    for (int64_t pl = 0; pl < planes; ++pl)
        for (int64_t y = 0; y < fx.p.height; ++y)
            for (int64_t x = 0; x < fx.p.width; ++x) {
                int64_t off = (pl * fx.p.height + y) * fx.p.width + x;
                uint32_t want = geometry_reads(y, x);
                ck_assert_uint_eq(vw_count_at(&in->reads, off), want);
                ck_assert_float_eq(vw_agg_weight(in, off), (float)want);
                ck_assert_uint_eq(vw_count_at(&in->writes, off), 0);
            }
    for (int64_t i = 0; i < fx.g.columns_numel; ++i) ck_assert_uint_eq(vw_count_at(&col->writes, i), 1);
    ck_assert_int_eq(fx.idx.margin[0], geometry_margin());
    /* reverse lookup of a random input cell: one hit per geometric read, all reading it */
    vw_lookup lk = {0};
    int64_t pl = tu_int(&s, 0, planes - 1), y = tu_int(&s, 0, fx.p.height - 1), x = tu_int(&s, 0, fx.p.width - 1);
    ck_assert_int_eq(vw_lookup_run(&lk, &fx.tr, 0, pl, y, x, 0), KS_OK);
    ck_assert_uint_eq(lk.total, geometry_reads(y, x));
    for (uint64_t k = 0; k < lk.n; ++k) {
        const ks_event *e = &fx.tr.events[lk.hits[k].event];
        ck_assert_int_eq(e->kind, KS_EV_READ);
        ck_assert_int_eq(e->u.access.offset, (pl * fx.p.height + y) * fx.p.width + x);
        ck_assert_float_eq(lk.hits[k].weight, 1.0f);
    }
    /* and the one writer of a columns entry is the work item that owns its column */
    int64_t row = tu_int(&s, 0, fx.g.rows - 1), c = tu_int(&s, 0, fx.g.height_col * fx.g.width_col - 1);
    ck_assert_int_eq(vw_lookup_run(&lk, &fx.tr, 1, 0, row, c, 1), KS_OK);
    ck_assert_uint_eq(lk.total, 1);
    const ks_event *w = &fx.tr.events[lk.hits[0].event];
    int64_t ch = row / (fx.p.kernel_h * fx.p.kernel_w);
    ck_assert_int_eq(w->index, ch * fx.g.height_col * fx.g.width_col + c);
    vw_lookup_free(&lk);
    teardown_run();
}
END_TEST

/* Samples inside, half outside, and clamped at the last row (RoIAlign's rule). */
static tu_sample_trace sample;
static const ks_event *sample_events;

static void sample_trace(ks_trace *tr)
{
    static const float w1[4] = {0.375f, 0.375f, 0.125f, 0.125f}, w3[4] = {0.125f, 0.375f, 0.125f, 0.375f};
    tu_sample_trace_init(&sample, 3, 4, 5);
    tu_sample_add(&sample, 1, 1.25f, 2.5f, TU_CORNERS_ALL, w1);
    tu_sample_add(&sample, 1, -0.5f, 4.25f, KS_FLAG_C10, w1);
    tu_sample_add(&sample, 1, 3.0f, 0.75f, TU_CORNERS_ALL | KS_FLAG_CLAMP_Y, w3);
    sample_events = sample.ev;
    *tr = sample.tr;
}

START_TEST(sample_corners_weights_and_lookup_follow_the_events)
{
    ks_trace tr;
    vw_index idx;
    sample_trace(&tr);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    int64_t ys[2], xs[2];
    vw_sample_corners(&sample_events[1], ys, xs);
    ck_assert(ys[0] == 1 && ys[1] == 2 && xs[0] == 2 && xs[1] == 3);
    vw_sample_corners(&sample_events[3], ys, xs);
    ck_assert(ys[0] == 3 && ys[1] == 3 && xs[0] == 0 && xs[1] == 1);
    const vw_aggregate *a = &idx.agg[0];
    /* plane 1 starts at 20; row 1 col 2 -> 27 */
    ck_assert_uint_eq(vw_count_at(&a->reads, 27), 1);
    ck_assert_float_eq_tol(vw_agg_weight(a, 27), 0.375f, 1e-7);
    /* event 2: only (y1, x0) = (0, 4) is valid */
    ck_assert_float_eq_tol(vw_agg_weight(a, 32), 0.125f, 1e-7);
    /* event 2: only (y1, x0) = (0, 4) is valid */
    ck_assert_uint_eq(vw_count_at(&a->reads, 24), 1);
    ck_assert_float_eq_tol(vw_agg_weight(a, 24), 0.125f, 1e-7);
    ck_assert_uint_eq(vw_count_at(&a->reads, 23), 0);
    /* event 3: clamped rows coincide, so (3, 0) and (3, 1) get two corners each */
    ck_assert_uint_eq(vw_count_at(&a->reads, 35), 2);
    ck_assert_float_eq_tol(vw_agg_weight(a, 35), 0.25f, 1e-7);
    ck_assert_float_eq_tol(vw_agg_weight(a, 36), 0.75f, 1e-7);
    vw_lookup lk = {0};
    ck_assert_int_eq(vw_lookup_run(&lk, &tr, 0, 1, 3, 1, 0), KS_OK);
    ck_assert_uint_eq(lk.n, 1);
    ck_assert_float_eq_tol(lk.hits[0].weight, 0.75f, 1e-7);
    ck_assert_int_eq(vw_lookup_run(&lk, &tr, 0, 0, 3, 1, 0), KS_OK); /* other plane: none */
    ck_assert_uint_eq(lk.n, 0);
    vw_lookup_free(&lk);
    vw_index_free(&idx);
}
END_TEST

/* deform_im2col with generated random offsets: every sample's anchor is its tap's regular
 * grid position h_col*sh - ph + i*dh, w_col*sw - pw + j*dw (from the geometry, not from
 * the offsets) */
START_TEST(deformable_samples_anchor_on_the_regular_kernel_grid)
{
    static ks_run r;
    static ks_trace tr;
    vw_index idx;
    const ks_op *op = ks_op_find("deform_im2col");
    ks_run_init(&r, op);
    tu_set2(&r, op, "kernel-size", 3, 2);
    tu_set2(&r, op, "padding", 1, 0);
    tu_set2(&r, op, "stride", 2, 1);
    tu_set2(&r, op, "dilation", 1, 2);
    tu_set2(&r, op, "input-size", 7, 6);
    r.pattern = KS_PAT_RANDOM;
    r.sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_msg(ks_run_execute(&r) == KS_OK, "%s", ks_error_message());
    ks_trace_from_run(op, &r, &tr);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    const int64_t Wo = 6 - 2 - 1 + 1; /* (W + 0 - (2*(2-1)+1)) / 1 + 1 = 4 */
    int samples = 0;
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        const ks_event *w = &tr.events[vw_item_ev(&idx, &idx.items[it], 0)];
        const int64_t h_col = w->u.field[2], w_col = w->u.field[3];
        for (uint32_t k = 1; k < idx.items[it].count; ++k) {
            const ks_event *e = &tr.events[vw_item_ev(&idx, &idx.items[it], k)];
            float ay, ax;
            if (e->kind != KS_EV_SAMPLE) {
                ck_assert_int_eq(vw_sample_anchor(&tr, &idx, it, e, &ay, &ax), 0);
                continue;
            }
            ck_assert_int_eq(vw_sample_anchor(&tr, &idx, it, e, &ay, &ax), 1);
            const int i = e->tap / 2, j = e->tap % 2;
            ck_assert_float_eq_tol(ay, (float)(h_col * 2 - 1 + i), 1e-5f);
            ck_assert_float_eq_tol(ax, (float)(w_col - 0 + j * 2), 1e-5f);
            samples++;
        }
        ck_assert_int_lt(w_col, Wo);
    }
    ck_assert_int_eq(samples, 2 * 4 * 4 * 6); /* C * Ho * Wo * taps */
    vw_index_free(&idx);
    tu_run_done(&r);
}
END_TEST

static void traced_run(ks_run *r, ks_trace *tr, vw_index *idx, const char *name, const char *p1, int64_t v1,
                       const char *p2, int64_t v2)
{
    const ks_op *op = ks_op_find(name);
    ks_run_init(r, op);
    tu_set2(r, op, p1, v1, v1);
    tu_set2(r, op, p2, v2, v2);
    r->pattern = KS_PAT_RANDOM;
    r->sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_msg(ks_run_execute(r) == KS_OK, "%s", ks_error_message());
    ks_trace_from_run(op, r, tr);
    ck_assert_int_eq(vw_index_build(idx, tr, NULL), KS_OK);
}

/* the overlay boxes follow the tensors: RoIAlign's RoI scaled and shifted by -0.5 with
 * its bins (and the unshifted box), patchify's D x D raw patch around floor(x, y) */
START_TEST(roi_and_patch_boxes_follow_the_tensors)
{
    static ks_run r;
    static ks_trace tr;
    vw_index idx;
    vw_box b[4];
    traced_run(&r, &tr, &idx, "roi_align", "output-size", 3, "input-size", 11);
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        const ks_event *w = &tr.events[vw_item_ev(&idx, &idx.items[it], 0)];
        const float *roi = (const float *)r.tensor[1].data + w->u.field[0] * 5;
        ck_assert_int_eq(vw_item_boxes(&tr, &idx, it, b, 4), 2); /* aligned: the box and the unshifted one */
        ck_assert_double_eq_tol(b[0].x0, roi[1] - 0.5, 1e-6);
        ck_assert_double_eq_tol(b[0].y1, roi[4] - 0.5, 1e-6);
        ck_assert_int_eq(b[0].rows, 3);
        ck_assert_int_eq(b[1].dim, 1);
        ck_assert_double_eq_tol(b[1].y0, roi[2], 1e-6);
    }
    vw_index_free(&idx);
    tu_run_done(&r);
    /* max mode: a third entry, the argmax point the item wrote */
    traced_run(&r, &tr, &idx, "roi_align", "output-size", 2, "input-size", 9);
    vw_index_free(&idx);
    tu_run_done(&r);
    {
        const ks_op *op = ks_op_find("roi_align");
        ks_run_init(&r, op);
        r.value[ks_op_param(op, "pool-mode")][0] = 1;
        r.pattern = KS_PAT_RANDOM;
        r.sink = ks_host_sink_create(0, ks_filter_all());
        ck_assert_int_eq(ks_run_execute(&r), KS_OK);
        ks_trace_from_run(op, &r, &tr);
        ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
        for (uint32_t it = 0; it < idx.nitems; ++it) {
            const int64_t i = tr.events[vw_item_ev(&idx, &idx.items[it], 0)].index;
            const float ay = ((const float *)r.tensor[3].data)[i], ax = ((const float *)r.tensor[4].data)[i];
            const int n = vw_item_boxes(&tr, &idx, it, b, 4);
            ck_assert_int_eq(n, ay == -1.0f ? 2 : 3);
            if (n == 3) {
                ck_assert_int_eq(b[2].rows, 0);
                ck_assert_double_eq(b[2].y0, ay);
                ck_assert_double_eq(b[2].x0, ax);
            }
        }
        vw_index_free(&idx);
        tu_run_done(&r);
    }
    traced_run(&r, &tr, &idx, "patchify", "radius", 2, "num-points", 3);
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        const ks_event *w = &tr.events[vw_item_ev(&idx, &idx.items[it], 0)];
        const float *xy = (const float *)r.tensor[1].data + w->u.field[1] * 2;
        ck_assert_int_eq(vw_item_boxes(&tr, &idx, it, b, 4), 1);
        ck_assert_double_eq_tol(b[0].y0, floor(xy[1]) - 2 - 0.5, 1e-9);
        ck_assert_double_eq_tol(b[0].x1, floor(xy[0]) - 2 + 6 - 0.5, 1e-9);
        ck_assert_int_eq(b[0].cols, 6);
    }
    vw_index_free(&idx);
    tu_run_done(&r);
    traced_run(&r, &tr, &idx, "im2col", "kernel-size", 3, "padding", 1); /* no boxes */
    ck_assert_int_eq(vw_item_boxes(&tr, &idx, 0, b, 4), 0);
    vw_index_free(&idx);
    tu_run_done(&r);
}
END_TEST

/* the viewer knows no operator: a region event of any kernel is a box, read from the
 * event alone (here a hand-made trace of an operator called "synthetic"), and check
 * holds regions to their tensor's planes */
START_TEST(any_kernels_region_events_are_boxes)
{
    static tu_sample_trace st;
    vw_index idx;
    vw_box b[4];
    ks_check_report rep;
    tu_sample_trace_init(&st, 2, 5, 6);
    st.tr.nsites = 3;
    ks_site_access(&st.tr.sites[2], "mine.window", KS_EV_REGION, 0, 0);
    ks_event *e = &st.ev[st.tr.nevents++];
    *e = (ks_event){.kind = KS_EV_REGION, .site = 2, .tensor = 0, .seq = 1, .flags = KS_FLAG_GUIDE};
    e->u.region = (ks_ev_region){.plane = 1, .y0 = 0.5f, .x0 = 1.5f, .y1 = 3.5f, .x1 = 4.5f, .rows = 3, .cols = 1};
    ck_assert_int_eq(vw_index_build(&idx, &st.tr, NULL), KS_OK);
    ck_assert_int_eq(vw_item_boxes(&st.tr, &idx, 0, b, 4), 1);
    ck_assert_double_eq(b[0].y1, 3.5);
    ck_assert_int_eq(b[0].rows, 3);
    ck_assert_int_eq(b[0].plane, 1);
    ck_assert_int_eq(b[0].dim, 1);
    ck_assert_str_eq(st.tr.sites[b[0].site].name, "mine.window");
    ck_assert_int_eq(ks_trace_check(&st.tr, &rep), KS_OK);
    ck_assert_uint_eq(rep.violations, 0);
    e->u.region.plane = 2; /* past the tensor's 2 planes */
    ck_assert_int_eq(ks_trace_check(&st.tr, &rep), KS_OK);
    ck_assert_uint_eq(rep.violations, 1);
    ck_assert_ptr_nonnull(strstr(rep.first[0], "plane 2 of input"));
    vw_index_free(&idx);
}
END_TEST

START_TEST(layout_panels_stay_inside_the_window_and_apart)
{
    uint64_t s = 601;
    for (int k = 0; k < 300; ++k) {
        vw_layout L;
        int w = (int)tu_int(&s, 560, 3000), h = (int)tu_int(&s, 400, 2000);
        vw_layout_compute(&L, w, h, (int)tu_int(&s, 12, 22));
        vw_rect r[] = {L.title,  L.input, L.input_legend, L.output, L.output_legend,
                       L.decomp, L.grid,  L.timeline,     L.status};
        int n = (int)(sizeof r / sizeof r[0]);
        for (int i = 0; i < n; ++i) {
            ck_assert(r[i].x >= 0 && r[i].y >= 0 && r[i].x + r[i].w <= L.w && r[i].y + r[i].h <= L.h);
            ck_assert(r[i].w > 0 && r[i].h > 0);
            for (int j = i + 1; j < n; ++j)
                ck_assert_msg(!vw_rect_overlap(r[i], r[j]), "panels %d and %d overlap at %dx%d", i, j, w, h);
        }
        ck_assert(L.w >= VW_MIN_W && L.h >= VW_MIN_H);
    }
}
END_TEST

START_TEST(heatmap_cells_tile_and_hit_testing_inverts_them)
{
    uint64_t s = 701;
    for (int k = 0; k < 200; ++k) {
        vw_rect area = {.x = (int)tu_int(&s, 0, 50),
                        .y = (int)tu_int(&s, 0, 50),
                        .w = (int)tu_int(&s, 100, 900),
                        .h = (int)tu_int(&s, 80, 700)};
        int64_t rows = tu_int(&s, 1, k % 3 ? 40 : 3000), cols = tu_int(&s, 1, k % 3 ? 40 : 3000);
        vw_heatmap m = vw_heatmap_fit(area, rows, cols, (int)tu_int(&s, 0, 3));
        vw_rect last = vw_heatmap_cell(&m, rows - 1 + m.margin, cols - 1 + m.margin);
        vw_rect first = vw_heatmap_cell(&m, -m.margin, -m.margin);
        ck_assert(first.x >= area.x && first.y >= area.y);
        ck_assert(last.x + last.w <= area.x + area.w + 1 && last.y + last.h <= area.y + area.h + 1);
        for (int t = 0; t < 50; ++t) {
            int64_t y = tu_int(&s, 0, rows - 1), x = tu_int(&s, 0, cols - 1), hy, hx;
            vw_rect c = vw_heatmap_cell(&m, y, x);
            if (m.cell >= 1) {
                vw_rect right = vw_heatmap_cell(&m, y, x + 1);
                ck_assert_int_eq(right.x, c.x + c.w);
                ck_assert(vw_heatmap_hit(&m, c.x + c.w / 2, c.y + c.h / 2, &hy, &hx));
                ck_assert(hy == y && hx == x);
                ck_assert(vw_heatmap_hit(&m, c.x, c.y, &hy, &hx) && hy == y && hx == x);
                int px, py;
                vw_heatmap_point(&m, (double)y, (double)x, &px, &py);
                ck_assert(vw_rect_contains(c, px, py));
            } else {
                /* sub-pixel cells: the hit is within one pixel's worth of cells */
                ck_assert(vw_heatmap_hit(&m, c.x, c.y, &hy, &hx));
                ck_assert(llabs(hy - y) <= 1 / m.cell + 1 && llabs(hx - x) <= 1 / m.cell + 1);
            }
        }
        ck_assert(!vw_heatmap_hit(&m, (int)floor(m.ox) - 1, (int)floor(m.oy) + 1, &(int64_t){0}, &(int64_t){0}));
    }
}
END_TEST

START_TEST(grid_and_timeline_map_back_and_forth)
{
    uint64_t s = 801;
    for (int k = 0; k < 200; ++k) {
        vw_rect area = {.x = 10, .y = 20, .w = (int)tu_int(&s, 100, 700), .h = (int)tu_int(&s, 40, 300)};
        int64_t blocks = tu_int(&s, 1, k % 2 ? 5 : 100000), threads = tu_int(&s, 1, 1024);
        vw_grid g = vw_grid_fit(area, blocks, threads);
        ck_assert(g.rows * g.bg >= blocks && g.cols * g.tg >= threads);
        int64_t b = tu_int(&s, 0, blocks - 1), t = tu_int(&s, 0, threads - 1), hb, ht;
        vw_rect c = vw_grid_cell(&g, b / g.bg, t / g.tg);
        ck_assert(vw_grid_hit(&g, c.x + c.w / 2, c.y + c.h / 2, &hb, &ht));
        ck_assert_int_eq(hb, b / g.bg * g.bg);
        ck_assert_int_eq(ht, t / g.tg * g.tg);
        uint64_t n = (uint64_t)tu_int(&s, 1, 20000000), pos = (uint64_t)tu_int(&s, 0, (int64_t)n - 1);
        int x = vw_timeline_x(area, n, pos);
        ck_assert(x >= area.x && x < area.x + area.w);
        uint64_t back = vw_timeline_pos(area, n, x);
        ck_assert(llabs((long long)back - (long long)pos) <= (long long)(n / (uint64_t)(area.w - 1)) + 1);
    }
}
END_TEST

/* A format-2 file opened as the viewer opens it (vw_trace_open: header and chunk index,
 * events decoded chunk by chunk) reads the same events and builds the same index as the
 * whole decode (ks_trace_open) - items, item_of, by_item, orders, aggregates - and a
 * state steps through the same events. Loop 0 is a bigger im2col of 11 chunks. */
static void same_index(const vw_index *a, const vw_index *b, uint64_t n)
{
    ck_assert_uint_eq(a->nitems, b->nitems);
    ck_assert_uint_eq(a->orphans, b->orphans);
    ck_assert_uint_eq(a->outside, b->outside);
    ck_assert_int_eq(a->point_taps, b->point_taps);
    for (uint32_t i = 0; i < a->nitems; ++i) { /* field by field: the struct has padding */
        const vw_item *x = &a->items[i], *y = &b->items[i];
        ck_assert(x->index == y->index && x->block == y->block && x->thread == y->thread && x->iter == y->iter);
        ck_assert(x->first == y->first && x->count == y->count);
    }
    ck_assert(!a->ev_perm == !b->ev_perm && !a->by_start == !b->by_start);
    for (uint64_t e = 0; e < n; ++e) ck_assert_uint_eq(vw_item_of(a, (uint32_t)e), vw_item_of(b, (uint32_t)e));
    for (int o = 1; o < VW_NORDERS; ++o) {
        ck_assert_uint_eq(vw_order_len(a, o), vw_order_len(b, o));
        for (uint64_t p = 0; p < vw_order_len(a, o); ++p)
            ck_assert_uint_eq(vw_order_event(a, o, p), vw_order_event(b, o, p));
    }
    for (int t = 0; t < a->tr->ntensors; ++t) {
        const vw_aggregate *x = &a->agg[t], *y = &b->agg[t];
        const int64_t m = ks_tensor_numel(&a->tr->tensors[t]);
        ck_assert_int_eq(a->margin[t], b->margin[t]);
        ck_assert(x->on == y->on && !x->sector_n == !y->sector_n && !x->weights == !y->weights);
        if (x->on) {
            for (int64_t i = 0; i < m; ++i) {
                ck_assert_uint_eq(vw_count_at(&x->reads, i), vw_count_at(&y->reads, i));
                ck_assert(vw_agg_weight(x, i) == vw_agg_weight(y, i));
                ck_assert_uint_eq(vw_count_at(&x->writes, i), vw_count_at(&y->writes, i));
                ck_assert_uint_eq(vw_count_at(&x->visits, i), vw_count_at(&y->visits, i));
            }
            ck_assert(x->max_reads == y->max_reads && x->max_writes == y->max_writes && x->max_weight == y->max_weight);
        }
        if (x->sector_n) {
            ck_assert_mem_eq(x->sector_n, y->sector_n, m * sizeof *x->sector_n);
            ck_assert_mem_eq(x->sector_sum, y->sector_sum, m * sizeof *x->sector_sum);
        }
    }
}

START_TEST(lazy_open_reads_and_indexes_as_the_whole_decode)
{
    uint64_t seed = 0x35A0 + (uint64_t)_i;
    static ks_trace full, lazy;
    static vw_index fi, li;
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_view_lazy_%d.kst", (int)getpid());
    if (_i == 0) {
        fx.p = vf_big();
        tu_run_traced(&fx.r, "im2col", &fx.p, ks_filter_all(), 0, 64, 3);
        ks_trace_from_run(ks_op_find("im2col"), &fx.r, &fx.tr);
    } else {
        fx.p = tu_geometry(&seed);
        tu_run_traced(&fx.r, _i % 2 ? "im2col" : "col2im", &fx.p, ks_filter_all(), 0, (int)tu_int(&seed, 1, 70),
                      tu_int(&seed, 0, 2) ? tu_int(&seed, 1, 3) : -1);
        ks_trace_from_run(ks_op_find(_i % 2 ? "im2col" : "col2im"), &fx.r, &fx.tr);
    }
    fx.tr.version = 2;
    ck_assert_int_eq(ks_trace_write(path, &fx.tr), KS_OK);
    tu_run_done(&fx.r);
    ck_assert_int_eq(ks_trace_open(path, &full), KS_OK);
    ck_assert_int_eq(vw_trace_open(path, &lazy), KS_OK);
    ck_assert(vw_trace_lazy(&lazy) && !vw_trace_lazy(&full));
    ck_assert_ptr_null(lazy.events);
    ck_assert_uint_eq(lazy.nevents, full.nevents);
    if (_i == 0) ck_assert_uint_gt(lazy.nevents, 10 * lazy.chunk_events);
    /* every event, forwards and from the back (each chunk decoded again after eviction) */
    for (uint64_t i = 0; i < full.nevents; ++i) ck_assert_mem_eq(vw_event(&lazy, i), &full.events[i], sizeof(ks_event));
    for (uint64_t i = full.nevents; i-- > 0;) ck_assert_mem_eq(vw_event(&lazy, i), &full.events[i], sizeof(ks_event));
    ck_assert_int_eq(vw_event(&lazy, full.nevents)->kind, 0); /* past the end: fits nothing */
    vw_progress pr = {0, 0};
    ck_assert_int_eq(vw_index_build(&fi, &full, NULL), KS_OK);
    ck_assert_int_eq(vw_index_build(&li, &lazy, &pr), KS_OK);
    ck_assert_int_eq(pr.permille, 1000);
    same_index(&li, &fi, full.nevents);
    /* built with chunks decoded on 1 and 3 threads (3: and the aggregates on their own) */
    for (int dec = 1; dec <= 3; dec += 2) {
        static vw_index ti;
        vw_index_set_decoders(dec);
        ck_assert_int_eq(vw_index_build(&ti, &lazy, NULL), KS_OK);
        vw_index_set_decoders(-1);
        same_index(&ti, &fi, full.nevents);
        vw_index_free(&ti);
    }
    /* the same walk through both: stepping by each unit in each order */
    static vw_state a, b;
    vw_state_init(&a, &full, &fi);
    vw_state_init(&b, &lazy, &li);
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 16);
    for (int k = 0; k < 400; ++k) {
        vw_action act = {.kind = VW_ACT_STEP, .a = tu_int(&seed, 0, 3) ? 1 : -1};
        if (k % 50 == 0) act = (vw_action){.kind = VW_ACT_ORDER};
        if (k % 20 == 10) act = (vw_action){.kind = VW_ACT_UNIT, .a = tu_int(&seed, 0, VW_NUNITS - 1)};
        if (k % 97 == 5) act = (vw_action){.kind = VW_ACT_SEEK, .a = tu_int(&seed, 0, (int64_t)full.nevents)};
        vw_apply(&a, &L, &act);
        vw_apply(&b, &L, &act);
        ck_assert_uint_eq(a.pos, b.pos);
        ck_assert_uint_eq(vw_state_event(&a), vw_state_event(&b));
        ck_assert(a.panel[0].tensor == b.panel[0].tensor && a.panel[1].plane == b.panel[1].plane);
    }
    vw_state_free(&a);
    vw_state_free(&b);
    vw_index_free(&fi);
    vw_index_free(&li);
    ks_trace_close(&full);
    if (_i == 0) { /* a chunk's last bytes damaged: the build fails saying where, threads or not */
        const uint64_t at = lazy.data_start + lazy.event_sec.offset + lazy.event_sec.length - 100;
        vw_trace_close(&lazy);
        FILE *f = fopen(path, "r+b");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fseek(f, (long)at, SEEK_SET), 0);
        for (int k = 0; k < 100; ++k) fputc(0xFF, f); /* no record kind is 0xFF */
        fclose(f);
        char first[512] = "";
        for (int dec = 0; dec <= 3; dec += 3) {
            static vw_index bad;
            ck_assert_int_eq(vw_trace_open(path, &lazy), KS_OK);
            vw_index_set_decoders(dec);
            ck_assert_int_ne(vw_index_build(&bad, &lazy, NULL), KS_OK);
            vw_index_set_decoders(-1);
            ck_assert_ptr_null(bad.items);
            if (!dec) snprintf(first, sizeof first, "%s", ks_error_message());
            else ck_assert_str_eq(ks_error_message(), first);
            ck_assert_ptr_nonnull(strstr(first, "chunk"));
            vw_trace_close(&lazy);
        }
    } else {
        vw_trace_close(&lazy);
    }
    remove(path);
}
END_TEST

/* The index build's progress bar: along the bottom of the status line, growing with the
 * build, gone when it is done. */
START_TEST(progress_bar_grows_with_the_build_and_goes_when_done)
{
    const vw_rect st = {.x = 10, .y = 700, .w = 1000, .h = 20};
    int last = -1;
    for (int pm = 0; pm < 1000; pm += 37) {
        const vw_rect b = vw_progress_bar(st, pm);
        ck_assert_int_eq(b.x, st.x);
        ck_assert_int_eq(b.y + b.h, st.y + st.h);
        ck_assert_int_eq(b.h, 3);
        ck_assert_int_eq(b.w, pm);
        ck_assert_int_ge(b.w, last);
        last = b.w;
    }
    ck_assert_int_eq(vw_progress_bar(st, 1000).w, 0);
    ck_assert_int_eq(vw_progress_bar(st, -5).w, 0);
    ck_assert_int_eq(vw_progress_bar((vw_rect){.x = 0, .y = 0, .w = 640, .h = 2}, 500).h, 2);
    ck_assert_int_eq(vw_progress_bar((vw_rect){.x = 0, .y = 0, .w = 640, .h = 2}, 500).w, 320);
}
END_TEST

START_TEST(key_scripts_parse_and_bad_ones_name_the_step)
{
    vw_action *a;
    size_t n;
    ck_assert_int_eq(vw_script_parse("Right,Shift+N,type:i=3,click:10:20,wait:2,Q", &a, &n), KS_OK);
    ck_assert_uint_eq(n, 9);
    ck_assert(a[0].kind == VW_ACT_STEP && a[0].a == 1);
    ck_assert(a[1].kind == VW_ACT_LOOKUP && a[1].a == -1);
    ck_assert(a[2].kind == VW_ACT_TEXT && a[2].a == 'i' && a[4].a == '3');
    ck_assert(a[5].kind == VW_ACT_CLICK && a[5].a == 10 && a[5].b == 20);
    ck_assert(a[6].kind == VW_ACT_NONE && a[7].kind == VW_ACT_NONE);
    ck_assert(a[8].kind == VW_ACT_QUIT);
    free(a);
    /* the wheel and Shift+arrows: zoom around a point, pan both panels */
    ck_assert_int_eq(vw_script_parse("wheel:300:200:+1,wheel:5:6:-1,Shift+Up,Z,R", &a, &n), KS_OK);
    ck_assert_uint_eq(n, 5);
    ck_assert(a[0].kind == VW_ACT_ZOOM && a[0].a == 1 && a[0].b == 300 && a[0].c == 200);
    ck_assert(a[1].kind == VW_ACT_ZOOM && a[1].a == -1 && a[1].b == 5 && a[1].c == 6);
    ck_assert(a[2].kind == VW_ACT_PAN && a[2].a == 0 && a[2].b == -1 && a[2].c == -1);
    ck_assert(a[3].kind == VW_ACT_ZOOM && a[3].b == -1 && a[3].c == -1);
    ck_assert(a[4].kind == VW_ACT_VIEW_RESET);
    free(a);
    const char *bad[] = {"Right,,Left", "Bogus", "click:1", "wait:x", "type", "wheel:1:2", "wheel:1:2:3", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        int rc = vw_script_parse(bad[i], &a, &n);
        if (!*bad[i]) {
            ck_assert_int_eq(rc, KS_OK); /* an empty script does nothing */
            ck_assert_uint_eq(n, 0);
            continue;
        }
        ck_assert_int_eq(rc, KS_EINVAL);
        ck_assert_ptr_null(a);
        ck_assert_ptr_nonnull(strstr(ks_error_message(), "--keys"));
    }
}
END_TEST

static int has_line(const vw_lines *L, const char *text)
{
    for (int i = 0; i < L->n; ++i)
        if (strstr(L->text[i], text)) return 1;
    return 0;
}

/* The value after the last '=' of the line "  NAME = ... = VALUE" and the line must show
 * the expression with the index substituted (a number where "index" was). */
static long long field_value(const vw_lines *L, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < L->n; ++i) {
        const char *t = L->text[i];
        while (*t == ' ') ++t;
        if (strncmp(t, name, n) || (t[n] != ' ' && t[n] != '=')) continue;
        const char *eq = strrchr(t, '=');
        ck_assert_ptr_nonnull(strstr(t, "index"));
        return strtoll(eq + 1, NULL, 10);
    }
    ck_abort_msg("no line for field %s", name);
    return -1;
}

START_TEST(decomposition_text_evaluates_every_field_of_the_focused_item)
{
    uint64_t s = 907;
    setup_run("im2col", &s);
    static vw_state st;
    static vw_lines L;
    vw_state_init(&st, &fx.tr, &fx.idx);
    int64_t hw = fx.g.height_col * fx.g.width_col;
    for (int k = 0; k < 20; ++k) {
        int64_t index = tu_int(&s, 0, fx.tr.work_items - 1);
        char spec[40], want[120];
        snprintf(spec, sizeof spec, "index=%lld", (long long)index);
        ck_assert_int_eq(vw_goto(&st, spec), KS_OK);
        vw_describe_focus(&st, &L, 40);
        /* n, c_im, h_col and w_col worked out here from the geometry */
        int64_t want_v[4] = {index / (hw * fx.p.channels), index / hw % fx.p.channels,
                             index / fx.g.width_col % fx.g.height_col, index % fx.g.width_col};
        const char *names[4] = {"n", "c_im", "h_col", "w_col"};
        for (int f = 0; f < 4; ++f) {
            long long got = field_value(&L, names[f]);
            ck_assert_msg(got == want_v[f], "%s: panel says %lld, geometry %lld", names[f], got, (long long)want_v[f]);
        }
        snprintf(want, sizeof want, "work item %lld:", (long long)index);
        ck_assert(has_line(&L, want));
        ck_assert_int_eq(L.style[0], VW_STYLE_HEAD);
        /* the focused line is the work event */
        int focus = 0;
        for (int i = 0; i < L.n; ++i) focus += L.style[i] == VW_STYLE_FOCUS && strstr(L.text[i], "work");
        ck_assert_int_eq(focus, 1);
    }
    vw_state_free(&st);
    teardown_run();
}
END_TEST

/* The value of digit `name` in the panel: its own line's, or its "name=V" in the line of
 * index digits a short panel gathers them in (issue 37: the item panel keeps every digit). */
static long long digit_value(const vw_lines *L, const char *name)
{
    char key[48];
    snprintf(key, sizeof key, " %s=", name);
    for (int i = 0; i < L->n; ++i) {
        const char *d = strstr(L->text[i], "index digits:"), *p = d ? strstr(d, key) : NULL;
        if (p) return strtoll(p + strlen(key), NULL, 10);
    }
    return field_value(L, name);
}

START_TEST(a_short_item_panel_keeps_every_digit_field)
{
    uint64_t s = 911;
    setup_run("im2col", &s);
    static vw_state st;
    static vw_lines L;
    vw_state_init(&st, &fx.tr, &fx.idx);
    const int64_t hw = fx.g.height_col * fx.g.width_col;
    const char *names[4] = {"n", "c_im", "h_col", "w_col"};
    for (int k = 0; k < 12; ++k) {
        const int64_t index = tu_int(&s, 0, fx.tr.work_items - 1);
        char spec[40];
        snprintf(spec, sizeof spec, "index=%lld", (long long)index);
        ck_assert_int_eq(vw_goto(&st, spec), KS_OK);
        const int64_t want[4] = {index / (hw * fx.p.channels), index / hw % fx.p.channels,
                                 index / fx.g.width_col % fx.g.height_col, index % fx.g.width_col};
        /* 5 .. 8 lines: the header, the index line, the event header and the focus leave 1 .. 4 */
        for (int rows = 5; rows <= 8; ++rows) {
            vw_describe_focus(&st, &L, rows);
            ck_assert_int_le(L.n, rows);
            for (int f = 0; f < 4; ++f) {
                const long long got = digit_value(&L, names[f]);
                ck_assert_msg(got == want[f], "%d rows: %s is %lld, the index gives %lld", rows, names[f], got,
                              (long long)want[f]);
            }
        }
        /* wrapped, as drawn (80 columns) */
        vw_describe_focus_wrapped(&st, 80, &L, 8);
        ck_assert_int_le(L.n, 8);
        for (int f = 0; f < 4; ++f) ck_assert_int_eq(digit_value(&L, names[f]), want[f]);
    }
    vw_state_free(&st);
    teardown_run();
}
END_TEST

START_TEST(state_keeps_the_focused_event_across_orders_and_plays_to_the_end)
{
    uint64_t s = 1009;
    setup_run("col2im", &s);
    static vw_state st;
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 16);
    vw_state_init(&st, &fx.tr, &fx.idx);
    vw_action right = {.kind = VW_ACT_STEP, .a = 1, .b = 0}, order = {.kind = VW_ACT_ORDER, .a = 0, .b = 0},
              play = {.kind = VW_ACT_PLAY, .a = 0, .b = 0};
    for (int k = 0; k < 5; ++k) vw_apply(&st, &L, &right);
    uint32_t ev = vw_state_event(&st);
    for (int o = 0; o < VW_NORDERS; ++o) {
        vw_apply(&st, &L, &order);
        ck_assert_uint_eq(vw_state_event(&st), ev);
    }
    /* the prompt: G, type, Return */
    vw_action g = {.kind = VW_ACT_PROMPT, .a = 0, .b = 0}, enter = {.kind = VW_ACT_ENTER, .a = 0, .b = 0};
    vw_apply(&st, &L, &g);
    for (const char *p = "thread=3"; *p; ++p) {
        vw_action t = {.kind = VW_ACT_TEXT, .a = *p, .b = 0};
        vw_apply(&st, &L, &t);
    }
    vw_apply(&st, &L, &enter);
    const ks_event *e = &fx.tr.events[vw_state_event(&st)];
    ck_assert_int_eq((int64_t)e->block * fx.tr.threads + e->thread, 3);
    /* playback at 1000 events/s for 1/100 s moves 10 events */
    uint64_t p0 = st.pos;
    st.speed = 1000;
    vw_apply(&st, &L, &play);
    vw_tick(&st, 0.01);
    ck_assert_uint_eq(st.pos, p0 + 10 < vw_state_len(&st) ? p0 + 10 : vw_state_len(&st) - 1);
    for (int k = 0; k < 100000 && st.playing; ++k) vw_tick(&st, 0.5);
    ck_assert_uint_eq(st.pos, vw_state_len(&st) - 1);
    ck_assert(!st.playing);
    ck_assert_int_eq(vw_goto(&st, "index=-4"), KS_EINVAL);
    ck_assert_int_eq(vw_goto(&st, "planet=2"), KS_EINVAL);
    vw_state_free(&st);
    teardown_run();
}
END_TEST

START_TEST(empty_and_tiny_traces_describe_themselves_without_crashing)
{
    ks_trace tr;
    vw_index idx;
    static vw_state st;
    static vw_lines L;
    vw_layout lay;
    vw_layout_compute(&lay, 800, 600, 16);
    sample_trace(&tr);
    for (uint64_t n = 0; n <= 2; ++n) {
        tr.nevents = n;
        tr.dropped = n == 0 ? 7 : 0;
        ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
        vw_state_init(&st, &tr, &idx);
        for (int a = VW_ACT_STEP; a <= VW_ACT_SEEK; ++a) {
            vw_action act = {.kind = (vw_action_kind)a, .a = 1, .b = 1};
            if (a != VW_ACT_QUIT && a != VW_ACT_SHOT) vw_apply(&st, &lay, &act);
        }
        vw_tick(&st, 1.0);
        vw_describe_focus(&st, &L, 20);
        ck_assert_int_gt(L.n, 0);
        if (!n) ck_assert(has_line(&L, "no events (7 dropped)"));
        char status[512];
        vw_describe_status(&st, 1000, status, sizeof status);
        if (!n) ck_assert_ptr_nonnull(strstr(status, "7 events DROPPED"));
        vw_state_free(&st);
        vw_index_free(&idx);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_core");
    TCase *tc = tcase_create("view_core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, every_event_lands_in_its_work_item_in_seq_order, 0, 20);
    tcase_add_loop_test(tc, orders_match_sorting_the_events, 0, 12);
    tcase_add_loop_test(tc, stepping_visits_the_start_of_every_unit_run_both_ways, 0, 10);
    tcase_add_test(tc, jumps_find_the_first_event_of_a_thread_and_of_a_work_item);
    tcase_add_loop_test(tc, aggregates_and_lookups_match_the_geometry, 0, 12);
    tcase_add_test(tc, sample_corners_weights_and_lookup_follow_the_events);
    tcase_add_test(tc, deformable_samples_anchor_on_the_regular_kernel_grid);
    tcase_add_test(tc, roi_and_patch_boxes_follow_the_tensors);
    tcase_add_test(tc, any_kernels_region_events_are_boxes);
    tcase_add_test(tc, layout_panels_stay_inside_the_window_and_apart);
    tcase_add_test(tc, heatmap_cells_tile_and_hit_testing_inverts_them);
    tcase_add_test(tc, grid_and_timeline_map_back_and_forth);
    tcase_add_test(tc, key_scripts_parse_and_bad_ones_name_the_step);
    tcase_add_test(tc, decomposition_text_evaluates_every_field_of_the_focused_item);
    tcase_add_test(tc, a_short_item_panel_keeps_every_digit_field);
    tcase_add_test(tc, state_keeps_the_focused_event_across_orders_and_plays_to_the_end);
    tcase_add_test(tc, empty_and_tiny_traces_describe_themselves_without_crashing);
    tcase_add_loop_test(tc, lazy_open_reads_and_indexes_as_the_whole_decode, 0, 9);
    tcase_add_test(tc, progress_bar_grows_with_the_build_and_goes_when_done);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
