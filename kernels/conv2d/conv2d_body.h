/* conv2d_body.h - the GEMM step of convolution as im2col + GEMM, written once (see
 * im2col_body.h for how the variants are made).
 *
 * One work item per output element (n, o, h_out, w_out), w_out fastest:
 *   output[n, o, h_out, w_out] = sum_k weight[o, k] * columns[n, k, h_out*Wo + w_out]
 * Neighbouring threads read neighbouring columns entries (coalesced) and the same weight
 * (a broadcast). Row k of the columns matrix is tap (i, j) of channel c, k = (c*kh+i)*kw+j.
 */
#ifndef KS_IDX
#error "define KS_IDX before including conv2d_body.h"
#endif
#include <math.h>

#include "../core/ks_probe.h"
#include "conv2d_args.h"

KS_FN void KS_VARIANT(ks_conv_gemm_body)(ks_thread *t, const ks_conv_gemm_args *a)
{
    const KS_IDX O = (KS_IDX)a->out_channels, K = (KS_IDX)a->rows;
    const KS_IDX Ho = (KS_IDX)a->height_col, Wo = (KS_IDX)a->width_col, P = Ho * Wo;
    const KS_IDX n_work = (KS_IDX)a->batch * O * P;
    const KS_IDX taps = (KS_IDX)a->kernel_h * (KS_IDX)a->kernel_w;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX p = index % P; /* h_out * Wo + w_out: the column of the columns matrix */
        const KS_IDX o = (index / P) % O;
        const KS_IDX n = index / (P * O);
        KS_PROBE(ks_probe_work(t, KS_CONV_SITE_WORK, index, iter, n, o, p / Wo, p % Wo, 0, 0,
                               0, 0));
        const float *w = a->weight + o * K;
        const float *col = a->columns + n * K * P + p;
        float acc = 0.0f;
        for (KS_IDX k = 0; k < K; ++k) {
            const float wv = w[k], cv = col[k * P];
            acc = fmaf(wv, cv, acc); /* one rounding, the same on the GPU and the CPU */
            /* weight[o, c, i, j]: plane o*C + c, row i, column j */
            KS_PROBE(ks_probe_read(t, KS_CONV_SITE_READ_W, KS_CONV_T_WEIGHT, (int)k, o * K + k,
                                   o * (KS_IDX)a->channels + k / taps,
                                   (k % taps) / (KS_IDX)a->kernel_w, k % (KS_IDX)a->kernel_w, wv));
            KS_PROBE(ks_probe_read(t, KS_CONV_SITE_READ_COL, KS_CONV_T_COLUMNS, (int)k,
                                   (n * K + k) * P + p, n, k, p, cv));
        }
        a->output[index] = acc;
        KS_PROBE(ks_probe_write(t, KS_CONV_SITE_WRITE, KS_CONV_T_OUTPUT, 0, index, n * O + o,
                                p / Wo, p % Wo, acc, 0));
    }
}
