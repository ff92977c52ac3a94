/* maxpool2d_cuda.cu - maxpool2d on the GPU: the bodies of maxpool2d_body.h as plain
 * (32- and 64-bit indices) and traced kernels. */
#include "../core/ks_cuda.h"

#define KS_BODY "../maxpool2d/maxpool2d_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

KS_CUDA_WRAPPERS(ks_maxpool2d_fwd, ks_maxpool2d_args)
/* -> ks_maxpool2d_fwd_k_plain32, ks_maxpool2d_fwd_k_plain, ks_maxpool2d_fwd_k_traced */
KS_CUDA_WRAPPERS(ks_maxpool2d_bwd, ks_maxpool2d_args)
/* -> ks_maxpool2d_bwd_k_plain32, ks_maxpool2d_bwd_k_plain, ks_maxpool2d_bwd_k_traced */

extern "C" int ks_maxpool2d_cuda(const ks_maxpool2d_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink)
{
    int threads;
    int64_t blocks;
    const int64_t work = a->batch * a->channels * a->out_h * a->out_w;
    int rc = ks_launch_resolve(l, KS_MAXPOOL_THREADS, KS_MAXPOOL_BLOCK_CAP, work, &threads, &blocks);
    if (rc) return rc;
    const int64_t lim = (int64_t)1 << 30; /* 32-bit indices when every size fits */
    const int small = work < lim && a->batch * a->channels * a->height * a->width < lim && blocks * threads < lim;
    const unsigned nb = (unsigned)blocks;
    if (!backward) {
        if (dev_sink) ks_maxpool2d_fwd_k_traced<<<nb, threads>>>(*a, *dev_sink);
        else if (small) ks_maxpool2d_fwd_k_plain32<<<nb, threads>>>(*a);
        else ks_maxpool2d_fwd_k_plain<<<nb, threads>>>(*a);
        return ks_cuda_check_launch("maxpool2d_forward");
    }
    if (dev_sink) ks_maxpool2d_bwd_k_traced<<<nb, threads>>>(*a, *dev_sink);
    else if (small) ks_maxpool2d_bwd_k_plain32<<<nb, threads>>>(*a);
    else ks_maxpool2d_bwd_k_plain<<<nb, threads>>>(*a);
    return ks_cuda_check_launch("maxpool2d_backward");
}
