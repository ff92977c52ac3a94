/* transpose_body.h - a batched square transpose in the KernelScope body form, with a
 * planted bug (args.bug) that compute-sanitizer cannot see: it swaps two indices, every
 * access stays in bounds, and the memory pattern (who reads and writes how much, where)
 * keeps its shape.
 *
 *   input  [P, N, N]
 *   output [P, N, N]   output(p, x, y) = input(p, y, x)
 * One work item per input element (p, y, x), x fastest: the reads are coalesced, the
 * writes strided by N. */
#ifndef TRANSPOSE_DECL
#define TRANSPOSE_DECL
#include <kscope/ks_core.h>

typedef struct transpose_args {
    int64_t planes, n;
    int bug; /* 1: the planted bug (see the README) */
    const float *input;
    float *output;
} transpose_args;

/* the tensors and sites the probes name, declared once (ks_decl.h): TR_T_INPUT, ... for
 * the body, transpose_decl() for main.c */
#define TR_TENSORS(X) X(TR_T_INPUT, "input") X(TR_T_OUTPUT, "output")
#define TR_SITES(X) \
    X(TR_SITE_WORK, "transpose.work") X(TR_SITE_READ, "transpose.read") X(TR_SITE_WRITE, "transpose.write")
KS_DECLARE(transpose, TR_TENSORS, TR_SITES)
#endif

#ifdef KS_VARIANT
#include <kscope/ks_probe.h>

KS_FN void KS_VARIANT(transpose_body)(ks_thread *t, const transpose_args *a)
{
    const KS_IDX N = (KS_IDX)a->n, total = (KS_IDX)a->planes * N * N;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < total; index += stride, ++iter) {
        const KS_IDX x = index % N, y = index / N % N, p = index / (N * N);
        KS_PROBE(ks_probe_work(t, TR_SITE_WORK, index, iter, p, y, x, 0, 0, 0, 0, 0));
        /* the bug reads (x, y) where it means (y, x) in the planes after the first */
        const KS_IDX ry = a->bug && p > 0 ? x : y, rx = a->bug && p > 0 ? y : x;
        const float v = a->input[(p * N + ry) * N + rx];
        KS_PROBE(ks_probe_read(t, TR_SITE_READ, TR_T_INPUT, 0, (p * N + ry) * N + rx, p, ry, rx, v));
        a->output[(p * N + x) * N + y] = v;
        KS_PROBE(ks_probe_write(t, TR_SITE_WRITE, TR_T_OUTPUT, 0, (p * N + x) * N + y, p, x, y, v, 0));
    }
}
#endif
