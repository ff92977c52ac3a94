/* patchify_sim.c - the patchify kernels on the CPU grid simulator (plain and traced). */
#include "../core/ks_error.h"
#include "../core/ks_sim.h"

#define KS_BODY "../patchify/patchify_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h" /* -> each body as NAME_plain and NAME_traced */

static void p0(ks_thread *t, const void *a) { ks_patch_fwd_body_plain(t, a); }
static void t0(ks_thread *t, const void *a) { ks_patch_fwd_body_traced(t, a); }
static void p1(ks_thread *t, const void *a) { ks_patch_bilinear_body_plain(t, a); }
static void t1(ks_thread *t, const void *a) { ks_patch_bilinear_body_traced(t, a); }
static void p2(ks_thread *t, const void *a) { ks_patch_bilinear_bwd_body_plain(t, a); }
static void t2(ks_thread *t, const void *a) { ks_patch_bilinear_bwd_body_traced(t, a); }
static void p3(ks_thread *t, const void *a) { ks_patch_bwd_body_plain(t, a); }
static void t3(ks_thread *t, const void *a) { ks_patch_bwd_body_traced(t, a); }

int ks_patchify_kernel_sim(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                           const ks_launch *l, ks_sink *sink)
{
    if (k < KS_PATCH_PATCHES || k > KS_PATCH_PATCHES_BWD) return ks_fail(KS_EINVAL, "unknown patchify kernel %d", (int)k);
    int rc = ks_patchify_check(p);
    return rc ? rc : ks_patchify_launch_sim(p, k, t, l, sink);
}

int ks_patchify_launch_sim(const ks_patchify_params *p, ks_patchify_kernel k, const ks_patchify_tensors *t,
                           const ks_launch *l, ks_sink *sink)
{
    static const ks_sim_body bodies[4][2] = {{p0, t0}, {p1, t1}, {p2, t2}, {p3, t3}};
    int threads;
    int64_t blocks;
    int rc = ks_launch_resolve(l, KS_PATCH_THREADS, KS_PATCH_BLOCK_CAP, ks_patchify_work(p, k), &threads, &blocks);
    if (rc) return rc;
    ks_patchify_args a = {.batch = p->batch, .channels = p->channels, .height = p->height, .width = p->width,
                          .num_points = p->num_points, .radius = p->radius, .t = *t};
    if (blocks > 0) ks_sim_launch(blocks, threads, bodies[k][sink != NULL], &a, sink);
    return KS_OK;
}
