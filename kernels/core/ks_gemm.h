/* ks_gemm.h - a small, clear single-precision GEMM for the CPU (row-major):
 *   C[M, N] = beta * C + op(A) * op(B)
 * op(A) is A [M, K] (lda >= K) or, with ta, the transpose of A stored [K, M] (lda >= M);
 * op(B) is B [K, N] (ldb >= N) or, with tb, the transpose of B stored [N, K] (ldb >= K).
 * ta and tb together are not supported (KS_EINVAL). Blocked so that a tile of C and of B
 * stays in cache; each C entry is summed over k in ascending order. */
#ifndef KS_GEMM_H
#define KS_GEMM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int ks_sgemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
             const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
