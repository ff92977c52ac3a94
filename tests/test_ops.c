/* test_ops.c - every operator in the table, without naming any: its rows are well formed,
 * it runs with its defaults (and --backward where it has one), traced, on the simulator,
 * on the reference launch and on a tiny grid where threads loop; `check` finds nothing
 * wrong with the trace; the params JSON parses and has every parameter; every kernel row
 * a trace may record is traced by name, checked, and equals the plain run. A new operator is
 * covered by adding its line to kernels/ops.def. */
#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_cuda_api.h"
#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/check.h"
#include "../trace/run_trace.h"
#include "test_util.h"
#include "twins.h"

/* cuBLAS is loaded at the first GEMM, not linked (issue 37): without a GPU the call gets
 * as far as creating its handle, so the library and all seven functions were found; a
 * build without CUDA says so. (With a GPU, the GPU suites run the GEMMs.) */
START_TEST(cublas_loads_when_a_gemm_first_needs_it)
{
    if (ks_cuda_device_count() > 0) return;
    float a = 1, b = 1, c = 0;
    ck_assert_int_ne(ks_cuda_sgemm(NULL, 0, 0, 1, 1, 1, &a, 1, &b, 1, 0.0f, &c, 1), KS_OK);
    const char *m = ks_error_message();
    ck_assert_msg(strstr(m, "this build has no CUDA") || strstr(m, "cublasCreate failed"), "%s", m);
}
END_TEST

START_TEST(table_has_unique_operators)
{
    ck_assert_int_ge(ks_op_count(), 8);
    for (int i = 0; i < ks_op_count(); ++i) {
        const ks_op *op = ks_op_at(i);
        ck_assert_ptr_eq(ks_op_find(op->name), op);
        ck_assert_msg(ks_op_check(op) == KS_OK, "%s", ks_error_message());
        ck_assert_msg(op->summary && *op->summary, "%s has no summary", op->name);
        ck_assert_msg(op->run && op->kernels && !op->launch,
                      "%s launches by hand (.launch): give its kernel rows and .run (docs/adding-an-operator.md)",
                      op->name);
        if (!op->kernels) /* a kernel row table carries its own launches (ks_op_check) */
            ck_assert_msg(op->default_threads >= 1 && op->default_threads <= 1024, "%s: threads", op->name);
    }
    ck_assert_ptr_null(ks_op_find("no_such_op"));
}
END_TEST

START_TEST(parameter_and_tensor_rows_are_well_formed)
{
    for (int i = 0; i < ks_op_count(); ++i) {
        const ks_op *op = ks_op_at(i);
        ck_assert_int_le(op->nparams, KS_MAX_PARAMS);
        ck_assert_int_le(op->ntensors, KS_OP_TENSORS);
        for (int p = 0; p < op->nparams; ++p) {
            const ks_param_spec *s = &op->params[p];
            ck_assert_msg(s->name && *s->name && s->help && *s->help, "%s: row %d lacks a name or help", op->name, p);
            ck_assert_msg(ks_op_param(op, s->name) == p, "%s: --%s appears twice", op->name, s->name);
            ck_assert_msg(s->kind >= KS_PARAM_INT && s->kind <= KS_PARAM_CHOICE, "%s --%s: kind", op->name, s->name);
            ck_assert_msg(s->axes >= 0 && s->axes <= KS_PARAM_AXES, "%s --%s: axes", op->name, s->name);
            if (s->kind == KS_PARAM_CHOICE)
                ck_assert_msg(s->choices && s->def[0] >= 0 && ks_param_choice(s, "no-such-word") < 0,
                              "%s --%s: a choice needs its words", op->name, s->name);
            if (s->kind == KS_PARAM_SWITCH)
                ck_assert_msg(s->def[0] == 0 || s->def[0] == 1, "%s --%s", op->name, s->name);
        }
        for (int t = 0; t < op->ntensors; ++t) {
            const ks_tensor_spec *s = &op->tensors[t];
            ck_assert_msg(s->name && *s->name && s->shape && *s->shape, "%s: tensor row %d", op->name, t);
            ck_assert_msg(ks_op_tensor(op, s->name) == t, "%s: tensor %s appears twice", op->name, s->name);
        }
    }
}
END_TEST

/* Runs op traced on the simulator (with `backward` when it has that switch) and checks
 * the trace; launch: 0 for the reference one, else `threads` per block and 2 blocks. */
static void run_and_check(const ks_op *op, int backward, int threads)
{
    static ks_run r;
    static ks_trace tr;
    ks_check_report rep;
    ks_run_init(&r, op);
    r.pattern = KS_PAT_RANDOM;
    r.seed = 17;
    if (threads) r.launch = tu_launch(threads, 2);
    if (backward) ck_assert_int_eq(ks_run_set(&r, "backward", "on"), KS_OK);
    ck_assert_ptr_nonnull(r.sink = ks_host_sink_create(0, ks_filter_all()));
    ck_assert_msg(ks_run_execute(&r) == KS_OK, "%s: %s", op->name, ks_error_message());
    ck_assert_msg(r.work_items > 0 && ks_sink_count(r.sink) > (unsigned long long)r.work_items,
                  "%s: %lld work items, %llu events", op->name, (long long)r.work_items, ks_sink_count(r.sink));
    ks_trace_from_run(op, &r, &tr);
    ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
    ck_assert_msg(rep.violations == 0, "%s%s (%d threads): %llu violations, first: %s", op->name,
                  backward ? " --backward" : "", threads, (unsigned long long)rep.violations, rep.first[0]);
    ck_assert_msg(rep.complete, "%s: the trace is incomplete", op->name);
    cJSON *j = cJSON_Parse(r.params_json);
    ck_assert_msg(cJSON_IsObject(j), "%s: params JSON does not parse: %s", op->name, r.params_json);
    for (int p = 0; p < op->nparams; ++p) {
        char key[KS_NAME_LEN];
        snprintf(key, sizeof key, "%s", op->params[p].key ? op->params[p].key : op->params[p].name);
        for (char *c = key; *c; ++c)
            if (*c == '-') *c = '_';
        ck_assert_msg(cJSON_GetObjectItemCaseSensitive(j, key), "%s: params JSON lacks %s", op->name, key);
    }
    cJSON_Delete(j);
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
}

START_TEST(every_operator_runs_traced_and_passes_check)
{
    const ks_op *op = ks_op_at(_i);
    const int has_backward = ks_op_param(op, "backward") >= 0;
    for (int backward = 0; backward <= has_backward; ++backward) {
        run_and_check(op, backward, 0);
        run_and_check(op, backward, tu_op_threads(op, 32)); /* 2 blocks of 32: threads loop */
    }
}
END_TEST

/* Every kernel row a trace may record, named by --trace-kernel (with --backward where it
 * runs only there), at the defaults with odd sizes where the op takes them: the trace
 * passes check, its header's sites are the row's (.sites on prepare's state, what `kscope
 * list` prints), it names the row, and its outputs equal the plain run's bitwise. A row
 * no trace records has no sites. */
static int set_if(ks_run *r, const char *name, const char *text)
{
    return ks_op_param(r->op, name) >= 0 ? ks_run_set(r, name, text) : KS_OK;
}

/* the mode a row runs in: --backward, and a CHOICE row set to a word (col2im's
 * --algorithm scatter for its scatter kernel) */
typedef struct row_mode {
    int backward;
    const char *choice;
    char word[32];
} row_mode;

static int traced_row_run(ks_run *r, const ks_op *op, const char *kernel, const row_mode *m, int with_sink)
{
    ks_run_init(r, op);
    r->pattern = KS_PAT_RANDOM, r->seed = 23;
    ck_assert_int_eq(ks_run_set(r, "trace-kernel", kernel), KS_OK);
    ck_assert_int_eq(set_if(r, "backward", m->backward ? "on" : "off"), KS_OK);
    if (m->choice) ck_assert_int_eq(ks_run_set(r, m->choice, m->word), KS_OK);
    ck_assert_int_eq(set_if(r, "batch", "3"), KS_OK);
    ck_assert_int_eq(set_if(r, "channels", "3"), KS_OK);
    if (with_sink) ck_assert_ptr_nonnull(r->sink = ks_host_sink_create(0, ks_filter_all()));
    return ks_run_execute(r);
}

START_TEST(every_traceable_row_traces_and_matches_the_plain_run)
{
    static ks_run t, p;
    static ks_trace tr;
    static ks_site want[KS_MAX_SITES];
    const ks_op *op = ks_op_at(_i);
    const int has_backward = ks_op_param(op, "backward") >= 0;
    for (int k = 0; k < op->nkernels; ++k) {
        const ks_kernel *row = &op->kernels[k];
        const int n = ks_op_row_sites(op, k, want);
        ck_assert_msg(row->sites ? n > 0 && want[0].kind == KS_EV_WORK : n == 0, "%s %s: %d sites at the defaults",
                      op->name, row->name, n);
        if (!row->sites) continue;
        /* the defaults, else --backward, else each word of each CHOICE row, with or without it */
        row_mode m = {0};
        int rc = traced_row_run(&t, op, row->name, &m, 1);
        for (int q = -1; q < op->nparams && rc == KS_EINVAL; ++q) {
            const ks_param_spec *c = q >= 0 ? &op->params[q] : NULL;
            if (c && c->kind != KS_PARAM_CHOICE) continue;
            m.choice = c ? c->name : NULL;
            for (const char *w = c ? c->choices : ""; rc == KS_EINVAL && w;) {
                const size_t len = strcspn(w, "|");
                snprintf(m.word, sizeof m.word, "%.*s", (int)len, w);
                for (m.backward = 0; m.backward <= has_backward && rc == KS_EINVAL; ++m.backward) {
                    ks_host_sink_free(t.sink), ks_run_free(&t);
                    rc = traced_row_run(&t, op, row->name, &m, 1);
                }
                m.backward -= rc == KS_OK;
                w = w[len] ? w + len + 1 : NULL;
            }
        }
        const int backward = m.backward;
        ck_assert_msg(rc == KS_OK, "%s --trace-kernel %s: %s", op->name, row->name, ks_error_message());
        ck_assert_int_eq(t.traced_row, k);
        char named[96];
        snprintf(named, sizeof named, "\"kernel\": \"%s\"", row->name);
        ck_assert_msg(strstr(t.params_json, named), "%s: the trace does not name %s: %s", op->name, row->name,
                      t.params_json);
        ck_assert_int_gt(t.nsites, 0);
        ck_assert_str_eq(t.sites[0].name, row->sites(t.ctx.bytes, want) > 0 ? want[0].name : "?");
        ks_check_report rep;
        ks_trace_from_run(op, &t, &tr);
        ck_assert_int_eq(ks_trace_check(&tr, &rep), KS_OK);
        ck_assert_msg(rep.violations == 0 && rep.complete, "%s --trace-kernel %s%s: %llu violations, first: %s",
                      op->name, row->name, backward ? " --backward" : "", (unsigned long long)rep.violations,
                      rep.first[0]);
        ck_assert_msg(ks_sink_count(t.sink) > (unsigned long long)t.work_items, "%s %s: too few events", op->name,
                      row->name);
        ck_assert_int_eq(traced_row_run(&p, op, row->name, &m, 0), KS_OK);
        for (int i = 0; i < op->ntensors; ++i) {
            if (!op->tensors[i].output || t.absent[i]) continue;
            const int64_t bytes = ks_tensor_numel(&t.tensor[i]) * (int64_t)ks_dtype_size(t.tensor[i].dtype);
            ck_assert_msg(!memcmp(t.tensor[i].data, p.tensor[i].data, (size_t)bytes),
                          "%s --trace-kernel %s: %s differs from the plain run", op->name, row->name, t.tensor[i].name);
        }
        ks_host_sink_free(t.sink), ks_run_free(&t), ks_run_free(&p);
    }
}
END_TEST

START_TEST(bad_parameter_text_is_one_clear_error)
{
    for (int i = 0; i < ks_op_count(); ++i) {
        static ks_run r;
        const ks_op *op = ks_op_at(i);
        ks_run_init(&r, op);
        ck_assert_int_eq(ks_run_set(&r, "no-such-flag", "1"), KS_ENOENT);
        for (int p = 0; p < op->nparams; ++p) {
            ck_assert_int_eq(ks_run_set(&r, op->params[p].name, "x,y,z"), KS_EINVAL);
            ck_assert_ptr_nonnull(strstr(ks_error_message(), op->params[p].name));
            ck_assert_int_eq(r.set[p], 0);
        }
    }
}
END_TEST

/* A copy of a real descriptor with one row broken is refused by ks_op_check, naming the
 * operator and the row: a student never meets a "--(null)" flag or a segfault. */
static int check_broken(ks_op *op, const char *want)
{
    const int rc = ks_op_check(op);
    ck_assert_msg(rc == KS_EINVAL && strstr(ks_error_message(), want), "want '%s', got rc %d: %s", want, rc,
                  ks_error_message());
    return rc;
}

START_TEST(broken_descriptors_are_refused_naming_the_row)
{
    const ks_op *real = NULL;
    for (int i = 0; i < ks_op_count() && !real; ++i)
        if (ks_op_at(i)->nkernels >= 2) real = ks_op_at(i);
    ck_assert_ptr_nonnull(real);
    ks_param_spec params[KS_MAX_PARAMS];
    ks_kernel kernels[8];
    ck_assert_int_le(real->nkernels, 8);
    ks_op op = *real;
    memcpy(params, real->params, sizeof *params * (size_t)real->nparams);
    memcpy(kernels, real->kernels, sizeof *kernels * (size_t)real->nkernels);
    op.params = params, op.kernels = kernels;
    ck_assert_int_eq(ks_op_check(&op), KS_OK);
    /* a parameter row left out of a designated table: all zero */
    memset(&params[1], 0, sizeof params[1]);
    check_broken(&op, "parameter row 1 is missing");
    params[1] = real->params[1];
    /* kernel rows: a name twice, a bad name, a bad launch, a plain_only row with no twin or
     * with a trace schema, a traced row without one */
    kernels[1].name = kernels[0].name;
    check_broken(&op, "appears twice");
    kernels[1].name = "Bad Name";
    check_broken(&op, "is not lower-case");
    kernels[1] = real->kernels[1];
    kernels[1].threads = 0;
    check_broken(&op, "reference threads 0");
    kernels[1] = real->kernels[1];
    kernels[1].plain_only = 1, kernels[1].sim_plain = kernels[1].sim_traced = NULL;
    check_broken(&op, "needs a twin row");
    kernels[1].twin = kernels[0].name;
    check_broken(&op, "a trace schema (.sites) on a row never traced");
    kernels[1].sites = NULL;
    ck_assert_int_eq(ks_op_check(&op), KS_OK);
    /* a row a trace may record without its schema */
    kernels[1] = real->kernels[1];
    kernels[1].sites = NULL;
    check_broken(&op, "no trace schema (.sites)");
    kernels[1].no_trace = 1;
    ck_assert_int_eq(ks_op_check(&op), KS_OK);
    memset(&kernels[0], 0, sizeof kernels[0]);
    check_broken(&op, "kernel row 0 is missing");
}
END_TEST

/* The sites prepare sets are checked before anything runs: here the real sites of each
 * operator, then with one formula or site broken. */
START_TEST(broken_sites_are_refused_naming_the_site_and_field)
{
    static ks_run r;
    for (int i = 0; i < ks_op_count(); ++i) {
        ks_run_init(&r, ks_op_at(i));
        ck_assert_int_eq(r.op->prepare(&r), KS_OK);
        ck_assert_msg(ks_run_sites_check(&r) == KS_OK, "%s: %s", r.op->name, ks_error_message());
        ks_site *w = NULL;
        for (int s = 0; s < r.nsites && !w; ++s)
            if (r.sites[s].kind == KS_EV_WORK && r.sites[s].nfields >= 1 && r.sites[s].nfields < 8) w = &r.sites[s];
        ks_run_free(&r);
        if (!w) continue;
        ks_field *f = &w->fields[w->nfields++];
        const char *bad[][2] = {{"no_such_name + 1", "names 'no_such_name'"},
                                {"2 * 0.5", "not an integer"},
                                {"1 ; 2", "has ';'"}};
        for (int b = 0; b < 3; ++b) {
            ks_field_derived(f, "extra", bad[b][0]);
            ck_assert_int_eq(ks_op_sites_check(r.op, r.sites, r.nsites), KS_EINVAL);
            ck_assert_msg(strstr(ks_error_message(), bad[b][1]) && strstr(ks_error_message(), w->name), "%s: %s",
                          r.op->name, ks_error_message());
        }
        memset(f->expr, '1', KS_EXPR_LEN - 1), f->expr[KS_EXPR_LEN - 1] = 0; /* as a cut snprintf leaves it */
        ck_assert_int_eq(ks_op_sites_check(r.op, r.sites, r.nsites), KS_EINVAL);
        ck_assert_ptr_nonnull(strstr(ks_error_message(), "cut short"));
        w->nfields--;
        memset(&r.sites[r.nsites++], 0, sizeof r.sites[0]); /* an id past the filled prefix */
        ck_assert_int_eq(ks_op_sites_check(r.op, r.sites, r.nsites), KS_EINVAL);
        ck_assert_ptr_nonnull(strstr(ks_error_message(), "is not filled"));
    }
}
END_TEST

/* the one-body rule on the simulator: each plain_only row with a simulator entry point
 * against its twin (twins.h) */
START_TEST(every_plain_only_kernel_equals_its_twin_on_the_simulator) { twins_check(ks_op_at(_i), KS_DEV_SIM); }
END_TEST

int main(void)
{
    Suite *s = suite_create("ops");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, table_has_unique_operators);
    tcase_add_test(tc, cublas_loads_when_a_gemm_first_needs_it);
    tcase_add_test(tc, parameter_and_tensor_rows_are_well_formed);
    tcase_add_loop_test(tc, every_operator_runs_traced_and_passes_check, 0, ks_op_count());
    tcase_add_loop_test(tc, every_plain_only_kernel_equals_its_twin_on_the_simulator, 0, ks_op_count());
    tcase_add_loop_test(tc, every_traceable_row_traces_and_matches_the_plain_run, 0, ks_op_count());
    tcase_add_test(tc, bad_parameter_text_is_one_clear_error);
    tcase_add_test(tc, broken_descriptors_are_refused_naming_the_row);
    tcase_add_test(tc, broken_sites_are_refused_naming_the_site_and_field);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
