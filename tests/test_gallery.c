/* kscope gallery (issue 38): a subset of the conv_arithmetic animations rendered at
 * 1920x1080 and read back. Each animation's frame count (PNG files, GIF images, rows of
 * frames.tsv) and each frame's window - the box found in the PNG's pixels, turned into
 * cells with the panel's map, and the cells the trace gave - against the positions this
 * test computes on its own from the convolution arithmetic:
 *   o = floor((i + 2p - d(k-1) - 1) / s) + 1, frame f at (f / o, f % o), its window rows
 *   from (f / o) * s - p to that + d(k-1), columns likewise (a transpose's window is the
 *   same, on the output).
 * And the columns matrix beside them in whole columns: its cells as drawn start and end
 * on cell edges, and no colour of a cut column shows past them (issue 38 D12: at
 * 1920x1080 padding_strides' and dilation_transposed's last column showed at half its
 * width). */
#include <math.h>
#ifdef KS_HAVE_GIF
#include <gif_lib.h>
#endif

#include "../viewer/vw_gallery.h"
#include "view_fixture.h"

/* conv_arithmetic's numbers for the animations rendered here */
static const struct {
    const char *name;
    int transposed, i, k, p, s, d;
} cases[] = {
    {"padding_strides", 0, 5, 3, 1, 2, 1},
    {"padding_strides_odd", 0, 6, 3, 1, 2, 1},
    {"dilation", 0, 7, 3, 0, 1, 2},
    {"same_padding_no_strides", 0, 5, 3, 1, 1, 1},
    {"no_padding_strides_transposed", 1, 5, 3, 0, 2, 1},
    {"padding_strides_transposed", 1, 5, 3, 1, 2, 1},
    {"dilation_transposed", 1, 7, 3, 0, 1, 2},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static char dir[64];

static int floor_div(int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); }

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The box of colour VW_GALLERY_WINDOW inside r (grown by the outline): 0 when none. */
static int find_box(const SDL_Surface *img, int ax, int ay, int aw, int ah, int *x0, int *y0, int *x1, int *y1)
{
    const int g = VW_GALLERY_BOX + 2;
    int n = 0;
    *x0 = *y0 = 1 << 30, *x1 = *y1 = -1;
    for (int y = ay - g; y < ay + ah + g; ++y)
        for (int x = ax - g; x < ax + aw + g; ++x) {
            if (x < 0 || y < 0 || x >= img->w || y >= img->h || vf_at(img, x, y) != VW_GALLERY_WINDOW) continue;
            n++;
            if (x < *x0) *x0 = x;
            if (y < *y0) *y0 = y;
            if (x > *x1) *x1 = x;
            if (y > *y1) *y1 = y;
        }
    return n > 0;
}

START_TEST(gallery_frames_and_windows_read_back)
{
    char cmd[1024], path[512], line[1024];
    vf_tmpdir(dir, sizeof dir, "ks_gallery");
    snprintf(cmd, sizeof cmd, "%s gallery %s/g --size 1920x1080 --only ", KS_CLI, dir);
    for (int c = 0; c < NCASES; ++c)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%s%s", c ? "," : "", cases[c].name);
    snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " > %s/out.txt", dir);
    ck_assert_int_eq(vf_sh(cmd), 0);
    snprintf(path, sizeof path, "%s/g", dir);
    const char *index = tu_slurp(path, "index.html");
    for (int c = 0; c < NCASES; ++c) ck_assert_msg(strstr(index, cases[c].name), "index.html lacks %s", cases[c].name);
    ck_assert_ptr_nonnull(strstr(tu_slurp(path, "README.md"), cases[0].name));
    for (int c = 0; c < NCASES; ++c) {
        const int i = cases[c].i, k = cases[c].k, p = cases[c].p, s = cases[c].s, d = cases[c].d;
        const int o = floor_div(i + 2 * p - d * (k - 1) - 1, s) + 1, n = o * o;
        /* the PNG frames: exactly n */
        for (int f = 0; f <= n; ++f) {
            snprintf(path, sizeof path, "%s/g/%s/frame-%03d.png", dir, cases[c].name, f);
            ck_assert_msg(exists(path) == (f < n), "%s: frame %d of %d", cases[c].name, f, n);
        }
#ifdef KS_HAVE_GIF
        int err = 0;
        snprintf(path, sizeof path, "%s/g/%s.gif", dir, cases[c].name);
        GifFileType *g = DGifOpenFileName(path, &err);
        ck_assert_msg(g != NULL, "%s: %s", path, GifErrorString(err));
        ck_assert_int_eq(DGifSlurp(g), GIF_OK);
        ck_assert_msg(g->ImageCount == n, "%s: %d GIF images for %d windows", cases[c].name, g->ImageCount, n);
        ck_assert(g->SWidth == 1920 && g->SHeight == 1080);
        DGifCloseFile(g, &err);
#endif
        snprintf(path, sizeof path, "%s/g/%s/frames.tsv", dir, cases[c].name);
        FILE *tsv = fopen(path, "r");
        ck_assert_ptr_nonnull(tsv);
        int rows = 0, head = 0;
        while (fgets(line, sizeof line, tsv)) {
            char name[128];
            int ai, ak, ap, as, ad, at, ao, an;
            if (sscanf(line, "anim %127s %d %d %d %d %d %d %d %d", name, &ai, &ak, &ap, &as, &ad, &at, &ao, &an) == 9) {
                ck_assert_str_eq(name, cases[c].name);
                ck_assert(ai == i && ak == k && ap == p && as == s && ad == d && at == cases[c].transposed);
                ck_assert_int_eq(ao, o);
                ck_assert_int_eq(an, n);
                head = 1;
                continue;
            }
            int f, qy, qx, col, y0, x0, y1, x1, bx, by, bw, bh, ax, ay, aw, ah, cx, cy, cw, ch;
            double ox, oy, cell, cox, coy, ccell;
            if (sscanf(line,
                       "frame %d %d %d %d %d %d %d %d %d %d %d %d %lf %lf %lf %d %d %d %d %d %d %d %d %lf %lf %lf", &f,
                       &qy, &qx, &col, &y0, &x0, &y1, &x1, &bx, &by, &bw, &bh, &ox, &oy, &cell, &ax, &ay, &aw, &ah, &cx,
                       &cy, &cw, &ch, &cox, &coy, &ccell) != 26)
                continue;
            /* the arithmetic, done here */
            ck_assert_int_eq(f, rows);
            const int ey = (f / o) * s - p, ex = (f % o) * s - p, span = d * (k - 1);
            ck_assert_msg(qy == f / o && qx == f % o && col == f, "%s frame %d: position (%d, %d) column %d",
                          cases[c].name, f, qy, qx, col);
            /* the window the trace gave */
            ck_assert_msg(y0 == ey && x0 == ex && y1 == ey + span && x1 == ex + span,
                          "%s frame %d: trace window %d..%d x %d..%d, expected %d..%d x %d..%d", cases[c].name, f, y0,
                          y1, x0, x1, ey, ey + span, ex, ex + span);
            /* the window drawn: the box in the PNG's pixels, in cells of the panel's map */
            snprintf(path, sizeof path, "%s/g/%s/frame-%03d.png", dir, cases[c].name, f);
            SDL_Surface *img = vf_load(path);
            ck_assert_msg(img != NULL, "%s", path);
            ck_assert(img->w == 1920 && img->h == 1080 && cell >= 24);
            int px0, py0, px1, py1;
            ck_assert_msg(find_box(img, ax, ay, aw, ah, &px0, &py0, &px1, &py1), "%s: no window box", path);
            /* the columns matrix: whole cells from edge to edge, and past them along a row
             * only the panel's fill, the frame's or the column box's outline */
            const double c0 = (cx - cox) / ccell, c1 = (cx + cw - cox) / ccell;
            ck_assert_msg(ccell >= 24 && cw >= 4 * ccell && fabs(c0 - round(c0)) < 0.02 && fabs(c1 - round(c1)) < 0.02,
                          "%s: the columns drawn from %.2f to %.2f cells", path, c0, c1);
            const int row = cy + ch / 2;
            for (int x = 1920 * 56 / 100; x < img->w; ++x) {
                if (x >= cx && x < cx + cw) continue;
                const uint32_t px = vf_at(img, x, row);
                ck_assert_msg(px == VW_COL_PANEL || px == VW_COL_BG || px == VW_GALLERY_WINDOW,
                              "%s: #%06X at (%d, %d), past the whole columns %d..%d", path, px, x, row, cx, cx + cw);
            }
            SDL_FreeSurface(img);
            const int B = VW_GALLERY_BOX;
            ck_assert_msg(px0 + B == bx && py0 + B == by && px1 + 1 - B == bx + bw && py1 + 1 - B == by + bh,
                          "%s: box at %d,%d..%d,%d, frames.tsv says %d,%d %dx%d", path, px0, py0, px1, py1, bx, by, bw,
                          bh);
            const int cy0 = (int)lround((py0 + B - oy) / cell), cx0 = (int)lround((px0 + B - ox) / cell);
            const int cy1 = (int)lround((py1 + 1 - B - oy) / cell) - 1,
                      cx1 = (int)lround((px1 + 1 - B - ox) / cell) - 1;
            ck_assert_msg(cy0 == ey && cx0 == ex && cy1 == ey + span && cx1 == ex + span,
                          "%s: drawn window %d..%d x %d..%d, expected %d..%d x %d..%d", path, cy0, cy1, cx0, cx1, ey,
                          ey + span, ex, ex + span);
            rows++;
        }
        fclose(tsv);
        ck_assert_msg(head, "%s: no anim line", cases[c].name);
        ck_assert_msg(rows == n, "%s: %d frames in frames.tsv, expected %d", cases[c].name, rows, n);
    }
    vf_rmdir(dir);
}
END_TEST

START_TEST(gallery_lists_and_refuses_unknown_names)
{
    char cmd[512];
    vf_tmpdir(dir, sizeof dir, "ks_gallery_list");
    snprintf(cmd, sizeof cmd, "%s gallery --list > %s/list.txt", KS_CLI, dir);
    ck_assert_int_eq(vf_sh(cmd), 0);
    const char *list = tu_slurp(dir, "list.txt");
    int lines = 0;
    for (const char *q = list; *q; ++q) lines += *q == '\n';
    ck_assert_int_eq(lines, 16); /* eight cases and their transposes */
    ck_assert_ptr_nonnull(strstr(list, "full_padding_no_strides_transposed"));
    snprintf(cmd, sizeof cmd, "%s gallery %s/g --only nosuch 2> %s/err.txt", KS_CLI, dir, dir);
    ck_assert_int_eq(vf_sh(cmd), 2);
    ck_assert_ptr_nonnull(strstr(tu_slurp(dir, "err.txt"), "no animation 'nosuch'"));
    vf_rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gallery");
    TCase *tc = tcase_create("gallery");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gallery_frames_and_windows_read_back);
    tcase_add_test(tc, gallery_lists_and_refuses_unknown_names);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
