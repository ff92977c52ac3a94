/* vw_record.h - what the drawing of one frame put where (issue 38): the panels' places,
 * each heatmap's cells and whether they print their values (and at what text size), the
 * cells the focused step names on each panel, every label and its leader line, the
 * narration band's lines and the decomposition's fields. vw_draw_frame fills it as it
 * draws (vw_draw.rec); `kscope lesson --check` and the tests read it back instead of
 * guessing from pixels. */
#ifndef VW_RECORD_H
#define VW_RECORD_H

#include <stdint.h>

#include "vw_layout.h"

#define VW_REC_FOCUS 96   /* focus cells kept per panel */
#define VW_REC_LABELS 48  /* labels kept per frame */
#define VW_REC_FIELDS 200 /* the decomposition's field names, " a b c " */

/* Kinds of label (what it names). */
enum { VW_LABEL_WEIGHT = 1, VW_LABEL_CLAMP = 2, VW_LABEL_TAP = 3, VW_LABEL_NOTE = 4 };

typedef struct vw_rec_label {
    int panel;   /* 0, 1 */
    int kind;    /* VW_LABEL_* */
    vw_rect box; /* where its text sits */
    int ax, ay;  /* the point it names */
    int leader;  /* drawn away from the point with a leader line */
    int px;      /* its text size (pixels per em) */
    char text[40];
} vw_rec_label;

typedef struct vw_rec_panel {
    int tensor; /* -1: none */
    int64_t plane;
    int hidden;     /* covered until the answer */
    vw_rect rect;   /* header and map */
    vw_rect map;    /* the map area */
    vw_rect extent; /* the plane's cells as drawn, clipped to the map */
    double cell;    /* pixels per cell */
    int values;     /* the cells print their values */
    int value_px;   /* at this text size (pixels per em; 0: none printed) */
    int value_font; /* the drawing's value font (vw_value_font), -1: none */
    /* the values' need and the view: the cell size (px) the longest value needs at the
     * smallest value text, whether the view zoomed to the step's cells for it, and the
     * biggest cell that would still show all of them (0: no such cells here) */
    double need_cell, focus_cell;
    int zoomed;
    int nfocus; /* cells the step names on this panel (its item's accesses, regions, corners) */
    vw_rect focus[VW_REC_FOCUS];
} vw_rec_panel;

typedef struct vw_record {
    int w, h, line, advance, text_px;
    int arrangement; /* vw_layout's */
    vw_rect title, story, decomp, grid, status;
    vw_rec_panel panel[2];
    /* the narration band: its rows, the lines drawn, and whether the body gave way */
    int band_rows, band_lines, band_cut;
    /* the decomposition: the lines drawn, the fields among them (" a b c "), whether the
     * focused event's line is there */
    int decomp_lines, decomp_focus;
    char fields[VW_REC_FIELDS];
    int answer_cell; /* the asked cell's outline is drawn (an answer slide) */
    int nlabels;
    vw_rec_label labels[VW_REC_LABELS];
} vw_record;

#endif
