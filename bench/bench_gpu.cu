/* GPU: plain im2col/col2im effective bandwidth (bytes read once + bytes written, over
 * time) as a fraction of a device-to-device copy measured in the same run, and the traced
 * variant's slowdown with a filter that records nothing and with full tracing.
 * Each sample times 10 launches queued back to back between two CUDA events (so the
 * host's cost of issuing a launch, several microseconds, hides behind the GPU's work, as
 * in a stream of layers; the copy is timed the same way); times are medians of 20
 * samples per launch after a warm-up. The fully traced runs reset the sink before each
 * launch, inside the timed region. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/core/ks_error.h"
#include "../kernels/im2col/im2col_body.h"

#define CK(x)                                                                   \
    do {                                                                        \
        cudaError_t e_ = (x);                                                   \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "bench_gpu: %s: %s\n", #x, cudaGetErrorString(e_)); \
            exit(2);                                                            \
        }                                                                       \
    } while (0)
#define KS(x)                                                               \
    do {                                                                    \
        if ((x) != KS_OK) {                                                 \
            fprintf(stderr, "bench_gpu: %s: %s\n", #x, ks_error_message()); \
            exit(2);                                                        \
        }                                                                   \
    } while (0)

enum { REPS = 20, BATCH = 10 };

static int cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* which: 0 copy, 1 im2col, 2 col2im */
static float time_ms(int which, const ks_im2col_params *p, float *img, float *cols, float *copy_dst, size_t copy_bytes,
                     const ks_sink *sink)
{
    cudaEvent_t a, b;
    float t[REPS];
    ks_launch l = {0};
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = -3; r < REPS; ++r) {
        if (sink) KS(ks_cuda_sink_reset((ks_sink *)sink));
        CK(cudaEventRecord(a));
        for (int k = 0; k < BATCH; ++k) {
            if (sink && k > 0 && sink->filter.index_hi > 0) KS(ks_cuda_sink_reset((ks_sink *)sink));
            if (which == 0) CK(cudaMemcpyAsync(copy_dst, cols, copy_bytes, cudaMemcpyDeviceToDevice));
            else if (which == 1) KS(ks_im2col_cuda(p, img, cols, &l, sink, NULL));
            else KS(ks_col2im_cuda(p, cols, img, &l, sink, NULL));
        }
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        if (r >= 0) {
            CK(cudaEventElapsedTime(&t[r], a, b));
            t[r] /= BATCH;
        }
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    qsort(t, REPS, sizeof t[0], cmp);
    return t[REPS / 2];
}

static void bench_size(const ks_im2col_params *p, int traced_full)
{
    ks_im2col_geom g;
    KS(ks_im2col_geometry(p, &g));
    const size_t img_b = (size_t)g.image_numel * 4, col_b = (size_t)g.columns_numel * 4;
    float *img, *cols, *copy;
    CK(cudaMalloc(&img, img_b));
    CK(cudaMalloc(&cols, col_b));
    CK(cudaMalloc(&copy, col_b));
    CK(cudaMemset(img, 0x3f, img_b)); /* about 0.75f everywhere: not zeros */
    CK(cudaMemset(cols, 0x3e, col_b));
    const double bytes = (double)(img_b + col_b); /* each side once */
    const float t_copy = time_ms(0, p, img, cols, copy, col_b, NULL);
    const double copy_bw = 2.0 * col_b / (t_copy * 1e-3); /* read + write */
    printf(
        "\nN=%lld C=%lld %lldx%lld k%lldx%lld: image %.1f MB, columns %.1f MB; D2D copy of the columns %.3f ms = %.0f GB/s\n",
        (long long)p->batch, (long long)p->channels, (long long)p->height, (long long)p->width, (long long)p->kernel_h,
        (long long)p->kernel_w, img_b / 1e6, col_b / 1e6, t_copy, copy_bw / 1e9);
    printf("%-8s %-26s %10s %10s %12s\n", "op", "variant", "ms", "GB/s", "vs copy/plain");
    ks_filter none = ks_filter_all();
    none.index_hi = 0;
    ks_sink s_none, s_all;
    KS(ks_cuda_sink_create(&s_none, 1, none));
    const unsigned long long work = (unsigned long long)(g.im2col_work > g.image_numel ? g.im2col_work : g.image_numel);
    const unsigned long long cap = work * (2 + 2 * (unsigned long long)(p->kernel_h * p->kernel_w));
    /* compact records (ks_pages.h) take under half a 64-byte slot an event here; the big
     * shape records every event when the device has the room (10 GB at N8 C64 128x128) */
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    if (traced_full && (double)cap * 64 * 1.25 > (double)free_b) {
        printf("(every event not run: %.1f GB of records would not fit the device's free %.1f GB)\n", cap * 64 / 1e9,
               free_b / 1e9);
        traced_full = 0;
    }
    if (traced_full) KS(ks_cuda_sink_create(&s_all, cap, ks_filter_all()));
    for (int op = 1; op <= 2; ++op) {
        const char *name = op == 1 ? "im2col" : "col2im";
        float t = time_ms(op, p, img, cols, NULL, 0, NULL);
        double bw = bytes / (t * 1e-3);
        printf("%-8s %-26s %10.3f %10.0f %11.2f of copy\n", name, "plain", t, bw / 1e9, bw / copy_bw);
        float tn = time_ms(op, p, img, cols, NULL, 0, &s_none);
        printf("%-8s %-26s %10.3f %10s %11.2fx plain\n", name, "traced, filter records none", tn, "", tn / t);
        if (traced_full) {
            /* the dims `kscope run --device cuda` gives the sink (kernels/run.c): tensor 0
             * is the source, 1 the result; image planes H x W, columns C*kh*kw x Ho*Wo */
            const int32_t ih = (int32_t)p->height, iw = (int32_t)p->width;
            const int32_t cr = (int32_t)(p->channels * p->kernel_h * p->kernel_w), cc = (int32_t)g.columns_numel / cr;
            s_all.dim_rows[op == 1 ? 0 : 1] = ih, s_all.dim_cols[op == 1 ? 0 : 1] = iw;
            s_all.dim_rows[op == 1 ? 1 : 0] = cr, s_all.dim_cols[op == 1 ? 1 : 0] = cc / (int32_t)p->batch;
            float ta = time_ms(op, p, img, cols, NULL, 0, &s_all);
            /* the last launch's record buffer: nothing may be dropped, and the bytes it took
             * (ks_pages.h: pages of compact records) per event */
            unsigned long long c[2];
            KS(ks_cuda_download(c, s_all.counters, sizeof c));
            /* im2col: a work event, a read and a write per tap for every column entry */
            const double events = (double)g.im2col_work * (1 + 2 * (double)(p->kernel_h * p->kernel_w));
            if (c[1]) {
                fprintf(stderr, "bench_gpu: %s every event: %llu records dropped\n", name, c[1]);
                exit(2);
            }
            printf("%-8s %-26s %10.3f %10s %11.2fx plain  (%.1f MB of records", name, "traced, every event", ta, "",
                   ta / t, c[0] * 4 / 1e6);
            if (op == 1) printf(", %.1f bytes an event", c[0] * 4.0 / events);
            printf(")\n");
        }
    }
    ks_cuda_sink_free(&s_none);
    if (traced_full) ks_cuda_sink_free(&s_all);
    CK(cudaFree(img));
    CK(cudaFree(cols));
    CK(cudaFree(copy));
}

int main(void)
{
    if (ks_cuda_device_count() < 1) {
        printf("bench_gpu: no CUDA device, nothing measured\n");
        return 0;
    }
    char name[128];
    KS(ks_cuda_device_name(name, sizeof name));
    printf("bench_gpu on %s, fp32, plain kernels at the default launch (512 threads, at most 2048 blocks)\n", name);
    ks_im2col_params big = {.batch = 8,
                            .channels = 64,
                            .height = 128,
                            .width = 128,
                            .kernel_h = 3,
                            .kernel_w = 3,
                            .pad_h = 1,
                            .pad_w = 1,
                            .stride_h = 1,
                            .stride_w = 1,
                            .dilation_h = 1,
                            .dilation_w = 1};
    ks_im2col_params mid = {.batch = 1,
                            .channels = 64,
                            .height = 56,
                            .width = 56,
                            .kernel_h = 3,
                            .kernel_w = 3,
                            .pad_h = 1,
                            .pad_w = 1,
                            .stride_h = 1,
                            .stride_w = 1,
                            .dilation_h = 1,
                            .dilation_w = 1};
    /* KS_BENCH_GPU_SHAPE=big or =mid: that shape only (to profile one shape's launches) */
    const char *only = getenv("KS_BENCH_GPU_SHAPE");
    if (only && strcmp(only, "big") && strcmp(only, "mid")) {
        fprintf(stderr, "bench_gpu: KS_BENCH_GPU_SHAPE must be big or mid, not '%s'\n", only);
        return 2;
    }
    if (!only || !strcmp(only, "big")) bench_size(&big, 1);
    if (!only || !strcmp(only, "mid")) bench_size(&mid, 1);
    return 0;
}
