/* vw_app.c - `kscope view`: opens the trace, indexes it (in a thread, so the first frame
 * shows at once), then runs events -> update -> draw in a window, or renders PNG frames
 * headless with SDL's software renderer (no display, no video driver needed). Both paths
 * draw with the same software renderer, so a headless frame is what the window shows. */
#define _POSIX_C_SOURCE 200809L
#include "vw_app.h"

#include <SDL.h>
#include <SDL_image.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../trace/ks_file.h"
#include "vw_describe.h"
#include "vw_draw.h"
#include "vw_gallery.h"
#include "vw_live.h"
#ifdef KS_HAVE_GIF
#include "vw_gif.h"
#endif
#include "vw_script.h"


void vw_options_init(vw_options *o)
{
    memset(o, 0, sizeof *o);
    o->every = 1;
    o->max_frames = 1000;
    o->shot_dir = ".";
    o->width = 1280;
    o->height = 800;
    o->delay_ms = 500;
}

typedef struct indexer {
    const ks_trace *tr;
    vw_index idx;
    vw_progress progress;
    int rc;
    char error[200];
    SDL_Thread *thread;
} indexer;

static int index_thread(void *arg)
{
    indexer *ix = arg;
    ix->rc = vw_index_build(&ix->idx, ix->tr, &ix->progress);
    if (ix->rc) snprintf(ix->error, sizeof ix->error, "%s", ks_error_message());
    ix->progress.permille = 1000;
    return 0;
}

/* A growing memory buffer as an SDL_RWops that SDL_image encodes a PNG into: nothing
 * touches the disk until the whole image is in memory. */
typedef struct png_mem {
    unsigned char *data;
    size_t len, cap, pos;
    int failed; /* out of memory: the encoder may not check what write returns */
} png_mem;

static size_t SDLCALL mem_write(SDL_RWops *rw, const void *p, size_t size, size_t num)
{
    png_mem *m = rw->hidden.unknown.data1;
    if (!size || !num) return 0;
    if (num > SIZE_MAX / size || size * num > SIZE_MAX - m->pos) {
        m->failed = 1;
        return 0;
    }
    const size_t n = size * num, end = m->pos + n;
    if (end > m->cap) {
        size_t cap = m->cap ? m->cap : 1 << 16;
        while (cap < end) cap = cap > SIZE_MAX / 2 ? end : cap * 2;
        unsigned char *d = realloc(m->data, cap);
        if (!d) {
            m->failed = 1;
            return 0;
        }
        m->data = d, m->cap = cap;
    }
    if (m->pos > m->len) memset(m->data + m->len, 0, m->pos - m->len);
    memcpy(m->data + m->pos, p, n);
    m->pos = end;
    if (end > m->len) m->len = end;
    return num;
}

static Sint64 SDLCALL mem_seek(SDL_RWops *rw, Sint64 offset, int whence)
{
    png_mem *m = rw->hidden.unknown.data1;
    const Sint64 base = whence == RW_SEEK_SET ? 0 : whence == RW_SEEK_CUR ? (Sint64)m->pos : (Sint64)m->len;
    if (offset < -base || offset > INT64_MAX / 2 - base) return -1;
    m->pos = (size_t)(base + offset);
    return (Sint64)m->pos;
}

static Sint64 SDLCALL mem_size(SDL_RWops *rw) { return (Sint64)((png_mem *)rw->hidden.unknown.data1)->len; }

static size_t SDLCALL mem_read(SDL_RWops *rw, void *p, size_t size, size_t num)
{
    (void)rw, (void)p, (void)size, (void)num;
    return 0;
}

static int SDLCALL mem_close(SDL_RWops *rw)
{
    SDL_FreeRW(rw);
    return 0;
}

/* Encodes the surface as PNG in memory, then writes it through ks_out
 * (trace/ks_file.h): a temporary file beside the target, flushed, synced and renamed
 * onto it only when every byte is on disk. A full disk or `ulimit -f` fails with one
 * line and leaves the previous file as it was; no device, FIFO or link is replaced. */
static int save_png(SDL_Surface *surf, const char *path)
{
    png_mem m = {0};
    int rc = ks_out_check(path);
    if (rc) return rc;
    SDL_RWops *rw = SDL_AllocRW();
    if (!rw) return ks_fail(KS_ENOMEM, "cannot write %s: %s", path, SDL_GetError());
    rw->type = SDL_RWOPS_UNKNOWN;
    rw->size = mem_size, rw->seek = mem_seek, rw->read = mem_read, rw->write = mem_write, rw->close = mem_close;
    rw->hidden.unknown.data1 = &m;
    const int bad = IMG_SavePNG_RW(surf, rw, 0) != 0;
    SDL_FreeRW(rw);
    if (bad || m.failed || !m.len) {
        free(m.data);
        return ks_fail(KS_EIO, "cannot write %s: %s", path, m.failed ? "out of memory" : IMG_GetError());
    }
    ks_out_file o;
    if (!(rc = ks_out_open(&o, path))) {
        if ((rc = ks_out_write(&o, m.data, m.len))) ks_out_abort(&o);
        else rc = ks_out_commit(&o);
    }
    free(m.data);
    return rc;
}

/* the same for the gallery (vw_gallery.h) */
int vw_save_png(SDL_Surface *surf, const char *path) { return save_png(surf, path); }

/* The text size for a w x h frame: --text-size, else derived from the size. */
static int text_px(const vw_options *o, int w, int h) { return o->text_size > 0 ? o->text_size : vw_text_px(w, h); }

/* The frame's layout: the viewer's, or the shown slide's (each slide is laid out for its
 * own text: vw_layout_for_state), with the value font's metrics the drawing uses. */
static void relayout(vw_layout *L, const vw_state *s, const vw_draw *d, int w, int h) { vw_draw_layout(d, L, s, w, h); }

/* The options that set up the state: order, mode, unit, go-to. */
static int configure(vw_state *s, const vw_options *o)
{
    if (o->order && vw_set_order(s, o->order)) return KS_EINVAL;
    if (o->mode && vw_set_mode(s, o->mode)) return KS_EINVAL;
    if (o->unit) {
        static const char *units[] = {"event", "item", "thread", "warp", "block", "field"};
        int u = -1;
        for (int i = 0; i < VW_NUNITS; ++i)
            if (!strcmp(o->unit, units[i])) u = i;
        if (u < 0) return ks_fail(KS_EINVAL, "unknown unit '%s' (event, item, thread, warp, block, field)", o->unit);
        s->unit = (vw_unit)u;
    }
    s->title = o->title;
    if (o->nslides) vw_story_set(s, o->slides, o->nslides);
    if (o->goto_spec && vw_goto(s, o->goto_spec)) return KS_EINVAL;
    return KS_OK;
}

/* Makes `dir` (or accepts it when it exists and is writable). */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && access(dir, W_OK) != 0) return ks_fail(KS_EIO, "cannot create the folder %s", dir);
    return KS_OK;
}

/* Where a headless sequence goes: PNG files in a folder, or frames of one GIF. */
typedef struct frame_sink {
    const vw_options *o;
    SDL_Surface *surf;
    int created; /* the PNG folder was made here: removed again if nothing went in */
#ifdef KS_HAVE_GIF
    vw_gif *gif;
#endif
} frame_sink;

static int sink_open(frame_sink *k, const vw_options *o, SDL_Surface *surf)
{
    memset(k, 0, sizeof *k);
    k->o = o;
    k->surf = surf;
    if (!o->gif) {
        k->created = mkdir(o->frames_dir, 0777) == 0;
        return make_dir(o->frames_dir);
    }
#ifdef KS_HAVE_GIF
    return vw_gif_open(&k->gif, o->gif, surf->w, surf->h);
#else
    return ks_fail(KS_EINVAL, "this build has no GIF export (install giflib: apt-get install libgif-dev, and rebuild)");
#endif
}

/* The frame on the surface: DIR/name as PNG, or the GIF's next frame. */
static int sink_put(frame_sink *k, const char *name)
{
#ifdef KS_HAVE_GIF
    if (k->gif) return vw_gif_frame(k->gif, k->surf->pixels, k->surf->pitch, k->o->delay_ms);
#endif
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", k->o->frames_dir, name);
    return save_png(k->surf, path);
}

/* Finishes the GIF (renamed onto its name only when every frame went in). */
static int sink_close(frame_sink *k, int rc)
{
    if (rc && k->created) rmdir(k->o->frames_dir); /* only when empty: whole frames stay */
#ifdef KS_HAVE_GIF
    if (k->gif && rc) vw_gif_abort(k->gif);
    else if (k->gif) rc = vw_gif_close(k->gif);
    k->gif = NULL;
#endif
    return rc;
}

/* One frame per slide, and one more with the answer shown for a slide with a question. */
static int story_frames(const vw_options *o, vw_state *s, vw_draw *d, vw_layout *L, SDL_Renderer *r, SDL_Surface *surf)
{
    frame_sink k;
    int rc = sink_open(&k, o, surf), n = 0;
    for (int i = 0; i < o->nslides && !rc; ++i) {
        for (int reveal = 0; reveal < 2 && !rc; ++reveal) {
            char name[64];
            if (reveal && !o->slides[i].question) break;
            vw_story_show(s, i);
            vw_story_reveal(s, reveal);
            relayout(L, s, d, surf->w, surf->h);
            vw_draw_frame(d, s, L, 1000);
            SDL_RenderPresent(r);
            snprintf(name, sizeof name, "step-%02d%s.png", i + 1, reveal ? "-answer" : "");
            rc = sink_put(&k, name);
            n++;
        }
    }
    rc = sink_close(&k, rc);
    if (!rc && o->gif) printf("%s: %d slides, %d ms each\n", o->gif, n, o->delay_ms);
    else if (!rc) printf("%d slides in %s (step-01.png ...)\n", n, o->frames_dir);
    return rc;
}

/* One frame every o->every positions from the current one, at most o->max_frames. */
static int sequence_frames(const vw_options *o, vw_state *s, vw_draw *d, const vw_layout *L, SDL_Renderer *r,
                           SDL_Surface *surf)
{
    frame_sink sink;
    int rc = sink_open(&sink, o, surf);
    uint64_t n = vw_state_len(s), start = s->pos, total = 0, k = 0;
    for (uint64_t p = start; p < n && total < o->max_frames; total++)
        p = p + o->every > p ? p + o->every : n; /* count frames without overflow */
    for (uint64_t p = start; p < n && k < total && !rc; ++k, p += o->every) {
        char name[64];
        vw_action seek = {.kind = VW_ACT_SEEK, .a = (int64_t)p, .b = 0};
        vw_apply(s, L, &seek);
        vw_draw_frame(d, s, L, 1000);
        SDL_RenderPresent(r);
        snprintf(name, sizeof name, "frame-%06llu.png", (unsigned long long)k);
        if ((rc = sink_put(&sink, name))) break;
        if (k % 100 == 99)
            fprintf(stderr, "kscope: view: %llu of %llu frames\n", (unsigned long long)k + 1,
                    (unsigned long long)total);
    }
    rc = sink_close(&sink, rc);
    const char *more = n > start && (n - start + o->every - 1) / o->every > total ? " - stopped at --max-frames" : "";
    if (!rc && o->gif) printf("%s: %llu frames, %d ms each%s\n", o->gif, (unsigned long long)k, o->delay_ms, more);
    else if (!rc) printf("%llu frames in %s (frame-000000.png ...)%s\n", (unsigned long long)k, o->frames_dir, more);
    return rc;
}

static int run_headless(const vw_options *o, const ks_trace *tr, const vw_action *script, size_t nscript)
{
    vw_index idx;
    vw_state s;
    vw_draw d;
    vw_layout L;
    static vw_live live; /* large: off the stack */
    int rc = vw_index_build(&idx, tr, NULL);
    if (rc) return rc;
    vw_state_init(&s, tr, &idx);
    if (!vw_live_init(&live, tr)) live.dir = o->shot_dir, s.live = &live;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, o->width, o->height, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!r) {
        rc = ks_fail(KS_ENOMEM, "cannot create a %dx%d frame: %s", o->width, o->height, SDL_GetError());
        goto out;
    }
    if (vw_draw_init(&d, r, text_px(o, o->width, o->height))) {
        rc = KS_EIO;
        goto out_renderer;
    }
    if ((rc = configure(&s, o))) goto out_draw;
    relayout(&L, &s, &d, o->width, o->height);
    for (size_t i = 0; i < nscript; ++i) vw_apply(&s, &L, &script[i]);
    if (o->png) {
        vw_draw_frame(&d, &s, &L, 1000);
        SDL_RenderPresent(r);
        if (!(rc = save_png(surf, o->png))) printf("%s\n", o->png);
    }
    if ((o->frames_dir || o->gif) && !rc)
        rc = o->nslides ? story_frames(o, &s, &d, &L, r, surf) : sequence_frames(o, &s, &d, &L, r, surf);
out_draw:
    vw_draw_free(&d);
out_renderer:
    SDL_DestroyRenderer(r);
out:
    SDL_FreeSurface(surf);
    vw_state_free(&s);
    if (s.live) vw_live_free(&live);
    vw_index_free(&idx);
    return rc;
}

static void screenshot(SDL_Renderer *r, const vw_options *o, vw_state *s)
{
    int w, h;
    char path[4200];
    SDL_GetRendererOutputSize(r, &w, &h);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    if (!surf || SDL_RenderReadPixels(r, NULL, SDL_PIXELFORMAT_ARGB8888, surf->pixels, surf->pitch)) {
        snprintf(s->message, sizeof s->message, "screenshot failed: %s", SDL_GetError());
        SDL_FreeSurface(surf);
        return;
    }
    for (int i = 1; i < 10000; ++i) {
        snprintf(path, sizeof path, "%s/kscope-shot-%03d.png", o->shot_dir, i);
        if (access(path, F_OK) != 0) break;
    }
    if (save_png(surf, path)) snprintf(s->message, sizeof s->message, "%s", ks_error_message());
    else {
        snprintf(s->message, sizeof s->message, "saved %.240s", path);
        printf("screenshot: %s\n", path);
        fflush(stdout);
    }
    SDL_FreeSurface(surf);
}

/* One SDL event as viewer actions (key, click, drag on the timeline, typing). */
static void translate(const SDL_Event *ev, vw_state *s, const vw_layout *L, int *dragging)
{
    vw_action a = {.kind = VW_ACT_NONE, .a = 0, .b = 0};
    switch (ev->type) {
    case SDL_QUIT: a.kind = VW_ACT_QUIT; break;
    case SDL_KEYDOWN: {
        const char *name = SDL_GetKeyName(ev->key.keysym.sym);
        int shift = (ev->key.keysym.mod & KMOD_SHIFT) != 0;
        if ((ev->key.keysym.mod & KMOD_CTRL) && ev->key.keysym.sym == SDLK_TAB) name = "Ctrl+Tab";
        if (vw_key_action(name, shift, &a)) a.kind = VW_ACT_NONE;
        if (s->prompt && a.kind != VW_ACT_ENTER && a.kind != VW_ACT_BACKSPACE && a.kind != VW_ACT_ESCAPE)
            a.kind = VW_ACT_NONE; /* typed characters arrive as SDL_TEXTINPUT */
        break;
    }
    case SDL_TEXTINPUT:
        if (s->prompt)
            for (const char *p = ev->text.text; *p; ++p) {
                vw_action t = {.kind = VW_ACT_TEXT, .a = (unsigned char)*p, .b = 0};
                vw_apply(s, L, &t);
            }
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button == SDL_BUTTON_LEFT) {
            a.kind = VW_ACT_CLICK;
            a.a = ev->button.x;
            a.b = ev->button.y;
            *dragging = vw_rect_contains(L->timeline, ev->button.x, ev->button.y);
        } else if (ev->button.button == SDL_BUTTON_RIGHT || ev->button.button == SDL_BUTTON_MIDDLE) {
            /* a right (or middle) drag on a heatmap pans it: *dragging 2 + panel */
            for (int p = 0; p < 2; ++p)
                if (vw_rect_contains(p ? L->output : L->input, ev->button.x, ev->button.y)) *dragging = 2 + p;
        }
        break;
    case SDL_MOUSEBUTTONUP: *dragging = 0; break;
    case SDL_MOUSEMOTION:
        if (*dragging >= 2) {
            a = (vw_action){.kind = VW_ACT_PAN, .a = ev->motion.xrel, .b = ev->motion.yrel, .c = *dragging};
            break;
        }
        a.kind = *dragging ? VW_ACT_SEEK : VW_ACT_HOVER;
        a.a = *dragging ? (int64_t)vw_timeline_pos(L->timeline, vw_state_len(s), ev->motion.x) : ev->motion.x;
        a.b = ev->motion.y;
        break;
    case SDL_MOUSEWHEEL: { /* zoom the panel under the pointer around the pointer */
        int mx, my;
        SDL_GetMouseState(&mx, &my);
        if (ev->wheel.y) a = (vw_action){.kind = VW_ACT_ZOOM, .a = ev->wheel.y > 0 ? 1 : -1, .b = mx, .c = my};
        break;
    }
    default: break;
    }
    if (a.kind != VW_ACT_NONE) vw_apply(s, L, &a);
}

static int run_window(const vw_options *o, const ks_trace *tr, const vw_action *script, size_t nscript)
{
    static indexer ix;
    vw_state s;
    vw_draw d;
    vw_layout L;
    int rc = KS_OK, dragging = 0, was_prompt = 0, shown_slide = -1, shown_reveal = -1;
    size_t next_step = 0;
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return ks_fail(KS_EIO, "no display (%s); render to a file with --headless --png OUT.png", SDL_GetError());
    char title[4200];
    if (o->title) snprintf(title, sizeof title, "kscope lesson: %s", o->title);
    else snprintf(title, sizeof title, "kscope view %s", o->path);
    SDL_Window *win = SDL_CreateWindow(title, SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, o->width, o->height,
                                       SDL_WINDOW_RESIZABLE);
    SDL_Renderer *r = win ? SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE) : NULL;
    if (!r) {
        rc = ks_fail(KS_EIO, "cannot open a window: %s", SDL_GetError());
        goto out;
    }
    SDL_SetWindowMinimumSize(win, VW_MIN_W, VW_MIN_H);
    int w, h;
    SDL_GetRendererOutputSize(r, &w, &h);
    int px = text_px(o, w, h);
    if (vw_draw_init(&d, r, px)) {
        rc = KS_EIO;
        goto out;
    }
    memset(&ix, 0, sizeof ix);
    ix.tr = tr;
    ix.thread = SDL_CreateThread(index_thread, "kscope-index", &ix);
    if (!ix.thread) index_thread(&ix);
    vw_state_init(&s, tr, NULL);
    static vw_live live;
    if (!vw_live_init(&live, tr)) live.dir = o->shot_dir, s.live = &live;
    relayout(&L, &s, &d, w, h);
    int configured = 0;
    Uint64 last = SDL_GetPerformanceCounter();
    while (!s.quit) {
        /* events */
        SDL_Event ev;
        while (SDL_PollEvent(&ev)) {
            if (ev.type == SDL_WINDOWEVENT && ev.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
                SDL_GetRendererOutputSize(r, &w, &h);
                if (text_px(o, w, h) != px && !vw_draw_set_text(&d, text_px(o, w, h))) px = text_px(o, w, h);
                relayout(&L, &s, &d, w, h);
            }
            translate(&ev, &s, &L, &dragging);
        }
        /* update: the index arriving, the options and script once it has, playback */
        if (!s.idx && ix.progress.permille >= 1000) {
            if (ix.thread) SDL_WaitThread(ix.thread, NULL);
            ix.thread = NULL;
            if (ix.rc) snprintf(s.message, sizeof s.message, "%s", ix.error);
            else vw_state_set_index(&s, &ix.idx);
        }
        if (!configured && ix.progress.permille >= 1000) {
            configured = 1;
            if (configure(&s, o)) {
                rc = KS_EINVAL;
                break;
            }
            relayout(&L, &s, &d, w, h); /* the title and slides are known now */
        }
        if (configured && next_step < nscript) vw_apply(&s, &L, &script[next_step++]);
        if (s.nslides && (s.slide != shown_slide || s.reveal != shown_reveal)) { /* a slide's own layout */
            shown_slide = s.slide, shown_reveal = s.reveal;
            relayout(&L, &s, &d, w, h);
        }
        if (s.prompt != was_prompt) {
            if (s.prompt) SDL_StartTextInput();
            else SDL_StopTextInput();
            was_prompt = s.prompt;
        }
        Uint64 now = SDL_GetPerformanceCounter();
        vw_tick(&s, (double)(now - last) / (double)SDL_GetPerformanceFrequency());
        last = now;
        /* draw */
        vw_draw_frame(&d, &s, &L, s.idx ? 1000 : ix.progress.permille);
        if (s.want_shot) {
            s.want_shot = 0;
            screenshot(r, o, &s);
        }
        SDL_RenderPresent(r);
        SDL_Delay(s.playing || !configured ? 1 : 10);
    }
    ix.progress.cancel = 1;
    if (ix.thread) SDL_WaitThread(ix.thread, NULL);
    vw_draw_free(&d);
    vw_state_free(&s);
    if (s.live) vw_live_free(&live);
    vw_index_free(&ix.idx);
out:
    if (r) SDL_DestroyRenderer(r);
    if (win) SDL_DestroyWindow(win);
    SDL_Quit();
    return rc;
}

/* Before the trace is opened: --png and --gif can be written (regular files or none, in
 * folders that exist), neither replaces the input (the trace, or a lesson's file) nor the
 * other, and the --frames folder exists or can be made. */
static int check_outputs(const vw_options *o)
{
    const char *out[2] = {o->png, o->gif}, *flag[2] = {"--png", "--gif"};
    for (int i = 0; i < 2; ++i) {
        if (!out[i]) continue;
        if (ks_out_check(out[i])) return KS_EIO;
        if (o->path && ks_same_path(out[i], o->path))
            return ks_fail(KS_EINVAL, "%s %s would replace the input %s", flag[i], out[i], o->path);
    }
    if (o->png && o->gif && ks_same_path(o->png, o->gif))
        return ks_fail(KS_EINVAL, "--png and --gif both name %s; give them different names", o->png);
    if (o->frames_dir && !o->gif && ks_out_dir_check(o->frames_dir)) return KS_EIO;
    return KS_OK;
}

int vw_main(const vw_options *o)
{
    static ks_trace tr;
    vw_action *script = NULL;
    size_t nscript = 0;
    if (o->width < VW_MIN_W || o->height < VW_MIN_H || o->width > 16384 || o->height > 16384)
        return ks_fail(KS_EINVAL, "--size must be between %dx%d and 16384x16384", VW_MIN_W, VW_MIN_H);
    if (o->every < 1) return ks_fail(KS_EINVAL, "--every must be >= 1");
    if (check_outputs(o)) return KS_EIO;
    if (o->keys && vw_script_parse(o->keys, &script, &nscript)) return KS_EINVAL;
    if (o->trace) {
        int rc = o->headless ? run_headless(o, o->trace, script, nscript) : run_window(o, o->trace, script, nscript);
        free(script);
        return rc;
    }
    if (vw_trace_open(o->path, &tr)) { /* header and chunk index: events decode as they are needed */
        free(script);
        return KS_EFORMAT;
    }
    int rc = o->headless ? run_headless(o, &tr, script, nscript) : run_window(o, &tr, script, nscript);
    vw_trace_close(&tr);
    free(script);
    return rc;
}
