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
 * width). Then all 16, PNG only: every frame draws all k*k rows of the columns (issue 38
 * N13), its header naming the columns drawn and their numbers over them (N14). */
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

/* A frame's row of frames.tsv (docs/gallery.md). */
typedef struct frow {
    int f, qy, qx, col, y0, x0, y1, x1, bx, by, bw, bh, ax, ay, aw, ah, cx, cy, cw, ch;
    double ox, oy, cell, cox, coy, ccell;
} frow;

static int frame_row(const char *line, frow *r)
{
    return sscanf(line, "frame %d %d %d %d %d %d %d %d %d %d %d %d %lf %lf %lf %d %d %d %d %d %d %d %d %lf %lf %lf",
                  &r->f, &r->qy, &r->qx, &r->col, &r->y0, &r->x0, &r->y1, &r->x1, &r->bx, &r->by, &r->bw, &r->bh,
                  &r->ox, &r->oy, &r->cell, &r->ax, &r->ay, &r->aw, &r->ah, &r->cx, &r->cy, &r->cw, &r->ch, &r->cox,
                  &r->coy, &r->ccell) == 26;
}

/* A frame row's text fields after its 26 numbers: field 27 the columns header, 28 the
 * column numbers (docs/gallery.md), into buf; "" when absent. */
static void frame_field(const char *line, int field, char *buf, size_t n)
{
    const char *q = line;
    for (int i = 0; i < field && q; ++i) q = strchr(q, '\t'), q = q ? q + 1 : NULL;
    buf[0] = 0;
    if (!q) return;
    size_t k = strcspn(q, "\t\n");
    if (k >= n) k = n - 1;
    memcpy(buf, q, k), buf[k] = 0;
}

/* The column numbers a frame row says it drew ("n:x:y:w:h" each, commas between): how
 * many, at most max, into num. */
typedef struct cnum {
    int n, x, y, w, h;
} cnum;

static int frame_numbers(const char *line, cnum *num, int max)
{
    char buf[2048];
    frame_field(line, 28, buf, sizeof buf);
    int k = 0;
    for (const char *q = buf; *q && k < max;) {
        ck_assert_msg(sscanf(q, "%d:%d:%d:%d:%d", &num[k].n, &num[k].x, &num[k].y, &num[k].w, &num[k].h) == 5,
                      "column numbers '%s'", buf);
        ++k;
        q = strchr(q, ',');
        if (!q) break;
        ++q;
    }
    return k;
}

/* The columns panel of a frame row names what it draws (issue 38 N14: "columns[0, :, :]
 * (1, 9, 49)" over columns 26..34, no column numbers): the header the window's slice,
 * "columns[0, :, 26:35]", or the whole matrix's "columns[0, :, :]" where all show; and
 * over each column drawn its number, centred on it, above its cells. Returns how many. */
static int check_columns_named(const char *name, const char *line, const frow *r, int ncols, cnum *num)
{
    char head[256], want[96];
    frame_field(line, 27, head, sizeof head);
    const long c0 = lround((r->cx - r->cox) / r->ccell), c1 = lround((r->cx + r->cw - r->cox) / r->ccell);
    if (c0 > 0 || c1 < ncols) {
        char a[24] = "", b[24] = "";
        if (c0 > 0) snprintf(a, sizeof a, "%ld", c0);
        if (c1 < ncols) snprintf(b, sizeof b, "%ld", c1);
        snprintf(want, sizeof want, "columns[0, :, %s:%s]", a, b);
        ck_assert_msg(!strcmp(head, want), "%s frame %d: header '%s' over columns %ld..%ld of %d, not '%s'", name, r->f,
                      head, c0, c1 - 1, ncols, want);
    } else {
        ck_assert_msg(!strncmp(head, "columns[0, :, :]", 16), "%s frame %d: header '%s' over the whole matrix", name,
                      r->f, head);
    }
    const int k = frame_numbers(line, num, 128);
    ck_assert_msg(k == c1 - c0, "%s frame %d: %d column numbers over %ld columns", name, r->f, k, c1 - c0);
    for (int i = 0; i < k; ++i) {
        const double mid = r->cox + (num[i].n + 0.5) * r->ccell;
        ck_assert_msg(num[i].n == c0 + i && fabs(num[i].x + num[i].w / 2.0 - mid) <= 1.5 && num[i].w <= r->ccell &&
                          num[i].y + num[i].h <= r->cy - VW_GALLERY_BOX && num[i].h > 8,
                      "%s frame %d: number %d at %d,%d %dx%d over column %ld (centre %.1f, cells from y %d)", name,
                      r->f, num[i].n, num[i].x, num[i].y, num[i].w, num[i].h, c0 + i, mid, r->cy);
    }
    return k;
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
            frow r;
            if (!frame_row(line, &r)) continue;
            /* the arithmetic, done here */
            ck_assert_int_eq(r.f, rows);
            const int ey = (r.f / o) * s - p, ex = (r.f % o) * s - p, span = d * (k - 1);
            ck_assert_msg(r.qy == r.f / o && r.qx == r.f % o && r.col == r.f,
                          "%s frame %d: position (%d, %d) column %d", cases[c].name, r.f, r.qy, r.qx, r.col);
            /* the window the trace gave */
            ck_assert_msg(r.y0 == ey && r.x0 == ex && r.y1 == ey + span && r.x1 == ex + span,
                          "%s frame %d: trace window %d..%d x %d..%d, expected %d..%d x %d..%d", cases[c].name, r.f,
                          r.y0, r.y1, r.x0, r.x1, ey, ey + span, ex, ex + span);
            /* the window drawn: the box in the PNG's pixels, in cells of the panel's map */
            snprintf(path, sizeof path, "%s/g/%s/frame-%03d.png", dir, cases[c].name, r.f);
            SDL_Surface *img = vf_load(path);
            ck_assert_msg(img != NULL, "%s", path);
            ck_assert(img->w == 1920 && img->h == 1080 && r.cell >= 24);
            int px0, py0, px1, py1;
            ck_assert_msg(find_box(img, r.ax, r.ay, r.aw, r.ah, &px0, &py0, &px1, &py1), "%s: no window box", path);
            /* the columns matrix: whole cells from edge to edge, and past them along a row
             * only the panel's fill, the frame's or the column box's outline */
            const double c0 = (r.cx - r.cox) / r.ccell, c1 = (r.cx + r.cw - r.cox) / r.ccell;
            ck_assert_msg(r.ccell >= 24 && r.cw >= 4 * r.ccell && fabs(c0 - round(c0)) < 0.02 &&
                              fabs(c1 - round(c1)) < 0.02,
                          "%s: the columns drawn from %.2f to %.2f cells", path, c0, c1);
            const int row = r.cy + r.ch / 2;
            for (int x = 1920 * 56 / 100; x < img->w; ++x) {
                if (x >= r.cx && x < r.cx + r.cw) continue;
                const uint32_t px = vf_at(img, x, row);
                ck_assert_msg(px == VW_COL_PANEL || px == VW_COL_BG || px == VW_GALLERY_WINDOW,
                              "%s: #%06X at (%d, %d), past the whole columns %d..%d", path, px, x, row, r.cx,
                              r.cx + r.cw);
            }
            /* the column numbers in its pixels: the frame's in the header's colour */
            cnum num[128];
            const int nn = check_columns_named(cases[c].name, line, &r, n, num);
            for (int j = 0; j < nn; ++j) {
                int ink = 0, hd = 0;
                for (int y = num[j].y; y < num[j].y + num[j].h; ++y)
                    for (int x = num[j].x; x < num[j].x + num[j].w; ++x) {
                        const uint32_t px = vf_at(img, x, y);
                        ink += px != VW_COL_PANEL, hd += px == VW_COL_HEAD;
                    }
                ck_assert_msg(ink > 10 && (hd > 0) == (num[j].n == r.col),
                              "%s: column number %d: %d px of ink, %d in #%06X", path, num[j].n, ink, hd, VW_COL_HEAD);
            }
            SDL_FreeSurface(img);
            const int B = VW_GALLERY_BOX;
            ck_assert_msg(px0 + B == r.bx && py0 + B == r.by && px1 + 1 - B == r.bx + r.bw &&
                              py1 + 1 - B == r.by + r.bh,
                          "%s: box at %d,%d..%d,%d, frames.tsv says %d,%d %dx%d", path, px0, py0, px1, py1, r.bx, r.by,
                          r.bw, r.bh);
            const int cy0 = (int)lround((py0 + B - r.oy) / r.cell), cx0 = (int)lround((px0 + B - r.ox) / r.cell);
            const int cy1 = (int)lround((py1 + 1 - B - r.oy) / r.cell) - 1,
                      cx1 = (int)lround((px1 + 1 - B - r.ox) / r.cell) - 1;
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

/* Every animation's columns panel at 1920x1080 draws the whole columns: rows 0..k*k-1
 * all of them (issue 38 N13: k = 4's 16 rows drew as rows 1..14, the outlined column
 * without its first and last cell), and the frame's column among those drawn. Read
 * back from frames.tsv: the cells drawn (cx cy cw ch) on their map (cox coy ccell). */
START_TEST(gallery_columns_whole_in_every_animation)
{
    char cmd[1024], path[512], line[1024];
    vf_tmpdir(dir, sizeof dir, "ks_gallery_all");
    snprintf(cmd, sizeof cmd, "%s gallery %s/g --size 1920x1080 --no-gif > %s/out.txt", KS_CLI, dir, dir);
    ck_assert_int_eq(vf_sh(cmd), 0);
    int n = 0;
    const vw_gallery_anim *all = vw_gallery_list(&n);
    ck_assert_int_eq(n, 16);
    for (int a = 0; a < n; ++a) {
        snprintf(path, sizeof path, "%s/g/%s/frames.tsv", dir, all[a].name);
        FILE *tsv = fopen(path, "r");
        ck_assert_msg(tsv != NULL, "%s", path);
        const int K = all[a].k * all[a].k, o = vw_gallery_out_size(&all[a]);
        int frames = 0;
        while (fgets(line, sizeof line, tsv)) {
            frow r;
            if (!frame_row(line, &r)) continue;
            const double r0 = (r.cy - r.coy) / r.ccell, r1 = (r.cy + r.ch - r.coy) / r.ccell;
            const double c0 = (r.cx - r.cox) / r.ccell, c1 = (r.cx + r.cw - r.cox) / r.ccell;
            ck_assert_msg(fabs(r0) < 0.02 && fabs(r1 - K) < 0.02, "%s frame %d: rows %.2f..%.2f drawn, not 0..%d",
                          all[a].name, r.f, r0, r1 - 1, K - 1);
            ck_assert_msg(r.col >= lround(c0) && r.col < lround(c1),
                          "%s frame %d: column %d outside the %.2f..%.2f drawn", all[a].name, r.f, r.col, c0, c1 - 1);
            cnum num[128];
            check_columns_named(all[a].name, line, &r, o * o, num);
            frames++;
        }
        fclose(tsv);
        ck_assert_msg(frames == o * o, "%s: %d frames", all[a].name, frames);
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
    /* all 16 animations, some 290 frames: half a minute alone, more beside a full ctest -j */
    TCase *all = tcase_create("all");
    tcase_set_timeout(all, 400);
    tcase_add_test(all, gallery_columns_whole_in_every_animation);
    suite_add_tcase(s, all);
    return tu_run_suite(s, CK_FORK);
}
