#include "run_cuda.h"

#include <stdio.h>

#include "core/ks_cuda_api.h"
#include "core/ks_error.h"

#define MAX_T 16

int ks_run_cuda(ks_tensor *const *tensors, const int *is_output, int n, ks_sink *host_sink,
                unsigned long long capacity, ks_cuda_launch_fn fn, void *ctx,
                char *device_name, size_t name_len)
{
    void *dev[MAX_T] = {0};
    ks_sink dsink;
    int have_sink = 0;
    int rc = n > MAX_T ? ks_fail(KS_EINVAL, "too many tensors") : KS_OK;
    if (!rc && ks_cuda_device_count() < 1) {
        char why[256] = "";
        if (ks_cuda_device_name(device_name, name_len) != KS_OK)
            snprintf(why, sizeof why, ": %s", ks_error_message());
        rc = ks_fail(KS_ECUDA, "no CUDA device available%s (use --device sim)", why);
    }
    if (!rc) rc = ks_cuda_device_name(device_name, name_len);
    for (int i = 0; i < n && !rc; ++i) {
        size_t bytes = (size_t)ks_tensor_numel(tensors[i]) * ks_dtype_size(tensors[i]->dtype);
        rc = ks_cuda_malloc(&dev[i], bytes);
        if (!rc && !is_output[i]) rc = ks_cuda_upload(dev[i], tensors[i]->data, bytes);
        if (!rc && is_output[i]) rc = ks_cuda_memset(dev[i], 0, bytes);
    }
    if (!rc && host_sink) {
        rc = ks_cuda_sink_create(&dsink, capacity ? capacity : 1, host_sink->filter);
        have_sink = !rc;
    }
    if (!rc) rc = fn(ctx, dev, have_sink ? &dsink : NULL);
    if (!rc) rc = ks_cuda_sync();
    for (int i = 0; i < n && !rc; ++i) {
        if (!is_output[i]) continue;
        size_t bytes = (size_t)ks_tensor_numel(tensors[i]) * ks_dtype_size(tensors[i]->dtype);
        rc = ks_cuda_download(tensors[i]->data, dev[i], bytes);
    }
    if (!rc && have_sink) rc = ks_cuda_sink_download(&dsink, host_sink);
    if (have_sink) ks_cuda_sink_free(&dsink);
    for (int i = 0; i < n; ++i) ks_cuda_free(dev[i]);
    return rc;
}
