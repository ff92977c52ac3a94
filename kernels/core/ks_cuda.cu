/* ks_cuda.cu - device query, memory and trace sinks behind ks_cuda_api.h. */
#include "ks_cuda.h"
#include "ks_cuda_api.h"
#include "ks_cuda_int.h"
#include "ks_gemm.h"
#include "ks_pages_int.h"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern "C" int ks_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device"/"no driver" error */
        return 0;
    }
    return n;
}

extern "C" ks_status ks_cuda_device_name(char *buf, size_t n)
{
    int dev = 0;
    cudaDeviceProp prop;
    ks_status rc = ks_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    if (!rc) rc = ks_cuda_ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    if (rc) return rc;
    snprintf(buf, n, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
    return KS_OK;
}

extern "C" ks_status ks_cuda_shared_optin_bytes(int64_t *bytes)
{
    int dev = 0, optin = 0;
    ks_status rc = ks_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    if (!rc)
        rc = ks_cuda_ok(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
                        "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
    *bytes = optin;
    return rc;
}

/* the scratch of ks_cuda_scratch_get, per device */
#define KS_SCRATCH_DEVICES 64
static struct {
    void *p;
    size_t bytes;
    cudaEvent_t done;
} scratch[KS_SCRATCH_DEVICES];
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;

static void scratch_free_all(void)
{
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) return;
    for (int d = 0; d < KS_SCRATCH_DEVICES; ++d) {
        if (!scratch[d].p) continue;
        if (cudaSetDevice(d) == cudaSuccess) {
            cudaFree(scratch[d].p);
            cudaEventDestroy(scratch[d].done);
        }
        scratch[d].p = NULL, scratch[d].done = NULL, scratch[d].bytes = 0;
    }
    cudaSetDevice(cur);
}

extern "C" ks_status ks_cuda_scratch_get(size_t bytes, void *stream, void **p, int *token)
{
    cudaStream_t s = (cudaStream_t)stream;
    int dev = -1;
    *p = NULL, *token = -1;
    /* not while a CUDA graph is captured: no cudaMalloc there, and the event is outside it */
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    ks_status rc = ks_cuda_ok(cudaStreamIsCapturing(s, &cap), "cudaStreamIsCapturing");
    if (rc || cap != cudaStreamCaptureStatusNone) return rc;
    rc = ks_cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
    if (rc || dev < 0 || dev >= KS_SCRATCH_DEVICES) return rc;
    pthread_mutex_lock(&scratch_lock);
    auto &c = scratch[dev];
    if (c.p && c.bytes < bytes) { /* grow: cudaFree waits for the device, so for its last use too */
        rc = ks_cuda_ok(cudaFree(c.p), "cudaFree");
        c.p = NULL, c.bytes = 0;
    }
    if (!rc && !c.p) {
        static int hooked;
        const cudaError_t e = cudaMalloc(&c.p, bytes);
        if (e == cudaErrorMemoryAllocation) { /* no room: not an error, the caller does without */
            (void)cudaGetLastError();
            c.p = NULL;
            pthread_mutex_unlock(&scratch_lock);
            return KS_OK;
        }
        rc = ks_cuda_ok(e, "cudaMalloc");
        if (!rc) c.bytes = bytes;
        if (!rc && !c.done)
            rc = ks_cuda_ok(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming), "cudaEventCreate");
        if (!rc && !hooked) hooked = !atexit(scratch_free_all);
    }
    if (!rc) rc = ks_cuda_ok(cudaStreamWaitEvent(s, c.done, 0), "cudaStreamWaitEvent");
    if (rc) {
        pthread_mutex_unlock(&scratch_lock);
        return rc;
    }
    *p = c.p, *token = dev;
    return KS_OK;
}

extern "C" ks_status ks_cuda_scratch_done(int token, void *stream)
{
    if (token < 0 || token >= KS_SCRATCH_DEVICES) return ks_fail(KS_EINVAL, "no scratch %d is held", token);
    const ks_status rc = ks_cuda_ok(cudaEventRecord(scratch[token].done, (cudaStream_t)stream), "cudaEventRecord");
    pthread_mutex_unlock(&scratch_lock);
    return rc;
}

extern "C" ks_status ks_cuda_malloc(void **p, size_t bytes)
{
    *p = NULL;
    return ks_cuda_ok(cudaMalloc(p, bytes ? bytes : 1), "cudaMalloc");
}

extern "C" void ks_cuda_free(void *p)
{
    if (p) cudaFree(p);
}

extern "C" ks_status ks_cuda_upload(void *dst, const void *src, size_t bytes)
{
    return ks_cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

extern "C" ks_status ks_cuda_download(void *dst, const void *src, size_t bytes)
{
    return ks_cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

extern "C" ks_status ks_cuda_memset(void *dst, int byte, size_t bytes)
{
    return ks_cuda_ok(cudaMemset(dst, byte, bytes), "cudaMemset");
}

extern "C" ks_status ks_cuda_memset_async(void *dst, int byte, size_t bytes, void *stream)
{
    return ks_cuda_ok(cudaMemsetAsync(dst, byte, bytes, (cudaStream_t)stream), "cudaMemsetAsync");
}

extern "C" ks_status ks_cuda_copy_async(void *dst, const void *src, size_t bytes, void *stream)
{
    return ks_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream),
                      "cudaMemcpyAsync");
}

extern "C" ks_status ks_cuda_sync(void) { return ks_cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

/* A launch's page tag (ks_pages.h): different for every launch of the process, and
 * unlikely to be another process's that left pages in the same memory. */
static uint32_t ks_next_epoch(void)
{
    static const uint32_t seed = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)getpid() << 16; /* once, C++11 */
    static uint32_t count = 0;
    return seed + __atomic_add_fetch(&count, 1u, __ATOMIC_RELAXED);
}

extern "C" ks_status ks_cuda_sink_create(ks_sink *out, unsigned long long capacity, ks_filter filter)
{
    memset(out, 0, sizeof *out);
    if (capacity > KS_PAGE_MAX_SLOTS)
        return ks_fail(KS_EINVAL, "trace: a GPU record buffer of %llu slots is too large (at most %llu, 16 GB)",
                       capacity, KS_PAGE_MAX_SLOTS);
    ks_status rc = ks_cuda_malloc((void **)&out->events, capacity * sizeof(ks_event));
    /* the cursor, the drops, then the warps' current pages (ks_pages.h, ks_page_claim) */
    const size_t ctl = KS_PAGE_CONTROL_WORDS * sizeof(unsigned long long);
    if (!rc) rc = ks_cuda_malloc((void **)&out->counters, ctl);
    if (!rc) rc = ks_cuda_memset(out->counters, 0, ctl);
    if (rc) {
        ks_cuda_sink_free(out);
        return rc;
    }
    out->capacity = capacity;
    out->limit = capacity;
    out->filter = filter;
    out->epoch = ks_next_epoch();
    return KS_OK;
}

/* queued on the default stream, before the next traced launch, without waiting for it;
 * the next launch's pages carry a new epoch, so the last launch's are not read as its */
extern "C" ks_status ks_cuda_sink_reset(ks_sink *dev)
{
    dev->epoch = ks_next_epoch();
    return ks_cuda_ok(cudaMemsetAsync(dev->counters, 0, KS_PAGE_CONTROL_WORDS * sizeof(unsigned long long), 0),
                      "cudaMemsetAsync");
}

/* The event slots a buffer needs to hold every page the launch claimed (ks_pages.h:
 * counters[0] counts the words asked for, stored or not). */
extern "C" ks_status ks_cuda_sink_claimed(const ks_sink *dev, unsigned long long *claimed)
{
    unsigned long long words = 0;
    ks_status rc = ks_cuda_download(&words, dev->counters, sizeof words);
    if (!rc) *claimed = (words + KS_PAGE_SLOT_WORDS - 1) / KS_PAGE_SLOT_WORDS;
    return rc;
}

/* The stored pages back into events (ks_pages_decode): a record that found no page and
 * an event past the host sink's limit are both counted as dropped. */
extern "C" ks_status ks_cuda_sink_download(const ks_sink *dev, ks_sink *host)
{
    /* counters[0..1] and the warp slots, whose last pages no lane reached (ks_pages.h) */
    unsigned long long *c = (unsigned long long *)malloc(KS_PAGE_CONTROL_WORDS * sizeof *c);
    unsigned long long *ahead = (unsigned long long *)malloc(KS_PAGE_WARP_SLOTS * sizeof *ahead);
    ks_status rc = c && ahead ? ks_cuda_download(c, dev->counters, KS_PAGE_CONTROL_WORDS * sizeof *c)
                              : ks_fail(KS_ENOMEM, "trace: no host memory for the GPU record pages' control words");
    if (rc) {
        free(c), free(ahead);
        return rc;
    }
    const size_t nahead = ks_pages_unreached(c + 2, ahead);
    const unsigned long long room = dev->capacity * KS_PAGE_SLOT_WORDS, words = c[0] < room ? c[0] : room;
    uint32_t *buf = NULL;
    if (words) {
        buf = (uint32_t *)malloc(words * sizeof(uint32_t));
        if (!buf) rc = ks_fail(KS_ENOMEM, "trace: no host memory for %llu words of GPU records", words);
        if (!rc) rc = ks_cuda_download(buf, dev->events, words * sizeof(uint32_t));
    }
    unsigned long long trimmed = 0;
    if (!rc) rc = ks_pages_decode(buf, c[0], dev, ahead, nahead, host, &trimmed);
    free(buf);
    if (!rc) host->counters[1] += c[1] + trimmed;
    free(c), free(ahead);
    return rc;
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
static void **group_ptrs = NULL; /* the grouped GEMM's device pointer arrays, kept */
static size_t group_cap = 0;

/* cuBLAS is loaded when a GEMM first needs it, not linked: a program that never runs one
 * (every simulator run, `kscope list`, the viewer) no longer maps its ~700 MB library at
 * start (kscope's resident memory at start was 227 MB, most of it cuBLAS). The names are
 * cublas_v2.h's, macros included (cublasCreate is cublasCreate_v2), so each pointer has
 * the header's exact type. */
#define KS_STR2(x) #x
#define KS_STR(x) KS_STR2(x)
#define KS_BLAS_FNS(X) \
    X(cublasCreate)    \
    X(cublasDestroy)   \
    X(cublasSetStream) X(cublasSetMathMode) X(cublasSgemm) X(cublasSgemmStridedBatched) X(cublasSgemmGroupedBatched)
#define KS_BLAS_PTR(f) static decltype(&f) p_##f = NULL;
KS_BLAS_FNS(KS_BLAS_PTR)

static ks_status blas_load(void)
{
    static int loaded = 0;
    static char why[160];
    if (loaded > 0) return KS_OK;
    if (loaded < 0) return ks_fail(KS_ECUDA, "%s", why);
    /* the toolkit's folder found at build time first, then the loader's search path */
    static const char *const names[] = {KS_CUBLAS_DIR "/libcublas.so." KS_STR(CUBLAS_VER_MAJOR),
                                        "libcublas.so." KS_STR(CUBLAS_VER_MAJOR), "libcublas.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; ++i) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, sizeof why, "cannot load cuBLAS (libcublas.so.%d): %s", (int)CUBLAS_VER_MAJOR, dlerror());
        loaded = -1;
        return ks_fail(KS_ECUDA, "%s", why);
    }
#define KS_BLAS_SYM(f)                                           \
    if (!(p_##f = (decltype(&f))dlsym(lib, KS_STR(f)))) {        \
        snprintf(why, sizeof why, "cuBLAS lacks %s", KS_STR(f)); \
        loaded = -1;                                             \
        return ks_fail(KS_ECUDA, "%s", why);                     \
    }
    KS_BLAS_FNS(KS_BLAS_SYM)
#undef KS_BLAS_SYM
    loaded = 1;
    return KS_OK;
}

static void blas_release(void)
{
    if (blas) p_cublasDestroy(blas);
    if (group_ptrs) cudaFree(group_ptrs);
    blas = NULL, group_ptrs = NULL, group_cap = 0;
}

static ks_status blas_ready(void *stream, int math)
{
    ks_status rc = blas_load();
    if (rc) return rc;
    if (!blas) {
        cublasStatus_t st = p_cublasCreate(&blas);
        if (st != CUBLAS_STATUS_SUCCESS) {
            blas = NULL;
            return ks_fail(KS_ECUDA, "cublasCreate failed (status %d)", (int)st);
        }
        atexit(blas_release);
    }
    cublasStatus_t st = p_cublasSetStream(blas, (cudaStream_t)stream);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = p_cublasSetMathMode(blas, math == KS_MATH_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return ks_fail(KS_ECUDA, "cuBLAS setup failed (status %d)", (int)st);
    return KS_OK;
}

extern "C" ks_status ks_cuda_sgemm_groups(void *stream, int ta, int tb, int groups, const int64_t *M, const int64_t *N,
                                          const int64_t *K, const float *const *A, int64_t lda, const float *const *B,
                                          int64_t ldb, float *const *C, int64_t ldc)
{
    if (groups <= 0) return KS_OK;
    if (lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX)
        return ks_fail(KS_EINVAL, "a GEMM dimension passes 2^31");
    ks_status rc = blas_ready(stream, KS_MATH_FP32);
    if (rc) return rc;
    /* host arrays per group (column-major: C^T = op(B)^T op(A)^T), device pointer arrays */
    const size_t g = (size_t)groups;
    cublasOperation_t *opa = (cublasOperation_t *)malloc(g * 2 * sizeof *opa);
    int *dims = (int *)malloc(g * 7 * sizeof *dims);
    float *scal = (float *)malloc(g * 2 * sizeof *scal);
    const void **host = (const void **)malloc(g * 3 * sizeof *host);
    void **dev = NULL;
    if (!opa || !dims || !scal || !host) rc = ks_fail(KS_ENOMEM, "out of memory for a grouped GEMM");
    for (size_t i = 0; !rc && i < g; ++i) {
        if (M[i] > INT32_MAX || N[i] > INT32_MAX || K[i] > INT32_MAX || M[i] < 1 || N[i] < 1 || K[i] < 1)
            rc = ks_fail(KS_EINVAL, "a grouped GEMM dimension is outside 1..2^31");
        opa[i] = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa[g + i] = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
        dims[i] = (int)N[i], dims[g + i] = (int)M[i], dims[2 * g + i] = (int)K[i];
        dims[3 * g + i] = (int)ldb, dims[4 * g + i] = (int)lda, dims[5 * g + i] = (int)ldc;
        dims[6 * g + i] = 1; /* one GEMM per group */
        scal[i] = 1.0f, scal[g + i] = 0.0f;
        host[i] = B[i], host[g + i] = A[i], host[2 * g + i] = C[i];
    }
    if (!rc && group_cap < g * 3) {
        if (group_ptrs) cudaFree(group_ptrs);
        group_ptrs = NULL, group_cap = 0;
        rc = ks_cuda_ok(cudaMalloc((void **)&group_ptrs, g * 3 * sizeof *group_ptrs), "cudaMalloc");
        if (!rc) group_cap = g * 3;
    }
    dev = group_ptrs;
    if (!rc)
        rc = ks_cuda_ok(cudaMemcpyAsync(dev, host, g * 3 * sizeof *dev, cudaMemcpyHostToDevice, (cudaStream_t)stream),
                        "cudaMemcpyAsync");
    if (!rc) {
        cublasStatus_t st = p_cublasSgemmGroupedBatched(
            blas, opa, opa + g, dims, dims + g, dims + 2 * g, scal, (const float *const *)dev, dims + 3 * g,
            (const float *const *)(dev + g), dims + 4 * g, scal + g, (float *const *)(dev + 2 * g), dims + 5 * g,
            groups, dims + 6 * g);
        if (st != CUBLAS_STATUS_SUCCESS)
            rc = ks_fail(KS_ECUDA, "cublasSgemmGroupedBatched failed (status %d)", (int)st);
    }
    free(opa), free(dims), free(scal), free(host);
    return rc;
}

extern "C" ks_status ks_cuda_sgemm(void *stream, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                                   int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    const float one = 1.0f;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX)
        return ks_fail(KS_EINVAL, "a GEMM dimension passes 2^31");
    ks_status rc = blas_ready(stream, KS_MATH_FP32);
    if (rc) return rc;
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
    cublasStatus_t st = p_cublasSgemm(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N,
                                      (int)M, (int)K, &one, B, (int)ldb, A, (int)lda, &beta, C, (int)ldc);
    if (st != CUBLAS_STATUS_SUCCESS) return ks_fail(KS_ECUDA, "cublasSgemm failed (status %d)", (int)st);
    return KS_OK;
}

extern "C" ks_status ks_cuda_sgemm_batched(void *stream, int math, int ta, int tb, int64_t M, int64_t N, int64_t K,
                                           const float *A, int64_t lda, int64_t sa, const float *B, int64_t ldb,
                                           int64_t sb, float beta, float *C, int64_t ldc, int64_t sc, int64_t batch)
{
    const float one = 1.0f;
    if (math != KS_MATH_FP32 && math != KS_MATH_TF32) return ks_fail(KS_EINVAL, "unknown GEMM math %d", math);
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX ||
        batch > INT32_MAX)
        return ks_fail(KS_EINVAL, "a GEMM dimension passes 2^31");
    if (batch < 1) return KS_OK;
    ks_status rc = blas_ready(stream, math);
    if (rc) return rc;
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
    cublasStatus_t st = p_cublasSgemmStridedBatched(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                    ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B,
                                                    (int)ldb, sb, A, (int)lda, sa, &beta, C, (int)ldc, sc, (int)batch);
    if (st != CUBLAS_STATUS_SUCCESS) return ks_fail(KS_ECUDA, "cublasSgemmStridedBatched failed (status %d)", (int)st);
    return KS_OK;
}
