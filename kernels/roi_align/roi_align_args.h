/* roi_align_args.h - the kernel arguments of RoIAlign, shared by the bodies and the
 * host launchers. */
#ifndef KS_ROI_ALIGN_ARGS_H
#define KS_ROI_ALIGN_ARGS_H

#include "../core/ks_kernel.h"
#include "../core/ks_core.h"
#include "roi_align.h"

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
/* RoIAlign's kernel rows (roi_align_kernels.c): the slot forward and the backward (traced),
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

#endif
