/* patchify_nocuda.c - the CUDA entry point of a build without nvcc: same API, clear error. */
#include "../core/ks_error.h"
#include "patchify.h"

int ks_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                            const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)k, (void)t, (void)l, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}

int ks_patchify_launch_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                            const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)k, (void)t, (void)l, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}
