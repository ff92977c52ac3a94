/* deform_fixture.h - a deformable-convolution problem for the tests: parameters, random
 * tensors (fixed seed), buffers for every output, and runs of the layer and the
 * reference. */
#ifndef KS_DEFORM_FIXTURE_H
#define KS_DEFORM_FIXTURE_H

#include "../kernels/deform_conv/deform_body.h"
#include "test_util.h"

typedef struct df_case {
    ks_deform_params p;
    ks_deform_geom g;
    float *input, *offset, *mask, *weight, *bias, *grad_output;
    float *output, *grad_input, *grad_offset, *grad_mask, *grad_weight, *grad_bias;
    double *r_out, *r_gi, *r_go, *r_gm, *r_gw, *r_gb;
} df_case;

static inline float *df_alloc(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static inline double *df_dalloc(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* Random tensors for p: input and weight in [-1, 1), offsets in [-spread, spread) (so
 * samples leave the image), masks in [-1, 1) (not clamped, as torchvision tests). */
static inline void df_init(df_case *c, const ks_deform_params *p, uint64_t seed, float spread)
{
    memset(c, 0, sizeof *c);
    c->p = *p;
    ck_assert_msg(ks_deform_geometry(p, &c->g) == KS_OK, "%s", ks_error_message());
    uint64_t s = seed;
    c->input = tu_random(&s, c->g.input_numel);
    c->offset = tu_random(&s, c->g.offset_numel);
    for (int64_t i = 0; i < c->g.offset_numel; ++i) c->offset[i] *= spread;
    c->mask = tu_random(&s, c->g.mask_numel);
    c->weight = tu_random(&s, c->g.weight_numel);
    c->bias = tu_random(&s, p->out_channels);
    c->grad_output = tu_random(&s, c->g.output_numel);
    c->output = df_alloc(c->g.output_numel);
    c->grad_input = df_alloc(c->g.input_numel);
    c->grad_offset = df_alloc(c->g.offset_numel);
    c->grad_mask = df_alloc(c->g.mask_numel);
    c->grad_weight = df_alloc(c->g.weight_numel);
    c->grad_bias = df_alloc(p->out_channels);
    c->r_out = df_dalloc(c->g.output_numel);
    c->r_gi = df_dalloc(c->g.input_numel);
    c->r_go = df_dalloc(c->g.offset_numel);
    c->r_gm = df_dalloc(c->g.mask_numel);
    c->r_gw = df_dalloc(c->g.weight_numel);
    c->r_gb = df_dalloc(p->out_channels);
}

static inline ks_deform_tensors df_tensors(const df_case *c)
{
    ks_deform_tensors t;
    memset(&t, 0, sizeof t);
    t.input = c->input, t.offset = c->offset, t.weight = c->weight;
    t.mask = c->p.use_mask ? c->mask : NULL;
    t.bias = c->p.use_bias ? c->bias : NULL;
    t.output = c->output, t.grad_output = c->grad_output;
    t.grad_input = c->grad_input, t.grad_offset = c->grad_offset, t.grad_weight = c->grad_weight;
    t.grad_mask = c->p.use_mask ? c->grad_mask : NULL;
    t.grad_bias = c->p.use_bias ? c->grad_bias : NULL;
    return t;
}

/* forward and backward on the simulator, and the reference */
static inline void df_run(df_case *c, const ks_launch *l)
{
    ks_deform_tensors t = df_tensors(c);
    ck_assert_msg(ks_deform_forward_sim(&c->p, &t, l, KS_DEFORM_NONE, NULL) == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_deform_backward_sim(&c->p, &t, l, KS_DEFORM_NONE, NULL) == KS_OK, "%s", ks_error_message());
    ks_deform_ref_grads g = {.grad_input = c->r_gi,
                             .grad_offset = c->r_go,
                             .grad_mask = c->r_gm,
                             .grad_weight = c->r_gw,
                             .grad_bias = c->r_gb};
    ks_deform_ref_forward(&c->p, &t, c->r_out);
    ks_deform_ref_backward(&c->p, &t, &g);
}

/* |got - want| <= tol * (1 + |want|) everywhere */
static inline void df_expect(const df_case *c, double tol, const char *ctx)
{
    char what[160];
#define DF_CMP(got, want, n, name)                    \
    snprintf(what, sizeof what, "%s: %s", ctx, name); \
    tu_expect_close(got, want, n, tol, what)
    DF_CMP(c->output, c->r_out, c->g.output_numel, "output");
    DF_CMP(c->grad_input, c->r_gi, c->g.input_numel, "grad_input");
    DF_CMP(c->grad_offset, c->r_go, c->g.offset_numel, "grad_offset");
    DF_CMP(c->grad_weight, c->r_gw, c->g.weight_numel, "grad_weight");
    if (c->p.use_mask) {
        DF_CMP(c->grad_mask, c->r_gm, c->g.mask_numel, "grad_mask");
    }
    if (c->p.use_bias) {
        DF_CMP(c->grad_bias, c->r_gb, c->p.out_channels, "grad_bias");
    }
#undef DF_CMP
}

/* TF32: got within tol of the largest |want| (one tensor), and every output of c so */
static inline void df_scaled(const float *got, const double *want, int64_t n, double tol, const char *what)
{
    double big = 0, err = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
        big = fmax(big, fabs(want[i]));
        if (fabs(got[i] - want[i]) > err) err = fabs(got[i] - want[i]), at = i;
    }
    ck_assert_msg(err <= tol * big, "%s[%lld] off by %g (largest entry %g)", what, (long long)at, err, big);
}

static inline void df_expect_scaled(const df_case *c, double tol, const char *ctx)
{
    char w[96];
    const struct {
        const float *x;
        const double *r;
        int64_t n;
        const char *name;
    } v[] = {{c->output, c->r_out, c->g.output_numel, "output"},
             {c->grad_input, c->r_gi, c->g.input_numel, "grad_input"},
             {c->grad_offset, c->r_go, c->g.offset_numel, "grad_offset"},
             {c->grad_weight, c->r_gw, c->g.weight_numel, "grad_weight"},
             {c->grad_mask, c->r_gm, c->p.use_mask ? c->g.mask_numel : 0, "grad_mask"},
             {c->grad_bias, c->r_gb, c->p.use_bias ? c->p.out_channels : 0, "grad_bias"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        snprintf(w, sizeof w, "%s: %s", ctx, v[i].name);
        df_scaled(v[i].x, v[i].r, v[i].n, tol, w);
    }
}

static inline void df_free(df_case *c)
{
    void *all[] = {c->input,  c->offset,     c->mask,        c->weight,    c->bias,        c->grad_output,
                   c->output, c->grad_input, c->grad_offset, c->grad_mask, c->grad_weight, c->grad_bias,
                   c->r_out,  c->r_gi,       c->r_go,        c->r_gm,      c->r_gw,        c->r_gb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free(all[i]);
}

/* A random geometry with conv groups, offset groups, odd sizes, stride, dilation and
 * padding; batch 1..6 with an im2col_step that divides it (mmcv) or not (torchvision). */
static inline ks_deform_params df_geometry(uint64_t *s)
{
    ks_deform_params p;
    ks_deform_geom g;
    do {
        memset(&p, 0, sizeof p);
        p.groups = tu_int(s, 1, 2);
        p.offset_groups = tu_int(s, 1, 3);
        p.channels = p.groups * p.offset_groups * tu_int(s, 1, 2);
        p.out_channels = p.groups * tu_int(s, 1, 3);
        p.batch = tu_int(s, 1, 6);
        p.height = tu_int(s, 3, 9);
        p.width = tu_int(s, 3, 9);
        p.kernel_h = tu_int(s, 1, 3);
        p.kernel_w = tu_int(s, 1, 3);
        p.pad_h = tu_int(s, 0, 2);
        p.pad_w = tu_int(s, 0, 2);
        p.stride_h = tu_int(s, 1, 3);
        p.stride_w = tu_int(s, 1, 3);
        p.dilation_h = tu_int(s, 1, 2);
        p.dilation_w = tu_int(s, 1, 2);
        p.semantics = (int)tu_int(s, 0, 1);
        p.im2col_step = tu_int(s, 1, 4);
        p.use_mask = (int)tu_int(s, 0, 1);
        p.use_bias = (int)tu_int(s, 0, 1);
    } while (ks_deform_geometry(&p, &g) != KS_OK);
    return p;
}

#endif
