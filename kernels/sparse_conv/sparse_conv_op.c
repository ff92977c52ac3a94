/* sparse_conv_op.c - the descriptor of sparse_conv (spconv's SparseConv / SubMConv /
 * SparseConvTranspose / SparseInverseConv, 2-D and 3-D): parameter and tensor rows, the
 * geometry and inputs validated once, the built-in scene, the trace schema, and the run:
 * the kernel rows of sparse_conv_body.h in order on the registry's sequence, on either
 * device (the device's own steps - sort, scan, GEMM - come through a small table of
 * functions). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../core/ks_params.h"
#include "../registry.h"

#include "sparse_conv_body.h"

enum {
    P_SPATIAL,
    P_BATCH,
    P_KERNEL,
    P_STRIDE,
    P_PADDING,
    P_DILATION,
    P_OUT_PAD,
    P_SUBM,
    P_TRANSPOSED,
    P_INVERSE,
    P_IN_CH,
    P_OUT_CH,
    P_BIAS,
    P_BACKWARD,
    P_HASH,
    P_COUNT
};

static const ks_param_spec params[P_COUNT] = {
    [P_SPATIAL] = {.name = "spatial-shape",
                   .axes = 3,
                   .def = {11, 13, 0},
                   .min = 1,
                   .help = "H,W or D,H,W of the input space (--inverse: of the output space)"},
    [P_BATCH] = {.name = "batch-size", .def = {0}, .min = 1, .help = "B (auto: 1 + the largest batch index)"},
    [P_KERNEL] = {.name = "kernel-size", .axes = 3, .def = {3, 3, 3}, .min = 1, .help = "per axis, or one for all"},
    [P_STRIDE] = {.name = "stride", .axes = 3, .def = {1, 1, 1}, .min = 1, .help = "per axis (not with --subm)"},
    [P_PADDING] = {.name = "padding", .axes = 3, .def = {0, 0, 0}, .min = 0, .help = "per axis (not with --subm)"},
    [P_DILATION] = {.name = "dilation", .axes = 3, .def = {1, 1, 1}, .min = 1, .help = "spacing of the kernel taps"},
    [P_OUT_PAD] = {.name = "output-padding",
                   .axes = 3,
                   .def = {0, 0, 0},
                   .min = 0,
                   .help = "--transposed: added to the output size (< stride or dilation)"},
    [P_SUBM] = {.name = "subm", .kind = KS_PARAM_SWITCH, .help = "submanifold: the output sites are the input sites"},
    [P_TRANSPOSED] = {.name = "transposed",
                      .kind = KS_PARAM_SWITCH,
                      .help = "transposed: o = i*stride - padding + k*dilation"},
    [P_INVERSE] = {.name = "inverse",
                   .kind = KS_PARAM_SWITCH,
                   .help = "run the given rulebook (of a regular conv with these flags) backwards"},
    [P_IN_CH] = {.name = "in-channels", .def = {1}, .min = 1, .help = "C_in of built-in features (an --in sets it)"},
    [P_OUT_CH] = {.name = "out-channels", .def = {1}, .min = 1, .help = "C_out of a built-in weight (an --in sets it)"},
    [P_BIAS] = {.name = "bias", .kind = KS_PARAM_SWITCH, .help = "add a bias (built in unless --in bias is given)"},
    [P_BACKWARD] = KS_ROW_BACKWARD,
    [P_HASH] = {.name = "hash-slots",
                .def = {0},
                .min = 1,
                .help = "hash table size, a power of two above the sites (auto: >= 2x; small ones collide)"},
};

static const ks_tensor_spec tensors[KS_SP_NTENSORS] = {
    [KS_SP_T_FEATURES] = {.name = "features", .shape = "(n, C_in)"},
    [KS_SP_T_INDICES] = {.name = "indices",
                         .dtype = KS_I32,
                         .shape = "(n, 1 + D) int32: batch, then D coordinates (built in: a ring)"},
    [KS_SP_T_WEIGHT] = {.name = "weight", .shape = "(*kernel, C_in, C_out)", .seed = 2},
    [KS_SP_T_BIAS] = {.name = "bias", .shape = "(C_out): with --bias", .seed = 3},
    [KS_SP_T_GRAD_OUT] = {.name = "grad_out_features", .shape = "(m, C_out): with --backward", .seed = 4},
    [KS_SP_T_INVERSE_INDICES] = {.name = "inverse_indices",
                                 .dtype = KS_I32,
                                 .shape = "(m, 1 + D) int32: --inverse, the sites to restore"},
    [KS_SP_T_OUT_FEATURES] = {.name = "out_features", .output = 1, .shape = "(m, C_out)"},
    [KS_SP_T_OUT_INDICES] = {.name = "out_indices",
                             .output = 1,
                             .dtype = KS_I32,
                             .shape = "(m, 1 + D) int32, sorted by (batch, d0, ..) (subm: the input's)"},
    [KS_SP_T_RULEBOOK] = {.name = "rulebook",
                          .output = 1,
                          .may_give = 1,
                          .dtype = KS_I32,
                          .shape = "(P, 3) int32 (offset, in_row, out_row) sorted; --inverse takes one"},
    [KS_SP_T_PAIR_COUNT] = {.name = "pair_count", .output = 1, .dtype = KS_I32, .shape = "(K) int32: pairs per offset"},
    [KS_SP_T_PAIR_TABLE] = {.name = "pair_table",
                            .output = 1,
                            .dtype = KS_I32,
                            .shape = "(K, n) int32: out row of (offset, in row), -1 none"},
    [KS_SP_T_HASH_KEYS] = {.name = "hash_keys",
                           .output = 1,
                           .dtype = KS_I64,
                           .shape = "(T) int64: site keys, -1 empty"},
    [KS_SP_T_HASH_ROWS] = {.name = "hash_rows", .output = 1, .dtype = KS_I32, .shape = "(T) int32: the key's row"},
    [KS_SP_T_GATHERED] = {.name = "gathered", .output = 1, .shape = "(P, C_in): input rows, pair by pair"},
    [KS_SP_T_PRODUCTS] = {.name = "products", .output = 1, .shape = "(P, C_out): gathered @ weight[offset]"},
    [KS_SP_T_IN_SITES] = {.name = "in_sites",
                          .output = 1,
                          .dtype = KS_I32,
                          .shape = "(B[*D0], H, W) int32: row of each input site, -1 none (small spaces)"},
    [KS_SP_T_OUT_SITES] = {.name = "out_sites",
                           .output = 1,
                           .dtype = KS_I32,
                           .shape = "(B[*D0'], H', W') int32: row of each output site, -1 none"},
    [KS_SP_T_GRAD_FEATURES] = {.name = "grad_features", .output = 1, .shape = "(n, C_in): with --backward"},
    [KS_SP_T_GRAD_WEIGHT] = {.name = "grad_weight", .output = 1, .shape = "(*kernel, C_in, C_out): with --backward"},
    [KS_SP_T_GRAD_BIAS] = {.name = "grad_bias", .output = 1, .shape = "(C_out): with --backward and --bias"},
};

/* site maps are kept for spaces of at most this many cells */
#define SITE_MAP_CELLS (1 << 22)

typedef struct sp_ctx {
    ks_sparse_geom g; /* first: the kernel rows' .sites read it (ks_sparse_sites) */
    int trace;        /* which kernel the sink goes to (ks_sparse_kernel) */
    int backward;
} sp_ctx;
_Static_assert(offsetof(sp_ctx, g) == 0, "the state begins with the geometry");

/* ---- geometry -------------------------------------------------------------------- */

static int axes_of(ks_run *r, int p, int D, int64_t *v)
{
    const int n = r->nvalues[p];
    if (n > 1 && n != D)
        return ks_fail(KS_EINVAL, "--%s has %d values but the space has %d axes", r->op->params[p].name, n, D);
    for (int a = 0; a < D; ++a) v[a] = n == 1 ? r->value[p][0] : r->value[p][a]; /* 0: the defaults */
    return KS_OK;
}

/* The spatial shape, D and the window per axis, the output shape. */
static int geometry(ks_run *r, ks_sparse_geom *g)
{
    const ks_tensor *ix = &r->tensor[KS_SP_T_INDICES];
    int D = r->nvalues[P_SPATIAL] ? r->nvalues[P_SPATIAL] : 2;
    if (ix->data && ix->ndim == 2 && !r->nvalues[P_SPATIAL])
        return ks_fail(KS_EINVAL, "--spatial-shape is needed with --in indices (H,W or D,H,W)");
    if (ix->data && (ix->ndim != 2 || ix->shape[1] != D + 1))
        return ks_fail(KS_EINVAL, "indices must have shape (n, %d) for a %d-D space; got %d dimensions%s", D + 1, D,
                       ix->ndim, ix->ndim == 2 ? " with another column count" : "");
    if (D == 1) return ks_fail(KS_EINVAL, "--spatial-shape needs 2 or 3 sizes (H,W or D,H,W)");
    g->mode = r->value[P_INVERSE][0]      ? KS_SP_INVERSE
              : r->value[P_TRANSPOSED][0] ? KS_SP_TRANSPOSED
              : r->value[P_SUBM][0]       ? KS_SP_SUBM
                                          : KS_SP_REGULAR;
    if (r->value[P_SUBM][0] + r->value[P_TRANSPOSED][0] + r->value[P_INVERSE][0] > 1)
        return ks_fail(KS_EINVAL, "--subm, --transposed and --inverse exclude each other");
    int64_t v[6][3];
    static const int rows[6] = {P_SPATIAL, P_KERNEL, P_STRIDE, P_PADDING, P_DILATION, P_OUT_PAD};
    for (int q = 0; q < 6; ++q) {
        int rc = axes_of(r, rows[q], D, v[q]);
        if (rc) return rc;
    }
    const int mode = g->mode;
    /* batch, sites and channels come later (prepare): the shapes are all this needs */
    return ks_sparse_geom_init(g, D, mode, 1, v[0], v[1], v[2], v[3], v[4], v[5], 0, 1, 1, 0);
}

/* Sites of an index tensor: columns, batch and coordinates in range, no site twice. */
static int check_sites(const char *what, const ks_tensor *t, int64_t B, const int64_t *S, int D)
{
    const int32_t *ix = t->data;
    const int64_t n = t->shape[0];
    int64_t *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    if (!keys) return ks_fail(KS_ENOMEM, "out of memory checking %s", what);
    for (int64_t i = 0; i < n; ++i) {
        int64_t c[3];
        const int32_t *row = ix + i * (D + 1);
        if (row[0] < 0 || row[0] >= B) {
            free(keys);
            return ks_fail(KS_EINVAL, "%s row %lld: batch %d outside 0..%lld", what, (long long)i, row[0],
                           (long long)B - 1);
        }
        for (int a = 0; a < D; ++a) {
            c[a] = row[1 + a];
            if (c[a] < 0 || c[a] >= S[a]) {
                free(keys);
                return ks_fail(KS_EINVAL, "%s row %lld: coordinate %d is %d, outside 0..%lld", what, (long long)i, a,
                               row[1 + a], (long long)S[a] - 1);
            }
        }
        keys[i] = ks_sparse_key(D, row[0], c, S);
    }
    int64_t dup = ks_sparse_first_duplicate(keys, n);
    free(keys);
    if (dup == -2) return ks_fail(KS_ENOMEM, "out of memory checking %s", what);
    if (dup >= 0)
        return ks_fail(KS_EINVAL, "%s: row %lld repeats an earlier site (sites must be unique)", what, (long long)dup);
    return KS_OK;
}

/* --inverse: the rulebook must be one of a regular convolution from `n_out` sites (our
 * outputs) to `n_in` (our inputs): offsets in range, grouped by offset ascending, rows in
 * range, no row twice within an offset on either side. Counts pairs per offset. */
static int check_rulebook(const ks_tensor *t, const ks_sparse_geom *g)
{
    if (t->ndim != 2 || t->shape[1] != 3)
        return ks_fail(KS_EINVAL, "rulebook must have shape (P, 3): offset, in_row, out_row");
    const int32_t *rb = t->data;
    int32_t *seen_a = calloc((size_t)g->n_out + 1, sizeof *seen_a),
            *seen_b = calloc((size_t)g->n_in + 1, sizeof *seen_b);
    int rc = seen_a && seen_b ? KS_OK : ks_fail(KS_ENOMEM, "out of memory checking the rulebook");
    for (int64_t p = 0; p < t->shape[0] && !rc; ++p) {
        const int32_t k = rb[3 * p], a = rb[3 * p + 1], b = rb[3 * p + 2];
        if (k < 0 || k >= g->kvol || (p && k < rb[3 * (p - 1)]))
            rc = ks_fail(KS_EINVAL,
                         "rulebook row %lld: offset %d is outside 0..%lld or out of order (rows go by offset)",
                         (long long)p, k, (long long)g->kvol - 1);
        else if (a < 0 || a >= g->n_out || b < 0 || b >= g->n_in)
            rc = ks_fail(KS_EINVAL,
                         "rulebook row %lld: rows (%d, %d) outside the %lld inverse_indices and %lld indices rows",
                         (long long)p, a, b, (long long)g->n_out, (long long)g->n_in);
        else if (seen_a[a] == k + 1 || seen_b[b] == k + 1)
            rc = ks_fail(KS_EINVAL, "rulebook row %lld: offset %d pairs a row twice (not a convolution's rulebook)",
                         (long long)p, k);
        else seen_a[a] = seen_b[b] = k + 1;
    }
    free(seen_a);
    free(seen_b);
    return rc;
}

/* ---- the built-in scene ----------------------------------------------------------- */

/* A ring of active sites around the middle of each plane (3-D: each z-slice, its radius
 * growing with z); a second batch element, if any, gets a smaller ring. It visits every
 * cell of the space, so the space is bounded first by the work a run's trace holds by
 * default (KS_TRACE_LIMIT_DEFAULT, 2^26): a 2^30 x 2^30 space used to spin for hours
 * (in `lesson --check` too, whose size check runs this prepare). */
static int scene(ks_run *r, const ks_sparse_geom *g, int64_t B)
{
    const int D = g->ndim;
    const int64_t *S = g->mode == KS_SP_INVERSE ? g->out_shape : g->in_shape;
    const int64_t H = S[D - 2], W = S[D - 1], Z = D == 3 ? S[0] : 1;
    const double cells = (double)B * (double)Z * (double)H * (double)W;
    if (cells > (double)KS_TRACE_LIMIT_DEFAULT)
        return ks_fail(KS_EINVAL,
                       "the built-in scene visits every cell of the space: %.0f cells (batch x spatial "
                       "shape), more than %llu; give the sites with --in indices=I.npy, or a smaller --spatial-shape",
                       cells, (unsigned long long)KS_TRACE_LIMIT_DEFAULT);
    int64_t n = 0;
    for (int pass = 0; pass < 2; ++pass) {
        int32_t *row = pass ? r->tensor[KS_SP_T_INDICES].data : NULL;
        for (int64_t b = 0; b < B; ++b)
            for (int64_t z = 0; z < Z; ++z)
                for (int64_t y = 0; y < H; ++y)
                    for (int64_t x = 0; x < W; ++x) {
                        const double cy = (H - 1) / 2.0, cx = (W - 1) / 2.0;
                        const double rad = (H < W ? H : W) * (b ? 0.25 : 0.38) + 0.6 * (double)z;
                        const double d2 = (y - cy) * (y - cy) + (x - cx) * (x - cx);
                        if (d2 < (rad - 0.5) * (rad - 0.5) || d2 >= (rad + 0.5) * (rad + 0.5)) continue;
                        if (row) {
                            *row++ = (int32_t)b;
                            if (D == 3) *row++ = (int32_t)z;
                            *row++ = (int32_t)y, *row++ = (int32_t)x;
                        }
                        n += !pass;
                    }
        if (!pass) {
            const int64_t shape[2] = {n, D + 1};
            ks_run_shape(r, KS_SP_T_INDICES, 2, shape);
            int rc = ks_tensor_alloc(&r->tensor[KS_SP_T_INDICES]);
            if (rc) return rc;
        }
    }
    return KS_OK;
}

/* ---- prepare ---------------------------------------------------------------------- */

static void site_map_shape(const ks_sparse_geom *g, int64_t B, const int64_t *S, int64_t *shape)
{
    shape[0] = g->ndim == 3 ? B * S[0] : B;
    shape[1] = S[g->ndim - 2], shape[2] = S[g->ndim - 1];
}

static void field(ks_field *f, const char *name, const char *fmt, long long a, long long b, long long c, long long d)
{
    char e[KS_EXPR_LEN];
    snprintf(e, sizeof e, fmt, a, b, c, d);
    ks_field_derived(f, name, e);
}

/* The schema of kernel row `trace`. */
int ks_sparse_sites(const ks_sparse_geom *g, int trace, ks_site *s)
{
    static const char *axis[3] = {"z", "y", "x"};
    const int D = g->ndim, first = 3 - D;
    ks_site *w = &s[KS_SP_S_WORK];
    memset(w, 0, sizeof *w);
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    if (trace == KS_SPK_RULEBOOK) {
        snprintf(w->name, sizeof w->name, "sparse_conv.rulebook");
        /* no sites: no work items; a stride of 1 keeps the schema one the reader opens */
        ks_field_digit(&w->fields[0], "k", g->n_in > 0 ? g->n_in : 1, 0, 0);
        ks_field_digit(&w->fields[1], "i", 1, g->n_in, 0);
        w->nfields = 2;
        int64_t m = 1;
        for (int a = D - 1; a >= 0; --a) {
            char name[8];
            snprintf(name, sizeof name, "k%s", axis[first + a]);
            if (a == D - 1) field(&w->fields[2 + a], name, "k %% %lld", (long long)g->kernel[a], 0, 0, 0);
            else if (a == 0) field(&w->fields[2 + a], name, "k / %lld", (long long)m, 0, 0, 0);
            else field(&w->fields[2 + a], name, "k / %lld %% %lld", (long long)m, (long long)g->kernel[a], 0, 0);
            m *= g->kernel[a];
        }
        w->nfields += D;
        if (D == 2) { /* the site's coordinates fit too: then the candidate's formula is checked */
            for (int a = 0; a < 2; ++a) {
                char src[24];
                snprintf(src, sizeof src, "indices[i, %d]", a + 1);
                ks_field_derived(&w->fields[4 + a], axis[1 + a], src);
            }
            w->nfields += 2;
        }
        for (int a = 0; a < D; ++a) {
            char name[8], c[24], ka[8];
            snprintf(name, sizeof name, "o%s", axis[first + a]);
            if (D == 2) snprintf(c, sizeof c, "%s", axis[first + a]);
            else snprintf(c, sizeof c, "indices[i, %d]", a + 1); /* 3-D: the coordinates are not fields */
            snprintf(ka, sizeof ka, "k%s", axis[first + a]);
            char e[KS_EXPR_LEN];
            if (g->mode == KS_SP_SUBM)
                snprintf(e, sizeof e, "%s - (%s - %lld) * %lld", c, ka, (long long)(g->kernel[a] / 2),
                         (long long)g->dilation[a]);
            else if (g->mode == KS_SP_TRANSPOSED)
                snprintf(e, sizeof e, "%s * %lld - %lld + %s * %lld", c, (long long)g->stride[a], (long long)g->pad[a],
                         ka, (long long)g->dilation[a]);
            else
                snprintf(e, sizeof e, "(%s + %lld - %s * %lld) / %lld", c, (long long)g->pad[a], ka,
                         (long long)g->dilation[a], (long long)g->stride[a]);
            ks_field_derived(&w->fields[w->nfields++], name, e);
        }
        ks_site_access(&s[KS_SP_S_READ_INDEX], "sparse_conv.read_site", KS_EV_READ, KS_SP_T_INDICES, 0);
        ks_site_access(&s[KS_SP_S_SITE_IN], "sparse_conv.input_site", KS_EV_REGION, KS_SP_T_IN_SITES, 0);
        ks_site_access(&s[KS_SP_S_SITE_OUT], "sparse_conv.output_site", KS_EV_REGION, KS_SP_T_OUT_SITES, 0);
        ks_site_access(&s[KS_SP_S_PROBE], "sparse_conv.hash_probe", KS_EV_READ, KS_SP_T_HASH_KEYS, 0);
        ks_site_access(&s[KS_SP_S_PAIR], "sparse_conv.write_pair", KS_EV_WRITE, KS_SP_T_PAIR_TABLE, 1);
        ks_site_access(&s[KS_SP_S_COUNT], "sparse_conv.count_pair", KS_EV_WRITE, KS_SP_T_PAIR_COUNT, 0);
        return KS_SP_S_COUNT + 1;
    }
    if (trace == KS_SPK_INSERT) {
        snprintf(w->name, sizeof w->name, "sparse_conv.insert");
        ks_field_digit(&w->fields[0], "r", 1, 0, 0);
        char e[KS_EXPR_LEN];
        int64_t below = 1; /* cells of the axes after axis a */
        for (int a = D - 1; a >= -1; --a) {
            if (g->mode == KS_SP_SUBM) snprintf(e, sizeof e, "indices[r, %d]", a + 1);
            else if (a < 0) snprintf(e, sizeof e, "keys[r] / %lld", (long long)below);
            else snprintf(e, sizeof e, "keys[r] / %lld %% %lld", (long long)below, (long long)g->out_shape[a]);
            ks_field_derived(&w->fields[2 + a], a < 0 ? "b" : axis[first + a], e);
            if (a >= 0) below *= g->out_shape[a];
        }
        snprintf(e, sizeof e, "key * 0x9E3779B97F4A7C15 >> %d", 64 - g->hash_bits);
        ks_field_derived(&w->fields[2 + D], "home", e);
        w->nfields = 3 + D;
        ks_site_access(&s[KS_SP_S_READ_INDEX], "sparse_conv.read_site", KS_EV_READ, KS_SP_T_INDICES, 0);
        ks_site_access(&s[KS_SP_S_SITE_IN], "sparse_conv.input_site", KS_EV_REGION, KS_SP_T_IN_SITES, 0);
        ks_site_access(&s[KS_SP_S_SITE_OUT], "sparse_conv.site", KS_EV_REGION, KS_SP_T_OUT_SITES, 0);
        ks_site_access(&s[KS_SP_S_PROBE], "sparse_conv.hash_probe", KS_EV_READ, KS_SP_T_HASH_KEYS, 0);
        ks_site_access(&s[KS_SP_S_CLAIM], "sparse_conv.hash_claim", KS_EV_WRITE, KS_SP_T_HASH_KEYS, 0);
        ks_site_access(&s[KS_SP_S_WRITE_INDEX], "sparse_conv.write_out_index", KS_EV_WRITE, KS_SP_T_OUT_INDICES,
                       g->mode == KS_SP_SUBM ? 0 : 1);
        return KS_SP_S_WRITE_INDEX + 1;
    }
    if (trace == KS_SPK_GATHER) {
        snprintf(w->name, sizeof w->name, "sparse_conv.gather");
        ks_field_digit(&w->fields[0], "p", g->c_in, 0, 0);
        ks_field_digit(&w->fields[1], "c", 1, g->c_in, 0);
        ks_field_derived(&w->fields[2], "k", "rulebook[p, 0]");
        ks_field_derived(&w->fields[3], "row", g->mode == KS_SP_INVERSE ? "rulebook[p, 2]" : "rulebook[p, 1]");
        w->nfields = 4;
        ks_site_access(&s[KS_SP_S_READ], "sparse_conv.read_features", KS_EV_READ, KS_SP_T_FEATURES, 0);
        ks_site_access(&s[KS_SP_S_WRITE], "sparse_conv.write_gathered", KS_EV_WRITE, KS_SP_T_GATHERED, 1);
        return KS_SP_S_WRITE + 1;
    }
    snprintf(w->name, sizeof w->name, "sparse_conv.reduce");
    ks_field_digit(&w->fields[0], "o", g->c_out, 0, 0);
    ks_field_digit(&w->fields[1], "c", 1, g->c_out, 0);
    w->nfields = 2;
    ks_site_access(&s[KS_SP_S_READ], "sparse_conv.read_product", KS_EV_READ, KS_SP_T_PRODUCTS, 0);
    ks_site_access(&s[KS_SP_S_WRITE], "sparse_conv.write_output", KS_EV_WRITE, KS_SP_T_OUT_FEATURES, 1);
    ks_site_access(&s[KS_SP_S_FROM], "sparse_conv.from_site", KS_EV_REGION, KS_SP_T_IN_SITES, 0);
    ks_site_access(&s[KS_SP_S_TO], "sparse_conv.to_site", KS_EV_REGION, KS_SP_T_OUT_SITES, 0);
    return KS_SP_S_TO + 1;
}

static int prepare(ks_run *r)
{
    sp_ctx *x = KS_RUN_CTX(r, sp_ctx);
    ks_sparse_geom *g = &x->g;
    memset(x, 0, sizeof *x);
    int rc = geometry(r, g);
    if (rc) return rc;
    const int D = g->ndim;
    ks_tensor *ix = &r->tensor[KS_SP_T_INDICES], *feat = &r->tensor[KS_SP_T_FEATURES];
    const int inverse = g->mode == KS_SP_INVERSE;
    /* batch: given, else 1 + the largest batch index of the sites given, else 1 */
    int64_t B = r->set[P_BATCH] ? r->value[P_BATCH][0] : 1;
    if (!r->set[P_BATCH] && ix->data)
        for (int64_t i = 0; i < ix->shape[0]; ++i)
            if ((int64_t)((int32_t *)ix->data)[i * (D + 1)] + 1 > B)
                B = (int64_t)((int32_t *)ix->data)[i * (D + 1)] + 1;
    if (B > ((int64_t)1 << 30))
        return ks_fail(KS_EINVAL, "%s must be < 2^30 (got %lld)",
                       r->set[P_BATCH] ? "--batch-size" : "the batch size (1 + the largest batch index of indices)",
                       (long long)B);
    double space = (double)B;
    for (int a = 0; a < D; ++a) space *= (double)(g->in_shape[a] > g->out_shape[a] ? g->in_shape[a] : g->out_shape[a]);
    if (space >= 4e18) return ks_fail(KS_EINVAL, "the space has too many cells (batch x spatial shape >= 2^62)");
    g->batch = B;
    if (!ix->data) {
        if (inverse)
            return ks_fail(
                KS_EINVAL,
                "--inverse needs --in indices (the sites of the features: the outputs of the convolution it inverts)");
        if ((rc = scene(r, g, B))) return rc;
    }
    if ((rc = check_sites("indices", ix, B, g->in_shape, D))) return rc;
    g->n_in = ix->shape[0];
    const ks_dim_bind fb[] = {{.dim = 1, .param = P_IN_CH, .axis = 0}};
    if ((rc = ks_run_take(r, KS_SP_T_FEATURES, 2, fb, 1))) return rc;
    if (feat->data && feat->shape[0] != g->n_in)
        return ks_fail(KS_EINVAL, "features has %lld rows but indices has %lld sites", (long long)feat->shape[0],
                       (long long)g->n_in);
    /* weight (*kernel, C_in, C_out): the kernel sizes must agree with --kernel-size */
    const ks_tensor *w = &r->tensor[KS_SP_T_WEIGHT];
    if (w->data) {
        if (w->ndim != D + 2)
            return ks_fail(KS_EINVAL, "weight must have shape (*kernel, C_in, C_out): %d dimensions for D = %d", D + 2,
                           D);
        for (int a = 0; a < D; ++a)
            if (w->shape[a] != g->kernel[a])
                return ks_fail(KS_EINVAL, "weight's kernel axis %d is %lld but --kernel-size gives %lld", a,
                               (long long)w->shape[a], (long long)g->kernel[a]);
        if ((rc = ks_run_bind(r, KS_SP_T_WEIGHT, P_IN_CH, 0, w->shape[D]))) return rc;
        if ((rc = ks_run_bind(r, KS_SP_T_WEIGHT, P_OUT_CH, 0, w->shape[D + 1]))) return rc;
    }
    const ks_dim_bind bb[] = {{.dim = 0, .param = P_OUT_CH, .axis = 0}};
    if ((rc = ks_run_take(r, KS_SP_T_BIAS, 1, bb, 1))) return rc;
    g->c_in = r->value[P_IN_CH][0], g->c_out = r->value[P_OUT_CH][0];
    g->use_bias = r->value[P_BIAS][0] || r->tensor[KS_SP_T_BIAS].data;
    x->backward = (int)r->value[P_BACKWARD][0];
    if (g->c_in > (1 << 24) || g->c_out > (1 << 24)) return ks_fail(KS_EINVAL, "channels must be <= 2^24");
    g->n_out = g->pairs = -1;
    if ((double)g->n_in * (double)g->kvol >= 2147483647.0)
        return ks_fail(KS_EINVAL, "sites x kernel offsets must be < 2^31 (got %lld x %lld)", (long long)g->n_in,
                       (long long)g->kvol);
    /* the output sites and pairs: counted here (the kernels build them, and the launch
     * checks its counts against these) */
    if (inverse) {
        ks_tensor *ii = &r->tensor[KS_SP_T_INVERSE_INDICES], *rb = &r->tensor[KS_SP_T_RULEBOOK];
        if (!ii->data || !rb->data)
            return ks_fail(KS_EINVAL, "--inverse needs --in rulebook=R.npy and --in inverse_indices=I.npy");
        if (ii->ndim != 2 || ii->shape[1] != D + 1)
            return ks_fail(KS_EINVAL, "inverse_indices must have shape (m, %d)", D + 1);
        if ((rc = check_sites("inverse_indices", ii, B, g->out_shape, D))) return rc;
        g->n_out = ii->shape[0];
        if ((rc = check_rulebook(rb, g))) return rc;
        g->pairs = rb->shape[0];
        ks_run_shape(r, KS_SP_T_INVERSE_INDICES, 2, ii->shape);
    } else {
        if (r->tensor[KS_SP_T_RULEBOOK].data)
            return ks_fail(KS_EINVAL, "rulebook is given but only --inverse takes one (this run builds its own)");
        int32_t *oi = NULL, *rb = NULL;
        if ((rc = ks_sparse_ref_rulebook(g, ix->data, &g->n_out, &oi, &g->pairs, &rb))) return rc;
        free(oi);
        free(rb);
        ks_run_absent(r, KS_SP_T_INVERSE_INDICES);
        if ((rc = ks_sparse_hash_bits(g->mode == KS_SP_SUBM ? g->n_in : g->n_out,
                                      r->set[P_HASH] ? r->value[P_HASH][0] : 0, &g->hash_bits)))
            return rc;
    }
    if ((double)g->n_out * (double)g->kvol >= 2147483647.0 ||
        (double)g->pairs * (double)(g->c_in > g->c_out ? g->c_in : g->c_out) >= 9e15)
        return ks_fail(KS_EINVAL, "too many output sites or pairs");
    /* which kernel the trace records */
    x->trace = ks_run_trace_row(r, inverse ? KS_SPK_REDUCE : KS_SPK_RULEBOOK); /* the trace's "kernel" says which */
    if (inverse && (x->trace == KS_SPK_RULEBOOK || x->trace == KS_SPK_INSERT))
        return ks_fail(KS_EINVAL, "--inverse builds no rulebook or hash table: trace gather or reduce");
    /* shapes */
    const int64_t n = g->n_in, m = g->n_out, P = g->pairs, K = g->kvol;
    int64_t wshape[5];
    for (int a = 0; a < D; ++a) wshape[a] = g->kernel[a];
    wshape[D] = g->c_in, wshape[D + 1] = g->c_out;
    ks_run_shape4(r, KS_SP_T_FEATURES, 2, n, g->c_in, 0, 0);
    ks_run_shape4(r, KS_SP_T_INDICES, 2, n, D + 1, 0, 0);
    ks_run_shape(r, KS_SP_T_WEIGHT, D + 2, wshape);
    if (g->use_bias) ks_run_shape4(r, KS_SP_T_BIAS, 1, g->c_out, 0, 0, 0);
    else ks_run_absent(r, KS_SP_T_BIAS);
    ks_run_shape4(r, KS_SP_T_OUT_FEATURES, 2, m, g->c_out, 0, 0);
    ks_run_shape4(r, KS_SP_T_OUT_INDICES, 2, m, D + 1, 0, 0);
    ks_run_shape4(r, KS_SP_T_RULEBOOK, 2, P, 3, 0, 0);
    ks_run_shape4(r, KS_SP_T_PAIR_COUNT, 1, K, 0, 0, 0);
    if (inverse) {
        ks_run_absent(r, KS_SP_T_PAIR_TABLE), ks_run_absent(r, KS_SP_T_HASH_KEYS), ks_run_absent(r, KS_SP_T_HASH_ROWS);
    } else {
        ks_run_shape4(r, KS_SP_T_PAIR_TABLE, 2, K, n, 0, 0);
        ks_run_shape4(r, KS_SP_T_HASH_KEYS, 1, (int64_t)1 << g->hash_bits, 0, 0, 0);
        ks_run_shape4(r, KS_SP_T_HASH_ROWS, 1, (int64_t)1 << g->hash_bits, 0, 0, 0);
    }
    ks_run_shape4(r, KS_SP_T_GATHERED, 2, P, g->c_in, 0, 0);
    ks_run_shape4(r, KS_SP_T_PRODUCTS, 2, P, g->c_out, 0, 0);
    int64_t ms[3];
    site_map_shape(g, B, g->in_shape, ms);
    if (ms[0] * ms[1] * ms[2] <= SITE_MAP_CELLS) ks_run_shape(r, KS_SP_T_IN_SITES, 3, ms);
    else ks_run_absent(r, KS_SP_T_IN_SITES);
    site_map_shape(g, B, g->out_shape, ms);
    if (ms[0] * ms[1] * ms[2] <= SITE_MAP_CELLS) ks_run_shape(r, KS_SP_T_OUT_SITES, 3, ms);
    else ks_run_absent(r, KS_SP_T_OUT_SITES);
    if (x->backward) {
        ks_run_shape4(r, KS_SP_T_GRAD_OUT, 2, m, g->c_out, 0, 0);
        ks_run_shape4(r, KS_SP_T_GRAD_FEATURES, 2, n, g->c_in, 0, 0);
        ks_run_shape(r, KS_SP_T_GRAD_WEIGHT, D + 2, wshape);
        if (g->use_bias) ks_run_shape4(r, KS_SP_T_GRAD_BIAS, 1, g->c_out, 0, 0, 0);
        else ks_run_absent(r, KS_SP_T_GRAD_BIAS);
    } else {
        ks_run_absent(r, KS_SP_T_GRAD_OUT), ks_run_absent(r, KS_SP_T_GRAD_FEATURES);
        ks_run_absent(r, KS_SP_T_GRAD_WEIGHT), ks_run_absent(r, KS_SP_T_GRAD_BIAS);
    }
    /* the params JSON: the per-axis values of this space, and what was derived */
    static const char *keys[] = {"spatial_shape", "kernel_size", "stride", "padding", "dilation"};
    const int64_t *rows[] = {g->mode == KS_SP_INVERSE ? g->out_shape : g->in_shape, g->kernel, g->stride, g->pad,
                             g->dilation};
    for (int q = 0; q < 5; ++q)
        ks_run_fact(r, keys[q], D == 2 ? "[%lld, %lld]" : "[%lld, %lld, %lld]", (long long)rows[q][0],
                    (long long)rows[q][1], (long long)rows[q][2]);
    int64_t op[3] = {0, 0, 0}; /* output padding: --transposed only, null otherwise */
    axes_of(r, P_OUT_PAD, D, op);
    if (g->mode == KS_SP_TRANSPOSED)
        ks_run_fact(r, "output_padding", D == 2 ? "[%lld, %lld]" : "[%lld, %lld, %lld]", (long long)op[0],
                    (long long)op[1], (long long)op[2]);
    else ks_run_fact(r, "output_padding", "null");
    ks_run_fact(r, "batch_size", "%lld", (long long)B);
    ks_run_fact(r, "sites", "[%lld, %lld]", (long long)n, (long long)m);
    ks_run_fact(r, "pairs", "%lld", (long long)P);
    ks_run_fact(r, "hash_slots", "%lld", inverse ? 0LL : (long long)1 << g->hash_bits);
    r->work_items = x->trace == KS_SPK_RULEBOOK ? n * K
                    : x->trace == KS_SPK_INSERT ? (g->mode == KS_SP_SUBM ? n : m)
                    : x->trace == KS_SPK_GATHER ? P * g->c_in
                                                : m * g->c_out;
    return KS_OK;
}

/* ---- the run ---------------------------------------------------------------------- */

/* the whole operator on the registry's sequence x: its rows in order, the row
 * r->traced_row recording (sp_ctx.trace, the same) */
static int run(ks_exec *seq, const ks_run *r, void *const *d)
{
    const sp_ctx *x = KS_RUN_CTX(r, const sp_ctx);
    ks_sparse_buffers t = {
        .features = d[KS_SP_T_FEATURES],
        .indices = d[KS_SP_T_INDICES],
        .weight = d[KS_SP_T_WEIGHT],
        .bias = d[KS_SP_T_BIAS],
        .grad_out = d[KS_SP_T_GRAD_OUT],
        .inverse_indices = d[KS_SP_T_INVERSE_INDICES],
        .out_features = d[KS_SP_T_OUT_FEATURES],
        .out_indices = d[KS_SP_T_OUT_INDICES],
        .rulebook = d[KS_SP_T_RULEBOOK],
        .pair_count = d[KS_SP_T_PAIR_COUNT],
        .pair_table = d[KS_SP_T_PAIR_TABLE],
        .hash_keys = d[KS_SP_T_HASH_KEYS],
        .hash_rows = d[KS_SP_T_HASH_ROWS],
        .gathered = d[KS_SP_T_GATHERED],
        .products = d[KS_SP_T_PRODUCTS],
        .in_sites = d[KS_SP_T_IN_SITES],
        .out_sites = d[KS_SP_T_OUT_SITES],
        .grad_features = d[KS_SP_T_GRAD_FEATURES],
        .grad_weight = d[KS_SP_T_GRAD_WEIGHT],
        .grad_bias = d[KS_SP_T_GRAD_BIAS],
    };
#ifdef KS_HAVE_CUDA
    if (r->device == KS_DEV_CUDA) return ks_sparse_run_cuda(seq, &x->g, &t, x->backward);
#endif
    return ks_sparse_run(&ks_sparse_sim_backend, NULL, seq, &x->g, &t, x->backward);
}

const ks_sparse_geom *ks_sparse_geom_of(const ks_run *r) { return &KS_RUN_CTX(r, const sp_ctx)->g; }

/* kscope step's line for the insert kernel: the site's key, which the later fields decode
 * (regular, transposed: keys[r], the r-th sorted output key) or the hash uses (submanifold:
 * made from the input site). key = ((b*S0 + d0)*S1 + d1)[*S2 + d2]. */
static void explain(ks_explain *x)
{
    const ks_site *s = x->site;
    const int fh = ks_site_field(s, "home");
    if (strcmp(s->name, "sparse_conv.insert") || fh < 1) return;
    uint64_t key = 0; /* unsigned: a damaged trace's fields wrap instead of overflowing */
    char expr[KS_EXPR_LEN] = "", work[192] = "";
    const int subm = strstr(s->fields[1].expr, "indices") != NULL;
    for (int f = 1; f < fh; ++f) {
        long long below = 1, v = x->field[f];
        if (subm) { /* the product of the axes after this one */
            for (int a = f; a < fh - 1; ++a) {
                double d;
                const int ok = x->param(x, "spatial_shape", a - 1, &d) && d >= 1 && d <= 65536;
                below = ok && below <= INT32_MAX ? below * (long long)d : 0;
            }
        } else {
            const char *slash = strchr(s->fields[f].expr, '/');
            below = slash ? strtoll(slash + 1, NULL, 10) : 0;
        }
        if (below <= 0 || below > INT32_MAX) break;
        key += (uint64_t)v * (uint64_t)below;
        size_t ue = strlen(expr), uw = strlen(work);
        if (below > 1) {
            snprintf(expr + ue, sizeof expr - ue, "%s%s * %lld", f > 1 ? " + " : "", s->fields[f].name, below);
            snprintf(work + uw, sizeof work - uw, "%s%lld * %lld", f > 1 ? " + " : "", v, below);
        } else {
            snprintf(expr + ue, sizeof expr - ue, "%s%s", f > 1 ? " + " : "", s->fields[f].name);
            snprintf(work + uw, sizeof work - uw, "%s%lld", f > 1 ? " + " : "", v);
        }
    }
    if (subm) {
        x->give(x, "home", "key", expr, work, (double)(int64_t)key);
        return;
    }
    /* the r-th sorted output key: the value the fields below decode, shown there too */
    char text[40];
    x->give(x, s->fields[1].name, "key", "keys[r]", "", (double)(int64_t)key);
    snprintf(text, sizeof text, "%lld", (long long)(int64_t)key);
    x->show(x, "keys[r]", text);
}

const ks_op ks_op_sparse_conv = {
    .name = "sparse_conv",
    .summary =
        "sparse convolution (spconv): rulebook, gather-GEMM-scatter; --subm, --transposed, --inverse, --backward",
    .symbols = "key keys rulebook", /* names explain gives */
    .explain = explain,
    KS_OP_ROWS(params, tensors),
    .kernels = ks_sparse_rows,
    .nkernels = KS_SPK_COUNT,
    .prepare = prepare,
    .run = run,
};
