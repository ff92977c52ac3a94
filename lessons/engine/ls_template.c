/* ls_template.c - narration templates: "{work.h_col}" -> the value in the focused work
 * item of the trace. Every name is looked up in the trace (never computed from the
 * lesson's own numbers), so the text always agrees with the kernel. */
#define _POSIX_C_SOURCE 200809L
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/core/ks_error.h"
#include "../../trace/check.h"
#include "../../trace/diff.h"
#include "../../trace/memory.h"
#include "../../trace/reads.h"
#include "../../trace/step.h"
#include "ls_lesson.h"

typedef struct out_buf {
    char *p;
    size_t n, len;
} out_buf;

static void put(out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *o, const char *fmt, ...)
{
    va_list ap;
    if (o->len >= o->n) return;
    va_start(ap, fmt);
    int k = vsnprintf(o->p + o->len, o->n - o->len, fmt, ap);
    va_end(ap);
    if (k > 0) o->len = o->len + (size_t)k < o->n ? o->len + (size_t)k : o->n - 1;
}

static void put_num(out_buf *o, double v)
{
    char b[40];
    if (v == floor(v) && fabs(v) < 1e15) put(o, "%lld", (long long)v);
    else ls_format_value(b, sizeof b, v), put(o, "%s", b);
}

/* a list of the work indices in `items` (at most 12, then "...") */
static void put_indices(out_buf *o, const ls_session *S, const uint32_t *items, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        if (i == 12) {
            put(o, ", ... (%u in all)", n);
            return;
        }
        put(o, "%s%lld", i ? ", " : "", (long long)S->idx.items[items[i]].index);
    }
}

static int fail(char *err, size_t n, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t n, const char *name, const char *fmt, ...)
{
    va_list ap;
    int k = snprintf(err, n, "{%s}: ", name);
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < n) vsnprintf(err + k, n - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* The value of work field f of item `item`'s work event; -1 when it has none. */
static int field_of(const ls_session *S, uint32_t item, const char *f, int32_t *v)
{
    const ks_event *w = &S->tr.events[vw_item_ev(&S->idx, &S->idx.items[item], 0)];
    const ks_site *site = &S->tr.sites[w->site];
    for (int i = 0; i < site->nfields; ++i)
        if (!strcmp(site->fields[i].name, f)) {
            *v = w->u.field[i];
            return 0;
        }
    return -1;
}

/* work.F: field F of the item's work event. A name F with fields F.x, F.y and F.z (a .cu
 * trace's threadIdx and blockIdx) stands for all three, "(x,y,z)" as kscope check and step
 * name a thread: {work.threadIdx} is "(3,1,0)". */
static int work_field(const ls_session *S, uint32_t item, const char *name, const char *f, out_buf *o, char *err,
                      size_t en)
{
    int32_t v, xyz[3];
    if (!field_of(S, item, f, &v)) {
        put(o, "%d", v);
        return 0;
    }
    int found = 0;
    for (int a = 0; a < 3 && strlen(f) < KS_NAME_LEN; ++a) {
        char axis[KS_NAME_LEN + 4];
        snprintf(axis, sizeof axis, "%s.%c", f, "xyz"[a]);
        found += !field_of(S, item, axis, &xyz[a]);
    }
    if (found == 3) {
        put(o, "(%d,%d,%d)", xyz[0], xyz[1], xyz[2]);
        return 0;
    }
    const ks_event *w = &S->tr.events[vw_item_ev(&S->idx, &S->idx.items[item], 0)];
    const ks_site *site = &S->tr.sites[w->site];
    char list[200] = "";
    for (int i = 0; i < site->nfields; ++i)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", site->fields[i].name);
    return fail(err, en, name, "the work event has no field '%s' (fields: %s)", f, list);
}

/* The item's event of `kind` at the focused tap (tensor >= 0: on that tensor); an item with
 * a single event of this kind (col2im's or a GEMM's one write) has it whatever the tap in
 * focus. VW_NONE when there is none. */
static uint32_t item_access(const ls_session *S, const ls_ctx *c, int kind, int tensor)
{
    uint32_t e = ls_item_event(S, c->item, kind, c->tap, tensor);
    if (e == VW_NONE && c->tap >= 0) {
        const vw_item *it = &S->idx.items[c->item];
        uint32_t found = VW_NONE, count = 0;
        for (uint32_t k = 0; k < it->count; ++k) {
            uint32_t id = vw_item_ev(&S->idx, it, k);
            const ks_event *x = &S->tr.events[id];
            if (x->kind == kind && (tensor < 0 || x->tensor == tensor)) found = id, count++;
        }
        if (count == 1) e = found;
    }
    return e;
}

/* read.writer, read.writer.F: the work item that writes the element access e touches (its
 * index; with F, field F of its work event, as work.F), for a shared-memory access a write
 * of the same block (each block has its own copy of a shared array). An element nothing
 * writes, or that more than one work item writes, has no writer: a problem that says so. */
static int writer_attr(const ls_session *S, uint32_t e, const char *name, const char *field, out_buf *o, char *err,
                       size_t en)
{
    const ks_event *a = &S->tr.events[e];
    const int shared = (a->flags & KS_FLAG_SHARED) != 0;
    uint32_t item = VW_NONE, other = VW_NONE;
    for (uint64_t i = 0; i < S->tr.nevents && other == VW_NONE; ++i) {
        const ks_event *w = &S->tr.events[i];
        const uint32_t it = vw_item_of(&S->idx, i);
        if (w->kind != KS_EV_WRITE || it == VW_NONE || w->tensor != a->tensor ||
            w->u.access.offset != a->u.access.offset || ((w->flags & KS_FLAG_SHARED) != 0) != shared ||
            (shared && w->block != a->block))
            continue;
        if (item == VW_NONE) item = it;
        else if (it != item) other = it;
    }
    char where[160];
    ks_format_element(&S->tr, a->tensor, a->u.access.plane, a->u.access.y, a->u.access.x, where, sizeof where);
    if (item == VW_NONE) return fail(err, en, name, "no work item writes %s%s", where, shared ? " in this block" : "");
    if (other != VW_NONE)
        return fail(err, en, name, "work items %lld and %lld both write %s%s: it has no single writer",
                    (long long)S->idx.items[item].index, (long long)S->idx.items[other].index, where,
                    shared ? " in this block" : "");
    if (field) return work_field(S, item, name, field, o, err, en);
    put(o, "%lld", (long long)S->idx.items[item].index);
    return 0;
}

/* A site's name as narration prints it. kscope record names a site without line info
 * (a library's kernel) "name+0xOFFSET", the kernel's name cut to 20 characters so the
 * offset fits KS_NAME_LEN; the trace's operator is that name whole, so the narration
 * puts it back (issue 38: lesson 14's "roi_align_forward_ke+0x680"). */
static void put_site(out_buf *o, const ks_trace *tr, const ks_site *site)
{
    const char *off = strstr(site->name, "+0x");
    if (site->line <= 0 && off && off - site->name == 20 && strlen(tr->op) > 20 && !strncmp(tr->op, site->name, 20))
        put(o, "%s%s", tr->op, off);
    else put(o, "%s", site->name);
}

/* read.ATTR, read.TENSOR.ATTR, write..., sample... */
static int access_attr(const ls_session *S, const ls_ctx *c, const char *name, int kind, const char *rest, out_buf *o,
                       char *err, size_t en)
{
    char tname[KS_NAME_LEN] = "";
    const char *attr = rest;
    const char *dot = strchr(rest, '.');
    int tensor = -1;
    /* read.TENSOR.A, unless the first part is an attribute with parts of its own (read.writer.F) */
    if (dot && !(strncmp(rest, "writer.", 7) == 0 && ks_trace_tensor(&S->tr, "writer") < 0)) {
        snprintf(tname, sizeof tname, "%.*s", (int)(dot - rest), rest);
        attr = dot + 1;
        if ((tensor = ks_trace_tensor(&S->tr, tname)) < 0)
            return fail(err, en, name, "the trace has no tensor '%s'", tname);
    }
    uint32_t e = item_access(S, c, kind, tensor);
    if (e == VW_NONE) {
        char tap[32] = "";
        if (c->tap >= 0) snprintf(tap, sizeof tap, " at tap %lld", (long long)c->tap);
        return fail(err, en, name, "work item %lld has no %s event%s%s%s", (long long)S->idx.items[c->item].index,
                    ks_event_kind_name(kind), tensor >= 0 ? " on " : "", tname, tap);
    }
    const ks_event *ev = &S->tr.events[e];
    if (kind == KS_EV_SAMPLE) {
        const ks_ev_sample *sm = &ev->u.sample;
        if (!strcmp(attr, "y")) put_num(o, sm->y);
        else if (!strcmp(attr, "x")) put_num(o, sm->x);
        else if (!strcmp(attr, "value")) put_num(o, sm->value);
        else if (!strcmp(attr, "plane")) put(o, "%d", sm->plane);
        else if (!strcmp(attr, "tap")) put(o, "%u", ev->tap);
        else if (strlen(attr) == 2 && attr[0] == 'w' && attr[1] >= '0' && attr[1] <= '3')
            put_num(o, sm->w[attr[1] - '0']);
        else return fail(err, en, name, "a sample has y, x, value, plane, tap, w0..w3 (not '%s')", attr);
        return 0;
    }
    const ks_ev_access *a = &ev->u.access;
    const ks_site *site = &S->tr.sites[ev->site < S->tr.nsites ? ev->site : 0];
    static const char *const placed[] = {"at", "site", "line", "col", "code", "writer"};
    for (size_t i = 0; i < sizeof placed / sizeof *placed && !ks_event_fits(&S->tr, ev); ++i)
        if (!strncmp(attr, placed[i], strlen(placed[i])) &&
            (!attr[strlen(placed[i])] || attr[strlen(placed[i])] == '.'))
            return fail(err, en, name,
                        "the %s of work item %lld is outside every buffer or site of the trace: it has "
                        "no %s",
                        ks_event_kind_name(kind), (long long)S->idx.items[c->item].index, placed[i]);
    if (!strcmp(attr, "site")) put_site(o, &S->tr, site);
    else if (!strcmp(attr, "line") || !strcmp(attr, "col") || !strcmp(attr, "code")) {
        if (site->line <= 0)
            return fail(err, en, name,
                        "site %s is no source location (line, col and code belong to a .cu "
                        "kernel's trace: kscope run FILE.cu)",
                        site->name);
        if (!strcmp(attr, "code")) put(o, "%s", site->code);
        else put(o, "%d", attr[0] == 'l' ? site->line : site->col);
    } else if (!strcmp(attr, "writer") || !strncmp(attr, "writer.", 7))
        return writer_attr(S, e, name, attr[6] ? attr + 7 : NULL, o, err, en);
    else if (!strcmp(attr, "value")) put_num(o, ks_access_value(a, ev->flags));
    else if (!strcmp(attr, "y")) put(o, "%d", a->y);
    else if (!strcmp(attr, "x")) put(o, "%d", a->x);
    else if (!strcmp(attr, "plane")) put(o, "%d", a->plane);
    else if (!strcmp(attr, "offset")) put(o, "%lld", (long long)a->offset);
    else if (!strcmp(attr, "tap")) put(o, "%u", ev->tap);
    else if (!strcmp(attr, "pad")) put(o, "%s", ev->flags & KS_FLAG_PADDING ? "yes" : "no");
    else if (!strcmp(attr, "at")) {
        char buf[160];
        ks_format_element(&S->tr, ev->tensor, a->plane, a->y, a->x, buf, sizeof buf);
        put(o, "%s", buf);
    } else
        return fail(err, en, name,
                    "a %s has value, y, x, plane, offset, tap, pad, at, site, line, col, code, "
                    "writer, writer.F (not '%s')",
                    ks_event_kind_name(kind), attr);
    return 0;
}

/* "I.J..." (all of ts's coordinates) -> the element's C-order offset; -1 when it is not
 * an element of ts */
static int64_t element_offset(const ks_tensor *ts, const char *p)
{
    int64_t off = 0;
    for (int d = 0; d < ts->ndim; ++d) {
        char *end;
        const long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || v >= ts->shape[d] || (d + 1 < ts->ndim ? *end != '.' : *end != 0)) return -1;
        off = off * ts->shape[d] + v;
        p = end + 1;
    }
    return ts->ndim ? off : -1;
}

/* item.reads, item.writes, ...; item.reads.TENSOR: only the events on that tensor */
static int item_attr(const ls_session *S, const ls_ctx *c, const char *name, const char *rest, out_buf *o, char *err,
                     size_t en)
{
    const vw_item *it = &S->idx.items[c->item];
    char attr[32], tname[KS_NAME_LEN];
    const char *dot = strchr(rest, '.');
    snprintf(attr, sizeof attr, "%.*s", dot ? (int)(dot - rest) : (int)strlen(rest), rest);
    int tensor = -1;
    int64_t elem = -1; /* item.reads.TENSOR.at.I.J...: only the events on that element */
    if (dot) {
        const char *at = strstr(dot + 1, ".at.");
        snprintf(tname, sizeof tname, "%.*s", at ? (int)(at - dot - 1) : (int)strlen(dot + 1), dot + 1);
        if ((tensor = ks_trace_tensor(&S->tr, tname)) < 0)
            return fail(err, en, name, "the trace has no tensor '%s'", tname);
        if (at) {
            char buf[96];
            const ks_tensor *ts = &S->tr.tensors[tensor];
            if (strcmp(attr, "reads") && strcmp(attr, "writes"))
                return fail(err, en, name, "item.%s.%s.at counts reads or writes of one element", attr, tname);
            if ((elem = element_offset(ts, at + 4)) < 0)
                return fail(err, en, name, "%s%s has no element %s (at.I.J... with all %d coordinates)", tname,
                            ks_shape_str(ts->ndim, ts->shape, buf, sizeof buf), at + 4, ts->ndim);
        }
    }
    int counts[6] = {0};
    uint32_t all = 0;
    for (uint32_t k = 0; k < it->count; ++k) {
        const ks_event *ev = &S->tr.events[vw_item_ev(&S->idx, it, k)];
        if (tensor >= 0 && (ev->kind == KS_EV_WORK || ev->tensor != tensor)) continue;
        if (elem >= 0 && ((ev->kind != KS_EV_READ && ev->kind != KS_EV_WRITE) || ev->u.access.offset != elem ||
                          (ev->flags & KS_FLAG_PADDING)))
            continue;
        all++;
        if ((int)ev->kind < 6) counts[ev->kind]++;
    }
    if (!strcmp(attr, "events")) put(o, "%u", all);
    else if (!strcmp(attr, "reads")) put(o, "%d", counts[KS_EV_READ]);
    else if (!strcmp(attr, "samples")) put(o, "%d", counts[KS_EV_SAMPLE]);
    else if (!strcmp(attr, "writes")) put(o, "%d", counts[KS_EV_WRITE]);
    else
        return fail(err, en, name,
                    "item has events, reads, samples, writes, each optionally .TENSOR or .TENSOR.at.I.J... (not '%s')",
                    attr);
    return 0;
}

/* thread.items / thread.indices: the work items of the focused item's thread */
static int thread_attr(const ls_session *S, const ls_ctx *c, const char *name, const char *attr, out_buf *o, char *err,
                       size_t en)
{
    const vw_item *it = &S->idx.items[c->item];
    uint32_t *mine = malloc(S->idx.nitems * sizeof *mine), n = 0;
    if (!mine) return fail(err, en, name, "out of memory");
    for (uint32_t i = 0; i < S->idx.nitems; ++i)
        if (S->idx.items[i].block == it->block && S->idx.items[i].thread == it->thread) mine[n++] = i;
    int rc = 0;
    if (!strcmp(attr, "items")) put(o, "%u", n);
    else if (!strcmp(attr, "indices")) put_indices(o, S, mine, n);
    else rc = fail(err, en, name, "thread has items, indices (not '%s')", attr);
    free(mine);
    return rc;
}

static int param_attr(const ls_session *S, const char *name, const char *rest, out_buf *o, char *err, size_t en)
{
    char key[64];
    const char *dot = strchr(rest, '.');
    snprintf(key, sizeof key, "%.*s", dot ? (int)(dot - rest) : (int)strlen(rest), rest);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(S->params, key);
    if (!v) {
        char list[300] = "";
        for (const cJSON *c = S->params ? ((const cJSON *)S->params)->child : NULL; c; c = c->next)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", c->string);
        return fail(err, en, name, "the trace has no parameter '%s' (%s)", key, list);
    }
    if (dot) {
        char *end;
        long k = strtol(dot + 1, &end, 10);
        if (*end || !cJSON_IsArray(v) || k < 0 || k >= cJSON_GetArraySize(v))
            return fail(err, en, name, "'%s' has no element %s", key, dot + 1);
        v = cJSON_GetArrayItem(v, (int)k);
    }
    if (cJSON_IsNumber(v)) put_num(o, v->valuedouble);
    else if (cJSON_IsArray(v)) {
        int i = 0;
        for (const cJSON *x = v->child; x; x = x->next, ++i) {
            if (i) put(o, "x");
            put_num(o, x->valuedouble);
        }
    } else if (cJSON_IsString(v)) put(o, "%s", v->valuestring);
    else if (cJSON_IsBool(v)) put(o, "%s", cJSON_IsTrue(v) ? "true" : "false");
    return 0;
}

static int tensor_attr(const ls_session *S, const char *name, const char *rest, out_buf *o, char *err, size_t en)
{
    char tname[KS_NAME_LEN];
    const char *dot = strchr(rest, '.');
    if (!dot) return fail(err, en, name, "write tensor.NAME.shape, .size, .bytes or .dimK");
    snprintf(tname, sizeof tname, "%.*s", (int)(dot - rest), rest);
    int t = ks_trace_tensor(&S->tr, tname);
    if (t < 0) return fail(err, en, name, "the trace has no tensor '%s'", tname);
    const ks_tensor *ts = &S->tr.tensors[t];
    const char *attr = dot + 1;
    char buf[96];
    if (!strcmp(attr, "shape")) put(o, "%s", ks_shape_str(ts->ndim, ts->shape, buf, sizeof buf));
    else if (!strcmp(attr, "size")) put(o, "%lld", (long long)ks_tensor_numel(ts));
    else if (!strcmp(attr, "bytes"))
        put(o, "%lld", (long long)(ks_tensor_numel(ts) * (int64_t)ks_dtype_size(ts->dtype)));
    else if (!strncmp(attr, "dim", 3) && attr[3] >= '0' && attr[3] <= '9' && !attr[4] && attr[3] - '0' < ts->ndim)
        put(o, "%lld", (long long)ts->shape[attr[3] - '0']);
    else if (!strncmp(attr, "at.", 3)) { /* at.I.J...: the element's value, all coordinates given */
        if (ts->ndim == 0 || !ts->data) return fail(err, en, name, "%s has no elements", tname);
        const int64_t off = element_offset(ts, attr + 3);
        if (off < 0)
            return fail(err, en, name, "%s%s has no element %s (at.I.J... with all %d coordinates)", tname,
                        ks_shape_str(ts->ndim, ts->shape, buf, sizeof buf), attr + 3, ts->ndim);
        put_num(o, ls_tensor_value(ts, off));
    } else
        return fail(err, en, name, "a tensor has shape, size, bytes, dim0..dim%d, at.I.J... (not '%s')", ts->ndim - 1,
                    attr);
    return 0;
}

static int element_attr(const ls_session *S, const ls_ctx *c, const char *name, const char *attr, out_buf *o, char *err,
                        size_t en)
{
    if (c->elem_tensor < 0) return fail(err, en, name, "this step has no tensor element in focus");
    if (!strcmp(attr, "count")) put(o, "%u", c->nhits);
    else if (!strcmp(attr, "at")) {
        char buf[160];
        ks_format_element(&S->tr, c->elem_tensor, c->elem_plane, c->elem_y, c->elem_x, buf, sizeof buf);
        put(o, "%s", buf);
    } else if (!strcmp(attr, "value")) {
        const ks_tensor *t = &S->tr.tensors[c->elem_tensor];
        const int64_t h = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
        put_num(o, ls_tensor_value(t, (c->elem_plane * h + c->elem_y) * t->shape[t->ndim - 1] + c->elem_x));
    } else if (!strcmp(attr, "indices")) {
        uint32_t *items = malloc((c->nhits ? c->nhits : 1) * sizeof *items), n = 0;
        if (!items) return fail(err, en, name, "out of memory");
        for (uint32_t i = 0; i < c->nhits; ++i) {
            uint32_t it = vw_item_of(&S->idx, c->hits[i]);
            if (it != VW_NONE && (n == 0 || items[n - 1] != it)) items[n++] = it;
        }
        put_indices(o, S, items, n);
        free(items);
    } else return fail(err, en, name, "element has count, at, value, indices (not '%s')", attr);
    return 0;
}

/* The session of run `rn` ("lesson": the lesson's own), or NULL. */
static const ls_session *find_run_session(const ls_session *S, const char *rn)
{
    const ls_lesson *L = S->L;
    for (int r = 0; r < L->nruns; ++r)
        if (!strcmp(rn, r ? L->runs[r].name : "lesson")) return ls_run_session(S->first, r);
    return NULL;
}

/* diff.RUN.A: the step's run against run RUN as `kscope diff RUN THIS` compares them (work
 * item by work item, values within 1e-5): count (work items that differ), items (work items
 * in either), first (the first differing work item's index, "none" when they agree), event
 * (where within it the first difference is: 0 is the work event) */
static int diff_attr(const ls_session *S, const char *name, const char *rest, out_buf *o, char *err, size_t en)
{
    const char *dot = strchr(rest, '.');
    char rn[64];
    snprintf(rn, sizeof rn, "%.*s", dot ? (int)(dot - rest) : (int)strlen(rest), rest);
    const ls_session *R = find_run_session(S, rn);
    if (!R) return fail(err, en, name, "the lesson has no run '%s' ('lesson' is its own run)", rn);
    const char *attr = dot ? dot + 1 : "";
    if (strcmp(attr, "count") && strcmp(attr, "items") && strcmp(attr, "first") && strcmp(attr, "event"))
        return fail(err, en, name, "diff.%s has count, items, first, event (not '%s')", rn, attr);
    if (ks_diff_compatible(&R->tr, &S->tr))
        return fail(err, en, name, "run %s and this step's run record different work: %s", rn, ks_error_message());
    ks_diff d;
    if (ks_diff_run(&d, &R->tr, &S->tr, 1e-5)) return fail(err, en, name, "%s", ks_error_message());
    if (!strcmp(attr, "count")) put(o, "%llu", (unsigned long long)d.differing);
    else if (!strcmp(attr, "items")) put(o, "%llu", (unsigned long long)(d.compared + d.only[0] + d.only[1]));
    else if (!d.nfirst) put(o, "none");
    else if (!strcmp(attr, "first")) put(o, "%lld", (long long)d.first[0]);
    else put(o, "%llu", (unsigned long long)d.first_event[0]);
    ks_diff_free(&d);
    return 0;
}

/* reads.RUN.OUT.OF.A: the step's run against run RUN as `kscope diff RUN-TRACE STEP-TRACE
 * --reads-by OUT --reads-of OF` compares them (trace/reads.h: for each element of OUT, the
 * elements of OF read to compute it, with their counts; traces of different kinds, a
 * recorded upstream kernel against our operator): count (elements of OUT whose reads
 * differ), keys (elements of OUT with reads in either), reads (the step's run's reads
 * counted), run_reads (run RUN's) */
static int reads_attr(const ls_session *S, const char *name, const char *rest, out_buf *o, char *err, size_t en)
{
    char part[3][KS_NAME_LEN];
    const char *p = rest;
    for (int k = 0; k < 3; ++k) {
        const char *dot = strchr(p, '.');
        if (!dot || dot == p || dot - p >= KS_NAME_LEN)
            return fail(err, en, name, "write reads.RUN.OUT.OF.A (count, keys, reads, run_reads)");
        snprintf(part[k], sizeof part[k], "%.*s", (int)(dot - p), p);
        p = dot + 1;
    }
    const ls_session *R = find_run_session(S, part[0]);
    if (!R) return fail(err, en, name, "the lesson has no run '%s' ('lesson' is its own run)", part[0]);
    if (strcmp(p, "count") && strcmp(p, "keys") && strcmp(p, "reads") && strcmp(p, "run_reads"))
        return fail(err, en, name, "reads.%s.%s.%s has count, keys, reads, run_reads (not '%s')", part[0], part[1],
                    part[2], p);
    const char *of[1] = {part[2]};
    ks_reads r;
    if (ks_reads_compare(&r, &R->tr, &S->tr, part[1], of, 1)) return fail(err, en, name, "%s", ks_error_message());
    if (!strcmp(p, "count")) put(o, "%llu", (unsigned long long)r.differing);
    else if (!strcmp(p, "keys")) put(o, "%llu", (unsigned long long)(r.compared + r.only[0] + r.only[1]));
    else put(o, "%llu", (unsigned long long)r.n[strcmp(p, "reads") ? 0 : 1]);
    ks_reads_free(&r);
    return 0;
}

/* check.violations: what `kscope check` finds in the step's trace (0: every invariant
 * holds); check.collisions: its atomic collisions (elements receiving more than one atomic
 * add); check.shared_races, check.global_races: its races on shared slots and on global
 * elements; check.first: the first line it prints under "FAIL" ("none" when it passes) */
static int check_attr(const ls_session *S, const char *name, const char *attr, out_buf *o, char *err, size_t en)
{
    static const char *const names[] = {"violations", "collisions", "shared_races", "global_races", "first"};
    int which = -1;
    for (int i = 0; i < 5 && which < 0; ++i)
        if (!strcmp(attr, names[i])) which = i;
    if (which < 0)
        return fail(err, en, name, "check has violations, collisions, shared_races, global_races, first (not '%s')",
                    attr);
    ks_check_report *rep = calloc(1, sizeof *rep);
    if (!rep) return fail(err, en, name, "out of memory");
    if (ks_trace_check(&S->tr, rep)) {
        free(rep);
        return fail(err, en, name, "%s", ks_error_message());
    }
    const uint64_t v[] = {rep->violations, rep->atomic_collisions, rep->shared_races, rep->global_races};
    if (which < 4) put(o, "%llu", (unsigned long long)v[which]);
    else put(o, "%s", rep->violations ? rep->first[0] : "none");
    free(rep);
    return 0;
}

/* memory.SITE.A: site SITE's counts over the step's whole run, as `kscope memory` prints
 * them (trace/memory.h). SITE is a read, sample or write site by name (im2col.read_input);
 * A: requests, accesses, sectors, ideal, lines, per_request (sectors per request, 2
 * decimals), lanes (accesses per request, 1 decimal), efficiency (ideal / sectors, a
 * percent rounded to an integer) */
static int memory_attr(const ls_session *S, const char *name, const char *rest, out_buf *o, char *err, size_t en)
{
    const char *dot = strrchr(rest, '.');
    if (!dot || dot == rest) return fail(err, en, name, "write memory.SITE.A (memory.im2col.read_input.sectors)");
    char site[KS_NAME_LEN];
    snprintf(site, sizeof site, "%.*s", (int)(dot - rest), rest);
    const char *attr = dot + 1;
    ks_mem_report *rep = calloc(1, sizeof *rep);
    if (!rep) return fail(err, en, name, "out of memory");
    if (ks_memory_analyze(&S->tr, rep)) {
        free(rep);
        return fail(err, en, name, "%s", ks_error_message());
    }
    const ks_mem_site *m = NULL;
    char list[300] = "";
    for (int i = 0; i < rep->nsites; ++i) {
        const char *sn = S->tr.sites[rep->sites[i].site].name;
        if (!strcmp(sn, site)) m = &rep->sites[i];
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", sn);
    }
    int rc = 0;
    if (!m) rc = fail(err, en, name, "the trace has no memory site '%s' (%s)", site, list[0] ? list : "none");
    else if (!strcmp(attr, "requests")) put(o, "%llu", (unsigned long long)m->requests);
    else if (!strcmp(attr, "accesses")) put(o, "%llu", (unsigned long long)m->accesses);
    else if (!strcmp(attr, "sectors")) put(o, "%llu", (unsigned long long)m->sectors);
    else if (!strcmp(attr, "ideal")) put(o, "%llu", (unsigned long long)m->ideal);
    else if (!strcmp(attr, "lines")) put(o, "%llu", (unsigned long long)m->lines);
    else if (!strcmp(attr, "per_request"))
        put_num(o, m->requests ? round(100.0 * (double)m->sectors / (double)m->requests) / 100.0 : 0.0);
    else if (!strcmp(attr, "lanes"))
        put_num(o, m->requests ? round(10.0 * (double)m->accesses / (double)m->requests) / 10.0 : 0.0);
    else if (!strcmp(attr, "efficiency"))
        put_num(o, m->sectors ? round(100.0 * (double)m->ideal / (double)m->sectors) : 100.0);
    else
        rc = fail(err, en, name,
                  "a memory site has requests, accesses, sectors, ideal, lines, per_request, lanes, efficiency "
                  "(not '%s')",
                  attr);
    free(rep);
    return rc;
}

/* request.A, request.read.A, request.write.A, request.sample.A: the warp request (trace/
 * memory.h) of the focused event, or of the item's read, write or sample at the focused tap
 * (a sample: its corner (y0, x0)). A: sectors, lanes, ideal, lines, warp (thread / 32 in
 * its block), block, iter. An access that touches no memory (a padding read) is in no
 * request: its sectors, lanes, ideal and lines are an error. */
static int request_attr(const ls_session *S, const ls_ctx *c, const char *name, const char *rest, out_buf *o, char *err,
                        size_t en)
{
    const char *attr = rest;
    uint32_t e = c->event;
    static const struct {
        const char *w;
        int kind;
    } kinds[] = {{"read.", KS_EV_READ}, {"write.", KS_EV_WRITE}, {"sample.", KS_EV_SAMPLE}};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k)
        if (!strncmp(rest, kinds[k].w, strlen(kinds[k].w))) {
            attr = rest + strlen(kinds[k].w);
            e = item_access(S, c, kinds[k].kind, -1);
            if (e == VW_NONE) {
                char tap[32] = "";
                if (c->tap >= 0) snprintf(tap, sizeof tap, " at tap %lld", (long long)c->tap);
                return fail(err, en, name, "work item %lld has no %s event%s", (long long)S->idx.items[c->item].index,
                            ks_event_kind_name(kinds[k].kind), tap);
            }
        }
    if (e == VW_NONE || S->tr.events[e].kind == KS_EV_WORK)
        return fail(err, en, name,
                    "the focused event is no access: give the focus a tap, or write request.read.A "
                    "or request.write.A");
    const vw_item *it = &S->idx.items[c->item];
    if (!strcmp(attr, "warp")) put(o, "%u", it->thread / 32);
    else if (!strcmp(attr, "block")) put(o, "%u", it->block);
    else if (!strcmp(attr, "iter")) put(o, "%u", it->iter);
    else if (strcmp(attr, "sectors") && strcmp(attr, "lanes") && strcmp(attr, "ideal") && strcmp(attr, "lines"))
        return fail(err, en, name, "a request has sectors, lanes, ideal, lines, warp, block, iter (not '%s')", attr);
    else {
        int64_t max = 64;
        ks_mem_access *acc = NULL;
        ks_mem_request req;
        int64_t n;
        for (;;) {
            ks_mem_access *a = realloc(acc, (size_t)max * sizeof *acc);
            if (!a) {
                free(acc);
                return fail(err, en, name, "out of memory");
            }
            acc = a;
            memset(&req, 0, sizeof req);
            n = ks_memory_request(&S->tr, &S->tr.events[e], 0, acc, max, &req);
            if (n <= max) break;
            max = n;
        }
        if (n < 0) {
            free(acc);
            return fail(err, en, name, "out of memory");
        }
        if (n == 0) {
            free(acc);
            return fail(err, en, name,
                        "the %s of work item %lld at tap %u touches no memory (padding): it is in no "
                        "request; focus a lane that loads",
                        ks_event_kind_name(S->tr.events[e].kind), (long long)it->index, S->tr.events[e].tap);
        }
        if (!strcmp(attr, "sectors")) put(o, "%u", req.sectors);
        else if (!strcmp(attr, "lanes")) put(o, "%u", req.lanes);
        else if (!strcmp(attr, "ideal")) put(o, "%u", req.ideal);
        else { /* lines: the distinct 128-byte lines, counted on the accesses sorted by thread */ uint32_t lines = 0;
            for (int64_t i = 0; i < n; ++i) {
                int seen = 0;
                for (int64_t j = 0; j < i && !seen; ++j) seen = acc[j].byte / 128 == acc[i].byte / 128;
                lines += !seen;
            }
            put(o, "%u", lines);
        }
        free(acc);
    }
    return 0;
}

/* One name, dispatched on its first part. */
static int lookup(const ls_session *S, const ls_ctx *c, const char *name, out_buf *o, char *err, size_t en)
{
    const char *dot = strchr(name, '.');
    char head[32];
    snprintf(head, sizeof head, "%.*s", dot ? (int)(dot - name) : (int)strlen(name), name);
    const char *rest = dot ? dot + 1 : "";
    if (!strcmp(head, "run")) {
        /* run.NAME.X: X (param, tensor, launch, ratio) of another run of the lesson; the
         * focus names belong to the step's own run */
        const char *d2 = strchr(rest, '.');
        char rn[64];
        snprintf(rn, sizeof rn, "%.*s", d2 ? (int)(d2 - rest) : (int)strlen(rest), rest);
        const ls_session *R = find_run_session(S, rn);
        if (!R) return fail(err, en, name, "the lesson has no run '%s' ('lesson' is its own run)", rn);
        static const char *const heads[] = {"param.", "tensor.", "launch.", "ratio.", "check.", "memory.", NULL};
        for (const char *const *h = heads; d2 && *h; ++h)
            if (!strncmp(d2 + 1, *h, strlen(*h))) return lookup(R, c, d2 + 1, o, err, en);
        return fail(err, en, name,
                    "run.%s takes param, tensor, launch, ratio, check or memory names (the focus is the step's)", rn);
    }
    const vw_item *it = &S->idx.items[c->item];
    if (!dot) {
        if (!strcmp(name, "index")) put(o, "%lld", (long long)it->index);
        else if (!strcmp(name, "thread")) put(o, "%lld", (long long)vw_gthread(&S->tr, it->block, it->thread));
        else if (!strcmp(name, "block")) put(o, "%u", it->block);
        else if (!strcmp(name, "tid")) put(o, "%u", it->thread);
        else if (!strcmp(name, "iter")) put(o, "%u", it->iter);
        else if (!strcmp(name, "tap")) {
            if (c->tap < 0) return fail(err, en, name, "this step has no tap in focus");
            put(o, "%lld", (long long)c->tap);
        } else
            return fail(err, en, name,
                        "unknown name (index, thread, block, tid, iter, tap, work.F, read.A, "
                        "write.A, sample.A, item.A, thread.A, element.A, param.P, launch.A, tensor.T.A, ratio.A.B, "
                        "run.NAME.X, diff.RUN.A, reads.RUN.OUT.OF.A, check.A, memory.SITE.A, request.A)");
        return 0;
    }
    if (!strcmp(head, "work")) return work_field(S, c->item, name, rest, o, err, en);
    if (!strcmp(head, "read")) return access_attr(S, c, name, KS_EV_READ, rest, o, err, en);
    if (!strcmp(head, "write")) return access_attr(S, c, name, KS_EV_WRITE, rest, o, err, en);
    if (!strcmp(head, "sample")) return access_attr(S, c, name, KS_EV_SAMPLE, rest, o, err, en);
    if (!strcmp(head, "item")) return item_attr(S, c, name, rest, o, err, en);
    if (!strcmp(head, "thread")) return thread_attr(S, c, name, rest, o, err, en);
    if (!strcmp(head, "element")) return element_attr(S, c, name, rest, o, err, en);
    if (!strcmp(head, "param")) return param_attr(S, name, rest, o, err, en);
    if (!strcmp(head, "tensor")) return tensor_attr(S, name, rest, o, err, en);
    if (!strcmp(head, "diff")) return diff_attr(S, name, rest, o, err, en);
    if (!strcmp(head, "reads")) return reads_attr(S, name, rest, o, err, en);
    if (!strcmp(head, "check")) return check_attr(S, name, rest, o, err, en);
    if (!strcmp(head, "memory")) return memory_attr(S, name, rest, o, err, en);
    if (!strcmp(head, "request")) return request_attr(S, c, name, rest, o, err, en);
    if (!strcmp(head, "ratio")) { /* ratio.A.B: elements of A over elements of B */
        char a[KS_NAME_LEN];
        const char *b = strchr(rest, '.');
        if (!b) return fail(err, en, name, "write ratio.A.B for size(A) / size(B)");
        snprintf(a, sizeof a, "%.*s", (int)(b - rest), rest);
        int ta = ks_trace_tensor(&S->tr, a), tb = ks_trace_tensor(&S->tr, b + 1);
        if (ta < 0 || tb < 0) return fail(err, en, name, "the trace has no tensor '%s'", ta < 0 ? a : b + 1);
        put_num(o, (double)ks_tensor_numel(&S->tr.tensors[ta]) / (double)ks_tensor_numel(&S->tr.tensors[tb]));
        return 0;
    }
    if (!strcmp(head, "launch")) {
        if (!strcmp(rest, "threads")) put(o, "%d", S->tr.threads);
        else if (!strcmp(rest, "blocks")) put(o, "%lld", (long long)S->tr.blocks);
        else if (!strcmp(rest, "grid")) put(o, "%lld", (long long)S->tr.blocks * S->tr.threads);
        else if (!strcmp(rest, "work_items")) put(o, "%lld", (long long)S->tr.work_items);
        else if (!strcmp(rest, "block_cap")) {
            if (S->tr.block_cap < 0) put(o, "none");
            else put(o, "%lld", (long long)S->tr.block_cap);
        } else return fail(err, en, name, "launch has threads, blocks, grid, work_items, block_cap");
        return 0;
    }
    return fail(err, en, name, "unknown name '%s'", head);
}

int ls_render(const ls_session *S, const ls_ctx *c, const char *tmpl, char *out, size_t n, char *err, size_t errn)
{
    out_buf o = {.p = out, .n = n, .len = 0};
    out[0] = 0;
    for (const char *p = tmpl; *p; ++p) {
        if (p[0] == '{' && p[1] == '{') {
            put(&o, "{");
            p++;
        } else if (p[0] == '}' && p[1] == '}') {
            put(&o, "}");
            p++;
        } else if (*p == '{') {
            const char *end = strchr(p, '}');
            char name[96];
            if (!end || end - p - 1 >= (long)sizeof name || end == p + 1) {
                snprintf(err, errn, "unclosed or empty '{' at \"%.24s\" (write {{ for a brace)", p);
                return -1;
            }
            snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
            if (lookup(S, c, name, &o, err, errn)) return -1;
            p = end;
        } else {
            put(&o, "%c", *p);
        }
    }
    return 0;
}
