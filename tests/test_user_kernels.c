/* Kernels of one's own through the SDK (issue 37): launches of any shape on the simulator,
 * `check` holding their declared mapping with no false alarm and still catching planted
 * bugs, and out-of-bounds accesses of a simulated body kept off the host. Every result is
 * compared with a reference this file computes its own way (loops over the elements, in
 * double), never with the kernel's own arithmetic. Fixed seeds, odd sizes. */
#define KS_TRACED 1 /* the bodies below are traced variants: their KS_PROBE lines run */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_probe.h"
#include "../trace/check.h"
#include "../trace/ks_user.h"
#include "test_util.h"

static char g_dir[4096];

static const char *tmp_path(const char *name)
{
    static char path[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%d-%s", g_dir, (int)getpid(), name);
    return path[k];
}

static ks_check_report *check_file(const char *path, ks_trace *tr)
{
    static ks_check_report rep;
    ck_assert_msg(ks_trace_open(path, tr) == KS_OK, "%s", ks_error_message());
    ck_assert_msg(ks_trace_check(tr, &rep) == KS_OK, "%s", ks_error_message());
    return &rep;
}

/* how many kept violation lines contain needle */
static int count_violations(const ks_check_report *rep, const char *needle)
{
    int n = 0;
    for (uint64_t i = 0; i < rep->violations && i < KS_CHECK_KEEP; ++i) n += strstr(rep->first[i], needle) != NULL;
    return n;
}

/* every kept violation line contains one of the needles (NULL-terminated) */
static int only_violations(const ks_check_report *rep, const char *const *needles)
{
    for (uint64_t i = 0; i < rep->violations && i < KS_CHECK_KEEP; ++i) {
        int known = 0;
        for (const char *const *n = needles; *n && !known; ++n) known = strstr(rep->first[i], *n) != NULL;
        if (!known) return 0;
    }
    return 1;
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len + 1);
    ck_assert(buf && fread(buf, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* every rule that fired (all violations, not only the kept lines) has a template containing
 * one of the needles (NULL-terminated) */
static int only_rules(const ks_check_report *rep, const char *const *needles)
{
    if (rep->rules_other) return 0;
    for (int r = 0; r < rep->nrules; ++r) {
        int known = 0;
        for (const char *const *n = needles; *n && !known; ++n) known = strstr(rep->rules[r].rule, *n) != NULL;
        if (!known) return 0;
    }
    return 1;
}

static void dump(const ks_check_report *rep)
{
    for (uint64_t i = 0; i < rep->violations && i < 6; ++i) fprintf(stderr, "  %s\n", rep->first[i]);
}

/* ---- item 1: a launch of any shape ------------------------------------------------- */

/* out = 2 * in over a [Z, Y, X] volume, one thread per element at its global (x, y, z);
 * bug 1: y made with blockDim.x (a 2-D launch's classic slip) */
typedef struct scale_args {
    int64_t X, Y, Z;
    int bug;
    const float *in;
    float *out;
} scale_args;

static void scale_traced(ks_thread *t, const void *p)
{
    const scale_args *a = p;
    const int64_t x = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    const int64_t y = (int64_t)t->block_idx.y * (a->bug ? t->block_dim.x : t->block_dim.y) + t->thread_idx.y;
    const int64_t z = (int64_t)t->block_idx.z * t->block_dim.z + t->thread_idx.z;
    if (x >= a->X || y >= a->Y || z >= a->Z) return;
    const int64_t i = (z * a->Y + y) * a->X + x;
    KS_PROBE(ks_probe_work(t, 0, i, 0, z, y, x, 0, 0, 0, 0, 0));
    const float v = a->in[i];
    KS_PROBE(ks_probe_read(t, 1, 0, 0, i, z, y, x, v));
    a->out[i] = 2 * v;
    KS_PROBE(ks_probe_write(t, 2, 1, 0, i, z, y, x, 2 * v, 0));
}

/* scale's tensors and sites declared once (ks_decl.h); scale_traced's numbers are these */
#define SC_TENSORS(X) X(SC_T_IN, "in") X(SC_T_OUT, "out")
#define SC_SITES(X) X(SC_SITE_WORK, "scale.work") X(SC_SITE_READ, "scale.read") X(SC_SITE_WRITE, "scale.write")
KS_DECLARE(scale, SC_TENSORS, SC_SITES)
_Static_assert(SC_T_IN == 0 && SC_T_OUT == 1 && SC_SITE_WORK == 0 && SC_SITE_WRITE == 2, "scale_traced's numbers");

/* a descriptor for scale (the caller destroys it), everything registered in the body's
 * order, sites by enum and name */
static ks_user_trace *scale_describe(const scale_args *a, const char *params)
{
    const int64_t shape[3] = {a->Z, a->Y, a->X};
    ks_user_trace *d = NULL;
    ck_assert_int_eq(ks_user_trace_create(&d, scale_decl(), a->X * a->Y * a->Z), KS_OK);
    ck_assert_int_eq(ks_user_trace_set_params(d, params), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 3, shape, (void *)a->in, 0), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "out", KS_F32, 3, shape, a->out, 1), KS_OK);
    ks_site *w = ks_user_site(d, SC_SITE_WORK, "scale.work", KS_EV_WORK, -1, 0);
    ck_assert_int_eq(ks_user_field_digit(w, "z", a->X * a->Y, 0), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "y", a->X, a->Y), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "x", 1, a->X), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, SC_SITE_READ, "scale.read", KS_EV_READ, SC_T_IN, 0));
    ck_assert_ptr_nonnull(ks_user_site(d, SC_SITE_WRITE, "scale.write", KS_EV_WRITE, SC_T_OUT, 1));
    return d;
}

/* 1-D, 2-D and 3-D launches (odd extents, ragged last blocks): zero violations; every
 * work event's linear block and thread decode, as CUDA numbers them, to the coordinates of
 * its element; the params carry the shape; the outputs are 2 * in */
START_TEST(launches_of_any_shape_pass_check)
{
    static const struct {
        int64_t X, Y, Z;
        uint32_t g[3], b[3];
        const char *params;
    } cases[] = {
        {37, 1, 1, {3, 1, 1}, {16, 1, 1}, "{}"},
        {13, 7, 1, {4, 3, 1}, {4, 3, 1}, "{\"work_shape\": [1, 7, 13]}"},
        {13, 7, 1, {2, 2, 1}, {8, 4, 1}, "{\"work_shape\": [7, 13]}"},
        {5, 3, 7, {2, 2, 3}, {4, 2, 3}, "{\"work_shape\": [7, 3, 5]}"},
        {5, 3, 7, {5, 3, 7}, {1, 1, 1}, "{}"}, /* the launch's extent is the work: no shape needed */
    };
    uint64_t seed = 3701;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        scale_args a = {cases[c].X, cases[c].Y, cases[c].Z, 0, NULL, NULL};
        const int64_t n = a.X * a.Y * a.Z;
        float *in = tu_random(&seed, n), *out = calloc((size_t)n, sizeof *out);
        a.in = in, a.out = out;
        ks_user_trace *d = scale_describe(&a, cases[c].params);
        const char *path = tmp_path("scale.kst");
        const ks_dim3 g = ks_dims(cases[c].g[0], cases[c].g[1], cases[c].g[2]);
        const ks_dim3 b = ks_dims(cases[c].b[0], cases[c].b[1], cases[c].b[2]);
        ck_assert_msg(ks_user_launch_sim(d, scale_traced, &a, g, b, path) == KS_OK, "%s", ks_error_message());
        ks_user_trace_destroy(d);
        for (int64_t i = 0; i < n; ++i) ck_assert_float_eq(out[i], (float)(2.0 * (double)in[i]));
        static ks_trace tr;
        const ks_check_report *rep = check_file(path, &tr);
        if (rep->violations) dump(rep);
        ck_assert_msg(rep->violations == 0, "case %zu: %llu violations", c, (unsigned long long)rep->violations);
        ck_assert_int_eq(tr.threads, (int)(b.x * b.y * b.z));
        ck_assert_int_eq(tr.blocks, (int64_t)g.x * g.y * g.z);
        const int multi = g.y > 1 || g.z > 1 || b.y > 1 || b.z > 1;
        ck_assert_int_eq(strstr(tr.params, "\"grid\":[") != NULL, multi);
        uint64_t works = 0;
        for (uint64_t k = 0; k < tr.nevents; ++k) {
            const ks_event *e = &tr.events[k];
            if (e->kind != KS_EV_WORK) continue;
            ++works;
            const int64_t x = e->index % a.X, y = e->index / a.X % a.Y, z = e->index / (a.X * a.Y);
            const uint32_t bx = e->block % g.x, by = e->block / g.x % g.y, bz = e->block / (g.x * g.y);
            const uint32_t tx = e->thread % b.x, ty = e->thread / b.x % b.y, tz = e->thread / (b.x * b.y);
            ck_assert_int_eq(x, (int64_t)bx * b.x + tx);
            ck_assert_int_eq(y, (int64_t)by * b.y + ty);
            ck_assert_int_eq(z, (int64_t)bz * b.z + tz);
        }
        ck_assert_uint_eq(works, (uint64_t)n);
        ks_trace_close(&tr);
        unlink(path);
        free(in), free(out);
    }
}
END_TEST

/* A 2-D launch whose y uses blockDim.x: check names the mapping (and the items it never
 * reached); a work_shape that does not multiply to the work items is reported first. */
START_TEST(check_catches_a_2d_mapping_slip)
{
    uint64_t seed = 3702;
    scale_args a = {13, 7, 1, 1, NULL, NULL};
    const int64_t n = a.X * a.Y;
    float *in = tu_random(&seed, n), *out = calloc((size_t)n, sizeof *out);
    a.in = in, a.out = out;
    ks_user_trace *d = scale_describe(&a, "{\"work_shape\": [7, 13]}");
    const char *path = tmp_path("slip.kst");
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(4, 3, 1), ks_dims(4, 3, 1), path), KS_OK);
    static ks_trace tr;
    const ks_check_report *rep = check_file(path, &tr);
    static const char *const kinds[] = {"grid-stride loop over the work shape", "never recorded", "written 0 times",
                                        NULL};
    ck_assert_msg(rep->violations > 0 && count_violations(rep, "grid-stride loop over the work shape") > 0 &&
                      only_violations(rep, kinds),
                  "%s", rep->first[0]);
    ks_trace_close(&tr);
    /* the same good launch with a work_shape of the wrong size */
    a.bug = 0;
    ks_user_trace_destroy(d);
    d = scale_describe(&a, "{\"work_shape\": [7, 12]}");
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(4, 3, 1), ks_dims(4, 3, 1), path), KS_OK);
    rep = check_file(path, &tr);
    ck_assert_msg(rep->violations >= 1 && strstr(rep->first[0], "the params' work_shape is not"), "%s",
                  rep->first[0]); /* first; then the launch's extent (16 x 9) is not the work's */
    ks_trace_close(&tr);
    ks_user_trace_destroy(d);
    unlink(path);
    free(in), free(out);
}
END_TEST

/* The deprecated names still work (0.4): ks_user_tensor gives the declaration's numbers
 * (-1 on error), and the 1-D ks_user_run_sim / ks_user_write write the same bytes as the
 * new calls' 1-D launch; bad launch shapes are refused with a message, nothing written. */
START_TEST(old_names_still_launch_and_bad_shapes_are_refused)
{
    uint64_t seed = 3703;
    scale_args a = {37, 1, 1, 0, NULL, NULL};
    float *in = tu_random(&seed, 37), *out = calloc(37, sizeof *out);
    a.in = in, a.out = out;
    ks_user_trace *d = scale_describe(&a, NULL);
    const char *p_old = tmp_path("old.kst"), *p_new = tmp_path("new.kst"), *p_write = tmp_path("write.kst");
    ks_user_trace *o = NULL; /* the same descriptor through the deprecated ks_user_tensor */
    const int64_t shape[3] = {1, 1, 37};
    ck_assert_int_eq(ks_user_trace_create(&o, scale_decl(), 37), KS_OK);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ck_assert_int_eq(ks_user_tensor(o, "out", KS_F32, 3, shape, a.out, 1), SC_T_OUT);
    ck_assert_int_eq(ks_user_tensor(o, "in", KS_F32, 3, shape, (void *)a.in, 0), SC_T_IN);
    ck_assert_int_eq(ks_user_tensor(o, "in", KS_F32, 3, shape, (void *)a.in, 0), -1);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "tensor in registered twice"));
    ks_site *w = ks_user_site(o, SC_SITE_WORK, NULL, KS_EV_WORK, -1, 0);
    ck_assert_int_eq(ks_user_field_digit(w, "z", 37, 0), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "y", 37, 1), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "x", 1, 37), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(o, SC_SITE_READ, NULL, KS_EV_READ, SC_T_IN, 0));
    ck_assert_ptr_nonnull(ks_user_site(o, SC_SITE_WRITE, NULL, KS_EV_WRITE, SC_T_OUT, 1));
    ck_assert_int_eq(ks_user_run_sim(o, scale_traced, &a, 16, 0, p_old), KS_OK);
    ks_sink *sink = ks_host_sink_create(0, ks_user_trace_filter(o));
    ck_assert_ptr_nonnull(sink);
    ks_sim_launch(3, 16, scale_traced, &a, sink);
    ck_assert_int_eq(ks_user_write(o, 16, 3, sink, "sim", p_write), KS_OK);
    ck_assert_int_eq(ks_user_write(o, 0, 3, sink, "sim", tmp_path("never.kst")), KS_EINVAL);
#pragma GCC diagnostic pop
    ks_host_sink_free(sink);
    ks_user_trace_destroy(o);
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(0, 0, 0), ks_dims(16, 0, 0), p_new), KS_OK);
    size_t nw = 0;
    unsigned char *wb = read_all(p_write, &nw);
    ck_assert(nw > 0);
    free(wb);
    size_t nx = 0, ny = 0;
    unsigned char *x = read_all(p_old, &nx), *y = read_all(p_new, &ny);
    ck_assert(nx > 0 && nx == ny && !memcmp(x, y, nx)); /* the same bytes */
    free(x), free(y);
    static ks_trace t1, t2;
    ck_assert_int_eq(ks_trace_open(p_old, &t1), KS_OK);
    ck_assert_int_eq(ks_trace_open(p_new, &t2), KS_OK);
    ck_assert_int_eq(t1.blocks, 3);
    ck_assert_uint_eq(t1.nevents, t2.nevents);
    ck_assert_int_eq(memcmp(t1.events, t2.events, t1.nevents * sizeof(ks_event)), 0);
    ks_trace_close(&t1);
    /* ks_user_write: the simulator's events through a host sink, the same events again */
    ck_assert_int_eq(ks_trace_open(p_write, &t1), KS_OK);
    ck_assert_uint_eq(t1.nevents, t2.nevents);
    ck_assert_int_eq(memcmp(t1.events, t2.events, t1.nevents * sizeof(ks_event)), 0);
    ks_trace_close(&t1), ks_trace_close(&t2);
    const char *bad = tmp_path("bad.kst");
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(1, 1, 1), ks_dims(32, 32, 2), bad), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "at most 1024"));
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(0, 2, 1), ks_dims(8, 2, 1), bad), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "needs its grid"));
    ck_assert_int_ne(access(bad, F_OK), 0);
    ks_user_trace_destroy(d);
    unlink(p_old), unlink(p_new), unlink(p_write);
    free(in), free(out);
}
END_TEST

/* ---- one declaration ------------------------------------------------------------------ */

/* Tensors and sites declared once and registered by name in any order: the same trace,
 * byte for byte, as a descriptor registered in the body's order; check passes. */
START_TEST(a_declaration_registers_by_name_in_any_order)
{
    uint64_t seed = 3704;
    scale_args a = {13, 7, 1, 0, NULL, NULL};
    const int64_t n = a.X * a.Y;
    float *in = tu_random(&seed, n), *out = calloc((size_t)n, sizeof *out);
    a.in = in, a.out = out;
    ks_user_trace *d = NULL;
    /* a site needs its tensor registered first */
    ck_assert_int_eq(ks_user_trace_create(&d, scale_decl(), n), KS_OK);
    ck_assert_ptr_null(ks_user_site(d, KS_BY_NAME, "scale.write", KS_EV_WRITE, SC_T_OUT, 1));
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "not registered yet"));
    ks_user_trace_destroy(d);
    const char *params = "{\"work_shape\": [7, 13]}";
    const char *p_new = tmp_path("declared.kst"), *p_old = tmp_path("in-order.kst");
    d = scale_describe(&a, params);
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(4, 3, 1), ks_dims(4, 3, 1), p_old), KS_OK);
    ks_user_trace_destroy(d);
    memset(out, 0, (size_t)n * sizeof *out);
    ck_assert_int_eq(ks_user_trace_create(&d, scale_decl(), n), KS_OK);
    ck_assert_int_eq(ks_user_trace_set_params(d, params), KS_OK);
    const int64_t shape[3] = {a.Z, a.Y, a.X};
    ck_assert_int_eq(ks_user_add_tensor(d, "out", KS_F32, 3, shape, a.out, 1), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, KS_BY_NAME, "scale.write", KS_EV_WRITE, SC_T_OUT, 1));
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 3, shape, (void *)a.in, 0), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, SC_SITE_READ, NULL, KS_EV_READ, SC_T_IN, 0));
    ks_site *w = ks_user_site(d, SC_SITE_WORK, "scale.work", KS_EV_WORK, -1, 0);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(ks_user_field_digit(w, "z", a.X * a.Y, 0), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "y", a.X, a.Y), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "x", 1, a.X), KS_OK);
    ck_assert_msg(ks_user_launch_sim(d, scale_traced, &a, ks_dims(4, 3, 1), ks_dims(4, 3, 1), p_new) == KS_OK, "%s",
                  ks_error_message());
    ks_user_trace_destroy(d);
    for (int64_t i = 0; i < n; ++i) ck_assert_float_eq(out[i], (float)(2.0 * (double)in[i]));
    size_t nx = 0, ny = 0;
    unsigned char *x = read_all(p_old, &nx), *y = read_all(p_new, &ny);
    ck_assert(nx > 0 && nx == ny && !memcmp(x, y, nx)); /* the same bytes */
    free(x), free(y);
    static ks_trace tr;
    const ks_check_report *rep = check_file(p_new, &tr);
    if (rep->violations) dump(rep);
    ck_assert_uint_eq(rep->violations, 0);
    ck_assert_str_eq(tr.sites[SC_SITE_READ].name, "scale.read");
    ck_assert_str_eq(tr.tensors[SC_T_OUT].name, "out");
    ks_trace_close(&tr);
    unlink(p_old), unlink(p_new);
    free(in), free(out);
}
END_TEST

/* what ks_error_message() says contains every needle (NULL-terminated) */
static void error_names(const char *const *needles)
{
    for (const char *const *n = needles; *n; ++n)
        ck_assert_msg(strstr(ks_error_message(), *n), "'%s' lacks '%s'", ks_error_message(), *n);
}

/* A registration that disagrees with the declaration is an error naming both sides; a
 * declared tensor or site never registered stops the launch, naming it; a bad
 * declaration is refused (no handle) and every call on no handle refuses. */
START_TEST(declaration_mismatches_name_both_sides)
{
    scale_args a = {5, 1, 1, 0, NULL, NULL};
    float in[5] = {1, 2, 3, 4, 5}, out[5] = {0};
    a.in = in, a.out = out;
    const int64_t shape[3] = {1, 1, 5};
    ks_user_trace *d = NULL;
    const char *path = tmp_path("mismatch.kst");
    ck_assert_int_eq(ks_user_trace_create(&d, scale_decl(), 5), KS_OK);
    /* a tensor name the body does not declare */
    ck_assert_int_eq(ks_user_add_tensor(d, "inp", KS_F32, 3, shape, in, 0), KS_EINVAL);
    error_names((const char *const[]){"main registers tensor inp", "in (SC_T_IN)", "out (SC_T_OUT)", NULL});
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 3, shape, in, 0), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 3, shape, in, 0), KS_EINVAL);
    error_names((const char *const[]){"tensor in registered twice", NULL});
    ck_assert_int_eq(ks_user_add_tensor(d, "out", KS_F32, 3, shape, out, 1), KS_OK);
    /* an enum and a name that disagree: main's name, the body's enum, name and number */
    ck_assert_ptr_null(ks_user_site(d, SC_SITE_READ, "scale.write", KS_EV_READ, SC_T_IN, 0));
    error_names((const char *const[]){"main registers site 1 as scale.write", "SC_SITE_READ = 1 as scale.read",
                                      "scale.write as SC_SITE_WRITE = 2", NULL});
    ck_assert_ptr_null(ks_user_site(d, SC_SITE_READ, "scale.reed", KS_EV_READ, SC_T_IN, 0));
    error_names((const char *const[]){"scale.reed", "SC_SITE_READ = 1 as scale.read", NULL});
    ck_assert_ptr_null(ks_user_site(d, KS_BY_NAME, "scale.red", KS_EV_READ, SC_T_IN, 0));
    error_names((const char *const[]){"main registers site scale.red", "scale.read (SC_SITE_READ)", NULL});
    ck_assert_ptr_null(ks_user_site(d, 3, NULL, KS_EV_READ, SC_T_IN, 0));
    error_names((const char *const[]){"site 3", "0..2", NULL});
    ck_assert_ptr_null(ks_user_site(d, KS_BY_NAME, NULL, KS_EV_READ, SC_T_IN, 0));
    ks_site *w = ks_user_site(d, SC_SITE_WORK, NULL, KS_EV_WORK, -1, 0);
    ck_assert_ptr_nonnull(w);
    ck_assert_str_eq(w->name, "scale.work");
    ck_assert_int_eq(ks_user_field_digit(w, "x", 1, 0), KS_OK);
    ck_assert_ptr_null(ks_user_site(d, KS_BY_NAME, "scale.work", KS_EV_WORK, -1, 0));
    error_names((const char *const[]){"site scale.work registered twice", NULL});
    ck_assert_ptr_nonnull(ks_user_site(d, SC_SITE_WRITE, NULL, KS_EV_WRITE, SC_T_OUT, 1));
    /* scale.read declared, never registered: no launch, no trace */
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(0, 1, 1), ks_dims(8, 1, 1), path), KS_EINVAL);
    error_names((const char *const[]){"the body declares site scale.read (SC_SITE_READ = 1)", "never registers", NULL});
    ck_assert_int_ne(access(path, F_OK), 0);
    ks_sink *sink = ks_host_sink_create(0, ks_user_trace_filter(d));
    ck_assert_ptr_nonnull(sink);
    ck_assert_int_eq(ks_user_write_launch(d, ks_dims(1, 1, 1), ks_dims(8, 1, 1), sink, "sim", path), KS_EINVAL);
    error_names((const char *const[]){"scale.read (SC_SITE_READ = 1)", NULL});
    ck_assert_int_ne(access(path, F_OK), 0);
    /* once registered, it runs */
    ck_assert_ptr_nonnull(ks_user_site(d, KS_BY_NAME, "scale.read", KS_EV_READ, SC_T_IN, 0));
    ck_assert_msg(ks_user_launch_sim(d, scale_traced, &a, ks_dims(0, 1, 1), ks_dims(8, 1, 1), path) == KS_OK, "%s",
                  ks_error_message());
    unlink(path);
    /* a declared tensor never registered */
    ks_user_trace_destroy(d);
    ck_assert_int_eq(ks_user_trace_create(&d, scale_decl(), 5), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 3, shape, in, 0), KS_OK);
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(0, 1, 1), ks_dims(8, 1, 1), path), KS_EINVAL);
    error_names((const char *const[]){"the body declares tensor out (SC_T_OUT = 1)", NULL});
    ks_user_trace_destroy(d);
    /* declarations refused: a name twice, none, a long op name: no handle, and every call
     * on no handle refuses, naming the call */
    static const ks_user_decl twice = {"twice", 2, 1, {"a", "a"}, {"T_A", "T_B"}, {"twice.work"}, {"W"}};
    d = (ks_user_trace *)sink; /* not NULL: the failure must set it */
    ck_assert_int_eq(ks_user_trace_create(&d, &twice, 5), KS_EINVAL);
    ck_assert_ptr_null(d);
    error_names((const char *const[]){"names tensor a twice", NULL});
    ck_assert_int_eq(ks_user_add_tensor(d, "a", KS_F32, 3, shape, in, 0), KS_EINVAL);
    error_names((const char *const[]){"ks_user_add_tensor: no trace descriptor", NULL});
    ck_assert_ptr_null(ks_user_site(d, 0, NULL, KS_EV_WORK, -1, 0));
    ck_assert_int_eq(ks_user_trace_set_params(d, "{}"), KS_EINVAL);
    ck_assert_int_eq(ks_user_launch_sim(d, scale_traced, &a, ks_dims(0, 1, 1), ks_dims(8, 1, 1), path), KS_EINVAL);
    error_names((const char *const[]){"ks_user_launch_sim: no trace descriptor", NULL});
    ck_assert_int_eq(ks_user_write_launch(d, ks_dims(1, 1, 1), ks_dims(8, 1, 1), sink, "sim", path), KS_EINVAL);
    ks_user_trace_destroy(d); /* NULL: nothing */
    static const ks_user_decl no_sites = {"empty", 1, 0, {"a"}, {"T_A"}, {NULL}, {NULL}};
    ck_assert_int_eq(ks_user_trace_create(&d, &no_sites, 5), KS_EINVAL);
    error_names((const char *const[]){"0 sites", NULL});
    static const ks_user_decl long_op = {"an_operator_name_of_thirty_two_c", 1, 1, {"a"}, {"T_A"}, {"w"}, {"W"}};
    ck_assert_int_eq(ks_user_trace_create(&d, &long_op, 5), KS_EINVAL);
    error_names((const char *const[]){"an_operator_name_of_thirty_two_...", "longer than 31", NULL});
    ck_assert_int_eq(ks_user_trace_create(&d, NULL, 5), KS_EINVAL);
    ck_assert_int_eq(ks_user_trace_create(NULL, scale_decl(), 5), KS_EINVAL);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* params: a JSON object of at most 1023 bytes, copied; NULL clears them */
    ck_assert_int_eq(ks_user_trace_create(&d, scale_decl(), 5), KS_OK);
    ck_assert_int_eq(ks_user_trace_set_params(d, "[1, 2]"), KS_EINVAL);
    error_names((const char *const[]){"scale: the params are not a JSON object", NULL});
    ck_assert_int_eq(ks_user_trace_set_params(d, "{\"a\": "), KS_EINVAL);
    char big[1100];
    memset(big, ' ', sizeof big);
    big[0] = '{', big[sizeof big - 2] = '}', big[sizeof big - 1] = 0;
    ck_assert_int_eq(ks_user_trace_set_params(d, big), KS_EINVAL);
    error_names((const char *const[]){"pass 1023 bytes", NULL});
    ck_assert_int_eq(ks_user_trace_set_params(d, NULL), KS_OK);
    /* a filter: kept and handed back; a reversed range refused */
    ks_filter f = ks_filter_all();
    f.index_lo = 2, f.every = 2;
    ck_assert_int_eq(ks_user_trace_set_filter(d, f), KS_OK);
    ck_assert_int_eq(ks_user_trace_filter(d).index_lo, 2);
    ck_assert_int_eq(ks_user_trace_filter(d).every, 2);
    f.index_hi = 1;
    ck_assert_int_eq(ks_user_trace_set_filter(d, f), KS_EINVAL);
    ck_assert_int_eq(ks_user_trace_filter(d).index_hi, ks_filter_all().index_hi);
    ks_user_trace_destroy(d);
    ks_host_sink_free(sink);
}
END_TEST

/* ---- item 2: the hidden case -------------------------------------------------------- */

/* A torch-style bilinear resize (align_corners false) of P planes H x W to OH x OW with a
 * float source coordinate, launched 2-D: y is the output row of all planes (p * OH + oy),
 * x a thread's four output columns in a row (ox = 4 x .. 4 x + 3: "per-thread:4" over the
 * work_shape [P * OH, OW]); each output value also counts into an NB-bin histogram with
 * an atomic add. Planted bugs, one at a time: */
enum { BUG_NONE, BUG_COORD, BUG_LAUNCH, BUG_PER, BUG_ATOMIC, BUG_KINDS };
static const char *const bug_name[BUG_KINDS] = {"none", "coordinate", "2-D launch", "4 per thread", "atomics"};
#define RS_P 2
#define RS_H 13
#define RS_W 31
#define RS_OH 17
#define RS_OW 23
#define RS_NB 8
/* its tensors and sites, declared once (ks_decl.h): the body's numbers, main's names */
#define RS_TENSORS(X) X(RS_T_INPUT, "input") X(RS_T_OUTPUT, "output") X(RS_T_HIST, "hist")
#define RS_SITES(X)                \
    X(RS_SITE_WORK, "resize.work") \
    X(RS_SITE_SAMPLE, "resize.sample") X(RS_SITE_WRITE, "resize.write") X(RS_SITE_COUNT, "resize.count")
KS_DECLARE(resize_hist, RS_TENSORS, RS_SITES)
typedef struct resize_args {
    int bug;
    const float *in; /* [P, H, W] */
    float *out;      /* [P, OH, OW] */
    float *hist;     /* [NB] */
} resize_args;

static void resize_traced(ks_thread *t, const void *p)
{
    const resize_args *a = p;
    const int64_t x = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    /* BUG_LAUNCH: the row from blockDim.x */
    const int64_t y = (int64_t)t->block_idx.y * (a->bug == BUG_LAUNCH ? t->block_dim.x : t->block_dim.y) +
                      t->thread_idx.y;
    if (y >= RS_P * RS_OH) return;
    const int64_t pl = y / RS_OH, oy = y % RS_OH;
    const int per = a->bug == BUG_PER ? 5 : 4; /* BUG_PER: one item too many */
    for (int k = 0; k < per; ++k) {
        const int64_t ox = x * 4 + k;
        if (ox >= RS_OW) break;
        const int64_t index = y * RS_OW + ox;
        /* BUG_COORD: the half-pixel shift forgotten */
        float sy = (oy + 0.5f) * RS_H / RS_OH - (a->bug == BUG_COORD ? 0.0f : 0.5f);
        float sx = (ox + 0.5f) * RS_W / RS_OW - 0.5f;
        sy = fmaxf(sy, 0.0f), sx = fmaxf(sx, 0.0f);
        const int y0 = (int)sy, x0 = (int)sx;
        const int y1 = y0 < RS_H - 1 ? y0 + 1 : RS_H - 1, x1 = x0 < RS_W - 1 ? x0 + 1 : RS_W - 1;
        const float ly = sy - (float)y0, lx = sx - (float)x0;
        const float w00 = (1 - ly) * (1 - lx), w01 = (1 - ly) * lx, w10 = ly * (1 - lx), w11 = ly * lx;
        const float *plane = a->in + pl * RS_H * RS_W;
        const float v = w00 * plane[y0 * RS_W + x0] + w01 * plane[y0 * RS_W + x1] + w10 * plane[y1 * RS_W + x0] +
                        w11 * plane[y1 * RS_W + x1];
        KS_PROBE(ks_probe_work(t, RS_SITE_WORK, index, (uint32_t)k, pl, oy, ox, y0, x0, 0, 0, 0));
        KS_PROBE(ks_probe_sample(t, RS_SITE_SAMPLE, RS_T_INPUT, 0, pl, sy, sx, w00, w01, w10, w11, v, TU_CORNERS_ALL));
        a->out[index] = v;
        KS_PROBE(ks_probe_write(t, RS_SITE_WRITE, RS_T_OUTPUT, 0, index, pl, oy, ox, v, 0));
        int bin = (int)(v * RS_NB);
        if (a->bug != BUG_ATOMIC && bin > RS_NB - 1) bin = RS_NB - 1; /* BUG_ATOMIC: v == 1 counts past the end */
        ks_atomic_add_f32(&a->hist[bin], 1.0f);
        KS_PROBE(ks_probe_write(t, RS_SITE_COUNT, RS_T_HIST, 0, bin, 0, 0, bin, 1.0f, 1));
    }
}

/* the reference: torch's rule written from its definition, in double */
static double resize_ref(const float *in, int64_t pl, int64_t oy, int64_t ox)
{
    double sy = ((double)oy + 0.5) * RS_H / RS_OH - 0.5, sx = ((double)ox + 0.5) * RS_W / RS_OW - 0.5;
    if (sy < 0) sy = 0;
    if (sx < 0) sx = 0;
    const int64_t y0 = (int64_t)floor(sy), x0 = (int64_t)floor(sx);
    const int64_t y1 = y0 + 1 < RS_H ? y0 + 1 : RS_H - 1, x1 = x0 + 1 < RS_W ? x0 + 1 : RS_W - 1;
    const double ly = sy - (double)y0, lx = sx - (double)x0;
    const float *P = in + pl * RS_H * RS_W;
    return (1 - ly) * ((1 - lx) * P[y0 * RS_W + x0] + lx * P[y0 * RS_W + x1]) +
           ly * ((1 - lx) * P[y1 * RS_W + x0] + lx * P[y1 * RS_W + x1]);
}

/* runs the resize with `bug`, checks its trace; returns the report (the trace closed) */
static const ks_check_report *resize_run(int bug, float *in, float *out, float *hist)
{
    resize_args a = {bug, in, out, hist};
    const int64_t in_shape[3] = {RS_P, RS_H, RS_W}, out_shape[3] = {RS_P, RS_OH, RS_OW}, hist_shape[1] = {RS_NB};
    ks_user_trace *d = NULL;
    ck_assert_int_eq(ks_user_trace_create(&d, resize_hist_decl(), RS_P * RS_OH * RS_OW), KS_OK);
    ck_assert_int_eq(ks_user_trace_set_params(d, "{\"H\": 13, \"W\": 31, \"OH\": 17, \"OW\": 23, \"mapping\": "
                                                 "\"per-thread:4\", \"work_shape\": [34, 23]}"),
                     KS_OK);
    /* registered by name in another order than declared: the declaration's numbers hold */
    ck_assert_int_eq(ks_user_add_tensor(d, "hist", KS_F32, 1, hist_shape, hist, 1), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "input", KS_F32, 3, in_shape, in, 0), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "output", KS_F32, 3, out_shape, out, 1), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, KS_BY_NAME, "resize.count", KS_EV_WRITE, RS_T_HIST, 0));
    ks_site *w = ks_user_site(d, RS_SITE_WORK, NULL, KS_EV_WORK, -1, 0);
    ck_assert_int_eq(ks_user_field_digit(w, "p", RS_OH * RS_OW, 0), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "oy", RS_OW, RS_OH), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "ox", 1, RS_OW), KS_OK);
    ck_assert_int_eq(ks_user_field_derived(w, "y0", "(int)fmaxf((oy + 0.5f) * H / OH - 0.5f, 0.0f)"), KS_OK);
    ck_assert_int_eq(ks_user_field_derived(w, "x0", "(int)fmaxf((ox + 0.5f) * W / OW - 0.5f, 0.0f)"), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, RS_SITE_WRITE, "resize.write", KS_EV_WRITE, RS_T_OUTPUT, 1));
    ck_assert_ptr_nonnull(ks_user_site(d, RS_SITE_SAMPLE, NULL, KS_EV_SAMPLE, RS_T_INPUT, 0));
    /* 2-D: x threads cover ceil(23 / 4) = 6 column groups (8, two idle), y the 34 rows (35) */
    const char *path = tmp_path("resize.kst");
    ck_assert_msg(ks_user_launch_sim(d, resize_traced, &a, ks_dims(2, 7, 1), ks_dims(4, 5, 1), path) == KS_OK, "%s",
                  ks_error_message());
    ks_user_trace_destroy(d);
    static ks_trace tr;
    const ks_check_report *rep = check_file(path, &tr);
    ks_trace_close(&tr);
    unlink(path);
    return rep;
}

/* The hidden case of issue 37: a float coordinate, a 2-D launch, 4 items per thread and
 * atomics pass check with zero violations, and compute what the reference says; each
 * planted bug is caught, by exactly the rules it breaks. */
START_TEST(hidden_case_passes_and_its_planted_bugs_are_caught)
{
    uint64_t seed = 3737;
    float *in = tu_random(&seed, RS_P * RS_H * RS_W);
    for (int64_t i = 0; i < RS_P * RS_H * RS_W; ++i) in[i] = fabsf(in[i]) / 2; /* [0, 1) */
    for (int64_t i = RS_H * RS_W; i < 2 * RS_H * RS_W; i += 3) in[i] = 1.0f;   /* exact ones in plane 1 */
    in[RS_H * RS_W] = in[RS_H * RS_W + 1] = in[RS_H * RS_W + RS_W] = 1.0f;     /* output (1, 0, 0) is 1 */
    const int64_t n = RS_P * RS_OH * RS_OW;
    float *out = malloc((size_t)n * sizeof *out);
    float *hist = malloc((RS_NB + 8) * sizeof *hist); /* 8 more: the atomics bug's count past the end */
    static const char *const rules[BUG_KINDS][5] = {
        {NULL},
        {"but its formula %s gives", NULL},
        {"over the work shape", "never recorded", "recorded twice", "written %u times", NULL},
        {"over the work shape", "recorded twice", "written %u times", NULL},
        {"outside %s", NULL},
    };
    static const char *const want[BUG_KINDS][5] = {
        {NULL},
        {"but its formula", NULL},
        {"per-thread:4 mapping over the work shape", "never recorded", "recorded twice", "written", NULL},
        {"per-thread:4 mapping over the work shape", "recorded twice", "written 2 times", NULL},
        {"outside hist", NULL},
    };
    for (int bug = 0; bug < BUG_KINDS; ++bug) {
        for (int64_t i = 0; i < n; ++i) out[i] = -7.0f;
        for (int b = 0; b < RS_NB + 8; ++b) hist[b] = 0.0f;
        const ks_check_report *rep = resize_run(bug, in, out, hist);
        if (bug == BUG_NONE) {
            if (rep->violations) dump(rep);
            ck_assert_msg(rep->violations == 0, "the good kernel: %llu violations",
                          (unsigned long long)rep->violations);
            double counts[RS_NB] = {0}; /* the histogram of the outputs, counted here */
            for (int64_t pl = 0; pl < RS_P; ++pl)
                for (int64_t oy = 0; oy < RS_OH; ++oy)
                    for (int64_t ox = 0; ox < RS_OW; ++ox) {
                        const float v = out[(pl * RS_OH + oy) * RS_OW + ox];
                        ck_assert_msg(fabs(v - resize_ref(in, pl, oy, ox)) < 1e-5, "(%lld, %lld, %lld): %g vs %g",
                                      (long long)pl, (long long)oy, (long long)ox, v, resize_ref(in, pl, oy, ox));
                        const int b = v >= 1.0f ? RS_NB - 1 : (int)floor((double)v * RS_NB);
                        counts[b] += 1;
                    }
            ck_assert_float_eq(out[RS_OH * RS_OW], 1.0f); /* an exact 1: the top bin, not past it */
            for (int b = 0; b < RS_NB; ++b) ck_assert_float_eq(hist[b], (float)counts[b]);
            continue;
        }
        if (!only_violations(rep, want[bug])) dump(rep);
        ck_assert_msg(rep->violations > 0 && only_violations(rep, want[bug]), "%s bug: %llu violations, first: %s",
                      bug_name[bug], (unsigned long long)rep->violations, rep->first[0]);
        ck_assert_msg(count_violations(rep, want[bug][0]) > 0, "%s bug: no '%s'", bug_name[bug], want[bug][0]);
        ck_assert_msg(only_rules(rep, rules[bug]), "%s bug: a rule it should not break", bug_name[bug]);
    }
    free(in), free(out), free(hist);
}
END_TEST

/* ---- item 3: safe simulation ----------------------------------------------------------- */

/* item i of a[n] (i < n) is a[i] = i + 0.5; bug: also stores at a[n + i] and reads
 * in[n + i] (off the end: into whatever lies there), or (wild) stores far outside, after
 * recording the store */
typedef struct spill_args {
    int64_t n, wild;
    const float *in;
    float *a;
} spill_args;

static void spill_traced(ks_thread *t, const void *p)
{
    const spill_args *a = p;
    const int64_t i = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    if (i >= a->n) return;
    KS_PROBE(ks_probe_work(t, 0, i, 0, i, 0, 0, 0, 0, 0, 0, 0));
    const float v = a->in[i];
    KS_PROBE(ks_probe_read(t, 1, 0, 0, i, 0, 0, i, v));
    a->a[i] = v + 0.5f;
    KS_PROBE(ks_probe_write(t, 2, 1, 0, i, 0, 0, i, v + 0.5f, 0));
    if (i % 4 != 1) return;
    const int64_t off = a->wild ? a->wild : a->n + i; /* the bug */
    const float w = a->in[a->n + i];
    KS_PROBE(ks_probe_read(t, 1, 0, 0, a->n + i, 0, 0, a->n + i, w));
    KS_PROBE(ks_probe_write(t, 2, 1, 0, off, 0, 0, off, -1.0f, 0));
    a->a[off] = -1.0f;
}

/* spill_traced's numbers, declared once */
#define SP_TENSORS(X) X(SP_T_IN, "in") X(SP_T_A, "a") X(SP_T_B, "b")
#define SP_SITES(X) X(SP_SITE_WORK, "spill.work") X(SP_SITE_READ, "spill.read") X(SP_SITE_WRITE, "spill.write")
KS_DECLARE(spill, SP_TENSORS, SP_SITES)

/* a descriptor for spill (the caller destroys it) */
static ks_user_trace *spill_describe(spill_args *a, float *b, int64_t nb)
{
    const int64_t shape[1] = {a->n}, bshape[1] = {nb};
    ks_user_trace *d = NULL;
    ck_assert_int_eq(ks_user_trace_create(&d, spill_decl(), a->n), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 1, shape, (void *)a->in, 0), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "a", KS_F32, 1, shape, a->a, 1), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "b", KS_F32, 1, bshape, b, 1), KS_OK);
    ks_site *w = ks_user_site(d, SP_SITE_WORK, NULL, KS_EV_WORK, -1, 0);
    ck_assert_int_eq(ks_user_field_digit(w, "i", 1, 0), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, SP_SITE_READ, NULL, KS_EV_READ, SP_T_IN, 0));
    ck_assert_ptr_nonnull(ks_user_site(d, SP_SITE_WRITE, NULL, KS_EV_WRITE, SP_T_A, 0));
    return d;
}

/* runs fn with stderr in a file; returns what it printed (static) */
static const char *stderr_of(int (*fn)(void *), void *ctx, int *rc)
{
    static char text[4096];
    const char *path = tmp_path("stderr.txt");
    fflush(stderr);
    const int keep = dup(2);
    FILE *f = fopen(path, "w+");
    ck_assert(keep >= 0 && f);
    dup2(fileno(f), 2);
    *rc = fn(ctx);
    fflush(stderr);
    dup2(keep, 2);
    close(keep);
    rewind(f);
    const size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    unlink(path);
    return text;
}

typedef struct spill_run {
    ks_user_trace *d;
    spill_args *a;
    const char *path;
} spill_run;

static int spill_launch(void *p)
{
    const spill_run *r = p;
    return ks_user_launch_sim(r->d, spill_traced, r->a, ks_dims(3, 1, 1), ks_dims(7, 1, 1), r->path);
}

/* Stores past the end of tensor a land, in memory, on tensor b (one allocation holds a, b
 * and the input's tail): none is made on the host, b keeps every value, a holds exactly the
 * reference, the reads past in's end come back harmless, each is reported with its thread
 * and site, and check names them. */
START_TEST(accesses_outside_are_reported_and_not_made)
{
    enum { N = 19, NB = 29 };
    float *pool = malloc((N + N + NB) * sizeof *pool); /* in | a | b, back to back */
    float *in = pool, *av = pool + N, *b = pool + 2 * N;
    for (int i = 0; i < N; ++i) in[i] = (float)(3 * i + 1), av[i] = 0.0f;
    for (int i = 0; i < NB; ++i) b[i] = (float)(100 + i);
    spill_args a = {N, 0, in, av};
    ks_user_trace *d = spill_describe(&a, b, NB);
    spill_run r = {d, &a, tmp_path("spill.kst")};
    int rc = -1;
    const char *err = stderr_of(spill_launch, &r, &rc);
    ck_assert_msg(rc == KS_OK, "%s", ks_error_message());
    for (int i = 0; i < N; ++i) ck_assert_float_eq(av[i], (float)(3 * i + 1) + 0.5f);
    for (int i = 0; i < NB; ++i) ck_assert_float_eq(b[i], (float)(100 + i)); /* a[19 + i] is b[i]: untouched */
    for (int i = 0; i < N; ++i) ck_assert_float_eq(in[i], (float)(3 * i + 1));
    /* items 1, 5, 9, 13, 17 each read and write one element past the end: 10 accesses */
    ck_assert_msg(strstr(err, "spill: 10 accesses outside their tensor, not made on the host; the first: thread "
                              "(1,0,0) of block (0,0,0) at site spill.read reads in[20], outside its 19 elements"),
                  "%s", err);
    ks_user_trace_destroy(d);
    static ks_trace tr;
    const ks_check_report *rep = check_file(r.path, &tr);
    ck_assert_msg(rep->violations == 10 && count_violations(rep, "offset 20 outside in (19 elements)") == 1 &&
                      count_violations(rep, "offset 20 outside a (19 elements)") == 1 &&
                      count_violations(rep, "outside") == 10,
                  "%llu: %s", (unsigned long long)rep->violations, rep->first[0]);
    ks_trace_close(&tr);
    unlink(r.path);
    free(pool); /* the heap is whole */
}
END_TEST

/* A store far outside every allocation: on the host it would crash the program; here the
 * simulation's process stops, the call reports the thread and site of the last event (the
 * store, recorded before it was tried) and the host's tensors are as they were. */
START_TEST(a_wild_store_stops_the_simulation_not_the_program)
{
    enum { N = 13, NB = 3 };
    float *in = malloc(2 * N * sizeof *in), *av = malloc(N * sizeof *av), *b = malloc(NB * sizeof *b);
    for (int i = 0; i < 2 * N; ++i) in[i] = (float)i;
    for (int i = 0; i < N; ++i) av[i] = 7.0f;
    for (int i = 0; i < NB; ++i) b[i] = 9.0f;
    spill_args a = {N, (int64_t)1 << 40, in, av};
    ks_user_trace *d = spill_describe(&a, b, NB);
    spill_run r = {d, &a, tmp_path("wild.kst")};
    int rc = 0;
    (void)stderr_of(spill_launch, &r, &rc);
    ck_assert_int_eq(rc, KS_EINVAL);
    ks_user_trace_destroy(d);
    /* signal 11; under AddressSanitizer the sanitizer stops it first (an exit status) */
    const char *m = ks_error_message();
    ck_assert_msg(strstr(m, "spill: the simulated body stopped (") &&
                      (strstr(m, "(signal 11)") || strstr(m, "(exit status ")) &&
                      strstr(m, ") after thread (1,0,0) of block (0,0,0)'s event at site spill.write (work item 1)"),
                  "%s", m);
    ck_assert_msg(strstr(ks_error_message(), "the first access outside: thread (1,0,0) of block (0,0,0) at site "
                                             "spill.read reads in[14], outside its 13 elements"),
                  "%s", ks_error_message());
    for (int i = 0; i < N; ++i) ck_assert_float_eq(av[i], 7.0f); /* nothing came back: the run stopped */
    static ks_trace tr;
    const ks_check_report *rep = check_file(r.path, &tr); /* the events up to the stop */
    ck_assert_msg(count_violations(rep, "offset 1099511627776 outside a (13 elements)") == 1, "%s", rep->first[0]);
    ks_trace_close(&tr);
    unlink(r.path);
    free(in), free(av), free(b);
}
END_TEST

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s", tmp && *tmp ? tmp : "/tmp");
    Suite *s = suite_create("user_kernels");
    TCase *tc = tcase_create("user_kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, launches_of_any_shape_pass_check);
    tcase_add_test(tc, check_catches_a_2d_mapping_slip);
    tcase_add_test(tc, old_names_still_launch_and_bad_shapes_are_refused);
    tcase_add_test(tc, a_declaration_registers_by_name_in_any_order);
    tcase_add_test(tc, declaration_mismatches_name_both_sides);
    tcase_add_test(tc, hidden_case_passes_and_its_planted_bugs_are_caught);
    tcase_add_test(tc, accesses_outside_are_reported_and_not_made);
    tcase_add_test(tc, a_wild_store_stops_the_simulation_not_the_program);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
