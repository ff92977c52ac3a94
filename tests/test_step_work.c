/* The step-through's derived lines (trace/step_work.h): every input's value shown, only
 * the branch taken, RoIAlign's box and bin sizes and patchify's point worked out from the
 * stored inputs, values in their shortest exact form. Expected values are computed here
 * from the traced inputs, not taken from the printer. */
#include <ctype.h>
#include <math.h>

#include "../trace/run_trace.h"
#include "../trace/step.h"
#include "../trace/step_work.h"
#include "test_util.h"

static ks_run run;
static ks_trace tr;

/* Runs op with "name=value" settings (NULL-terminated) into `tr`. */
static void traced(const char *name, const char *const *set, uint64_t seed)
{
    const ks_op *op = ks_op_find(name);
    ck_assert_ptr_nonnull(op);
    ks_run_init(&run, op);
    for (int i = 0; set && set[i]; i += 2)
        ck_assert_msg(ks_run_set(&run, set[i], set[i + 1]) == KS_OK, "%s", ks_error_message());
    run.pattern = KS_PAT_RANDOM;
    run.seed = seed;
    run.sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_msg(ks_run_execute(&run) == KS_OK, "%s", ks_error_message());
    ks_trace_from_run(op, &run, &tr);
}

/* The work lines of the next work event from *i on (NULL: none left), into l. */
static const ks_event *next_work(uint64_t *i, ks_work_line *l, int *n)
{
    while (*i < tr.nevents) {
        const ks_event *e = &tr.events[(*i)++];
        if (e->kind != KS_EV_WORK) continue;
        *n = ks_step_work_lines(&tr, e, l, KS_WORK_LINES);
        return e;
    }
    return NULL;
}

static void done(void)
{
    ks_host_sink_free(run.sink);
    ks_run_free(&run);
}

static const ks_work_line *line(const ks_work_line *l, int n, const char *name)
{
    for (int k = 0; k < n; ++k)
        if (!strcmp(l[k].name, name)) return &l[k];
    ck_abort_msg("no line %s", name);
    return NULL;
}

/* a printed value against the truth: within half a unit of its last printed digit */
static void near(const char *printed, double want)
{
    if (*printed == '~') printed++; /* rounded, and marked so */
    const char *dot = strchr(printed, '.');
    const double unit = dot ? pow(10.0, -(double)strlen(dot + 1)) : 1.0;
    ck_assert_msg(fabs(strtod(printed, NULL) - want) <= 0.5 * unit * (1 + 1e-6) + 1e-6 * fabs(want),
                  "printed %s, want %.9g", printed, want);
}

static float f32(const char *tensor, int64_t i)
{
    const int t = ks_trace_tensor(&tr, tensor);
    ck_assert_int_ge(t, 0);
    return ((const float *)tr.tensors[t].data)[i];
}

START_TEST(values_print_in_their_shortest_exact_form)
{
    static const struct {
        float v;
        const char *text;
    } cases[] = {
        {10.125f, "10.125"},     {6.375f, "6.375"},        {2.5f, "2.5"},         {3.0f, "3"},
        {0.1f, "0.1"},           {0.73645231f, "~0.7365"}, {-1.0625f, "-1.0625"}, {1234.5625f, "1234.5625"},
        {34.46875f, "34.46875"}, {1.00000012f, "~1"} /* a float just past 1: rounded, said so (issue 38 D9) */};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char buf[40];
        ks_format_real(buf, sizeof buf, cases[i].v);
        ck_assert_str_eq(buf, cases[i].text);
    }
}
END_TEST

/* the bounded digit count against the full one: random floats over many magnitudes,
 * short decimals, integers, tiny and huge values and subnormals (fixed seed) */
START_TEST(bounded_digits_agree_with_the_full_count)
{
    uint64_t seed = 20261129;
    for (int i = 0; i < 200000; ++i) {
        float v;
        const int form = (int)tu_int(&seed, 0, 4);
        if (form == 0) { /* any bits but NaN and infinity */
            uint32_t b = (uint32_t)tu_next(&seed);
            if ((b & 0x7f800000u) == 0x7f800000u) b &= 0xbf7fffffu;
            memcpy(&v, &b, sizeof v);
        } else if (form == 1) /* a short decimal: d digits over a power of ten */
            v = (float)((double)tu_int(&seed, -999999, 999999) / pow(10.0, (double)tu_int(&seed, 0, 9)));
        else if (form == 2) /* a binary fraction */
            v = ldexpf((float)tu_int(&seed, -4096, 4096), -(int)tu_int(&seed, 0, 30));
        else if (form == 3) /* a float of [0, 1) as the tests draw them */
            v = (float)((tu_next(&seed) >> 40) * (1.0 / 16777216.0));
        else /* an integer */ v = (float)tu_int(&seed, -100000000, 100000000);
        static const int mosts[] = {1, KS_EXACT_DIGITS, 8};
        for (size_t m = 0; m < sizeof mosts / sizeof mosts[0]; ++m) {
            const int most = mosts[m], full = ks_real_digits(v), want = full <= most ? full : most + 1;
            ck_assert_msg(ks_real_digits_upto(v, most) == want, "%.9g: %d within %d, full %d", (double)v,
                          ks_real_digits_upto(v, most), most, full);
        }
    }
}
END_TEST

/* RoIAlign, aligned and legacy, with and without a sampling ratio: the box, its size and
 * the bin size precede grid_h and grid_w, each with the values it uses, and the grid
 * comes from the printed bin size. */
START_TEST(roi_align_lines_show_the_box_and_bin_sizes)
{
    static const char *const sets[4][7] = {{"aligned", "on", "sampling-ratio", "0", "output-size", "2,3", NULL},
                                           {"aligned", "off", "sampling-ratio", "0", "output-size", "3,2", NULL},
                                           {"aligned", "on", "sampling-ratio", "2", "spatial-scale", "0.5", NULL},
                                           {"aligned", "off", "sampling-ratio", "3", "input-size", "9,7", NULL}};
    static const char *const order[] = {"n",     "c",      "ph", "pw", "b",     "y1",    "y2",    "roi_h",
                                        "bin_h", "grid_h", "x1", "x2", "roi_w", "bin_w", "grid_w"};
    for (int k = 0; k < 4; ++k) {
        traced("roi_align", sets[k], 300 + (uint64_t)k);
        int checked = 0;
        ks_work_line l[KS_WORK_LINES];
        int n;
        const ks_event *e;
        for (uint64_t i = 0; (e = next_work(&i, l, &n));) {
            ck_assert_int_eq(n, 15);
            for (int j = 0; j < n; ++j) ck_assert_str_eq(l[j].name, order[j]);
            const int aligned = k % 2 == 0, ratio = k < 2 ? 0 : k;
            const double scale = k == 2 ? 0.5 : 1.0, off = aligned ? 0.5 : 0.0;
            const int64_t n_roi = e->u.field[0];
            const int64_t P[2] = {tr.sites[e->site].fields[2].extent, tr.sites[e->site].fields[3].extent};
            for (int d = 0; d < 2; ++d) {
                const double lo = f32("rois", n_roi * 5 + 2 - d) * scale - off;
                const double hi = f32("rois", n_roi * 5 + 4 - d) * scale - off;
                const double size = aligned ? hi - lo : fmax(hi - lo, 1.0), bin = size / (double)P[d];
                near(line(l, n, d ? "x1" : "y1")->value, lo);
                near(line(l, n, d ? "x2" : "y2")->value, hi);
                const ks_work_line *s = line(l, n, d ? "roi_w" : "roi_h"), *b = line(l, n, d ? "bin_w" : "bin_h");
                near(s->value, size);
                near(b->value, bin);
                char want[128];
                snprintf(want, sizeof want, "%s / %lld", s->value, (long long)P[d]);
                ck_assert_str_eq(b->worked, want);
                const ks_work_line *g = line(l, n, d ? "grid_w" : "grid_h");
                if (ratio) {
                    ck_assert_str_eq(g->expr, "sampling_ratio"); /* not "sampling_ratio = sampling_ratio" */
                    ck_assert_str_eq(g->worked, "");
                    ck_assert_int_eq(atoi(g->value), ratio);
                } else {
                    snprintf(want, sizeof want, "ceil(%s / %lld)", s->value, (long long)P[d]);
                    ck_assert_str_eq(g->worked, want);
                    ck_assert_int_eq(atoi(g->value), (int)ceil(bin - 1e-6));
                }
            }
            checked++;
        }
        ck_assert_int_gt(checked, 2);
        done();
    }
}
END_TEST

/* patchify: y and x come from coords[b, m] before i and j, and i = floor(y) + ii - R
 * shows y's value. */
START_TEST(patchify_lines_show_the_point)
{
    static const char *const set[] = {"radius", "2", "num-points", "3", "input-size", "9,11", NULL};
    traced("patchify", set, 41);
    int checked = 0;
    ks_work_line l[KS_WORK_LINES];
    int n;
    const ks_event *e;
    for (uint64_t i = 0; (e = next_work(&i, l, &n));) {
        ck_assert_int_eq(n, 8);
        ck_assert_str_eq(l[4].name, "y");
        ck_assert_str_eq(l[5].name, "i");
        ck_assert_str_eq(l[6].name, "x");
        ck_assert_str_eq(l[7].name, "j");
        const int64_t b = e->u.field[0], m = e->u.field[1], jj = e->u.field[2], ii = e->u.field[3];
        const float y = f32("coords", (b * 3 + m) * 2 + 1), x = f32("coords", (b * 3 + m) * 2);
        near(l[4].value, y);
        near(l[6].value, x);
        char want[96];
        snprintf(want, sizeof want, "floor(%s) + %lld - 2", l[4].value, (long long)ii);
        ck_assert_str_eq(l[5].worked, want);
        ck_assert_int_eq(atoll(l[5].value), (long long)floorf(y) + ii - 2);
        ck_assert_int_eq(atoll(l[7].value), (long long)floorf(x) + jj - 2);
        checked++;
    }
    ck_assert_int_eq(checked, 3 * 6 * 6);
    done();
}
END_TEST

/* The derived lines of the run in `tr`: no name left unworked (a field, a parameter or a
 * given printed by name where its value belongs), no `?` (only the branch taken), no line
 * that repeats its formula or its value; at least one line. */
static void expect_every_line_worked(const char *label)
{
    /* words a worked line may keep: the conditional's words and a cast */
    static const char *const words[] = {"so", "is", "false", "int"};
    int lines = 0;
    ks_work_line l[KS_WORK_LINES];
    int n;
    const ks_event *e;
    for (uint64_t i = 0; (e = next_work(&i, l, &n));) {
        for (int k = 0; k < n; ++k, ++lines) {
            const char *w = l[k].worked;
            ck_assert_msg(!strchr(w, '?'), "%s: %s = %s", label, l[k].name, w);
            ck_assert_str_ne(w, l[k].expr);
            ck_assert_str_ne(w, l[k].value);
            for (const char *p = w; *p;) {
                if (p[0] == '0' && p[1] == 'x') { /* a hex constant */
                    p += 2;
                    while (isxdigit((unsigned char)*p)) ++p;
                    continue;
                }
                if (!isalpha((unsigned char)*p) && *p != '_') {
                    ++p;
                    continue;
                }
                const char *q = p;
                while (isalnum((unsigned char)*q) || *q == '_') ++q;
                int ok = *q == '(' || *q == '['; /* a function, a tensor element */
                for (size_t k2 = 0; k2 < sizeof words / sizeof words[0] && !ok; ++k2)
                    ok = strlen(words[k2]) == (size_t)(q - p) && !strncmp(p, words[k2], (size_t)(q - p));
                ck_assert_msg(ok, "%s: %s = %s leaves '%.*s' unworked", label, l[k].name, w, (int)(q - p), p);
                p = q;
            }
        }
    }
    ck_assert_msg(lines > 0, "%s: no derived lines", label);
}

/* Every operator of the table (ops.def, through ks_op_at): at its defaults, and with
 * --backward where it has one. Nothing here names an operator, so a new one is covered
 * the day it is added. */
START_TEST(every_operators_derived_lines_show_their_inputs_values)
{
    const ks_op *op = ks_op_at(_i);
    ck_assert_ptr_nonnull(op);
    const int backward = ks_op_param(op, "backward") >= 0;
    for (int bwd = 0; bwd <= backward; ++bwd) {
        const char *const set[] = {bwd ? "backward" : NULL, "on", NULL};
        char label[64];
        snprintf(label, sizeof label, "%s%s", op->name, bwd ? " --backward" : "");
        traced(op->name, set, 7 + 2 * (uint64_t)_i + (uint64_t)bwd);
        expect_every_line_worked(label);
        done();
    }
}
END_TEST

/* Beyond the defaults: the other kernels and forms whose lines take another path (a
 * scatter, a padded window, sparse_conv's insert with its key given, a transposed
 * rulebook). Each names an operator of the table; every operator is covered above. */
START_TEST(other_forms_derived_lines_show_their_inputs_values)
{
    static const char *const forms[][5] = {{"col2im", "padding", "2", NULL},
                                           {"col2im", "algorithm", "scatter", NULL},
                                           {"maxpool2d", "padding", "1", NULL},
                                           {"sparse_conv", "trace-kernel", "insert", NULL},
                                           {"sparse_conv", "subm", "on", "trace-kernel", "insert"},
                                           {"sparse_conv", "trace-kernel", "gather", NULL},
                                           {"sparse_conv", "transposed", "on", "stride", "2"}};
    for (size_t o = 0; o < sizeof forms / sizeof forms[0]; ++o) {
        ck_assert_msg(ks_op_find(forms[o][0]) != NULL, "forms[%zu] names %s, which kernels/ops.def lacks", o,
                      forms[o][0]);
        const char *set[5] = {NULL};
        char label[128];
        int used = snprintf(label, sizeof label, "%s", forms[o][0]);
        for (int k = 1; k < 5 && forms[o][k]; ++k) {
            set[k - 1] = forms[o][k];
            used += snprintf(label + used, sizeof label - (size_t)used, k % 2 ? " --%s" : " %s", forms[o][k]);
        }
        traced(forms[o][0], set, 101 + o);
        expect_every_line_worked(label);
        done();
    }
}
END_TEST

/* issue 38 D12: col2im's gather counts its reads 0, 1, 2 over the windows; each read's
 * line also names the kernel tap it reads, its row of columns modulo kh*kw, worked out
 * here from the row each line prints (lesson 03's pixel: kernel taps 7, 4, 1). Its write,
 * the sum of those taps, names no tap (eleventh re-trial N17: "tap 0 write" under "tap 0
 * (kernel tap 7)" read as kernel tap 7's). */
START_TEST(col2im_reads_name_their_kernel_tap)
{
    char cmd[600], line[512];
    snprintf(cmd, sizeof cmd, "KSCOPE_LESSONS=%s/lessons %s lesson 03 --auto 2>&1", KS_SOURCE_DIR, KS_CLI);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int seen = 0, writes = 0;
    while (fgets(line, sizeof line, p)) {
        const char *w = strstr(line, "write output[");
        if (w) { /* "  >  write output[...]": nothing but spaces and the focus mark before it */
            for (const char *c = line; c < w; ++c) ck_assert_msg(*c == ' ' || *c == '>', "a tap on '%s'", line);
            writes++;
        }
        unsigned loop;
        long long tap, plane, row, col;
        const char *at = strstr(line, "tap ");
        if (!at || sscanf(at, "tap %u (kernel tap %lld) read  columns[%lld, %lld, %lld]", &loop, &tap, &plane, &row,
                          &col) != 5)
            continue;
        ck_assert_int_eq(tap, row % 9); /* a 3x3 kernel, one channel */
        seen++;
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_ge(seen, 3);
    ck_assert_int_ge(writes, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("step_work");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, values_print_in_their_shortest_exact_form);
    tcase_add_test(tc, bounded_digits_agree_with_the_full_count);
    tcase_add_test(tc, roi_align_lines_show_the_box_and_bin_sizes);
    tcase_add_test(tc, patchify_lines_show_the_point);
    tcase_add_test(tc, col2im_reads_name_their_kernel_tap);
    tcase_add_loop_test(tc, every_operators_derived_lines_show_their_inputs_values, 0, ks_op_count());
    tcase_add_test(tc, other_forms_derived_lines_show_their_inputs_values);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_NOFORK);
}
