/* vw_slide.h - a story over a trace: slides the viewer steps through with PageDown /
 * PageUp, each with narration, an optional question and answer (A reveals it), and what
 * to show: the event in focus, a reverse lookup, the panels' tensors and the heatmap
 * mode, the cell a question is about (highlighted with the answer), and the trace it is
 * about: a lesson with several runs gives each slide its run's trace, and the viewer
 * switches to it when the slide shows. Lessons (lessons/engine/ls_slides.c) make them;
 * the viewer knows no lesson files. */
#ifndef VW_SLIDE_H
#define VW_SLIDE_H

#include <stdint.h>

#include "vw_index.h"

/* Figures a slide draws from its trace (a lesson step's "draw"): col2im's candidate
 * windows along the rows or the columns of the focused pixel and which pass the
 * divisibility test; a RoIAlign sample before and after its border clamp; the window
 * past the last one that fits, which the output size's floor drops; the focused item's
 * own kernel window over the input, padding taps included (conv2d reads the columns, so
 * its input panel shows no reads of the window); the grid-stride loop's waves, the cells
 * each iteration of the whole grid touches; the focused request's cells, every lane's
 * access of one warp at one tap (lesson 10: the strip's 32 reads on the input); the
 * cells the focused item's block writes (lesson 11: a block is one tile of c); the
 * sample points of the same work item in another run of the same work (guide: lesson
 * 14's torchvision trace records loads, our operator's samples); a shared slot one thread
 * stores before another reads it in the same phase (lesson 11's race); the shared tile as
 * the focused item reads it, the stores recorded before its first read of the phase and
 * poison (NaN) where none came yet (lesson 11 without barrier 1); the 32-byte sectors of
 * a panel's memory, a divider where one begins (lesson 10 step 3); the extent of the same
 * tensor in another run (guide: lesson 12's 7 x 7 output over the 8 x 8 one). */
enum {
    VW_FIGURE_WINDOWS_H = 1,
    VW_FIGURE_WINDOWS_W = 2,
    VW_FIGURE_CLAMP = 4,
    VW_FIGURE_DROPPED = 8,
    VW_FIGURE_WINDOW = 16,
    VW_FIGURE_WAVES = 32,
    VW_FIGURE_WARP = 64,
    VW_FIGURE_BLOCK = 128,
    VW_FIGURE_SAMPLES = 256,
    VW_FIGURE_RACE = 512,
    VW_FIGURE_INPUT = 1024,
    VW_FIGURE_AS_READ = 2048,
    VW_FIGURE_SECTORS = 4096,
    VW_FIGURE_EXTENT = 8192,
    VW_FIGURE_POINTS = 16384,
    VW_FIGURE_SWAP = 32768,
    VW_FIGURE_TAP = 65536
};

/* A panel drawn as a table instead of a heatmap (a lesson step's "tables", issue 38 D8):
 * a narrow index tensor (sparse convolution's rulebook, products, hash table) read row by
 * row, each row with its index, each column with its name, every value printed at a
 * legible size; beside it the columns of a second tensor of as many rows (hash_rows
 * beside hash_keys: slot, key, row). A one-row plane is read as a column (a hash table's
 * slots down the page), and transpose does the same to a K x n table (pair_table's sites
 * down the page, one column per offset). The rows shown are a window around the focused
 * item's cells on the table, else around rows [row0, row1]. marks 0: the item's cells
 * are neither outlined nor looked for until the answer shows (a question asks how many
 * it reads). */
#define VW_TABLE_COLS 12
typedef struct vw_table {
    int tensor, beside; /* tensor ids in the slide's trace; beside -1: none */
    int transpose;
    int marks;
    int64_t row0, row1;          /* rows kept in view when the item names none (row1 < row0: none) */
    char index[16];              /* the rows' heading ("p", "slot") */
    char col[VW_TABLE_COLS][16]; /* the columns' headings, the tensor's then beside's */
    int ncols;
} vw_table;

typedef struct vw_slide {
    char *title;     /* "Step 3 of 12: the kernel window" */
    char *pre;       /* NULL, or a line above the narration ("[run 'strided': ...]") */
    char *text;      /* narration; '\n' starts a new line, the viewer wraps the rest */
    char *question;  /* NULL, or the question and its choices */
    char *answer;    /* shown once revealed */
    uint32_t event;  /* the event to focus (VW_NONE: keep) */
    int look_tensor; /* >= 0: reverse lookup of (plane, y, x) of this tensor */
    int64_t look_plane, look_y, look_x;
    int look_writes;
    int panel[2]; /* tensors of the two heatmaps (-1: keep) */
    /* 1 + the tensor the step is about ("about"; 0: its focused event's, vw_about_panel):
     * the picture the layout sizes first and the 55 % rule measures, where the focused
     * event lies on another panel (08 s12 reads products and asks about the ring) */
    int about;
    /* a panel's plane, plane + 1 (0: the one the focus touches): a tensor the item does not
     * access (lesson 04's input beside conv2d's Sobel weights, channel 1) */
    int panel_plane[2];
    int mode; /* vw_mode, or -1: keep; a mode here applies to both panels */
    /* a panel's own mode, vw_mode + 1 (0: none, so a zeroed slide has none): a slide
     * about a sample shows the input's reads beside the columns' values */
    int panel_mode[2];
    /* the work fields the step's narration names ({work.i}), " i j m ": a short
     * decomposition panel keeps them before the other fields */
    char fields[160];
    /* the cell the question asks about (the access of event answer_event), highlighted
     * once the answer is revealed; has_answer_cell 0: none */
    int has_answer_cell;
    uint32_t answer_event;
    /* the question asks cells as (y, x) (a cell question, or choices that list "(3, 4)"):
     * the panel of that tensor (1 + its index; 0: none) prints row and column numbers
     * round its plane (issue 38 D12, ninth re-trial: 02 s4's "(y, x)" over an input with
     * none, 05 s5's choices of corners) */
    int asks_yx;
    /* a sample's corner the question asks about (its weight: {sample.w0}), 1 + corner
     * (top-left, top-right, bottom-left, bottom-right); 0: the cell nearest the sample */
    int answer_corner;
    /* tensors whose values would give the question's answer away (lesson 04's output
     * beside a question about one of its cells): until the answer is revealed a panel
     * showing one of them is covered, header, values, legend and marks (vw_story_hides) */
    int hide[3];
    int nhide;
    /* the decomposition panel is covered until the answer: its fields give it away */
    int hide_decomp;
    /* the panels print values until the answer, then the slide's mode (a question's
     * "hide": "mode"): lesson 10 step 3 asks a request's sectors, which the sectors mode
     * prints in its cells, and a question slide may not cover the panel it asks about */
    int hide_mode;
    /* what padding taps read and write prints as ?: 1 until the answer (a question's
     * "hide": "padding"), 2 on the whole step (its "padding": false: a later step asks what
     * a tap outside the image writes, issue 38 D2 N1: 02 s4 printed the 0s before s5) */
    int hide_padding;
    /* the step is about the launch (its threads, blocks): the grid panel keeps its room */
    int grid;
    /* the order the slide plays the trace in (vw_order + 1; 0: keep): the grid-stride
     * loop's waves show in iteration-major order */
    int order;
    /* the warp strip (W) of the focused event's request: 1 on the slide, 2 once the answer
     * shows (its sectors and addresses would answer the question) */
    int strip;
    /* the ideas the step draws over its panels (VW_FIGURE_* bits, vw_draw_ideas.c) */
    int figure;
    const ks_trace *guide; /* VW_FIGURE_SAMPLES: the run whose samples are drawn (borrowed) */
    /* VW_FIGURE_POINTS: points (y, x) of the left panel's plane, each marked with the value
     * a bilinear read there gives; with VW_FIGURE_SWAP the second is red, with a dashed
     * line from the first (lesson 07 step 8: where the kernel reads, and where (x, y) read
     * as (y, x) would) */
    double point[2][2];
    int npoints;
    /* a focused sample's corner weight labels: 0 drawn, 1 not on this slide (a step before
     * the question that asks a weight: "weights": false), 2 not until the answer shows
     * (the question's "hide": "weights") */
    int hide_weights;
    /* a number question's answer (has_answer_value): a question slide whose cells print
     * it gives it away (kscope lesson --check) */
    int has_answer_value;
    double answer_value;
    /* the question's answer as text, for the drawing's record to be searched (issue 38
     * D2): a number as printed ("0.375"), a cell as "y, x", a choice's words ("zero");
     * asked_words: 1 for a choice's words (matched without case); asked_digit: a
     * choice's number word as a number ("zero" -> "0": the events panel prints 0) */
    char asked[96];
    int asked_words;
    char asked_digit[8];
    /* the work item the question asks about + 1 (into index's items; 0: the focused one,
     * a question's default): on the question slide the events panel lists none of its
     * events after the focused one, the events its answer reads (issue 38 D2) */
    int64_t asked_item;
    /* the trace the slide shows and its index (both borrowed; they outlive the viewer):
     * NULL shows the trace the viewer opened. event, look_tensor, panel and answer_event
     * are ids into this trace. run: the lesson's run (0: its own), for the tests. */
    const ks_trace *trace;
    const vw_index *index;
    int run;
    /* panels drawn as tables (vw_table), by the tensor they show */
    vw_table tables[2];
    int ntables;
} vw_slide;

#endif
