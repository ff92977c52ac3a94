/* The .cu front end's recording speed (docs/cuda-c.md) against the built-in traced
 * im2col, in one run: recorded events per second of
 *   - im2col traced every event (N1 C32 64x64, k3 p1 s1), the built-in body into a host sink;
 *   - a 16M-element vector add (`kscope run vadd.cu`, grid-stride, 4096 x 256 threads);
 *   - a 4096 x 4096 tiled transpose with __syncthreads (32 x 32 tiles, blocks of 32 x 8).
 * The .cu rows time ks_cu_exec_run: the child simulating and recording, and kscope
 * copying the events out, not the compile nor writing a .kst; every row is its best of 3. Goal: each .cu row at least
 * half the im2col row's events per second. Usage: bench_cu [--small] (1M elements and
 * 1024 x 1024, for a quick look). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/cuda_c/cu_run.h"
#include "../kernels/im2col/im2col_body.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double im2col_events_per_s(void)
{
    ks_im2col_params p = {.batch = 1,
                          .channels = 32,
                          .height = 64,
                          .width = 64,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    ks_im2col_geom g;
    if (ks_im2col_geometry(&p, &g)) return 0;
    float *src = calloc((size_t)g.image_numel, 4), *dst = calloc((size_t)g.columns_numel, 4);
    double best = 0;
    for (int r = 0; r < 3 && src && dst; ++r) {
        ks_sink *sink = ks_host_sink_create(1ULL << 27, ks_filter_all());
        ks_launch l = {0};
        const double t0 = now();
        ks_im2col_sim(&p, src, dst, &l, sink);
        const double rate = (double)ks_sink_count(sink) / (now() - t0);
        if (rate > best) best = rate;
        ks_host_sink_free(sink);
    }
    free(src), free(dst);
    return best;
}

static const char *const k_src =
    "__global__ void vadd(const float *a, const float *b, float *c, int n)\n"
    "{\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n"
    "__global__ void transpose(const float *in, float *out, int n)\n"
    "{\n"
    "    __shared__ float tile[32][33];\n"
    "    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;\n"
    "    for (int k = 0; k < 32; k += 8) tile[threadIdx.y + k][threadIdx.x] = in[(y + k) * n + x];\n"
    "    __syncthreads();\n"
    "    x = blockIdx.y * 32 + threadIdx.x, y = blockIdx.x * 32 + threadIdx.y;\n"
    "    for (int k = 0; k < 32; k += 8) out[(y + k) * n + x] = tile[threadIdx.x][threadIdx.y + k];\n"
    "}\n";

/* events per second of one .cu launch (0 on failure, with the message printed) */
static double cu_events_per_s(const char *file, const char *kernel, const uint32_t grid[3], const uint32_t block[3],
                              const char *const *args, int nargs, uint64_t *events, int warm)
{
    static ks_cu_exec e;
    ks_cu_build_opts o;
    memset(&o, 0, sizeof o);
    o.file = file, o.kernel = kernel, o.quiet = 1;
    ks_cu_exec_init(&e);
    e.quiet = 1, e.time_limit = 600, e.trace_limit = 1ull << 27, e.prefault = warm;
    memcpy(e.grid, grid, sizeof e.grid), memcpy(e.block, block, sizeof e.block);
    double rate = 0;
    for (int i = 0; i < nargs; ++i) {
        char param[32];
        const char *eq = strchr(args[i], '=');
        snprintf(param, sizeof param, "%.*s", (int)(eq - args[i]), args[i]);
        if (ks_cu_arg_parse(&e, param, eq + 1) < 0) goto fail;
    }
    if (ks_cu_build_run(&e.build, &o) || ks_cu_exec_run(&e)) goto fail;
    if (e.exit_status != 0) {
        fprintf(stderr, "bench_cu: %s: the run ended with status %d: %s\n", kernel, e.exit_status, e.ctl->error);
        goto out;
    }
    *events = e.nevents;
    rate = (double)e.nevents / e.seconds;
    fprintf(stderr, "bench_cu: %s%s: %.3f s wall, child %.3f s CPU (%.3g events per CPU second)\n", kernel,
            warm ? " (warm)" : "", e.seconds, e.child_cpu, e.child_cpu > 0 ? (double)e.nevents / e.child_cpu : 0);
    goto out;
fail:
    fprintf(stderr, "bench_cu: %s: %s\n", kernel, ks_error_message());
out:
    ks_cu_exec_free(&e);
    return rate;
}

int main(int argc, char **argv)
{
    const int small = argc > 1 && !strcmp(argv[1], "--small");
    const int64_t n = small ? 1 << 20 : 1 << 24, side = small ? 1024 : 4096;
    char path[] = "/tmp/bench_cu_XXXXXX.cu";
    FILE *f = fdopen(mkstemps(path, 3), "w");
    if (!f || fputs(k_src, f) < 0 || fclose(f)) return fprintf(stderr, "bench_cu: cannot write %s\n", path), 2;
    char a1[64], a2[64], a3[64], a4[32], t1[64], t2[64], t3[32];
    snprintf(a1, sizeof a1, "a=zeros:%lld", (long long)n), snprintf(a2, sizeof a2, "b=zeros:%lld", (long long)n);
    snprintf(a3, sizeof a3, "c=zeros:%lld", (long long)n), snprintf(a4, sizeof a4, "n=%lld", (long long)n);
    snprintf(t1, sizeof t1, "in=zeros:%lldx%lld", (long long)side, (long long)side);
    snprintf(t2, sizeof t2, "out=zeros:%lldx%lld", (long long)side, (long long)side);
    snprintf(t3, sizeof t3, "n=%lld", (long long)side);
    const char *vargs[] = {a1, a2, a3, a4}, *targs[] = {t1, t2, t3};
    const uint32_t vg[3] = {4096, 1, 1}, vb[3] = {256, 1, 1};
    const uint32_t tg[3] = {(uint32_t)(side / 32), (uint32_t)(side / 32), 1}, tb[3] = {32, 8, 1};
    uint64_t ve = 0, te = 0;
    const double base = im2col_events_per_s();
    double v[2] = {0, 0}, t[2] = {0, 0};
    for (int rep = 0; rep < 3; ++rep) /* best of 3, as the built-in row */
        for (int warm = 1; warm >= 0; --warm) {
            const double a = cu_events_per_s(path, "vadd", vg, vb, vargs, 4, &ve, warm);
            const double b = cu_events_per_s(path, "transpose", tg, tb, targs, 3, &te, warm);
            if (a > v[warm]) v[warm] = a;
            if (b > t[warm]) t[warm] = b;
        }
    remove(path);
    printf("simulator recording speed, one run, each row its best of 3 (events/s; goal: .cu rows >= 0.5 of im2col)\n");
    printf(
        "warm: event memory already mapped (the built-in's best of 3 reuses its heap); cold: first touch in the run\n");
    printf("%-44s %12s %12s %8s %12s %8s\n", "workload", "events", "warm ev/s", "ratio", "cold ev/s", "ratio");
    printf("%-44s %12s %12.3g %8.2f\n", "im2col traced every event (built-in)", "-", base, 1.0);
    printf("%-44s %12llu %12.3g %8.2f %12.3g %8.2f\n", small ? "vadd.cu 1M elements" : "vadd.cu 16M elements",
           (unsigned long long)ve, v[1], base > 0 ? v[1] / base : 0, v[0], base > 0 ? v[0] / base : 0);
    printf("%-44s %12llu %12.3g %8.2f %12.3g %8.2f\n",
           small ? "transpose.cu 1024x1024 tiled" : "transpose.cu 4096x4096 tiled", (unsigned long long)te, t[1],
           base > 0 ? t[1] / base : 0, t[0], base > 0 ? t[0] / base : 0);
    return v[1] > 0 && t[1] > 0 ? 0 : 1;
}
