/* vw_state.c - focus, stepping, playback and input handling (see vw_state.h). */
#include "vw_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "vw_live.h"
#include "vw_phase.h"
#include "vw_plane.h"

static const char *mode_names[VW_NMODES] = {"values", "reads", "weights", "writes", "visits", "sectors"};

const char *vw_mode_name(vw_mode m) { return m >= 0 && m < VW_NMODES ? mode_names[m] : "?"; }

vw_mode vw_panel_mode(const vw_state *s, int p)
{
    if (s->nslides && !s->reveal && s->slides[s->slide].hide_mode) return VW_MODE_VALUES; /* the mode answers */
    const int m = p == 0 || p == 1 ? s->panel[p].mode : -1;
    return m >= 0 && m < VW_NMODES ? (vw_mode)m : s->mode;
}

static int first_tensor(const ks_trace *tr, int role)
{
    for (int t = 0; t < tr->ntensors; ++t)
        if (tr->roles[t] == role) return t;
    return -1;
}

void vw_state_init(vw_state *s, const ks_trace *tr, const vw_index *idx)
{
    memset(s, 0, sizeof *s);
    s->tr = tr;
    s->idx = idx;
    s->order = VW_ORDER_RECORDED;
    s->unit = VW_UNIT_EVENT;
    s->speed = 8;
    s->follow = 1;
    s->bars = 1;
    s->autozoom = 1;
    s->picture = 1;
    s->look.tensor = -1;
    s->shared = vw_shared_tensor(tr) >= 0;
    s->panel[0].tensor = first_tensor(tr, KS_ROLE_INPUT);
    s->panel[1].tensor = first_tensor(tr, KS_ROLE_OUTPUT);
    s->panel[0].mode = s->panel[1].mode = -1;
    vw_state_clamp(s);
    vw_follow_focus(s);
}

/* The first frame follows its work item too once there are items (a sparse trace opens on
 * its site maps, not on its first input and output). */
void vw_state_set_index(vw_state *s, const vw_index *idx)
{
    s->idx = idx;
    vw_follow_focus(s);
}

void vw_state_free(vw_state *s)
{
    vw_lookup_free(&s->look);
    vw_gantt_free(&s->sched);
}

/* Orders other than the recorded one need the index. */
static vw_order effective_order(const vw_state *s) { return s->idx ? s->order : VW_ORDER_RECORDED; }

/* Navigation on a trace with no index yet: an index with only the trace set. */
static const vw_index *nav_index(const vw_state *s, vw_index *tmp)
{
    if (s->idx) return s->idx;
    memset(tmp, 0, sizeof *tmp);
    tmp->tr = s->tr;
    return tmp;
}

uint64_t vw_state_len(const vw_state *s)
{
    vw_index tmp;
    return vw_order_len(nav_index(s, &tmp), effective_order(s));
}

uint32_t vw_state_event(const vw_state *s)
{
    vw_index tmp;
    if (!vw_state_len(s)) return VW_NONE;
    return vw_order_event(nav_index(s, &tmp), effective_order(s), s->pos);
}

uint32_t vw_state_item(const vw_state *s)
{
    uint32_t ev = vw_state_event(s);
    if (ev == VW_NONE || !s->idx) return VW_NONE;
    return vw_item_of(s->idx, ev);
}

void vw_state_clamp(vw_state *s)
{
    for (int p = 0; p < 2; ++p) {
        vw_panel *pn = &s->panel[p];
        if (pn->tensor < -1 || pn->tensor >= s->tr->ntensors) pn->tensor = -1;
        int64_t planes = pn->tensor >= 0 ? vw_plane_dims_of(&s->tr->tensors[pn->tensor]).planes : 0;
        if (pn->plane < 0 || pn->plane >= planes) pn->plane = 0;
    }
    if (s->hover) {
        int t = s->hover_panel == 0 || s->hover_panel == 1 ? s->panel[s->hover_panel].tensor : -1;
        vw_plane_dims d = t >= 0 ? vw_plane_dims_of(&s->tr->tensors[t]) : (vw_plane_dims){0};
        if (t < 0 || !d.planes || s->hover_y < 0 || s->hover_y >= d.h || s->hover_x < 0 || s->hover_x >= d.w)
            s->hover = 0;
    }
}

static void seek(vw_state *s, uint64_t pos)
{
    uint64_t n = vw_state_len(s);
    s->pos = n ? (pos < n ? pos : n - 1) : 0;
    vw_follow_focus(s);
}

void vw_focus_event(vw_state *s, uint32_t ev)
{
    vw_index tmp;
    if (ev == VW_NONE || ev >= s->tr->nevents) return;
    seek(s, vw_order_pos(nav_index(s, &tmp), effective_order(s), ev));
}

static void step(vw_state *s, int dir)
{
    vw_index tmp;
    seek(s, vw_step(nav_index(s, &tmp), effective_order(s), s->pos, s->unit, dir));
}

int vw_goto(vw_state *s, const char *spec)
{
    vw_index tmp;
    const vw_index *idx = nav_index(s, &tmp);
    const char *eq = strchr(spec, '=');
    const char *num = eq ? eq + 1 : spec;
    char *end;
    long long v = strtoll(num, &end, 10);
    if (!*num || *end || v < 0)
        return ks_fail(KS_EINVAL, "go to '%s': expected index=N, thread=T, event=P or a number", spec);
    uint64_t pos;
    int rc;
    if (!eq || !strncmp(spec, "index=", 6)) {
        rc = vw_jump_index(idx, effective_order(s), v, &pos);
    } else if (!strncmp(spec, "thread=", 7)) {
        rc = vw_jump_thread(idx, effective_order(s), v, &pos);
    } else if (!strncmp(spec, "event=", 6)) {
        if ((uint64_t)v >= vw_state_len(s))
            return ks_fail(KS_EINVAL, "go to event %lld: the %s order has %llu events", v,
                           vw_order_name(effective_order(s)), (unsigned long long)vw_state_len(s));
        pos = (uint64_t)v;
        rc = KS_OK;
    } else {
        return ks_fail(KS_EINVAL, "go to '%s': expected index=N, thread=T, event=P or a number", spec);
    }
    if (rc) return rc;
    seek(s, pos);
    return KS_OK;
}

int vw_set_order(vw_state *s, const char *name)
{
    static const char *short_names[VW_NORDERS] = {"recorded", "thread", "iter"};
    for (int o = 0; o < VW_NORDERS; ++o)
        if (!strcmp(name, short_names[o]) || !strcmp(name, vw_order_name((vw_order)o))) {
            uint32_t ev = vw_state_event(s);
            s->order = (vw_order)o;
            if (ev != VW_NONE && s->idx) s->pos = vw_order_pos(s->idx, effective_order(s), ev);
            return KS_OK;
        }
    return ks_fail(KS_EINVAL, "unknown order '%s' (recorded, thread, iter)", name);
}

int vw_set_mode(vw_state *s, const char *name)
{
    for (int m = 0; m < VW_NMODES; ++m)
        if (!strcmp(name, mode_names[m])) {
            s->mode = (vw_mode)m;
            s->panel[0].mode = s->panel[1].mode = -1;
            return KS_OK;
        }
    return ks_fail(KS_EINVAL, "unknown mode '%s' (values, reads, weights, writes, visits, sectors)", name);
}

static void show_hit(vw_state *s)
{
    if (!s->look.n) return;
    uint32_t ev = s->look.hits[s->look.at].event;
    vw_index tmp;
    const vw_index *idx = nav_index(s, &tmp);
    if (s->idx && vw_item_of(s->idx, ev) == VW_NONE && effective_order(s) != VW_ORDER_RECORDED)
        s->order = VW_ORDER_RECORDED; /* an orphan event exists only in the recorded order */
    seek(s, vw_order_pos(idx, effective_order(s), ev));
}

vw_rect vw_gantt_area(const vw_layout *L) { return vw_gantt_plot(L->grid, L->line); }

/* C: the schedule chart on / off; a trace without a schedule says so. */
static void toggle_gantt(vw_state *s)
{
    if (!s->sched.built && vw_gantt_build(&s->sched, s->tr)) {
        snprintf(s->message, sizeof s->message, "%s", ks_error_message());
        return;
    }
    if (!s->sched.ok) {
        s->gantt = 0;
        snprintf(s->message, sizeof s->message,
                 "no schedule in this trace (record one: kscope run OP --trace FILE --schedule)");
        return;
    }
    s->gantt = !s->gantt;
}

/* A click on a bar of the schedule chart: the first work item of its block. */
static void click_gantt(vw_state *s, const vw_layout *L, int x, int y)
{
    const int64_t i = vw_gantt_hit(&s->sched, vw_gantt_area(L), x, y);
    if (i < 0) return;
    const vw_gantt_bar *b = &s->sched.bars[i];
    vw_index tmp;
    uint64_t pos;
    if (vw_jump_block(nav_index(s, &tmp), effective_order(s), b->block, &pos)) {
        snprintf(s->message, sizeof s->message, "%s", ks_error_message());
        return;
    }
    seek(s, pos);
    const double k = vw_gantt_scale(&s->sched);
    char row[32];
    vw_gantt_row_name(&s->sched, b->row, row, sizeof row);
    snprintf(s->message, sizeof s->message, "block %lld on %s, %.4g .. %.4g %s: its first work item",
             (long long)b->block, row, (double)(b->start - s->sched.t0) * k, (double)(b->end - s->sched.t0) * k,
             s->sched.clock == VW_CLOCK_NS ? "us" : "ticks");
}

static void click(vw_state *s, const vw_layout *L, int x, int y)
{
    for (int p = 0; p < 2; ++p) {
        vw_heatmap m = vw_panel_map(s, L, p);
        int64_t cy, cx;
        int t = s->panel[p].tensor;
        if (t < 0 || !vw_rect_contains(p ? L->output : L->input, x, y) || !vw_heatmap_hit(&m, x, y, &cy, &cx)) continue;
        int writes = s->tr->roles[t] == KS_ROLE_OUTPUT;
        if (vw_lookup_run(&s->look, s->tr, t, s->panel[p].plane, cy, cx, writes)) {
            snprintf(s->message, sizeof s->message, "%s", ks_error_message());
            return;
        }
        snprintf(s->message, sizeof s->message, "%llu %s of %s[plane %lld, %lld, %lld]%s",
                 (unsigned long long)s->look.total, writes ? "writes" : "reads", s->tr->tensors[t].name,
                 (long long)s->panel[p].plane, (long long)cy, (long long)cx,
                 s->look.total ? " (N / Shift+N cycle through them)" : "");
        int follow = s->follow;
        s->follow = 0; /* keep the clicked plane in view while showing the hit */
        show_hit(s);
        s->follow = follow;
        return;
    }
    if (s->gantt && vw_rect_contains(L->grid, x, y)) {
        click_gantt(s, L, x, y);
        return;
    }
    if (vw_rect_contains(L->timeline, x, y)) seek(s, vw_timeline_pos(L->timeline, vw_state_len(s), x));
}

static void hover(vw_state *s, const vw_layout *L, int x, int y)
{
    s->hover = 0;
    for (int p = 0; p < 2; ++p) {
        vw_heatmap m = vw_panel_map(s, L, p);
        if (s->panel[p].tensor >= 0 && vw_rect_contains(p ? L->output : L->input, x, y) &&
            vw_heatmap_hit(&m, x, y, &s->hover_y, &s->hover_x)) {
            s->hover = 1;
            s->hover_panel = p;
        }
    }
}

/* The next tensor with elements (a run's unused tensors have shape (0): nothing to show). */
static void cycle_tensor(vw_state *s, int p, int dir)
{
    int n = s->tr->ntensors, t = s->panel[p].tensor;
    if (!n) return;
    for (int k = 0; k < n; ++k) {
        t = ((t + dir) % n + n) % n;
        if (vw_plane_dims_of(&s->tr->tensors[t]).planes > 0) break;
    }
    s->panel[p].tensor = t;
    s->panel[p].plane = 0;
    s->follow = 0;
}

static void cycle_plane(vw_state *s, int p, int dir)
{
    int t = s->panel[p].tensor;
    if (t < 0) return;
    int64_t n = vw_plane_dims_of(&s->tr->tensors[t]).planes;
    if (n > 0) s->panel[p].plane = ((s->panel[p].plane + dir) % n + n) % n;
    s->follow = 0;
}

static void prompt_key(vw_state *s, const vw_action *a)
{
    size_t len = strlen(s->prompt_text);
    if (a->kind == VW_ACT_TEXT && len + 1 < sizeof s->prompt_text && a->a > 32 && a->a < 127) {
        s->prompt_text[len] = (char)a->a;
        s->prompt_text[len + 1] = '\0';
    } else if (a->kind == VW_ACT_BACKSPACE && len) {
        s->prompt_text[len - 1] = '\0';
    } else if (a->kind == VW_ACT_ENTER) {
        s->prompt = 0;
        if (vw_goto(s, s->prompt_text)) snprintf(s->message, sizeof s->message, "%s", ks_error_message());
        else snprintf(s->message, sizeof s->message, "went to %s", s->prompt_text);
    } else if (a->kind == VW_ACT_ESCAPE) {
        s->prompt = 0;
    }
}

void vw_apply(vw_state *s, const vw_layout *L, const vw_action *a)
{
    if (s->prompt && a->kind != VW_ACT_HOVER && a->kind != VW_ACT_CLICK) {
        prompt_key(s, a);
        return;
    }
    switch (a->kind) {
    case VW_ACT_STEP: step(s, a->a > 0 ? 1 : -1); break;
    case VW_ACT_UNIT:
        if (a->a >= 0 && a->a < VW_NUNITS) s->unit = (vw_unit)a->a;
        break;
    case VW_ACT_ORDER:
        if (!s->idx) {
            snprintf(s->message, sizeof s->message, "other orders are ready once indexing ends");
            break;
        }
        vw_set_order(s, vw_order_name((vw_order)((s->order + 1) % VW_NORDERS)));
        break;
    case VW_ACT_PLAY:
        s->playing = !s->playing;
        s->play_acc = 0;
        break;
    case VW_ACT_SPEED:
        s->speed = a->a > 0 ? s->speed * 2 : s->speed / 2;
        if (s->speed < 0.25) s->speed = 0.25;
        if (s->speed > 4194304) s->speed = 4194304;
        break;
    case VW_ACT_MODE: /* one mode for both panels again */
        s->mode = (vw_mode)((s->mode + 1) % VW_NMODES);
        s->panel[0].mode = s->panel[1].mode = -1;
        break;
    case VW_ACT_PLANE: cycle_plane(s, a->a ? 1 : 0, a->b >= 0 ? 1 : -1); break;
    case VW_ACT_TENSOR: cycle_tensor(s, a->a ? 1 : 0, a->b >= 0 ? 1 : -1); break;
    case VW_ACT_FOLLOW:
        s->follow = !s->follow;
        vw_follow_focus(s);
        break;
    case VW_ACT_HOME: seek(s, 0); break;
    case VW_ACT_END: seek(s, vw_state_len(s) ? vw_state_len(s) - 1 : 0); break;
    case VW_ACT_LOOKUP:
        if (s->look.n) {
            s->look.at = (s->look.at + (a->a > 0 ? 1 : s->look.n - 1)) % s->look.n;
            int follow = s->follow;
            s->follow = 0;
            show_hit(s);
            s->follow = follow;
        }
        break;
    case VW_ACT_SHOT: s->want_shot = 1; break;
    case VW_ACT_QUIT: s->quit = 1; break;
    case VW_ACT_HELP: s->help = !s->help; break;
    case VW_ACT_PROMPT:
        s->prompt = 1;
        s->prompt_text[0] = '\0';
        s->playing = 0;
        break;
    case VW_ACT_ESCAPE:
        if (s->help) s->help = 0;
        else if (s->look.tensor >= 0) vw_lookup_free(&s->look);
        else s->quit = 1;
        break;
    case VW_ACT_CLICK: click(s, L, (int)a->a, (int)a->b); break;
    case VW_ACT_HOVER: hover(s, L, (int)a->a, (int)a->b); break;
    case VW_ACT_SEEK: seek(s, (uint64_t)(a->a > 0 ? a->a : 0)); break;
    case VW_ACT_SLIDE:
        if (s->nslides) vw_story_show(s, s->slide + (a->a > 0 ? 1 : -1));
        break;
    case VW_ACT_REVEAL: vw_story_reveal(s, !s->reveal); break;
    case VW_ACT_BARS: s->bars = !s->bars; break;
    case VW_ACT_STRIP: s->strip = !s->strip; break;
    case VW_ACT_GANTT: toggle_gantt(s); break;
    case VW_ACT_LIVE: vw_live_apply(s, a); break;
    case VW_ACT_SHARED: s->shared = !s->shared; break;
    case VW_ACT_PHASE: vw_phase_focus(s, a->a > 0 ? 1 : -1); break;
    case VW_ACT_ZOOM: vw_view_zoom(s, L, a->a > 0 ? 1 : -1, (int)a->b, (int)a->c); break;
    case VW_ACT_PAN:
        if (a->c < 2) vw_view_pan(s, L, (int)a->c, (double)a->a, (double)a->b, 1);
        else vw_view_pan(s, L, (int)a->c - 2, (double)a->a, (double)a->b, 0);
        break;
    case VW_ACT_VIEW_RESET: vw_view_reset(s); break;
    case VW_ACT_AUTOZOOM:
        s->autozoom = !s->autozoom;
        s->panel[0].zoom = s->panel[1].zoom = 0;
        snprintf(s->message, sizeof s->message, "auto-zoom %s",
                 s->autozoom ? "on: small cells zoom to the focus" : "off: whole planes");
        break;
    case VW_ACT_PICTURE:
        s->picture = !s->picture;
        snprintf(s->message, sizeof s->message, "pictures %s",
                 s->picture ? "as themselves (grey / RGB)" : "through the colormap");
        break;
    default: break;
    }
    vw_state_clamp(s);
}

void vw_tick(vw_state *s, double dt)
{
    if (!s->playing) return;
    s->play_acc += s->speed * dt;
    uint64_t n = vw_state_len(s);
    /* by event: one jump; by larger units: at most a frame's worth of steps */
    if (s->unit == VW_UNIT_EVENT && s->play_acc >= 1) {
        uint64_t k = (uint64_t)s->play_acc;
        s->play_acc -= (double)k;
        seek(s, s->pos + k < n ? s->pos + k : (n ? n - 1 : 0));
    }
    for (int i = 0; s->play_acc >= 1 && i < 4096; ++i) {
        s->play_acc -= 1;
        step(s, 1);
    }
    if (s->play_acc > 1) s->play_acc = 1;
    if (!n || s->pos + 1 >= n) s->playing = 0; /* the end: stop there */
}

int vw_key_action(const char *key, int shift, vw_action *a)
{
    static const struct {
        const char *key;
        vw_action_kind kind;
        int64_t a, b;
    } keys[] = {
        {.key = "Right", .kind = VW_ACT_STEP, .a = 1, .b = 0},
        {.key = "Left", .kind = VW_ACT_STEP, .a = -1, .b = 0},
        {.key = "1", .kind = VW_ACT_UNIT, .a = VW_UNIT_EVENT, .b = 0},
        {.key = "2", .kind = VW_ACT_UNIT, .a = VW_UNIT_ITEM, .b = 0},
        {.key = "3", .kind = VW_ACT_UNIT, .a = VW_UNIT_THREAD, .b = 0},
        {.key = "4", .kind = VW_ACT_UNIT, .a = VW_UNIT_WARP, .b = 0},
        {.key = "5", .kind = VW_ACT_UNIT, .a = VW_UNIT_BLOCK, .b = 0},
        {.key = "6", .kind = VW_ACT_UNIT, .a = VW_UNIT_FIELD, .b = 0},
        {.key = "B", .kind = VW_ACT_BARS, .a = 0, .b = 0},
        {.key = "W", .kind = VW_ACT_STRIP, .a = 0, .b = 0},
        {.key = "C", .kind = VW_ACT_GANTT, .a = 0, .b = 0},
        {.key = "U", .kind = VW_ACT_SHARED, .a = 0, .b = 0},
        {.key = "P", .kind = VW_ACT_PHASE, .a = 1, .b = 0},
        {.key = "O", .kind = VW_ACT_ORDER, .a = 0, .b = 0},
        {.key = "Space", .kind = VW_ACT_PLAY, .a = 0, .b = 0},
        {.key = "=", .kind = VW_ACT_SPEED, .a = 1, .b = 0},
        {.key = "Keypad +", .kind = VW_ACT_SPEED, .a = 1, .b = 0},
        {.key = "-", .kind = VW_ACT_SPEED, .a = -1, .b = 0},
        {.key = "Keypad -", .kind = VW_ACT_SPEED, .a = -1, .b = 0},
        {.key = "M", .kind = VW_ACT_MODE, .a = 0, .b = 0},
        {.key = "]", .kind = VW_ACT_PLANE, .a = 0, .b = 1},
        {.key = "[", .kind = VW_ACT_PLANE, .a = 0, .b = -1},
        {.key = "'", .kind = VW_ACT_PLANE, .a = 1, .b = 1},
        {.key = ";", .kind = VW_ACT_PLANE, .a = 1, .b = -1},
        {.key = "Tab", .kind = VW_ACT_TENSOR, .a = 0, .b = 1},
        {.key = "F", .kind = VW_ACT_FOLLOW, .a = 0, .b = 0},
        {.key = "Home", .kind = VW_ACT_HOME, .a = 0, .b = 0},
        {.key = "End", .kind = VW_ACT_END, .a = 0, .b = 0},
        {.key = "N", .kind = VW_ACT_LOOKUP, .a = 1, .b = 0},
        {.key = "S", .kind = VW_ACT_SHOT, .a = 0, .b = 0},
        {.key = "F12", .kind = VW_ACT_SHOT, .a = 0, .b = 0},
        {.key = "Q", .kind = VW_ACT_QUIT, .a = 0, .b = 0},
        {.key = "H", .kind = VW_ACT_HELP, .a = 0, .b = 0},
        {.key = "F1", .kind = VW_ACT_HELP, .a = 0, .b = 0},
        {.key = "G", .kind = VW_ACT_PROMPT, .a = 0, .b = 0},
        {.key = "Return", .kind = VW_ACT_ENTER, .a = 0, .b = 0},
        {.key = "Backspace", .kind = VW_ACT_BACKSPACE, .a = 0, .b = 0},
        {.key = "Escape", .kind = VW_ACT_ESCAPE, .a = 0, .b = 0},
        {.key = "PageDown", .kind = VW_ACT_SLIDE, .a = 1, .b = 0},
        {.key = "PageUp", .kind = VW_ACT_SLIDE, .a = -1, .b = 0},
        {.key = "A", .kind = VW_ACT_REVEAL, .a = 0, .b = 0},
        /* live parameters (vw_live.h); Comma / Period: the names a --keys script can spell */
        {.key = "L", .kind = VW_ACT_LIVE, .a = VW_LIVE_PANEL, .b = 0},
        {.key = "J", .kind = VW_ACT_LIVE, .a = VW_LIVE_SELECT, .b = 1},
        {.key = "K", .kind = VW_ACT_LIVE, .a = VW_LIVE_SELECT, .b = -1},
        {.key = ".", .kind = VW_ACT_LIVE, .a = VW_LIVE_STEP, .b = 1},
        {.key = "Period", .kind = VW_ACT_LIVE, .a = VW_LIVE_STEP, .b = 1},
        {.key = ",", .kind = VW_ACT_LIVE, .a = VW_LIVE_STEP, .b = -1},
        {.key = "Comma", .kind = VW_ACT_LIVE, .a = VW_LIVE_STEP, .b = -1},
        {.key = "D", .kind = VW_ACT_LIVE, .a = VW_LIVE_REVERT, .b = 0},
        {.key = "T", .kind = VW_ACT_LIVE, .a = VW_LIVE_SAVE, .b = 0},
        {.key = "Z", .kind = VW_ACT_ZOOM, .a = 1, .b = -1},
        {.key = "X", .kind = VW_ACT_ZOOM, .a = -1, .b = -1},
        {.key = "R", .kind = VW_ACT_VIEW_RESET, .a = 0, .b = 0},
        {.key = "V", .kind = VW_ACT_AUTOZOOM, .a = 0, .b = 0},
        {.key = "I", .kind = VW_ACT_PICTURE, .a = 0, .b = 0},
    };
    /* Shift+arrows pan both panels a quarter of a panel (the arrows alone step) */
    static const char *const arrows[4] = {"Left", "Right", "Up", "Down"};
    for (int i = 0; i < 4 && shift; ++i)
        if (!strcmp(key, arrows[i])) {
            a->kind = VW_ACT_PAN;
            a->a = i < 2 ? (i ? 1 : -1) : 0;
            a->b = i < 2 ? 0 : (i == 3 ? 1 : -1);
            a->c = -1;
            return 0;
        }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        if (!strcmp(key, keys[i].key)) {
            a->kind = keys[i].kind;
            a->a = keys[i].a;
            a->b = keys[i].b;
            a->c = a->kind == VW_ACT_ZOOM ? -1 : 0; /* keys zoom both panels around their middles */
            /* shift reverses: Shift+Tab, Shift+N, Shift+P */
            if (shift && (a->kind == VW_ACT_TENSOR || a->kind == VW_ACT_LOOKUP || a->kind == VW_ACT_PHASE)) {
                if (a->kind == VW_ACT_TENSOR) a->b = -1;
                else a->a = -1;
            }
            return 0;
        }
    if (!strcmp(key, "Shift+Tab")) {
        a->kind = VW_ACT_TENSOR;
        a->a = 0;
        a->b = -1;
        return 0;
    }
    if (!strcmp(key, "Ctrl+Tab")) { /* the output panel's tensor */
        a->kind = VW_ACT_TENSOR;
        a->a = 1;
        a->b = 1;
        return 0;
    }
    return -1;
}
