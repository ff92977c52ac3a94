/* image.c - PNG (libpng's simplified API, when found at configure time) and binary
 * PGM/PPM (P5/P6, written by most tools: `convert photo.jpg photo.ppm`) into a tensor. */
#include "image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "ks_file.h"

#ifdef KS_HAVE_PNG
#include <png.h>
#endif

/* 8-bit interleaved pixels, ch channels */
typedef struct raw_image {
    int64_t h, w;
    int ch;
    unsigned char *px;
} raw_image;

static int pnm_token(FILE *f, int64_t *v)
{
    int c;
    do {
        c = fgetc(f);
        if (c == '#')
            while (c != '\n' && c != EOF) c = fgetc(f);
    } while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    if (c < '0' || c > '9') return -1;
    *v = 0;
    while (c >= '0' && c <= '9') {
        *v = *v * 10 + (c - '0');
        if (*v > (1 << 24)) return -1;
        c = fgetc(f);
    }
    return 0; /* the single whitespace after the last header token is consumed */
}

static int read_pnm(const char *path, FILE *f, raw_image *im)
{
    char magic[2];
    int64_t maxval;
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' || (magic[1] != '5' && magic[1] != '6'))
        return ks_fail(KS_EFORMAT, "%s: not a PNG or a binary PGM/PPM (P5/P6) image", path);
    im->ch = magic[1] == '5' ? 1 : 3;
    if (pnm_token(f, &im->w) || pnm_token(f, &im->h) || pnm_token(f, &maxval) || im->w < 1 || im->h < 1 || maxval < 1 ||
        maxval > 65535)
        return ks_fail(KS_EFORMAT, "%s: bad PGM/PPM header", path);
    const int bytes = maxval > 255 ? 2 : 1;
    if (im->h * im->w > KS_IMAGE_MAX_PIXELS)
        return ks_fail(KS_EFORMAT, "%s: %lldx%lld pixels, more than the %lld this reader takes", path, (long long)im->w,
                       (long long)im->h, (long long)KS_IMAGE_MAX_PIXELS);
    const size_t n = (size_t)im->h * (size_t)im->w * (size_t)im->ch;
    long at = ftell(f);
    if (at < 0 || fseek(f, 0, SEEK_END) != 0 || ftell(f) - at < (long)(n * (size_t)bytes) ||
        fseek(f, at, SEEK_SET) != 0)
        return ks_fail(KS_EFORMAT, "%s: truncated pixel data (%lldx%lld needs %zu bytes)", path, (long long)im->w,
                       (long long)im->h, n * (size_t)bytes);
    unsigned char *buf = malloc(n * (size_t)bytes);
    im->px = malloc(n);
    if (!buf || !im->px) {
        free(buf);
        return ks_fail(KS_ENOMEM, "%s: out of memory", path);
    }
    if (fread(buf, (size_t)bytes, n, f) != n) {
        free(buf);
        return ks_fail(KS_EFORMAT, "%s: truncated pixel data", path);
    }
    for (size_t i = 0; i < n; ++i) {
        unsigned v = bytes == 2 ? (unsigned)buf[2 * i] << 8 | buf[2 * i + 1] : buf[i];
        im->px[i] = (unsigned char)(v * 255u / (unsigned)maxval);
    }
    free(buf);
    return KS_OK;
}

#ifdef KS_HAVE_PNG
static int read_png(const char *path, FILE *f, raw_image *im)
{
    png_image p;
    memset(&p, 0, sizeof p);
    p.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_stdio(&p, f)) return ks_fail(KS_EFORMAT, "%s: %s", path, p.message);
    if ((int64_t)p.width * p.height > KS_IMAGE_MAX_PIXELS) {
        png_image_free(&p);
        return ks_fail(KS_EFORMAT, "%s: %ux%u pixels, more than the %lld this reader takes", path, p.width, p.height,
                       (long long)KS_IMAGE_MAX_PIXELS);
    }
    p.format = PNG_FORMAT_RGB;
    im->ch = 3;
    im->w = p.width;
    im->h = p.height;
    im->px = malloc(PNG_IMAGE_SIZE(p));
    if (!im->px) {
        png_image_free(&p);
        return ks_fail(KS_ENOMEM, "%s: out of memory", path);
    }
    if (!png_image_finish_read(&p, NULL, im->px, 0, NULL)) return ks_fail(KS_EFORMAT, "%s: %s", path, p.message);
    return KS_OK;
}
#endif

int ks_image_read(const char *path, int gray, int64_t h, int64_t w, ks_tensor *t)
{
    raw_image im = {0};
    unsigned char sig[8] = {0};
    if (h > 0 && w > 0 && (h > KS_IMAGE_MAX_PIXELS || w > KS_IMAGE_MAX_PIXELS || h * w > KS_IMAGE_MAX_PIXELS))
        return ks_fail(KS_EINVAL, "%s: a %lldx%lld picture is more than the %lld pixels this reader makes", path,
                       (long long)h, (long long)w, (long long)KS_IMAGE_MAX_PIXELS);
    FILE *f = ks_in_fopen(path); /* a FIFO is refused, not waited on */
    if (!f) return KS_EIO;
    size_t got = fread(sig, 1, 8, f);
    int is_png = got == 8 && !memcmp(sig, "\x89PNG\r\n\x1a\n", 8);
    int rc;
    if (is_png) {
#ifdef KS_HAVE_PNG
        rewind(f);
        rc = read_png(path, f, &im);
        fclose(f);
#else
        fclose(f);
        rc = ks_fail(KS_EFORMAT,
                     "%s: this build reads PNG only with libpng (apt-get install "
                     "libpng-dev); convert it to PPM",
                     path);
#endif
    } else {
        rewind(f);
        rc = read_pnm(path, f, &im);
        fclose(f);
    }
    if (rc) {
        free(im.px);
        return rc;
    }
    if (h <= 0 || w <= 0) h = im.h, w = im.w;
    const int C = gray || im.ch == 1 ? 1 : 3;
    t->dtype = KS_F32;
    t->ndim = 4;
    t->shape[0] = 1, t->shape[1] = C, t->shape[2] = h, t->shape[3] = w;
    if ((rc = ks_tensor_alloc(t))) {
        free(im.px);
        return rc;
    }
    float *out = t->data;
    /* output pixel (y, x) averages source rows [y*H/h, (y+1)*H/h) and columns likewise */
    for (int64_t y = 0; y < h; ++y) {
        int64_t y0 = y * im.h / h, y1 = (y + 1) * im.h / h;
        if (y1 <= y0) y1 = y0 + 1;
        for (int64_t x = 0; x < w; ++x) {
            int64_t x0 = x * im.w / w, x1 = (x + 1) * im.w / w;
            if (x1 <= x0) x1 = x0 + 1;
            for (int c = 0; c < C; ++c) {
                double sum = 0;
                int64_t n = 0;
                for (int64_t sy = y0; sy < y1; ++sy)
                    for (int64_t sx = x0; sx < x1; ++sx) {
                        const unsigned char *p = im.px + (sy * im.w + sx) * im.ch;
                        if (C == 3) sum += p[c];
                        else if (im.ch == 1) sum += p[0];
                        else sum += (p[0] + p[1] + p[2]) / 3.0;
                        n++;
                    }
                out[(c * h + y) * w + x] = (float)(sum / (double)n / 255.0);
            }
        }
    }
    free(im.px);
    return KS_OK;
}
