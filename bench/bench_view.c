/* bench_view - the viewer's speed on big traces, headless at 1280x800 (the same software
 * renderer the window uses):
 *   open:   opening the trace + the first frame, against reading the whole file once (the
 *           peer: what a viewer that parses everything at open would pay at the least);
 *   index:  the background index build (orders, items, aggregates);
 *   frames: playing (1000 events a frame), scrubbing (a random position a frame) and
 *           stepping by thread in iteration-major order, against the 16.7 ms of 60 fps;
 *   memory: the peak resident size of the case (each case runs in a child process), file
 *           pages the viewer touched included, against the file's size.
 * usage: bench_view [DIR] [--events-1g] [--events-100m] [--full-open] [--keep]
 *        bench_view --trace FILE [--index-only]   (one trace as it is, e.g. one kept with
 *        --keep; --index-only: open and index it, no frames)
 *   --decoders N: threads that decode chunks for the index build (default: 1 on 2 or 3
 *   cores, cores - 2 on more, at most 7; 0 decodes on the building thread)
 *   (default DIR /tmp; the traces are deleted after unless --keep). --events-100m adds im2col C = 1285
 *   (100 M events), written slice by slice as a format-2 file (never all events in memory);
 *   --full-open opens with ks_trace_open (every event decoded) as the viewer did before
 *   issue 35, for the before figures.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4 */
#include <SDL.h>
#include <cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/registry.h"
#include "../trace/crc32.h"
#include "../trace/kst_codec.h"
#include "../trace/run_trace.h"
#include "../viewer/vw_draw.h"

static int full_open; /* --full-open: the viewer's open before issue 35 */
static int keep;      /* --keep: leave the traces in DIR */

/* CPU seconds this process (all its threads) or this thread has used. */
static double cpu_now(clockid_t which)
{
    struct timespec t;
    clock_gettime(which, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void set(ks_run *r, const ks_op *op, const char *name, int64_t a, int64_t b)
{
    int i = ks_op_param(op, name);
    r->value[i][0] = a;
    r->value[i][1] = b;
}

/* im2col on (1, C, 64, 64), 3x3, padding 1: 19 events per work item, C * 4096 items. */
static int write_trace(const char *path, int64_t channels)
{
    const ks_op *op = ks_op_find("im2col");
    static ks_run r;
    ks_trace tr;
    ks_run_init(&r, op);
    set(&r, op, "channels", channels, 0);
    set(&r, op, "input-size", 64, 64);
    set(&r, op, "kernel-size", 3, 3);
    set(&r, op, "padding", 1, 1);
    r.pattern = KS_PAT_RANDOM;
    r.seed = 7;
    r.launch.threads = 512;
    r.launch.block_cap = 64; /* threads loop: iteration-major differs from thread-major */
    r.sink = ks_host_sink_create(1ULL << 26, ks_filter_all());
    int rc = r.sink ? ks_run_execute(&r) : KS_ENOMEM;
    if (!rc) {
        ks_trace_from_run(op, &r, &tr);
        rc = ks_trace_write(path, &tr);
    }
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
    return rc;
}

typedef struct item_run {
    int64_t index;
    uint64_t start, len;
} item_run;

static int by_index(const void *a, const void *b)
{
    const item_run *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

static int put_at(int fd, const void *p, size_t n, uint64_t at)
{
    const char *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)at);
        if (w <= 0) return ks_fail(KS_EIO, "bench_view: write failed");
        c += w, n -= (size_t)w, at += (uint64_t)w;
    }
    return KS_OK;
}

typedef struct sliced {
    int fd;
    uint64_t events_at; /* file offset of the events section */
    uint64_t length, nchunks, nevents, cap;
    unsigned char *index, *scratch;
    ks_event chunk[KS_KST2_CHUNK];
    size_t fill;
    ks_kst2_ctx ctx;
} sliced;

static int flush_chunk(sliced *w)
{
    if (!w->fill) return KS_OK;
    ks_kst2_entry ent;
    const size_t len = ks_kst2_encode(&w->ctx, w->chunk, w->fill, w->scratch, &ent);
    ent.offset = w->length;
    ent.crc32 = ks_crc32(0, w->scratch, len);
    if (w->nchunks == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 4096;
        unsigned char *g = realloc(w->index, w->cap * KS_KST2_ENTRY);
        if (!g) return ks_fail(KS_ENOMEM, "bench_view: out of memory");
        w->index = g;
    }
    ks_kst2_entry_put(w->index + w->nchunks++ * KS_KST2_ENTRY, &ent);
    int rc = put_at(w->fd, w->scratch, len, w->events_at + w->length);
    w->length += len, w->nevents += w->fill, w->fill = 0;
    return rc;
}

/* im2col on (1, C, 64, 64) like write_trace, as a format-2 file written slice by slice:
 * the simulator records work items [lo, lo + 2^18) a run, their events go out in item
 * order 4096 to a chunk, so memory holds one slice (~5 M events), whatever C. The header
 * is the one ks_trace_write gives the same run with no events, its event numbers filled
 * in; it is padded with spaces to a length fixed before the events are written. */
static int write_trace_sliced(const char *path, int64_t channels)
{
    const ks_op *op = ks_op_find("im2col");
    const int64_t items = channels * 4096, slice = 1 << 18;
    static ks_run r;
    static sliced w;
    static ks_trace hdr, tmpl;
    char tpath[600];
    snprintf(tpath, sizeof tpath, "%s.header", path);
    memset(&w, 0, sizeof w);
    w.fd = -1;
    w.scratch = malloc((size_t)KS_KST2_CHUNK * KS_KST2_MAX_RECORD);
    int rc = w.scratch ? KS_OK : ks_fail(KS_ENOMEM, "bench_view: out of memory");
    uint64_t hlen = 0, data_start = 0;
    for (int64_t lo = 0; lo < items && !rc; lo += slice) {
        ks_run_init(&r, op);
        set(&r, op, "channels", channels, 0);
        set(&r, op, "input-size", 64, 64);
        set(&r, op, "kernel-size", 3, 3);
        set(&r, op, "padding", 1, 1);
        r.pattern = KS_PAT_RANDOM;
        r.seed = 7;
        r.launch.threads = 512;
        r.launch.block_cap = 64;
        ks_filter f = ks_filter_all();
        f.index_lo = lo;
        f.index_hi = lo + slice;
        r.sink = ks_host_sink_create((unsigned long long)slice * 20, f);
        rc = r.sink ? ks_run_execute(&r) : KS_ENOMEM;
        if (!rc && lo == 0) { /* the header: the same run with no events, whole filter */
            ks_trace_from_run(op, &r, &hdr);
            hdr.filter = ks_filter_all();
            hdr.events = NULL;
            hdr.nevents = hdr.dropped = 0;
            hdr.version = 2;
            rc = ks_trace_write(tpath, &hdr);
            if (!rc) rc = ks_trace_open_lazy(tpath, &tmpl);
            if (!rc) {
                hlen = tmpl.data_start - KS_KST_PREAMBLE + 256; /* room for the event numbers */
                data_start = (KS_KST_PREAMBLE + hlen + KS_KST_ALIGN - 1) / KS_KST_ALIGN * KS_KST_ALIGN;
                w.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (w.fd < 0) rc = ks_fail(KS_EIO, "bench_view: cannot create %s", path);
            }
            if (!rc) /* the tensors, as the header places them */
                rc = put_at(w.fd, (const char *)tmpl.map + tmpl.data_start, tmpl.event_sec.offset, data_start);
            w.events_at = data_start + tmpl.event_sec.offset;
            ks_kst2_ctx_make(&tmpl, &w.ctx);
        }
        const uint64_t n = rc ? 0 : ks_sink_count(r.sink);
        const ks_event *ev = r.sink ? r.sink->events : NULL;
        item_run *runs = malloc((n ? n : 1) * sizeof *runs);
        uint64_t nr = 0;
        if (!runs && !rc) rc = ks_fail(KS_ENOMEM, "bench_view: out of memory");
        for (uint64_t i = 0; i < n && !rc; ++i) {
            if (nr && ev[i].index == runs[nr - 1].index && runs[nr - 1].start + runs[nr - 1].len == i)
                runs[nr - 1].len++;
            else runs[nr++] = (item_run){ev[i].index, i, 1};
        }
        qsort(runs, nr, sizeof *runs, by_index);
        for (uint64_t k = 0; k < nr && !rc; ++k)
            for (uint64_t j = 0; j < runs[k].len && !rc; ++j) {
                w.chunk[w.fill++] = ev[runs[k].start + j];
                if (w.fill == KS_KST2_CHUNK) rc = flush_chunk(&w);
            }
        free(runs);
        ks_host_sink_free(r.sink);
        ks_run_free(&r);
    }
    if (!rc) rc = flush_chunk(&w);
    cJSON *h = NULL;
    if (!rc) {
        const uint64_t ioff = (tmpl.event_sec.offset + w.length + KS_KST_ALIGN - 1) / KS_KST_ALIGN * KS_KST_ALIGN;
        const uint64_t ilen = w.nchunks * KS_KST2_ENTRY;
        h = cJSON_ParseWithLength((const char *)tmpl.map + KS_KST_PREAMBLE, tmpl.data_start - KS_KST_PREAMBLE);
        cJSON *e = h ? cJSON_GetObjectItem(h, "events") : NULL, *ix = e ? cJSON_GetObjectItem(e, "index") : NULL;
        if (!ix) rc = ks_fail(KS_EFORMAT, "bench_view: the header has no events index");
        if (!rc) {
            cJSON_SetNumberValue(cJSON_GetObjectItem(e, "count"), (double)w.nevents);
            cJSON_SetNumberValue(cJSON_GetObjectItem(e, "length"), (double)w.length);
            cJSON_SetNumberValue(cJSON_GetObjectItem(ix, "offset"), (double)ioff);
            cJSON_SetNumberValue(cJSON_GetObjectItem(ix, "length"), (double)ilen);
            cJSON_SetNumberValue(cJSON_GetObjectItem(ix, "crc32"), (double)ks_crc32(0, w.index, ilen));
            char *text = cJSON_PrintUnformatted(h);
            const size_t tl = text ? strlen(text) : 0;
            char *json = text && tl <= hlen ? malloc(hlen) : NULL;
            if (!json) rc = ks_fail(KS_ENOMEM, "bench_view: the header does not fit");
            if (!rc) {
                memset(json, ' ', hlen);
                memcpy(json, text, tl);
                unsigned char pre[KS_KST_PREAMBLE] = {0};
                const uint32_t v[3] = {2, (uint32_t)hlen, ks_crc32(0, json, hlen)};
                memcpy(pre, KS_KST_MAGIC, 8);
                for (int i = 0; i < 3; ++i)
                    for (int b = 0; b < 4; ++b) pre[8 + 4 * i + b] = (unsigned char)(v[i] >> (8 * b));
                rc = put_at(w.fd, pre, sizeof pre, 0);
                if (!rc) rc = put_at(w.fd, json, hlen, KS_KST_PREAMBLE);
                if (!rc) rc = put_at(w.fd, w.index, ilen, data_start + ioff);
            }
            free(json);
            free(text);
        }
    }
    cJSON_Delete(h);
    if (tmpl.map) ks_trace_close(&tmpl);
    remove(tpath);
    if (w.fd >= 0 && close(w.fd) && !rc) rc = ks_fail(KS_EIO, "bench_view: cannot write %s", path);
    free(w.index);
    free(w.scratch);
    return rc;
}

/* The peer for opening: read every byte of the file once (from the page cache). */
static double read_all(const char *path)
{
    static char buf[1 << 20];
    double t0 = now();
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    unsigned long long sum = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) sum += (unsigned char)buf[n - 1];
    close(fd);
    if (sum == 1) fprintf(stderr, " ");
    return now() - t0;
}

/* This process's resident memory now: the anonymous part (the heap: index, caches) and the
 * file pages mapped in (the trace), in MB, from /proc/self/status; "" where not Linux. */
static const char *resident(void)
{
    static char out[96];
    char line[128];
    double anon = -1, file = -1;
    FILE *f = fopen("/proc/self/status", "r");
    out[0] = 0;
    if (!f) return out;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "RssAnon:", 8)) anon = atof(line + 8) / 1e3;
        if (!strncmp(line, "RssFile:", 8)) file = atof(line + 8) / 1e3;
    }
    fclose(f);
    if (anon >= 0 && file >= 0) snprintf(out, sizeof out, "   resident: heap %.0f MB, file pages %.0f MB", anon, file);
    return out;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct frames {
    double mean, p99;
} frames;

/* Draws n frames, calling move before each; returns mean and 99th percentile. */
static frames run_frames(vw_draw *d, vw_state *s, const vw_layout *L, int n, int how)
{
    double *t = malloc((size_t)n * sizeof *t), sum = 0;
    uint64_t len = vw_state_len(s), seed = 12345;
    for (int i = 0; i < n; ++i) {
        double t0 = now();
        if (how == 0) { /* playing: 1000 events a frame */
            s->playing = 1;
            s->speed = 60000;
            vw_tick(s, 1.0 / 60);
        } else if (how == 1) { /* scrubbing */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            vw_action a = {.kind = VW_ACT_SEEK, .a = (int64_t)((seed >> 33) % len), .b = 0};
            vw_apply(s, L, &a);
        } else { /* stepping by thread */
            vw_action a = {.kind = VW_ACT_STEP, .a = 1, .b = 0};
            vw_apply(s, L, &a);
        }
        vw_draw_frame(d, s, L, 1000);
        SDL_RenderPresent(d->r);
        t[i] = now() - t0;
        sum += t[i];
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    frames f = {.mean = sum / n, .p99 = t[(int)(n * 0.99)]};
    free(t);
    return f;
}

/* What the viewer does (vw_trace_open: the header and chunk index), or with --full-open
 * what it did before issue 35 (every event decoded at open). */
static int open_trace(const char *path, ks_trace *tr)
{
    return full_open ? ks_trace_open(path, tr) : vw_trace_open(path, tr);
}

static void close_trace(ks_trace *tr) { vw_trace_close(tr); }

static int bench_one(const char *path, int frames_too)
{
    static ks_trace tr;
    double t_read = read_all(path);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    static vw_draw d;
    static vw_state s;
    static vw_index idx;
    vw_layout L;
    if (!r || vw_draw_init(&d, r, 13)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    vw_layout_compute(&L, 1280, 800, d.font.line);
    double t0 = now();
    if (open_trace(path, &tr)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    vw_state_init(&s, &tr, NULL);
    vw_draw_frame(&d, &s, &L, 0);
    SDL_RenderPresent(r);
    double t_open = now() - t0;
    printf("trace %lld events, %.0f MB\n", (long long)tr.nevents, (double)tr.map_size / 1e6);
    printf("  open + first frame  %8.1f ms   read the file once %8.1f ms   ratio %.4f%s\n", t_open * 1e3, t_read * 1e3,
           t_open / t_read, resident());
    fflush(stdout);
    t0 = now();
    const double c0 = cpu_now(CLOCK_PROCESS_CPUTIME_ID), m0 = cpu_now(CLOCK_THREAD_CPUTIME_ID);
    if (vw_index_build(&idx, &tr, NULL)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        return 1;
    }
    double t_index = now() - t0, c_index = cpu_now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    double m_index = cpu_now(CLOCK_THREAD_CPUTIME_ID) - m0;
    /* the building thread's CPU is the wall time with a free core for each decoder */
    printf("  index build         %8.1f ms   (in the background; %.0f ms of CPU, %.0f of it the building "
           "thread's)%s\n",
           t_index * 1e3, c_index * 1e3, m_index * 1e3, resident());
    if (frames_too) {
        vw_state_set_index(&s, &idx);
        vw_set_order(&s, "recorded");
        static const char *names[] = {"playing 1000 ev/frame", "scrubbing (random)", "step by thread, iter-major"};
        for (int how = 0; how < 3; ++how) {
            if (how == 2) {
                vw_set_order(&s, "iter");
                s.unit = VW_UNIT_THREAD;
            }
            frames f = run_frames(&d, &s, &L, 300, how);
            printf("  %-27s mean %6.2f ms  p99 %6.2f ms  = %5.0f fps  (%.2f of the 16.7 ms budget)\n", names[how],
                   f.mean * 1e3, f.p99 * 1e3, 1.0 / f.mean, f.p99 / (1.0 / 60));
        }
        printf("  after the frames   %s\n", resident());
    }
    fflush(stdout);
    vw_index_free(&idx);
    vw_state_free(&s);
    close_trace(&tr);
    vw_draw_free(&d);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    return 0;
}

/* Measures the trace at path in a child process (its peak resident size is the case's
 * alone). */
static int bench_file(const char *path, int frames_too)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(bench_one(path, frames_too));
    int status = 1;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) status = 1;
    struct stat st;
    const double mb = stat(path, &st) ? 0 : (double)st.st_size / 1e6;
    const double over = ru.ru_maxrss / 1e3 - mb;
    printf("  peak resident       %8.0f MB   file %.0f MB   (file %c %.0f MB)\n", ru.ru_maxrss / 1e3, mb,
           over < 0 ? '-' : '+', over < 0 ? -over : over);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Writes the trace of C channels, then measures it; the trace is deleted after. */
static int bench_case(const char *dir, int64_t channels, int sliced_write, int frames_too)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench_view_%lld.kst", dir, (long long)channels);
    double t0 = now();
    if (sliced_write ? write_trace_sliced(path, channels) : write_trace(path, channels)) {
        fprintf(stderr, "bench_view: %s\n", ks_error_message());
        remove(path);
        return 1;
    }
    printf("C = %lld: written in %.1f s (%s)\n", (long long)channels, now() - t0,
           sliced_write ? "slice by slice" : "ks_trace_write");
    fflush(stdout);
    int rc = bench_file(path, frames_too);
    if (!keep) remove(path);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "/tmp";
    int big = 0, huge = 0;
    for (int i = 1; i < argc; ++i) {
        big |= !strcmp(argv[i], "--events-1g");
        huge |= !strcmp(argv[i], "--events-100m");
        full_open |= !strcmp(argv[i], "--full-open");
        keep |= !strcmp(argv[i], "--keep");
        if (!strcmp(argv[i], "--decoders") && i + 1 < argc) vw_index_set_decoders(atoi(argv[i + 1]));
    }
    printf("bench_view: headless 1280x800, software renderer%s\n", full_open ? ", full open (before issue 35)" : "");
    for (int i = 1; i + 1 < argc; ++i)
        if (!strcmp(argv[i], "--trace")) {
            int frames_too = 1;
            for (int j = 1; j < argc; ++j) frames_too &= !!strcmp(argv[j], "--index-only");
            return bench_file(argv[i + 1], frames_too);
        }
    if (bench_case(dir, 128, 0, 1)) return 1;          /* 128 * 4096 * 19 = 9.96 M events */
    if (big && bench_case(dir, 216, 0, 0)) return 1;   /* 16.8 M events */
    if (huge && bench_case(dir, 1285, 1, 1)) return 1; /* 1285 * 4096 * 19 = 100.0 M events */
    return 0;
}
