/* deform_kernels.c - the deformable kernels' rows (each body's KS_KERNEL line) and the one
 * launcher every path runs them through, on the simulator or the GPU: the registry sizes the
 * launch (grad_tile and grad_gather size their own tiles), picks 32-bit indices when every
 * tensor and index fits, plain or traced, and checks the launch. */
#include <stdio.h>

#include "../core/ks_error.h"
#include "deform_body.h"

#define KS_BODY "../deform_conv/deform_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"

#define ROW(fn, word, threads_, what, ...) \
    KS_KERNEL_ROW(fn, word, .threads = (threads_), .block_cap = KS_DEFORM_BLOCK_CAP, .help = what, __VA_ARGS__)
#define T KS_DEFORM_THREADS
/* indexed by ks_deform_kernel (the operators list the first three: the ones they trace) */
const ks_kernel ks_deform_rows[KS_DEFORM_NROWS] = {
    [KS_DEFORM_IM2COL] = ROW(ks_deform_im2col, "im2col", T,
                             "one (c, h_col, w_col) per item: its taps' bilinear samples"),
    [KS_DEFORM_COL2IM] = ROW(ks_deform_col2im, "col2im", T, "one columns entry per item: its 4 corners, atomically"),
    [KS_DEFORM_COORD] = ROW(ks_deform_coord, "coord", T, "one offset (and mask) gradient per item"),
    [KS_DEFORM_IM2COL_TAP] = ROW(ks_deform_im2col_tap, "im2col_tap", KS_DEFORM_TAP_THREADS,
                                 "one tap per item, channels looped"),
    [KS_DEFORM_GRAD_TAP] = ROW(ks_deform_grad_tap, "grad_tap", KS_DEFORM_TAP_THREADS,
                               "one tap per item: col2im and coord in one pass"),
    [KS_DEFORM_GRAD_TILE] = ROW(ks_deform_grad_tile, "grad_tile", T, "grad_tap with a shared window per tile",
                                .coop = 1),
    [KS_DEFORM_GRAD_GATHER] = ROW(ks_deform_grad_gather, "grad_gather", T,
                                  "grad_tap with per-pixel sums in shared memory", .coop = 1),
    /* the layer's TF32 forward of a chunk in one kernel (deform_fused.cu): CUDA only, opt-in
     * (KS_DEFORM_FUSED); its entry point sizes its own 3-D grid, so its launch is fixed */
    [KS_DEFORM_ROW_FUSED] = {.name = "fused_tf32",
                             .body = "ks_deform_fused_k",
                             .cuda = KS_KERNEL_CUDA_FN(ks_deform_fused_cuda_row),
                             .threads = 256,
                             .block_cap = 1,
                             .fixed = 1,
                             .plain_only = 1,
                             .twin = "im2col",
                             .help = "im2col + the GEMM + bias of a chunk in one kernel (TF32 mma.sync)"},
};
#undef T
_Static_assert(sizeof ks_deform_rows / sizeof ks_deform_rows[0] == KS_DEFORM_NROWS,
               "a row per ks_deform_kernel, then the fused forward");

static int launch(int device, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                  const ks_deform_chunk *c, const ks_launch *l, ks_sink *sink, void *stream)
{
    ks_deform_args a;
    ks_deform_args_fill(p, g, c, &a);
    ks_exec x = ks_exec_make(ks_deform_rows, (int)(sizeof ks_deform_rows / sizeof ks_deform_rows[0]), device, l);
    x.sink = sink, x.trace = k, x.stream = stream;
    ks_exec_size(&x, g->input_numel), ks_exec_size(&x, g->offset_numel), ks_exec_size(&x, g->col_numel);
    int64_t work = ks_deform_work(g, p, k, c->im2col_step);
    if (k == KS_DEFORM_GRAD_TILE || k == KS_DEFORM_GRAD_GATHER) { /* their tiles fix the block and the grid */
        int threads;
        int64_t blocks;
        size_t shared = 0;
        int rc = k == KS_DEFORM_GRAD_TILE ? ks_deform_tile_launch(p, g, &a, l, &threads, &blocks)
                                          : ks_deform_gather_launch(p, g, &a, l, &threads, &blocks, &shared);
        if (rc || blocks == 0) return rc;
        x.launch.threads = threads, x.launch.block_cap = blocks, x.shared = shared;
        work = blocks * threads;
    }
    const int rc = ks_exec_kernel(&x, k, &a, work);
    /* a race, an unmet barrier or an access outside the window is a bug of the kernel: its
     * values alone would not show it (the fibers run one at a time) */
    if (!rc && x.sim_problems)
        return ks_fail(KS_EINVAL, "deform %s: the simulator found shared-memory problems (above)",
                       ks_deform_rows[k].name);
    return rc;
}

static int checked(int device, const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                   const ks_launch *l, ks_sink *sink, void *stream)
{
    ks_deform_args a;
    ks_deform_geom g;
    if (k < KS_DEFORM_IM2COL || k > KS_DEFORM_GRAD_GATHER)
        return ks_fail(KS_EINVAL, "unknown deformable kernel %d", (int)k);
    if (c->write_columns && sink)
        return ks_fail(KS_EINVAL, "write_columns is for untraced launches (its stores are not recorded)");
    int rc = ks_deform_args_make(p, c, &a, &g);
    return rc ? rc : launch(device, p, &g, k, c, l, sink, stream);
}

int ks_deform_kernel_sim(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                         const ks_launch *launch_, ks_sink *sink)
{
    return checked(KS_DEV_SIM, p, k, c, launch_, sink, NULL);
}

int ks_deform_kernel_cuda(const ks_deform_params *p, ks_deform_kernel k, const ks_deform_chunk *c,
                          const ks_launch *launch_, const ks_sink *dev_sink, void *stream)
{
    return checked(KS_DEV_CUDA, p, k, c, launch_, (ks_sink *)dev_sink, stream);
}

int ks_deform_launch_sim(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                         const ks_deform_chunk *c, const ks_launch *l, ks_sink *sink)
{
    return launch(KS_DEV_SIM, p, g, k, c, l, sink, NULL);
}

int ks_deform_launch_cuda(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                          const ks_deform_chunk *c, const ks_launch *l, const ks_sink *dev_sink, void *stream)
{
    return launch(KS_DEV_CUDA, p, g, k, c, l, (ks_sink *)dev_sink, stream);
}
