/* vw_gantt.h - the schedule chart's model (C key): the trace's `schedule` tensor (blocks, 4)
 * int64 of (block, SM id, start, end), rows of -1 for blocks that did not run
 * (docs/memory.md), as a Gantt chart of blocks on SMs over time. Pure C, no SDL: rows,
 * bar geometry and hit testing are tested without a renderer.
 *
 * One row per SM present, sorted by SM id (the simulator's SM -1 is the row "sim"). Blocks
 * that overlap in time on one SM (several resident blocks) get lanes: the row is split
 * into as many bands as it needs, each block in the first lane free at its start. x is
 * time from the first start to the last end. */
#ifndef VW_GANTT_H
#define VW_GANTT_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/kst.h"
#include "vw_layout.h"

typedef enum vw_gantt_clock {
    VW_CLOCK_UNKNOWN = 0, /* no (or an unknown) "schedule_clock" in the params */
    VW_CLOCK_NS = 1,      /* "globaltimer_ns": the GPU's %globaltimer, shown in microseconds */
    VW_CLOCK_VIRTUAL = 2  /* "virtual": the simulator's ticks */
} vw_gantt_clock;

typedef struct vw_gantt_bar {
    int64_t block, sm, start, end; /* end >= start */
    int row, lane;
} vw_gantt_bar;

typedef struct vw_gantt {
    int built; /* vw_gantt_build ran */
    int ok;    /* the trace has a schedule tensor of the right type and shape */
    vw_gantt_clock clock;
    int64_t t0, t1; /* first start, last end */
    int64_t nbars;  /* blocks that ran (rows with block >= 0), in the tensor's order */
    vw_gantt_bar *bars;
    int nrows;         /* SMs present */
    int64_t *row_sm;   /* per row: its SM id, ascending */
    int *row_lanes;    /* per row: lanes (1 when its blocks never overlap) */
    int64_t max_block; /* the largest block id (for the colour ramp) */
} vw_gantt;

/* The trace's schedule tensor: its index, or -1 when there is none of type int64 and
 * shape (blocks, 4). */
int vw_gantt_tensor(const ks_trace *tr);
/* Builds the chart's rows and bars. KS_OK (g->ok = 0 without a schedule) or KS_ENOMEM. */
int vw_gantt_build(vw_gantt *g, const ks_trace *tr);
void vw_gantt_free(vw_gantt *g);

/* The row label: "SM 12", or "sim" for the simulator's SM -1. */
void vw_gantt_row_name(const vw_gantt *g, int row, char *buf, size_t n);
/* The panel's title: "schedule: 6 blocks on 3 SMs (globaltimer)". */
void vw_gantt_title(const vw_gantt *g, char *buf, size_t n);
/* The time axis caption: "us since the first block started", "virtual ticks ...". */
const char *vw_gantt_unit(const vw_gantt *g);
/* A tick value (clock units from t0) as the axis shows it: microseconds for the
 * globaltimer, ticks otherwise. */
double vw_gantt_scale(const vw_gantt *g);

/* The plot inside the chart's panel: right of a column of row labels, under the title
 * line, above the tick labels and the axis caption. */
vw_rect vw_gantt_plot(vw_rect panel, int line);
/* The pixel x of time t (clock units) in the plot. */
int vw_gantt_x(const vw_gantt *g, vw_rect plot, int64_t t);
/* The pixel rows [y, y + h) of row r (and of lane k of it). */
vw_rect vw_gantt_row_rect(const vw_gantt *g, vw_rect plot, int row);
/* Bar i's rectangle: at least 1 pixel wide and high. */
vw_rect vw_gantt_bar_rect(const vw_gantt *g, vw_rect plot, int64_t i);
/* The bar under (x, y) (the last drawn one where bars share a pixel), or -1. */
int64_t vw_gantt_hit(const vw_gantt *g, vw_rect plot, int x, int y);
/* The bar of block b, or -1. */
int64_t vw_gantt_find(const vw_gantt *g, int64_t block);
/* Block b's colour (0xRRGGBB): a ramp over 0 .. max_block, never the focus cyan. */
uint32_t vw_gantt_color(const vw_gantt *g, int64_t block);
/* A tick step (1, 2 or 5 times a power of ten) giving at most max_ticks ticks over span. */
double vw_gantt_tick_step(double span, int max_ticks);

#endif
