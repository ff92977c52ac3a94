/* sparse_conv_test.c - sparse_conv against oracles that share nothing with its kernels:
 * the rulebook against a brute force over every dense output position and offset, the
 * outputs against a direct dense convolution of the densified input (and the double
 * reference), gradients against finite differences; submanifold symmetry, the inverse
 * restoring the sites, zero-pair taps, empty tensors, small hash tables, traced == plain,
 * every kernel's trace passing check, and bad input. Random sites with fixed seeds, odd
 * sizes, batch 2, odd channel counts. */
#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../trace/check.h"
#include "../../trace/npy.h"
#include "../../trace/run_trace.h"
#include "../core/ks_error.h"
#include "../registry.h"
#include "sparse_conv_body.h"
#include "test_util.h"

typedef struct sp_case {
    int D, mode; /* ks_sparse_mode (not inverse) */
    int64_t B, S[3], k[3], s[3], p[3], d[3], op[3];
    int64_t cin, cout;
    int bias;
    double density;
} sp_case;

/* The geometries every oracle test walks: 2-D and 3-D, each mode, stride, dilation,
 * padding, even kernels, batch 2. */
static const sp_case cases[] = {
    {.D = 2,
     .mode = KS_SP_REGULAR,
     .B = 2,
     .S = {7, 9},
     .k = {3, 3},
     .s = {2, 2},
     .p = {1, 1},
     .d = {1, 1},
     .cin = 3,
     .cout = 5,
     .bias = 1,
     .density = 0.3},
    {.D = 2,
     .mode = KS_SP_REGULAR,
     .B = 1,
     .S = {9, 8},
     .k = {3, 2},
     .s = {1, 1},
     .p = {0, 1},
     .d = {2, 1},
     .cin = 2,
     .cout = 3,
     .density = 0.25},
    {.D = 2,
     .mode = KS_SP_REGULAR,
     .B = 2,
     .S = {5, 5},
     .k = {3, 3},
     .s = {2, 2},
     .p = {1, 1},
     .d = {1, 1},
     .cin = 1,
     .cout = 1,
     .density = 0.4},
    {.D = 2,
     .mode = KS_SP_REGULAR,
     .B = 1,
     .S = {11, 6},
     .k = {2, 3},
     .s = {3, 2},
     .p = {0, 2},
     .d = {1, 1},
     .cin = 4,
     .cout = 2,
     .bias = 1,
     .density = 0.2},
    {.D = 2,
     .mode = KS_SP_SUBM,
     .B = 2,
     .S = {8, 9},
     .k = {3, 3},
     .s = {1, 1},
     .d = {1, 1},
     .cin = 3,
     .cout = 5,
     .density = 0.3},
    {.D = 2,
     .mode = KS_SP_SUBM,
     .B = 1,
     .S = {9, 7},
     .k = {5, 3},
     .s = {1, 1},
     .d = {2, 1},
     .cin = 2,
     .cout = 3,
     .bias = 1,
     .density = 0.35},
    {.D = 2,
     .mode = KS_SP_SUBM,
     .B = 1,
     .S = {6, 7},
     .k = {2, 2},
     .s = {1, 1},
     .d = {1, 1},
     .cin = 1,
     .cout = 2,
     .density = 0.4},
    {.D = 2,
     .mode = KS_SP_TRANSPOSED,
     .B = 2,
     .S = {5, 4},
     .k = {3, 3},
     .s = {2, 2},
     .p = {1, 0},
     .d = {1, 1},
     .op = {1, 0},
     .cin = 3,
     .cout = 2,
     .density = 0.35},
    {.D = 2,
     .mode = KS_SP_TRANSPOSED,
     .B = 1,
     .S = {4, 5},
     .k = {2, 3},
     .s = {1, 1},
     .p = {0, 1},
     .d = {2, 2},
     .op = {1, 0},
     .cin = 2,
     .cout = 3,
     .bias = 1,
     .density = 0.4},
    {.D = 3,
     .mode = KS_SP_REGULAR,
     .B = 2,
     .S = {5, 6, 7},
     .k = {3, 3, 3},
     .s = {2, 2, 2},
     .p = {1, 1, 1},
     .d = {1, 1, 1},
     .cin = 3,
     .cout = 4,
     .density = 0.15},
    {.D = 3,
     .mode = KS_SP_REGULAR,
     .B = 1,
     .S = {6, 5, 7},
     .k = {3, 2, 3},
     .s = {1, 1, 1},
     .p = {1, 0, 2},
     .d = {1, 2, 2},
     .cin = 2,
     .cout = 3,
     .bias = 1,
     .density = 0.2},
    {.D = 3,
     .mode = KS_SP_SUBM,
     .B = 2,
     .S = {5, 5, 6},
     .k = {3, 3, 3},
     .s = {1, 1, 1},
     .d = {1, 1, 1},
     .cin = 3,
     .cout = 3,
     .density = 0.2},
    {.D = 3,
     .mode = KS_SP_TRANSPOSED,
     .B = 1,
     .S = {3, 4, 3},
     .k = {3, 3, 2},
     .s = {2, 2, 2},
     .p = {1, 0, 0},
     .d = {1, 1, 1},
     .op = {1, 0, 1},
     .cin = 2,
     .cout = 2,
     .density = 0.3},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static ks_run R;

static void set_axes(const char *name, int D, const int64_t *v)
{
    char t[64];
    if (D == 2) snprintf(t, sizeof t, "%lld,%lld", (long long)v[0], (long long)v[1]);
    else snprintf(t, sizeof t, "%lld,%lld,%lld", (long long)v[0], (long long)v[1], (long long)v[2]);
    ck_assert_msg(ks_run_set(&R, name, t) == KS_OK, "--%s %s: %s", name, t, ks_error_message());
}

/* Random unique sites (each cell active with probability `density`), in shuffled order. */
static void random_sites(ks_tensor *t, const sp_case *c, uint64_t *s)
{
    const int D = c->D;
    int64_t cells = c->B;
    for (int a = 0; a < D; ++a) cells *= c->S[a];
    int32_t *rows = malloc((size_t)cells * (size_t)(D + 1) * 4);
    int64_t n = 0;
    for (int64_t cell = 0; cell < cells; ++cell) {
        if ((double)(tu_next(s) >> 11) / 9007199254740992.0 >= c->density) continue;
        int64_t rest = cell;
        for (int a = D - 1; a >= 0; --a) rows[n * (D + 1) + 1 + a] = (int32_t)(rest % c->S[a]), rest /= c->S[a];
        rows[n * (D + 1)] = (int32_t)rest;
        n++;
    }
    for (int64_t i = n - 1; i > 0; --i) { /* shuffle: the input order is not sorted */
        const int64_t j = tu_int(s, 0, i);
        for (int q = 0; q <= D; ++q) {
            const int32_t x = rows[i * (D + 1) + q];
            rows[i * (D + 1) + q] = rows[j * (D + 1) + q], rows[j * (D + 1) + q] = x;
        }
    }
    t->dtype = KS_I32, t->ndim = 2, t->shape[0] = n, t->shape[1] = D + 1;
    ck_assert_int_eq(ks_tensor_alloc(t), KS_OK);
    memcpy(t->data, rows, (size_t)n * (size_t)(D + 1) * 4);
    free(rows);
}

/* Runs case c through the registry on the simulator: random sites, features, weight,
 * bias and grad_out (pattern random, seed), --backward; traced when asked. */
static void sp_run(const sp_case *c, uint64_t seed, int traced, const char *trace_kernel)
{
    ks_run_init(&R, ks_op_find("sparse_conv"));
    set_axes("spatial-shape", c->D, c->S);
    set_axes("kernel-size", c->D, c->k);
    if (c->mode != KS_SP_SUBM) {
        set_axes("stride", c->D, c->s);
        set_axes("padding", c->D, c->p);
    }
    set_axes("dilation", c->D, c->d);
    if (c->mode == KS_SP_TRANSPOSED) set_axes("output-padding", c->D, c->op);
    ck_assert_int_eq(ks_run_set(&R, "subm", c->mode == KS_SP_SUBM ? "on" : "off"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "transposed", c->mode == KS_SP_TRANSPOSED ? "on" : "off"), KS_OK);
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)c->B);
    ck_assert_int_eq(ks_run_set(&R, "batch-size", t), KS_OK);
    snprintf(t, sizeof t, "%lld", (long long)c->cin);
    ck_assert_int_eq(ks_run_set(&R, "in-channels", t), KS_OK);
    snprintf(t, sizeof t, "%lld", (long long)c->cout);
    ck_assert_int_eq(ks_run_set(&R, "out-channels", t), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "bias", c->bias ? "on" : "off"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "backward", "on"), KS_OK);
    if (trace_kernel) ck_assert_int_eq(ks_run_set(&R, "trace-kernel", trace_kernel), KS_OK);
    uint64_t s = seed;
    random_sites(&R.tensor[KS_SP_T_INDICES], c, &s);
    R.pattern = KS_PAT_RANDOM;
    R.seed = seed;
    if (traced) ck_assert_ptr_nonnull(R.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s", ks_error_message());
}

static void sp_done(void)
{
    ks_host_sink_free(R.sink);
    R.sink = NULL;
    ks_run_free(&R);
}

/* ---- the brute-force oracle ----------------------------------------------------------- */

/* Dense cell index of (b, coordinates) in shape S. */
static int64_t cell_of(int D, int64_t b, const int64_t *c, const int64_t *S)
{
    int64_t k = b;
    for (int a = 0; a < D; ++a) k = k * S[a] + c[a];
    return k;
}

/* Every pair, found from the output side: for each dense output position o and offset k,
 * the input position the definition names, if it is an active site. Fills the expected
 * output sites (sorted by cell, or the input's for submanifold) and pair_count, and checks
 * the operator's rulebook holds exactly those pairs. */
static void expect_brute_force_rulebook(const sp_case *c)
{
    const ks_sparse_geom *g = ks_sparse_geom_of(&R);
    const int D = c->D;
    const int64_t n = g->n_in, K = g->kvol;
    const int32_t *ix = R.tensor[KS_SP_T_INDICES].data;
    int64_t in_cells = c->B, out_cells = c->B;
    for (int a = 0; a < D; ++a) in_cells *= g->in_shape[a], out_cells *= g->out_shape[a];
    int32_t *in_row = malloc((size_t)in_cells * 4), *out_row = malloc((size_t)out_cells * 4);
    memset(in_row, 0xff, (size_t)in_cells * 4);
    memset(out_row, 0xff, (size_t)out_cells * 4);
    for (int64_t i = 0; i < n; ++i) {
        int64_t cc[3];
        for (int a = 0; a < D; ++a) cc[a] = ix[i * (D + 1) + 1 + a];
        in_row[cell_of(D, ix[i * (D + 1)], cc, g->in_shape)] = (int32_t)i;
    }
    /* pass 1: which output cells get a pair; pass 2 numbers them and lists the pairs */
    int32_t *want = malloc((size_t)(n * K + 1) * 3 * 4);
    int32_t *count = calloc((size_t)K, 4);
    int64_t np = 0, m = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int64_t cell = 0; cell < out_cells; ++cell) {
            int64_t o[3], rest = cell;
            for (int a = D - 1; a >= 0; --a) o[a] = rest % g->out_shape[a], rest /= g->out_shape[a];
            const int64_t b = rest;
            if (c->mode == KS_SP_SUBM && in_row[cell] < 0) continue; /* outputs are the input sites */
            if (pass == 1 && out_row[cell] < 0) continue;
            for (int64_t k = 0; k < K; ++k) {
                int64_t tap[3], r2 = k, i[3];
                for (int a = D - 1; a >= 0; --a) tap[a] = r2 % c->k[a], r2 /= c->k[a];
                int ok = 1;
                for (int a = 0; a < D && ok; ++a) {
                    if (c->mode == KS_SP_SUBM) i[a] = o[a] + (tap[a] - c->k[a] / 2) * c->d[a];
                    else if (c->mode == KS_SP_REGULAR) i[a] = o[a] * c->s[a] - c->p[a] + tap[a] * c->d[a];
                    else { /* transposed: o = i*s - p + k*d */ const int64_t num = o[a] + c->p[a] - tap[a] * c->d[a];
                        ok = num >= 0 && num % c->s[a] == 0;
                        i[a] = num / c->s[a];
                    }
                    ok = ok && i[a] >= 0 && i[a] < g->in_shape[a];
                }
                if (!ok) continue;
                const int32_t src = in_row[cell_of(D, b, i, g->in_shape)];
                if (src < 0) continue;
                if (pass == 0) {
                    out_row[cell] = 1;
                } else {
                    want[3 * np] = (int32_t)k, want[3 * np + 1] = src, want[3 * np + 2] = out_row[cell];
                    count[k]++, np++;
                }
            }
            if (pass == 0 && out_row[cell] >= 0) out_row[cell] = c->mode == KS_SP_SUBM ? in_row[cell] : (int32_t)m++;
        }
    if (c->mode == KS_SP_SUBM) m = n;
    ck_assert_int_eq(R.tensor[KS_SP_T_OUT_INDICES].shape[0], m);
    ck_assert_int_eq(R.tensor[KS_SP_T_RULEBOOK].shape[0], np);
    /* output sites: the input's (subm) or ascending cells */
    const int32_t *oi = R.tensor[KS_SP_T_OUT_INDICES].data;
    for (int64_t r = 0; r < m; ++r) {
        int64_t oc[3];
        for (int a = 0; a < D; ++a) oc[a] = oi[r * (D + 1) + 1 + a];
        ck_assert_msg(out_row[cell_of(D, oi[r * (D + 1)], oc, g->out_shape)] == r, "out_indices row %lld",
                      (long long)r);
    }
    /* the rulebook: the same pairs, sorted by (k, in_row) */
    const int32_t *rb = R.tensor[KS_SP_T_RULEBOOK].data;
    for (int64_t p = 1; p < np; ++p)
        ck_assert_msg(rb[3 * p] > rb[3 * p - 3] || (rb[3 * p] == rb[3 * p - 3] && rb[3 * p + 1] > rb[3 * p - 2]),
                      "rulebook row %lld out of order", (long long)p);
    for (int64_t p = 0; p < np; ++p) {
        int64_t q = 0;
        while (q < np && !(rb[3 * q] == want[3 * p] && rb[3 * q + 1] == want[3 * p + 1])) ++q;
        ck_assert_msg(q < np && rb[3 * q + 2] == want[3 * p + 2], "pair (k %d, in %d, out %d) missing", want[3 * p],
                      want[3 * p + 1], want[3 * p + 2]);
    }
    const int32_t *pc = R.tensor[KS_SP_T_PAIR_COUNT].data;
    for (int64_t k = 0; k < K; ++k) ck_assert_int_eq(pc[k], count[k]);
    free(in_row), free(out_row), free(want), free(count);
}

/* out at every output site against a direct dense convolution of the densified input */
static void expect_dense_convolution(const sp_case *c)
{
    const ks_sparse_geom *g = ks_sparse_geom_of(&R);
    const int D = c->D;
    const int64_t n = g->n_in, m = g->n_out, Ci = c->cin, Co = c->cout;
    const int32_t *ix = R.tensor[KS_SP_T_INDICES].data, *oi = R.tensor[KS_SP_T_OUT_INDICES].data;
    const float *f = R.tensor[KS_SP_T_FEATURES].data, *w = R.tensor[KS_SP_T_WEIGHT].data;
    const float *bias = c->bias ? R.tensor[KS_SP_T_BIAS].data : NULL;
    int64_t in_cells = c->B;
    for (int a = 0; a < D; ++a) in_cells *= g->in_shape[a];
    double *dense = calloc((size_t)(in_cells * Ci), sizeof *dense);
    for (int64_t i = 0; i < n; ++i) {
        int64_t cc[3];
        for (int a = 0; a < D; ++a) cc[a] = ix[i * (D + 1) + 1 + a];
        const int64_t cell = cell_of(D, ix[i * (D + 1)], cc, g->in_shape);
        for (int64_t ci = 0; ci < Ci; ++ci) dense[cell * Ci + ci] = f[i * Ci + ci];
    }
    double *want = malloc((size_t)(m * Co + 1) * sizeof *want);
    for (int64_t r = 0; r < m; ++r) {
        int64_t o[3];
        for (int a = 0; a < D; ++a) o[a] = oi[r * (D + 1) + 1 + a];
        for (int64_t co = 0; co < Co; ++co) want[r * Co + co] = bias ? bias[co] : 0.0;
        for (int64_t k = 0; k < g->kvol; ++k) {
            int64_t tap[3], rest = k, i[3];
            for (int a = D - 1; a >= 0; --a) tap[a] = rest % c->k[a], rest /= c->k[a];
            int ok = 1;
            for (int a = 0; a < D && ok; ++a) {
                if (c->mode == KS_SP_SUBM) i[a] = o[a] + (tap[a] - c->k[a] / 2) * c->d[a];
                else if (c->mode == KS_SP_REGULAR) i[a] = o[a] * c->s[a] - c->p[a] + tap[a] * c->d[a];
                else {
                    const int64_t num = o[a] + c->p[a] - tap[a] * c->d[a];
                    ok = num >= 0 && num % c->s[a] == 0;
                    i[a] = num / c->s[a];
                }
                ok = ok && i[a] >= 0 && i[a] < g->in_shape[a];
            }
            if (!ok) continue;
            const double *x = dense + cell_of(D, oi[r * (D + 1)], i, g->in_shape) * Ci;
            for (int64_t ci = 0; ci < Ci; ++ci)
                for (int64_t co = 0; co < Co; ++co) want[r * Co + co] += x[ci] * w[(k * Ci + ci) * Co + co];
        }
    }
    tu_expect_close(R.tensor[KS_SP_T_OUT_FEATURES].data, want, m * Co, 1e-5, "out_features");
    free(dense), free(want);
}

/* gradients against the double reference */
static void expect_reference_gradients(void)
{
    const ks_sparse_geom *g = ks_sparse_geom_of(&R);
    const int64_t Ci = g->c_in, Co = g->c_out;
    double *gf = malloc((size_t)(g->n_in * Ci + 1) * 8), *gw = malloc((size_t)(g->kvol * Ci * Co) * 8),
           *gb = malloc((size_t)Co * 8);
    ks_sparse_ref_backward(g, R.tensor[KS_SP_T_RULEBOOK].data, g->pairs, R.tensor[KS_SP_T_FEATURES].data,
                           R.tensor[KS_SP_T_WEIGHT].data, R.tensor[KS_SP_T_GRAD_OUT].data, gf, gw, gb);
    tu_expect_close(R.tensor[KS_SP_T_GRAD_FEATURES].data, gf, g->n_in * Ci, 1e-5, "grad_features");
    tu_expect_close(R.tensor[KS_SP_T_GRAD_WEIGHT].data, gw, g->kvol * Ci * Co, 1e-5, "grad_weight");
    if (g->use_bias) tu_expect_close(R.tensor[KS_SP_T_GRAD_BIAS].data, gb, Co, 1e-5, "grad_bias");
    free(gf), free(gw), free(gb);
}

START_TEST(rulebook_matches_a_brute_force_from_every_output_position)
{
    sp_run(&cases[_i], 100 + (uint64_t)_i, 0, NULL);
    ck_assert_msg(R.tensor[KS_SP_T_RULEBOOK].shape[0] > 0, "case %d has no pairs: not a test", _i);
    expect_brute_force_rulebook(&cases[_i]);
    sp_done();
}
END_TEST

START_TEST(forward_matches_a_dense_convolution_and_gradients_the_reference)
{
    sp_run(&cases[_i], 200 + (uint64_t)_i, 0, NULL);
    expect_dense_convolution(&cases[_i]);
    expect_reference_gradients();
    sp_done();
}
END_TEST

/* d/dx of L = sum(out * grad_out), by central differences on the double reference's
 * forward, against the operator's grad_features and grad_weight */
START_TEST(gradients_match_finite_differences)
{
    const sp_case *c = &cases[_i];
    sp_run(c, 300 + (uint64_t)_i, 0, NULL);
    const ks_sparse_geom *g = ks_sparse_geom_of(&R);
    const int64_t Ci = g->c_in, Co = g->c_out, m = g->n_out;
    float *f = R.tensor[KS_SP_T_FEATURES].data, *w = R.tensor[KS_SP_T_WEIGHT].data;
    const float *go = R.tensor[KS_SP_T_GRAD_OUT].data, *bias = c->bias ? R.tensor[KS_SP_T_BIAS].data : NULL;
    double *out = malloc((size_t)(m * Co + 1) * 8);
    uint64_t s = 7;
    for (int probe = 0; probe < 12; ++probe) {
        const int on_weight = probe % 2;
        float *x = on_weight ? w + tu_int(&s, 0, g->kvol * Ci * Co - 1) : f + tu_int(&s, 0, g->n_in * Ci - 1);
        const float keep = *x, h = 1.0f / 64; /* exact in float: the loss is linear in x */
        double L[2];
        for (int side = 0; side < 2; ++side) {
            *x = keep + (side ? h : -h);
            ks_sparse_ref_forward(g, R.tensor[KS_SP_T_RULEBOOK].data, g->pairs, f, w, bias, out);
            L[side] = 0;
            for (int64_t q = 0; q < m * Co; ++q) L[side] += out[q] * go[q];
        }
        *x = keep;
        const double fd = (L[1] - L[0]) / (2 * h);
        const float *grad = on_weight ? R.tensor[KS_SP_T_GRAD_WEIGHT].data : R.tensor[KS_SP_T_GRAD_FEATURES].data;
        const float got = grad[x - (on_weight ? w : f)];
        ck_assert_msg(fabs(got - fd) <= 1e-4 * (1 + fabs(fd)), "%s: %g, finite difference %g",
                      on_weight ? "grad_weight" : "grad_features", got, fd);
    }
    free(out);
    sp_done();
}
END_TEST

/* a 3x3x3 submanifold: the centre tap pairs every site with itself, and offset k has as
 * many pairs as offset 26 - k (a neighbour one way is a neighbour the other way); an
 * isolated site has only its centre pair */
START_TEST(submanifold_centre_counts_every_site_and_counts_mirror)
{
    const sp_case c = {.D = 3,
                       .mode = KS_SP_SUBM,
                       .B = 2,
                       .S = {7, 6, 5},
                       .k = {3, 3, 3},
                       .s = {1, 1, 1},
                       .d = {1, 1, 1},
                       .cin = 2,
                       .cout = 2,
                       .density = 0.2};
    sp_run(&c, 77, 0, NULL);
    const int32_t *pc = R.tensor[KS_SP_T_PAIR_COUNT].data;
    const int64_t n = R.tensor[KS_SP_T_INDICES].shape[0];
    ck_assert_int_eq(pc[13], n);
    for (int k = 0; k < 27; ++k) ck_assert_int_eq(pc[k], pc[26 - k]);
    /* isolated sites: rows whose only pair is the centre */
    const int32_t *rb = R.tensor[KS_SP_T_RULEBOOK].data;
    int *pairs = calloc((size_t)n, sizeof *pairs), isolated = 0;
    for (int64_t p = 0; p < R.tensor[KS_SP_T_RULEBOOK].shape[0]; ++p) pairs[rb[3 * p + 2]]++;
    for (int64_t i = 0; i < n; ++i) isolated += pairs[i] == 1;
    ck_assert_msg(isolated > 0, "the scene has no isolated site to test");
    expect_brute_force_rulebook(&c);
    free(pairs);
    sp_done();
}
END_TEST

/* a regular conv, then --inverse with its rulebook: the outputs are the original sites
 * in their original order, and the values the reversed pairs give */
START_TEST(inverse_restores_the_original_sites)
{
    const sp_case c = cases[9]; /* 3-D, stride 2 */
    sp_run(&c, 55, 0, NULL);
    ks_tensor rb = R.tensor[KS_SP_T_RULEBOOK], oi = R.tensor[KS_SP_T_OUT_INDICES], ix = R.tensor[KS_SP_T_INDICES];
    memset(&R.tensor[KS_SP_T_RULEBOOK], 0, sizeof rb), memset(&R.tensor[KS_SP_T_OUT_INDICES], 0, sizeof oi);
    memset(&R.tensor[KS_SP_T_INDICES], 0, sizeof ix);
    ks_run_free(&R);
    ks_run_init(&R, ks_op_find("sparse_conv"));
    set_axes("spatial-shape", 3, c.S), set_axes("kernel-size", 3, c.k), set_axes("stride", 3, c.s);
    set_axes("padding", 3, c.p), set_axes("dilation", 3, c.d);
    ck_assert_int_eq(ks_run_set(&R, "inverse", "on"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "in-channels", "4"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "out-channels", "3"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "backward", "on"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "batch-size", "2"), KS_OK);
    snprintf(rb.name, sizeof rb.name, "rulebook"), snprintf(oi.name, sizeof oi.name, "indices");
    snprintf(ix.name, sizeof ix.name, "inverse_indices");
    R.tensor[KS_SP_T_RULEBOOK] = rb, R.tensor[KS_SP_T_INDICES] = oi, R.tensor[KS_SP_T_INVERSE_INDICES] = ix;
    R.pattern = KS_PAT_RANDOM, R.seed = 9;
    ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s", ks_error_message());
    ck_assert(!memcmp(R.tensor[KS_SP_T_OUT_INDICES].data, ix.data, (size_t)ks_tensor_numel(&ix) * 4));
    const ks_sparse_geom *g = ks_sparse_geom_of(&R);
    double *want = malloc((size_t)(g->n_out * g->c_out + 1) * 8);
    /* the forward reference here reads the pairs reversed (mode inverse) */
    ks_sparse_ref_forward(g, rb.data, g->pairs, R.tensor[KS_SP_T_FEATURES].data, R.tensor[KS_SP_T_WEIGHT].data, NULL,
                          want);
    tu_expect_close(R.tensor[KS_SP_T_OUT_FEATURES].data, want, g->n_out * g->c_out, 1e-5, "inverse out_features");
    expect_reference_gradients();
    free(want);
    sp_done();
}
END_TEST

/* an offset no pair goes through has exactly zero weight gradient (spconv 1.2.1 leaves
 * it uninitialised) */
START_TEST(taps_without_pairs_have_zero_weight_gradient)
{
    const sp_case c = {.D = 2,
                       .mode = KS_SP_REGULAR,
                       .B = 1,
                       .S = {3, 3},
                       .k = {5, 5},
                       .s = {1, 1},
                       .p = {0, 0},
                       .d = {1, 1},
                       .cin = 2,
                       .cout = 3,
                       .density = 0.05};
    int zero_taps = 0;
    for (uint64_t seed = 1; seed < 40 && !zero_taps; ++seed) {
        sp_case cc = c;
        cc.S[0] = cc.S[1] = 5;
        sp_run(&cc, seed, 0, NULL);
        const int32_t *pc = R.tensor[KS_SP_T_PAIR_COUNT].data;
        const float *gw = R.tensor[KS_SP_T_GRAD_WEIGHT].data;
        for (int k = 0; k < 25; ++k) {
            if (pc[k]) continue;
            zero_taps++;
            for (int q = 0; q < 6; ++q) ck_assert(gw[k * 6 + q] == 0.0f);
        }
        sp_done();
    }
    ck_assert_msg(zero_taps > 0, "no seed gave a tap without pairs");
}
END_TEST

START_TEST(an_empty_sparse_tensor_gives_empty_outputs)
{
    for (int mode = 0; mode < 3; ++mode) {
        sp_case c = cases[mode == 0 ? 0 : mode == 1 ? 4 : 7];
        c.density = 0; /* no site */
        sp_run(&c, 1, 1, NULL);
        ck_assert_int_eq(R.tensor[KS_SP_T_OUT_FEATURES].shape[0], 0);
        ck_assert_int_eq(R.tensor[KS_SP_T_RULEBOOK].shape[0], 0);
        ck_assert_int_eq(ks_sink_count(R.sink), 0);
        sp_done();
    }
}
END_TEST

/* a hash table just above the sites collides (lookups probe several slots) and gives the
 * same rulebook and outputs as a roomy one */
START_TEST(small_hash_tables_collide_but_give_the_same_results)
{
    const sp_case *c = &cases[4]; /* subm 2-D */
    sp_run(c, 42, 0, NULL);
    const int64_t P = R.tensor[KS_SP_T_RULEBOOK].shape[0], n = R.tensor[KS_SP_T_INDICES].shape[0];
    int32_t *rb = malloc((size_t)P * 12);
    memcpy(rb, R.tensor[KS_SP_T_RULEBOOK].data, (size_t)P * 12);
    sp_done();
    int64_t slots = 1;
    while (slots <= n) slots *= 2;
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)slots);
    sp_run(c, 42, 0, NULL); /* the sites of seed 42 again, kept for a traced run with the small table */
    ks_tensor ix = R.tensor[KS_SP_T_INDICES];
    memset(&R.tensor[KS_SP_T_INDICES], 0, sizeof ix);
    sp_done();
    ks_run_init(&R, ks_op_find("sparse_conv"));
    set_axes("spatial-shape", 2, c->S), set_axes("kernel-size", 2, c->k);
    ck_assert_int_eq(ks_run_set(&R, "subm", "on"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "hash-slots", t), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "batch-size", "2"), KS_OK);
    R.tensor[KS_SP_T_INDICES] = ix;
    ck_assert_ptr_nonnull(R.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s", ks_error_message());
    ck_assert(!memcmp(R.tensor[KS_SP_T_RULEBOOK].data, rb, (size_t)P * 12));
    int longest = 0; /* the most probes of one lookup */
    for (unsigned long long e = 0; e < ks_sink_count(R.sink); ++e) {
        const ks_event *ev = &R.sink->events[e];
        if (ev->kind == KS_EV_READ && ev->site == KS_SP_S_PROBE && ev->tap + 1 > longest) longest = ev->tap + 1;
    }
    ck_assert_msg(longest >= 2, "a table of %lld slots for %lld sites never collided", (long long)slots, (long long)n);
    free(rb);
    sp_done();
}
END_TEST

/* the hash table holds the same keys in the same slots whatever order the sites come in
 * (ordered linear probing), so a GPU's thread order cannot change it; a lookup stops at
 * a smaller key */
START_TEST(the_hash_table_does_not_depend_on_the_order_of_the_sites)
{
    const sp_case *c = &cases[11]; /* 3-D subm */
    int64_t *keys[2] = {NULL, NULL}, T = 0;
    for (int reversed = 0; reversed < 2; ++reversed) {
        sp_run(c, 11, 0, NULL);
        if (reversed) { /* the same sites backwards, in a fresh run */
            ks_tensor ix = R.tensor[KS_SP_T_INDICES];
            memset(&R.tensor[KS_SP_T_INDICES], 0, sizeof ix);
            sp_done();
            const int64_t n = ix.shape[0];
            for (int64_t i = 0; i < n / 2; ++i)
                for (int q = 0; q < 4; ++q) {
                    int32_t *r = ix.data, x = r[i * 4 + q];
                    r[i * 4 + q] = r[(n - 1 - i) * 4 + q], r[(n - 1 - i) * 4 + q] = x;
                }
            ks_run_init(&R, ks_op_find("sparse_conv"));
            set_axes("spatial-shape", 3, c->S), set_axes("kernel-size", 3, c->k);
            ck_assert_int_eq(ks_run_set(&R, "subm", "on"), KS_OK);
            ck_assert_int_eq(ks_run_set(&R, "batch-size", "2"), KS_OK);
            R.tensor[KS_SP_T_INDICES] = ix;
            ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s", ks_error_message());
        }
        T = R.tensor[KS_SP_T_HASH_KEYS].shape[0];
        keys[reversed] = malloc((size_t)T * 8);
        memcpy(keys[reversed], R.tensor[KS_SP_T_HASH_KEYS].data, (size_t)T * 8);
        sp_done();
    }
    ck_assert(!memcmp(keys[0], keys[1], (size_t)T * 8));
    /* and the runs are ordered: along a probe run from a key's home, larger keys only */
    int runs = 0;
    for (int64_t s = 0; s < T; ++s) {
        const int64_t k = keys[0][s];
        if (k < 0) continue;
        for (int64_t q = ks_sparse_hash(k, __builtin_ctzll((unsigned long long)T)); q != s; q = (q + 1) % T) {
            ck_assert_msg(keys[0][q] > k, "slot %lld (key %lld) before key %lld's slot %lld", (long long)q,
                          (long long)keys[0][q], (long long)k, (long long)s);
            runs++;
        }
    }
    ck_assert_msg(runs > 0, "no key was displaced: the test shows nothing");
    free(keys[0]), free(keys[1]);
}
END_TEST

/* each kernel a trace can record: its outputs equal the plain run's, and check finds
 * every invariant holding (each pair_table and out_features element written once, the
 * rulebook fields' formulas) */
START_TEST(traced_equals_plain_and_every_kernel_trace_passes_check)
{
    static const char *kernels[] = {"rulebook", "insert", "gather", "reduce"};
    for (int ci = 0; ci < NCASES; ci += 3)
        for (int k = 0; k < 4; ++k) {
            sp_run(&cases[ci], 500 + (uint64_t)ci, 0, NULL);
            const int64_t n = ks_tensor_numel(&R.tensor[KS_SP_T_OUT_FEATURES]);
            float *plain = malloc((size_t)(n + 1) * 4);
            memcpy(plain, R.tensor[KS_SP_T_OUT_FEATURES].data, (size_t)n * 4);
            sp_done();
            sp_run(&cases[ci], 500 + (uint64_t)ci, 1, kernels[k]);
            ck_assert(!memcmp(plain, R.tensor[KS_SP_T_OUT_FEATURES].data, (size_t)n * 4));
            static ks_trace tr;
            ks_check_report rep;
            ks_trace_from_run(R.op, &R, &tr);
            ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
            ck_assert_msg(rep.violations == 0, "case %d, %s: %s", ci, kernels[k], rep.first[0]);
            ck_assert_msg(rep.complete, "case %d, %s: incomplete", ci, kernels[k]);
            free(plain);
            sp_done();
        }
}
END_TEST

/* bad input: one error naming the problem, nothing run */
START_TEST(bad_input_is_refused)
{
    static const struct {
        const char *flags[6]; /* name, value pairs */
        int32_t rows[3][3];   /* 2-D sites (batch, y, x) */
        int nrows;
        const char *why;
    } bad[] = {
        {{"spatial-shape", "5,5"}, {{0, 1, 1}, {0, 2, 2}, {0, 1, 1}}, 3, "repeats an earlier site"},
        {{"spatial-shape", "5,5"}, {{0, 1, 1}, {0, 5, 2}}, 2, "outside 0..4"},
        {{"spatial-shape", "5,5", "batch-size", "1"}, {{1, 1, 1}}, 1, "batch 1 outside 0..0"},
        {{"spatial-shape", "5,5", "subm", "on", "stride", "2"}, {{0, 1, 1}}, 1, "takes no --stride"},
        {{"spatial-shape", "5,5,5"}, {{0, 1, 1}}, 1, "indices must have shape (n, 4)"},
        {{"spatial-shape", "5,5", "kernel-size", "7"}, {{0, 1, 1}}, 1, "space would be empty"},
        {{"spatial-shape", "5,5", "output-padding", "1"}, {{0, 1, 1}}, 1, "for --transposed only"},
        {{"spatial-shape", "5,5", "transposed", "on", "output-padding", "1"}, {{0, 1, 1}}, 1, "below the stride"},
        {{"spatial-shape", "5,5", "inverse", "on"}, {{0, 1, 1}}, 1, "--inverse needs --in rulebook"},
        {{"spatial-shape", "5,5", "hash-slots", "6"}, {{0, 1, 1}}, 1, "power of two"},
        {{"spatial-shape", "5,5", "kernel-size", "3,3,3"}, {{0, 1, 1}}, 1, "has 3 values"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
        ks_run_init(&R, ks_op_find("sparse_conv"));
        for (int f = 0; f < 6 && bad[b].flags[f]; f += 2)
            ck_assert_msg(ks_run_set(&R, bad[b].flags[f], bad[b].flags[f + 1]) == KS_OK, "%s", ks_error_message());
        ks_tensor *t = &R.tensor[KS_SP_T_INDICES];
        t->dtype = KS_I32, t->ndim = 2, t->shape[0] = bad[b].nrows, t->shape[1] = 3;
        ck_assert_int_eq(ks_tensor_alloc(t), KS_OK);
        memcpy(t->data, bad[b].rows, (size_t)bad[b].nrows * 12);
        ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
        ck_assert_msg(strstr(ks_error_message(), bad[b].why), "case %zu: %s", b, ks_error_message());
        ks_run_free(&R);
    }
    /* a float index tensor, a features/indices row mismatch, a weight of the wrong kernel */
    ks_run_init(&R, ks_op_find("sparse_conv"));
    ks_tensor_shape(&R.tensor[KS_SP_T_INDICES], 2, 3, 3, 0, 0);
    ck_assert_int_eq(ks_tensor_alloc(&R.tensor[KS_SP_T_INDICES]), KS_OK);
    ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "must be int32"), "%s", ks_error_message());
    ks_run_free(&R);
    ks_run_init(&R, ks_op_find("sparse_conv"));
    ks_tensor_shape(&R.tensor[KS_SP_T_FEATURES], 2, 5, 1, 0, 0); /* the ring has more sites */
    ck_assert_int_eq(ks_tensor_alloc(&R.tensor[KS_SP_T_FEATURES]), KS_OK);
    ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "features has 5 rows"), "%s", ks_error_message());
    ks_run_free(&R);
    ks_run_init(&R, ks_op_find("sparse_conv"));
    int64_t ws[4] = {3, 2, 1, 1};
    ks_run_shape(&R, KS_SP_T_WEIGHT, 4, ws);
    R.tensor[KS_SP_T_WEIGHT].dtype = KS_F32;
    ck_assert_int_eq(ks_tensor_alloc(&R.tensor[KS_SP_T_WEIGHT]), KS_OK);
    ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "kernel axis 1 is 2"), "%s", ks_error_message());
    ks_run_free(&R);
}
END_TEST

/* a rulebook that cannot be a convolution's is refused by --inverse */
START_TEST(inverse_refuses_a_rulebook_that_does_not_fit)
{
    static const int32_t rows[][3] = {{0, 0, 0}, {0, 1, 0}}; /* offset 0 pairs input row 0 twice */
    static const int32_t sites[][3] = {{0, 1, 1}, {0, 2, 2}};
    ks_run_init(&R, ks_op_find("sparse_conv"));
    ck_assert_int_eq(ks_run_set(&R, "spatial-shape", "5,5"), KS_OK);
    ck_assert_int_eq(ks_run_set(&R, "inverse", "on"), KS_OK);
    ks_tensor *rb = &R.tensor[KS_SP_T_RULEBOOK], *ix = &R.tensor[KS_SP_T_INDICES],
              *ii = &R.tensor[KS_SP_T_INVERSE_INDICES];
    const ks_tensor *ts[3] = {rb, ix, ii};
    const void *data[3] = {rows, sites, sites};
    for (int q = 0; q < 3; ++q) {
        ks_tensor *t = (ks_tensor *)ts[q];
        t->dtype = KS_I32, t->ndim = 2, t->shape[0] = 2, t->shape[1] = 3;
        ck_assert_int_eq(ks_tensor_alloc(t), KS_OK);
        memcpy(t->data, data[q], 24);
    }
    ck_assert_int_eq(ks_run_execute(&R), KS_EINVAL);
    ck_assert_msg(strstr(ks_error_message(), "pairs a row twice"), "%s", ks_error_message());
    ks_run_free(&R);
}
END_TEST

static ks_tensor golden(const char *name, const char *what)
{
    char path[512];
    ks_tensor t;
    snprintf(path, sizeof path, "%s/tests/golden/%s_%s.npy", KS_SOURCE_DIR, name, what);
    ck_assert_msg(ks_npy_read(path, &t) == KS_OK, "%s", ks_error_message());
    snprintf(t.name, sizeof t.name, "%s", what);
    return t;
}

static void expect_golden(const ks_tensor *got, const char *name, const char *what)
{
    ks_tensor want = golden(name, what);
    ck_assert_int_eq(ks_tensor_numel(&want), ks_tensor_numel(got));
    ck_assert_int_eq(want.dtype, got->dtype);
    const int64_t n = ks_tensor_numel(&want);
    if (want.dtype == KS_I32) {
        ck_assert_msg(!memcmp(want.data, got->data, (size_t)n * 4), "%s: %s differs from torch", name, what);
    } else {
        const float *w = want.data, *g = got->data;
        for (int64_t i = 0; i < n; ++i)
            ck_assert_msg(fabsf(w[i] - g[i]) <= 1e-5f * (1 + fabsf(w[i])), "%s: %s[%lld] = %.9g, torch %.9g", name,
                          what, (long long)i, g[i], w[i]);
    }
    ks_tensor_free(&want);
}

/* torch dense conv / conv_transpose in float64 on the densified inputs, gathered at the
 * active output sites, and autograd's gradients (tests/golden/make_sparse_golden.py) */
START_TEST(sparse_conv_matches_torch_golden_data)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/golden", KS_SOURCE_DIR);
    char *text = tu_slurp(path, "sparse_conv.json");
    cJSON *root = cJSON_Parse(text); /* text: tu_slurp's buffer */
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "cases"), *c;
    ck_assert_int_ge(cJSON_GetArraySize(list), 8);
    cJSON_ArrayForEach(c, list)
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
        ks_run_init(&R, ks_op_find("sparse_conv"));
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(c, "flags"))
        {
            char v[64];
            if (cJSON_IsBool(f)) snprintf(v, sizeof v, "%s", cJSON_IsTrue(f) ? "on" : "off");
            else if (cJSON_IsNumber(f)) snprintf(v, sizeof v, "%d", f->valueint);
            else snprintf(v, sizeof v, "%s", f->valuestring);
            ck_assert_msg(ks_run_set(&R, f->string, v) == KS_OK, "%s: %s", name, ks_error_message());
        }
        ck_assert_int_eq(ks_run_set(&R, "backward", "on"), KS_OK);
        R.tensor[KS_SP_T_FEATURES] = golden(name, "features");
        R.tensor[KS_SP_T_INDICES] = golden(name, "indices");
        R.tensor[KS_SP_T_WEIGHT] = golden(name, "weight");
        R.tensor[KS_SP_T_GRAD_OUT] = golden(name, "grad_out");
        snprintf(R.tensor[KS_SP_T_GRAD_OUT].name, KS_NAME_LEN, "grad_out_features");
        const int bias = cJSON_IsTrue(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "flags"), "bias"));
        if (bias) R.tensor[KS_SP_T_BIAS] = golden(name, "bias");
        ck_assert_msg(ks_run_execute(&R) == KS_OK, "%s: %s", name, ks_error_message());
        ck_assert_int_eq(R.tensor[KS_SP_T_RULEBOOK].shape[0], cJSON_GetObjectItemCaseSensitive(c, "pairs")->valueint);
        expect_golden(&R.tensor[KS_SP_T_OUT_INDICES], name, "out_indices");
        expect_golden(&R.tensor[KS_SP_T_OUT_FEATURES], name, "out_features");
        expect_golden(&R.tensor[KS_SP_T_GRAD_FEATURES], name, "grad_features");
        expect_golden(&R.tensor[KS_SP_T_GRAD_WEIGHT], name, "grad_weight");
        if (bias) expect_golden(&R.tensor[KS_SP_T_GRAD_BIAS], name, "grad_bias");
        ks_run_free(&R);
    }
    cJSON_Delete(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sparse_conv");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, rulebook_matches_a_brute_force_from_every_output_position, 0, NCASES);
    tcase_add_loop_test(tc, forward_matches_a_dense_convolution_and_gradients_the_reference, 0, NCASES);
    tcase_add_loop_test(tc, gradients_match_finite_differences, 0, NCASES);
    tcase_add_test(tc, submanifold_centre_counts_every_site_and_counts_mirror);
    tcase_add_test(tc, inverse_restores_the_original_sites);
    tcase_add_test(tc, taps_without_pairs_have_zero_weight_gradient);
    tcase_add_test(tc, an_empty_sparse_tensor_gives_empty_outputs);
    tcase_add_test(tc, small_hash_tables_collide_but_give_the_same_results);
    tcase_add_test(tc, the_hash_table_does_not_depend_on_the_order_of_the_sites);
    tcase_add_test(tc, traced_equals_plain_and_every_kernel_trace_passes_check);
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, inverse_refuses_a_rulebook_that_does_not_fit);
    tcase_add_test(tc, sparse_conv_matches_torch_golden_data);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
