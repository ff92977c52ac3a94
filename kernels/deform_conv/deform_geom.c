/* deform_geom.c - host side of the deformable kernels shared by every build: parameter
 * checks, the chunk rule, kernel arguments, launches and the trace schema. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../core/ks_gemm.h"
#include "deform_body.h"

/* a*b*c*d, or -1 past `limit` (operands >= 0) */
static int64_t mul(int64_t a, int64_t b, int64_t c, int64_t d, int64_t limit)
{
    const int64_t f[3] = {b, c, d};
    int64_t r = a;
    for (int i = 0; i < 3; ++i) {
        if (r < 0 || f[i] < 0 || (f[i] != 0 && r > limit / f[i])) return -1;
        r *= f[i];
    }
    return r;
}

/* The images per chunk from the bound p->im2col_step. mmcv: min(bound, N), N divisible by
 * it. torchvision: the largest divisor of N that is <= the bound (batch 33, bound 32 -> 11). */
static int chunk_im2col_step(const ks_deform_params *p, int64_t *im2col_step)
{
    const int64_t N = p->batch, bound = p->im2col_step;
    if (N == 0) {
        *im2col_step = 0;
        return KS_OK;
    }
    if (p->semantics == KS_DEFORM_TORCHVISION) {
        int64_t s = bound < N ? bound : N;
        while (N % s) --s;
        *im2col_step = s;
        return KS_OK;
    }
    const int64_t s = bound < N ? bound : N;
    if (N % s)
        return ks_fail(KS_EINVAL, "batch size must be divisible by im2col_step (batch %lld, im2col_step %lld)",
                       (long long)N, (long long)s);
    *im2col_step = s;
    return KS_OK;
}

int ks_deform_geometry(const ks_deform_params *p, ks_deform_geom *g)
{
    const int64_t dim_max = INT32_MAX, numel_max = INT64_MAX / 8;
    const ks_size_check checks[] = {
        {.name = "batch", .v = p->batch, .lo = 0},
        {.name = "channels", .v = p->channels, .lo = 1},
        {.name = "height", .v = p->height, .lo = 1},
        {.name = "width", .v = p->width, .lo = 1},
        {.name = "out_channels", .v = p->out_channels, .lo = 1},
        KS_WINDOW_SIZE_CHECKS(p),
        {.name = "groups", .v = p->groups, .lo = 1},
        {.name = "offset_groups", .v = p->offset_groups, .lo = 1},
        {.name = "im2col_step", .v = p->im2col_step, .lo = 1},
    };
    memset(g, 0, sizeof *g);
    int rc = ks_check_sizes(checks, sizeof checks / sizeof checks[0]);
    if (rc) return rc;
    if (p->semantics != KS_DEFORM_MMCV && p->semantics != KS_DEFORM_TORCHVISION)
        return ks_fail(KS_EINVAL, "semantics must be mmcv or torchvision");
    if (p->math != KS_MATH_FP32 && p->math != KS_MATH_TF32) return ks_fail(KS_EINVAL, "math must be fp32 or tf32");
    if (p->fused != 0 && p->fused != 1 && p->fused != 24 && p->fused != 42 && p->fused != 422 && p->fused != 44)
        return ks_fail(KS_EINVAL, "fused must be 0 (off), 1 (on) or a tile shape 24, 42, 422, 44 (got %d)", p->fused);
    if (p->grad_kernel < 0 || p->grad_kernel > 2 || p->grad_columns < 0 || p->grad_columns > 1)
        return ks_fail(KS_EINVAL, "grad_kernel must be 0..2 and grad_columns 0..1 (got %d, %d)", p->grad_kernel,
                       p->grad_columns);
    const struct {
        int v, max, pow2;
        const char *name;
    } tile[4] = {{p->tile_positions, 1024, 1, "tile_positions"},
                 {p->tile_windows, 16, 0, "tile_windows"},
                 {p->gather_positions, 1024, 1, "gather_positions"},
                 {p->gather_channels, 32, 0, "gather_channels"}};
    for (int i = 0; i < 4; ++i)
        if (tile[i].v < 0 || tile[i].v > tile[i].max || (tile[i].pow2 && (tile[i].v & (tile[i].v - 1))))
            return ks_fail(KS_EINVAL, "%s must be 0 (the default) or %s 1..%d (got %d)", tile[i].name,
                           tile[i].pow2 ? "a power of 2 in" : "in", tile[i].max, tile[i].v);
    if (p->channels % p->groups || p->out_channels % p->groups)
        return ks_fail(KS_EINVAL, "groups %lld must divide channels %lld and out_channels %lld", (long long)p->groups,
                       (long long)p->channels, (long long)p->out_channels);
    if (p->channels % p->offset_groups)
        return ks_fail(KS_EINVAL, "offset_groups %lld must divide channels %lld", (long long)p->offset_groups,
                       (long long)p->channels);
    if (p->semantics == KS_DEFORM_MMCV && (p->height < p->kernel_h || p->width < p->kernel_w))
        return ks_fail(KS_EINVAL, "input image is smaller than kernel (%lldx%lld < %lldx%lld)", (long long)p->height,
                       (long long)p->width, (long long)p->kernel_h, (long long)p->kernel_w);
    const int64_t ext_h = p->dilation_h * (p->kernel_h - 1) + 1;
    const int64_t ext_w = p->dilation_w * (p->kernel_w - 1) + 1;
    /* C division truncates toward 0, as in both references */
    g->height_out = (p->height + 2 * p->pad_h - ext_h) / p->stride_h + 1;
    g->width_out = (p->width + 2 * p->pad_w - ext_w) / p->stride_w + 1;
    if (g->height_out < 1 || g->width_out < 1)
        return ks_fail(KS_EINVAL,
                       "output size %lldx%lld < 1 (input %lldx%lld, kernel extent %lldx%lld, padding %lldx%lld)",
                       (long long)g->height_out, (long long)g->width_out, (long long)p->height, (long long)p->width,
                       (long long)ext_h, (long long)ext_w, (long long)p->pad_h, (long long)p->pad_w);
    rc = chunk_im2col_step(p, &g->im2col_step);
    if (rc) return rc;
    const int64_t P = g->height_out * g->width_out, kk = p->kernel_h * p->kernel_w;
    const int64_t im2col_step = g->im2col_step > 0 ? g->im2col_step : 1;
    g->rows = mul(p->channels, kk, 1, 1, dim_max);
    g->input_numel = mul(p->batch, p->channels, p->height, p->width, numel_max);
    g->offset_numel = mul(p->batch, p->offset_groups * 2, kk, P, numel_max);
    g->mask_numel = mul(p->batch, p->offset_groups, kk, P, numel_max);
    g->weight_numel = mul(p->out_channels, p->channels / p->groups, kk, 1, numel_max);
    g->output_numel = mul(p->batch, p->out_channels, P, 1, numel_max);
    g->col_numel = mul(g->rows < 0 ? -1 : g->rows, im2col_step, P, 1, numel_max);
    g->im2col_work = mul(p->channels, im2col_step, P, 1, numel_max);
    g->col2im_work = g->col_numel;
    g->coord_work = mul(im2col_step, p->offset_groups * 2, kk, P, numel_max);
    const int64_t all[] = {g->rows,         g->input_numel,
                           g->offset_numel, g->mask_numel,
                           g->weight_numel, g->output_numel,
                           g->col_numel,    g->im2col_work,
                           g->coord_work,   mul(p->out_channels, im2col_step, P, 1, numel_max)};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (all[i] < 0) return ks_fail(KS_EINVAL, "tensor sizes overflow (a product of sizes passes 2^60)");
    return KS_OK;
}

int64_t ks_deform_workspace_floats(const ks_deform_params *p)
{
    ks_deform_geom g;
    if (ks_deform_geometry(p, &g)) return -1;
    const int64_t im2col_step = g.im2col_step > 0 ? g.im2col_step : 1;
    /* columns [C*kh*kw, im2col_step*P] + GEMM buffer [O, im2col_step*P] */
    return g.col_numel + p->out_channels * im2col_step * g.height_out * g.width_out;
}

int64_t ks_deform_work(const ks_deform_geom *g, const ks_deform_params *p, ks_deform_kernel k, int64_t im2col_step)
{
    const int64_t P = g->height_out * g->width_out, kk = p->kernel_h * p->kernel_w;
    switch (k) {
    case KS_DEFORM_IM2COL: return p->channels * im2col_step * P;
    case KS_DEFORM_COL2IM: return g->rows * im2col_step * P;
    case KS_DEFORM_IM2COL_TAP: {
        const int64_t cpg = p->channels / p->offset_groups;
        return p->offset_groups * ((cpg + KS_DEFORM_TAP_CHANNELS - 1) / KS_DEFORM_TAP_CHANNELS) * kk * im2col_step * P;
    }
    case KS_DEFORM_GRAD_TAP:
    case KS_DEFORM_GRAD_TILE:
    case KS_DEFORM_GRAD_GATHER: return im2col_step * p->offset_groups * kk * P;
    default: return im2col_step * p->offset_groups * 2 * kk * P;
    }
}

int ks_deform_args_make(const ks_deform_params *p, const ks_deform_chunk *c, ks_deform_args *a, ks_deform_geom *g)
{
    int rc = ks_deform_geometry(p, g);
    if (rc) return rc;
    if (c->im2col_step < 1 || c->im2col_step > g->im2col_step)
        return ks_fail(KS_EINVAL, "a chunk holds 1..%lld images (got %lld)", (long long)g->im2col_step,
                       (long long)c->im2col_step);
    if (p->use_mask && !c->mask) return ks_fail(KS_EINVAL, "use_mask is set but mask is NULL");
    ks_deform_args_fill(p, g, c, a);
    return KS_OK;
}

/* a tile choice of the params (ks_deform_geometry checked it), or its default when 0 */
static int64_t choice_or(int v, int64_t def) { return v > 0 ? v : def; }

void ks_deform_args_fill(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_chunk *c,
                         ks_deform_args *a)
{
    memset(a, 0, sizeof *a);
    a->channels = p->channels;
    a->height = p->height;
    a->width = p->width;
    a->kernel_h = p->kernel_h;
    a->kernel_w = p->kernel_w;
    a->pad_h = p->pad_h;
    a->pad_w = p->pad_w;
    a->stride_h = p->stride_h;
    a->stride_w = p->stride_w;
    a->dilation_h = p->dilation_h;
    a->dilation_w = p->dilation_w;
    a->im2col_step = c->im2col_step;
    a->offset_groups = p->offset_groups;
    a->height_col = g->height_out;
    a->width_col = g->width_out;
    a->use_mask = p->use_mask;
    a->semantics = p->semantics;
    a->input = c->input;
    a->offset = c->offset;
    a->mask = p->use_mask ? c->mask : NULL;
    a->col_in = c->columns_in;
    a->col_out = c->columns;
    a->grad_input = c->grad_input;
    a->grad_offset = c->grad_offset;
    a->grad_mask = c->grad_mask;
    a->tile_positions = choice_or(p->tile_positions, KS_DEFORM_TILE_POSITIONS);
    a->tile_windows = choice_or(p->tile_windows, KS_DEFORM_TILE_WINDOWS);
    a->write_columns = c->write_columns;
    a->gather_positions = choice_or(p->gather_positions, KS_DEFORM_GATHER_POSITIONS);
    a->gather_channels = choice_or(p->gather_channels, KS_DEFORM_GATHER_CHANNELS);
}

/* The tap kernels' schemas (deform_tap_body.h): an item per tap and output position, for
 * im2col_tap also per block of KS_DEFORM_TAP_CHANNELS channels of an offset group. */
static int tap_sites(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k, int64_t step, ks_site *s)
{
    const long long Ho = g->height_out, Wo = g->width_out, P = Ho * Wo, kk = p->kernel_h * p->kernel_w;
    const long long G = p->offset_groups, cpg = p->channels / G, B = KS_DEFORM_TAP_CHANNELS;
    const long long nblk = (cpg + B - 1) / B; /* channel blocks per group */
    char e[KS_EXPR_LEN];
    ks_site *w = &s[KS_DEFORM_SITE_WORK];
    memset(w, 0, sizeof *w);
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    ks_site_access(&s[KS_DEFORM_SITE_READ_OFFSET], "deform.read_offset", KS_EV_READ, KS_DEFORM_T_OFFSET, 0);
    ks_site_access(&s[KS_DEFORM_SITE_READ_MASK], "deform.read_mask", KS_EV_READ, KS_DEFORM_T_MASK, 0);
    ks_site_access(&s[KS_DEFORM_SITE_SAMPLE], "deform.sample", KS_EV_SAMPLE, KS_DEFORM_T_INPUT, 0);
    if (k == KS_DEFORM_IM2COL_TAP) { /* index = (((blk * kk + tap) * step + b) * Ho + h_col) * Wo + w_col */
        snprintf(w->name, sizeof w->name, "deform_im2col_tap.work");
        w->nfields = 8;
        ks_field_digit(&w->fields[0], "blk", kk * step * P, 0, 0);
        ks_field_digit(&w->fields[1], "tap", step * P, kk, 0);
        ks_field_digit(&w->fields[2], "b", P, step, 0);
        ks_field_digit(&w->fields[3], "h_col", Wo, Ho, 0);
        ks_field_digit(&w->fields[4], "w_col", 1, Wo, 0);
        snprintf(e, sizeof e, "blk / %lld", nblk);
        ks_field_derived(&w->fields[5], "g", e);
        snprintf(e, sizeof e, "g * %lld + (blk - g * %lld) * %lld", cpg, nblk, B);
        ks_field_derived(&w->fields[6], "c0", e); /* its first channel */
        snprintf(e, sizeof e, "min(c0 + %lld, (g + 1) * %lld) - c0", B, cpg);
        ks_field_derived(&w->fields[7], "nchan", e); /* and how many (a group's last block may be short) */
        ks_site_access(&s[KS_DEFORM_SITE_WRITE], "deform_im2col_tap.write_columns", KS_EV_WRITE, KS_DEFORM_T_COLUMNS,
                       1);
        return KS_DEFORM_SITE_WRITE + 1;
    }
    /* grad_tap: index = (((b * G + g) * kk + tap) * Ho + h_col) * Wo + w_col */
    snprintf(w->name, sizeof w->name, "deform_grad_tap.work");
    w->nfields = 5;
    ks_field_digit(&w->fields[0], "b", G * kk * P, 0, 0);
    ks_field_digit(&w->fields[1], "g", kk * P, G, 0);
    ks_field_digit(&w->fields[2], "tap", P, kk, 0);
    ks_field_digit(&w->fields[3], "h_col", Wo, Ho, 0);
    ks_field_digit(&w->fields[4], "w_col", 1, Wo, 0);
    const int whole = step == g->im2col_step && p->batch == step; /* the trace holds every gradient */
    ks_site_access(&s[KS_DEFORM_SITE_WRITE], "deform_grad_tap.add_grad_input", KS_EV_WRITE, KS_DEFORM_T_GRAD_INPUT, 0);
    ks_site_access(&s[KS_DEFORM_SITE_READ_COL], "deform.read_columns", KS_EV_READ, KS_DEFORM_T_COLUMNS, 0);
    ks_site_access(&s[KS_DEFORM_SITE_WRITE_MASK], "deform_grad_tap.write_grad_mask", KS_EV_WRITE, KS_DEFORM_T_GRAD_MASK,
                   p->use_mask && whole ? 1 : 0);
    ks_site_access(&s[KS_DEFORM_SITE_WRITE_OFFSET], "deform_grad_tap.write_grad_offset", KS_EV_WRITE,
                   KS_DEFORM_T_GRAD_OFFSET, whole ? 1 : 0);
    return KS_DEFORM_SITE_WRITE_OFFSET + 1;
}

int ks_deform_sites(const ks_deform_params *p, const ks_deform_geom *g, ks_deform_kernel k, int64_t im2col_step,
                    ks_site *s)
{
    if (k == KS_DEFORM_IM2COL_TAP || k == KS_DEFORM_GRAD_TAP) return tap_sites(p, g, k, im2col_step, s);
    const int64_t Ho = g->height_out, Wo = g->width_out, P = Ho * Wo;
    const int64_t kh = p->kernel_h, kw = p->kernel_w, kk = kh * kw, G = p->offset_groups;
    char expr[KS_EXPR_LEN];
    ks_site *w = &s[KS_DEFORM_SITE_WORK];
    memset(w, 0, sizeof *w);
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    /* the offset group: channel / (C / G_off) */
    snprintf(expr, sizeof expr, "%s / %lld", k == KS_DEFORM_IM2COL ? "c_im" : "c", (long long)(p->channels / G));
    if (k == KS_DEFORM_IM2COL) {
        snprintf(w->name, sizeof w->name, "deform_im2col.work");
        w->nfields = 5;
        ks_field_digit(&w->fields[0], "c_im", P * im2col_step, 0, 0);
        ks_field_digit(&w->fields[1], "b", P, im2col_step, 0);
        ks_field_digit(&w->fields[2], "h_col", Wo, Ho, 0);
        ks_field_digit(&w->fields[3], "w_col", 1, Wo, 0);
        ks_field_derived(&w->fields[4], "g", expr);
    } else if (k == KS_DEFORM_COL2IM) {
        snprintf(w->name, sizeof w->name, "deform_col2im.work");
        w->nfields = 7;
        ks_field_digit(&w->fields[0], "c", P * im2col_step * kk, 0, 0);
        ks_field_digit(&w->fields[1], "i", P * im2col_step * kw, kh, 0);
        ks_field_digit(&w->fields[2], "j", P * im2col_step, kw, 0);
        ks_field_digit(&w->fields[3], "b", P, im2col_step, 0);
        ks_field_digit(&w->fields[4], "h_col", Wo, Ho, 0);
        ks_field_digit(&w->fields[5], "w_col", 1, Wo, 0);
        ks_field_derived(&w->fields[6], "g", expr);
    } else {
        snprintf(w->name, sizeof w->name, "deform_coord.work");
        w->nfields = 6;
        ks_field_digit(&w->fields[0], "b", P * 2 * kk * G, 0, 0);
        ks_field_digit(&w->fields[1], "g", P * 2 * kk, G, 0);
        ks_field_digit(&w->fields[2], "tap", P * 2, kk, 0);
        ks_field_digit(&w->fields[3], "dir", P, 2, 0);
        ks_field_digit(&w->fields[4], "h_col", Wo, Ho, 0);
        ks_field_digit(&w->fields[5], "w_col", 1, Wo, 0);
    }
    ks_site_access(&s[KS_DEFORM_SITE_READ_OFFSET], "deform.read_offset", KS_EV_READ, KS_DEFORM_T_OFFSET, 0);
    ks_site_access(&s[KS_DEFORM_SITE_READ_MASK], "deform.read_mask", KS_EV_READ, KS_DEFORM_T_MASK, 0);
    ks_site_access(&s[KS_DEFORM_SITE_SAMPLE], k == KS_DEFORM_COORD ? "deform.sample_derivative" : "deform.sample",
                   KS_EV_SAMPLE, k == KS_DEFORM_COL2IM ? KS_DEFORM_T_GRAD_INPUT : KS_DEFORM_T_INPUT, 0);
    if (k == KS_DEFORM_IM2COL)
        ks_site_access(&s[KS_DEFORM_SITE_WRITE], "deform_im2col.write_columns", KS_EV_WRITE, KS_DEFORM_T_COLUMNS, 1);
    else if (k == KS_DEFORM_COL2IM)
        ks_site_access(&s[KS_DEFORM_SITE_WRITE], "deform_col2im.add_grad_input", KS_EV_WRITE, KS_DEFORM_T_GRAD_INPUT,
                       0);
    else
        ks_site_access(&s[KS_DEFORM_SITE_WRITE], "deform_coord.write_grad_offset", KS_EV_WRITE, KS_DEFORM_T_GRAD_OFFSET,
                       im2col_step == g->im2col_step && p->batch == im2col_step ? 1 : 0);
    if (k == KS_DEFORM_IM2COL) return KS_DEFORM_SITE_WRITE + 1;
    ks_site_access(&s[KS_DEFORM_SITE_READ_COL], "deform.read_columns", KS_EV_READ, KS_DEFORM_T_COLUMNS, 0);
    ks_site_access(&s[KS_DEFORM_SITE_WRITE_MASK], "deform_coord.write_grad_mask", KS_EV_WRITE, KS_DEFORM_T_GRAD_MASK,
                   k == KS_DEFORM_COORD && p->use_mask && p->batch == im2col_step ? 1 : 0);
    return KS_DEFORM_NSITES;
}

/* the arguments of a full chunk without pointers: what the tile kernels' geometry reads */
static ks_deform_args sizes_of(const ks_deform_params *p, const ks_deform_geom *g)
{
    ks_deform_chunk c;
    ks_deform_args a;
    memset(&c, 0, sizeof c);
    c.im2col_step = g->im2col_step;
    ks_deform_args_fill(p, g, &c, &a);
    return a;
}

int ks_deform_tile_fits(const ks_deform_params *p, const ks_deform_geom *g)
{
    const ks_deform_args a = sizes_of(p, g);
    return p->kernel_h * p->kernel_w <= 512 && ks_deform_tile_of(&a).windows >= 1;
}

int ks_deform_gather_fits(const ks_deform_params *p, const ks_deform_geom *g)
{
    const ks_deform_args a = sizes_of(p, g);
    return p->kernel_h * p->kernel_w <= 512 && ks_deform_gather_of(&a).nb >= 1;
}

int ks_deform_gather_launch(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_args *a,
                            const ks_launch *launch, int *threads, int64_t *blocks, size_t *shared)
{
    const ks_deform_gather s = ks_deform_gather_of(a);
    if (p->kernel_h * p->kernel_w > 512)
        return ks_fail(KS_EINVAL, "grad_gather: a %lldx%lld kernel passes 512 taps (a thread each)",
                       (long long)p->kernel_h, (long long)p->kernel_w);
    if (s.nb < 1)
        return ks_fail(KS_EINVAL,
                       "grad_gather: the lists of a %lldx%lld window and %lld entries pass %d floats of "
                       "shared memory",
                       (long long)s.w.rh, (long long)s.w.rw, (long long)s.entries, KS_DEFORM_GATHER_CAP);
    const int64_t tiles = a->im2col_step * p->offset_groups * ((g->height_out + s.w.th - 1) / s.w.th) *
                          ((g->width_out + s.w.tw - 1) / s.w.tw);
    const int64_t cap = launch && launch->block_cap > 0 ? launch->block_cap : KS_DEFORM_BLOCK_CAP;
    *threads = (int)s.entries;
    *blocks = tiles < cap ? tiles : cap;
    *shared = (size_t)s.floats * 4;
    return KS_OK;
}

int ks_deform_fused_choice(const ks_deform_params *p) { return p->fused; }

/* The tile shape, as MN (M, N warps): p->fused 24, 42 or 44 picks one (422: 42 at two
 * blocks an SM, 128 registers); otherwise (1) 44 (256 x 128) when a group has more than
 * 128 outputs, else 24 (128 x 128). */
int ks_deform_fused_shape(const ks_deform_params *p)
{
    const int choice = ks_deform_fused_choice(p);
    return choice > 1 ? choice : p->out_channels / p->groups > 128 ? 44 : 24;
}

/* The fused row's tile_of: shape MN is M x N warps, 32*M*N threads over 64*M outputs (y)
 * x 32*N columns (x), two stages of (64*M + 32*N) x 32 floats of shared memory. */
void ks_deform_fused_tile(const void *args, ks_tile *t)
{
    const int shape = ((const ks_deform_fused_row *)args)->shape;
    const int M = shape == 24 ? 2 : 4, N = shape == 44 || shape == 24 ? 4 : 2;
    t->threads = 32 * M * N, t->y = 64 * M, t->x = 32 * N;
    t->shared = 2 * (size_t)(t->x + t->y) * 32 * sizeof(float);
}

int ks_deform_fused_fits(const ks_deform_params *p, const ks_deform_geom *g)
{
    const int64_t lim = (int64_t)1 << 30, Cg = p->channels / p->groups, cpg = p->channels / p->offset_groups;
    if (!ks_deform_fused_choice(p)) return 0; /* opt-in: slower than im2col + cuBLAS so far */
    /* the prepared weight: every group's rows rounded up to the tallest tile, 256 */
    const int64_t Og = p->out_channels / p->groups, wf = p->groups * ((Og + 255) / 256 * 256) * (g->rows / p->groups);
    return p->math == KS_MATH_TF32 && Cg % 32 == 0 && cpg % 32 == 0 && g->input_numel < lim && g->offset_numel < lim &&
           g->mask_numel < lim && g->output_numel < lim && g->col_numel < lim && wf < lim &&
           wf <= ks_deform_workspace_floats(p) && p->groups <= 65535 && (Og + 127) / 128 <= 65535;
}

static _Atomic long long fused_launches;

void ks_deform_fused_launched(void) { ++fused_launches; }

long long ks_deform_fused_launches(void) { return fused_launches; }

int ks_deform_tile_launch(const ks_deform_params *p, const ks_deform_geom *g, const ks_deform_args *a,
                          const ks_launch *launch, int *threads, int64_t *blocks)
{
    const ks_deform_tile t = ks_deform_tile_of(a);
    const int64_t kk = p->kernel_h * p->kernel_w;
    if (kk > 512 || t.windows < 1)
        return ks_fail(KS_EINVAL, "grad_tile: a %lldx%lld window passes %d floats of shared memory", (long long)t.rh,
                       (long long)t.rw, KS_DEFORM_TILE_CAP);
    const int64_t tiles = a->im2col_step * p->offset_groups * ((g->height_out + t.th - 1) / t.th) *
                          ((g->width_out + t.tw - 1) / t.tw);
    const int64_t cap = launch && launch->block_cap > 0 ? launch->block_cap : KS_DEFORM_BLOCK_CAP;
    *threads = (int)(kk * t.th * t.tw);
    *blocks = tiles < cap ? tiles : cap;
    return KS_OK;
}
