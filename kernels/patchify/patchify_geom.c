/* patchify_geom.c - host side of patchify: checks, work counts, the trace schema. */
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "patchify_args.h"

int ks_patchify_check(const ks_patchify_params *p)
{
    const ks_size_check checks[] = {
        {.name = "batch", .v = p->batch, .lo = 1},           {.name = "channels", .v = p->channels, .lo = 1},
        {.name = "height", .v = p->height, .lo = 1},         {.name = "width", .v = p->width, .lo = 1},
        {.name = "num_points", .v = p->num_points, .lo = 0}, {.name = "radius", .v = p->radius, .lo = 0},
    };
    int rc = ks_check_sizes(checks, sizeof checks / sizeof checks[0]);
    if (rc) return rc;
    const double D = 2.0 * (double)p->radius + 2;
    if ((double)p->batch * p->num_points * p->channels * D * D > 1e18 ||
        (double)p->batch * p->channels * p->height * p->width > 1e18)
        return ks_fail(KS_EINVAL, "tensor sizes overflow");
    return KS_OK;
}

int64_t ks_patchify_work(const ks_patchify_params *p, ks_patchify_kernel k)
{
    const int64_t D = 2 * p->radius + 2, d = 2 * p->radius + 1, BM = p->batch * p->num_points;
    switch (k) {
    case KS_PATCH_PATCHES:
    case KS_PATCH_PATCHES_BWD: return BM * D * D;
    case KS_PATCH_BILINEAR: return BM * p->channels * d * d;
    default: return BM * p->channels * D * D;
    }
}

int ks_patchify_sites(const ks_patchify_params *p, ks_patchify_kernel k, ks_site *s)
{
    /* zero points: no work, but the schema stays well formed (strides >= 1) */
    const int64_t M = p->num_points > 0 ? p->num_points : 1, C = p->channels, D = 2 * p->radius + 2, d = D - 1;
    static const char *const names[4] = {"patchify", "patchify_bilinear", "patchify_bilinear_backward",
                                         "patchify_backward"};
    char buf[KS_NAME_LEN];
    ks_site *w = &s[KS_PATCH_SITE_WORK];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s.work", names[k]);
    w->kind = KS_EV_WORK;
    w->tensor = -1;
    if (k == KS_PATCH_PATCHES || k == KS_PATCH_PATCHES_BWD) {
        w->nfields = 6;
        ks_field_digit(&w->fields[0], "b", M * D * D, 0, 0);
        ks_field_digit(&w->fields[1], "m", D * D, M, 0);
        ks_field_digit(&w->fields[2], "jj", D, D, 0);
        ks_field_digit(&w->fields[3], "ii", 1, D, 0);
        ks_field_derived(&w->fields[4], "i", "floor(y) + ii - R");
        ks_field_derived(&w->fields[5], "j", "floor(x) + jj - R");
    } else {
        const int64_t e = k == KS_PATCH_BILINEAR ? d : D;
        w->nfields = 5;
        ks_field_digit(&w->fields[0], "b", M * C * e * e, 0, 0);
        ks_field_digit(&w->fields[1], "m", C * e * e, M, 0);
        ks_field_digit(&w->fields[2], "c", e * e, C, 0);
        ks_field_digit(&w->fields[3], k == KS_PATCH_BILINEAR ? "r" : "ii", e, e, 0);
        ks_field_digit(&w->fields[4], k == KS_PATCH_BILINEAR ? "s" : "jj", 1, e, 0);
    }
    static const int reads[4] = {KS_PATCH_T_INPUT, KS_PATCH_T_PATCHES, KS_PATCH_T_GRAD_OUTPUT, KS_PATCH_T_GRAD_PATCHES};
    static const int writes[4] = {KS_PATCH_T_PATCHES, KS_PATCH_T_OUTPUT, KS_PATCH_T_GRAD_PATCHES, KS_PATCH_T_GRAD_INPUT};
    snprintf(buf, sizeof buf, "%s.read", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_READ], buf, KS_EV_READ, reads[k], 0);
    snprintf(buf, sizeof buf, "%s.sample", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_SAMPLE], buf, KS_EV_SAMPLE, KS_PATCH_T_PATCHES, 0);
    snprintf(buf, sizeof buf, "%s.write", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_WRITE], buf, KS_EV_WRITE, writes[k], k == KS_PATCH_PATCHES_BWD ? 0 : 1);
    snprintf(buf, sizeof buf, "%s.patch", names[k]);
    ks_site_access(&s[KS_PATCH_SITE_PATCH], buf, KS_EV_REGION,
                   k == KS_PATCH_PATCHES_BWD ? KS_PATCH_T_GRAD_INPUT : KS_PATCH_T_INPUT, 0);
    return KS_PATCH_NSITES;
}
