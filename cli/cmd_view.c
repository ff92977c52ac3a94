/* kscope view: replay a trace in the SDL2 viewer, or render it to PNG without a display. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "cli.h"
#ifdef KS_HAVE_VIEWER
#include "../viewer/vw_app.h"
#endif

static const char *usage = "usage: kscope view FILE.kst [--goto SPEC] [--order recorded|thread|iter]\n"
                           "                   [--unit event|item|thread|warp|block|field]\n"
                           "                   [--mode values|reads|weights|writes|visits|sectors]\n"
                           "                   [--keys SCRIPT] [--size WxH] [--text-size PX] [--shot-dir DIR]\n"
                           "       kscope view FILE.kst --headless --png OUT.png [same options]\n"
                           "       kscope view FILE.kst --headless --frames DIR [--every N] [--max-frames N]\n"
                           "       kscope view FILE.kst --gif OUT.gif [--every N] [--max-frames N] [--delay MS]\n\n"
                           "Replays a trace: the input and output tensors as heatmaps, the focused work item's\n"
                           "reads, writes and sample points over them, its index decomposition, the grid of\n"
                           "blocks and threads, a timeline. Press H in the window for the keys.\n"
                           "  --goto SPEC      start at index=N (work item), thread=T, or event=P (position)\n"
                           "  --order O        recorded (as the trace stores events), thread (thread-major) or\n"
                           "                   iter (iteration-major: the grid sweeping the data)\n"
                           "  --unit U         what Right/Left and playback step by (field: the work site's\n"
                           "                   first field, e.g. a sparse rulebook's kernel offset k)\n"
                           "  --mode M         heatmaps of values, read counts, weight sums, write counts,\n"
                           "                   visits (region points per cell: a sparse rulebook's pairs per site)\n"
                           "                   or sectors (32-byte sectors per warp request of the cell's accesses)\n"
                           "  --keys SCRIPT    keys to press once the trace is indexed, comma-separated:\n"
                           "                   Right,Right,O,S,Q  type:TEXT  click:X:Y  wheel:X:Y:+1  wait:N\n"
                           "                   (W: warp strip; Z/X zoom, Shift+arrows pan, R: automatic view)\n"
                           "  --headless       no window: render with the software renderer (implied by --png,\n"
                           "                   --frames and --gif)\n"
                           "  --png OUT.png    write the frame (after --goto and --keys) to OUT.png\n"
                           "  --frames DIR     write DIR/frame-000000.png ... one every N positions (--every,\n"
                           "                   default 1) from the start, at most --max-frames (default 1000)\n"
                           "  --gif OUT.gif    the same frames as --frames, as one animated GIF that loops\n"
                           "                   (256 colours a frame; needs a build with giflib)\n"
                           "  --delay MS       how long each GIF frame shows (default 500, 10 to 60000)\n"
                           "  --size WxH       window or frame size (default 1280x800, at least 640x480)\n"
                           "  --text-size PX   text height in pixels per em (default: from the size, 30 at\n"
                           "                   1920x1080 and in proportion below, at least 12; 8 to 96)\n"
                           "  --shot-dir DIR   where S / F12 screenshots go (default: the current folder)\n";

int ks_view_size_arg(const char *ctx, const char *flag, const char *v, int *w, int *h)
{
    char tail;
    if (!v) return ks_cli_error(ctx, "%s needs a value", flag);
    if (sscanf(v, "%dx%d%c", w, h, &tail) != 2)
        return ks_cli_error(ctx, "%s takes WxH, like 1280x800 (got '%s')", flag, v);
    return 0;
}

int ks_view_int_arg(const char *ctx, const char *flag, const char *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (!v) return ks_cli_error(ctx, "%s needs a value", flag);
    if (ks_parse_i64(v, out) || *out < lo || *out > hi)
        return ks_cli_error(ctx, "%s must be an integer from %lld to %lld (got '%s')", flag, (long long)lo,
                            (long long)hi, v);
    return 0;
}

#ifdef KS_HAVE_VIEWER
/* A count flag's value (>= 1); prints the error itself. */
static int count_arg(const char *flag, const char *v, uint64_t *out)
{
    int64_t n;
    if (!v) return ks_cli_error("view", "%s needs a value", flag);
    if (ks_parse_i64(v, &n) || n < 1) return ks_cli_error("view", "%s must be an integer >= 1 (got '%s')", flag, v);
    *out = (uint64_t)n;
    return 0;
}
#endif

int ks_cmd_view(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return KS_EXIT_OK;
        }
#ifndef KS_HAVE_VIEWER
    return ks_cli_error("view", "this build has no viewer (install libsdl2-dev libsdl2-ttf-dev "
                                "libsdl2-image-dev and rebuild); try kscope step instead");
#else
    vw_options o;
    const char *seq_flag = NULL, *delay_flag = NULL; /* flags of a sequence, of a GIF */
    vw_options_init(&o);
    if (argc < 2 || argv[1][0] == '-') return ks_cli_error("view", "needs a trace file (kscope view --help)");
    o.path = argv[1];
    for (int i = 2; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--headless")) {
            o.headless = 1;
            continue;
        }
#define FLAG(name) ((m = ks_flag(argc, argv, &i, name, &v)) != 0)
        if (FLAG("png")) o.png = v;
        else if (FLAG("frames")) o.frames_dir = v;
        else if (FLAG("gif")) o.gif = v;
        else if (FLAG("delay")) {
            int64_t ms;
            if (ks_view_int_arg("view", "--delay", v, 10, 60000, &ms)) return KS_EXIT_ERROR;
            o.delay_ms = (int)ms, delay_flag = "--delay";
        } else if (FLAG("every")) {
            if (count_arg("--every", v, &o.every)) return KS_EXIT_ERROR;
            seq_flag = "--every";
        } else if (FLAG("max-frames")) {
            if (count_arg("--max-frames", v, &o.max_frames)) return KS_EXIT_ERROR;
            seq_flag = "--max-frames";
        } else if (FLAG("text-size")) {
            int64_t px;
            if (ks_view_int_arg("view", "--text-size", v, 8, 96, &px)) return KS_EXIT_ERROR;
            o.text_size = (int)px;
        } else if (FLAG("goto")) o.goto_spec = v;
        else if (FLAG("order")) o.order = v;
        else if (FLAG("unit")) o.unit = v;
        else if (FLAG("mode")) o.mode = v;
        else if (FLAG("keys")) o.keys = v;
        else if (FLAG("shot-dir")) o.shot_dir = v;
        else if (FLAG("size")) {
            if (ks_view_size_arg("view", "--size", v, &o.width, &o.height)) return KS_EXIT_ERROR;
        } else {
            return ks_cli_error("view", "unknown argument '%s' (kscope view --help)", argv[i]);
        }
#undef FLAG
        if (m < 0) return ks_cli_error("view", "%s needs a value", argv[i]);
    }
    if (o.png || o.frames_dir || o.gif) o.headless = 1;
    if (o.headless && !o.png && !o.frames_dir && !o.gif)
        return ks_cli_error("view", "--headless needs --png OUT.png, --frames DIR or --gif OUT.gif");
    if (o.frames_dir && o.gif) return ks_cli_error("view", "--frames and --gif: pick one");
    if (seq_flag && !o.frames_dir && !o.gif)
        return ks_cli_error("view", "%s goes with --frames DIR or --gif OUT.gif", seq_flag);
    if (delay_flag && !o.gif) return ks_cli_error("view", "--delay goes with --gif OUT.gif");
    if (vw_main(&o)) return ks_cli_error("view", "%s", ks_error_message());
    return KS_EXIT_OK;
#endif
}
