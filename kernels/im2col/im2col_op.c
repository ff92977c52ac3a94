/* im2col_op.c - the descriptors of im2col and col2im (Caffe semantics), their kernel rows
 * and the SDK's entry points (ks_im2col_sim, ks_im2col_cuda, ...: every launch goes
 * through the rows). The geometry and sites are im2col_geom.c; the bodies im2col_body.h. */
#include <stddef.h>

#include "../core/ks_error.h"
#include "../core/ks_params.h"

#define KS_BODY "../im2col/im2col_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

/* The three kernels, indexed as ks_im2col_launch_*'s `col2im` (0, 1, KS_COL2IM_SCATTER):
 * im2col's table is the first row, col2im's the other two. Caffe's launch is 512 threads;
 * at most 2048 blocks (KS_IM2COL_BLOCK_CAP says why). */
/* Their trace schemas (im2col_geom.c) read the args that begin the op's state (im2col_state). */
static int im2col_sites(const void *a, ks_site *s) { return ks_im2col_sites(a, s); }
static int gather_sites(const void *a, ks_site *s) { return ks_col2im_sites(a, s); }
static int scatter_sites(const void *a, ks_site *s) { return ks_col2im_scatter_sites(a, s); }
#define ROW(fn, word, sites_, what)                                                                          \
    KS_KERNEL_ROW(fn, word, .sites = sites_, .threads = KS_IM2COL_THREADS, .block_cap = KS_IM2COL_BLOCK_CAP, \
                  .help = what)
static const ks_kernel rows[3] = {
    ROW(ks_im2col, "im2col", im2col_sites, "one item per (n, c, h_col, w_col): its kh*kw taps into the columns"),
    ROW(ks_col2im, "col2im", gather_sites, "gather: one item per image element sums the column entries of its windows"),
    ROW(ks_col2im_scatter, "col2im_scatter", scatter_sites, "scatter: one item per column entry, atomically added"),
};
_Static_assert(KS_COL2IM_SCATTER == 2, "the rows are indexed by col2im");

static int64_t work_of(const ks_im2col_args *a, int col2im)
{
    const int64_t planes = a->batch * a->channels, cols = planes * a->height_col * a->width_col;
    return col2im == KS_COL2IM_SCATTER ? cols * a->kernel_h * a->kernel_w
           : col2im                    ? planes * a->height * a->width
                                       : cols;
}

/* kernel `col2im` as row `row` of x's table; every size counted for the 32-bit choice */
static int exec(ks_exec *x, const ks_im2col_args *a, int col2im, int row)
{
    const int64_t planes = a->batch * a->channels;
    ks_exec_size(x, planes * a->height * a->width);
    ks_exec_size(x, planes * a->kernel_h * a->kernel_w * a->height_col * a->width_col);
    return ks_exec_kernel(x, row, a, work_of(a, col2im));
}

static int sdk(int device, const ks_im2col_args *a, int col2im, const ks_launch *l, ks_sink *sink, void *stream)
{
    if (col2im < 0 || col2im > KS_COL2IM_SCATTER) return ks_fail(KS_EINVAL, "unknown im2col kernel %d", col2im);
    ks_exec x = ks_exec_make(rows, 3, device, l);
    x.sink = sink, x.trace = col2im, x.stream = stream;
    return exec(&x, a, col2im, col2im);
}

int ks_im2col_launch_sim(const ks_im2col_args *a, int col2im, const ks_launch *l, ks_sink *sink)
{
    return sdk(KS_DEV_SIM, a, col2im, l, sink, NULL);
}

int ks_im2col_launch_cuda(const ks_im2col_args *a, int col2im, const ks_launch *l, const ks_sink *dev_sink,
                          void *stream)
{
    return sdk(KS_DEV_CUDA, a, col2im, l, (ks_sink *)dev_sink, stream);
}

/* the checked entry points: parameters validated, then one kernel */
static int checked(int device, const ks_im2col_params *p, const float *src, float *dst, int col2im, const ks_launch *l,
                   ks_sink *sink, void *stream)
{
    ks_im2col_args a;
    ks_im2col_geom g;
    int rc = ks_im2col_args_make(p, src, dst, &a, &g);
    return rc ? rc : sdk(device, &a, col2im, l, sink, stream);
}

int ks_im2col_sim(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch, ks_sink *sink)
{
    return checked(KS_DEV_SIM, p, input, columns, 0, launch, sink, NULL);
}

int ks_col2im_sim(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                  ks_sink *sink)
{
    return checked(KS_DEV_SIM, p, columns, output, 1, launch, sink, NULL);
}

int ks_im2col_cuda(const ks_im2col_params *p, const float *input, float *columns, const ks_launch *launch,
                   const ks_sink *dev_sink, void *stream)
{
    return checked(KS_DEV_CUDA, p, input, columns, 0, launch, (ks_sink *)dev_sink, stream);
}

int ks_col2im_cuda(const ks_im2col_params *p, const float *columns, float *output, const ks_launch *launch,
                   const ks_sink *dev_sink, void *stream)
{
    return checked(KS_DEV_CUDA, p, columns, output, 1, launch, (ks_sink *)dev_sink, stream);
}

/* Both share their rows; im2col's P_HW is the input's size, col2im's the image to rebuild. */
enum { P_KERNEL, P_PADDING, P_STRIDE, P_DILATION, P_BATCH, P_CHANNELS, P_HW, P_COUNT };
enum { P_ALGO = P_COUNT }; /* col2im's own row */

static const ks_param_spec im2col_params[P_COUNT] = {
    [P_KERNEL] = KS_ROW_KERNEL_SIZE(3),
    [P_PADDING] = KS_ROW_PADDING(1),
    [P_STRIDE] = KS_ROW_STRIDE,
    [P_DILATION] = KS_ROW_DILATION,
    [P_BATCH] = KS_ROW_BATCH("N", 1, "input"),
    [P_CHANNELS] = KS_ROW_CHANNELS(2, "input"),
    [P_HW] = KS_ROW_INPUT_SIZE(5, 5),
};

static const ks_param_spec col2im_params[P_COUNT + 1] = {
    [P_ALGO] = {.name = "algorithm",
                .kind = KS_PARAM_CHOICE,
                .choices = "gather|scatter",
                .help = "gather: a thread per image element sums its entries; scatter: a thread per entry, atomics"},
    [P_KERNEL] = KS_ROW_KERNEL_SIZE(3),
    [P_PADDING] = KS_ROW_PADDING(1),
    [P_STRIDE] = KS_ROW_STRIDE,
    [P_DILATION] = KS_ROW_DILATION,
    [P_BATCH] = KS_ROW_BATCH("N", 1, "columns"),
    [P_CHANNELS] = KS_ROW_CHANNELS(2, "columns"),
    [P_HW] = {.name = "output-size",
              .axes = 2,
              .def = {5, 5},
              .min = 1,
              .help = "H, W of the image to rebuild",
              .key = "input_size"},
};

static const ks_tensor_spec im2col_tensors[] = {
    [KS_IM2COL_T_INPUT] = {.name = "input", .shape = "(N, C, H, W)"},
    [KS_IM2COL_T_COLUMNS] = {.name = "columns", .output = 1, .shape = "(N, C*kh*kw, Ho*Wo)"},
};

static const ks_tensor_spec col2im_tensors[] = {
    [KS_COL2IM_T_COLUMNS] = {.name = "columns", .shape = "(N, C*kh*kw, Ho*Wo)"},
    [KS_COL2IM_T_OUTPUT] = {.name = "output", .output = 1, .shape = "(N, C, H, W)"},
};

/* What prepare leaves for launch: the kernel arguments, validated once. */
typedef struct im2col_state {
    ks_im2col_args a; /* first: the rows' .sites read it */
    int col2im;
} im2col_state;
_Static_assert(offsetof(im2col_state, a) == 0, "the state begins with the args");

/* The geometry from the parameters (given tensors have set theirs), validated here only. */
static int geometry(ks_run *r, int col2im, ks_im2col_geom *g)
{
    im2col_state *s = KS_RUN_CTX(r, im2col_state);
    const ks_im2col_params p = {
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
    };
    s->col2im = col2im && r->value[P_ALGO][0] == 1 ? KS_COL2IM_SCATTER : col2im;
    int rc = ks_im2col_args_make(&p, NULL, NULL, &s->a, g);
    if (rc) return rc;
    ks_run_fact(r, "output_size", "[%lld, %lld]", (long long)g->height_col, (long long)g->width_col);
    return KS_OK;
}

static int im2col_prepare(ks_run *r)
{
    const ks_im2col_args *a = &KS_RUN_CTX(r, im2col_state)->a;
    ks_im2col_geom g;
    int rc = ks_run_take_nchw(r, KS_IM2COL_T_INPUT, P_BATCH, P_CHANNELS, P_HW);
    if (rc || (rc = geometry(r, 0, &g))) return rc;
    ks_run_shape4(r, KS_IM2COL_T_INPUT, 4, a->batch, a->channels, a->height, a->width);
    ks_run_shape4(r, KS_IM2COL_T_COLUMNS, 3, a->batch, g.rows, g.height_col * g.width_col, 0);
    r->work_items = g.im2col_work;
    ks_run_trace_row(r, 0);
    return KS_OK;
}

static int col2im_prepare(ks_run *r)
{
    const ks_tensor *cols = &r->tensor[KS_COL2IM_T_COLUMNS];
    const ks_im2col_args *a = &KS_RUN_CTX(r, im2col_state)->a;
    ks_im2col_geom g;
    int rc;
    if (cols->data) { /* columns (N, C*kh*kw, Ho*Wo) give N and C */
        const int64_t taps = r->value[P_KERNEL][0] * r->value[P_KERNEL][1]; /* each <= 2^31 */
        if (cols->ndim != 3) return ks_fail(KS_EINVAL, "columns must have shape (N, C*kh*kw, Ho*Wo)");
        if (cols->shape[1] % taps != 0 || cols->shape[1] == 0)
            return ks_fail(KS_EINVAL, "columns dimension 1 (%lld) must be a positive multiple of kh*kw = %lld",
                           (long long)cols->shape[1], (long long)taps);
        if ((rc = ks_run_bind(r, KS_COL2IM_T_COLUMNS, P_BATCH, 0, cols->shape[0])) ||
            (rc = ks_run_bind(r, KS_COL2IM_T_COLUMNS, P_CHANNELS, 0, cols->shape[1] / taps)))
            return rc;
    }
    if ((rc = geometry(r, 1, &g))) return rc;
    ks_run_shape4(r, KS_COL2IM_T_COLUMNS, 3, a->batch, g.rows, g.height_col * g.width_col, 0);
    ks_run_shape4(r, KS_COL2IM_T_OUTPUT, 4, a->batch, a->channels, a->height, a->width);
    /* col2im's rows: 0 gather, 1 scatter (--algorithm); --trace-kernel must name the one that runs */
    const int scatter = KS_RUN_CTX(r, im2col_state)->col2im == KS_COL2IM_SCATTER;
    ks_run_trace_row(r, scatter);
    r->work_items = scatter ? a->batch * g.rows * g.height_col * g.width_col : g.image_numel;
    return KS_OK;
}

/* both ops: tensor 0 is the source, tensor 1 the result */
_Static_assert(KS_IM2COL_T_INPUT == 0 && KS_IM2COL_T_COLUMNS == 1 && KS_COL2IM_T_COLUMNS == 0 &&
                   KS_COL2IM_T_OUTPUT == 1,
               "im2col and col2im read tensor 0 and write tensor 1");
static int run(ks_exec *x, const ks_run *r, void *const *ptr)
{
    const im2col_state *s = KS_RUN_CTX(r, const im2col_state);
    ks_im2col_args a = s->a;
    a.src = ptr[0], a.dst = ptr[1];
    return exec(x, &a, s->col2im, s->col2im ? s->col2im - 1 : 0); /* col2im's table starts at row 1 */
}

const ks_op ks_op_im2col = {
    .name = "im2col",
    .summary = "unfold sliding windows of an image into a columns matrix (Caffe semantics)",
    KS_OP_ROWS(im2col_params, im2col_tensors),
    .kernels = rows,
    .nkernels = 1,
    .prepare = im2col_prepare,
    .run = run,
};

const ks_op ks_op_col2im = {
    .name = "col2im",
    .summary = "fold a columns matrix back into an image, summing overlaps (gather, or --algorithm scatter)",
    KS_OP_ROWS(col2im_params, col2im_tensors),
    .kernels = rows + 1,
    .nkernels = 2,
    .prepare = col2im_prepare,
    .run = run,
};
