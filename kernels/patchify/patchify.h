/* patchify.h - DPVO's patchify (dpvo/altcorr): square patches around points, forward and
 * backward.
 *
 *   input   [B, C, H, W]
 *   coords  [B, M, 2]  holding (x, y): coords[b, m, 0] is x
 *   patches [B, M, C, D, D], D = 2R + 2: raw pixels at rows floor(y) + ii - R and columns
 *           floor(x) + jj - R (0 outside the image)
 *   output  [B, M, C, 2R+1, 2R+1]: the bilinear combination of neighbouring raw entries with
 *           dy = y - floor(y), dx = x - floor(x), i.e. the bilinear sample of the input at
 *           (y + a - R, x + b - R) with zero padding; output[R][R] = input(y, x).
 * Why D = 2R + 2: a (2R+1)-wide bilinear window needs one more row and column of pixels.
 *
 * Four kernels, each one body: patches (one work item per (b, m, jj, ii), ii fastest, as
 * DPVO; C channels per item), bilinear (one per output element), and their backwards:
 * bilinear_backward gathers the gradient of each raw entry (no atomics), patches_backward
 * scatters it into grad_input with atomic adds (overlapping patches collide).
 */
#ifndef KS_PATCHIFY_H
#define KS_PATCHIFY_H

#include <stdint.h>

#include "../core/ks_event.h"
#include "../core/ks_launch.h"
#include "../core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_patchify_params {
    int64_t batch, channels, height, width; /* input [B, C, H, W] */
    int64_t num_points;                     /* M (0: nothing runs) */
    int64_t radius;                         /* R >= 0 */
} ks_patchify_params;

typedef enum ks_patchify_kernel {
    KS_PATCH_NONE = -1,
    KS_PATCH_PATCHES = 0,    /* input -> patches */
    KS_PATCH_BILINEAR = 1,   /* patches -> output */
    KS_PATCH_BILINEAR_BWD = 2, /* grad_output -> grad_patches */
    KS_PATCH_PATCHES_BWD = 3   /* grad_patches -> grad_input (atomics) */
} ks_patchify_kernel;

/* DPVO: 256 threads, no block cap (one thread per item; our bodies loop when capped) */
#define KS_PATCH_THREADS 256
#define KS_PATCH_BLOCK_CAP (-1)

/* PATCH: the raw kernels' region, the D x D patch around floor(x, y) */
enum { KS_PATCH_SITE_WORK, KS_PATCH_SITE_READ, KS_PATCH_SITE_SAMPLE, KS_PATCH_SITE_WRITE, KS_PATCH_SITE_PATCH,
       KS_PATCH_NSITES };
/* tensor ids in traces: the patchify op's order */
enum { KS_PATCH_T_INPUT, KS_PATCH_T_COORDS, KS_PATCH_T_PATCHES, KS_PATCH_T_OUTPUT, KS_PATCH_T_GRAD_OUTPUT,
       KS_PATCH_T_GRAD_PATCHES, KS_PATCH_T_GRAD_INPUT };

/* Validates p: sizes >= 1 (M >= 0, R >= 0), no overflow. KS_EINVAL otherwise. */
int ks_patchify_check(const ks_patchify_params *p);
/* Work items of kernel k. */
int64_t ks_patchify_work(const ks_patchify_params *p, ks_patchify_kernel k);

/* The tensors (host or device pointers); each kernel reads and writes its own. */
typedef struct ks_patchify_tensors {
    const float *input, *coords;
    float *patches, *output;
    const float *grad_output;
    float *grad_patches, *grad_input; /* grad_input accumulated: zero it first */
} ks_patchify_tensors;

int ks_patchify_kernel_sim(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                           const ks_launch *l, ks_sink *sink);
int ks_patchify_kernel_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                            const ks_launch *l, const ks_sink *dev_sink, void *stream);
/* The same for p that passed ks_patchify_check and a known k: nothing checked again. */
int ks_patchify_launch_sim(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                           const ks_launch *l, ks_sink *sink);
int ks_patchify_launch_cuda(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                            const ks_launch *l, const ks_sink *dev_sink, void *stream);

/* Independent reference in double: patches, output, and grad_input of
 * sum(output * grad_output) (coords are constants, as in DPVO). */
void ks_patchify_ref(const ks_patchify_params *p, const float *input, const float *coords, double *patches,
                     double *output);
void ks_patchify_ref_backward(const ks_patchify_params *p, const float *coords, const float *grad_output,
                              double *grad_input);

/* The trace schema of kernel k; p must have passed ks_patchify_check. */
int ks_patchify_sites(const ks_patchify_params *p, ks_patchify_kernel k, ks_site *sites);

#ifdef __cplusplus
}
#endif

#endif
