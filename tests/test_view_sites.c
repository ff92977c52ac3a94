/* The viewer's model on traces whose work items mark sites as region points (sparse
 * convolution's rulebook and reduce kernels), without SDL: the panels follow the site maps,
 * integer -1 cells are empty, the visits heatmap counts points per cell, points lead to the
 * output site on same-sized planes, stepping by the first field walks offsets and output
 * sites, Tab skips empty tensors and the decomposition counts the item's events per site.
 * Every expectation is worked out here from the run's own tensors, not from the viewer. */
#include <stdio.h>

#include "../trace/run_trace.h"
#include "../viewer/vw_boxes.h"
#include "../viewer/vw_describe.h"
#include "../viewer/vw_plane.h"
#include "test_util.h"

static ks_run run;
static ks_trace tr;
static vw_index idx;

/* sparse_conv on the simulator, traced, with flags given as name, value pairs. */
static void sparse_trace(const char *const *flags)
{
    const ks_op *op = ks_op_find("sparse_conv");
    ck_assert_ptr_nonnull(op);
    ks_run_init(&run, op);
    for (int i = 0; flags[i]; i += 2)
        ck_assert_msg(ks_run_set(&run, flags[i], flags[i + 1]) == KS_OK, "%s", ks_error_message());
    run.sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_msg(ks_run_execute(&run) == KS_OK, "%s", ks_error_message());
    ks_trace_from_run(op, &run, &tr);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
}

static void sparse_done(void)
{
    vw_index_free(&idx);
    tu_run_done(&run);
}

static int tensor_named(const char *name)
{
    for (int t = 0; t < tr.ntensors; ++t)
        if (!strcmp(tr.tensors[t].name, name)) return t;
    ck_abort_msg("no tensor %s", name);
    return -1;
}

static const ks_event *item_event(uint32_t it, uint32_t k) { return &tr.events[vw_item_ev(&idx, &idx.items[it], k)]; }

/* The first region point of item `it` on tensor t (NULL: none). */
static const ks_event *point_on(uint32_t it, int t)
{
    for (uint32_t k = 0; k < idx.items[it].count; ++k) {
        const ks_event *e = item_event(it, k);
        if (e->kind == KS_EV_REGION && e->tensor == t) return e;
    }
    return NULL;
}

static const char *const subm[] = {"subm", "on", NULL};

START_TEST(panels_follow_the_site_maps_an_item_has_points_on)
{
    static vw_state s;
    sparse_trace(subm);
    const int in = tensor_named("in_sites"), out = tensor_named("out_sites"), keys = tensor_named("hash_keys");
    /* the first frame: before the index, the first input and output; with it, the sites */
    vw_state_init(&s, &tr, NULL);
    ck_assert_int_eq(s.panel[0].tensor, tensor_named("features"));
    vw_state_set_index(&s, &idx);
    ck_assert_int_eq(s.panel[0].tensor, in);
    ck_assert_int_eq(s.panel[1].tensor, out);
    vw_state_free(&s);
    vw_state_init(&s, &tr, &idx);
    ck_assert_int_eq(s.panel[0].tensor, in);
    uint32_t probe = VW_NONE;
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        vw_focus_event(&s, vw_item_ev(&idx, &idx.items[it], 0)); /* the work event */
        ck_assert_int_eq(s.panel[0].tensor, in);
        ck_assert_int_eq(s.panel[0].plane, point_on(it, in)->u.region.plane);
        /* the output side: the candidate site when it is in bounds, else the first write */
        int written = -1;
        for (uint32_t k = 0; k < idx.items[it].count && written < 0; ++k)
            if (item_event(it, k)->kind == KS_EV_WRITE) written = item_event(it, k)->tensor;
        ck_assert_int_eq(s.panel[1].tensor, point_on(it, out) ? out : written);
        for (uint32_t k = 0; k < idx.items[it].count && probe == VW_NONE && point_on(it, out); ++k)
            if (item_event(it, k)->kind == KS_EV_READ && item_event(it, k)->tensor == keys)
                probe = vw_item_ev(&idx, &idx.items[it], k);
    }
    /* a focused event keeps its side: a hash probe shows the table, the output site stays */
    ck_assert_uint_ne(probe, VW_NONE);
    vw_focus_event(&s, probe);
    ck_assert_int_eq(s.panel[0].tensor, keys);
    ck_assert_int_eq(s.panel[1].tensor, out);
    vw_state_free(&s);
    sparse_done();
}
END_TEST

/* 3-D reduce: the input side shows the output site's slice when a contributing site lies
 * on it (the in-slice pairs), else the first contributing site's slice */
START_TEST(three_d_reduce_shows_the_output_sites_slice_on_both_sides)
{
    static const char *const flags[] = {"subm", "on", "spatial-shape", "3,11,13", "trace-kernel", "reduce", NULL};
    static vw_state s;
    sparse_trace(flags);
    vw_state_init(&s, &tr, &idx);
    const int in = tensor_named("in_sites"), out = tensor_named("out_sites");
    int same = 0;
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        vw_focus_event(&s, vw_item_ev(&idx, &idx.items[it], 0));
        const int32_t plane = point_on(it, out)->u.region.plane;
        int on_slice = 0;
        for (uint32_t k = 0; k < idx.items[it].count; ++k)
            on_slice |= item_event(it, k)->kind == KS_EV_REGION && item_event(it, k)->tensor == in &&
                        item_event(it, k)->u.region.plane == plane;
        ck_assert_int_eq(s.panel[0].tensor, in);
        ck_assert_int_eq(s.panel[1].tensor, out);
        ck_assert_int_eq(s.panel[1].plane, plane);
        ck_assert_int_eq(s.panel[0].plane, on_slice ? plane : point_on(it, in)->u.region.plane);
        same += on_slice;
        /* a focused contributing site shows its own slice */
        for (uint32_t k = 0; k < idx.items[it].count; ++k) {
            const ks_event *e = item_event(it, k);
            if (e->kind != KS_EV_REGION || e->tensor != in) continue;
            vw_focus_event(&s, vw_item_ev(&idx, &idx.items[it], k));
            ck_assert_int_eq(s.panel[0].tensor, in);
            ck_assert_int_eq(s.panel[0].plane, e->u.region.plane);
            ck_assert_int_eq(s.panel[1].plane, plane);
        }
    }
    ck_assert_int_eq(same, (int)idx.nitems); /* submanifold: the centre offset is always a pair */
    vw_state_free(&s);
    sparse_done();
}
END_TEST

/* RoIAlign's RoI lies on the tensor it samples: the read/write rule stays in charge */
START_TEST(regions_on_tensors_an_item_reads_leave_following_as_it_was)
{
    static vw_state s;
    const ks_op *op = ks_op_find("roi_align");
    ks_run_init(&run, op);
    run.pattern = KS_PAT_RANDOM;
    run.sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_int_eq(ks_run_execute(&run), KS_OK);
    ks_trace_from_run(op, &run, &tr);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    vw_state_init(&s, &tr, &idx);
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        int sampled = -1, written = -1;
        for (uint32_t k = 0; k < idx.items[it].count; ++k) {
            const ks_event *e = item_event(it, k);
            if (e->kind == KS_EV_SAMPLE && sampled < 0) sampled = e->tensor;
            if (e->kind == KS_EV_WRITE && written < 0) written = e->tensor;
        }
        vw_focus_event(&s, vw_item_ev(&idx, &idx.items[it], 0));
        if (sampled >= 0) ck_assert_int_eq(s.panel[0].tensor, sampled);
        ck_assert_int_eq(s.panel[1].tensor, written);
    }
    vw_state_free(&s);
    sparse_done();
}
END_TEST

START_TEST(negative_integers_are_empty_cells_and_floats_never_are)
{
    int32_t i32[4] = {-1, 0, 7, -5};
    int64_t i64[2] = {-1, 1LL << 40};
    float f32[2] = {-1.0f, 2.0f};
    ks_tensor t = {.name = "m", .dtype = KS_I32, .ndim = 1, .shape = {4}, .data = i32};
    ck_assert(vw_cell_empty(&t, 0) && !vw_cell_empty(&t, 1) && !vw_cell_empty(&t, 2) && vw_cell_empty(&t, 3));
    t.dtype = KS_I64;
    t.data = i64;
    ck_assert(vw_cell_empty(&t, 0) && !vw_cell_empty(&t, 1));
    t.dtype = KS_F32;
    t.data = f32;
    ck_assert(!vw_cell_empty(&t, 0) && !vw_cell_empty(&t, 1));
}
END_TEST

/* visits: on in_sites every active site once per offset; on out_sites every in-bounds
 * candidate o = c - (ka - K/2) of every site, which at an active output site is exactly
 * the number of rulebook pairs that reach it */
START_TEST(visits_count_the_points_on_each_cell_pairs_per_output_site)
{
    sparse_trace(subm);
    const int in = tensor_named("in_sites"), out = tensor_named("out_sites");
    const ks_tensor *ix = &tr.tensors[tensor_named("indices")], *rb = &tr.tensors[tensor_named("rulebook")];
    const ks_tensor *os = &tr.tensors[out];
    const vw_plane_dims d = vw_plane_dims_of(&tr.tensors[in]);
    const int32_t *rows = ix->data, *pairs = rb->data, *omap = os->data;
    static uint32_t want_in[4096], want_out[4096], pairs_at[4096];
    ck_assert_int_le(d.h * d.w, 4096);
    memset(want_in, 0, sizeof want_in);
    memset(want_out, 0, sizeof want_out);
    memset(pairs_at, 0, sizeof pairs_at);
    for (int64_t i = 0; i < ix->shape[0]; ++i) {
        const int64_t y = rows[i * 3 + 1], x = rows[i * 3 + 2];
        want_in[y * d.w + x] += 9;
        for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
                const int64_t oy = y - (ky - 1), ox = x - (kx - 1);
                if (oy >= 0 && oy < d.h && ox >= 0 && ox < d.w) want_out[oy * d.w + ox]++;
            }
    }
    for (int64_t p = 0; p < rb->shape[0]; ++p) pairs_at[pairs[p * 3 + 2]]++;
    int active = 0;
    for (int64_t c = 0; c < d.h * d.w; ++c) {
        ck_assert_uint_eq(vw_count_at(&idx.agg[in].visits, c), want_in[c]);
        ck_assert_uint_eq(vw_count_at(&idx.agg[out].visits, c), want_out[c]);
        if (omap[c] >= 0) {
            ck_assert_uint_eq(vw_count_at(&idx.agg[out].visits, c), pairs_at[omap[c]]);
            active++;
        }
    }
    ck_assert_int_eq(active, (int)ix->shape[0]); /* submanifold: the output sites are the input sites */
    ck_assert_uint_eq(idx.agg[in].max_visits, 9);
    ck_assert_int_eq(idx.point_taps, 1);
    sparse_done();
}
END_TEST

/* a point counts in the cell it rounds to; boxes, NaN points and points off the plane do
 * not; taps make labels only when some point has one */
START_TEST(visits_round_points_to_cells_and_skip_boxes_and_bad_points)
{
    static tu_sample_trace st;
    vw_index ix;
    tu_sample_trace_init(&st, 1, 4, 6);
    st.tr.nsites = 3;
    ks_site_access(&st.tr.sites[2], "mine.spot", KS_EV_REGION, 0, 0);
    const float pts[][4] = {{1.4f, 2.6f, 0, 0}, {1.0f, 3.0f, 0, 0}, {NAN, 1, 0, 0}, {2, 7, 0, 0}, {0, 0, 2, 2}};
    for (int k = 0; k < 5; ++k) {
        ks_event *e = &st.ev[st.tr.nevents++];
        *e = (ks_event){.kind = KS_EV_REGION, .site = 2, .tensor = 0, .seq = (uint32_t)k + 1};
        e->u.region = (ks_ev_region){.y0 = pts[k][0],
                                     .x0 = pts[k][1],
                                     .y1 = pts[k][0] + pts[k][2],
                                     .x1 = pts[k][1] + pts[k][3],
                                     .rows = (uint16_t)pts[k][2],
                                     .cols = (uint16_t)pts[k][3]};
    }
    ck_assert_int_eq(vw_index_build(&ix, &st.tr, NULL), KS_OK);
    uint32_t total = 0;
    for (int c = 0; c < 24; ++c) total += vw_count_at(&ix.agg[0].visits, c);
    ck_assert_uint_eq(vw_count_at(&ix.agg[0].visits, 1 * 6 + 3), 2);
    ck_assert_uint_eq(total, 2);
    ck_assert_int_eq(ix.point_taps, 0);
    vw_index_free(&ix);
    st.ev[2].tap = 3;
    ck_assert_int_eq(vw_index_build(&ix, &st.tr, NULL), KS_OK);
    ck_assert_int_eq(ix.point_taps, 1);
    vw_index_free(&ix);
}
END_TEST

/* the boxes of an item and the output site its input site leads to */
static int item_boxes(uint32_t it, vw_box *b) { return vw_item_boxes(&tr, &idx, it, b, 64); }

static int box_on(const vw_box *b, int n, int t)
{
    for (int k = 0; k < n; ++k)
        if (b[k].tensor == t) return k;
    return -1;
}

START_TEST(input_sites_lead_to_their_output_site_on_planes_of_one_size)
{
    vw_box b[64];
    double ty, tx;
    sparse_trace(subm);
    int in = tensor_named("in_sites"), out = tensor_named("out_sites"), pairs = 0;
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        const int n = item_boxes(it, b), k = box_on(b, n, in);
        const ks_event *w = item_event(it, 0);
        ck_assert_int_ge(k, 0);
        ck_assert_int_eq(b[k].tap, w->u.field[0]); /* the point's tap is the offset k */
        ck_assert_uint_eq(tr.events[b[k].event].kind, KS_EV_REGION);
        if (box_on(b, n, out) < 0) {
            ck_assert_int_eq(vw_point_target(&tr, b, n, k, out, &ty, &tx), 0);
            continue;
        }
        ck_assert_int_eq(vw_point_target(&tr, b, n, k, out, &ty, &tx), 1);
        ck_assert_double_eq(ty, w->u.field[6]); /* oy, ox: the candidate output site */
        ck_assert_double_eq(tx, w->u.field[7]);
        ck_assert_int_eq(vw_point_target(&tr, b, n, k, in, &ty, &tx), 0); /* never to its own tensor */
        pairs++;
    }
    ck_assert_int_gt(pairs, 0);
    sparse_done();
    /* reduce: every contributing input site leads to the item's output site */
    static const char *const red[] = {"subm", "on", "trace-kernel", "reduce", NULL};
    sparse_trace(red);
    in = tensor_named("in_sites");
    out = tensor_named("out_sites");
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        const int n = item_boxes(it, b), o = box_on(b, n, out);
        ck_assert_int_ge(o, 0);
        int from = 0;
        for (int k = 0; k < n; ++k) {
            if (b[k].tensor != in) continue;
            ck_assert_int_eq(vw_point_target(&tr, b, n, k, out, &ty, &tx), 1);
            ck_assert(ty == b[o].y0 && tx == b[o].x0);
            from++;
        }
        ck_assert_int_ge(from, 1);
    }
    sparse_done();
    /* a strided convolution: the output grid is another size, no arrows */
    static const char *const strided[] = {"stride", "2", "padding", "1", NULL};
    sparse_trace(strided);
    in = tensor_named("in_sites");
    out = tensor_named("out_sites");
    for (uint32_t it = 0; it < idx.nitems; ++it) {
        const int n = item_boxes(it, b), k = box_on(b, n, in);
        ck_assert_int_ge(k, 0);
        ck_assert_int_eq(vw_point_target(&tr, b, n, k, out, &ty, &tx), 0);
    }
    sparse_done();
}
END_TEST

/* stepping by the first field: the rulebook's offsets k one by one (each stop the work
 * event of item (k, 0)), back the same way; the same from the work events' recorded
 * field when the schema's first field is derived, and with no index at all */
START_TEST(stepping_by_the_first_field_walks_the_offsets_and_the_output_sites)
{
    sparse_trace(subm);
    const int64_t n = tr.tensors[tensor_named("indices")].shape[0];
    uint64_t stops[64];
    int nstops = 0;
    uint64_t pos = 0;
    stops[nstops++] = 0;
    for (;;) {
        uint64_t next = vw_step(&idx, VW_ORDER_RECORDED, pos, VW_UNIT_FIELD, 1);
        if (next == pos) break;
        ck_assert_int_lt(nstops, 64);
        const ks_event *e = &tr.events[vw_order_event(&idx, VW_ORDER_RECORDED, next)];
        ck_assert_int_eq(e->kind, KS_EV_WORK);
        ck_assert_int_eq(e->u.field[0], nstops); /* k */
        ck_assert_int_eq(e->index, nstops * n);  /* i = 0 */
        stops[nstops++] = pos = next;
    }
    ck_assert_int_eq(nstops, 9);
    for (int k = nstops - 1; k > 0; --k) {
        pos = vw_step(&idx, VW_ORDER_RECORDED, pos, VW_UNIT_FIELD, -1);
        ck_assert_uint_eq(pos, stops[k - 1]);
    }
    /* no index yet: the digit comes from each event's index */
    vw_index bare;
    memset(&bare, 0, sizeof bare);
    bare.tr = &tr;
    pos = 0;
    for (int k = 1; k < nstops; ++k)
        ck_assert_uint_eq(pos = vw_step(&bare, VW_ORDER_RECORDED, pos, VW_UNIT_FIELD, 1), stops[k]);
    /* a derived first field: read from the items' work events */
    tr.sites[0].fields[0].digit = 0;
    pos = 0;
    for (int k = 1; k < nstops; ++k)
        ck_assert_uint_eq(pos = vw_step(&idx, VW_ORDER_RECORDED, pos, VW_UNIT_FIELD, 1), stops[k]);
    sparse_done();
    /* reduce with two channels: one stop per output site o, at (o, c = 0) */
    static const char *const red[] = {"subm", "on", "trace-kernel", "reduce", "out-channels", "2", NULL};
    sparse_trace(red);
    pos = 0;
    int sites = 1;
    for (uint64_t next; (next = vw_step(&idx, VW_ORDER_ITER, pos, VW_UNIT_FIELD, 1)) != pos; pos = next, ++sites) {
        const ks_event *e = &tr.events[vw_order_event(&idx, VW_ORDER_ITER, next)];
        ck_assert_int_eq(e->u.field[0], sites);
        ck_assert_int_eq(e->u.field[1], 0);
    }
    ck_assert_int_eq(sites, (int)tr.tensors[tensor_named("out_indices")].shape[0]);
    sparse_done();
}
END_TEST

START_TEST(keys_choose_the_field_unit_the_bars_and_the_visits_mode)
{
    static vw_state s;
    vw_layout L;
    vw_action a;
    char status[512];
    sparse_trace(subm);
    vw_layout_compute(&L, 1280, 800, 16);
    vw_state_init(&s, &tr, &idx);
    ck_assert_int_eq(s.bars, 1);
    ck_assert_int_eq(vw_key_action("6", 0, &a), 0);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.unit, VW_UNIT_FIELD);
    ck_assert_int_eq(vw_key_action("B", 0, &a), 0);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.bars, 0);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.bars, 1);
    ck_assert_int_eq(vw_set_mode(&s, "visits"), KS_OK);
    ck_assert_int_eq(s.mode, VW_MODE_VISITS);
    ck_assert_int_eq(vw_set_mode(&s, "pairs"), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "visits"));
    vw_describe_status(&s, 1000, status, sizeof status);
    ck_assert_ptr_nonnull(strstr(status, "step: field k"));
    ck_assert_ptr_nonnull(strstr(status, "visits"));
    /* M cycles through all six modes (visits, sectors) back to values */
    ck_assert_int_eq(vw_key_action("M", 0, &a), 0);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.mode, VW_MODE_SECTORS);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.mode, VW_MODE_VALUES);
    vw_state_free(&s);
    sparse_done();
}
END_TEST

/* Tab and Ctrl+Tab visit every tensor with elements once per round (in_sites and
 * out_sites among them) and skip the run's unused (0)-shaped ones */
START_TEST(tab_visits_every_tensor_with_elements_and_skips_empty_ones)
{
    static vw_state s;
    vw_layout L;
    sparse_trace(subm);
    vw_layout_compute(&L, 1280, 800, 16);
    vw_state_init(&s, &tr, &idx);
    int with = 0, empty = 0;
    for (int t = 0; t < tr.ntensors; ++t) {
        if (vw_plane_dims_of(&tr.tensors[t]).planes > 0) with++;
        else empty++;
    }
    ck_assert_int_gt(empty, 0);
    for (int panel = 0; panel < 2; ++panel) {
        vw_action a;
        ck_assert_int_eq(vw_key_action(panel ? "Ctrl+Tab" : "Tab", 0, &a), 0);
        int seen[KS_MAX_TENSORS] = {0};
        for (int k = 0; k < with; ++k) {
            vw_apply(&s, &L, &a);
            const int t = s.panel[panel].tensor;
            ck_assert_int_gt(vw_plane_dims_of(&tr.tensors[t]).planes, 0);
            ck_assert_int_eq(seen[t]++, 0);
        }
        ck_assert(seen[tensor_named("in_sites")] && seen[tensor_named("out_sites")]);
        ck_assert_int_eq(s.follow, 0);
    }
    vw_state_free(&s);
    sparse_done();
}
END_TEST

/* the decomposition counts the item's events per site: a lookup's hash probes at a glance */
START_TEST(the_item_counts_its_events_per_site)
{
    static vw_state s;
    static vw_lines L;
    char line[VW_LINE_LEN], want[64];
    sparse_trace(subm);
    vw_state_init(&s, &tr, &idx);
    const int keys = tensor_named("hash_keys");
    for (uint32_t it = 0; it < idx.nitems; it += 7) {
        int probes = 0;
        for (uint32_t k = 0; k < idx.items[it].count; ++k)
            probes += item_event(it, k)->kind == KS_EV_READ && item_event(it, k)->tensor == keys;
        vw_describe_item_sites(&tr, &idx, it, line, sizeof line);
        snprintf(want, sizeof want, "%d hash_probe", probes);
        ck_assert_msg(strstr(line, want) != NULL, "%s: no '%s'", line, want);
        ck_assert_ptr_nonnull(strstr(line, "1 input_site"));
        ck_assert_ptr_null(strstr(line, "sparse_conv.")); /* the operator's prefix dropped */
        ck_assert_ptr_null(strstr(line, "rulebook"));     /* the work event left out */
        vw_focus_event(&s, vw_item_ev(&idx, &idx.items[it], 0));
        vw_describe_focus(&s, &L, 40);
        int found = 0;
        for (int i = 0; i < L.n; ++i) found |= strstr(L.text[i], line) != NULL;
        ck_assert(found);
    }
    vw_describe_item_sites(&tr, &idx, idx.nitems, line, sizeof line);
    ck_assert_str_eq(line, "");
    vw_state_free(&s);
    sparse_done();
}
END_TEST

/* The item orders when a thread's iterations do not follow the index (a crafted launch: the
 * stable sorts by thread or iteration alone are out of order, so the full sort decides):
 * thread-major by (thread, iteration), iteration-major by (iteration, thread). */
START_TEST(orders_fall_back_to_the_full_sort_when_iterations_run_against_the_index)
{
    static ks_trace t;
    static ks_event ev[6];
    static vw_index ix;
    memset(&t, 0, sizeof t);
    t.threads = 2, t.blocks = 1, t.block_cap = -1, t.work_items = 6;
    t.nsites = 1;
    t.sites[0].kind = KS_EV_WORK, t.sites[0].tensor = -1;
    const uint32_t thread[6] = {0, 1, 0, 1, 0, 1}, iter[6] = {2, 0, 1, 2, 0, 1};
    for (int i = 0; i < 6; ++i) {
        memset(&ev[i], 0, sizeof ev[i]);
        ev[i].kind = KS_EV_WORK, ev[i].index = i, ev[i].thread = thread[i], ev[i].iter = iter[i];
    }
    t.events = ev, t.nevents = 6;
    ck_assert_int_eq(vw_index_build(&ix, &t, NULL), KS_OK);
    const uint32_t by_thread[6] = {4, 2, 0, 1, 5, 3}, by_iter[6] = {4, 1, 2, 5, 0, 3};
    for (uint32_t r = 0; r < 6; ++r) {
        ck_assert_uint_eq(ix.orders[VW_ORDER_THREAD].ord[r], by_thread[r]);
        ck_assert_uint_eq(ix.orders[VW_ORDER_ITER].ord[r], by_iter[r]);
        ck_assert_uint_eq(vw_order_rank(&ix, VW_ORDER_THREAD, by_thread[r]), r);
        ck_assert_uint_eq(vw_order_rank(&ix, VW_ORDER_ITER, by_iter[r]), r);
        ck_assert_uint_eq(vw_order_event(&ix, VW_ORDER_THREAD, r), by_thread[r]); /* one event an item */
        ck_assert_uint_eq(ix.orders[VW_ORDER_ITER].cum[r + 1], r + 1);
    }
    vw_index_free(&ix);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_sites");
    TCase *tc = tcase_create("view_sites");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, panels_follow_the_site_maps_an_item_has_points_on);
    tcase_add_test(tc, three_d_reduce_shows_the_output_sites_slice_on_both_sides);
    tcase_add_test(tc, regions_on_tensors_an_item_reads_leave_following_as_it_was);
    tcase_add_test(tc, negative_integers_are_empty_cells_and_floats_never_are);
    tcase_add_test(tc, visits_count_the_points_on_each_cell_pairs_per_output_site);
    tcase_add_test(tc, visits_round_points_to_cells_and_skip_boxes_and_bad_points);
    tcase_add_test(tc, input_sites_lead_to_their_output_site_on_planes_of_one_size);
    tcase_add_test(tc, stepping_by_the_first_field_walks_the_offsets_and_the_output_sites);
    tcase_add_test(tc, keys_choose_the_field_unit_the_bars_and_the_visits_mode);
    tcase_add_test(tc, tab_visits_every_tensor_with_elements_and_skips_empty_ones);
    tcase_add_test(tc, the_item_counts_its_events_per_site);
    tcase_add_test(tc, orders_fall_back_to_the_full_sort_when_iterations_run_against_the_index);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
