/* patchify_op.c - `kscope run patchify`: input and coords (.npy or built in), the raw
 * patches and the bilinear output, --backward for grad_input, on the simulator or the
 * GPU, the trace of one kernel. */
#include "patchify_op.h"

#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"
#include "../run_cuda.h"
#include "patchify.h"

enum { P_RADIUS, P_BACKWARD, P_TRACE, P_BATCH, P_CHANNELS, P_HW, P_POINTS, P_COUNT };

static const ks_param_spec params[P_COUNT] = {
    {"radius", 1, {1, 0}, 0, "R: output patches are (2R+1)^2, raw patches (2R+2)^2", KS_PARAM_INT, NULL, {0, 0}},
    {"backward", 1, {0, 0}, 0, "also grad_input of sum(output * grad_output)", KS_PARAM_SWITCH, NULL, {0, 0}},
    {"trace-kernel", 1, {0, 0}, 0, "kernel a trace records (raw patches or their bilinear combination)",
     KS_PARAM_CHOICE, "patches|bilinear", {0, 0}},
    {"batch", 1, {1, 0}, 1, "B of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"channels", 1, {1, 0}, 1, "C of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"input-size", 2, {6, 6}, 1, "H, W of the built-in input (an --in input sets it)", KS_PARAM_INT, NULL, {0, 0}},
    {"num-points", 1, {2, 0}, 0, "M built-in points per image, random (x, y) (an --in coords sets it)",
     KS_PARAM_INT, NULL, {0, 0}},
};

static const ks_tensor_spec tensors[] = {
    {"input", 0, "(B, C, H, W)"},
    {"coords", 0, "(B, M, 2): (x, y) per point"},
    {"patches", 1, "(B, M, C, 2R+2, 2R+2): raw pixels around floor(x, y)"},
    {"output", 1, "(B, M, C, 2R+1, 2R+1): bilinear samples at (y + r - R, x + s - R)"},
    {"grad_output", 0, "like output: with --backward"},
    {"grad_patches", 1, "like patches: with --backward"},
    {"grad_input", 1, "(B, C, H, W): with --backward"},
};
enum { T_INPUT, T_COORDS, T_PATCHES, T_OUTPUT, T_GOUT, T_GPATCH, T_GIN, T_COUNT };

typedef struct job {
    const ks_patchify_params *p;
    const ks_launch *l;
    int backward;
    ks_patchify_kernel traced;
} job;

static ks_patchify_tensors view(void *const *d)
{
    ks_patchify_tensors t = {d[T_INPUT], d[T_COORDS], d[T_PATCHES], d[T_OUTPUT], d[T_GOUT], d[T_GPATCH], d[T_GIN]};
    return t;
}

static int launch_cuda(void *ctx, void *const *d, const ks_sink *sink)
{
    const job *j = ctx;
    ks_patchify_tensors t = view(d);
    int rc = KS_OK;
    for (int k = 0; k < (j->backward ? 4 : 2) && !rc; ++k)
        rc = ks_patchify_kernel_cuda(j->p, (ks_patchify_kernel)k, &t, j->l, k == (int)j->traced ? sink : NULL, NULL);
    return rc;
}

static int run_patchify(ks_run *r)
{
    ks_patchify_params p = {r->value[P_BATCH][0], r->value[P_CHANNELS][0], r->value[P_HW][0], r->value[P_HW][1],
                            r->value[P_POINTS][0], r->value[P_RADIUS][0]};
    ks_tensor *t = r->tensor;
    const int backward = (int)r->value[P_BACKWARD][0];
    int rc;
    for (int i = 0; i < T_COUNT; ++i)
        if (t[i].data && t[i].dtype != KS_F32) return ks_fail(KS_EINVAL, "%s must be float32", t[i].name);
    if (t[T_INPUT].data) {
        const ks_tensor *in = &t[T_INPUT];
        if (in->ndim != 4) return ks_fail(KS_EINVAL, "input must have shape (B, C, H, W)");
        if ((rc = ks_run_agree(r, P_BATCH, 0, "batch", in->shape[0], "input")) ||
            (rc = ks_run_agree(r, P_CHANNELS, 0, "channels", in->shape[1], "input")) ||
            (rc = ks_run_agree(r, P_HW, 0, "input-size", in->shape[2], "input")) ||
            (rc = ks_run_agree(r, P_HW, 1, "input-size", in->shape[3], "input")))
            return rc;
        p.batch = in->shape[0], p.channels = in->shape[1], p.height = in->shape[2], p.width = in->shape[3];
    }
    if (t[T_COORDS].data) {
        const ks_tensor *c = &t[T_COORDS];
        if (c->ndim != 3 || c->shape[2] != 2) return ks_fail(KS_EINVAL, "coords must have shape (B, M, 2)");
        if (c->shape[0] != p.batch)
            return ks_fail(KS_EINVAL, "coords has batch %lld but the input has %lld (DPVO#24: a mismatch reads out of bounds)",
                           (long long)c->shape[0], (long long)p.batch);
        if ((rc = ks_run_agree(r, P_POINTS, 0, "num-points", c->shape[1], "coords"))) return rc;
        p.num_points = c->shape[1];
    }
    if ((rc = ks_patchify_check(&p))) return rc;
    const int64_t D = 2 * p.radius + 2, d = D - 1;
    if (!t[T_INPUT].data) {
        ks_tensor_shape(&t[T_INPUT], 4, p.batch, p.channels, p.height, p.width);
        if ((rc = ks_fill_pattern(&t[T_INPUT], r->pattern, r->seed))) return rc;
    }
    if (!t[T_COORDS].data) { /* random (x, y) inside the image */
        ks_tensor_shape(&t[T_COORDS], 3, p.batch, p.num_points, 2, 0);
        if ((rc = ks_tensor_alloc(&t[T_COORDS]))) return rc;
        uint64_t s = r->seed + 9;
        float *xy = t[T_COORDS].data;
        for (int64_t k = 0; k < p.batch * p.num_points; ++k)
            xy[2 * k] = ks_rand_unit(&s) * (float)(p.width - 1), xy[2 * k + 1] = ks_rand_unit(&s) * (float)(p.height - 1);
    }
    ks_tensor_shape(&t[T_PATCHES], 5, p.batch, p.num_points, p.channels, D); /* 5-D: the last below */
    t[T_PATCHES].shape[4] = D;
    ks_tensor_shape(&t[T_OUTPUT], 5, p.batch, p.num_points, p.channels, d);
    t[T_OUTPUT].shape[4] = d;
    if ((rc = ks_tensor_alloc(&t[T_PATCHES])) || (rc = ks_tensor_alloc(&t[T_OUTPUT]))) return rc;
    if (backward) {
        if (t[T_GOUT].data) {
            const ks_tensor *g = &t[T_GOUT];
            int ok = g->ndim == 5;
            for (int i = 0; ok && i < 5; ++i) ok = g->shape[i] == t[T_OUTPUT].shape[i];
            if (!ok) return ks_fail(KS_EINVAL, "grad_output must have the shape of output");
        } else {
            t[T_GOUT].dtype = KS_F32, t[T_GOUT].ndim = 5;
            memcpy(t[T_GOUT].shape, t[T_OUTPUT].shape, sizeof t[T_OUTPUT].shape);
            if ((rc = ks_fill_pattern(&t[T_GOUT], r->pattern, r->seed + 4))) return rc;
        }
        t[T_GPATCH].dtype = KS_F32, t[T_GPATCH].ndim = 5;
        memcpy(t[T_GPATCH].shape, t[T_PATCHES].shape, sizeof t[T_PATCHES].shape);
        ks_tensor_shape(&t[T_GIN], 4, p.batch, p.channels, p.height, p.width);
        if ((rc = ks_tensor_alloc(&t[T_GPATCH])) || (rc = ks_tensor_alloc(&t[T_GIN]))) return rc;
    } else {
        if (t[T_GOUT].data) return ks_fail(KS_EINVAL, "grad_output is given but --backward is not");
        ks_run_absent(r, T_GOUT), ks_run_absent(r, T_GPATCH), ks_run_absent(r, T_GIN);
    }
    /* forward: the raw patches (or the combination); backward: their backward twins */
    const int bil = (int)r->value[P_TRACE][0];
    job j = {&p, &r->launch, backward,
             backward ? (bil ? KS_PATCH_BILINEAR_BWD : KS_PATCH_PATCHES_BWD) : (bil ? KS_PATCH_BILINEAR : KS_PATCH_PATCHES)};
    static const char *const names[4] = {"patchify", "patchify_bilinear", "patchify_bilinear_backward", "patchify_backward"};
    snprintf(r->params_json, sizeof r->params_json,
             "{\"radius\": %lld, \"batch\": %lld, \"channels\": %lld, \"input_size\": [%lld, %lld], "
             "\"num_points\": %lld, \"kernel\": \"%s\"}",
             (long long)p.radius, (long long)p.batch, (long long)p.channels, (long long)p.height, (long long)p.width,
             (long long)p.num_points, names[j.traced]);
    r->work_items = ks_patchify_work(&p, j.traced);
    if ((rc = ks_launch_resolve(&r->launch, KS_PATCH_THREADS, KS_PATCH_BLOCK_CAP, r->work_items, &r->threads, &r->blocks)))
        return rc;
    r->block_cap = r->launch.block_cap ? r->launch.block_cap : KS_PATCH_BLOCK_CAP;
    r->nsites = ks_patchify_sites(&p, j.traced, r->sites);
    if (r->device == KS_DEV_CUDA) {
        ks_tensor *ts[T_COUNT];
        int out[T_COUNT];
        for (int i = 0; i < T_COUNT; ++i) ts[i] = &t[i], out[i] = tensors[i].output && !r->absent[i];
        unsigned long long cap = (unsigned long long)(r->work_items + 1) * (unsigned long long)(2 + 2 * p.channels);
        if (cap > (1ULL << 24)) cap = 1ULL << 24;
        return ks_run_cuda(ts, out, T_COUNT, r->sink, cap, launch_cuda, &j, r->device_name, sizeof r->device_name);
    }
    snprintf(r->device_name, sizeof r->device_name, "sim");
    void *host[T_COUNT];
    for (int i = 0; i < T_COUNT; ++i) host[i] = t[i].data;
    ks_patchify_tensors tv = view(host);
    for (int k = 0; k < (backward ? 4 : 2) && !rc; ++k)
        rc = ks_patchify_kernel_sim(&p, (ks_patchify_kernel)k, &tv, &r->launch, k == (int)j.traced ? r->sink : NULL);
    return rc;
}

const ks_op ks_op_patchify = {
    "patchify", "DPVO patchify: raw (2R+2)^2 patches, their bilinear (2R+1)^2 output; --backward",
    params, P_COUNT, tensors, T_COUNT, KS_PATCH_THREADS, KS_PATCH_BLOCK_CAP, run_patchify,
};
