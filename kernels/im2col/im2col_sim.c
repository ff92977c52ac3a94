/* im2col_sim.c - im2col/col2im on the CPU grid simulator: the body of im2col_body.h
 * compiled twice, plain and traced, with 64-bit indices. */
#include "../core/ks_error.h"
#include "../core/ks_sim.h"

#define KS_BODY "../im2col/im2col_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h" /* -> each body as NAME_plain and NAME_traced */

static void im2col_plain(ks_thread *t, const void *a) { ks_im2col_body_plain(t, a); }
static void im2col_traced(ks_thread *t, const void *a) { ks_im2col_body_traced(t, a); }
static void col2im_plain(ks_thread *t, const void *a) { ks_col2im_body_plain(t, a); }
static void col2im_traced(ks_thread *t, const void *a) { ks_col2im_body_traced(t, a); }
static void scatter_plain(ks_thread *t, const void *a) { ks_col2im_scatter_body_plain(t, a); }
static void scatter_traced(ks_thread *t, const void *a) { ks_col2im_scatter_body_traced(t, a); }

int ks_im2col_launch_sim(const ks_im2col_args *a, int col2im, const ks_launch *l, ks_sink *sink)
{
    const int64_t planes = a->batch * a->channels;
    const int64_t cols = planes * a->height_col * a->width_col;
    const int64_t work = col2im == KS_COL2IM_SCATTER ? cols * a->kernel_h * a->kernel_w
                         : col2im                    ? planes * a->height * a->width
                                                     : cols;
    int threads;
    int64_t blocks;
    int rc = ks_launch_resolve(l, KS_IM2COL_THREADS, KS_IM2COL_BLOCK_CAP, work, &threads, &blocks);
    if (rc) return rc;
    ks_sim_body body = col2im == KS_COL2IM_SCATTER ? (sink ? scatter_traced : scatter_plain)
                       : col2im                    ? (sink ? col2im_traced : col2im_plain)
                                                   : (sink ? im2col_traced : im2col_plain);
    ks_sim_launch(blocks, threads, body, a, sink);
    return KS_OK;
}

int ks_im2col_sim(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                  ks_sink *sink)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int rc = ks_im2col_args_make(p, input, columns, &a, &g);
    return rc ? rc : ks_im2col_launch_sim(&a, 0, launch, sink);
}

int ks_col2im_sim(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                  ks_sink *sink)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int rc = ks_im2col_args_make(p, columns, output, &a, &g);
    return rc ? rc : ks_im2col_launch_sim(&a, 1, launch, sink);
}
