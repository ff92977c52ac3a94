/* The warp strip and the sectors heatmap without SDL, on real im2col traces (4 channels,
 * 16 x 16 input, 3 x 3 kernel, padding 1, stride 1 and 2): the strip's request of a third
 * of the events and of every tap-4 event has the counts kscope memory's enumeration gives it (stride 1: 4 sectors
 * per full request, stride 2: 8 for the reads), the heatmap's sectors per request of
 * every cell is the mean over the events that touched it of their requests' sectors, the
 * W key toggles the strip, the axis and the layout. */
#include <stdio.h>
#include <string.h>

#include "../trace/memory.h"
#include "../trace/run_trace.h"
#include "../viewer/vw_describe.h"
#include "../viewer/vw_warp.h"
#include "test_util.h"

typedef struct fixture {
    ks_run r;
    ks_trace tr;
    vw_index idx;
    ks_mem_request *req; /* per event and corner: its request by ks_memory_each_request */
} fixture;

static fixture fx;

static int note(void *ctx, int site, const ks_mem_request *r, const ks_mem_access *acc, uint32_t n)
{
    (void)ctx, (void)site;
    for (uint32_t i = 0; i < n; ++i) fx.req[acc[i].event * 4 + acc[i].corner] = *r;
    return 0;
}

static void open_im2col(int stride)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 4,
                          .height = 16,
                          .width = 16,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = stride,
                          .stride_w = stride,
                          .dilation_h = 1,
                          .dilation_w = 1};
    tu_run_traced(&fx.r, "im2col", &p, ks_filter_all(), 0, 512, -1);
    ks_trace_from_run(ks_op_find("im2col"), &fx.r, &fx.tr);
    ck_assert_int_eq(vw_index_build(&fx.idx, &fx.tr, NULL), KS_OK);
    fx.req = calloc(fx.tr.nevents * 4, sizeof *fx.req);
    ck_assert_int_eq(ks_memory_each_request(&fx.tr, note, NULL), KS_OK);
}

static void close_im2col(void)
{
    free(fx.req);
    vw_index_free(&fx.idx);
    tu_run_done(&fx.r);
}

static int site_named(const char *suffix)
{
    for (int s = 0; s < fx.tr.nsites; ++s) {
        const char *n = fx.tr.sites[s].name;
        if (strlen(n) >= strlen(suffix) && !strcmp(n + strlen(n) - strlen(suffix), suffix)) return s;
    }
    ck_abort_msg("no site %s", suffix);
    return -1;
}

START_TEST(strip_numbers_equal_kscope_memorys_for_every_event)
{
    const int stride = _i ? 2 : 1;
    open_im2col(stride);
    static vw_warp w;
    const int rd = site_named("read_input"), wr = site_named("write_columns");
    int full_reads = 0, full_writes = 0;
    for (uint32_t ev = 0; ev < fx.tr.nevents; ++ev) {
        const ks_event *e = &fx.tr.events[ev];
        if (ev % 3 && e->tap != 4) continue; /* each build scans the trace: a third, and every tap 4 */
        ck_assert_int_eq(vw_warp_build(&fx.tr, ev, &w), 0);
        const int memory = (e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && e->u.access.offset >= 0;
        ck_assert_int_eq(w.ok, memory);
        if (!memory) continue;
        const ks_mem_request *r = &fx.req[ev * 4];
        ck_assert_uint_eq(w.req.lanes, r->lanes);
        ck_assert_uint_eq(w.req.sectors, r->sectors);
        ck_assert_uint_eq(w.req.ideal, r->ideal);
        ck_assert(w.req.block == e->block && w.req.warp == e->thread / 32 && w.req.iter == e->iter &&
                  w.req.tap == e->tap);
        /* every access of the request is one of its lanes, on a line of the axis, its
         * sector rank below the sector count */
        int found = 0;
        for (int i = 0; i < w.nacc; ++i) {
            const ks_event *f = &fx.tr.events[w.acc[i].event];
            ck_assert(f->site == e->site && f->tap == e->tap && f->thread / 32 == e->thread / 32);
            ck_assert_uint_eq(w.acc[i].lane, f->thread % 32);
            ck_assert_uint_lt(w.sector[i], w.req.sectors);
            ck_assert(vw_warp_axis(&w, w.acc[i].byte, 1000) >= 0);
            found |= w.acc[i].event == ev;
        }
        ck_assert(found);
        char text[256], want[96];
        vw_warp_text(&fx.tr, &w, text, sizeof text);
        snprintf(want, sizeof want, "tap %u: %u lanes, %u sectors (ideal %u)", e->tap, r->lanes, r->sectors, r->ideal);
        ck_assert_msg(strstr(text, want), "%s", text);
        if (r->lanes != 32) continue;
        if (e->site == wr) {
            ck_assert_uint_eq(r->sectors, 4);
            full_writes++;
        }
        if (e->site == rd && e->tap == 4) {
            ck_assert_uint_eq(r->sectors, stride == 1 ? 4 : 8);
            full_reads++;
        }
    }
    ck_assert_int_gt(full_reads, 0);
    ck_assert_int_gt(full_writes, 0);
    close_im2col();
}
END_TEST

START_TEST(strip_follows_the_focus_and_the_w_key_toggles_it)
{
    open_im2col(2);
    vw_state s;
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 16);
    vw_state_init(&s, &fx.tr, &fx.idx);
    ck_assert_int_eq(s.strip, 0);
    vw_action a;
    ck_assert_int_eq(vw_key_action("W", 0, &a), 0);
    ck_assert_int_eq(a.kind, VW_ACT_STRIP);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.strip, 1);
    /* a work event: the item's first access, not the focused event */
    ck_assert_int_eq(vw_goto(&s, "index=40"), KS_OK);
    int own;
    uint32_t ev = vw_warp_event(&s, &own);
    ck_assert_int_eq(fx.tr.events[vw_state_event(&s)].kind, KS_EV_WORK);
    ck_assert_int_eq(own, 0);
    ck_assert_uint_ne(ev, VW_NONE);
    ck_assert_int_eq(fx.tr.events[ev].index, 40);
    ck_assert(fx.tr.events[ev].kind != KS_EV_WORK);
    /* step to tap 4's read: the centre of the kernel, a full warp, 8 sectors */
    vw_action right = {.kind = VW_ACT_STEP, .a = 1, .b = 0};
    for (int i = 0; i < 9; ++i) vw_apply(&s, &L, &right);
    ev = vw_warp_event(&s, &own);
    ck_assert_int_eq(own, 1);
    ck_assert_uint_eq(ev, vw_state_event(&s));
    ck_assert_int_eq(fx.tr.events[ev].kind, KS_EV_READ);
    ck_assert_int_eq(fx.tr.events[ev].tap, 4);
    static vw_warp w;
    ck_assert_int_eq(vw_warp_build(&fx.tr, ev, &w), 0);
    char text[256];
    vw_warp_text(&fx.tr, &w, text, sizeof text);
    ck_assert_str_eq(text, "warp 1 of block 0, site im2col.read_input, tap 4: 32 lanes, 8 sectors (ideal 4)");
    ck_assert_int_eq(w.nlines, 4);
    /* stepping by warp: the next warp's request, the same numbers in the interior */
    vw_action unit = {.kind = VW_ACT_UNIT, .a = VW_UNIT_WARP, .b = 0};
    vw_apply(&s, &L, &unit);
    vw_apply(&s, &L, &right);
    ck_assert_uint_eq(fx.tr.events[vw_state_event(&s)].thread / 32, 2);
    vw_apply(&s, &L, &a);
    ck_assert_int_eq(s.strip, 0);
    vw_state_free(&s);
    close_im2col();
}
END_TEST

START_TEST(sectors_heatmap_is_the_mean_over_the_cells_requests)
{
    const int stride = _i ? 2 : 1;
    open_im2col(stride);
    for (int t = 0; t < fx.tr.ntensors; ++t) {
        const int64_t n = ks_tensor_numel(&fx.tr.tensors[t]);
        double *sum = calloc((size_t)n, sizeof *sum);
        int64_t *cnt = calloc((size_t)n, sizeof *cnt);
        for (uint64_t ev = 0; ev < fx.tr.nevents; ++ev) {
            const ks_event *e = &fx.tr.events[ev];
            if ((e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) || e->tensor != t || e->u.access.offset < 0) continue;
            sum[e->u.access.offset] += fx.req[ev * 4].sectors; /* im2col: no element twice in a request */
            cnt[e->u.access.offset]++;
        }
        double hi = 0;
        for (int64_t off = 0; off < n; ++off) {
            const double v = vw_sectors_at(&fx.idx, t, off);
            if (!cnt[off]) {
                ck_assert(v == -1);
                continue;
            }
            ck_assert_msg(fabs(v - sum[off] / (double)cnt[off]) < 1e-5, "%s[%lld]: %g, want %g", fx.tr.tensors[t].name,
                          (long long)off, v, sum[off] / (double)cnt[off]);
            if (v > hi) hi = v;
            if (!strcmp(fx.tr.tensors[t].name, "columns")) ck_assert(v == 4); /* coalesced stores */
        }
        if (!strcmp(fx.tr.tensors[t].name, "input")) ck_assert(hi == (stride == 1 ? 4 : 8));
        free(sum);
        free(cnt);
    }
    /* the mode: by name and by M after visits */
    vw_state s;
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 16);
    vw_state_init(&s, &fx.tr, &fx.idx);
    ck_assert_int_eq(vw_set_mode(&s, "sectors"), KS_OK);
    ck_assert_int_eq(s.mode, VW_MODE_SECTORS);
    ck_assert_str_eq(vw_mode_name(VW_MODE_SECTORS), "sectors");
    ck_assert_int_eq(vw_set_mode(&s, "visits"), KS_OK);
    vw_action m = {.kind = VW_ACT_MODE, .a = 0, .b = 0};
    vw_apply(&s, &L, &m);
    ck_assert_int_eq(s.mode, VW_MODE_SECTORS);
    vw_apply(&s, &L, &m);
    ck_assert_int_eq(s.mode, VW_MODE_VALUES);
    vw_state_free(&s);
    close_im2col();
}
END_TEST

START_TEST(axis_gaps_lines_and_the_strip_fits_the_decomposition_panel)
{
    static vw_warp w;
    memset(&w, 0, sizeof w);
    w.nlines = 2, w.line[0] = 0, w.line[1] = 5; /* two lines, not adjacent: a gap of 32 */
    ck_assert(fabs(vw_warp_axis(&w, 0, 288)) < 1e-9);
    ck_assert(fabs(vw_warp_axis(&w, 32, 288) - 32) < 1e-9);
    ck_assert(fabs(vw_warp_axis(&w, 128, 288) - 128) < 1e-9);
    ck_assert(fabs(vw_warp_axis(&w, 5 * 128, 288) - 160) < 1e-9);
    ck_assert(fabs(vw_warp_axis(&w, 6 * 128, 288) - 288) < 1e-9);
    ck_assert(vw_warp_axis(&w, 300, 288) == -1);
    w.line[1] = 1; /* adjacent: no gap */
    ck_assert(fabs(vw_warp_axis(&w, 128, 256) - 128) < 1e-9);
    ck_assert(fabs(vw_warp_axis(&w, 255, 256) - 255) < 1e-9);
    for (uint32_t k = 0; k < 8; ++k) ck_assert_uint_ne(vw_warp_color(k), 0x00FFFF);
    const int sizes[][2] = {{1280, 800}, {640, 480}, {800, 1200}, {1920, 1080}};
    for (int i = 0; i < 4; ++i) {
        vw_layout L;
        vw_layout_compute(&L, sizes[i][0], sizes[i][1], 16);
        vw_rect dec = L.decomp;
        const vw_rect strip = vw_strip_area(&dec, L.line);
        ck_assert(strip.h > 0 && dec.h > 0);
        ck_assert(!vw_rect_overlap(strip, dec));
        ck_assert(strip.x >= L.decomp.x && strip.y >= L.decomp.y && strip.x + strip.w <= L.decomp.x + L.decomp.w &&
                  strip.y + strip.h <= L.decomp.y + L.decomp.h);
        vw_rect lanes, axis;
        vw_strip_parts(strip, L.line, &lanes, &axis);
        ck_assert_int_le(vw_strip_lane(lanes, 31).x + vw_strip_lane(lanes, 31).w, strip.x + strip.w);
        ck_assert_int_lt(vw_strip_lane(lanes, 0).x + vw_strip_lane(lanes, 0).w, vw_strip_lane(lanes, 1).x);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_warp");
    TCase *tc = tcase_create("view_warp");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, strip_numbers_equal_kscope_memorys_for_every_event, 0, 2);
    tcase_add_test(tc, strip_follows_the_focus_and_the_w_key_toggles_it);
    tcase_add_loop_test(tc, sectors_heatmap_is_the_mean_over_the_cells_requests, 0, 2);
    tcase_add_test(tc, axis_gaps_lines_and_the_strip_fits_the_decomposition_panel);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
