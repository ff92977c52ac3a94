/* pz_specs.c - the thirteen puzzles and their references (plain C, sums in double).
 * Sizes are odd or leave threads over on purpose: a guard that is off by one shows. */
#include <stddef.h>
#include <string.h>

#include "pz_spec.h"

#define VEC(n) {.rows = 1, .cols = (n), .ndim = 1}
#define MAT(r, c) {.rows = (r), .cols = (c), .ndim = 2}

/* map, guard, blocks, shared: out[i] = a[i] + 10 */
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

static const pz_spec specs[] = {
    {.name = "map", .title = "out[i] = a[i] + 10, one thread per element",
     .teaches = "a thread's index", .threads = 5, .blocks = 1, .size = 5, .a = VEC(5), .out = VEC(5),
     .max_reads = 1, .reference = ref_add10},
    {.name = "zip", .title = "out[i] = a[i] + b[i]", .teaches = "two inputs", .threads = 5, .blocks = 1,
     .size = 5, .a = VEC(5), .b = VEC(5), .out = VEC(5), .max_reads = 2, .reference = ref_zip},
    {.name = "guard", .title = "out[i] = a[i] + 10 with more threads than elements",
     .teaches = "a bounds guard", .threads = 8, .blocks = 1, .size = 5, .a = VEC(5), .out = VEC(5),
     .max_reads = 1, .reference = ref_add10},
    {.name = "map2d", .title = "out[r][c] = a[r][c] + 10 on a 3 x 3 array, a 4 x 4 block",
     .teaches = "2-D indices from a thread number", .threads = 16, .blocks = 1, .size = 3, .a = MAT(3, 3),
     .out = MAT(3, 3), .max_reads = 1, .reference = ref_add10},
    {.name = "broadcast", .title = "out[r][c] = a[r] + b[c]: a column plus a row",
     .teaches = "broadcasting", .threads = 16, .blocks = 1, .size = 3, .a = MAT(3, 1), .b = MAT(1, 3),
     .out = MAT(3, 3), .max_reads = 2, .reference = ref_broadcast},
    {.name = "blocks", .title = "out[i] = a[i] + 10 over 3 blocks of 4 threads",
     .teaches = "block and thread index", .threads = 4, .blocks = 3, .size = 9, .a = VEC(9), .out = VEC(9),
     .max_reads = 1, .reference = ref_add10},
    {.name = "shared", .title = "out[i] = a[i] + 10 through a shared tile",
     .teaches = "KS_SHARED and ks_syncthreads", .shared = 1, .threads = 4, .blocks = 3, .size = 10,
     .a = VEC(10), .out = VEC(10), .max_reads = 1, .reference = ref_add10},
    {.name = "pooling", .title = "out[i] = a[i-2] + a[i-1] + a[i], one global read a thread",
     .teaches = "neighbours through shared memory", .shared = 1, .threads = 16, .blocks = 1, .size = 11,
     .a = VEC(11), .out = VEC(11), .max_reads = 1, .reference = ref_pooling},
    {.name = "dot", .title = "out[0] = sum of a[i] * b[i], one write",
     .teaches = "a block reduction", .shared = 1, .threads = 16, .blocks = 1, .size = 11, .a = VEC(11),
     .b = VEC(11), .out = VEC(1), .max_reads = 2, .reference = ref_dot},
    {.name = "conv1d", .title = "out[i] = sum of a[i+j] * b[j], j < 4, over 2 blocks",
     .teaches = "a tile with a halo", .shared = 1, .threads = 8, .blocks = 2, .size = 15, .a = VEC(15),
     .b = VEC(4), .out = VEC(15), .max_reads = 3, .reference = ref_conv1d},
    {.name = "prefix_sum", .title = "out[i] = a[0] + ... + a[i] in one block",
     .teaches = "a scan in log steps, two barriers a step", .shared = 1, .threads = 16, .blocks = 1,
     .size = 13, .a = VEC(13), .out = VEC(13), .max_reads = 1, .reference = ref_prefix_sum},
    {.name = "axis_sum", .title = "out[r] = sum of row r of a 5 x 7 array, a block a row",
     .teaches = "one reduction per block", .shared = 1, .threads = 8, .blocks = 5, .size = 7,
     .a = MAT(5, 7), .out = VEC(5), .max_reads = 1, .reference = ref_axis_sum},
    {.name = "matmul", .title = "out = a @ b, 7 x 7, in 3 x 3 tiles",
     .teaches = "a tiled matrix product", .shared = 1, .threads = 9, .blocks = 9, .size = 7, .a = MAT(7, 7),
     .b = MAT(7, 7), .out = MAT(7, 7), .max_reads = 6, .reference = ref_matmul},
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
