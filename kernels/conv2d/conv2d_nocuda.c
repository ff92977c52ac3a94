/* conv2d_nocuda.c - the CUDA entry point of a build without nvcc: same API, clear error. */
#include "../core/ks_error.h"
#include "conv2d_args.h"

int ks_conv_gemm_cuda(const ks_conv2d_params *p, const float *weight, const float *columns,
                      float *output, const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)weight, (void)columns, (void)output, (void)launch, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}

int ks_conv_gemm_launch_cuda(const ks_conv_gemm_args *a, const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    (void)a, (void)l, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}
