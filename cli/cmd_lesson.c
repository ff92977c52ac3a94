/* kscope lesson: play a lesson in the terminal or the viewer, render it to slides, list
 * lessons, check them. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../lessons/engine/ls_lesson.h"
#include "../lessons/engine/ls_slides.h"
#include "../trace/ks_file.h"
#include "cli.h"
#ifdef KS_HAVE_VIEWER
#include "../viewer/vw_app.h"
#include "../viewer/vw_audit.h"
#endif

static const char *usage = "usage: kscope lesson NAME|FILE [--auto]\n"
                           "       kscope lesson NAME|FILE --view [--size WxH] [--text-size PX] [--keys SCRIPT]\n"
                           "       kscope lesson NAME|FILE --frames DIR [--size WxH] [--text-size PX]\n"
                           "       kscope lesson NAME|FILE --gif OUT.gif [--size WxH] [--text-size PX] [--delay MS]\n"
                           "       kscope lesson --list\n"
                           "       kscope lesson --check [FILE|NAME]...\n\n"
                           "Plays a lesson: a walk through a kernel, step by step, with narration that quotes the\n"
                           "trace, drawings of the small tensors with the focused cells marked, and questions.\n"
                           "NAME is a lesson of the lesson folder by file name (02-im2col), number (02) or name\n"
                           "(im2col); FILE is any lesson file. docs/lessons.md tells how to write one.\n"
                           "  (no flag)       in the terminal; questions are answered on stdin (a first wrong\n"
                           "                  answer gets a hint and a second try, the second or ? the answer\n"
                           "                  worked out, q quits); at a terminal it waits for Enter between\n"
                           "                  steps (b goes back, q quits)\n"
                           "  --auto          answer every question correctly and never wait (what CI runs)\n"
                           "  --view          in the viewer window: PageDown / PageUp step, A shows the answer\n"
                           "  --frames DIR    render every step to DIR/step-01.png ... (and step-NN-answer.png\n"
                           "                  for a question), no display needed: slides for a class\n"
                           "  --gif OUT.gif   the same slides as one animated GIF that loops (needs a build with\n"
                           "                  giflib)\n"
                           "  --delay MS      how long each GIF slide shows (default 4000, 10 to 60000)\n"
                           "  --size WxH      viewer window or slide size (default 1280x960)\n"
                           "  --text-size PX  text height in pixels per em (default: from the size, 30 at\n"
                           "                  1920x1080 and in proportion below, at least 12; 8 to 96)\n"
                           "  --keys SCRIPT   keys for the viewer, as in kscope view (PageDown,PageDown,A,S,Q)\n"
                           "  --list          the lessons with their level and title\n"
                           "  --check         check lessons against their traces (every lesson when none is\n"
                           "                  named): focus, templates, stated answers, and the slides drawn\n"
                           "                  at 1920x1080, 1280x960 and 1024x768 (pictures at least 55% of\n"
                           "                  the height, narration whole and at most 5 lines at 1024x768,\n"
                           "                  values printed where they fit, the fields the narration names\n"
                           "                  shown, no label on the step's cells). Exit 1 on a problem.\n"
                           "The lesson folder is $KSCOPE_LESSONS, else the one this build was configured with.\n";

/* Loads, runs and checks one lesson. 0 when it is good; problems go to rep. */
static int open_lesson(const char *path, ls_lesson *L, ls_session *S, ls_report *rep)
{
    if (ls_load(L, path, rep)) {
        ls_free(L);
        return -1;
    }
    if (ls_session_open(S, L, rep)) {
        ls_free(L);
        return -1;
    }
    if (ls_check(S, rep)) {
        ls_session_close(S);
        ls_free(L);
        return -1;
    }
    return 0;
}

static int resolve(const char *name, char *path, size_t n)
{
    if (ls_find(name, path, n) == 0) return 0;
    ks_cli_error("lesson", "no lesson '%s' (a file, or a name in %s: kscope lesson --list)", name, ls_dir());
    return -1;
}

static int count_questions(const ls_lesson *L)
{
    int q = 0;
    for (int k = 0; k < L->nsteps; ++k) q += L->steps[k].q.kind != LS_Q_NONE;
    return q;
}

static int cmd_list(void)
{
    static char paths[128][4096];
    int n = ls_list(paths, 128);
    if (n < 0) return ks_cli_error("lesson", "cannot read the lesson folder %s", ls_dir());
    printf("lessons in %s (kscope lesson NAME plays one):\n", ls_dir());
    for (int i = 0; i < n; ++i) {
        static ls_lesson L;
        ls_report quiet = {.out = NULL, .file = paths[i], .count = 0, .first_only = 0};
        const char *base = strrchr(paths[i], '/') + 1;
        if (ls_load(&L, paths[i], &quiet)) {
            printf("  %-22.*s (broken: kscope lesson --check %s)\n", (int)(strlen(base) - 5), base, paths[i]);
        } else {
            printf("  %-22.*s %-12s %s  (%d steps, %d questions)\n", (int)(strlen(base) - 5), base, L.level, L.title,
                   L.nsteps, count_questions(&L));
        }
        ls_free(&L);
    }
    return KS_EXIT_OK;
}

#ifdef KS_HAVE_VIEWER
/* The slides as a projector shows them (issue 38): every slide and answer drawn at the
 * three sizes, the rules read off what the drawing recorded (vw_audit_rules). */
typedef struct audit_ctx {
    ls_report *rep;
    const vw_slide *slides;
    int n, step;
} audit_ctx;

static void audit_problem(void *ctx, const char *msg)
{
    audit_ctx *a = ctx;
    ls_problem(a->rep, a->step + 1, "slides: %s", msg);
}

static void audit_slide(void *ctx, int k, int reveal, const vw_record *rec, const vw_state *s)
{
    audit_ctx *a = ctx;
    (void)s;
    a->step = k;
    vw_audit_rules(&a->slides[k], reveal, rec, audit_problem, a);
    /* the slide before a question (and its answer) draws nothing that answers it: a
     * student pages back (issue 38 D2: 07 steps 4-5 drew the weight step 6 asks) */
    const vw_slide *next = k + 1 < a->n ? &a->slides[k + 1] : NULL;
    if (next && next->question && next->run == a->slides[k].run) {
        a->step = k + 1;
        vw_audit_answer_in_text(next, rec, "slide before its question", audit_problem, a);
    }
    /* nor, as a label, any slide steps before it (05 s3's weight labels, s6's answer) */
    for (int j = k + 2; j < a->n; ++j)
        if (a->slides[j].question && a->slides[j].run == a->slides[k].run) {
            char where[64];
            snprintf(where, sizeof where, "slide of step %d, before its question", k + 1);
            a->step = j;
            vw_audit_answer_in_labels(&a->slides[j], rec, where, audit_problem, a);
        }
}

static int check_slides(const ls_session *S, ls_report *rep)
{
    vw_slide *slides = NULL;
    const int n = ls_slides_make(S, &slides), before = rep->count;
    if (n < 0) {
        ls_problem(rep, 0, "slides: out of memory");
        return -1;
    }
    audit_ctx a = {.rep = rep, .slides = slides, .n = n, .step = 0};
    for (int z = 0; z < VW_AUDIT_SIZES; ++z)
        if (vw_audit_slides(slides, n, S->L->title, &S->tr, &S->idx, vw_audit_size[z][0], vw_audit_size[z][1], 0,
                            audit_slide, &a))
            ls_problem(rep, 0, "slides: %s", ks_error_message());
    ls_slides_free(slides, n);
    return rep->count > before ? -1 : 0;
}
#endif

static int cmd_check(int argc, char **argv, int first)
{
    static char paths[128][4096];
    int n = 0, bad = 0;
    for (int i = first; i < argc && n < 128; ++i)
        if (resolve(argv[i], paths[n++], 4096)) return KS_EXIT_ERROR;
    if (n == 0 && (n = ls_list(paths, 128)) <= 0) return ks_cli_error("lesson", "no lessons in %s", ls_dir());
    for (int i = 0; i < n; ++i) {
        static ls_lesson L;
        static ls_session S;
        ls_report rep = {.out = stdout, .file = paths[i], .count = 0, .first_only = 0};
        if (open_lesson(paths[i], &L, &S, &rep)) {
            bad++;
            continue;
        }
#ifdef KS_HAVE_VIEWER
        if (check_slides(&S, &rep)) {
            bad++;
            ls_session_close(&S);
            ls_free(&L);
            continue;
        }
#endif
        printf("ok: %s (%d steps, %d questions, %llu events)\n", paths[i], L.nsteps, count_questions(&L),
               (unsigned long long)S.tr.nevents);
        ls_session_close(&S);
        ls_free(&L);
    }
    if (bad) printf("%d of %d lessons have problems\n", bad, n);
    return bad ? KS_EXIT_VIOLATIONS : KS_EXIT_OK;
}

int ks_cmd_lesson(int argc, char **argv)
{
    const char *name = NULL, *frames = NULL, *keys = NULL, *size = NULL;
    const char *gif = NULL;
    int auto_answer = 0, view = 0, text_size = 0, delay = 4000, delay_given = 0;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return KS_EXIT_OK;
        }
        if (!strcmp(argv[i], "--list")) {
            if (argc != 2) return ks_cli_error("lesson", "--list takes nothing else");
            return cmd_list();
        }
        if (!strcmp(argv[i], "--check")) {
            if (i != 1) return ks_cli_error("lesson", "--check comes first: kscope lesson --check FILE...");
            return cmd_check(argc, argv, 2);
        }
        if (!strcmp(argv[i], "--auto")) auto_answer = 1;
        else if (!strcmp(argv[i], "--view")) view = 1;
        else if ((m = ks_flag(argc, argv, &i, "frames", &v)) != 0) {
            if (m < 0) return ks_cli_error("lesson", "--frames needs a folder");
            frames = v;
        } else if ((m = ks_flag(argc, argv, &i, "keys", &v)) != 0) {
            if (m < 0) return ks_cli_error("lesson", "--keys needs a script");
            keys = v;
        } else if ((m = ks_flag(argc, argv, &i, "size", &v)) != 0) {
            if (m < 0) return ks_cli_error("lesson", "--size needs WxH");
            size = v;
        } else if ((m = ks_flag(argc, argv, &i, "gif", &v)) != 0) {
            if (m < 0) return ks_cli_error("lesson", "--gif needs a file name");
            gif = v;
        } else if ((m = ks_flag(argc, argv, &i, "delay", &v)) != 0) {
            int64_t ms;
            if (ks_view_int_arg("lesson", "--delay", v, 10, 60000, &ms)) return KS_EXIT_ERROR;
            delay = (int)ms, delay_given = 1;
        } else if ((m = ks_flag(argc, argv, &i, "text-size", &v)) != 0) {
            int64_t px;
            if (ks_view_int_arg("lesson", "--text-size", v, 8, 96, &px)) return KS_EXIT_ERROR;
            text_size = (int)px;
        } else if (argv[i][0] == '-') {
            return ks_cli_error("lesson", "unknown flag '%s' (kscope lesson --help)", argv[i]);
        } else if (name) {
            return ks_cli_error("lesson", "one lesson at a time (got '%s' and '%s')", name, argv[i]);
        } else {
            name = argv[i];
        }
    }
    if (!name) return ks_cli_error("lesson", "which lesson? (kscope lesson --list)");
    if (view && frames) return ks_cli_error("lesson", "--view and --frames: pick one");
    if (gif && (view || frames)) return ks_cli_error("lesson", "--gif and %s: pick one", view ? "--view" : "--frames");
    if ((keys || size) && !view && !frames && !gif)
        return ks_cli_error("lesson", "--keys and --size go with --view or --frames or --gif");
    if (text_size && !view && !frames && !gif)
        return ks_cli_error("lesson", "--text-size goes with --view, --frames or --gif");
    if (delay_given && !gif) return ks_cli_error("lesson", "--delay goes with --gif");
    char path[4096];
    if (resolve(name, path, sizeof path)) return KS_EXIT_ERROR;
    /* the outputs, before the lesson runs: writable, and not the lesson itself */
    if (gif && ks_out_check(gif)) return ks_cli_error("lesson", "%s", ks_error_message());
    if (gif && ks_same_path(gif, path))
        return ks_cli_error("lesson", "--gif %s would replace the lesson %s", gif, path);
    if (frames && ks_out_dir_check(frames)) return ks_cli_error("lesson", "%s", ks_error_message());
    static ls_lesson L;
    static ls_session S;
    ls_report rep = {.out = stderr,
                     .file = path,
                     .count = 0,
                     .first_only = 1}; /* one line: the first problem (--check lists all) */
    if (open_lesson(path, &L, &S, &rep)) return KS_EXIT_ERROR;
    int rc = KS_EXIT_OK;
    if (view || frames || gif) {
#ifdef KS_HAVE_VIEWER
        vw_options o;
        vw_slide *slides = NULL;
        vw_options_init(&o);
        o.width = 1280, o.height = 960;
        o.text_size = text_size;
        if (size && (rc = ks_view_size_arg("lesson", "--size", size, &o.width, &o.height))) goto out;
        int n = ls_slides_make(&S, &slides);
        if (n < 0) {
            rc = ks_cli_error("lesson", "out of memory");
            goto out;
        }
        o.trace = &S.tr, o.slides = slides, o.nslides = n, o.title = L.title;
        o.path = path, o.keys = keys, o.frames_dir = frames, o.headless = frames || gif;
        o.gif = gif, o.delay_ms = delay;
        o.order = "thread";
        if (vw_main(&o)) rc = ks_cli_error("lesson", "%s", ks_error_message());
        ls_slides_free(slides, n);
#else
        (void)delay; /* a GIF's slide time: no viewer, no GIF */
        rc = ks_cli_error("lesson", "this build has no viewer (install libsdl2-dev libsdl2-ttf-dev "
                                    "libsdl2-image-dev and rebuild); play it as text without --view");
#endif
    } else {
        int pause = !auto_answer && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        if (ls_play_text(&S, stdin, stdout, auto_answer, pause))
            rc = ks_cli_error("lesson",
                              "stdin ended before an answer (kscope lesson %s --auto answers "
                              "by itself)",
                              name);
    }
#ifdef KS_HAVE_VIEWER
out:
#endif
    ls_session_close(&S);
    ls_free(&L);
    return rc;
}
