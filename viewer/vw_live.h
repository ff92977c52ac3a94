/* vw_live.h - live parameters: the operator that made the trace, run again in-process
 * with a parameter changed, its trace replacing the one shown (nothing written unless
 * asked). Generic over operators: the rows are the operator's descriptor rows
 * (kernels/registry.h), the values come from the trace's params JSON
 * (trace/run_params.h), the run is the registry's. No SDL: the tests drive it directly.
 *
 * Keys (docs/viewer.md): P the panel on / off, J / K the next / previous parameter,
 * "." / "," (Period / Comma in a --keys script) its value up / down, R back to the trace
 * that was opened, T write the shown trace to kscope-live-NNN.kst.
 */
#ifndef VW_LIVE_H
#define VW_LIVE_H

#include "../kernels/registry.h"
#include "vw_describe.h"
#include "vw_state.h"

typedef enum vw_live_cmd {
    VW_LIVE_PANEL = 0,  /* the panel on / off */
    VW_LIVE_SELECT = 1, /* b: +1 next parameter, -1 previous */
    VW_LIVE_STEP = 2,   /* b: +1 value up, -1 down: re-run */
    VW_LIVE_REVERT = 3, /* the opened trace again */
    VW_LIVE_SAVE = 4    /* write the shown trace */
} vw_live_cmd;

/* A re-run: its run (owning its tensors), sink, trace (borrowing both) and index. */
typedef struct vw_live_slot {
    ks_run run;
    ks_sink *sink;
    ks_trace tr;
    vw_index idx;
    int used;
} vw_live_slot;

typedef struct vw_live {
    const ks_op *op;         /* the trace's operator; NULL: none this build runs (why[] says) */
    const ks_trace *orig_tr; /* the trace the viewer opened, and (once built) its index */
    const vw_index *orig_idx;
    const vw_slide *slides; /* a lesson's slides: off while a re-run shows */
    int nslides;
    ks_run *vals;          /* the parameters shown (values only; heap) */
    vw_live_slot *slot[2]; /* heap; slot[at] shows, at = -1: the opened trace */
    int at;
    int open, sel;
    unsigned gen;    /* bumped at every replace: drawing caches rebuild */
    double last_ms;  /* the last re-run + index, in milliseconds */
    const char *dir; /* where T writes (default ".") */
    char error[256]; /* the last refusal (the old trace stays) */
    char note[256];  /* inputs that could not be kept, and why */
    char why[200];   /* no live parameters: why */
} vw_live;

/* Sets l up for tr (borrowed: it must outlive l). A trace of an operator this build does
 * not run leaves l->op NULL and the reason in l->why; the panel shows it. KS_ENOMEM. */
int vw_live_init(vw_live *l, const ks_trace *tr);
void vw_live_free(vw_live *l);

/* VW_ACT_LIVE: a = vw_live_cmd, b = direction. Needs s->live and, to re-run, s->idx. A
 * re-run on the simulator gives the opened trace's inputs where their shapes still fit
 * (the others are the operator's built-in inputs: l->note names them); on success the new
 * trace and index replace s->tr and s->idx and the focus stays on the same work index
 * (else the nearest); a value the registry or the operator refuses leaves everything as
 * it was and puts its one-line error in l->error and the status line. */
void vw_live_apply(vw_state *s, const vw_action *a);

/* The panel's lines: a header, one line per parameter (the selected one marked, style
 * VW_STYLE_FOCUS), the selected row's help, then the note and the error
 * (VW_LIVE_STYLE_ERROR); the rows scroll to keep the selected one in max_lines. */
#define VW_LIVE_STYLE_ERROR 4
void vw_live_lines(const vw_live *l, vw_lines *out, int max_lines);

/* The panel's rectangle in layout L: over the grid panel (the lower right). */
vw_rect vw_live_area(const vw_layout *L);

#endif
