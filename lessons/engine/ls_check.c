/* ls_check.c - a lesson against its trace: every focus exists, every template renders,
 * every stated answer is what the trace says. Also the answers themselves, for the
 * players (a student's typed answer is judged by the trace, not by the lesson file). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <strings.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../trace/step.h"
#include "../../viewer/vw_describe.h"
#include "ls_lesson.h"

static const char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

int ls_question_ctx(const ls_session *S, const ls_ctx *step, const ls_question *q, ls_ctx *qc, char *err, size_t n)
{
    ls_ctx_init(qc);
    qc->item = step->item;
    qc->event = step->event;
    qc->tap = step->tap;
    return ls_focus_resolve(S, &q->at, qc, err, n);
}

/* The cell read at the question's tap (qc: the question's focus): (plane, y, x). */
static int cell_truth(const ls_session *S, const ls_ctx *qc, const ls_question *q, int64_t cell[3], char *err, size_t n)
{
    int tensor = -1;
    if (q->tensor[0] && (tensor = ks_trace_tensor(&S->tr, q->tensor)) < 0) {
        snprintf(err, n, "question: the trace has no tensor '%s'", q->tensor);
        return -1;
    }
    uint32_t e = ls_item_event(S, qc->item, KS_EV_READ, qc->tap, tensor);
    if (e == VW_NONE) {
        snprintf(err, n, "question: work item %lld reads nothing at tap %lld%s%s",
                 (long long)S->idx.items[qc->item].index, (long long)qc->tap, tensor >= 0 ? " of " : "", q->tensor);
        return -1;
    }
    const ks_ev_access *a = &S->tr.events[e].u.access;
    cell[0] = a->plane, cell[1] = a->y, cell[2] = a->x;
    return 0;
}

/* The check template rendered and trimmed. */
static int checked(const ls_session *S, const ls_ctx *c, const ls_question *q, char *out, size_t n, char *err,
                   size_t en)
{
    char buf[LS_TEXT_MAX];
    if (ls_render(S, c, q->check, buf, sizeof buf, err, en)) return -1;
    snprintf(out, n, "%s", ls_skip_about(trim(buf))); /* the number: "about 0.7365" is 0.7365 */
    return 0;
}

int ls_answer_text(const ls_session *S, const ls_ctx *c, int k, char *out, size_t n)
{
    const ls_question *q = &S->L->steps[k].q;
    char err[300];
    int64_t cell[3];
    switch (q->kind) {
    case LS_Q_CHOICE: snprintf(out, n, "%d", q->answer + 1); return 0;
    case LS_Q_NUMBER: return checked(S, c, q, out, n, err, sizeof err);
    case LS_Q_CELL:
        if (cell_truth(S, c, q, cell, err, sizeof err)) return -1;
        if (q->ncell == 3)
            snprintf(out, n, "%lld, %lld, %lld", (long long)cell[0], (long long)cell[1], (long long)cell[2]);
        else snprintf(out, n, "%lld, %lld", (long long)cell[1], (long long)cell[2]);
        return 0;
    default: return -1;
    }
}

/* Integers in s separated by commas, spaces or parentheses; returns the count (max 3). */
static int parse_cell(const char *s, int64_t v[3])
{
    int n = 0;
    while (*s) {
        if (isspace((unsigned char)*s) || *s == ',' || *s == '(' || *s == ')' || *s == '[' || *s == ']') {
            s++;
            continue;
        }
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end == s || n == 3) return -1;
        v[n++] = x;
        s = end;
    }
    return n;
}

/* A check renders a value that is not short to 4 significant digits ("0.7365" for
 * 0.73645231): a typed number within half a unit of its last digit is what the student
 * could know. Integers and short values are judged exactly by ls_number_matches. */
static int within_rounding(const char *typed, const char *printed)
{
    const char *dot = strchr(printed, '.');
    if (!dot || strpbrk(printed, "eE")) return 0;
    int sig = 0, lead = 1;
    for (const char *p = printed; *p; ++p) {
        if (!isdigit((unsigned char)*p)) continue;
        if (*p != '0') lead = 0;
        sig += !lead;
    }
    if (sig != 4) return 0;
    const double unit = pow(10.0, -(double)strlen(dot + 1));
    return fabs(strtod(typed, NULL) - strtod(printed, NULL)) <= 0.5 * unit * (1 + 1e-9);
}

/* Which way a coordinate is off: `more` when the answer's is higher, else `less`. */
static const char *way(int64_t got, int64_t want, const char *more, const char *less)
{
    return got < want ? more : less;
}

int ls_wrong_hint(const ls_session *S, const ls_ctx *c, int k, const char *typed, char *out, size_t n)
{
    const ls_question *q = &S->L->steps[k].q;
    char buf[256], err[300];
    snprintf(buf, sizeof buf, "%s", typed ? typed : "");
    const char *a = trim(buf);
    if (q->kind == LS_Q_CHOICE) {
        char *end;
        const long v = strtol(a, &end, 10);
        if (*a && !*end && v >= 1 && v <= q->nchoices) snprintf(out, n, "Not choice %ld. Read the step again.", v);
        else snprintf(out, n, "Answer with a choice's number, 1 to %d.", q->nchoices);
        return 0;
    }
    if (q->kind == LS_Q_NUMBER) {
        char want[128], *end;
        a = ls_skip_about(a);
        const double got = strtod(a, &end);
        if (!*a || *end) snprintf(out, n, "Answer with a number.");
        else if (checked(S, c, q, want, sizeof want, err, sizeof err)) snprintf(out, n, "Work it out once more.");
        else snprintf(out, n, "%s is too %s. Work it out once more.", a, got > strtod(want, NULL) ? "high" : "low");
        return 0;
    }
    if (q->kind == LS_Q_CELL) {
        int64_t v[3], cell[3];
        const int m = parse_cell(a, v);
        if (m != 2 && m != 3) {
            snprintf(out, n, "Answer with the cell as %s.", q->ncell == 3 ? "plane, y, x" : "y, x");
            return 0;
        }
        if (cell_truth(S, c, q, cell, err, sizeof err)) {
            snprintf(out, n, "Work it out once more.");
            return 0;
        }
        const int64_t gy = m == 2 ? v[0] : v[1], gx = m == 2 ? v[1] : v[2];
        if (m == 3 && v[0] != cell[0])
            snprintf(out, n, "Another plane: look at a %s one.", way(v[0], cell[0], "higher", "lower"));
        else if (gy == cell[1] && gx != cell[2])
            snprintf(out, n, "The right row; look further %s.", way(gx, cell[2], "right", "left"));
        else if (gx == cell[2] && gy != cell[1])
            snprintf(out, n, "The right column; look further %s.", way(gy, cell[1], "down", "up"));
        else
            snprintf(out, n, "Another row and column: look further %s and %s.", way(gy, cell[1], "down", "up"),
                     way(gx, cell[2], "right", "left"));
        return 0;
    }
    snprintf(out, n, "Read the step again.");
    return 0;
}

int ls_answer_ok(const ls_session *S, const ls_ctx *c, int k, const char *typed)
{
    const ls_question *q = &S->L->steps[k].q;
    char buf[256], err[300];
    snprintf(buf, sizeof buf, "%s", typed);
    const char *a = trim(buf);
    if (q->kind == LS_Q_CHOICE) {
        char *end;
        long v = strtol(a, &end, 10);
        if (*a && !*end) return v == q->answer + 1;
        return !strcasecmp(a, q->choices[q->answer]); /* the choice's text also counts */
    }
    if (q->kind == LS_Q_NUMBER) {
        char want[128], *end;
        if (checked(S, c, q, want, sizeof want, err, sizeof err)) return 0;
        a = ls_skip_about(a); /* "about 0.7365", as printed, is 0.7365 */
        (void)strtod(a, &end);
        return *a && !*end && (ls_number_matches(a, strtod(want, NULL)) || within_rounding(a, want));
    }
    if (q->kind == LS_Q_CELL) {
        int64_t v[3], cell[3];
        int m = parse_cell(a, v);
        if (cell_truth(S, c, q, cell, err, sizeof err)) return 0;
        if (m == 2) return v[0] == cell[1] && v[1] == cell[2];
        if (m == 3) return v[0] == cell[0] && v[1] == cell[1] && v[2] == cell[2];
    }
    return 0;
}

static void check_question(const ls_session *S, const ls_ctx *c, int k, ls_report *rep)
{
    const ls_question *q = &S->L->steps[k].q;
    char buf[LS_TEXT_MAX], err[400];
    const int step = k + 1;
    if (ls_render(S, c, q->prompt, buf, sizeof buf, err, sizeof err)) ls_problem(rep, step, "question: %s", err);
    if (ls_render(S, c, q->explain, buf, sizeof buf, err, sizeof err)) ls_problem(rep, step, "explain: %s", err);
    else if (q->hint && ls_render(S, c, q->hint, buf, sizeof buf, err, sizeof err))
        ls_problem(rep, step, "hint: %s", err);
    else if (q->hint && ls_text_gives_answer(S, c, k, buf))
        ls_problem(rep, step, "the hint after a first wrong answer gives the answer away: \"%.200s\"", buf);
    for (int i = 0; i < q->nchoices; ++i)
        if (ls_render(S, c, q->choices[i], buf, sizeof buf, err, sizeof err))
            ls_problem(rep, step, "choice %d: %s", i + 1, err);
    if (q->kind == LS_Q_CHOICE && q->check) {
        if (checked(S, c, q, buf, sizeof buf, err, sizeof err)) {
            ls_problem(rep, step, "check: %s", err);
            return;
        }
        int match = -1, matches = 0;
        for (int i = 0; i < q->nchoices; ++i) {
            char ch[256];
            snprintf(ch, sizeof ch, "%s", q->choices[i]);
            if (!strcmp(trim(ch), buf)) match = i, matches++;
        }
        if (match != q->answer)
            ls_problem(rep, step, "the trace contradicts the answer: check gives '%s', %s, but answer is %d ('%s')",
                       buf, match >= 0 ? "which is another choice" : "which is none of the choices", q->answer + 1,
                       q->choices[q->answer]);
        else if (matches > 1) ls_problem(rep, step, "two choices read '%s': the question is ambiguous", buf);
    } else if (q->kind == LS_Q_NUMBER) {
        char *end;
        if (checked(S, c, q, buf, sizeof buf, err, sizeof err)) {
            ls_problem(rep, step, "check: %s", err);
            return;
        }
        double v = strtod(buf, &end);
        if (!*buf || *end) ls_problem(rep, step, "check renders '%s', not a number", buf);
        else if (fabs(v - q->number) > 1e-6 * (1 + fabs(v)))
            ls_problem(rep, step, "the trace contradicts the answer: %s gives %s, the lesson says %g", q->check, buf,
                       q->number);
    } else if (q->kind == LS_Q_CELL) {
        int64_t cell[3];
        if (cell_truth(S, c, q, cell, err, sizeof err)) {
            ls_problem(rep, step, "%s", err);
            return;
        }
        int ok = q->ncell == 3 ? cell[0] == q->cell[0] && cell[1] == q->cell[1] && cell[2] == q->cell[2]
                               : cell[1] == q->cell[0] && cell[2] == q->cell[1];
        if (!ok) {
            char stated[64];
            if (q->ncell == 3)
                snprintf(stated, sizeof stated, "(%lld, %lld, %lld)", (long long)q->cell[0], (long long)q->cell[1],
                         (long long)q->cell[2]);
            else snprintf(stated, sizeof stated, "(%lld, %lld)", (long long)q->cell[0], (long long)q->cell[1]);
            ls_problem(rep, step,
                       "the trace contradicts the answer: the read is at plane %lld, (y, x) = (%lld, %lld), "
                       "the lesson says %s",
                       (long long)cell[0], (long long)cell[1], (long long)cell[2], stated);
        }
    }
}

/* Step k's show and panels name real tensors (or show keywords); problems to rep. */

/* A step's tables: tensors of its run, and beside one of as many rows as the table
 * (a one-row plane, or a transposed one, read as a column) */
static int table_rows(const ks_trace *tr, int t, int transpose)
{
    const ks_tensor *T = &tr->tensors[t];
    const int64_t w = T->ndim ? T->shape[T->ndim - 1] : 1, h = T->ndim > 1 ? T->shape[T->ndim - 2] : 1;
    return (int)(transpose || h == 1 ? w : h);
}

static int check_tables(const ls_session *S, const ls_step *st, int k, ls_report *rep)
{
    int bad = 0;
    for (int i = 0; i < st->ntables; ++i) {
        const ls_table *tb = &st->tables[i];
        const int t = tb->tensor ? ks_trace_tensor(&S->tr, tb->tensor) : -1;
        const int b = tb->beside ? ks_trace_tensor(&S->tr, tb->beside) : -1;
        if (t < 0 || (tb->beside && b < 0)) {
            ls_problem(rep, k + 1, "tables: the trace has no tensor '%s'", t < 0 ? tb->tensor : tb->beside);
            bad++;
        } else if (b >= 0 && table_rows(&S->tr, b, 0) != table_rows(&S->tr, t, tb->transpose)) {
            ls_problem(rep, k + 1, "tables: '%s' has not as many rows as '%s'", tb->beside, tb->tensor);
            bad++;
        }
    }
    return bad;
}

static int step_names_ok(const ls_session *S, int k, ls_report *rep)
{
    const ls_step *st = &S->L->steps[k];
    static const char *const words[] = {"decomposition", "events", "launch", "threads", NULL};
    int bad = 0;
    for (int i = 0; i < st->nshow; ++i) {
        int ok = ks_trace_tensor(&S->tr, st->show[i]) >= 0;
        for (const char *const *w = words; *w && !ok; ++w) ok = !strcmp(st->show[i], *w);
        if (!ok) {
            ls_problem(rep, k + 1,
                       "show: '%s' is neither a tensor of the trace nor decomposition, events, "
                       "launch or threads",
                       st->show[i]);
            bad++;
        }
    }
    for (int p = 0; p < 2; ++p)
        if (st->panels[p] && ks_trace_tensor(&S->tr, st->panels[p]) < 0) {
            ls_problem(rep, k + 1, "panels: the trace has no tensor '%s'", st->panels[p]);
            bad++;
        } else if (st->planes[p] > 0) { /* a plane of the panel's tensor: all but its last two axes */
            const int t = st->panels[p] ? ks_trace_tensor(&S->tr, st->panels[p]) : -1;
            int64_t planes = 1;
            for (int a = 0; t >= 0 && a + 2 < S->tr.tensors[t].ndim; ++a) planes *= S->tr.tensors[t].shape[a];
            if (t < 0 || st->planes[p] > planes) {
                ls_problem(rep, k + 1, "planes: panel %d has no plane %d", p, st->planes[p] - 1);
                bad++;
            }
        }
    /* "about" names one of the step's own panels: the layout sizes that picture first */
    if (st->about &&
        (!st->panels[0] || !st->panels[1] || (strcmp(st->about, st->panels[0]) && strcmp(st->about, st->panels[1])))) {
        ls_problem(rep, k + 1, "about: '%s' is not one of the step's panels", st->about);
        bad++;
    }
    bad += check_tables(S, st, k, rep);
    /* a hint is the terminal's (a slide reveals the worked answer): a panel it names is a
     * tensor the terminal draws at the step (issue 38 D12: 14 s6's "read the two cells
     * off the input panel" above events only) */
    for (int t = 0; st->q.hint && t < S->tr.ntensors; ++t) {
        char panel[KS_NAME_LEN + 8];
        snprintf(panel, sizeof panel, "%s panel", S->tr.tensors[t].name);
        if (!vw_text_has_token(st->q.hint, panel, 1)) continue;
        int drawn = 0;
        for (int i = 0; i < st->nshow && !drawn; ++i) drawn = !strcmp(st->show[i], S->tr.tensors[t].name);
        if (!drawn) {
            ls_problem(rep, k + 1,
                       "question: the hint names the %s panel, which the terminal player does not draw at this step "
                       "(add \"%s\" to show, or reword the hint)",
                       S->tr.tensors[t].name, S->tr.tensors[t].name);
            bad++;
        }
    }
    for (int i = 0; i < st->q.nhide; ++i)
        if (!strcmp(st->q.hide[i], "strip") && !st->strip) {
            ls_problem(rep, k + 1, "question: hide: \"strip\" on a step without \"strip\": true");
        } else if (strcmp(st->q.hide[i], "strip") && strcmp(st->q.hide[i], "decomposition") &&
                   strcmp(st->q.hide[i], "weights") && strcmp(st->q.hide[i], "mode") &&
                   strcmp(st->q.hide[i], "padding") && ks_trace_tensor(&S->tr, st->q.hide[i]) < 0) {
            ls_problem(rep, k + 1, "question: hide: the trace has no tensor '%s'", st->q.hide[i]);
            bad++;
        }
    return bad;
}

int ls_check(const ls_session *S0, ls_report *rep)
{
    const int before = rep->count;
    ls_ctx ctx[LS_MAX_RUNS]; /* each run keeps its own focus from step to step */
    for (int r = 0; r < LS_MAX_RUNS; ++r) ls_ctx_init(&ctx[r]);
    char buf[LS_TEXT_MAX], err[400];
    int printed[LS_MAX_STEPS] = {0}, predicts[LS_MAX_STEPS] = {0};
    /* what the terminal showed on the steps before (drawings, events): EARLIER of them */
    enum { EARLIER = 2 };
    char *shown_before[EARLIER] = {NULL};
    int shown_step[EARLIER] = {-1, -1};
    char *pending = NULL; /* the step before's show, pushed into shown_before as a step starts */
    int pending_step = -1;
    for (int k = 0; k < S0->L->nsteps; ++k) {
        const ls_step *st = &S0->L->steps[k];
        const ls_session *S = ls_step_session(S0, k);
        ls_ctx *c = &ctx[st->run];
        free(shown_before[k % EARLIER]);
        shown_before[k % EARLIER] = pending, shown_step[k % EARLIER] = pending_step;
        pending = NULL, pending_step = -1;
        if (ls_focus_resolve(S, &st->focus, c, err, sizeof err)) {
            ls_problem(rep, k + 1, "%s", err);
            if (c->item == VW_NONE) continue; /* nothing to render against yet */
        }
        size_t len = 0; /* this step's terminal show, for the questions after it */
        FILE *mem = st->nshow ? open_memstream(&pending, &len) : NULL;
        if (mem) {
            ls_show_step(mem, S, c, st);
            fclose(mem);
            pending_step = k;
        }
        ls_ctx qc;
        if (ls_render(S, c, st->title, buf, sizeof buf, err, sizeof err)) ls_problem(rep, k + 1, "title: %s", err);
        if (ls_render(S, c, st->text, buf, sizeof buf, err, sizeof err)) ls_problem(rep, k + 1, "text: %s", err);
        step_names_ok(S, k, rep);
        if (st->q.kind == LS_Q_NONE) continue;
        if (ls_question_ctx(S, c, &st->q, &qc, err, sizeof err)) {
            ls_problem(rep, k + 1, "question: %s", err);
        } else {
            check_question(S, &qc, k, rep);
            const char *shown = S0->L->nsteps >= LS_FULL_LESSON ? ls_answer_shown(S, c, &qc, k) : NULL;
            char ans[256], word[64];
            if (shown && !strcmp(shown, "title") && !ls_render(S, c, st->title, buf, sizeof buf, err, sizeof err) &&
                ls_title_names_choice(&st->q, buf, word, sizeof word))
                ls_problem(rep, k + 1,
                           "the title names the right choice (%d, \"%s\") above the question: a student picks the "
                           "choice the title names (reword the title)",
                           st->q.answer + 1, word);
            else if (shown && !ls_answer_text(S, &qc, k, ans, sizeof ans))
                ls_problem(rep, k + 1,
                           "the %s holds the answer (%s%s%s) above the question: a student copies it instead of "
                           "working it out (reword it, or ask about another work item, tap or run)",
                           shown, st->q.kind == LS_Q_CHOICE ? "choice " : "", ans,
                           st->q.kind == LS_Q_CHOICE ? ", its words" : "");
            char line[LS_TEXT_MAX];
            if (!shown && S0->L->nsteps >= LS_FULL_LESSON && ls_answer_in_show(S, c, &qc, k, line, sizeof line) &&
                !ls_answer_text(S, &qc, k, ans, sizeof ans))
                ls_problem(rep, k + 1,
                           "what the terminal shows above the question holds the answer (%s): \"%.120s\" (show "
                           "less, or ask about another work item, tap or run)",
                           ans, line);
            /* nor what it showed a step or two before, in the same run: a student scrolls
             * up (issue 38 D2: 06 s3-s4's event lists held s5's 10.125) */
            for (int e = 0; e < EARLIER && S0->L->nsteps >= LS_FULL_LESSON; ++e) {
                const int j = shown_step[e];
                if (j < 0 || j >= k || j < k - EARLIER || S0->L->steps[j].run != st->run ||
                    !ls_answer_in_earlier(S, &qc, k, shown_before[e], line, sizeof line) ||
                    ls_answer_text(S, &qc, k, ans, sizeof ans))
                    continue;
                ls_problem(rep, k + 1,
                           "what the terminal showed at step %d holds the answer (%s): \"%.120s\" (show less there, "
                           "or ask about another work item, tap or run)",
                           j + 1, ans, line);
                break;
            }
            printed[k] = ls_answer_printed(S, c, &qc, k);
            predicts[k] = ls_question_predicts(S, st, c, &qc, printed[k]);
        }
        ls_ctx_free(&qc);
    }
    free(pending);
    for (int e = 0; e < EARLIER; ++e) free(shown_before[e]);
    for (int r = 0; r < LS_MAX_RUNS; ++r) ls_ctx_free(&ctx[r]);
    ls_check_question_mix(S0->L, printed, predicts, rep);
    ls_check_choice_balance(S0->L, rep);
    return rep->count - before;
}

void ls_format_value(char *buf, size_t n, double v)
{
    /* 10 (not 1e+01), 10.125, 34.46875, "about 0.7365": a rounded value says so (issue 38 D9) */
    char t[64];
    const int exact = vw_value_text(t, sizeof t, v);
    snprintf(buf, n, "%s%s", exact ? "" : LS_ABOUT, t);
}

const char *ls_skip_about(const char *s)
{
    while (isspace((unsigned char)*s)) s++;
    if (!strncmp(s, LS_ABOUT, strlen(LS_ABOUT))) s += strlen(LS_ABOUT);
    else if (*s == '~') s++;
    return s;
}

int ls_number_matches(const char *typed, double truth)
{
    char t[64];
    const double v = strtod(ls_skip_about(typed), NULL);
    if (fabs(v - truth) <= 1e-6 * (1 + fabs(truth))) return 1;
    if (vw_value_text(t, sizeof t, truth) || truth == 0) return 0; /* printed exactly */
    /* printed to 4 significant digits: within half a unit of the 4th */
    const double unit = pow(10.0, floor(log10(fabs(truth))) - 3);
    return fabs(v - truth) <= 0.5 * unit * (1 + 1e-9);
}
