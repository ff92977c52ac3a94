/* kscope puzzle: GPU-Puzzles-style exercises in C, graded by their trace (docs/puzzles.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../lessons/puzzles/pz_grade.h"
#include "cli.h"
#ifdef KS_HAVE_VIEWER
#include "../viewer/vw_app.h"
#endif

static const char *usage =
    "usage: kscope puzzle --list\n"
    "       kscope puzzle --init DIR\n"
    "       kscope puzzle NAME [FILE.c] [--trace OUT.kst] [--view]\n"
    "       kscope puzzle NAME --solution\n\n"
    "GPU-Puzzles-style exercises in C: each is one kernel body to fill in, run once per\n"
    "thread on the simulator and graded by its trace.\n"
    "  --list          the puzzles in order, with what each teaches\n"
    "  --init DIR      copy every puzzle's stub into DIR (made if missing; a file already\n"
    "                  there is kept): then cd DIR and grade them one by one\n"
    "  NAME [FILE.c]   grade FILE.c (default ./NAME.c): compile it (cc -shared -fPIC;\n"
    "                  $KSCOPE_CC for another compiler command, e.g. \"clang -fsanitize=address\":\n"
    "                  split at spaces, no shell; stopped after $KSCOPE_CC_TIMEOUT s, default 60),\n"
    "                  run NAME_kernel on the puzzle's launch (stopped after 10 s; fiber stacks\n"
    "                  of $KSCOPE_FIBER_STACK KiB, default 256), write its trace and judge it:\n"
    "                  the output against a reference, no access outside an array (shared\n"
    "                  ones too), inputs only read, each output element written once, at most\n"
    "                  N global reads a thread, kscope check's invariants; the [shared]\n"
    "                  puzzles also: every block uses shared memory, no shared-memory race,\n"
    "                  no read of unwritten shared memory, every barrier reached by every thread.\n"
    "                  Exit 0 passed, 1 failed (the failing work item is named), 2 error\n"
    "  --trace OUT     where the trace goes (default ./NAME.kst; an earlier one is removed first)\n"
    "  --view          on failure, open the viewer on the failing work item (needs a display)\n"
    "  --solution      print the puzzle's reference solution\n";

static int list(void)
{
    int n;
    const pz_spec *s = pz_specs(&n);
    printf("puzzles (kscope puzzle --init DIR copies their stubs; kscope puzzle NAME grades one):\n");
    for (int i = 0; i < n; ++i)
        printf("  %2d %-11s %-58s %s%s\n", i + 1, s[i].name, s[i].title, s[i].teaches,
               s[i].shared ? " [shared]" : "");
    printf("launch and shapes: the comment at the top of each stub\n");
    return KS_EXIT_OK;
}

/* Copies src to dst whole (a temporary file renamed), or leaves nothing. */
static int copy_file(const char *src, const char *dst)
{
    char tmp[4300], buf[4096];
    FILE *in = fopen(src, "rb");
    if (!in) return ks_cli_error("puzzle", "cannot read %s: %s", src, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s.tmp", dst);
    FILE *out = fopen(tmp, "wb");
    if (!out) {
        fclose(in);
        return ks_cli_error("puzzle", "cannot write %s: %s", tmp, strerror(errno));
    }
    size_t got;
    int bad = 0;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) bad |= fwrite(buf, 1, got, out) != got;
    bad |= ferror(in);
    fclose(in);
    bad |= fclose(out) != 0;
    if (bad || rename(tmp, dst)) {
        remove(tmp);
        return ks_cli_error("puzzle", "cannot write %s", dst);
    }
    return KS_EXIT_OK;
}

static int init(const pz_paths *p, const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0777) && errno != EEXIST) return ks_cli_error("puzzle", "cannot make %s: %s", dir, strerror(errno));
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return ks_cli_error("puzzle", "%s is not a folder", dir);
    int n, copied = 0, kept = 0;
    const pz_spec *s = pz_specs(&n);
    for (int i = 0; i < n; ++i) {
        char src[4200], dst[4200];
        snprintf(src, sizeof src, "%s/stubs/%s.c", p->dir, s[i].name);
        snprintf(dst, sizeof dst, "%s/%s.c", dir, s[i].name);
        if (stat(dst, &st) == 0) {
            kept++;
            continue;
        }
        if (copy_file(src, dst)) return KS_EXIT_ERROR;
        copied++;
    }
    printf("%d stubs copied into %s", copied, dir);
    if (kept) printf(" (%d already there, kept)", kept);
    printf("\nnext: cd %s, fill in map.c, then: kscope puzzle map\n", dir);
    return KS_EXIT_OK;
}

static int solution(const pz_paths *p, const pz_spec *s)
{
    char path[4200], buf[4096];
    snprintf(path, sizeof path, "%s/solutions/%s.c", p->dir, s->name);
    FILE *f = fopen(path, "rb");
    if (!f) return ks_cli_error("puzzle", "no solution for %s (%s: %s)", s->name, path, strerror(errno));
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, got, stdout);
    fclose(f);
    return KS_EXIT_OK;
}

static void open_viewer(const char *trace, int64_t item)
{
    const char *x = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    if ((!x || !*x) && (!wl || !*wl)) {
        printf("--view: no display here; run the kscope view line above where there is one\n");
        return;
    }
#ifdef KS_HAVE_VIEWER
    char spec[64];
    vw_options o;
    vw_options_init(&o);
    o.path = trace;
    if (item >= 0) snprintf(spec, sizeof spec, "index=%lld", (long long)item), o.goto_spec = spec;
    if (vw_main(&o)) fprintf(stderr, "kscope: puzzle: viewer: %s\n", ks_error_message());
#else
    (void)trace, (void)item;
    printf("--view: this build has no viewer; kscope step shows the same work item as text\n");
#endif
}

static int report(const pz_spec *s, const char *trace, const pz_verdict *v, int view)
{
    printf("puzzle %s: %s\n", s->name, v->passed ? "passed" : "FAILED");
    for (int i = 0; i < v->nrules; ++i) {
        const pz_rule *r = &v->rules[i];
        printf("  %-4s %s%s%s\n", r->ok ? "ok" : "FAIL", r->name, r->ok ? "" : ": ", r->ok ? "" : r->detail);
    }
    printf("trace: %s\n", trace);
    if (v->passed) return KS_EXIT_OK;
    fputs(v->table, stdout);
    if (v->item >= 0) {
        printf("look at work item %lld (= its thread):\n  kscope step %s --index %lld\n"
               "  kscope view %s --goto index=%lld\n",
               (long long)v->item, trace, (long long)v->item, trace, (long long)v->item);
    } else {
        printf("look at it: kscope view %s\n", trace);
    }
    if (view) open_viewer(trace, v->item);
    return KS_EXIT_VIOLATIONS;
}

/* The compile's temporary folder and object, removed if kscope is stopped meanwhile. */
static char g_tmpdir[4200], g_so[4300];

static void on_stop(int sig)
{
    pz_build_interrupt();
    if (g_so[0]) unlink(g_so);
    if (g_tmpdir[0]) rmdir(g_tmpdir);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* SIGINT and SIGTERM clean up (where not ignored: a background job keeps ignoring SIGINT). */
static void catch_stops(int on)
{
    const int sigs[2] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; ++k) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on ? on_stop : SIG_DFL;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sigs[k], &sa, NULL);
    }
}

static int grade(const pz_paths *p, const pz_spec *s, const char *file, const char *trace, int view)
{
    char src[4200], out[4200];
    char *const tmpdir = g_tmpdir, *const so = g_so;
    struct stat st;
    if (file) snprintf(src, sizeof src, "%s", file);
    else snprintf(src, sizeof src, "%s.c", s->name);
    if (stat(src, &st) || !S_ISREG(st.st_mode))
        return ks_cli_error("puzzle", "no file %s (kscope puzzle --init DIR copies the stubs; or name the file)", src);
    if (trace) snprintf(out, sizeof out, "%s", trace);
    else snprintf(out, sizeof out, "%s.kst", s->name);
    /* a trace left by an earlier run must never be graded as this one's */
    if (unlink(out) && errno != ENOENT) return ks_cli_error("puzzle", "cannot replace %s: %s", out, strerror(errno));
    const char *t = getenv("TMPDIR");
    snprintf(g_tmpdir, sizeof g_tmpdir, "%s/kscope-puzzle-XXXXXX", t && *t ? t : "/tmp");
    catch_stops(1);
    if (!mkdtemp(tmpdir)) {
        g_tmpdir[0] = 0;
        catch_stops(0);
        return ks_cli_error("puzzle", "cannot make a temporary folder: %s", strerror(errno));
    }
    snprintf(so, sizeof g_so, "%s/%s.so", tmpdir, s->name);
    int rc = pz_build(p, src, so);
    if (!rc) rc = pz_run(s, so, out);
    remove(so);
    rmdir(tmpdir);
    g_so[0] = g_tmpdir[0] = 0;
    catch_stops(0);
    if (rc) return ks_cli_error("puzzle", "%s", ks_error_message());
    pz_verdict v;
    if (pz_judge(s, out, &v)) return ks_cli_error("puzzle", "%s", ks_error_message());
    return report(s, out, &v, view);
}

int ks_cmd_puzzle(int argc, char **argv)
{
    const char *name = NULL, *file = NULL, *trace = NULL, *dir = NULL;
    int view = 0, want_solution = 0, want_list = 0;
    for (int i = 1; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return KS_EXIT_OK;
        }
        if (!strcmp(argv[i], "--list")) want_list = 1;
        else if (!strcmp(argv[i], "--view")) view = 1;
        else if (!strcmp(argv[i], "--solution")) want_solution = 1;
        else if ((m = ks_flag(argc, argv, &i, "init", &v)) != 0) {
            if (m < 0) return ks_cli_error("puzzle", "--init needs a folder");
            dir = v;
        } else if ((m = ks_flag(argc, argv, &i, "trace", &v)) != 0) {
            if (m < 0) return ks_cli_error("puzzle", "--trace needs a file");
            trace = v;
        } else if (argv[i][0] == '-') return ks_cli_error("puzzle", "unknown argument '%s' (kscope puzzle --help)", argv[i]);
        else if (!name) name = argv[i];
        else if (!file) file = argv[i];
        else return ks_cli_error("puzzle", "one puzzle and one file at most (got '%s')", argv[i]);
    }
    pz_paths p;
    pz_locate(&p);
    if (want_list) return name || dir ? ks_cli_error("puzzle", "--list takes no other argument") : list();
    if (dir) return name ? ks_cli_error("puzzle", "--init takes only a folder") : init(&p, dir);
    if (!name) return ks_cli_error("puzzle", "name a puzzle (kscope puzzle --list), or --init DIR");
    const pz_spec *s = pz_find(name);
    if (!s) return ks_cli_error("puzzle", "no puzzle '%s' (kscope puzzle --list names them)", name);
    if (want_solution) return file || trace || view ? ks_cli_error("puzzle", "--solution takes only a puzzle name")
                                                     : solution(&p, s);
    return grade(&p, s, file, trace, view);
}
