/* kscope gallery DIR: vdumoulin/conv_arithmetic's animations from real traces of the
 * im2col and col2im operators on the simulator (viewer/vw_gallery.h, docs/gallery.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_sim.h"
#include "../kernels/registry.h"
#include "../trace/run_trace.h"
#include "cli.h"
#ifdef KS_HAVE_VIEWER
#include "../viewer/vw_gallery.h"
#endif

static const char *usage =
    "usage: kscope gallery DIR [--only NAME,NAME...] [--size WxH] [--text-size PX] [--delay MS] [--no-gif]\n"
    "       kscope gallery --list\n\n"
    "Renders vdumoulin/conv_arithmetic's animations from real traces: for each case an im2col\n"
    "(conv2d's im2col step) or, transposed, a col2im of a regular im2col's columns runs on the\n"
    "simulator, and every window position becomes a frame: the input below, the output above,\n"
    "the im2col column the window becomes beside them. Writes DIR/NAME.gif,\n"
    "DIR/NAME/frame-NNN.png, DIR/NAME/frames.tsv (each frame's window, read from the trace)\n"
    "and DIR/index.html and DIR/README.md listing them.\n"
    "  --only NAMES     only these animations (--list names them)\n"
    "  --size WxH       frame size (default 1920x1080, at least 640x480)\n"
    "  --text-size PX   text height in pixels per em (default: from the size, 24 at 1920x1080)\n"
    "  --delay MS       how long each GIF frame shows (default 700; the last three times that)\n"
    "  --no-gif         PNG frames only\n";

#ifdef KS_HAVE_VIEWER
static int set(ks_run *r, const char *name, int v)
{
    char text[32];
    snprintf(text, sizeof text, "%d", v);
    return ks_run_set(r, name, text);
}

/* Run tensor t as float32 of the given shape holding 1, 2, 3, ... (or all ones). */
static int counting(ks_tensor *t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d, int ones)
{
    ks_tensor_shape(t, ndim, a, b, c, d); /* keeps the name ks_run_init gave it */
    t->data = NULL;
    int rc = ks_tensor_alloc(t);
    if (rc) return rc;
    const int64_t n = ks_tensor_numel(t);
    for (int64_t i = 0; i < n; ++i) ((float *)t->data)[i] = ones ? 1.0f : (float)(i + 1);
    return KS_OK;
}

/* Runs animation a on the simulator into r and tr: the convolution's im2col (conv2d with
 * one filter of ones on an input counting 1, 2, ...), or the transpose: col2im (scatter)
 * of the columns x makes, columns[tap][q] = x[q] for x counting 1, 2, ..., with x added
 * to the trace. *x holds x's data. */
static int trace_of(const vw_gallery_anim *a, ks_run *r, ks_trace *tr, float **x)
{
    const ks_op *op = ks_op_find(a->transposed ? "col2im" : "conv2d");
    const int o = vw_gallery_out_size(a), taps = a->k * a->k;
    int rc;
    *x = NULL;
    if (!op) return ks_fail(KS_EINVAL, "gallery: no %s operator", a->transposed ? "col2im" : "conv2d");
    ks_run_init(r, op);
    char size[32];
    snprintf(size, sizeof size, "%d,%d", a->i, a->i);
    if ((rc = set(r, "kernel-size", a->k)) || (rc = set(r, "padding", a->p)) || (rc = set(r, "stride", a->s)) ||
        (rc = set(r, "dilation", a->d)) || (rc = set(r, "batch", 1)) || (rc = set(r, "channels", 1)) ||
        (rc = ks_run_set(r, a->transposed ? "output-size" : "input-size", size)))
        return rc;
    if (a->transposed) {
        if ((rc = ks_run_set(r, "algorithm", "scatter"))) return rc;
        ks_tensor *cols = &r->tensor[ks_op_tensor(op, "columns")];
        if ((rc = counting(cols, 3, 1, taps, (int64_t)o * o, 0, 0))) return rc;
        float *c = cols->data;
        for (int t = 0; t < taps; ++t)
            for (int q = 0; q < o * o; ++q) c[(size_t)t * o * o + q] = (float)(q + 1);
        if (!(*x = malloc((size_t)o * o * sizeof **x))) return ks_fail(KS_ENOMEM, "out of memory");
        for (int q = 0; q < o * o; ++q) (*x)[q] = (float)(q + 1);
    } else {
        if ((rc = set(r, "out-channels", 1)) || (rc = ks_run_set(r, "trace-kernel", "im2col"))) return rc;
        if ((rc = counting(&r->tensor[ks_op_tensor(op, "input")], 4, 1, 1, a->i, a->i, 0)) ||
            (rc = counting(&r->tensor[ks_op_tensor(op, "weight")], 4, 1, 1, a->k, a->k, 1)))
            return rc;
    }
    r->device = KS_DEV_SIM;
    if (!(r->sink = ks_host_sink_create(1u << 20, ks_filter_all()))) return KS_ENOMEM;
    if ((rc = ks_run_execute(r))) return rc;
    memset(tr, 0, sizeof *tr);
    ks_trace_from_run(op, r, tr);
    if (a->transposed) { /* x, the transposed convolution's input, as a tensor of the trace */
        if (tr->ntensors >= KS_MAX_TENSORS) return ks_fail(KS_EINVAL, "gallery: no room for x in the trace");
        ks_tensor *t = &tr->tensors[tr->ntensors];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "x");
        ks_tensor_shape(t, 4, 1, 1, o, o);
        t->data = *x;
        tr->roles[tr->ntensors++] = KS_ROLE_INPUT;
    }
    return KS_OK;
}

static int in_list(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* DIR/index.html and DIR/README.md: the animations written, with their arithmetic. */
static int write_index(const char *dir, const vw_gallery_anim *all, const int *frames, int n, int gif)
{
    char path[4200];
    for (int html = 0; html < 2; ++html) {
        snprintf(path, sizeof path, "%s/%s", dir, html ? "index.html" : "README.md");
        FILE *f = fopen(path, "w");
        if (!f) return ks_fail(KS_EIO, "cannot write %s: %s", path, strerror(errno));
        if (html)
            fprintf(f, "<!doctype html>\n<meta charset=\"utf-8\">\n<title>KernelScope: convolution arithmetic</title>\n"
                       "<h1>Convolution arithmetic, from KernelScope traces</h1>\n"
                       "<p>Each animation is a real trace of KernelScope's im2col (a convolution) or col2im (its "
                       "transpose) run on the simulator: one frame per window, the input below, the output above, the "
                       "im2col column beside them. o = floor((i + 2p - d(k-1) - 1) / s) + 1.</p>\n<table>\n"
                       "<tr><th>animation</th><th>i</th><th>k</th><th>s</th><th>p</th><th>d</th><th>o</th>"
                       "<th>frames</th></tr>\n");
        else
            fprintf(f, "# Convolution arithmetic, from KernelScope traces\n\n"
                       "Each animation is a real trace of KernelScope's im2col (a convolution) or col2im (its\n"
                       "transpose) run on the simulator: one frame per window, the input below, the output above,\n"
                       "the im2col column beside them. o = floor((i + 2p - d(k-1) - 1) / s) + 1; a transpose\n"
                       "takes an o x o input back to i x i. `kscope gallery DIR` wrote this folder\n"
                       "(docs/gallery.md).\n\n"
                       "| animation | i | k | s | p | d | o | frames |\n|---|---|---|---|---|---|---|---|\n");
        for (int k = 0; k < n; ++k) {
            const vw_gallery_anim *a = &all[k];
            if (frames[k] <= 0) continue;
            const char *file = gif ? ".gif" : "/frame-000.png";
            if (html)
                fprintf(f,
                        "<tr><td><b>%s</b><br><img src=\"%s%s\" width=\"640\" alt=\"%s\"><br><a href=\"%s/\">PNG "
                        "frames</a></td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td>"
                        "</tr>\n",
                        a->title, a->name, file, a->name, a->name, a->i, a->k, a->s, a->p, a->d, vw_gallery_out_size(a),
                        frames[k]);
            else
                fprintf(f, "| [%s](%s%s) ([frames](%s/)) | %d | %d | %d | %d | %d | %d | %d |\n", a->title, a->name,
                        file, a->name, a->i, a->k, a->s, a->p, a->d, vw_gallery_out_size(a), frames[k]);
        }
        if (html) fprintf(f, "</table>\n");
        if (fclose(f) != 0) return ks_fail(KS_EIO, "cannot write %s", path);
    }
    return KS_OK;
}
#endif

int ks_cmd_gallery(int argc, char **argv)
{
    const char *ctx = "gallery", *dir = NULL, *only = NULL, *v;
    int w = 1920, h = 1080, gif = 1, list = 0;
    int64_t text = 0, delay = 700;
    for (int i = 1; i < argc; ++i) {
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return KS_EXIT_OK;
        } else if (!strcmp(argv[i], "--no-gif")) gif = 0;
        else if (!strcmp(argv[i], "--list")) list = 1;
        else if ((m = ks_flag(argc, argv, &i, "only", &only))) {
            if (m < 0) return ks_cli_error(ctx, "--only needs a value");
        } else if ((m = ks_flag(argc, argv, &i, "size", &v))) {
            if (m < 0 || ks_view_size_arg(ctx, "--size", v, &w, &h)) return KS_EXIT_ERROR;
            if (w < 640 || h < 480 || w > 7680 || h > 4320)
                return ks_cli_error(ctx, "--size must be from 640x480 to 7680x4320 (got %s)", v);
        } else if ((m = ks_flag(argc, argv, &i, "text-size", &v))) {
            if (m < 0 || ks_view_int_arg(ctx, "--text-size", v, 8, 96, &text)) return KS_EXIT_ERROR;
        } else if ((m = ks_flag(argc, argv, &i, "delay", &v))) {
            if (m < 0 || ks_view_int_arg(ctx, "--delay", v, 10, 60000, &delay)) return KS_EXIT_ERROR;
        } else if (argv[i][0] == '-') {
            fputs(usage, stderr);
            return ks_cli_error(ctx, "unknown flag '%s'", argv[i]);
        } else if (!dir) dir = argv[i];
        else return ks_cli_error(ctx, "one folder only (got '%s' and '%s')", dir, argv[i]);
    }
#ifndef KS_HAVE_VIEWER
    (void)gif, (void)list, (void)only, (void)text, (void)delay;
    if (!dir) {
        fputs(usage, stderr);
        return KS_EXIT_ERROR;
    }
    return ks_cli_error(ctx, "this build has no viewer (SDL2, SDL2_ttf and SDL2_image): no gallery");
#else
    int n;
    const vw_gallery_anim *all = vw_gallery_list(&n);
    if (list) {
        for (int k = 0; k < n; ++k)
            printf("%-40s i=%d k=%d s=%d p=%d d=%d -> o=%d\n", all[k].name, all[k].i, all[k].k, all[k].s, all[k].p,
                   all[k].d, vw_gallery_out_size(&all[k]));
        return KS_EXIT_OK;
    }
    if (!dir) {
        fputs(usage, stderr);
        return KS_EXIT_ERROR;
    }
    for (const char *p = only; p && *p;) { /* every name --only gives is one of the list */
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (int k = 0; k < n && !found; ++k) found = strlen(all[k].name) == len && !strncmp(all[k].name, p, len);
        if (!found) return ks_cli_error(ctx, "--only: no animation '%.*s' (kscope gallery --list)", (int)len, p);
        p = e ? e + 1 : NULL;
    }
#ifndef KS_HAVE_GIF
    if (gif) {
        fprintf(stderr, "kscope: gallery: this build has no GIF export (-DKS_WITH_GIF=OFF): PNG frames only\n");
        gif = 0;
    }
#endif
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return ks_cli_error(ctx, "cannot create %s: %s", dir, strerror(errno));
    int frames[64] = {0}, rc = KS_OK, made = 0;
    vw_gallery_opts o =
        {.dir = dir, .width = w, .height = h, .text_size = (int)text, .delay_ms = (int)delay, .gif = gif};
    ks_run *r = calloc(1, sizeof *r);
    ks_trace *tr = calloc(1, sizeof *tr);
    if (!r || !tr) {
        free(r), free(tr);
        return ks_cli_error(ctx, "out of memory");
    }
    const int was_quiet = ks_sim_quiet_warnings(1);
    for (int k = 0; k < n && k < 64 && !rc; ++k) {
        if (only && !in_list(only, all[k].name)) continue;
        float *x = NULL;
        memset(r, 0, sizeof *r);
        rc = trace_of(&all[k], r, tr, &x);
        if (!rc) rc = vw_gallery_render(tr, &all[k], &o, &frames[k]);
        if (!rc) {
            printf("%s/%s%s: %d frames\n", dir, all[k].name, gif ? ".gif" : "", frames[k]);
            made++;
        }
        ks_host_sink_free(r->sink);
        ks_run_free(r);
        free(x);
    }
    ks_sim_quiet_warnings(was_quiet);
    free(r);
    free(tr);
    if (!rc) rc = write_index(dir, all, frames, n < 64 ? n : 64, gif);
    if (rc) return ks_cli_error(ctx, "%s", ks_error_message());
    printf("%d animations in %s (index.html, README.md)\n", made, dir);
    return KS_EXIT_OK;
#endif
}
