/* ls_session.c - running a lesson's operator into an in-memory trace, and resolving a
 * step's focus (a work item, a thread's iteration, a tensor element) against it. */
#define _POSIX_C_SOURCE 200809L
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/core/ks_error.h"
#include "../../trace/image.h"
#include "../../trace/npy.h"
#include "../../kernels/core/ks_sim.h"
#include "../../trace/run_trace.h"
#include "../../viewer/vw_lookup.h"
#include "ls_lesson.h"

/* Lessons are small: the run may record at most LS_MAX_EVENTS events, and an input with
 * more elements than that is refused before anything is read or run. */
#define LS_MAX_EVENTS (1u << 20)

static int load_input(const ls_lesson *L, const ls_input *in, ks_tensor *t, ls_report *rep)
{
    if (in->image && in->size[0] > 0 && in->size[1] > 0 &&
        (in->size[0] > LS_MAX_EVENTS || in->size[1] > LS_MAX_EVENTS || in->size[0] * in->size[1] > LS_MAX_EVENTS)) {
        ls_problem(rep, 0,
                   "inputs: %s: a %lldx%lld picture is too big for a lesson (at most %u "
                   "elements): make it smaller",
                   in->tensor, (long long)in->size[0], (long long)in->size[1], LS_MAX_EVENTS);
        return -1;
    }
    char path[8300];
    const char *file = in->npy ? in->npy : in->image;
    if (file) {
        if (file[0] == '/') snprintf(path, sizeof path, "%s", file);
        else snprintf(path, sizeof path, "%s/%s", L->dir, file);
    }
    int rc;
    if (in->npy) {
        if ((rc = ks_npy_read(path, t)) == KS_OK && t->dtype != KS_F32) {
            ks_tensor_free(t);
            rc = ks_fail(KS_EINVAL, "%s: %s must be float32", path, in->tensor);
        }
    } else if (in->image) {
        rc = ks_image_read(path, in->gray, in->size[0], in->size[1], t);
    } else {
        t->dtype = KS_F32;
        t->ndim = in->ndim;
        memcpy(t->shape, in->shape, sizeof t->shape);
        if ((rc = ks_tensor_alloc(t)) == KS_OK)
            for (int64_t i = 0; i < in->nvalues; ++i) ((float *)t->data)[i] = (float)in->values[i];
    }
    snprintf(t->name, KS_NAME_LEN, "%s", in->tensor);
    if (rc) ls_problem(rep, 0, "inputs: %s: %s", in->tensor, ks_error_message());
    if (!rc && ks_tensor_numel(t) > (int64_t)LS_MAX_EVENTS) {
        ls_problem(rep, 0,
                   "inputs: %s has %lld elements, too many for a lesson (at most %u): make "
                   "it smaller",
                   in->tensor, (long long)ks_tensor_numel(t), LS_MAX_EVENTS);
        ks_tensor_free(t);
        rc = KS_EINVAL;
    }
    return rc ? -1 : 0;
}

/* Before anything is allocated or launched: the operator's prepare (validation and
 * shapes only) on a copy of the run says how many work items the traced kernel has (each
 * records at least its work event) and how big every tensor is. A lesson asking for more
 * than LS_MAX_EVENTS work items or a tensor of more than LS_MAX_TENSOR elements is refused
 * here (a 10000 x 10000 input ran for 15 s and 3.8 GiB before the event limit said no). */
#define LS_MAX_TENSOR (1LL << 24)

static int too_big(const ks_run *r, ls_report *rep)
{
    ks_run *probe = malloc(sizeof *probe);
    if (!probe) return 0;
    memcpy(probe, r, sizeof *probe); /* shares the given inputs' data: prepare only reads them */
    int big = 0;
    if (probe->op->prepare(probe) == KS_OK) { /* an error: the real run reports it */
        if (probe->work_items > (int64_t)LS_MAX_EVENTS) {
            ls_problem(rep, 0,
                       "the run has %lld work items, more than the %u events a lesson may record: "
                       "make the lesson's input smaller",
                       (long long)probe->work_items, LS_MAX_EVENTS);
            big = 1;
        }
        for (int t = 0; t < probe->op->ntensors && !big; ++t) {
            const int64_t n = ks_tensor_numel(&probe->tensor[t]);
            if (!probe->absent[t] && !probe->tensor[t].data && (n < 0 || n > LS_MAX_TENSOR)) {
                ls_problem(rep, 0,
                           "tensor %s would have %lld elements, more than the %lld a lesson may "
                           "use: make the lesson's input smaller",
                           probe->op->tensors[t].name, (long long)n, LS_MAX_TENSOR);
                big = 1;
            }
        }
    }
    /* a prepare may allocate an input it builds itself (sparse_conv's scene: its size
     * depends on the data): free what the copy holds that the run does not */
    for (int t = 0; t < KS_OP_TENSORS; ++t)
        if (probe->tensor[t].data && probe->tensor[t].data != r->tensor[t].data) ks_tensor_free(&probe->tensor[t]);
    free(probe);
    return big;
}

/* A recorded run's "shape": its 1-D tensor spec->reshape seen as rows x columns, each
 * access to it at (offset / columns, offset % columns) of plane 0; the events copied out
 * of the file's mapping first (a version 1 file maps its records read-only). */
static int reshape(ls_session *S, const ls_run_spec *spec, const char *run, ls_report *rep)
{
    ks_trace *tr = &S->tr;
    const int t = ks_trace_tensor(tr, spec->reshape);
    const int64_t R = spec->reshape_dims[0], C = spec->reshape_dims[1];
    if (t < 0 || tr->tensors[t].ndim != 1 || tr->tensors[t].shape[0] != R * C) {
        ls_problem(rep, 0, "%strace %s: shape: '%s' is not a 1-D tensor of %lld elements", run, spec->trace,
                   spec->reshape, (long long)(R * C));
        return -1;
    }
    if (!tr->decoded) {
        ks_event *copy = malloc(tr->nevents ? tr->nevents * sizeof *copy : 1);
        if (!copy) {
            ls_problem(rep, 0, "%strace %s: out of memory", run, spec->trace);
            return -1;
        }
        memcpy(copy, tr->events, tr->nevents * sizeof *copy);
        tr->decoded = copy, tr->events = copy;
    }
    for (uint64_t i = 0; i < tr->nevents; ++i) {
        ks_event *e = &tr->decoded[i];
        if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && e->tensor == (uint32_t)t)
            e->u.access.plane = 0, e->u.access.y = (int32_t)(e->u.access.offset / C),
            e->u.access.x = (int32_t)(e->u.access.offset % C);
    }
    tr->tensors[t].ndim = 2, tr->tensors[t].shape[0] = R, tr->tensors[t].shape[1] = C;
    return 0;
}

/* A recorded run: the trace file opened, its structure and checksums verified, and small
 * enough for a lesson. Problems: one line, "[run NAME: ]trace FILE: why". */
static int open_recorded(ls_session *S, const ls_lesson *L, const ls_run_spec *spec, const char *run, ls_report *rep)
{
    char path[8300];
    if (spec->trace[0] == '/') snprintf(path, sizeof path, "%s", spec->trace);
    else snprintf(path, sizeof path, "%s/%s", L->dir, spec->trace);
    int rc = ks_trace_open(path, &S->tr);
    if (!rc) {
        S->recorded = 1;
        rc = ks_trace_verify(&S->tr);
    }
    if (rc) {
        /* "PATH: offset 96: why" or "PATH: cannot open: why": the lesson names the file */
        const char *why = ks_error_message();
        if (!strncmp(why, path, strlen(path)) && why[strlen(path)] == ':') why += strlen(path) + 2;
        ls_problem(rep, 0, "%strace %s: %s", run, spec->trace, why);
        return -1;
    }
    if (S->tr.nevents > LS_MAX_EVENTS) {
        ls_problem(rep, 0, "%strace %s: %llu events, more than the %u a lesson may read: record a smaller launch", run,
                   spec->trace, (unsigned long long)S->tr.nevents, LS_MAX_EVENTS);
        return -1;
    }
    if (spec->reshape && reshape(S, spec, run, rep)) return -1;
    if (vw_index_build(&S->idx, &S->tr, NULL)) {
        ls_problem(rep, 0, "%strace %s: %s", run, spec->trace, ks_error_message());
        return -1;
    }
    S->params = cJSON_Parse(S->tr.params);
    return 0;
}

/* Run r of the lesson into S (one trace). */
static int open_run(ls_session *S, const ls_lesson *L, int which, ls_report *rep)
{
    memset(S, 0, sizeof *S);
    S->L = L;
    S->which = which;
    const ls_run_spec *spec = &L->runs[which];
    if (spec->trace) {
        char run[80] = "";
        if (which) snprintf(run, sizeof run, "run %.40s: ", spec->name);
        return open_recorded(S, L, spec, run, rep);
    }
    ks_run *r = &S->run;
    const ks_op *op = spec->op ? spec->op : L->op;
    ks_run_init(r, op);
    memcpy(r->value, spec->value, sizeof r->value);
    memcpy(r->fvalue, spec->fvalue, sizeof r->fvalue);
    memcpy(r->set, spec->set, sizeof r->set);
    memcpy(r->nvalues, spec->nvalues, sizeof r->nvalues);
    r->trace_kernel = spec->trace_kernel;
    r->device = KS_DEV_SIM;
    r->pattern = L->pattern;
    r->seed = L->seed;
    r->launch.threads = L->threads;
    r->launch.block_cap = L->block_cap;
    /* problems of another run than the lesson's own name it */
    char run[80] = "";
    if (which) snprintf(run, sizeof run, "run %.40s: ", spec->name);
    for (int i = 0; i < L->ninputs && op == L->op; ++i) /* the lesson's inputs are its operator's */
        if (load_input(L, &L->inputs[i], &r->tensor[ks_op_tensor(L->op, L->inputs[i].tensor)], rep)) return -1;
    /* lessons are small: a trace of more than 2^20 events is a mistake in the lesson */
    if (too_big(r, rep)) return -1;
    if (!(r->sink = ks_host_sink_create(LS_MAX_EVENTS, ks_filter_all()))) {
        ls_problem(rep, 0, "%s%s", run, ks_error_message());
        return -1;
    }
    /* a lesson's planted bug is the point, and its checks report it: no simulator warnings */
    const int was_quiet = ks_sim_quiet_warnings(1);
    const int failed = ks_run_execute(r);
    ks_sim_quiet_warnings(was_quiet);
    if (failed) {
        ls_problem(rep, 0, "%s%s: %s", run, op->name, ks_error_message());
        return -1;
    }
    if (ks_sink_dropped(r->sink)) {
        ls_problem(rep, 0, "%sthe run records more than %u events: make the lesson's input smaller", run,
                   LS_MAX_EVENTS);
        return -1;
    }
    ks_trace_from_run(op, r, &S->tr);
    if (vw_index_build(&S->idx, &S->tr, NULL)) {
        ls_problem(rep, 0, "%s%s", run, ks_error_message());
        return -1;
    }
    S->params = cJSON_Parse(S->tr.params);
    return 0;
}

static void close_run(ls_session *S)
{
    vw_index_free(&S->idx);
    cJSON_Delete(S->params);
    if (S->recorded) ks_trace_close(&S->tr);
    ks_host_sink_free(S->run.sink);
    ks_run_free(&S->run);
    memset(S, 0, sizeof *S);
}

int ls_session_open(ls_session *S, const ls_lesson *L, ls_report *rep)
{
    if (open_run(S, L, 0, rep)) goto fail;
    S->first = S;
    if (L->nruns > 1) {
        if (!(S->more = calloc((size_t)L->nruns - 1, sizeof *S->more))) {
            ls_problem(rep, 0, "out of memory for the lesson's runs");
            goto fail;
        }
        for (int r = 1; r < L->nruns; ++r) {
            if (open_run(&S->more[r - 1], L, r, rep)) goto fail;
            S->more[r - 1].first = S;
        }
    }
    return 0;
fail:
    ls_session_close(S);
    return -1;
}

void ls_session_close(ls_session *S)
{
    for (int r = 1; S->more && S->L && r < S->L->nruns; ++r) close_run(&S->more[r - 1]);
    free(S->more);
    close_run(S);
}

const ls_session *ls_run_session(const ls_session *S, int r)
{
    return r > 0 && S->more && r < S->L->nruns ? &S->more[r - 1] : S;
}

const ls_session *ls_step_session(const ls_session *S, int k) { return ls_run_session(S, S->L->steps[k].run); }

void ls_ctx_init(ls_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->item = VW_NONE;
    ctx->event = VW_NONE;
    ctx->tap = -1;
    ctx->elem_tensor = -1;
}

void ls_ctx_free(ls_ctx *ctx)
{
    free(ctx->hits);
    ctx->hits = NULL;
    ctx->nhits = 0;
}

int64_t ls_tap_number(const ls_session *S, const ls_focus *f, char *err, size_t n)
{
    if (!f->tap_pair) return f->tap[0];
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(S->params, "kernel_size");
    if (!cJSON_IsArray(ks) || cJSON_GetArraySize(ks) != 2) {
        snprintf(err, n, "tap (i, j) needs an operator with a kernel_size; give the tap number");
        return -1;
    }
    const int64_t kh = (int64_t)cJSON_GetArrayItem(ks, 0)->valuedouble;
    const int64_t kw = (int64_t)cJSON_GetArrayItem(ks, 1)->valuedouble;
    if (f->tap[0] >= kh || f->tap[1] >= kw) {
        snprintf(err, n, "tap (%lld, %lld) is outside the %lldx%lld kernel", (long long)f->tap[0], (long long)f->tap[1],
                 (long long)kh, (long long)kw);
        return -1;
    }
    return f->tap[0] * kw + f->tap[1];
}

uint32_t ls_item_event(const ls_session *S, uint32_t item, int kind, int64_t tap, int tensor)
{
    const vw_item *it = &S->idx.items[item];
    for (uint32_t k = 0; k < it->count; ++k) {
        uint32_t e = vw_item_ev(&S->idx, it, k);
        const ks_event *ev = &S->tr.events[e];
        if (ev->kind == kind && (tap < 0 || ev->tap == tap) && (tensor < 0 || ev->tensor == tensor)) return e;
    }
    return VW_NONE;
}

/* The element's coordinates as (plane, y, x) of its tensor; -1 with err when outside. */
static int element(const ks_trace *tr, const ls_focus *f, int *t, int64_t *plane, int64_t *y, int64_t *x, char *err,
                   size_t n)
{
    *t = ks_trace_tensor(tr, f->tensor);
    if (*t < 0) {
        snprintf(err, n, "focus: the trace has no tensor '%s'", f->tensor);
        return -1;
    }
    const ks_tensor *ts = &tr->tensors[*t];
    char shape[96];
    if (f->ncoord != ts->ndim) {
        snprintf(err, n, "focus: %s has %d dimensions %s, 'at' gives %d", f->tensor, ts->ndim,
                 ks_shape_str(ts->ndim, ts->shape, shape, sizeof shape), f->ncoord);
        return -1;
    }
    *plane = 0;
    for (int d = 0; d < ts->ndim; ++d) {
        if (f->coord[d] >= ts->shape[d]) {
            snprintf(err, n, "focus: %s at dimension %d is %lld, outside %s", f->tensor, d, (long long)f->coord[d],
                     ks_shape_str(ts->ndim, ts->shape, shape, sizeof shape));
            return -1;
        }
        if (d < ts->ndim - 2) *plane = *plane * ts->shape[d] + f->coord[d];
    }
    *y = ts->ndim >= 2 ? f->coord[ts->ndim - 2] : 0;
    *x = f->coord[ts->ndim - 1];
    return 0;
}

int ls_focus_resolve(const ls_session *S, const ls_focus *f, ls_ctx *ctx, char *err, size_t n)
{
    const vw_index *idx = &S->idx;
    if (!idx->nitems) {
        snprintf(err, n, "the trace has no work items");
        return -1;
    }
    if (f->kind == LS_FOCUS_KEEP) {
        if (ctx->item == VW_NONE) {
            ctx->item = 0;
            ctx->tap = -1;
            ctx->event = vw_item_ev(idx, &idx->items[0], 0);
        }
        if (!f->tap_given) return 0; /* the previous step's focus, tap and all */
    } else {
        ls_ctx_free(ctx);
        ctx->elem_tensor = -1;
        if (f->kind == LS_FOCUS_INDEX) {
            uint32_t it = vw_index_find(idx, f->index);
            if (it == VW_NONE) {
                snprintf(err, n, "focus index %lld is not in the trace (indices %lld..%lld recorded)",
                         (long long)f->index, (long long)idx->items[0].index,
                         (long long)idx->items[idx->nitems - 1].index);
                return -1;
            }
            ctx->item = it;
        } else if (f->kind == LS_FOCUS_THREAD) {
            ctx->item = VW_NONE;
            for (uint32_t i = 0; i < idx->nitems && ctx->item == VW_NONE; ++i)
                if (vw_gthread(&S->tr, idx->items[i].block, idx->items[i].thread) == f->thread &&
                    idx->items[i].iter == f->iter)
                    ctx->item = i;
            if (ctx->item == VW_NONE) {
                snprintf(err, n,
                         "focus thread %lld iteration %lld is not in the trace (%lld blocks x %d "
                         "threads; that thread has fewer iterations or none)",
                         (long long)f->thread, (long long)f->iter, (long long)S->tr.blocks, S->tr.threads);
                return -1;
            }
        } else {
            vw_lookup lk;
            memset(&lk, 0, sizeof lk);
            int t;
            int64_t plane, y, x;
            if (element(&S->tr, f, &t, &plane, &y, &x, err, n)) return -1;
            /* an output is focused through its writer, an input through its readers */
            int writes = S->tr.roles[t] == KS_ROLE_OUTPUT;
            if (vw_lookup_run(&lk, &S->tr, t, plane, y, x, writes)) {
                snprintf(err, n, "%s", ks_error_message());
                return -1;
            }
            if (!lk.n) {
                vw_lookup_free(&lk);
                snprintf(err, n, "focus: no event %s %s at that element", writes ? "writes" : "reads", f->tensor);
                return -1;
            }
            ctx->elem_tensor = t, ctx->elem_plane = plane, ctx->elem_y = y, ctx->elem_x = x;
            ctx->elem_writes = writes;
            ctx->hits = malloc(lk.n * sizeof *ctx->hits);
            for (uint64_t i = 0; ctx->hits && i < lk.n; ++i) ctx->hits[ctx->nhits++] = lk.hits[i].event;
            ctx->item = vw_item_of(idx, lk.hits[0].event);
            vw_lookup_free(&lk);
            if (ctx->item == VW_NONE) {
                snprintf(err, n, "focus: the event at that element has no work item in the trace");
                return -1;
            }
        }
    }
    ctx->tap = -1;
    ctx->event = vw_item_ev(idx, &idx->items[ctx->item], 0); /* the work event */
    if (f->tap_given) {
        int64_t tap = ls_tap_number(S, f, err, n);
        if (tap < 0) return -1;
        uint32_t e = VW_NONE;
        for (int kind = KS_EV_READ; kind <= KS_EV_WRITE && e == VW_NONE; ++kind)
            if (!f->event_kind || kind == f->event_kind) e = ls_item_event(S, ctx->item, kind, tap, -1);
        if (e == VW_NONE) {
            snprintf(err, n, "focus: work item %lld has no %s at tap %lld", (long long)idx->items[ctx->item].index,
                     f->event_kind ? ks_event_kind_name(f->event_kind) : "event", (long long)tap);
            return -1;
        }
        ctx->tap = tap;
        ctx->event = e;
    } else if (f->kind == LS_FOCUS_ELEMENT) {
        ctx->event = ctx->hits[0];
        ctx->tap = S->tr.events[ctx->event].tap;
    }
    return 0;
}

double ls_tensor_value(const ks_tensor *t, int64_t i) { return ks_tensor_value(t, i); }

void ls_run_describe(const ls_lesson *L, int r, char *buf, size_t n)
{
    if (L->runs[r].trace) {
        snprintf(buf, n, "the recorded trace %s", L->runs[r].trace);
        return;
    }
    char flags[512];
    ls_run_flags(L, r, flags, sizeof flags);
    if (L->runs[r].op) snprintf(buf, n, "operator %s%s%s", L->runs[r].op->name, flags[0] ? " " : "", flags);
    else snprintf(buf, n, "the lesson's parameters with %s", flags[0] ? flags : "no change");
}

int ls_run_flags(const ls_lesson *L, int r, char *buf, size_t n)
{
    const ls_run_spec *a = &L->runs[0], *b = &L->runs[r];
    size_t used = 0;
    buf[0] = 0;
    if (b->trace || (!b->op && (!L->op || a->trace))) return 0; /* a recorded run has no flags */
    const ks_op *op = b->op ? b->op : L->op;
    static ls_run_spec defaults; /* a run of another operator: its flags against that operator's defaults */
    if (b->op) {
        static ks_run run; /* large: keep it off the stack */
        ks_run_init(&run, op);
        memcpy(defaults.value, run.value, sizeof defaults.value);
        memcpy(defaults.fvalue, run.fvalue, sizeof defaults.fvalue);
        memcpy(defaults.set, run.set, sizeof defaults.set);
        memcpy(defaults.nvalues, run.nvalues, sizeof defaults.nvalues);
        defaults.trace_kernel = run.trace_kernel;
        a = &defaults;
    }
    if (op->nkernels && b->trace_kernel >= 0 && b->trace_kernel != a->trace_kernel) {
        const int k = snprintf(buf, n, "--trace-kernel %s", op->kernels[b->trace_kernel].name);
        used = k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
    }
    for (int p = 0; p < op->nparams && used < n; ++p) {
        const ks_param_spec *s = &op->params[p];
        if (!memcmp(a->value[p], b->value[p], sizeof a->value[p]) && a->nvalues[p] == b->nvalues[p] &&
            !memcmp(a->fvalue[p], b->fvalue[p], sizeof a->fvalue[p]) && a->set[p] == b->set[p])
            continue;
        const char *sep = used ? " " : "";
        int k = 0;
        if (s->kind == KS_PARAM_SWITCH) {
            k = snprintf(buf + used, n - used, "%s--%s%s", sep, b->value[p][0] ? "" : "no-", s->name);
        } else if (s->kind == KS_PARAM_CHOICE) {
            const char *w = s->choices;
            for (int64_t i = 0; i < b->value[p][0] && strchr(w, '|'); ++i) w = strchr(w, '|') + 1;
            k = snprintf(buf + used, n - used, "%s--%s %.*s", sep, s->name, (int)strcspn(w, "|"), w);
        } else if (s->kind == KS_PARAM_FLOAT) {
            k = snprintf(buf + used, n - used, "%s--%s %g", sep, s->name, b->fvalue[p][0]);
            if (k > 0 && s->axes == 2 && b->fvalue[p][1] != b->fvalue[p][0] && used + (size_t)k < n)
                k += snprintf(buf + used + k, n - used - (size_t)k, ",%g", b->fvalue[p][1]);
        } else {
            /* as ks_run_set keeps them: two values per axis pair, up to three, or one */
            int count = s->axes == 3 ? (b->nvalues[p] ? b->nvalues[p] : 1) : s->axes == 2 ? 2 : 1;
            if (s->axes == 2 && b->value[p][1] == b->value[p][0]) count = 1;
            k = snprintf(buf + used, n - used, "%s--%s ", sep, s->name);
            for (int i = 0; i < count && k > 0 && used + (size_t)k < n; ++i)
                k += snprintf(buf + used + k, n - used - (size_t)k, "%s%lld", i ? "," : "", (long long)b->value[p][i]);
        }
        if (k < 0) break;
        used = used + (size_t)k < n ? used + (size_t)k : n - 1;
    }
    return (int)used;
}
