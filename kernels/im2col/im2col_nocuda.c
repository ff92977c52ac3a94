/* im2col_nocuda.c - the CUDA entry points of a build without nvcc: same API, clear error. */
#include "../core/ks_error.h"
#include "im2col_args.h"

int ks_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns,
                   const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)input, (void)columns, (void)launch, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}

int ks_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output,
                   const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    (void)p, (void)columns, (void)output, (void)launch, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}

int ks_im2col_launch_cuda(const ks_im2col_args *a, int col2im, const ks_launch *l, const ks_sink *dev_sink,
                          void *stream)
{
    (void)a, (void)col2im, (void)l, (void)dev_sink, (void)stream;
    return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
}
