/* vw_describe.c - the viewer's text (see vw_describe.h). */
#include "vw_describe.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/step.h"
#include "../trace/step_work.h"
#include "vw_plane.h"

static void add(vw_lines *L, int style, const char *fmt, ...) KS_PRINTF(3, 4);

static void add(vw_lines *L, int style, const char *fmt, ...)
{
    if (L->n >= VW_MAX_LINES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->text[L->n], VW_LINE_LEN, fmt, ap);
    va_end(ap);
    L->style[L->n++] = style;
}

/* The step-through's line (trace/step.c), guarded: a damaged trace's event may name a
 * tensor or site the header does not have. */
void vw_describe_event(const ks_trace *tr, const ks_event *e, char *buf, size_t n)
{
    if (e->kind != KS_EV_WORK && e->kind != KS_EV_BARRIER && e->tensor >= tr->ntensors) {
        snprintf(buf, n, "tap %u %s of tensor %u (not in this trace)", e->tap, ks_event_kind_name(e->kind), e->tensor);
        return;
    }
    if (e->kind == KS_EV_REGION && e->site >= tr->nsites) {
        snprintf(buf, n, "region of site %u (not in this trace)", e->site);
        return;
    }
    ks_step_describe_event(tr, e, buf, n);
}

/* On a slide that keeps what padding taps read and write to a later step
 * (vw_slide.hide_padding), line's value as ? for an event at a tap of the item whose
 * read lies in the padding (issue 38 D2 N1: "tap 6 write columns[0, 6, 13] = 0" above
 * "what does im2col write for a tap outside the image?"). */
static void hide_padding_value(const vw_state *s, const vw_item *item, const ks_event *e, char *line)
{
    if (!s->nslides || (e->kind != KS_EV_READ && e->kind != KS_EV_WRITE)) return;
    const int h = s->slides[s->slide].hide_padding;
    if (!(h == 2 || (h == 1 && !s->reveal))) return;
    int pad = 0;
    for (uint32_t k = 0; k < item->count && !pad; ++k) {
        const ks_event *r = vw_event(s->tr, vw_item_ev(s->idx, item, k));
        pad = r->kind == KS_EV_READ && (r->flags & KS_FLAG_PADDING) && r->tap == e->tap;
    }
    if (!pad) return;
    char *eq = strstr(line, " = "), *pd = strstr(line, " (padding");
    while (eq && strstr(eq + 1, " = ") && (!pd || strstr(eq + 1, " = ") < pd)) eq = strstr(eq + 1, " = ");
    if (!eq || (pd && eq > pd)) return;
    char *v = eq + 3, *end = v + strcspn(v, " ");
    memmove(v + 1, end, strlen(end) + 1);
    *v = '?';
}

static void describe_lookup(const vw_state *s, vw_lines *L)
{
    const vw_lookup *lk = &s->look;
    char where[128];
    if (lk->tensor < 0) return;
    ks_format_element(s->tr, lk->tensor, lk->plane, lk->y, lk->x, where, sizeof where);
    if (!lk->n) {
        add(L, VW_STYLE_HEAD, "lookup %s: no %s in this trace", where, lk->writes ? "writes" : "reads");
        return;
    }
    const ks_event *e = vw_event(s->tr, lk->hits[lk->at].event);
    add(L, VW_STYLE_HEAD, "lookup %s: %s %llu of %llu%s: thread %lld, index %lld, weight %.4g", where,
        lk->writes ? "write" : "read", (unsigned long long)lk->at + 1, (unsigned long long)lk->total,
        lk->n < lk->total ? " (first ones kept)" : "", (long long)vw_gthread(s->tr, e->block, e->thread),
        (long long)e->index, lk->hits[lk->at].weight);
}

/* A field read straight off the index ("index / 9 % 2", "index % 4"): its digits. */
static int is_digit_line(const ks_work_line *l)
{
    return !strncmp(l->expr, "index", 5) && (l->expr[5] == ' ' || !l->expr[5]);
}

/* Whether field `name` is one the shown slide's narration names (" i j ": its fields). */
static int narrated(const vw_state *s, const char *name)
{
    if (!s->nslides || !s->slides || s->slide < 0 || s->slide >= s->nslides) return 0;
    const char *f = s->slides[s->slide].fields;
    const size_t n = strlen(name);
    for (const char *p = strstr(f, name); p; p = strstr(p + 1, name))
        if (p > f && p[-1] == ' ' && p[n] == ' ') return 1;
    /* threadIdx.x when the narration names threadIdx ({work.threadIdx}: all three) */
    const char *dot = strchr(name, '.');
    if (dot && dot > name) {
        char whole[64];
        snprintf(whole, sizeof whole, " %.*s ", (int)(dot - name), name);
        return strstr(f, whole) != NULL;
    }
    return 0;
}

/* The work item's header, index and field lines; at most `room` field lines (< 0: all;
 * digits 0: none of the index's digits the narration does not name).
 * When they do not all fit (a slide's short panel), the fields the slide's narration
 * names come first, then the worked-out fields (a RoI's box, a patch's row i = floor(y)
 * + ii - R), then the index's digits, which the header's index already gives; the lines
 * keep their order. */
/* A slide's short panel writes a CUDA index's three digits as one line, "threadIdx =
 * (x,y,z) = (4,0,0)", when their six lines do not fit (set around describe_focus). */
static int triples;
/* How many of a CUDA index's digit lines the last describe_focus left out (no triples):
 * a slide then writes the digits as triples, which keeps them all in fewer lines (14 s5
 * showed blockIdx.z, .y and .x, all 0, and no threadIdx: issue 38's sixth re-trial). */
static int triple_lines_dropped;

/* Whether lines[k] is digit d ("x", "y", "z") of a triple P.x, P.y, P.z all among the
 * lines as digits; *base: the index of P.x. */
static int triple_of(const ks_work_line *lines, int n, int k, int *first)
{
    const char *dot = strrchr(lines[k].name, '.');
    if (!dot || dot == lines[k].name || strlen(dot) != 2 || !strchr("xyz", dot[1])) return 0;
    const int plen = (int)(dot - lines[k].name);
    int found = 0;
    for (int j = 0; j < n; ++j)
        if (!strncmp(lines[j].name, lines[k].name, (size_t)plen + 1) && strlen(lines[j].name) == (size_t)plen + 2 &&
            strchr("xyz", lines[j].name[plen + 1]) && is_digit_line(&lines[j]) && !lines[j].wrong) {
            if (lines[j].name[plen + 1] == 'x') *first = j;
            found++;
        }
    return found == 3;
}

/* Whether name stands in expr as a word of its own. */
static int uses(const char *expr, const char *name)
{
    const size_t len = strlen(name);
    for (const char *p = len ? strstr(expr, name) : NULL; p; p = strstr(p + 1, name)) {
        const char b = p > expr ? p[-1] : ' ', a = p[len];
        const int inb = b == '_' || b == '.' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
                        (b >= '0' && b <= '9');
        const int ina = a == '_' || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z') || (a >= '0' && a <= '9');
        if (!inb && !ina) return 1;
    }
    return 0;
}

/* Line k with the lines it is worked out of, and theirs: marks those not kept yet 2 in
 * keep and returns how many lines that is, k's own included (k stays as it was: the
 * caller keeps it, and its inputs (the 2s) or none of them). digits_free: the index's
 * digits are on a line of their own (the live viewer's compact line), never missing. */
static int with_inputs(const ks_work_line *lines, int n, int k, int *keep, int digits_free)
{
    int count = 1, grew = 1;
    keep[k] = keep[k] ? keep[k] : 3; /* k itself, in the set while it grows */
    while (grew) {
        grew = 0;
        for (int j = 0; j < n; ++j) {
            if (keep[j] < 2) continue;
            for (int i = 0; i < n; ++i)
                if (!keep[i] && i != j && uses(lines[j].expr, lines[i].name) &&
                    !(digits_free && is_digit_line(&lines[i]) && !lines[i].wrong))
                    keep[i] = 2, count++, grew = 1;
        }
    }
    if (keep[k] == 3) keep[k] = 0;
    return count;
}

static void describe_work(const vw_state *s, const ks_event *w, vw_lines *L, int room, int digits)
{
    const ks_trace *tr = s->tr;
    int64_t grid = tr->blocks * tr->threads;
    add(L, VW_STYLE_HEAD, "work item %lld: block %u, thread %u, iteration %u  (global thread %lld)",
        (long long)w->index, w->block, w->thread, w->iter, (long long)vw_gthread(tr, w->block, w->thread));
    add(L, VW_STYLE_TEXT, "  index = block*%d + thread + iteration*%lld = %u*%d + %u + %u*%lld", tr->threads,
        (long long)grid, w->block, tr->threads, w->thread, w->iter, (long long)grid);
    if (w->site >= tr->nsites) {
        add(L, VW_STYLE_DIM, "  (site %u is not in the header)", w->site);
        return;
    }
    /* the lines `kscope step` prints: each field's formula with its inputs' values (the
     * givens a field needs, a RoI's box and bins, a patch centre, first) and only the
     * branch taken */
    static ks_work_line lines[KS_WORK_LINES];
    static int keep[KS_WORK_LINES];
    const int n = ks_step_work_lines(tr, w, lines, KS_WORK_LINES);
    int width = 0;
    for (int k = 0; k < n; ++k)
        if ((int)strlen(lines[k].name) > width) width = (int)strlen(lines[k].name);
    /* rank 0: narrated, 1: worked out (or a digit that does not hold), 2: a thread's
     * digits (threadIdx: the thread a slide speaks of; 14 s3 and s5 kept blockIdx, all 0,
     * and no threadIdx: issue 38 D4, eighth re-trial), 3: the other digits; the room goes
     * to the lower ranks first */
    int budget = room >= 0 && room < n ? room : n, ndigits = 0;
    for (int k = 0; k < n; ++k) keep[k] = 0, ndigits += is_digit_line(&lines[k]) && !lines[k].wrong;
    /* outside a slide every digit stays: when their lines do not all fit, one line holds
     * them all ("index digits: p=0, oy=4, ox=1"), so its room is kept first */
    const int compact = digits > 0 && !s->nslides && ndigits > 0 && budget > 0 && budget < n;
    budget -= compact;
    /* rank 0, then the lines the narrated ones are worked out of where there is room
     * (a narrated line stays without them: the narration names it), then ranks 1 and 2 */
    for (int rank = 0; rank < 4; ++rank)
        for (int pass = 0; pass < (rank ? 1 : 2); ++pass)
            for (int k = 0; k < n && budget > 0; ++k) {
                const int digit = is_digit_line(&lines[k]) && !lines[k].wrong;
                const int r = narrated(s, lines[k].name)                  ? 0
                              : !digit                                    ? 1
                              : !strncmp(lines[k].name, "threadIdx.", 10) ? 2
                                                                          : 3;
                if (pass && r == 0 && keep[k]) { /* a narrated line's inputs, if all fit */
                    const int need = with_inputs(lines, n, k, keep, compact) - 1;
                    for (int j = 0; j < n; ++j)
                        if (keep[j] == 2) keep[j] = need <= budget;
                    if (need <= budget) budget -= need;
                    continue;
                }
                if (pass || r != rank || keep[k] || !(r == 0 || (r == 1 && digits >= 0) || (r >= 2 && digits > 0)))
                    continue;
                /* a line shown for the room, worked out of other fields, comes with them or
                 * not at all: "j = floor(x) + jj - R" without jj's line left jj unexplained
                 * (issue 38 D4: 10 s11's jj, s15's w_col) */
                if (r > 0) {
                    const int need = with_inputs(lines, n, k, keep, compact);
                    for (int j = 0; j < n; ++j)
                        if (keep[j] == 2) keep[j] = need <= budget;
                    if (need > budget) continue;
                    budget -= need - 1;
                }
                int first = -1;
                if (triples && triple_of(lines, n, k, &first)) { /* one line for the three */
                    const size_t plen = (size_t)(strrchr(lines[k].name, '.') - lines[k].name) + 1;
                    for (int j = 0; j < n; ++j)
                        if (!strncmp(lines[j].name, lines[k].name, plen) && strlen(lines[j].name) == plen + 1)
                            keep[j] = 1;
                } else keep[k] = 1;
                budget--;
            }
    if (triples) /* a triple kept whole: its three lines are one */
        for (int k = 0; k < n; ++k) {
            int first = -1;
            if (!triple_of(lines, n, k, &first)) continue;
            const int plen = (int)(strrchr(lines[k].name, '.') - lines[k].name);
            if (k != first) {
                keep[first] |= keep[k];
                keep[k] = 0;
            }
            (void)plen;
        }
    triple_lines_dropped = 0;
    for (int k = 0; k < n && !triples; ++k) {
        int first = -1;
        triple_lines_dropped += !keep[k] && triple_of(lines, n, k, &first);
    }
    for (int k = 0; k < n; ++k) {
        const ks_work_line *l = &lines[k];
        if (!keep[k]) continue;
        int first = -1;
        if (triples && triple_of(lines, n, k, &first)) { /* "threadIdx = (x,y,z) = (4,0,0)" */
            const int plen = (int)(strrchr(l->name, '.') - l->name);
            const char *v[3] = {"?", "?", "?"};
            for (int j = 0; j < n; ++j)
                if (!strncmp(lines[j].name, l->name, (size_t)plen + 1) && strlen(lines[j].name) == (size_t)plen + 2)
                    v[lines[j].name[plen + 1] - 'x'] = lines[j].value;
            add(L, VW_STYLE_TEXT, "  %-*.*s = (x,y,z) = (%s,%s,%s)", width, plen, l->name, v[0], v[1], v[2]);
            continue;
        }
        /* step's mark when the recorded value does not hold (the panel leaves out step's
         * "not recomputed" remark: no room) */
        add(L, VW_STYLE_TEXT, "  %-*s = %s%s%s = %s%s%s%s", width, l->name, l->expr, l->worked[0] ? " = " : "",
            l->worked, l->value, l->wrong ? "   (" : "", l->wrong ? l->note : "", l->wrong ? ")" : "");
    }
    if (!compact) return;
    char text[VW_LINE_LEN];
    int used = snprintf(text, sizeof text, "  index digits:");
    for (int k = 0, first = 1; k < n && used < (int)sizeof text; ++k)
        if (is_digit_line(&lines[k]) && !lines[k].wrong && !keep[k]) {
            used += snprintf(text + used, sizeof text - (size_t)used, "%s %s=%s", first ? "" : ",", lines[k].name,
                             lines[k].value);
            first = 0;
        }
    if (strchr(text, '=')) add(L, VW_STYLE_TEXT, "%s", text);
}

void vw_describe_work_names(const vw_state *s, char *buf, size_t n)
{
    static ks_work_line lines[KS_WORK_LINES];
    buf[0] = 0;
    const uint32_t it = vw_state_item(s);
    if (it == VW_NONE || !s->idx) return;
    const ks_event *w = vw_event(s->tr, vw_item_ev(s->idx, &s->idx->items[it], 0));
    if (w->kind != KS_EV_WORK || w->site >= s->tr->nsites) return;
    const int k = ks_step_work_lines(s->tr, w, lines, KS_WORK_LINES);
    size_t used = 0;
    for (int i = 0; i < k && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, "%s%s ", i ? "" : " ", lines[i].name);
}

void vw_describe_item_sites(const ks_trace *tr, const vw_index *idx, uint32_t it, char *buf, size_t n)
{
    uint32_t count[KS_MAX_SITES] = {0};
    size_t used = 0;
    buf[0] = '\0';
    if (it >= idx->nitems) return;
    const vw_item *item = &idx->items[it];
    for (uint32_t k = 0; k < item->count; ++k) {
        const ks_event *e = vw_event(tr, vw_item_ev(idx, item, k));
        if (e->kind != KS_EV_WORK && e->site < tr->nsites && e->site < KS_MAX_SITES) count[e->site]++;
    }
    for (int i = 0; i < tr->nsites && i < KS_MAX_SITES && used < n; ++i) {
        if (!count[i]) continue;
        /* "sparse_conv.hash_probe" -> "hash_probe": the operator's prefix says nothing here */
        const char *dot = strchr(tr->sites[i].name, '.');
        used += (size_t)snprintf(buf + used, n - used, "%s%u %s", used ? ", " : "", count[i],
                                 dot && dot[1] ? dot + 1 : tr->sites[i].name);
    }
}

uint32_t vw_describe_events_end(const vw_state *s, uint32_t item, uint32_t count, uint32_t focus)
{
    const vw_slide *sl = s->nslides && s->slide >= 0 && s->slide < s->nslides ? &s->slides[s->slide] : NULL;
    const int asked = sl && sl->question && !s->reveal && (!sl->asked_item || sl->asked_item - 1 == (int64_t)item);
    return asked && focus < count ? focus + 1 : count;
}

/* vw_describe_focus; *window: where the window of the item's events starts (L->n when
 * there is none); whole 0: without the sites line and the digits no narration names;
 * -1: only the fields the narration names */
static void describe_focus(const vw_state *s, vw_lines *L, int max_lines, int *window, int whole)
{
    const ks_trace *tr = s->tr;
    char line[VW_LINE_LEN];
    L->n = 0;
    *window = VW_MAX_LINES;
    if (max_lines > VW_MAX_LINES) max_lines = VW_MAX_LINES;
    describe_lookup(s, L);
    uint32_t ev = vw_state_event(s);
    if (ev == VW_NONE) {
        add(L, VW_STYLE_DIM, "this trace has no events (%llu dropped)", (unsigned long long)tr->dropped);
        return;
    }
    const ks_event *e = vw_event(tr, ev);
    uint32_t it = vw_state_item(s);
    if (it == VW_NONE) {
        if (e->kind == KS_EV_WORK) describe_work(s, e, L, -1, 1);
        else
            add(L, VW_STYLE_DIM,
                s->idx ? "event %u has no work event in the trace (thread %u of block %u)"
                       : "event %u (thread %u of block %u); its work item shows once indexing ends",
                ev, e->thread, e->block);
        vw_describe_event(tr, e, line, sizeof line);
        add(L, VW_STYLE_FOCUS, "> %s", line);
        return;
    }
    const vw_item *item = &s->idx->items[it];
    const ks_event *w = vw_event(tr, vw_item_ev(s->idx, item, 0));
    const int before = L->n;
    const int fields = max_lines - 4 - before; /* less the header, index, event header and focus */
    describe_work(s, w, L, fields > 0 ? fields : 0, whole);
    /* a short panel (a slide's) keeps the item's header line, the event header and the
     * focused event: describe_work left out fields to fit, digits first */
    if (L->n > max_lines - 2) L->n = max_lines - 2 > before + 1 ? max_lines - 2 : before + 1;
    uint32_t k = 0;
    while (k < item->count && vw_item_ev(s->idx, item, k) != ev) ++k;
    vw_describe_item_sites(tr, s->idx, it, line, sizeof line);
    if (whole > 0 && !s->nslides && line[0] && L->n + 2 < max_lines) add(L, VW_STYLE_DIM, "  %s", line);
    add(L, VW_STYLE_HEAD, "event %u of %u of this work item:", k + 1, item->count);
    /* a window of the item's events around the focused one; a question slide's ends at
     * it: the events after it are what the answer reads (issue 38 D2: 05 s10's "tap 7
     * sample ... = 0" under "what value does tap (2, 1) sample?") */
    *window = L->n;
    int room = max_lines - L->n;
    if (room < 1) return;
    const uint32_t end = vw_describe_events_end(s, it, item->count, k);
    uint32_t lo = k > (uint32_t)room / 2 ? k - (uint32_t)room / 2 : 0;
    if (lo + (uint32_t)room > end) lo = end > (uint32_t)room ? end - (uint32_t)room : 0;
    for (uint32_t j = lo; j < end && L->n < max_lines; ++j) {
        const ks_event *ej = vw_event(tr, vw_item_ev(s->idx, item, j));
        vw_describe_event(tr, ej, line, sizeof line);
        hide_padding_value(s, item, ej, line);
        add(L, j == k ? VW_STYLE_FOCUS : VW_STYLE_TEXT, "%s %s", j == k ? ">" : " ", line);
    }
}

void vw_describe_focus(const vw_state *s, vw_lines *L, int max_lines)
{
    int window;
    describe_focus(s, L, max_lines, &window, 1);
}

/* Line `text` wrapped at `cols` onto out: breaks before " = " or at a space where it
 * can, continuation lines indented under the first line's value (after its "= "). */
static void wrap_line(vw_lines *out, int style, const char *text, int cols)
{
    const char *eq = strstr(text, "= ");
    int indent = eq && eq - text + 2 <= cols / 2 ? (int)(eq - text) + 2 : 4;
    const char *p = text;
    for (int first = 1; *p && out->n < VW_MAX_LINES; first = 0) {
        const int pad = first ? 0 : indent, avail = cols - pad;
        size_t take = strlen(p);
        if ((int)take > avail) {
            take = (size_t)avail;
            size_t at = take;
            while (at > 0 && strncmp(p + at, " = ", 3)) at--;
            /* not right after the name: "index" alone on a line says nothing */
            if (first && eq && p + at <= eq) at = 0;
            if (at == 0)
                for (at = take; at > 0 && p[at] != ' ';) at--;
            if (at > 0) take = at;
        }
        add(out, style, "%*s%.*s", pad, "", (int)take, p);
        p += take;
        while (*p == ' ') p++;
    }
}

size_t vw_field_name_len(const char *t)
{
    if (strncmp(t, "  ", 2) || t[2] == ' ') return 0;
    const char *p = t + 2;
    size_t len = 0;
    while (p[len] == '_' || (p[len] >= 'a' && p[len] <= 'z') || (p[len] >= 'A' && p[len] <= 'Z') ||
           (len && ((p[len] >= '0' && p[len] <= '9') || p[len] == '.')))
        len++;
    const char *q = p + len;
    while (*q == ' ') q++;
    return len && *q == '=' ? len : 0;
}

const char *vw_field_second(const char *t)
{
    const char *eq = strchr(t, '='), *sep = eq ? strstr(eq, VW_FIELD_GAP) : NULL;
    if (!sep) return NULL;
    while (*sep == ' ') sep++; /* the first column's padding and the gap, then "  name" */
    return *sep ? sep - 2 : NULL;
}

/* A slide's field lines two to a line where the panel is wide enough for both, the second
 * column after VW_FIELD_GAP ("  n     = index / 30 = 0      c_im  = index / 15 % 2 = 0"):
 * a decomposition across the frame keeps its fields in half the lines, and the pictures
 * the room (issue 38 D1, fourteenth re-trial N28: 02 s2's n and c_im sent the text to a
 * column at 1024x768 and left the input a 176 px stamp). A line with a continuation (a
 * long one wrapped under its value) stays whole. */
static void pack_fields(vw_lines *out, int cols)
{
    int single[VW_MAX_LINES], width = 0;
    const int gap = (int)strlen(VW_FIELD_GAP) - 2, half = (cols - gap) / 2;
    for (int i = 0; i < out->n; ++i) { /* short ones: two side by side within the width */
        const int next_cont = i + 1 < out->n && !strncmp(out->text[i + 1], "   ", 3);
        single[i] = out->style[i] == VW_STYLE_TEXT && vw_field_name_len(out->text[i]) && !next_cont &&
                    (int)strlen(out->text[i]) <= half;
        if (single[i] && (int)strlen(out->text[i]) > width) width = (int)strlen(out->text[i]);
    }
    int n = 0;
    for (int i = 0; i < out->n; ++i) {
        const int pair = i + 1 < out->n && single[i] && single[i + 1] &&
                         width + gap + (int)strlen(out->text[i + 1]) <= cols;
        char line[VW_LINE_LEN];
        if (pair) snprintf(line, sizeof line, "%-*s%s%s", width, out->text[i], VW_FIELD_GAP, out->text[i + 1] + 2);
        else snprintf(line, sizeof line, "%s", out->text[i]);
        out->style[n] = out->style[i];
        memcpy(out->text[n++], line, sizeof line);
        i += pair;
    }
    out->n = n;
}

/* Whether a field the shown slide's narration names has no line among out's. */
static int narrated_missing(const vw_state *s, const vw_lines *out)
{
    for (const char *name = s->slides[s->slide].fields; *name;) {
        while (*name == ' ') name++;
        const size_t n = strcspn(name, " ");
        if (!n) break;
        /* a field whole, or a triple ({work.threadIdx}) as its one line or all three of its
         * own (threadIdx.z alone kept 13 s7's index and z, not the thread's x: issue 38 D4) */
        int there = 0, parts = 0;
        for (int i = 0; i < 2 * out->n && !there; ++i) { /* each line's first field, then its second */
            const char *t = i < out->n ? out->text[i] : vw_field_second(out->text[i - out->n]);
            if (!t) continue;
            while (*t == ' ') t++;
            if (strncmp(t, name, n)) continue;
            if (t[n] == ' ') there = 1;
            else if (t[n] == '.' && t[n + 1] >= 'x' && t[n + 1] <= 'z' && t[n + 2] == ' ')
                parts |= 1 << (t[n + 1] - 'x');
        }
        there |= parts == 7;
        if (!there) return 1;
        name += n;
    }
    return 0;
}

void vw_describe_focus_wrapped(const vw_state *s, int cols, vw_lines *out, int max_lines)
{
    static vw_lines raw;
    if (cols < 16) cols = 16;
    if (cols > VW_LINE_LEN - 1) cols = VW_LINE_LEN - 1;
    if (max_lines > VW_MAX_LINES) max_lines = VW_MAX_LINES;
    /* fewer lines until they fit wrapped: the fields give way as in a short panel; on a
     * slide where that loses a field the narration names, or some of a CUDA index's
     * digits, the digits take one line per triple and it goes again */
    for (int pass = 0; pass < (s->nslides ? 2 : 1); ++pass) {
        triples = pass;
        /* a slide's fields pack two to a line (pack_fields): more lines of them than rows fit */
        for (int rows = s->nslides ? VW_MAX_LINES : max_lines; rows >= 1; --rows) {
            int window;
            describe_focus(s, &raw, rows, &window, 1);
            out->n = 0;
            for (int i = 0; i < raw.n; ++i) wrap_line(out, raw.style[i], raw.text[i], cols);
            if (s->nslides) pack_fields(out, cols);
            if (out->n > max_lines) continue;
            if (!pass && s->nslides && (narrated_missing(s, out) || triple_lines_dropped)) break;
            triples = 0;
            return;
        }
    }
    triples = 0;
    out->n = max_lines > 0 ? max_lines : 0;
}

int vw_describe_focus_needed(const vw_state *s, int cols) { return vw_describe_focus_lines(s, cols, 0); }

int vw_describe_focus_lines(const vw_state *s, int cols, int least)
{
    static vw_lines raw, out;
    int window;
    triples = least && s->nslides;
    describe_focus(s, &raw, VW_MAX_LINES, &window, least ? -1 : 0);
    triples = 0;
    out.n = 0;
    for (int i = 0; i < raw.n; ++i)
        if (i < window || raw.style[i] == VW_STYLE_FOCUS)
            wrap_line(&out, raw.style[i], raw.text[i], cols < 16 ? 16 : cols);
    if (s->nslides) pack_fields(&out, cols < 16 ? 16 : cols);
    return out.n;
}

void vw_wrap(vw_lines *out, int max_lines, int style, const char *text, int cols)
{
    if (cols < 8) cols = 8;
    if (cols > VW_LINE_LEN - 1) cols = VW_LINE_LEN - 1;
    const char *p = text;
    while (*p && out->n < max_lines && out->n < VW_MAX_LINES) {
        /* one output line: as many whole words as fit, or a hard cut of a long word */
        const char *eol = strchr(p, '\n');
        size_t avail = eol ? (size_t)(eol - p) : strlen(p);
        size_t take = avail;
        if (take > (size_t)cols) {
            take = (size_t)cols;
            while (take > 0 && p[take] != ' ') take--;
            if (take == 0) take = (size_t)cols;
        }
        add(out, style, "%.*s", (int)take, p);
        p += take;
        if (eol && p == eol) p++;
        else
            while (*p == ' ') p++;
    }
}

/* Appends src's lines to out (at most max_lines in all). */
static void append_lines(vw_lines *out, const vw_lines *src, int max_lines)
{
    for (int i = 0; i < src->n && out->n < max_lines && out->n < VW_MAX_LINES; ++i) {
        out->style[out->n] = src->style[i];
        memcpy(out->text[out->n++], src->text[i], sizeof src->text[i]);
    }
}

/* A slide's band in parts: the title; the body (the run line, the narration);
 * the tail (the question with its choices, and with reveal the answer). */
static void story_parts(const vw_slide *sl, int reveal, int cols, vw_lines *title, vw_lines *body, vw_lines *tail)
{
    title->n = body->n = tail->n = 0;
    vw_wrap(title, VW_MAX_LINES, VW_STYLE_HEAD, sl->title ? sl->title : "", cols);
    if (sl->pre) vw_wrap(body, VW_MAX_LINES, VW_STYLE_DIM, sl->pre, cols);
    vw_wrap(body, VW_MAX_LINES, VW_STYLE_TEXT, sl->text ? sl->text : "", cols);
    if (sl->question) vw_wrap(tail, VW_MAX_LINES, VW_STYLE_FOCUS, sl->question, cols);
    if (sl->question && reveal && sl->answer) vw_wrap(tail, VW_MAX_LINES, VW_STYLE_HEAD, sl->answer, cols);
}

int vw_story_narration_lines(const vw_slide *sl, int cols)
{
    /* the run line reads as narration too: the band's body, all of it (issue 38 D1: 01
     * s9's thread table under its text took 16 lines at 1024x768 and was not counted;
     * the table is the terminal's now, the slide draws the waves) */
    static vw_lines body;
    body.n = 0;
    if (sl->pre) vw_wrap(&body, VW_MAX_LINES, VW_STYLE_DIM, sl->pre, cols);
    vw_wrap(&body, VW_MAX_LINES, VW_STYLE_TEXT, sl->text ? sl->text : "", cols);
    return body.n;
}

int vw_story_band_needed(const vw_slide *sl, int cols)
{
    static vw_lines title, body, tail;
    story_parts(sl, 0, cols, &title, &body, &tail);
    int need = title.n + body.n + tail.n;
    if (sl->question && sl->answer) { /* the answer slide: the body gives way to the answer */
        story_parts(sl, 1, cols, &title, &body, &tail);
        const int answer = title.n + tail.n + (body.n > 0);
        if (answer > need) need = answer;
    }
    return need;
}

/* The longest of a mark's wordings that fits cols characters (the last when none does):
 * a narrow band beside the pictures cut the long one (issue 38: 09 step 8's grey line). */
static const char *mark_fit(int cols, const char *const *forms, int n)
{
    int k = 0;
    while (k + 1 < n && (int)strlen(forms[k]) > cols) k++;
    return forms[k];
}

/* (the tests know a mark by its words "text: " or "question: " before "slide before)",
 * and the cut narration's by "... (the rest:") */
static const char *const text_before[] = {"(the step's text: the slide before)", "(the step's text: slide before)",
                                          "(the text: slide before)", "(text: slide before)"};
static const char *const question_before[] = {"(the question: the slide before)", "(the question: slide before)",
                                              "(question: slide before)"};
static const char *const rest_elsewhere[] = {"... (the rest: kscope lesson in a terminal)",
                                             "... (the rest: in a terminal)", "... (the rest: terminal)"};
#define MARK_FIT(cols, forms) mark_fit(cols, forms, (int)(sizeof forms / sizeof forms[0]))

void vw_describe_story(const vw_state *s, int cols, vw_lines *out, int max_lines)
{
    out->n = 0;
    if (!s->nslides) return;
    const vw_slide *sl = &s->slides[s->slide];
    if (max_lines > VW_MAX_LINES) max_lines = VW_MAX_LINES;
    /* The title, the question, its choices and the answer always show. When the band is
     * too short for all of it the body gives way, visibly: on an answer slide to the
     * answer (the slide before showed it), else with a mark (the terminal player and the
     * lesson file have it whole). A slide's band is as tall as the slide needs (issue 38
     * D1), so this is for windows smaller than the slides were made for. */
    static vw_lines title, body, tail;
    const int reveal = sl->question && s->reveal && sl->answer;
    story_parts(sl, s->reveal, cols, &title, &body, &tail);
    if (reveal && title.n + body.n + tail.n > max_lines) {
        body.n = 0;
        add(&body, VW_STYLE_DIM, "%s", MARK_FIT(cols, text_before));
        int asked = 0; /* the question's lines: they lead the tail */
        while (asked < tail.n && tail.style[asked] == VW_STYLE_FOCUS) asked++;
        if (title.n + body.n + tail.n > max_lines && asked > 0) { /* the question was the slide before too */
            memmove(&tail.text[1], &tail.text[asked], (size_t)(tail.n - asked) * sizeof tail.text[0]);
            memmove(&tail.style[1], &tail.style[asked], (size_t)(tail.n - asked) * sizeof tail.style[0]);
            tail.n = tail.n - asked + 1;
            tail.style[0] = VW_STYLE_DIM;
            snprintf(tail.text[0], sizeof tail.text[0], "%s", MARK_FIT(cols, question_before));
            body.n = 0;
        }
    }
    append_lines(out, &title, max_lines);
    int keep = body.n; /* body lines that fit beside the tail (and the mark, when cut) */
    if (out->n + body.n + tail.n > max_lines) keep = max_lines - out->n - tail.n - 1;
    for (int i = 0; i < keep && i < body.n && out->n < max_lines; ++i) {
        out->style[out->n] = body.style[i];
        memcpy(out->text[out->n++], body.text[i], sizeof body.text[i]);
    }
    if (keep < body.n && out->n < max_lines) add(out, VW_STYLE_DIM, "%s", MARK_FIT(cols, rest_elsewhere));
    append_lines(out, &tail, max_lines);
}

void vw_describe_story_keys(const vw_state *s, char *buf, size_t n) { vw_describe_story_keys_fit(s, 0, buf, n); }

void vw_describe_story_keys_fit(const vw_state *s, int shorter, char *buf, size_t n)
{
    buf[0] = 0;
    if (!s->nslides) return;
    const vw_slide *sl = &s->slides[s->slide];
    if (shorter)
        snprintf(buf, n, "slide %d/%d  PgDn next  PgUp back%s  H keys", s->slide + 1, s->nslides,
                 sl->question ? (s->reveal ? "  A hide answer" : "  A answer") : "");
    else
        snprintf(buf, n, "slide %d of %d   PageDown next   PageUp back%s   H keys", s->slide + 1, s->nslides,
                 sl->question ? (s->reveal ? "   A hide the answer" : "   A show the answer") : "");
}

void vw_describe_title(const vw_state *s, char *buf, size_t n)
{
    const ks_trace *tr = s->tr;
    if (s->title) {
        snprintf(buf, n, "%s  |  %s on %s, %lld block(s) x %d threads, %lld work items", s->title, tr->op, tr->device,
                 (long long)tr->blocks, tr->threads, (long long)tr->work_items);
        return;
    }
    snprintf(buf, n, "%s on %s  |  %lld block(s) x %d threads, %lld work items  |  %s", tr->op, tr->device,
             (long long)tr->blocks, tr->threads, (long long)tr->work_items, tr->path);
}

int vw_describe_title_lines(const vw_state *s, int cols, vw_lines *out)
{
    char buf[1024];
    vw_describe_title(s, buf, sizeof buf);
    out->n = 0;
    /* a slide's title bar is one line where it can be: the lesson's title without the
     * trace's launch when both do not fit (the grid panel and status line give it) */
    if (s->nslides && s->title && (int)strlen(buf) > cols) snprintf(buf, sizeof buf, "%s", s->title);
    vw_wrap(out, VW_MAX_LINES, VW_STYLE_TEXT, buf, cols);
    if (!out->n) add(out, VW_STYLE_TEXT, "%s", "");
    return out->n;
}

int vw_story_lines_needed(const vw_slide *slides, int n, int cols)
{
    int most = 0;
    for (int k = 0; k < n; ++k) {
        const int need = vw_story_band_needed(&slides[k], cols);
        if (need > most) most = need;
    }
    return most;
}

/* "input[0, 1, :, :]": the tensor's name and the plane's leading coordinates */
void vw_describe_panel_where(const vw_state *s, int panel, char *where, size_t n)
{
    const int t = s->panel[panel].tensor;
    const ks_tensor *T = &s->tr->tensors[t];
    ks_format_element(s->tr, t, s->panel[panel].plane, 0, 0, where, n);
    /* "input[0, 1, 0, 0]" -> "input[0, 1, :, :]" */
    char *last = strrchr(where, '[');
    if (T->ndim > 2 && last) {
        char *comma = where + strlen(where);
        for (int c = 0; c < 2 && comma > last;)
            if (*--comma == ',') ++c;
        if (comma > last) snprintf(comma, n - (size_t)(comma - where), ", :, :]");
    } else {
        snprintf(where, n, "%s", T->name);
    }
}

void vw_describe_panel(const vw_state *s, int panel, double lo, double hi, char *buf, size_t n)
{
    vw_describe_panel_fit(s, panel, lo, hi, VW_LINE_LEN, buf, n);
}

void vw_describe_panel_fit(const vw_state *s, int panel, double lo, double hi, int cols, char *buf, size_t n)
{
    int t = s->panel[panel].tensor;
    if (t < 0) {
        snprintf(buf, n, "%s: no tensor in this trace", panel ? "output" : "input");
        return;
    }
    const ks_tensor *T = &s->tr->tensors[t];
    char shape[64], where[128];
    const vw_plane_dims d = vw_plane_dims_of(T);
    const long long p = (long long)s->panel[panel].plane, np = (long long)d.planes;
    /* whether the plane follows the focus is the live viewer's (F); a slide's plane is
     * the step's, and the word read as unexplained jargon (issue 38 D12) */
    const char *follow = s->nslides ? "" : s->follow ? "(follows)" : "(fixed)";
    vw_describe_panel_where(s, panel, where, sizeof where);
    ks_shape_str(T->ndim, T->shape, shape, sizeof shape);
    /* the range as the legend prints it: a rounded end marked (issue 38 D9: 05's columns
     * header read "values 0 .. 21.67" beside the legend's "~21.67") */
    char los[48], his[48];
    vw_cell_text(los, sizeof los, lo, 1);
    vw_cell_text(his, sizeof his, hi, 1);
    const char *gap = follow[0] ? "  " : "";
    snprintf(buf, n, "%s %s  plane %lld of %lld%s%s  %s %s .. %s", where, shape, p, np, gap, follow,
             vw_mode_name(vw_panel_mode(s, panel)), los, his);
    /* too long for the panel: the legend under the map names the mode and the range, so
     * they go first, then the follow state, then the shape; the plane's place stays */
    if ((int)strlen(buf) <= cols) return;
    snprintf(buf, n, "%s %s  plane %lld of %lld%s%s", where, shape, p, np, gap, follow);
    if ((int)strlen(buf) <= cols) return;
    snprintf(buf, n, "%s %s  plane %lld of %lld", where, shape, p, np);
    if ((int)strlen(buf) <= cols) return;
    snprintf(buf, n, "%s  plane %lld of %lld", where, p, np);
    if ((int)strlen(buf) <= cols) return;
    /* the plane's coordinates in `where` say which it is ("0/2" said too little: issue 38 D12) */
    snprintf(buf, n, "%s", where);
    /* a tensor of one plane: its name says it (a narrow panel beside a wide picture) */
    if ((int)strlen(buf) > cols && np == 1) snprintf(buf, n, "%s", T->name);
}

/* The status line's parts, in the order they print, each with its rank (0 first): what
 * a slide's line keeps when not all of it fits. */
enum { ST_PARTS = 10 };
typedef struct st_part {
    char text[300];
    int rank;
} st_part;

static int status_parts(const vw_state *s, int permille, int slide, st_part *part)
{
    const ks_trace *tr = s->tr;
    const uint64_t len = vw_state_len(s);
    int np = 0;
#define PART(r, ...) (snprintf(part[np].text, sizeof part[np].text, __VA_ARGS__), part[np++].rank = (r))
    const ks_site *w = vw_work_site(tr);
    char unit[64];
    if (s->unit == VW_UNIT_FIELD && w) snprintf(unit, sizeof unit, "field %s", w->fields[0].name);
    else snprintf(unit, sizeof unit, "%s", vw_unit_name(s->unit));
    const vw_mode m0 = vw_panel_mode(s, 0), m1 = vw_panel_mode(s, 1);
    /* a slide's line: its keys, its warnings and messages, the place in the trace; the
     * playback and the modes (the panels' legends name them) only where there is room */
    PART(slide ? 5 : 0, "event %llu of %llu", (unsigned long long)(len ? s->pos + 1 : 0), (unsigned long long)len);
    PART(slide ? 6 : 0, "%s order", vw_order_name(s->idx ? s->order : VW_ORDER_RECORDED));
    PART(slide ? 7 : 0, "step: %s", unit);
    PART(slide ? 8 : 0, "%s %.4g/s", s->playing ? "playing" : "paused", s->speed);
    PART(slide ? 9 : 0, "%s%s%s", vw_mode_name(m0), m0 != m1 ? " / " : "", m0 != m1 ? vw_mode_name(m1) : "");
    char alert[256] = "";
    size_t used = 0;
#define PUT(...)                                                                                           \
    do {                                                                                                   \
        if (used < sizeof alert) used += (size_t)snprintf(alert + used, sizeof alert - used, __VA_ARGS__); \
    } while (0)
    if (permille < 1000) PUT("%sindexing %d%%", used ? "  |  " : "", permille / 10);
    if (tr->dropped) PUT("%s%llu events DROPPED", used ? "  |  " : "", (unsigned long long)tr->dropped);
    if (s->idx && s->idx->orphans)
        PUT("%s%llu without work item", used ? "  |  " : "", (unsigned long long)s->idx->orphans);
    if (s->idx && s->idx->outside)
        PUT("%s%llu outside their tensor (kscope check)", used ? "  |  " : "", (unsigned long long)s->idx->outside);
#undef PUT
    if (alert[0]) PART(1, "%s", alert);
    if (s->hover && s->panel[s->hover_panel].tensor >= 0) { /* vw_state_clamp keeps it in the plane */
        int t = s->panel[s->hover_panel].tensor;
        char where[128], more[128] = "";
        const ks_tensor *T = &tr->tensors[t];
        vw_plane_dims d = vw_plane_dims_of(T);
        int64_t off = (s->panel[s->hover_panel].plane * d.h + s->hover_y) * d.w + s->hover_x;
        ks_format_element(tr, t, s->panel[s->hover_panel].plane, s->hover_y, s->hover_x, where, sizeof where);
        const double hv = vw_tensor_value(T, off);
        const vw_aggregate *a = s->idx && s->idx->agg[t].on ? &s->idx->agg[t] : NULL;
        if (a) {
            int k = snprintf(more, sizeof more, " (reads %u, weight %.4g, writes %u, visits %u",
                             vw_count_at(&a->reads, off), vw_agg_weight(a, off), vw_count_at(&a->writes, off),
                             vw_count_at(&a->visits, off));
            if (vw_sectors_at(s->idx, t, off) >= 0 && k > 0 && (size_t)k < sizeof more)
                k += snprintf(more + k, sizeof more - (size_t)k, ", sectors/request %.3g",
                              vw_sectors_at(s->idx, t, off));
            if (k > 0 && (size_t)k < sizeof more) snprintf(more + k, sizeof more - (size_t)k, ")");
        }
        const char *empty = vw_cell_empty(T, off) ? " (empty)" : "";
        if (isnan(hv)) PART(3, "%s = NaN%s%s", where, empty, more);
        else PART(3, "%s = %.6g%s%s", where, hv, empty, more);
    }
    if (s->message[0]) PART(2, "%s", s->message);
#undef PART
    return np;
}

/* lead, then the parts in `with` (a bit per part), in their order */
static size_t status_join(char *buf, size_t n, const char *lead, const st_part *part, int np, unsigned with)
{
    size_t used = 0;
    buf[0] = 0;
    if (lead[0]) used += (size_t)snprintf(buf, n, "%s", lead);
    for (int i = 0; i < np; ++i)
        if ((with & (1u << i)) && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "  |  " : "", part[i].text);
    return used;
}

void vw_describe_status_fit(const vw_state *s, int permille, int cols, char *buf, size_t n)
{
    if (!n) return;
    if (s->prompt) {
        snprintf(buf, n, "go to (index=N, thread=T, event=P; Enter, Esc): %s_", s->prompt_text);
        return;
    }
    st_part part[ST_PARTS];
    const int slide = s->nslides > 0;
    const int np = status_parts(s, permille, slide, part);
    char keys[160] = "";
    if (!slide || cols <= 0) { /* the live viewer's whole line (its panel cuts it) */
        if (slide) vw_describe_story_keys(s, keys, sizeof keys);
        status_join(buf, n, keys, part, np, (1u << np) - 1);
        return;
    }
    /* a slide's line fits the frame (issue 38: it was cut on every slide): the keys in
     * full where they fit, else shortened; after them, by rank, each part that still fits */
    vw_describe_story_keys_fit(s, 0, keys, sizeof keys);
    if ((int)strlen(keys) > cols) vw_describe_story_keys_fit(s, 1, keys, sizeof keys);
    unsigned with = 0;
    for (int r = 0; r < 16; ++r)
        for (int i = 0; i < np && r < 16; ++i) {
            if (part[i].rank != r) continue;
            char trial[1024];
            if ((int)status_join(trial, sizeof trial, keys, part, np, with | (1u << i)) <= cols) with |= 1u << i;
            else if (r >= 5) r = 16; /* the place, order, ...: a part left out leaves out those after it */
        }
    status_join(buf, n, keys, part, np, with);
}

void vw_describe_status(const vw_state *s, int permille, char *buf, size_t n)
{
    vw_describe_status_fit(s, permille, 0, buf, n);
}

const char *const *vw_help_lines(void)
{
    static const char *const lines[] = {
        "keys",
        "Right / Left     next / previous step",
        "1 2 3 4 5 6      step by event, work item, thread, warp, block, first field",
        "Space            play / pause        = -   faster / slower",
        "O                order: recorded, thread-major, iteration-major",
        "G                go to index=N, thread=T or event=P",
        "Home / End       first / last event",
        "M                heatmap: values, read count, weight sum, write count, visits, sectors",
        "W                warp strip: the focused request's 32 lanes, addresses, sectors",
        "C                schedule chart (blocks on SMs over time) for the grid; click a bar",
        "P / Shift+P      next / previous barrier phase of the block   U  shared-tile panel",
        "[ ]  ; '         input plane / output plane",
        "Tab  Ctrl+Tab    input tensor / output tensor     F  follow the focus",
        "B                1-D tensors (one-row planes) as bars on / off",
        "click a cell     who read it (input) or wrote it (output); N / Shift+N cycle",
        "click timeline   scrub         S or F12  screenshot (PNG)",
        "H or F1          this help     Esc  close / quit     Q  quit",
        "Z X  wheel       zoom in / out (the wheel: around the pointer)",
        "Shift+arrows     pan, or drag with the right button    R  automatic view again",
        "V                auto-zoom to the focused item's cells on / off (small cells)",
        "I                pictures (1 or 3 channel inputs in [0, 1]) as grey / RGB, or colormap",
        "PageDown/PageUp  lessons: next / previous slide    A  show the answer",
        "L                live parameters: J / K choose, , . change (re-runs), D opened, T save",
        NULL,
    };
    return lines;
}

/* vw_value_text; *named: the text is the float's shortest name (0.1), exact only as that
 * float's name, not as a decimal */
static int value_text(char *buf, size_t n, double v, int *named)
{
    *named = 0;
    if (isnan(v)) { /* "NaN" whatever its sign bit (printf says "-nan"; issue 38 D12) */
        snprintf(buf, n, "NaN");
        return 1;
    }
    if (isinf(v)) {
        snprintf(buf, n, "%s", v < 0 ? "-inf" : "inf");
        return 1;
    }
    if (v == floor(v) && fabs(v) < 1e15) { /* 20, not 2e+01 */
        snprintf(buf, n, "%lld", (long long)v);
        return 1;
    }
    /* a binary fraction with k fractional bits has exactly k decimals */
    for (int k = 1; k <= 40 && isfinite(v); ++k) {
        const double s = ldexp(v, k);
        if (s != floor(s)) continue;
        if (fabs(s) >= 9007199254740992.0) break; /* past 2^53: not held exactly */
        /* its exact decimal is s x 5^k over 10^k: the digits of |s| x 5^k are its
         * significant ones. Well past 9 of them (a random float: k near 24) it cannot
         * pass, and printing 24 decimals to count them was most of a scrubbed frame */
        if (log10(fabs(s)) + k * 0.69897000433601886 > 10.0) break;
        char full[96];
        snprintf(full, sizeof full, "%.*f", k, v);
        int sig = 0, lead = 1;
        for (const char *p = full; *p; ++p) {
            if (*p < '0' || *p > '9') continue;
            if (*p != '0') lead = 0;
            sig += !lead;
        }
        if (sig <= 9) {
            snprintf(buf, n, "%s", full);
            return 1;
        }
        break;
    }
    const int p = ks_real_digits_upto(v, KS_EXACT_DIGITS);
    if (p <= KS_EXACT_DIGITS) { /* 0.1: the float's own shortest name */
        snprintf(buf, n, "%.*g", p, v);
        *named = p;
        return 1;
    }
    snprintf(buf, n, "%.4g", v);
    return 0;
}

int vw_value_text(char *buf, size_t n, double v)
{
    int named;
    return value_text(buf, n, v, &named);
}

/* A cell's number: exact values in full (34.46875 beside 26.375), a rounded one marked
 * "~" (issue 38 D9); `narrow`: an exact value longer than its rounded form is rounded and
 * marked too, for cells too small for the full text */
void vw_cell_text(char *buf, size_t n, double v, int narrow)
{
    char t[112], r[40];
    int named;
    int exact = value_text(t, sizeof t, v, &named);
    if (exact) snprintf(r, sizeof r, "%.4g", v); /* else t is that already */
    /* a shortest name longer than the 4-digit rounding (0.527412, a random float that
     * happens to have one) is no exact value beside its "~" neighbours (issue 38 D9, 05
     * s11's mask): rounded and marked like them; 0.1 or 0.25 stay as they are */
    if (exact && named > 4) exact = 0, snprintf(t, sizeof t, "%s", r);
    if (narrow && exact && strlen(t) > strlen(r) + 1) exact = 0, snprintf(t, sizeof t, "%s", r);
    snprintf(buf, n, "%s%s", exact ? "" : "~", t);
}

/* a character that continues a number or word: the match is part of something longer
 * ("18", "0.75", "8x8": none of them prints the answer 8) */
static int token_joins(char c) { return isalnum((unsigned char)c) || c == '.' || c == '_'; }

/* `needle` in `text` as a whole token (case-insensitive for words) */
int vw_text_has_token(const char *text, const char *needle, int word)
{
    const size_t n = strlen(needle);
    if (!n) return 0;
    for (const char *p = text; *p; ++p) {
        size_t same = 0;
        while (same < n && (word ? tolower((unsigned char)p[same]) == tolower((unsigned char)needle[same])
                                 : p[same] == needle[same]))
            same++;
        if (same < n) continue;
        /* a range's end stands alone: "4..7" prints 7 (issue 38 D7: 01 s2's "block 1
         * takes 4..7" above "which index does thread 3 of block 1 start with?") */
        const int range = p - text >= 2 && p[-1] == '.' && p[-2] == '.';
        const int before = p > text && !range && (token_joins(p[-1]) || (!word && p[-1] == '-'));
        const int after = token_joins(p[n]) && !(p[n] == '.' && !isdigit((unsigned char)p[n + 1]));
        if (!before && !after) return 1;
    }
    return 0;
}
