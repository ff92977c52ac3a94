/* deform_bias_body.h - the layer's three small kernels around its GEMMs, written once so the
 * simulator and the GPU run the same bodies (they were hand-written CUDA kernels with C
 * twins before): the bias add of the forward, and the backward's gather of grad_output and
 * row sums for grad_bias. Their rows (deform_layer.c) have no trace schema: no_trace.
 *
 *   add_bias:  out [S, O, P] += bias[o]                 one item per out element
 *   gather:    grad_out [S, O, P] -> buf [O, S, P]      one item per buf element
 *   row_sums:  grad_bias[o] += sum of buf[o, 0 .. n)    a block of 256 threads per row:
 *              thread q sums q, q + 256, ... in order, then a tree in shared memory
 * S is the chunk's im2col_step, P = Ho * Wo, n = S * P. */
#ifndef KS_DEFORM_BIAS_DECL
#define KS_DEFORM_BIAS_DECL
#include <stdint.h>

#include "../core/ks_core.h"

typedef struct ks_deform_bias_args {
    float *out;
    const float *bias;
    const float *grad_out;
    float *buf;
    float *grad_bias;
    int64_t O, S, P;
} ks_deform_bias_args;

#define KS_DEFORM_ROW_SUMS_THREADS 256 /* the tree's width: a power of two */
#endif                                 /* KS_DEFORM_BIAS_DECL */

#ifdef KS_VARIANT
#include "../core/ks_shared.h"

KS_FN void KS_VARIANT(ks_deform_add_bias_body)(ks_thread *t, const ks_deform_bias_args *a)
{
    const KS_IDX O = (KS_IDX)a->O, P = (KS_IDX)a->P, n = (KS_IDX)a->S * O * P;
    const KS_IDX stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (KS_IDX i = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x; i < n; i += stride)
        a->out[i] += a->bias[(i / P) % O];
}
KS_KERNEL(ks_deform_add_bias, ks_deform_bias_args)

KS_FN void KS_VARIANT(ks_deform_gather_grad_body)(ks_thread *t, const ks_deform_bias_args *a)
{
    const KS_IDX O = (KS_IDX)a->O, S = (KS_IDX)a->S, P = (KS_IDX)a->P, n = O * S * P;
    const KS_IDX stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (KS_IDX i = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x; i < n; i += stride) {
        const KS_IDX q = i % P, s = (i / P) % S, o = i / (P * S); /* i indexes buf [O, S, P] */
        a->buf[i] = a->grad_out[(s * O + o) * P + q];
    }
}
KS_KERNEL(ks_deform_gather_grad, ks_deform_bias_args)

/* blocks walk the rows (every thread of a block takes the same rows: the barriers are met
 * by all); blockDim is KS_DEFORM_ROW_SUMS_THREADS */
KS_FN void KS_VARIANT(ks_deform_row_sums_body)(ks_thread *t, const ks_deform_bias_args *a)
{
    KS_SHARED(float, part, KS_DEFORM_ROW_SUMS_THREADS);
    const KS_IDX n = (KS_IDX)a->S * (KS_IDX)a->P, T = (KS_IDX)t->block_dim.x, q = (KS_IDX)t->thread_idx.x;
    for (KS_IDX o = (KS_IDX)t->block_idx.x; o < (KS_IDX)a->O; o += (KS_IDX)t->grid_dim.x) {
        const float *row = a->buf + o * n;
        float s = 0.0f;
        for (KS_IDX k = q; k < n; k += T) s += row[k];
        ks_shared_store(t, part, q, s);
        ks_syncthreads(t);
        for (KS_IDX w = T / 2; w > 0; w /= 2) {
            if (q < w) {
                const float x = ks_shared_load(t, part, q), y = ks_shared_load(t, part, q + w);
                ks_shared_store(t, part, q, x + y);
            }
            ks_syncthreads(t);
        }
        if (q == 0) a->grad_bias[o] += ks_shared_load(t, part, 0);
        ks_syncthreads(t); /* part is read before the next row overwrites it */
    }
}
KS_KERNEL_ATTR(ks_deform_row_sums, ks_deform_bias_args, __launch_bounds__(KS_DEFORM_ROW_SUMS_THREADS),
               __launch_bounds__(KS_DEFORM_ROW_SUMS_THREADS))
#endif
