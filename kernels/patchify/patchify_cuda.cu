/* patchify_cuda.cu - the patchify kernels on the GPU: plain (32- and 64-bit indices)
 * and traced (64-bit). */
#include "../core/ks_cuda.h"

#define KS_BODY "../patchify/patchify_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"


KS_CUDA_WRAPPERS(ks_patch_fwd, ks_patchify_args)
/* -> ks_patch_fwd_k_plain32, ks_patch_fwd_k_plain, ks_patch_fwd_k_traced (bodies ks_patch_fwd_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_patch_bilinear, ks_patchify_args)
/* -> ks_patch_bilinear_k_plain32, ks_patch_bilinear_k_plain, ks_patch_bilinear_k_traced (bodies ks_patch_bilinear_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_patch_bilinear_bwd, ks_patchify_args)
/* -> ks_patch_bilinear_bwd_k_plain32, ks_patch_bilinear_bwd_k_plain, ks_patch_bilinear_bwd_k_traced (bodies ks_patch_bilinear_bwd_body_plain32/_plain/_traced) */
KS_CUDA_WRAPPERS(ks_patch_bwd, ks_patchify_args)
/* -> ks_patch_bwd_k_plain32, ks_patch_bwd_k_plain, ks_patch_bwd_k_traced (bodies ks_patch_bwd_body_plain32/_plain/_traced) */

#define KS_PATCH_LAUNCH(name)                                                                      \
    do {                                                                                          \
        if (dev_sink) name##_k_traced<<<nb, threads, 0, s>>>(a, *dev_sink);                       \
        else if (small) name##_k_plain32<<<nb, threads, 0, s>>>(a);                               \
        else name##_k_plain<<<nb, threads, 0, s>>>(a);                                            \
    } while (0)

extern "C" int ks_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k,
                                       const ks_patchify_tensors *t, const ks_launch *l, const ks_sink *dev_sink,
                                       void *stream)
{
    if (k < KS_PATCH_PATCHES || k > KS_PATCH_PATCHES_BWD) return ks_fail(KS_EINVAL, "unknown patchify kernel %d", (int)k);
    int rc = ks_patchify_check(p);
    return rc ? rc : ks_patchify_launch_cuda(p, k, t, l, dev_sink, stream);
}

extern "C" int ks_patchify_launch_cuda(const ks_patchify_params *p, ks_patchify_kernel k,
                                       const ks_patchify_tensors *t, const ks_launch *l, const ks_sink *dev_sink,
                                       void *stream)
{
    int threads;
    int64_t blocks;
    const int64_t work = ks_patchify_work(p, k);
    int rc = ks_launch_resolve(l, KS_PATCH_THREADS, KS_PATCH_BLOCK_CAP, work, &threads, &blocks);
    if (rc || blocks == 0) return rc;
    ks_patchify_args a = {.batch = p->batch, .channels = p->channels, .height = p->height, .width = p->width,
                          .num_points = p->num_points, .radius = p->radius, .t = *t};
    const int64_t lim = (int64_t)1 << 30, D = 2 * p->radius + 2;
    const int small = work < lim && blocks * threads < lim && p->batch * p->channels * p->height * p->width < lim &&
                      p->batch * p->num_points * p->channels * D * D < lim;
    const unsigned nb = (unsigned)blocks;
    cudaStream_t s = (cudaStream_t)stream;
    switch (k) {
    case KS_PATCH_PATCHES: KS_PATCH_LAUNCH(ks_patch_fwd); break;
    case KS_PATCH_BILINEAR: KS_PATCH_LAUNCH(ks_patch_bilinear); break;
    case KS_PATCH_BILINEAR_BWD: KS_PATCH_LAUNCH(ks_patch_bilinear_bwd); break;
    default: KS_PATCH_LAUNCH(ks_patch_bwd); break;
    }
    return ks_cuda_check_launch("patchify");
}
