/* conv2d_args.h - the GEMM kernel's arguments, shared by the body and the launchers. */
#ifndef KS_CONV2D_ARGS_H
#define KS_CONV2D_ARGS_H

#include <stdint.h>

#include "conv2d.h"

typedef struct ks_conv_gemm_args {
    int64_t batch, out_channels, rows, height_col, width_col; /* N, O, K, Ho, Wo */
    int64_t channels, kernel_h, kernel_w;                     /* to name weight elements */
    const float *weight;  /* [O, K] */
    const float *columns; /* [N, K, Ho*Wo] */
    float *output;        /* [N, O, Ho, Wo] */
} ks_conv_gemm_args;

#ifdef __cplusplus
extern "C" {
#endif
int ks_conv_gemm_args_make(const ks_conv2d_params *p, const float *weight, const float *columns,
                           float *output, ks_conv_gemm_args *a, ks_conv2d_geom *g);
/* The GEMM kernel on arguments ks_conv_gemm_args_make validated: nothing checked again. */
int ks_conv_gemm_launch_sim(const ks_conv_gemm_args *a, const ks_launch *l, ks_sink *sink);
int ks_conv_gemm_launch_cuda(const ks_conv_gemm_args *a, const ks_launch *l, const ks_sink *dev_sink, void *stream);
/* The trace schema of the GEMM kernel (4 sites). */
int ks_conv_gemm_sites(const ks_conv_gemm_args *a, ks_site *sites);
#ifdef __cplusplus
}
#endif

#endif
