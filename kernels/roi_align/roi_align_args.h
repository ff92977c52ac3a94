/* roi_align_args.h - the kernel arguments of RoIAlign, shared by the bodies and the
 * host launchers. */
#ifndef KS_ROI_ALIGN_ARGS_H
#define KS_ROI_ALIGN_ARGS_H

#include "../core/ks_core.h"
#include "roi_align.h"

typedef struct ks_roi_align_args {
    int64_t batch, channels, height, width, num_rois, pooled_h, pooled_w, sampling_ratio;
    float spatial_scale;
    int aligned, pool_mode;
    const float *input;     /* forward: [N, C, H, W] */
    const float *rois;      /* [K, 5] */
    float *output;          /* forward: [K, C, PH, PW] */
    float *argmax_y, *argmax_x; /* forward (max): written; backward (max): read */
    const float *grad_output;   /* backward: [K, C, PH, PW] */
    float *grad_input;          /* backward: [N, C, H, W], accumulated */
} ks_roi_align_args;

/* The kernels' work slots (roi_align_body.h): one per bin and chunk of cc channels,
 * K * ceil(C / cc) * PH * PW; cc is KS_ROI_CHUNK for the plain kernels, 1 for the traced. */
KS_FN int64_t ks_roi_align_slots(const ks_roi_align_args *a, int64_t cc)
{
    return a->num_rois * ((a->channels + cc - 1) / cc) * a->pooled_h * a->pooled_w;
}

/* The staged forward's work (roi_align_stage_body.h): a block per RoI and group of
 * channels, K * ceil(C / KS_ROI_GROUP) blocks of KS_ROI_STAGE_THREADS. */
KS_FN int64_t ks_roi_align_stage_work(const ks_roi_align_args *a)
{
    return a->num_rois * ((a->channels + KS_ROI_GROUP - 1) / KS_ROI_GROUP) * KS_ROI_STAGE_THREADS;
}

#ifdef __cplusplus
extern "C" {
#endif
/* 1 when the environment has KS_ROI_FORWARD=staged: the plain forward runs the staged
 * kernel (roi_align_stage_body.h; slower than the slot kernel on the H100, kept to
 * compare, docs/roi-align.md); otherwise 0, the slot kernel of roi_align_body.h. */
int ks_roi_align_staged(void);
/* Validates p (ks_roi_align_check) and fills the arguments but the pointers. */
int ks_roi_align_args_make(const ks_roi_align_params *p, ks_roi_align_args *a);
/* The forward (backward 0) or backward kernel on arguments ks_roi_align_args_make
 * validated: nothing checked again (zero RoIs launch nothing). Host pointers and sink on
 * the simulator; device pointers, a device sink and a cudaStream_t (or NULL) on CUDA. */
int ks_roi_align_launch_sim(const ks_roi_align_args *a, int backward, const ks_launch *l, ks_sink *sink);
int ks_roi_align_launch_cuda(const ks_roi_align_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink,
                             void *stream);
#ifdef __cplusplus
}
#endif

#endif
