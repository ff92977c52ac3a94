/* ls_slides.c - a lesson as viewer slides: the same rendered text as the terminal player,
 * with each step's focus turned into what the viewer shows. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ls_slides.h"

#include "../../trace/step_work.h"

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

int ls_mode_number(const char *name)
{
    /* in vw_mode's order (viewer/vw_state.h) */
    static const char *const names[] = {"values", "reads", "weights", "writes", "visits", "sectors"};
    for (int i = 0; name && i < (int)(sizeof names / sizeof names[0]); ++i)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

/* The work fields template t names ({work.i}), appended to fields as " i j ". */
static void narrated_fields(const char *t, char *fields, size_t n)
{
    for (const char *p = t ? strstr(t, "{work.") : NULL; p; p = strstr(p + 1, "{work.")) {
        const char *name = p + 6, *end = strchr(name, '}');
        if (!end || end - name > 40) continue;
        const size_t used = strlen(fields);
        snprintf(fields + used, n - used, "%s%.*s ", used ? "" : " ", (int)(end - name), name);
    }
}

/* Whether p stands inside a tensor's index, "output[n, o, h_out]": the nearest bracket
 * open before it is a '['. A list in parentheses, "rows (batch, y, x)", may be any
 * tuple of the prose; its middle words count as no field. */
static int in_index(const char *text, const char *p)
{
    for (const char *q = p; q > text; --q) {
        if (q[-1] == '[') return 1;
        if (q[-1] == '(' || q[-1] == ')' || q[-1] == ']') return 0;
    }
    return 0;
}

/* Whether p stands inside a parenthesised tuple that names a field of more than one
 * letter of the site as a word: "(c_im, b, h_col, w_col)" lists fields, where its middle
 * "b" is one (issue 38 D4, thirteenth re-trial N26: 05 s2's title); "(batch, y, x)" is
 * prose. */
static int in_field_tuple(const char *text, const char *p, const ks_site *site)
{
    const char *open = NULL, *close = NULL;
    for (const char *q = p; q > text && !open; --q) {
        if (q[-1] == ')' || q[-1] == '[' || q[-1] == ']') return 0;
        if (q[-1] == '(') open = q;
    }
    for (const char *q = p; *q && !close; ++q) {
        if (*q == '(' || *q == '[' || *q == ']') return 0;
        if (*q == ')') close = q;
    }
    if (!open || !close) return 0;
    for (int g = 0; g < site->nfields; ++g) {
        const size_t len = strlen(site->fields[g].name);
        if (len < 2) continue;
        for (const char *q = open; q + len <= close; ++q) {
            if (strncmp(q, site->fields[g].name, len)) continue;
            const char b = q > open ? q[-1] : '(', a = q[len];
            if ((b == '(' || b == ' ') && (a == ',' || a == ')')) return 1;
        }
    }
    return 0;
}

/* The work fields a rendered narration names in words ("w_col", "h_im"): each field of
 * the item's work site that stands in the text as a word of its own, added to fields
 * unless there already. One-letter names count only written as "k = ", the first or
 * last of a tuple, "(k, i)", any index of a tensor's, "x[n, o, h]", or a factor, "n*Ho". */
static void named_fields(const ls_session *S, const ls_ctx *c, const char *text, char *fields, size_t n)
{
    if (!text || c->item >= S->idx.nitems) return;
    const ks_event *w = vw_event(&S->tr, vw_item_ev(&S->idx, &S->idx.items[c->item], 0));
    if (w->kind != KS_EV_WORK || w->site >= S->tr.nsites) return;
    /* the panel's lines: the site's fields and the values worked out before them (a RoI's
     * y1 and bin_h, issue 38 D4), as vw_describe draws them; a worked-out value of one
     * letter (patchify's y and x) is too common a word in a text to count as named */
    const ks_site *site = &S->tr.sites[w->site];
    static ks_work_line lines[KS_WORK_LINES];
    const int nlines = ks_step_work_lines(&S->tr, w, lines, KS_WORK_LINES);
    for (int f = 0; f < nlines; ++f) {
        const char *name = lines[f].name;
        const size_t len = strlen(name);
        int own = 0;
        for (int g = 0; g < site->nfields; ++g) own |= !strcmp(site->fields[g].name, name);
        /* " name ": built by hand (snprintf with %s drew a truncation warning from GCC 13) */
        char key[80];
        if (len + 3 > sizeof key) continue;
        key[0] = ' ';
        memcpy(key + 1, name, len);
        key[len + 1] = ' ', key[len + 2] = 0;
        if (!len || (len == 1 && !own) || strstr(fields, key)) continue;
        for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
            const char before = p > text ? p[-1] : ' ', after = p[len];
            const int word = !(before == '_' || before == '.' || (before >= 'a' && before <= 'z') ||
                               (before >= 'A' && before <= 'Z') || (before >= '0' && before <= '9')) &&
                             !(after == '_' || (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
                               (after >= '0' && after <= '9') || after == '(' || after == '[');
            if (!word) continue;
            /* a one-letter name is a field only where the text treats it as one: "k = ",
             * "(k, i)", "(i, k)", an index "output[n, o, ...]" (04 s2 named n there and the
             * panel dropped it: issue 38's eleventh re-trial, N21), or a factor of a
             * formula, "(b*Ho + h_col)" (issue 38 D4: 05 s12 named b there and the panel
             * dropped it) */
            const int factor = after == '*' || after == '/' || before == '*' || before == '/';
            const int listed = (after == ',' && (before == '(' || before == '[')) ||
                               ((after == ')' || after == ']') && before == ' ' && p > text + 1 && p[-2] == ',') ||
                               (after == ',' && before == ' ' && p > text + 1 && p[-2] == ',' &&
                                (in_index(text, p) || in_field_tuple(text, p, site)));
            if (len == 1 && !(after == ' ' && p[1] && p[2] == '=') && !listed && !factor) continue;
            const size_t used = strlen(fields);
            snprintf(fields + used, n - used, "%s%s ", used ? "" : " ", name);
            break;
        }
    }
}

static int shows(const ls_step *st, const char *what)
{
    for (int i = 0; i < st->nshow; ++i)
        if (!strcmp(st->show[i], what)) return 1;
    return 0;
}

/* The step's tables (vw_table) with their tensors resolved in the step's run. */
static void slide_tables(const ls_session *S, const ls_step *st, vw_slide *v)
{
    for (int i = 0; i < st->ntables && i < 2; ++i) {
        const ls_table *tb = &st->tables[i];
        vw_table *t = &v->tables[v->ntables];
        memset(t, 0, sizeof *t);
        t->tensor = ks_trace_tensor(&S->tr, tb->tensor);
        t->beside = tb->beside ? ks_trace_tensor(&S->tr, tb->beside) : -1;
        if (t->tensor < 0) continue;
        t->transpose = tb->transpose, t->marks = tb->marks;
        t->row0 = tb->row0, t->row1 = tb->row1;
        snprintf(t->index, sizeof t->index, "%s", tb->index ? tb->index : "row");
        for (int c = 0; c < tb->ncols && c < VW_TABLE_COLS; ++c)
            snprintf(t->col[c], sizeof t->col[c], "%s", tb->cols[c]);
        t->ncols = tb->ncols < VW_TABLE_COLS ? tb->ncols : VW_TABLE_COLS;
        v->ntables++;
    }
}

int ls_slides_make(const ls_session *S0, vw_slide **out)
{
    const ls_lesson *L = S0->L;
    vw_slide *sl = calloc((size_t)L->nsteps, sizeof *sl);
    if (!sl) return -1;
    static char buf[LS_TEXT_MAX], text[LS_TEXT_MAX];
    char err[400], ans[128];
    ls_ctx ctx[LS_MAX_RUNS]; /* each run keeps its own focus, as in ls_check */
    for (int r = 0; r < LS_MAX_RUNS; ++r) ls_ctx_init(&ctx[r]);
    for (int k = 0; k < L->nsteps; ++k) {
        const ls_step *st = &L->steps[k];
        const ls_session *S = ls_step_session(S0, k);
        ls_ctx *cp = &ctx[st->run];
        vw_slide *v = &sl[k];
        ls_focus_resolve(S, &st->focus, cp, err, sizeof err); /* checked before playing */
        const ls_ctx c = *cp;
        ls_render(S, &c, st->title, buf, sizeof buf, err, sizeof err);
        snprintf(text, sizeof text, "Step %d of %d: %.3000s", k + 1, L->nsteps, buf);
        v->title = dup_text(text);
        ls_render(S, &c, st->slide_text, buf, sizeof buf, err, sizeof err);
        v->text = dup_text(buf);
        if (st->run) {
            /* a step about another run shows that run's trace; a line above says which */
            char what[600];
            ls_run_describe(L, st->run, what, sizeof what);
            snprintf(text, sizeof text, "[run '%s': %s]", L->runs[st->run].name, what);
            v->pre = dup_text(text);
        }
        v->grid = shows(st, "launch") || shows(st, "threads");
        v->order = st->order;
        v->strip = st->strip;
        /* the thread -> indices table is the terminal's (16 lines of a band at 1024x768,
         * issue 38 D1): a slide draws the same launch as the grid's waves on the data */
        v->figure = st->figure | (shows(st, "threads") ? VW_FIGURE_WAVES : 0);
        if (st->guide_run > 0) v->guide = &ls_run_session(S0, st->guide_run - 1)->tr;
        /* the focused tap's row ("tap"): the tensor the item writes there takes row and
         * column numbers, as a (y, x) question's does, so the row reads by its number
         * (issue 38 D8, thirteenth re-trial N25: 02 s7's "row 4" had none) */
        if ((st->figure & VW_FIGURE_TAP) && c.event != VW_NONE && c.event < S->tr.nevents) {
            const uint32_t w = ls_item_event(S, c.item, KS_EV_WRITE, S->tr.events[c.event].tap, -1);
            if (w != VW_NONE) v->asks_yx = 1 + (int)S->tr.events[w].tensor;
        }
        v->hide_weights = st->no_weights;
        v->hide_padding = st->no_padding ? 2 : 0;
        memcpy(v->point, st->point, sizeof v->point);
        v->npoints = st->npoints;
        v->trace = &S->tr;
        v->index = &S->idx;
        v->run = st->run;
        v->event = c.event;
        v->look_tensor = c.elem_tensor;
        v->look_plane = c.elem_plane, v->look_y = c.elem_y, v->look_x = c.elem_x;
        v->look_writes = c.elem_writes;
        for (int p = 0; p < 2; ++p) v->panel[p] = st->panels[p] ? ks_trace_tensor(&S->tr, st->panels[p]) : -1;
        for (int p = 0; p < 2; ++p) v->panel_plane[p] = st->planes[p];
        v->about = st->about ? ks_trace_tensor(&S->tr, st->about) + 1 : 0;
        slide_tables(S, st, v);
        v->mode = ls_mode_number(st->mode);
        for (int p = 0; p < 2; ++p) v->panel_mode[p] = ls_mode_number(st->panel_mode[p]) + 1; /* 0: none */
        narrated_fields(st->title, v->fields, sizeof v->fields);
        narrated_fields(st->slide_text, v->fields, sizeof v->fields);
        named_fields(S, &c, v->text, v->fields, sizeof v->fields);
        /* and the title's ("One work item per (n, c_im, h_col, w_col)": issue 38 D4, the
         * thirteenth re-trial's N26, 02 s2 and 05 s2 showed two of the four) */
        named_fields(S, &c, st->title, v->fields, sizeof v->fields);
        const ls_question *q = &st->q;
        ls_ctx qc;
        if (q->kind != LS_Q_NONE && ls_question_ctx(S, &c, q, &qc, err, sizeof err) == 0) {
            ls_render(S, &qc, q->prompt, buf, sizeof buf, err, sizeof err);
            size_t used = (size_t)snprintf(text, sizeof text, "Question: %.3000s", buf);
            for (int i = 0; i < q->nchoices && used < sizeof text; ++i) {
                ls_render(S, &qc, q->choices[i], buf, sizeof buf, err, sizeof err);
                used += (size_t)snprintf(text + used, sizeof text - used, "\n  %d) %.300s", i + 1, buf);
            }
            /* the answer's form, unless the prompt gives it (issue 38 D12: "Answer (row,
             * channel).  (y, x)" read as two forms) */
            const char *form = q->ncell == 3 ? "(plane, y, x)" : "(y, x)";
            if (q->kind == LS_Q_CELL && used < sizeof text && !strstr(buf, form))
                snprintf(text + used, sizeof text - used, "  %s", form);
            v->question = dup_text(text);
            for (int i = 0; i < q->nhide; ++i)
                if (!strcmp(q->hide[i], "strip")) v->strip = 2; /* the strip shows with the answer */
                else if (!strcmp(q->hide[i], "decomposition")) v->hide_decomp = 1;
                else if (!strcmp(q->hide[i], "mode")) v->hide_mode = 1; /* values until the answer */
                else if (!strcmp(q->hide[i], "padding")) v->hide_padding = v->hide_padding ? v->hide_padding : 1;
                else if (!strcmp(q->hide[i], "weights")) v->hide_weights = v->hide_weights ? v->hide_weights : 2;
                else if ((v->hide[v->nhide] = ks_trace_tensor(&S->tr, q->hide[i])) >= 0) v->nhide++;
            v->asked_item = (int64_t)qc.item + 1;
            ls_answer_text(S, &qc, k, ans, sizeof ans);
            ls_render(S, &qc, q->explain, buf, sizeof buf, err, sizeof err);
            if (q->kind == LS_Q_CHOICE) {
                char chosen[512];
                ls_render(S, &qc, q->choices[q->answer], chosen, sizeof chosen, err, sizeof err);
                snprintf(text, sizeof text, "Answer: %s) %.300s. %.3000s", ans, chosen, buf);
                snprintf(v->asked, sizeof v->asked, "%.95s", chosen);
                v->asked_words = 1;
                ls_number_word(chosen, v->asked_digit, sizeof v->asked_digit);
            } else {
                snprintf(text, sizeof text, "Answer: %s. %.3000s", ans, buf);
                snprintf(v->asked, sizeof v->asked, "%s", ls_skip_about(ans));
            }
            v->answer = dup_text(text);
            /* the cell asked about: a cell question's access on its tensor (or at its
             * tap), the element a focus names (its writer or first reader), else the
             * focused access */
            const ls_ctx *el = qc.elem_tensor >= 0 ? &qc : c.elem_tensor >= 0 && qc.item == c.item ? &c : NULL;
            uint32_t ev = el && el->nhits ? el->hits[0] : qc.event;
            if (q->kind == LS_Q_CELL) ev = qc.event;
            /* a number the check reads off the item's write, sample or read (of a tensor it
             * names: {read.tile.offset}, 13 s4's word of the tile): that cell */
            if (q->kind == LS_Q_NUMBER && q->check && !el) {
                const char *rd = strstr(q->check, "{read.");
                const int kind = strstr(q->check, "{write.")    ? KS_EV_WRITE
                                 : strstr(q->check, "{sample.") ? KS_EV_SAMPLE
                                 : rd                           ? KS_EV_READ
                                                                : 0;
                int rt = -1;
                if (kind == KS_EV_READ) { /* {read.TENSOR.attr}: that tensor's read */
                    char name[KS_NAME_LEN] = "";
                    const size_t len = strcspn(rd + 6, ".}");
                    if (rd[6 + len] == '.' && len < sizeof name) memcpy(name, rd + 6, len);
                    rt = name[0] ? ks_trace_tensor(&S->tr, name) : -1;
                }
                const uint32_t w = kind ? ls_item_event(S, qc.item, kind, qc.tap, rt) : VW_NONE;
                const uint32_t any = kind && w == VW_NONE ? ls_item_event(S, qc.item, kind, -1, rt) : w;
                if (any != VW_NONE) ev = any;
                /* a corner's weight ({sample.w2}): the outline goes on that corner's cell */
                const char *wc = strstr(q->check, "{sample.w");
                if (wc && wc[9] >= '0' && wc[9] <= '3' && wc[10] == '}') v->answer_corner = 1 + (wc[9] - '0');
            }
            if (q->kind == LS_Q_NUMBER) v->has_answer_value = 1, v->answer_value = q->number;
            /* choices that name cells as (y, x), on the tensor of the step's focused event */
            int pairs = 0;
            for (int i = 0; q->kind == LS_Q_CHOICE && i < q->nchoices; ++i) {
                int a, b, n = 0;
                pairs += sscanf(q->choices[i], "%*[^(](%d, %d)%n", &a, &b, &n) == 2 && n > 0;
                pairs += sscanf(q->choices[i], "(%d, %d)%n", &a, &b, &n) == 2 && n > 0;
            }
            if (pairs >= 2 && c.event != VW_NONE && c.event < S->tr.nevents && S->tr.events[c.event].kind != KS_EV_WORK)
                v->asks_yx = 1 + (int)S->tr.events[c.event].tensor;
            if (q->kind == LS_Q_CELL && q->tensor[0])
                ev = ls_item_event(S, qc.item, KS_EV_READ, qc.tap, ks_trace_tensor(&S->tr, q->tensor));
            if ((q->kind == LS_Q_CELL || q->kind == LS_Q_NUMBER) && ev != VW_NONE && ev < S->tr.nevents &&
                S->tr.events[ev].kind != KS_EV_WORK) {
                v->has_answer_cell = 1;
                v->answer_event = ev;
                if (q->kind == LS_Q_CELL) v->asks_yx = 1 + (int)S->tr.events[ev].tensor;
            }
            ls_ctx_free(&qc);
        }
    }
    for (int r = 0; r < LS_MAX_RUNS; ++r) ls_ctx_free(&ctx[r]);
    *out = sl;
    return L->nsteps;
}

void ls_slides_free(vw_slide *sl, int n)
{
    for (int k = 0; sl && k < n; ++k) {
        free(sl[k].title);
        free(sl[k].text);
        free(sl[k].pre);
        free(sl[k].question);
        free(sl[k].answer);
    }
    free(sl);
}
