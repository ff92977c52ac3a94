/* kscope run FILE.cu end to end on real CUDA C kernels (tests/cuda_c/): a table of correct
 * kernels, each run on random inputs of odd sizes and compared with a reference computed
 * here in plain C loops, its trace passing `kscope check`, `kscope step` showing the
 * source line of an access, and a second run giving the same bytes; a table of planted
 * bugs (tests/cuda_c/bugs/) that `kscope check` must name; a table of bad inputs, each
 * exit 2 with one line on stderr and nothing written. Exits 77 (skipped) without clang 16
 * or newer, which kscope needs to compile a .cu file. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../trace/npy.h"
#include "test_util.h"

#define CU_DIR KS_SOURCE_DIR "/tests/cuda_c"

static char dir[64];

/* ---- running kscope in a fresh directory ---- */

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ks_cuda_c_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* the directory of a passing test goes; a failing one's stays for a look */
static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs "kscope ARGS" in dir; returns the exit code; stdout/stderr in dir/out, dir/err. */
static int kscope(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int kscope(const char *fmt, ...)
{
    char args[3072], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd %s && %s %s >out 2>err", dir, KS_CLI, args);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *name) { return tu_slurp(dir, name); }

static char *slurp_copy(const char *name) { return strdup(slurp(name)); }

static int exists(const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* the first line of a text, for a message */
static const char *first_line(const char *s, char *buf, size_t n)
{
    snprintf(buf, n, "%.*s", (int)strcspn(s, "\n"), s);
    return buf;
}

/* Failures gathered over a test, reported together at its end: one row's run says what
 * works and what does not, instead of stopping at the first problem. */
static char fails[6000];

static void soft(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void soft(int ok, const char *fmt, ...)
{
    if (ok) return;
    size_t used = strlen(fails);
    if (used + 8 >= sizeof fails) return;
    used += (size_t)snprintf(fails + used, sizeof fails - used, "\n  - ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fails + used, sizeof fails - used, fmt, ap);
    va_end(ap);
}

/* ---- inputs and outputs ---- */

static void write_tensor(const char *name, ks_tensor *t)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(ks_npy_write(path, t) == KS_OK, "%s", ks_error_message());
    ks_tensor_free(t);
}

/* random floats in [-1, 1) of the given shape */
static void write_f32(const char *name, uint64_t seed, int ndim, int64_t d0, int64_t d1, int64_t d2)
{
    ks_tensor t = {.dtype = KS_F32, .ndim = ndim, .shape = {d0, d1, d2}};
    ck_assert_int_eq(ks_tensor_alloc(&t), KS_OK);
    const int64_t n = ks_tensor_numel(&t);
    float *r = tu_random(&seed, n);
    memcpy(t.data, r, (size_t)n * sizeof *r);
    free(r);
    write_tensor(name, &t);
}

/* random int32 in [lo, hi] */
static void write_i32(const char *name, uint64_t seed, int64_t n, int lo, int hi)
{
    ks_tensor t = {.dtype = KS_I32, .ndim = 1, .shape = {n}};
    ck_assert_int_eq(ks_tensor_alloc(&t), KS_OK);
    for (int64_t i = 0; i < n; ++i) ((int32_t *)t.data)[i] = (int32_t)tu_int(&seed, lo, hi);
    write_tensor(name, &t);
}

/* dir/name, of dtype dt and shape (d0[, d1[, d2]]) */
static ks_tensor load(const char *name, ks_dtype dt, int ndim, int64_t d0, int64_t d1, int64_t d2)
{
    char path[256];
    ks_tensor t;
    const int64_t want[3] = {d0, d1, d2};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(ks_npy_read(path, &t) == KS_OK, "%s: %s", name, ks_error_message());
    ck_assert_msg(t.dtype == dt, "%s: dtype %s, expected %s", name, ks_dtype_name(t.dtype), ks_dtype_name(dt));
    ck_assert_msg(t.ndim == ndim, "%s: %d dimensions, expected %d", name, t.ndim, ndim);
    for (int i = 0; i < ndim; ++i)
        ck_assert_msg(t.shape[i] == want[i], "%s: shape[%d] = %lld, expected %lld", name, i, (long long)t.shape[i],
                      (long long)want[i]);
    return t;
}

#define F(t) ((const float *)(t).data)
#define I(t) ((const int32_t *)(t).data)

/* ---- the correct kernels: inputs and references ---- */

/* vadd: c = a + b over n = 1001 by a grid-stride loop (384 threads) */
#define VADD_N 1001
static void make_vadd(void)
{
    write_f32("a.npy", 101, 1, VADD_N, 0, 0);
    write_f32("b.npy", 102, 1, VADD_N, 0, 0);
}

static void verify_vadd(void)
{
    ks_tensor a = load("a.npy", KS_F32, 1, VADD_N, 0, 0), b = load("b.npy", KS_F32, 1, VADD_N, 0, 0);
    ks_tensor c = load("saved/c.npy", KS_F32, 1, VADD_N, 0, 0);
    double *want = malloc(VADD_N * sizeof *want);
    for (int i = 0; i < VADD_N; ++i) want[i] = (double)F(a)[i] + (double)F(b)[i];
    tu_expect_close(F(c), want, VADD_N, 2e-7, "c");
    free(want);
    ks_tensor_free(&a), ks_tensor_free(&b), ks_tensor_free(&c);
}

/* both transposes: out (53 x 37) = in (37 x 53)^T, exactly */
#define TR_ROWS 37
#define TR_COLS 53
static void make_transpose(void) { write_f32("in.npy", 201, 2, TR_ROWS, TR_COLS, 0); }

static void verify_transpose(void)
{
    ks_tensor in = load("in.npy", KS_F32, 2, TR_ROWS, TR_COLS, 0);
    ks_tensor out = load("saved/out.npy", KS_F32, 2, TR_COLS, TR_ROWS, 0);
    double *want = malloc(TR_ROWS * TR_COLS * sizeof *want);
    for (int y = 0; y < TR_ROWS; ++y)
        for (int x = 0; x < TR_COLS; ++x) want[x * TR_ROWS + y] = F(in)[y * TR_COLS + x];
    tu_expect_close(F(out), want, TR_ROWS * TR_COLS, 0.0, "out");
    free(want);
    ks_tensor_free(&in), ks_tensor_free(&out);
}

/* reduce_sum: grid 5 x block 96 over n = 2001; block b sums the elements i with
 * (i / 96) % 5 == b (its threads' grid-stride share) */
#define RED_N 2001
#define RED_GRID 5
#define RED_BLOCK 96
static void make_reduce(void) { write_f32("in.npy", 301, 1, RED_N, 0, 0); }

static void verify_reduce(void)
{
    ks_tensor in = load("in.npy", KS_F32, 1, RED_N, 0, 0), out = load("saved/out.npy", KS_F32, 1, RED_GRID, 0, 0);
    double want[RED_GRID] = {0}, mag[RED_GRID] = {0};
    for (int i = 0; i < RED_N; ++i) {
        want[i / RED_BLOCK % RED_GRID] += F(in)[i];
        mag[i / RED_BLOCK % RED_GRID] += fabs(F(in)[i]);
    }
    for (int b = 0; b < RED_GRID; ++b) /* float sums in another order: within 4e-6 of the magnitude */
        ck_assert_msg(fabs(F(out)[b] - want[b]) <= 4e-6 * mag[b], "out[%d] = %.9g, reference %.9g", b, F(out)[b],
                      want[b]);
    ks_tensor_free(&in), ks_tensor_free(&out);
}

/* histogram of 1001 ints in [0, 999] into 64 bins (value % 64), exactly */
#define HIST_N 1001
static void make_histogram(void) { write_i32("data.npy", 401, HIST_N, 0, 999); }

static void verify_histogram(void)
{
    ks_tensor d = load("data.npy", KS_I32, 1, HIST_N, 0, 0), h = load("saved/hist.npy", KS_I32, 1, 64, 0, 0);
    int32_t want[64] = {0};
    for (int i = 0; i < HIST_N; ++i) want[I(d)[i] % 64]++;
    for (int b = 0; b < 64; ++b) ck_assert_msg(I(h)[b] == want[b], "hist[%d] = %d, reference %d", b, I(h)[b], want[b]);
    ks_tensor_free(&d), ks_tensor_free(&h);
}

/* Caffe's im2col: 3 channels of 13 x 11, kernel 3 x 2, padding (1, 0), stride (2, 1),
 * dilation (1, 2): 7 x 9 columns, (3 * 3 * 2) x 63 out, exactly */
enum {
    IC_C = 3,
    IC_H = 13,
    IC_W = 11,
    IC_KH = 3,
    IC_KW = 2,
    IC_PH = 1,
    IC_PW = 0,
    IC_SH = 2,
    IC_SW = 1,
    IC_DH = 1,
    IC_DW = 2,
    IC_HC = (IC_H + 2 * IC_PH - (IC_DH * (IC_KH - 1) + 1)) / IC_SH + 1,
    IC_WC = (IC_W + 2 * IC_PW - (IC_DW * (IC_KW - 1) + 1)) / IC_SW + 1
};
static void make_im2col(void) { write_f32("im.npy", 501, 3, IC_C, IC_H, IC_W); }

static void verify_im2col(void)
{
    ks_tensor im = load("im.npy", KS_F32, 3, IC_C, IC_H, IC_W);
    ks_tensor col = load("saved/data_col.npy", KS_F32, 2, IC_C * IC_KH * IC_KW, IC_HC * IC_WC, 0);
    const int n = IC_C * IC_KH * IC_KW * IC_HC * IC_WC;
    double *want = malloc((size_t)n * sizeof *want);
    for (int c = 0; c < IC_C; ++c)
        for (int ki = 0; ki < IC_KH; ++ki)
            for (int kj = 0; kj < IC_KW; ++kj)
                for (int hc = 0; hc < IC_HC; ++hc)
                    for (int wc = 0; wc < IC_WC; ++wc) {
                        const int row = (c * IC_KH + ki) * IC_KW + kj;
                        const int h = hc * IC_SH - IC_PH + ki * IC_DH, w = wc * IC_SW - IC_PW + kj * IC_DW;
                        want[row * IC_HC * IC_WC + hc * IC_WC + wc] = h >= 0 && h < IC_H && w >= 0 && w < IC_W
                                                                          ? F(im)[(c * IC_H + h) * IC_W + w]
                                                                          : 0.0;
                    }
    tu_expect_close(F(col), want, n, 0.0, "data_col");
    free(want);
    ks_tensor_free(&im), ks_tensor_free(&col);
}

/* bilinear resize (3, 37, 53) -> (3, 50, 29), torch's align_corners=False: the source
 * coordinate (dst + 0.5) * in / out - 0.5, clamped at 0, computed in float as torch does */
enum { RS_C = 3, RS_IH = 37, RS_IW = 53, RS_OH = 50, RS_OW = 29 };
static void make_resize(void) { write_f32("img.npy", 601, 3, RS_C, RS_IH, RS_IW); }

static float rs_source(float scale, int dst)
{
    const float s = ((float)dst + 0.5f) * scale - 0.5f;
    return s < 0.0f ? 0.0f : s;
}

static void verify_resize(void)
{
    ks_tensor in = load("img.npy", KS_F32, 3, RS_C, RS_IH, RS_IW),
              out = load("saved/out.npy", KS_F32, 3, RS_C, RS_OH, RS_OW);
    double *want = malloc(RS_C * RS_OH * RS_OW * sizeof *want);
    for (int c = 0; c < RS_C; ++c)
        for (int oy = 0; oy < RS_OH; ++oy)
            for (int ox = 0; ox < RS_OW; ++ox) {
                const float sy = rs_source((float)RS_IH / RS_OH, oy), sx = rs_source((float)RS_IW / RS_OW, ox);
                const int y0 = (int)floorf(sy), x0 = (int)floorf(sx);
                const int y1 = y0 + 1 < RS_IH ? y0 + 1 : RS_IH - 1, x1 = x0 + 1 < RS_IW ? x0 + 1 : RS_IW - 1;
                const double ly = sy - y0, lx = sx - x0;
                const float *p = F(in) + c * RS_IH * RS_IW;
                want[(c * RS_OH + oy) * RS_OW + ox] = (1 - ly) *
                                                          ((1 - lx) * p[y0 * RS_IW + x0] + lx * p[y0 * RS_IW + x1]) +
                                                      ly * ((1 - lx) * p[y1 * RS_IW + x0] + lx * p[y1 * RS_IW + x1]);
            }
    tu_expect_close(F(out), want, RS_C * RS_OH * RS_OW, 1e-6, "out");
    free(want);
    ks_tensor_free(&in), ks_tensor_free(&out);
}

/* scale_shift<float, 4>: out = in * 1.5 - 0.25 over n = 1001 (250 float4 and one left) */
#define SS_N 1001
static void make_scale_shift(void) { write_f32("in.npy", 701, 1, SS_N, 0, 0); }

static void verify_scale_shift(void)
{
    ks_tensor in = load("in.npy", KS_F32, 1, SS_N, 0, 0), out = load("saved/out.npy", KS_F32, 1, SS_N, 0, 0);
    double *want = malloc(SS_N * sizeof *want);
    for (int i = 0; i < SS_N; ++i) want[i] = F(in)[i] * 1.5 - 0.25;
    tu_expect_close(F(out), want, SS_N, 2e-7, "out");
    free(want);
    ks_tensor_free(&in), ks_tensor_free(&out);
}

/* compaction of the positive elements of 1001 (1024 threads: the last warp part-full):
 * count is their number; out[0, count) holds each once, each warp's in input order
 * (the warps' order is the atomics' order: not checked); the rest of out stays 0 */
#define CP_N 1001
static void make_compact(void) { write_f32("in.npy", 801, 1, CP_N, 0, 0); }

static void verify_compact(void)
{
    ks_tensor in = load("in.npy", KS_F32, 1, CP_N, 0, 0), out = load("saved/out.npy", KS_F32, 1, CP_N, 0, 0);
    ks_tensor cnt = load("saved/count.npy", KS_I32, 1, 1, 0, 0);
    int want = 0;
    for (int i = 0; i < CP_N; ++i) want += F(in)[i] > 0.0f;
    ck_assert_int_eq(I(cnt)[0], want);
    unsigned char *used = calloc(CP_N, 1);
    for (int w = 0; w * 32 < CP_N; ++w) { /* the warp's kept elements: a run of out, in order */
        int at = -1;
        for (int l = 0; l < 32 && w * 32 + l < CP_N; ++l) {
            const float v = F(in)[w * 32 + l];
            if (!(v > 0.0f)) continue;
            if (at < 0)
                for (int k = 0; k < want && at < 0; ++k)
                    if (F(out)[k] == v && !used[k]) at = k;
            ck_assert_msg(at >= 0 && at < want && F(out)[at] == v,
                          "warp %d: in[%d] = %.9g is not at out[%d] (its place after the warp's earlier ones)", w,
                          w * 32 + l, v, at);
            used[at++] = 1;
        }
    }
    for (int k = 0; k < want; ++k) ck_assert_msg(used[k], "out[%d] = %.9g is no kept input", k, F(out)[k]);
    for (int k = want; k < CP_N; ++k) ck_assert_msg(F(out)[k] == 0.0f, "out[%d] = %.9g past the count", k, F(out)[k]);
    free(used);
    ks_tensor_free(&in), ks_tensor_free(&out), ks_tensor_free(&cnt);
}

/* saxpy4: y = 0.75 x + y, four elements a thread, n = 1001 (251 of 256 threads work) */
#define SX_N 1001
static void make_saxpy4(void)
{
    write_f32("x.npy", 901, 1, SX_N, 0, 0);
    write_f32("y.npy", 902, 1, SX_N, 0, 0);
}

static void verify_saxpy4(void)
{
    ks_tensor x = load("x.npy", KS_F32, 1, SX_N, 0, 0), y = load("y.npy", KS_F32, 1, SX_N, 0, 0);
    ks_tensor out = load("saved/y.npy", KS_F32, 1, SX_N, 0, 0);
    double *want = malloc(SX_N * sizeof *want);
    for (int i = 0; i < SX_N; ++i) want[i] = 0.75 * F(x)[i] + F(y)[i];
    tu_expect_close(F(out), want, SX_N, 2e-7, "y");
    free(want);
    ks_tensor_free(&x), ks_tensor_free(&y), ks_tensor_free(&out);
}

/* stencil3 in dynamic shared memory: out[i] = 0.25 in[i-1] + 0.5 in[i] - 0.75 in[i+1] */
#define ST_N 1001
static void make_stencil(void) { write_f32("in.npy", 1001, 1, ST_N, 0, 0); }

static void verify_stencil(void)
{
    ks_tensor in = load("in.npy", KS_F32, 1, ST_N, 0, 0), out = load("saved/out.npy", KS_F32, 1, ST_N, 0, 0);
    double *want = malloc(ST_N * sizeof *want);
    for (int i = 0; i < ST_N; ++i)
        want[i] = 0.25 * (i > 0 ? F(in)[i - 1] : 0.0f) + 0.5 * F(in)[i] - 0.75 * (i + 1 < ST_N ? F(in)[i + 1] : 0.0f);
    tu_expect_close(F(out), want, ST_N, 1e-6, "out");
    free(want);
    ks_tensor_free(&in), ks_tensor_free(&out);
}

/* One row a kernel: the file (under tests/cuda_c), the kernel, the launch, the --arg
 * flags (the @FILE.npy inputs are what make() writes), the reference, one thread of
 * `kscope step` whose output shows the source line `step_line` of one of its accesses,
 * and a shared array the trace holds. */
typedef struct kernel_row {
    const char *file, *kernel, *grid, *block;
    int shared;
    const char *args;
    void (*make)(void);
    void (*verify)(void);
    int step_thread;
    const char *step_line;
    const char *smem_array; /* a __shared__ array `kscope info` lists among the tensors, or NULL */
} kernel_row;

static const kernel_row kernels[] = {
    {"vadd.cu", "vadd", "3", "128", 0, "--arg a=@a.npy --arg b=@b.npy --arg c=empty:1001 --arg n=1001", make_vadd,
     verify_vadd, 3, "c[i] = a[i] + b[i];", NULL},
    {"transpose_naive.cu", "transpose_naive", "4,5", "16,8", 0,
     "--arg in=@in.npy --arg out=empty:53x37 --arg rows=37 --arg cols=53", make_transpose, verify_transpose, 20,
     "out[x * rows + y] = in[y * cols + x];", NULL},
    {"transpose_tiled.cu", "transpose_tiled", "2,2", "32,8", 0,
     "--arg in=@in.npy --arg out=empty:53x37 --arg rows=37 --arg cols=53", make_transpose, verify_transpose, 40,
     "tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];", "tile"},
    {"reduce_sum.cu", "reduce_sum", "5", "96", 0, "--arg in=@in.npy --arg out=empty:5 --arg n=2001", make_reduce,
     verify_reduce, 0, "out[blockIdx.x] = v;", "warp_sums"},
    {"histogram.cu", "histogram", "3", "48", 0, "--arg data=@data.npy --arg n=1001 --arg hist=zeros:64:i32",
     make_histogram, verify_histogram, 5, "atomicAdd(&bins[data[i] % NBINS], 1);", "bins"},
    {"im2col.cu", "im2col_gpu_kernel<float>", "2", "64", 0,
     "--arg n=189 --arg data_im=@im.npy --arg height=13 --arg width=11 --arg kernel_h=3 --arg kernel_w=2 "
     "--arg pad_h=1 --arg pad_w=0 --arg stride_h=2 --arg stride_w=1 --arg dilation_h=1 --arg dilation_w=2 "
     "--arg height_col=7 --arg width_col=9 --arg data_col=empty:18x63",
     make_im2col, verify_im2col, 7, "data_im_ptr[i * dilation_h * width + j * dilation_w] : 0;", NULL},
    {"resize_bilinear.cu", "resize_bilinear", "2,7,3", "16,8", 0,
     "--arg in=@img.npy --arg out=empty:3x50x29 --arg in_h=37 --arg in_w=53 --arg out_h=50 --arg out_w=29", make_resize,
     verify_resize, 17, "out[((size_t)c * out_h + oy) * out_w + ox] = h0lambda * top + h1lambda * bottom;", NULL},
    {"scale_shift.cu", "scale_shift<float, 4>", "2", "64", 0,
     "--arg in=@in.npy --arg out=empty:1001 --arg n=1001 --arg scale=1.5 --arg shift=-0.25", make_scale_shift,
     verify_scale_shift, 1, "V x = in_v[v];", NULL},
    {"compact.cu", "compact_positive", "8", "128", 0,
     "--arg in=@in.npy --arg n=1001 --arg out=zeros:1001 --arg count=zeros:1:i32", make_compact, verify_compact, 0,
     "base = atomicAdd(count, __popc(ballot));", NULL},
    {"saxpy4.cu", "saxpy4", "4", "64", 0, "--arg n=1001 --arg a=0.75 --arg x=@x.npy --arg y=@y.npy", make_saxpy4,
     verify_saxpy4, 2, "y[j] = a * x[j] + y[j];", NULL},
    {"stencil_dyn.cu", "stencil3", "8", "128", 520,
     "--arg in=@in.npy --arg out=empty:1001 --arg n=1001 --arg w0=0.25 --arg w1=0.5 --arg w2=-0.75", make_stencil,
     verify_stencil, 0, "out[g] = w0 * buf[s - 1] + w1 * buf[s] + w2 * buf[s + 1];", "buf"},
};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))

static int run_row(const kernel_row *k, const char *trace, const char *save)
{
    return kscope("run %s/%s --kernel '%s' --grid %s --block %s --shared %d %s --trace %s --save %s --quiet", CU_DIR,
                  k->file, k->kernel, k->grid, k->block, k->shared, k->args, trace, save);
}

/* two files with the same bytes */
static int same_bytes(const char *a, const char *b)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cmp -s %s/%s %s/%s", dir, a, dir, b);
    return system(cmd) == 0;
}

/* every buffer of the row: what --save writes */
static int row_buffers(const kernel_row *k, char names[][32], int max)
{
    int n = 0;
    for (const char *p = strstr(k->args, "--arg "); p && n < max; p = strstr(p + 1, "--arg ")) {
        const char *name = p + 6, *eq = strchr(name, '=');
        if (eq[1] == '@' || !strncmp(eq + 1, "zeros:", 6) || !strncmp(eq + 1, "empty:", 6))
            snprintf(names[n++], 32, "%.*s", (int)(eq - name), name);
    }
    return n;
}

START_TEST(kernel_runs_matches_reference_checks_and_steps)
{
    const kernel_row *k = &kernels[_i];
    char line[400];
    setup();
    fails[0] = 0;
    k->make();
    const int rc = run_row(k, "t.kst", "saved");
    ck_assert_msg(rc == 0, "%s: kscope run exited %d: %s", k->file, rc, first_line(slurp("err"), line, sizeof line));
    ck_assert_msg(exists("t.kst"), "%s: no trace", k->file);
    k->verify(); /* the outputs against the reference: a hard failure */

    const int crc = kscope("check t.kst");
    char *out = slurp_copy("out"), *err = slurp_copy("err");
    const char *fail = strstr(out, "FAIL");
    soft(crc == 0, "kscope check exited %d: %s", crc, first_line(fail ? fail : err, line, sizeof line));
    if (crc && fail && strchr(fail, '\n'))
        soft(0, "check's first finding: %s", first_line(strchr(fail, '\n') + 1, line, sizeof line));
    free(out), free(err);

    const int src = kscope("step t.kst --thread %d", k->step_thread);
    soft(src == 0, "kscope step --thread %d exited %d: %s", k->step_thread, src,
         first_line(slurp("err"), line, sizeof line));
    soft(strstr(slurp("out"), k->step_line) != NULL, "kscope step --thread %d does not show the source line '%s'",
         k->step_thread, k->step_line);

    if (k->smem_array) { /* `kscope info` lists the shared array among the tensors */
        const int irc = kscope("info t.kst");
        char want[64];
        snprintf(want, sizeof want, "\n  %s ", k->smem_array);
        soft(irc == 0 && strstr(slurp("out"), want), "kscope info exited %d and lists no tensor %s", irc,
             k->smem_array);
    }

    /* again, into other files: the same bytes */
    const int rc2 = run_row(k, "t2.kst", "saved2");
    soft(rc2 == 0, "the second run exited %d", rc2);
    soft(same_bytes("t.kst", "t2.kst"), "the second run's trace differs from the first's");
    char names[16][32], a[64], b[64];
    const int nb = row_buffers(k, names, 16);
    for (int i = 0; i < nb; ++i) {
        snprintf(a, sizeof a, "saved/%.31s.npy", names[i]);
        snprintf(b, sizeof b, "saved2/%.31s.npy", names[i]);
        soft(exists(a), "--save wrote no %s", a);
        soft(same_bytes(a, b), "the second run's %s differs from the first's", a);
    }
    ck_assert_msg(!fails[0], "%s (%s; files in %s): %s", k->file, k->kernel, dir, fails);
    cleanup();
}
END_TEST

/* ---- planted bugs: `kscope check` exits 1 naming them ---- */

static void make_bug_inputs(void)
{
    write_f32("x.npy", 1101, 1, 1001, 0, 0);
    write_f32("y.npy", 1102, 1, 1001, 0, 0);
    write_f32("m.npy", 1103, 2, TR_ROWS, TR_COLS, 0);
    write_i32("data.npy", 1104, 1001, 0, 999);
}

typedef struct bug_row {
    const char *file, *kernel, *launch; /* file under tests/cuda_c/bugs; --grid ... and --arg flags */
    int run_faults;                     /* kscope run itself exits 1 (a thread stopped) */
    const char *fragment;               /* what kscope check's findings say */
} bug_row;

static const bug_row bugs[] = {
    {"transpose_nosync.cu", "transpose_tiled",
     "--grid 2,2 --block 32,8 --arg in=@m.npy --arg out=empty:53x37 --arg rows=37 --arg cols=53", 0,
     "shared-memory race"},
    {"divergent_barrier.cu", "transpose_tiled",
     "--grid 2,2 --block 32,8 --arg in=@m.npy --arg out=empty:53x37 --arg rows=37 --arg cols=53", 0,
     "divergent barrier"},
    {"divergent_barrier_else.cu", "transpose_tiled",
     "--grid 2,2 --block 32,8 --arg in=@m.npy --arg out=empty:53x37 --arg rows=37 --arg cols=53", 0,
     "divergent barrier"},
    {"shared_oob.cu", "histogram", "--grid 3 --block 48 --arg data=@data.npy --arg n=1001 --arg hist=zeros:64:i32", 1,
     "outside"},
    {"dyn_shared_oob.cu", "stencil3",
     "--grid 8 --block 128 --shared 520 --arg in=@x.npy --arg out=empty:1001 --arg n=1001 --arg w0=0.25 --arg w1=0.5 "
     "--arg w2=-0.75",
     1, "outside"},
    {"global_oob.cu", "vadd", "--grid 8 --block 128 --arg a=@x.npy --arg b=@y.npy --arg c=empty:1001 --arg n=1001", 1,
     "outside"},
    {"global_race.cu", "downsample2", "--grid 8 --block 128 --arg in=@x.npy --arg out=empty:501 --arg n=1001", 0,
     "global-memory race"},
    {"uninit_read.cu", "accumulate", "--grid 8 --block 128 --arg a=@x.npy --arg out=empty:1001 --arg n=1001", 0,
     "never written"},
    {"shfl_mask.cu", "forward_diff", "--grid 8 --block 128 --arg in=@x.npy --arg out=empty:1001 --arg n=1001", 0,
     "mask"},
};
#define NBUGS ((int)(sizeof bugs / sizeof bugs[0]))

/* the fragment as a finding's words, not as a count of the summary line ("divergent
 * barriers 0" does not name a divergent barrier) */
static int names_finding(const char *text, const char *fragment)
{
    const size_t n = strlen(fragment);
    for (const char *p = strstr(text, fragment); p; p = strstr(p + 1, fragment))
        if (!(p[n] == 's' && p[n + 1] == ' ' && p[n + 2] >= '0' && p[n + 2] <= '9')) return 1;
    return 0;
}

START_TEST(planted_bug_is_found)
{
    const bug_row *b = &bugs[_i];
    char line[400];
    setup();
    fails[0] = 0;
    make_bug_inputs();
    const int rc = kscope("run %s/bugs/%s --kernel %s %s --trace t.kst --save saved --quiet", CU_DIR, b->file,
                          b->kernel, b->launch);
    char *err = slurp_copy("err");
    soft(b->run_faults ? rc == 1 : rc == 0, "kscope run exited %d, expected %d: %s", rc, b->run_faults,
         first_line(err, line, sizeof line));
    if (b->run_faults) soft(strstr(err, "kscope: run:") != NULL, "kscope run said nothing of the fault on stderr");
    free(err);
    ck_assert_msg(exists("t.kst"), "%s: kscope run exited %d and wrote no trace: %s%s", b->file, rc,
                  first_line(slurp("err"), line, sizeof line), fails);
    const int crc = kscope("check t.kst");
    char *out = slurp_copy("out");
    soft(crc == 1, "kscope check exited %d, expected 1", crc);
    soft(names_finding(out, b->fragment), "kscope check's output does not name '%s': %s", b->fragment,
         first_line(strstr(out, "FAIL") ? strstr(out, "FAIL") : out, line, sizeof line));
    if (!names_finding(out, b->fragment) && strstr(out, "FAIL") && strchr(strstr(out, "FAIL"), '\n'))
        soft(0, "its first finding: %s", first_line(strchr(strstr(out, "FAIL"), '\n') + 1, line, sizeof line));
    free(out);
    ck_assert_msg(!fails[0], "bugs/%s (files in %s): %s", b->file, dir, fails);
    cleanup();
}
END_TEST

/* ---- bad input: exit 2, one line on stderr, nothing written ---- */

static const struct {
    const char *args; /* after "run"; every row also gets --trace tb.kst --save ob */
    const char *fragment;
} bad[] = {
    {CU_DIR
     "/vadd.cu --kernel nosuch --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "no __global__ function 'nosuch'"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001",
     "missing --arg n"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001 --arg m=3",
     "no parameter 'm'"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001 --arg n=5",
     "--arg n given twice"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1",
     "--arg a given twice"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=3 --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "'a' is a pointer"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=zeros:4",
     "'n' is a scalar"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@i.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--arg a: the buffer holds int (i32), but 'a' points to float (f32)"},
    {CU_DIR "/histogram.cu --kernel histogram --grid 3 --block 48 --arg data=@i.npy --arg n=1001 --arg hist=zeros:64",
     "--arg hist: the buffer holds float (f32), but 'hist' points to int (i32)"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1.5",
     "integer"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=abc",
     "'abc' is neither a number nor a buffer"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:0x5 --arg n=1001",
     "bad SHAPE '0x5'"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:3x --arg n=1001",
     "bad SHAPE '3x'"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:abc --arg n=1001",
     "bad SHAPE 'abc'"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=zeros:1001:f16 --arg n=1001",
     "unknown dtype 'f16'"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --arg a=@nosuch.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "cannot open"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 0 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--grid"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3,0 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--grid"},
    {CU_DIR "/vadd.cu --kernel vadd --grid 3 --block 0 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--block"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 1025 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--block"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 41,25 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "1025 threads"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 1,1,65 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "z must be in 1..64"},
    {CU_DIR
     "/vadd.cu --kernel vadd --grid 3 --block 128 --shared 300000 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--shared"},
    {CU_DIR "/vadd.cu --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--kernel NAME is required"},
    {CU_DIR "/vadd.cu --kernel vadd --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "--grid and --block are required"},
    {"nosuch.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "cannot open"},
    {"binary.cu --kernel vadd --grid 3 --block 128 --arg a=@x.npy --arg b=@x.npy --arg c=empty:1001 --arg n=1001",
     "binary"},
    /* a template kernel named without its arguments, a kernel in a namespace without it:
     * one line that says how to name it, not errors in kscope's own entry code */
    {CU_DIR
     "/scale_shift.cu --kernel scale_shift --grid 2 --block 64 --arg in=@x.npy --arg out=empty:1001 --arg n=1001 "
     "--arg scale=2 --arg shift=1",
     "template"},
    {"ns.cu --kernel other::fill --grid 1 --block 32 --arg p=empty:20 --arg n=20 --arg v=3", "ops::fill"},
};
#define NBAD ((int)(sizeof bad / sizeof bad[0]))

static void make_bad_inputs(void)
{
    write_f32("x.npy", 1201, 1, 1001, 0, 0);
    write_i32("i.npy", 1202, 1001, 0, 9);
    char path[128];
    snprintf(path, sizeof path, "%s/binary.cu", dir); /* an object file's first bytes */
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x3e, 0};
    fwrite(elf, 1, sizeof elf, f);
    fputs("__global__ void vadd(const float *a, const float *b, float *c, int n) {}\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/ns.cu", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("namespace ops {\n__global__ void fill(float *p, int n, float v)\n{\n"
          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) p[i] = v;\n}\n}\n",
          f);
    fclose(f);
}

START_TEST(bad_input_exits_2_with_one_line_and_writes_nothing)
{
    setup();
    make_bad_inputs();
    const int rc = kscope("run %s --trace tb.kst --save ob", bad[_i].args);
    const char *err = slurp("err");
    ck_assert_msg(rc == 2, "'%s' exited %d (stderr: %s)", bad[_i].args, rc, err);
    ck_assert_msg(strstr(err, bad[_i].fragment), "'%s': expected '%s' in stderr: %s", bad[_i].args, bad[_i].fragment,
                  err);
    ck_assert_msg(!strncmp(err, "kscope: run: ", 13), "'%s': stderr does not start 'kscope: run: ': %s", bad[_i].args,
                  err);
    ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "'%s': not one line: %s", bad[_i].args, err);
    ck_assert_msg(!exists("tb.kst") && !exists("ob"), "'%s' left an output behind", bad[_i].args);
    cleanup();
}
END_TEST

/* a compile error: clang's diagnostic names the file and line, then kscope's one line */
START_TEST(compile_error_shows_clangs_diagnostic_and_exits_2)
{
    setup();
    char path[128];
    snprintf(path, sizeof path, "%s/broken.cu", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("__global__ void scale(float *p, int n)\n{\n    p[0] = n * ;\n}\n", f);
    fclose(f);
    const int rc = kscope(
        "run broken.cu --kernel scale --grid 1 --block 1 --arg p=zeros:4 --arg n=2 --trace tb.kst --save ob");
    const char *err = slurp("err");
    ck_assert_msg(rc == 2, "exited %d (stderr: %s)", rc, err);
    ck_assert_msg(strstr(err, "broken.cu:3:") && strstr(err, "error"), "no clang diagnostic at broken.cu:3: %s", err);
    const size_t n = strlen(err);
    ck_assert_msg(n && err[n - 1] == '\n', "stderr does not end a line: %s", err);
    const char *last = err + n - 1;
    while (last > err && last[-1] != '\n') --last;
    ck_assert_msg(!strncmp(last, "kscope:", 7) && strstr(last, "broken.cu"), "the last line is not kscope's: %s", last);
    ck_assert_msg(!exists("tb.kst") && !exists("ob"), "a compile error left an output behind");
    cleanup();
}
END_TEST

/* ---- faults: one line naming the thread and its line, exit 1, the trace up to there ---- */

typedef struct fault_row {
    const char *file, *kernel, *launch, *line, *say, *check;
} fault_row;

static const fault_row faults[] = {
    {"divzero.cu", "divide", "--grid 1 --block 8 --arg a=@a.npy --arg out=zeros:8:i32 --arg n=8", "divzero.cu:6",
     "thread (3,0,0) of block (0,0,0) divided an integer by zero", "integer division by zero"},
    {"overflow.cu", "recurse", "--grid 1 --block 4 --arg out=zeros:4:i32",
     "overflow.cu:", "thread (0,0,0) of block (0,0,0) overflowed its stack", "stack overflow"},
    {"spin.cu", "wait_flag", "--grid 1 --block 4 --arg flag=zeros:4:i32 --time-limit 1", "spin.cu:5",
     "was running when the time limit passed", "time limit"},
    {"asserts.cu", "checked", "--grid 1 --block 8 --arg a=@a.npy --arg out=zeros:8:i32", "asserts.cu:8",
     "thread (5,0,0) of block (0,0,0) failed an assert", "assert() failed"},
};
#define NFAULTS ((int)(sizeof faults / sizeof faults[0]))

START_TEST(fault_stops_with_one_line_and_keeps_the_trace)
{
    const fault_row *f = &faults[_i];
    setup();
    ks_tensor a = {.dtype = KS_I32, .ndim = 1, .shape = {8}};
    ck_assert_int_eq(ks_tensor_alloc(&a), KS_OK);
    for (int i = 0; i < 8; ++i) ((int32_t *)a.data)[i] = i; /* a[i] = i: thread 3 and 5 hit */
    write_tensor("a.npy", &a);
    const int rc = kscope("run %s/tests/cuda_c/faults/%s --kernel %s %s --trace t.kst --save o", KS_SOURCE_DIR, f->file,
                          f->kernel, f->launch);
    char *err = slurp_copy("err");
    ck_assert_msg(rc == 1, "%s: exited %d: %s", f->file, rc, err);
    ck_assert_msg(strstr(err, f->say) && strstr(err, f->line), "%s: stderr does not say '%s' at %s: %s", f->file,
                  f->say, f->line, err);
    ck_assert_msg(exists("t.kst") && exists("o"), "%s: no trace or outputs after the fault", f->file);
    free(err);
    ck_assert_int_eq(kscope("check t.kst"), 1);
    ck_assert_msg(strstr(slurp("out"), f->check), "%s: check does not report '%s': %s", f->file, f->check,
                  slurp("out"));
    if (!strcmp(f->file, "asserts.cu")) { /* the others ran on, and printf names each line's thread */
        kscope("run %s/tests/cuda_c/faults/%s --kernel %s %s --quiet", KS_SOURCE_DIR, f->file, f->kernel, f->launch);
        const char *out = slurp("out");
        ck_assert_msg(strstr(out, "[block (0,0,0) thread (7,0,0)] thread 7 sees 7") && !strstr(out, "sees 5"), "%s",
                      out);
    }
    cleanup();
}
END_TEST

/* __syncwarp() orders the lanes of a warp for check (no false race in the warp-synchronous
 * reduction; the same code without it races), and __activemask() past an early return
 * gives the lanes left, 0x000fffff for n = 20 */
START_TEST(warp_sync_orders_lanes_and_activemask_counts_the_live_ones)
{
    setup();
    write_f32("in.npy", 77, 1, 64, 0, 0);
    ck_assert_int_eq(kscope("run %s/tests/cuda_c/warp_sync.cu --kernel warpred --grid 1 --block 64 --arg in=@in.npy "
                            "--arg out=zeros:1 --trace w.kst --save o --quiet",
                            KS_SOURCE_DIR),
                     0);
    ks_tensor in = load("in.npy", KS_F32, 1, 64, 0, 0), out = load("o/out.npy", KS_F32, 1, 1, 0, 0);
    double want = 0;
    for (int i = 0; i < 32; ++i) want += ((float *)in.data)[i];
    ck_assert_msg(fabs(((float *)out.data)[0] - want) < 1e-4, "%g against %g", ((float *)out.data)[0], want);
    ks_tensor_free(&in), ks_tensor_free(&out);
    ck_assert_msg(kscope("check w.kst") == 0, "%s", slurp("out"));
    ck_assert_int_eq(kscope("run %s/tests/cuda_c/warp_sync.cu --kernel racy --grid 1 --block 64 --arg in=@in.npy "
                            "--arg out=zeros:1 --trace r.kst --quiet",
                            KS_SOURCE_DIR),
                     0);
    ck_assert_int_eq(kscope("check r.kst"), 1);
    ck_assert_msg(strstr(slurp("out"), "shared-memory race"), "%s", slurp("out"));
    ck_assert_int_eq(kscope("run %s/tests/cuda_c/warp_sync.cu --kernel am --grid 1 --block 32 --arg out=zeros:32:i32 "
                            "--arg n=20 --trace a.kst --save ao --quiet",
                            KS_SOURCE_DIR),
                     0);
    ks_tensor m = load("ao/out.npy", KS_I32, 1, 32, 0, 0);
    for (int i = 0; i < 32; ++i)
        ck_assert_msg((uint32_t)((int32_t *)m.data)[i] == (i < 20 ? 0x000fffffu : 0u), "lane %d: 0x%x", i,
                      (unsigned)((int32_t *)m.data)[i]);
    ks_tensor_free(&m);
    ck_assert_msg(kscope("check a.kst") == 0, "%s", slurp("out"));
    cleanup();
}
END_TEST

/* kscope diff of two .cu traces: the same file twice is equal (exit 0); the vector add
 * against its `i <= n` copy, another file whose lines differ, names the one thread that
 * reads past the end, at its read */
START_TEST(diff_lines_up_two_versions_of_a_file)
{
    setup();
    write_f32("x.npy", 11, 1, 1001, 0, 0);
    write_f32("y.npy", 12, 1, 1001, 0, 0);
    const char *args = "--grid 8 --block 128 --arg a=@x.npy --arg b=@y.npy --arg c=empty:1001 --arg n=1001";
    ck_assert_int_eq(kscope("run %s/tests/cuda_c/vadd.cu --kernel vadd %s --trace a.kst --quiet", KS_SOURCE_DIR, args),
                     0);
    ck_assert_int_eq(kscope("run %s/tests/cuda_c/vadd.cu --kernel vadd %s --trace a2.kst --quiet", KS_SOURCE_DIR, args),
                     0);
    ck_assert_int_eq(
        kscope("run %s/tests/cuda_c/bugs/global_oob.cu --kernel vadd %s --trace b.kst --quiet", KS_SOURCE_DIR, args),
        1);
    ck_assert_msg(kscope("diff a.kst a2.kst") == 0, "%s%s", slurp("out"), slurp("err"));
    ck_assert_int_eq(kscope("diff a.kst b.kst"), 1);
    const char *out = slurp("out");
    ck_assert_msg(strstr(out, "1 of 1024 work items differ") && strstr(out, "thread (105,0,0) of block (7,0,0)") &&
                      strstr(out, "OUTSIDE a"),
                  "%s", out);
    cleanup();
}
END_TEST

/* process, file and signal calls from a kernel stop the run with one line naming them,
 * and nothing is created (docs/cuda-c.md: a guard, not a sandbox) */
START_TEST(hostile_calls_are_refused)
{
    static const char *const kernels[] = {"forker", "shell", "writer", "sleeper"};
    static const char *const calls[] = {"fork()", "system()", "fopen()", "signal()"};
    setup();
    remove("/tmp/kscope_pwned");
    const int rc = kscope("run %s/tests/cuda_c/faults/hostile.cu --kernel %s --grid 1 --block 2 --arg o=zeros:2:i32 "
                          "--time-limit 5 --quiet",
                          KS_SOURCE_DIR, kernels[_i]);
    const char *err = slurp("err");
    ck_assert_msg(rc == 1 && strstr(err, calls[_i]) && strstr(err, "thread (0,0,0) of block (0,0,0)"),
                  "%s: exit %d: %s", kernels[_i], rc, err);
    ck_assert_msg(access("/tmp/kscope_pwned", F_OK) != 0, "%s created a file", kernels[_i]);
    cleanup();
}
END_TEST

/* The README's "Your own kernel" commands, as written, on examples/cuda_c/transpose.cu:
 * out is in transposed, check passes, step shows the thread's line of code, memory lists
 * the source lines */
START_TEST(readme_example_runs_end_to_end)
{
    setup();
    write_f32("in.npy", 3, 2, 53, 37, 0);
    ck_assert_msg(
        kscope("run %s/examples/cuda_c/transpose.cu --kernel transpose_tiled --grid 2,2 --block 32,8 "
               "--arg in=@in.npy --arg out=empty:37x53 --arg rows=53 --arg cols=37 --trace t.kst --save saved",
               KS_SOURCE_DIR) == 0,
        "%s", slurp("err"));
    ks_tensor in = load("in.npy", KS_F32, 2, 53, 37, 0), out = load("saved/out.npy", KS_F32, 2, 37, 53, 0);
    for (int r = 0; r < 53; ++r)
        for (int c = 0; c < 37; ++c) ck_assert(F(out)[c * 53 + r] == F(in)[r * 37 + c]);
    ks_tensor_free(&in), ks_tensor_free(&out);
    ck_assert_int_eq(kscope("step t.kst --block 1,0,0 --thread 3,2,0"), 0);
    ck_assert_msg(strstr(slurp("out"), "thread (3,2,0) of block (1,0,0)") &&
                      strstr(slurp("out"), "out[(r + k) * rows + c] = tile[threadIdx.x][threadIdx.y + k];"),
                  "%s", slurp("out"));
    ck_assert_msg(kscope("check t.kst") == 0, "%s", slurp("out"));
    ck_assert_int_eq(kscope("memory t.kst"), 0);
    ck_assert_msg(strstr(slurp("out"), "transpose.cu:34:"), "%s", slurp("out"));
    cleanup();
}
END_TEST

/* ---- clang ---- */

static int clang_major(const char *exe)
{
    char cmd[600], line[256];
    snprintf(cmd, sizeof cmd, "%s --version 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    int major = 0;
    if (fgets(line, sizeof line, p)) {
        const char *v = strstr(line, "clang version ");
        if (v) major = atoi(v + 14);
    }
    while (fgets(line, sizeof line, p)) {}
    pclose(p);
    return major;
}

/* the clang kscope would use (KSCOPE_CLANG, else the first of these names) */
static int have_clang(void)
{
    const char *env = getenv("KSCOPE_CLANG");
    if (env && *env) return clang_major(env) >= 16;
    static const char *const names[] = {"clang++-20", "clang++-19", "clang++-18",
                                        "clang++-17", "clang++-16", "clang++"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (clang_major(names[i]) >= 16) return 1;
    return 0;
}

int main(void)
{
    if (!have_clang()) {
        printf("test_cuda_c: skipped: kscope run FILE.cu needs clang 16 or newer (clang++-16 ... or KSCOPE_CLANG), "
               "and none was found\n");
        return 77;
    }
    Suite *s = suite_create("cuda_c");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, kernel_runs_matches_reference_checks_and_steps, 0, NKERNELS);
    suite_add_tcase(s, tc);
    TCase *tb = tcase_create("bugs");
    tcase_set_timeout(tb, 120);
    tcase_add_loop_test(tb, planted_bug_is_found, 0, NBUGS);
    tcase_add_loop_test(tb, fault_stops_with_one_line_and_keeps_the_trace, 0, NFAULTS);
    tcase_add_test(tb, warp_sync_orders_lanes_and_activemask_counts_the_live_ones);
    tcase_add_test(tb, diff_lines_up_two_versions_of_a_file);
    tcase_add_loop_test(tb, hostile_calls_are_refused, 0, 4);
    tcase_add_test(tb, readme_example_runs_end_to_end);
    suite_add_tcase(s, tb);
    TCase *ti = tcase_create("bad_input");
    tcase_set_timeout(ti, 120);
    tcase_add_loop_test(ti, bad_input_exits_2_with_one_line_and_writes_nothing, 0, NBAD);
    tcase_add_test(ti, compile_error_shows_clangs_diagnostic_and_exits_2);
    suite_add_tcase(s, ti);
    return tu_run_suite(s, CK_FORK);
}
