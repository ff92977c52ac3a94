/* pz_specs.c - the fourteen puzzles and their references (plain C, sums in double).
 * Sizes are odd or leave threads over on purpose: a guard that is off by one shows. */
#include <stddef.h>
#include <string.h>

#include "pz_spec.h"

#define VEC(n)                            \
    {                                     \
        .rows = 1, .cols = (n), .ndim = 1 \
    }
#define MAT(r, c)                           \
    {                                       \
        .rows = (r), .cols = (c), .ndim = 2 \
    }

/* map, guard, map2d, blocks, blocks2d, shared: out[i] = a[i] + 10 (2-D: element by element) */
static void ref_add10(const pz_spec *s, const float *a, const float *b, float *want)
{
    (void)b;
    for (int64_t i = 0; i < s->out.rows * s->out.cols; ++i) want[i] = a[i] + 10.0f;
}

/* zip: out[i] = a[i] + b[i] */
static void ref_zip(const pz_spec *s, const float *a, const float *b, float *want)
{
    for (int64_t i = 0; i < s->out.cols; ++i) want[i] = a[i] + b[i];
}

/* broadcast: a [size, 1], b [1, size] -> out [size, size], out[r][c] = a[r] + b[c] */
static void ref_broadcast(const pz_spec *s, const float *a, const float *b, float *want)
{
    for (int64_t r = 0; r < s->out.rows; ++r)
        for (int64_t c = 0; c < s->out.cols; ++c) want[r * s->out.cols + c] = a[r] + b[c];
}

/* pooling: out[i] = a[i - 2] + a[i - 1] + a[i], the terms before a[0] left out */
static void ref_pooling(const pz_spec *s, const float *a, const float *b, float *want)
{
    (void)b;
    for (int64_t i = 0; i < s->out.cols; ++i) {
        double sum = 0;
        for (int64_t k = i - 2; k <= i; ++k)
            if (k >= 0) sum += a[k];
        want[i] = (float)sum;
    }
}

/* dot: out[0] = sum over i of a[i] * b[i] */
static void ref_dot(const pz_spec *s, const float *a, const float *b, float *want)
{
    double sum = 0;
    for (int64_t i = 0; i < s->a.cols; ++i) sum += (double)a[i] * b[i];
    want[0] = (float)sum;
}

/* conv1d: a [size], b [kernel] -> out [size], out[i] = sum over j of a[i + j] * b[j],
 * a read as 0 past its end */
static void ref_conv1d(const pz_spec *s, const float *a, const float *b, float *want)
{
    for (int64_t i = 0; i < s->out.cols; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < s->b.cols && i + j < s->a.cols; ++j) sum += (double)a[i + j] * b[j];
        want[i] = (float)sum;
    }
}

/* prefix_sum: out[i] = a[0] + ... + a[i] (inclusive scan) */
static void ref_prefix_sum(const pz_spec *s, const float *a, const float *b, float *want)
{
    (void)b;
    double sum = 0;
    for (int64_t i = 0; i < s->out.cols; ++i) want[i] = (float)(sum += a[i]);
}

/* axis_sum: a [rows, cols] -> out [rows], out[r] = sum over c of a[r][c] */
static void ref_axis_sum(const pz_spec *s, const float *a, const float *b, float *want)
{
    (void)b;
    for (int64_t r = 0; r < s->a.rows; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < s->a.cols; ++c) sum += a[r * s->a.cols + c];
        want[r] = (float)sum;
    }
}

/* matmul: a [n, n] @ b [n, n] -> out [n, n] */
static void ref_matmul(const pz_spec *s, const float *a, const float *b, float *want)
{
    const int64_t n = s->size;
    for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < n; ++c) {
            double sum = 0;
            for (int64_t k = 0; k < n; ++k) sum += (double)a[r * n + k] * b[k * n + c];
            want[r * n + c] = (float)sum;
        }
}

#define SIG(name, params) "__global__ void " name "(" params ")"
#define SIZE(n) .size = (n), .ints = {"size"}, .values = {(n)}

static const pz_spec specs[] = {
    {.name = "map",
     .title = "out[i] = a[i] + 10, one thread per element",
     .teaches = "a thread's index",
     .grid = {1, 1},
     .block = {5, 1},
     SIZE(5),
     .a = VEC(5),
     .out = VEC(5),
     .max_reads = 1,
     .signature = SIG("map", "const float *a, float *out, int size"),
     .reference = ref_add10},
    {.name = "zip",
     .title = "out[i] = a[i] + b[i]",
     .teaches = "two inputs",
     .grid = {1, 1},
     .block = {5, 1},
     SIZE(5),
     .a = VEC(5),
     .b = VEC(5),
     .out = VEC(5),
     .max_reads = 2,
     .signature = SIG("zip", "const float *a, const float *b, float *out, int size"),
     .reference = ref_zip},
    {.name = "guard",
     .title = "out[i] = a[i] + 10 with more threads than elements",
     .teaches = "a bounds guard",
     .grid = {1, 1},
     .block = {8, 1},
     SIZE(5),
     .a = VEC(5),
     .out = VEC(5),
     .max_reads = 1,
     .signature = SIG("guard", "const float *a, float *out, int size"),
     .reference = ref_add10},
    {.name = "map2d",
     .title = "out[r][c] = a[r][c] + 10 on a 3 x 3 array, a 4 x 4 block",
     .teaches = "threadIdx.x and threadIdx.y",
     .grid = {1, 1},
     .block = {4, 4},
     SIZE(3),
     .a = MAT(3, 3),
     .out = MAT(3, 3),
     .max_reads = 1,
     .signature = SIG("map2d", "const float *a, float *out, int size"),
     .reference = ref_add10},
    {.name = "broadcast",
     .title = "out[r][c] = a[r] + b[c]: a column plus a row",
     .teaches = "broadcasting",
     .grid = {1, 1},
     .block = {4, 4},
     SIZE(3),
     .a = MAT(3, 1),
     .b = MAT(1, 3),
     .out = MAT(3, 3),
     .max_reads = 2,
     .signature = SIG("broadcast", "const float *a, const float *b, float *out, int size"),
     .reference = ref_broadcast},
    {.name = "blocks",
     .title = "out[i] = a[i] + 10 over 3 blocks of 4 threads",
     .teaches = "blockIdx and blockDim",
     .grid = {3, 1},
     .block = {4, 1},
     SIZE(9),
     .a = VEC(9),
     .out = VEC(9),
     .max_reads = 1,
     .signature = SIG("blocks", "const float *a, float *out, int size"),
     .reference = ref_add10},
    {.name = "blocks2d",
     .title = "out[r][c] = a[r][c] + 10 on 5 x 5, 2 x 2 blocks of 3 x 3",
     .teaches = "2-D block and thread indices",
     .grid = {2, 2},
     .block = {3, 3},
     SIZE(5),
     .a = MAT(5, 5),
     .out = MAT(5, 5),
     .max_reads = 1,
     .signature = SIG("blocks2d", "const float *a, float *out, int size"),
     .reference = ref_add10},
    {.name = "shared",
     .title = "out[i] = a[i] + 10 through a shared tile",
     .teaches = "__shared__ and __syncthreads",
     .shared = 1,
     .grid = {3, 1},
     .block = {4, 1},
     SIZE(10),
     .a = VEC(10),
     .out = VEC(10),
     .max_reads = 1,
     .signature = SIG("shared", "const float *a, float *out, int size"),
     .reference = ref_add10},
    {.name = "pooling",
     .title = "out[i] = a[i-2] + a[i-1] + a[i], one global read a thread",
     .teaches = "neighbours through shared memory",
     .shared = 1,
     .grid = {1, 1},
     .block = {16, 1},
     SIZE(11),
     .a = VEC(11),
     .out = VEC(11),
     .max_reads = 1,
     .signature = SIG("pooling", "const float *a, float *out, int size"),
     .reference = ref_pooling},
    {.name = "dot",
     .title = "out[0] = sum of a[i] * b[i], one write",
     .teaches = "a block reduction",
     .shared = 1,
     .grid = {1, 1},
     .block = {16, 1},
     SIZE(11),
     .a = VEC(11),
     .b = VEC(11),
     .out = VEC(1),
     .max_reads = 2,
     .signature = SIG("dot", "const float *a, const float *b, float *out, int size"),
     .reference = ref_dot},
    {.name = "conv1d",
     .title = "out[i] = sum of a[i+j] * b[j], j < 4, over 2 blocks",
     .teaches = "a tile with a halo",
     .shared = 1,
     .grid = {2, 1},
     .block = {8, 1},
     .size = 15,
     .ints = {"a_size", "b_size"},
     .values = {15, 4},
     .a = VEC(15),
     .b = VEC(4),
     .out = VEC(15),
     .max_reads = 3,
     .signature = SIG("conv1d", "const float *a, const float *b, float *out, int a_size, int b_size"),
     .reference = ref_conv1d},
    {.name = "prefix_sum",
     .title = "out[i] = a[0] + ... + a[i] in one block",
     .teaches = "a scan in log steps, two barriers a step",
     .shared = 1,
     .grid = {1, 1},
     .block = {16, 1},
     SIZE(13),
     .a = VEC(13),
     .out = VEC(13),
     .max_reads = 1,
     .signature = SIG("prefix_sum", "const float *a, float *out, int size"),
     .reference = ref_prefix_sum},
    {.name = "axis_sum",
     .title = "out[r] = sum of row r of a 5 x 7 array, a block a row",
     .teaches = "one reduction per block, blockIdx.y",
     .shared = 1,
     .grid = {1, 5},
     .block = {8, 1},
     SIZE(7),
     .a = MAT(5, 7),
     .out = VEC(5),
     .max_reads = 1,
     .signature = SIG("axis_sum", "const float *a, float *out, int size"),
     .reference = ref_axis_sum},
    {.name = "matmul",
     .title = "out = a @ b, 7 x 7, in 3 x 3 tiles",
     .teaches = "a tiled matrix product",
     .shared = 1,
     .grid = {3, 3},
     .block = {3, 3},
     SIZE(7),
     .a = MAT(7, 7),
     .b = MAT(7, 7),
     .out = MAT(7, 7),
     .max_reads = 6,
     .signature = SIG("matmul", "const float *a, const float *b, float *out, int size"),
     .reference = ref_matmul},
};

const pz_spec *pz_specs(int *n)
{
    *n = (int)(sizeof specs / sizeof specs[0]);
    return specs;
}

const pz_spec *pz_find(const char *name)
{
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i)
        if (!strcmp(specs[i].name, name)) return &specs[i];
    return NULL;
}
