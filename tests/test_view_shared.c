/* test_view_shared.c - the viewer's barrier phases (no SDL): the phase of each kind of
 * event, P / Shift+P stepping a block's phases in order, and the shared tile at a phase,
 * on a gemm_tiled trace (19 x 23 @ 23 x 17, tiles of 16: two steps, phases 0..3 per block). */
#include "test_util.h"

#include "../viewer/vw_index.h"
#include "../viewer/vw_phase.h"
#include "../viewer/vw_state.h"

static ks_run R;
static ks_trace TR;

static void run_gemm(void)
{
    ks_run_init(&R, ks_op_find("gemm_tiled"));
    ck_assert_ptr_nonnull(R.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_int_eq(ks_run_execute(&R), KS_OK);
    ks_trace_from_run(R.op, &R, &TR);
}

static void done(void)
{
    ks_host_sink_free(R.sink);
    R.sink = NULL;
    ks_run_free(&R);
}

START_TEST(events_have_phases_and_p_steps_through_them)
{
    run_gemm();
    const int shared = vw_shared_tensor(&TR);
    ck_assert_int_eq(shared, ks_op_tensor(R.op, "shared"));
    ck_assert_int_eq(vw_event_phase(&TR, 0), 0); /* the first work event leads to phase 0's stores */
    uint32_t ev = 0;
    for (int64_t p = 1; p <= 3; ++p) {
        ev = vw_phase_step(&TR, ev, 1);
        ck_assert_uint_ne(ev, VW_NONE);
        ck_assert_int_eq(vw_event_phase(&TR, ev), p);
        ck_assert_uint_eq(TR.events[ev].block, 0);
    }
    ck_assert_uint_eq(vw_phase_step(&TR, ev, 1), VW_NONE); /* a block has 4 phases here */
    const uint32_t back = vw_phase_step(&TR, ev, -1);
    ck_assert_int_eq(vw_event_phase(&TR, back), 2);
    /* block 3's phases are its own */
    uint32_t in3 = 0;
    while (TR.events[in3].block != 3) ++in3;
    ck_assert_uint_eq(TR.events[vw_phase_step(&TR, in3, 1)].block, 3);
    done();
}
END_TEST

START_TEST(the_shared_tile_follows_the_phases)
{
    run_gemm();
    const int64_t n = 2 * 16 * 16;
    int32_t last[2 * 16 * 16];
    unsigned char touched[2 * 16 * 16];
    /* phase 0: every slot of both tiles written now, none read */
    vw_shared_tile(&TR, 0, 0, last, touched, n);
    for (int64_t k = 0; k < n; ++k) ck_assert(last[k] == 0 && touched[k] == 2);
    /* phase 1: written in phase 0, every slot read now */
    vw_shared_tile(&TR, 0, 1, last, touched, n);
    for (int64_t k = 0; k < n; ++k) ck_assert(last[k] == 0 && touched[k] == 1);
    /* phase 2: the second step's stores */
    vw_shared_tile(&TR, 0, 2, last, touched, n);
    for (int64_t k = 0; k < n; ++k) ck_assert(last[k] == 2 && touched[k] == 2);
    done();
}
END_TEST

START_TEST(p_and_shift_p_are_keys)
{
    vw_action a;
    ck_assert_int_eq(vw_key_action("P", 0, &a), 0);
    ck_assert(a.kind == VW_ACT_PHASE && a.a == 1);
    ck_assert_int_eq(vw_key_action("P", 1, &a), 0);
    ck_assert(a.kind == VW_ACT_PHASE && a.a == -1);
    ck_assert_int_eq(vw_key_action("T", 0, &a), 0);
    ck_assert(a.kind == VW_ACT_SHARED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_shared");
    TCase *tc = tcase_create("phases");
    tcase_add_test(tc, events_have_phases_and_p_steps_through_them);
    tcase_add_test(tc, the_shared_tile_follows_the_phases);
    tcase_add_test(tc, p_and_shift_p_are_keys);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
