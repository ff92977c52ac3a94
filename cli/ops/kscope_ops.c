/* kscope_ops.c - libkscope_ops.so: the operators' plain-C entry points for ctypes
 * (bench/bench_torch.py, bench/bench_spconv.py, tests/test_ops_lib.sh) and for trying the
 * kernels from another program (README: Using the kernels from another program).
 *
 * Not the SDK: libkscope.so exports only what the installed headers declare (the public
 * API), and the operators' functions stay hidden inside it. This library, built in the
 * build tree and not installed, carries the same code and exports the public API plus the
 * set below, each `ks_ops_<name>` calling the operator's `ks_<name>` (its declaration and
 * comment are in the operator's header, named beside each group). The set is small on
 * purpose: add an entry when a benchmark or a test needs one, and the name to
 * bench_ops_symbols in tests/test_ops_lib.sh's list if a script calls it. No ABI promise:
 * the structs passed by pointer are the operators' own and change with them. */
#include <stddef.h>
#include <stdint.h>

#include "../../kernels/core/ks_error.h"
#include "../../kernels/deform_conv/deform_body.h"
#include "../../kernels/im2col/im2col_body.h"
#include "../../kernels/maxpool2d/maxpool2d_body.h"
#include "../../kernels/patchify/patchify_body.h"
#include "../../kernels/roi_align/roi_align_body.h"
#include "../../kernels/sparse_conv/sparse_conv_body.h"

#define KS_OPS_API __attribute__((visibility("default")))

/* im2col / col2im (kernels/im2col/im2col_body.h) */
KS_OPS_API int ks_ops_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns,
                                  const ks_launch *launch, const ks_sink *dev_sink, void *stream);
KS_OPS_API int ks_ops_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output,
                                  const ks_launch *launch, const ks_sink *dev_sink, void *stream);
KS_OPS_API int ks_ops_im2col_sim(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                                 ks_sink *sink);
KS_OPS_API int ks_ops_col2im_sim(const ks_im2col_params *p, const float *columns, float *output,
                                 const ks_launch *launch, ks_sink *sink);
KS_OPS_API void ks_ops_im2col_ref(const ks_im2col_params *p, const float *input, double *columns);
KS_OPS_API void ks_ops_col2im_ref(const ks_im2col_params *p, const float *columns, double *output);

int ks_ops_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                       const ks_sink *dev_sink, void *stream)
{
    return ks_im2col_cuda(p, input, columns, launch, dev_sink, stream);
}
int ks_ops_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                       const ks_sink *dev_sink, void *stream)
{
    return ks_col2im_cuda(p, columns, output, launch, dev_sink, stream);
}
int ks_ops_im2col_sim(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                      ks_sink *sink)
{
    return ks_im2col_sim(p, input, columns, launch, sink);
}
int ks_ops_col2im_sim(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                      ks_sink *sink)
{
    return ks_col2im_sim(p, columns, output, launch, sink);
}
void ks_ops_im2col_ref(const ks_im2col_params *p, const float *input, double *columns)
{
    ks_im2col_ref(p, input, columns);
}
void ks_ops_col2im_ref(const ks_im2col_params *p, const float *columns, double *output)
{
    ks_col2im_ref(p, columns, output);
}

/* deformable convolution (kernels/deform_conv/deform_body.h) */
KS_OPS_API int ks_ops_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                                          const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink,
                                          void *stream);
KS_OPS_API int ks_ops_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                                           const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink,
                                           void *stream);
KS_OPS_API int ks_ops_deform_kernel_cuda(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                                         const ks_launch *launch, const ks_sink *dev_sink, void *stream);
KS_OPS_API int64_t ks_ops_deform_workspace_floats(const ks_deform_params *p);

int ks_ops_deform_forward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                               const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream)
{
    return ks_deform_forward_cuda(p, t, workspace, launch, traced, dev_sink, stream);
}
int ks_ops_deform_backward_cuda(const ks_deform_params *p, const ks_deform_tensors *t, float *workspace,
                                const ks_launch *launch, ks_deform_kernel traced, const ks_sink *dev_sink, void *stream)
{
    return ks_deform_backward_cuda(p, t, workspace, launch, traced, dev_sink, stream);
}
int ks_ops_deform_kernel_cuda(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                              const ks_launch *launch, const ks_sink *dev_sink, void *stream)
{
    return ks_deform_kernel_cuda(p, k, c, launch, dev_sink, stream);
}
int64_t ks_ops_deform_workspace_floats(const ks_deform_params *p) { return ks_deform_workspace_floats(p); }

/* RoIAlign (kernels/roi_align/roi_align_body.h) */
KS_OPS_API int ks_ops_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois,
                                             float *output, float *argmax_y, float *argmax_x, const ks_launch *l,
                                             const ks_sink *dev_sink, void *stream);
KS_OPS_API int ks_ops_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                                              const float *argmax_y, const float *argmax_x, float *grad_input,
                                              const ks_launch *l, const ks_sink *dev_sink, void *stream);

int ks_ops_roi_align_forward_cuda(const ks_roi_align_params *p, const float *input, const float *rois, float *output,
                                  float *argmax_y, float *argmax_x, const ks_launch *l, const ks_sink *dev_sink,
                                  void *stream)
{
    return ks_roi_align_forward_cuda(p, input, rois, output, argmax_y, argmax_x, l, dev_sink, stream);
}
int ks_ops_roi_align_backward_cuda(const ks_roi_align_params *p, const float *grad_output, const float *rois,
                                   const float *argmax_y, const float *argmax_x, float *grad_input, const ks_launch *l,
                                   const ks_sink *dev_sink, void *stream)
{
    return ks_roi_align_backward_cuda(p, grad_output, rois, argmax_y, argmax_x, grad_input, l, dev_sink, stream);
}

/* patchify (kernels/patchify/patchify_body.h) and max pooling (kernels/maxpool2d/maxpool2d_body.h) */
KS_OPS_API int ks_ops_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k,
                                           const ks_patchify_tensors *t, const ks_launch *l, const ks_sink *dev_sink,
                                           void *stream);
KS_OPS_API int ks_ops_maxpool2d_cuda(const ks_maxpool2d_args *a, int backward, const ks_launch *l,
                                     const ks_sink *dev_sink);

int ks_ops_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                                const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    return ks_patchify_kernel_cuda(p, k, t, l, dev_sink, stream);
}
int ks_ops_maxpool2d_cuda(const ks_maxpool2d_args *a, int backward, const ks_launch *l, const ks_sink *dev_sink)
{
    return ks_maxpool2d_cuda(a, backward, l, dev_sink);
}

/* sparse convolution (kernels/sparse_conv/sparse_conv_body.h) */
KS_OPS_API size_t ks_ops_sparse_geom_size(void);
KS_OPS_API int ks_ops_sparse_geom_init(ks_sparse_geom *g, int ndim, int mode, int64_t batch, const int64_t *spatial,
                                       const int64_t *kernel, const int64_t *stride, const int64_t *pad,
                                       const int64_t *dilation, const int64_t *out_pad, int64_t n_in, int64_t c_in,
                                       int64_t c_out, int use_bias);
KS_OPS_API int ks_ops_sparse_cuda_plan(const ks_sparse_geom *g, const int32_t *indices, ks_sparse_plan **out);
KS_OPS_API int64_t ks_ops_sparse_plan_sites(const ks_sparse_plan *pl);
KS_OPS_API int64_t ks_ops_sparse_plan_pairs(const ks_sparse_plan *pl);
KS_OPS_API const int32_t *ks_ops_sparse_plan_out_indices(const ks_sparse_plan *pl);
KS_OPS_API int ks_ops_sparse_cuda_forward(ks_sparse_plan *pl, const float *features, const float *weight,
                                          const float *bias, float *out);
KS_OPS_API int ks_ops_sparse_cuda_backward(ks_sparse_plan *pl, const float *grad_out, float *grad_features,
                                           float *grad_weight, float *grad_bias);
KS_OPS_API int ks_ops_sparse_cuda_profile(ks_sparse_plan *pl, const float *features, const float *weight,
                                          const float *bias, float *out, float *ms);
KS_OPS_API void ks_ops_sparse_cuda_plan_free(ks_sparse_plan *pl);

size_t ks_ops_sparse_geom_size(void) { return ks_sparse_geom_size(); }
int ks_ops_sparse_geom_init(ks_sparse_geom *g, int ndim, int mode, int64_t batch, const int64_t *spatial,
                            const int64_t *kernel, const int64_t *stride, const int64_t *pad, const int64_t *dilation,
                            const int64_t *out_pad, int64_t n_in, int64_t c_in, int64_t c_out, int use_bias)
{
    return ks_sparse_geom_init(g, ndim, mode, batch, spatial, kernel, stride, pad, dilation, out_pad, n_in, c_in, c_out,
                               use_bias);
}
#ifdef KS_HAVE_CUDA
int ks_ops_sparse_cuda_plan(const ks_sparse_geom *g, const int32_t *indices, ks_sparse_plan **out)
{
    return ks_sparse_cuda_plan(g, indices, out);
}
int64_t ks_ops_sparse_plan_sites(const ks_sparse_plan *pl) { return ks_sparse_plan_sites(pl); }
int64_t ks_ops_sparse_plan_pairs(const ks_sparse_plan *pl) { return ks_sparse_plan_pairs(pl); }
const int32_t *ks_ops_sparse_plan_out_indices(const ks_sparse_plan *pl) { return ks_sparse_plan_out_indices(pl); }
int ks_ops_sparse_cuda_forward(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                               float *out)
{
    return ks_sparse_cuda_forward(pl, features, weight, bias, out);
}
int ks_ops_sparse_cuda_backward(ks_sparse_plan *pl, const float *grad_out, float *grad_features, float *grad_weight,
                                float *grad_bias)
{
    return ks_sparse_cuda_backward(pl, grad_out, grad_features, grad_weight, grad_bias);
}
int ks_ops_sparse_cuda_profile(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                               float *out, float *ms)
{
    return ks_sparse_cuda_profile(pl, features, weight, bias, out, ms);
}
void ks_ops_sparse_cuda_plan_free(ks_sparse_plan *pl) { ks_sparse_cuda_plan_free(pl); }
#else /* sparse_conv_cuda.cu has no stubs: the same names, failing as every *_cuda does here */
#define NO_CUDA ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)")
int ks_ops_sparse_cuda_plan(const ks_sparse_geom *g, const int32_t *indices, ks_sparse_plan **out)
{
    (void)g, (void)indices;
    if (out) *out = NULL;
    return NO_CUDA;
}
int ks_ops_sparse_cuda_forward(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                               float *out)
{
    (void)pl, (void)features, (void)weight, (void)bias, (void)out;
    return NO_CUDA;
}
int ks_ops_sparse_cuda_backward(ks_sparse_plan *pl, const float *grad_out, float *grad_features, float *grad_weight,
                                float *grad_bias)
{
    (void)pl, (void)grad_out, (void)grad_features, (void)grad_weight, (void)grad_bias;
    return NO_CUDA;
}
int ks_ops_sparse_cuda_profile(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                               float *out, float *ms)
{
    (void)pl, (void)features, (void)weight, (void)bias, (void)out, (void)ms;
    return NO_CUDA;
}
void ks_ops_sparse_cuda_plan_free(ks_sparse_plan *pl) { (void)pl; }
#endif
