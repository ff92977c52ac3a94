/* bench_view - the viewer's speed on big traces, headless at 1280x800 (the same software
 * renderer the window uses):
 *   open:   ks_trace_open + the first frame, against reading the whole file once (the
 *           peer: what a viewer that parses everything at open would pay at the least);
 *   index:  the background index build (orders, items, aggregates);
 *   frames: playing (1000 events a frame), scrubbing (a random position a frame) and
 *           stepping by thread in iteration-major order, against the 16.7 ms of 60 fps.
 * usage: bench_view [DIR] [--events-1g]  (default DIR /tmp; the traces are deleted after)
 */
#define _POSIX_C_SOURCE 200809L
#include <SDL.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/run_trace.h"
#include "../viewer/vw_draw.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void set(ks_run *r, const ks_op *op, const char *name, int64_t a, int64_t b)
{
    int i = ks_op_param(op, name);
    r->value[i][0] = a;
    r->value[i][1] = b;
}

/* im2col on (1, C, 64, 64), 3x3, padding 1: 19 events per work item, C * 4096 items. */
static int write_trace(const char *path, int64_t channels)
{
    const ks_op *op = ks_op_find("im2col");
    static ks_run r;
    ks_trace tr;
    ks_run_init(&r, op);
    set(&r, op, "channels", channels, 0);
    set(&r, op, "input-size", 64, 64);
    set(&r, op, "kernel-size", 3, 3);
    set(&r, op, "padding", 1, 1);
    r.pattern = KS_PAT_RANDOM;
    r.seed = 7;
    r.launch.threads = 512;
    r.launch.block_cap = 64; /* threads loop: iteration-major differs from thread-major */
    r.sink = ks_host_sink_create(1ULL << 26, ks_filter_all());
    int rc = r.sink ? ks_run_execute(&r) : KS_ENOMEM;
    if (!rc) {
        ks_trace_from_run(op, &r, &tr);
        rc = ks_trace_write(path, &tr);
    }
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
    return rc;
}

/* The peer for opening: read every byte of the file once (from the page cache). */
static double read_all(const char *path)
{
    static char buf[1 << 20];
    double t0 = now();
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    unsigned long long sum = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) sum += (unsigned char)buf[n - 1];
    close(fd);
    if (sum == 1) fprintf(stderr, " ");
    return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct frames {
    double mean, p99;
} frames;

/* Draws n frames, calling move before each; returns mean and 99th percentile. */
static frames run_frames(vw_draw *d, vw_state *s, const vw_layout *L, int n, int how)
{
    double *t = malloc((size_t)n * sizeof *t), sum = 0;
    uint64_t len = vw_state_len(s), seed = 12345;
    for (int i = 0; i < n; ++i) {
        double t0 = now();
        if (how == 0) { /* playing: 1000 events a frame */
            s->playing = 1;
            s->speed = 60000;
            vw_tick(s, 1.0 / 60);
        } else if (how == 1) { /* scrubbing */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            vw_action a = {.kind = VW_ACT_SEEK, .a = (int64_t)((seed >> 33) % len), .b = 0};
            vw_apply(s, L, &a);
        } else { /* stepping by thread */
            vw_action a = {.kind = VW_ACT_STEP, .a = 1, .b = 0};
            vw_apply(s, L, &a);
        }
        vw_draw_frame(d, s, L, 1000);
        SDL_RenderPresent(d->r);
        t[i] = now() - t0;
        sum += t[i];
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    frames f = {.mean = sum / n, .p99 = t[(int)(n * 0.99)]};
    free(t);
    return f;
}

static int bench_one(const char *dir, int64_t channels, int frames_too)
{
    char path[512];
    static ks_trace tr;
    snprintf(path, sizeof path, "%s/bench_view_%lld.kst", dir, (long long)channels);
    double t0 = now();
    if (write_trace(path, channels)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    double t_write = now() - t0;
    double t_read = read_all(path);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    static vw_draw d;
    static vw_state s;
    static vw_index idx;
    vw_layout L;
    if (!r || vw_draw_init(&d, r, 13)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    vw_layout_compute(&L, 1280, 800, d.font.line);
    t0 = now();
    if (ks_trace_open(path, &tr)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    vw_state_init(&s, &tr, NULL);
    vw_draw_frame(&d, &s, &L, 0);
    SDL_RenderPresent(r);
    double t_open = now() - t0;
    t0 = now();
    if (vw_index_build(&idx, &tr, NULL)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    double t_index = now() - t0;
    printf("trace %lld events, %.0f MB (written in %.1f s)\n", (long long)tr.nevents, (double)tr.map_size / 1e6,
           t_write);
    printf("  open + first frame  %8.1f ms   read the file once %8.1f ms   ratio %.4f\n", t_open * 1e3, t_read * 1e3,
           t_open / t_read);
    printf("  index build         %8.1f ms   (in the background; the window stays live)\n", t_index * 1e3);
    if (frames_too) {
        vw_state_set_index(&s, &idx);
        vw_set_order(&s, "recorded");
        static const char *names[] = {"playing 1000 ev/frame", "scrubbing (random)", "step by thread, iter-major"};
        for (int how = 0; how < 3; ++how) {
            if (how == 2) {
                vw_set_order(&s, "iter");
                s.unit = VW_UNIT_THREAD;
            }
            frames f = run_frames(&d, &s, &L, 300, how);
            printf("  %-27s mean %6.2f ms  p99 %6.2f ms  = %5.0f fps  (%.2f of the 16.7 ms budget)\n", names[how],
                   f.mean * 1e3, f.p99 * 1e3, 1.0 / f.mean, f.p99 / (1.0 / 60));
        }
    }
    vw_index_free(&idx);
    vw_state_free(&s);
    ks_trace_close(&tr);
    vw_draw_free(&d);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    remove(path);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "/tmp";
    int big = 0;
    for (int i = 1; i < argc; ++i) big |= !strcmp(argv[i], "--events-1g");
    printf("bench_view: headless 1280x800, software renderer\n");
    if (bench_one(dir, 128, 1)) return 1;        /* 128 * 4096 * 19 = 9.96 M events, 637 MB */
    if (big && bench_one(dir, 216, 0)) return 1; /* 16.8 M events, 1.08 GB */
    return 0;
}
