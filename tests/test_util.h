/* test_util.h - helpers shared by the Check suites: a seeded RNG, random geometries,
 * float comparison against the double reference, running an op into a trace. */
#ifndef KS_TEST_UTIL_H
#define KS_TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/im2col/im2col_body.h"
#include "../kernels/registry.h"
#include "../trace/run_trace.h"

static inline uint64_t tu_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* uniform integer in [lo, hi] */
static inline int64_t tu_int(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tu_next(s) % (uint64_t)(hi - lo + 1));
}

/* random floats in [-1, 1), never all zero */
static inline float *tu_random(uint64_t *s, int64_t n)
{
    float *p = malloc((size_t)(n ? n : 1) * sizeof *p);
    for (int64_t i = 0; i < n; ++i) p[i] = (float)((tu_next(s) >> 40) * (1.0 / 8388608.0) - 1.0);
    return p;
}

/* A random valid geometry: odd sizes, stride sometimes larger than the kernel,
 * dilation, padding sometimes >= the kernel. */
static inline ks_im2col_params tu_geometry(uint64_t *s)
{
    ks_im2col_params p;
    ks_im2col_geom g;
    do {
        p.batch = tu_int(s, 1, 3);
        p.channels = tu_int(s, 1, 4);
        p.height = tu_int(s, 1, 13);
        p.width = tu_int(s, 1, 13);
        p.kernel_h = tu_int(s, 1, 5);
        p.kernel_w = tu_int(s, 1, 5);
        p.pad_h = tu_int(s, 0, 6);
        p.pad_w = tu_int(s, 0, 6);
        p.stride_h = tu_int(s, 1, 6);
        p.stride_w = tu_int(s, 1, 6);
        p.dilation_h = tu_int(s, 1, 3);
        p.dilation_w = tu_int(s, 1, 3);
    } while (ks_im2col_geometry(&p, &g) != KS_OK);
    return p;
}

/* Every element equal to the double reference rounded to float (im2col copies exactly),
 * or within a tolerance relative to the magnitude of the terms (col2im sums). */
static inline void tu_expect_close(const float *got, const double *want, int64_t n, double tol, const char *what)
{
    for (int64_t i = 0; i < n; ++i)
        ck_assert_msg(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i])), "%s[%lld] = %.9g, reference %.9g", what,
                      (long long)i, got[i], want[i]);
}

/* Threads per block for a run of `op` that asks for `want`: an operator whose block is
 * one tile (a --tile parameter: gemm_tiled) takes its default tile's 16 x 16 instead. */
static inline int tu_op_threads(const ks_op *op, int want) { return ks_op_param(op, "tile") >= 0 ? 256 : want; }

static inline ks_launch tu_launch(int threads, int64_t cap)
{
    ks_launch l;
    l.threads = threads;
    l.block_cap = cap;
    return l;
}

static inline void tu_set2(ks_run *r, const ks_op *op, const char *name, int64_t a, int64_t b)
{
    int i = ks_op_param(op, name);
    ck_assert_int_ge(i, 0);
    r->value[i][0] = a;
    r->value[i][1] = b;
}

/* Runs op (im2col or col2im) on the simulator with a random input into a traced run. */
static inline const ks_op *tu_run_traced(ks_run *r, const char *name, const ks_im2col_params *p, ks_filter f,
                                         unsigned long long limit, int threads, int64_t cap)
{
    const ks_op *op = ks_op_find(name);
    ck_assert_ptr_nonnull(op);
    ks_run_init(r, op);
    tu_set2(r, op, "kernel-size", p->kernel_h, p->kernel_w);
    tu_set2(r, op, "padding", p->pad_h, p->pad_w);
    tu_set2(r, op, "stride", p->stride_h, p->stride_w);
    tu_set2(r, op, "dilation", p->dilation_h, p->dilation_w);
    tu_set2(r, op, "batch", p->batch, 0);
    tu_set2(r, op, "channels", p->channels, 0);
    tu_set2(r, op, !strcmp(name, "im2col") ? "input-size" : "output-size", p->height, p->width);
    r->pattern = KS_PAT_RANDOM;
    r->seed = 99;
    r->launch = tu_launch(threads, cap);
    r->sink = ks_host_sink_create(limit, f);
    ck_assert_int_eq(ks_run_execute(r), KS_OK);
    return op;
}

static inline void tu_run_done(ks_run *r)
{
    ks_host_sink_free(r->sink);
    ks_run_free(r);
}

/* A hand-made trace of one work item whose other events are bilinear samples of one
 * tensor `input` (planes, h, w), data[i] = i % 7 - 2.5: what deformable convolution and
 * RoIAlign traces look like to the viewer. Add samples with tu_sample_add. */
typedef struct tu_sample_trace {
    ks_trace tr;
    ks_event ev[8];
    float data[256];
} tu_sample_trace;

static inline void tu_sample_trace_init(tu_sample_trace *st, int64_t planes, int64_t h, int64_t w)
{
    ks_trace *tr = &st->tr;
    memset(st, 0, sizeof *st);
    snprintf(tr->op, sizeof tr->op, "synthetic");
    snprintf(tr->device, sizeof tr->device, "sim");
    tr->threads = tr->blocks = tr->work_items = 1;
    tr->filter = ks_filter_all();
    tr->nsites = 2;
    snprintf(tr->sites[0].name, KS_NAME_LEN, "s.work");
    tr->sites[0].kind = KS_EV_WORK;
    tr->sites[0].tensor = -1;
    snprintf(tr->sites[1].name, KS_NAME_LEN, "s.sample");
    tr->sites[1].kind = KS_EV_SAMPLE;
    tr->ntensors = 1;
    ks_tensor *t = &tr->tensors[0];
    snprintf(t->name, KS_NAME_LEN, "input");
    t->ndim = 3;
    t->shape[0] = planes;
    t->shape[1] = h;
    t->shape[2] = w;
    ck_assert(planes * h * w <= 256);
    for (int i = 0; i < 256; ++i) st->data[i] = (float)(i % 7) - 2.5f;
    t->data = st->data;
    st->ev[0].kind = KS_EV_WORK;
    tr->events = st->ev;
    tr->nevents = 1;
}

/* Appends a sample at (y, x) of `plane` with corner validity `flags` and weights w. */
static inline ks_event *tu_sample_add(tu_sample_trace *st, int plane, float y, float x, unsigned flags,
                                      const float w[4])
{
    ck_assert(st->tr.nevents < 8);
    ks_event *e = &st->ev[st->tr.nevents];
    e->kind = KS_EV_SAMPLE;
    e->site = 1;
    e->seq = (uint32_t)st->tr.nevents;
    e->tap = (uint16_t)(st->tr.nevents - 1);
    e->flags = (uint8_t)flags;
    e->u.sample.plane = plane;
    e->u.sample.y = y;
    e->u.sample.x = x;
    memcpy(e->u.sample.w, w, sizeof e->u.sample.w);
    st->tr.nevents++;
    return e;
}

#define TU_CORNERS_ALL (KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11)

/* A text file's contents (up to 256 KiB) in a buffer the next call reuses; "" when the
 * file cannot be read. DIR/NAME when dir is given, else the path as is. */
static inline char *tu_slurp(const char *dir, const char *name)
{
    static char buf[1 << 18];
    char path[4200];
    if (dir) snprintf(path, sizeof path, "%s/%s", dir, name);
    else snprintf(path, sizeof path, "%s", name);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Runs a suite and returns the process exit code (0: all passed). */
/* Events in the order a version 2 trace stores them: by (index, seq), ties in their
 * given order (the writer's runs). A malloc'd copy. */
typedef struct tu_keyed {
    int64_t index;
    uint32_t seq;
    uint64_t at;
} tu_keyed;

static inline int tu_by_item(const void *a, const void *b)
{
    const tu_keyed *x = (const tu_keyed *)a, *y = (const tu_keyed *)b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

static inline ks_event *tu_item_order(const ks_event *ev, uint64_t n)
{
    tu_keyed *k = (tu_keyed *)malloc((n ? n : 1) * sizeof *k);
    ks_event *out = (ks_event *)malloc((n ? n : 1) * sizeof *out);
    ck_assert(k && out);
    for (uint64_t i = 0; i < n; ++i) k[i] = (tu_keyed){ev[i].index, ev[i].seq, i};
    qsort(k, n, sizeof *k, tu_by_item);
    for (uint64_t i = 0; i < n; ++i) out[i] = ev[k[i].at];
    free(k);
    return out;
}

static inline int tu_run_suite(Suite *s, enum fork_status fork)
{
    SRunner *sr = srunner_create(s);
    if (fork == CK_NOFORK) srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
