/* vw_live.c - live parameters: change one, run the operator again, show its trace (see
 * vw_live.h). Two slots take turns: the next run goes into the one not shown, so a
 * refused value never disturbs the trace on screen. */
#define _POSIX_C_SOURCE 200809L
#include "vw_live.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../trace/run_params.h"
#include "../trace/run_trace.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int vw_live_init(vw_live *l, const ks_trace *tr)
{
    memset(l, 0, sizeof *l);
    l->orig_tr = tr;
    l->at = -1;
    l->dir = ".";
    l->vals = calloc(1, sizeof *l->vals);
    l->slot[0] = calloc(1, sizeof *l->slot[0]);
    l->slot[1] = calloc(1, sizeof *l->slot[1]);
    if (!l->vals || !l->slot[0] || !l->slot[1]) {
        vw_live_free(l);
        return ks_fail(KS_ENOMEM, "out of memory for live parameters");
    }
    if (ks_run_from_trace(l->vals, tr)) snprintf(l->why, sizeof l->why, "%s", ks_error_message());
    else l->op = l->vals->op;
    return KS_OK;
}

static void slot_clear(vw_live_slot *sl)
{
    if (sl->used) vw_index_free(&sl->idx);
    ks_host_sink_free(sl->sink);
    ks_run_free(&sl->run);
    memset(sl, 0, sizeof *sl);
}

void vw_live_free(vw_live *l)
{
    for (int k = 0; k < 2; ++k)
        if (l->slot[k]) {
            slot_clear(l->slot[k]);
            free(l->slot[k]);
        }
    free(l->vals);
    memset(l, 0, sizeof *l);
}

/* One run of the values v into sl, giving the opened trace's inputs whose bit is set in
 * `give` (tensor ids of the operator); the trace and its index built. KS_OK or an error
 * (message set); sl is left for the caller to clear either way. */
static int run_into(vw_live *l, vw_live_slot *sl, const ks_run *v, unsigned give)
{
    ks_run *r = &sl->run;
    slot_clear(sl);
    ks_run_init(r, l->op);
    memcpy(r->value, v->value, sizeof r->value);
    memcpy(r->nvalues, v->nvalues, sizeof r->nvalues);
    memcpy(r->fvalue, v->fvalue, sizeof r->fvalue);
    memcpy(r->set, v->set, sizeof r->set);
    r->launch = v->launch;
    r->device = KS_DEV_SIM;
    r->pattern = v->pattern;
    r->seed = v->seed;
    r->schedule = vw_gantt_tensor(l->orig_tr) >= 0; /* keep what the chart shows */
    int rc = KS_OK;
    for (int t = 0; t < l->op->ntensors && !rc; ++t)
        if (give >> t & 1u) rc = ks_run_give_from_trace(r, t, l->orig_tr);
    if (rc) return rc;
    if (!(sl->sink = ks_host_sink_create(KS_TRACE_LIMIT_DEFAULT, l->orig_tr->filter))) return KS_ENOMEM;
    r->sink = sl->sink;
    if ((rc = ks_run_execute(r))) return rc;
    ks_trace_from_run(l->op, r, &sl->tr);
    snprintf(sl->tr.path, sizeof sl->tr.path, "live re-run of %.4000s",
             l->orig_tr->path[0] ? l->orig_tr->path : "the trace");
    if ((rc = vw_index_build(&sl->idx, &sl->tr, NULL))) return rc;
    sl->used = 1;
    return KS_OK;
}

static int same_shape(const ks_tensor *a, const ks_tensor *b)
{
    return a->ndim == b->ndim && !memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]);
}

/* Runs v into sl on the opened trace's inputs; when they no longer fit, on the operator's
 * built-in inputs, then again with those of the trace's inputs whose shapes match the
 * built-in ones. The error is the run on the trace's inputs (what the user changed). */
static int rerun(vw_live *l, vw_live_slot *sl, const ks_run *v)
{
    unsigned all = 0;
    for (int t = 0; t < l->op->ntensors && t < 32; ++t) {
        const int k = ks_trace_tensor(l->orig_tr, l->op->tensors[t].name);
        if (!l->op->tensors[t].output && k >= 0 && l->orig_tr->roles[k] == KS_ROLE_INPUT &&
            l->orig_tr->tensors[k].data && ks_tensor_numel(&l->orig_tr->tensors[k]) > 0)
            all |= 1u << t;
    }
    l->note[0] = '\0';
    if (run_into(l, sl, v, all) == KS_OK) return KS_OK;
    char first[256];
    snprintf(first, sizeof first, "%s", ks_error_message());
    slot_clear(sl);
    if (!all || run_into(l, sl, v, 0)) {
        slot_clear(sl);
        return ks_fail(KS_EINVAL, "%s", first);
    }
    unsigned keep = 0;
    char lost[160] = "";
    for (int t = 0; t < l->op->ntensors && t < 32; ++t) {
        if (!(all >> t & 1u)) continue;
        const ks_tensor *mine = &l->orig_tr->tensors[ks_trace_tensor(l->orig_tr, l->op->tensors[t].name)];
        if (same_shape(mine, &sl->run.tensor[t])) keep |= 1u << t;
        else snprintf(lost + strlen(lost), sizeof lost - strlen(lost), "%s%s", lost[0] ? ", " : "", mine->name);
    }
    if (keep) { /* the built-in run again, with the trace's inputs that still fit */
        slot_clear(sl);
        if (run_into(l, sl, v, keep)) {
            slot_clear(sl);
            if (run_into(l, sl, v, 0)) return KS_EINVAL;
            snprintf(lost, sizeof lost, "every input");
        }
    }
    snprintf(l->note, sizeof l->note, "built-in %s: the trace's no longer fit", lost[0] ? lost : "inputs");
    return KS_OK;
}

/* The text of parameter p of v one step up (dir > 0) or down: integers by 1 on every axis
 * given, decimals by 0.25 (by 5 from 8 up), words to the next choice, switches flipped. */
static void step_text(const ks_run *v, int p, int dir, char *buf, size_t n)
{
    const ks_param_spec *s = &v->op->params[p];
    if (s->kind == KS_PARAM_SWITCH) {
        snprintf(buf, n, "%s", v->value[p][0] ? "off" : "on");
    } else if (s->kind == KS_PARAM_CHOICE) {
        int count = 1;
        for (const char *c = s->choices; (c = strchr(c, '|')); ++c) count++;
        ks_param_choice_word(s, ((v->value[p][0] + dir) % count + count) % count, buf, n);
    } else if (s->kind == KS_PARAM_FLOAT) {
        const double f0 = v->fvalue[p][0], f1 = v->fvalue[p][1];
        const double d = dir * (fabs(f0) >= 8 ? 5.0 : 0.25);
        if (s->axes == 2) snprintf(buf, n, "%.9g,%.9g", f0 + d, f1 + d);
        else snprintf(buf, n, "%.9g", f0 + d);
    } else {
        const int axes = s->axes == 2 ? 2 : s->axes == 3 && v->nvalues[p] > 1 ? v->nvalues[p] : 1;
        buf[0] = '\0';
        for (int a = 0; a < axes; ++a) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%lld", a ? "," : "", (long long)(v->value[p][a] + dir));
        }
    }
}

/* The focused work item as (work index, which of its events): what a new trace is asked
 * for. has = 0 when nothing is focused (no index yet, an orphan event). */
typedef struct focus {
    int has;
    int64_t index;
    uint32_t k;
} focus;

static focus focus_of(const vw_state *s)
{
    focus f = {.has = 0, .index = 0, .k = 0};
    const uint32_t it = vw_state_item(s), ev = vw_state_event(s);
    if (it == VW_NONE) return f;
    const vw_item *item = &s->idx->items[it];
    f.has = 1;
    f.index = item->index;
    while (f.k < item->count && vw_item_ev(s->idx, item, f.k) != ev) f.k++;
    return f;
}

/* The item with the work index closest to `index` (items are sorted by index), the lower
 * one on a tie; VW_NONE when there are none. */
static uint32_t nearest_item(const vw_index *idx, int64_t index)
{
    uint32_t lo = 0, hi = idx->nitems;
    if (!hi) return VW_NONE;
    while (lo < hi) { /* the first item with index >= `index` */
        const uint32_t mid = lo + (hi - lo) / 2;
        if (idx->items[mid].index < index) lo = mid + 1;
        else hi = mid;
    }
    if (lo == idx->nitems) return lo - 1;
    if (lo > 0 && index - idx->items[lo - 1].index <= idx->items[lo].index - index) return lo - 1;
    return lo;
}

/* Focuses f in the state's (new) trace; returns what happened for the status line. */
static void refocus(vw_state *s, focus f, char *said, size_t n)
{
    said[0] = '\0';
    if (!f.has) {
        vw_action home = {.kind = VW_ACT_SEEK, .a = (int64_t)s->pos, .b = 0};
        vw_apply(s, NULL, &home);
        return;
    }
    const uint32_t it = nearest_item(s->idx, f.index);
    if (it == VW_NONE) {
        snprintf(said, n, "; no work items");
        vw_focus_event(s, 0);
        return;
    }
    const vw_item *item = &s->idx->items[it];
    const uint32_t k = item->count ? (f.k < item->count ? f.k : item->count - 1) : 0;
    if (item->count) vw_focus_event(s, vw_item_ev(s->idx, item, k));
    if (item->index != f.index)
        snprintf(said, n, "; work item %lld is gone, at %lld", (long long)f.index, (long long)item->index);
}

/* After s->tr / s->idx changed: what pointed into the old trace goes (lookup, schedule
 * chart), a lesson's slides are off while a re-run shows, the focus found again. */
static void attach(vw_state *s, focus f, char *said, size_t n)
{
    vw_live *l = s->live;
    vw_lookup_free(&s->look);
    s->look.tensor = -1;
    const int gantt = s->gantt;
    vw_gantt_free(&s->sched);
    s->gantt = 0;
    if (gantt && !vw_gantt_build(&s->sched, s->tr)) s->gantt = s->sched.ok;
    s->playing = 0;
    s->nslides = l->at < 0 ? l->nslides : 0;
    s->slides = l->at < 0 ? l->slides : NULL;
    if (l->at >= 0 && l->nslides) s->follow = 1; /* no slide places the panels now */
    vw_state_clamp(s);
    refocus(s, f, said, n);
    vw_state_clamp(s);
    vw_follow_focus(s);
    l->gen++;
}

/* Shows slot b (its run made from v): the previous re-run is freed. */
static void show_slot(vw_state *s, int b)
{
    vw_live *l = s->live;
    const focus f = focus_of(s);
    if (l->at < 0) {
        l->orig_idx = s->idx; /* the opened trace's index, for D */
        l->slides = s->slides;
        l->nslides = s->nslides;
    }
    s->tr = &l->slot[b]->tr;
    s->idx = &l->slot[b]->idx;
    if (l->at >= 0) slot_clear(l->slot[l->at]);
    l->at = b;
    char said[96];
    attach(s, f, said, sizeof said);
    snprintf(s->message, sizeof s->message, "re-run: %lld work items, %llu events in %lld us%.60s%s%.60s",
             (long long)s->tr->work_items, (unsigned long long)s->tr->nevents, (long long)(l->last_ms * 1e3), said,
             l->note[0] ? "; " : "", l->note);
}

static void refuse(vw_state *s, const char *why)
{
    vw_live *l = s->live;
    snprintf(l->error, sizeof l->error, "%s", why);
    snprintf(s->message, sizeof s->message, "refused, the trace stays: %s", why);
}

/* One parameter up or down: the value through the registry, then a re-run. */
static void step_param(vw_state *s, int dir)
{
    vw_live *l = s->live;
    char text[160], name[KS_NAME_LEN + 2];
    if (!s->idx) {
        snprintf(s->message, sizeof s->message, "live parameters are ready once indexing ends");
        return;
    }
    ks_run *v = malloc(sizeof *v);
    if (!v) {
        refuse(s, "out of memory");
        return;
    }
    memcpy(v, l->vals, sizeof *v); /* values only: vals holds no tensors */
    const int p = l->sel;
    snprintf(name, sizeof name, "%s", l->op->params[p].name);
    step_text(v, p, dir, text, sizeof text);
    const int b = l->at == 0 ? 1 : 0;
    const double t0 = now_ms();
    if (ks_run_set(v, name, text) || rerun(l, l->slot[b], v)) {
        refuse(s, ks_error_message());
        free(v);
        return;
    }
    l->last_ms = now_ms() - t0;
    l->error[0] = '\0';
    memcpy(l->vals, v, sizeof *v);
    free(v);
    show_slot(s, b);
}

static void revert(vw_state *s)
{
    vw_live *l = s->live;
    if (l->at < 0) {
        snprintf(s->message, sizeof s->message, "this is the opened trace");
        return;
    }
    const focus f = focus_of(s);
    s->tr = l->orig_tr;
    s->idx = l->orig_idx;
    slot_clear(l->slot[l->at]);
    l->at = -1;
    ks_run_from_trace(l->vals, l->orig_tr);
    l->error[0] = l->note[0] = '\0';
    char said[96];
    attach(s, f, said, sizeof said);
    if (s->nslides) vw_story_show(s, s->slide);
    snprintf(s->message, sizeof s->message, "the opened trace again%s", said);
}

/* T: the shown trace into DIR/kscope-live-NNN.kst (the first free number). */
static void save(vw_state *s)
{
    char path[4200];
    for (int i = 1; i < 10000; ++i) {
        snprintf(path, sizeof path, "%s/kscope-live-%03d.kst", s->live->dir, i);
        if (access(path, F_OK) != 0) break;
    }
    if (ks_trace_write(path, s->tr)) snprintf(s->message, sizeof s->message, "%s", ks_error_message());
    else snprintf(s->message, sizeof s->message, "saved %.230s", path);
}

void vw_live_apply(vw_state *s, const vw_action *a)
{
    vw_live *l = s->live;
    if (!l) return;
    if (a->a == VW_LIVE_PANEL) {
        l->open = !l->open;
        return;
    }
    if (!l->op) {
        snprintf(s->message, sizeof s->message, "no live parameters: %s", l->why);
        return;
    }
    if (!l->open) { /* J, K, comma, period, R and T are the panel's keys only */
        snprintf(s->message, sizeof s->message, "L opens the live parameters");
        return;
    }
    switch (a->a) {
    case VW_LIVE_SELECT:
        l->sel = ((l->sel + (a->b >= 0 ? 1 : -1)) % l->op->nparams + l->op->nparams) % l->op->nparams;
        break;
    case VW_LIVE_STEP: step_param(s, a->b >= 0 ? 1 : -1); break;
    case VW_LIVE_REVERT: revert(s); break;
    case VW_LIVE_SAVE: save(s); break;
    default: break;
    }
}

void vw_live_lines(const vw_live *l, vw_lines *out, int max_lines)
{
    out->n = 0;
    if (max_lines > VW_MAX_LINES) max_lines = VW_MAX_LINES;
#define ADD(st, ...)                                                 \
    do {                                                             \
        if (out->n < max_lines) {                                    \
            out->style[out->n] = (st);                               \
            snprintf(out->text[out->n++], VW_LINE_LEN, __VA_ARGS__); \
        }                                                            \
    } while (0)
    if (!l->op) {
        ADD(VW_STYLE_HEAD, "live parameters (L closes)");
        ADD(VW_STYLE_DIM, "none: %.180s", l->why);
        return;
    }
    ADD(VW_STYLE_HEAD, "live parameters of %s%s", l->op->name, l->at >= 0 ? " (re-run; D: the opened trace)" : "");
    ADD(VW_STYLE_DIM, "J/K choose  , . change  D opened trace  T save  L close");
    /* what follows the rows: the help line, the note, the error */
    const int tail = 1 + (l->note[0] != 0) + (l->error[0] != 0);
    int room = max_lines - out->n - tail, first = 0;
    if (room < 1) room = 1;
    if (l->sel >= room) first = l->sel - room + 1;
    for (int p = first; p < l->op->nparams && p < first + room; ++p) {
        char v[160];
        const ks_param_spec *s = &l->op->params[p];
        ks_run_param_text(l->vals, p, v, sizeof v);
        const int is_auto = s->kind == KS_PARAM_INT && l->vals->value[p][0] < s->min;
        ADD(p == l->sel ? VW_STYLE_FOCUS : VW_STYLE_TEXT, "%s %-16s %s", p == l->sel ? ">" : " ", s->name,
            is_auto ? "auto" : v);
    }
    ADD(VW_STYLE_DIM, "%s", l->op->params[l->sel].help ? l->op->params[l->sel].help : "");
    if (l->note[0]) ADD(VW_STYLE_DIM, "%.190s", l->note);
    if (l->error[0]) ADD(VW_LIVE_STYLE_ERROR, "refused: %.180s", l->error);
#undef ADD
}

vw_rect vw_live_area(const vw_layout *L) { return L->grid; }
