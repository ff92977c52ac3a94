/* vw_gif.c - animated GIF export (see vw_gif.h). */
#include "vw_gif.h"

#include <errno.h>
#include <gif_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/ks_file.h"
#include "vw_colormap.h"

#define HASH_BITS 20 /* colour table slots: far more than the distinct colours of a frame */
#define RAMP_STOPS 32
#define EMPTY 0u

typedef struct bin {
    uint32_t rgb, count;
    uint32_t dist; /* to the nearest palette colour so far */
} bin;

struct vw_gif {
    GifFileType *gif;
    ks_out_file out;
    int w, h, frames;
    uint32_t *prev;      /* the previous frame, 0xRRGGBB, w x h */
    uint32_t *key, *val; /* colour + 1 -> count, then palette index + 1 */
    uint32_t *used;      /* slots in use, to clear them after each frame */
    uint32_t nused;
    GifPixelType *line;
    bin *hist;
    int werr; /* errno of the first short write (a full disk says so, not only giflib) */
};

static int writer(GifFileType *gif, const GifByteType *buf, int n)
{
    vw_gif *g = gif->UserData;
    const size_t put = fwrite(buf, 1, (size_t)n, g->out.f);
    if (put != (size_t)n && !g->werr) g->werr = errno ? errno : EIO;
    return (int)put;
}

static int gif_error(vw_gif *g, int err)
{
    return ks_fail(KS_EIO, "cannot write %s: %s%s%s", g->out.path, GifErrorString(err ? err : g->gif->Error),
                   g->werr ? ": " : "", g->werr ? strerror(g->werr) : "");
}

static uint32_t *slot(vw_gif *g, uint32_t rgb)
{
    const uint32_t mask = (1u << HASH_BITS) - 1, k = rgb + 1;
    uint32_t i = (rgb * 2654435761u) >> (32 - HASH_BITS);
    while (g->key[i] != EMPTY && g->key[i] != k) i = (i + 1) & mask;
    if (g->key[i] == EMPTY && g->nused < (1u << HASH_BITS) * 3 / 4) {
        g->key[i] = k;
        g->val[i] = 0;
        g->used[g->nused++] = i;
    }
    return g->key[i] == k ? &g->val[i] : NULL;
}

int vw_gif_open(vw_gif **out, const char *path, int w, int h)
{
    vw_gif *g = calloc(1, sizeof *g);
    const size_t slots = (size_t)1 << HASH_BITS, px = (size_t)w * (size_t)h;
    *out = NULL;
    if (!g) return ks_fail(KS_ENOMEM, "out of memory for the GIF");
    g->w = w, g->h = h;
    g->prev = malloc(px * sizeof *g->prev);
    g->key = calloc(slots, sizeof *g->key);
    g->val = malloc(slots * sizeof *g->val);
    g->used = malloc(slots * sizeof *g->used);
    g->line = malloc((size_t)w);
    g->hist = malloc(slots * sizeof *g->hist);
    if (!g->prev || !g->key || !g->val || !g->used || !g->line || !g->hist) {
        vw_gif_abort(g);
        return ks_fail(KS_ENOMEM, "out of memory for a %dx%d GIF", w, h);
    }
    int rc = ks_out_open(&g->out, path), err = 0;
    if (rc) {
        g->out.f = NULL;
        vw_gif_abort(g);
        return rc;
    }
    g->gif = EGifOpen(g, writer, &err);
    if (!g->gif) {
        ks_out_abort(&g->out);
        g->out.f = NULL;
        vw_gif_abort(g);
        return ks_fail(KS_EIO, "cannot write %s: %s", path, GifErrorString(err));
    }
    EGifSetGifVersion(g->gif, true);
    /* no global palette: each frame brings its own; loop forever (NETSCAPE2.0, count 0) */
    static const GifByteType loop[3] = {1, 0, 0};
    if (EGifPutScreenDesc(g->gif, w, h, 8, 0, NULL) != GIF_OK ||
        EGifPutExtensionLeader(g->gif, APPLICATION_EXT_FUNC_CODE) != GIF_OK ||
        EGifPutExtensionBlock(g->gif, 11, "NETSCAPE2.0") != GIF_OK ||
        EGifPutExtensionBlock(g->gif, 3, loop) != GIF_OK || EGifPutExtensionTrailer(g->gif) != GIF_OK) {
        rc = gif_error(g, 0);
        vw_gif_abort(g);
        return rc;
    }
    *out = g;
    return KS_OK;
}

static int by_count(const void *a, const void *b)
{
    const uint32_t ca = ((const bin *)a)->count, cb = ((const bin *)b)->count;
    return ca < cb ? 1 : ca > cb ? -1 : 0;
}

static int dist(const GifColorType *p, uint32_t rgb)
{
    const int dr = p->Red - (int)(rgb >> 16 & 255), dg = p->Green - (int)(rgb >> 8 & 255),
              db = p->Blue - (int)(rgb & 255);
    return 2 * dr * dr + 4 * dg * dg + 3 * db * db; /* green counts most to the eye */
}

static int nearest(const GifColorType *pal, int n, uint32_t rgb)
{
    int best = 0, bd = 1 << 30;
    for (int i = 0; i < n; ++i) {
        const int d = dist(&pal[i], rgb);
        if (d < bd) bd = d, best = i;
    }
    return best;
}

static GifColorType color_of(uint32_t rgb)
{
    return (GifColorType){.Red = rgb >> 16 & 255, .Green = rgb >> 8 & 255, .Blue = rgb & 255};
}

/* The palette of the pixels in [x0, x1) x [y0, y1): every colour when there are at most
 * 256; else the POPULAR most used (flat panels, cells), RAMP_STOPS stops of the heatmap
 * ramp, and the rest one by one: the colour worst served so far (its distance to the
 * palette times the root of its pixel count), so a small marker in a colour of its own
 * keeps it. */
#define POPULAR 160
static int make_palette(vw_gif *g, const uint32_t *rgb, int x0, int y0, int x1, int y1, GifColorType pal[256])
{
    uint32_t n = 0;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            uint32_t *v = slot(g, rgb[(size_t)y * g->w + x]);
            if (v) ++*v;
        }
    for (uint32_t i = 0; i < g->nused; ++i) {
        g->hist[n].rgb = g->key[g->used[i]] - 1;
        g->hist[n++].count = g->val[g->used[i]];
    }
    int np = 0;
    if (n <= 256) {
        for (uint32_t i = 0; i < n; ++i) pal[np++] = color_of(g->hist[i].rgb);
    } else {
        qsort(g->hist, n, sizeof *g->hist, by_count);
        for (uint32_t i = 0; i < POPULAR; ++i) pal[np++] = color_of(g->hist[i].rgb);
        for (int k = 0; k < RAMP_STOPS; ++k) pal[np++] = color_of(vw_colormap((double)k / (RAMP_STOPS - 1)));
        /* the distance of each other colour to the palette so far */
        for (uint32_t i = POPULAR; i < n; ++i)
            g->hist[i].dist = (uint32_t)dist(&pal[nearest(pal, np, g->hist[i].rgb)], g->hist[i].rgb);
        while (np < 256) {
            uint32_t worst = POPULAR;
            double wd = -1;
            for (uint32_t i = POPULAR; i < n; ++i) {
                const double d = sqrt((double)g->hist[i].dist * (double)g->hist[i].count);
                if (d > wd) wd = d, worst = i;
            }
            if (wd <= 0) break;
            pal[np] = color_of(g->hist[worst].rgb);
            for (uint32_t i = POPULAR; i < n; ++i) {
                const uint32_t d = (uint32_t)dist(&pal[np], g->hist[i].rgb);
                if (d < g->hist[i].dist) g->hist[i].dist = d;
            }
            np++;
        }
    }
    /* every colour seen gets its palette index (+1), the nearest one when not in it */
    for (uint32_t i = 0; i < g->nused; ++i) g->val[g->used[i]] = (uint32_t)nearest(pal, np, g->key[g->used[i]] - 1) + 1;
    return np;
}

static void clear_table(vw_gif *g)
{
    for (uint32_t i = 0; i < g->nused; ++i) g->key[g->used[i]] = EMPTY;
    g->nused = 0;
}

int vw_gif_frame(vw_gif *g, const uint32_t *px, int pitch, int delay_ms)
{
    /* this frame as 0xRRGGBB, and the rectangle that differs from the previous one */
    int x0 = g->w, y0 = g->h, x1 = 0, y1 = 0;
    for (int y = 0; y < g->h; ++y) {
        const uint32_t *row = (const uint32_t *)((const uint8_t *)px + (size_t)y * (size_t)pitch);
        uint32_t *prev = g->prev + (size_t)y * g->w;
        for (int x = 0; x < g->w; ++x) {
            const uint32_t c = row[x] & 0xFFFFFFu;
            if (g->frames && prev[x] == c) continue;
            prev[x] = c;
            if (x < x0) x0 = x;
            if (x >= x1) x1 = x + 1;
            if (y < y0) y0 = y;
            if (y >= y1) y1 = y + 1;
        }
    }
    if (x1 <= x0) x0 = y0 = 0, x1 = y1 = 1; /* nothing changed: one pixel, for the delay */
    GifColorType pal[256];
    const int np = make_palette(g, g->prev, x0, y0, x1, y1, pal);
    int bits = 1;
    while ((1 << bits) < np) ++bits;
    ColorMapObject *map = GifMakeMapObject(1 << bits, NULL);
    if (!map) return ks_fail(KS_ENOMEM, "out of memory for a GIF palette");
    memset(map->Colors, 0, sizeof(GifColorType) * (size_t)(1 << bits));
    memcpy(map->Colors, pal, sizeof(GifColorType) * (size_t)np);
    GraphicsControlBlock gcb = {.DisposalMode = DISPOSE_DO_NOT,
                                .UserInputFlag = false,
                                .DelayTime = (delay_ms + 5) / 10 < 2 ? 2 : (delay_ms + 5) / 10,
                                .TransparentColor = NO_TRANSPARENT_COLOR};
    GifByteType ext[4];
    const size_t len = EGifGCBToExtension(&gcb, ext);
    int rc = KS_OK;
    if (EGifPutExtension(g->gif, GRAPHICS_EXT_FUNC_CODE, (int)len, ext) != GIF_OK ||
        EGifPutImageDesc(g->gif, x0, y0, x1 - x0, y1 - y0, false, map) != GIF_OK)
        rc = gif_error(g, 0);
    for (int y = y0; y < y1 && !rc; ++y) {
        for (int x = x0; x < x1; ++x) {
            const uint32_t c = g->prev[(size_t)y * g->w + x], *v = slot(g, c);
            g->line[x - x0] = (GifPixelType)(v ? *v - 1 : (uint32_t)nearest(pal, np, c)); /* table full */
        }
        if (EGifPutLine(g->gif, g->line, x1 - x0) != GIF_OK) rc = gif_error(g, 0);
    }
    GifFreeMapObject(map);
    clear_table(g);
    g->frames++;
    return rc;
}

static void release(vw_gif *g)
{
    free(g->prev);
    free(g->key);
    free(g->val);
    free(g->used);
    free(g->line);
    free(g->hist);
    free(g);
}

int vw_gif_close(vw_gif *g)
{
    int err = 0;
    if (EGifCloseFile(g->gif, &err) != GIF_OK) {
        const int rc = ks_fail(KS_EIO, "cannot write %s: %s%s%s", g->out.path, GifErrorString(err), g->werr ? ": " : "",
                               g->werr ? strerror(g->werr) : "");
        ks_out_abort(&g->out);
        release(g);
        return rc;
    }
    const int rc = ks_out_commit(&g->out);
    release(g);
    return rc;
}

void vw_gif_abort(vw_gif *g)
{
    if (!g) return;
    int err = 0;
    if (g->gif) EGifCloseFile(g->gif, &err);
    if (g->out.f) ks_out_abort(&g->out);
    release(g);
}
