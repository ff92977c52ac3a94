/* deform_conv.h - deformable convolution v1 (mmcv DeformConv2d) and v2 with a mask (mmcv
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
 */
#ifndef KS_DEFORM_CONV_H
#define KS_DEFORM_CONV_H

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
    KS_DEFORM_NSITES,
    /* grad_tile's shared window: read, write, barrier (three sites past the schema's;
          the operator never traces grad_tile) */
    KS_DEFORM_SITE_TILE = KS_DEFORM_NSITES
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
 * positions when that passes 512; KSCOPE_DEFORM_TILE=N sets it), the pixels a tile's
 * shared window reaches past the taps' grid (offsets up to this stay in shared memory),
 * and the window's largest size in floats (larger: grad_tap runs instead) */
#define KS_DEFORM_TILE_POSITIONS 16
#define KS_DEFORM_TILE_MARGIN 4
#define KS_DEFORM_TILE_CAP 4096
/* grad_tile: channels per barrier phase (one window each, as many as fit) */
#define KS_DEFORM_TILE_WINDOWS 4
/* grad_gather: output positions per tile (KSCOPE_DEFORM_GATHER_TILE=N), channels per block
 * (KSCOPE_DEFORM_GATHER_CHANNELS=N, 1..32; fewer where the shared memory runs out), and
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
 * opted in with the environment's KS_DEFORM_FUSED (1, or a tile shape: 24, 42, 422, 44;
 * unset or 0: off, as on the H100 it is still slower than im2col + cuBLAS, bench/RESULTS.md),
 * p->math is TF32, every block of 32 channels lies in one conv group and one offset group
 * (C/groups and C/offset_groups multiples of 32), every tensor has fewer than 2^30
 * entries and the prepared weight (each group's rows rounded up to 256) fits in the
 * workspace. Traced chunks and a requested columns0 run im2col + GEMM. */
int ks_deform_fused_fits(const ks_deform_params *p, const ks_deform_geom *g);
/* fused kernels launched by this process (tests check that the path they mean ran) */
long long ks_deform_fused_launches(void);
/* Work items of kernel k for a chunk of `im2col_step` images (g from ks_deform_geometry). */
int64_t ks_deform_work(const ks_deform_geom *g, const ks_deform_params *p, ks_deform_kernel k, int64_t im2col_step);
/* The kernel rows (deform_kernels.c), indexed by ks_deform_kernel, then the layer's fused
 * TF32 forward (plain_only, CUDA only; its twin im2col: deform_fused.cu); the operators
 * list the first three (im2col, col2im, coord: the ones their traces record). */
#define KS_DEFORM_ROW_FUSED (KS_DEFORM_GRAD_GATHER + 1)
#define KS_DEFORM_NROWS (KS_DEFORM_ROW_FUSED + 1)
extern const ks_kernel ks_deform_rows[KS_DEFORM_NROWS];
/* ks_deform_kernel_sim/_cuda on a geometry ks_deform_geometry validated (g) and a chunk of 1..g->im2col_step
 * images: nothing checked again (the layer and the operator call these). */
int ks_deform_launch_sim(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                         const ks_deform_chunk *c, const ks_launch *launch, ks_sink *sink);
int ks_deform_launch_cuda(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                          const ks_deform_chunk *c, const ks_launch *launch, const ks_sink *dev_sink, void *stream);

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

/* Independent reference in double, from the definition (direct loops, no columns, no
 * chunks): forward, and every gradient of sum(output * grad_output). The coordinate
 * gradient at a kink is the one-sided (forward) difference, as in both references;
 * on y == -1 or x == -1 it follows p->semantics. */
void ks_deform_ref_forward(const ks_deform_params *p, const ks_deform_tensors *t, double *output);
typedef struct ks_deform_ref_grads {
    double *grad_input, *grad_offset, *grad_mask, *grad_weight, *grad_bias;
} ks_deform_ref_grads;
void ks_deform_ref_backward(const ks_deform_params *p, const ks_deform_tensors *t, const ks_deform_ref_grads *g);

/* The trace schema of kernel k for a chunk of `im2col_step` images: returns the number of
 * sites (5 for im2col, whose tensors are the first four; KS_DEFORM_NSITES otherwise). */
int ks_deform_sites(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k, int64_t im2col_step,
                    ks_site *sites);

#ifdef __cplusplus
}
#endif

#endif
