/* im2col_cuda.cu - im2col/col2im on the GPU: the body of im2col_body.h compiled as
 * plain (64-bit and 32-bit indices) and traced (64-bit), behind thin __global__ wrappers. */
#include "../core/ks_cuda.h"

#define KS_BODY "../im2col/im2col_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

KS_CUDA_WRAPPERS(ks_im2col, ks_im2col_args)
/* -> ks_im2col_k_plain32, ks_im2col_k_plain, ks_im2col_k_traced (bodies ks_im2col_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_col2im, ks_im2col_args)
/* -> ks_col2im_k_plain32, ks_col2im_k_plain, ks_col2im_k_traced (bodies ks_col2im_body_plain32/_plain/_traced) */

/* 32-bit indices are exact when every element count, and every index the grid-stride
 * loop can reach (below work + blocks*threads), stays under 2^30. */
static int fits_int32(const ks_im2col_geom *g, int64_t blocks, int threads)
{
    const int64_t lim = (int64_t)1 << 30;
    return g->columns_numel < lim && g->image_numel < lim && g->im2col_work < lim &&
           blocks * threads < lim;
}

extern "C" int ks_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns,
                              const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int threads;
    int64_t blocks;
    int rc = ks_im2col_args_make(p, input, columns, &a, &g);
    if (!rc)
        rc = ks_launch_resolve(launch, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, g.im2col_work,
                               &threads, &blocks);
    if (rc) return rc;
    cudaStream_t s = (cudaStream_t)stream;
    if (dev_sink)
        ks_im2col_k_traced<<<(unsigned)blocks, threads, 0, s>>>(a, *dev_sink);
    else if (fits_int32(&g, blocks, threads))
        ks_im2col_k_plain32<<<(unsigned)blocks, threads, 0, s>>>(a);
    else
        ks_im2col_k_plain<<<(unsigned)blocks, threads, 0, s>>>(a);
    return ks_cuda_check_launch("im2col");
}

extern "C" int ks_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output,
                              const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int threads;
    int64_t blocks;
    int rc = ks_im2col_args_make(p, columns, output, &a, &g);
    if (!rc)
        rc = ks_launch_resolve(launch, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, g.image_numel,
                               &threads, &blocks);
    if (rc) return rc;
    cudaStream_t s = (cudaStream_t)stream;
    if (dev_sink)
        ks_col2im_k_traced<<<(unsigned)blocks, threads, 0, s>>>(a, *dev_sink);
    else if (fits_int32(&g, blocks, threads))
        ks_col2im_k_plain32<<<(unsigned)blocks, threads, 0, s>>>(a);
    else
        ks_col2im_k_plain<<<(unsigned)blocks, threads, 0, s>>>(a);
    return ks_cuda_check_launch("col2im");
}
