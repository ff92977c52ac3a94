/* bench_record: the recorder's host side (record/record_trace.c) on records shaped like a
 * recorded torchvision roi_align forward (the launch bench/RESULTS.md timed on the GPU at
 * 8.24 M accesses): 1-D blocks of 512 threads, each thread reading its RoI (5 floats)
 * then 4 samples x 4 corners of a named input and writing one output, slots handed out as
 * the GPU's atomic cursor does: RESIDENT blocks run at once (a wave), and each step of each
 * warp of them takes 32 slots, the blocks' warps in a shuffled order, so a thread's records
 * lie far apart. No GPU: the records are made here.
 *   bench_record [MILLIONS_OF_ACCESSES [RESIDENT]]   (defaults 8.24, and 264: an H200's
 *   132 SMs with two 512-thread blocks each; 1 lays each block's records out alone)
 * Prints the time to turn the records into a written trace, and accesses per second. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../record/record_int.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define IN_BYTES (2u * 64 * 56 * 56 * 4)

/* sites as for a kernel built without line info: every instruction asked, none has a line */
static int no_line(uint32_t pc, ks_rec_line *out, void *ctx)
{
    (void)pc, (void)out, (void)ctx;
    return 0;
}

static int copy_zero(void *dst, uint64_t addr, size_t bytes, void *ctx)
{
    (void)addr, (void)ctx;
    memset(dst, 0, bytes);
    return 0;
}

static const uint64_t in = 0x7f0000000000ull, rois = 0x7f1000000000ull, out = 0x7f2000000000ull;

/* Record k: step `step` of thread t of block b (T threads a block): 5 reads of its RoI, 16
 * of the input at random, 1 write of the output. */
static void emit(ks_rec *recs, uint64_t *k, uint64_t *seed, uint32_t b, uint32_t t, int step, int T)
{
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t g = (uint64_t)b * (uint64_t)T + t;
    ks_rec *r = &recs[(*k)++];
    memset(r, 0, sizeof *r);
    r->block = b, r->thread = (uint16_t)t, r->size = 4;
    if (step < 5) r->addr = rois + 20 * (g % 128) + 4u * (uint32_t)step, r->pc = 0x680 + 16u * (uint32_t)step;
    else if (step < 21)
        r->addr = in + 4 * ((*seed >> 20) % (IN_BYTES / 4)), r->pc = 0x1300 + 16u * (uint32_t)(step % 4);
    else r->addr = out + 4 * g, r->pc = 0x2200;
    r->flags = step < 21 ? KS_REC_READ : KS_REC_WRITE;
    r->value = *seed >> 32;
}

int main(int argc, char **argv)
{
    const double millions = argc > 1 ? atof(argv[1]) : 8.24;
    const int per_thread = 5 + 16 + 1, T = 512;
    const uint64_t threads = (uint64_t)(millions * 1e6 / per_thread), n = threads * per_thread;
    const uint32_t blocks = (uint32_t)((threads + T - 1) / T);
    ks_rec *recs = malloc(n * sizeof *recs);
    if (!recs) return 1;
    const uint32_t resident = argc > 2 && atoi(argv[2]) > 0 ? (uint32_t)atoi(argv[2]) : 264;
    uint32_t *warp = malloc((size_t)resident * (T / 32) * sizeof *warp);
    if (!warp) return 1;
    uint64_t k = 0, seed = 1;
    for (uint32_t b0 = 0; b0 < blocks; b0 += resident) {
        const uint32_t nb = blocks - b0 < resident ? blocks - b0 : resident, nw = nb * (T / 32);
        for (uint32_t w = 0; w < nw; ++w) warp[w] = w;
        for (uint32_t w = nw; w > 1; --w) { /* the wave's warps in a shuffled order */
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const uint32_t o = (uint32_t)((seed >> 33) % w), x = warp[w - 1];
            warp[w - 1] = warp[o], warp[o] = x;
        }
        for (int step = 0; step < per_thread; ++step) /* each warp's lanes, step by step */
            for (uint32_t wi = 0; wi < nw; ++wi) {
                const uint32_t b = b0 + warp[wi] / (T / 32), t = warp[wi] % (T / 32) * 32;
                for (uint32_t lane = 0; lane < 32 && (uint64_t)b * T + t + lane < threads; ++lane)
                    emit(recs, &k, &seed, b, t + lane, step, T);
            }
    }
    free(warp);
    if (k != n) return 1;
    ks_rec_buf bufs[3];
    memset(bufs, 0, sizeof bufs);
    bufs[0] = (ks_rec_buf){in, IN_BYTES, "input", 1, KS_F32, 4, {2, 64, 56, 56}};
    bufs[1] = (ks_rec_buf){rois, 128 * 20, "rois", 1, KS_F32, 2, {128, 5}};
    bufs[2] = (ks_rec_buf){out, threads * 4, "alloc1", 0, KS_F32, 1, {(int64_t)threads}};
    ks_rec_launch L;
    memset(&L, 0, sizeof L);
    snprintf(L.kernel, sizeof L.kernel, "void vision::ops::roi_align_forward_kernel_impl<float>(int)");
    ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
    snprintf(L.device, sizeof L.device, "bench");
    L.grid[0] = blocks, L.grid[1] = L.grid[2] = 1, L.block[0] = (uint32_t)T, L.block[1] = L.block[2] = 1;
    L.filter = ks_filter_all();
    L.recs = recs, L.nrecs = n, L.bufs = bufs, L.nbufs = 3, L.copy = copy_zero;
    L.line_of = no_line;
    char path[64];
    snprintf(path, sizeof path, "/tmp/bench_record_%d.kst", (int)getpid());
    const char *threads_env = getenv("KS_RECORD_BUILD_THREADS"); /* the build's threads (0: all CPUs) */
    if (threads_env) ks_rec_build_threads = atoi(threads_env);
    const char *write_env = getenv("KS_WRITE_THREADS"); /* the encoder's threads (0: all CPUs) */
    if (write_env) ks_kst_write_threads = atoi(write_env);
    { /* the records sorted whole, and read back through a 16 MB window as the recorder does */
        ks_rec *sorted = malloc(n * sizeof *sorted), *window = malloc((1u << 19) * sizeof *window);
        const uint32_t block[3] = {(uint32_t)T, 1, 1};
        double ta = now_s();
        const int whole = sorted && ks_rec_sort(recs, n, block, sorted) == 0;
        const double whole_s = now_s() - ta;
        free(sorted);
        sorted = malloc(n * sizeof *sorted);
        ta = now_s();
        ks_rec_sorter *so = sorted && window ? ks_rec_sorter_new(block, 0, threads, n, sorted) : NULL;
        int ok = so != NULL;
        for (int pass = 0; pass < 2 && ok; ++pass)
            for (uint64_t at = 0; at < n && ok; at += 1u << 19) {
                const uint64_t len = n - at < (1u << 19) ? n - at : (1u << 19);
                memcpy(window, recs + at, len * sizeof *window);
                ok = (pass ? ks_rec_sorter_place(so, window, len) : ks_rec_sorter_count(so, window, len)) == 0;
            }
        ok = ok && ks_rec_sorter_finish(so) == 0;
        const double pieces_s = now_s() - ta;
        ks_rec_sorter_free(so);
        free(sorted), free(window);
        if (!whole || !ok) {
            fprintf(stderr, "bench_record: out of memory sorting\n");
            return 1;
        }
        printf("bench_record: records sorted whole %.1f ms, through a 16 MB window %.1f ms\n", 1e3 * whole_s,
               1e3 * pieces_s);
    }
    const double t0 = now_s();
    const int rc = ks_rec_write_trace(&L, path);
    const double dt = now_s() - t0;
    unlink(path);
    if (rc) {
        fprintf(stderr, "bench_record: %s\n", ks_error_message());
        return 1;
    }
    printf("bench_record: %llu accesses of %llu threads into a trace: %.2f s, %.1f M accesses/s\n",
           (unsigned long long)n, (unsigned long long)threads, dt, (double)n / dt / 1e6);
    printf(
        "  ms: sort %.1f, sites %.1f, scans %.1f, write %.1f (order %.1f, events made and encoded %.1f, index and header %.1f, "
        "commit %.1f; chunks handed to the file %.1f)\n",
        ks_rec_build_ms[0], ks_rec_build_ms[1], ks_rec_build_ms[2], ks_rec_build_ms[3], ks_kst_write_ms[0],
        ks_kst_write_ms[1], ks_kst_write_ms[2], ks_kst_write_ms[3], ks_kst_write_ms[4]);
    free(recs);
    return 0;
}
