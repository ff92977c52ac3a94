/* conv2d_geom.c - host side of the conv2d GEMM step: checks, arguments, trace schema. */
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "conv2d_body.h"

int ks_conv2d_geometry(const ks_conv2d_params *p, ks_conv2d_geom *g)
{
    int rc = ks_im2col_geometry(&p->im, &g->im);
    if (rc) return rc;
    const int64_t lim = INT32_MAX, numel_max = INT64_MAX / 8;
    if (p->out_channels < 1 || p->out_channels > lim)
        return ks_fail(KS_EINVAL, "out_channels must be in 1..%lld (got %lld)", (long long)lim,
                       (long long)p->out_channels);
    const int64_t P = g->im.height_col * g->im.width_col;
    const int64_t O = p->out_channels;
    /* every factor is < 2^31 and P, K already fit 2^31: check the products in steps */
    if (O > lim / g->im.rows || O * g->im.rows > lim)
        return ks_fail(KS_EINVAL, "weight O*C*kh*kw = %lld*%lld passes 2^31", (long long)O, (long long)g->im.rows);
    g->weight_numel = O * g->im.rows;
    if (O * P / O != P || O * P > numel_max / p->im.batch) return ks_fail(KS_EINVAL, "output N*O*Ho*Wo is too large");
    g->output_numel = p->im.batch * O * P;
    return KS_OK;
}

int ks_conv_gemm_args_make(const ks_conv2d_params *p, const float *weight, const float *columns, float *output,
                           ks_conv_gemm_args *a, ks_conv2d_geom *g)
{
    int rc = ks_conv2d_geometry(p, g);
    if (rc) return rc;
    memset(a, 0, sizeof *a);
    a->batch = p->im.batch;
    a->out_channels = p->out_channels;
    a->rows = g->im.rows;
    a->height_col = g->im.height_col;
    a->width_col = g->im.width_col;
    a->channels = p->im.channels;
    a->kernel_h = p->im.kernel_h;
    a->kernel_w = p->im.kernel_w;
    a->weight = weight;
    a->columns = columns;
    a->output = output;
    return KS_OK;
}

int ks_conv_gemm_sites(const ks_conv_gemm_args *a, ks_site *s)
{
    const int64_t Ho = a->height_col, Wo = a->width_col, O = a->out_channels;
    memset(&s[0], 0, sizeof s[0]);
    snprintf(s[0].name, sizeof s[0].name, "conv_gemm.work");
    s[0].kind = KS_EV_WORK;
    s[0].tensor = -1;
    s[0].nfields = 4;
    ks_field_digit(&s[0].fields[0], "n", O * Ho * Wo, 0, 0);
    ks_field_digit(&s[0].fields[1], "o", Ho * Wo, O, 0);
    ks_field_digit(&s[0].fields[2], "h_out", Wo, Ho, 0);
    ks_field_digit(&s[0].fields[3], "w_out", 1, Wo, 0);
    ks_site_access(&s[1], "conv_gemm.read_weight", KS_EV_READ, KS_CONV_T_WEIGHT, 0);
    ks_site_access(&s[2], "conv_gemm.read_columns", KS_EV_READ, KS_CONV_T_COLUMNS, 0);
    ks_site_access(&s[3], "conv_gemm.write_output", KS_EV_WRITE, KS_CONV_T_OUTPUT, 1);
    return 4;
}
