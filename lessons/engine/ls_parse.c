/* ls_parse.c - a lesson file (JSON) into an ls_lesson, with structural checks: every key
 * known, every value of the right type, the operator and its parameters real, answers in
 * range. The trace-dependent checks are in ls_check.c. */
#define _POSIX_C_SOURCE 200809L
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/core/ks_error.h"
#include "../../trace/ks_file.h"
#include "ls_lesson.h"

void ls_problem(ls_report *rep, int step, const char *fmt, ...)
{
    va_list ap;
    rep->count++;
    if (!rep->out || (rep->first_only && rep->count > 1)) return;
    if (step > 0) fprintf(rep->out, "kscope: lesson: %s: step %d: ", rep->file, step);
    else fprintf(rep->out, "kscope: lesson: %s: ", rep->file);
    va_start(ap, fmt);
    vfprintf(rep->out, fmt, ap);
    va_end(ap);
    fputc('\n', rep->out);
}

/* Unknown keys are reported: a misspelt "narration" must not silently vanish. */
static void known_keys(ls_report *rep, int step, const char *what, const cJSON *o, const char *const *keys)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        int ok = 0;
        for (const char *const *k = keys; *k && !ok; ++k) ok = !strcmp(c->string, *k);
        if (ok) continue;
        char list[256] = "";
        for (const char *const *k = keys; *k; ++k)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k == keys ? "" : ", ", *k);
        ls_problem(rep, step, "%s: unknown key '%s' (known: %s)", what, c->string, list);
    }
}

static const char *get_string(ls_report *rep, int step, const cJSON *o, const char *key, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (required) ls_problem(rep, step, "'%s' is missing", key);
        return NULL;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
        ls_problem(rep, step, "'%s' must be a non-empty string", key);
        return NULL;
    }
    return v->valuestring;
}

/* An integer value: whole, within [lo, hi]. */
static int get_int(ls_report *rep, int step, const cJSON *v, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo ||
        v->valuedouble > (double)hi) {
        ls_problem(rep, step, "%s must be an integer in %lld..%lld", what, (long long)lo, (long long)hi);
        return -1;
    }
    *out = (int64_t)v->valuedouble;
    return 0;
}

/* [a, b, ...] of integers into out (at most max). Returns the count or -1. */
static int get_ints(ls_report *rep, int step, const cJSON *v, const char *what, int min, int max, int64_t lo,
                    int64_t *out)
{
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < min || n > max) {
        ls_problem(rep, step, "%s must be a list of %d to %d integers", what, min, max);
        return -1;
    }
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, ++i)
        if (get_int(rep, step, c, what, lo, INT32_MAX, &out[i])) return -1;
    return n;
}

/* "tap": k or [i, j] */
static void parse_tap(ls_report *rep, int step, const cJSON *v, ls_focus *f)
{
    if (!v) return;
    f->tap_given = 1;
    if (cJSON_IsArray(v)) {
        f->tap_pair = 1;
        get_ints(rep, step, v, "tap", 2, 2, 0, f->tap);
    } else {
        get_int(rep, step, v, "tap", 0, 65535, &f->tap[0]);
    }
}

static void parse_focus(ls_report *rep, int step, const cJSON *o, ls_focus *f, const char *what)
{
    static const char *const keys[] = {"index", "thread", "iter", "tensor", "at", "tap", "event", NULL};
    memset(f, 0, sizeof *f);
    if (!cJSON_IsObject(o)) {
        ls_problem(rep, step, "%s must be an object", what);
        return;
    }
    known_keys(rep, step, what, o, keys);
    const cJSON *index = cJSON_GetObjectItemCaseSensitive(o, "index");
    const cJSON *thread = cJSON_GetObjectItemCaseSensitive(o, "thread");
    const cJSON *tensor = cJSON_GetObjectItemCaseSensitive(o, "tensor");
    const cJSON *iter = cJSON_GetObjectItemCaseSensitive(o, "iter");
    const cJSON *tap = cJSON_GetObjectItemCaseSensitive(o, "tap");
    if (!!index + !!thread + !!tensor > 1 || (!index && !thread && !tensor && !tap)) {
        ls_problem(rep, step, "%s needs one of index, thread or tensor (with at), or only a tap", what);
        return;
    }
    if (!index && !thread && !tensor) {
        f->kind = LS_FOCUS_KEEP; /* the same work item, another tap */
    } else if (index) {
        f->kind = LS_FOCUS_INDEX;
        get_int(rep, step, index, "focus index", 0, INT64_MAX / 2, &f->index);
    } else if (thread) {
        f->kind = LS_FOCUS_THREAD;
        get_int(rep, step, thread, "focus thread", 0, INT64_MAX / 2, &f->thread);
        if (iter) get_int(rep, step, iter, "focus iter", 0, UINT32_MAX, &f->iter);
    } else {
        f->kind = LS_FOCUS_ELEMENT;
        if (!cJSON_IsString(tensor)) ls_problem(rep, step, "%s: tensor must be a tensor name", what);
        else snprintf(f->tensor, sizeof f->tensor, "%s", tensor->valuestring);
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "at");
        if (!at) ls_problem(rep, step, "%s: a tensor focus needs \"at\": [coordinates]", what);
        else f->ncoord = get_ints(rep, step, at, "at", 1, KS_MAX_DIMS, 0, f->coord);
    }
    if (iter && !thread) ls_problem(rep, step, "%s: iter goes with thread", what);
    parse_tap(rep, step, tap, f);
    /* "event": which of the tap's events to focus (deformable sampling: the sample, not
     * the offset read that comes first) */
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
    if (ev) {
        static const char *const kinds[] = {"read", "sample", "write"};
        for (int i = 0; i < 3 && cJSON_IsString(ev); ++i)
            if (!strcmp(ev->valuestring, kinds[i])) f->event_kind = KS_EV_READ + i;
        if (!f->event_kind) ls_problem(rep, step, "%s: event must be read, sample or write", what);
        else if (!tap) ls_problem(rep, step, "%s: event goes with a tap", what);
    }
}

static void parse_question(ls_report *rep, int step, const cJSON *o, ls_question *q)
{
    static const char *const keys[] = {"kind", "prompt", "choices", "answer", "check", "explain", "hint",
                                       "hide", "index",  "thread",  "iter",   "tap",   "tensor",  NULL};
    if (!cJSON_IsObject(o)) {
        ls_problem(rep, step, "question must be an object");
        return;
    }
    known_keys(rep, step, "question", o, keys);
    const char *kind = get_string(rep, step, o, "kind", 1);
    q->prompt = get_string(rep, step, o, "prompt", 1);
    q->explain = get_string(rep, step, o, "explain", 1);
    q->check = get_string(rep, step, o, "check", 0);
    q->hint = get_string(rep, step, o, "hint", 0);
    /* "hide": "output" or ["output", "columns", "padding"]: what the question slide must not draw */
    const cJSON *hide = cJSON_GetObjectItemCaseSensitive(o, "hide");
    if (cJSON_IsString(hide)) q->hide[q->nhide++] = hide->valuestring;
    else if (cJSON_IsArray(hide) && cJSON_GetArraySize(hide) >= 1 && cJSON_GetArraySize(hide) <= 3) {
        for (const cJSON *c = hide->child; c; c = c->next)
            if (cJSON_IsString(c)) q->hide[q->nhide++] = c->valuestring;
            else ls_problem(rep, step, "question: hide must be a name or up to three");
    } else if (hide) ls_problem(rep, step, "question: hide must be a name or up to three");
    const cJSON *answer = cJSON_GetObjectItemCaseSensitive(o, "answer");
    /* the question may look at another work item or tap than its step */
    cJSON *f = cJSON_CreateObject();
    static const char *const fk[] = {"index", "thread", "iter", "tap", NULL};
    for (const char *const *k = fk; *k; ++k) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *k);
        if (v) cJSON_AddItemToObject(f, *k, cJSON_Duplicate(v, 1));
    }
    if (f->child) parse_focus(rep, step, f, &q->at, "question");
    cJSON_Delete(f);
    if (!kind) return;
    if (!answer) {
        ls_problem(rep, step, "question: 'answer' is missing");
        return;
    }
    if (!strcmp(kind, "choice")) {
        q->kind = LS_Q_CHOICE;
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(o, "choices");
        int n = cJSON_IsArray(ch) ? cJSON_GetArraySize(ch) : 0;
        if (n < 2 || n > LS_MAX_CHOICES) {
            ls_problem(rep, step, "question: choices must be a list of 2 to %d strings", LS_MAX_CHOICES);
            return;
        }
        for (const cJSON *c = ch->child; c; c = c->next) {
            if (!cJSON_IsString(c)) {
                ls_problem(rep, step, "question: choices must be strings");
                return;
            }
            q->choices[q->nchoices++] = c->valuestring;
        }
        int64_t a;
        if (!get_int(rep, step, answer, "question: answer (the number of the right choice)", 1, n, &a))
            q->answer = (int)a - 1;
    } else if (!strcmp(kind, "number")) {
        q->kind = LS_Q_NUMBER;
        if (!cJSON_IsNumber(answer)) ls_problem(rep, step, "question: answer must be a number");
        else q->number = answer->valuedouble;
        if (!q->check)
            ls_problem(rep, step,
                       "question: a number question needs a check template that "
                       "computes the answer from the trace");
    } else if (!strcmp(kind, "cell")) {
        q->kind = LS_Q_CELL;
        if (!q->at.tap_given) ls_problem(rep, step, "question: a cell question needs a tap");
        const char *t = get_string(rep, step, o, "tensor", 0);
        if (t) snprintf(q->tensor, sizeof q->tensor, "%s", t);
        q->ncell = get_ints(rep, step, answer, "question: answer (y, x) or (plane, y, x)", 2, 3, INT32_MIN, q->cell);
    } else {
        ls_problem(rep, step, "question: kind must be choice, number or cell (got '%s')", kind);
    }
}

static int find_run(const ls_lesson *L, const char *name);

/* "tables": at most two panels drawn as tables, each {"tensor": T, "index": the rows'
 * heading, "columns": [headings], "beside": a tensor of as many rows, "transpose": true,
 * "marks": false, "rows": [a, b]}; names are checked against the run with the others */
static void parse_table(ls_report *rep, int k, const cJSON *t, ls_table *tb)
{
    static const char *const keys[] = {"tensor", "index", "columns", "beside", "transpose", "marks", "rows", NULL};
    if (!cJSON_IsObject(t)) {
        ls_problem(rep, k, "tables: each entry must be an object with a tensor");
        return;
    }
    known_keys(rep, k, "table", t, keys);
    tb->tensor = get_string(rep, k, t, "tensor", 1);
    tb->index = get_string(rep, k, t, "index", 0);
    tb->beside = get_string(rep, k, t, "beside", 0);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "transpose");
    if (v && !cJSON_IsBool(v)) ls_problem(rep, k, "tables: transpose must be true or false");
    tb->transpose = cJSON_IsTrue(v);
    v = cJSON_GetObjectItemCaseSensitive(t, "marks");
    if (v && !cJSON_IsBool(v)) ls_problem(rep, k, "tables: marks must be true or false");
    tb->marks = !cJSON_IsFalse(v);
    tb->row0 = 0, tb->row1 = -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(t, "rows"))) {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(v->child) ||
            !cJSON_IsNumber(v->child->next) || v->child->valuedouble < 0 ||
            v->child->next->valuedouble < v->child->valuedouble || v->child->next->valuedouble > 1e9)
            ls_problem(rep, k, "tables: rows must be [first, last], 0 <= first <= last");
        else tb->row0 = (int64_t)v->child->valuedouble, tb->row1 = (int64_t)v->child->next->valuedouble;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(t, "columns"))) {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > LS_TABLE_COLS)
            ls_problem(rep, k, "tables: columns must be a list of at most %d headings", LS_TABLE_COLS);
        else
            for (const cJSON *c = v->child; c; c = c->next)
                if (cJSON_IsString(c) && strlen(c->valuestring) < 16) tb->cols[tb->ncols++] = c->valuestring;
                else ls_problem(rep, k, "tables: a column heading must be a string of at most 15 characters");
    }
    if (tb->index && strlen(tb->index) >= 16) ls_problem(rep, k, "tables: index must be at most 15 characters");
}

static void parse_tables(ls_report *rep, int k, const cJSON *v, ls_step *s)
{
    if (!v) return;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > 2) {
        ls_problem(rep, k, "tables must be a list of at most two tables");
        return;
    }
    for (const cJSON *t = v->child; t; t = t->next) parse_table(rep, k, t, &s->tables[s->ntables++]);
}

static void parse_step(ls_report *rep, int k, const cJSON *o, ls_step *s, const ls_lesson *L)
{
    static const char *const keys[] = {"title",   "text",     "notes",  "focus", "show",    "panels",
                                       "mode",    "question", "run",    "order", "strip",   "draw",
                                       "weights", "planes",   "tables", "about", "padding", NULL};
    if (!cJSON_IsObject(o)) {
        ls_problem(rep, k, "a step must be an object");
        return;
    }
    known_keys(rep, k, "step", o, keys);
    s->title = get_string(rep, k, o, "title", 1);
    s->text = s->slide_text = get_string(rep, k, o, "text", 1);
    /* "notes": more narration for the terminal player (a slide shows "text" alone, at
     * most five lines at 1024x768: issue 38 D1); players and checks read both as one */
    const char *notes = get_string(rep, k, o, "notes", 0);
    if (notes && s->text) {
        const size_t n = strlen(s->text) + strlen(notes) + 2;
        char *both = malloc(n);
        if (both) {
            snprintf(both, n, "%s %s", s->text, notes);
            /* owned by the document: freed with it */
            cJSON *item = cJSON_CreateString(both);
            if (item) cJSON_AddItemToObject((cJSON *)o, "notes + text", item), s->text = item->valuestring;
            free(both);
        }
    }
    const cJSON *strip = cJSON_GetObjectItemCaseSensitive(o, "strip");
    if (strip && !cJSON_IsBool(strip)) ls_problem(rep, k, "strip must be true or false");
    s->strip = cJSON_IsTrue(strip);
    /* "weights": false keeps a sample's corner weights off the slide: a later step asks one */
    const cJSON *weights = cJSON_GetObjectItemCaseSensitive(o, "weights");
    if (weights && !cJSON_IsBool(weights)) ls_problem(rep, k, "weights must be true or false");
    s->no_weights = cJSON_IsFalse(weights);
    /* "padding": false prints what padding taps read and write as ?: a later step asks it */
    const cJSON *padding = cJSON_GetObjectItemCaseSensitive(o, "padding");
    if (padding && !cJSON_IsBool(padding)) ls_problem(rep, k, "padding must be true or false");
    s->no_padding = cJSON_IsFalse(padding);
    /* "draw": the ideas the slide draws from the trace (vw_slide.h's VW_FIGURE_*) */
    const cJSON *draw = cJSON_GetObjectItemCaseSensitive(o, "draw");
    if (draw && !cJSON_IsArray(draw)) ls_problem(rep, k, "draw must be a list of figure names");
    for (const cJSON *f = draw && cJSON_IsArray(draw) ? draw->child : NULL; f; f = f->next) {
        static const char *const figures[] = {"windows-h", "windows-w", "clamp", "dropped", "window",  "waves",  "warp",
                                              "block",     "",          "race",  "input",   "as-read", "sectors"};
        int bit = 0;
        for (int i = 0; i < 13; ++i) /* 8: samples:RUN, below */
            if (figures[i][0] && cJSON_IsString(f) && !strcmp(f->valuestring, figures[i])) bit = 1 << i;
        /* "samples:RUN": a recorded kernel's loads have no sample points; another run of
         * the same work (our operator's) has them (lesson 14 steps 4-5) */
        if (cJSON_IsString(f) && !strncmp(f->valuestring, "samples:", 8)) {
            const int r = find_run(L, f->valuestring + 8);
            if (r < 0) ls_problem(rep, k, "draw: '%s': the lesson has no run '%s'", f->valuestring, f->valuestring + 8);
            else bit = 1 << 8, s->guide_run = r + 1; /* VW_FIGURE_SAMPLES */
        }
        /* "point:Y,X": a point of the left panel's plane, marked with the value a bilinear
         * read there gives (lesson 07 step 8: the kernel's read and the swapped one) */
        double py, px;
        char tail;
        if (cJSON_IsString(f) && !strncmp(f->valuestring, "point:", 6)) {
            if (sscanf(f->valuestring + 6, "%lf,%lf%c", &py, &px, &tail) != 2 || !(fabs(py) < 1e6) || !(fabs(px) < 1e6))
                ls_problem(rep, k, "draw: '%s': a point is point:Y,X", f->valuestring);
            else if (s->npoints >= 2) ls_problem(rep, k, "draw: at most two points");
            else s->point[s->npoints][0] = py, s->point[s->npoints++][1] = px, bit = 1 << 14; /* VW_FIGURE_POINTS */
        }
        /* "swap": the second point is the first read the wrong way round: drawn red, with a
         * dashed line from the first (lesson 07 step 8); without it, both are green points
         * of equal standing (07 step 1: the two points the patches are cut around) */
        if (cJSON_IsString(f) && !strcmp(f->valuestring, "swap")) bit = 1 << 15; /* VW_FIGURE_SWAP */
        /* "tap": the focused tap's accesses by every work item (lesson 02 step 7: a row of
         * the columns is the image seen through one tap) */
        if (cJSON_IsString(f) && !strcmp(f->valuestring, "tap")) bit = 1 << 16; /* VW_FIGURE_TAP */
        /* "extent:RUN": the same tensor's extent in run RUN, outlined (lesson 12 step 11) */
        if (cJSON_IsString(f) && !strncmp(f->valuestring, "extent:", 7)) {
            const int r = find_run(L, f->valuestring + 7);
            if (r < 0) ls_problem(rep, k, "draw: '%s': the lesson has no run '%s'", f->valuestring, f->valuestring + 7);
            else bit = 1 << 13, s->guide_run = r + 1; /* VW_FIGURE_EXTENT */
        }
        if (!bit)
            ls_problem(
                rep, k,
                "draw: '%s' is not a figure (windows-h, windows-w, clamp, dropped, window, waves, warp, block, race, input, "
                "as-read, sectors, samples:RUN, extent:RUN, point:Y,X, swap, tap)",
                cJSON_IsString(f) ? f->valuestring : "(not a string)");
        s->figure |= bit;
    }
    if ((s->figure & (1 << 15)) && s->npoints != 2) ls_problem(rep, k, "draw: 'swap' needs two points (point:Y,X)");
    parse_tables(rep, k, cJSON_GetObjectItemCaseSensitive(o, "tables"), s);
    const char *order = get_string(rep, k, o, "order", 0);
    if (order) {
        static const char *const orders[] = {"recorded", "thread", "iter"};
        for (int i = 0; i < 3; ++i)
            if (!strcmp(order, orders[i])) s->order = i + 1;
        if (!s->order) ls_problem(rep, k, "order must be recorded, thread or iter (got '%s')", order);
    }
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "focus"))) parse_focus(rep, k, v, &s->focus, "focus");
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "show"))) {
        int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
        if (n < 0 || n > LS_MAX_SHOW) ls_problem(rep, k, "show must be a list of at most %d names", LS_MAX_SHOW);
        else
            for (const cJSON *c = v->child; c; c = c->next)
                if (cJSON_IsString(c)) s->show[s->nshow++] = c->valuestring;
                else ls_problem(rep, k, "show: every entry must be a name");
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "panels"))) {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsString(v->child) ||
            !cJSON_IsString(v->child->next))
            ls_problem(rep, k, "panels must be two tensor names [left, right]");
        else s->panels[0] = v->child->valuestring, s->panels[1] = v->child->next->valuestring;
    }
    /* "about": "out_sites": the panel the step is about, where its focus lies on the other */
    s->about = get_string(rep, k, o, "about", 0);
    /* "planes": [0, 1]: the plane each panel shows, -1 for the one the focus touches */
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "planes"))) {
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(v->child) ||
            !cJSON_IsNumber(v->child->next) || v->child->valuedouble < -1 || v->child->next->valuedouble < -1 ||
            v->child->valuedouble > 1e6 || v->child->next->valuedouble > 1e6)
            ls_problem(rep, k, "planes must be two plane numbers [left, right] (-1: the focus's)");
        else s->planes[0] = v->child->valueint + 1, s->planes[1] = v->child->next->valueint + 1;
    }
    /* "mode": "reads" for both panels, or ["reads", "values"], one per panel */
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(o, "mode");
    if (cJSON_IsArray(mode) && cJSON_GetArraySize(mode) == 2 && cJSON_IsString(mode->child) &&
        cJSON_IsString(mode->child->next))
        s->panel_mode[0] = mode->child->valuestring, s->panel_mode[1] = mode->child->next->valuestring;
    else if (mode && !cJSON_IsString(mode)) ls_problem(rep, k, "mode must be a mode name or two, [left, right]");
    else s->mode = mode ? mode->valuestring : NULL;
    for (int p = 0; p < 3; ++p) {
        const char *m = p < 2 ? s->panel_mode[p] : s->mode;
        if (m && ls_mode_number(m) < 0)
            ls_problem(rep, k, "mode must be values, reads, weights, writes, visits or sectors (got '%s')", m);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "question"))) parse_question(rep, k, v, &s->q);
    const char *run = get_string(rep, k, o, "run", 0);
    if (run && (s->run = find_run(L, run)) < 0) {
        char list[300] = "";
        for (int r = 1; r < L->nruns; ++r)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", r > 1 ? ", " : "", L->runs[r].name);
        ls_problem(rep, k, "run: the lesson has no run '%s' (runs: %s)", run, list[0] ? list : "none");
        s->run = 0;
    }
}

/* One parameter value as the command line would spell it: true -> on, [3, 2] -> "3,2". */
static int param_text(const cJSON *c, char *buf, size_t n)
{
    if (cJSON_IsBool(c)) return snprintf(buf, n, "%s", cJSON_IsTrue(c) ? "on" : "off"), 0;
    if (cJSON_IsString(c)) return snprintf(buf, n, "%s", c->valuestring), 0;
    if (cJSON_IsNumber(c)) return snprintf(buf, n, "%.17g", c->valuedouble), 0;
    if (cJSON_IsArray(c) && cJSON_GetArraySize(c) == 2 && cJSON_IsNumber(c->child) && cJSON_IsNumber(c->child->next))
        return snprintf(buf, n, "%.17g,%.17g", c->child->valuedouble, c->child->next->valuedouble), 0;
    return -1;
}

/* One set of "params": {"kernel-size": [3, 3], "padding": 1, ...} in the CLI's flag names,
 * each set through the registry exactly as the flag would be; `what` names it in problems. */
static void apply_params(ls_report *rep, ks_run *run, const cJSON *o, const char *what)
{
    if (o && !cJSON_IsObject(o)) ls_problem(rep, 0, "%s must be an object of operator parameters", what);
    for (const cJSON *c = cJSON_IsObject(o) ? o->child : NULL; c; c = c->next) {
        char text[128];
        if (param_text(c, text, sizeof text))
            ls_problem(rep, 0, "%s: %s takes a number, [a, b], true/false or a word", what, c->string);
        else if (ks_run_set(run, c->string, text)) ls_problem(rep, 0, "%s: %s", what, ks_error_message());
    }
}

/* Run r's parameters: the lesson's "params", then (a run of "runs") its own on top. */
static void parse_params(ls_report *rep, ls_lesson *L, ls_run_spec *spec, const cJSON *lesson, const cJSON *own,
                         const char *what)
{
    static ks_run run; /* large: keep it off the stack */
    ks_run_init(&run, spec->op ? spec->op : L->op);
    ls_report quiet = {.out = NULL, .file = rep->file, .count = 0, .first_only = 0};
    /* a run of another operator takes only its own params; a run's copy of the lesson's
     * params is reported once, for run 0 */
    if (!spec->op) apply_params(own ? &quiet : rep, &run, lesson, "params");
    if (own) apply_params(rep, &run, own, what);
    memcpy(spec->value, run.value, sizeof spec->value);
    memcpy(spec->fvalue, run.fvalue, sizeof spec->fvalue);
    memcpy(spec->set, run.set, sizeof spec->set);
    memcpy(spec->nvalues, run.nvalues, sizeof spec->nvalues);
    spec->trace_kernel = run.trace_kernel;
}

/* "runs": {"NAME": {"params": {...}}, "OTHER": {"trace": "file.kst"},
 * "THIRD": {"operator": "col2im", "params": {...}}, ...}: more runs of the same operator,
 * runs of another operator (its own params on its defaults; the lesson's pattern, seed and
 * launch, not its inputs), or recorded traces */
static void parse_runs(ls_report *rep, ls_lesson *L, const cJSON *lesson_params, const cJSON *o)
{
    static const char *const keys[] = {"operator", "params", "trace", "shape", NULL};
    if (!cJSON_IsObject(o)) {
        ls_problem(rep, 0, "runs must be an object: run name -> {\"params\": {...}} or {\"trace\": \"file.kst\"}");
        return;
    }
    for (const cJSON *c = o->child; c; c = c->next) {
        char what[96];
        snprintf(what, sizeof what, "runs: %.40s", c->string);
        if (L->nruns == LS_MAX_RUNS) {
            ls_problem(rep, 0, "runs: at most %d runs besides the lesson's own", LS_MAX_RUNS - 1);
            return;
        }
        if (!cJSON_IsObject(c) || !c->string[0]) {
            ls_problem(rep, 0, "%s must be an object {\"params\": {...}} or {\"trace\": \"file.kst\"}", what);
            continue;
        }
        known_keys(rep, 0, what, c, keys);
        if (find_run(L, c->string) > 0) ls_problem(rep, 0, "%s: a second run of that name", what);
        if (!strcmp(c->string, "lesson") || strchr(c->string, '.') || strchr(c->string, '}'))
            ls_problem(rep, 0, "%s: a run's name cannot be 'lesson' (the lesson's own run) or hold '.' or '}'", what);
        ls_run_spec *spec = &L->runs[L->nruns++];
        spec->name = c->string;
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(c, "params");
        if (cJSON_GetObjectItemCaseSensitive(c, "trace")) {
            spec->trace = get_string(rep, 0, c, "trace", 1);
            if (params) ls_problem(rep, 0, "%s: params or trace, not both (a recorded trace has its own)", what);
            /* "shape": {"tile": [16, 16]}: a 1-D tensor of the trace seen as rows x columns */
            const cJSON *shape = cJSON_GetObjectItemCaseSensitive(c, "shape");
            if (shape) {
                const cJSON *d = cJSON_IsObject(shape) && shape->child && !shape->child->next ? shape->child : NULL;
                if (!d || !cJSON_IsArray(d) || cJSON_GetArraySize(d) != 2 ||
                    !cJSON_IsNumber(cJSON_GetArrayItem(d, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(d, 1)) ||
                    cJSON_GetArrayItem(d, 0)->valuedouble < 1 || cJSON_GetArrayItem(d, 1)->valuedouble < 1) {
                    ls_problem(rep, 0, "%s: shape must be {\"TENSOR\": [rows, columns]} (one tensor)", what);
                } else {
                    spec->reshape = d->string;
                    spec->reshape_dims[0] = (int64_t)cJSON_GetArrayItem(d, 0)->valuedouble;
                    spec->reshape_dims[1] = (int64_t)cJSON_GetArrayItem(d, 1)->valuedouble;
                }
            }
            if (cJSON_GetObjectItemCaseSensitive(c, "operator"))
                ls_problem(rep, 0, "%s: operator or trace, not both", what);
            continue;
        }
        if (cJSON_GetObjectItemCaseSensitive(c, "shape"))
            ls_problem(rep, 0, "%s: shape applies to a recorded trace's run only", what);
        const char *op = get_string(rep, 0, c, "operator", 0);
        if (op && !(spec->op = ks_op_find(op))) {
            ls_problem(rep, 0, "%s: unknown operator '%s' (kscope list)", what, op);
            continue;
        }
        if (!L->op && !spec->op) {
            ls_problem(rep, 0, "%s: needs a \"trace\" (the lesson has no operator to run with params)", what);
            continue;
        }
        char pw[120];
        snprintf(pw, sizeof pw, "%s: params", what);
        parse_params(rep, L, spec, lesson_params, params, pw);
    }
}

/* A step's "run": the name of one of "runs" */
static int find_run(const ls_lesson *L, const char *name)
{
    for (int r = 1; r < L->nruns; ++r)
        if (!strcmp(L->runs[r].name, name)) return r;
    return -1;
}

static void parse_inputs(ls_report *rep, ls_lesson *L, const cJSON *o)
{
    static const char *const keys[] = {"npy", "image", "gray", "size", "values", "shape", NULL};
    if (!cJSON_IsObject(o)) {
        ls_problem(rep, 0, "inputs must be an object: tensor name -> source");
        return;
    }
    for (const cJSON *c = o->child; c; c = c->next) {
        int t = ks_op_tensor(L->op, c->string);
        if (t < 0 || L->op->tensors[t].output) {
            ls_problem(rep, 0, "inputs: %s has no input tensor '%s'", L->op->name, c->string);
            continue;
        }
        if (L->ninputs == LS_MAX_INPUTS || !cJSON_IsObject(c)) {
            ls_problem(rep, 0, "inputs: %s must be an object (npy, image or values)", c->string);
            continue;
        }
        ls_input *in = &L->inputs[L->ninputs++];
        in->tensor = c->string;
        known_keys(rep, 0, "inputs", c, keys);
        in->npy = get_string(rep, 0, c, "npy", 0);
        in->image = get_string(rep, 0, c, "image", 0);
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(c, "values");
        if (!!in->npy + !!in->image + !!vals != 1) {
            ls_problem(rep, 0, "inputs: %s needs exactly one of npy, image or values", c->string);
            continue;
        }
        in->gray = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "gray"));
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(c, "size");
        if (size) get_ints(rep, 0, size, "inputs: size", 2, 2, 1, in->size);
        if (vals) {
            const cJSON *shape = cJSON_GetObjectItemCaseSensitive(c, "shape");
            in->ndim = shape ? get_ints(rep, 0, shape, "inputs: shape", 1, KS_MAX_DIMS, 1, in->shape) : -1;
            if (in->ndim < 0) {
                ls_problem(rep, 0, "inputs: %s: values need a shape", c->string);
                continue;
            }
            int64_t want = ks_shape_numel(in->ndim, in->shape, KS_F32);
            int n = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : -1;
            if (n != want) {
                ls_problem(rep, 0, "inputs: %s: %d values for shape of %lld elements", c->string, n, (long long)want);
                continue;
            }
            in->values = malloc((size_t)(n ? n : 1) * sizeof *in->values);
            in->nvalues = n;
            int i = 0;
            for (const cJSON *x = vals->child; x; x = x->next, ++i) {
                if (!cJSON_IsNumber(x)) {
                    ls_problem(rep, 0, "inputs: %s: values must be numbers", c->string);
                    break;
                }
                in->values[i] = x->valuedouble;
            }
        }
    }
}

static void parse_top(ls_report *rep, ls_lesson *L, const cJSON *root)
{
    static const char *const keys[] = {"title",   "level", "summary", "operator", "trace", "params", "runs",
                                       "pattern", "seed",  "launch",  "inputs",   "steps", NULL};
    if (!cJSON_IsObject(root)) {
        ls_problem(rep, 0, "a lesson must be a JSON object");
        return;
    }
    known_keys(rep, 0, "lesson", root, keys);
    L->title = get_string(rep, 0, root, "title", 1);
    L->level = get_string(rep, 0, root, "level", 1);
    L->summary = get_string(rep, 0, root, "summary", 0);
    if (L->level && strcmp(L->level, "beginner") && strcmp(L->level, "intermediate") && strcmp(L->level, "advanced"))
        ls_problem(rep, 0, "level must be beginner, intermediate or advanced (got '%s')", L->level);
    const cJSON *v;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (cJSON_GetObjectItemCaseSensitive(root, "trace")) {
        /* the lesson's own run is a recorded trace: nothing to run, so nothing to run it with */
        static const char *const run_keys[] = {"operator", "params", "pattern", "seed", "launch", "inputs", NULL};
        L->nruns = 1;
        L->runs[0].trace = get_string(rep, 0, root, "trace", 1);
        if (cJSON_GetObjectItemCaseSensitive(root, "operator"))
            ls_problem(rep, 0, "operator and trace: a lesson runs an operator or reads a recorded trace, not both");
        for (const char *const *k = run_keys + 1; *k; ++k)
            if (cJSON_GetObjectItemCaseSensitive(root, *k))
                ls_problem(rep, 0, "%s goes with an operator to run; a lesson of a recorded \"trace\" has none", *k);
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "runs"))) parse_runs(rep, L, NULL, v);
        goto steps;
    }
    const char *op = get_string(rep, 0, root, "operator", 0);
    if (!op && !cJSON_GetObjectItemCaseSensitive(root, "operator"))
        ls_problem(rep, 0, "'operator' is missing (or give a recorded \"trace\")");
    if (op && !(L->op = ks_op_find(op))) ls_problem(rep, 0, "unknown operator '%s' (kscope list)", op);
    if (!L->op) return;
    L->nruns = 1;
    parse_params(rep, L, &L->runs[0], params, NULL, "params");
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "runs"))) parse_runs(rep, L, params, v);
    const char *pat = get_string(rep, 0, root, "pattern", 0);
    L->pattern = KS_PAT_ARANGE;
    if (pat && !strcmp(pat, "ones")) L->pattern = KS_PAT_ONES;
    else if (pat && !strcmp(pat, "random")) L->pattern = KS_PAT_RANDOM;
    else if (pat && strcmp(pat, "arange")) ls_problem(rep, 0, "pattern must be arange, ones or random");
    int64_t seed = 0;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "seed")) && !get_int(rep, 0, v, "seed", 0, INT64_MAX / 2, &seed))
        L->seed = (uint64_t)seed;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "launch"))) {
        static const char *const lk[] = {"threads", "block-cap", NULL};
        int64_t x;
        if (!cJSON_IsObject(v)) ls_problem(rep, 0, "launch must be an object {threads, block-cap}");
        else {
            known_keys(rep, 0, "launch", v, lk);
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "threads");
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(v, "block-cap");
            if (t && !get_int(rep, 0, t, "launch: threads", 1, 1024, &x)) L->threads = (int)x;
            if (b && !get_int(rep, 0, b, "launch: block-cap", -1, INT32_MAX, &x)) {
                if (x == 0) ls_problem(rep, 0, "launch: block-cap must be >= 1, or -1 for none");
                L->block_cap = x;
            }
        }
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "inputs"))) parse_inputs(rep, L, v);
steps:
    v = cJSON_GetObjectItemCaseSensitive(root, "steps");
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 1 || n > LS_MAX_STEPS) {
        ls_problem(rep, 0, "steps must be a list of 1 to %d steps", LS_MAX_STEPS);
        return;
    }
    int k = 0;
    for (const cJSON *c = v->child; c; c = c->next, ++k) parse_step(rep, k + 1, c, &L->steps[k], L);
    L->nsteps = n;
}

/* Line and column of p in text, for the JSON error. */
static void locate(const char *text, const char *p, int *line, int *col)
{
    *line = 1, *col = 1;
    for (const char *c = text; c < p && *c; ++c) {
        if (*c == '\n') (*line)++, *col = 1;
        else (*col)++;
    }
}

int ls_load(ls_lesson *L, const char *path, ls_report *rep)
{
    memset(L, 0, sizeof *L);
    snprintf(L->path, sizeof L->path, "%s", path);
    snprintf(L->dir, sizeof L->dir, "%s", path);
    char *slash = strrchr(L->dir, '/');
    if (slash) *slash = 0;
    else snprintf(L->dir, sizeof L->dir, ".");
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(L->id, sizeof L->id, "%s", base);
    char *dot = strstr(L->id, ".json");
    if (dot) *dot = 0;
    if (!rep->file) rep->file = path;
    FILE *f = ks_in_fopen(path); /* a FIFO is refused, not waited on */
    if (!f) {
        const char *why = ks_error_message(); /* "PATH: cannot open: ..." or "PATH: not a regular file" */
        if (!strncmp(why, path, strlen(path)) && why[strlen(path)] == ':') why += strlen(path) + 2;
        ls_problem(rep, 0, "%s", why);
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *t = realloc(text, cap = cap ? cap * 2 : 65536);
            if (!t) break;
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
        if (len > (1u << 24)) break;
    }
    int bad = ferror(f) || !text || len > (1u << 24);
    fclose(f);
    if (bad) {
        free(text);
        ls_problem(rep, 0, "cannot read the file (or it is over 16 MB)");
        return -1;
    }
    text[len] = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line, col;
        const char *at = cJSON_GetErrorPtr();
        locate(text, at ? at : text + len, &line, &col);
        char near[24] = "";
        for (int i = 0; at && at[i] && i < 20; ++i) near[i] = (at[i] == '\n' || at[i] == '\t') ? ' ' : at[i];
        ls_problem(rep, 0, "line %d, column %d: malformed JSON near '%s'", line, col, near);
        free(text);
        return -1;
    }
    free(text);
    L->json = root;
    parse_top(rep, L, root);
    return rep->count ? -1 : 0;
}

void ls_free(ls_lesson *L)
{
    for (int i = 0; i < L->ninputs; ++i) free(L->inputs[i].values);
    cJSON_Delete(L->json);
    memset(L, 0, sizeof *L);
}
