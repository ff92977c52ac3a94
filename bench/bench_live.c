/* bench_live - live parameters (viewer/vw_live.h) from key to redrawn frame, headless at
 * 1280x800 with the software renderer the window uses, on each operator's default trace:
 * a key ("." then "," in turn, so the sizes stay the defaults and one step up) re-runs the
 * operator on the simulator, indexes the new trace, refocuses, and the frame is drawn.
 * The parameter stepped is the operator's first integer row that both steps accept
 * (kernel-size where there is one). Budget: 50 ms.
 * usage: bench_live [--all]   (--all: also every row of every operator, one step each way)
 */
#define _POSIX_C_SOURCE 200809L
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/run_params.h"
#include "../trace/run_trace.h"
#include "../viewer/vw_draw.h"
#include "../viewer/vw_live.h"

#define REPS 60

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct bench {
    ks_run run;
    ks_trace tr;
    vw_index idx;
    vw_state s;
    vw_live live;
} bench;

static bench B; /* large: off the stack */

static int open_default(const ks_op *op)
{
    memset(&B, 0, sizeof B);
    ks_run_init(&B.run, op);
    if (!(B.run.sink = ks_host_sink_create(0, ks_filter_all())) || ks_run_execute(&B.run)) return -1;
    ks_trace_from_run(op, &B.run, &B.tr);
    if (vw_index_build(&B.idx, &B.tr, NULL)) return -1;
    vw_state_init(&B.s, &B.tr, &B.idx);
    if (vw_live_init(&B.live, &B.tr)) return -1;
    B.s.live = &B.live;
    B.live.open = 1;
    return 0;
}

static void close_default(void)
{
    vw_state_free(&B.s);
    vw_live_free(&B.live);
    vw_index_free(&B.idx);
    ks_host_sink_free(B.run.sink);
    ks_run_free(&B.run);
}

/* One key: the step of the selected row, dir +1 or -1; 0 when it re-ran. */
static int step(const vw_layout *L, int dir)
{
    const ks_trace *before = B.s.tr;
    vw_action a = {.kind = VW_ACT_LIVE, .a = VW_LIVE_STEP, .b = dir};
    vw_apply(&B.s, L, &a);
    return B.s.tr != before ? 0 : -1;
}

/* The row to bench: kernel-size, else the first integer row whose steps both run. */
static int pick_row(const vw_layout *L)
{
    const ks_op *op = B.live.op;
    const int k = ks_op_param(op, "kernel-size");
    for (int p = k >= 0 ? k : 0; p < op->nparams; ++p) {
        if (op->params[p].kind != KS_PARAM_INT) continue;
        B.live.sel = p;
        if (!step(L, 1) && !step(L, -1)) return p;
    }
    return -1;
}

/* Every row of the operator, one step up and one down: what happens. */
static void every_row(const vw_layout *L)
{
    const ks_op *op = B.live.op;
    for (int p = 0; p < op->nparams; ++p)
        for (int dir = 1; dir >= -1; dir -= 2) {
            char v[96];
            B.live.sel = p;
            const double t0 = now();
            const int ran = !step(L, dir);
            ks_run_param_text(B.live.vals, p, v, sizeof v);
            printf("    %-16s %s -> %-12s %-7s %6.2f ms  %.90s\n", op->params[p].name, dir > 0 ? "up  " : "down", v,
                   ran ? "re-ran" : "refused", (now() - t0) * 1e3, ran ? B.live.note : B.live.error);
        }
}

int main(int argc, char **argv)
{
    const int all = argc > 1 && !strcmp(argv[1], "--all");
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    static vw_draw d;
    vw_layout L;
    if (!r || vw_draw_init(&d, r, 13)) {
        fprintf(stderr, "bench_live: %s\n", ks_error_message());
        return 1;
    }
    vw_layout_compute(&L, 1280, 800, d.font.line);
    printf("bench_live: key -> re-run -> index -> frame, headless 1280x800, software renderer, %d keys each\n", REPS);
    printf("%-14s %-14s %8s %10s %10s %10s %10s\n", "operator", "parameter", "events", "re-run ms", "frame ms",
           "total ms", "p99 ms");
    int over = 0;
    for (int o = 0; o < ks_op_count(); ++o) {
        const ks_op *op = ks_op_at(o);
        if (open_default(op)) {
            printf("%-14s cannot run its defaults: %s\n", op->name, ks_error_message());
            close_default();
            continue;
        }
        const int p = pick_row(&L);
        if (p < 0) {
            printf("%-14s no integer parameter re-runs\n", op->name);
        } else {
            double t[REPS], run = 0, frame = 0;
            uint64_t events = 0;
            vw_draw_frame(&d, &B.s, &L, 1000); /* caches warm, as in the window */
            for (int i = 0; i < REPS; ++i) {
                const double t0 = now();
                step(&L, i % 2 ? -1 : 1);
                const double t1 = now();
                vw_draw_frame(&d, &B.s, &L, 1000);
                SDL_RenderPresent(r);
                const double t2 = now();
                run += t1 - t0, frame += t2 - t1, t[i] = t2 - t0;
                events += B.s.tr->nevents;
            }
            qsort(t, REPS, sizeof *t, cmp_double);
            const double total = (run + frame) / REPS;
            over += t[REPS * 99 / 100] > 0.050;
            printf("%-14s %-14s %8llu %10.2f %10.2f %10.2f %10.2f\n", op->name, op->params[p].name,
                   (unsigned long long)(events / REPS), run / REPS * 1e3, frame / REPS * 1e3, total * 1e3,
                   t[REPS * 99 / 100] * 1e3);
        }
        if (all) every_row(&L);
        close_default();
    }
    printf("%s\n", over ? "some operators are over the 50 ms budget" : "every operator within the 50 ms budget");
    vw_draw_free(&d);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    return 0;
}
