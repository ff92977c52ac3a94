/* gemm_tiled_cuda.cu - gemm_tiled on the GPU: the body of gemm_tiled_body.h as plain (32-
 * and 64-bit indices) and traced kernels; a block is one T x T tile. */
#include "../core/ks_cuda.h"

#define KS_BODY "../gemm_tiled/gemm_tiled_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

/* --tile 32 is a block of 1024 threads: every variant, the traced one included, must fit
 * its registers (65536 per block) */
KS_CUDA_WRAPPERS_ATTR(ks_gemm_tiled, ks_gemm_tiled_args, __launch_bounds__(KS_GT_MAX_TILE * KS_GT_MAX_TILE))
/* -> ks_gemm_tiled_k_plain32, ks_gemm_tiled_k_plain, ks_gemm_tiled_k_traced */

extern "C" int ks_gemm_tiled_cuda(const ks_gemm_tiled_args *a, const ks_launch *l, const ks_sink *dev_sink)
{
    int threads;
    int64_t blocks;
    const int64_t work = ks_gemm_tiled_work(a);
    int rc = ks_launch_resolve(l, (int)(a->tile * a->tile), KS_GT_BLOCK_CAP, work, &threads, &blocks);
    if (rc) return rc;
    if (threads != a->tile * a->tile)
        return ks_fail(KS_EINVAL, "gemm_tiled: a block is one %lld x %lld tile, not %d threads", (long long)a->tile,
                       (long long)a->tile, threads);
    const int64_t lim = (int64_t)1 << 30; /* 32-bit indices when every size fits */
    const int small = work < lim && a->m * a->k < lim && a->k * a->n < lim && blocks * threads < lim;
    const unsigned nb = (unsigned)blocks;
    if (dev_sink) ks_gemm_tiled_k_traced<<<nb, threads>>>(*a, *dev_sink);
    else if (small) ks_gemm_tiled_k_plain32<<<nb, threads>>>(*a);
    else ks_gemm_tiled_k_plain<<<nb, threads>>>(*a);
    return ks_cuda_check_launch("gemm_tiled");
}
