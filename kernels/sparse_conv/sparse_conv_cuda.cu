/* sparse_conv_cuda.cu - sparse convolution on the GPU: the bodies of sparse_conv_body.h in
 * every variant, their kernel lines as kernels, and the device's own steps for
 * ks_sparse_run: cudaMalloc'd workspace, CUB radix sort / unique / scan, cuBLAS SGEMM. */
#include <cub/cub.cuh>

#include "../core/ks_cuda.h"
#include "../core/ks_cuda_api.h"

#define KS_BODY "../sparse_conv/sparse_conv_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

/* -> each KS_KERNEL line of the body as kernels and ks_sparse_X_cuda_row, their one launch
 * (the rows of sparse_conv_plan.c, which the plan runs through its sequence) */

/* ---- the device's steps ---------------------------------------------------------- */

typedef struct cu_ctx {
    cudaEvent_t marks[4]; /* a profiled forward's marks, else NULL */
} cu_ctx;

/* Device memory for the run's buffers comes from a small cache: a released block is kept
 * (size classes of powers of two from 256 bytes) and handed out again, so a layer called
 * in a loop gets its memory from the driver once - cudaMalloc and cudaFree cost tens of
 * microseconds, and cudaFree waits for the device. Emptied at exit (after the CUDA
 * runtime started, so before its teardown). One thread at a time, like the tools. */
enum { CACHE_CLASSES = 40, CACHE_DEPTH = 8, CACHE_LIVE = 256 };
static void *cache_block[CACHE_CLASSES][CACHE_DEPTH];
static int cache_count[CACHE_CLASSES];
static struct {
    void *p;
    int cls;
} cache_live[CACHE_LIVE];
static int cache_hooked;

static void cache_empty(void)
{
    for (int c = 0; c < CACHE_CLASSES; ++c)
        while (cache_count[c]) ks_cuda_free(cache_block[c][--cache_count[c]]);
}

static int cu_alloc(void *, void **p, size_t bytes)
{
    int c = 0;
    while (c < CACHE_CLASSES && ((size_t)256 << c) < bytes) ++c;
    int slot = 0;
    while (slot < CACHE_LIVE && cache_live[slot].p) ++slot;
    if (c == CACHE_CLASSES || slot == CACHE_LIVE) return ks_cuda_malloc(p, bytes ? bytes : 1); /* not cached */
    if (cache_count[c]) *p = cache_block[c][--cache_count[c]];
    else {
        int rc = ks_cuda_malloc(p, (size_t)256 << c);
        if (rc) {
            cache_empty(); /* the cache may hold what the driver lacks: give it back, retry */
            if ((rc = ks_cuda_malloc(p, (size_t)256 << c))) return rc;
        }
        if (!cache_hooked) cache_hooked = !atexit(cache_empty);
    }
    cache_live[slot].p = *p, cache_live[slot].cls = c;
    return KS_OK;
}

static void cu_release(void *, void *p)
{
    int slot = 0;
    while (slot < CACHE_LIVE && cache_live[slot].p != p) ++slot;
    if (slot == CACHE_LIVE) { /* not from the cache */
        ks_cuda_free(p);
        return;
    }
    const int c = cache_live[slot].cls;
    cache_live[slot].p = NULL;
    if (cache_count[c] < CACHE_DEPTH) cache_block[c][cache_count[c]++] = p;
    else ks_cuda_free(p);
}
static int cu_fill(void *, void *p, int byte, size_t bytes)
{
    return bytes ? ks_cuda_ok(cudaMemsetAsync(p, byte, bytes, 0), "cudaMemsetAsync") : KS_OK;
}
static int cu_copy(void *, void *dst, const void *src, size_t bytes)
{
    return bytes ? ks_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync") : KS_OK;
}
static int cu_to_host(void *, void *dst, const void *src, size_t bytes)
{
    return bytes ? ks_cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy") : KS_OK;
}

/* Sorted as unsigned on the bits below `bound` only, the -1s (no output site: all bits
 * set) go last; unique then drops repeats, and a last -1 is not counted. */
static int cu_sort_unique(void *, int64_t *keys, int64_t n, int64_t bound, int64_t *kept)
{
    int bits = 1;
    while (bits < 64 && ((uint64_t)1 << bits) <= (uint64_t)bound) ++bits; /* bound < 2^bits: -1 ranks last */
    *kept = 0;
    if (n == 0) return KS_OK;
    if (n > INT32_MAX) return ks_fail(KS_EINVAL, "sparse_conv: too many candidates to sort");
    unsigned long long *u = (unsigned long long *)keys, *sorted = NULL;
    void *tmp = NULL;
    int *count = NULL;
    size_t b1 = 0, b2 = 0;
    int rc = ks_cuda_ok(cub::DeviceRadixSort::SortKeys(NULL, b1, u, u, (int)n, 0, bits), "cub sort (size)");
    if (!rc) rc = ks_cuda_ok(cub::DeviceSelect::Unique(NULL, b2, u, u, (int *)NULL, (int)n), "cub unique (size)");
    if (!rc) rc = cu_alloc(NULL, &tmp, (b1 > b2 ? b1 : b2) + 1);
    if (!rc) rc = cu_alloc(NULL, (void **)&sorted, (size_t)n * 8);
    if (!rc) rc = cu_alloc(NULL, (void **)&count, sizeof(int));
    if (!rc) rc = ks_cuda_ok(cub::DeviceRadixSort::SortKeys(tmp, b1, u, sorted, (int)n, 0, bits), "cub sort");
    if (!rc) rc = ks_cuda_ok(cub::DeviceSelect::Unique(tmp, b2, sorted, u, count, (int)n), "cub unique");
    int selected = 0;
    long long last = 0;
    if (!rc) rc = ks_cuda_download(&selected, count, sizeof selected);
    if (!rc && selected > 0) rc = ks_cuda_download(&last, keys + selected - 1, sizeof last);
    if (!rc) *kept = selected - (selected > 0 && last == -1);
    if (tmp) cu_release(NULL, tmp);
    if (sorted) cu_release(NULL, sorted);
    if (count) cu_release(NULL, count);
    return rc;
}

static int cu_scan(void *, const int32_t *flags, int32_t *pos, int64_t n)
{
    if (n == 0) return KS_OK;
    if (n > INT32_MAX) return ks_fail(KS_EINVAL, "sparse_conv: too many (offset, site) items to scan");
    void *tmp = NULL;
    size_t bytes = 0;
    int rc = ks_cuda_ok(cub::DeviceScan::ExclusiveSum(NULL, bytes, flags, pos, (int)n), "cub scan (size)");
    if (!rc) rc = cu_alloc(NULL, &tmp, bytes + 1);
    if (!rc) rc = ks_cuda_ok(cub::DeviceScan::ExclusiveSum(tmp, bytes, flags, pos, (int)n), "cub scan");
    if (tmp) cu_release(NULL, tmp);
    return rc;
}

static int cu_gemm(void *, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                   int64_t ldb, float *C, int64_t ldc)
{
    return ks_cuda_sgemm(NULL, ta, tb, M, N, K, A, lda, B, ldb, 0.0f, C, ldc);
}

static int cu_gemm_groups(void *, int ta, int tb, int groups, const int64_t *M, const int64_t *N, const int64_t *K,
                          const float *const *A, int64_t lda, const float *const *B, int64_t ldb, float *const *C,
                          int64_t ldc)
{
    return ks_cuda_sgemm_groups(NULL, ta, tb, groups, M, N, K, A, lda, B, ldb, C, ldc);
}

static void cu_mark(void *ctx, int at)
{
    cu_ctx *x = (cu_ctx *)ctx;
    if (x->marks[at]) cudaEventRecord(x->marks[at], 0);
}

static const ks_sparse_backend cuda_backend = {
    cu_alloc, cu_release, cu_fill, cu_copy, cu_to_host, cu_sort_unique, cu_scan, cu_gemm, cu_gemm_groups, cu_mark,
};

extern "C" int ks_sparse_run_cuda(ks_exec *x, const ks_sparse_geom *g, const ks_sparse_buffers *t, int backward)
{
    cu_ctx c = {{NULL, NULL, NULL, NULL}};
    return ks_sparse_run(&cuda_backend, &c, x, g, t, backward);
}

/* ---- the C API (benchmarks, ctypes) ----------------------------------------------- */

/* a plan, the backend state and the sequence (the rows at their reference launches,
 * nothing traced) it points to, in one allocation */
typedef struct cu_plan {
    ks_sparse_plan pl; /* first: a ks_sparse_plan * is a cu_plan * */
    cu_ctx c;
    ks_exec x;
} cu_plan;

extern "C" int ks_sparse_cuda_plan(const ks_sparse_geom *g, const int32_t *indices, ks_sparse_plan **out)
{
    cu_plan *p = (cu_plan *)calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return ks_fail(KS_ENOMEM, "sparse_conv: out of memory");
    p->x = ks_exec_make(ks_sparse_rows, KS_SPK_COUNT, KS_DEV_CUDA, NULL);
    ks_sparse_buffers t;
    memset(&t, 0, sizeof t);
    t.indices = indices;
    int rc = ks_sparse_plan_build(&p->pl, &cuda_backend, &p->c, &p->x, g, &t);
    if (rc) {
        ks_sparse_plan_release(&p->pl);
        free(p);
        return rc;
    }
    *out = &p->pl;
    return KS_OK;
}

extern "C" int ks_sparse_cuda_forward(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                                      float *out)
{
    ks_sparse_buffers t;
    memset(&t, 0, sizeof t);
    t.features = features, t.weight = weight, t.bias = bias, t.out_features = out;
    return ks_sparse_plan_forward(pl, &t);
}

extern "C" int ks_sparse_cuda_backward(ks_sparse_plan *pl, const float *grad_out, float *grad_features,
                                       float *grad_weight, float *grad_bias)
{
    ks_sparse_buffers t;
    memset(&t, 0, sizeof t);
    t.grad_out = grad_out, t.grad_features = grad_features, t.grad_weight = grad_weight, t.grad_bias = grad_bias;
    return ks_sparse_plan_backward(pl, &t);
}

extern "C" int ks_sparse_cuda_profile(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                                      float *out, float *ms)
{
    cu_ctx *x = &((cu_plan *)pl)->c;
    int rc = KS_OK;
    for (int i = 0; i < 4 && !rc; ++i) rc = ks_cuda_ok(cudaEventCreate(&x->marks[i]), "cudaEventCreate");
    if (!rc) rc = ks_sparse_cuda_forward(pl, features, weight, bias, out);
    if (!rc) rc = ks_cuda_ok(cudaEventSynchronize(x->marks[3]), "cudaEventSynchronize");
    for (int i = 0; i < 3 && !rc; ++i)
        rc = ks_cuda_ok(cudaEventElapsedTime(&ms[i], x->marks[i], x->marks[i + 1]), "cudaEventElapsedTime");
    for (int i = 0; i < 4; ++i) {
        if (x->marks[i]) cudaEventDestroy(x->marks[i]);
        x->marks[i] = NULL;
    }
    return rc;
}

extern "C" void ks_sparse_cuda_plan_free(ks_sparse_plan *pl)
{
    if (!pl) return;
    ks_sparse_plan_release(pl);
    free((cu_plan *)pl);
}
