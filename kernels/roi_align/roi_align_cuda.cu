/* roi_align_cuda.cu - RoIAlign on the GPU: the bodies of roi_align_body.h as plain and
 * traced kernels, each with 32- and 64-bit indices. */
#include "../core/ks_cuda.h"

#define KS_BODY "../roi_align/roi_align_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../roi_align/roi_align_body.h"
#include "../core/ks_traced32.h"

/* at most 64 registers, so any block size launches (the traced bodies wanted more than 512
 * threads fit) and the plain ones keep 32 warps per SM in flight, which their gathers need */
KS_CUDA_WRAPPERS4(ks_roi_align_fwd, ks_roi_align_args, __launch_bounds__(1024), __launch_bounds__(1024))
/* the plain backward's register cap (-DKS_ROI_BWD_MAXNREG=N to compare: 40 fits 3 blocks of 512) */
#ifndef KS_ROI_BWD_MAXNREG
#define KS_ROI_BWD_MAXNREG 64
#endif
KS_CUDA_WRAPPERS4(ks_roi_align_bwd, ks_roi_align_args, __maxnreg__(KS_ROI_BWD_MAXNREG), __launch_bounds__(1024))
/* -> ks_roi_align_fwd_k_plain32, _plain, _traced, _traced32 (bodies ks_roi_align_fwd_body_plain32/...),
 *    likewise ks_roi_align_bwd_k_* */

/* the plain forward through shared memory (roi_align_stage_body.h): KS_ROI_FORWARD=staged */
#define KS_BODY "../roi_align/roi_align_stage_body.h"
#include "../core/ks_variants.h"
KS_CUDA_PLAIN_KERNEL(ks_roi_align_stage, plain32, ks_roi_align_args, __launch_bounds__(1024))
KS_CUDA_PLAIN_KERNEL(ks_roi_align_stage, plain, ks_roi_align_args, __launch_bounds__(1024))

extern "C" int ks_roi_align_launch_cuda(const ks_roi_align_args *args, int backward, const ks_launch *l,
                                        const ks_sink *dev_sink, void *stream)
{
    const ks_roi_align_args &a = *args;
    int threads;
    int64_t blocks;
    const int64_t work = ks_roi_align_slots(&a, dev_sink ? 1 : KS_ROI_CHUNK);
    int rc = ks_launch_resolve(l, KS_ROI_THREADS, KS_ROI_BLOCK_CAP, work, &threads, &blocks);
    if (rc || blocks == 0) return rc; /* zero RoIs: nothing to launch */
    const int64_t lim = (int64_t)1 << 30;
    const int small = a.num_rois * a.channels * a.pooled_h * a.pooled_w < lim &&
                      a.batch * a.channels * a.height * a.width < lim && blocks * threads < lim;
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned nb = (unsigned)blocks;
    if (!backward && !dev_sink && ks_roi_align_staged()) {
        int st_threads;
        int64_t st_blocks;
        rc = ks_launch_resolve(l, KS_ROI_STAGE_THREADS, KS_ROI_BLOCK_CAP, ks_roi_align_stage_work(&a), &st_threads,
                               &st_blocks);
        if (rc) return rc;
        const unsigned sb = (unsigned)st_blocks;
        if (small) ks_roi_align_stage_k_plain32<<<sb, st_threads, 0, s>>>(a);
        else ks_roi_align_stage_k_plain<<<sb, st_threads, 0, s>>>(a);
        return ks_cuda_check_launch("roi_align_forward (staged)");
    }
    if (!backward) {
        if (dev_sink && small) ks_roi_align_fwd_k_traced32<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (dev_sink) ks_roi_align_fwd_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small) ks_roi_align_fwd_k_plain32<<<nb, threads, 0, s>>>(a);
        else ks_roi_align_fwd_k_plain<<<nb, threads, 0, s>>>(a);
        return ks_cuda_check_launch("roi_align_forward");
    }
    if (dev_sink && small) ks_roi_align_bwd_k_traced32<<<nb, threads, 0, s>>>(a, *dev_sink);
    else if (dev_sink) ks_roi_align_bwd_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
    else if (small) ks_roi_align_bwd_k_plain32<<<nb, threads, 0, s>>>(a);
    else ks_roi_align_bwd_k_plain<<<nb, threads, 0, s>>>(a);
    return ks_cuda_check_launch("roi_align_backward");
}

extern "C" int ks_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois,
                                         float *output, float *argmax_y, float *argmax_x, const ks_launch *l,
                                         const ks_sink *dev_sink, void *stream)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    if (p->pool_mode == KS_ROI_MAX && (!argmax_y || !argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    a.input = input, a.rois = rois, a.output = output, a.argmax_y = argmax_y, a.argmax_x = argmax_x;
    return ks_roi_align_launch_cuda(&a, 0, l, dev_sink, stream);
}

extern "C" int ks_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output,
                                          const float *rois, const float *argmax_y, const float *argmax_x,
                                          float *grad_input, const ks_launch *l, const ks_sink *dev_sink,
                                          void *stream)
{
    ks_roi_align_args a;
    int rc = ks_roi_align_args_make(p, &a);
    if (rc) return rc;
    if (p->pool_mode == KS_ROI_MAX && (!argmax_y || !argmax_x))
        return ks_fail(KS_EINVAL, "roi_align: max mode needs argmax_y and argmax_x");
    a.grad_output = grad_output, a.rois = rois, a.grad_input = grad_input;
    a.argmax_y = (float *)argmax_y, a.argmax_x = (float *)argmax_x;
    return ks_roi_align_launch_cuda(&a, 1, l, dev_sink, stream);
}
