/* view_fixture.h - shared by the viewer's SDL suites: a small im2col trace written to a
 * file, the headless renderer, pixel reads and running the CLI. */
#ifndef KS_VIEW_FIXTURE_H
#define KS_VIEW_FIXTURE_H

#include <SDL.h>
#include <SDL_image.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../trace/run_trace.h"
#include "../viewer/vw_colormap.h"
#include "../viewer/vw_draw.h"
#include "test_util.h"

/* im2col on (1, 2, 5, 5), 3x3 kernel, padding 1: every border tap reads padding. */
static inline void vf_write_trace(const char *path, const char *op, ks_im2col_params p, ks_filter f,
                                  unsigned long long limit)
{
    ks_run r;
    ks_trace tr;
    tu_run_traced(&r, op, &p, f, limit, 64, -1);
    ks_trace_from_run(ks_op_find(op), &r, &tr);
    ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
    tu_run_done(&r);
}

static inline ks_im2col_params vf_small(void)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 2,
                          .height = 5,
                          .width = 5,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    return p;
}

/* A headless frame: surface + software renderer + drawing context. */
typedef struct vf_frame {
    SDL_Surface *surf;
    SDL_Renderer *r;
    vw_draw d;
    vw_layout L;
} vf_frame;

static inline void vf_open_text(vf_frame *f, int w, int h, int text_px)
{
    f->surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    ck_assert_ptr_nonnull(f->surf);
    f->r = SDL_CreateSoftwareRenderer(f->surf);
    ck_assert_ptr_nonnull(f->r);
    ck_assert_msg(vw_draw_init(&f->d, f->r, text_px) == 0, "%s", ks_error_message());
    vw_layout_compute(&f->L, w, h, f->d.font.line);
}

static inline void vf_open(vf_frame *f, int w, int h) { vf_open_text(f, w, h, 13); }

static inline void vf_close(vf_frame *f)
{
    vw_draw_free(&f->d);
    SDL_DestroyRenderer(f->r);
    SDL_FreeSurface(f->surf);
}

/* A pixel of cell r's fill, clear of the number the viewer prints in its middle (text
 * centred in the cell, at most the cell's width less 4 px, one line high). */
#define VF_FILL_X(r) ((r).x + (r).w / 4)
#define VF_FILL_Y(r) ((r).y + (r).h / 5)

/* 0xRRGGBB at (x, y) of an ARGB8888 surface. */
static inline uint32_t vf_pixel(SDL_Surface *s, int x, int y)
{
    ck_assert(x >= 0 && y >= 0 && x < s->w && y < s->h);
    const uint32_t *row = (const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * s->pitch);
    return row[x] & 0xFFFFFF;
}

/* The same without the bounds check, for loops over whole frames: Check writes every
 * assertion's location to its pipe, a million writes a frame. (x, y) must lie inside. */
static inline uint32_t vf_at(const SDL_Surface *s, int x, int y)
{
    return ((const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * s->pitch))[x] & 0xFFFFFF;
}

/* How many pixels of the surface have colour col (0xRRGGBB). */
static inline int vf_count_colour(const SDL_Surface *s, uint32_t col)
{
    int n = 0;
    for (int y = 0; y < s->h; ++y)
        for (int x = 0; x < s->w; ++x) n += vf_at(s, x, y) == col;
    return n;
}

/* A PNG as an ARGB8888 surface (NULL if it cannot be read). */
static inline SDL_Surface *vf_load(const char *path)
{
    SDL_Surface *raw = IMG_Load(path);
    if (!raw) return NULL;
    SDL_Surface *s = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_ARGB8888, 0);
    SDL_FreeSurface(raw);
    return s;
}

/* Runs a shell command; returns its exit status (or -1). */
static inline int vf_sh(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A scratch folder /tmp/STEM_PID (made), and removing it with what is in it. */
static inline void vf_tmpdir(char *dir, size_t n, const char *stem)
{
    snprintf(dir, n, "/tmp/%s_%d", stem, (int)getpid());
    mkdir(dir, 0777);
}

static inline void vf_rmdir(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    vf_sh(cmd);
}

/* Draws s into frame f and presents it (the surface holds the frame). */
static inline void vf_draw(vf_frame *f, const vw_state *s)
{
    vw_draw_frame(&f->d, s, &f->L, 1000);
    SDL_RenderPresent(f->r);
}

#endif
