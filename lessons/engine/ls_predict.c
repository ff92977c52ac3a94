/* ls_predict.c - questions that make a student predict rather than copy: whether an
 * answer is already printed in the narration above its prompt, whether a question is
 * about a work item or tap the step did not work through, and the rule --check holds a
 * full lesson to (see ls_lesson.h). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../viewer/vw_describe.h"
#include "ls_lesson.h"

/* `needle` in `text` as a whole token (vw_text_has_token: "18", "0.75" and "8x8" do not
 * print the answer 8) */
static int has_token(const char *text, const char *needle, int word) { return vw_text_has_token(text, needle, word); }

/* The values the templates of `tmpl` render to at focus c, joined by " ; " (literal
 * words and numbers the author wrote are left out: "tap (1, 1)" does not print an
 * answer 1, "{request.sectors}" rendering 1 does). */
static void template_values(const ls_session *S, const ls_ctx *c, const char *tmpl, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p; ++p) {
        if (p[0] == '{' && p[1] == '{') {
            ++p;
            continue;
        }
        const char *close = p[0] == '{' ? strchr(p, '}') : NULL;
        if (!close) continue;
        char name[128], val[LS_TEXT_MAX], err[400];
        snprintf(name, sizeof name, "%.*s", (int)(close + 1 - p), p);
        if (!ls_render(S, c, name, val, sizeof val, err, sizeof err) && used < n)
            used += (size_t)snprintf(out + used, n - used, "%s ; ", val);
        p = close;
    }
}

int ls_answer_printed(const ls_session *S, const ls_ctx *c, const ls_ctx *qc, int k)
{
    const ls_step *st = &S->L->steps[k];
    const ls_question *q = &st->q;
    static char values[2 * LS_TEXT_MAX], text[LS_TEXT_MAX];
    char ans[256], err[400];
    if (q->kind == LS_Q_CHOICE) { /* the right choice's words anywhere in the narration */
        if (ls_render(S, qc, q->choices[q->answer], ans, sizeof ans, err, sizeof err)) return 0;
        for (int part = 0; part < 2; ++part)
            if (!ls_render(S, c, part ? st->text : st->title, text, sizeof text, err, sizeof err) &&
                has_token(text, ans, 1))
                return 1;
        return 0;
    }
    if (ls_answer_text(S, qc, k, ans, sizeof ans)) return 0;
    template_values(S, c, st->title, values, sizeof values);
    const size_t u = strlen(values);
    template_values(S, c, st->text, values + u, sizeof values - u);
    if (has_token(values, ans, 0)) return 1;
    char *comma = strchr(ans, ','); /* a cell: y and x as two values in a row */
    if (!comma) return 0;
    char apart[300];
    snprintf(apart, sizeof apart, "%.*s ;%s", (int)(comma - ans), ans, comma + 1);
    return has_token(values, apart, 0);
}

int ls_text_gives_answer(const ls_session *S, const ls_ctx *qc, int k, const char *text)
{
    const ls_question *q = &S->L->steps[k].q;
    char ans[256], err[400];
    if (q->kind == LS_Q_CHOICE) {
        if (ls_render(S, qc, q->choices[q->answer], ans, sizeof ans, err, sizeof err)) return 0;
        return has_token(text, ans, 1);
    }
    if (ls_answer_text(S, qc, k, ans, sizeof ans)) return 0;
    return has_token(text, ans, 0);
}

/* The length of word w (len letters) less an inflection's ending: "passes" 4, "loops"
 * 4, "reported" 6, "patchify" 8. */
static size_t stem_len(const char *w, size_t len)
{
    static const char *const ends[] = {"ing", "es", "ed", "s"};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; ++i) {
        const size_t e = strlen(ends[i]);
        if (len >= e + 3 && !strncasecmp(w + len - e, ends[i], e)) return len - e;
    }
    return len;
}

/* Whether word w (len letters) stands in text as a word of the same stem ("passes" as
 * "pass" or "passing"; "patches" not as "Patchify"). */
static int has_stem(const char *text, const char *w, size_t len)
{
    const size_t stem = stem_len(w, len);
    for (const char *p = text; *p; ++p) {
        if (p > text && isalpha((unsigned char)p[-1])) continue;
        size_t n = 0;
        while (isalpha((unsigned char)p[n])) n++;
        if (n && stem_len(p, n) == stem && !strncasecmp(p, w, stem)) return 1;
        p += n ? n - 1 : 0;
    }
    return 0;
}

/* A word of choice c (4 letters or more) that no other choice of q and not the prompt
 * has, and title does: its first such word to word; 0 when none. */
static int choice_word_in(const ls_question *q, int c, const char *title, char *word, size_t n)
{
    for (const char *p = q->choices[c]; *p;) {
        while (*p && !isalpha((unsigned char)*p)) p++;
        size_t len = 0;
        while (isalpha((unsigned char)p[len])) len++;
        const char *w = p;
        p += len;
        if (len < 4) continue; /* "a", "it", "the": the long words say what a choice is */
        /* a word another choice or the prompt has says nothing of which is right */
        int shared = has_stem(q->prompt, w, len);
        for (int i = 0; i < q->nchoices && !shared; ++i) shared = i != c && has_stem(q->choices[i], w, len);
        if (shared || !has_stem(title, w, len)) continue;
        snprintf(word, n, "%.*s", (int)len, w);
        return 1;
    }
    return 0;
}

int ls_title_names_choice(const ls_question *q, const char *title, char *word, size_t n)
{
    if (q->kind != LS_Q_CHOICE || !choice_word_in(q, q->answer, title, word, n)) return 0;
    /* a title naming the other choices as well weighs them ("Scatter or gather") */
    char other[64];
    for (int i = 0; i < q->nchoices; ++i)
        if (i != q->answer && choice_word_in(q, i, title, other, sizeof other)) return 0;
    return 1;
}

const char *ls_answer_shown(const ls_session *S, const ls_ctx *c, const ls_ctx *qc, int k)
{
    const ls_step *st = &S->L->steps[k];
    static char text[LS_TEXT_MAX];
    char err[400], word[64];
    if (!ls_render(S, qc, st->q.prompt, text, sizeof text, err, sizeof err) && ls_text_gives_answer(S, qc, k, text))
        return "prompt";
    if (!ls_render(S, c, st->title, text, sizeof text, err, sizeof err) &&
        (ls_text_gives_answer(S, qc, k, text) || ls_title_names_choice(&st->q, text, word, sizeof word)))
        return "title";
    if (!ls_render(S, c, st->text, text, sizeof text, err, sizeof err) && ls_text_gives_answer(S, qc, k, text))
        return "narration";
    return NULL;
}

void ls_number_word(const char *choice, char *out, size_t n)
{
    static const char *const words[] = {"zero", "one",   "two",   "three", "four", "five",
                                        "six",  "seven", "eight", "nine",  "ten"};
    out[0] = 0;
    for (int i = 0; i < (int)(sizeof words / sizeof words[0]); ++i)
        if (!strcasecmp(choice, words[i])) snprintf(out, n, "%d", i);
}

int ls_answer_in_show(const ls_session *S, const ls_ctx *c, const ls_ctx *qc, int k, char *line, size_t n)
{
    const ls_step *st = &S->L->steps[k];
    const ls_question *q = &st->q;
    char ans[256], err[400];
    int word = q->kind == LS_Q_CHOICE;
    if (word ? ls_render(S, qc, q->choices[q->answer], ans, sizeof ans, err, sizeof err)
             : ls_answer_text(S, qc, k, ans, sizeof ans))
        return 0;
    char *end, digit[8] = "";
    const double v = strtod(ans, &end);
    const int whole = !word && end != ans && !*end && v == floor(v);
    /* a whole number, or a choice that is one in words ("zero"), as a cell the asked item
     * touches in a drawing ("[0]": 02 s5's padding taps above "what does im2col write
     * there?", issue 38 D2) */
    if (word) ls_number_word(ans, digit, sizeof digit);
    else if (whole && q->check && strstr(q->check, "value}")) /* a value the item reads or writes */
        snprintf(digit, sizeof digit, "%.7s", ans);
    char touched[16] = "";
    if (digit[0] && qc->item == c->item) snprintf(touched, sizeof touched, "[%s]", digit);
    char *dump = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&dump, &len);
    if (!mem) return 0;
    ls_show_step(mem, S, c, st);
    fclose(mem);
    int found = 0;
    char focus[300];
    snprintf(focus, sizeof focus, "<%s>", ans);
    for (const char *p = dump; p && *p && !found; p += strcspn(p, "\n"), p += *p == '\n') {
        snprintf(line, n, "%.*s", (int)strcspn(p, "\n"), p);
        if (q->kind == LS_Q_CELL) { /* an element's last coordinates: "x[0, 2, 1]", not a shape's */
            char tail[300], head[300];
            snprintf(tail, sizeof tail, ", %s]", ans);
            snprintf(head, sizeof head, "[%s]", ans);
            found = strstr(line, tail) || strstr(line, head);
            continue;
        }
        if (touched[0] && strstr(line, touched)) {
            found = 1;
            continue;
        }
        if (!whole) {
            found = has_token(line, ans, word);
            continue;
        }
        /* the cell in focus, or the focused event's value: "  > tap 0 read  x[0, 1] = 6" */
        const char *eq = !strncmp(line, "  > ", 4) ? strstr(line, " = ") : NULL;
        while (eq && strstr(eq + 1, " = ")) eq = strstr(eq + 1, " = ");
        found = strstr(line, focus) ||
                (eq && !strncmp(eq + 3, ans, strlen(ans)) && (eq[3 + strlen(ans)] == 0 || eq[3 + strlen(ans)] == ' '));
    }
    free(dump);
    return found;
}

int ls_hint_text(const ls_session *S, const ls_ctx *qc, int k, const char *typed, char *out, size_t n, char *err,
                 size_t errn)
{
    const ls_question *q = &S->L->steps[k].q;
    if (q->hint) return ls_render(S, qc, q->hint, out, n, err, errn);
    return ls_wrong_hint(S, qc, k, typed, out, n);
}

int ls_question_predicts(const ls_session *S, const ls_step *st, const ls_ctx *c, const ls_ctx *qc, int printed)
{
    if (printed || (st->q.at.kind == LS_FOCUS_KEEP && !st->q.at.tap_given)) return 0;
    if (qc->item != c->item) return 1; /* another work item: nothing above shows it */
    if (qc->tap == c->tap) return 0;
    /* another tap of the step's own item: its events or a drawing would mark the answer */
    for (int i = 0; i < st->nshow; ++i)
        if (!strcmp(st->show[i], "events") || ks_trace_tensor(&S->tr, st->show[i]) >= 0) return 0;
    return 1;
}

void ls_check_question_mix(const ls_lesson *L, const int *printed, const int *predicts, ls_report *rep)
{
    int nq = 0, np = 0, npred = 0;
    char steps[256] = "";
    for (int k = 0; k < L->nsteps; ++k) {
        if (L->steps[k].q.kind == LS_Q_NONE) continue;
        nq++;
        npred += predicts[k];
        if (printed[k]) {
            size_t u = strlen(steps);
            snprintf(steps + u, sizeof steps - u, "%s%d", np++ ? ", " : "", k + 1);
        }
    }
    if (L->nsteps < LS_FULL_LESSON) return; /* a sketch, not a lesson for a class */
    if (npred < LS_MIN_PREDICTIONS)
        ls_problem(rep, 0,
                   "%d question%s ask%s about a work item or tap the narration did not work through, "
                   "with the answer not printed above the prompt; a lesson needs at least %d (a question's own "
                   "index, thread or tap)",
                   npred, npred == 1 ? "" : "s", npred == 1 ? "s" : "", LS_MIN_PREDICTIONS);
    if (3 * np > nq)
        ls_problem(rep, 0,
                   "%d of %d questions have their answer printed above the prompt (steps %s): at most a "
                   "third may",
                   np, nq, steps);
}

/* The characters of a choice as the student reads its words: UTF-8 sequences, leading and
 * trailing spaces left out. */
static size_t choice_chars(const char *s)
{
    while (*s == ' ') ++s;
    size_t n = 0, spaces = 0;
    for (; *s; ++s) {
        if (((unsigned char)*s & 0xC0) == 0x80) continue; /* a continuation byte */
        if (*s == ' ') spaces++;
        else n += spaces + 1, spaces = 0;
    }
    return n;
}

void ls_check_choice_balance(const ls_lesson *L, ls_report *rep)
{
    int nq = 0, at[LS_MAX_CHOICES] = {0}, longest = 0;
    char where[LS_MAX_CHOICES][256] = {{0}}, lsteps[256] = "";
    for (int k = 0; k < L->nsteps; ++k) {
        const ls_question *q = &L->steps[k].q;
        if (q->kind != LS_Q_CHOICE || q->answer < 0 || q->answer >= q->nchoices) continue;
        nq++;
        size_t u = strlen(where[q->answer]);
        snprintf(where[q->answer] + u, sizeof where[q->answer] - u, "%s%d", at[q->answer]++ ? ", " : "", k + 1);
        const size_t right = choice_chars(q->choices[q->answer]);
        int strictly = 1;
        for (int i = 0; i < q->nchoices; ++i)
            if (i != q->answer && choice_chars(q->choices[i]) >= right) strictly = 0;
        if (strictly) {
            u = strlen(lsteps);
            snprintf(lsteps + u, sizeof lsteps - u, "%s%d", longest++ ? ", " : "", k + 1);
        }
    }
    for (int p = 0; p < LS_MAX_CHOICES; ++p)
        if (at[p] >= LS_GUESS_MIN && 2 * at[p] > nq)
            ls_problem(rep, 0,
                       "%d of %d choice questions have their answer at choice %d (steps %s): a student guesses "
                       "it; spread the right choices over the positions (at most half at one)",
                       at[p], nq, p + 1, where[p]);
    if (longest >= LS_GUESS_MIN && 2 * longest > nq)
        ls_problem(rep, 0,
                   "%d of %d choice questions have their answer as the longest choice (steps %s): a student "
                   "guesses it; word a wrong choice as fully (at most half may be the longest)",
                   longest, nq, lsteps);
}

int ls_answer_in_earlier(const ls_session *S, const ls_ctx *qc, int k, const char *dump, char *line, size_t n)
{
    const ls_question *q = &S->L->steps[k].q;
    char ans[256], err[400];
    const int word = q->kind == LS_Q_CHOICE;
    if (q->kind == LS_Q_CELL || !dump ||
        (word ? ls_render(S, qc, q->choices[q->answer], ans, sizeof ans, err, sizeof err)
              : ls_answer_text(S, qc, k, ans, sizeof ans)))
        return 0;
    char *end;
    const double v = strtod(ans, &end);
    if (!word && (end == ans || *end || v == floor(v))) return 0; /* a whole number: by chance */
    /* a choice that is a number in words ("zero") as that number where the drawing marks
     * a touched cell ("[0]") or a padding read prints it ("= 0 (padding"): issue 38 D2 N1,
     * ninth re-trial: 02 s4 printed the padding taps' [0] and "= 0" above s5's "zero" */
    char digit[8] = "", touched[16] = "", padded[32] = "";
    if (word) ls_number_word(ans, digit, sizeof digit);
    if (digit[0]) {
        snprintf(touched, sizeof touched, "[%s]", digit);
        snprintf(padded, sizeof padded, "= %s (padding", digit);
    }
    for (const char *p = dump; *p; p += strcspn(p, "\n"), p += *p == '\n') {
        snprintf(line, n, "%.*s", (int)strcspn(p, "\n"), p);
        if (has_token(line, ans, word)) return 1;
        if (digit[0] && (strstr(line, touched) || strstr(line, padded))) return 1;
    }
    return 0;
}
