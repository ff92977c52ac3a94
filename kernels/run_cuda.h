/* run_cuda.h - moving a run's tensors to the GPU and back, shared by every operator's
 * runner: upload inputs, allocate outputs, launch, synchronize, download outputs and the
 * trace. */
#ifndef KS_RUN_CUDA_H
#define KS_RUN_CUDA_H

#include "core/ks_event.h"
#include "core/ks_schema.h"

/* Launches the op on device copies: dev[i] is the device copy of tensors[i].
 * `dev_sink` is NULL for the plain variant. */
typedef int (*ks_cuda_launch_fn)(void *ctx, void *const *dev, const ks_sink *dev_sink);

/* tensors[0..n): inputs are uploaded, outputs (is_output[i]) allocated and downloaded.
 * With host_sink, a device sink of `capacity` events records the run and is appended to
 * host_sink (overflow counted as dropped). Fills device_name. */
int ks_run_cuda(ks_tensor *const *tensors, const int *is_output, int n, ks_sink *host_sink,
                unsigned long long capacity, ks_cuda_launch_fn fn, void *ctx,
                char *device_name, size_t name_len);

#endif
