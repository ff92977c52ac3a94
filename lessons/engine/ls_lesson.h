/* ls_lesson.h - lessons: a JSON file (docs/lessons.md) naming an operator, its parameters
 * and inputs, and steps with narration, a focus and optional questions. The engine runs
 * the operator on the simulator into an in-memory trace and answers every template and
 * question from that trace, so lesson text cannot go stale against the kernel.
 *
 * Flow: ls_load (parse + structural checks) -> ls_session_open (run the op, index the
 * trace) -> ls_check (every step: focus, templates, answers) -> play as text (ls_text.c)
 * or as viewer slides (ls_slides.c). Problems are reported as "FILE: step N: problem".
 */
#ifndef LS_LESSON_H
#define LS_LESSON_H

#include <stdint.h>
#include <stdio.h>

#include "../../kernels/registry.h"
#include "../../trace/kst.h"
#include "../../viewer/vw_index.h"

#define LS_MAX_STEPS 64
#define LS_MAX_CHOICES 6
#define LS_MAX_SHOW 8
#define LS_MAX_INPUTS 4
#define LS_MAX_RUNS 8    /* the lesson's own run and up to 7 more ("runs") */
#define LS_TEXT_MAX 4096 /* a rendered narration */

/* Problems go to `out` (stderr for players, stdout for --check) as
 * "kscope: lesson: FILE: step N: problem"; count says how many. */
typedef struct ls_report {
    FILE *out;
    const char *file;
    int count;
    int first_only; /* print only the first problem (playing: one line, then exit 2) */
} ls_report;
void ls_problem(ls_report *rep, int step, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

enum ls_focus_kind {
    LS_FOCUS_KEEP = 0, /* the previous focus in the step's run (its first step: index 0) */
    LS_FOCUS_INDEX,    /* a work item by its linear index */
    LS_FOCUS_THREAD,   /* global thread T (block*threads + threadIdx) at iteration `iter` */
    LS_FOCUS_ELEMENT   /* an element of a tensor: its writer (output) or its readers */
};

typedef struct ls_focus {
    int kind;
    int64_t index, thread, iter;
    char tensor[KS_NAME_LEN];
    int64_t coord[KS_MAX_DIMS];
    int ncoord;
    int tap_given, tap_pair; /* tap: k, or (i, j) meaning i*kw + j */
    int64_t tap[2];
    int event_kind; /* with a tap: "event": "read" | "sample" | "write" (KS_EV_*); 0: the tap's first */
} ls_focus;

enum ls_question_kind { LS_Q_NONE = 0, LS_Q_CHOICE, LS_Q_NUMBER, LS_Q_CELL };

typedef struct ls_question {
    int kind;
    const char *prompt; /* a template */
    const char *choices[LS_MAX_CHOICES];
    int nchoices;
    int answer;               /* choice: index of the right choice */
    double number;            /* number: the stated answer */
    const char *check;        /* choice/number: a template the trace must render to the answer */
    ls_focus at;              /* the work item and tap asked about (default: the step's) */
    char tensor[KS_NAME_LEN]; /* cell: which tensor's cell (default: the one read at the tap) */
    int64_t cell[3];          /* cell: stated answer (y, x) or (plane, y, x) */
    int ncell;
    const char *explain; /* the worked answer: after a second wrong answer or '?' (a template) */
    const char *hint;    /* after a first wrong answer (a template; NULL: the explanation with
                          * every value that gives the answer away masked); never the answer */
    /* tensors whose panels the question slide covers until the answer shows: they would
     * draw the answer (lesson 04's output beside a question about one of its cells); or
     * "strip": the warp strip, whose sectors and addresses answer a request question;
     * "weights": a focused sample's corner weight labels (they print a weight question's answer);
     * "decomposition": the work item's fields (lesson 12's n = index / 16, 16 = Ho x Wo,
     * beside a question asking Ho) */
    const char *hide[3];
    int nhide;
} ls_question;

/* viewer: a panel drawn as a table ("tables": [{"tensor": "rulebook", "index": "p",
 * "columns": ["k", "in_row", "out_row"]}]; vw_slide.h's vw_table) */
#define LS_TABLE_COLS 12
typedef struct ls_table {
    const char *tensor, *beside, *index;
    const char *cols[LS_TABLE_COLS];
    int ncols;
    int transpose, marks;
    int64_t row0, row1; /* "rows": [a, b] kept in view; row1 < row0: none */
} ls_table;

typedef struct ls_step {
    const char *title;
    const char *text;       /* narration, a template: the slide's text and its notes ("notes") */
    const char *slide_text; /* the slide's part ("text"): at most 5 lines at 1024x768 */
    ls_focus focus;
    const char *show[LS_MAX_SHOW]; /* text player: tensor names, "decomposition", "events", "launch", "threads" */
    int nshow;
    const char *panels[2];     /* viewer: tensors of the two heatmaps (NULL: keep) */
    const char *about;         /* viewer: the panel's tensor the step is about (NULL: its focus's) */
    int planes[2];             /* viewer: "planes": [a, b], each panel's plane + 1 (0: the focus's) */
    const char *mode;          /* viewer: values | reads | weights | writes | visits | sectors (NULL: keep) */
    const char *panel_mode[2]; /* viewer: "mode": [left, right], one per panel (NULL: none) */
    int run;                   /* which of the lesson's runs the step looks at (0: its own) */
    int order;                 /* viewer: the replay order, vw_order + 1 ("order": "iter"); 0: keep */
    int strip;                 /* viewer: the warp strip of the focused request on the slide */
    int figure;                /* viewer: "draw", the ideas drawn from the trace (VW_FIGURE_* bits) */
    int guide_run;  /* "draw": ["samples:RUN"]: 1 + the run whose samples of the same work item are drawn (0: none) */
    int no_weights; /* viewer: "weights": false, no corner weight labels (a later step asks one) */
    int no_padding; /* "padding": false, what padding taps read and write prints as ? (a later step asks it) */
    double point[2][2]; /* viewer: "draw": ["point:Y,X"], points of the left panel's plane (y, x) */
    int npoints;
    ls_table tables[2]; /* viewer: "tables", panels drawn as tables */
    int ntables;
    ls_question q;
} ls_step;

typedef struct ls_input {
    const char *tensor;
    const char *npy, *image; /* paths relative to the lesson file */
    int gray;
    int64_t size[2]; /* image: resample to H, W (0: keep) */
    double *values;  /* explicit values, with shape */
    int64_t nvalues;
    int64_t shape[KS_MAX_DIMS];
    int ndim;
} ls_input;

/* One run: the operator's parameters, as the registry holds them after ks_run_set, or a
 * recorded trace file (then the parameters are unused). */
typedef struct ls_run_spec {
    const char *name;  /* "runs" key; NULL for the lesson's own run */
    const char *trace; /* a recorded .kst, relative to the lesson file; NULL: run the operator */
    const ks_op *op;   /* a run's own "operator" (its own params only, no lesson inputs); NULL: the lesson's */
    int64_t value[KS_MAX_PARAMS][KS_PARAM_AXES];
    int nvalues[KS_MAX_PARAMS];
    int trace_kernel; /* --trace-kernel: a kernel row, -1 auto (ks_run.trace_kernel) */
    double fvalue[KS_MAX_PARAMS][2];
    int set[KS_MAX_PARAMS];
    /* a recorded run's "shape": {"tile": [16, 16]}: a 1-D tensor seen as rows x columns (its
     * accesses at (offset / columns, offset % columns)): a .cu __shared__ float tile[16][16]
     * is recorded as 256 words, lesson 13 step 4 draws it as the 16 x 16 tile */
    const char *reshape; /* the tensor's name; NULL: none */
    int64_t reshape_dims[2];
} ls_run_spec;

typedef struct ls_lesson {
    char path[4096];
    char dir[4096];
    char id[64]; /* the file name without .json */
    const char *title, *level, *summary;
    const ks_op *op; /* NULL when the lesson's own run is a recorded trace ("trace") */
    /* runs[0]: the lesson's "params" (or its "trace"); runs[1..]: "runs", each the lesson's
     * parameters with its own changes on top (same operator, inputs, pattern, seed and
     * launch), or a recorded trace of its own */
    ls_run_spec runs[LS_MAX_RUNS];
    int nruns;
    int pattern;
    uint64_t seed;
    int threads;
    int64_t block_cap;
    ls_input inputs[LS_MAX_INPUTS];
    int ninputs;
    ls_step steps[LS_MAX_STEPS];
    int nsteps;
    void *json; /* the parsed document: owns every string above */
} ls_lesson;

/* Reads and parses path; structural problems (malformed JSON, unknown keys, wrong types,
 * unknown operator or parameter, answers out of range) go to rep. Returns 0 when the
 * lesson is usable (rep->count == 0), -1 otherwise; ls_free in both cases. */
int ls_load(ls_lesson *L, const char *path, ls_report *rep);
void ls_free(ls_lesson *L);

/* A lesson run: the operator on the simulator, traced (or a recorded trace file, opened),
 * and its index. The session of the lesson's own run (which 0) also holds the sessions of
 * its other runs. */
typedef struct ls_session {
    const ls_lesson *L;
    int which;    /* L->runs[which] */
    int recorded; /* tr was opened from the run's trace file (ks_trace_close), not run */
    ks_run run;
    ks_trace tr;
    vw_index idx;
    void *params;                   /* the trace's parameter object (cJSON) */
    struct ls_session *more;        /* runs 1 .. L->nruns - 1 (in the first session only) */
    const struct ls_session *first; /* the lesson's own run's session (run.NAME.X templates) */
} ls_session;

/* Runs the lesson's operator, once per run, or opens the run's recorded trace (verified:
 * structure and checksums); problems (a bad input file, a geometry the op rejects, a
 * missing or damaged trace) go to rep, naming the run. Returns 0 or -1 (the session is closed on
 * failure). */
int ls_session_open(ls_session *S, const ls_lesson *L, ls_report *rep);
void ls_session_close(ls_session *S);
/* The session of run r (0: S itself), and of step k's run. */
const ls_session *ls_run_session(const ls_session *S, int r);
const ls_session *ls_step_session(const ls_session *S, int k);
/* How run r's parameters differ from the lesson's own, as flags of kscope run
 * ("--no-subm --padding 1"); "" for run 0 and for a recorded run. Returns the length. */
int ls_run_flags(const ls_lesson *L, int r, char *buf, size_t n);
/* What run r is, for the players: "the lesson's parameters with --padding 1" (or "... with
 * no change"), or "the recorded trace data/09-transpose-good.kst". */
void ls_run_describe(const ls_lesson *L, int r, char *buf, size_t n);
/* Element i (row-major) of a tensor, whatever its dtype. */
double ls_tensor_value(const ks_tensor *t, int64_t i);

/* Where a step looks: a work item, an optional tap, the focused event, and for an
 * element focus the element and the events that touched it. */
typedef struct ls_ctx {
    uint32_t item;   /* into S->idx.items */
    int64_t tap;     /* -1: none */
    uint32_t event;  /* the focused event: the tap's first access, or the work event */
    int elem_tensor; /* -1: no element focus */
    int64_t elem_plane, elem_y, elem_x;
    int elem_writes;
    uint32_t *hits; /* events that touched the element (reads or writes), file order */
    uint32_t nhits;
} ls_ctx;

/* Resolves a focus against the trace, keeping *ctx for LS_FOCUS_KEEP. Returns 0, or -1
 * with the problem in err ("focus index 99 is not in the trace (0..74 recorded)"). */
int ls_focus_resolve(const ls_session *S, const ls_focus *f, ls_ctx *ctx, char *err, size_t n);
void ls_ctx_init(ls_ctx *ctx); /* no focus yet */
void ls_ctx_free(ls_ctx *ctx);
/* The tap number of a focus with a tap (i*kw + j for a pair, kw from the trace's
 * kernel_size); -1 with err when a pair names no tap. */
int64_t ls_tap_number(const ls_session *S, const ls_focus *f, char *err, size_t n);
/* The event of `kind` (KS_EV_READ, ...) at tap `tap` of item (tensor >= 0: on that
 * tensor), or VW_NONE. tap < 0: the first of that kind. */
uint32_t ls_item_event(const ls_session *S, uint32_t item, int kind, int64_t tap, int tensor);

/* Renders a template: every {name} replaced by its value in ctx (docs/lessons.md lists
 * the names; "{{" is a literal brace). Returns 0, or -1 with err naming the template and
 * why ("{work.h_cl}: the work event has no field h_cl (n, c_im, h_col, w_col)"). */
int ls_render(const ls_session *S, const ls_ctx *ctx, const char *tmpl, char *out, size_t n, char *err, size_t errn);

/* Checks every step against the trace: focus, templates, stated answers. Problems go to
 * rep; returns their number. */
int ls_check(const ls_session *S, ls_report *rep);

/* The focus of step k's question: the step's (ctx `step`) with the question's own index,
 * thread, iter or tap on top. Everything about a question renders against it. */
int ls_question_ctx(const ls_session *S, const ls_ctx *step, const ls_question *q, ls_ctx *qc, char *err, size_t n);
/* The right answer of step k's question (c: the question's resolved focus), as a student
 * would type it ("2", "17", "1, 3"); and whether a typed answer is right. Both ask the
 * trace, not the lesson file. */
int ls_answer_text(const ls_session *S, const ls_ctx *c, int k, char *out, size_t n);
int ls_answer_ok(const ls_session *S, const ls_ctx *c, int k, const char *typed);
/* Questions that make a student predict (ls_predict.c). A question's answer is printed
 * when a template of the step's title or text renders it (a number, "y, x", or y and x
 * side by side), or, for a choice, when the narration holds the right choice's words;
 * it predicts when it is about another work item than the step's,
 * or another tap of it that the step neither draws nor lists, and is not printed. A
 * lesson of LS_FULL_LESSON steps or more needs LS_MIN_PREDICTIONS predicting questions
 * and at most a third of its answers printed (issue 38): ls_check_question_mix reports what falls short
 * (printed and predicts: per step, 0 or 1). */
#define LS_FULL_LESSON 6
#define LS_MIN_PREDICTIONS 2
int ls_answer_printed(const ls_session *S, const ls_ctx *c, const ls_ctx *qc, int k);
int ls_question_predicts(const ls_session *S, const ls_step *st, const ls_ctx *c, const ls_ctx *qc, int printed);
/* Whether text holds step k's answer (qc: the question's focus): the number as a whole
 * token ("6", not the 6 of "16" or "6.5"), the cell as "y, x" (or "plane, y, x"), or the
 * right choice's words. */
int ls_text_gives_answer(const ls_session *S, const ls_ctx *qc, int k, const char *text);
/* Where step k's answer stands in plain sight above its question: "prompt", "title" or
 * "narration" when the rendered text holds it (ls_text_gives_answer; c: the step's focus,
 * qc: the question's), NULL when none does. A full lesson (LS_FULL_LESSON steps) with
 * one fails --check: a student copies it instead of working it out. */
const char *ls_answer_shown(const ls_session *S, const ls_ctx *c, const ls_ctx *qc, int k);
/* Whether a choice question's title (rendered) names its right choice: a word of 4
 * letters or more of the right choice that no other choice has, or its stem ("passes",
 * "pass"), stands in the title (issue 38 D7: 09 s10's "Why a one-plane test passes"
 * over "What does it report? 1) nothing wrong: it passes"). The word goes to word. */
int ls_title_names_choice(const ls_question *q, const char *title, char *word, size_t n);
/* A choice that is a number in words ("zero", "Four"): the number as a drawing prints it
 * ("0") into out; else "". */
void ls_number_word(const char *choice, char *out, size_t n);
/* Whether what the terminal player shows of step k between its narration and its
 * question (the step's "show": drawings, events, decomposition, threads; c: the step's
 * focus, qc: the question's) holds the answer: a fraction or a choice's words anywhere,
 * a cell as an element's last coordinates ("x[0, y, x]"), a whole number only as the
 * cell in focus ("<6>") or the focused
 * event's value ("> tap 0 read ... = 6"), elsewhere it is a coordinate or an index by
 * chance. The line that holds it goes to line (n bytes); 1 when one does. */
int ls_answer_in_show(const ls_session *S, const ls_ctx *c, const ls_ctx *qc, int k, char *line, size_t n);
/* Whether dump, what the terminal showed on an earlier step (ls_show_step's output),
 * holds step k's answer (qc: the question's focus) where no chance puts it: a number
 * that is not a whole one, or the right choice's words (issue 38 D2: 06 s3 and s4 listed
 * item 0's "sample ... = 10.125", s5's answer, 25 lines above its prompt). The line
 * that holds it goes to line; 1 when one does. */
int ls_answer_in_earlier(const ls_session *S, const ls_ctx *qc, int k, const char *dump, char *line, size_t n);
/* The hint a student gets after a first wrong answer `typed`: the question's "hint", else
 * ls_wrong_hint. Returns 0, or -1 with err when the hint's template does not render. */
int ls_hint_text(const ls_session *S, const ls_ctx *qc, int k, const char *typed, char *out, size_t n, char *err,
                 size_t errn);
/* Which way a wrong answer `typed` is off, never the answer: a number too high or too
 * low; a cell's right row or column, and where the rest lies; a choice, that it is not
 * that one (issue 38 D7: an explanation with its answer masked still gave it away, as
 * "1104 / 1104: ?%"). */
int ls_wrong_hint(const ls_session *S, const ls_ctx *qc, int k, const char *typed, char *out, size_t n);
void ls_check_question_mix(const ls_lesson *L, const int *printed, const int *predicts, ls_report *rep);
/* Choice questions a student can guess without reading them (issue 38 D7, seventh
 * re-trial: option 1 was right in 17 of 29, the longest option in 21): a lesson fails
 * when more than half of its choice questions, and at least LS_GUESS_MIN, have the right
 * choice at one position, or have it strictly longer than every other choice (its
 * characters as written, a template's braces included). Any lesson, sketch or full. */
#define LS_GUESS_MIN 3
void ls_check_choice_balance(const ls_lesson *L, ls_report *rep);

/* A value as the players print it (vw_value_text, viewer/vw_describe.h): whole numbers
 * whole (10, not 1e+01), exact binary fractions in full (10.125, 34.46875), a float by its
 * shortest text when that has at most KS_EXACT_DIGITS significant digits (0.1), otherwise
 * rounded to 4 significant digits and marked: "about 0.7365". */
#define LS_ABOUT "about "
void ls_format_value(char *buf, size_t n, double v);
/* s past leading blanks and a rounded value's mark ("about ", '~'). */
const char *ls_skip_about(const char *s);
/* A typed number is right when it equals the truth, or, for a truth printed rounded (to 4
 * significant digits), when it is within half a unit of that 4th digit: what a student
 * reads off the drawing counts. */
int ls_number_matches(const char *typed, double truth);


/* A step's viewer mode by name: its vw_mode number (values 0, reads, weights, writes,
 * visits, sectors 5), or -1 for another name (ls_slides.c). */
int ls_mode_number(const char *name);

/* The "threads" table (a step's show, and the viewer's slides): its heading, and the
 * entry of global thread g: "  5 (1, 1): 5 13", its work indices in loop order (the first
 * 12, then the count), " none" for a thread without work. */
#define LS_THREADS_HEAD "thread (block, tid): the work indices it handles, iteration 0, 1, ..."
void ls_thread_entry(const ls_session *S, int64_t g, char *buf, size_t n);
/* What the terminal player prints for step st's "show" at focus c (its drawings, events,
 * decomposition, threads, launch), to out. */
void ls_show_step(FILE *out, const ls_session *S, const ls_ctx *c, const ls_step *st);

/* Text player. auto_answer: answer every question correctly and never wait. Otherwise
 * answers are read from `in`: a first wrong one gets a hint (ls_hint_text) and a second
 * try, a second wrong one or "?" the answer worked out, "q" ends the lesson without
 * counting the question; when `pause` the player waits for Enter between steps ("b"
 * goes back, "q" quits). Returns 0, or -1 when `in` ends before an answer. */
int ls_play_text(const ls_session *S, FILE *in, FILE *out, int auto_answer, int pause);

/* Finding lessons: NAME is a file path, a file name in the lesson folder ("02-im2col"),
 * its number ("02", "2") or its name without the number ("im2col"). The folder is
 * $KSCOPE_LESSONS or the one this build was configured with. */
const char *ls_dir(void);
int ls_find(const char *name, char *path, size_t n);
/* The lesson files of the folder, sorted; returns how many (<= max), -1 if unreadable. */
int ls_list(char paths[][4096], int max);

#endif
