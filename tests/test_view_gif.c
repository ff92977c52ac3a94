/* Animated GIF export read back with giflib: a lesson's slides (one frame per step, one
 * more per question's answer) and a trace's --every sequence; each frame's size and
 * delay, the loop, and its pixels against the PNG the same command renders for that
 * frame (within palette error); bad paths refused with one line and nothing left. */
#include <gif_lib.h>

#include "view_fixture.h"

static char dir[64], path[256];

static void make_dir(void)
{
    vf_tmpdir(dir, sizeof dir, "ks_gif");
    snprintf(path, sizeof path, "%s/t.kst", dir);
    vf_write_trace(path, "im2col", vf_small(), ks_filter_all(), 0);
}

static void remove_dir(void) { vf_rmdir(dir); }

typedef struct decoded {
    GifFileType *g;
    uint32_t *canvas; /* the frame shown after image k, 0xRRGGBB */
    int k;
} decoded;

static void decode(decoded *d, const char *gif)
{
    int err = 0;
    d->g = DGifOpenFileName(gif, &err);
    ck_assert_msg(d->g != NULL, "%s: %s", gif, GifErrorString(err));
    ck_assert_int_eq(DGifSlurp(d->g), GIF_OK);
    d->canvas = calloc((size_t)d->g->SWidth * d->g->SHeight, sizeof *d->canvas);
    d->k = -1;
}

/* Paints images up to k onto the canvas (each covers its rectangle, in its palette). */
static void show(decoded *d, int k)
{
    for (++d->k; d->k <= k; ++d->k) {
        const SavedImage *im = &d->g->SavedImages[d->k];
        const GifImageDesc *id = &im->ImageDesc;
        const ColorMapObject *map = id->ColorMap ? id->ColorMap : d->g->SColorMap;
        ck_assert_ptr_nonnull(map);
        ck_assert(id->Left + id->Width <= d->g->SWidth && id->Top + id->Height <= d->g->SHeight);
        for (int y = 0; y < id->Height; ++y)
            for (int x = 0; x < id->Width; ++x) {
                const GifColorType c = map->Colors[im->RasterBits[y * id->Width + x]];
                d->canvas[(size_t)(id->Top + y) * d->g->SWidth + id->Left + x] = (uint32_t)c.Red << 16 |
                                                                                 (uint32_t)c.Green << 8 | c.Blue;
            }
    }
    d->k = k;
}

static void undecode(decoded *d)
{
    int err;
    DGifCloseFile(d->g, &err);
    free(d->canvas);
}

/* The canvas against a PNG: most pixels exact (flat panels and cells are among a frame's
 * most used colours), nearly all within 24 per channel, none far off (the palette keeps
 * a colour of its own for a small marker). */
static void same_as_png(const decoded *d, const char *png)
{
    SDL_Surface *img = vf_load(png);
    ck_assert_msg(img != NULL, "%s", png);
    ck_assert(img->w == d->g->SWidth && img->h == d->g->SHeight);
    long exact = 0, close = 0, total = (long)img->w * img->h;
    int worst = 0;
    for (int y = 0; y < img->h; ++y)
        for (int x = 0; x < img->w; ++x) {
            const uint32_t a = vf_at(img, x, y), b = d->canvas[(size_t)y * img->w + x];
            int e = 0;
            for (int sh = 0; sh <= 16; sh += 8) {
                const int dc = abs((int)(a >> sh & 255) - (int)(b >> sh & 255));
                e = dc > e ? dc : e;
            }
            exact += e == 0;
            close += e <= 24;
            worst = e > worst ? e : worst;
        }
    /* measured: 94-97% exact, 99.99% within 24, worst 36 (anti-aliased text) */
    ck_assert_msg(exact >= total * 90 / 100, "%s: %ld of %ld pixels exact", png, exact, total);
    ck_assert_msg(close >= total * 995 / 1000, "%s: %ld of %ld pixels within 24", png, close, total);
    ck_assert_msg(worst <= 48, "%s: a pixel off by %d", png, worst);
    SDL_FreeSurface(img);
}

static int delay_of(const decoded *d, int k)
{
    GraphicsControlBlock gcb;
    ck_assert_int_eq(DGifSavedExtensionToGCB(d->g, k, &gcb), GIF_OK);
    return gcb.DelayTime;
}

static int loops_forever(const decoded *d)
{
    const SavedImage *im = &d->g->SavedImages[0];
    for (int i = 0; i < im->ExtensionBlockCount - 1; ++i)
        if (im->ExtensionBlocks[i].Function == APPLICATION_EXT_FUNC_CODE &&
            !memcmp(im->ExtensionBlocks[i].Bytes, "NETSCAPE2.0", 11))
            return im->ExtensionBlocks[i + 1].ByteCount == 3 && im->ExtensionBlocks[i + 1].Bytes[1] == 0 &&
                   im->ExtensionBlocks[i + 1].Bytes[2] == 0;
    return 0;
}

START_TEST(lesson_gif_has_a_frame_per_slide_like_its_pngs)
{
    char cmd[2048], gif[300], png[400];
    make_dir();
    snprintf(gif, sizeof gif, "%s/l.gif", dir);
    snprintf(cmd, sizeof cmd,
             "KSCOPE_LESSONS=%s/lessons %s lesson 03 --gif %s --size 800x600 --delay 1500 > /dev/null && "
             "KSCOPE_LESSONS=%s/lessons %s lesson 03 --frames %s/png --size 800x600 > /dev/null",
             KS_SOURCE_DIR, KS_CLI, gif, KS_SOURCE_DIR, KS_CLI, dir);
    ck_assert_int_eq(vf_sh(cmd), 0);
    decoded d;
    decode(&d, gif);
    ck_assert_int_eq(d.g->SWidth, 800);
    ck_assert_int_eq(d.g->SHeight, 600);
    ck_assert_int_eq(d.g->ImageCount, 16); /* 10 steps, 6 questions with an answer frame */
    ck_assert(loops_forever(&d));
    int k = 0;
    for (int step = 1; step <= 10; ++step)
        for (int answer = 0; answer < 2; ++answer) {
            snprintf(png, sizeof png, "%s/png/step-%02d%s.png", dir, step, answer ? "-answer" : "");
            if (access(png, F_OK) != 0) continue;
            ck_assert_int_eq(delay_of(&d, k), 150);
            show(&d, k++);
            same_as_png(&d, png);
        }
    ck_assert_int_eq(k, 16);
    undecode(&d);
    remove_dir();
}
END_TEST

START_TEST(view_gif_every_n_matches_its_frames)
{
    char cmd[2048], gif[300], png[400];
    make_dir();
    snprintf(gif, sizeof gif, "%s/v.gif", dir);
    snprintf(cmd, sizeof cmd,
             "%s view %s --gif %s --every 37 --max-frames 9 --size 900x640 > /dev/null && "
             "%s view %s --frames %s/png --every 37 --max-frames 9 --size 900x640 > /dev/null",
             KS_CLI, path, gif, KS_CLI, path, dir);
    ck_assert_int_eq(vf_sh(cmd), 0);
    decoded d;
    decode(&d, gif);
    ck_assert_int_eq(d.g->SWidth, 900);
    ck_assert_int_eq(d.g->ImageCount, 9);
    for (int k = 0; k < 9; ++k) {
        ck_assert_int_eq(delay_of(&d, k), 50); /* the default 500 ms */
        show(&d, k);
        snprintf(png, sizeof png, "%s/png/frame-%06d.png", dir, k);
        same_as_png(&d, png);
    }
    /* after the first, frames carry only what changed: a smaller rectangle */
    ck_assert_int_lt(d.g->SavedImages[1].ImageDesc.Width * d.g->SavedImages[1].ImageDesc.Height, 900 * 640);
    undecode(&d);
    remove_dir();
}
END_TEST

/* one clear line, exit 2, and no GIF or temporary left behind; a target that existed is
 * left as it was */
START_TEST(gif_bad_paths_leave_nothing_half_written)
{
    char cmd[1200], err[300];
    make_dir();
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *bad[] = {"--gif %s/missing/x.gif", "--gif %s", "--gif %s/g.gif --frames %s/fr",
                         "--gif %s/g.gif --delay 0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        char args[400];
        snprintf(args, sizeof args, bad[i], dir, dir);
        snprintf(cmd, sizeof cmd, "%s view %s %s 2> %s > /dev/null", KS_CLI, path, args, err);
        ck_assert_int_eq(vf_sh(cmd), 2);
        const char *msg = tu_slurp(NULL, err);
        ck_assert_msg(!strncmp(msg, "kscope: view: ", 14) && strchr(msg, '\n') == msg + strlen(msg) - 1, "%s: %s", args,
                      msg);
    }
    /* a lesson run that fails before its end (an unknown key in the script) */
    snprintf(cmd, sizeof cmd,
             "echo old > %s/keep.gif && KSCOPE_LESSONS=%s/lessons %s lesson 03 --gif %s/keep.gif "
             "--keys Nope 2> %s",
             dir, KS_SOURCE_DIR, KS_CLI, dir, err);
    ck_assert_int_eq(vf_sh(cmd), 2);
    ck_assert_str_eq(tu_slurp(dir, "keep.gif"), "old\n");
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -v -x -e t.kst -e err.txt -e keep.gif", dir);
    ck_assert_int_ne(vf_sh(cmd), 0); /* nothing else in the folder */
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view_gif");
    TCase *tc = tcase_create("view_gif");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, lesson_gif_has_a_frame_per_slide_like_its_pngs);
    tcase_add_test(tc, view_gif_every_n_matches_its_frames);
    tcase_add_test(tc, gif_bad_paths_leave_nothing_half_written);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
