/* ks_cuda_int.h - CUDA helpers the operators' own code uses (RoIAlign's scratch and
 * shared-memory opt-in, deform's stream-ordered copies): internal to libkscope, not
 * installed and not exported (ks_cuda_api.h is the public part). Defined in ks_cuda.cu,
 * or as stubs in ks_cuda_nocuda.c without CUDA. */
#ifndef KS_CUDA_INT_H
#define KS_CUDA_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ks_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most dynamic shared memory a block of the current device may opt in to, in bytes. */
ks_status ks_cuda_shared_optin_bytes(int64_t *bytes);
/* On `stream` (a cudaStream_t; NULL: the default stream), ordered with its kernels: set
 * device bytes, or copy device to device. */
ks_status ks_cuda_memset_async(void *dst_dev, int byte, size_t bytes, void *stream);
ks_status ks_cuda_copy_async(void *dst_dev, const void *src_dev, size_t bytes, void *stream);
/* A scratch of the current device that a sequence of launches on `stream` uses (RoIAlign's
 * channels-last copy): one buffer per device, grown as needed and freed at exit (cudaMalloc
 * and cudaFree cost tens of microseconds, and cudaFree waits for the device). *p is set and
 * a lock held from here until ks_cuda_scratch_done, which records an event after the
 * launches; the next use's stream waits for it, so host threads and streams never share
 * the buffer at once. *p stays NULL, with KS_OK and nothing held, when the device has no
 * room, the stream is being captured into a graph, or the device is past the 64th: the
 * caller does without (another kernel). *token: for ks_cuda_scratch_done. */
ks_status ks_cuda_scratch_get(size_t bytes, void *stream, void **p, int *token);
ks_status ks_cuda_scratch_done(int token, void *stream);

#ifdef __cplusplus
}
#endif

#endif
