/* vw_record.h - what the drawing of one frame put where (issue 38): the panels' places,
 * each heatmap's cells and whether they print their values (and at what text size), the
 * cells the focused step names on each panel, every label and its leader line, the
 * narration band's lines and the decomposition's fields, the values the cells print, and
 * the marks of the figures a step asks for (col2im's candidate windows, ...). vw_draw_frame fills it as it
 * draws (vw_draw.rec); `kscope lesson --check` and the tests read it back instead of
 * guessing from pixels. */
#ifndef VW_RECORD_H
#define VW_RECORD_H

#include <stdint.h>

#include "vw_layout.h"

#define VW_REC_FOCUS 96    /* focus cells kept per panel */
#define VW_REC_LABELS 48   /* labels kept per frame */
#define VW_REC_FIELDS 200  /* the decomposition's field names, " a b c " */
#define VW_REC_VALUES 2048 /* printed cell values kept per panel */
#define VW_REC_MARKS 64    /* figure marks kept per frame (a warp: 32 lanes) */
#define VW_REC_LINES 48    /* text lines kept per panel (the band, the decomposition) */
#define VW_REC_LINE 200    /* characters kept per line */
#define VW_REC_DOTS 160    /* point markers and framed cells kept per frame */

/* Kinds of label (what it names). */
enum { VW_LABEL_WEIGHT = 1, VW_LABEL_CLAMP = 2, VW_LABEL_TAP = 3, VW_LABEL_NOTE = 4 };

typedef struct vw_rec_label {
    int panel;     /* 0, 1 */
    int kind;      /* VW_LABEL_* */
    vw_rect box;   /* where its text sits */
    int ax, ay;    /* the point it names */
    int leader;    /* drawn away from the point with a leader line */
    int npts;      /* the leader as drawn (leader: 1), a straight line or routed */
    int pts[5][2]; /* along the grid lines (vw_route_leader) */
    int npass;     /* cells the leader may cross (its sample's other corners) */
    vw_rect pass[4];
    vw_rect cell; /* the cell it names (a sample's corner; w 0: a point, no cell) */
    int px;       /* its text size (pixels per em) */
    char text[64];
} vw_rec_label;

typedef struct vw_rec_panel {
    int tensor; /* -1: none */
    int64_t plane;
    int hidden; /* covered until the answer */
    /* drawn as a table (vw_table): its cells are rows of text, not squares at (ox, oy)
     * with side cell; a value's box is where it stands */
    int table;
    vw_rect rect;   /* header and map */
    vw_rect map;    /* the map area */
    vw_rect extent; /* the plane's cells as drawn, clipped to the map */
    vw_rect legend; /* a slide's one-line legend as drawn, its first character to its last */
    /* what that legend says: the panel's mode (vw_mode) and its range (the plane's) */
    int mode;
    double lo, hi;
    /* the plane as fitted (heatmaps): its rows and columns and the margin of cells round
     * it, so a check can tell a grid its shape keeps short from one the layout shrank */
    int64_t rows, cols;
    int margin, side[4]; /* the widest side; each side's cells (vw_heatmap) */
    double cell;         /* pixels per cell */
    double ox, oy;       /* where cell (0, 0) starts: cell (y, x) at (ox + x*cell, oy + y*cell) */
    int values;          /* the cells print their values */
    /* a window of the plane: some of its cells (a sparse plane's filled ones) out of view,
     * and whether the header names the rows and columns in view ("cols 2..11"; issue 38:
     * 13 s10's zoom dropped column 0 unsaid) */
    int window, window_named;
    int sparse; /* the plane has empty cells (vw_cell_empty): drawn as background, no number */
    /* a sparse plane's row and column numbers printed left of and above its filled cells
     * (vw_heatmap.axes): how many, and the row and the column of cells they sit in */
    int axes;
    int64_t axes_row, axes_col;
    vw_rect axes_box[64]; /* where the first 64 of them are printed */
    /* a sparse plane's filled cells (vw_filled_box): fill_rows x fill_cols of them, drawn
     * at fill (clipped to the map); the picture they make is what the 55 % rule measures
     * (08's ring of sites, not the empty rows round it); 0 rows: not such a plane */
    int64_t fill_rows, fill_cols;
    vw_rect fill;
    /* the header line and the legend's two ends as drawn ("columns (9, 25) ... values 0
     * .. ~21.67", "0", "~21.67"): a rounded end says so (issue 38 D9) */
    char head[VW_REC_LINE];
    char ends[2][48];
    /* a slide's heat legend: 1 + its colour bar's width as drawn (1: no bar), 0: none;
     * and a character's width there (a bar of 4 of them is the least that reads) */
    int legend_bar, legend_adv;
    int value_px;   /* at this text size (pixels per em; 0: none printed) */
    int value_font; /* the drawing's value font (vw_value_font), -1: none */
    /* the values' need and the view: the cell size (px) the longest value needs at the
     * smallest value text, whether the view zoomed to the step's cells for it, and the
     * biggest cell that would still show all of them (0: no such cells here) */
    double need_cell, focus_cell;
    int zoomed;
    int nfocus; /* cells the step names on this panel (its item's accesses, regions, corners) */
    /* the focused item's accesses on this panel's plane (distinct cells, plane and margin)
     * and how many of them the window shows whole: a window that holds the focused tap
     * but leaves out most of the item's cells draws another step than its narration's
     * (issue 38 D1, ninth re-trial: 10 s14 showed 3 of item 20's 9 reads) */
    int item_cells, item_shown;
    int covered;  /* the question covers it (vw_story_covers): its answer slide has the question's layout */
    int tap_zoom; /* zoomed for the values to the focused tap's cells: the item's do not fit them */
    int yx;       /* the slide's question asks cells of this tensor as (y, x) (vw_panel_asks_yx) */
    /* cells that print ? for a value a later step asks (vw_padding_hidden), those of them
     * painted a value's colour, not the margin's grey, and the legend's ends that only such
     * cells hold (issue 38 D2 N6, tenth re-trial: 02's columns legend "0 .. 70" where every
     * 0 printed ?, its ?s painted the 0 colour) */
    int hidden_cells, hidden_painted, hidden_ends;
    /* the item's outlines drawn not wholly inside the cells in view (a read out of the
     * window outlined in the margin past the grid: 10 s14 at 1024x768) */
    int marks_out;
    vw_rect focus[VW_REC_FOCUS];
    /* the values the cells print (nvalues of them; more were printed when values_cut):
     * each cell, its text and where the text went, so a question's answer among them
     * shows and no label covers one (issue 38 D3) */
    int nvalues, values_cut;
    struct {
        int32_t y, x;
        char text[14];
        vw_rect box; /* the text's advance x line, as drawn */
        int on_top;  /* drawn again over the markers that reached it (vw_values_over_markers) */
        int beside;  /* a table's value of its beside tensor (vw_table), at that tensor's (y, x) */
    } value[VW_REC_VALUES];
} vw_rec_panel;

/* Kinds of figure mark (vw_draw_ideas.c: the ideas a step asks to draw, "draw"). */
enum {
    VW_MARK_WINDOW = 1,  /* col2im: a candidate window along one axis; which: h_col or w_col */
    VW_MARK_CLAMP = 2,   /* RoIAlign: a sample before (y0, x0) and after (y1, x1) its clamp */
    VW_MARK_DROPPED = 3, /* im2col: the window the floor drops, rows y0..y1, columns x0..x1 */
    VW_MARK_TILE = 4,    /* the shared tile's values at block `which`, phase `pass` */
    VW_MARK_KWINDOW = 5, /* the focused item's kernel window, taps y0..y1, x0..x1; pass: its padding taps */
    VW_MARK_WAVE = 6,    /* grid-stride iteration `which`: its first cell (y0, x0) and last (y1, x1) */
    VW_MARK_WARP = 7,    /* a lane's access of the focused request: cell (y0, x0); which: the lane */
    VW_MARK_BLOCK = 8,   /* block `which`'s writes: its first cell (y0, x0) and last (y1, x1) */
    VW_MARK_SAMPLE = 9,  /* another run's sample of the item: point (y0, x0); which: its tap */
    VW_MARK_RACE = 10,   /* shared slot (y0, x0): thread `pass` stores, then thread `which` reads */
    VW_MARK_INPUT = 11,  /* a transposed convolution's input pixel `which` (a column of columns) at
                          * output cell (y0, x0), where its centre tap lands; pass: the focused one */
    VW_MARK_SECTOR = 12, /* a 32-byte sector's first cell (y0, x0) and last (y1, x1); which: its number */
    VW_MARK_EXTENT = 13, /* another run's extent of the tensor: cells (0, 0) .. (y1, x1) */
    VW_MARK_POINT = 14,  /* a step's point (y0, x0) ("point:Y,X"); which: its number */
    VW_MARK_TAP = 15     /* the focused tap of every item ("tap"): cells (y0, x0) .. (y1, x1); which: the cells */
};

typedef struct vw_rec_mark {
    int panel, kind;
    int axis;              /* WINDOW: 0 rows (h_col), 1 columns (w_col) */
    int pass;              /* WINDOW: a tap lands on the pixel (the divisibility test passes) */
    int64_t which;         /* WINDOW: the candidate h_col / w_col; TILE: the block */
    double y0, x0, y1, x1; /* in the plane's cells (see the kinds) */
} vw_rec_mark;

/* A marker drawn over the cells (issue 38 D3: a sample's dot and ring, the regular
 * position's square, a point's ring): what a number under it loses. */
typedef struct vw_rec_dot {
    int panel;
    vw_rect box;   /* its extent */
    vw_rect clear; /* a ring's or square's clear inside (w 0: filled): a number there shows */
    int focused;   /* the focused event's */
} vw_rec_dot;

#define VW_REC_CUTS 4 /* cut texts kept per frame */

/* Text the drawing cut (vw_text): a caption or title that lost characters at its width,
 * or part of its glyphs at a panel's clip or the frame's edge (issue 38: 08's table
 * captions, 01's grid title at 1024x768). n counts them all; the first few are kept. */
typedef struct vw_text_cuts {
    int n;
    struct {
        vw_rect box; /* the whole text's extent, as it would have been drawn */
        int why;     /* VW_CUT_* */
        char text[64];
    } cut[VW_REC_CUTS];
} vw_text_cuts;

enum { VW_CUT_WIDTH = 1, VW_CUT_CLIP = 2, VW_CUT_FRAME = 3 };

typedef struct vw_record {
    int w, h, line, advance, text_px;
    int arrangement; /* vw_layout's */
    vw_rect title, story, decomp, grid, status;
    vw_rec_panel panel[2];
    /* the narration band: its rows, the lines drawn, and whether the body gave way;
     * band_body: the narration's lines as drawn at the band's width (the run line and
     * the text: what VW_NARRATION_LINES counts), band_text the lines drawn */
    int band_rows, band_lines, band_cut, band_body;
    char band_text[VW_REC_LINES][VW_REC_LINE];
    /* the decomposition: the lines drawn, the fields among them (" a b c "), whether the
     * focused event's line is there */
    int decomp_lines, decomp_focus, decomp_hidden;
    /* the work item whose events the panel lists (-1: none), and the lines drawn after
     * the focused event's: its later events (a question slide lists none of the asked
     * item's: its answer reads them) */
    int64_t decomp_item;
    int decomp_later;
    char fields[VW_REC_FIELDS];
    char work_fields[VW_REC_FIELDS];             /* all the item's decomposition lines' names, drawn or not */
    char decomp_text[VW_REC_LINES][VW_REC_LINE]; /* its lines as drawn (decomp_lines of them) */
    /* the panel the step is about: the one showing the tensor the step names ("about"),
     * else the focused event's tensor and plane (-1: neither) */
    int focus_panel;
    int ndots;
    vw_rec_dot dots[VW_REC_DOTS];
    int answer_cell; /* the asked cell's outline is drawn (an answer slide) */
    /* the status line as drawn, and whether its bar cut it */
    char status_text[VW_REC_LINE];
    int status_cut;
    int nlabels;
    vw_rec_label labels[VW_REC_LABELS];
    int nmarks;
    vw_rec_mark marks[VW_REC_MARKS];
    vw_text_cuts cuts;
} vw_record;

/* Where a printed value's digits lie in its box (rec value.box: the text's advance x
 * line): the line less 2 px above and below, its leading (a digit's top lies 0.2 em
 * under the line's top, its foot 0.24 em over the line's bottom: 2.6 px and more at the
 * 13 px the renderer prints at least). A marker in the leading covers no digit (issue 38
 * D12: 10 s15's focus ring grazed the line of the 4 under it, which came back on top
 * in a black box, a second highlighted 4). */
static inline vw_rect vw_value_ink(vw_rect box)
{
    /* a glyph's side bearing, a pixel each side of the advance (a neighbour's focus frame,
     * 3 px outside its cell, touched 02 s7's "34" at 1024x768 by that pixel and put it on
     * a black plate: issue 38, fourteenth re-trial N29) */
    const int side = box.w > 4 ? 1 : 0;
    return (vw_rect){.x = box.x + side, .y = box.y + 2, .w = box.w - 2 * side, .h = box.h - 4 > 1 ? box.h - 4 : 1};
}

#endif
