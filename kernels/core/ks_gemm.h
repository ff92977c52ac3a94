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

/* The arithmetic of a GEMM: plain fp32, or TF32 inputs (10-bit mantissa, as the tensor
 * cores take them) with fp32 sums. */
enum { KS_MATH_FP32 = 0, KS_MATH_TF32 = 1 };

/* x rounded to TF32: the nearest value with a 10-bit mantissa, ties away from zero (as
 * cvt.rna.tf32.f32); infinities and NaN unchanged. */
float ks_round_tf32(float x);

int ks_sgemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
             float beta, float *C, int64_t ldc);
/* ks_sgemm in `math`: with KS_MATH_TF32 on copies of A and B rounded by ks_round_tf32 (an
 * emulation of the tensor cores' inputs; their sum order differs, so not bitwise). */
int ks_sgemm_math(int math, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                  const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
