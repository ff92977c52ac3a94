/* Host side of im2col/col2im shared by every build: parameter checks, output size,
 * kernel arguments and the trace schema. */
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "im2col_body.h"

/* a*b, or -1 if it passes `limit` (operands >= 0). */
static int64_t mul_capped(int64_t a, int64_t b, int64_t limit)
{
    if (a < 0 || b < 0 || (b != 0 && a > limit / b)) return -1;
    return a * b;
}

static int64_t mul4(int64_t a, int64_t b, int64_t c, int64_t d, int64_t limit)
{
    int64_t ab = mul_capped(a, b, limit);
    int64_t abc = ab < 0 ? -1 : mul_capped(ab, c, limit);
    return abc < 0 ? -1 : mul_capped(abc, d, limit);
}

int ks_im2col_geometry(const ks_im2col_params *p, ks_im2col_geom *g)
{
    /* sizes are limited so that every coordinate fits the trace's 32-bit fields and
     * every element count times sizeof(float) fits in 64 bits */
    const int64_t dim_max = INT32_MAX, numel_max = INT64_MAX / 8;
    const ks_size_check checks[] = {
        {.name = "batch", .v = p->batch, .lo = 1},
        {.name = "channels", .v = p->channels, .lo = 1},
        {.name = "height", .v = p->height, .lo = 1},
        {.name = "width", .v = p->width, .lo = 1},
        KS_WINDOW_SIZE_CHECKS(p),
    };
    int rc = ks_check_sizes(checks, sizeof checks / sizeof checks[0]);
    if (rc) return rc;
    /* each term is < 2^31, so these sums and products cannot overflow int64 */
    const int64_t ext_h = p->dilation_h * (p->kernel_h - 1) + 1;
    const int64_t ext_w = p->dilation_w * (p->kernel_w - 1) + 1;
    /* C division truncates toward 0 (Caffe/MXNet), unlike torch unfold's floor */
    g->height_col = (p->height + 2 * p->pad_h - ext_h) / p->stride_h + 1;
    g->width_col = (p->width + 2 * p->pad_w - ext_w) / p->stride_w + 1;
    if (g->height_col < 1 || g->width_col < 1)
        return ks_fail(KS_EINVAL,
                       "output size %lldx%lld < 1: input %lldx%lld, kernel %lldx%lld, "
                       "padding %lldx%lld, stride %lldx%lld, dilation %lldx%lld",
                       (long long)g->height_col, (long long)g->width_col, (long long)p->height, (long long)p->width,
                       (long long)p->kernel_h, (long long)p->kernel_w, (long long)p->pad_h, (long long)p->pad_w,
                       (long long)p->stride_h, (long long)p->stride_w, (long long)p->dilation_h,
                       (long long)p->dilation_w);
    g->rows = mul4(p->channels, p->kernel_h, p->kernel_w, 1, dim_max);
    const int64_t plane = mul_capped(g->height_col, g->width_col, dim_max);
    g->image_numel = mul4(p->batch, p->channels, p->height, p->width, numel_max);
    g->im2col_work = mul4(p->batch, p->channels, g->height_col, g->width_col, numel_max);
    g->columns_numel = g->rows < 0 || plane < 0 ? -1 : mul4(p->batch, g->rows, plane, 1, numel_max);
    if (g->rows < 0 || plane < 0 || g->image_numel < 0 || g->im2col_work < 0 || g->columns_numel < 0)
        return ks_fail(KS_EINVAL,
                       "sizes too large: N=%lld C=%lld H=%lld W=%lld kernel "
                       "%lldx%lld overflow the element counts",
                       (long long)p->batch, (long long)p->channels, (long long)p->height, (long long)p->width,
                       (long long)p->kernel_h, (long long)p->kernel_w);
    return KS_OK;
}

int ks_im2col_args_make(const ks_im2col_params *p, const float *src, float *dst, ks_im2col_args *a, ks_im2col_geom *g)
{
    int rc = ks_im2col_geometry(p, g);
    if (rc) return rc;
    ks_im2col_args_fill(p, g, src, dst, a);
    return KS_OK;
}

void ks_im2col_args_fill(const ks_im2col_params *p, const ks_im2col_geom *g, const float *src, float *dst,
                         ks_im2col_args *a)
{
    a->batch = p->batch;
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
    a->height_col = g->height_col;
    a->width_col = g->width_col;
    a->src = src;
    a->dst = dst;
}

int ks_im2col_sites(const ks_im2col_args *p, ks_site *s)
{
    const int64_t Ho = p->height_col, Wo = p->width_col;
    memset(&s[0], 0, sizeof s[0]);
    snprintf(s[0].name, sizeof s[0].name, "im2col.work");
    s[0].kind = KS_EV_WORK;
    s[0].tensor = -1;
    s[0].nfields = 4;
    ks_field_digit(&s[0].fields[0], "n", p->channels * Ho * Wo, 0, 0);
    ks_field_digit(&s[0].fields[1], "c_im", Ho * Wo, p->channels, 0);
    ks_field_digit(&s[0].fields[2], "h_col", Wo, Ho, 0);
    ks_field_digit(&s[0].fields[3], "w_col", 1, Wo, 0);
    ks_site_access(&s[1], "im2col.read_input", KS_EV_READ, KS_IM2COL_T_INPUT, 0);
    ks_site_access(&s[2], "im2col.write_columns", KS_EV_WRITE, KS_IM2COL_T_COLUMNS, 1);
    return 3;
}

int ks_col2im_sites(const ks_im2col_args *p, ks_site *s)
{
    char e[KS_EXPR_LEN];
    const long long ext_h = p->dilation_h * (p->kernel_h - 1) + 1;
    const long long ext_w = p->dilation_w * (p->kernel_w - 1) + 1;
    memset(&s[0], 0, sizeof s[0]);
    snprintf(s[0].name, sizeof s[0].name, "col2im.work");
    s[0].kind = KS_EV_WORK;
    s[0].tensor = -1;
    s[0].nfields = 8;
    ks_field_digit(&s[0].fields[0], "n", p->channels * p->height * p->width, 0, 0);
    ks_field_digit(&s[0].fields[1], "c_im", p->height * p->width, p->channels, 0);
    ks_field_digit(&s[0].fields[2], "h_im", p->width, p->height, p->pad_h);
    ks_field_digit(&s[0].fields[3], "w_im", 1, p->width, p->pad_w);
    snprintf(e, sizeof e, "h_im < %lld ? 0 : (h_im - %lld) / %lld + 1", ext_h, ext_h, (long long)p->stride_h);
    ks_field_derived(&s[0].fields[4], "h_col_start", e);
    snprintf(e, sizeof e, "min(h_im / %lld + 1, %lld)", (long long)p->stride_h, (long long)p->height_col);
    ks_field_derived(&s[0].fields[5], "h_col_end", e);
    snprintf(e, sizeof e, "w_im < %lld ? 0 : (w_im - %lld) / %lld + 1", ext_w, ext_w, (long long)p->stride_w);
    ks_field_derived(&s[0].fields[6], "w_col_start", e);
    snprintf(e, sizeof e, "min(w_im / %lld + 1, %lld)", (long long)p->stride_w, (long long)p->width_col);
    ks_field_derived(&s[0].fields[7], "w_col_end", e);
    ks_site_access(&s[1], "col2im.read_columns", KS_EV_READ, KS_COL2IM_T_COLUMNS, 0);
    ks_site_access(&s[2], "col2im.write_output", KS_EV_WRITE, KS_COL2IM_T_OUTPUT, 1);
    return 3;
}

int ks_col2im_scatter_sites(const ks_im2col_args *p, ks_site *s)
{
    char e[KS_EXPR_LEN];
    const long long kh = p->kernel_h, kw = p->kernel_w, rows = p->channels * kh * kw;
    const long long Ho = p->height_col, Wo = p->width_col;
    memset(&s[0], 0, sizeof s[0]);
    snprintf(s[0].name, sizeof s[0].name, "col2im_scatter.work");
    s[0].kind = KS_EV_WORK;
    s[0].tensor = -1;
    s[0].nfields = 6;
    ks_field_digit(&s[0].fields[0], "n", rows * Ho * Wo, 0, 0);
    ks_field_digit(&s[0].fields[1], "c_col", Ho * Wo, rows, 0);
    ks_field_digit(&s[0].fields[2], "h_col", Wo, Ho, 0);
    ks_field_digit(&s[0].fields[3], "w_col", 1, Wo, 0);
    snprintf(e, sizeof e, "h_col * %lld - %lld + c_col / %lld %% %lld * %lld", (long long)p->stride_h,
             (long long)p->pad_h, kw, kh, (long long)p->dilation_h);
    ks_field_derived(&s[0].fields[4], "h", e);
    snprintf(e, sizeof e, "w_col * %lld - %lld + c_col %% %lld * %lld", (long long)p->stride_w, (long long)p->pad_w, kw,
             (long long)p->dilation_w);
    ks_field_derived(&s[0].fields[5], "w", e);
    ks_site_access(&s[1], "col2im_scatter.read_columns", KS_EV_READ, KS_COL2IM_T_COLUMNS, 0);
    ks_site_access(&s[2], "col2im_scatter.add_output", KS_EV_WRITE, KS_COL2IM_T_OUTPUT, 0);
    return 3;
}
