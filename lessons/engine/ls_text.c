/* ls_text.c - the terminal player: narration, ASCII drawings of small tensors with the
 * focused cells marked, the decomposition, and questions answered from stdin. This is
 * what CI runs (--auto), so every lesson is played end to end on every change. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../trace/step.h"
#include "../../viewer/vw_describe.h"
#include "ls_lesson.h"

#define WIDTH 78
#define MAX_ROWS 20
#define MAX_LINE 80 /* a drawing is cropped to what fits a terminal of 80 columns */
#define BANDS 2     /* or drawn in bands of columns, one under the other, up to this many */

/* Text wrapped at WIDTH columns, the first line after `first`, the others after `rest`
 * (a choice's "    1) " and its hanging indent); '\n' in the text starts a new line. */
static void wrap_hang(FILE *out, const char *text, const char *first, const char *rest)
{
    const char *p = text, *indent = first;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        size_t col = 0;
        const char *w = p, *end = p + len;
        fputs(indent, out);
        while (w < end) {
            while (w < end && *w == ' ') w++;
            const char *we = w;
            while (we < end && *we != ' ') we++;
            size_t wl = (size_t)(we - w);
            if (!wl) break;
            if (col && col + 1 + wl > WIDTH - strlen(indent)) {
                indent = rest;
                fprintf(out, "\n%s", indent);
                col = 0;
            }
            fprintf(out, "%s%.*s", col ? " " : "", (int)wl, w);
            col += (col ? 1 : 0) + wl;
            w = we;
        }
        fputc('\n', out);
        indent = rest;
        p = eol ? eol + 1 : end;
    }
}

/* Narration wrapped at WIDTH columns, every line after `indent`. */
static void wrap(FILE *out, const char *text, const char *indent) { wrap_hang(out, text, indent, indent); }

typedef struct mark {
    int64_t y, x;
    int focus;
} mark;

/* The cells of tensor t on plane `plane` that the focused item touched (and the focused
 * element), for the drawing. Returns the count (at most max). */
static int collect_marks(const ls_session *S, const ls_ctx *c, int t, int64_t *plane, mark *m, int max)
{
    const vw_item *it = &S->idx.items[c->item];
    int n = 0, have_plane = 0;
    if (c->elem_tensor == t) {
        *plane = c->elem_plane;
        have_plane = 1;
        m[n++] = (mark){.y = c->elem_y, .x = c->elem_x, .focus = 1};
    }
    /* the plane of the event or tap in focus, when it touches t: a channel-1 tap draws
     * channel 1's plane, not the first plane the item read */
    for (uint32_t k = 0; k < it->count && !have_plane; ++k) {
        uint32_t e = vw_item_ev(&S->idx, it, k);
        const ks_event *ev = &S->tr.events[e];
        const int focused = e == c->event || (c->tap >= 0 && ev->tap == c->tap);
        if (!focused || ev->tensor != t) continue;
        if (ev->kind == KS_EV_SAMPLE) *plane = ev->u.sample.plane, have_plane = 1;
        else if (ev->kind == KS_EV_READ || ev->kind == KS_EV_WRITE) *plane = ev->u.access.plane, have_plane = 1;
    }
    for (uint32_t k = 0; k < it->count && n < max; ++k) {
        uint32_t e = vw_item_ev(&S->idx, it, k);
        const ks_event *ev = &S->tr.events[e];
        if (ev->kind == KS_EV_SAMPLE && ev->tensor == t) {
            /* a bilinear sample: its corners inside the tensor */
            int64_t ys[2], xs[2];
            if (!have_plane) *plane = ev->u.sample.plane, have_plane = 1;
            if (ev->u.sample.plane != *plane) continue;
            vw_sample_corners(ev, ys, xs);
            for (int q = 0; q < 4 && n < max; ++q)
                if (ev->flags & (KS_FLAG_C00 << q))
                    m[n++] = (mark){.y = ys[q >> 1],
                                    .x = xs[q & 1],
                                    .focus = e == c->event || (c->tap >= 0 && ev->tap == c->tap)};
            continue;
        }
        if (ev->kind == KS_EV_REGION && ev->tensor == t && ev->u.region.rows == 0 && ev->u.region.cols == 0) {
            /* a point (a sparse site): the cell it names */
            if (!have_plane) *plane = ev->u.region.plane, have_plane = 1;
            if (ev->u.region.plane != *plane) continue;
            m[n++] = (mark){.y = (int64_t)ev->u.region.y0, .x = (int64_t)ev->u.region.x0, .focus = 0};
            continue;
        }
        if ((ev->kind != KS_EV_READ && ev->kind != KS_EV_WRITE) || ev->tensor != t) continue;
        if (!have_plane) *plane = ev->u.access.plane, have_plane = 1;
        if (ev->u.access.plane != *plane) continue;
        /* the tap in focus is marked in every tensor it touches (read here, written there) */
        m[n++] = (mark){.y = ev->u.access.y,
                        .x = ev->u.access.x,
                        .focus = e == c->event || (c->tap >= 0 && ev->tap == c->tap)};
    }
    if (!have_plane) *plane = 0;
    return n;
}

/* A cell's value: "~" marks a rounded one (the drawing's legend says so) */
static void fmt_value(char *buf, size_t n, double v, int integral)
{
    if (integral) {
        snprintf(buf, n, "%lld", (long long)v);
        return;
    }
    char t[64];
    const int exact = vw_value_text(t, sizeof t, v);
    snprintf(buf, n, "%s%.28s", exact ? "" : "~", t);
}

static void draw_band(FILE *out, const ks_tensor *ts, int64_t base, int64_t H, int64_t W, int integral, const mark *m,
                      int nm, int cw, int64_t y0, int64_t y1, int64_t x0, int64_t x1, const char *pad);

/* Plane `plane` of tensor t as a grid: [v] a cell the focused item touched, <v> the
 * focused one; cells outside the tensor (padding) that were touched show as 0 in a
 * margin (as ? where the step's question hides the padding: what a padding tap gives is
 * what it asks, issue 38 D2, 02 s5), untouched margin cells as '.'. A plane wider than a
 * terminal is drawn in bands of columns, one under the other; bigger planes are cropped
 * around the marks. */
static void draw_tensor(FILE *out, const ls_session *S, const ls_ctx *c, int t, int hide_padding)
{
    const ks_tensor *ts = &S->tr.tensors[t];
    const int64_t H = ts->ndim >= 2 ? ts->shape[ts->ndim - 2] : 1, W = ts->shape[ts->ndim - 1];
    static mark m[4096];
    int64_t plane = 0;
    int nm = collect_marks(S, c, t, &plane, m, 4096);
    int64_t y0 = 0, y1 = H, x0 = 0, x1 = W; /* drawn range, [y0, y1) */
    for (int i = 0; i < nm; ++i) {
        if (m[i].y < y0 && m[i].y >= -4) y0 = m[i].y;
        if (m[i].y >= y1 && m[i].y < H + 4) y1 = m[i].y + 1;
        if (m[i].x < x0 && m[i].x >= -4) x0 = m[i].x;
        if (m[i].x >= x1 && m[i].x < W + 4) x1 = m[i].x + 1;
    }
    const int64_t base = plane * H * W; /* values through ls_tensor_value: int32 and int64 tensors too */
    int integral = 1;
    for (int64_t i = 0; i < H * W && integral; ++i) {
        const double v = ls_tensor_value(ts, base + i);
        integral = v == floor(v) && fabs(v) < 1e15;
    }
    int cw = 1, rounded = 0;
    for (int64_t i = 0; i < H * W; ++i) {
        char b[32];
        fmt_value(b, sizeof b, ls_tensor_value(ts, base + i), integral);
        if ((int)strlen(b) > cw) cw = (int)strlen(b);
        rounded |= b[0] == '~';
    }
    cw += 2; /* the brackets */
    /* crop to what fits: keep the marks (or the top-left) in view */
    const int64_t max_cols = (MAX_LINE - 6) / (cw + 1);
    /* the focused mark, else the middle of the marks, stays in view */
    int64_t fy = y0, fx = x0, lo_y = INT64_MAX, hi_y = INT64_MIN, lo_x = INT64_MAX, hi_x = INT64_MIN;
    int focused = 0;
    for (int i = 0; i < nm; ++i) {
        if (m[i].focus) fy = m[i].y, fx = m[i].x, focused = 1;
        lo_y = m[i].y < lo_y ? m[i].y : lo_y, hi_y = m[i].y > hi_y ? m[i].y : hi_y;
        lo_x = m[i].x < lo_x ? m[i].x : lo_x, hi_x = m[i].x > hi_x ? m[i].x : hi_x;
    }
    if (!focused && nm) fy = lo_y + (hi_y - lo_y) / 2, fx = lo_x + (hi_x - lo_x) / 2;
    if (y1 - y0 > MAX_ROWS) {
        int64_t a = fy - MAX_ROWS / 2;
        if (a < y0) a = y0;
        if (a > y1 - MAX_ROWS) a = y1 - MAX_ROWS;
        y0 = a, y1 = a + MAX_ROWS;
    }
    /* up to BANDS bands of columns, one under the other, before a crop: a 16-column
     * plane with its padding is 18 columns, and the questions ask about whole rows of it
     * (issue 38 D12: lesson 10's showed columns -1..10 of 16) */
    const int64_t bands = (x1 - x0 + max_cols - 1) / max_cols <= BANDS ? (x1 - x0 + max_cols - 1) / max_cols : 1;
    if (x1 - x0 > max_cols * bands) {
        int64_t a = fx - max_cols / 2;
        if (a < x0) a = x0;
        if (a > x1 - max_cols) a = x1 - max_cols;
        x0 = a, x1 = a + max_cols;
    }
    char shape[96], where[160];
    ks_shape_str(ts->ndim, ts->shape, shape, sizeof shape);
    /* "input[0, 1, :, :]": the plane's leading coordinates */
    int used = snprintf(where, sizeof where, "%s[", ts->name);
    int64_t rest = plane;
    int64_t lead[KS_MAX_DIMS] = {0};
    for (int d = ts->ndim - 3; d >= 0; --d) lead[d] = rest % ts->shape[d], rest /= ts->shape[d];
    for (int d = 0; d < ts->ndim - 2 && used < (int)sizeof where; ++d)
        used += snprintf(where + used, sizeof where - (size_t)used, "%lld, ", (long long)lead[d]);
    if (used < (int)sizeof where)
        snprintf(where + used, sizeof where - (size_t)used, "%s]", ts->ndim >= 2 ? ":, :" : ":");
    fprintf(out, "\n  %s of %s %s", where, ts->name, shape);
    if (y0 != 0 || x0 != 0 || y1 != H || x1 != W) /* cropped, or a margin of padding */
        fprintf(out, "; rows %lld..%lld, columns %lld..%lld shown", (long long)y0, (long long)y1 - 1, (long long)x0,
                (long long)x1 - 1);
    const int margin = y0 < 0 || x0 < 0 || y1 > H || x1 > W;
    fprintf(out, "\n  [v] touched by work item %lld, <v> in focus%s%s%s\n", (long long)S->idx.items[c->item].index,
            margin ? ", outside the tensor: padding" : "",
            margin && hide_padding ? (hide_padding > 1 ? " ([?]: a later step asks)" : " ([?]: asked)") : "",
            rounded ? ", ~ rounded to 4 digits" : "");
    const int64_t per = (x1 - x0 + bands - 1) / bands; /* columns a band, the bands as even as they go */
    for (int64_t bx = x0; bx < x1; bx += per) {
        const int64_t bx1 = bx + per < x1 ? bx + per : x1;
        if (bx > x0) fputc('\n', out);
        draw_band(out, ts, base, H, W, integral, m, nm, cw, y0, y1, bx, bx1, hide_padding ? "?" : "0");
    }
}

/* Rows y0..y1 of columns x0..x1 of plane `base` of ts, marks m[0..nm), cells cw wide, a
 * touched padding cell as pad. */
static void draw_band(FILE *out, const ks_tensor *ts, int64_t base, int64_t H, int64_t W, int integral, const mark *m,
                      int nm, int cw, int64_t y0, int64_t y1, int64_t x0, int64_t x1, const char *pad)
{
    fprintf(out, "      ");
    for (int64_t x = x0; x < x1; ++x) fprintf(out, " %*lld", cw, (long long)x);
    fputc('\n', out);
    for (int64_t y = y0; y < y1; ++y) {
        fprintf(out, "  %3lld ", (long long)y);
        for (int64_t x = x0; x < x1; ++x) {
            const int inside = y >= 0 && y < H && x >= 0 && x < W;
            int kind = 0;
            for (int i = 0; i < nm; ++i)
                if (m[i].y == y && m[i].x == x) kind = kind > 1 ? kind : 1 + m[i].focus;
            char v[32], cell[40];
            if (inside) fmt_value(v, sizeof v, ls_tensor_value(ts, base + y * W + x), integral);
            else snprintf(v, sizeof v, "%s", kind ? pad : ".");
            if (kind == 2) snprintf(cell, sizeof cell, "<%s>", v);
            else if (kind == 1) snprintf(cell, sizeof cell, "[%s]", v);
            else snprintf(cell, sizeof cell, "%s ", v);
            fprintf(out, " %*s", cw, cell);
        }
        fputc('\n', out);
    }
}

void ls_thread_entry(const ls_session *S, int64_t g, char *buf, size_t n)
{
    const int64_t b = g / S->tr.threads, t = g % S->tr.threads;
    size_t used = (size_t)snprintf(buf, n, "%3lld (%lld, %lld):", (long long)g, (long long)b, (long long)t);
    int k = 0;
    for (uint32_t i = 0; i < S->idx.nitems; ++i)
        if (S->idx.items[i].block == b && S->idx.items[i].thread == t && k++ < 12 && used < n)
            used += (size_t)snprintf(buf + used, n - used, " %lld", (long long)S->idx.items[i].index);
    if (used < n && k > 12) snprintf(buf + used, n - used, " ... (%d)", k);
    else if (used < n && k == 0) snprintf(buf + used, n - used, " none");
}

static void show_threads(FILE *out, const ls_session *S, const ls_ctx *c)
{
    const vw_item *f = &S->idx.items[c->item];
    const int64_t nthreads = S->tr.blocks * S->tr.threads;
    char line[256];
    fprintf(out, "\n  %s\n", LS_THREADS_HEAD);
    for (int64_t g = 0; g < nthreads && g < 16; ++g) {
        ls_thread_entry(S, g, line, sizeof line);
        fprintf(out, "  %c %s\n", g == vw_gthread(&S->tr, f->block, f->thread) ? '>' : ' ', line);
    }
    if (nthreads > 16) fprintf(out, "    ... %lld threads in all\n", (long long)nthreads);
}

/* The focused item's events around the focused one; a step whose question asks about
 * that item lists none after it: the answer reads them (issue 38 D2, as the slides'
 * events panel). */
/* An event's line with its value (" = 0", before any "(padding ...") as "?". */
static void hide_value(char *line)
{
    char *eq = strstr(line, " = "), *pad = strstr(line, " (padding");
    while (eq && strstr(eq + 1, " = ") && (!pad || strstr(eq + 1, " = ") < pad)) eq = strstr(eq + 1, " = ");
    if (!eq || (pad && eq > pad)) return;
    char *v = eq + 3, *end = v + strcspn(v, " ");
    memmove(v + 1, end, strlen(end) + 1);
    *v = '?';
}

/* hide_pad: the values of the item's padding taps (their reads and writes) print as ?,
 * where a later step asks what such a tap writes (issue 38 D2 N1: 02 s4 listed "tap 6
 * write columns[0, 6, 13] = 0" above s5's question) */
static void show_events(FILE *out, const ls_session *S, const ls_ctx *c, int asks, int hide_pad)
{
    const vw_item *it = &S->idx.items[c->item];
    uint64_t pad[4] = {0}; /* taps 0..255 that read in the padding */
    for (uint32_t k = 0; hide_pad && k < it->count; ++k) {
        const ks_event *ev = &S->tr.events[vw_item_ev(&S->idx, it, k)];
        if (ev->kind == KS_EV_READ && (ev->flags & KS_FLAG_PADDING) && ev->tap < 256)
            pad[ev->tap >> 6] |= 1ull << (ev->tap & 63);
    }
    uint32_t focus = 0;
    for (uint32_t k = 0; k < it->count; ++k)
        if (vw_item_ev(&S->idx, it, k) == c->event) focus = k;
    uint32_t lo = focus > 8 ? focus - 8 : 0, hi = lo + 18 < it->count ? lo + 18 : it->count;
    if (asks && focus < it->count) hi = focus + 1, lo = hi > 18 ? hi - 18 : 0;
    fprintf(out, "\n  events of work item %lld%s:\n", (long long)it->index,
            lo || hi < it->count ? " (around the focus)" : "");
    for (uint32_t k = lo; k < hi; ++k) {
        char line[VW_LINE_LEN];
        uint32_t e = vw_item_ev(&S->idx, it, k);
        const ks_event *ev = &S->tr.events[e];
        ks_step_describe_event(&S->tr, ev, line, sizeof line);
        if ((ev->kind == KS_EV_READ || ev->kind == KS_EV_WRITE) && ev->tap < 256 &&
            (pad[ev->tap >> 6] >> (ev->tap & 63) & 1))
            hide_value(line);
        /* a .cu kernel's event: its source line, as kscope step gives it (a barrier says it) */
        const int src = ks_event_fits(&S->tr, ev) && ev->kind != KS_EV_WORK && ev->kind != KS_EV_BARRIER
                            ? S->tr.sites[ev->site].line
                            : 0;
        if (src > 0 && strlen(line) + 16 < sizeof line)
            snprintf(line + strlen(line), sizeof line - strlen(line), "   line %d", src);
        fprintf(out, "  %c %s\n", e == c->event ? '>' : ' ', line);
    }
}

/* Whether step st asks a question about its focused work item (c's). */
static int asks_item(const ls_session *S, const ls_ctx *c, const ls_step *st)
{
    ls_ctx qc;
    char err[400];
    if (st->q.kind == LS_Q_NONE || ls_question_ctx(S, c, &st->q, &qc, err, sizeof err)) return 0;
    const int same = qc.item == c->item;
    ls_ctx_free(&qc);
    return same;
}

/* Whether a question of the next steps (two, of st's run) asks about a tap of c's work
 * item (named by index in its step's focus, kept by the question): the events list above
 * it stops at the focused event too, as the tap's events are what it asks (issue 38 D2:
 * 06 s3 and s4 listed item 0's tap 3 sample, 10.125, which s5 asks). */
static int next_asks_item(const ls_session *S, const ls_ctx *c, const ls_step *st)
{
    const ls_lesson *L = S->L;
    const int k = (int)(st - L->steps);
    const int64_t index = S->idx.items[c->item].index;
    for (int j = k + 1; j <= k + 2 && j < L->nsteps; ++j) {
        const ls_step *n = &L->steps[j];
        if (n->run != st->run) break;
        const int same = n->focus.kind == LS_FOCUS_INDEX ? n->focus.index == index : n->focus.kind == LS_FOCUS_KEEP;
        if (!same) break; /* another item: what follows is about it */
        if (n->q.kind != LS_Q_NONE && n->q.at.kind == LS_FOCUS_KEEP && n->q.at.tap_given) return 1;
    }
    return 0;
}

static void show(FILE *out, const ls_session *S, const ls_ctx *c, const ls_step *st)
{
    for (int i = 0; i < st->nshow; ++i) {
        const char *w = st->show[i];
        int t = ks_trace_tensor(&S->tr, w);
        int hide_padding = st->no_padding ? 2 : 0;
        for (int h = 0; h < st->q.nhide && !hide_padding; ++h) hide_padding = !strcmp(st->q.hide[h], "padding");
        if (t >= 0) draw_tensor(out, S, c, t, hide_padding);
        else if (!strcmp(w, "decomposition"))
            ks_step_print_work(out, &S->tr, &S->tr.events[vw_item_ev(&S->idx, &S->idx.items[c->item], 0)]);
        else if (!strcmp(w, "events"))
            show_events(out, S, c, asks_item(S, c, st) || next_asks_item(S, c, st), hide_padding);
        else if (!strcmp(w, "threads")) show_threads(out, S, c);
        else if (!strcmp(w, "launch")) {
            char cap[32];
            if (S->tr.block_cap < 0) snprintf(cap, sizeof cap, "none");
            else snprintf(cap, sizeof cap, "%lld", (long long)S->tr.block_cap);
            fprintf(out, "\n  launch: %lld block%s x %d threads = %lld threads for %lld work items (block cap %s)\n",
                    (long long)S->tr.blocks, S->tr.blocks == 1 ? "" : "s", S->tr.threads,
                    (long long)S->tr.blocks * S->tr.threads, (long long)S->tr.work_items, cap);
        }
    }
}

void ls_show_step(FILE *out, const ls_session *S, const ls_ctx *c, const ls_step *st) { show(out, S, c, st); }

/* Reads one line; NULL at the end of input. */
static char *read_line(FILE *in, char *buf, size_t n)
{
    if (!fgets(buf, (int)n, in)) return NULL;
    buf[strcspn(buf, "\r\n")] = 0;
    return buf;
}

/* Returns 1 right at the first try, 0 otherwise, -1 at the end of input, -2 on q. */
static int ask_at(const ls_session *S, const ls_ctx *c, int k, FILE *in, FILE *out, int auto_answer);
static int ask(const ls_session *S, const ls_ctx *step, int k, FILE *in, FILE *out, int auto_answer)
{
    ls_ctx qc;
    char err[400];
    if (ls_question_ctx(S, step, &S->L->steps[k].q, &qc, err, sizeof err)) return 0; /* checked before */
    int r = ask_at(S, &qc, k, in, out, auto_answer);
    ls_ctx_free(&qc);
    return r;
}

static int ask_at(const ls_session *S, const ls_ctx *c, int k, FILE *in, FILE *out, int auto_answer)
{
    const ls_question *q = &S->L->steps[k].q;
    char buf[LS_TEXT_MAX], err[400], answer[128], line[256];
    ls_render(S, c, q->prompt, buf, sizeof buf, err, sizeof err);
    fprintf(out, "\n  Question\n");
    wrap(out, buf, "  ");
    for (int i = 0; i < q->nchoices; ++i) {
        char num[16];
        ls_render(S, c, q->choices[i], buf, sizeof buf, err, sizeof err);
        snprintf(num, sizeof num, "    %d) ", i + 1);
        wrap_hang(out, buf, num, "       ");
    }
    if (q->kind == LS_Q_CELL) fprintf(out, q->ncell == 3 ? "  (answer as plane, y, x)\n" : "  (answer as y, x)\n");
    ls_answer_text(S, c, k, answer, sizeof answer);
    if (!auto_answer) fprintf(out, "  (? shows the answer worked out, q quits)\n");
    for (int attempt = 0; attempt < 2; ++attempt) {
        fprintf(out, "  answer> ");
        if (auto_answer) {
            fprintf(out, "%s   (--auto)\n", answer);
            snprintf(line, sizeof line, "%s", answer);
        } else {
            fflush(out);
            if (!read_line(in, line, sizeof line)) {
                fputc('\n', out);
                return -1;
            }
        }
        const char *t = line + strspn(line, " \t");
        if (!*t) { /* Enter alone: no answer yet, asked again (it used to count as a wrong one) */
            --attempt;
            continue;
        }
        if (!strcmp(t, "q") || !strcmp(t, "quit")) return -2; /* not an answer: nothing counts */
        const int give_up = !strcmp(t, "?");
        if (!give_up && ls_answer_ok(S, c, k, line)) {
            fprintf(out, "  Right.\n");
            return attempt == 0;
        }
        if (give_up || attempt == 1) {
            /* the worked answer: asked for, or after the second try */
            ls_render(S, c, q->explain, buf, sizeof buf, err, sizeof err);
            fprintf(out, give_up ? "  The answer is %s.\n" : "  Not quite. The answer is %s.\n", answer);
            wrap(out, buf, "  ");
            return 0;
        }
        /* the first wrong answer: a hint that does not give the answer away */
        ls_hint_text(S, c, k, line, buf, sizeof buf, err, sizeof err);
        fprintf(out, "  Not quite. A hint:\n");
        wrap(out, buf, "  ");
        fprintf(out, "  Try once more.\n");
    }
    return 0;
}

int ls_play_text(const ls_session *S, FILE *in, FILE *out, int auto_answer, int pause)
{
    const ls_lesson *L = S->L;
    char text[LS_TEXT_MAX], err[400];
    int questions = 0, first_try = 0;
    ls_ctx c;
    ls_ctx_init(&c);
    if (L->op)
        snprintf(text, sizeof text, "%s  (%s, %d steps, operator %s)", L->title, L->level, L->nsteps, L->op->name);
    else
        snprintf(text, sizeof text, "%s  (%s, %d steps, the recorded trace %s of %s)", L->title, L->level, L->nsteps,
                 L->runs[0].trace, S->tr.op);
    wrap(out, text, "");
    if (L->summary) wrap(out, L->summary, "");
    const ls_session *S0 = S;
    for (int k = 0; k < L->nsteps; ++k) {
        const ls_step *st = &L->steps[k];
        S = ls_step_session(S0, k);
        /* the focus is recomputed from the start so going back shows the same as before;
         * each run keeps its own focus */
        ls_ctx_free(&c);
        ls_ctx_init(&c);
        for (int j = 0; j <= k; ++j)
            if (L->steps[j].run == st->run) ls_focus_resolve(S, &L->steps[j].focus, &c, err, sizeof err);
        ls_render(S, &c, st->title, text, sizeof text, err, sizeof err);
        char rule[WIDTH + 1];
        int len = snprintf(rule, sizeof rule, "== Step %d of %d: %s ", k + 1, L->nsteps, text);
        for (int i = len; i < WIDTH && len >= 0; ++i) rule[i] = '=';
        rule[WIDTH] = 0;
        fprintf(out, "\n%s\n", rule);
        if (st->run && (k == 0 || L->steps[k - 1].run != st->run)) {
            char what[600];
            ls_run_describe(L, st->run, what, sizeof what);
            snprintf(text, sizeof text, "[run '%s': %s]", L->runs[st->run].name, what);
            wrap_hang(out, text, "", "  ");
        } else if (!st->run && k > 0 && L->steps[k - 1].run) {
            fprintf(out, "[back to the lesson's own run]\n");
        }
        ls_render(S, &c, st->text, text, sizeof text, err, sizeof err);
        wrap(out, text, "");
        show(out, S, &c, st);
        if (st->q.kind != LS_Q_NONE) {
            int r = ask(S, &c, k, in, out, auto_answer);
            if (r == -2) break; /* q: the lesson ends here, this question uncounted */
            if (r < 0) {
                ls_ctx_free(&c);
                return -1;
            }
            questions++;
            first_try += r;
        }
        if (pause && !auto_answer && k + 1 < L->nsteps) {
            char line[64];
            fprintf(out, "\n  [Enter] next   b back   q quit > ");
            fflush(out);
            if (!read_line(in, line, sizeof line) || line[0] == 'q') break;
            if (line[0] == 'b') k = k > 0 ? k - 2 : -1;
        }
    }
    if (questions)
        snprintf(text, sizeof text, "End of lesson: %s. %d of %d questions right at the first try.", L->title,
                 first_try, questions);
    else snprintf(text, sizeof text, "End of lesson: %s.", L->title);
    fputc('\n', out);
    wrap(out, text, "");
    ls_ctx_free(&c);
    return 0;
}
