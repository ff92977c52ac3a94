/* gemm_tiled_ref.c - the independent reference: c[i, j] = sum over k of a[i, k] * b[k, j]
 * from the definition, in double, no tiles. No code shared with the body. */
#include "gemm_tiled_body.h"

void ks_gemm_tiled_ref(const ks_gemm_tiled_args *a, const float *A, const float *B, double *c)
{
    for (int64_t i = 0; i < a->m; ++i)
        for (int64_t j = 0; j < a->n; ++j) {
            double s = 0.0;
            for (int64_t k = 0; k < a->k; ++k) s += (double)A[i * a->k + k] * (double)B[k * a->n + j];
            c[i * a->n + j] = s;
        }
}
