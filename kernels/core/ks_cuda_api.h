/* ks_cuda_api.h - the plain-C face of the CUDA runtime used by the tools: device query,
 * device memory and device trace sinks. Every function checks its CUDA calls and returns
 * KS_ECUDA with ks_error_message() naming the call; a build without nvcc returns
 * KS_ECUDA ("this build has no CUDA"), and ks_cuda_device_count() returns 0. */
#ifndef KS_CUDA_API_H
#define KS_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "ks_api.h"
#include "ks_error.h"
#include "ks_event.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices; 0 when there is no GPU, no driver or no CUDA build. */
KS_API int ks_cuda_device_count(void);
KS_API ks_status ks_cuda_device_name(char *buf, size_t n);

KS_API ks_status ks_cuda_malloc(void **p, size_t bytes);
KS_API void ks_cuda_free(void *p);
KS_API ks_status ks_cuda_upload(void *dst_dev, const void *src_host, size_t bytes);
KS_API ks_status ks_cuda_download(void *dst_host, const void *src_dev, size_t bytes);
KS_API ks_status ks_cuda_memset(void *dst_dev, int byte, size_t bytes);
KS_API ks_status ks_cuda_sync(void);
/* Row-major C[M, N] = beta C + op(A) op(B) on device pointers (ks_gemm.h's conventions) with
 * cuBLAS in plain fp32 (no TF32), on `stream` (a cudaStream_t; NULL: the default stream).
 * One cuBLAS handle serves the process; it is created on first use, freed at exit. */
KS_API ks_status ks_cuda_sgemm(void *stream, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                               int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
/* As ks_cuda_sgemm, `batch` times (cublasSgemmStridedBatched): GEMM s reads A + s*sa and
 * B + s*sb and writes C + s*sc. math: KS_MATH_FP32, or KS_MATH_TF32 (ks_gemm.h): cuBLAS
 * may round the inputs to TF32 and multiply on the tensor cores. */
KS_API ks_status ks_cuda_sgemm_batched(void *stream, int math, int ta, int tb, int64_t M, int64_t N, int64_t K,
                                       const float *A, int64_t lda, int64_t sa, const float *B, int64_t ldb, int64_t sb,
                                       float beta, float *C, int64_t ldc, int64_t sc, int64_t batch);
/* `groups` GEMMs of that kind in one cuBLAS call (cublasSgemmGroupedBatched), beta 0:
 * C[g] (M[g], N[g]) = op(A[g]) op(B[g]); the pointer arrays are host arrays of device
 * pointers (copied to the device here), every M, N, K >= 1. */
KS_API ks_status ks_cuda_sgemm_groups(void *stream, int ta, int tb, int groups, const int64_t *M, const int64_t *N,
                                      const int64_t *K, const float *const *A, int64_t lda, const float *const *B,
                                      int64_t ldb, float *const *C, int64_t ldc);

/* A device sink of `capacity` 64-byte event slots: `out` receives device pointers (pass
 * it to the *_cuda launchers). The GPU writes compact records into it (ks_pages.h), in
 * pages of 32 columns that each warp slot in use claims two at a time: past those pages
 * (up to 512 slots a warp slot, KS_PAGE_WARP_SLOTS of them) it holds at least `capacity`
 * events, about 5x that for reads and writes whose positions follow from the dims set in
 * out->dim_rows / dim_cols (12 bytes each; 8 for a write of the value just read). Free with ks_cuda_sink_free. */
KS_API ks_status ks_cuda_sink_create(ks_sink *out, unsigned long long capacity, ks_filter filter);
/* Empties it (cursor and dropped back to 0). */
KS_API ks_status ks_cuda_sink_reset(ks_sink *dev);
/* The slots the launches asked for so far (stored or not): the capacity a rerun needs
 * to keep every event. */
KS_API ks_status ks_cuda_sink_claimed(const ks_sink *dev, unsigned long long *claimed);
/* Copies the recorded events and the dropped count into a host sink (appending). */
KS_API ks_status ks_cuda_sink_download(const ks_sink *dev, ks_sink *host);
KS_API void ks_cuda_sink_free(ks_sink *dev);

#ifdef __cplusplus
}
#endif

#endif
