/* sparse_conv_ref.c - the double reference of sparse convolution, from coordinates alone:
 * sites as sorted key lists searched by bisection (no hash table, no kernel code), sums in
 * double. It also counts the output sites and pairs that prepare sizes the outputs by. */
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"
#include "sparse_conv_body.h"

typedef struct triple {
    int64_t key; /* output key (regular, transposed) */
    int32_t k, i;
} triple;

static int cmp_key(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_triple(const void *a, const void *b)
{
    const triple *x = a, *y = b;
    if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
    if (x->k != y->k) return x->k - y->k;
    return x->i - y->i;
}

static int cmp_pair(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

int64_t ks_sparse_first_duplicate(const int64_t *keys, int64_t n)
{
    /* sort (key, row) pairs; a repeated key's later row is the duplicate */
    int64_t(*kr)[2] = malloc((size_t)(n ? n : 1) * sizeof *kr);
    if (!kr) return -2;
    for (int64_t i = 0; i < n; ++i) kr[i][0] = keys[i], kr[i][1] = i;
    qsort(kr, (size_t)n, sizeof *kr, cmp_key); /* by key; rows of equal keys in any order */
    int64_t dup = -1;
    for (int64_t i = 1; i < n; ++i)
        if (kr[i][0] == kr[i - 1][0]) {
            const int64_t later = kr[i][1] > kr[i - 1][1] ? kr[i][1] : kr[i - 1][1];
            if (dup < 0 || later < dup) dup = later;
        }
    free(kr);
    return dup;
}

/* The key of a site, row-major over (batch, S). */
static int64_t key_of(int D, const int32_t *row, const int64_t *S)
{
    int64_t key = row[0];
    for (int a = 0; a < D; ++a) key = key * S[a] + row[1 + a];
    return key;
}

/* Output coordinate on one axis of input coordinate c through kernel tap j, or -1: the
 * definitions of the issue, written per axis. */
static int64_t out_coord(const ks_sparse_geom *g, int a, int64_t c, int64_t j)
{
    int64_t o;
    switch (g->mode) {
    case KS_SP_SUBM: /* o + (j - k/2) d = c */ o = c - (j - g->kernel[a] / 2) * g->dilation[a]; break;
    case KS_SP_TRANSPOSED: /* o = c s - p + j d */ o = c * g->stride[a] - g->pad[a] + j * g->dilation[a]; break;
    default: { /* c = o s - p + j d */
        const int64_t t = c + g->pad[a] - j * g->dilation[a];
        if (t < 0 || t % g->stride[a]) return -1;
        o = t / g->stride[a];
    }
    }
    return o >= 0 && o < g->out_shape[a] ? o : -1;
}

int ks_sparse_ref_rulebook(const ks_sparse_geom *g, const int32_t *indices, int64_t *m, int32_t **out_indices,
                           int64_t *pairs, int32_t **rulebook)
{
    const int D = g->ndim;
    const int64_t n = g->n_in, K = g->kvol;
    triple *tr = malloc((size_t)(n * K + 1) * sizeof *tr);
    int64_t *in_keys = malloc((size_t)(n + 1) * sizeof *in_keys);
    int64_t *sorted = NULL;
    *out_indices = NULL, *rulebook = NULL;
    if (!tr || !in_keys) goto oom;
    /* every (k, i) that reaches an output position, with that position's key */
    int64_t nt = 0;
    for (int64_t k = 0; k < K; ++k) {
        int64_t tap[3], rest = k;
        for (int a = D - 1; a >= 0; --a) tap[a] = rest % g->kernel[a], rest /= g->kernel[a];
        for (int64_t i = 0; i < n; ++i) {
            const int32_t *row = indices + i * (D + 1);
            int64_t key = row[0];
            int a = 0;
            for (; a < D; ++a) {
                const int64_t o = out_coord(g, a, row[1 + a], tap[a]);
                if (o < 0) break;
                key = key * g->out_shape[a] + o;
            }
            if (a < D) continue;
            tr[nt].key = key, tr[nt].k = (int32_t)k, tr[nt].i = (int32_t)i;
            nt++;
        }
    }
    /* the output sites: submanifold keeps the input's (in its order); otherwise the
     * distinct keys reached, ascending */
    int64_t mo = 0;
    if (g->mode == KS_SP_SUBM) {
        mo = n;
        for (int64_t i = 0; i < n; ++i) in_keys[i] = key_of(D, indices + i * (D + 1), g->in_shape);
        if (!(sorted = malloc((size_t)(n + 1) * 2 * sizeof *sorted))) goto oom;
        for (int64_t i = 0; i < n; ++i) sorted[2 * i] = in_keys[i], sorted[2 * i + 1] = i;
        qsort(sorted, (size_t)n, 2 * sizeof *sorted, cmp_key);
    } else {
        qsort(tr, (size_t)nt, sizeof *tr, cmp_triple);
        if (!(sorted = malloc((size_t)(nt + 1) * 2 * sizeof *sorted))) goto oom;
        for (int64_t t = 0; t < nt; ++t)
            if (t == 0 || tr[t].key != tr[t - 1].key) sorted[2 * mo] = tr[t].key, sorted[2 * mo + 1] = mo, mo++;
    }
    *out_indices = malloc((size_t)(mo * (D + 1) + 1) * sizeof **out_indices);
    int32_t *pr = malloc((size_t)(nt * 3 + 1) * sizeof *pr);
    *rulebook = pr;
    if (!*out_indices || !pr) goto oom;
    if (g->mode == KS_SP_SUBM) {
        memcpy(*out_indices, indices, (size_t)(n * (D + 1)) * sizeof *indices);
    } else {
        for (int64_t r = 0; r < mo; ++r) { /* decode the key */
            int64_t key = sorted[2 * r];
            for (int a = D - 1; a >= 0; --a)
                (*out_indices)[r * (D + 1) + 1 + a] = (int32_t)(key % g->out_shape[a]), key /= g->out_shape[a];
            (*out_indices)[r * (D + 1)] = (int32_t)key;
        }
    }
    /* the pairs, each output key found by bisection in the sorted sites, then sorted by
     * (k, in_row) */
    int64_t np = 0;
    for (int64_t t = 0; t < nt; ++t) {
        int64_t lo = 0, hi = mo;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (sorted[2 * mid] < tr[t].key) lo = mid + 1;
            else hi = mid;
        }
        if (lo == mo || sorted[2 * lo] != tr[t].key) continue; /* submanifold: not an input site */
        pr[3 * np] = tr[t].k, pr[3 * np + 1] = tr[t].i, pr[3 * np + 2] = (int32_t)sorted[2 * lo + 1];
        np++;
    }
    qsort(pr, (size_t)np, 3 * sizeof *pr, cmp_pair); /* by (k, in_row) */
    *m = mo, *pairs = np;
    free(tr), free(in_keys), free(sorted);
    return KS_OK;
oom:
    free(tr), free(in_keys), free(sorted), free(*out_indices), free(*rulebook);
    *out_indices = NULL, *rulebook = NULL;
    return ks_fail(KS_ENOMEM, "sparse_conv reference: out of memory");
}

void ks_sparse_ref_forward(const ks_sparse_geom *g, const int32_t *rb, int64_t pairs, const float *features,
                           const float *weight, const float *bias, double *out)
{
    const int64_t Ci = g->c_in, Co = g->c_out;
    const int inv = g->mode == KS_SP_INVERSE;
    for (int64_t o = 0; o < g->n_out; ++o)
        for (int64_t c = 0; c < Co; ++c) out[o * Co + c] = bias ? bias[c] : 0.0;
    for (int64_t p = 0; p < pairs; ++p) {
        const int64_t k = rb[3 * p], i = rb[3 * p + (inv ? 2 : 1)], o = rb[3 * p + (inv ? 1 : 2)];
        const float *w = weight + k * Ci * Co;
        for (int64_t ci = 0; ci < Ci; ++ci)
            for (int64_t co = 0; co < Co; ++co) out[o * Co + co] += (double)features[i * Ci + ci] * w[ci * Co + co];
    }
}

void ks_sparse_ref_backward(const ks_sparse_geom *g, const int32_t *rb, int64_t pairs, const float *features,
                            const float *weight, const float *grad_out, double *grad_features, double *grad_weight,
                            double *grad_bias)
{
    const int64_t Ci = g->c_in, Co = g->c_out;
    const int inv = g->mode == KS_SP_INVERSE;
    memset(grad_features, 0, (size_t)(g->n_in * Ci) * sizeof *grad_features);
    memset(grad_weight, 0, (size_t)(g->kvol * Ci * Co) * sizeof *grad_weight);
    memset(grad_bias, 0, (size_t)Co * sizeof *grad_bias);
    for (int64_t o = 0; o < g->n_out; ++o)
        for (int64_t c = 0; c < Co; ++c) grad_bias[c] += grad_out[o * Co + c];
    for (int64_t p = 0; p < pairs; ++p) {
        const int64_t k = rb[3 * p], i = rb[3 * p + (inv ? 2 : 1)], o = rb[3 * p + (inv ? 1 : 2)];
        const float *w = weight + k * Ci * Co;
        for (int64_t ci = 0; ci < Ci; ++ci)
            for (int64_t co = 0; co < Co; ++co) {
                grad_features[i * Ci + ci] += (double)w[ci * Co + co] * grad_out[o * Co + co];
                grad_weight[(k * Ci + ci) * Co + co] += (double)features[i * Ci + ci] * grad_out[o * Co + co];
            }
    }
}
