/* deform_layer.h - what deform_layer.c, deform_geom.c and deform_fused.cu share besides
 * deform_conv.h: the fused TF32 forward's row. Internal to kernels/deform_conv. */
#ifndef KS_DEFORM_LAYER_H
#define KS_DEFORM_LAYER_H

#include "deform_conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fused TF32 forward's row (KS_DEFORM_ROW_FUSED): a chunk's whole forward in one
 * kernel, output and bias included, where ks_deform_fused_fits. weight_t: scratch for the
 * prepared weight, filled from weight when `prepare`: groups x (Og rounded up to its
 * tile's rows, at most 256) x Kg floats, the room that ks_deform_fused_fits checks (the
 * workspace). Its entry point (deform_fused.cu) sizes its own 3-D grid and tiles: the
 * registry's launch is one block of the row's reference. */
typedef struct ks_deform_fused_args {
    const ks_deform_params *p;
    const ks_deform_geom *g;
    const ks_deform_chunk *c;
    const float *weight, *bias; /* bias NULL: none */
    float *weight_t, *out;
    int prepare;
} ks_deform_fused_args;
int ks_deform_fused_cuda_row(const void *args, const ks_grid *g, const ks_sink *dev_sink);
void ks_deform_fused_launched(void);
/* KS_DEFORM_FUSED: 0 off (unset or anything else), 1 on, or the tile shape asked for (24,
 * 42, 422, 44) */
int ks_deform_fused_choice(void);

#ifdef __cplusplus
}
#endif

#endif
