/* roi_align.h - RoIAlign (mmcv roi_align with avg and max pooling, torchvision roi_align),
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
 */
#ifndef KS_ROI_ALIGN_H
#define KS_ROI_ALIGN_H

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

#endif
