/* roi_align_nocuda.c - the CUDA entry points of a build without nvcc: same API, clear error. */
#include "../core/ks_error.h"
#include "roi_align_args.h"

int ks_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois,
                              float *output, float *argmax_y, float *argmax_x, const ks_launch *l,
                              const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)input, (void)rois, (void)output, (void)argmax_y, (void)argmax_x, (void)l, (void)dev_sink,
        (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}

int ks_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                               const float *argmax_y, const float *argmax_x, float *grad_input,
                               const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)grad_output, (void)rois, (void)argmax_y, (void)argmax_x, (void)grad_input, (void)l,
        (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}

int ks_roi_align_launch_cuda(const ks_roi_align_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink,
                             void *stream)
{
    (void)a, (void)backward, (void)l, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}
