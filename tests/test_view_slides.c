/* Projector-grade slides, checked by their pixels: text as tall as the frame asks for
 * (measured ink of a rendered line), titles that wrap instead of being cut at 1024x768. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../viewer/vw_describe.h"
#include "view_fixture.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/ks_slides_%d", (int)getpid());
    mkdir(dir, 0777);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    vf_sh(cmd);
}

/* The rows of the narration band: the two rows whose middle half is all outline colour. */
static int band_rows(SDL_Surface *s, int *top, int *bottom)
{
    int n = 0;
    for (int y = 0; y < s->h; ++y) {
        int all = 1;
        for (int x = s->w / 4; x < 3 * s->w / 4 && all; ++x) all = vf_pixel(s, x, y) == VW_COL_HEAD;
        if (all) {
            if (!n++) *top = y;
            *bottom = y;
        }
    }
    return n >= 2;
}

/* Height in pixels of the first line of text inside the band: the run of rows, from the
 * first row with a glyph pixel (anything but the band's fill), to the next empty row. */
static int first_line_ink(SDL_Surface *s, int top, int bottom)
{
    const uint32_t bg = vf_pixel(s, s->w / 2, top + 2);
    int first = -1;
    for (int y = top + 1; y < bottom; ++y) {
        int ink = 0;
        for (int x = 12; x < s->w / 2 && !ink; ++x) ink = vf_pixel(s, x, y) != bg;
        if (ink && first < 0) first = y;
        if (!ink && first >= 0) return y - first;
    }
    return -1;
}

static int lesson_ink(const char *size, const char *extra)
{
    char cmd[1024], png[400];
    snprintf(cmd, sizeof cmd, "KSCOPE_LESSONS=%s/lessons %s lesson 02 --frames %s/f --size %s %s > /dev/null",
             KS_SOURCE_DIR, KS_CLI, dir, size, extra);
    ck_assert_int_eq(vf_sh(cmd), 0);
    snprintf(png, sizeof png, "%s/f/step-01.png", dir);
    SDL_Surface *img = vf_load(png);
    ck_assert_ptr_nonnull(img);
    int top = 0, bottom = 0;
    ck_assert(band_rows(img, &top, &bottom));
    const int ink = first_line_ink(img, top, bottom);
    SDL_FreeSurface(img);
    return ink;
}

/* at 1920x1080 a slide's text is at least 28 px from cap to descender (readable from the
 * back of a room); --text-size sets it; a 1024x768 slide gets smaller text */
START_TEST(slide_text_height_follows_the_frame)
{
    make_dir();
    const int big = lesson_ink("1920x1080", "");
    ck_assert_msg(big >= 28 && big <= 40, "text line %d px high at 1920x1080", big);
    const int set = lesson_ink("1920x1080", "--text-size 16");
    ck_assert_msg(set >= 14 && set <= 20, "text line %d px high with --text-size 16", set);
    const int small = lesson_ink("1024x768", "");
    ck_assert_msg(small >= 14 && small < big, "text line %d px high at 1024x768", small);
    remove_dir();
}
END_TEST

static const char *const long_title =
    "Bilinear sampling at the border of the picture, with the corners that fall outside it, their "
    "weights and the clamp to the last row";

/* a long title at 1024x768 wraps onto more title lines: every line fits the bar, no word
 * is lost, and the title's glyphs lie inside the title bar */
START_TEST(long_title_wraps_inside_the_window_at_1024x768)
{
    make_dir();
    char path[200];
    snprintf(path, sizeof path, "%s/t.kst", dir);
    vf_write_trace(path, "im2col", vf_small(), ks_filter_all(), 0);
    ks_trace tr;
    vw_index idx;
    vw_state s;
    vf_frame f;
    ck_assert_int_eq(ks_trace_open(path, &tr), KS_OK);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    vw_state_init(&s, &tr, &idx);
    s.title = long_title;
    vf_open_text(&f, 1024, 768, vw_text_px(1024, 768));
    vw_layout_for_state(&f.L, &s, f.d.font.advance, f.d.font.line, 1024, 768);
    static vw_lines lines;
    const int cols = (f.L.title.w - 12) / f.d.font.advance;
    const int n = vw_describe_title_lines(&s, cols, &lines);
    ck_assert_int_ge(n, 2);
    ck_assert_int_eq(f.L.title_lines, n);
    ck_assert_int_ge(f.L.title.h, n * f.d.font.line);
    char joined[2048] = "", full[1024];
    for (int i = 0; i < n; ++i) {
        ck_assert_int_le(6 + (int)strlen(lines.text[i]) * f.d.font.advance, f.L.title.w - 6);
        strcat(joined, i ? " " : "");
        strcat(joined, lines.text[i]);
    }
    vw_describe_title(&s, full, sizeof full);
    /* the wrap only drops the spaces at its breaks */
    char a[2048], b[2048];
    int na = 0, nb = 0;
    for (const char *p = joined; *p; ++p) if (*p != ' ') a[na++] = *p;
    for (const char *p = full; *p; ++p) if (*p != ' ') b[nb++] = *p;
    a[na] = b[nb] = 0;
    ck_assert_str_eq(a, b);
    vw_draw_frame(&f.d, &s, &f.L, 1000);
    SDL_RenderPresent(f.r);
    /* glyph pixels (text colour) on every title line, none right of the bar's inside */
    for (int i = 0; i < n; ++i) {
        int ink = 0;
        for (int y = f.L.title.y + 3 + i * f.d.font.line; y < f.L.title.y + 3 + (i + 1) * f.d.font.line; ++y)
            for (int x = 0; x < 1024; ++x) {
                if (vf_pixel(f.surf, x, y) != VW_COL_TEXT) continue;
                ink++;
                ck_assert_int_lt(x, f.L.title.w - 6);
            }
        ck_assert_int_gt(ink, 20);
    }
    /* and the input panel starts below the title bar */
    ck_assert_int_ge(f.L.input.y, f.L.title.y + f.L.title.h);
    vf_close(&f);
    vw_state_free(&s);
    vw_index_free(&idx);
    ks_trace_close(&tr);
    remove_dir();
}
END_TEST

static int count_colour(SDL_Surface *img, uint32_t col)
{
    int n = 0;
    for (int y = 0; y < img->h; ++y)
        for (int x = 0; x < img->w; ++x) n += vf_pixel(img, x, y) == col;
    return n;
}

/* lesson 03's answer slides outline the cell each question asks about in lime; the slide
 * with the question (before A) shows no lime */
START_TEST(answer_slides_outline_the_asked_cell)
{
    char cmd[1024], png[400];
    make_dir();
    snprintf(cmd, sizeof cmd, "KSCOPE_LESSONS=%s/lessons %s lesson 03 --frames %s/f > /dev/null", KS_SOURCE_DIR,
             KS_CLI, dir);
    ck_assert_int_eq(vf_sh(cmd), 0);
    int outlined = 0;
    for (int k = 1; k <= 10; ++k) {
        snprintf(png, sizeof png, "%s/f/step-%02d-answer.png", dir, k);
        if (access(png, F_OK) != 0) continue;
        SDL_Surface *a = vf_load(png);
        snprintf(png, sizeof png, "%s/f/step-%02d.png", dir, k);
        SDL_Surface *q = vf_load(png);
        ck_assert(a && q);
        ck_assert_int_eq(count_colour(q, VW_COL_ANSWER), 0);
        outlined += count_colour(a, VW_COL_ANSWER) > 4 * 4 * 20; /* four sides, 4 px, 20+ px long */
        SDL_FreeSurface(a);
        SDL_FreeSurface(q);
    }
    ck_assert_int_ge(outlined, 1); /* the cell question (the others ask about a work item as a whole) */
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_slides");
    TCase *tc = tcase_create("view_slides");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, slide_text_height_follows_the_frame);
    tcase_add_test(tc, long_title_wraps_inside_the_window_at_1024x768);
    tcase_add_test(tc, answer_slides_outline_the_asked_cell);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
