/* sparse_conv_plan.c - sparse convolution run on one device, in three phases that both
 * the operator (registry buffers, sizes known from prepare) and the C API (the plan sizes
 * and allocates what it is not given, as spconv does) use:
 *   build     output sites into the hash table, one lookup per (offset, site), the
 *             rulebook compacted in (offset, in_row) order, pair positions per side
 *   forward   gather, one GEMM per offset, the ordered reduce (+ bias)
 *   backward  grad_bias, grad_weight[k] = gathered_k^T G_k, grad_features by the reduce
 * The kernels are rows (ks_sparse_rows, below) run in order through one sequence (ks_exec:
 * the registry's, or the C API's own), which sizes, picks 32-bit, traces the one row asked
 * and checks each launch on either device. The device's own steps between them (sort,
 * scan, GEMM, memory) come through ks_sparse_backend: the simulator's are here, the GPU's
 * in sparse_conv_cuda.cu. */
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../core/ks_gemm.h"
#include "../core/ks_probe.h"
#include "../core/ks_sim.h"
#include "sparse_conv_body.h"

/* every step goes through this: the first failure stops the rest */
#define STEP(call)            \
    do {                      \
        if (!rc) rc = (call); \
    } while (0)

/* ---- geometry --------------------------------------------------------------------- */

int ks_sparse_geom_init(ks_sparse_geom *g, int ndim, int mode, int64_t batch, const int64_t *spatial,
                        const int64_t *kernel, const int64_t *stride, const int64_t *pad, const int64_t *dilation,
                        const int64_t *out_pad, int64_t n_in, int64_t c_in, int64_t c_out, int use_bias)
{
    memset(g, 0, sizeof *g);
    if (ndim != 2 && ndim != 3) return ks_fail(KS_EINVAL, "the space needs 2 or 3 axes (got %d)", ndim);
    if (mode < KS_SP_REGULAR || mode > KS_SP_INVERSE)
        return ks_fail(KS_EINVAL, "unknown sparse convolution mode %d", mode);
    if (batch < 1 || batch > ((int64_t)1 << 30))
        return ks_fail(KS_EINVAL, "batch size must be in 1..2^30 (got %lld)", (long long)batch);
    if (n_in < 0 || n_in > INT32_MAX)
        return ks_fail(KS_EINVAL, "sites must be in 0..2^31-1 (got %lld)", (long long)n_in);
    if (c_in < 1 || c_out < 1 || c_in > (1 << 24) || c_out > (1 << 24))
        return ks_fail(KS_EINVAL, "channels must be in 1..2^24 (got %lld, %lld)", (long long)c_in, (long long)c_out);
    g->ndim = ndim, g->mode = mode, g->batch = batch, g->use_bias = use_bias != 0;
    g->n_in = n_in, g->n_out = -1, g->pairs = -1, g->c_in = c_in, g->c_out = c_out;
    g->kvol = 1;
    const int64_t big = (int64_t)1 << 30;
    double cells = (double)batch;
    for (int a = 0; a < ndim; ++a) {
        g->kernel[a] = kernel[a], g->stride[a] = stride[a], g->pad[a] = pad[a], g->dilation[a] = dilation[a];
        if (spatial[a] < 1 || kernel[a] < 1 || stride[a] < 1 || dilation[a] < 1 || pad[a] < 0 || out_pad[a] < 0)
            return ks_fail(KS_EINVAL, "axis %d: sizes, kernel, stride and dilation must be >= 1, padding >= 0", a);
        if (spatial[a] > big || kernel[a] > 4096 || stride[a] > big || pad[a] > big || dilation[a] > big)
            return ks_fail(KS_EINVAL, "sizes too large: spatial shape < 2^30 per axis, kernel <= 4096");
        g->kvol *= kernel[a];
        if (g->kvol > 4096) return ks_fail(KS_EINVAL, "the kernel has more than 4096 offsets (spconv's limit too)");
        if (mode == KS_SP_SUBM && (stride[a] != 1 || pad[a] != 0))
            return ks_fail(KS_EINVAL, "--subm keeps the sites: it takes no --stride or --padding");
        if (mode != KS_SP_TRANSPOSED && out_pad[a])
            return ks_fail(KS_EINVAL, "--output-padding is for --transposed only");
        if (out_pad[a] && out_pad[a] >= stride[a] && out_pad[a] >= dilation[a])
            return ks_fail(KS_EINVAL, "--output-padding %lld must be below the stride or the dilation (as torch)",
                           (long long)out_pad[a]);
        /* regular: floor((S + 2p - d(k-1) - 1) / s) + 1; transposed: (S-1)s - 2p + d(k-1) + op + 1;
         * inverse: `spatial` is the output (the inverted convolution's input) */
        const int64_t reach = dilation[a] * (kernel[a] - 1);
        int64_t in = spatial[a], out = spatial[a];
        const int64_t span = (mode == KS_SP_INVERSE ? out : in) + 2 * pad[a] - reach - 1;
        if (mode == KS_SP_TRANSPOSED) out = (in - 1) * stride[a] - 2 * pad[a] + reach + out_pad[a] + 1;
        if (mode == KS_SP_REGULAR) out = span < 0 ? 0 : span / stride[a] + 1;
        if (mode == KS_SP_INVERSE) in = span < 0 ? 0 : span / stride[a] + 1;
        if (in < 1 || out < 1 || out > big)
            return ks_fail(KS_EINVAL,
                           "axis %d: the %s space would be %s (spatial %lld, kernel %lld, dilation %lld, padding %lld)",
                           a, in < 1 ? "input" : "output", out > big ? "too large" : "empty", (long long)spatial[a],
                           (long long)kernel[a], (long long)dilation[a], (long long)pad[a]);
        g->in_shape[a] = in, g->out_shape[a] = out;
        cells *= (double)(in > out ? in : out);
    }
    if (cells >= 4e18) return ks_fail(KS_EINVAL, "the space has too many cells (batch x spatial shape >= 2^62)");
    if ((double)n_in * (double)g->kvol >= 2147483647.0)
        return ks_fail(KS_EINVAL, "sites x kernel offsets must be < 2^31 (got %lld x %lld)", (long long)n_in,
                       (long long)g->kvol);
    return KS_OK;
}

int ks_sparse_hash_bits(int64_t rows, int64_t slots, int *bits)
{
    int64_t T = 16;
    if (slots) {
        T = slots;
        if (T < 2 || T & (T - 1) || T <= rows || T > ((int64_t)1 << 32)) /* 1: hash_bits 0 reads as automatic */
            return ks_fail(KS_EINVAL, "--hash-slots must be a power of two above the %lld sites it holds (got %lld)",
                           (long long)rows, (long long)T);
    } else {
        while (T < 2 * rows) T *= 2;
    }
    for (*bits = 0; ((int64_t)1 << *bits) < T; ++*bits) {}
    return KS_OK;
}

/* ---- the plan --------------------------------------------------------------------- */

/* A buffer of at least `bytes`: the one given, else allocated by the plan (freed with it). */
static int need(ks_sparse_plan *pl, void *slot, size_t bytes)
{
    void **p = (void **)slot;
    if (*p) return KS_OK;
    if (pl->nowned == KS_SPARSE_OWNED) return ks_fail(KS_EINVAL, "sparse_conv: too many plan buffers");
    int rc = pl->be->alloc(pl->ctx, p, bytes ? bytes : 1);
    if (!rc) pl->owned[pl->nowned++] = *p;
    return rc;
}

static size_t cells(const ks_sparse_geom *g, const int64_t *S)
{
    return (size_t)(g->batch * S[0] * S[1] * (g->ndim == 3 ? S[2] : 1));
}

static ks_sparse_args base_args(const ks_sparse_plan *pl)
{
    ks_sparse_args a;
    memset(&a, 0, sizeof a);
    a.g = pl->g;
    a.indices = pl->t.indices, a.out_indices = pl->t.out_indices;
    a.trace_tensor_grid = pl->t.in_sites ? KS_SP_T_IN_SITES : KS_NO_TENSOR;
    a.trace_tensor_out_grid = pl->t.out_sites ? KS_SP_T_OUT_SITES : KS_NO_TENSOR;
    a.col = pl->g.mode == KS_SP_INVERSE ? 2 : 1;
    return a;
}

/* Kernel row k over `work` items through the plan's sequence, every size its body indexes
 * counted first for the 32-bit choice (the output sites and pairs as found so far); the
 * row x->trace records into x->sink. */
static int kernel(const ks_sparse_plan *pl, int k, const ks_sparse_args *a, int64_t work)
{
    const ks_sparse_geom *g = &a->g;
    const int64_t C = g->c_in > g->c_out ? g->c_in : g->c_out, D1 = g->ndim + 1;
    const int64_t sizes[] = {g->n_in * g->kvol, g->n_out * g->kvol, g->pairs * C, g->pairs * 3,
                             g->n_in * D1,      g->n_out * D1,      g->n_in * C,  g->n_out * C};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) ks_exec_size(pl->x, sizes[i]);
    return ks_exec_kernel(pl->x, k, a, work);
}

/* The rulebook side of g over t->indices (inverse: t->rulebook and t->inverse_indices). */
int ks_sparse_plan_build(ks_sparse_plan *pl, const ks_sparse_backend *be, void *ctx, ks_exec *x,
                         const ks_sparse_geom *g, const ks_sparse_buffers *t)
{
    memset(pl, 0, sizeof *pl);
    pl->be = be, pl->ctx = ctx, pl->x = x, pl->g = *g, pl->t = *t;
    ks_sparse_geom *G = &pl->g;
    ks_sparse_buffers *B = &pl->t;
    const int64_t n = G->n_in, K = G->kvol, cols = G->ndim + 1;
    const int inv = G->mode == KS_SP_INVERSE;
    void *cand = NULL, *pos = NULL, *flags = NULL;
    pl->count = malloc((size_t)K * sizeof *pl->count);
    int rc = pl->count ? KS_OK : ks_fail(KS_ENOMEM, "sparse_conv: out of memory");
    STEP(need(pl, &B->pair_count, (size_t)K * 4));
    STEP(be->fill(ctx, B->pair_count, 0, (size_t)K * 4));
    ks_sparse_args a = base_args(pl);
    if (!inv) {
        int64_t m = n;
        if (G->mode != KS_SP_SUBM) { /* the output sites: every candidate key, sorted, unique */
            STEP(be->alloc(ctx, &cand, (size_t)(K * n) * 8));
            a.cand = cand;
            STEP(kernel(pl, KS_SPK_CANDIDATES, &a, K * n));
            int64_t bound = G->batch; /* keys are below B * (cells of the output space) */
            for (int a = 0; a < G->ndim; ++a) bound *= G->out_shape[a];
            STEP(be->sort_unique(ctx, cand, K * n, bound, &m));
        }
        if (!rc && G->n_out >= 0 && m != G->n_out)
            rc = ks_fail(KS_EINVAL, "sparse_conv: the kernels found %lld output sites, the reference %lld",
                         (long long)m, (long long)G->n_out);
        G->n_out = m;
        if (!rc && !G->hash_bits) rc = ks_sparse_hash_bits(m, 0, &G->hash_bits);
        const size_t T = (size_t)1 << G->hash_bits;
        STEP(need(pl, &B->hash_keys, T * 8));
        STEP(need(pl, &B->hash_rows, T * 4));
        STEP(need(pl, &B->out_indices, (size_t)(m * cols) * 4));
        STEP(need(pl, &B->pair_table, (size_t)(K * n) * 4));
        STEP(be->fill(ctx, B->hash_keys, 0xff, T * 8));
        STEP(be->fill(ctx, B->hash_rows, 0xff, T * 4));
        a = base_args(pl), a.cand = cand;
        a.hash_keys = B->hash_keys, a.hash_rows = B->hash_rows, a.keys = cand, a.rows = m;
        STEP(kernel(pl, KS_SPK_INSERT, &a, m));
        STEP(kernel(pl, KS_SPK_HASH_ROWS, &a, m));
        if (G->mode == KS_SP_SUBM) STEP(be->copy(ctx, B->out_indices, B->indices, (size_t)(n * cols) * 4));
        STEP(be->alloc(ctx, &flags, (size_t)(K * n) * 4));
        a.pair_table = B->pair_table, a.pair_count = B->pair_count, a.pair_flag = flags;
        STEP(kernel(pl, KS_SPK_RULEBOOK, &a, K * n));
        STEP(be->to_host(ctx, pl->count, B->pair_count, (size_t)K * 4));
        int64_t P = 0;
        for (int64_t k = 0; !rc && k < K; ++k) P += pl->count[k];
        if (!rc && G->pairs >= 0 && P != G->pairs)
            rc = ks_fail(KS_EINVAL, "sparse_conv: the kernels found %lld pairs, the reference %lld", (long long)P,
                         (long long)G->pairs);
        G->pairs = P;
        STEP(need(pl, &B->rulebook, (size_t)(P * 3) * 4));
        STEP(be->alloc(ctx, &pos, (size_t)(K * n) * 4));
        STEP(be->scan(ctx, flags, pos, K * n));
        a.pair_pos = pos, a.rulebook = B->rulebook, a.g = *G;
        STEP(kernel(pl, KS_SPK_COMPACT, &a, K * n));
    } else {
        STEP(need(pl, &B->out_indices, (size_t)(G->n_out * cols) * 4));
        STEP(be->copy(ctx, B->out_indices, B->inverse_indices, (size_t)(G->n_out * cols) * 4));
    }
    /* where each (offset, row) has its pair, on both sides (inverse: and the counts) */
    const int64_t m = G->n_out, P = G->pairs;
    STEP(be->alloc(ctx, &pl->out_pair, (size_t)(K * m) * 4));
    STEP(be->alloc(ctx, &pl->in_pair, (size_t)(K * n) * 4));
    STEP(be->fill(ctx, pl->out_pair, 0xff, (size_t)(K * m) * 4));
    STEP(be->fill(ctx, pl->in_pair, 0xff, (size_t)(K * n) * 4));
    a = base_args(pl);
    a.pairs_ro = B->rulebook, a.out_pair = pl->out_pair, a.in_pair = pl->in_pair;
    a.pair_count = B->pair_count, a.count_pairs = inv;
    STEP(kernel(pl, KS_SPK_INDEX_PAIRS, &a, P));
    if (inv) STEP(be->to_host(ctx, pl->count, B->pair_count, (size_t)K * 4));
    /* the site maps the viewer draws */
    if (B->in_sites) {
        STEP(be->fill(ctx, B->in_sites, 0xff, cells(G, G->in_shape) * 4));
        a.site_rows = B->indices, a.grid = B->in_sites, a.rows = n;
        memcpy(a.grid_shape, G->in_shape, sizeof a.grid_shape);
        STEP(kernel(pl, KS_SPK_SITES, &a, n));
    }
    if (B->out_sites) {
        STEP(be->fill(ctx, B->out_sites, 0xff, cells(G, G->out_shape) * 4));
        a.site_rows = B->out_indices, a.grid = B->out_sites, a.rows = m;
        memcpy(a.grid_shape, G->out_shape, sizeof a.grid_shape);
        STEP(kernel(pl, KS_SPK_SITES, &a, m));
    }
    if (cand) be->release(ctx, cand);
    if (pos) be->release(ctx, pos);
    if (flags) be->release(ctx, flags);
    return rc;
}

/* One GEMM per offset that has pairs, all in one call: `kind` 0 the forward's
 * products_k = gathered_k @ weight[k]; 1 grad_weight[k] = gathered_k^T G_k; 2 the rows
 * G_k weight[k]^T (X: gathered, Y: G, Z: the result). */
static int offset_gemms(const ks_sparse_plan *pl, int kind, const float *X, const float *Y, float *Z)
{
    const int64_t K = pl->g.kvol, Ci = pl->g.c_in, Co = pl->g.c_out;
    const float *W = pl->t.weight;
    int64_t *dims = malloc((size_t)K * 3 * sizeof *dims);
    const float **ab = malloc((size_t)K * 2 * sizeof *ab);
    float **c = malloc((size_t)K * sizeof *c);
    int rc = dims && ab && c ? KS_OK : ks_fail(KS_ENOMEM, "sparse_conv: out of memory");
    int g = 0;
    for (int64_t k = 0, base = 0; !rc && k < K; base += pl->count[k++]) {
        const int64_t n = pl->count[k];
        if (!n) continue;
        int64_t *d = dims + 3 * g; /* M, N, K of group g, then its A, B, C */
        if (kind == 0)
            d[0] = n, d[1] = Co, d[2] = Ci, ab[2 * g] = X + base * Ci, ab[2 * g + 1] = W + k * Ci * Co,
            c[g] = Z + base * Co;
        if (kind == 1)
            d[0] = Ci, d[1] = Co, d[2] = n, ab[2 * g] = X + base * Ci, ab[2 * g + 1] = Y + base * Co,
            c[g] = Z + k * Ci * Co;
        if (kind == 2)
            d[0] = n, d[1] = Ci, d[2] = Co, ab[2 * g] = Y + base * Co, ab[2 * g + 1] = W + k * Ci * Co,
            c[g] = Z + base * Ci;
        g++;
    }
    int64_t *M = NULL, *N = NULL, *KK = NULL;
    const float **A = NULL, **B = NULL;
    if (!rc && g) { /* the columns the backend wants */
        M = malloc((size_t)g * 3 * sizeof *M), A = malloc((size_t)g * 2 * sizeof *A);
        if (!M || !A) rc = ks_fail(KS_ENOMEM, "sparse_conv: out of memory");
        for (int i = 0; !rc && i < g; ++i) {
            M[i] = dims[3 * i], M[g + i] = dims[3 * i + 1], M[2 * g + i] = dims[3 * i + 2];
            A[i] = ab[2 * i], A[g + i] = ab[2 * i + 1];
        }
        N = M + g, KK = M + 2 * g, B = A + g;
    }
    if (!rc && g) {
        if (kind == 0) rc = pl->be->gemm_groups(pl->ctx, 0, 0, g, M, N, KK, A, Ci, B, Co, c, Co);
        /* grad_weight: C_in x C_out sums over a whole offset's pairs, a shape cuBLAS's grouped
         * call runs ~30x slower than a plain call per offset (which splits the sum) */
        for (int i = 0; kind == 1 && !rc && i < g; ++i)
            rc = pl->be->gemm(pl->ctx, 1, 0, M[i], N[i], KK[i], A[i], Ci, B[i], Co, c[i], Co);
        if (kind == 2) rc = pl->be->gemm_groups(pl->ctx, 0, 1, g, M, N, KK, A, Co, B, Co, c, Ci);
    }
    free(dims), free(ab), free(c), free(M), free(A);
    return rc;
}

/* out = bias + sum over offsets of gathered_k @ weight[k], row by row in offset order. */
int ks_sparse_plan_forward(ks_sparse_plan *pl, const ks_sparse_buffers *t)
{
    const ks_sparse_backend *be = pl->be;
    void *ctx = pl->ctx;
    const ks_sparse_geom *G = &pl->g;
    const int64_t Ci = G->c_in, Co = G->c_out, P = G->pairs;
    int rc = KS_OK;
    pl->t.features = t->features, pl->t.weight = t->weight, pl->t.bias = t->bias;
    pl->t.gathered = t->gathered ? t->gathered : pl->t.gathered;
    pl->t.products = t->products ? t->products : pl->t.products;
    STEP(need(pl, &pl->t.gathered, (size_t)(P * Ci) * 4));
    STEP(need(pl, &pl->t.products, (size_t)(P * Co) * 4));
    ks_sparse_args a = base_args(pl);
    a.pairs_ro = pl->t.rulebook;
    a.src = t->features, a.dst = pl->t.gathered, a.channels = Ci, a.rows = P;
    if (be->mark) be->mark(ctx, 0);
    STEP(kernel(pl, KS_SPK_GATHER, &a, P * Ci));
    if (be->mark) be->mark(ctx, 1);
    STEP(offset_gemms(pl, 0, pl->t.gathered, NULL, pl->t.products));
    a.prod = pl->t.products, a.table = pl->out_pair, a.bias = G->use_bias ? t->bias : NULL, a.out = t->out_features;
    a.rows = G->n_out, a.channels = Co;
    if (be->mark) be->mark(ctx, 2);
    STEP(kernel(pl, KS_SPK_REDUCE, &a, G->n_out * Co));
    if (be->mark) be->mark(ctx, 3);
    return rc;
}

/* The gradients of sum(out_features * grad_out), after a forward (it uses the gathered
 * input rows): grad_bias the column sums; per offset grad_weight[k] = gathered_k^T G_k and
 * G_k weight[k]^T, summed per input row in offset order like the forward. */
int ks_sparse_plan_backward(ks_sparse_plan *pl, const ks_sparse_buffers *t)
{
    const ks_sparse_backend *be = pl->be;
    void *ctx = pl->ctx;
    const ks_sparse_geom *G = &pl->g;
    const int64_t K = G->kvol, Ci = G->c_in, Co = G->c_out, P = G->pairs;
    void *gbuf = NULL, *bbuf = NULL;
    int rc = KS_OK;
    ks_sparse_args a = base_args(pl);
    const int trace = pl->x->trace; /* none of these launches records: a trace holds the forward's */
    pl->x->trace = -1;
    if (G->use_bias) {
        a.src = t->grad_out, a.dst = t->grad_bias, a.rows = G->n_out, a.channels = Co;
        STEP(kernel(pl, KS_SPK_COLSUM, &a, Co));
    }
    STEP(be->alloc(ctx, &gbuf, (size_t)(P * Co) * 4));
    STEP(be->alloc(ctx, &bbuf, (size_t)(P * Ci) * 4));
    STEP(be->fill(ctx, t->grad_weight, 0, (size_t)(K * Ci * Co) * 4));
    a.pairs_ro = pl->t.rulebook;
    a.src = t->grad_out, a.dst = gbuf, a.channels = Co, a.rows = P, a.col = G->mode == KS_SP_INVERSE ? 1 : 2;
    STEP(kernel(pl, KS_SPK_GATHER, &a, P * Co));
    STEP(offset_gemms(pl, 1, pl->t.gathered, gbuf, t->grad_weight));
    STEP(offset_gemms(pl, 2, NULL, gbuf, bbuf));
    a.prod = bbuf, a.table = pl->in_pair, a.bias = NULL, a.out = t->grad_features, a.rows = G->n_in, a.channels = Ci;
    STEP(kernel(pl, KS_SPK_REDUCE, &a, G->n_in * Ci));
    if (gbuf) be->release(ctx, gbuf);
    if (bbuf) be->release(ctx, bbuf);
    pl->x->trace = trace;
    return rc;
}

void ks_sparse_plan_release(ks_sparse_plan *pl)
{
    if (!pl->be) return;
    for (int i = 0; i < pl->nowned; ++i) pl->be->release(pl->ctx, pl->owned[i]);
    if (pl->out_pair) pl->be->release(pl->ctx, pl->out_pair);
    if (pl->in_pair) pl->be->release(pl->ctx, pl->in_pair);
    free(pl->count);
    memset(pl, 0, sizeof *pl);
}

int64_t ks_sparse_plan_sites(const ks_sparse_plan *pl) { return pl->g.n_out; }
int64_t ks_sparse_plan_pairs(const ks_sparse_plan *pl) { return pl->g.pairs; }
const int32_t *ks_sparse_plan_out_indices(const ks_sparse_plan *pl) { return pl->t.out_indices; }
size_t ks_sparse_geom_size(void) { return sizeof(ks_sparse_geom); }

int ks_sparse_run(const ks_sparse_backend *be, void *ctx, ks_exec *x, const ks_sparse_geom *g,
                  const ks_sparse_buffers *t, int backward)
{
    ks_sparse_plan pl;
    int rc = ks_sparse_plan_build(&pl, be, ctx, x, g, t);
    STEP(ks_sparse_plan_forward(&pl, t));
    if (backward) STEP(ks_sparse_plan_backward(&pl, t));
    ks_sparse_plan_release(&pl);
    return rc;
}

/* ---- the simulator's steps ---------------------------------------------------------- */

#define KS_BODY "../sparse_conv/sparse_conv_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

/* The kernel rows, indexed by ks_sparse_kernel. spconv's index kernels: 256 threads, no
 * block cap. Four have a trace schema (ks_sparse_sites, sparse_conv_op.c); the others run
 * plain only. */
#define SITES(k) \
    static int sites_##k(const void *state, ks_site *s) { return ks_sparse_sites(state, k, s); }
SITES(KS_SPK_INSERT)
SITES(KS_SPK_RULEBOOK)
SITES(KS_SPK_GATHER)
SITES(KS_SPK_REDUCE)
#define ROW(fn, word, what, ...) \
    KS_KERNEL_ROW(fn, word, .threads = KS_SPARSE_THREADS, .block_cap = KS_SPARSE_BLOCK_CAP, .help = what, __VA_ARGS__)
const ks_kernel ks_sparse_rows[KS_SPK_COUNT] = {
    [KS_SPK_CANDIDATES] = ROW(ks_sparse_candidates, "candidates", "(k, i): the output site input i reaches",
                              .no_trace = 1),
    [KS_SPK_INSERT] = ROW(ks_sparse_insert, "insert", "one site per item into the hash table (ordered probing)",
                          .sites = sites_KS_SPK_INSERT),
    [KS_SPK_HASH_ROWS] = ROW(ks_sparse_hash_rows, "hash_rows", "each stored key's row", .no_trace = 1),
    [KS_SPK_RULEBOOK] = ROW(ks_sparse_rulebook, "rulebook", "(k, i): hash lookup, a pair when found",
                            .sites = sites_KS_SPK_RULEBOOK),
    [KS_SPK_COMPACT] = ROW(ks_sparse_compact, "compact", "the scan's pairs into rows sorted by (k, in_row)",
                           .no_trace = 1),
    [KS_SPK_INDEX_PAIRS] = ROW(ks_sparse_index_pairs, "index_pairs", "the pair table of each offset", .no_trace = 1),
    [KS_SPK_GATHER] = ROW(ks_sparse_gather, "gather", "one (pair, channel) per item: input rows gathered",
                          .sites = sites_KS_SPK_GATHER),
    [KS_SPK_REDUCE] = ROW(ks_sparse_reduce, "reduce", "one (output row, channel) per item: products summed in order",
                          .sites = sites_KS_SPK_REDUCE),
    [KS_SPK_SITES] = ROW(ks_sparse_sites, "sites", "the dense site maps", .no_trace = 1),
    [KS_SPK_COLSUM] = ROW(ks_sparse_colsum, "colsum", "grad_bias: one channel's column sum", .no_trace = 1),
};

static int sim_alloc(void *ctx, void **p, size_t bytes)
{
    (void)ctx;
    *p = calloc(1, bytes ? bytes : 1);
    return *p ? KS_OK : ks_fail(KS_ENOMEM, "sparse_conv: out of memory (%zu bytes of workspace)", bytes);
}
static void sim_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}
static int sim_fill(void *ctx, void *p, int byte, size_t bytes)
{
    (void)ctx;
    memset(p, byte, bytes);
    return KS_OK;
}
static int sim_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memcpy(dst, src, bytes);
    return KS_OK;
}
static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static int sim_sort_unique(void *ctx, int64_t *keys, int64_t n, int64_t bound, int64_t *kept)
{
    (void)ctx, (void)bound;
    qsort(keys, (size_t)n, sizeof *keys, cmp_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; ++i)
        if (keys[i] >= 0 && (m == 0 || keys[m - 1] != keys[i])) keys[m++] = keys[i];
    *kept = m;
    return KS_OK;
}
static int sim_scan(void *ctx, const int32_t *flags, int32_t *pos, int64_t n)
{
    (void)ctx;
    int32_t s = 0;
    for (int64_t i = 0; i < n; ++i) {
        pos[i] = s;
        s += flags[i];
    }
    return KS_OK;
}
static int sim_gemm(void *ctx, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float *C, int64_t ldc)
{
    (void)ctx;
    return ks_sgemm(ta, tb, M, N, K, A, lda, B, ldb, 0.0f, C, ldc);
}

static int sim_gemm_groups(void *ctx, int ta, int tb, int groups, const int64_t *M, const int64_t *N, const int64_t *K,
                           const float *const *A, int64_t lda, const float *const *B, int64_t ldb, float *const *C,
                           int64_t ldc)
{
    int rc = KS_OK;
    for (int g = 0; g < groups && !rc; ++g)
        rc = sim_gemm(ctx, ta, tb, M[g], N[g], K[g], A[g], lda, B[g], ldb, C[g], ldc);
    return rc;
}

const ks_sparse_backend ks_sparse_sim_backend = {
    .alloc = sim_alloc,
    .release = sim_release,
    .fill = sim_fill,
    .copy = sim_copy,
    .to_host = sim_copy,
    .sort_unique = sim_sort_unique,
    .scan = sim_scan,
    .gemm = sim_gemm,
    .gemm_groups = sim_gemm_groups,
    .mark = NULL,
};
