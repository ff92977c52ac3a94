/* deform_body.h - deformable convolution v1 (mmcv DeformConv2d) and v2 with a mask (mmcv
 * ModulatedDeformConv2d, torchvision deform_conv2d): three kernels and the layer.
 *
 *   input  [N, C, H, W]
 *   offset [N, G_off*2*kh*kw, Ho, Wo]   channel g*2*kh*kw + 2*(i*kw + j) + {0: dy, 1: dx}
 *   mask   [N, G_off*kh*kw, Ho, Wo]     channel g*kh*kw + i*kw + j (optional, not clamped)
 *   weight [O, C/groups, kh, kw],  bias [O] (optional)
 *   output [N, O, Ho, Wo]
 *
 * Tap (i, j) of output (ho, wo) samples input plane c at
 *   y = ho*sh - ph + i*dh + dy,   x = wo*sw - pw + j*dw + dx
 * by bilinear interpolation with zero padding per corner (the support is the open box
 * (-1, H) x (-1, W)), times the mask. Input channel c belongs to offset group
 * c / (C/G_off); conv groups and offset groups are independent.
 *
 * The layer works on chunks of `im2col_step` images (mmcv's name). Its columns matrix is
 *   columns [C*kh*kw, im2col_step*Ho*Wo]: row (c*kh + i)*kw + j, column (b*Ho + ho)*Wo + wo
 * (b the image within the chunk), and output = weight x columns per conv group.
 *
 * The declarations of the family come first (the layer, the kernels' arguments, the
 * fused forward's row; the other bodies take them alone with KS_DEFORM_DECL_ONLY), then
 * the three teaching kernels, written once (see im2col_body.h for how the plain and
 * traced variants are made). Names follow mmcv's
 * deform_conv_cuda_kernel.cuh, so the lesson text, the reference and this file read
 * alike. `im2col_step` images per launch; b is the image within the chunk.
 *
 * A tap (i, j) of output position (h_col, w_col) samples
 *   y = (h_col*sh - ph + i*dh) + dy,   x = (w_col*sw - pw + j*dw) + dx
 * with (dy, dx) = offset[b, g*2*kh*kw + 2*(i*kw + j) + {0, 1}, h_col, w_col].
 */
#ifndef KS_DEFORM_DECL
#define KS_DEFORM_DECL
#include <stddef.h>
#include <stdint.h>

#include "../core/ks_kernel.h"
#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where mmcv and torchvision differ:
 * - the coordinate gradient exactly on y == -1 or x == -1: mmcv 0, torchvision the
 *   one-sided inside derivative;
 * - the chunk: mmcv takes min(p->im2col_step, N) images and rejects N not divisible by it;
 *   torchvision takes the largest divisor of N that is <= p->im2col_step (32 there). */
typedef enum ks_deform_semantics { KS_DEFORM_MMCV = 0, KS_DEFORM_TORCHVISION = 1 } ks_deform_semantics;

typedef struct ks_deform_params {
    int64_t batch, channels, height, width; /* input [N, C, H, W] */
    int64_t out_channels;                   /* O */
    int64_t kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int64_t groups;        /* conv groups: C and O divisible by it */
    int64_t offset_groups; /* deformable groups: C divisible by it */
    int64_t im2col_step;   /* images per chunk (bound); 32 in both references */
    int use_mask;          /* v2: multiply each sample by its mask value */
    int use_bias;
    int semantics; /* ks_deform_semantics */
    int math;      /* the GEMMs: KS_MATH_FP32 (0, default) or KS_MATH_TF32 (1, ks_gemm.h):
                              inputs rounded to TF32 (cuBLAS on the tensor cores; the
                              simulator emulates the rounding), sums in fp32 */
    /* kernel choices, for measuring (kscope run deform_conv's flags; 0 everywhere: the
     * defaults); ks_deform_geometry refuses values outside their ranges */
    int fused;                             /* the TF32 forward's fused kernel (CUDA): 0 off (slower than im2col +
                         cuBLAS so far), 1 on (its tile shape by the group's outputs), or
                         the shape 24, 42, 422 (42 at two blocks an SM) or 44 */
    int grad_kernel;                       /* the backward's gradient kernel on CUDA: 0 auto (grad_gather where it
                         fits, else grad_tile, else grad_tap), 1 grad_tile, 2 grad_tap */
    int grad_columns;                      /* 0: the gradient kernel writes the columns; 1: a separate im2col pass
                         (as mmcv and torchvision) */
    int tile_positions, tile_windows;      /* grad_tile: 0, or a power of 2 in 1..1024; 0 or 1..16 */
    int gather_positions, gather_channels; /* grad_gather: 0, or a power of 2 in 1..1024; 0 or 1..32 */
} ks_deform_params;

typedef struct ks_deform_geom {
    int64_t height_out, width_out; /* Ho, Wo */
    int64_t im2col_step;           /* images per chunk, by the semantics' rule */
    int64_t rows;                  /* C*kh*kw */
    int64_t input_numel, offset_numel, mask_numel, weight_numel, output_numel;
    int64_t col_numel;   /* rows * im2col_step*Ho*Wo: the columns matrix of one chunk */
    int64_t im2col_work; /* C*im2col_step*Ho*Wo: im2col work items per chunk */
    int64_t col2im_work; /* C*kh*kw*im2col_step*Ho*Wo */
    int64_t coord_work;  /* im2col_step*G_off*2*kh*kw*Ho*Wo */
} ks_deform_geom;

/* mmcv launches: 512 threads, at most 4096 blocks (grid-stride beyond). */
#define KS_DEFORM_THREADS 512
#define KS_DEFORM_BLOCK_CAP 4096

/* Trace sites and tensors of the three kernels (one kernel per trace). */
enum {
    KS_DEFORM_SITE_WORK,
    KS_DEFORM_SITE_READ_OFFSET,
    KS_DEFORM_SITE_READ_MASK,
    KS_DEFORM_SITE_SAMPLE,
    KS_DEFORM_SITE_WRITE, /* im2col has these five */
    KS_DEFORM_SITE_READ_COL,
    KS_DEFORM_SITE_WRITE_MASK,
    KS_DEFORM_NSITES, /* col2im and coord have these seven */
    /* the tap backward kernels' grad_offset writes (their KS_DEFORM_SITE_WRITE adds to
     * grad_input): grad_tap has these eight */
    KS_DEFORM_SITE_WRITE_OFFSET = KS_DEFORM_NSITES,
    /* grad_tile's shared window: read, write, barrier (three sites past the schemas; the
       operator never traces grad_tile or grad_gather) */
    KS_DEFORM_SITE_TILE
};
/* The kernels touch the first seven; the layer (deform_conv) adds the rest. */
enum {
    KS_DEFORM_T_INPUT,
    KS_DEFORM_T_OFFSET,
    KS_DEFORM_T_MASK,
    KS_DEFORM_T_COLUMNS,
    KS_DEFORM_T_GRAD_INPUT,
    KS_DEFORM_T_GRAD_OFFSET,
    KS_DEFORM_T_GRAD_MASK,
    KS_DEFORM_T_WEIGHT,
    KS_DEFORM_T_BIAS,
    KS_DEFORM_T_OUTPUT,
    KS_DEFORM_T_GRAD_OUTPUT,
    KS_DEFORM_T_GRAD_WEIGHT,
    KS_DEFORM_T_GRAD_BIAS
};
typedef enum ks_deform_kernel {
    KS_DEFORM_NONE = -1, /* as `traced`: record nothing */
    KS_DEFORM_IM2COL = 0,
    KS_DEFORM_COL2IM = 1,
    KS_DEFORM_COORD = 2,
    /* the layer's fast kernels (deform_tap_body.h): one item per tap and position, the
     * sampling geometry placed once for many channels; the same values as the three above */
    KS_DEFORM_IM2COL_TAP = 3, /* = IM2COL; items (channel block, tap, b, h_col, w_col) */
    KS_DEFORM_GRAD_TAP = 4,   /* = COL2IM + COORD in one pass; items (b, g, tap, h_col, w_col) */
    KS_DEFORM_GRAD_TILE = 5,  /* = GRAD_TAP, a block per tile of output positions: its adds to
                                 grad_input gather in shared memory first (deform_tile_body.h) */
    KS_DEFORM_GRAD_GATHER = 6 /* = GRAD_TAP, a block per tile: each window pixel sums the
                                 entries that land on it, for 32 channels at once, with no
                                 shared atomics (deform_gather_body.h) */
} ks_deform_kernel;
/* channels an im2col_tap item blends with one placement */
#define KS_DEFORM_TAP_CHANNELS 32
/* the tap kernels' default block (the teaching kernels keep mmcv's 512): more blocks per
 * SM at their register count */
#define KS_DEFORM_TAP_THREADS 256
#define KS_DEFORM_DEFAULT_THREADS(k) \
    ((k) == KS_DEFORM_IM2COL_TAP || (k) == KS_DEFORM_GRAD_TAP ? KS_DEFORM_TAP_THREADS : KS_DEFORM_THREADS)
/* grad_tile: output positions per tile (the block has kh*kw threads per position; fewer
 * positions when that passes 512; --grad-tile N sets it), the pixels a tile's
 * shared window reaches past the taps' grid (offsets up to this stay in shared memory),
 * and the window's largest size in floats (larger: grad_tap runs instead) */
#define KS_DEFORM_TILE_POSITIONS 16
#define KS_DEFORM_TILE_MARGIN 4
#define KS_DEFORM_TILE_CAP 4096
/* grad_tile: channels per barrier phase (one window each, as many as fit) */
#define KS_DEFORM_TILE_WINDOWS 4
/* grad_gather: output positions per tile (--gather-tile N), channels per block
 * (--gather-channels N, 1..32; fewer where the shared memory runs out), and
 * its shared memory in 4-byte slots: the simulator's 48 KiB arena */
#define KS_DEFORM_GATHER_POSITIONS 32
#define KS_DEFORM_GATHER_CHANNELS 32
#define KS_DEFORM_GATHER_CAP 12288
/* grad_gather: channels whose loads its threads issue together (compile time) */
#ifndef KS_DEFORM_GATHER_STEP
#define KS_DEFORM_GATHER_STEP 2
#endif

/* Offsets that make sampling points visible, for every image, group and position:
 * ZERO; SHIFT by (a0, a1) = (dy, dx); RANDOM uniform in [-a0, a0] (seeded); ROTATE the
 * kernel grid by a0 degrees about the window centre; SCALE it by a0 about the centre
 * (offset = (a0 - 1) * the tap's place relative to the centre). offset has
 * p->batch * G_off*2*kh*kw * Ho*Wo floats. */
typedef enum ks_offset_pattern {
    KS_OFF_RANDOM,
    KS_OFF_SHIFT,
    KS_OFF_ROTATE,
    KS_OFF_SCALE,
    KS_OFF_ZERO
} ks_offset_pattern;
int ks_deform_offset_fill(const ks_deform_params *p, int pattern, const double amount[2], uint64_t seed, float *offset);

/* Validates p (every size >= 1 where it must be, divisibility, the offset-group and
 * chunk rules, no product past 2^62) and fills g. KS_EINVAL with a message otherwise. */
int ks_deform_geometry(const ks_deform_params *p, ks_deform_geom *g);

/* One chunk of `im2col_step` images (pointers at the chunk's first image), host pointers for
 * the simulator (`sink` NULL: plain variant), device pointers for CUDA (`dev_sink` NULL:
 * plain; `stream` a cudaStream_t or NULL). mask is NULL unless p->use_mask.
 *   im2col: input, offset, mask -> columns (every entry written)
 *   col2im: offset, mask, columns (the gradient of columns) -> grad_input += (atomics)
 *   coord:  input, offset, mask, columns -> grad_offset, grad_mask (every entry written;
 *           grad_mask only with a mask)
 *   im2col_tap: as im2col;  grad_tap: as col2im and coord together */
typedef struct ks_deform_chunk {
    int64_t im2col_step;
    const float *input, *offset, *mask;
    const float *columns_in; /* col2im, coord */
    float *columns;          /* im2col */
    float *grad_input, *grad_offset, *grad_mask;
    int write_columns; /* grad_tap, grad_tile, grad_gather, untraced (a sink: KS_EINVAL): also write
                          im2col's entry over each column-gradient entry they read (columns
                          == columns_in), so the grad_weight GEMM needs no im2col pass */
} ks_deform_chunk;

int ks_deform_kernel_sim(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                         const ks_launch *launch, ks_sink *sink);
int ks_deform_kernel_cuda(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                          const ks_launch *launch, const ks_sink *dev_sink, void *stream);
/* 1 when grad_tile can run this geometry (its window fits KS_DEFORM_TILE_CAP): the CUDA
 * layer then runs it in place of grad_tap */
int ks_deform_tile_fits(const ks_deform_params *p, const ks_deform_geom *g);
/* 1 when grad_gather can run this geometry (one channel's lists fit its shared memory) */
int ks_deform_gather_fits(const ks_deform_params *p, const ks_deform_geom *g);
/* 1 when the CUDA layer's forward runs a chunk as one fused TF32 kernel (deform_fused.cu):
 * opted in with p->fused (--fused: 1, or a tile shape: 24, 42, 422, 44; 0: off, as on the H100 it is still slower than im2col + cuBLAS, bench/RESULTS.md),
 * p->math is TF32, every block of 32 channels lies in one conv group and one offset group
 * (C/groups and C/offset_groups multiples of 32), every tensor has fewer than 2^30
 * entries and the prepared weight (each group's rows rounded up to 256) fits in the
 * workspace. Traced chunks and a requested columns0 run im2col + GEMM. */
int ks_deform_fused_fits(const ks_deform_params *p, const ks_deform_geom *g);
/* fused kernels launched by this process (tests check that the path they mean ran) */
long long ks_deform_fused_launches(void);
/* Work items of kernel k for a chunk of `im2col_step` images (g from ks_deform_geometry). */
int64_t ks_deform_work(const ks_deform_geom *g, const ks_deform_params *p, ks_deform_kernel k, int64_t im2col_step);
/* The kernel rows (deform_op.c), one table: indexed by ks_deform_kernel (the seven above),
 * then the layer's other kernels: the fused TF32 forward's weight preparation and the
 * forward itself (plain_only, CUDA only, its twin im2col: deform_fused.cu), and the small
 * kernels around the GEMMs (deform_bias_body.h). deform_conv lists them all (kscope list);
 * --trace-kernel takes im2col, col2im and coord, the rows with a trace schema (the others
 * are no_trace or plain_only). deform_im2col lists im2col alone. */
enum {
    KS_DEFORM_ROW_FUSED_WEIGHT = KS_DEFORM_GRAD_GATHER + 1,
    KS_DEFORM_ROW_FUSED,
    KS_DEFORM_ROW_ADD_BIAS,
    KS_DEFORM_ROW_GATHER_GRAD,
    KS_DEFORM_ROW_ROW_SUMS,
    KS_DEFORM_NROWS
};
extern const ks_kernel ks_deform_rows[KS_DEFORM_NROWS];
/* Kernel k (one of the seven) on chunk c of the validated geometry g (nothing checked
 * again) through the sequence x, whose table is ks_deform_rows (or its first rows): the
 * launch sized by the registry (grad_tile and grad_gather by their tiles), 32-bit where
 * input, offset and columns fit; it records into x->sink when `record` (the layer's
 * first chunk of the traced kernel). The layer, the operators and ks_deform_kernel_sim /
 * _cuda run every deformable kernel through this. */
int ks_deform_exec(ks_exec *x, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                   const ks_deform_chunk *c, int record);

/* The tensors of the layer. Forward reads input, offset, mask, weight, bias and writes
 * output. Backward reads those and grad_output and writes every grad_* (grad_mask only
 * with a mask, grad_bias only with a bias). Unused pointers may be NULL. */
typedef struct ks_deform_tensors {
    const float *input, *offset, *mask, *weight, *bias;
    float *output;
    const float *grad_output;
    float *grad_input, *grad_offset, *grad_mask, *grad_weight, *grad_bias;
    float *columns0; /* optional: receives the first chunk's columns (forward: the im2col;
                        backward: the column gradient), rows * im2col_step*Ho*Wo floats */
} ks_deform_tensors;

/* Floats of scratch memory the layer needs: columns and a GEMM buffer of one chunk. */
int64_t ks_deform_workspace_floats(const ks_deform_params *p);

/* The layer on the simulator: host pointers; the scratch is allocated inside. `sink`
 * records the kernel `traced` of the first chunk only (NULL: nothing traced). The GEMM
 * is a blocked GEMM in C. */
int ks_deform_forward_sim(const ks_deform_params *p, const ks_deform_tensors *t, const ks_launch *launch,
                          ks_deform_kernel traced, ks_sink *sink);
int ks_deform_backward_sim(const ks_deform_params *p, const ks_deform_tensors *t, const ks_launch *launch,
                           ks_deform_kernel traced, ks_sink *sink);

/* The layer on the GPU: device pointers, `workspace` device memory of
 * ks_deform_workspace_floats() floats; GEMM with cuBLAS (p->math: fp32 or TF32). `dev_sink`
 * records the kernel `traced` of the first chunk. In a build without nvcc: KS_ECUDA. */
int ks_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                           const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream);
int ks_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                            const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream);

/* The layer as a sequence of kernel rows: forward, or with `backward` the backward, through
 * x (ks_deform_rows on x->device; its launch, sink and stream), which records kernel
 * `traced` of the first chunk into x->sink. workspace: ks_deform_workspace_floats() floats
 * (device memory on CUDA). The four entry points above make x; the operator's run gets it
 * from the registry. */
int ks_deform_layer(ks_exec *x, const ks_deform_params *p, const ks_deform_tensors *t, float *workspace, int backward,
                    ks_deform_kernel traced);

/* Independent reference in double, from the definition (direct loops, no columns, no
 * chunks): forward, and every gradient of sum(output * grad_output). The coordinate
 * gradient at a kink is the one-sided (forward) difference, as in both references;
 * on y == -1 or x == -1 it follows p->semantics. */
void ks_deform_ref_forward(const ks_deform_params *p, const ks_deform_tensors *t, double *output);
typedef struct ks_deform_ref_grads {
    double *grad_input, *grad_offset, *grad_mask, *grad_weight, *grad_bias;
} ks_deform_ref_grads;
void ks_deform_ref_backward(const ks_deform_params *p, const ks_deform_tensors *t, const ks_deform_ref_grads *g);

/* The trace schema of kernel k (im2col, col2im, coord, im2col_tap or grad_tap) for a chunk
 * of `im2col_step` images: returns the number of sites (5 for im2col and im2col_tap, whose
 * tensors are the first four; KS_DEFORM_NSITES for col2im and coord; one more for grad_tap). */
int ks_deform_sites(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k, int64_t im2col_step,
                    ks_site *sites);

#ifdef __cplusplus
}
#endif

/* ---- the kernels' arguments, shared by the bodies (device and simulator) and the host ---- */
#include <stdint.h>

#include "../core/ks_core.h"

/* Everything a thread needs, passed by value to the CUDA kernels. Pointers are at the
 * chunk's first image; `im2col_step` images per chunk. */
typedef struct ks_deform_args {
    int64_t channels, height, width;
    int64_t kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int64_t im2col_step, offset_groups, height_col, width_col;
    int use_mask, semantics;
    const float *input;       /* [im2col_step, C, H, W] */
    const float *offset;      /* [im2col_step, G_off*2*kh*kw, Ho, Wo] */
    const float *mask;        /* [im2col_step, G_off*kh*kw, Ho, Wo] or NULL */
    const float *col_in;      /* col2im, coord: [C*kh*kw, im2col_step*Ho*Wo] */
    float *col_out;           /* im2col: [C*kh*kw, im2col_step*Ho*Wo] */
    float *grad_input;        /* col2im: [im2col_step, C, H, W], accumulated */
    float *grad_offset;       /* coord: like offset */
    float *grad_mask;         /* coord: like mask (with a mask) */
    int64_t tile_positions;   /* grad_tile: output positions per tile (a power of 2) */
    int64_t tile_windows;     /* grad_tile: channels per barrier phase, at most */
    int write_columns;        /* grad_tap, grad_tile, grad_gather: the chunk's write_columns */
    int64_t gather_positions; /* grad_gather: output positions per tile (a power of 2) */
    int64_t gather_channels;  /* grad_gather: channels per block, at most (1..32) */
} ks_deform_args;

/* grad_tile's tile: th x tw output positions (tw <= 8), kk*th*tw <= 512 threads; its
 * shared windows: rh x rw input pixels (the taps' reach, one more for the bottom-right
 * corners, the margin on each side; rw a multiple of 4, room for the first column to
 * start on a multiple of 4), one per channel of a phase: `windows` of them. */
typedef struct ks_deform_tile {
    int64_t th, tw, rh, rw, windows;
} ks_deform_tile;

/* A tile of tp output positions (a power of 2, fewer while kk*tp passes 512): th x tw
 * (tw <= 8), and the window of input pixels its taps reach (the tile's own formula above). */
KS_FN void ks_deform_window_of(const ks_deform_args *a, int64_t tp, ks_deform_tile *s)
{
    const int64_t kk = a->kernel_h * a->kernel_w;
    tp = tp > 0 ? tp : 1;
    while (tp > 1 && kk * tp > 512) tp /= 2;
    s->tw = tp >= 8 ? 8 : tp;
    s->th = tp / s->tw;
    s->rh = (s->th - 1) * a->stride_h + (a->kernel_h - 1) * a->dilation_h + 2 + 2 * KS_DEFORM_TILE_MARGIN;
    s->rw = ((s->tw - 1) * a->stride_w + (a->kernel_w - 1) * a->dilation_w + 2 + 2 * KS_DEFORM_TILE_MARGIN + 3 + 3) /
            4 * 4;
}

KS_FN ks_deform_tile ks_deform_tile_of(const ks_deform_args *a)
{
    ks_deform_tile s;
    ks_deform_window_of(a, a->tile_positions, &s);
    const int64_t cpg = a->channels / a->offset_groups, fit = KS_DEFORM_TILE_CAP / (s.rh * s.rw);
    const int64_t want = a->tile_windows > 0 ? a->tile_windows : 1;
    s.windows = fit < want ? fit : want;
    s.windows = s.windows < cpg ? s.windows : cpg;
    return s;
}

/* grad_gather's tile: grad_tile's tile and window (ks_deform_window_of), halved while not
 * one channel's lists fit, thread = entry (tap, position), `entries` = kk*th*tw of them. Its shared memory, one array of
 * `floats` 4-byte slots (at most KS_DEFORM_GATHER_CAP, the simulator's 48 KiB):
 *   top   [nb][ep] at 0:          each entry's scattered value (the column gradient, times
 *                                 the mask) for the block's nb channels; ep = entries rounded
 *                                 up to 32k + 1, so lanes reading one entry for 32 channels
 *                                 hit 32 banks
 *   start [npix + 1] at at_start: the window pixels' lists: their lengths, then where each
 *                                 starts (an exclusive sum), start[npix] = all of them
 *   part  [32] at at_part:        the sum's chunk totals
 *   le, lw [4 * entries] at at_le, at_lw: the lists: entry and weight of each corner that
 *                                 lands in the window, by pixel */
typedef struct ks_deform_gather {
    ks_deform_tile w; /* th, tw, rh, rw (windows unused) */
    int64_t entries, ep, npix, nb, at_start, at_part, at_le, at_lw, floats;
} ks_deform_gather;

KS_FN ks_deform_gather ks_deform_gather_of(const ks_deform_args *a)
{
    ks_deform_gather s;
    const int64_t cpg = a->channels / a->offset_groups, want = a->gather_channels > 0 ? a->gather_channels : 1;
    /* the tile halves while not one channel's lists fit (a wide dilation or stride) */
    for (int64_t tp = a->gather_positions > 0 ? a->gather_positions : 1;; tp /= 2) {
        ks_deform_window_of(a, tp, &s.w);
        s.w.windows = 0;
        s.entries = a->kernel_h * a->kernel_w * s.w.th * s.w.tw;
        s.ep = (s.entries + 30) / 32 * 32 + 1;
        s.npix = s.w.rh * s.w.rw;
        const int64_t fixed = s.npix + 1 + 32 + 8 * s.entries;
        const int64_t fit = fixed < KS_DEFORM_GATHER_CAP ? (KS_DEFORM_GATHER_CAP - fixed) / s.ep : 0;
        s.nb = fit < want ? fit : want;
        s.nb = s.nb < cpg ? s.nb : cpg;
        if (s.nb >= 1 || tp <= 1) break;
    }
    s.at_start = s.nb * s.ep;
    s.at_part = s.at_start + s.npix + 1;
    s.at_le = s.at_part + 32;
    s.at_lw = s.at_le + 4 * s.entries;
    s.floats = s.at_lw + 4 * s.entries;
    return s;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Validates p and fills the arguments of kernel k for chunk c, and the geometry. */
void ks_deform_args_fill(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                         ks_deform_args *a);
/* grad_tile's launch: one block of kk*th*tw threads per tile, at most the launch's block
 * cap (KS_DEFORM_BLOCK_CAP by default) blocks; KS_EINVAL when its window does not fit */
int ks_deform_tile_launch(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_args *a,
                          const ks_launch *launch, int *threads, int64_t *blocks);
/* grad_gather's launch: one block of kk*th*tw threads per tile (at most the block cap, grid
 * stride beyond) and its shared bytes; KS_EINVAL when not one channel's lists fit */
int ks_deform_gather_launch(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_args *a,
                            const ks_launch *launch, int *threads, int64_t *blocks, size_t *shared);
int ks_deform_args_make(const ks_deform_params *p, const ks_deform_chunk *c, ks_deform_args *a, ks_deform_geom *g);
#ifdef __cplusplus
}
#endif

/* ---- the fused TF32 forward's row: deform_layer.c, deform_geom.c, deform_fused.cu ---- */
#ifdef __cplusplus
extern "C" {
#endif

/* The fused TF32 forward's rows: a chunk's whole forward in one kernel, output and bias
 * included, where ks_deform_fused_fits (deform_fused.cu). Its arguments, by value: the
 * chunk's sampling, the prepared weight wf, bias (NULL: none), the chunk's output
 * [im2col_step][O][P]; O outputs, Og and Cg a conv group's outputs and channels. */
typedef struct ks_deform_fused_args {
    ks_deform_args a;
    const float *wf;
    const float *bias;
    float *out;
    int O, Og, Cg;
} ks_deform_fused_args;
/* The row's arguments (KS_DEFORM_ROW_FUSED): the kernel's, and its tile shape as M x N warps
 * (ks_deform_fused_shape), which picks the template kernel and, through the row's
 * tile_of (ks_deform_fused_tile), the block: 32*M*N threads over a 64*M x 32*N tile of
 * (outputs, columns). Its work: the chunk's columns x Og x groups. */
typedef struct ks_deform_fused_row {
    ks_deform_fused_args k;
    int shape; /* 24, 42, 422 (42 at two blocks an SM) or 44 */
} ks_deform_fused_row;
int ks_deform_fused_shape(const ks_deform_params *p);
void ks_deform_fused_tile(const void *args, ks_tile *t);
int ks_deform_fused_cuda_row(const void *args, const ks_grid *g, const ks_sink *dev_sink);
void ks_deform_fused_launched(void);
/* p->fused: 0 off, 1 on, or the tile shape asked for (24, 42, 422, 44) */
int ks_deform_fused_choice(const ks_deform_params *p);

#ifdef __cplusplus
}
#endif

#include "deform_bilinear.h"
#endif /* KS_DEFORM_DECL */

#if defined(KS_VARIANT) && !defined(KS_DEFORM_DECL_ONLY)
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including deform_body.h"
#endif
#include "../core/ks_probe.h"

/* deformable_im2col: one work item per (c_im, b, h_col, w_col), w_col fastest. It writes
 * the kh*kw taps of its window into rows (c_im*kh + i)*kw + j of the columns matrix,
 * im2col_step*Ho*Wo apart: the blended sample, times the mask with one. */
KS_FN void KS_VARIANT(ks_deform_im2col_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w, kk = kh * kw;
    const KS_IDX im2col_step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups;
    const KS_IDX n_work = C * im2col_step * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_col = (index / Wo) % Ho;
        const KS_IDX b = (index / Wo / Ho) % im2col_step;
        const KS_IDX c_im = index / Wo / Ho / im2col_step;
        const KS_IDX g = c_im / (C / G); /* the offset group of this channel */
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, c_im, b, h_col, w_col, g, 0, 0, 0));
        const KS_IDX h_in = h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h;
        const KS_IDX w_in = w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w;
        const float *im = a->input + (b * C + c_im) * H * W;
        const KS_IDX off0 = (b * G + g) * 2 * kk * Ho * Wo + h_col * Wo + w_col;
        const KS_IDX mask0 = (b * G + g) * kk * Ho * Wo + h_col * Wo + w_col;
        float *col = a->col_out + ((c_im * kk * im2col_step + b) * Ho + h_col) * Wo + w_col;
        for (KS_IDX i = 0; i < kh; ++i) {
            for (KS_IDX j = 0; j < kw; ++j) {
                const KS_IDX tap = i * kw + j;
                const KS_IDX oy = off0 + 2 * tap * Ho * Wo, ox = oy + Ho * Wo;
                const float dy = a->offset[oy], dx = a->offset[ox];
                const float y = (float)(h_in + i * (KS_IDX)a->dilation_h) + dy;
                const float x = (float)(w_in + j * (KS_IDX)a->dilation_w) + dx;
                ks_bilinear s;
                ks_deform_bilinear(im, H, W, y, x, &s);
                float v = s.value;
                KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, oy, oy / (Ho * Wo),
                                       h_col, w_col, dy));
                KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, ox, ox / (Ho * Wo),
                                       h_col, w_col, dx));
                KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c_im, y, x,
                                         s.w[0], s.w[1], s.w[2], s.w[3], s.value, s.flags));
                if (a->use_mask) {
                    const KS_IDX mi = mask0 + tap * Ho * Wo;
                    const float m = a->mask[mi];
                    v *= m;
                    KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, mi, mi / (Ho * Wo),
                                           h_col, w_col, m));
                }
                *col = v;
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_COLUMNS, (int)tap, col - a->col_out, 0,
                                        (c_im * kk + tap), (b * Ho + h_col) * Wo + w_col, v, 0));
                col += im2col_step * Ho * Wo;
            }
        }
    }
}
KS_KERNEL(ks_deform_im2col, ks_deform_args)

/* deformable_col2im: one work item per columns entry (c, i, j, b, h_col, w_col), w_col
 * fastest (the entry's own index). It scatters the entry's gradient (times the mask) to
 * the corners its sample blended, with the same weights: atomic adds, since the taps of
 * many threads land on one pixel. Corners are floor(y) and floor(y)+1 within distance 1
 * (mmcv searches a 5x5 window around the truncated position, torchvision 3x3: the same
 * set). */
KS_FN void KS_VARIANT(ks_deform_col2im_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w, kk = kh * kw;
    const KS_IDX im2col_step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups;
    const KS_IDX n_work = C * kk * im2col_step * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_col = (index / Wo) % Ho;
        const KS_IDX b = (index / Wo / Ho) % im2col_step;
        const KS_IDX j = (index / Wo / Ho / im2col_step) % kw;
        const KS_IDX i = (index / Wo / Ho / im2col_step / kw) % kh;
        const KS_IDX c = index / Wo / Ho / im2col_step / kk;
        const KS_IDX g = c / (C / G);
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, c, i, j, b, h_col, w_col, g, 0));
        const KS_IDX tap = i * kw + j;
        const KS_IDX oy = (b * G + g) * 2 * kk * Ho * Wo + (2 * tap * Ho + h_col) * Wo + w_col;
        const KS_IDX ox = oy + Ho * Wo;
        const float dy = a->offset[oy], dx = a->offset[ox];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, oy, oy / (Ho * Wo), h_col,
                               w_col, dy));
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, ox, ox / (Ho * Wo), h_col,
                               w_col, dx));
        const float y = (float)(h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h) + dy;
        const float x = (float)(w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w) + dx;
        float top = a->col_in[index];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, index, 0, c * kk + tap,
                               (b * Ho + h_col) * Wo + w_col, top));
        if (a->use_mask) {
            const KS_IDX mi = (b * G + g) * kk * Ho * Wo + (tap * Ho + h_col) * Wo + w_col;
            const float m = a->mask[mi];
            top *= m;
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, mi, mi / (Ho * Wo), h_col,
                                   w_col, m));
        }
        float w4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        int flags = 0;
        if (ks_deform_in_box(y, x, H, W)) {
            const KS_IDX y0 = (KS_IDX)floorf(y), x0 = (KS_IDX)floorf(x);
            float *grad = a->grad_input + (b * C + c) * H * W;
            for (int k = 0; k < 4; ++k) {
                const KS_IDX yy = y0 + (k >> 1), xx = x0 + (k & 1);
                int in;
                w4[k] = ks_deform_scatter_weight(y, x, y0, x0, k, H, W, &in);
                if (!in) continue;
                flags |= KS_FLAG_C00 << k;
                const float add = w4[k] * top;
                ks_atomic_add_f32(grad + yy * W + xx, add);
                KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_INPUT, (int)tap,
                                        (b * C + c) * H * W + yy * W + xx, b * C + c, yy, xx, add, 1));
            }
        }
        KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_GRAD_INPUT, (int)tap, b * C + c, y, x, w4[0],
                                 w4[1], w4[2], w4[3], top, flags));
    }
}
KS_KERNEL(ks_deform_col2im, ks_deform_args)

/* deformable_col2im_coord: one work item per offset element (b, g, tap, dir, h_col,
 * w_col), w_col fastest; no atomics. The gradient of offset (dy or dx) of one tap sums,
 * over every channel of the offset group, the column gradient times the derivative of
 * that channel's sample. With a mask the y item also writes the mask gradient: the
 * column gradient times the sample, summed the same way. */
KS_FN void KS_VARIANT(ks_deform_coord_body)(ks_thread *t, const ks_deform_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col;
    const KS_IDX kh = (KS_IDX)a->kernel_h, kw = (KS_IDX)a->kernel_w, kk = kh * kw;
    const KS_IDX im2col_step = (KS_IDX)a->im2col_step, G = (KS_IDX)a->offset_groups;
    const KS_IDX cpg = C / G; /* channels per offset group */
    const KS_IDX n_work = im2col_step * G * 2 * kk * Ho * Wo;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX w_col = index % Wo;
        const KS_IDX h_col = (index / Wo) % Ho;
        const KS_IDX dir = (index / Wo / Ho) % 2; /* 0: dy, 1: dx */
        const KS_IDX tap = (index / Wo / Ho / 2) % kk;
        const KS_IDX g = (index / Wo / Ho / 2 / kk) % G;
        const KS_IDX b = index / Wo / Ho / 2 / kk / G;
        KS_PROBE(ks_probe_work(t, KS_DEFORM_SITE_WORK, index, iter, b, g, tap, dir, h_col, w_col, 0, 0));
        const KS_IDX i = tap / kw, j = tap % kw;
        const KS_IDX oy = (b * G + g) * 2 * kk * Ho * Wo + (2 * tap * Ho + h_col) * Wo + w_col;
        const KS_IDX ox = oy + Ho * Wo;
        const float dy = a->offset[oy], dx = a->offset[ox];
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, oy, oy / (Ho * Wo), h_col,
                               w_col, dy));
        KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_OFFSET, KS_DEFORM_T_OFFSET, (int)tap, ox, ox / (Ho * Wo), h_col,
                               w_col, dx));
        const float y = (float)(h_col * (KS_IDX)a->stride_h - (KS_IDX)a->pad_h + i * (KS_IDX)a->dilation_h) + dy;
        const float x = (float)(w_col * (KS_IDX)a->stride_w - (KS_IDX)a->pad_w + j * (KS_IDX)a->dilation_w) + dx;
        const KS_IDX mi = (b * G + g) * kk * Ho * Wo + (tap * Ho + h_col) * Wo + w_col;
        float m = 1.0f;
        if (a->use_mask) {
            m = a->mask[mi];
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_MASK, KS_DEFORM_T_MASK, (int)tap, mi, mi / (Ho * Wo), h_col,
                                   w_col, m));
        }
        const int in_box = ks_deform_in_box(y, x, H, W);
        float val = 0.0f, mval = 0.0f;
        for (KS_IDX cnt = 0; cnt < cpg; ++cnt) {
            const KS_IDX c = g * cpg + cnt;
            const KS_IDX row = c * kk + tap;
            const KS_IDX col_pos = ((row * im2col_step + b) * Ho + h_col) * Wo + w_col;
            const float cv = a->col_in[col_pos];
            const float *im = a->input + (b * C + c) * H * W;
            const float cw = ks_deform_coord_weight(im, H, W, y, x, (int)dir, a->semantics);
            val = a->use_mask ? fmaf(cw * cv, m, val) : fmaf(cw, cv, val);
            ks_bilinear s = {.y0 = 0, .x0 = 0, .w = {0.0f, 0.0f, 0.0f, 0.0f}, .value = 0.0f, .flags = 0};
            if (KS_TRACED || (a->use_mask && dir == 0)) ks_deform_bilinear(im, H, W, y, x, &s);
            if (a->use_mask && dir == 0 && in_box) mval = fmaf(cv, s.value, mval);
            KS_PROBE(ks_probe_read(t, KS_DEFORM_SITE_READ_COL, KS_DEFORM_T_COLUMNS, (int)tap, col_pos, 0, row,
                                   (b * Ho + h_col) * Wo + w_col, cv));
            /* the sample point with its bilinear weights; the value is its derivative */
            KS_PROBE(ks_probe_sample(t, KS_DEFORM_SITE_SAMPLE, KS_DEFORM_T_INPUT, (int)tap, b * C + c, y, x, s.w[0],
                                     s.w[1], s.w[2], s.w[3], cw, s.flags));
        }
        a->grad_offset[dir ? ox : oy] = val;
        KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE, KS_DEFORM_T_GRAD_OFFSET, (int)tap, dir ? ox : oy,
                                (dir ? ox : oy) / (Ho * Wo), h_col, w_col, val, 0));
        if (a->use_mask && dir == 0) {
            a->grad_mask[mi] = mval;
            KS_PROBE(ks_probe_write(t, KS_DEFORM_SITE_WRITE_MASK, KS_DEFORM_T_GRAD_MASK, (int)tap, mi, mi / (Ho * Wo),
                                    h_col, w_col, mval, 0));
        }
    }
}
KS_KERNEL(ks_deform_coord, ks_deform_args)
#endif
