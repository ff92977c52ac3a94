/* gemm_tiled_op.c - the descriptor of gemm_tiled (C = A B through shared-memory tiles): its
 * parameter and tensor rows, the sizes (validated here, once), the trace schema, the
 * built-in inputs (small integers, so products are exact) and the simulator launch, a
 * cooperative one (the body has barriers). The body is gemm_tiled_body.h. */
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../registry.h"

#define KS_BODY "../gemm_tiled/gemm_tiled_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"

enum { K_TILED }; /* kernel rows */
enum { P_M, P_K, P_N, P_TILE, P_ALGORITHM, P_PLANT, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    [P_M] = {.name = "m", .def = {19}, .min = 1, .help = "rows of a and c (taken from a given a)"},
    [P_K] = {.name = "k", .def = {23}, .min = 1, .help = "columns of a, rows of b (taken from a given a or b)"},
    [P_N] = {.name = "n", .def = {17}, .min = 1, .help = "columns of b and c (taken from a given b)"},
    [P_TILE] = {.name = "tile",
                .kind = KS_PARAM_CHOICE,
                .choices = "16|32",
                .def = {0},
                .help = "tile side T: a block is T x T threads"},
    [P_ALGORITHM] = {.name = "algorithm",
                     .kind = KS_PARAM_CHOICE,
                     .choices = "tiled|naive",
                     .def = {0},
                     .help = "tiled, or naive: each thread reads its row and column from global memory"},
    [P_PLANT] = {.name = "plant",
                 .kind = KS_PARAM_CHOICE,
                 .choices = "none|no-first-barrier|no-second-barrier|divergent-barrier",
                 .def = {0},
                 .help = "a planted bug (tiled; docs/simulator.md)"},
};

static const ks_tensor_spec tensors[] = {
    [KS_GT_T_A] = {.name = "a", .shape = "(M, K)"},
    [KS_GT_T_B] = {.name = "b", .shape = "(K, N)", .seed = 1},
    [KS_GT_T_C] = {.name = "c", .output = 1, .shape = "(M, N)"},
    [KS_GT_T_SHARED] = {.name = "shared",
                        .output = 1,
                        .shape =
                            "(2, T, T): the block's a and b tiles, as the trace's shared events name them (left 0)"},
};

int64_t ks_gemm_tiled_work(const ks_gemm_tiled_args *a)
{
    const int64_t T = a->tile;
    return (a->m + T - 1) / T * ((a->n + T - 1) / T) * T * T;
}

static int sizes(ks_run *r, ks_gemm_tiled_args *a)
{
    const ks_dim_bind ab[] = {{.dim = 0, .param = P_M}, {.dim = 1, .param = P_K}};
    const ks_dim_bind bb[] = {{.dim = 0, .param = P_K}, {.dim = 1, .param = P_N}};
    const ks_tensor *ta = &r->tensor[KS_GT_T_A], *tb = &r->tensor[KS_GT_T_B];
    /* both given: say which sizes disagree, not which shape one of them "must" have */
    if (r->given[KS_GT_T_A] && r->given[KS_GT_T_B] && ta->ndim == 2 && tb->ndim == 2 && ta->shape[1] != tb->shape[0])
        return ks_fail(KS_EINVAL, "a has K = %lld columns but b has %lld rows (a is (M, K), b is (K, N))",
                       (long long)ta->shape[1], (long long)tb->shape[0]);
    int rc = ks_run_take(r, KS_GT_T_A, 2, ab, KS_COUNT(ab));
    if (rc || (rc = ks_run_take(r, KS_GT_T_B, 2, bb, KS_COUNT(bb)))) return rc;
    *a = (ks_gemm_tiled_args){
        .m = r->value[P_M][0],
        .k = r->value[P_K][0],
        .n = r->value[P_N][0],
        .tile = r->value[P_TILE][0] ? 32 : 16,
        .naive = (int)r->value[P_ALGORITHM][0],
        .plant = (int)r->value[P_PLANT][0],
    };
    const ks_size_check checks[] = {
        {.name = "m", .v = a->m, .lo = 1},
        {.name = "k", .v = a->k, .lo = 1},
        {.name = "n", .v = a->n, .lo = 1},
    };
    if ((rc = ks_check_sizes(checks, KS_COUNT(checks)))) return rc;
    /* the padded grid of tiles (each side < 2^31 + 32) must keep every product in int64 */
    const int64_t T = a->tile, mp = (a->m + T - 1) / T * T, np = (a->n + T - 1) / T * T;
    if (mp > INT64_MAX / 8 / np || a->m > INT64_MAX / 8 / a->k || a->k > INT64_MAX / 8 / a->n)
        return ks_fail(KS_EINVAL, "sizes too large: m*k, k*n or the tiles of m*n overflow the element count");
    return KS_OK;
}

/* The schema (the row's .sites, on prepare's args): the work site names the tile and the
 * thread's place in it; row and col are derived (checked by `check`); then a's and b's
 * reads, the shared traffic, c's write. */
static int sites(const void *args, ks_site *s)
{
    const ks_gemm_tiled_args *a = args;
    const int64_t T = a->tile, tiles_n = (a->n + T - 1) / T;
    ks_site *w = &s[KS_GT_SITE_WORK];
    char e[KS_EXPR_LEN];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "gemm_tiled.work");
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    w->nfields = 6;
    ks_field_digit(&w->fields[0], "tile_row", tiles_n * T * T, 0, 0);
    ks_field_digit(&w->fields[1], "tile_col", T * T, tiles_n, 0);
    ks_field_digit(&w->fields[2], "ty", T, T, 0);
    ks_field_digit(&w->fields[3], "tx", 1, T, 0);
    snprintf(e, sizeof e, "tile_row * %lld + ty", (long long)T);
    ks_field_derived(&w->fields[4], "row", e);
    snprintf(e, sizeof e, "tile_col * %lld + tx", (long long)T);
    ks_field_derived(&w->fields[5], "col", e);
    ks_site_access(&s[KS_GT_SITE_READ_A], "gemm_tiled.read_a", KS_EV_READ, KS_GT_T_A, 0);
    ks_site_access(&s[KS_GT_SITE_READ_B], "gemm_tiled.read_b", KS_EV_READ, KS_GT_T_B, 0);
    ks_site_access(&s[KS_GT_SITE_SHARED_READ], "gemm_tiled.shared_read", KS_EV_READ, KS_GT_T_SHARED, 0);
    ks_site_access(&s[KS_GT_SITE_SHARED_WRITE], "gemm_tiled.shared_write", KS_EV_WRITE, KS_GT_T_SHARED, 0);
    ks_site_access(&s[KS_GT_SITE_BARRIER], "gemm_tiled.barrier", KS_EV_BARRIER, KS_GT_T_SHARED, 0);
    ks_site_access(&s[KS_GT_SITE_WRITE_C], "gemm_tiled.write_c", KS_EV_WRITE, KS_GT_T_C,
                   a->plant == KS_GT_PLANT_DIVERGENT ? 0 : 1);
    return KS_GT_NSITES;
}

static int prepare(ks_run *r)
{
    ks_gemm_tiled_args *a = KS_RUN_CTX(r, ks_gemm_tiled_args);
    int rc = sizes(r, a);
    if (rc) return rc;
    const int64_t T = a->tile;
    if (r->launch.threads && r->launch.threads != T * T)
        return ks_fail(KS_EINVAL, "--threads %d: a gemm_tiled block is one tile, --tile %lld needs %lld threads",
                       r->launch.threads, (long long)T, (long long)(T * T));
    ks_run_shape4(r, KS_GT_T_A, 2, a->m, a->k, 0, 0);
    ks_run_shape4(r, KS_GT_T_B, 2, a->k, a->n, 0, 0);
    ks_run_shape4(r, KS_GT_T_C, 2, a->m, a->n, 0, 0);
    ks_run_shape4(r, KS_GT_T_SHARED, 3, 2, T, T, 0);
    ks_run_fact(r, "tiles", "[%lld, %lld]", (long long)((a->m + T - 1) / T), (long long)((a->n + T - 1) / T));
    r->default_threads = (int)(T * T);
    r->work_items = ks_gemm_tiled_work(a);
    ks_run_trace_row(r, K_TILED);
    return KS_OK;
}

/* Built-in a and b (the default pattern): small integers, a in -2..2 and b in -1..2, so
 * every product and sum is exact and a lesson can show the numbers. Other patterns: theirs. */
static int fill(ks_run *r, int t)
{
    if (r->pattern != KS_PAT_ARANGE || (t != KS_GT_T_A && t != KS_GT_T_B)) return KS_ENOENT;
    float *x = r->tensor[t].data;
    const int64_t n = ks_tensor_numel(&r->tensor[t]);
    for (int64_t i = 0; i < n; ++i) x[i] = t == KS_GT_T_A ? (float)((i * 7 + 3) % 5 - 2) : (float)((i * 5 + 1) % 4 - 1);
    return KS_OK;
}

/* the kernel row: a block is one T x T tile (its threads are fixed by --tile) */
static int tile_threads(const void *a)
{
    const ks_gemm_tiled_args *g = a;
    return (int)(g->tile * g->tile);
}

static const ks_kernel kernels[] = {
    [K_TILED] = KS_KERNEL_ROW(ks_gemm_tiled, "tiled", .sites = sites, .block_of = tile_threads,
                              .block_cap = KS_GT_BLOCK_CAP, .coop = 1,
                              .help = "one C element per thread, a T x T tile per block, two barriers per step"),
};

int ks_gemm_tiled_sim(const ks_gemm_tiled_args *a, const ks_launch *l, ks_sink *sink, ks_sim_report *rep)
{
    int threads;
    int64_t blocks;
    int rc = ks_launch_resolve(l, (int)(a->tile * a->tile), KS_GT_BLOCK_CAP, ks_gemm_tiled_work(a), &threads, &blocks);
    if (rc) return rc;
    if (threads != a->tile * a->tile)
        return ks_fail(KS_EINVAL, "gemm_tiled: a block is one %lld x %lld tile, not %d threads", (long long)a->tile,
                       (long long)a->tile, threads);
    return ks_sim_launch_coop(blocks, threads, sink ? ks_gemm_tiled_sim_traced : ks_gemm_tiled_sim_plain, a, sink, rep);
}

int ks_gemm_tiled_cuda(const ks_gemm_tiled_args *a, const ks_launch *l, const ks_sink *dev_sink)
{
    ks_exec x = ks_exec_make(kernels, KS_COUNT(kernels), KS_DEV_CUDA, l);
    x.sink = (ks_sink *)dev_sink, x.trace = K_TILED;
    ks_exec_size(&x, a->m * a->k), ks_exec_size(&x, a->k * a->n), ks_exec_size(&x, a->m * a->n);
    return ks_exec_kernel(&x, K_TILED, a, ks_gemm_tiled_work(a));
}

static int run(ks_exec *x, const ks_run *r, void *const *d)
{
    ks_gemm_tiled_args a = *KS_RUN_CTX(r, const ks_gemm_tiled_args);
    a.a = d[KS_GT_T_A], a.b = d[KS_GT_T_B], a.c = d[KS_GT_T_C];
    return ks_exec_kernel(x, K_TILED, &a, ks_gemm_tiled_work(&a));
}

const ks_op ks_op_gemm_tiled = {
    .name = "gemm_tiled",
    .summary = "C = A B through 16x16 (or 32x32) shared-memory tiles with two barriers; --plant a missing one",
    KS_OP_ROWS(params, tensors),
    KS_OP_KERNELS(kernels),
    .prepare = prepare,
    .fill = fill,
    .run = run,
};
