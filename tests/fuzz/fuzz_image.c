/* libFuzzer: the picture reader (PNG through libpng when built with it, binary PGM/PPM)
 * on any bytes, grey or colour, at its own size or resampled to a small one taken from
 * the input's last byte. Values of an accepted picture lie in [0, 1]. */
#include "../../kernels/core/ks_error.h"
#include "../../trace/image.h"
#include "fz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    const uint8_t mode = data[size - 1];
    const int gray = mode & 1;
    const int64_t h = (mode >> 1) & 7, w = (mode >> 4) & 7; /* 0: keep the picture's size */
    const char *path = fz_file("in.img", data, size - 1);
    ks_tensor t;
    memset(&t, 0, sizeof t);
    if (ks_image_read(path, gray, h, w, &t) != KS_OK) return 0;
    const int64_t n = ks_tensor_numel(&t);
    const float *v = t.data;
    for (int64_t i = 0; i < n; ++i)
        if (!(v[i] >= 0.0f && v[i] <= 1.0f)) abort();
    ks_tensor_free(&t);
    return 0;
}
