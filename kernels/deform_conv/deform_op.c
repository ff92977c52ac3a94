/* deform_op.c - the descriptors of deform_conv (the layer: forward, --backward) and
 * deform_im2col (the sampling step alone); offsets from .npy or a generated pattern. Before
 * them the deformable kernels' rows, one table: each body's KS_KERNEL line (the three
 * teaching kernels, the tap kernels, the fused forward's weight preparation, the small
 * kernels around the GEMMs) and the fused TF32 forward's plain_only row, and the one way
 * every path runs the seven deformable kernels (ks_deform_exec) on the sequence the
 * registry or an SDK entry point made: the registry sizes the launch (grad_tile and
 * grad_gather size their own tiles), picks 32-bit indices when every tensor and index
 * fits, plain or traced, and checks the launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_cuda_api.h"
#include "../core/ks_error.h"
#include "../core/ks_gemm.h"
#include "../core/ks_params.h"
#include "deform_body.h"

#define KS_BODY "../deform_conv/deform_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_tap_body.h"
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_weight_body.h"
#include "../core/ks_variants.h"
#define KS_BODY "../deform_conv/deform_bias_body.h"
#include "../core/ks_variants.h"

/* What prepare leaves for launch (and the rows' .sites read). */
typedef struct deform_state {
    ks_deform_params p;
    int conv, backward;
    ks_deform_kernel traced;
    ks_deform_geom g; /* validated once, in prepare */
} deform_state;

/* the traced rows' schemas: the first chunk's launch (g.im2col_step images) */
#define SITES(k)                                                      \
    static int sites_##k(const void *state, ks_site *s)               \
    {                                                                 \
        const deform_state *d = state;                                \
        return ks_deform_sites(&d->p, &d->g, k, d->g.im2col_step, s); \
    }
SITES(KS_DEFORM_IM2COL)
SITES(KS_DEFORM_COL2IM)
SITES(KS_DEFORM_COORD)
SITES(KS_DEFORM_IM2COL_TAP)
SITES(KS_DEFORM_GRAD_TAP)

static int row_sums_block(const void *args)
{
    (void)args;
    return KS_DEFORM_ROW_SUMS_THREADS;
}

#define ROW(fn, word, threads_, what, ...) \
    KS_KERNEL_ROW(fn, word, .threads = (threads_), .block_cap = KS_DEFORM_BLOCK_CAP, .help = what, __VA_ARGS__)
#define TRACED(k, fn, word, threads_, what, ...) [k] = ROW(fn, word, threads_, what, .sites = sites_##k, __VA_ARGS__)
#define T KS_DEFORM_THREADS
#define HELPER(fn, word, what, ...) KS_KERNEL_ROW(fn, word, .no_trace = 1, .help = what, __VA_ARGS__)
/* The fused forward against its twin (the twin tests): TF32 keeps 10 of fp32's 23 mantissa
 * bits, so each operand lies within 2^-11 of itself rounded and the two paths' roundings
 * (cvt.rna here, cuBLAS's own) within 2^-10 of each other: each of an output's K = Cg*kh*kw
 * products differs by up to 2^-9 of itself. Those errors are independent, so their sum
 * grows as sqrt(K) * 2^-9 * rms|w*s|, as the output itself does (sqrt(K) * rms|w*s| for
 * random data, its largest about 3.5x that): the ratio is about 2^-9 / 3.5 = 5.6e-4 per
 * standard deviation whatever K is, and 2e-3 of the largest output allows 3.6 of them
 * (runs_with: K = 32 * 9 = 288; docs/deform-conv.md's TF32 tolerance, the same 2e-3). */
#define KS_DEFORM_FUSED_TOLERANCE 2e-3
/* indexed by ks_deform_kernel, then the KS_DEFORM_ROW_* rows (deform_body.h) */
const ks_kernel ks_deform_rows[KS_DEFORM_NROWS] = {
    TRACED(KS_DEFORM_IM2COL, ks_deform_im2col, "im2col", T,
           "one (c, h_col, w_col) per item: its taps' bilinear samples"),
    TRACED(KS_DEFORM_COL2IM, ks_deform_col2im, "col2im", T, "one columns entry per item: its 4 corners, atomically"),
    TRACED(KS_DEFORM_COORD, ks_deform_coord, "coord", T, "one offset (and mask) gradient per item"),
    /* the layer's fast kernels: the same values as the three above. im2col_tap and grad_tap
     * are what runs unless a teaching kernel records, and are traced like them; grad_tile
     * and grad_gather, CUDA's choices for grad_tap's pass, are not (docs/deform-conv.md) */
    TRACED(KS_DEFORM_IM2COL_TAP, ks_deform_im2col_tap, "im2col_tap", KS_DEFORM_TAP_THREADS,
           "the layer's im2col: one tap per item, channels looped"),
    TRACED(KS_DEFORM_GRAD_TAP, ks_deform_grad_tap, "grad_tap", KS_DEFORM_TAP_THREADS,
           "--backward: one tap per item, col2im and coord in one pass"),
    [KS_DEFORM_GRAD_TILE] = ROW(ks_deform_grad_tile, "grad_tile", T,
                                "--backward on CUDA: grad_tap with a shared window per tile", .coop = 1, .no_trace = 1),
    [KS_DEFORM_GRAD_GATHER] = ROW(ks_deform_grad_gather, "grad_gather", T,
                                  "--backward on CUDA: grad_tap with per-pixel sums in shared memory", .coop = 1,
                                  .no_trace = 1),
    /* the layer's TF32 forward of a chunk in one kernel (deform_fused.cu): CUDA only, opt-in
     * (--fused); its weight prepared first. The registry sizes its 3-D grid from its tile */
    [KS_DEFORM_ROW_FUSED_WEIGHT] = HELPER(ks_deform_fused_weight, "fused_weight",
                                          "--fused: the weight in TF32, in mma.sync's fragment order", .threads = 256,
                                          .block_cap = 4096, .fixed = 1),
    [KS_DEFORM_ROW_FUSED] = {.name = "fused_tf32",
                             .body = "ks_deform_fused_k",
                             .cuda = KS_KERNEL_CUDA_FN(ks_deform_fused_cuda_row),
                             .tile_of = ks_deform_fused_tile,
                             .block_cap = -1,
                             .plain_only = 1,
                             .twin = "im2col",
                             .runs_with = "math=tf32 fused=on batch=3 im2col-step=1 channels=32 out-channels=37 "
                                          "input-size=15,17 mask=on bias=on",
                             .tolerance = KS_DEFORM_FUSED_TOLERANCE,
                             .help = "im2col + the GEMM + bias of a chunk in one kernel (TF32 mma.sync)"},
    /* around the GEMMs (deform_bias_body.h), each at its own launch whatever --threads says */
    [KS_DEFORM_ROW_ADD_BIAS] = HELPER(ks_deform_add_bias, "add_bias", "--bias: out += bias[o], one item per element",
                                      .threads = 256, .block_cap = 65535, .fixed = 1),
    [KS_DEFORM_ROW_GATHER_GRAD] = HELPER(ks_deform_gather_grad, "gather_grad",
                                         "--backward: grad_output [S, O, P] into [O, S, P]", .threads = 256,
                                         .block_cap = 65535, .fixed = 1),
    [KS_DEFORM_ROW_ROW_SUMS] = HELPER(ks_deform_row_sums, "row_sums",
                                      "--backward --bias: grad_bias[o] += a row's sum, a block per row",
                                      .block_of = row_sums_block, .block_cap = -1, .coop = 1),
};
#undef T
#undef HELPER
_Static_assert(sizeof ks_deform_rows / sizeof ks_deform_rows[0] == KS_DEFORM_NROWS, "a row per KS_DEFORM_ row");

int ks_deform_exec(ks_exec *x, const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k,
                   const ks_deform_chunk *c, int record)
{
    ks_deform_args a;
    ks_deform_args_fill(p, g, c, &a);
    /* this launch's own: the row that records, the 32-bit choice from the tensors it
     * indexes, a tile's launch; the sequence's settings come back after it */
    const int trace = x->trace, narrow = x->narrow;
    const ks_launch launch = x->launch;
    const uint64_t problems = x->sim_problems;
    x->trace = record ? (int)k : -1, x->narrow = 1;
    ks_exec_size(x, g->input_numel), ks_exec_size(x, g->offset_numel), ks_exec_size(x, g->col_numel);
    int64_t work = ks_deform_work(g, p, k, c->im2col_step);
    int rc = KS_OK, none = 0;
    if (k == KS_DEFORM_GRAD_TILE || k == KS_DEFORM_GRAD_GATHER) { /* their tiles fix the block and the grid */
        int threads = 0;
        int64_t blocks = 0;
        size_t shared = 0;
        rc = k == KS_DEFORM_GRAD_TILE ? ks_deform_tile_launch(p, g, &a, &launch, &threads, &blocks)
                                      : ks_deform_gather_launch(p, g, &a, &launch, &threads, &blocks, &shared);
        x->launch.threads = threads, x->launch.block_cap = blocks, x->shared = shared;
        work = blocks * threads, none = blocks == 0;
    }
    if (!rc && !none) rc = ks_exec_kernel(x, k, &a, work);
    x->trace = trace, x->narrow = narrow, x->launch = launch, x->shared = 0;
    /* a race, an unmet barrier or an access outside the window is a bug of the kernel: its
     * values alone would not show it (the fibers run one at a time) */
    if (!rc && x->sim_problems != problems)
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
    if (rc) return rc;
    ks_exec x = ks_exec_make(ks_deform_rows, KS_DEFORM_NROWS, device, l);
    x.sink = sink, x.stream = stream;
    return ks_deform_exec(&x, p, &g, k, c, 1);
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

/* The two ops share the first P_SHARED rows. */
enum {
    P_KERNEL,
    P_PADDING,
    P_STRIDE,
    P_DILATION,
    P_OFFSET_GROUPS,
    P_BATCH,
    P_CHANNELS,
    P_HW,
    P_MASK,
    P_OFFSET_PATTERN,
    P_OFFSET_AMOUNT,
    P_SHARED,
    P_OUT = P_SHARED,
    P_GROUPS,
    P_IM2COL_STEP,
    P_BIAS,
    P_BACKWARD,
    P_SEMANTICS,
    P_MATH,
    P_FUSED, /* the kernel choices, for measuring (ks_deform_params' last fields) */
    P_GRAD_KERNEL,
    P_GRAD_COLUMNS,
    P_GRAD_TILE,
    P_GATHER_TILE,
    P_COUNT
};

#define SHARED_ROWS                                                                                  \
    [P_KERNEL] = KS_ROW_KERNEL_SIZE(3), [P_PADDING] = KS_ROW_PADDING(1), [P_STRIDE] = KS_ROW_STRIDE, \
    [P_DILATION] = KS_ROW_DILATION,                                                                  \
    [P_OFFSET_GROUPS] = {.name = "offset-groups",                                                    \
                         .def = {1, 1},                                                              \
                         .min = 1,                                                                   \
                         .help = "deformable groups (an --in offset sets it)"},                      \
    [P_BATCH] = KS_ROW_BATCH("N", 1, "input"), [P_CHANNELS] = KS_ROW_CHANNELS(2, "input"),           \
    [P_HW] = KS_ROW_INPUT_SIZE(7, 7),                                                                \
    [P_MASK] = {.name = "mask",                                                                      \
                .kind = KS_PARAM_SWITCH,                                                             \
                .help = "v2: modulate by a mask (uniform in [0, 1) unless --in mask)"},              \
    [P_OFFSET_PATTERN] = {.name = "offset-pattern",                                                  \
                          .kind = KS_PARAM_CHOICE,                                                   \
                          .choices = "random|shift|rotate|scale|zero",                               \
                          .help = "generated offsets (unless --in offset)"},                         \
    [P_OFFSET_AMOUNT] = {                                                                            \
        .name = "offset-amount",                                                                     \
        .kind = KS_PARAM_FLOAT,                                                                      \
        .axes = 2,                                                                                   \
        .help = "random: max |d| (1); shift: dy,dx (0.5,0.5); rotate: degrees (30); scale: factor (2)"}

static const ks_param_spec conv_params[P_COUNT] = {
    SHARED_ROWS,
    [P_OUT] = {.name = "out-channels", .def = {2, 2}, .min = 1, .help = "O, the filters (an --in weight sets it)"},
    [P_GROUPS] = {.name = "groups", .def = {1, 1}, .min = 1, .help = "convolution groups"},
    [P_IM2COL_STEP] = {.name = "im2col-step",
                       .def = {32, 32},
                       .min = 1,
                       .help = "images per chunk (mmcv: must divide the batch)"},
    [P_BIAS] = {.name = "bias", .kind = KS_PARAM_SWITCH, .help = "add a bias (built-in unless --in bias)"},
    [P_BACKWARD] = KS_ROW_BACKWARD,
    [P_SEMANTICS] = {.name = "semantics",
                     .kind = KS_PARAM_CHOICE,
                     .choices = "auto|mmcv|torchvision",
                     .help = "auto: mmcv without a mask, torchvision with one"},
    [P_MATH] = {.name = "math",
                .kind = KS_PARAM_CHOICE,
                .choices = "fp32|tf32",
                .help = "the GEMMs: fp32, or tf32 inputs (tensor cores; the simulator emulates the rounding)"},
    [P_FUSED] = {.name = "fused",
                 .kind = KS_PARAM_CHOICE,
                 .choices = "off|on|24|42|422|44",
                 .help = "--math tf32 on CUDA: the fused forward (its tile shape by size, or this one); its "
                         "twin im2col runs elsewhere"},
    [P_GRAD_KERNEL] = {.name = "grad-kernel",
                       .kind = KS_PARAM_CHOICE,
                       .choices = "auto|tile|tap",
                       .help = "--backward on CUDA: auto (gather, else tile, else tap), or tile or tap at most"},
    [P_GRAD_COLUMNS] = {.name = "grad-columns",
                        .kind = KS_PARAM_CHOICE,
                        .choices = "fused|im2col",
                        .help = "--backward: the gradient kernel writes the columns, or a separate im2col pass"},
    [P_GRAD_TILE] = {.name = "grad-tile",
                     .axes = 2,
                     .min = 0,
                     .help = "grad_tile's positions (a power of 2 to 1024), channels a phase (to 16); 0: default"},
    [P_GATHER_TILE] = {.name = "gather-tile",
                       .axes = 2,
                       .min = 0,
                       .help = "grad_gather's positions (a power of 2 to 1024), channels a block (to 32); 0: default"},
};
static const ks_param_spec im2col_params[P_SHARED] = {SHARED_ROWS};

#define INPUT_ROWS                                                                           \
    [KS_DEFORM_T_INPUT] = {.name = "input", .shape = "(N, C, H, W)"},                        \
    [KS_DEFORM_T_OFFSET] = {.name = "offset",                                                \
                            .shape = "(N, 2*offset_groups*kh*kw, Ho, Wo): (dy, dx) per tap", \
                            .seed = 5},                                                      \
    [KS_DEFORM_T_MASK] = {.name = "mask", .shape = "(N, offset_groups*kh*kw, Ho, Wo): with --mask", .seed = 2}

static const ks_tensor_spec conv_tensors[] = {
    INPUT_ROWS,
    [KS_DEFORM_T_COLUMNS] = {.name = "columns",
                             .output = 1,
                             .shape =
                                 "(C*kh*kw, im2col_step*Ho*Wo): first chunk's im2col (its gradient with --backward)"},
    [KS_DEFORM_T_GRAD_INPUT] = {.name = "grad_input", .output = 1, .shape = "(N, C, H, W): with --backward"},
    [KS_DEFORM_T_GRAD_OFFSET] = {.name = "grad_offset", .output = 1, .shape = "like offset: with --backward"},
    [KS_DEFORM_T_GRAD_MASK] = {.name = "grad_mask", .output = 1, .shape = "like mask: with --backward and --mask"},
    [KS_DEFORM_T_WEIGHT] = {.name = "weight", .shape = "(O, C/groups, kh, kw)", .seed = 1},
    [KS_DEFORM_T_BIAS] = {.name = "bias", .shape = "(O): with --bias", .seed = 3},
    [KS_DEFORM_T_OUTPUT] = {.name = "output", .output = 1, .shape = "(N, O, Ho, Wo)"},
    [KS_DEFORM_T_GRAD_OUTPUT] = {.name = "grad_output", .shape = "(N, O, Ho, Wo): with --backward", .seed = 4},
    [KS_DEFORM_T_GRAD_WEIGHT] = {.name = "grad_weight", .output = 1, .shape = "(O, C/groups, kh, kw): with --backward"},
    [KS_DEFORM_T_GRAD_BIAS] = {.name = "grad_bias", .output = 1, .shape = "(O): with --backward and --bias"},
};
static const ks_tensor_spec im2col_tensors[] = {
    INPUT_ROWS,
    [KS_DEFORM_T_COLUMNS] = {.name = "columns", .output = 1, .shape = "(C*kh*kw, N*Ho*Wo): column (n*Ho + ho)*Wo + wo"},
};

/* Parameters from flags, then the sizes the given tensors imply. */
static int read_params(ks_run *r, deform_state *s)
{
    static const ks_dim_bind w_dims[] = {{.dim = 0, .param = P_OUT, .axis = 0},
                                         {.dim = 2, .param = P_KERNEL, .axis = 0},
                                         {.dim = 3, .param = P_KERNEL, .axis = 1}};
    const ks_tensor *t = r->tensor;
    ks_deform_params *p = &s->p;
    int rc;
    if ((rc = ks_run_take_nchw(r, KS_DEFORM_T_INPUT, P_BATCH, P_CHANNELS, P_HW)) ||
        (s->conv && (rc = ks_run_take(r, KS_DEFORM_T_WEIGHT, 4, w_dims, KS_COUNT(w_dims)))))
        return rc;
    if (r->set[P_MASK] && !r->value[P_MASK][0] && t[KS_DEFORM_T_MASK].data)
        return ks_fail(KS_EINVAL, "--no-mask disagrees with the mask tensor given");
    const int64_t kk = r->value[P_KERNEL][0] * r->value[P_KERNEL][1];
    const ks_tensor *off = &t[KS_DEFORM_T_OFFSET];
    if (off->data && off->ndim == 4 && !r->set[P_OFFSET_GROUPS] && off->shape[1] % (2 * kk) == 0)
        r->value[P_OFFSET_GROUPS][0] = off->shape[1] / (2 * kk); /* as torchvision infers it */
    *p = (ks_deform_params){
        .batch = r->value[P_BATCH][0],
        .channels = r->value[P_CHANNELS][0],
        .height = r->value[P_HW][0],
        .width = r->value[P_HW][1],
        .kernel_h = r->value[P_KERNEL][0],
        .kernel_w = r->value[P_KERNEL][1],
        .pad_h = r->value[P_PADDING][0],
        .pad_w = r->value[P_PADDING][1],
        .stride_h = r->value[P_STRIDE][0],
        .stride_w = r->value[P_STRIDE][1],
        .dilation_h = r->value[P_DILATION][0],
        .dilation_w = r->value[P_DILATION][1],
        .offset_groups = r->value[P_OFFSET_GROUPS][0],
        .use_mask = r->value[P_MASK][0] || t[KS_DEFORM_T_MASK].data,
        .groups = 1,
        .out_channels = 1,
        .im2col_step = 1,
    };
    if (!s->conv) {
        p->im2col_step = p->batch; /* one launch over the batch */
        return KS_OK;
    }
    if (r->set[P_BIAS] && !r->value[P_BIAS][0] && t[KS_DEFORM_T_BIAS].data)
        return ks_fail(KS_EINVAL, "--no-bias disagrees with the bias tensor given");
    p->out_channels = r->value[P_OUT][0];
    p->groups = r->value[P_GROUPS][0];
    p->im2col_step = r->value[P_IM2COL_STEP][0];
    p->use_bias = r->value[P_BIAS][0] || t[KS_DEFORM_T_BIAS].data;
    p->math = r->value[P_MATH][0] ? KS_MATH_TF32 : KS_MATH_FP32;
    static const int fused[] = {0, 1, 24, 42, 422, 44}; /* --fused's words, in order */
    p->fused = fused[r->value[P_FUSED][0]];
    p->grad_kernel = (int)r->value[P_GRAD_KERNEL][0], p->grad_columns = (int)r->value[P_GRAD_COLUMNS][0];
    const int64_t *gt = r->value[P_GRAD_TILE], *ga = r->value[P_GATHER_TILE];
    if (gt[0] > 1024 || (gt[0] & (gt[0] - 1)) || gt[1] > 16)
        return ks_fail(KS_EINVAL, "--grad-tile P,W: P 0 or a power of 2 to 1024, W 0..16 (got %lld,%lld)",
                       (long long)gt[0], (long long)gt[1]);
    if (ga[0] > 1024 || (ga[0] & (ga[0] - 1)) || ga[1] > 32)
        return ks_fail(KS_EINVAL, "--gather-tile P,C: P 0 or a power of 2 to 1024, C 0..32 (got %lld,%lld)",
                       (long long)ga[0], (long long)ga[1]);
    p->tile_positions = (int)r->value[P_GRAD_TILE][0], p->tile_windows = (int)r->value[P_GRAD_TILE][1];
    p->gather_positions = (int)r->value[P_GATHER_TILE][0], p->gather_channels = (int)r->value[P_GATHER_TILE][1];
    const int64_t sem = r->value[P_SEMANTICS][0];
    p->semantics = sem == 1      ? KS_DEFORM_MMCV
                   : sem == 2    ? KS_DEFORM_TORCHVISION
                   : p->use_mask ? KS_DEFORM_TORCHVISION
                                 : KS_DEFORM_MMCV;
    s->backward = (int)r->value[P_BACKWARD][0];
    /* the row --trace-kernel names (its rows: im2col, col2im, coord, im2col_tap, grad_tap),
     * by default im2col, or col2im with --backward; the layer records its first chunk's
     * launch of it */
    s->traced = (ks_deform_kernel)ks_run_trace_row(r, s->backward ? KS_DEFORM_COL2IM : KS_DEFORM_IM2COL);
    if (!s->backward && s->traced != KS_DEFORM_IM2COL && s->traced != KS_DEFORM_IM2COL_TAP)
        return ks_fail(KS_EINVAL, "--trace-kernel col2im, coord and grad_tap run in the backward pass: add --backward");
    return KS_OK;
}

/* Every tensor's shape; those this mode does not use are absent. */
static void shapes(ks_run *r, const deform_state *s, const ks_deform_geom *g)
{
    const ks_deform_params *p = &s->p;
    const int64_t N = p->batch, C = p->channels, O = p->out_channels, Ho = g->height_out, Wo = g->width_out;
    const int64_t G = p->offset_groups, kk = p->kernel_h * p->kernel_w;
    ks_run_shape4(r, KS_DEFORM_T_INPUT, 4, N, C, p->height, p->width);
    ks_run_shape4(r, KS_DEFORM_T_OFFSET, 4, N, 2 * G * kk, Ho, Wo);
    ks_run_shape4(r, KS_DEFORM_T_MASK, 4, N, G * kk, Ho, Wo);
    const int64_t im2col_step = g->im2col_step > 0 ? g->im2col_step : 1;
    ks_run_shape4(r, KS_DEFORM_T_COLUMNS, 2, g->rows, im2col_step * Ho * Wo, 0, 0);
    if (!p->use_mask) ks_run_absent(r, KS_DEFORM_T_MASK);
    if (!s->conv) return;
    ks_run_shape4(r, KS_DEFORM_T_WEIGHT, 4, O, C / p->groups, p->kernel_h, p->kernel_w);
    ks_run_shape4(r, KS_DEFORM_T_BIAS, 1, O, 0, 0, 0);
    ks_run_shape4(r, KS_DEFORM_T_OUTPUT, 4, N, O, Ho, Wo);
    if (!p->use_bias) ks_run_absent(r, KS_DEFORM_T_BIAS);
    /* each gradient has the shape of what it is the gradient of */
    static const int grads[][2] = {
        {KS_DEFORM_T_GRAD_OUTPUT, KS_DEFORM_T_OUTPUT}, {KS_DEFORM_T_GRAD_INPUT, KS_DEFORM_T_INPUT},
        {KS_DEFORM_T_GRAD_OFFSET, KS_DEFORM_T_OFFSET}, {KS_DEFORM_T_GRAD_MASK, KS_DEFORM_T_MASK},
        {KS_DEFORM_T_GRAD_WEIGHT, KS_DEFORM_T_WEIGHT}, {KS_DEFORM_T_GRAD_BIAS, KS_DEFORM_T_BIAS},
    };
    for (int i = 0; i < KS_COUNT(grads); ++i) {
        if (!s->backward || r->absent[grads[i][1]]) ks_run_absent(r, grads[i][0]);
        else ks_run_shape(r, grads[i][0], r->expect_ndim[grads[i][1]], r->expect[grads[i][1]]);
    }
}

static int prepare_op(ks_run *r, int conv)
{
    deform_state *s = KS_RUN_CTX(r, deform_state);
    ks_deform_geom *gp = &s->g;
    int rc;
    memset(s, 0, sizeof *s);
    s->conv = conv;
    s->traced = (ks_deform_kernel)ks_run_trace_row(r, KS_DEFORM_IM2COL); /* deform_conv's read_params: its own */
    if ((rc = read_params(r, s)) || (rc = ks_deform_geometry(&s->p, gp))) return rc;
    const ks_deform_geom g = *gp;
    const ks_deform_params *p = &s->p;
    shapes(r, s, &g);
    ks_run_fact(r, "offset_groups", "%lld", (long long)p->offset_groups);
    ks_run_fact(r, "mask", "%s", p->use_mask ? "true" : "false");
    ks_run_fact(r, "traced_images", "%lld", (long long)g.im2col_step);
    ks_run_fact(r, "output_size", "[%lld, %lld]", (long long)g.height_out, (long long)g.width_out);
    if (conv) {
        ks_run_fact(r, "bias", "%s", p->use_bias ? "true" : "false");
        ks_run_fact(r, "semantics", "\"%s\"", p->semantics == KS_DEFORM_MMCV ? "mmcv" : "torchvision");
    }
    r->work_items = ks_deform_work(&g, p, s->traced, g.im2col_step);
    return KS_OK;
}

static int prepare_conv(ks_run *r) { return prepare_op(r, 1); }
static int prepare_im2col(ks_run *r) { return prepare_op(r, 0); }

/* offsets from the pattern; a mask uniform in [0, 1) */
static int fill(ks_run *r, int t)
{
    const deform_state *s = KS_RUN_CTX(r, const deform_state);
    ks_tensor *x = &r->tensor[t];
    const uint64_t seed = r->seed + (uint64_t)conv_tensors[t].seed;
    if (t == KS_DEFORM_T_OFFSET) {
        static const double defaults[][2] = {{1, 1}, {0.5, 0.5}, {30, 30}, {2, 2}, {0, 0}};
        const int pat = (int)r->value[P_OFFSET_PATTERN][0];
        const double *amount = r->set[P_OFFSET_AMOUNT] ? r->fvalue[P_OFFSET_AMOUNT] : defaults[pat];
        return ks_deform_offset_fill(&s->p, pat, amount, seed, x->data);
    }
    if (t != KS_DEFORM_T_MASK) return KS_ENOENT;
    ks_tensor_free(x);
    int rc = ks_fill_pattern(x, KS_PAT_RANDOM, seed);
    float *m = x->data; /* random is in [-1, 1): map to [0, 1) */
    for (int64_t i = 0; !rc && i < ks_tensor_numel(x); ++i) m[i] = 0.5f * (m[i] + 1.0f);
    return rc;
}

/* the layer (deform_im2col: its one kernel) on the registry's sequence x: the row
 * r->traced_row records, in the first chunk; with --backward the backward does (the
 * forward before it records nothing) */
static int run(ks_exec *x, const ks_run *r, void *const *d)
{
    const deform_state *s = KS_RUN_CTX(r, const deform_state);
    const int cuda = r->device == KS_DEV_CUDA;
    if (!s->conv) {
        const ks_deform_chunk ch = {.im2col_step = s->p.batch,
                                    .input = d[KS_DEFORM_T_INPUT],
                                    .offset = d[KS_DEFORM_T_OFFSET],
                                    .mask = d[KS_DEFORM_T_MASK],
                                    .columns = d[KS_DEFORM_T_COLUMNS]};
        return ks_deform_exec(x, &s->p, &s->g, KS_DEFORM_IM2COL, &ch, 1);
    }
    ks_deform_tensors t = {
        .input = d[KS_DEFORM_T_INPUT],
        .offset = d[KS_DEFORM_T_OFFSET],
        .mask = d[KS_DEFORM_T_MASK],
        .weight = d[KS_DEFORM_T_WEIGHT],
        .bias = d[KS_DEFORM_T_BIAS],
        .output = d[KS_DEFORM_T_OUTPUT],
        .grad_output = d[KS_DEFORM_T_GRAD_OUTPUT],
        .grad_input = d[KS_DEFORM_T_GRAD_INPUT],
        .grad_offset = d[KS_DEFORM_T_GRAD_OFFSET],
        .grad_mask = d[KS_DEFORM_T_GRAD_MASK],
        .grad_weight = d[KS_DEFORM_T_GRAD_WEIGHT],
        .grad_bias = d[KS_DEFORM_T_GRAD_BIAS],
        .columns0 = d[KS_DEFORM_T_COLUMNS],
    };
    const ks_deform_kernel fwd_traced = s->backward ? KS_DEFORM_NONE : s->traced;
    ks_deform_tensors b = t; /* the backward keeps the column gradient unless an im2col is traced */
    b.columns0 = s->traced == KS_DEFORM_IM2COL || s->traced == KS_DEFORM_IM2COL_TAP ? NULL : t.columns0;
    const int64_t n = ks_deform_workspace_floats(&s->p);
    float *ws = NULL;
    int rc = KS_OK;
    if (cuda) rc = ks_cuda_malloc((void **)&ws, (size_t)n * sizeof(float));
    else if (!(ws = malloc((size_t)(n > 0 ? n : 1) * sizeof(float))))
        rc = ks_fail(KS_ENOMEM, "no memory for a %lld-float workspace", (long long)n);
    if (!rc) rc = ks_deform_layer(x, &s->p, &t, ws, 0, fwd_traced);
    if (!rc && s->backward) rc = ks_deform_layer(x, &s->p, &b, ws, 1, s->traced);
    if (cuda) ks_cuda_free(ws);
    else free(ws);
    return rc;
}

const ks_op ks_op_deform_conv = {
    .name = "deform_conv",
    .summary = "deformable convolution v1/v2 (mmcv, torchvision): forward, --backward",
    KS_OP_ROWS(conv_params, conv_tensors),
    .kernels = ks_deform_rows, /* all of them; a trace records im2col, col2im or coord */
    .nkernels = KS_DEFORM_NROWS,
    .prepare = prepare_conv,
    .fill = fill,
    .run = run,
};

const ks_op ks_op_deform_im2col = {
    .name = "deform_im2col",
    .summary = "deformable im2col: where each tap samples, bilinear weights, the mask",
    KS_OP_ROWS(im2col_params, im2col_tensors),
    .kernels = ks_deform_rows, /* its one kernel */
    .nkernels = KS_DEFORM_IM2COL + 1,
    .prepare = prepare_im2col,
    .fill = fill,
    .run = run,
};
