/* conv2d_cuda.cu - the conv2d GEMM step on the GPU: plain and traced kernels of
 * conv2d_body.h with 64-bit indices (a teaching kernel, not a fast GEMM; the 32-bit
 * variant ks_variants.h also compiles is not launched). */
#include "../core/ks_cuda.h"

#define KS_BODY "../conv2d/conv2d_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

__global__ void ks_conv_gemm_kernel_plain(ks_conv_gemm_args a)
{
    ks_thread t;
    ks_thread_from_builtins(&t, NULL);
    ks_conv_gemm_body_plain(&t, &a);
}

__global__ void ks_conv_gemm_kernel_traced(ks_conv_gemm_args a, ks_sink sink)
{
    ks_thread t;
    ks_thread_from_builtins(&t, &sink);
    ks_conv_gemm_body_traced(&t, &a);
}

extern "C" int ks_conv_gemm_launch_cuda(const ks_conv_gemm_args *a, const ks_launch *l, const ks_sink *dev_sink,
                                        void *stream)
{
    int threads;
    int64_t blocks;
    int rc = ks_launch_resolve(l, KS_CONV_GEMM_THREADS, KS_CONV_GEMM_BLOCK_CAP,
                               a->batch * a->out_channels * a->height_col * a->width_col, &threads, &blocks);
    if (rc) return rc;
    cudaStream_t s = (cudaStream_t)stream;
    if (dev_sink)
        ks_conv_gemm_kernel_traced<<<(unsigned)blocks, threads, 0, s>>>(*a, *dev_sink);
    else
        ks_conv_gemm_kernel_plain<<<(unsigned)blocks, threads, 0, s>>>(*a);
    return ks_cuda_check_launch("conv_gemm");
}

extern "C" int ks_conv_gemm_cuda(const ks_conv2d_params *p, const float *weight,
                                 const float *columns, float *output, const ks_launch *launch,
                                 const ks_sink *dev_sink, void *stream)
{
    ks_conv_gemm_args a;
    ks_conv2d_geom g;
    int rc = ks_conv_gemm_args_make(p, weight, columns, output, &a, &g);
    return rc ? rc : ks_conv_gemm_launch_cuda(&a, launch, dev_sink, stream);
}
