/* twins.h - the one-body rule's test, for every operator without naming any: each
 * plain_only kernel row (a fast body that is never traced) runs under its row's runs_with
 * settings, plain, and again with every plain_only row yielding to its twin (ks_run.twins);
 * the row must have run the first time, no plain_only row the second, and the outputs
 * agree: integer outputs bitwise; float ones within 1e-5 relative (a fast body may sum the
 * same products in another order: RoIAlign's merged bins), or, where the row states a
 * tolerance (ks_kernel.tolerance: deform's TF32 fused forward, its operands rounded to
 * 10 mantissa bits unlike its twin's GEMM), within that fraction of the tensor's largest
 * |value|. test_ops runs it on the simulator (the rows with a simulator entry point; the
 * CUDA-only ones are named as skipped, with why), test_gpu_each_op on CUDA (every row). */
#ifndef KS_TEST_TWINS_H
#define KS_TEST_TWINS_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"

/* r: defaults, a random pattern, then the row's "name=value ..." settings */
static void twins_setup(ks_run *r, const ks_op *op, int device, const char *runs_with, int twins)
{
    ks_run_init(r, op);
    r->device = device, r->pattern = KS_PAT_RANDOM, r->seed = 41, r->twins = twins;
    for (const char *w = runs_with; w && *w;) {
        char name[64], value[64];
        const size_t n = strcspn(w, " "), eq = strcspn(w, "=");
        ck_assert_msg(eq < n && eq < sizeof name && n - eq - 1 < sizeof value, "%s: runs_with '%s' is not name=value",
                      op->name, runs_with);
        snprintf(name, sizeof name, "%.*s", (int)eq, w);
        snprintf(value, sizeof value, "%.*s", (int)(n - eq - 1), w + eq + 1);
        ck_assert_msg(ks_run_set(r, name, value) == KS_OK, "%s: runs_with %s: %s", op->name, runs_with,
                      ks_error_message());
        w += n + (w[n] == ' ');
    }
}

/* the largest |v| of n floats */
static float twins_largest(const float *v, int64_t n)
{
    float m = 0;
    for (int64_t e = 0; e < n; ++e)
        if (fabsf(v[e]) > m) m = fabsf(v[e]);
    return m;
}

/* the plain_only rows of op that run on `device`; returns how many were compared */
static int twins_check(const ks_op *op, int device)
{
    static ks_run R[2];
    uint64_t plain_only = 0;
    int compared = 0;
    for (int k = 0; k < op->nkernels && k < 64; ++k)
        if (op->kernels[k].plain_only) plain_only |= (uint64_t)1 << k;
    for (int k = 0; k < op->nkernels && k < 64; ++k) {
        const ks_kernel *row = &op->kernels[k];
        if (!row->plain_only) continue;
        if (!(device == KS_DEV_CUDA ? row->cuda != NULL : row->sim_plain != NULL)) {
            printf("  %-12s %-22s skipped on the %s: it has no entry point there (%s); %s\n", op->name, row->name,
                   device == KS_DEV_CUDA ? "GPU" : "simulator",
                   device == KS_DEV_CUDA ? "a build without nvcc" : "a CUDA-only body",
                   device == KS_DEV_CUDA ? "test_ops compares it" : "test_gpu_each_op compares it with its twin");
            continue;
        }
        for (int t = 0; t < 2; ++t) {
            twins_setup(&R[t], op, device, row->runs_with, t);
            ck_assert_msg(ks_run_execute(&R[t]) == KS_OK, "%s %s (%s%s): %s", op->name, row->name,
                          row->runs_with ? row->runs_with : "defaults", t ? ", twins" : "", ks_error_message());
        }
        ck_assert_msg(R[0].rows_ran >> k & 1, "%s: kernel %s did not run with its runs_with (%s)", op->name, row->name,
                      row->runs_with ? row->runs_with : "defaults");
        ck_assert_msg(!(R[1].rows_ran & plain_only), "%s: a plain_only row ran with twins asked for (%s)", op->name,
                      row->name);
        double worst = 0; /* the largest difference, as a fraction of its tensor's largest |value| */
        for (int i = 0; i < op->ntensors; ++i) {
            if (R[0].absent[i] || !op->tensors[i].output) continue;
            const ks_tensor *a = &R[0].tensor[i], *b = &R[1].tensor[i];
            const int64_t n = ks_tensor_numel(a);
            if (a->dtype != KS_F32) {
                ck_assert_msg(!memcmp(a->data, b->data, (size_t)n * ks_dtype_size(a->dtype)), "%s %s: %s differs",
                              op->name, row->name, a->name);
                continue;
            }
            const float *x = a->data, *y = b->data, big = twins_largest(y, n);
            for (int64_t e = 0; e < n; ++e) {
                const float d = fabsf(x[e] - y[e]);
                if (big > 0 && d / big > worst) worst = d / big;
                ck_assert_msg(
                    x[e] == y[e] || (isnan(x[e]) && isnan(y[e])) ||
                        (row->tolerance > 0 ? d <= (float)row->tolerance * big : d <= 1e-5f * (1 + fabsf(y[e]))),
                    "%s: %s[%lld] %g with %s, %g with its twin %s (tolerance %g%s)", op->name, a->name, (long long)e,
                    x[e], row->name, y[e], row->twin, row->tolerance > 0 ? row->tolerance : 1e-5,
                    row->tolerance > 0 ? " of the largest |value|" : " relative");
            }
        }
        printf("  %-12s %-22s = %s (%s): largest difference %.2g of the largest |value|\n", op->name, row->name,
               row->twin, row->runs_with ? row->runs_with : "defaults", worst);
        ks_run_free(&R[0]);
        ks_run_free(&R[1]);
        compared++;
    }
    return compared;
}

#endif
