/* sparse_conv_body.h - spatially sparse convolution as spconv does it (gather-GEMM-scatter
 * over a rulebook of index pairs), written once: the declarations both builds share, then
 * (per variant, see ks_variants.h) the kernel bodies.
 *
 *   features    [n, C_in]          indices     [n, 1 + D] int32 rows (batch, d0, .., d{D-1})
 *   weight      [*kernel, C_in, C_out]  (spconv 1.x: weight[k] is offset k's (C_in, C_out)
 *                                   matrix, offsets k row-major over the kernel axes)
 *   out_features [m, C_out]        out_indices [m, 1 + D] int32
 *   rulebook    [P, 3] int32 rows (k, in_row, out_row), sorted by (k, in_row)
 *
 *   out[o] = bias + sum over pairs (k, i, o) of features[i] @ weight[k]
 *
 * An input site c (per axis) and kernel offset k (per axis ka) give the output site o:
 *   regular     c = o*s - p + ka*d       (o = (c + p - ka*d) / s when that divides, in range)
 *   submanifold o = c - (ka - K/2)*d     (output sites are the input sites; o must be one)
 *   transposed  o = c*s - p + ka*d
 * The inverse convolution runs a given rulebook reversed (rows out_row -> in_row).
 *
 * Kernels (one work item each, grid-stride; all run on both devices):
 *   candidates  (k, i) -> the output key of the pair or -1       [regular, transposed]
 *   insert      site row r -> its key into the hash table (open addressing, ordered
 *               linear probing with atomicMax: the same table in any thread order),
 *               out_indices[r] decoded from the key (regular, transposed)
 *   hash_rows   site row r -> the row stored beside its key's slot
 *   rulebook    (k, i) -> candidate, hash lookup, pair_table[k, i] = out row or -1, and
 *               pair_count[k] += 1 (atomic) for a pair
 *   compact     (k, i) -> rulebook row pair_pos[k, i] (an exclusive scan of the pairs), so
 *               the rulebook comes out sorted by (k, in_row) on every device
 *   index_pairs pair p -> out_pair[k, out_row] = p, in_pair[k, in_row] = p
 *   gather      (p, c) -> dst[p, c] = src[rulebook[p, col], c]
 *   reduce      (o, c) -> out[o, c] = bias[c] + sum over k in order of prod[table[k, o], c]
 *               (the scatter-add written as an ordered sum per output row: no atomics,
 *               deterministic, every output element written once)
 *   sites       site row r -> grid[b, d0, .., d{D-1}] = r (the dense site maps the viewer
 *               draws; spconv 1.x's dense-grid index)
 *   colsum      c -> sum over rows of src[:, c] (grad_bias)
 * Keys: key = ((b*S0 + d0)*S1 + d1)[*S2 + d2] over the spatial shape S it lives in.
 */
#ifndef KS_SPARSE_DECL
#define KS_SPARSE_DECL
#include <stddef.h>
#include <stdint.h>

#include "../core/ks_kernel.h"
#include "../core/ks_core.h"
#include "../core/ks_event.h"
#include "../core/ks_launch.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ks_sparse_mode { KS_SP_REGULAR = 0, KS_SP_SUBM = 1, KS_SP_TRANSPOSED = 2, KS_SP_INVERSE = 3 };

/* The validated geometry of one sparse convolution (every size < 2^31, keys < 2^62). */
typedef struct ks_sparse_geom {
    int ndim, mode, use_bias;          /* D (2 or 3), ks_sparse_mode */
    int hash_bits;                     /* T = 2^hash_bits hash slots */
    int64_t batch;                     /* B */
    int64_t in_shape[3], out_shape[3]; /* spatial sizes, D used */
    int64_t kernel[3], stride[3], pad[3], dilation[3];
    int64_t kvol;               /* K: offsets */
    int64_t n_in, n_out, pairs; /* n, m, P */
    int64_t c_in, c_out;
} ks_sparse_geom;

/* One kernel's arguments: the geometry and every buffer (NULL where unused). */
typedef struct ks_sparse_args {
    ks_sparse_geom g;
    int64_t rows;                /* insert, sites, reduce: rows; gather: pairs */
    int64_t channels;            /* gather, reduce, colsum: C of the rows moved */
    const int32_t *indices;      /* (n, 1 + D) */
    const int64_t *keys;         /* insert (regular, transposed): sorted output keys (m) */
    int32_t *out_indices;        /* (m, 1 + D) */
    int64_t *cand;               /* candidates: (K, n) */
    int64_t *hash_keys;          /* (T), -1: empty */
    int32_t *hash_rows;          /* (T) */
    int32_t *pair_table;         /* (K, n) out row of (k, i) or -1 */
    int32_t *pair_count;         /* (K) */
    int32_t *pair_flag;          /* rulebook: (K, n) 1 where a pair is, else 0 (scanned next) */
    const int32_t *pair_pos;     /* (K, n) */
    int32_t *rulebook;           /* (P, 3) */
    int32_t *out_pair, *in_pair; /* (K, m), (K, n) */
    const int32_t *pairs_ro;     /* gather: the rulebook read */
    int col;                     /* gather: the rulebook column of the source row; reduce:
                                    of the input row (traced: where contributions come from) */
    int count_pairs;             /* index_pairs: also pair_count[k] += 1 (inverse) */
    const float *src;            /* gather, colsum */
    float *dst;                  /* gather, colsum */
    const float *prod;           /* reduce: (P, C) */
    const int32_t *table;        /* reduce: (K, rows) pair of (k, row) or -1 */
    const float *bias;           /* reduce: (C) or NULL */
    float *out;                  /* reduce: (rows, C) */
    const int32_t *site_rows;    /* sites: (rows, 1 + D) */
    int32_t *grid;               /* sites: (B, S0, ..) */
    int64_t grid_shape[3];       /* sites: S */
    int trace_tensor_grid;       /* tensor ids the probes name for the site maps (or */
    int trace_tensor_out_grid;   /* KS_NO_TENSOR when the maps are not kept) */
} ks_sparse_args;

/* the kernels, in the order a forward runs them */
enum ks_sparse_kernel {
    KS_SPK_CANDIDATES,
    KS_SPK_INSERT,
    KS_SPK_HASH_ROWS,
    KS_SPK_RULEBOOK,
    KS_SPK_COMPACT,
    KS_SPK_INDEX_PAIRS,
    KS_SPK_GATHER,
    KS_SPK_REDUCE,
    KS_SPK_SITES,
    KS_SPK_COLSUM,
    KS_SPK_COUNT
};

/* spconv's index kernels: 256 threads per block here (it uses up to 1024), no block cap */
#define KS_SPARSE_THREADS 256
#define KS_SPARSE_BLOCK_CAP (-1)

/* tensor ids (the op's rows and the trace's tensors) */
enum {
    KS_SP_T_FEATURES,
    KS_SP_T_INDICES,
    KS_SP_T_WEIGHT,
    KS_SP_T_BIAS,
    KS_SP_T_GRAD_OUT,
    KS_SP_T_INVERSE_INDICES,
    KS_SP_T_OUT_FEATURES,
    KS_SP_T_OUT_INDICES,
    KS_SP_T_RULEBOOK,
    KS_SP_T_PAIR_COUNT,
    KS_SP_T_PAIR_TABLE,
    KS_SP_T_HASH_KEYS,
    KS_SP_T_HASH_ROWS,
    KS_SP_T_GATHERED,
    KS_SP_T_PRODUCTS,
    KS_SP_T_IN_SITES,
    KS_SP_T_OUT_SITES,
    KS_SP_T_GRAD_FEATURES,
    KS_SP_T_GRAD_WEIGHT,
    KS_SP_T_GRAD_BIAS,
    KS_SP_NTENSORS
};

/* sites of the traced kernels (each kernel's schema numbers its own from 0) */
enum {
    KS_SP_S_WORK,
    KS_SP_S_READ_INDEX,
    KS_SP_S_SITE_IN,
    KS_SP_S_SITE_OUT,
    KS_SP_S_PROBE,
    KS_SP_S_PAIR,
    KS_SP_S_COUNT
};
enum { KS_SP_S_CLAIM = KS_SP_S_PAIR, KS_SP_S_WRITE_INDEX = KS_SP_S_COUNT };
enum { KS_SP_S_READ = 1, KS_SP_S_WRITE = 2, KS_SP_S_FROM = 3, KS_SP_S_TO = 4 };

/* The kernel rows (sparse_conv_plan.c), indexed by ks_sparse_kernel. The plan runs them
 * in order through one sequence (ks_exec, ks_kernel.h): the registry's for the operator,
 * the C API's own (ks_sparse_cuda_plan) for the benchmarks. */
extern const ks_kernel ks_sparse_rows[KS_SPK_COUNT];
/* The trace schema of row k (insert, rulebook, gather or reduce) for geometry g
 * (sparse_conv_op.c): the number of sites. The rows' .sites call it on the operator's
 * state, which begins with its geometry. */
int ks_sparse_sites(const ks_sparse_geom *g, int k, ks_site *sites);

/* The tensors of one run (device pointers on the GPU; NULL where the run has none). */
typedef struct ks_sparse_buffers {
    const float *features, *weight, *bias, *grad_out;
    const int32_t *indices, *inverse_indices;
    float *out_features, *gathered, *products, *grad_features, *grad_weight, *grad_bias;
    int32_t *out_indices, *rulebook, *pair_count, *pair_table, *hash_rows, *in_sites, *out_sites;
    int64_t *hash_keys;
} ks_sparse_buffers;

/* A device's own steps between the kernels (ctx is the backend's state; the kernels run as
 * rows through the plan's sequence):
 * sort_unique: keys[0..n) (each -1 or below `bound`) sorted ascending, -1s and repeats
 * dropped, *kept left;
 * scan: pos[i] = the sum of flags[j] for j < i (an exclusive scan of 0/1 flags); gemm: C = op(A) op(B) (ks_gemm.h
 * conventions, beta 0); to_host: device to host; copy: device to device. */
typedef struct ks_sparse_backend {
    int (*alloc)(void *ctx, void **p, size_t bytes);
    void (*release)(void *ctx, void *p);
    int (*fill)(void *ctx, void *p, int byte, size_t bytes);
    int (*copy)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*to_host)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*sort_unique)(void *ctx, int64_t *keys, int64_t n, int64_t bound, int64_t *kept);
    int (*scan)(void *ctx, const int32_t *flags, int32_t *pos, int64_t n);
    int (*gemm)(void *ctx, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                int64_t ldb, float *C, int64_t ldc);
    /* `groups` GEMMs like gemm (ta, tb and the leading dimensions shared), at once */
    int (*gemm_groups)(void *ctx, int ta, int tb, int groups, const int64_t *M, const int64_t *N, const int64_t *K,
                       const float *const *A, int64_t lda, const float *const *B, int64_t ldb, float *const *C,
                       int64_t ldc);
    /* optional: the forward passed mark 0 (start), 1 (gathered), 2 (GEMMs), 3 (reduced) */
    void (*mark)(void *ctx, int at);
} ks_sparse_backend;

/* The geometry from the flags (sparse_conv_plan.c): validates every size (one error line
 * naming the flag), computes the input and output spatial shapes (inverse: `spatial` is
 * the output's) and K; n_out and pairs are -1 (unknown), hash_bits 0 (automatic). */
int ks_sparse_geom_init(ks_sparse_geom *g, int ndim, int mode, int64_t batch, const int64_t *spatial,
                        const int64_t *kernel, const int64_t *stride, const int64_t *pad, const int64_t *dilation,
                        const int64_t *out_pad, int64_t n_in, int64_t c_in, int64_t c_out, int use_bias);
/* log2 of the hash table size for `rows` keys: `slots` if given (a power of two > rows),
 * else the smallest power of two >= 2 rows (at least 16). */
int ks_sparse_hash_bits(int64_t rows, int64_t slots, int *bits);

/* A rulebook built on one device and the buffers it keeps for the convolution. Buffers
 * of `t` not given (NULL) are allocated by the plan and freed with it. */
#define KS_SPARSE_OWNED 16
typedef struct ks_sparse_plan {
    const ks_sparse_backend *be;
    void *ctx;
    /* the sequence the kernels run through (ks_sparse_rows on the plan's device, its launch;
     * its sink records in row x->trace: the rulebook's insert or rulebook, the forward's
     * gather or reduce) */
    ks_exec *x;
    ks_sparse_geom g;         /* n_out and pairs as found */
    ks_sparse_buffers t;      /* out_indices, rulebook, pair_count, ... (device) */
    void *out_pair, *in_pair; /* (K, m), (K, n): the pair of (offset, row) or -1 */
    int32_t *count;           /* host copy of pair_count */
    void *owned[KS_SPARSE_OWNED];
    int nowned;
} ks_sparse_plan;
/* Builds the rulebook (g->n_out, g->pairs: -1 to find them, else what the kernels must
 * find), running its kernels through x (the row x->trace records into x->sink). Release
 * the plan even on error. */
int ks_sparse_plan_build(ks_sparse_plan *pl, const ks_sparse_backend *be, void *ctx, ks_exec *x,
                         const ks_sparse_geom *g, const ks_sparse_buffers *t);
/* out_features from t->features, weight, bias (gathered/products: given or the plan's). */
int ks_sparse_plan_forward(ks_sparse_plan *pl, const ks_sparse_buffers *t);
/* grad_features, grad_weight, grad_bias (with a bias) from t->grad_out, after a forward;
 * its launches record nothing (a trace holds the forward's gather or reduce). */
int ks_sparse_plan_backward(ks_sparse_plan *pl, const ks_sparse_buffers *t);
void ks_sparse_plan_release(ks_sparse_plan *pl);
/* The plan's sizes and output sites (device memory on the GPU). */
int64_t ks_sparse_plan_sites(const ks_sparse_plan *pl);
int64_t ks_sparse_plan_pairs(const ks_sparse_plan *pl);
const int32_t *ks_sparse_plan_out_indices(const ks_sparse_plan *pl);
size_t ks_sparse_geom_size(void); /* for callers that hold a geometry as bytes (ctypes) */

/* The C API on the GPU (sparse_conv_cuda.cu), device pointers, the default stream:
 * a plan (rulebook) from indices (n, 1 + D) int32; forward into out (m, C_out) (m:
 * ks_sparse_plan_sites); backward after a forward; ms[3] of a profiled forward: gather,
 * GEMMs, reduce in milliseconds. Each returns KS_OK or an error (ks_error_message). */
int ks_sparse_cuda_plan(const ks_sparse_geom *g, const int32_t *indices, ks_sparse_plan **out);
int ks_sparse_cuda_forward(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                           float *out);
int ks_sparse_cuda_backward(ks_sparse_plan *pl, const float *grad_out, float *grad_features, float *grad_weight,
                            float *grad_bias);
int ks_sparse_cuda_profile(ks_sparse_plan *pl, const float *features, const float *weight, const float *bias,
                           float *out, float *ms);
void ks_sparse_cuda_plan_free(ks_sparse_plan *pl);

/* The simulator's steps (host memory). */
extern const ks_sparse_backend ks_sparse_sim_backend;

/* The geometry a registry run of sparse_conv prepared (sparse_conv_op.c). */
struct ks_run;
const ks_sparse_geom *ks_sparse_geom_of(const struct ks_run *r);

/* The whole operator on x's device (sparse_conv_plan.c; be: that device's steps):
 * rulebook (unless inverse), site maps, gather, per-offset GEMMs, reduce; with `backward`
 * the gradients of sum(out_features * grad_out). Its kernels run through x: the registry's
 * sequence, whose row x->trace records into x->sink. Checks the counts the kernels find
 * against g (n_out, pairs). KS_OK or an error. */
int ks_sparse_run(const ks_sparse_backend *be, void *ctx, ks_exec *x, const ks_sparse_geom *g,
                  const ks_sparse_buffers *t, int backward);
/* The same on the GPU with device buffers (sparse_conv_cuda.cu). */
int ks_sparse_run_cuda(ks_exec *x, const ks_sparse_geom *g, const ks_sparse_buffers *t, int backward);
/* The first row whose key repeats an earlier row's, -1 if none, -2 out of memory. */
int64_t ks_sparse_first_duplicate(const int64_t *keys, int64_t n);

/* The double reference (sparse_conv_ref.c), from coordinates alone (a sorted site list
 * and binary search: no hash, no kernel code). ks_sparse_ref_rulebook fills *m, the
 * output sites (m, 1 + D) (malloc'd, caller frees) and the rulebook (P, 3) (malloc'd)
 * sorted by (k, in_row); inverse mode takes them from the given rulebook. KS_OK or
 * KS_ENOMEM. */
int ks_sparse_ref_rulebook(const ks_sparse_geom *g, const int32_t *indices, int64_t *m, int32_t **out_indices,
                           int64_t *pairs, int32_t **rulebook);
/* out (m, C_out) = bias + sum of features[i] @ weight[k] over the pairs (k, i, o), in
 * double; with `inverse`, the pairs are used reversed. */
void ks_sparse_ref_forward(const ks_sparse_geom *g, const int32_t *rulebook, int64_t pairs, const float *features,
                           const float *weight, const float *bias, double *out);
/* grad_features (n, C_in), grad_weight (K, C_in, C_out), grad_bias (C_out) (zeroed here). */
void ks_sparse_ref_backward(const ks_sparse_geom *g, const int32_t *rulebook, int64_t pairs, const float *features,
                            const float *weight, const float *grad_out, double *grad_features, double *grad_weight,
                            double *grad_bias);

/* The linear key of (b, coordinates) in spatial shape S. */
KS_FN int64_t ks_sparse_key(int ndim, int64_t b, const int64_t *c, const int64_t *S)
{
    int64_t key = b;
    for (int a = 0; a < ndim; ++a) key = key * S[a] + c[a];
    return key;
}

/* The hash slot a key starts probing at: Fibonacci hashing, the top bits of key * 2^64/phi. */
KS_FN int64_t ks_sparse_hash(int64_t key, int bits)
{
    return (int64_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

/* Offset k of the kernel per axis (row-major, the last axis fastest). */
KS_FN void ks_sparse_offset(const ks_sparse_geom *g, int64_t k, int64_t *ka)
{
    for (int a = g->ndim - 1; a >= 0; --a) {
        ka[a] = k % g->kernel[a];
        k /= g->kernel[a];
    }
}

/* The output site that input site c reaches through offset ka (per axis), and whether it
 * is one: in the output shape and, for a regular convolution, on the stride. */
KS_FN int ks_sparse_candidate(const ks_sparse_geom *g, const int64_t *c, const int64_t *ka, int64_t *o)
{
    int ok = 1;
    for (int a = 0; a < g->ndim; ++a) {
        if (g->mode == KS_SP_SUBM) {
            o[a] = c[a] - (ka[a] - g->kernel[a] / 2) * g->dilation[a];
        } else if (g->mode == KS_SP_TRANSPOSED) {
            o[a] = c[a] * g->stride[a] - g->pad[a] + ka[a] * g->dilation[a];
        } else {
            const int64_t num = c[a] + g->pad[a] - ka[a] * g->dilation[a];
            o[a] = num / g->stride[a];
            if (num < 0 || num % g->stride[a] != 0) ok = 0;
        }
        if (o[a] < 0 || o[a] >= g->out_shape[a]) ok = 0;
    }
    return ok;
}

/* The slot holding `key` in an ordered linear-probing table of 2^bits slots, or -1: keys
 * along a probe run are in descending order, so a smaller key (or an empty slot, -1) ends
 * the search. */
KS_FN int64_t ks_sparse_find(const int64_t *keys, int bits, int64_t key)
{
    const int64_t T = (int64_t)1 << bits;
    int64_t slot = ks_sparse_hash(key, bits);
    for (int64_t probe = 0; probe < T; ++probe, slot = (slot + 1) & (T - 1)) {
        if (keys[slot] == key) return slot;
        if (keys[slot] < key) return -1;
    }
    return -1;
}

/* The plane of a site in a site map (B*S0, S1, S2) for D = 3, (B, S0, S1) for D = 2. */
KS_FN int64_t ks_sparse_plane(int ndim, int64_t b, const int64_t *c, const int64_t *S)
{
    return ndim == 3 ? b * S[0] + c[0] : b;
}

#ifdef __cplusplus
}
#endif
#endif /* KS_SPARSE_DECL */

#ifdef KS_VARIANT
#include "../core/ks_probe.h"

#define KS_SP_LOOP(n_work)                                                                    \
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x; \
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;                \
    for (uint32_t iter = 0; index < (KS_IDX)(n_work); index += grid_stride, ++iter)

/* The site of input row i: batch and coordinates, read from indices (traced: each read). */
KS_FN int64_t KS_VARIANT(ks_sparse_read_site)(ks_thread *t, const ks_sparse_args *a, KS_IDX i, int64_t *c)
{
    const int cols = a->g.ndim + 1;
    const int32_t *row = a->indices + i * cols;
    for (int q = 0; q < cols; ++q)
        KS_PROBE(ks_probe_read_int(t, KS_SP_S_READ_INDEX, 1 /* KS_SP_T_INDICES */, q, (int64_t)i * cols + q, 0, i, q,
                                   row[q]));
    for (int q = 1; q < cols; ++q) c[q - 1] = row[q];
    return row[0];
}

/* candidates: work item (k, i), index = k*n + i */
KS_FN void KS_VARIANT(ks_sparse_candidates_body)(ks_thread *t, const ks_sparse_args *a)
{
    const KS_IDX n = (KS_IDX)a->g.n_in;
    KS_SP_LOOP(n * (KS_IDX)a->g.kvol)
    {
        int64_t c[3], ka[3], o[3];
        const int64_t b = KS_VARIANT(ks_sparse_read_site)(t, a, index % n, c);
        ks_sparse_offset(&a->g, (int64_t)(index / n), ka);
        a->cand[index] = ks_sparse_candidate(&a->g, c, ka, o) ? ks_sparse_key(a->g.ndim, b, o, a->g.out_shape) : -1;
    }
}
KS_KERNEL(ks_sparse_candidates, ks_sparse_args)

/* insert: work item = a site row r. Submanifold: the input sites (key from indices);
 * regular and transposed: the sorted unique output keys, decoded into out_indices. */
KS_FN void KS_VARIANT(ks_sparse_insert_body)(ks_thread *t, const ks_sparse_args *a)
{
    const int D = a->g.ndim;
    const int64_t T = (int64_t)1 << a->g.hash_bits;
    KS_SP_LOOP(a->rows)
    {
        int64_t c[3] = {0, 0, 0}, b, key;
        if (a->g.mode == KS_SP_SUBM) {
            int64_t cc[3];
            b = (int64_t)a->indices[index * (D + 1)];
            for (int q = 0; q < D; ++q) cc[q] = a->indices[index * (D + 1) + 1 + q];
            key = ks_sparse_key(D, b, cc, a->g.in_shape);
            for (int q = 0; q < D; ++q) c[q] = cc[q];
        } else {
            int64_t rest = a->keys[index];
            for (int q = D - 1; q >= 0; --q) {
                c[q] = rest % a->g.out_shape[q];
                rest /= a->g.out_shape[q];
            }
            b = rest;
            key = a->keys[index];
        }
        if (D == 2) {
            KS_PROBE(ks_probe_work(t, KS_SP_S_WORK, index, iter, index, b, c[0], c[1],
                                   ks_sparse_hash(key, a->g.hash_bits), 0, 0, 0));
        } else {
            KS_PROBE(ks_probe_work(t, KS_SP_S_WORK, index, iter, index, b, c[0], c[1], c[2],
                                   ks_sparse_hash(key, a->g.hash_bits), 0, 0));
        }
        KS_PROBE(if (a->trace_tensor_out_grid != KS_NO_TENSOR)
                     ks_probe_point(t, KS_SP_S_SITE_OUT, a->trace_tensor_out_grid, 0,
                                    ks_sparse_plane(D, b, c, a->g.out_shape), c[D - 2], c[D - 1]));
        if (a->g.mode != KS_SP_SUBM) {
            int32_t *row = a->out_indices + index * (D + 1);
            row[0] = (int32_t)b;
            for (int q = 0; q < D; ++q) row[1 + q] = (int32_t)c[q];
            for (int q = 0; q <= D; ++q)
                KS_PROBE(ks_probe_write_int(t, KS_SP_S_WRITE_INDEX, KS_SP_T_OUT_INDICES, q,
                                            (int64_t)index * (D + 1) + q, 0, index, q, row[q], 0));
        }
        /* ordered linear probing (Amble and Knuth; concurrent as Shun and Blelloch's
         * deterministic hash table): a larger key takes a slot from a smaller one, which
         * moves on; the table ends the same whatever order the keys arrive in, so the GPU
         * (any thread order) and the simulator build the same table */
        int64_t carry = key, slot = ks_sparse_hash(key, a->g.hash_bits);
        for (int64_t probe = 0; probe < T; ++probe, slot = (slot + 1) & (T - 1)) {
            const int64_t prev = ks_atomic_max_i64(a->hash_keys + slot, carry);
            KS_PROBE(ks_probe_read_int(t, KS_SP_S_PROBE, KS_SP_T_HASH_KEYS, (int)probe, slot, 0, 0, slot, prev));
            if (prev < carry)
                KS_PROBE(
                    ks_probe_write_int(t, KS_SP_S_CLAIM, KS_SP_T_HASH_KEYS, (int)probe, slot, 0, 0, slot, carry, 0));
            if (prev == -1 || prev == carry) break; /* an empty slot (or the key itself): placed */
            if (prev < carry) carry = prev;         /* the smaller key moves on */
        }
    }
}
KS_KERNEL(ks_sparse_insert, ks_sparse_args)

/* hash_rows: work item = a site row r: its key's slot gets r (after insert: the table is final) */
KS_FN void KS_VARIANT(ks_sparse_hash_rows_body)(ks_thread *t, const ks_sparse_args *a)
{
    const int D = a->g.ndim;
    KS_SP_LOOP(a->rows)
    {
        int64_t key;
        if (a->g.mode == KS_SP_SUBM) {
            int64_t c[3];
            for (int q = 0; q < D; ++q) c[q] = a->indices[index * (D + 1) + 1 + q];
            key = ks_sparse_key(D, a->indices[index * (D + 1)], c, a->g.in_shape);
        } else {
            key = a->keys[index];
        }
        const int64_t slot = ks_sparse_find(a->hash_keys, a->g.hash_bits, key);
        if (slot >= 0) a->hash_rows[slot] = (int32_t)index;
    }
}
KS_KERNEL(ks_sparse_hash_rows, ks_sparse_args)

/* rulebook: work item (k, i), index = k*n + i: the candidate output site, looked up in
 * the hash table; pair_table[k, i] = its row or -1; pair_count[k] counts the pairs. */
KS_FN void KS_VARIANT(ks_sparse_rulebook_body)(ks_thread *t, const ks_sparse_args *a)
{
    const int D = a->g.ndim;
    const KS_IDX n = (KS_IDX)a->g.n_in;
    const int64_t T = (int64_t)1 << a->g.hash_bits;
    KS_SP_LOOP(n * (KS_IDX)a->g.kvol)
    {
        const KS_IDX i = index % n, k = index / n;
        int64_t c[3] = {0, 0, 0}, ka[3] = {0, 0, 0}, o[3] = {0, 0, 0};
        ks_sparse_offset(&a->g, (int64_t)k, ka);
        /* the work event first: its fields are the offset's digits and the candidate */
        const int32_t *srow = a->indices + i * (D + 1);
        for (int q = 0; q < D; ++q) c[q] = srow[1 + q];
        const int ok = ks_sparse_candidate(&a->g, c, ka, o);
        if (D == 2) {
            KS_PROBE(ks_probe_work(t, KS_SP_S_WORK, index, iter, k, i, ka[0], ka[1], c[0], c[1], o[0], o[1]));
        } else {
            KS_PROBE(ks_probe_work(t, KS_SP_S_WORK, index, iter, k, i, ka[0], ka[1], ka[2], o[0], o[1], o[2]));
        }
        const int64_t b = KS_VARIANT(ks_sparse_read_site)(t, a, i, c);
        KS_PROBE(if (a->trace_tensor_grid != KS_NO_TENSOR)
                     ks_probe_point(t, KS_SP_S_SITE_IN, a->trace_tensor_grid, (int)k,
                                    ks_sparse_plane(D, b, c, a->g.in_shape), c[D - 2], c[D - 1]));
        int32_t row = -1;
        if (ok) {
            KS_PROBE(if (a->trace_tensor_out_grid != KS_NO_TENSOR)
                         ks_probe_point(t, KS_SP_S_SITE_OUT, a->trace_tensor_out_grid, (int)k,
                                        ks_sparse_plane(D, b, o, a->g.out_shape), o[D - 2], o[D - 1]));
            const int64_t key = ks_sparse_key(D, b, o, a->g.out_shape);
            int64_t slot = ks_sparse_hash(key, a->g.hash_bits);
            for (int64_t probe = 0; probe < T; ++probe, slot = (slot + 1) & (T - 1)) {
                const int64_t have = a->hash_keys[slot];
                KS_PROBE(ks_probe_read_int(t, KS_SP_S_PROBE, KS_SP_T_HASH_KEYS, (int)probe, slot, 0, 0, slot, have));
                if (have == key) {
                    row = a->hash_rows[slot];
                    break;
                }
                if (have < key) break; /* empty (-1) or smaller: the key would sit here, so it is absent */
            }
        }
        a->pair_table[index] = row;
        a->pair_flag[index] = row >= 0;
        KS_PROBE(ks_probe_write_int(t, KS_SP_S_PAIR, KS_SP_T_PAIR_TABLE, (int)k, index, 0, k, i, row, 0));
        if (row >= 0) {
            ks_atomic_count_i32(a->pair_count + k); /* a warp's pairs of one offset: one atomicAdd */
            KS_PROBE(ks_probe_write_int(t, KS_SP_S_COUNT, KS_SP_T_PAIR_COUNT, (int)k, k, 0, 0, k, 1, 1));
        }
    }
}
KS_KERNEL(ks_sparse_rulebook, ks_sparse_args)

/* compact: work item (k, i): a pair goes to rulebook row pair_pos[k, i] */
KS_FN void KS_VARIANT(ks_sparse_compact_body)(ks_thread *t, const ks_sparse_args *a)
{
    const KS_IDX n = (KS_IDX)a->g.n_in;
    KS_SP_LOOP(n * (KS_IDX)a->g.kvol)
    {
        const int32_t row = a->pair_table[index];
        if (row < 0) continue;
        int32_t *r = a->rulebook + (KS_IDX)a->pair_pos[index] * 3;
        r[0] = (int32_t)(index / n), r[1] = (int32_t)(index % n), r[2] = row;
    }
}
KS_KERNEL(ks_sparse_compact, ks_sparse_args)

/* index_pairs: work item = pair p: where each (k, row) has its pair, per side */
KS_FN void KS_VARIANT(ks_sparse_index_pairs_body)(ks_thread *t, const ks_sparse_args *a)
{
    const int inv = a->g.mode == KS_SP_INVERSE;
    KS_SP_LOOP(a->g.pairs)
    {
        const int32_t *r = a->pairs_ro + index * 3;
        const KS_IDX k = r[0], in_row = inv ? r[2] : r[1], out_row = inv ? r[1] : r[2];
        a->out_pair[k * (KS_IDX)a->g.n_out + out_row] = (int32_t)index;
        a->in_pair[k * (KS_IDX)a->g.n_in + in_row] = (int32_t)index;
        if (a->count_pairs) ks_atomic_add_i32(a->pair_count + k, 1);
    }
}
KS_KERNEL(ks_sparse_index_pairs, ks_sparse_args)

/* gather: work item (p, c), index = p*C + c: dst[p, c] = src[rulebook[p, col], c] */
KS_FN void KS_VARIANT(ks_sparse_gather_body)(ks_thread *t, const ks_sparse_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels;
    KS_SP_LOOP(a->rows * C)
    {
        const KS_IDX p = index / C, c = index % C;
        const int32_t *r = a->pairs_ro + p * 3;
        const KS_IDX row = r[a->col];
        KS_PROBE(ks_probe_work(t, KS_SP_S_WORK, index, iter, p, c, r[0], row, 0, 0, 0, 0));
        const float v = a->src[row * C + c];
        KS_PROBE(ks_probe_read(t, KS_SP_S_READ, KS_SP_T_FEATURES, (int)r[0], row * C + c, 0, row, c, v));
        a->dst[index] = v;
        KS_PROBE(ks_probe_write(t, KS_SP_S_WRITE, KS_SP_T_GATHERED, (int)r[0], index, 0, p, c, v, 0));
    }
}
KS_KERNEL(ks_sparse_gather, ks_sparse_args)

/* reduce: work item (o, c), index = o*C + c: the bias, then each offset's product row for
 * this output row, k ascending (the scatter-add of every offset, as one ordered sum) */
KS_FN void KS_VARIANT(ks_sparse_reduce_body)(ks_thread *t, const ks_sparse_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, rows = (KS_IDX)a->rows;
    const int D = a->g.ndim;
    KS_SP_LOOP(rows * C)
    {
        const KS_IDX o = index / C, c = index % C;
        KS_PROBE(ks_probe_work(t, KS_SP_S_WORK, index, iter, o, c, 0, 0, 0, 0, 0, 0));
        if (KS_TRACED && a->trace_tensor_out_grid != KS_NO_TENSOR) { /* the output site, for the viewer */
            int64_t oc[3] = {0, 0, 0};
            const int32_t *s = a->out_indices + o * (D + 1);
            for (int q = 0; q < D; ++q) oc[q] = s[1 + q];
            ks_probe_point(t, KS_SP_S_TO, a->trace_tensor_out_grid, 0, ks_sparse_plane(D, s[0], oc, a->g.out_shape),
                           oc[D - 2], oc[D - 1]);
        }
        float acc = a->bias ? a->bias[c] : 0.0f;
        for (KS_IDX k = 0; k < (KS_IDX)a->g.kvol; ++k) {
            const int32_t q = a->table[k * rows + o];
            if (q < 0) continue;
            const float v = a->prod[(KS_IDX)q * C + c];
            KS_PROBE(ks_probe_read(t, KS_SP_S_READ, KS_SP_T_PRODUCTS, (int)k, (int64_t)q * C + c, 0, q, c, v));
            if (KS_TRACED && a->trace_tensor_grid != KS_NO_TENSOR) { /* where it comes from */
                int64_t ic[3] = {0, 0, 0};
                const int32_t *s = a->indices + (KS_IDX)a->pairs_ro[(KS_IDX)q * 3 + a->col] * (D + 1);
                for (int d = 0; d < D; ++d) ic[d] = s[1 + d];
                ks_probe_point(t, KS_SP_S_FROM, a->trace_tensor_grid, (int)k,
                               ks_sparse_plane(D, s[0], ic, a->g.in_shape), ic[D - 2], ic[D - 1]);
            }
            acc += v;
        }
        a->out[index] = acc;
        KS_PROBE(ks_probe_write(t, KS_SP_S_WRITE, KS_SP_T_OUT_FEATURES, 0, index, 0, o, c, acc, 0));
    }
}
KS_KERNEL(ks_sparse_reduce, ks_sparse_args)

/* sites: work item = site row r: its row number into the dense site map */
KS_FN void KS_VARIANT(ks_sparse_sites_body)(ks_thread *t, const ks_sparse_args *a)
{
    const int D = a->g.ndim;
    KS_SP_LOOP(a->rows)
    {
        int64_t c[3];
        const int32_t *s = a->site_rows + index * (D + 1);
        for (int q = 0; q < D; ++q) c[q] = s[1 + q];
        a->grid[ks_sparse_key(D, s[0], c, a->grid_shape)] = (int32_t)index;
    }
}
KS_KERNEL(ks_sparse_sites, ks_sparse_args)

/* colsum: work item = channel c: the sum of column c over the rows, rows ascending */
KS_FN void KS_VARIANT(ks_sparse_colsum_body)(ks_thread *t, const ks_sparse_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels;
    KS_SP_LOOP(C)
    {
        float s = 0.0f;
        for (KS_IDX r = 0; r < (KS_IDX)a->rows; ++r) s += a->src[r * C + index];
        a->dst[index] = s;
    }
}
KS_KERNEL(ks_sparse_colsum, ks_sparse_args)
#undef KS_SP_LOOP
#endif /* KS_VARIANT */
