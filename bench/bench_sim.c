/* Simulator throughput: work items per second for im2col and col2im, plain and traced
 * (full trace, and a filter that records nothing), and for RoIAlign's forward and
 * backward (plain and fully traced; avg, sampling ratio 2 and adaptive), with the events
 * a second the traced runs record. Every traced run records into a new sink, as a
 * `kscope run --trace` does (its memory is fresh: the kernel zeroes each page). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../kernels/im2col/im2col_body.h"
#include "../kernels/roi_align/roi_align_body.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* median of 5 runs, in seconds; *events: what one traced run recorded */
static double time_run(int col2im, const ks_im2col_params *p, const float *src, float *dst, ks_filter *filter,
                       double *events)
{
    double t[5];
    ks_launch l = {0};
    for (int r = 0; r < 5; ++r) {
        ks_sink *sink = filter ? ks_host_sink_create(1ULL << 27, *filter) : NULL;
        double t0 = now();
        if (col2im) ks_col2im_sim(p, src, dst, &l, sink);
        else ks_im2col_sim(p, src, dst, &l, sink);
        t[r] = now() - t0;
        if (events) *events = sink ? (double)ks_sink_count(sink) : 0;
        ks_host_sink_free(sink);
    }
    for (int i = 0; i < 5; ++i)
        for (int j = i + 1; j < 5; ++j)
            if (t[j] < t[i]) {
                double x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    return t[2];
}

/* RoIAlign on 2x32x50x68 with 300 RoIs of 2 to 20 pixels a side, 7x7 bins: output
 * elements per second, median of 5 */
static void bench_roi(int64_t ratio)
{
    ks_roi_align_params p = {.batch = 2,
                             .channels = 32,
                             .height = 50,
                             .width = 68,
                             .num_rois = 300,
                             .pooled_h = 7,
                             .pooled_w = 7,
                             .spatial_scale = 0.25f,
                             .sampling_ratio = ratio,
                             .aligned = 1,
                             .pool_mode = KS_ROI_AVG};
    const int64_t in_n = 2 * 32 * 50 * 68, out_n = 300 * 32 * 49;
    float *in = malloc((size_t)in_n * 4), *rois = malloc(300 * 5 * 4), *out = malloc((size_t)out_n * 4);
    float *g = malloc((size_t)out_n * 4), *gin = malloc((size_t)in_n * 4);
    for (int64_t i = 0; i < in_n; ++i) in[i] = (float)(i % 101) * 0.01f;
    for (int64_t i = 0; i < out_n; ++i) g[i] = (float)(i % 83) * 0.01f;
    for (int k = 0; k < 300; ++k) { /* fixed boxes in image coordinates (x4) */
        const float x = (float)(k * 37 % 240), y = (float)(k * 53 % 170), w = 8 + (float)(k * 29 % 72),
                    h = 8 + (float)(k * 31 % 72);
        rois[k * 5] = (float)(k % 2), rois[k * 5 + 1] = x, rois[k * 5 + 2] = y;
        rois[k * 5 + 3] = x + w, rois[k * 5 + 4] = y + h;
    }
    ks_launch l = {0};
    for (int bwd = 0; bwd < 2; ++bwd) {
        for (int traced = 0; traced < 2; ++traced) {
            double t[5], events = 0;
            for (int r = 0; r < 5; ++r) {
                ks_sink *sink = traced ? ks_host_sink_create(1ULL << 27, ks_filter_all()) : NULL;
                double t0 = now();
                if (bwd) ks_roi_align_backward_sim(&p, g, rois, NULL, NULL, gin, &l, sink);
                else ks_roi_align_forward_sim(&p, in, rois, out, NULL, NULL, &l, sink);
                t[r] = now() - t0;
                if (sink) events = (double)ks_sink_count(sink);
                ks_host_sink_free(sink);
            }
            for (int i = 0; i < 5; ++i)
                for (int j = i + 1; j < 5; ++j)
                    if (t[j] < t[i]) {
                        double x = t[i];
                        t[i] = t[j];
                        t[j] = x;
                    }
            printf("%-8s %-22s %14.3g", bwd ? "roi_bwd" : "roi_fwd",
                   traced ? (ratio ? "traced, sr2" : "traced, adaptive") : (ratio ? "plain, sr2" : "plain, adaptive"),
                   out_n / t[2]);
            if (traced) printf(" %12s %14.3g", "", events / t[2]);
            printf("\n");
        }
    }
    free(in), free(rois), free(out), free(g), free(gin);
}

int main(void)
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
    if (ks_im2col_geometry(&p, &g)) return 1;
    float *img = malloc((size_t)g.image_numel * 4), *cols = malloc((size_t)g.columns_numel * 4);
    for (int64_t i = 0; i < g.image_numel; ++i) img[i] = (float)(i % 97) * 0.01f;
    for (int64_t i = 0; i < g.columns_numel; ++i) cols[i] = (float)(i % 89) * 0.01f;
    ks_filter all = ks_filter_all(), none = ks_filter_all();
    none.index_hi = 0;
    printf("simulator, one CPU thread: N=1 C=32 64x64, k3 p1 s1 d1 (median of 5)\n");
    printf("%-8s %-22s %14s %12s %14s\n", "op", "variant", "work items/s", "vs plain", "events/s");
    for (int op = 0; op < 2; ++op) {
        const char *name = op ? "col2im" : "im2col";
        const int64_t work = op ? g.image_numel : g.im2col_work;
        float *src = op ? cols : img, *dst = op ? img : cols;
        double events = 0;
        double plain = time_run(op, &p, src, dst, NULL, NULL);
        double t_none = time_run(op, &p, src, dst, &none, NULL);
        double t_all = time_run(op, &p, src, dst, &all, &events);
        printf("%-8s %-22s %14.3g %12s\n", name, "plain", work / plain, "1.00");
        printf("%-8s %-22s %14.3g %11.2fx\n", name, "traced, filter none", work / t_none, t_none / plain);
        printf("%-8s %-22s %14.3g %11.2fx %14.3g\n", name, "traced, every event", work / t_all, t_all / plain,
               events / t_all);
    }
    free(img), free(cols);
    printf("RoIAlign: 2x32x50x68, 300 RoIs, 7x7 (output elements/s, median of 5)\n");
    bench_roi(2);
    bench_roi(0);
    return 0;
}
