#include "ks_gemm.h"

#include "ks_error.h"

#include <stdlib.h>
#include <string.h>

enum { TILE_N = 256, TILE_K = 64 };

int ks_sgemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
             float beta, float *C, int64_t ldc)
{
    if (ta && tb) return ks_fail(KS_EINVAL, "ks_sgemm: A and B both transposed is not supported");
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    if (tb) {
        /* B^T: C[i, j] += dot(row i of A, row j of B), both contiguous in k */
        for (int64_t i = 0; i < M; ++i) {
            const float *a = A + i * lda;
            for (int64_t j = 0; j < N; ++j) {
                const float *b = B + j * ldb;
                float s = 0.0f;
                for (int64_t k = 0; k < K; ++k) s += a[k] * b[k];
                C[i * ldc + j] += s;
            }
        }
        return KS_OK;
    }
    /* C[i, j0:j1] += a(i, k) * B[k, j0:j1], over tiles of j and k */
    for (int64_t j0 = 0; j0 < N; j0 += TILE_N) {
        const int64_t j1 = j0 + TILE_N < N ? j0 + TILE_N : N;
        for (int64_t k0 = 0; k0 < K; k0 += TILE_K) {
            const int64_t k1 = k0 + TILE_K < K ? k0 + TILE_K : K;
            for (int64_t i = 0; i < M; ++i) {
                float *c = C + i * ldc;
                for (int64_t k = k0; k < k1; ++k) {
                    const float a = ta ? A[k * lda + i] : A[i * lda + k];
                    const float *b = B + k * ldb;
                    for (int64_t j = j0; j < j1; ++j) c[j] += a * b[j];
                }
            }
        }
    }
    return KS_OK;
}

float ks_round_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) == 0x7F800000u) return x; /* inf, NaN */
    u = (u + 0x1000u) & ~0x1FFFu;                   /* half of the 13 dropped bits, then drop them */
    memcpy(&x, &u, sizeof x);
    return x;
}

/* a rows x cols copy (leading dimension cols) of a matrix with leading dimension ld,
 * rounded to TF32 */
static float *rounded(const float *a, int64_t rows, int64_t cols, int64_t ld)
{
    float *r = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *r);
    if (!r) return NULL;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) r[i * cols + j] = ks_round_tf32(a[i * ld + j]);
    return r;
}

int ks_sgemm_math(int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    if (math == KS_MATH_FP32) return ks_sgemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    if (math != KS_MATH_TF32) return ks_fail(KS_EINVAL, "unknown GEMM math %d", math);
    /* only the operands' used parts, packed: a slice of a wide matrix costs its size */
    const int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
    float *a = rounded(A, ar, ac, lda), *b = rounded(B, br, bc, ldb);
    int rc = a && b ? ks_sgemm(ta, tb, M, N, K, a, ac, b, bc, beta, C, ldc)
                    : (int)ks_fail(KS_ENOMEM, "no memory for a TF32 GEMM's operands");
    free(a), free(b);
    return rc;
}
