/* roi_align_body.h - RoIAlign (mmcv roi_align with avg and max pooling, torchvision roi_align),
 * forward and backward.
 *
 *   input  [N, C, H, W]
 *   rois   [K, 5]: (batch index, x1, y1, x2, y2) in input coordinates / spatial_scale
 *   output [K, C, PH, PW];  max mode also argmax_y, argmax_x [K, C, PH, PW]: the continuous
 *          (y, x) of the winning sample (-1 when the bin has none)
 *
 * Bin (ph, pw) of RoI k averages (or maxes) a grid_h x grid_w grid of bilinear samples
 * at y = y1 + ph*bin_h + (iy + 0.5)*bin_h/grid_h (x likewise), with the RoIAlign sampler:
 * 0 outside the closed box [-1, H] x [-1, W]; inside, coordinates below 0 clamp to 0 and
 * the corners clamp to the last row/column (replicate within one pixel, zero beyond;
 * unlike deformable convolution's zero blend). aligned shifts the scaled box by -0.5 and
 * does not force it to at least 1x1; sampling_ratio <= 0 takes ceil(roi size / bins) per
 * RoI. Out-of-range samples count in the average.
 *
 * The slot forward and the backward, written once (see im2col_body.h for how the plain and
 * traced variants are made): the declarations both builds share come first, then (per
 * variant, see ks_variants.h) the bodies and their kernel lines. roi_align_cl_body.h and
 * roi_align_plane_body.h take the declarations alone (KS_ROI_DECL_ONLY).
 *
 * A work slot is one bin (ph, pw) of one RoI k for a chunk of channels c0 .. c0+CC-1:
 * the bin's sampling geometry (box, sample points, corners, weights) does not depend on
 * the channel, so it is worked out once per sample and used for every channel of the
 * chunk, whose loads are then all in flight together. Slots are numbered
 * ((s*K + k)*PH + ph)*PW + pw, chunk s = c0/CC slowest: the threads running at one time
 * work on a few channels of every RoI, whose planes stay in L2, instead of every channel
 * of a few RoIs (mmcv's and torchvision's order, which reads each overlapped pixel from
 * DRAM once per RoI). CC is KS_ROI_CHUNK in the plain kernels and 1 in the traced ones,
 * where a slot is one output element as in mmcv, so a trace shows one output's work:
 * each output element (k, c, ph, pw) is a work item numbered as the output. */
#ifndef KS_ROI_ALIGN_DECL
#define KS_ROI_ALIGN_DECL

#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ks_roi_pool { KS_ROI_AVG = 0, KS_ROI_MAX = 1 } ks_roi_pool;

typedef struct ks_roi_align_params {
    int64_t batch, channels, height, width; /* input [N, C, H, W] */
    int64_t num_rois;                       /* K (0: nothing runs, outputs are empty) */
    int64_t pooled_h, pooled_w;             /* PH, PW */
    float spatial_scale;
    int64_t sampling_ratio; /* samples per bin and axis; <= 0: adaptive per RoI */
    int aligned;
    int pool_mode; /* ks_roi_pool (max: mmcv only) */
    int forward;   /* ks_roi_forward: the plain avg forward's body (0: the device's default) */
} ks_roi_align_params;

/* The body of the plain forward (--forward; the traced forward is always the slot body):
 *   AUTO     the device's default: CUDA the channels-last body (cl) for avg pooling where it
 *            applies, else as SLOT; the simulator as SLOT
 *   SLOT     the slot body (roi_align_body.h), an adaptive avg grid's bins merged pixel by
 *            pixel (ks_roi_fwd_merged)
 *   SAMPLES  the slot body summing sample by sample (no merging: the traced body's sums)
 *   PLANE    a block per input plane through shared memory (roi_align_plane_body.h; kept to
 *            compare, slower on the H100); sample by sample
 *   CL       the channels-last body (roi_align_cl_body.h) on fixed grids too, and on the
 *            simulator (cooperative fibers)
 * A body that does not apply (max pooling, a block too large, a tile that does not fit)
 * falls back to SLOT; the launch counters say which ran. */
enum ks_roi_forward { KS_ROI_FWD_DEFAULT, KS_ROI_FWD_SLOT, KS_ROI_FWD_SAMPLES, KS_ROI_FWD_PLANE, KS_ROI_FWD_CL };

/* A grid larger than this per axis (an adaptive grid of a huge, Inf or NaN RoI) is
 * treated as malformed: the bin has no samples. */
#define KS_ROI_MAX_GRID 65536

/* channels per work slot of the plain kernels (roi_align_body.h): they share the bin's
 * sampling geometry, and their loads are in flight together (a build may set another,
 * -DKS_ROI_CHUNK=N, to compare) */
#ifndef KS_ROI_CHUNK
#define KS_ROI_CHUNK 4
#endif

#define KS_ROI_THREADS 512

/* the plane forward (roi_align_plane_body.h): blocks of 1024 threads when its tile is
 * larger than 56 KiB, of 512 otherwise (64 registers a thread: one block of 1024 or two
 * of 512 an SM) */
#define KS_ROI_PLANE_THREADS_BIG 1024
#define KS_ROI_PLANE_THREADS 512
#define KS_ROI_BLOCK_CAP 4096

/* sites: both kernels have the first five (the RoI as the kernel uses it, with its bins,
 * and, when aligned, the box before the half-pixel shift as a guide); max mode's forward
 * adds the argmax writes and the argmax point */
enum {
    KS_ROI_SITE_WORK,
    KS_ROI_SITE_SAMPLE,
    KS_ROI_SITE_WRITE,
    KS_ROI_SITE_BOX,
    KS_ROI_SITE_BOX_GUIDE,
    KS_ROI_SITE_WRITE_ARGMAX_Y,
    KS_ROI_SITE_WRITE_ARGMAX_X,
    KS_ROI_SITE_ARGMAX,
    KS_ROI_NSITES
};
/* tensor ids in traces: the roi_align op's order */
enum {
    KS_ROI_T_INPUT,
    KS_ROI_T_ROIS,
    KS_ROI_T_OUTPUT,
    KS_ROI_T_ARGMAX_Y,
    KS_ROI_T_ARGMAX_X,
    KS_ROI_T_GRAD_OUTPUT,
    KS_ROI_T_GRAD_INPUT
};

/* Validates p (sizes, pooled size >= 1, finite positive scale, pool mode) -> KS_EINVAL. */
int ks_roi_align_check(const ks_roi_align_params *p);
/* Host check of the RoIs (host pointer, K x 5): every batch index finite and in [0, N)
 * after truncation, as the kernels use it. KS_EINVAL naming the first bad RoI. */
int ks_roi_align_check_rois(const ks_roi_align_params *p, const float *rois);

/* Forward: output (and argmax_y/x in max mode). Backward: grad_input += from grad_output
 * [K, C, PH, PW] (contiguous); max mode reads argmax_y/x. grad_input must be zeroed by
 * the caller. Host pointers (sim) or device pointers (cuda). sink/dev_sink NULL: plain. */
int ks_roi_align_forward_sim(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                             float *argmax_y, float *argmax_x, const ks_launch *l, ks_sink *sink);
int ks_roi_align_backward_sim(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                              const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                              ks_sink *sink);
int ks_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                              float *argmax_y, float *argmax_x, const ks_launch *l, const ks_sink *dev_sink,
                              void *stream);
int ks_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                               const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                               const ks_sink *dev_sink, void *stream);

/* Independent reference in double from the definition: output, and grad_input of
 * sum(output * grad_output) (max mode: through the reference's own argmax). */
void ks_roi_align_ref_forward(const ks_roi_align_params *p, const float *input, const float *rois, double *output);
void ks_roi_align_ref_backward(const ks_roi_align_params *p, const float *input, const float *rois,
                               const float *grad_output, double *grad_input);

/* The trace schema of the forward (backward 0) or backward (1) kernel; p must have passed
 * ks_roi_align_check (it is not checked again). */
int ks_roi_align_sites(const ks_roi_align_params *p, int backward, ks_site *sites);

#ifdef __cplusplus
}
#endif

/* ---- the kernel arguments, shared by the bodies and the host side ---- */
#include "../core/ks_kernel.h"
#include "../core/ks_core.h"

typedef struct ks_roi_align_args {
    int64_t batch, channels, height, width, num_rois, pooled_h, pooled_w, sampling_ratio;
    float spatial_scale;
    int aligned, pool_mode;
    const float *input;         /* forward: [N, C, H, W] */
    const float *rois;          /* [K, 5] */
    float *output;              /* forward: [K, C, PH, PW] */
    float *argmax_y, *argmax_x; /* forward (max): written; backward (max): read */
    const float *grad_output;   /* backward: [K, C, PH, PW] */
    float *grad_input;          /* backward: [N, C, H, W], accumulated */
    int64_t tile_rows;          /* the plane forward: input rows its shared tile holds */
    int merge;                  /* avg forward, adaptive grid: sum merged bins pixel by pixel
                                   (ks_roi_align_args_make; roi_align_body.h) */
    int forward;                /* ks_roi_forward: the plain forward's body (the params') */
    float *input_cl;            /* the channels-last forward: scratch [N, H, W, C] */
    int cl_vec;                 /* ... its channels a thread (ks_roi_cl_vec) */
    int64_t cl_chunk;           /* ... its bins a work item (ks_roi_cl_chunk) */
    const int32_t *cl_order;    /* ... and its RoIs in image order (NULL: 0 .. K-1) */
} ks_roi_align_args;

/* The channels-last forward (roi_align_cl_body.h): lanes of a block (32, fewer in a block
 * of fewer threads) take a group of G = lanes * V channels; its shared tile holds that
 * group's outputs of a chunk of the PH * PW bins. */
KS_FN int64_t ks_roi_cl_lanes(int64_t threads) { return threads < 32 ? threads : 32; }
#define KS_ROI_CL_THREADS 256
#define KS_ROI_CL_MAX_THREADS 256 /* CUDA: larger blocks run the slot kernel (registers) */
/* CUDA: its tile and profiles within the 48 KiB a block gets without opting in */
#ifndef KS_ROI_CL_TILE_BYTES
#define KS_ROI_CL_TILE_BYTES 49152
#endif

/* The channels-last forward's shared memory also holds an item's PH + PW merged-bin
 * profiles, KS_ROI_CL_PROF words each (roi_align_cl_body.h), at most KS_ROI_CL_PROF_MAX
 * bytes of them: more bins than that run the slot kernel. */
#define KS_ROI_CL_PROF 12 /* KS_ROI_SPAN weights, lo, n, hit, zero */
#define KS_ROI_CL_PROF_MAX 16384
KS_FN int64_t ks_roi_cl_prof_bytes(int64_t PH, int64_t PW) { return (PH + PW) * KS_ROI_CL_PROF * 4; }

/* The channels-last forward's V: the most of 4, 2, 1 channels a thread that divides C (so
 * a thread's channels are aligned, and all exist or none). */
KS_FN int ks_roi_cl_vec(int64_t C) { return C % 4 == 0 ? 4 : C % 2 == 0 ? 2 : 1; }

/* ... and its bins a work item: all PH * PW when the tile of G of them fits `bytes`, else
 * the fewest equal chunks that fit (G * 4 <= 512 bytes a bin: at least 96 bins in 48 KiB). */
KS_FN int64_t ks_roi_cl_chunk(int64_t bins, int64_t G, int64_t bytes)
{
    const int64_t most = bytes / (G * 4), n = (bins + most - 1) / most;
    return (bins + n - 1) / n;
}

/* The channels-last forward's block work items: K * ceil(C / G) * ceil(bins / chunk),
 * numbered (k * groups + group) * chunks + chunk (group first measured the same). */
KS_FN int64_t ks_roi_align_cl_items(const ks_roi_align_args *a, int64_t threads)
{
    const int64_t G = ks_roi_cl_lanes(threads) * a->cl_vec, bins = a->pooled_h * a->pooled_w;
    return a->num_rois * ((a->channels + G - 1) / G) * ((bins + a->cl_chunk - 1) / a->cl_chunk);
}

/* The transpose's block work items: tiles of 32 channels x KS_ROI_CL_TP pixels. */
#define KS_ROI_CL_TP 128
#define KS_ROI_CL_T_BLOCKS 16384 /* its grid's cap (blocks loop past it) */
KS_FN int64_t ks_roi_align_cl_t_items(const ks_roi_align_args *a)
{
    return a->batch * ((a->channels + 31) / 32) * ((a->height * a->width + KS_ROI_CL_TP - 1) / KS_ROI_CL_TP);
}

/* The kernels' work slots (roi_align_body.h): one per bin and chunk of cc channels,
 * K * ceil(C / cc) * PH * PW; cc is KS_ROI_CHUNK for the plain kernels, 1 for the traced. */
KS_FN int64_t ks_roi_align_slots(const ks_roi_align_args *a, int64_t cc)
{
    return a->num_rois * ((a->channels + cc - 1) / cc) * a->pooled_h * a->pooled_w;
}

/* The bands of a plane of H rows when the tile holds cap rows (cap >= KS_ROI_PLANE_MIN_ROWS):
 * one band of H rows when it fits, else bands of *S rows with *M rows of margin each side
 * (S + 2M = cap). */
#define KS_ROI_PLANE_MIN_ROWS 8
KS_FN void ks_roi_plane_bands(int64_t H, int64_t cap, int64_t *S, int64_t *M, int64_t *nb)
{
    if (cap >= H) {
        *S = H, *M = 0, *nb = 1;
        return;
    }
    *M = cap / 4 < 8 ? cap / 4 : 8;
    *S = cap - 2 * *M;
    *nb = (H + *S - 1) / *S;
}

/* The rows of each input plane a plane-forward tile of `bytes` holds (at most H, the whole
 * plane); 0 when a row is too wide for KS_ROI_PLANE_MIN_ROWS of them (the slot kernel runs). */
KS_FN int64_t ks_roi_plane_tile_rows(int64_t bytes, int64_t W, int64_t H)
{
    const int64_t rows = bytes / 4 / W;
    return rows < KS_ROI_PLANE_MIN_ROWS ? 0 : (rows < H ? rows : H);
}

/* The plane forward's work (roi_align_plane_body.h): a block per input plane and band,
 * N * C * bands blocks; a->tile_rows set. */
KS_FN int64_t ks_roi_align_plane_blocks(const ks_roi_align_args *a)
{
    int64_t S, M, nb;
    ks_roi_plane_bands(a->height, a->tile_rows, &S, &M, &nb);
    return a->batch * a->channels * nb;
}

#ifdef __cplusplus
extern "C" {
#endif
/* RoIAlign's kernel rows (roi_align_op.c): the slot forward and the backward (traced),
 * and the plain avg forward's faster bodies, plain_only with the forward as their twin:
 * the merged forward of adaptive grids, the channels-last one's steps (the RoIs in image
 * order, the transpose, the forward for 4, 2 or 1 channels a thread) and the plane one. */
enum {
    KS_ROI_K_FWD,
    KS_ROI_K_BWD,
    KS_ROI_K_FWDM,
    KS_ROI_K_CL_ORDER,
    KS_ROI_K_CL_T,
    KS_ROI_K_CL4,
    KS_ROI_K_CL2,
    KS_ROI_K_CL1,
    KS_ROI_K_PLANE,
    KS_ROI_NROWS
};
extern const ks_kernel ks_roi_rows[KS_ROI_NROWS];
/* RoIAlign's sequence on x (rows ks_roi_rows, the sink and traced row set; a->forward picks
 * the plain avg forward's body): the forward, or the backward, on arguments
 * ks_roi_align_args_make validated (nothing checked again; zero RoIs launch nothing). */
int ks_roi_align_exec(ks_exec *x, const ks_roi_align_args *a, int backward);
/* Counted per channels-last launch, as the plane forward's (tests check the path ran). */
void ks_roi_align_cl_launched(void);
long long ks_roi_align_cl_launches(void);
/* The launchers call this for each plane-forward launch; the count is what tests check,
 * since the plane kernel's outputs equal the slot kernel's (a silent fallback would pass). */
void ks_roi_align_plane_launched(void);
long long ks_roi_align_plane_launches(void);
/* The channels-last forward's launch for `tile_bytes` of shared memory and blocks of at
 * most max_threads: sets a->cl_vec and a->cl_chunk, *threads, *blocks (0: the forward does
 * not apply, the slot kernel runs: no RoIs, a larger block, profiles past
 * KS_ROI_CL_PROF_MAX) and *shared (the bytes of the block's tile and profiles). Both
 * launchers call it, so the simulator and CUDA cut the same work items. */
int ks_roi_cl_plan(ks_roi_align_args *a, const ks_launch *l, int64_t tile_bytes, int max_threads, int *threads,
                   int64_t *blocks, size_t *shared);
/* Validates p (ks_roi_align_check) and fills the arguments but the pointers. */
int ks_roi_align_args_make(const ks_roi_align_params *p, ks_roi_align_args *a);
#ifdef __cplusplus
}
#endif

#include "roi_align_sample.h"
#endif /* KS_ROI_ALIGN_DECL */

#if defined(KS_VARIANT) && !defined(KS_ROI_DECL_ONLY)
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_body.h"
#endif
#include "../core/ks_walk.h"

#ifndef KS_ROI_CC /* channels per slot in the variant being compiled (KS_TRACED is set per variant) */
#define KS_ROI_CC (KS_TRACED ? 1 : KS_ROI_CHUNK)
#endif

#if defined(__CUDA_ARCH__) && !defined(KS_ROI_NEXT_ROW)
#define KS_ROI_NEXT_ROW
/* rows[0], the rest shifted to the front: a loop over a merged bin's row weights that
 * indexes them only by constants, so they stay in registers (rows[a] with a loop
 * variable puts the array in local memory on the GPU, 32 bytes a bin) */
__device__ static inline float ks_roi_next_row(float *rows)
{
    const float first = rows[0];
    for (int k = 0; k + 1 < KS_ROI_SPAN; ++k) rows[k] = rows[k + 1];
    return first;
}
#endif

#ifndef KS_ROI_FWD_VEC4 /* -DKS_ROI_FWD_VEC4=0: the merged forward reads rows pixel by pixel, to compare */
#define KS_ROI_FWD_VEC4 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#ifndef KS_ROI_LANES4
#define KS_ROI_LANES4
/* X[i] = ax[i - m] (0 outside the profile): a footprint row laid over aligned float4s
 * starting m floats before its first pixel; m is a constant where inlined. */
__device__ static inline void ks_roi_lanes4(float *X, const float *ax, const int m)
{
    for (int i = 0; i < 12; ++i) X[i] = i - m >= 0 && i - m < KS_ROI_SPAN ? ax[i - m] : 0.0f;
}
#endif
#endif

/* The avg forward's sums of one bin whose samples merge per axis (ks_roi_profile), for
 * channels 0 .. nc-1 of plane im (HW apart): acc[j] = sum over rows a of ay[a] * (sum
 * over columns b of ax[b] * pixel), each footprint pixel read once instead of once per
 * sample corner on it (a sum of the same products, rounded differently). Only rows and
 * columns that are some sample's corner (hy, hx bits) are read. fmaf in a fixed order:
 * the same bits on both devices. On sm_90, when the rows of the planes start at one place
 * in a 16-byte line and the row's float4s lie within it, a row is read as up to three
 * aligned float4s (lanes outside the footprint not used), in the same order. */
KS_FN void KS_VARIANT(ks_roi_fwd_merged)(const float *im, KS_IDX HW, KS_IDX W, int nc, const float *ay, KS_IDX ylo,
                                         int ny, unsigned hy, const float *ax, KS_IDX xlo, int nx, unsigned hx,
                                         float *acc)
{
    float rows[KS_ROI_SPAN]; /* taken with ks_roi_next_row on the GPU: registers */
    for (int k = 0; k < KS_ROI_SPAN; ++k) rows[k] = ay[k];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && KS_ROI_FWD_VEC4
    const int m = (int)(xlo & 3), groups = (m + nx + 3) >> 2;
    const int vec = !(W & 3) && !(HW & 3) && !((uintptr_t)im & 15) && xlo - m >= 0 && xlo - m + 4 * groups <= W;
    float X[12];
    switch (vec ? m : 0) {
    case 0: ks_roi_lanes4(X, ax, 0); break;
    case 1: ks_roi_lanes4(X, ax, 1); break;
    case 2: ks_roi_lanes4(X, ax, 2); break;
    default: ks_roi_lanes4(X, ax, 3); break;
    }
    const unsigned used = hx << m; /* bit i: lane i is a hit column */
#endif
    for (int a = 0; a < KS_ROI_SPAN && a < ny; ++a, hy >>= 1) {
#if defined(__CUDA_ARCH__)
        const float ya = ks_roi_next_row(rows);
#else
        const float ya = rows[a];
#endif
        if (!(hy & 1)) continue;
        for (int j = 0; j < KS_ROI_CC && j < nc; ++j) {
            const float *row = im + j * HW + (ylo + a) * W + xlo;
            float s = 0.0f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && KS_ROI_FWD_VEC4
            if (vec) {
                for (int q = 0; q < 3 && q < groups; ++q) {
                    const float4 v = *(const float4 *)(row - m + 4 * q);
                    const float e[4] = {v.x, v.y, v.z, v.w};
                    for (int l = 0; l < 4; ++l)
                        if (used >> (4 * q + l) & 1) s = fmaf(X[4 * q + l], e[l], s);
                }
                acc[j] = fmaf(ya, s, acc[j]);
                continue;
            }
#endif
            for (int b = 0; b < KS_ROI_SPAN && b < nx; ++b)
                if (hx >> b & 1) s = fmaf(ax[b], row[b], s);
            acc[j] = fmaf(ya, s, acc[j]);
        }
    }
}

/* Forward of one slot: avg = sum of the bin's samples / max(grid_h*grid_w, 1); max
 * (mmcv) = the largest sample, strictly greater wins (the first of equal ones),
 * out-of-range samples (0) compete; its (y, x) goes to argmax_y/x (-1 with no sample).
 * is_max is a constant where the caller inlines it: one loop without the other's work;
 * merge (avg only) sums a bin whose samples merge per axis with ks_roi_fwd_merged: a
 * constant in the plain kernels (fwd 0, fwdm 1), a->merge in the traced one. */
KS_FN void KS_VARIANT(ks_roi_fwd_slot)(ks_thread *t, const ks_roi_align_args *a, KS_IDX k, KS_IDX c0, KS_IDX ph,
                                       KS_IDX pw, uint32_t iter, const int is_max, const int merge)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX nc = C - c0 < KS_ROI_CC ? C - c0 : KS_ROI_CC; /* channels of this slot */
    const KS_IDX out0 = ((k * C + c0) * PH + ph) * PW + pw;    /* its first output element */
    ks_roi_box r;
    ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
    KS_PROBE(if (ks_probe_start(t, out0, iter))
                 ks_probe_fields(t, KS_ROI_SITE_WORK, k, c0, ph, pw, r.b, r.grid_h, r.grid_w, 0));
    KS_PROBE(if (r.b >= 0) ks_roi_probe_boxes(t, &r, a->aligned, PH, PW, KS_ROI_T_INPUT, r.b * C + c0));
    float acc[KS_ROI_CC], best_y[KS_ROI_CC], best_x[KS_ROI_CC];
    for (int j = 0; j < KS_ROI_CC; ++j) acc[j] = is_max ? -3.402823466e38f : 0.0f, best_y[j] = best_x[j] = -1.0f;
    const float *im = a->input + ((KS_IDX)(r.b < 0 ? 0 : r.b) * C + c0) * HW;
    const KS_IDX gh = r.b < 0 ? 0 : (KS_IDX)r.grid_h, gw = r.b < 0 ? 0 : (KS_IDX)r.grid_w;
    /* merge (avg, adaptive grid: a->merge): a bin whose samples merge per axis reads each
     * footprint pixel once (ks_roi_fwd_merged); the traced variant records its samples */
    float ay[KS_ROI_SPAN], ax[KS_ROI_SPAN];
    int64_t ylo = 0, xlo = 0;
    int ny = 0, nx = 0;
    unsigned hy = 0, hx = 0, zy = 0, zx = 0;
    const int merged = merge && !is_max && gh > 0 &&
                       ks_roi_profile(r.y1, ph, r.bin_h, gh, H, ay, &ylo, &ny, &hy, &zy) &&
                       ks_roi_profile(r.x1, pw, r.bin_w, gw, W, ax, &xlo, &nx, &hx, &zx);
    if (merged) {
        KS_VARIANT(ks_roi_fwd_merged)(im, HW, W, (int)nc, ay, (KS_IDX)ylo, ny, hy, ax, (KS_IDX)xlo, nx, hx, acc);
        /* an Inf that the per-sample sum would have multiplied by 0 somewhere: NaN there */
        for (int j = 0; j < KS_ROI_CC && j < nc; ++j)
            if (isinf(acc[j]) && (zy | zx) &&
                ks_roi_zero_meets_inf(im + j * HW, W, ylo, ny, hy, zy, xlo, nx, hx, zx, 1))
                acc[j] *= 0.0f;
    }
    if (!merged || KS_TRACED)
        for (KS_IDX iy = 0; iy < gh; ++iy) {
            for (KS_IDX ix = 0; ix < gw; ++ix) {
                float y, x;
                ks_roi_sample s;
                const int in = ks_roi_sample_in_bin(&r, ph, pw, iy, ix, gh, gw, H, W, &y, &x, &s);
                const KS_IDX y0 = (KS_IDX)s.y0 * W, y1 = (KS_IDX)s.y1 * W, x0 = (KS_IDX)s.x0, x1 = (KS_IDX)s.x1;
                for (int j = 0; j < KS_ROI_CC && j < nc; ++j) {
                    const float v = in ? ks_roi_blend_at(im + j * HW, y0 + x0, y0 + x1, y1 + x0, y1 + x1, s.w) : 0.0f;
                    KS_PROBE(ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_INPUT, (int)(iy * gw + ix),
                                             r.b * C + c0 + j, s.y, s.x, s.w[0], s.w[1], s.w[2], s.w[3], v, s.flags));
                    if (!merged) ks_roi_take(is_max, v, y, x, &acc[j], &best_y[j], &best_x[j]);
                }
            }
        }
    const KS_IDX count = gh * gw;
    for (int j = 0; j < KS_ROI_CC && j < nc; ++j) {
        const KS_IDX index = out0 + j * PH * PW, plane = k * C + c0 + j;
        if (!is_max) {
            acc[j] /= (float)(count > 0 ? count : 1);
        } else {
            a->argmax_y[index] = best_y[j];
            a->argmax_x[index] = best_x[j];
            KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE_ARGMAX_Y, KS_ROI_T_ARGMAX_Y, 0, index, plane, ph, pw,
                                    best_y[j], 0));
            KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE_ARGMAX_X, KS_ROI_T_ARGMAX_X, 0, index, plane, ph, pw,
                                    best_x[j], 0));
            KS_PROBE(if (best_y[j] != -1.0f) ks_probe_box(t, KS_ROI_SITE_ARGMAX, KS_ROI_T_INPUT, r.b * C + c0 + j,
                                                          best_y[j], best_x[j], best_y[j], best_x[j], 0, 0, 0));
        }
        a->output[index] = acc[j];
        KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE, KS_ROI_T_OUTPUT, 0, index, plane, ph, pw, acc[j], 0));
    }
}

/* The four atomic adds of g times the corner weights, a row's two corners (x0, x0+1) at
 * once where they share an aligned vector: on sm_90 one float2 atomic, or a float4 one
 * that adds 0 to the neighbours on either side (within the row), instead of two scalar
 * atomics: half the atomic requests the L2 must serve, which bound this kernel. The
 * simulator adds the corners one by one in the same order (y0 row, then y1; x0, then x1). */
KS_FN void KS_VARIANT(ks_roi_scatter)(ks_thread *t, float *grad, KS_IDX plane, KS_IDX H, KS_IDX W,
                                      const ks_roi_sample *s, float g, int tap)
{
    const int64_t ys[2] = {s->y0, s->y1}, xs[2] = {s->x0, s->x1};
    for (int r = 0; r < 2; ++r) {
        float *row = grad + (KS_IDX)ys[r] * W;
        const KS_IDX x0 = (KS_IDX)xs[0], x1 = (KS_IDX)xs[1];
        const float add0 = g * s->w[2 * r], add1 = g * s->w[2 * r + 1];
        int done = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (x1 == x0 + 1) {
            const uintptr_t m = (uintptr_t)(row + x0) & 15;
            if ((m & 7) == 0) {
                atomicAdd((float2 *)(row + x0), make_float2(add0, add1));
                done = 1;
            } else if (m == 4 && x0 >= 1 && x0 + 2 < W) {
                atomicAdd((float4 *)(row + x0 - 1), make_float4(0.0f, add0, add1, 0.0f));
                done = 1;
            }
        }
#endif
        if (!done) {
            ks_atomic_add_f32(row + x0, add0);
            ks_atomic_add_f32(row + x1, add1);
        }
        KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE, KS_ROI_T_GRAD_INPUT, tap, plane * H * W + (KS_IDX)ys[r] * W + x0,
                                plane, ys[r], x0, add0, 1));
        KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE, KS_ROI_T_GRAD_INPUT, tap, plane * H * W + (KS_IDX)ys[r] * W + x1,
                                plane, ys[r], x1, add1, 1));
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(KS_ROI_ROW4)
#define KS_ROI_ROW4
/* The first `groups` aligned float4s of a row, from dst (16-byte aligned, m floats before
 * the footprint's first pixel): lane e of vector q adds wr * ax[4q + e - m], 0 outside
 * the footprint. m is a constant where inlined, so ax stays in registers. */
__device__ static inline void ks_roi_row4(float *dst, const float *ax, float wr, int groups, const int m)
{
    for (int q = 0; q < 3; ++q) {
        if (q >= groups) break;
        float v[4];
        for (int e = 0; e < 4; ++e) {
            const int k = 4 * q + e - m;
            v[e] = k >= 0 && k < KS_ROI_SPAN ? wr * ax[k] : 0.0f;
        }
        atomicAdd((float4 *)(dst + 4 * q), make_float4(v[0], v[1], v[2], v[3]));
    }
}
#endif


/* The merged backward of one bin on one plane (ks_roi_profile): g * ay[a] * ax[b] into
 * pixel (ylo + a, xlo + b), every pixel of the footprint once instead of once per sample
 * corner that lands on it. On sm_90 a row goes out as aligned float4 atomics (lanes
 * outside the footprint add 0) when they lie within the row: a quarter of the atomic
 * requests the L2 serves. Elsewhere, and in the simulator, one atomic per pixel of
 * nonzero weight, rows then columns; the trace records those. */
KS_FN void KS_VARIANT(ks_roi_scatter_bin)(ks_thread *t, float *grad, KS_IDX plane, KS_IDX H, KS_IDX W, const float *ay,
                                          KS_IDX ylo, int ny, const float *ax, KS_IDX xlo, int nx, float g)
{
#if defined(__CUDA_ARCH__)
    /* the row weights through ks_roi_next_row on the GPU; the simulator indexes them (the
     * shift cost it 10%) */
    float rows[KS_ROI_SPAN];
    for (int k = 0; k < KS_ROI_SPAN; ++k) rows[k] = ay[k];
#endif
    for (int a = 0; a < KS_ROI_SPAN && a < ny; ++a) {
#if defined(__CUDA_ARCH__)
        const float ya = ks_roi_next_row(rows);
#else
        const float ya = ay[a];
#endif
        if (ya == 0.0f) continue; /* a row between two samples' corners: no atomics of zeros */
        const float wr = g * ya;
        float *row = grad + (ylo + a) * W;
        int done = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        const int m = (int)(((uintptr_t)(row + xlo) >> 2) & 3); /* floats past a 16-byte boundary */
        const int groups = (m + nx + 3) >> 2;
        if (xlo - m >= 0 && xlo - m + 4 * groups <= W) {
            float *dst = row + xlo - m;
            switch (m) {
            case 0: ks_roi_row4(dst, ax, wr, groups, 0); break;
            case 1: ks_roi_row4(dst, ax, wr, groups, 1); break;
            case 2: ks_roi_row4(dst, ax, wr, groups, 2); break;
            default: ks_roi_row4(dst, ax, wr, groups, 3); break;
            }
            done = 1;
        }
#endif
        for (int b = 0; b < KS_ROI_SPAN && b < nx; ++b) {
            const float add = wr * ax[b];
            if (add == 0.0f) continue;
            if (!done) ks_atomic_add_f32(row + xlo + b, add);
            KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE, KS_ROI_T_GRAD_INPUT, a * KS_ROI_SPAN + b,
                                    plane * H * W + (ylo + a) * W + xlo + b, plane, ylo + a, xlo + b, add, 1));
        }
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* ks_roi_scatter_bin for all nc channels of a slot at once, when every row of every
 * channel plane starts at the same place in its 16-byte line (W and H*W multiples of 4,
 * grad 16-byte aligned) and the row's float4s lie within the row: the float4 lanes of the
 * footprint's columns are laid out once per slot, not per row and channel, and each row
 * of each channel is up to three vector atomics of share * row weight * lanes (the same
 * products as ks_roi_scatter_bin). Returns 0, having added nothing, otherwise. */
__device__ static inline int KS_VARIANT(ks_roi_scatter_bin4)(float *grad, KS_IDX HW, KS_IDX W, int nc,
                                                             const float *share, const float *ay, KS_IDX ylo, int ny,
                                                             const float *ax, KS_IDX xlo, int nx)
{
    if ((W & 3) || (HW & 3) || ((uintptr_t)grad & 15)) return 0;
    const int m = (int)(xlo & 3), groups = (m + nx + 3) >> 2;
    if (xlo - m < 0 || xlo - m + 4 * groups > W) return 0;
    /* lanes outside the footprint add wr * 0: 0 only for a finite wr (ks_roi_scatter_bin
     * adds a literal 0 there, so a non-finite gradient stays inside the footprint) */
    for (int j = 0; j < KS_ROI_CC && j < nc; ++j)
        if (!(share[j] - share[j] == 0.0f)) return 0;
    float X[12];
    switch (m) {
    case 0: ks_roi_lanes4(X, ax, 0); break;
    case 1: ks_roi_lanes4(X, ax, 1); break;
    case 2: ks_roi_lanes4(X, ax, 2); break;
    default: ks_roi_lanes4(X, ax, 3); break;
    }
    float rows[KS_ROI_SPAN]; /* taken with ks_roi_next_row */
    for (int k = 0; k < KS_ROI_SPAN; ++k) rows[k] = ay[k];
    for (int a = 0; a < KS_ROI_SPAN && a < ny; ++a) {
        const float ya = ks_roi_next_row(rows);
        if (ya == 0.0f) continue;
        float *row = grad + (ylo + a) * W + xlo - m;
        for (int j = 0; j < KS_ROI_CC && j < nc; ++j) {
            const float wr = share[j] * ya;
            for (int q = 0; q < 3 && q < groups; ++q)
                atomicAdd((float4 *)(row + j * HW + 4 * q),
                          make_float4(wr * X[4 * q], wr * X[4 * q + 1], wr * X[4 * q + 2], wr * X[4 * q + 3]));
        }
    }
    return 1;
}
#endif

/* Backward of one slot: avg spreads grad/count over every in-range sample's corners (a
 * bin whose samples span at most KS_ROI_SPAN pixels per axis adds each pixel's summed
 * weight once); max sends the whole gradient to the corners of the argmax sample. Atomic
 * adds: bins overlap. */
KS_FN void KS_VARIANT(ks_roi_bwd_slot)(ks_thread *t, const ks_roi_align_args *a, KS_IDX k, KS_IDX c0, KS_IDX ph,
                                       KS_IDX pw, uint32_t iter, const int is_max)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width, HW = H * W;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX nc = C - c0 < KS_ROI_CC ? C - c0 : KS_ROI_CC;
    const KS_IDX out0 = ((k * C + c0) * PH + ph) * PW + pw;
    ks_roi_box r;
    ks_roi_box_of(a->rois + k * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
    KS_PROBE(if (ks_probe_start(t, out0, iter))
                 ks_probe_fields(t, KS_ROI_SITE_WORK, k, c0, ph, pw, r.b, r.grid_h, r.grid_w, 0));
    KS_PROBE(if (r.b >= 0) ks_roi_probe_boxes(t, &r, a->aligned, PH, PW, KS_ROI_T_GRAD_INPUT, r.b * C + c0));
    if (r.b < 0) return;
    const KS_IDX plane0 = (KS_IDX)r.b * C + c0;
    float *grad = a->grad_input + plane0 * HW;
    if (is_max) {
        for (int j = 0; j < KS_ROI_CC && j < nc; ++j) {
            const KS_IDX index = out0 + j * PH * PW;
            const float g = a->grad_output[index], y = a->argmax_y[index], x = a->argmax_x[index];
            ks_roi_sample s;
            if (y != -1.0f && ks_roi_sample_at(H, W, y, x, &s)) {
                KS_PROBE(ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_GRAD_INPUT, 0, plane0 + j, s.y, s.x, s.w[0],
                                         s.w[1], s.w[2], s.w[3], g, s.flags));
                KS_VARIANT(ks_roi_scatter)(t, grad + j * HW, plane0 + j, H, W, &s, g, 0);
            }
        }
        return;
    }
    const KS_IDX gh = (KS_IDX)r.grid_h, gw = (KS_IDX)r.grid_w;
    float share[KS_ROI_CC];
    for (int j = 0; j < KS_ROI_CC; ++j)
        share[j] = j < nc ? a->grad_output[out0 + j * PH * PW] / (float)(gh * gw > 0 ? gh * gw : 1) : 0.0f;
    /* the bin's footprint, merged per axis; a bin too wide for it scatters sample by sample */
    float ay[KS_ROI_SPAN], ax[KS_ROI_SPAN];
    int64_t ylo, xlo;
    int ny, nx;
    unsigned hy, hx, zy, zx; /* not needed: a scatter adds its gradient times each weight */
    if (ks_roi_profile(r.y1, ph, r.bin_h, gh, H, ay, &ylo, &ny, &hy, &zy) &&
        ks_roi_profile(r.x1, pw, r.bin_w, gw, W, ax, &xlo, &nx, &hx, &zx)) {
        KS_PROBE(for (KS_IDX iy = 0; iy < gh; ++iy) for (KS_IDX ix = 0; ix < gw; ++ix) {
            float y, x;
            ks_roi_sample s;
            ks_roi_sample_in_bin(&r, ph, pw, iy, ix, gh, gw, H, W, &y, &x, &s);
            ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_GRAD_INPUT, (int)(iy * gw + ix), plane0, s.y, s.x, s.w[0],
                            s.w[1], s.w[2], s.w[3], share[0], s.flags);
        });
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (!KS_TRACED &&
            KS_VARIANT(ks_roi_scatter_bin4)(grad, HW, W, (int)nc, share, ay, (KS_IDX)ylo, ny, ax, (KS_IDX)xlo, nx))
            return;
#endif
        for (int j = 0; j < KS_ROI_CC && j < nc; ++j)
            KS_VARIANT(ks_roi_scatter_bin)(t, grad + j * HW, plane0 + j, H, W, ay, (KS_IDX)ylo, ny, ax, (KS_IDX)xlo, nx,
                                           share[j]);
        return;
    }
    for (KS_IDX iy = 0; iy < gh; ++iy) {
        for (KS_IDX ix = 0; ix < gw; ++ix) {
            float y, x;
            ks_roi_sample s;
            const int in = ks_roi_sample_in_bin(&r, ph, pw, iy, ix, gh, gw, H, W, &y, &x, &s);
            for (int j = 0; j < KS_ROI_CC && j < nc; ++j) {
                KS_PROBE(ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_GRAD_INPUT, (int)(iy * gw + ix), plane0 + j,
                                         s.y, s.x, s.w[0], s.w[1], s.w[2], s.w[3], share[j], s.flags));
                if (in)
                    KS_VARIANT(ks_roi_scatter)(t, grad + j * HW, plane0 + j, H, W, &s, share[j], (int)(iy * gw + ix));
            }
        }
    }
}

/* The slots of this thread (grid-stride), forward or backward; backward, the pool mode
 * and merge (1: the merged avg forward, -1: a->merge decides) are constants where
 * inlined, so each plain kernel holds one slot function. */
KS_FN void KS_VARIANT(ks_roi_align_slots_run)(ks_thread *t, const ks_roi_align_args *a, const int backward,
                                              const int merge)
{
    const KS_IDX n_slots = (KS_IDX)ks_roi_align_slots(a, KS_ROI_CC);
    KS_IDX slot = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    if (slot >= n_slots) return;
    const int is_max = a->pool_mode == KS_ROI_MAX;
    /* at.d: pw, ph, k, chunk (chunk slowest); with one channel a slot (the traced kernels,
     * and every kernel on the simulator) a slot is one output element and goes in the
     * output's order, pw, ph, c, k (k slowest): the work item a thread records (numbered
     * as the output) is the one its grid-stride loop gives it */
    const int by_output = KS_ROI_CC == 1;
    KS_VARIANT(ks_walk) at;
    KS_VARIANT(ks_walk_start)(&at, slot, grid_stride, (KS_IDX)a->pooled_w, (KS_IDX)a->pooled_h,
                              by_output ? (KS_IDX)a->channels : (KS_IDX)a->num_rois);
    for (uint32_t iter = 0; slot < n_slots; slot += grid_stride, ++iter, KS_VARIANT(ks_walk_step)(&at)) {
        const KS_IDX k = at.d[by_output ? 3 : 2], c0 = at.d[by_output ? 2 : 3] * KS_ROI_CC, ph = at.d[1], pw = at.d[0];
        if (backward && is_max) KS_VARIANT(ks_roi_bwd_slot)(t, a, k, c0, ph, pw, iter, 1);
        else if (backward) KS_VARIANT(ks_roi_bwd_slot)(t, a, k, c0, ph, pw, iter, 0);
        else if (is_max) KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0, ph, pw, iter, 1, 0);
        else if (merge == 1 || (merge < 0 && a->merge)) KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0, ph, pw, iter, 0, 1);
        else KS_VARIANT(ks_roi_fwd_slot)(t, a, k, c0, ph, pw, iter, 0, 0);
    }
}

/* The forward: the traced variant merges as a->merge says; the plain one never (the
 * merged avg forward is its own plain kernel, fwdm below, so that the slot kernel of fixed
 * grids keeps its registers: the launchers pick fwdm when a->merge). */
KS_FN void KS_VARIANT(ks_roi_align_fwd_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_VARIANT(ks_roi_align_slots_run)(t, a, 0, KS_TRACED ? -1 : 0);
}
/* at most 64 registers, so any block size launches (the traced bodies wanted more than 512
 * threads fit) and the plain ones keep 32 warps per SM in flight, which their gathers need */
KS_KERNEL_T32(ks_roi_align_fwd, ks_roi_align_args, __launch_bounds__(1024), __launch_bounds__(1024))

/* the merged avg forward of adaptive grids (a->merge; its traced twin is the forward row):
 * at most 64 registers, so any block size launches (-DKS_ROI_FWDM_MAXNREG=N to compare;
 * over 64, blocks of 1024 do not launch) */
#ifndef KS_ROI_FWDM_MAXNREG
#define KS_ROI_FWDM_MAXNREG 64
#endif
KS_FN void KS_VARIANT(ks_roi_align_fwdm_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_VARIANT(ks_roi_align_slots_run)(t, a, 0, 1);
}
KS_KERNEL_PLAIN(ks_roi_align_fwdm, ks_roi_align_args, __maxnreg__(KS_ROI_FWDM_MAXNREG))

/* the plain backward's register cap (-DKS_ROI_BWD_MAXNREG=N to compare: 40 fits 3 blocks of 512) */
#ifndef KS_ROI_BWD_MAXNREG
#define KS_ROI_BWD_MAXNREG 64
#endif
KS_FN void KS_VARIANT(ks_roi_align_bwd_body)(ks_thread *t, const ks_roi_align_args *a)
{
    KS_VARIANT(ks_roi_align_slots_run)(t, a, 1, 0);
}
KS_KERNEL_T32(ks_roi_align_bwd, ks_roi_align_args, __maxnreg__(KS_ROI_BWD_MAXNREG), __launch_bounds__(1024))
#endif
