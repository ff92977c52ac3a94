/* ks_cuda_nocuda.c - ks_cuda_api.h for a build without nvcc: no devices, clear errors. */
#include "ks_cuda_api.h"
#include "ks_cuda_int.h"
#include "ks_error.h"

#define NO_CUDA ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)")

int ks_cuda_device_count(void) { return 0; }
ks_status ks_cuda_device_name(char *buf, size_t n)
{
    (void)buf, (void)n;
    return NO_CUDA;
}
ks_status ks_cuda_shared_optin_bytes(int64_t *bytes)
{
    *bytes = 0;
    return NO_CUDA;
}
ks_status ks_cuda_scratch_get(size_t bytes, void *stream, void **p, int *token)
{
    (void)bytes, (void)stream;
    *p = 0, *token = -1;
    return NO_CUDA;
}
ks_status ks_cuda_scratch_done(int token, void *stream)
{
    (void)token, (void)stream;
    return NO_CUDA;
}
ks_status ks_cuda_malloc(void **p, size_t bytes)
{
    *p = 0;
    (void)bytes;
    return NO_CUDA;
}
void ks_cuda_free(void *p) { (void)p; }
ks_status ks_cuda_upload(void *d, const void *s, size_t b)
{
    (void)d, (void)s, (void)b;
    return NO_CUDA;
}
ks_status ks_cuda_download(void *d, const void *s, size_t b)
{
    (void)d, (void)s, (void)b;
    return NO_CUDA;
}
ks_status ks_cuda_memset(void *d, int v, size_t b)
{
    (void)d, (void)v, (void)b;
    return NO_CUDA;
}
ks_status ks_cuda_memset_async(void *d, int v, size_t b, void *s)
{
    (void)d, (void)v, (void)b, (void)s;
    return NO_CUDA;
}
ks_status ks_cuda_copy_async(void *d, const void *src, size_t b, void *s)
{
    (void)d, (void)src, (void)b, (void)s;
    return NO_CUDA;
}
ks_status ks_cuda_sync(void) { return NO_CUDA; }
ks_status ks_cuda_sink_create(ks_sink *o, unsigned long long c, ks_filter f)
{
    (void)o, (void)c, (void)f;
    return NO_CUDA;
}
ks_status ks_cuda_sink_reset(ks_sink *d)
{
    (void)d;
    return NO_CUDA;
}
ks_status ks_cuda_sink_claimed(const ks_sink *d, unsigned long long *c)
{
    (void)d, (void)c;
    return NO_CUDA;
}
ks_status ks_cuda_sink_download(const ks_sink *d, ks_sink *h)
{
    (void)d, (void)h;
    return NO_CUDA;
}
void ks_cuda_sink_free(ks_sink *d) { (void)d; }
ks_status ks_cuda_sgemm(void *s, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                        const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    (void)s, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    return NO_CUDA;
}
ks_status ks_cuda_sgemm_batched(void *s, int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                                int64_t lda, int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C,
                                int64_t ldc, int64_t sc, int64_t batch)
{
    (void)s, (void)math, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)sa, (void)B,
        (void)ldb, (void)sb, (void)beta, (void)C, (void)ldc, (void)sc, (void)batch;
    return NO_CUDA;
}
ks_status ks_cuda_sgemm_groups(void *s, int ta, int tb, int g, const int64_t *M, const int64_t *N, const int64_t *K,
                               const float *const *A, int64_t lda, const float *const *B, int64_t ldb, float *const *C,
                               int64_t ldc)
{
    (void)s, (void)ta, (void)tb, (void)g, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)C,
        (void)ldc;
    return NO_CUDA;
}
