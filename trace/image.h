/* image.h - a picture as a feature map: PNG (when built with libpng) or binary PGM/PPM,
 * read into a float32 tensor (1, C, H, W) with values in [0, 1], C = 1 for grey and 3 for
 * colour, optionally resampled to H x W by averaging the source pixels each output pixel
 * covers (nearest when enlarging). */
#ifndef KS_IMAGE_H
#define KS_IMAGE_H

#include <stdint.h>

#include "../kernels/core/ks_schema.h"

/* The most pixels read or made (2^26, an 8192 x 8192 picture): the float tensor of a
 * colour picture that size is 768 MiB. Bigger ones are refused before any allocation. */
#define KS_IMAGE_MAX_PIXELS (1LL << 26)

/* gray: average the colour channels into one. h, w: output size (0, 0: the picture's).
 * t->name is kept; shape and data are set. KS_EIO / KS_EFORMAT with "FILE: problem". */
int ks_image_read(const char *path, int gray, int64_t h, int64_t w, ks_tensor *t);

#endif
