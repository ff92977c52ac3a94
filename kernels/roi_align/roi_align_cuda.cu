/* roi_align_cuda.cu - RoIAlign on the GPU: the bodies of roi_align_body.h in every variant
 * (32-bit traced ones too) and their KS_KERNEL lines as kernels (the rows of
 * roi_align_kernels.c, which launches them), and the plane forward's own launcher. The
 * channels-last forward is roi_align_cl_cuda.cu. */
#include "../core/ks_cuda.h"

#define KS_BODY "../roi_align/roi_align_body.h" /* relative to ks_variants.h */
#define KS_BODY_TRACED32 1
#include "../core/ks_variants.h"

/* the plain forward through shared memory, a block per input plane (roi_align_plane_body.h):
 * --forward plane (slower than the slot kernel on the H100, kept to compare) */
#define KS_BODY "../roi_align/roi_align_plane_body.h"
#include "../core/ks_variants.h"
KS_CUDA_PLAIN_KERNEL(ks_roi_align_plane, plain32, ks_roi_align_args, __launch_bounds__(1024))
KS_CUDA_PLAIN_KERNEL(ks_roi_align_plane, plain, ks_roi_align_args, __launch_bounds__(1024))

/* The plane forward of a (tile_rows and the launch chosen here): its tile holds as many rows
 * as a block's shared memory can (the device's opt-in limit), the whole plane when it fits.
 * *launched = 0 when a row of the input is too wide for KS_ROI_PLANE_MIN_ROWS of them. */
extern "C" int ks_roi_plane_launch_cuda(const ks_roi_align_args *args, const ks_launch *l, int small, void *stream,
                                        int *launched)
{
    cudaStream_t s = (cudaStream_t)stream;
    ks_roi_align_args a = *args;
    int dev = 0, optin = 0;
    *launched = 0;
    int rc = ks_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    if (!rc)
        rc = ks_cuda_ok(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
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
