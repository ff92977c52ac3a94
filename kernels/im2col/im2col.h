/* im2col.h - im2col and col2im (Caffe/MXNet semantics, with a batch dimension).
 *
 *   im2col: input   [N, C, H, W]            -> columns [N, C*kh*kw, Ho*Wo]
 *   col2im: columns [N, C*kh*kw, Ho*Wo]     -> output  [N, C, H, W]   (sums overlaps)
 *
 * Column row c_col = (c*kh + i)*kw + j, column h_col*Wo + w_col.
 * Ho = (H + 2*pad_h - (dilation_h*(kh-1)+1)) / stride_h + 1 with C truncation toward 0;
 * a geometry whose Ho or Wo is < 1 is rejected. Plain C API; pointers are host memory
 * for *_sim and *_ref, device memory for *_cuda.
 */
#ifndef KS_IM2COL_H
#define KS_IM2COL_H

#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_im2col_params {
    int64_t batch, channels, height, width; /* the image: N, C, H, W */
    int64_t kernel_h, kernel_w;
    int64_t pad_h, pad_w;
    int64_t stride_h, stride_w;
    int64_t dilation_h, dilation_w;
} ks_im2col_params;

typedef struct ks_im2col_geom {
    int64_t height_col, width_col; /* Ho, Wo */
    int64_t rows;                  /* C*kh*kw */
    int64_t image_numel;           /* N*C*H*W: col2im work items */
    int64_t columns_numel;         /* N*rows*Ho*Wo */
    int64_t im2col_work;           /* N*C*Ho*Wo */
} ks_im2col_geom;

/* Reference launch configuration (Caffe): 512 threads per block, no block cap. */
#define KS_IM2COL_THREADS 512
/* At most 2048 blocks (1M threads) unless the launch names a cap: a thread of a large
 * launch takes several items and pays its setup (the divisions that place its first item)
 * once; smaller launches keep one item per thread. */
#define KS_IM2COL_BLOCK_CAP 2048

/* Site and tensor ids in an im2col/col2im trace. */
enum { KS_IM2COL_SITE_WORK = 0, KS_IM2COL_SITE_READ = 1, KS_IM2COL_SITE_WRITE = 2 };
enum { KS_IM2COL_T_INPUT = 0, KS_IM2COL_T_COLUMNS = 1 }; /* im2col */
enum { KS_COL2IM_T_COLUMNS = 0, KS_COL2IM_T_OUTPUT = 1 }; /* col2im */

/* Validates p (sizes >= 1, kernel/stride/dilation >= 1, padding >= 0, no overflow,
 * output size >= 1) and fills g. KS_EINVAL with a message naming the parameter. */
int ks_im2col_geometry(const ks_im2col_params *p, ks_im2col_geom *g);

/* Simulator. `sink` NULL runs the plain variant, otherwise the traced one. */
int ks_im2col_sim(const ks_im2col_params *p, const float *input, float *columns,
                  const ks_launch *launch, ks_sink *sink);
int ks_col2im_sim(const ks_im2col_params *p, const float *columns, float *output,
                  const ks_launch *launch, ks_sink *sink);

/* CUDA, device pointers. `dev_sink` NULL runs the plain kernel; otherwise a sink from
 * ks_cuda_sink_create. `stream` is a cudaStream_t (NULL: default stream). Checks the
 * launch; does not synchronize. KS_ECUDA if built without CUDA. */
int ks_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns,
                   const ks_launch *launch, const ks_sink *dev_sink, void *stream);
int ks_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output,
                   const ks_launch *launch, const ks_sink *dev_sink, void *stream);

/* Independent double-precision reference, from the definition (im2col_ref.c). */
void ks_im2col_ref(const ks_im2col_params *p, const float *input, double *columns);
void ks_col2im_ref(const ks_im2col_params *p, const float *columns, double *output);


#ifdef __cplusplus
}
#endif

#endif
