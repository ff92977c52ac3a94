/* gemm_tiled_body.h - C = A B through shared-memory tiles, written once: the declarations
 * both builds share, then (per variant, see ks_variants.h) the body.
 *
 *   a [M, K], b [K, N]  row-major float32
 *   c [M, N]            c[i, j] = sum over k of a[i, k] * b[k, j], accumulated in float with
 *                       fmaf in k order (so the simulator and the GPU agree bit for bit)
 *
 * A block of T x T threads computes one T x T tile of c (T = 16 or 32; thread (ty, tx) =
 * (thread / T, thread % T) owns c[row, col] = c[tile_row*T + ty, tile_col*T + tx]). It walks
 * k in steps of T: every thread copies one element of a's tile a[row, k0 + tx] and one of
 * b's tile b[k0 + ty, col] into shared memory (0 past the edge of a or b, so any sizes
 * work), barrier 1 (the tiles are complete), T multiply-adds from shared memory, barrier 2
 * (nobody still reads the tiles the next step overwrites). Each element of a is read from
 * global memory by ceil(N/T) blocks instead of N threads: global reads per output element
 * fall from 2K to about 2K/T.
 *
 * The naive form (--algorithm naive), for comparison: the same threads, each reading its
 * row of a and column of b straight from global memory (tap k), in the same k order.
 *
 * The grid-stride loop walks tiles: work item index = tile * T*T + thread, so a block's
 * threads all take the same number of iterations and all reach every barrier.
 */
#ifndef KS_GEMM_TILED_DECL
#define KS_GEMM_TILED_DECL
#include <math.h>
#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Planted bugs for the race and barrier checks: a barrier left out, or one that the
 * threads outside c skip (they leave the loop before it). */
enum { KS_GT_PLANT_NONE, KS_GT_PLANT_NO_FIRST, KS_GT_PLANT_NO_SECOND, KS_GT_PLANT_DIVERGENT };

typedef struct ks_gemm_tiled_args {
    int64_t m, k, n; /* a (m, k), b (k, n), c (m, n) */
    int64_t tile;    /* T: 16 or 32 */
    int naive;       /* the same threads with no shared memory: 2K global reads each */
    int plant;
    const float *a, *b;
    float *c;
} ks_gemm_tiled_args;

#define KS_GT_MAX_TILE 32
#define KS_GT_BLOCK_CAP (-1)

/* tensor ids (the op's rows and the trace's tensors) and sites; the three shared sites are
 * consecutive (ks_shared_trace) */
enum { KS_GT_T_A, KS_GT_T_B, KS_GT_T_C, KS_GT_T_SHARED };
enum {
    KS_GT_SITE_WORK,
    KS_GT_SITE_READ_A,
    KS_GT_SITE_READ_B,
    KS_GT_SITE_SHARED_READ,
    KS_GT_SITE_SHARED_WRITE,
    KS_GT_SITE_BARRIER,
    KS_GT_SITE_WRITE_C,
    KS_GT_NSITES
};

/* Tiles of c: ceil(m/T) * ceil(n/T); work items: that times T*T. */
int64_t ks_gemm_tiled_work(const ks_gemm_tiled_args *a);
/* The GPU launch on device pointers (gemm_tiled_op.c, through its kernel row); dev_sink NULL: plain. */
int ks_gemm_tiled_cuda(const ks_gemm_tiled_args *a, const ks_launch *l, const ks_sink *dev_sink);
/* The simulator launch on host pointers (gemm_tiled_op.c); rep (may be NULL) gets what
 * the race and barrier checks found. */
int ks_gemm_tiled_sim(const ks_gemm_tiled_args *a, const ks_launch *l, ks_sink *sink, ks_sim_report *rep);
/* The independent reference in double (gemm_tiled_ref.c): c (m*n). */
void ks_gemm_tiled_ref(const ks_gemm_tiled_args *a, const float *A, const float *B, double *c);

#ifdef __cplusplus
}
#endif
#endif /* KS_GEMM_TILED_DECL */

#ifdef KS_VARIANT
#include "../core/ks_shared.h"

KS_FN void KS_VARIANT(ks_gemm_tiled_body)(ks_thread *t, const ks_gemm_tiled_args *a)
{
    KS_SHARED(float, a_tile, KS_GT_MAX_TILE * KS_GT_MAX_TILE); /* a[row, k0 + tx] at ty*T + tx */
    KS_SHARED(float, b_tile, KS_GT_MAX_TILE * KS_GT_MAX_TILE); /* b[k0 + ty, col] at ty*T + tx */
    const KS_IDX M = (KS_IDX)a->m, K = (KS_IDX)a->k, N = (KS_IDX)a->n, T = (KS_IDX)a->tile;
    const KS_IDX tiles_n = (N + T - 1) / T;
    const KS_IDX n_work = (M + T - 1) / T * tiles_n * T * T;
    const KS_IDX ty = (KS_IDX)t->thread_idx.x / T, tx = (KS_IDX)t->thread_idx.x % T;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    KS_PROBE(ks_shared_trace(t, KS_GT_T_SHARED, KS_GT_SITE_SHARED_READ, T, T));
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX tile = index / (T * T);
        const KS_IDX row = tile / tiles_n * T + ty, col = tile % tiles_n * T + tx;
        KS_PROBE(
            ks_probe_work(t, KS_GT_SITE_WORK, index, iter, tile / tiles_n, tile % tiles_n, ty, tx, row, col, 0, 0));
        if (a->plant == KS_GT_PLANT_DIVERGENT && (row >= M || col >= N)) continue; /* the bug: skips the barriers */
        float acc = 0.0f;
        if (a->naive) {
            for (KS_IDX k = 0; k < K && row < M && col < N; ++k) {
                const float av = a->a[row * K + k], bv = a->b[k * N + col];
                KS_PROBE(ks_probe_read(t, KS_GT_SITE_READ_A, KS_GT_T_A, (int)k, (int64_t)row * K + k, 0, row, k, av));
                KS_PROBE(ks_probe_read(t, KS_GT_SITE_READ_B, KS_GT_T_B, (int)k, (int64_t)k * N + col, 0, k, col, bv));
                acc = fmaf(av, bv, acc);
            }
        }
        for (KS_IDX k0 = 0; k0 < K && !a->naive; k0 += T) {
            float av = 0.0f, bv = 0.0f;
            if (row < M && k0 + tx < K) {
                av = a->a[row * K + k0 + tx];
                KS_PROBE(ks_probe_read(t, KS_GT_SITE_READ_A, KS_GT_T_A, (int)(k0 / T), (int64_t)row * K + k0 + tx, 0,
                                       row, k0 + tx, av));
            }
            if (k0 + ty < K && col < N) {
                bv = a->b[(k0 + ty) * N + col];
                KS_PROBE(ks_probe_read(t, KS_GT_SITE_READ_B, KS_GT_T_B, (int)(k0 / T), (int64_t)(k0 + ty) * N + col, 0,
                                       k0 + ty, col, bv));
            }
            ks_shared_store(t, a_tile, ty * T + tx, av);
            ks_shared_store(t, b_tile, ty * T + tx, bv);
            if (a->plant != KS_GT_PLANT_NO_FIRST) ks_syncthreads(t); /* barrier 1: both tiles are whole */
            for (KS_IDX k = 0; k < T; ++k) { /* two statements: C leaves the order of a call's arguments
                                                 open (gcc and nvcc differ), the trace's must not be */
                const float as = ks_shared_load(t, a_tile, ty * T + k);
                const float bs = ks_shared_load(t, b_tile, k * T + tx);
                acc = fmaf(as, bs, acc);
            }
            if (a->plant != KS_GT_PLANT_NO_SECOND) ks_syncthreads(t); /* barrier 2: nobody reads them any more */
        }
        if (row < M && col < N) {
            a->c[row * N + col] = acc;
            KS_PROBE(ks_probe_write(t, KS_GT_SITE_WRITE_C, KS_GT_T_C, 0, (int64_t)row * N + col, 0, row, col, acc, 0));
        }
    }
}
KS_KERNEL_ATTR(ks_gemm_tiled, ks_gemm_tiled_args, __launch_bounds__(KS_GT_MAX_TILE *KS_GT_MAX_TILE),
               __launch_bounds__(KS_GT_MAX_TILE *KS_GT_MAX_TILE)) /* --tile 32: 1024 threads, traced too */
#endif                                                            /* KS_VARIANT */
