/* kscope puzzle: GPU-Puzzles-style exercises in CUDA C, graded by their trace (docs/puzzles.md). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../lessons/puzzles/pz_grade.h"
#include "../trace/ks_file.h"
#include "cli.h"
#ifdef KS_HAVE_VIEWER
#include "../viewer/vw_app.h"
#endif

static const char *usage =
    "usage: kscope puzzle --list\n"
    "       kscope puzzle --init DIR\n"
    "       kscope puzzle NAME [FILE.cu] [--trace OUT.kst] [--view]\n"
    "       kscope puzzle NAME --solution\n\n"
    "GPU-Puzzles-style exercises in CUDA C: each is one __global__ kernel to complete, run on\n"
    "the simulator and graded by its trace.\n"
    "  --list          the puzzles in order, with what each teaches\n"
    "  --init DIR      copy every puzzle's stub NAME.cu into DIR (made if missing; a file\n"
    "                  already there is kept): then cd DIR and grade them one by one\n"
    "  NAME [FILE.cu]  grade FILE.cu (default ./NAME.cu): compile it with clang 16 or newer\n"
    "                  ($KSCOPE_CLANG for another; stopped after $KSCOPE_CC_TIMEOUT s, default\n"
    "                  60), run its kernel NAME on the puzzle's launch in a child process\n"
    "                  (stopped after 10 s), write its trace and judge it: the output against a\n"
    "                  reference, no access outside an array (shared ones too), inputs only\n"
    "                  read, each output element written once, at most N global reads a thread,\n"
    "                  every thread runs to its end, kscope check's invariants; the [shared]\n"
    "                  puzzles also: every block uses shared memory, no shared-memory race, no\n"
    "                  read of unwritten shared memory, every barrier reached by every thread.\n"
    "                  Each finding names the thread and the source line. Exit 0 passed, 1\n"
    "                  failed (the failing work item is named), 2 error\n"
    "  --trace OUT     where the trace goes (default ./NAME.kst), written whole once the run\n"
    "                  is over; not a device, FIFO or folder, nor the graded file itself\n"
    "  --view          on failure, open the viewer on the failing work item (needs a display)\n"
    "  --solution      print the puzzle's reference solution\n";

static int list(void)
{
    int n;
    const pz_spec *s = pz_specs(&n);
    printf("puzzles (kscope puzzle --init DIR copies their stubs; kscope puzzle NAME grades one):\n");
    for (int i = 0; i < n; ++i) {
        char launch[48];
        if (s[i].grid[1] == 1 && s[i].block[1] == 1)
            snprintf(launch, sizeof launch, "<<<%u, %u>>>", s[i].grid[0], s[i].block[0]);
        else
            snprintf(launch, sizeof launch, "<<<(%u,%u), (%u,%u)>>>", s[i].grid[0], s[i].grid[1], s[i].block[0],
                     s[i].block[1]);
        printf("  %2d %-11s %-62s %-20s %s%s\n", i + 1, s[i].name, s[i].title, launch, s[i].teaches,
               s[i].shared ? " [shared]" : "");
    }
    printf("arrays, sizes and what each thread does: the comment at the top of each stub\n");
    return KS_EXIT_OK;
}

/* Reads a small file whole (a stub or a solution). NULL with the message set. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = ks_in_fopen(path);
    if (!f) return NULL;
    size_t cap = 1 << 16, got = 0, k;
    char *buf = malloc(cap);
    while (buf && (k = fread(buf + got, 1, cap - got, f)) > 0)
        if ((got += k) == cap) {
            char *more = realloc(buf, cap *= 2);
            if (!more) free(buf);
            buf = more;
        }
    const int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        ks_fail(KS_EIO, "%s: cannot read", path);
        return NULL;
    }
    *n = got;
    return buf;
}

/* Creates dst with src's bytes. A name already taken, by a file or a link (followed
 * nowhere: O_EXCL), is kept: *kept set, nothing written. */
static int copy_new(const char *src, const char *dst, int *kept)
{
    size_t n;
    char *text = slurp(src, &n);
    if (!text) return ks_cli_error("puzzle", "%s", ks_error_message());
    const int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        const int err = errno;
        free(text);
        if (err == EEXIST) return *kept = 1, KS_EXIT_OK;
        return ks_cli_error("puzzle", "cannot create %s: %s", dst, strerror(err));
    }
    size_t done = 0;
    while (done < n) {
        const ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    free(text);
    if (close(fd) || done < n) {
        unlink(dst); /* ours: made above */
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
        int was_there = 0;
        snprintf(src, sizeof src, "%s/stubs/%s.cu", p->dir, s[i].name);
        snprintf(dst, sizeof dst, "%s/%s.cu", dir, s[i].name);
        if (copy_new(src, dst, &was_there)) return KS_EXIT_ERROR;
        kept += was_there, copied += !was_there;
    }
    printf("%d stubs copied into %s", copied, dir);
    if (kept) printf(" (%d already there, kept)", kept);
    printf("\nnext: cd %s, complete the kernel in map.cu, then: kscope puzzle map\n", dir);
    return KS_EXIT_OK;
}

static int solution(const pz_paths *p, const pz_spec *s)
{
    char path[4200];
    size_t n;
    snprintf(path, sizeof path, "%s/solutions/%s.cu", p->dir, s->name);
    char *text = slurp(path, &n);
    if (!text) return ks_cli_error("puzzle", "no solution for %s (%s)", s->name, ks_error_message());
    fwrite(text, 1, n, stdout);
    free(text);
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
        for (int k = 0; k < 2 && !r->ok; ++k)
            if (r->where[k][0]) printf("         at %s\n", r->where[k]);
    }
    printf("trace: %s\n", trace);
    if (v->passed) return KS_EXIT_OK;
    fputs(v->table, stdout);
    if (v->item >= 0) {
        printf("look at work item %lld (= its thread):\n  kscope step %s --index %lld\n", (long long)v->item, trace,
               (long long)v->item);
        if (s->grid[1] > 1 || s->block[1] > 1) { /* the same thread as CUDA names it */
            const int64_t threads = (int64_t)s->block[0] * s->block[1], b = v->item / threads, t = v->item % threads;
            printf("  kscope step %s --block %lld,%lld,0 --thread %lld,%lld,0\n", trace, (long long)(b % s->grid[0]),
                   (long long)(b / s->grid[0]), (long long)(t % s->block[0]), (long long)(t / s->block[0]));
        }
        printf("  kscope view %s --goto index=%lld\n", trace, (long long)v->item);
    } else {
        printf("look at it: kscope view %s\n", trace);
    }
    if (view) open_viewer(trace, v->item);
    return KS_EXIT_VIOLATIONS;
}

/* ---- stops: a signal during a run ends the run's processes, its temporary folder and
 * the staged trace, then kscope dies of it as it would have ---- */
static const int stop_signals[3] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction g_old[3];
static int g_caught[3];
static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
    g_stop = sig;
    pz_run_interrupt();
}

/* where not ignored: a background job keeps ignoring SIGINT */
static void catch_stops(int on)
{
    for (int k = 0; k < 3; ++k) {
        if (!on) {
            if (g_caught[k]) sigaction(stop_signals[k], &g_old[k], NULL);
            g_caught[k] = 0;
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        g_caught[k] = sigaction(stop_signals[k], NULL, &g_old[k]) == 0 && g_old[k].sa_handler != SIG_IGN &&
                      sigaction(stop_signals[k], &sa, NULL) == 0;
    }
}

/* Removes a folder and everything in it (links are removed, never followed; a folder the
 * run made unreadable, chmod 000, is opened up first: it is ours). */
static void remove_tree(const char *dir)
{
    chmod(dir, 0700);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        struct stat st;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(path);
            else unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* the run's trace into the staged output */
static int put_trace(ks_out_file *o, const char *from)
{
    size_t n;
    char *bytes = slurp(from, &n);
    if (!bytes) return KS_EIO;
    const int rc = ks_out_write(o, bytes, n);
    free(bytes);
    return rc;
}

static int grade(const pz_spec *s, const char *file, const char *trace, int view)
{
    char src[4200], out[4200], tmpdir[4200], tmp_trace[4400], why[600] = "";
    struct stat st;
    if (file) snprintf(src, sizeof src, "%s", file);
    else snprintf(src, sizeof src, "%s.cu", s->name);
    if (stat(src, &st) && errno == ENOENT)
        return ks_cli_error("puzzle", "no file %s (kscope puzzle --init DIR copies the stubs; or name the file)", src);
    const int fd = ks_in_open(src);
    if (fd < 0) return ks_cli_error("puzzle", "%s", ks_error_message());
    close(fd);
    if (trace) snprintf(out, sizeof out, "%s", trace);
    else snprintf(out, sizeof out, "%s.kst", s->name);
    /* the trace is an output: never the graded file (by name, link or hard link) */
    if (!strcmp(out, src) || same_file(out, src))
        return ks_cli_error("puzzle", "--trace %s is the file being graded: refusing to write the trace over it", out);
    ks_out_file staged; /* checked now (no device, FIFO, folder), replaced only at the end */
    if (ks_out_open(&staged, out)) return ks_cli_error("puzzle", "%s", ks_error_message());
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kscope-puzzle-XXXXXX", t && *t ? t : "/tmp");
    g_stop = 0;
    catch_stops(1);
    if (!mkdtemp(tmpdir)) {
        const int err = errno;
        catch_stops(0);
        ks_out_abort(&staged);
        return ks_cli_error("puzzle", "cannot make a temporary folder: %s", strerror(err));
    }
    char abs_tmp[PATH_MAX]; /* the run works in it and confines its writes to it by path */
    if (realpath(tmpdir, abs_tmp) && strlen(abs_tmp) < sizeof tmpdir) snprintf(tmpdir, sizeof tmpdir, "%s", abs_tmp);
    snprintf(tmp_trace, sizeof tmp_trace, "%s/%s.kst", tmpdir, s->name);
    int outcome = pz_run(s, src, tmpdir, tmp_trace);
    if (outcome != PZ_RAN) snprintf(why, sizeof why, "%s", ks_error_message());
    static pz_verdict v;
    if (outcome == PZ_RAN && !g_stop && pz_judge(s, src, tmp_trace, &v))
        outcome = PZ_ERROR, snprintf(why, sizeof why, "%s", ks_error_message());
    if (outcome != PZ_ERROR && !g_stop) {
        if (put_trace(&staged, tmp_trace)) {
            snprintf(why, sizeof why, "%s", ks_error_message());
            outcome = PZ_ERROR;
            ks_out_abort(&staged);
        } else if (ks_out_commit(&staged)) { /* (which removes its temporary itself) */
            snprintf(why, sizeof why, "%s", ks_error_message());
            outcome = PZ_ERROR;
        }
    } else {
        ks_out_abort(&staged);
    }
    remove_tree(tmpdir);
    catch_stops(0);
    if (g_stop) raise(g_stop); /* the handler before ours (ks_file's, or the default) */
    if (outcome == PZ_ERROR) return ks_cli_error("puzzle", "%s", why);
    if (outcome == PZ_STOPPED)
        return ks_cli_error("puzzle", "%s; nothing graded (the trace up to there: %s)", why, out);
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
        } else if (argv[i][0] == '-')
            return ks_cli_error("puzzle", "unknown argument '%s' (kscope puzzle --help)", argv[i]);
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
    if (want_solution)
        return file || trace || view ? ks_cli_error("puzzle", "--solution takes only a puzzle name") : solution(&p, s);
    return grade(s, file, trace, view);
}
