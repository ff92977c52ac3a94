/* ks_kernel.c - running a kernel row (ks_kernel.h): sizing, the 32-bit choice, plain or
 * traced, simulator or CUDA, and the checks of a table of rows. */
#include "ks_kernel.h"

#include <stdio.h>
#include <string.h>

#include "ks_error.h"
#include "ks_sim.h"

ks_exec ks_exec_make(const ks_kernel *kernels, int n, int device, const ks_launch *launch)
{
    ks_exec x;
    memset(&x, 0, sizeof x);
    x.kernels = kernels, x.nkernels = n, x.device = device, x.narrow = 1, x.trace = -1;
    if (launch) x.launch = *launch;
    return x;
}

void ks_exec_size(ks_exec *x, int64_t count)
{
    if (count >= KS_NARROW_LIMIT) x->narrow = 0;
}

static int sim_run(ks_exec *x, const ks_kernel *row, int64_t blocks, int threads, const void *args, ks_sink *sink)
{
    ks_kernel_sim_fn fn = sink ? row->sim_traced : row->sim_plain;
    if (!fn)
        return ks_fail(KS_EINVAL, "kernel %s runs only on CUDA (its twin %s runs on the simulator)", row->name,
                       row->twin ? row->twin : "?");
    if (!row->coop) {
        ks_sim_launch(blocks, threads, fn, args, sink);
        return KS_OK;
    }
    ks_sim_report rep;
    const int was = x->quiet ? ks_sim_quiet_warnings(1) : 0;
    int rc = ks_sim_launch_coop(blocks, threads, fn, args, sink, &rep);
    if (!rc) {
        char what[96];
        snprintf(what, sizeof what, "%s on the simulator", row->name);
        x->sim_problems += ks_sim_report_warn(&rep, what);
    }
    if (x->quiet) ks_sim_quiet_warnings(was);
    return rc;
}

/* A tiled row's grid: its tile (tile_of) over the work's three axes. */
static int tiled(const ks_kernel *row, const void *args, int64_t work, int64_t wy, int64_t wz, int *threads,
                 int64_t blocks[3], size_t *shared)
{
    ks_tile t = {0};
    row->tile_of(args, &t);
    if (t.threads < 1 || t.threads > 1024 || t.x < 1 || t.y < 1)
        return ks_fail(KS_EINVAL, "%s: a tile of %d threads over %lld x %lld items", row->name, t.threads,
                       (long long)t.x, (long long)t.y);
    if (work < 0 || wy < 0 || wz < 0)
        return ks_fail(KS_EINVAL, "%s: work %lld x %lld x %lld", row->name, (long long)work, (long long)wy,
                       (long long)wz);
    blocks[0] = (work + t.x - 1) / t.x, blocks[1] = (wy + t.y - 1) / t.y, blocks[2] = wz;
    if (blocks[0] > INT32_MAX || blocks[1] > 65535 || blocks[2] > 65535)
        return ks_fail(KS_EINVAL, "%s: a grid of %lld x %lld x %lld blocks (CUDA: at most 2^31-1 x 65535 x 65535)",
                       row->name, (long long)blocks[0], (long long)blocks[1], (long long)blocks[2]);
    *threads = t.threads, *shared = t.shared;
    return KS_OK;
}

ks_status ks_exec_kernel(ks_exec *x, int k, const void *args, int64_t work)
{
    if (k < 0 || k >= x->nkernels) return ks_fail(KS_EINVAL, "no kernel row %d (of %d)", k, x->nkernels);
    const ks_kernel *row = &x->kernels[k];
    const int traced = x->sink && k == x->trace;
    const int64_t wy = x->work_y ? x->work_y : 1, wz = x->work_z ? x->work_z : 1;
    size_t shared = x->shared;
    x->shared = 0, x->work_y = x->work_z = 0;
    int threads, rc;
    int64_t blocks[3] = {0, 1, 1};
    if (row->tile_of) {
        if ((rc = tiled(row, args, work, wy, wz, &threads, blocks, &shared))) return rc;
    } else {
        if (wy != 1 || wz != 1)
            return ks_fail(KS_EINVAL, "%s: work along three axes, but the row is not tiled", row->name);
        int ref = row->block_of ? row->block_of(args) : row->threads_of ? row->threads_of(args) : row->threads;
        const ks_launch none = {0};
        rc = ks_launch_resolve(row->fixed ? &none : &x->launch, ref, row->block_cap, work, &threads, &blocks[0]);
        if (rc) return rc;
        if (row->block_of && threads != ref)
            return ks_fail(KS_EINVAL, "%s: a block is one tile of %d threads, not %d", row->name, ref, threads);
    }
    x->launches++;
    x->traced_ran += traced;
    if (k < 64) x->ran |= (uint64_t)1 << k;
    if (blocks[0] * blocks[1] * blocks[2] == 0)
        return KS_OK; /* no items: nothing to launch (CUDA refuses a 0-block grid) */
    if (x->device == KS_DEV_CUDA) {
        if (!row->cuda) return ks_fail(KS_ECUDA, "this build has no CUDA (rebuild with nvcc on PATH)");
        ks_grid g = {.blocks = blocks[0],
                     .blocks_y = blocks[1],
                     .blocks_z = blocks[2],
                     .threads = threads,
                     .shared = shared,
                     .stream = x->stream,
                     .name = row->name};
        g.narrow = x->narrow && work < KS_NARROW_LIMIT && blocks[0] * threads < KS_NARROW_LIMIT;
        return row->cuda(args, &g, traced ? x->sink : NULL);
    }
    if (blocks[1] * blocks[2] != 1)
        return ks_fail(KS_EINVAL, "%s: the simulator launches 1-D grids (%lld x %lld x %lld blocks)", row->name,
                       (long long)blocks[0], (long long)blocks[1], (long long)blocks[2]);
    return sim_run(x, row, blocks[0], threads, args, traced ? x->sink : NULL);
}

int ks_exec_may(const ks_exec *x, int k)
{
    if (k < 0 || k >= x->nkernels) return 0;
    const ks_kernel *row = &x->kernels[k];
    if (!row->plain_only) return 1;
    if (x->twins || !(x->device == KS_DEV_CUDA ? row->cuda != NULL : row->sim_plain != NULL)) return 0;
    return !(x->sink && x->trace >= 0 && x->trace < x->nkernels && row->twin &&
             !strcmp(x->kernels[x->trace].name, row->twin));
}

int ks_kernel_find(const ks_kernel *kernels, int n, const char *word)
{
    for (int i = 0; i < n; ++i)
        if (kernels[i].name && !strcmp(kernels[i].name, word)) return i;
    return -1;
}

ks_status ks_kernel_rows_check(const char *owner, const ks_kernel *kernels, int n)
{
    for (int i = 0; i < n; ++i) {
        const ks_kernel *r = &kernels[i];
        if (!r->name || !*r->name || !r->body)
            return ks_fail(KS_EINVAL, "%s: kernel row %d is missing (no name or body)", owner, i);
        if (ks_kernel_find(kernels, n, r->name) != i)
            return ks_fail(KS_EINVAL, "%s: kernel %s appears twice", owner, r->name);
        if (strspn(r->name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(r->name))
            return ks_fail(KS_EINVAL, "%s: kernel name '%s' is not lower-case letters, digits and '_'", owner, r->name);
        if (!r->block_of && !r->tile_of && (r->threads < 1 || r->threads > 1024))
            return ks_fail(KS_EINVAL, "%s: kernel %s: reference threads %d outside 1..1024", owner, r->name,
                           r->threads);
        if (r->block_cap == 0 || r->block_cap < -1)
            return ks_fail(KS_EINVAL, "%s: kernel %s: block cap %lld (>= 1, or -1 for none)", owner, r->name,
                           (long long)r->block_cap);
        if (r->plain_only) {
            const int t = r->twin ? ks_kernel_find(kernels, n, r->twin) : -1;
            if (t < 0 || t == i || kernels[t].plain_only || !kernels[t].sim_traced)
                return ks_fail(KS_EINVAL, "%s: plain_only kernel %s needs a twin row the simulator traces (got %s)",
                               owner, r->name, r->twin ? r->twin : "none");
            if (r->sim_traced)
                return ks_fail(KS_EINVAL, "%s: plain_only kernel %s has a traced entry point", owner, r->name);
        } else if (!r->sim_plain || !r->sim_traced) {
            return ks_fail(KS_EINVAL, "%s: kernel %s lacks its simulator entry points", owner, r->name);
        } else if (r->twin || r->runs_with) {
            return ks_fail(KS_EINVAL, "%s: kernel %s has a %s but is not plain_only", owner, r->name,
                           r->twin ? "twin" : "runs_with");
        }
        if (!r->sites != (r->plain_only || r->no_trace))
            return ks_fail(KS_EINVAL, "%s: kernel %s: %s", owner, r->name,
                           r->sites ? "a trace schema (.sites) on a row never traced"
                                    : "no trace schema (.sites): give one, or mark it no_trace");
        if (r->block_of && (r->threads_of || r->fixed))
            return ks_fail(KS_EINVAL, "%s: kernel %s: block_of fixes the block; threads_of or fixed besides", owner,
                           r->name);
        if (r->tile_of && (r->block_of || r->threads_of || r->fixed))
            return ks_fail(KS_EINVAL, "%s: kernel %s: tile_of sizes its grid; block_of, threads_of or fixed besides",
                           owner, r->name);
        if (r->tolerance < 0 || r->tolerance >= 1 || (r->tolerance > 0 && !r->plain_only))
            return ks_fail(KS_EINVAL, "%s: kernel %s: a tolerance (%g) is a plain_only row's, in [0, 1)", owner,
                           r->name, r->tolerance);
    }
    return KS_OK;
}
