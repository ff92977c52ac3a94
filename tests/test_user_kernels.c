/* Kernels of one's own through the SDK (issue 37): launches of any shape on the simulator,
 * `check` holding their declared mapping with no false alarm and still catching planted
 * bugs. Every result is
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

static void scale_describe(ks_user_trace *d, const scale_args *a, const char *params)
{
    const int64_t shape[3] = {a->Z, a->Y, a->X};
    ks_user_trace_init(d, "scale", a->X * a->Y * a->Z);
    d->params = params;
    ck_assert_int_eq(ks_user_tensor(d, "in", KS_F32, 3, shape, (void *)a->in, 0), 0);
    ck_assert_int_eq(ks_user_tensor(d, "out", KS_F32, 3, shape, a->out, 1), 1);
    ks_site *w = ks_user_site(d, 0, "scale.work", KS_EV_WORK, -1, 0);
    ck_assert_int_eq(ks_user_field_digit(w, "z", a->X * a->Y, 0), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "y", a->X, a->Y), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "x", 1, a->X), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, 1, "scale.read", KS_EV_READ, 0, 0));
    ck_assert_ptr_nonnull(ks_user_site(d, 2, "scale.write", KS_EV_WRITE, 1, 1));
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
        static ks_user_trace d;
        scale_describe(&d, &a, cases[c].params);
        const char *path = tmp_path("scale.kst");
        const ks_dim3 g = ks_dims(cases[c].g[0], cases[c].g[1], cases[c].g[2]);
        const ks_dim3 b = ks_dims(cases[c].b[0], cases[c].b[1], cases[c].b[2]);
        ck_assert_msg(ks_user_launch_sim(&d, scale_traced, &a, g, b, path) == KS_OK, "%s", ks_error_message());
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
    static ks_user_trace d;
    scale_describe(&d, &a, "{\"work_shape\": [7, 13]}");
    const char *path = tmp_path("slip.kst");
    ck_assert_int_eq(ks_user_launch_sim(&d, scale_traced, &a, ks_dims(4, 3, 1), ks_dims(4, 3, 1), path), KS_OK);
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
    scale_describe(&d, &a, "{\"work_shape\": [7, 12]}");
    ck_assert_int_eq(ks_user_launch_sim(&d, scale_traced, &a, ks_dims(4, 3, 1), ks_dims(4, 3, 1), path), KS_OK);
    rep = check_file(path, &tr);
    ck_assert_msg(rep->violations >= 1 && strstr(rep->first[0], "the params' work_shape is not"), "%s",
                  rep->first[0]); /* first; then the launch's extent (16 x 9) is not the work's */
    ks_trace_close(&tr);
    unlink(path);
    free(in), free(out);
}
END_TEST

/* The deprecated 1-D names still work: the same bytes as the new call's 1-D launch;
 * bad launch shapes are refused with a message, nothing written. */
START_TEST(old_names_still_launch_and_bad_shapes_are_refused)
{
    uint64_t seed = 3703;
    scale_args a = {37, 1, 1, 0, NULL, NULL};
    float *in = tu_random(&seed, 37), *out = calloc(37, sizeof *out);
    a.in = in, a.out = out;
    static ks_user_trace d;
    scale_describe(&d, &a, NULL);
    const char *p_old = tmp_path("old.kst"), *p_new = tmp_path("new.kst");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ck_assert_int_eq(ks_user_run_sim(&d, scale_traced, &a, 16, 0, p_old), KS_OK);
#pragma GCC diagnostic pop
    ck_assert_int_eq(ks_user_launch_sim(&d, scale_traced, &a, ks_dims(0, 0, 0), ks_dims(16, 0, 0), p_new), KS_OK);
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
    ks_trace_close(&t1), ks_trace_close(&t2);
    const char *bad = tmp_path("bad.kst");
    ck_assert_int_eq(ks_user_launch_sim(&d, scale_traced, &a, ks_dims(1, 1, 1), ks_dims(32, 32, 2), bad), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "at most 1024"));
    ck_assert_int_eq(ks_user_launch_sim(&d, scale_traced, &a, ks_dims(0, 2, 1), ks_dims(8, 2, 1), bad), KS_EINVAL);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "needs its grid"));
    ck_assert_int_ne(access(bad, F_OK), 0);
    unlink(p_old), unlink(p_new);
    free(in), free(out);
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
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
