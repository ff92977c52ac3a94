/* kscope run FILE.cu: an unmodified CUDA C kernel on the simulator (docs/cuda-c.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/cuda_c/cu_run.h"
#include "../trace/ks_file.h"
#include "../trace/npy.h"
#include "../kernels/cuda_c/cu_gpu.h"
#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: kscope run FILE.cu --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [--shared BYTES]\n"
                 "                  --arg PARAM=VALUE ... [--trace T.kst] [--save DIR] [--filter SPEC]\n"
                 "                  [--quiet] [-D NAME[=VALUE]] [-I DIR] [--time-limit SECONDS] [--trace-limit SIZE]\n"
                 "                  [--device sim|cuda]\n\n"
                 "Runs a __global__ function of an unmodified CUDA C file on the simulator: clang (16 or\n"
                 "newer) compiles it against kscope's CUDA header, each block's threads run as fibers, and\n"
                 "every load and store is recorded with its source line (docs/cuda-c.md).\n"
                 "  --kernel NAME     the __global__ function; a template as C++ writes it: 'scale<float, 4>'\n"
                 "  --grid, --block   the launch, as in <<<grid, block>>> (block: at most 1024 threads, z <= 64)\n"
                 "  --shared BYTES    the dynamic shared memory of a block (extern __shared__), at most 227 KiB\n"
                 "  --arg P=VALUE     every parameter of the kernel, once, by its name:\n"
                 "                      a number for a scalar (int, unsigned, long, size_t, float, double, bool)\n"
                 "                      a buffer for a pointer: @x.npy (its dtype must match the pointee),\n"
                 "                      zeros:SHAPE[:DTYPE] (0), empty:SHAPE[:DTYPE] (not initialised: a read of\n"
                 "                      an element nobody wrote is a finding); SHAPE like 37x53; DTYPE f32\n"
                 "                      (default), f64, i32, u32, i64, u64, i16, u16, i8, u8\n"
                 "  --trace T.kst     record every access, barrier and warp collective (kscope step/check/view)\n"
                 "  --save DIR        each buffer's final contents as DIR/PARAM.npy\n"
                 "  --filter SPEC     which threads to record: index=LO:HI,block=LO:HI,every=N (linear ids)\n"
                 "  -D, -I            passed to the compiler\n"
                 "  --time-limit S    stop a kernel running past S seconds (default 10)\n"
                 "  --trace-limit S   most events a trace keeps, as bytes of 64-byte events (default 4G)\n"
                 "  --quiet           print nothing on success\n"
                 "  --device cuda     run it on the GPU instead: nvcc compiles the file (-lineinfo) with a launcher,\n"
                 "                    kscope record's recorder records every global load, store and atomic\n"
                 "                    (docs/record.md); the same flags, outputs and trace, so kscope diff compares\n"
                 "                    a sim trace with a cuda one. Shared memory, barriers and warp collectives are\n"
                 "                    not recorded on the GPU; empty: buffers start as zeros there\n"
                 "Exit: 0 ran; 1 a thread faulted (an access outside every buffer, an assert, a division by\n"
                 "zero, the time limit...): one line names the first, the trace and outputs are written; 2 bad\n"
                 "input or a compile error.\n");
}

/* "X[,Y[,Z]]" */
static int parse_dim3(const char *flag, const char *v, uint32_t d[3], const uint32_t max[3])
{
    int64_t x[3] = {1, 1, 1};
    int n = 0;
    const char *p = v;
    while (n < 3) {
        char *end;
        errno = 0;
        const long long k = strtoll(p, &end, 10);
        if (end == p || errno) break;
        x[n++] = k;
        if (*end != ',') {
            p = end;
            break;
        }
        p = end + 1;
    }
    if (!n || *p) return ks_cli_error("run", "%s takes X[,Y[,Z]] (got '%s')", flag, v);
    for (int i = 0; i < 3; ++i) {
        if (x[i] < 1 || x[i] > (int64_t)max[i])
            return ks_cli_error("run", "%s: %c must be in 1..%u (got %lld)", flag, "xyz"[i], max[i], (long long)x[i]);
        d[i] = (uint32_t)x[i];
    }
    return 0;
}

static int source_ok(const char *path)
{
    const int fd = ks_in_open(path);
    if (fd < 0) return ks_cli_error("run", "%s", ks_error_message());
    unsigned char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 0) return ks_cli_error("run", "%s: cannot read: %s", path, strerror(errno));
    if (memchr(buf, 0, (size_t)n)) return ks_cli_error("run", "%s: not a C++ source file (it holds binary data)", path);
    return 0;
}

/* the trace and the saved buffers appear together or not at all */
static int write_outputs(ks_cu_exec *e, const ks_trace *tr, const char *trace, const char *dir)
{
    ks_out_file out[KS_CU_MAX_BUFS + 1];
    char path[4400];
    int n = 0, rc = KS_OK, created = 0;
    if (trace && !(rc = ks_out_open(&out[n], trace))) {
        n++;
        if (!(rc = ks_trace_put(&out[n - 1], tr))) rc = ks_out_finish(&out[n - 1]);
    }
    if (!rc && dir) {
        if (mkdir(dir, 0777) == 0) created = 1;
        else if (errno != EEXIST) rc = ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    }
    for (int i = 0; dir && i < e->nbufs && !rc; ++i) {
        snprintf(path, sizeof path, "%s/%s.npy", dir, e->bufs[i].param);
        if ((rc = ks_out_open(&out[n], path))) break;
        n++;
        if (!(rc = ks_npy_put(&out[n - 1], &e->out[i]))) rc = ks_out_finish(&out[n - 1]);
    }
    for (int i = 0; i < n; ++i) {
        if (rc) ks_out_abort(&out[i]);
        else rc = ks_out_commit(&out[i]);
    }
    if (rc && created) rmdir(dir);
    return rc;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* --device cuda: the file on the GPU under the recorder (kernels/cuda_c/cu_gpu.c) */
static int run_gpu(ks_cu_exec *e, ks_cu_build_opts *bo, const char *trace, const char *save)
{
#ifndef KS_NVCC
    (void)e, (void)bo, (void)trace, (void)save;
    return ks_cli_error("run", "--device cuda: this kscope was built without CUDA");
#else
    static ks_record_paths rp;
    const int found = ks_record_paths_find(&rp);
    if (found)
        return ks_cli_error("run", "--device cuda needs the recorder (%s): docs/record.md",
                            found == -1 ? "libkscope_record.so is not built" : "its patch fatbin is missing");
    if (e->filter.every > 1) return ks_cli_error("run", "--device cuda: --filter every=N is not recorded on the GPU");
    if (e->filter.index_lo > 0 || e->filter.index_hi < INT64_MAX)
        snprintf(rp.threads, sizeof rp.threads, "%lld:%lld", (long long)e->filter.index_lo,
                 (long long)(e->filter.index_hi > e->filter.index_lo ? e->filter.index_hi : e->filter.index_lo + 1));
    if (e->filter.block_lo > 0 || e->filter.block_hi < INT64_MAX)
        snprintf(rp.blocks, sizeof rp.blocks, "%lld:%lld", (long long)e->filter.block_lo,
                 (long long)e->filter.block_hi);
    const uint64_t most = e->trace_limit / 2 > (1ull << 32) ? (1ull << 32) : e->trace_limit / 2;
    snprintf(rp.max_events, sizeof rp.max_events, "%llu", (unsigned long long)(most < 1024 ? 1024 : most));
    const char *nvcc = getenv("KS_NVCC") && *getenv("KS_NVCC") ? getenv("KS_NVCC") : KS_NVCC;
    const ks_cu_gpu_opts go = {nvcc, KS_CUDA_ARCH, ks_record_child_env, &rp};
    static ks_trace tr;
    char fault[700];
    if (ks_cu_build_run(&e->build, bo)) return ks_cli_error("run", "%s", ks_error_message());
    int rc = ks_cu_gpu_run(e, bo, &go, &tr, fault, sizeof fault);
    ks_cu_build_free(&e->build);
    if (rc) {
        ks_cu_gpu_free();
        return ks_cli_error("run", "%s", ks_error_message());
    }
    rc = (trace || save) ? write_outputs(e, &tr, trace, save) : KS_OK;
    if (rc) rc = ks_cli_error("run", "%s", ks_error_message());
    else if (!e->quiet) {
        printf("%s on %s: grid (%u,%u,%u) x block (%u,%u,%u): %lld threads, %.2f s\n", e->build.kernel.name, tr.device,
               e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1], e->block[2], (long long)tr.work_items,
               e->seconds);
        if (trace)
            printf("trace: %s (%llu events, %llu dropped)\n", trace, (unsigned long long)tr.nevents,
                   (unsigned long long)tr.dropped);
        if (save) printf("outputs saved in %s/\n", save);
    }
    if (!rc && tr.dropped && trace)
        fprintf(stderr,
                "kscope: run: the trace kept %llu events and dropped %llu; record fewer with --filter or "
                "raise --trace-limit\n",
                (unsigned long long)tr.nevents, (unsigned long long)tr.dropped);
    ks_trace_close(&tr);
    ks_cu_gpu_free();
    if (!rc && fault[0]) {
        fprintf(stderr, "kscope: run: %s: %s%s\n", bo->file, fault, trace ? "; the trace holds what was recorded" : "");
        return KS_EXIT_VIOLATIONS;
    }
    return rc;
#endif
}

static int g_device_cuda;

static int run(ks_cu_exec *e, ks_cu_build_opts *bo, const char *trace, const char *save)
{
    static ks_trace tr;
    if (trace && save) { /* --save DIR would write DIR/PARAM.npy over the trace */
        char p[4400];
        for (int i = 0; i < e->nbufs; ++i) {
            snprintf(p, sizeof p, "%s/%s.npy", save, e->bufs[i].param);
            if (!strcmp(p, trace) || same_file(p, trace))
                return ks_cli_error("run", "--trace %s is also where --save writes %s", trace, e->bufs[i].param);
        }
    }
    for (int i = 0; i < e->nbufs; ++i)
        if (e->bufs[i].text[0] == '@' &&
            ((trace && same_file(e->bufs[i].text + 1, trace)) || !strcmp(e->bufs[i].text + 1, bo->file)))
            return ks_cli_error("run", "--arg %s: %s is also an output", e->bufs[i].param, e->bufs[i].text + 1);
    if (trace && same_file(trace, bo->file))
        return ks_cli_error("run", "--trace %s would replace the source file", trace);
    if (g_device_cuda) return run_gpu(e, bo, trace, save);
    if (ks_cu_build_run(&e->build, bo)) return ks_cli_error("run", "%s", ks_error_message());
    if (ks_cu_exec_run(e)) return ks_cli_error("run", "%s", ks_error_message());
    if (e->exit_status == 2) return ks_cli_error("run", "%s: %s", bo->file, e->ctl->error);
    if (ks_cu_trace_make(e, &tr)) return ks_cli_error("run", "%s", ks_error_message());
    ks_cu_build_free(
        &e->build); /* the compiled kernel served its lines: the folder goes before any output is written */
    if ((trace || save) && write_outputs(e, &tr, trace, save)) return ks_cli_error("run", "%s", ks_error_message());
    char fault[600];
    ks_cu_fault_line(e, &tr, fault, sizeof fault);
    if (!e->quiet) {
        printf("%s on sim: grid (%u,%u,%u) x block (%u,%u,%u): %lld threads, %.2f s\n", e->build.kernel.name,
               e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1], e->block[2], (long long)tr.work_items,
               e->seconds);
        char shape[96];
        for (int i = 0; i < e->nbufs; ++i)
            printf("  %-6s %-12s %s %s\n", tr.roles[i] == KS_ROLE_OUTPUT ? "output" : "input", e->bufs[i].param,
                   ks_dtype_name(e->bufs[i].t.dtype),
                   ks_shape_str(e->bufs[i].t.ndim, e->bufs[i].t.shape, shape, sizeof shape));
        if (trace)
            printf("trace: %s (%llu events, %llu dropped)\n", trace, (unsigned long long)tr.nevents,
                   (unsigned long long)tr.dropped);
        if (save) printf("outputs saved in %s/\n", save);
    }
    if (tr.dropped && trace)
        fprintf(
            stderr,
            "kscope: run: the trace kept %llu events and dropped %llu; record fewer with --filter or raise --trace-limit\n",
            (unsigned long long)tr.nevents, (unsigned long long)tr.dropped);
    if (e->ctl->fault) {
        fprintf(stderr, "kscope: run: %s: %s%s\n", bo->file, fault,
                trace ? "; the trace holds the run up to there" : "");
        return KS_EXIT_VIOLATIONS;
    }
    if (e->ctl->stopped_threads) {
        fprintf(stderr, "kscope: run: %s: %s (%llu thread%s stopped%s)\n", bo->file, fault,
                (unsigned long long)e->ctl->stopped_threads, e->ctl->stopped_threads == 1 ? "" : "s",
                trace ? "; kscope check lists them" : "");
        return KS_EXIT_VIOLATIONS;
    }
    return KS_EXIT_OK;
}

int ks_cmd_run_cu(int argc, char **argv)
{
    static ks_cu_exec e;
    ks_cu_build_opts bo;
    memset(&bo, 0, sizeof bo);
    ks_cu_exec_init(&e);
    const char *trace = NULL, *save = NULL, *grid = NULL, *block = NULL;
    int rc = KS_EXIT_ERROR, filter_given = 0;
    bo.file = argv[1];
    for (int i = 2; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            rc = KS_EXIT_OK;
            goto out;
        }
        if (!strcmp(argv[i], "--quiet")) {
            e.quiet = bo.quiet = 1;
            continue;
        }
        if (!strncmp(argv[i], "-D", 2) || !strncmp(argv[i], "-I", 2)) {
            const int is_d = argv[i][1] == 'D';
            v = argv[i][2] ? argv[i] + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v) {
                rc = ks_cli_error("run", "%s needs a value", is_d ? "-D" : "-I");
                goto out;
            }
            if ((is_d ? bo.ndefines : bo.nincludes) == 64) {
                rc = ks_cli_error("run", "too many %s flags", is_d ? "-D" : "-I");
                goto out;
            }
            if (is_d) bo.defines[bo.ndefines++] = v;
            else bo.includes[bo.nincludes++] = v;
            continue;
        }
        static const char *const valued[] = {"kernel", "grid",   "block",      "shared",      "arg",   "trace",
                                             "save",   "filter", "time-limit", "trace-limit", "device"};
        int which = -1;
        for (int k = 0; k < (int)(sizeof valued / sizeof valued[0]) && which < 0; ++k) {
            m = ks_flag(argc, argv, &i, valued[k], &v);
            if (m < 0) {
                rc = ks_cli_error("run", "--%s needs a value", valued[k]);
                goto out;
            }
            if (m > 0) which = k;
        }
        int64_t n;
        unsigned long long bytes;
        char *end;
        switch (which) {
        case 0: bo.kernel = v; break;
        case 1: grid = v; break;
        case 2: block = v; break;
        case 3:
            if (ks_parse_i64(v, &n) || n < 0 || n > KS_CU_DYN_SMEM) {
                rc = ks_cli_error("run", "--shared must be in 0..%d bytes (227 KiB; got '%s')", KS_CU_DYN_SMEM, v);
                goto out;
            }
            e.shared_bytes = (uint32_t)n;
            break;
        case 4: {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1]) {
                rc = ks_cli_error("run", "--arg takes PARAM=VALUE (got '%s')", v);
                goto out;
            }
            char param[64];
            snprintf(param, sizeof param, "%.*s", (int)(eq - v < 63 ? eq - v : 63), v);
            if (ks_cu_arg_parse(&e, param, eq + 1) < 0) {
                rc = ks_cli_error("run", "%s", ks_error_message());
                goto out;
            }
            break;
        }
        case 5: trace = v; break;
        case 6: save = v; break;
        case 7:
            if (ks_parse_filter(v, &e.filter)) {
                rc = ks_cli_error("run", "--filter '%s': expected index=LO:HI,block=LO:HI,every=N", v);
                goto out;
            }
            filter_given = 1;
            break;
        case 8:
            e.time_limit = strtod(v, &end);
            if (end == v || *end || !(e.time_limit > 0) || e.time_limit > 86400) {
                rc = ks_cli_error("run", "--time-limit takes seconds in (0, 86400] (got '%s')", v);
                goto out;
            }
            break;
        case 9:
            if (ks_parse_bytes(v, &bytes) || bytes < 64) {
                rc = ks_cli_error("run", "--trace-limit takes a size such as 4G, 512M or 65536 (bytes; got '%s')", v);
                goto out;
            }
            e.trace_limit = bytes / sizeof(ks_event);
            break;
        case 10:
            if (strcmp(v, "sim") && strcmp(v, "cuda")) {
                rc = ks_cli_error("run", "--device takes sim or cuda (got '%s')", v);
                goto out;
            }
            g_device_cuda = !strcmp(v, "cuda");
            break;
        default: rc = ks_cli_error("run", "unknown flag '%s' (kscope run FILE.cu --help)", argv[i]); goto out;
        }
    }
    static const uint32_t gmax[3] = {2147483647u, 65535u, 65535u}, bmax[3] = {1024u, 1024u, 64u};
    if (!bo.kernel) {
        rc = ks_cli_error("run", "%s: --kernel NAME is required (a __global__ function of the file)", bo.file);
        goto out;
    }
    if (!grid || !block) {
        rc = ks_cli_error("run", "--grid and --block are required (the <<<grid, block>>> of the launch)");
        goto out;
    }
    if (parse_dim3("--grid", grid, e.grid, gmax) || parse_dim3("--block", block, e.block, bmax)) goto out;
    if ((uint64_t)e.block[0] * e.block[1] * e.block[2] > 1024) {
        rc = ks_cli_error("run", "--block %s has %llu threads; CUDA allows at most 1024 a block", block,
                          (unsigned long long)e.block[0] * e.block[1] * e.block[2]);
        goto out;
    }
    const double total = (double)e.grid[0] * e.grid[1] * e.grid[2] * e.block[0] * e.block[1] * e.block[2];
    if (total > 9007199254740992.0) { /* 2^53: a trace's work_items */
        rc = ks_cli_error("run", "--grid %s --block %s makes %.3g threads; kscope simulates at most 2^53", grid, block,
                          total);
        goto out;
    }
    if (filter_given && !trace) {
        rc = ks_cli_error("run", "--filter needs --trace FILE.kst");
        goto out;
    }
    if (source_ok(bo.file)) goto out;
    if (!trace) e.filter.index_hi = 0; /* no trace: record nothing but faults (they name the line) */
    rc = run(&e, &bo, trace, save);
out:
    ks_cu_exec_free(&e);
    return rc;
}
