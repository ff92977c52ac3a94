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
/* the merged avg forward of adaptive grids (a->merge; its traced twin is the traced fwd
 * kernel): at most 64 registers, so any block size launches (-DKS_ROI_FWDM_MAXNREG=N to
 * compare; over 64, blocks of 1024 do not launch) */
#ifndef KS_ROI_FWDM_MAXNREG
#define KS_ROI_FWDM_MAXNREG 64
#endif
KS_CUDA_PLAIN_KERNEL(ks_roi_align_fwdm, plain32, ks_roi_align_args, __maxnreg__(KS_ROI_FWDM_MAXNREG))
KS_CUDA_PLAIN_KERNEL(ks_roi_align_fwdm, plain, ks_roi_align_args, __maxnreg__(KS_ROI_FWDM_MAXNREG))

/* the plain forward through shared memory, a block per input plane (roi_align_plane_body.h):
 * --forward plane (slower than the slot kernel on the H100, kept to compare) */
#define KS_BODY "../roi_align/roi_align_plane_body.h"
#include "../core/ks_variants.h"
KS_CUDA_PLAIN_KERNEL(ks_roi_align_plane, plain32, ks_roi_align_args, __launch_bounds__(1024))
KS_CUDA_PLAIN_KERNEL(ks_roi_align_plane, plain, ks_roi_align_args, __launch_bounds__(1024))

/* the channels-last forward (roi_align_cl_cuda.cu): *launched = 0 when it does not run */
int ks_roi_cl_launch(const ks_roi_align_args *args, const ks_launch *l, int small, cudaStream_t s, int *launched);

/* The plane forward of a (tile_rows and the launch chosen here): its tile holds as many rows
 * as a block's shared memory can (the device's opt-in limit), the whole plane when it fits.
 * *launched = 0 when a row of the input is too wide for KS_ROI_PLANE_MIN_ROWS of them. */
static int ks_roi_plane_launch(const ks_roi_align_args *args, const ks_launch *l, int small, cudaStream_t s,
                               int *launched)
{
    ks_roi_align_args a = *args;
    int dev = 0, optin = 0;
    *launched = 0;
    int rc = ks_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    if (!rc) rc = ks_cuda_ok(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
                             "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
    if (rc) return rc;
    a.tile_rows = ks_roi_plane_tile_rows(optin, a.width, a.height);
    if (a.tile_rows == 0) return KS_OK;
    const int64_t bytes = a.tile_rows * a.width * 4;
    int threads;
    int64_t blocks;
    const int dflt = bytes > 56 * 1024 ? KS_ROI_PLANE_THREADS_BIG : KS_ROI_PLANE_THREADS;
    rc = ks_launch_resolve(l, dflt, KS_ROI_BLOCK_CAP, ks_roi_align_plane_blocks(&a) * dflt, &threads, &blocks);
    if (rc) return rc;
    *launched = 1;
    const void *fn = small ? (const void *)ks_roi_align_plane_k_plain32 : (const void *)ks_roi_align_plane_k_plain;
    rc = ks_cuda_ok(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes),
                    "cudaFuncSetAttribute(roi_align_forward (plane))");
    if (rc || blocks == 0) return rc;
    if (small) ks_roi_align_plane_k_plain32<<<(unsigned)blocks, threads, (size_t)bytes, s>>>(a);
    else ks_roi_align_plane_k_plain<<<(unsigned)blocks, threads, (size_t)bytes, s>>>(a);
    rc = ks_cuda_check_launch("roi_align_forward (plane)");
    if (!rc) ks_roi_align_plane_launched();
    return rc;
}

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
    const int small = a.num_rois * a.channels * a.pooled_h * a.pooled_w < lim && a.num_rois * 5 < lim &&
                      a.batch * a.channels * a.height * a.width < lim && blocks * threads < lim;
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned nb = (unsigned)blocks;
    const int choice = a.forward;
    /* the channels-last forward: the default for avg pooling, the fastest on fixed and
     * adaptive grids alike (docs/roi-align.md); --forward slot, samples or plane for the others */
    if (!backward && !dev_sink && a.pool_mode == KS_ROI_AVG &&
        (choice == KS_ROI_FWD_DEFAULT || choice == KS_ROI_FWD_CL)) {
        int launched;
        rc = ks_roi_cl_launch(&a, l, small, s, &launched);
        if (rc || launched) return rc;
    }
    if (!backward && !dev_sink && !a.merge && choice == KS_ROI_FWD_PLANE) {
        int launched;
        rc = ks_roi_plane_launch(&a, l, small, s, &launched);
        if (rc || launched) return rc;
    }
    if (!backward) {
        if (dev_sink && small) ks_roi_align_fwd_k_traced32<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (dev_sink) ks_roi_align_fwd_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);
        else if (small && a.merge) ks_roi_align_fwdm_k_plain32<<<nb, threads, 0, s>>>(a);
        else if (a.merge) ks_roi_align_fwdm_k_plain<<<nb, threads, 0, s>>>(a);
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
