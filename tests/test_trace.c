/* Probes, trace buffers, filters, the .kst round trip, export and `check`. */
#define KS_NO_DEPRECATED /* ks_user_write: the deprecated name still refuses a long op name */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_probe.h"
#include "../trace/check.h"
#include "../trace/export.h"
#include "../trace/formula.h"
#include "../trace/npy.h"
#include "../trace/ks_user.h"
#include "../trace/step.h"
#include "test_util.h"

static uint64_t violations(const ks_trace *tr)
{
    static ks_check_report rep;
    ck_assert_int_eq(ks_trace_check(tr, &rep), KS_OK);
    return rep.violations;
}

START_TEST(traces_of_random_geometries_pass_every_invariant)
{
    uint64_t s = 31;
    static ks_run r;
    static ks_trace tr;
    static ks_check_report rep;
    for (int k = 0; k < 60; ++k) {
        ks_im2col_params p = tu_geometry(&s);
        const char *name = k % 2 ? "col2im" : "im2col";
        const ks_op *op = tu_run_traced(&r, name, &p, ks_filter_all(), 0, (int)tu_int(&s, 1, 40),
                                        tu_int(&s, 0, 1) ? 2 : -1);
        ks_trace_from_run(op, &r, &tr);
        ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
        ck_assert_msg(rep.violations == 0, "%s: %s", name, rep.first[0]);
        ck_assert(rep.complete);
        ck_assert_uint_eq(rep.by_kind[KS_EV_WORK], (uint64_t)r.work_items);
        if (k % 2 == 0) /* im2col: every column element written once: kh*kw writes per item */
            ck_assert_uint_eq(rep.by_kind[KS_EV_WRITE], (uint64_t)r.work_items * p.kernel_h * p.kernel_w);
        tu_run_done(&r);
    }
}
END_TEST

/* `check` can fail: corrupt one field at a time and expect a violation */
START_TEST(check_catches_each_kind_of_corruption)
{
    static ks_run r;
    static ks_trace tr;
    ks_im2col_params p = {.batch = 1,
                          .channels = 2,
                          .height = 6,
                          .width = 5,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    const ks_op *op = tu_run_traced(&r, "im2col", &p, ks_filter_all(), 0, 16, 2);
    ks_trace_from_run(op, &r, &tr);
    ck_assert_uint_eq(violations(&tr), 0);
    ks_event *ev = r.sink->events;
    const uint64_t n = ks_sink_count(r.sink);
    ks_event keep;
    /* find a work event, an in-bounds read, a padding read and a write */
    int64_t work = -1, read = -1, pad = -1, write = -1;
    for (uint64_t i = 0; i < n; ++i) {
        if (ev[i].kind == KS_EV_WORK && work < 0) work = (int64_t)i;
        if (ev[i].kind == KS_EV_READ && !(ev[i].flags & KS_FLAG_PADDING) && read < 0) read = (int64_t)i;
        if (ev[i].kind == KS_EV_READ && (ev[i].flags & KS_FLAG_PADDING) && pad < 0) pad = (int64_t)i;
        if (ev[i].kind == KS_EV_WRITE && write < 0) write = (int64_t)i;
    }
    ck_assert(work >= 0 && read >= 0 && pad >= 0 && write >= 0);
#define MUTATE(idx, stmt)                                     \
    do {                                                      \
        keep = ev[idx];                                       \
        stmt;                                                 \
        ck_assert_msg(violations(&tr) > 0, "missed: " #stmt); \
        ev[idx] = keep;                                       \
    } while (0)
    MUTATE(work, ev[work].u.field[3] += 1);              /* w_col does not match the index */
    MUTATE(work, ev[work].index += 1);                   /* grid-stride relation broken */
    MUTATE(work, ev[work].site = 7);                     /* site not in the schema */
    MUTATE(work, ev[work].kind = KS_EV_READ);            /* kind disagrees with the site */
    MUTATE(read, ev[read].u.access.value += 1.0f);       /* read value differs from the input */
    MUTATE(read, ev[read].u.access.x += 1);              /* coordinates do not recompose */
    MUTATE(read, ev[read].u.access.offset = 1 << 20);    /* out of bounds */
    MUTATE(pad, ev[pad].u.access.offset = 0);            /* padding with an offset */
    MUTATE(pad, ev[pad].flags = 0);                      /* out-of-bounds read not marked */
    MUTATE(write, ev[write].u.access.value = NAN);       /* NaN */
    MUTATE(write, ev[write].u.access.value = -INFINITY); /* -Inf from an item that read data */
    MUTATE(write, ev[write].u.access.offset += 1);       /* element written twice, one never */
    MUTATE(write, ev[write].block = 1000);               /* thread outside the launch */
    ck_assert_uint_eq(violations(&tr), 0);
    tr.nevents = n - 1; /* the last write lost: an element written 0 times */
    ck_assert_uint_gt(violations(&tr), 0);
    static ks_check_report rep; /* a violation of no one event still says what it is */
    ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
    ck_assert_msg(strstr(rep.first[0], "written 0 times, expected 1") != NULL, "got '%s'", rep.first[0]);
    tu_run_done(&r);
}
END_TEST

/* A max over a window wholly in the padding is -inf (torch's max_pool2d gives it): the
 * store of -inf by a work item that read only padding is no violation; NaN still is. */
START_TEST(check_allows_minus_inf_from_an_empty_window_only)
{
    static ks_run r;
    static ks_trace tr;
    const ks_op *op = ks_op_find("maxpool2d");
    ks_run_init(&r, op);
    /* one input row, taps at rows -1 and 1: every window reads only padding */
    ck_assert_int_eq(ks_run_set(&r, "padding", "1,0"), KS_OK);
    ck_assert_int_eq(ks_run_set(&r, "dilation", "2"), KS_OK);
    ck_assert_int_eq(ks_run_set(&r, "input-size", "1,7"), KS_OK);
    ck_assert_ptr_nonnull(r.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_int_eq(ks_run_execute(&r), KS_OK);
    ck_assert(isinf(((const float *)r.tensor[ks_op_tensor(op, "output")].data)[0]));
    ks_trace_from_run(op, &r, &tr);
    ck_assert_uint_eq(violations(&tr), 0);
    ks_event *ev = r.sink->events;
    for (uint64_t i = 0; i < ks_sink_count(r.sink); ++i)
        if (ev[i].kind == KS_EV_WRITE && isinf(ev[i].u.access.value)) {
            ev[i].u.access.value = NAN;
            ck_assert_uint_gt(violations(&tr), 0);
            break;
        }
    tu_run_done(&r);
}
END_TEST

/* Bilinear samples are checked for sense (issue 37): weights in [0, 1], the products of
 * the fractional position, none where no corner is valid. Correct samples of deform_im2col
 * (random offsets: corners past the border, which keep their mmcv weight) and of RoIAlign
 * (clamped rows) pass; each planted defect is caught. */
START_TEST(check_finds_samples_that_make_no_sense)
{
    static const char *const runs[][3] = {{"deform_im2col", "offset-pattern", "random"}, {"roi_align", NULL, NULL}};
    for (int o = 0; o < 2; ++o) {
        static ks_run r;
        static ks_trace tr;
        const ks_op *op = ks_op_find(runs[o][0]);
        ks_run_init(&r, op);
        if (runs[o][1]) ck_assert_int_eq(ks_run_set(&r, runs[o][1], runs[o][2]), KS_OK);
        if (o == 0) ck_assert_int_eq(ks_run_set(&r, "offset-amount", "3"), KS_OK);
        r.seed = 11;
        ck_assert_ptr_nonnull(r.sink = ks_host_sink_create(0, ks_filter_all()));
        ck_assert_int_eq(ks_run_execute(&r), KS_OK);
        ks_trace_from_run(op, &r, &tr);
        ck_assert_uint_eq(violations(&tr), 0);
        ks_event *ev = r.sink->events, keep;
        int64_t some = -1, border = -1;
        const unsigned all = KS_FLAG_C00 | KS_FLAG_C01 | KS_FLAG_C10 | KS_FLAG_C11;
        for (uint64_t i = 0; i < ks_sink_count(r.sink); ++i) {
            if (ev[i].kind != KS_EV_SAMPLE) continue;
            const unsigned c = ev[i].flags & all;
            const float *w = ev[i].u.sample.w;
            if (c == all && w[0] > 0.05f && w[0] < 0.95f && w[3] > 0.0f && some < 0) some = (int64_t)i;
            for (int k = 0; k < 4 && o == 0; ++k)
                if (c && !(c & (KS_FLAG_C00 << k)) && w[k] > 0.0f) border = (int64_t)i;
        }
        ck_assert_msg(some >= 0, "%s: no sample strictly inside", runs[o][0]);
        if (o == 0) ck_assert_msg(border >= 0, "deform: no sample with a weighted corner past the border");
        MUTATE(some, ev[some].u.sample.w[0] = 1.435f);                                    /* a weight above 1 */
        MUTATE(some, ev[some].u.sample.w[3] = -0.247f);                                   /* below 0 */
        MUTATE(some, ev[some].flags &= (uint8_t)~all);                                    /* weight, no valid corner */
        MUTATE(some, ev[some].u.sample.y += 0.3f);                                        /* the position moved */
        MUTATE(some, (ev[some].u.sample.w[0] += 0.01f, ev[some].u.sample.w[1] -= 0.01f)); /* sum 1, wrong split */
        ck_assert_uint_eq(violations(&tr), 0);
        tu_run_done(&r);
    }
}
END_TEST

/* step never prints a false equation (issue 37): a recorded field its formula or the
 * index does not give, coordinates that are not the offset, an access outside its tensor
 * are each marked on their line; a correct item has no mark. */
static char *step_text(const ks_trace *tr, int64_t index)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(ks_step_print(f, tr, -1, index), 1);
    fclose(f);
    return buf;
}

START_TEST(step_marks_what_does_not_hold)
{
    static ks_run r;
    static ks_trace tr;
    const ks_im2col_params p = {.batch = 1,
                                .channels = 2,
                                .height = 5,
                                .width = 7,
                                .kernel_h = 3,
                                .kernel_w = 3,
                                .pad_h = 1,
                                .pad_w = 1,
                                .stride_h = 2,
                                .stride_w = 1,
                                .dilation_h = 1,
                                .dilation_w = 1};
    const ks_op *op = tu_run_traced(&r, "col2im", &p, ks_filter_all(), 0, 16, 2);
    ks_trace_from_run(op, &r, &tr);
    ks_event *ev = r.sink->events;
    const int64_t item = 23;
    char *clean = step_text(&tr, item);
    ck_assert_msg(!strstr(clean, "gives") && !strstr(clean, "BUT") && !strstr(clean, "OUTSIDE"), "%s", clean);
    free(clean);
    const ks_site *site = &tr.sites[0];
    int derived = -1, digit = -1;
    for (int f = 0; f < site->nfields; ++f) {
        if (!site->fields[f].digit && derived < 0) derived = f;
        if (site->fields[f].digit && digit < 0) digit = f;
    }
    ck_assert(derived >= 0 && digit >= 0);
    int64_t work = -1, access = -1;
    for (uint64_t i = 0; i < ks_sink_count(r.sink); ++i) {
        if (ev[i].index != item) continue;
        if (ev[i].kind == KS_EV_WORK) work = (int64_t)i;
        else if (ev[i].kind == KS_EV_READ && access < 0) access = (int64_t)i;
    }
    ck_assert(work >= 0 && access >= 0);
    ev[work].u.field[derived] += 3;
    ev[work].u.field[digit] += 1;
    char *text = step_text(&tr, item);
    char want[96];
    snprintf(want, sizeof want, "(recorded %d, but the formula gives %d)", ev[work].u.field[derived],
             ev[work].u.field[derived] - 3);
    ck_assert_msg(strstr(text, want), "no '%s' in\n%s", want, text);
    snprintf(want, sizeof want, "(recorded %d, but the index gives %d)", ev[work].u.field[digit],
             ev[work].u.field[digit] - 1);
    ck_assert_msg(strstr(text, want), "no '%s' in\n%s", want, text);
    free(text);
    ev[access].u.access.x ^= 1; /* shown at a neighbour of its offset */
    text = step_text(&tr, item);
    ck_assert_msg(strstr(text, "BUT its (plane, y, x) is not this offset"), "%s", text);
    free(text);
    ev[access].u.access.offset = 1 << 20;
    text = step_text(&tr, item);
    ck_assert_msg(strstr(text, "OUTSIDE columns ("), "%s", text);
    free(text);
    tu_run_done(&r);
}
END_TEST

/* Formulas may name the index and the trace's integer parameters; floats stay unnamed. */
START_TEST(formulas_name_parameters)
{
    ks_site s;
    memset(&s, 0, sizeof s);
    s.kind = KS_EV_WORK, s.nfields = 2;
    snprintf(s.fields[0].name, sizeof s.fields[0].name, "oy");
    snprintf(s.fields[1].name, sizeof s.fields[1].name, "H");
    ks_event e;
    memset(&e, 0, sizeof e);
    e.kind = KS_EV_WORK, e.index = 40, e.u.field[0] = 3, e.u.field[1] = 5;
    ks_formula_params p;
    ks_formula_params_from("{\"OH\": 7, \"H\": 99, \"scale\": 0.5, \"mask\": true, \"output_size\": [2, 3]}",
                           "PH=output_size[0] PW=output_size[1]", &p);
    int64_t v;
    ck_assert_int_eq(ks_formula_eval_with("oy * OH + index % 7 + mask + PH * PW", &s, &e, &p, &v), KS_OK);
    ck_assert_int_eq(v, 3 * 7 + 40 % 7 + 1 + 6);
    ck_assert_int_eq(ks_formula_eval_with("H", &s, &e, &p, &v), KS_OK); /* the field wins */
    ck_assert_int_eq(v, 5);
    ck_assert_int_eq(ks_formula_eval_with("oy * scale", &s, &e, &p, &v), KS_ENOENT); /* a float value */
    ck_assert_int_eq(ks_formula_eval("oy * OH", &s, &e, &v), KS_ENOENT);             /* no parameters given */
    /* typed: floats in f32 with one rounding per operation, as the kernel's float code */
    ks_formula_value t;
    ck_assert_int_eq(ks_formula_eval_value("(int)((oy + 0.5) * 13 / 11 - 0.5)", &s, &e, &p, &t), KS_OK);
    volatile float o = 3.0f;
    ck_assert(!t.is_float && t.i == (int64_t)((o + 0.5f) * 13 / 11 - 0.5f));
    ck_assert_int_eq(ks_formula_eval_value("oy * scale + 0.1f", &s, &e, &p, &t), KS_OK);
    ck_assert(t.is_float && t.f == o * 0.5f + 0.1f);
    ck_assert_int_eq(ks_formula_eval_value("floor(oy / 2.0) + ceil(0.25) + max(oy, 2.5) + min(H, 1)", &s, &e, &p, &t),
                     KS_OK);
    ck_assert(t.is_float && t.f == 1.0f + 1.0f + 3.0f + 1.0f);
    ck_assert_int_eq(ks_formula_eval_value("oy / 2 + oy > 2.5", &s, &e, &p, &t), KS_OK); /* 1 + 3 > 2.5 */
    ck_assert(!t.is_float && t.i == 1);
    ck_assert_int_eq(ks_formula_eval_value("oy % 1.5", &s, &e, &p, &t), KS_EINVAL);        /* not C */
    ck_assert_int_eq(ks_formula_eval_value("(int)(oy / 0.0)", &s, &e, &p, &t), KS_ECHECK); /* (int) of Inf */
    ck_assert_int_eq(ks_formula_eval_value("sqrtf(oy)", &s, &e, &p, &t), KS_ENOENT);
    ck_assert_int_eq(ks_formula_eval_value("rois[oy, 0]", &s, &e, &p, &t), KS_ENOENT);
}
END_TEST

START_TEST(filter_keeps_exactly_the_selected_work_items)
{
    static ks_run r;
    static ks_trace tr;
    ks_im2col_params p = {.batch = 1,
                          .channels = 3,
                          .height = 7,
                          .width = 9,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1}; /* 189 work items */
    ks_filter f = ks_filter_all();
    f.index_lo = 10, f.index_hi = 100, f.every = 7;
    const ks_op *op = tu_run_traced(&r, "im2col", &p, f, 0, 32, 2);
    const uint64_t n = ks_sink_count(r.sink);
    int64_t works = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const ks_event *e = &r.sink->events[i];
        ck_assert(e->index >= 10 && e->index < 100 && (e->index - 10) % 7 == 0);
        works += e->kind == KS_EV_WORK;
    }
    ck_assert_int_eq(works, 13); /* 10, 17, ..., 94 */
    ck_assert_uint_eq(n, 13 * (1 + 2 * 9));
    ks_trace_from_run(op, &r, &tr);
    ck_assert_uint_eq(violations(&tr), 0); /* partial traces are checked too */
    tu_run_done(&r);
    /* a block filter: only block 1 of 32-thread blocks */
    f = ks_filter_all();
    f.block_lo = 1, f.block_hi = 2;
    tu_run_traced(&r, "col2im", &p, f, 0, 32, -1);
    for (uint64_t i = 0; i < ks_sink_count(r.sink); ++i) ck_assert_uint_eq(r.sink->events[i].block, 1);
    ck_assert_uint_gt(ks_sink_count(r.sink), 0);
    tu_run_done(&r);
    /* an empty range records nothing */
    f = ks_filter_all();
    f.index_lo = 0, f.index_hi = 0;
    tu_run_traced(&r, "im2col", &p, f, 0, 0, 0);
    ck_assert_uint_eq(ks_sink_count(r.sink), 0);
    tu_run_done(&r);
}
END_TEST

START_TEST(full_buffer_counts_dropped_events_without_overflow)
{
    static ks_run r;
    ks_im2col_params p = {.batch = 2,
                          .channels = 3,
                          .height = 9,
                          .width = 9,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    tu_run_traced(&r, "im2col", &p, ks_filter_all(), 1000, 0, 0);
    const uint64_t total = (uint64_t)r.work_items * (1 + 2 * 9);
    ck_assert_uint_eq(ks_sink_count(r.sink), 1000);
    ck_assert_uint_eq(ks_sink_dropped(r.sink), total - 1000);
    ck_assert_uint_le(r.sink->capacity, 1000);
    tu_run_done(&r);
}
END_TEST

/* A record as docs/trace-format.md lays it out, byte by byte (little-endian). */
static void put(uint8_t *b, int off, uint64_t v, int n)
{
    for (int k = 0; k < n; ++k) b[off + k] = (uint8_t)(v >> (8 * k));
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void head(uint8_t *b, int kind, int flags, int site, int tensor, int tap, uint32_t seq, int64_t index)
{
    memset(b, 0, 64);
    put(b, 0, (uint64_t)kind, 1), put(b, 1, (uint64_t)flags, 1), put(b, 2, (uint64_t)site, 2);
    put(b, 4, (uint64_t)tensor, 1), put(b, 6, (uint64_t)tap, 2);
    put(b, 8, 70001, 4), put(b, 12, 513, 4), put(b, 16, 3, 4), put(b, 20, seq, 4);
    put(b, 24, (uint64_t)index, 8);
}

/* Every probe writes the documented bytes (values past 32 bits truncate, negative offsets,
 * the widest site and tap), and the GPU's header words (ks_event_word0/1) are those bytes. */
START_TEST(probes_write_the_documented_bytes)
{
    ks_sink *s = ks_host_sink_create(0, ks_filter_all());
    ck_assert_ptr_nonnull(s);
    ks_thread t;
    memset(&t, 0, sizeof t);
    t.sink = s;
    t.block_idx.x = 70001, t.thread_idx.x = 513;
    const int64_t index = 0x123456789ll;
    ck_assert(ks_probe_start(&t, index, 3));
    ks_probe_fields(&t, 2, -5, (1ll << 32) + 9, 7, 0, 1, 2, 3, -2147483648ll);
    ks_probe_read(&t, 4, 1, 8, -1, 7, -2, 40, 0.0f);
    ks_probe_write(&t, 65535, 2, 65535, 0x1234567890ll, 3, 11, 12, -1.5f, 1);
    ks_probe_sample(&t, 6, 0, 17, 9, 2.25f, -0.5f, 0.125f, 0.25f, 0.375f, 0.25f, 7.0f,
                    KS_FLAG_C00 | KS_FLAG_C11 | KS_FLAG_CLAMP_X);
    ks_probe_box(&t, 7, 3, 4, 1.5f, 2.0f, 3.0f, 4.5f, 7, 300, 1);
    ks_probe_point(&t, 8, 3, 6, 5, 10, -3);
    ck_assert_uint_eq(ks_sink_count(s), 6);

    uint8_t want[6][64];
    head(want[0], KS_EV_WORK, 0, 2, 255, 0, 0, index);
    const int64_t f[8] = {-5, 9, 7, 0, 1, 2, 3, -2147483648ll};
    for (int k = 0; k < 8; ++k) put(want[0], 32 + 4 * k, (uint64_t)f[k], 4);
    head(want[1], KS_EV_READ, KS_FLAG_PADDING, 4, 1, 8, 1, index);
    put(want[1], 32, (uint64_t)-1ll, 8), put(want[1], 40, 7, 4), put(want[1], 44, (uint64_t)-2ll, 4);
    put(want[1], 48, 40, 4);
    head(want[2], KS_EV_WRITE, KS_FLAG_ATOMIC, 65535, 2, 65535, 2, index);
    put(want[2], 32, 0x1234567890ull, 8), put(want[2], 40, 3, 4), put(want[2], 44, 11, 4);
    put(want[2], 48, 12, 4), put(want[2], 52, bits(-1.5f), 4);
    head(want[3], KS_EV_SAMPLE, KS_FLAG_C00 | KS_FLAG_C11 | KS_FLAG_CLAMP_X, 6, 0, 17, 3, index);
    const float sv[7] = {2.25f, -0.5f, 0.125f, 0.25f, 0.375f, 0.25f, 7.0f};
    put(want[3], 32, 9, 4);
    for (int k = 0; k < 7; ++k) put(want[3], 36 + 4 * k, bits(sv[k]), 4);
    head(want[4], KS_EV_REGION, KS_FLAG_GUIDE, 7, 3, 0, 4, index);
    put(want[4], 32, 4, 4), put(want[4], 36, bits(1.5f), 4), put(want[4], 40, bits(2.0f), 4);
    put(want[4], 44, bits(3.0f), 4), put(want[4], 48, bits(4.5f), 4), put(want[4], 52, 7, 2);
    put(want[4], 54, 300, 2);
    head(want[5], KS_EV_REGION, 0, 8, 3, 6, 5, index);
    put(want[5], 32, 5, 4), put(want[5], 36, bits(10.0f), 4), put(want[5], 40, bits(-3.0f), 4);
    put(want[5], 44, bits(10.0f), 4), put(want[5], 48, bits(-3.0f), 4);

    for (int k = 0; k < 6; ++k) {
        const uint8_t *got = (const uint8_t *)&s->events[k];
        for (int b = 0; b < 64; ++b)
            ck_assert_msg(got[b] == want[k][b], "event %d byte %d: %u, documented %u", k, b, got[b], want[k][b]);
        const ks_event *e = &s->events[k];
        uint32_t w[2];
        memcpy(w, got, sizeof w);
        ck_assert_uint_eq(w[0], ks_event_word0(e->kind, e->flags, e->site));
        ck_assert_uint_eq(w[1], ks_event_word1(e->tensor, e->tap));
    }
    ks_host_sink_free(s);
}
END_TEST

START_TEST(kst_round_trip_preserves_everything)
{
    static ks_run r;
    static ks_trace tr, back;
    char path[] = "/tmp/ks_rt_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ks_im2col_params p = {.batch = 2,
                          .channels = 3,
                          .height = 5,
                          .width = 7,
                          .kernel_h = 2,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 0,
                          .stride_h = 2,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 2};
    ks_filter f = ks_filter_all();
    f.every = 2;
    const ks_op *op = tu_run_traced(&r, "col2im", &p, f, 0, 8, 3);
    ks_trace_from_run(op, &r, &tr);
    ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
    ck_assert_int_eq(ks_trace_open(path, &back), KS_OK);
    ck_assert_int_eq(ks_trace_verify(&back), KS_OK);
    ck_assert_str_eq(back.op, "col2im");
    ck_assert_str_eq(back.device, "sim");
    ck_assert_int_eq(back.threads, 8);
    ck_assert_int_eq(back.blocks, 3);
    ck_assert_int_eq(back.work_items, r.work_items);
    ck_assert_int_eq(back.filter.every, 2);
    ck_assert_int_eq(back.filter.index_hi, INT64_MAX);
    ck_assert_int_eq(back.nsites, 3);
    ck_assert_mem_eq(back.sites, tr.sites, sizeof(ks_site) * 3);
    ck_assert_int_eq(back.ntensors, 2);
    for (int i = 0; i < 2; ++i) {
        ck_assert_str_eq(back.tensors[i].name, tr.tensors[i].name);
        ck_assert_int_eq(back.tensors[i].ndim, tr.tensors[i].ndim);
        ck_assert_mem_eq(back.tensors[i].shape, tr.tensors[i].shape, sizeof(int64_t) * (size_t)tr.tensors[i].ndim);
        ck_assert_mem_eq(back.tensors[i].data, tr.tensors[i].data, (size_t)ks_tensor_numel(&tr.tensors[i]) * 4);
        ck_assert_int_eq(back.roles[i], tr.roles[i]);
    }
    ck_assert_uint_eq(back.nevents, tr.nevents);
    ks_event *want = tu_item_order(tr.events, tr.nevents); /* version 2 stores them by item */
    ck_assert_mem_eq(back.events, want, tr.nevents * sizeof(ks_event));
    free(want);
    ck_assert_uint_eq(violations(&back), 0);
    ks_trace_close(&back);
    unlink(path);
    tu_run_done(&r);
}
END_TEST

START_TEST(export_writes_npy_files_that_read_back)
{
    static ks_run r;
    static ks_trace tr, back;
    char dir[] = "/tmp/ks_ex_XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.kst", dir);
    ks_im2col_params p = {.batch = 1,
                          .channels = 2,
                          .height = 4,
                          .width = 5,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1};
    const ks_op *op = tu_run_traced(&r, "im2col", &p, ks_filter_all(), 0, 0, 0);
    ks_trace_from_run(op, &r, &tr);
    ck_assert_int_eq(ks_trace_write(path, &tr), KS_OK);
    ck_assert_int_eq(ks_trace_open(path, &back), KS_OK);
    snprintf(path, sizeof path, "%s/out", dir);
    ck_assert_int_eq(ks_trace_export_npy(&back, path), KS_OK);
    ks_tensor t;
    snprintf(path, sizeof path, "%s/out/input.npy", dir);
    ck_assert_int_eq(ks_npy_read(path, &t), KS_OK);
    ck_assert_int_eq(t.ndim, 4);
    ck_assert_mem_eq(t.data, r.tensor[0].data, 40 * 4);
    ks_tensor_free(&t);
    /* events.npy: header + 115-byte rows; row 1 is the first read: check its offset field */
    snprintf(path, sizeof path, "%s/out/events.npy", dir);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char head[10];
    ck_assert_int_eq(fread(head, 1, 10, f), 10);
    long hlen = head[8] | head[9] << 8;
    fseek(f, 0, SEEK_END);
    ck_assert_int_eq(ftell(f), 10 + hlen + (long)back.nevents * KS_EVENTS_ROW);
    unsigned char row[KS_EVENTS_ROW];
    fseek(f, 10 + hlen + KS_EVENTS_ROW, SEEK_SET);
    ck_assert_int_eq(fread(row, 1, KS_EVENTS_ROW, f), KS_EVENTS_ROW);
    fclose(f);
    int64_t offset;
    memcpy(&offset, row + 31, 8);
    ck_assert_int_eq(row[0], back.events[1].kind);
    ck_assert_int_eq(offset, back.events[1].u.access.offset);
    snprintf(path, sizeof path, "%s/out/header.json", dir);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_gt(st.st_size, 100);
    ks_trace_close(&back);
    tu_run_done(&r);
}
END_TEST

/* numpy's itemsize of the events dtype, computed from the descr text itself (sum of the
 * field sizes, times their sub-array counts), must equal the bytes export writes per row */
START_TEST(events_descr_itemsize_matches_the_row_export_writes)
{
    /* each field is ('name', 'T<digit>') or ('name', 'T<digit>', (count,)) */
    int64_t total = 0;
    int fields = 0;
    for (const char *p = strstr(KS_EVENTS_DESCR, "('"); p; p = strstr(p, "('")) {
        const char *name_end = strchr(p + 2, '\'');
        const char *type = strchr(name_end + 1, '\'') + 1;
        const char *type_end = strchr(type, '\'');
        int64_t size = type_end[-1] - '0';
        if (!strncmp(type_end, "', (", 4)) size *= atoi(type_end + 4);
        total += size;
        fields++;
        p = type_end;
    }
    ck_assert_int_eq(fields, 19);
    ck_assert_int_eq(total, KS_EVENTS_ROW);
}
END_TEST

/* A derived field's conditional formula is worked out with the branch taken only: col2im's
 * h_col_start for h_im below and at the window extent, on random geometries, against the
 * definition computed here. */
START_TEST(step_works_out_only_the_branch_taken)
{
    static ks_run r;
    static ks_trace tr;
    uint64_t seed = 77;
    for (int g = 0; g < 6; ++g) {
        ks_im2col_params p = tu_geometry(&seed);
        const ks_op *op = tu_run_traced(&r, "col2im", &p, ks_filter_all(), 0, 0, 0);
        ks_trace_from_run(op, &r, &tr);
        const long long ext = p.dilation_h * (p.kernel_h - 1) + 1;
        for (uint64_t i = 0; i < tr.nevents; ++i) {
            const ks_event *e = &tr.events[i];
            if (e->kind != KS_EV_WORK) continue;
            char buf[256], want[256];
            const long long h_im = e->u.field[2];
            ks_expr_worked(&tr.sites[e->site], e, tr.sites[e->site].fields[4].expr, buf, sizeof buf);
            if (h_im < ext) snprintf(want, sizeof want, "%lld < %lld, so 0", h_im, ext);
            else
                snprintf(want, sizeof want, "%lld < %lld is false, so (%lld - %lld) / %lld + 1", h_im, ext, h_im, ext,
                         (long long)p.stride_h);
            ck_assert_str_eq(buf, want);
        }
        tu_run_done(&r);
    }
}
END_TEST

START_TEST(npy_round_trip_all_dtypes)
{
    char path[] = "/tmp/ks_npy_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    const ks_dtype types[] = {KS_F32, KS_I32, KS_I64};
    for (int k = 0; k < 3; ++k) {
        ks_tensor t = {.dtype = types[k], .ndim = 3, .shape = {3, 1, 5}}, back;
        ck_assert_int_eq(ks_tensor_alloc(&t), KS_OK);
        for (int i = 0; i < 15; ++i) {
            if (t.dtype == KS_F32) ((float *)t.data)[i] = (float)i * 0.5f - 3.0f;
            else if (t.dtype == KS_I32) ((int32_t *)t.data)[i] = i * 1000 - 7;
            else ((int64_t *)t.data)[i] = (int64_t)i << 40;
        }
        ck_assert_int_eq(ks_npy_write(path, &t), KS_OK);
        ck_assert_int_eq(ks_npy_read(path, &back), KS_OK);
        ck_assert_int_eq(back.dtype, t.dtype);
        ck_assert_int_eq(back.ndim, 3);
        ck_assert_int_eq(back.shape[2], 5);
        ck_assert_mem_eq(back.data, t.data, 15 * ks_dtype_size(t.dtype));
        ks_tensor_free(&t);
        ks_tensor_free(&back);
    }
    unlink(path);
}
END_TEST

/* ks_filter_first_pass (how a launcher picks its traced kernel, ks_cuda.h) against
 * counting a first pass's items one by one with the probes' own ks_filter_pass, on random
 * grids and filters: block and index ranges inside, across and outside the grid, every. */
START_TEST(first_pass_counts_the_items_a_filter_keeps)
{
    uint64_t s = 4242;
    for (int k = 0; k < 4000; ++k) {
        const int64_t blocks = tu_int(&s, 1, 37), T = tu_int(&s, 1, 67), n = blocks * T;
        ks_filter f = ks_filter_all();
        if (tu_int(&s, 0, 1)) f.block_lo = tu_int(&s, -3, blocks + 2), f.block_hi = tu_int(&s, -3, blocks + 4);
        if (tu_int(&s, 0, 1)) f.index_lo = tu_int(&s, -40, n + 9), f.index_hi = tu_int(&s, -40, n + 40);
        if (tu_int(&s, 0, 2) == 0) f.index_hi = INT64_MAX;
        if (tu_int(&s, 0, 1)) f.every = tu_int(&s, 0, 11);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; ++i) kept += ks_filter_pass(&f, i, i / T);
        ck_assert_msg(ks_filter_first_pass(&f, (double)blocks, (double)T) == (double)kept,
                      "blocks %lld x %lld, filter blocks [%lld, %lld) index [%lld, %lld) every %lld: %g, not %lld",
                      (long long)blocks, (long long)T, (long long)f.block_lo, (long long)f.block_hi,
                      (long long)f.index_lo, (long long)f.index_hi, (long long)f.every,
                      ks_filter_first_pass(&f, (double)blocks, (double)T), (long long)kept);
    }
    /* a 3-D grid of more than 2^63 threads, kept whole, and one block of it */
    const double huge = 65535.0 * 65535.0 * 2147483647.0;
    ks_filter all = ks_filter_all(), one = ks_filter_all();
    one.block_lo = 7, one.block_hi = 8;
    ck_assert(ks_filter_first_pass(&all, huge, 1024) > 9e18);
    ck_assert(ks_filter_first_pass(&one, huge, 1024) == 1024);
}
END_TEST

/* An SDK trace's op name longer than a trace holds is refused when the descriptor is made,
 * naming the limit (no handle: every later call refuses); one that fits is kept whole (it
 * was cut silently before), as the trace read back through the public handle shows. */
START_TEST(user_trace_refuses_an_op_name_too_long)
{
    char name[KS_NAME_LEN + 8];
    memset(name, 'k', sizeof name - 1), name[sizeof name - 1] = 0;
    const ks_user_decl decl = {name, 1, 1, {"x"}, {"T_X"}, {"work"}, {"S_WORK"}};
    ks_user_trace *d = NULL;
    ck_assert_int_eq(ks_user_trace_create(&d, &decl, 4), KS_EINVAL);
    ck_assert_ptr_null(d);
    ck_assert_ptr_nonnull(strstr(ks_error_message(), "longer than 31 characters"));
    ck_assert_int_eq(ks_user_write(d, 32, 1, NULL, "sim", "never.kst"), KS_EINVAL);
    ck_assert_int_ne(access("never.kst", F_OK), 0);
    name[KS_NAME_LEN - 1] = 0; /* 31 characters: fits */
    ck_assert_int_eq(ks_user_trace_create(&d, &decl, 4), KS_OK);
    const int64_t shape[1] = {4};
    float x[4] = {1, 2, 3, 4};
    ck_assert_int_eq(ks_user_add_tensor(d, "x", KS_F32, 1, shape, x, 0), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, 0, NULL, KS_EV_WORK, -1, 0));
    ks_sink *sink = ks_host_sink_create(0, ks_user_trace_filter(d));
    char path[] = "/tmp/ks_long_XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(ks_user_write_launch(d, ks_dims(1, 1, 1), ks_dims(32, 1, 1), sink, "sim", path), KS_OK);
    ks_trace *tr = NULL;
    ck_assert_int_eq(ks_trace_load(path, &tr), KS_OK);
    ck_assert_str_eq(ks_trace_op(tr), name);
    ks_trace_destroy(tr);
    ks_host_sink_free(sink);
    ks_user_trace_destroy(d);
    unlink(path);
}
END_TEST

/* a 2-D body for the public trace handle: out[y][x] = in[y][x] + 1 */
typedef struct pub_args {
    int64_t X, Y;
    const float *in;
    float *out;
} pub_args;

static void pub_traced(ks_thread *t, const void *p)
{
    const pub_args *a = p;
    const int64_t x = (int64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
    const int64_t y = (int64_t)t->block_idx.y * t->block_dim.y + t->thread_idx.y;
    if (x >= a->X || y >= a->Y) return;
    const int64_t i = y * a->X + x;
    ks_probe_work(t, 0, i, 0, y, x, 0, 0, 0, 0, 0, 0);
    ks_probe_read(t, 1, 0, 0, i, 0, y, x, a->in[i]);
    a->out[i] = a->in[i] + 1;
    ks_probe_write(t, 2, 1, 0, i, 0, y, x, a->out[i], 0);
}

#define PUB_TENSORS(X) X(PUB_T_IN, "in") X(PUB_T_OUT, "out")
#define PUB_SITES(X) X(PUB_SITE_WORK, "pub.work") X(PUB_SITE_READ, "pub.read") X(PUB_SITE_WRITE, "pub.write")
KS_DECLARE(pub, PUB_TENSORS, PUB_SITES)

/* The SDK's trace handle (ks_trace.h) reads what the file holds: the launch (a 2-D one's
 * grid and block), sites, tensors and roles, the events (whole, or lazily by range), each
 * against the internal reader and the values the program wrote; a file that is not there
 * or not a trace gives its error and no handle. */
START_TEST(public_trace_handle_reads_what_the_file_holds)
{
    enum { X = 11, Y = 5 };
    uint64_t seed = 3707;
    float *in = tu_random(&seed, X * Y), out[X * Y];
    pub_args a = {X, Y, in, out};
    ks_user_trace *d = NULL;
    ck_assert_int_eq(ks_user_trace_create(&d, pub_decl(), X * Y), KS_OK);
    ck_assert_int_eq(ks_user_trace_set_params(d, "{\"work_shape\": [5, 11], \"note\": \"pub\"}"), KS_OK);
    const int64_t shape[2] = {Y, X};
    ck_assert_int_eq(ks_user_add_tensor(d, "out", KS_F32, 2, shape, out, 1), KS_OK);
    ck_assert_int_eq(ks_user_add_tensor(d, "in", KS_F32, 2, shape, in, 0), KS_OK);
    ks_site *w = ks_user_site(d, PUB_SITE_WORK, NULL, KS_EV_WORK, -1, 0);
    ck_assert_int_eq(ks_user_field_digit(w, "y", X, Y), KS_OK);
    ck_assert_int_eq(ks_user_field_digit(w, "x", 1, X), KS_OK);
    ck_assert_ptr_nonnull(ks_user_site(d, PUB_SITE_READ, NULL, KS_EV_READ, PUB_T_IN, 0));
    ck_assert_ptr_nonnull(ks_user_site(d, PUB_SITE_WRITE, NULL, KS_EV_WRITE, PUB_T_OUT, 1));
    char path[] = "/tmp/ks_pub_XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(ks_user_launch_sim(d, pub_traced, &a, ks_dims(3, 2, 1), ks_dims(4, 3, 1), path) == KS_OK, "%s",
                  ks_error_message());
    ks_user_trace_destroy(d);
    ks_trace *tr = NULL;
    ck_assert_msg(ks_trace_load(path, &tr) == KS_OK, "%s", ks_error_message());
    ck_assert_int_eq(ks_trace_verify(tr), KS_OK);
    ck_assert_str_eq(ks_trace_op(tr), "pub");
    ck_assert_str_eq(ks_trace_device(tr), "sim");
    ck_assert_str_eq(ks_trace_variant(tr), "traced");
    ck_assert_ptr_nonnull(strstr(ks_trace_params(tr), "\"note\":\"pub\""));
    ck_assert_int_eq(ks_trace_work_items(tr), X * Y);
    ks_dim3 g, b;
    ks_trace_launch(tr, &g, &b);
    ck_assert(g.x == 3 && g.y == 2 && g.z == 1 && b.x == 4 && b.y == 3 && b.z == 1);
    ck_assert_int_eq(ks_trace_site_count(tr), 3);
    ck_assert_str_eq(ks_trace_site(tr, PUB_SITE_READ)->name, "pub.read");
    ck_assert_int_eq(ks_trace_site(tr, PUB_SITE_WORK)->nfields, 2);
    ck_assert_ptr_null(ks_trace_site(tr, 3));
    ck_assert_ptr_null(ks_trace_site(tr, -1));
    ck_assert_int_eq(ks_trace_tensor_count(tr), 2);
    ck_assert_str_eq(ks_trace_tensor_at(tr, PUB_T_OUT)->name, "out");
    ck_assert_int_eq(ks_trace_tensor_role(tr, PUB_T_OUT), KS_ROLE_OUTPUT);
    ck_assert_int_eq(ks_trace_tensor_role(tr, PUB_T_IN), KS_ROLE_INPUT);
    ck_assert_int_eq(ks_trace_tensor_role(tr, 2), -1);
    ck_assert_ptr_null(ks_trace_tensor_at(tr, 2));
    ck_assert_int_eq(ks_trace_tensor(tr, "in"), PUB_T_IN);
    const float *stored = ks_trace_tensor_at(tr, PUB_T_OUT)->data;
    for (int i = 0; i < X * Y; ++i) ck_assert_float_eq(stored[i], in[i] + 1.0f);
    /* 3 events an item; each fits, each work event's fields are its (y, x) */
    ck_assert_uint_eq(ks_trace_event_count(tr), 3 * X * Y);
    ck_assert_uint_eq(ks_trace_file_event_count(tr), 3 * X * Y);
    ck_assert_uint_eq(ks_trace_dropped(tr), 0);
    ck_assert_int_eq(ks_trace_filter(tr).every, 1);
    const ks_event *ev = ks_trace_events(tr);
    for (uint64_t k = 0; k < ks_trace_event_count(tr); ++k) {
        ck_assert(ks_event_fits(tr, &ev[k]));
        if (ev[k].kind == KS_EV_WORK)
            ck_assert(ev[k].u.field[0] == ev[k].index / X && ev[k].u.field[1] == ev[k].index % X);
    }
    ck_assert_str_eq(ks_event_kind_name(ev[0].kind), ks_event_kind_name(KS_EV_WORK));
    /* the same through the internal reader */
    static ks_trace in_tr;
    ck_assert_int_eq(ks_trace_open(path, &in_tr), KS_OK);
    ck_assert_uint_eq(in_tr.nevents, ks_trace_event_count(tr));
    ck_assert_int_eq(memcmp(in_tr.events, ev, in_tr.nevents * sizeof *ev), 0);
    ks_trace_close(&in_tr);
    ks_trace_destroy(tr);
    /* lazily: nothing until a range is asked for; then the items of that range */
    ck_assert_int_eq(ks_trace_load_lazy(path, &tr), KS_OK);
    ck_assert_uint_eq(ks_trace_event_count(tr), 0);
    ck_assert_int_ge((long long)ks_trace_chunks(tr), 1);
    ck_assert_int_eq(ks_trace_load_range(tr, 7, 7), KS_OK);
    uint64_t sevens = 0;
    for (uint64_t k = 0; k < ks_trace_event_count(tr); ++k) sevens += ks_trace_events(tr)[k].index == 7;
    ck_assert_uint_eq(sevens, 3);
    ks_trace_destroy(tr);
    /* no file, not a trace: the error, no handle */
    tr = (ks_trace *)path;
    unlink(path);
    ck_assert_int_eq(ks_trace_load(path, &tr), KS_EIO);
    ck_assert_ptr_null(tr);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a trace at all, but long enough to hold a preamble", f);
    fclose(f);
    ck_assert_int_eq(ks_trace_load(path, &tr), KS_EFORMAT);
    ck_assert_ptr_null(tr);
    ck_assert_int_eq(ks_trace_load(path, NULL), KS_EINVAL);
    ks_trace_destroy(NULL);
    unlink(path);
    free(in);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, traces_of_random_geometries_pass_every_invariant);
    tcase_add_test(tc, check_catches_each_kind_of_corruption);
    tcase_add_test(tc, check_allows_minus_inf_from_an_empty_window_only);
    tcase_add_test(tc, first_pass_counts_the_items_a_filter_keeps);
    tcase_add_test(tc, check_finds_samples_that_make_no_sense);
    tcase_add_test(tc, step_marks_what_does_not_hold);
    tcase_add_test(tc, formulas_name_parameters);
    tcase_add_test(tc, user_trace_refuses_an_op_name_too_long);
    tcase_add_test(tc, public_trace_handle_reads_what_the_file_holds);
    tcase_add_test(tc, filter_keeps_exactly_the_selected_work_items);
    tcase_add_test(tc, full_buffer_counts_dropped_events_without_overflow);
    tcase_add_test(tc, probes_write_the_documented_bytes);
    tcase_add_test(tc, kst_round_trip_preserves_everything);
    tcase_add_test(tc, export_writes_npy_files_that_read_back);
    tcase_add_test(tc, events_descr_itemsize_matches_the_row_export_writes);
    tcase_add_test(tc, npy_round_trip_all_dtypes);
    tcase_add_test(tc, step_works_out_only_the_branch_taken);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
