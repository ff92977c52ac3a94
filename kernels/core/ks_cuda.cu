/* ks_cuda.cu - device query, memory and trace sinks behind ks_cuda_api.h. */
#include "ks_cuda.h"
#include "ks_cuda_api.h"

#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" int ks_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device"/"no driver" error */
        return 0;
    }
    return n;
}

extern "C" int ks_cuda_device_name(char *buf, size_t n)
{
    int dev = 0;
    cudaDeviceProp prop;
    int rc = ks_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    if (!rc) rc = ks_cuda_ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    if (rc) return rc;
    snprintf(buf, n, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
    return KS_OK;
}

extern "C" int ks_cuda_malloc(void **p, size_t bytes)
{
    *p = NULL;
    return ks_cuda_ok(cudaMalloc(p, bytes ? bytes : 1), "cudaMalloc");
}

extern "C" void ks_cuda_free(void *p)
{
    if (p) cudaFree(p);
}

extern "C" int ks_cuda_upload(void *dst, const void *src, size_t bytes)
{
    return ks_cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

extern "C" int ks_cuda_download(void *dst, const void *src, size_t bytes)
{
    return ks_cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

extern "C" int ks_cuda_memset(void *dst, int byte, size_t bytes)
{
    return ks_cuda_ok(cudaMemset(dst, byte, bytes), "cudaMemset");
}

extern "C" int ks_cuda_sync(void)
{
    return ks_cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

extern "C" int ks_cuda_sink_create(ks_sink *out, unsigned long long capacity, ks_filter filter)
{
    memset(out, 0, sizeof *out);
    int rc = ks_cuda_malloc((void **)&out->events, capacity * sizeof(ks_event));
    if (!rc) rc = ks_cuda_malloc((void **)&out->counters, 2 * sizeof(unsigned long long));
    if (!rc) rc = ks_cuda_memset(out->counters, 0, 2 * sizeof(unsigned long long));
    if (rc) {
        ks_cuda_sink_free(out);
        return rc;
    }
    out->capacity = capacity;
    out->limit = capacity;
    out->filter = filter;
    return KS_OK;
}

extern "C" int ks_cuda_sink_reset(ks_sink *dev)
{
    return ks_cuda_memset(dev->counters, 0, 2 * sizeof(unsigned long long));
}

extern "C" int ks_cuda_sink_claimed(const ks_sink *dev, unsigned long long *claimed)
{
    return ks_cuda_download(claimed, dev->counters, sizeof *claimed);
}

extern "C" int ks_cuda_sink_download(const ks_sink *dev, ks_sink *host)
{
    unsigned long long c[2];
    int rc = ks_cuda_download(c, dev->counters, sizeof c);
    if (rc) return rc;
    unsigned long long n = c[0] < dev->capacity ? c[0] : dev->capacity;
    while (host->capacity - host->counters[0] < n) {
        if (ks_host_sink_grow(host) != 0)
            return ks_fail(KS_ENOMEM, "trace: %llu GPU events do not fit the host sink", n);
    }
    rc = ks_cuda_download(host->events + host->counters[0], dev->events, n * sizeof(ks_event));
    if (rc) return rc;
    host->counters[0] += n;
    host->counters[1] += c[1];
    return KS_OK;
}

extern "C" void ks_cuda_sink_free(ks_sink *dev)
{
    ks_cuda_free(dev->events);
    ks_cuda_free(dev->counters);
    dev->events = NULL;
    dev->counters = NULL;
}

/* One cuBLAS handle for the process, created on first use (creating one costs far more
 * than a layer call) and destroyed at exit, so no device memory is left behind
 * (compute-sanitizer's leak check). The CUDA runtime registered its own teardown when it
 * started, before this, so this handler runs first. */
static cublasHandle_t blas = NULL;

static void blas_release(void)
{
    if (blas) cublasDestroy(blas);
    blas = NULL;
}

extern "C" int ks_cuda_sgemm(void *stream, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                             int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    const float one = 1.0f;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX)
        return ks_fail(KS_EINVAL, "a GEMM dimension passes 2^31");
    if (!blas) {
        cublasStatus_t st = cublasCreate(&blas);
        if (st != CUBLAS_STATUS_SUCCESS) {
            blas = NULL;
            return ks_fail(KS_ECUDA, "cublasCreate failed (status %d)", (int)st);
        }
        atexit(blas_release);
    }
    cublasStatus_t st = cublasSetStream(blas, (cudaStream_t)stream);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return ks_fail(KS_ECUDA, "cuBLAS setup failed (status %d)", (int)st);
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
    st = cublasSgemm(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M, (int)K, &one,
                     B, (int)ldb, A, (int)lda, &beta, C, (int)ldc);
    if (st != CUBLAS_STATUS_SUCCESS) return ks_fail(KS_ECUDA, "cublasSgemm failed (status %d)", (int)st);
    return KS_OK;
}
