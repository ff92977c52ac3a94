/* deform_nocuda.c - the layer's CUDA entry points (cuBLAS) in a build without nvcc: same API,
 * clear error. The kernels' own entries run through their rows (deform_kernels.c). */
#include "../core/ks_error.h"
#include "deform_conv.h"

static int no_cuda(void) { return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)"); }

int ks_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                           const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)t, (void)workspace, (void)launch, (void)traced, (void)dev_sink, (void)stream;
    return no_cuda();
}

int ks_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                            const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)t, (void)workspace, (void)launch, (void)traced, (void)dev_sink, (void)stream;
    return no_cuda();
}
