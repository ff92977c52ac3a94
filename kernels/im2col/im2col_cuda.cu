/* im2col_cuda.cu - im2col/col2im on the GPU: the body of im2col_body.h compiled as
 * plain and traced, each with 64-bit and 32-bit indices, behind thin __global__ wrappers. */
#include "../core/ks_cuda.h"

#define KS_BODY "../im2col/im2col_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../im2col/im2col_body.h"
#include "../core/ks_traced32.h"

/* plain: at most 40 registers (3 blocks of 512 threads per SM: the gathers need warps in
 * flight; a build may set another, -DKS_IM2COL_MAXNREG=N, to compare); traced: at most
 * 64 (-DKS_IM2COL_TRACED_MAXNREG=N), so any block size launches (40 measured the same).
 * A traced block whose filter drops all its items runs the plain body (the _SKIP
 * wrappers, ks_traced32.h): with a filter that records nothing the traced kernel cost
 * 1.10-1.30x plain before, 1.02-1.13x after. */
#ifndef KS_IM2COL_MAXNREG
#define KS_IM2COL_MAXNREG 40
#endif
#ifndef KS_IM2COL_TRACED_MAXNREG
#define KS_IM2COL_TRACED_MAXNREG 64
#endif
KS_CUDA_WRAPPERS4_SKIP(ks_im2col, ks_im2col_args, __maxnreg__(KS_IM2COL_MAXNREG), __maxnreg__(KS_IM2COL_TRACED_MAXNREG))
KS_CUDA_WRAPPERS4_SKIP(ks_col2im, ks_im2col_args, __maxnreg__(KS_IM2COL_MAXNREG), __maxnreg__(KS_IM2COL_TRACED_MAXNREG))
KS_CUDA_WRAPPERS4_SKIP(ks_col2im_scatter, ks_im2col_args, __maxnreg__(KS_IM2COL_MAXNREG), __launch_bounds__(1024))
/* -> ks_im2col_k_plain32, _plain, _traced, _traced32 (bodies ks_im2col_body_plain32/...), likewise
 *    ks_col2im_k_* and ks_col2im_scatter_k_* */

/* 32-bit indices are exact when every element count, and every index the grid-stride
 * loop can reach (below work + blocks*threads), stays under 2^30. */
extern "C" int ks_im2col_launch_cuda(const ks_im2col_args *a, int col2im, const ks_launch *l,
                                     const ks_sink *dev_sink, void *stream)
{
    const int64_t planes = a->batch * a->channels, image = planes * a->height * a->width;
    const int64_t cols_work = planes * a->height_col * a->width_col; /* im2col's items */
    const int64_t columns = cols_work * a->kernel_h * a->kernel_w;
    const int64_t work = col2im == KS_COL2IM_SCATTER ? columns : col2im ? image : cols_work, lim = (int64_t)1 << 30;
    int threads;
    int64_t blocks;
    int rc = ks_launch_resolve(l, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, work, &threads, &blocks);
    if (rc) return rc;
    const int small = columns < lim && image < lim && cols_work < lim && blocks * threads < lim;
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned nb = (unsigned)blocks;
    if (!col2im) {
        if (dev_sink && small) ks_im2col_k_traced32<<<nb, threads, 0, s>>>(*a, *dev_sink);
        else if (dev_sink) ks_im2col_k_traced<<<nb, threads, 0, s>>>(*a, *dev_sink);
        else if (small) ks_im2col_k_plain32<<<nb, threads, 0, s>>>(*a);
        else ks_im2col_k_plain<<<nb, threads, 0, s>>>(*a);
        return ks_cuda_check_launch("im2col");
    }
    if (col2im == KS_COL2IM_SCATTER) {
        if (dev_sink && small) ks_col2im_scatter_k_traced32<<<nb, threads, 0, s>>>(*a, *dev_sink);
        else if (dev_sink) ks_col2im_scatter_k_traced<<<nb, threads, 0, s>>>(*a, *dev_sink);
        else if (small) ks_col2im_scatter_k_plain32<<<nb, threads, 0, s>>>(*a);
        else ks_col2im_scatter_k_plain<<<nb, threads, 0, s>>>(*a);
        return ks_cuda_check_launch("col2im scatter");
    }
    if (dev_sink && small) ks_col2im_k_traced32<<<nb, threads, 0, s>>>(*a, *dev_sink);
    else if (dev_sink) ks_col2im_k_traced<<<nb, threads, 0, s>>>(*a, *dev_sink);
    else if (small) ks_col2im_k_plain32<<<nb, threads, 0, s>>>(*a);
    else ks_col2im_k_plain<<<nb, threads, 0, s>>>(*a);
    return ks_cuda_check_launch("col2im");
}

extern "C" int ks_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns,
                              const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int rc = ks_im2col_args_make(p, input, columns, &a, &g);
    return rc ? rc : ks_im2col_launch_cuda(&a, 0, launch, dev_sink, stream);
}

extern "C" int ks_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output,
                              const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int rc = ks_im2col_args_make(p, columns, output, &a, &g);
    return rc ? rc : ks_im2col_launch_cuda(&a, 1, launch, dev_sink, stream);
}
