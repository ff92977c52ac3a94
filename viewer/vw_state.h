/* vw_state.h - the viewer's model: what is focused, how it steps, what the panels show.
 * Input arrives as vw_action values (from keys, clicks or a --keys script), vw_apply
 * updates the state, vw_tick advances playback, and the drawing code only reads it:
 * events -> update -> draw. No SDL here, so the tests drive it directly.
 */
#ifndef VW_STATE_H
#define VW_STATE_H

#include "vw_gantt.h"
#include "vw_layout.h"
#include "vw_lookup.h"
#include "vw_nav.h"
#include "vw_slide.h"

typedef enum vw_mode {
    VW_MODE_VALUES = 0,  /* tensor values */
    VW_MODE_READS = 1,   /* how many reads (and sample corners) touched each element */
    VW_MODE_WEIGHTS = 2, /* the sum of the weights each element was read with */
    VW_MODE_WRITES = 3,  /* how many writes each element got (>1: atomic collisions) */
    VW_MODE_VISITS = 4,  /* how many region points lie on each element (sparse: pairs per site) */
    VW_MODE_SECTORS = 5, /* mean 32-byte sectors per warp request of the requests that touched it */
    VW_NMODES = 6
} vw_mode;

typedef enum vw_action_kind {
    VW_ACT_NONE = 0,
    VW_ACT_STEP,   /* a: +1 / -1, by the current unit */
    VW_ACT_UNIT,   /* a: vw_unit */
    VW_ACT_ORDER,  /* cycle the order, keeping the focused event */
    VW_ACT_PLAY,   /* play / pause */
    VW_ACT_SPEED,  /* a: +1 faster, -1 slower */
    VW_ACT_MODE,   /* cycle the aggregate mode */
    VW_ACT_PLANE,  /* a: panel (0 input, 1 output), b: +1 / -1 */
    VW_ACT_TENSOR, /* a: panel, b: +1 / -1 */
    VW_ACT_FOLLOW, /* toggle: panels follow the focused event's tensor and plane */
    VW_ACT_HOME,
    VW_ACT_END,
    VW_ACT_LOOKUP, /* a: +1 / -1, cycle through the lookup's hits */
    VW_ACT_SHOT,   /* save a screenshot (the app does it) */
    VW_ACT_QUIT,
    VW_ACT_HELP,
    VW_ACT_PROMPT, /* open the "go to" prompt */
    VW_ACT_TEXT,   /* a: a character typed into the prompt */
    VW_ACT_ENTER,
    VW_ACT_BACKSPACE,
    VW_ACT_ESCAPE,
    VW_ACT_CLICK,      /* a, b: window coordinates */
    VW_ACT_HOVER,      /* a, b */
    VW_ACT_SEEK,       /* a: position in the order */
    VW_ACT_SLIDE,      /* a: +1 next slide, -1 back */
    VW_ACT_REVEAL,     /* show / hide the slide's answer */
    VW_ACT_BARS,       /* one-row planes (1-D tensors) as bars over their cells, or not */
    VW_ACT_STRIP,      /* the warp strip (the focused request's lanes and sectors) on / off */
    VW_ACT_GANTT,      /* the schedule chart in place of the grid, or back (traces with a schedule) */
    VW_ACT_LIVE,       /* live parameters (vw_live.h): a vw_live_cmd, b its direction */
    VW_ACT_SHARED,     /* the shared-tile panel on / off (vw_draw_shared.c) */
    VW_ACT_PHASE,      /* a: +1 / -1, the focus to the next / previous barrier phase of its block */
    VW_ACT_ZOOM,       /* a: +1 in / -1 out; b, c: at window point (b, c), or -1: both panels' middles */
    VW_ACT_PAN,        /* a, b: move; c: the panel (-1 both); quarters (keys) when `c` < 2, else
                         pixels the content follows (a drag; panel c - 2) */
    VW_ACT_VIEW_RESET, /* both panels back to automatic: the whole plane, or the focus */
    VW_ACT_AUTOZOOM,   /* automatic views zoom to the focused item's accesses, or show the plane */
    VW_ACT_PICTURE     /* pictures (1 or 3 channel inputs in [0, 1]) as grey / RGB, or colormapped */
} vw_action_kind;

typedef struct vw_action {
    vw_action_kind kind;
    int64_t a, b, c;
} vw_action;

/* A plane of one row (a 1-D tensor such as a per-offset pair count) with at most this many
 * cells is drawn with a bar per cell above its row of cells. */
#define VW_BARS_MAX 4096

typedef struct vw_panel {
    int tensor; /* -1: none */
    int64_t plane;
    /* the user's view (vw_view.c): zoom > 0 magnifies the whole-plane view that many
     * times around plane point (cy, cx); 0: automatic (the plane, or the focus) */
    double zoom, cy, cx;
    int mode; /* this panel's vw_mode, or -1: the state's (M cycles that and clears these) */
} vw_panel;

typedef struct vw_state {
    const ks_trace *tr;
    const vw_index *idx; /* NULL until the index is built */
    vw_order order;
    uint64_t pos;
    vw_unit unit;
    int playing;
    double speed; /* units per second */
    double play_acc;
    vw_mode mode;
    vw_panel panel[2]; /* 0: input side, 1: output side */
    int follow;
    int bars;     /* one-row planes of at most VW_BARS_MAX cells get bars (default on) */
    int strip;    /* the warp strip under the decomposition panel (default off; W) */
    int gantt;    /* the schedule chart replaces the grid panel (default off; C) */
    int shared;   /* the shared-tile panel (default on in a trace with shared memory; U) */
    int autozoom; /* small cells zoom to the focused item's accesses (default on; V) */
    int picture;  /* picture tensors drawn as themselves, grey or RGB (default on; I) */
    /* a plane reaching past its panel shows whole cells only, a column or row the map's
     * edge would cut left out, as slides do (default off; the gallery sets it) */
    int whole_cells;
    vw_gantt sched; /* the chart's rows and bars, built at the first C */
    vw_lookup look;
    int help, quit, want_shot;
    int prompt; /* the "go to" prompt is open */
    char prompt_text[64];
    int hover; /* the pointer is over a cell of panel hover_panel */
    int hover_panel;
    int64_t hover_y, hover_x;
    char message[256];
    /* a story (lessons): slides, the one shown, whether its answer is revealed */
    const vw_slide *slides;
    int nslides, slide, reveal;
    /* what a shown answer put in place of the right panel's tensor (vw_story_reveal: the
     * asked cell's tensor where neither panel showed it): 1 + that tensor, its plane and
     * follow, put back when the answer hides or another slide shows (0: nothing), so a
     * slide after an answer shows what it shows after its question (13 s2 kept s1's
     * answer's 256-word tile) */
    int answer_swap, answer_follow;
    int64_t answer_plane;
    /* the trace and index open when the slides were attached: a slide with no trace of
     * its own shows these (vw_story_show switches s->tr and s->idx per slide) */
    const ks_trace *story_tr;
    const vw_index *story_idx;
    const char *title;    /* replaces the trace's title line when set */
    struct vw_live *live; /* live parameters (vw_live.h), NULL: none */
} vw_state;

/* Starts on the first event in recorded order, panels on the first input and output
 * tensors, then (with an index) on what the focus follows. idx may be NULL (not built
 * yet) and set later with vw_state_set_index, which follows the focus then. */
void vw_state_init(vw_state *s, const ks_trace *tr, const vw_index *idx);
void vw_state_set_index(vw_state *s, const vw_index *idx);
void vw_state_free(vw_state *s);

/* Number of positions in the current order, and the event at the current position
 * (VW_NONE when the trace has no events). */
uint64_t vw_state_len(const vw_state *s);
uint32_t vw_state_event(const vw_state *s);
/* The focused work item (VW_NONE before the index exists or for an orphan event). */
uint32_t vw_state_item(const vw_state *s);

void vw_apply(vw_state *s, const vw_layout *L, const vw_action *a);
/* Keeps the panels inside the trace: a tensor that exists (or -1), a plane inside it (0
 * otherwise), and the hover on a cell of its panel's plane. vw_apply, the focus and the
 * story call it; the drawing code relies on it. */
void vw_state_clamp(vw_state *s);
/* With s->follow: points the panels at the focused event's tensor and plane, else at what
 * its work item touches: the input side at what it reads, the output side at what it
 * writes; tensors the item has region events on but neither reads nor writes (sparse
 * convolution's site maps) come first, the first (in the trace's tensor order) on the
 * input side, the second on the output side (vw_follow.c). */
void vw_follow_focus(vw_state *s);
/* Focuses event ev (an id into tr->events) in the current order. */
void vw_focus_event(vw_state *s, uint32_t ev);
/* Attaches slides (owned by the caller) and shows slide 0; vw_story_show shows slide k:
 * its trace (switching s->tr and s->idx when the slide's run differs from the one shown:
 * the lookup, schedule chart, views and live parameters start over on it), event,
 * lookup, panels and mode (vw_story.c). Needs the index. */
void vw_story_set(vw_state *s, const vw_slide *slides, int n);
void vw_story_show(vw_state *s, int k);
/* Shows (reveal 1) or hides the slide's answer: shown, the cell it asks about comes into
 * view (its plane on the panel of its tensor, or its tensor on the right panel). */
void vw_story_reveal(vw_state *s, int reveal);
/* Whether panel p is covered on the slide shown: its tensor is one the slide hides
 * until the answer is revealed (vw_slide.hide). */
int vw_story_hides(const vw_state *s, int p);
/* Whether the shown slide's question covers panel p, answered or not (its "hide"). */
int vw_story_covers(const vw_state *s, int p);
/* The table panel p of the shown slide is drawn as (its step's "tables"), or NULL: a
 * heatmap (vw_draw_table.c). */
const vw_table *vw_panel_table(const vw_state *s, int panel);
/* A table's size (vw_table on plane `plane` of the slide's trace): rows, its tensor's
 * columns and beside's, the widest value or heading and the index column in characters;
 * 0 when the tensor has no values. vw_table_width: its width in pixels at a font of
 * advance adv (vw_draw_table.c draws it so). */
typedef struct vw_table_dims {
    int64_t rows, cols, beside_cols;
    int cell_chars, index_chars;
} vw_table_dims;
int vw_table_size(const ks_trace *tr, const vw_table *tb, int64_t plane, vw_table_dims *z);
int vw_table_width(const vw_table_dims *z, int adv);
/* The layout of a w x h frame for text of `advance` x `line` pixels: the title bar as many
 * lines as the title wraps to, the story band as many as the longest slide needs (one
 * height for every slide, so stepping through them moves nothing). */
void vw_layout_for_state(vw_layout *L, const vw_state *s, int advance, int line, int w, int h);

/* Playback: advance by speed * dt units. */
void vw_tick(vw_state *s, double dt);

/* "index=N", "thread=T", "event=P" (position in the current order) or a bare number
 * (an index). Returns KS_OK or KS_EINVAL with ks_error_message() set. */
int vw_goto(vw_state *s, const char *spec);
int vw_set_order(vw_state *s, const char *name); /* "recorded", "thread", "iter" */
int vw_set_mode(vw_state *s, const char *name);  /* "values", "reads", "weights", "writes", "visits", "sectors" */
const char *vw_mode_name(vw_mode m);
/* The mode panel p (0, 1) shows: its own (a slide's per-panel mode), else the state's;
 * values on a question slide whose question hides the mode until its answer. */
vw_mode vw_panel_mode(const vw_state *s, int p);

/* The key names a --keys script and the window share (SDL's key names: "Right", "Space",
 * "Return", "A"...). Returns 0 and fills a, or -1 for a key that does nothing. */
int vw_key_action(const char *key, int shift, vw_action *a);

/* The schedule chart's plot in layout L (inside the grid panel). */
vw_rect vw_gantt_area(const vw_layout *L);

/* The number a heatmap shows for element off of tensor t in mode `mode` (the value, or an
 * aggregate: the mode must have its aggregates), and the mode panel p is drawn in: its
 * own, where the index has that aggregate for its tensor, else values. */
double vw_heat_value(const vw_state *s, int t, int64_t off, vw_mode mode);
vw_mode vw_effective_mode(const vw_state *s, int panel);
/* What the cells of a panel need to print their values (issue 38 D1), in layout L: the
 * cell size in pixels the widest value of the plane needs at the smallest value text
 * (L->vadv x L->vline), 0 when the plane has nothing to print or is too big to scan; and
 * the biggest cell that still shows all of the cells the step is about with one cell
 * around them (0: no such cells on this panel). */
void vw_values_need(const vw_state *s, const vw_layout *L, int panel, double *need, double *focus_cell);
/* The heatmap mapping of a panel (0 input, 1 output) in layout L: the whole plane, the
 * user's zoom and pan, or with small cells the focused item's accesses (vw_view.c). */
vw_heatmap vw_panel_map(const vw_state *s, const vw_layout *L, int panel);
/* Where a panel's plane goes: the panel less its header line. */
vw_rect vw_panel_map_area(const vw_layout *L, int panel);
/* The screen rectangles (in map m) of the cells the focused step names on panel p: its
 * work item's reads and writes, its samples' corners, its regions (a RoI, a patch), the
 * looked-up element. Labels keep off them (issue 38 D3). Returns how many (<= max). */
int vw_focus_cells(const vw_state *s, int panel, const vw_heatmap *m, vw_rect *out, int max);
/* On a slide, a panel whose whole plane has cells too small for their values zooms to
 * the cells the step is about when that makes the values fit (vw_panel_map): whether it
 * does in layout L. */
int vw_panel_zoomed(const vw_state *s, const vw_layout *L, int panel);
/* How many of the focused item's reads and writes on panel p's plane (distinct cells, in
 * *cells) layout L leaves out of view: a slide's layout keeps them in (issue 38 D1). */
int vw_panel_items_out(const vw_state *s, const vw_layout *L, int panel, int *cells);
/* The distinct cells of panel p's plane (and margin, as m holds them) that the focused
 * item reads and writes, and the lanes of the warp request a slide draws: how many, and
 * in *shown those m draws whole inside `in`. */
int vw_step_cells_shown(const vw_state *s, int panel, const vw_heatmap *m, vw_rect in, int *shown);
/* Whether panel p is zoomed for its values to the focused tap's cells because the
 * item's cells do not fit them (05's 9 x 25 columns): the one window that may leave
 * out most of the item's cells. */
int vw_panel_tap_zoom(const vw_state *s, const vw_layout *L, int panel);
/* Whether a slide's question asks a cell of panel p's plane as (y, x): the panel keeps a
 * ring of cells above and left of its plane (and its margin) for row and column numbers
 * (vw_panel_margins, drawn by vw_draw_heatmap). */
int vw_panel_asks_yx(const vw_state *s, int panel);
/* The panel the focused event is on (its tensor and plane), else the one showing its
 * tensor; -1 when neither does (a work event, a step about the launch): the picture the
 * step is about (vw_draw.c). */
int vw_focus_panel(const vw_state *s);
/* The cells of panel p's plane that a sparse tensor fills (its non-empty cells,
 * vw_cell_empty) as rows y0..y1 and columns x0..x1: 1 when there are empty cells outside
 * them (a ring of sites in an 11 x 13 plane), 0 for a full plane, an empty one, or one
 * too big to scan at every layout a slide tries. */
int vw_filled_box(const vw_state *s, int panel, int64_t *y0, int64_t *x0, int64_t *y1, int64_t *x1);
/* The panel a slide is about: the one showing the tensor its step names ("about": 08 s12
 * reads products and asks about the ring of sites beside them), else vw_focus_panel. */
int vw_about_panel(const vw_state *s);
/* The bounding box, in cells, of the focused item's reads, writes, samples (their
 * corners) and regions on the panel's tensor and plane; 0 when it has none there. */
int vw_focus_bbox(const vw_state *s, int panel, double *y0, double *x0, double *y1, double *x1);
/* Zoom in (dir > 0) or out around window point (px, py) on the panel under it, or both
 * panels around their middles when px, py < 0; pan panel (-1: both) by quarters of the
 * panel (keys) or by pixels (a drag); back to the automatic views. */
void vw_view_zoom(vw_state *s, const vw_layout *L, int dir, int px, int py);
void vw_view_pan(vw_state *s, const vw_layout *L, int panel, double dx, double dy, int quarters);
void vw_view_reset(vw_state *s);

#endif
