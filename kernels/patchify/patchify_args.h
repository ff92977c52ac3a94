/* patchify_args.h - kernel arguments of patchify, shared by bodies and launchers. */
#ifndef KS_PATCHIFY_ARGS_H
#define KS_PATCHIFY_ARGS_H

#include <math.h>

#include "../core/ks_core.h"
#include "patchify.h"

typedef struct ks_patchify_args {
    int64_t batch, channels, height, width, num_points, radius;
    ks_patchify_tensors t;
} ks_patchify_args;

/* floor(c) as an integer, or 0 with *ok = 0 for NaN, Inf and |c| >= 2^30 (the patch then
 * reads nothing) */
KS_FN int64_t ks_patch_floor(float c, int *ok)
{
    const int fine = c > -1073741824.0f && c < 1073741824.0f;
    *ok = *ok && fine;
    return fine ? (int64_t)floorf(c) : 0;
}

#endif
