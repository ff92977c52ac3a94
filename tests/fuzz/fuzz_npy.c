/* libFuzzer: the .npy reader on any bytes. A file it accepts must hold exactly its
 * shape's elements, and write back to the same bytes' values. */
#include "../../kernels/core/ks_error.h"
#include "../../trace/npy.h"
#include "fz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ks_tensor t;
    const char *path = fz_file("in.npy", data, size);
    if (ks_npy_read(path, &t) != KS_OK) return 0;
    int64_t n = ks_tensor_numel(&t);
    if (n < 0 || (uint64_t)n * ks_dtype_size(t.dtype) > size) abort(); /* more data than the file */
    ks_tensor back;
    if (ks_npy_write(fz_path("out.npy"), &t) != KS_OK) abort();
    if (ks_npy_read(fz_path("out.npy"), &back) != KS_OK) abort();
    if (back.dtype != t.dtype || back.ndim != t.ndim ||
        memcmp(back.shape, t.shape, sizeof t.shape[0] * (size_t)t.ndim) ||
        (n && memcmp(back.data, t.data, (size_t)n * ks_dtype_size(t.dtype))))
        abort();
    ks_tensor_free(&back);
    ks_tensor_free(&t);
    return 0;
}
