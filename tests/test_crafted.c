/* Crafted traces (issue 15): header numbers out of bounds are refused by the reader;
 * check survives products that overflow int64 and reports what they hide; a filtered
 * trace of a huge launch is checked with memory that follows its events; NaN is one
 * violation, not two; patchify at NaN coordinates passes check; the viewer's panels
 * never keep a plane outside their tensor. Every trace is built here, not committed. */
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "../trace/check.h"
#include "../trace/export.h"
#include "../trace/formula.h"
#include "../trace/memory.h"
#include "../trace/npy.h"
#include "../viewer/vw_index.h"
#include "../viewer/vw_state.h"
#include "crafted_trace.h"

static char g_dir[4096];

/* KS_CRAFTED_SEEDS=DIR (tests/fuzz/make_seeds.sh): every file goes to DIR and stays, named
 * by the test's process so that each loop iteration keeps its own: the fuzzers' seeds. */
static const char *tmp_path(const char *name)
{
    static char path[4][4200];
    static int k;
    k = (k + 1) % 4;
    if (getenv("KS_CRAFTED_SEEDS")) snprintf(path[k], sizeof path[k], "%s/%d-%s", g_dir, (int)getpid(), name);
    else snprintf(path[k], sizeof path[k], "%s/%s", g_dir, name);
    return path[k];
}

static ks_check_report *check(const ks_trace *tr)
{
    static ks_check_report rep;
    ck_assert_msg(ks_trace_check(tr, &rep) == KS_OK, "%s", ks_error_message());
    return &rep;
}

static int any_violation(const ks_check_report *rep, const char *needle)
{
    for (uint64_t i = 0; i < rep->violations && i < KS_CHECK_KEEP; ++i)
        if (strstr(rep->first[i], needle)) return 1;
    return 0;
}

/* A small valid trace: 4 work items over 2 blocks of 2 threads, input (1, 2, 3),
 * output (1, 2, 2); item i reads input[0, 0, i % 3] and writes output element i. */
static void small_trace(ct_trace *c)
{
    const int64_t in_shape[3] = {1, 2, 3}, out_shape[3] = {1, 2, 2};
    ct_init(c, 2, 2, 4);
    ct_tensor(c, 0, "input", KS_ROLE_INPUT, 3, in_shape);
    ct_tensor(c, 1, "output", KS_ROLE_OUTPUT, 3, out_shape);
    for (int i = 0; i < 4; ++i) {
        ks_event *w = ct_event(c, KS_EV_WORK, 0, i, (uint32_t)(i / 2), (uint32_t)(i % 2), 0);
        ks_event *r = ct_access(c, KS_EV_READ, i, 0, 0, i % 3);
        ks_event *s = ct_access(c, KS_EV_WRITE, i, 0, i / 2, i % 2);
        r->block = s->block = w->block;
        r->thread = s->thread = w->thread;
        s->u.access.value = c->data[1][i];
    }
    c->tr.sites[2].writes_per_element = 1;
}

START_TEST(small_crafted_trace_passes_check)
{
    static ct_trace c;
    static ks_trace tr;
    small_trace(&c);
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("ok.kst"), &tr), KS_OK);
    ks_check_report *rep = check(&tr);
    ck_assert_msg(rep->violations == 0, "%s", rep->first[0]);
    ck_assert(rep->complete);
    ks_trace_close(&tr);
}
END_TEST

/* Each header number beyond its bound, and tensor names that are not plain file names:
 * the reader names the problem and maps nothing. */
START_TEST(reader_refuses_header_numbers_out_of_bounds)
{
    static ct_trace c;
    static ks_trace tr;
    const int k = _i;
    const char *want[] = {"blocks",       "blocks",       "block_cap",   "bias",
                          "tensor shape", "tensor shape", "tensor name", "tensor name"};
    small_trace(&c);
    switch (k) {
    case 0: c.tr.blocks = 1LL << 53; break; /* the trace: iter * grid wrapped */
    case 1: c.tr.blocks = 1LL << 32; break; /* one past a u32 block id */
    case 2: c.tr.block_cap = 1LL << 40; break;
    case 3: c.tr.sites[0].fields[0].bias = 1LL << 40; break;
    }
    const char *p = tmp_path("bound.kst");
    ck_assert_int_eq(ks_trace_write(p, &c.tr), KS_OK);
    if (k == 6) ct_patch(p, "\"input\"", "\"../../escaped\""); /* export would write outside DIR */
    if (k == 7) ct_patch(p, "\"output\"", "\".hidden\"");
    if (k == 4 || k == 5) { /* input [1, 2, 3] f32, 24 bytes -> a shape whose bytes wrap to 0 */
        ct_patch(p, "[1, 2, 3]", k == 4 ? "[2147483648, 1073741824]" : "[2147483648, 2147483648]");
        if (k == 4) ct_patch(p, "\"f32\"", "\"i64\""); /* 2^61 * 8 = 2^64 */
        ct_patch(p, "\"length\":\t24,", "\"length\":\t0,");
    }
    ck_assert_int_ne(ks_trace_open(p, &tr), KS_OK);
    ck_assert_msg(strstr(ks_error_message(), want[k]), "case %d: %s", k, ks_error_message());
    ck_assert_ptr_null(tr.map);
}
END_TEST

/* blocks = 2^31 of 1024 threads: iter 2^23 * grid 2^41 = 2^64 wraps to 0 in int64
 * arithmetic, so an event at index 0 "followed" the loop. */
START_TEST(check_catches_a_grid_stride_product_that_wraps)
{
    static ct_trace c;
    static ks_trace tr;
    ct_init(&c, 1024, 1LL << 31, 1LL << 50);
    c.tr.nsites = 1; /* no tensors */
    c.tr.filter.index_hi = 1;
    ct_event(&c, KS_EV_WORK, 0, 0, 0, 0, 1u << 23);
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("wrap.kst"), &tr), KS_OK);
    ks_check_report *rep = check(&tr);
    ck_assert_uint_eq(rep->violations, 1);
    ck_assert_msg(any_violation(rep, "grid-stride"), "%s", rep->first[0]);
    ks_trace_close(&tr);
}
END_TEST

/* A filtered trace of 2^53 work items: 10 recorded. check used to want a 2^50-byte
 * bitmap; now it sorts the 10. Random indices with a fixed seed, one repeated. */
/* A kernel whose thread does 4 items in a row (issue 37) passes check once its params
 * declare "mapping": "per-thread:4" (as grid-stride it is 48 false alarms); "none" checks
 * no mapping; a planted index and an unknown mapping are still reported. */
START_TEST(check_holds_the_declared_mapping)
{
    static ct_trace c;
    static ks_trace tr;
    static const char *const maps[] = {"{\"mapping\": \"per-thread:4\"}", "{}", "{\"mapping\": \"none\"}",
                                       "{\"mapping\": \"per-thread:4\"}", "{\"mapping\": \"diagonal\"}"};
    for (int m = 0; m < 5; ++m) {
        ct_init(&c, 8, 2, 64);
        c.tr.nsites = 1; /* work events only */
        snprintf(c.tr.params, sizeof c.tr.params, "%s", maps[m]);
        for (uint32_t g = 0; g < 16; ++g)
            for (uint32_t it = 0; it < 4; ++it) ct_event(&c, KS_EV_WORK, 0, g * 4 + it, g / 8, g % 8, it);
        if (m == 3) c.ev[21].index = 23, c.ev[23].index = 21, c.ev[21].u.field[0] = 23, c.ev[23].u.field[0] = 21;
        ck_assert_msg(ct_roundtrip(&c, tmp_path("map.kst"), &tr) == KS_OK, "%s: %s", maps[m], ks_error_message());
        const ks_check_report *rep = check(&tr);
        if (m == 0 || m == 2) ck_assert_msg(rep->violations == 0, "%s: %s", maps[m], rep->first[0]);
        if (m == 1) ck_assert(rep->violations >= 48 && any_violation(rep, "grid-stride loop"));
        if (m == 3) ck_assert(rep->violations == 2 && any_violation(rep, "per-thread:4 mapping"));
        if (m == 4) ck_assert(any_violation(rep, "'diagonal' is not grid-stride, per-thread:N or none"));
        ks_trace_close(&tr);
    }
}
END_TEST

START_TEST(check_of_a_filtered_huge_launch_needs_memory_by_events)
{
    static ct_trace c;
    static ks_trace tr;
    uint64_t s = 1515;
    const int64_t huge = 1LL << 53, grid = 1LL << 20;
    ct_init(&c, 1024, 1024, huge);
    c.tr.nsites = 1; /* no tensors */
    c.tr.filter.every = 1000003;
    int64_t idx[10];
    for (int k = 0; k < 10; ++k) {
        idx[k] = k == 7 ? idx[3] : tu_int(&s, 0, INT32_MAX);
        ct_event(&c, KS_EV_WORK, 0, idx[k], (uint32_t)(idx[k] % grid / 1024), (uint32_t)(idx[k] % 1024),
                 (uint32_t)(idx[k] / grid));
    }
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("huge.kst"), &tr), KS_OK);
    ks_check_report *rep = check(&tr);
    ck_assert(!rep->complete);
    ck_assert_uint_eq(rep->by_kind[KS_EV_WORK], 10);
    ck_assert_uint_eq(rep->violations, 1);
    char dup[48]; /* the second record of idx[3] (event numbers follow the file: by item) */
    snprintf(dup, sizeof dup, "index %lld)", (long long)idx[3]);
    ck_assert_msg(strstr(rep->first[0], dup) && strstr(rep->first[0], "recorded twice"), "%s", rep->first[0]);
    ks_trace_close(&tr);
}
END_TEST

/* A digit with stride 2^53 and a field of 2^31 - 1: the recomposition overflows int64;
 * it is a violation, not undefined behaviour. */
START_TEST(check_reports_a_recomposition_that_overflows)
{
    static ct_trace c;
    static ks_trace tr;
    small_trace(&c);
    c.tr.sites[0].fields[0].stride = 1LL << 53;
    c.ev[0].u.field[0] = INT32_MAX;
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("field.kst"), &tr), KS_OK);
    ks_check_report *rep = check(&tr);
    ck_assert_msg(any_violation(rep, "overflows"), "%s", rep->first[0]);
    ks_trace_close(&tr);
}
END_TEST

static int sh(const char *fmt, const char *a, const char *b);

/* Round 3, N3: a derived formula that overflows 64 bits or divides INT64_MIN by -1 is a
 * violation, never SIGFPE; a formula nested past any stack is refused. */
START_TEST(formula_overflow_is_a_violation_not_a_signal)
{
    static ct_trace c;
    static ks_trace tr;
    static const char *const exprs[] = {"(0 - 9223372036854775807 - 1) / -1", "(0 - 9223372036854775807 - 1) % -1",
                                        "9223372036854775807 * 2", "-(0 - 9223372036854775807 - 1)",
                                        "9223372036854775807 + i + 1"};
    small_trace(&c);
    ks_field *d = &c.tr.sites[0].fields[1];
    c.tr.sites[0].nfields = 2;
    snprintf(d->name, sizeof d->name, "big");
    snprintf(d->expr, sizeof d->expr, "%s", exprs[_i]);
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("formula.kst"), &tr), KS_OK);
    ks_check_report *rep = check(&tr);
    ck_assert_msg(any_violation(rep, "overflows 64-bit"), "%s: %s", exprs[_i], rep->first[0]);
    ks_trace_close(&tr);
    static char deep[20000];
    memset(deep, '(', 9000), deep[9000] = '1', memset(deep + 9001, ')', 9000), deep[18001] = 0;
    int64_t v;
    ck_assert_int_eq(ks_formula_eval(deep, &c.tr.sites[0], &c.ev[0], &v), KS_EINVAL);
    memset(deep, '-', 18000), deep[18000] = '1', deep[18001] = 0;
    ck_assert_int_eq(ks_formula_eval(deep, &c.tr.sites[0], &c.ev[0], &v), KS_EINVAL);
}
END_TEST

/* N11: a read, write, sample or region site with tensor -1 is refused at open (memory,
 * the viewer and lessons would index tensors[-1]); N4: step and diff print an event whose
 * site or tensor id lies outside the header as such, never index with it. */
START_TEST(ids_outside_the_header_are_refused_or_named)
{
    static ct_trace c;
    static ks_trace tr;
    small_trace(&c);
    const char *p = tmp_path("minus.kst");
    c.tr.sites[1].tensor = -1;
    ck_assert_int_eq(ks_trace_write(p, &c.tr), KS_OK);
    ck_assert_int_ne(ks_trace_open(p, &tr), KS_OK);
    ck_assert_msg(strstr(ks_error_message(), "is -1 for a site that touches a tensor"), "%s", ks_error_message());
    small_trace(&c);
    const char *a = tmp_path("ids_a.kst"), *b = tmp_path("ids_b.kst");
    ck_assert_int_eq(ks_trace_write(a, &c.tr), KS_OK);
    c.ev[1].site = 60000, c.ev[2].tensor = 200;
    ck_assert_int_eq(ks_trace_write(b, &c.tr), KS_OK);
    ck_assert_int_eq(sh(KS_CLI " diff %s %s >/dev/null 2>&1", a, b), 1);
    ck_assert_int_eq(sh(KS_CLI " diff %s %s 2>&1 | grep -q 'not in the header'", a, b), 0);
    ck_assert_int_le(sh(KS_CLI " memory %s >/dev/null 2>&1 # %s", b, b), 2);
    /* a .cu trace with such an id against itself: equal (fuzz_diff's property) */
    snprintf(c.tr.variant, sizeof c.tr.variant, "cuda-c");
    const char *cu = tmp_path("ids_cu.kst");
    ck_assert_int_eq(ks_trace_write(cu, &c.tr), KS_OK);
    ck_assert_int_eq(sh(KS_CLI " diff %s %s >/dev/null 2>&1", cu, cu), 0);
}
END_TEST

/* N13: export --perfetto of an op and device with quotes, backslashes and newlines, and a
 * schedule whose clocks are the extremes of int64, is JSON cJSON reads. */
START_TEST(perfetto_export_is_valid_json_for_any_names_and_clocks)
{
    static ct_trace c;
    static int64_t sched[2][4] = {{0, 3, INT64_MIN, INT64_MAX}, {1, -1, INT64_MAX, INT64_MIN}};
    small_trace(&c);
    snprintf(c.tr.op, sizeof c.tr.op, "a\"b\\c\nd");
    snprintf(c.tr.device, sizeof c.tr.device, "dev\"ice\t\\");
    const int64_t shape[2] = {2, 4};
    ct_tensor(&c, 2, "schedule", KS_ROLE_OUTPUT, 2, shape);
    c.tr.tensors[2].dtype = KS_I64, c.tr.tensors[2].data = sched;
    const char *kst = tmp_path("sched.kst"), *json = tmp_path("sched.json");
    ck_assert_int_eq(ks_trace_write(kst, &c.tr), KS_OK);
    ck_assert_int_eq(sh(KS_CLI " export %s --perfetto %s >/dev/null 2>&1", kst, json), 0);
    char *text = tu_slurp(NULL, json);
    cJSON *doc = cJSON_Parse(text);
    ck_assert_msg(doc != NULL, "not JSON: %.300s", text);
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(doc, "otherData");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(other, "op")->valuestring, c.tr.op);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(other, "device")->valuestring, c.tr.device);
    cJSON_Delete(doc);
}
END_TEST

/* Found by fuzz_memory (issue 39): a read event whose site is the work site (tensor -1):
 * its memory request is counted in the event's own tensor, never tensors[-1] (make
 * test-asan reports the index). */
START_TEST(memory_request_of_an_access_at_a_site_without_tensor)
{
    static ct_trace c;
    static ks_trace tr;
    ks_mem_access acc[64];
    ks_mem_request req;
    small_trace(&c);
    ck_assert_int_eq(c.ev[1].kind, KS_EV_READ);
    c.ev[1].site = 0; /* the work site */
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("memsite.kst"), &tr), KS_OK);
    ck_assert_int_eq(ks_memory_request(&tr, &tr.events[1], 0, acc, 64, &req), 1);
    ck_assert_uint_eq(req.lanes, 1);
    ck_assert_uint_eq(req.sectors, 1);
    ks_trace_close(&tr);
}
END_TEST

/* Round 3, N12: export --npy writes DIR/<tensor>.npy and DIR/events.npy, so two tensors of
 * one name, or one named `events`, would silently lose a file: refused, nothing made. */
START_TEST(export_refuses_names_that_would_collide)
{
    static ct_trace c;
    static ks_trace tr;
    static const char *const second[] = {"input", "events"}, *const why[] = {"both named 'input'", "named 'events'"};
    small_trace(&c);
    snprintf(c.tr.tensors[1].name, KS_NAME_LEN, "%s", second[_i]);
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("names.kst"), &tr), KS_OK);
    const char *ex = tmp_path("names_ex");
    ck_assert_int_ne(ks_trace_export_npy(&tr, ex), KS_OK);
    ck_assert_msg(strstr(ks_error_message(), why[_i]), "%s", ks_error_message());
    ck_assert_int_ne(access(ex, F_OK), 0); /* not even the folder */
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "%s export %s --npy %s 2>&1 | grep -q \"%s\"", KS_CLI, tr.path, ex, why[_i]);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_ne(access(ex, F_OK), 0);
    ks_trace_close(&tr);
}
END_TEST

/* Two .cu traces fuzz_kst found: a warp event of lane 40 (a shift past the mask's word)
 * and a launch of 0 blocks (naming a thread divided by it); check and step take both. */
START_TEST(cu_traces_fuzz_found_are_checked_without_undefined_behaviour)
{
    static ks_trace tr;
    static const char *const files[] = {"check_cu_lane.kst", "check_cu_div0.kst"};
    char path[400];
    snprintf(path, sizeof path, "%s/tests/fuzz/regress/%s", KS_SOURCE_DIR, files[_i]);
    if (ks_trace_open(path, &tr) != KS_OK) return; /* refused at open is fine too */
    ks_check_report *rep = check(&tr);             /* KS_OK; under UBSan, no report */
    ck_assert_msg(rep->violations > 0, "%s: a crafted trace passes check", files[_i]);
    ks_trace_close(&tr);
    ck_assert_int_le(sh(KS_CLI " step %s --thread 0 >/dev/null 2>&1 # %s", path, path), 2);
}
END_TEST

/* NaN read from a NaN input and NaN stored into a NaN output: one violation each. */
START_TEST(check_reports_a_nan_value_once)
{
    static ct_trace c;
    static ks_trace tr;
    small_trace(&c);
    const int where = (int)(_i % 3);
    uint64_t reads = 0;
    c.data[0][where] = NAN; /* input[0, 0, where]: items i with i % 3 == where read it */
    for (int i = 0; i < 4; ++i)
        if (i % 3 == where) c.ev[i * 3 + 1].u.access.value = NAN, reads++;
    c.data[1][3] = NAN; /* output element 3 and its store */
    c.ev[3 * 3 + 2].u.access.value = NAN;
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("nan.kst"), &tr), KS_OK);
    ks_check_report *rep = check(&tr);
    ck_assert_uint_eq(rep->violations, reads + 1);
    for (uint64_t k = 0; k < rep->violations; ++k)
        ck_assert_msg(strstr(rep->first[k], "value is nan"), "%s", rep->first[k]);
    ks_trace_close(&tr);
}
END_TEST

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The docs call NaN, Inf and |c| >= 2^30 legal patchify coordinates: the raw-patch trace
 * passes check, its refused reads counted as padding inside the image. The bilinear
 * kernel's weights are NaN there (as DPVO's): check reports those values and nothing
 * else. */
START_TEST(patchify_traces_of_nan_coordinates_pass_check)
{
    const float bad[] = {NAN, INFINITY, -INFINITY, 1073741824.0f, -2e9f, 3.5f};
    uint64_t s = 77 + (uint64_t)_i;
    ks_tensor xy;
    memset(&xy, 0, sizeof xy);
    xy.dtype = KS_F32;
    xy.ndim = 3;
    xy.shape[0] = 1, xy.shape[1] = 3, xy.shape[2] = 2;
    ck_assert_int_eq(ks_tensor_alloc(&xy), KS_OK);
    float *v = xy.data;
    for (int k = 0; k < 6; ++k) v[k] = (float)tu_int(&s, 0, 5) + 0.25f;
    v[_i % 6] = bad[_i % 6]; /* x or y of one point */
    v[(_i + 3) % 6] = bad[(_i + 1) % 6];
    const char *npy = tmp_path("xy.npy"), *kst = tmp_path("p.kst");
    ck_assert_int_eq(ks_npy_write(npy, &xy), KS_OK);
    ks_tensor_free(&xy);
    const char *kernels[] = {"patches", "bilinear"};
    char run[512];
    snprintf(run, sizeof run, "%s run patchify --radius 1 --trace-kernel %s --quiet --in coords=%%s --trace %%s",
             KS_CLI, kernels[_i % 2]);
    ck_assert_int_eq(sh(run, npy, kst), 0);
    int rc = sh(KS_CLI " check %s >%s.out", kst, kst);
    if (_i % 2 == 0) {
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(sh("grep -q 'padding reads recorded at in-bounds' %s.out%s", kst, ""), 0);
    } else { /* every violation listed is a NaN */
        ck_assert_int_le(rc, 1);
        ck_assert_int_eq(sh("! grep '^  event' %s.out | grep -v ' is -*nan$'%s", kst, ""), 0);
    }
}
END_TEST

/* Tensors a (4 planes), b (1 plane), out (1 plane). Item 0 reads a at plane 3, item 1
 * reads b at plane 7 (outside b), item 2 reads a at plane -5: following the focus, the
 * input panel switches tensors and must never keep a plane its tensor does not have. */
static void bad_plane_trace(ct_trace *c)
{
    const int64_t a[3] = {4, 3, 3}, b[3] = {1, 3, 3}, o[3] = {1, 1, 3};
    ct_init(c, 4, 1, 3);
    ct_tensor(c, 0, "a", KS_ROLE_INPUT, 3, a);
    ct_tensor(c, 1, "out", KS_ROLE_OUTPUT, 3, o);
    ct_tensor(c, 2, "b", KS_ROLE_INPUT, 3, b);
    c->tr.nsites = 4;
    c->tr.sites[3] = c->tr.sites[1];
    c->tr.sites[3].tensor = 2;
    const int planes[3] = {3, 7, -5};
    for (int i = 0; i < 3; ++i) {
        ct_event(c, KS_EV_WORK, 0, i, 0, (uint32_t)i, 0);
        ks_event *r = ct_event(c, KS_EV_READ, i == 1 ? 3 : 1, i, 0, (uint32_t)i, 0);
        r->u.access.plane = planes[i];
        r->u.access.y = 2, r->u.access.x = 2;
        r->u.access.offset = (int64_t)planes[i] * 9 + 8;
        ct_access(c, KS_EV_WRITE, i, 0, 0, i);
    }
}

static void assert_panels_inside(const vw_state *st)
{
    for (int p = 0; p < 2; ++p) {
        int t = st->panel[p].tensor;
        ck_assert(t >= -1 && t < st->tr->ntensors);
        if (t < 0) continue;
        int64_t planes = st->tr->tensors[t].shape[0];
        ck_assert_msg(st->panel[p].plane >= 0 && st->panel[p].plane < planes, "panel %d shows %s plane %lld of %lld", p,
                      st->tr->tensors[t].name, (long long)st->panel[p].plane, (long long)planes);
    }
}

START_TEST(viewer_panels_never_keep_a_plane_outside_their_tensor)
{
    static ct_trace c;
    static ks_trace tr;
    static vw_index idx;
    static vw_state st;
    vw_layout L;
    bad_plane_trace(&c);
    ck_assert_int_eq(ct_roundtrip(&c, tmp_path("planes.kst"), &tr), KS_OK);
    ck_assert_int_eq(vw_index_build(&idx, &tr, NULL), KS_OK);
    ck_assert_uint_eq(idx.outside, 2); /* b at plane 7 and a at plane -5, counted when indexed */
    vw_layout_compute(&L, 1280, 800, 15);
    vw_state_init(&st, &tr, &idx);
    for (int order = 0; order < 3; ++order) {
        vw_set_order(&st, order == 0 ? "recorded" : order == 1 ? "thread" : "iter");
        for (uint32_t ev = 0; ev < tr.nevents; ++ev) {
            vw_focus_event(&st, ev);
            assert_panels_inside(&st);
        }
        /* the sequence: a at plane 3, then b: not b's plane 3 */
        vw_focus_event(&st, 1);
        ck_assert_int_eq(st.panel[0].tensor, 0);
        ck_assert_int_eq(st.panel[0].plane, 3);
        vw_focus_event(&st, 4);
        ck_assert_int_eq(st.panel[0].tensor, 2);
        ck_assert_int_eq(st.panel[0].plane, 0);
        assert_panels_inside(&st);
    }
    /* keys and a hover over the last row of a, then a tensor with one row less */
    const char *keys[] = {"]", "]", "Tab", "'", "Left", "End", "Home", "F", "Right", "Right"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
        vw_action a;
        ck_assert_int_eq(vw_key_action(keys[k], 0, &a), 0);
        vw_apply(&st, &L, &a);
        assert_panels_inside(&st);
    }
    st.hover = 1, st.hover_panel = 0, st.hover_y = 2, st.hover_x = 2;
    st.panel[0].tensor = 1; /* out: one row */
    vw_state_clamp(&st);
    ck_assert_int_eq(st.hover, 0);
    vw_state_free(&st);
    vw_index_free(&idx);
    ks_trace_close(&tr);
}
END_TEST

/* The release build crashed drawing this trace after a few keys. */
START_TEST(viewer_draws_a_trace_with_planes_outside_their_tensors)
{
    static ct_trace c;
    bad_plane_trace(&c);
    const char *kst = tmp_path("draw.kst"), *png = tmp_path("draw.png");
    ck_assert_int_eq(ks_trace_write(kst, &c.tr), KS_OK);
    int rc = sh(KS_CLI " view %s --keys Right,Right,Right,Right,],],Right,Right,M,Right,Left --png %s >/dev/null 2>&1",
                kst, png);
    if (rc == 2 && sh(KS_CLI " view %s --png %s 2>&1 | grep -q 'no viewer'", kst, png) == 0) return;
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(access(png, R_OK), 0);
}
END_TEST

/* Region events (boxes, bins, points) with NaN and huge corners: drawn as nothing, never
 * converted to pixels (a NaN y1 reached an int cast: UBSan's report under make test-asan). */
START_TEST(viewer_draws_regions_with_nan_and_huge_corners)
{
    static ct_trace c;
    const int64_t a[3] = {1, 3, 3}, o[3] = {1, 1, 3};
    ct_init(&c, 4, 1, 1);
    ct_tensor(&c, 0, "input", KS_ROLE_INPUT, 3, a);
    ct_tensor(&c, 1, "output", KS_ROLE_OUTPUT, 3, o);
    c.tr.nsites = 4;
    snprintf(c.tr.sites[3].name, KS_NAME_LEN, "c.region");
    c.tr.sites[3].kind = KS_EV_REGION;
    c.tr.sites[3].tensor = 0;
    ct_event(&c, KS_EV_WORK, 0, 0, 0, 0, 0);
    const float corners[4][4] = {{0, 0, NAN, 2}, {NAN, 0, 1, 1}, {0, 1e30f, 2, 2}, {0.5f, -INFINITY, 1, 1}};
    for (int k = 0; k < 4; ++k) {
        ks_event *e = ct_event(&c, KS_EV_REGION, 3, 0, 0, 0, 0);
        e->u.region.y0 = corners[k][0], e->u.region.x0 = corners[k][1];
        e->u.region.y1 = corners[k][2], e->u.region.x1 = corners[k][3];
        e->u.region.rows = e->u.region.cols = (uint16_t)(k % 2 ? 0 : 3); /* boxes and points */
    }
    ct_access(&c, KS_EV_READ, 0, 0, 1, 1);
    ct_access(&c, KS_EV_WRITE, 0, 0, 0, 0);
    const char *kst = tmp_path("regions.kst"), *png = tmp_path("regions.png");
    ck_assert_int_eq(ks_trace_write(kst, &c.tr), KS_OK);
    int rc = sh(KS_CLI " view %s --keys Right,Right,Right,Left --png %s >/dev/null 2>&1", kst, png);
    if (rc == 2 && sh(KS_CLI " view %s --png %s 2>&1 | grep -q 'no viewer'", kst, png) == 0) return;
    ck_assert_int_eq(rc, 0);
}
END_TEST

int main(void)
{
    const char *seeds = getenv("KS_CRAFTED_SEEDS");
    snprintf(g_dir, sizeof g_dir, "%s", seeds ? seeds : "/tmp/ks_crafted.XXXXXX");
    if (!seeds && !mkdtemp(g_dir)) return 1; /* before the forks: every test writes here */
    Suite *s = suite_create("crafted");
    TCase *tc = tcase_create("crafted");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, small_crafted_trace_passes_check);
    tcase_add_loop_test(tc, reader_refuses_header_numbers_out_of_bounds, 0, 8);
    tcase_add_test(tc, check_catches_a_grid_stride_product_that_wraps);
    tcase_add_test(tc, check_of_a_filtered_huge_launch_needs_memory_by_events);
    tcase_add_test(tc, check_holds_the_declared_mapping);
    tcase_add_test(tc, check_reports_a_recomposition_that_overflows);
    tcase_add_loop_test(tc, formula_overflow_is_a_violation_not_a_signal, 0, 5);
    tcase_add_test(tc, ids_outside_the_header_are_refused_or_named);
    tcase_add_test(tc, perfetto_export_is_valid_json_for_any_names_and_clocks);
    tcase_add_loop_test(tc, cu_traces_fuzz_found_are_checked_without_undefined_behaviour, 0, 2);
    tcase_add_test(tc, memory_request_of_an_access_at_a_site_without_tensor);
    tcase_add_loop_test(tc, export_refuses_names_that_would_collide, 0, 2);
    tcase_add_loop_test(tc, check_reports_a_nan_value_once, 0, 3);
    tcase_add_loop_test(tc, patchify_traces_of_nan_coordinates_pass_check, 0, 6);
    tcase_add_test(tc, viewer_panels_never_keep_a_plane_outside_their_tensor);
    tcase_add_test(tc, viewer_draws_a_trace_with_planes_outside_their_tensors);
    tcase_add_test(tc, viewer_draws_regions_with_nan_and_huge_corners);
    suite_add_tcase(s, tc);
    int rc = tu_run_suite(s, CK_FORK);
    {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
        if (!seeds && !getenv("KS_KEEP_TMP") && system(cmd) != 0) rc = 1; /* KS_KEEP_TMP=1 keeps them to look at */
    }
    return rc;
}
