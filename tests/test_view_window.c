/* The real window under Xvfb: open a trace, step with keys, take a screenshot, quit;
 * the screenshot shows what the headless renderer draws for the same steps. Skipped
 * (exit 77, with a message) when xvfb-run is not installed. */
#include <sys/stat.h>
#include <unistd.h>

#include "view_fixture.h"

static char dir[64], path[256];

START_TEST(window_steps_screenshots_and_quits_under_xvfb)
{
    char cmd[2048], shot[300], ref[300], out[300];
    snprintf(dir, sizeof dir, "/tmp/ks_window_%d", (int)getpid());
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/t.kst", dir);
    snprintf(shot, sizeof shot, "%s/kscope-shot-001.png", dir);
    snprintf(ref, sizeof ref, "%s/ref.png", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    vf_write_trace(path, "im2col", vf_small(), ks_filter_all(), 0);
    snprintf(cmd, sizeof cmd,
             "timeout 120 xvfb-run -a -s '-screen 0 1400x900x24' %s view %s --goto index=7 "
             "--keys Right,Right,Right,wait:3,S,wait:3,Q --shot-dir %s > %s 2>&1",
             KS_CLI, path, dir, out);
    int rc = vf_sh(cmd);
    if (rc) {
        snprintf(cmd, sizeof cmd, "cat %s >&2", out);
        vf_sh(cmd);
    }
    ck_assert_int_eq(rc, 0);
    snprintf(cmd, sizeof cmd, "grep -q 'screenshot: %s' %s", shot, out);
    ck_assert_int_eq(vf_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s view %s --goto index=7 --keys Right,Right,Right --png %s > /dev/null", KS_CLI, path,
             ref);
    ck_assert_int_eq(vf_sh(cmd), 0);
    SDL_Surface *a = vf_load(shot), *b = vf_load(ref);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert(a->w == 1280 && a->h == 800);
    /* the panels are the same pixels; the status line may differ (pointer position) */
    vw_layout L;
    vw_layout_compute(&L, 1280, 800, 15);
    int differ = 0;
    for (int y = 0; y < L.timeline.y; ++y)
        differ += memcmp((uint8_t *)a->pixels + (size_t)y * a->pitch, (uint8_t *)b->pixels + (size_t)y * b->pitch,
                         1280 * 4) != 0;
    ck_assert_msg(differ == 0, "%d rows of the window differ from the headless frame", differ);
    /* and the focus is the third read of work item 7: input (0, 2), cyan-outlined */
    int cyan = 0;
    for (int y = 0; y < 800; y += 1)
        for (int x = 0; x < 640; ++x) cyan += vf_at(a, x, y) == VW_COL_FOCUS;
    ck_assert_int_gt(cyan, 100);
    SDL_FreeSurface(a);
    SDL_FreeSurface(b);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    vf_sh(cmd);
}
END_TEST

int main(void)
{
    if (vf_sh("command -v xvfb-run > /dev/null 2>&1") != 0) {
        printf("SKIP test_view_window: xvfb-run not found (apt-get install xvfb xauth)\n");
        return 77;
    }
    Suite *s = suite_create("view_window");
    TCase *tc = tcase_create("view_window");
    tcase_set_timeout(tc, 200);
    tcase_add_test(tc, window_steps_screenshots_and_quits_under_xvfb);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
