/* conv2d_sim.c - the conv2d GEMM step on the CPU grid simulator (plain and traced). */
#include "../core/ks_error.h"
#include "../core/ks_sim.h"

#define KS_BODY "../conv2d/conv2d_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h" /* -> each body as NAME_plain and NAME_traced */

static void gemm_plain(ks_thread *t, const void *a) { ks_conv_gemm_body_plain(t, a); }
static void gemm_traced(ks_thread *t, const void *a) { ks_conv_gemm_body_traced(t, a); }

int ks_conv_gemm_launch_sim(const ks_conv_gemm_args *a, const ks_launch *l, ks_sink *sink)
{
    int threads;
    int64_t blocks;
    int rc = ks_launch_resolve(l, KS_CONV_GEMM_THREADS, KS_CONV_GEMM_BLOCK_CAP,
                               a->batch * a->out_channels * a->height_col * a->width_col, &threads, &blocks);
    if (rc) return rc;
    ks_sim_launch(blocks, threads, sink ? gemm_traced : gemm_plain, a, sink);
    return KS_OK;
}

int ks_conv_gemm_sim(const ks_conv2d_params *p, const float *weight, const float *columns,
                     float *output, const ks_launch *launch, ks_sink *sink)
{
    ks_conv_gemm_args a;
    ks_conv2d_geom g;
    int rc = ks_conv_gemm_args_make(p, weight, columns, output, &a, &g);
    return rc ? rc : ks_conv_gemm_launch_sim(&a, launch, sink);
}
