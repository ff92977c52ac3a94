/* kscope info / step / check / export: the commands that read a .kst. */
#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../trace/check.h"
#include "../trace/export.h"
#include "../trace/ks_file.h"
#include "../trace/kst.h"
#include "../trace/perfetto.h"
#include "../trace/step.h"
#include "cli.h"

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

/* Opens argv[1] as a trace, or reports why not. */
static int open_trace(const char *cmd, int argc, char **argv, ks_trace *tr)
{
    if (argc < 2 || argv[1][0] == '-') return ks_cli_error(cmd, "needs a trace file (kscope %s --help)", cmd);
    if (ks_trace_open(argv[1], tr)) return ks_cli_error(cmd, "%s", ks_error_message());
    return KS_EXIT_OK;
}

static void print_filter(const ks_filter *f)
{
    const ks_filter all = ks_filter_all();
    if (!memcmp(f, &all, sizeof all)) {
        printf("filter:   none (every work item recorded)\n");
        return;
    }
    printf("filter:   index %lld:", (long long)f->index_lo);
    if (f->index_hi != INT64_MAX) printf("%lld", (long long)f->index_hi);
    printf(", block %lld:", (long long)f->block_lo);
    if (f->block_hi != INT64_MAX) printf("%lld", (long long)f->block_hi);
    printf(", every %lld\n", (long long)f->every);
}

int ks_cmd_info(int argc, char **argv)
{
    static ks_trace tr;
    if (wants_help(argc, argv)) {
        printf("usage: kscope info FILE.kst\n\nPrints the operator, parameters, launch, filter, "
               "tensors, sites and event counts of a trace, and verifies its checksums "
               "(exit 2 if the file is damaged).\n");
        return KS_EXIT_OK;
    }
    if (argc > 2) return ks_cli_error("info", "unexpected argument '%s'", argv[2]);
    if (argc < 2 || argv[1][0] == '-') return ks_cli_error("info", "needs a trace file (kscope info --help)");
    /* the counts chunk by chunk: memory stays a chunk's, whatever the trace's size */
    if (ks_trace_open_lazy(argv[1], &tr)) return ks_cli_error("info", "%s", ks_error_message());
    int rc = KS_OK;
    uint64_t kinds[5] = {0};
    for (uint64_t k = 0; k < ks_trace_chunks(&tr); k += 64) {
        if ((rc = ks_trace_load_chunks(&tr, k, 64))) {
            ks_trace_close(&tr);
            return ks_cli_error("info", "%s", ks_error_message());
        }
        for (uint64_t i = 0; i < tr.nevents; ++i)
            if (tr.events[i].kind >= 1 && tr.events[i].kind <= 4) kinds[tr.events[i].kind]++;
    }
    printf("trace:    %s\n", argv[1]);
    printf("operator: %s (%s, device %s)\n", tr.op, tr.variant, tr.device);
    printf("params:   %s\n", tr.params);
    printf("launch:   %lld block(s) x %d threads, block cap %lld, %lld work items", (long long)tr.blocks, tr.threads,
           (long long)tr.block_cap, (long long)tr.work_items);
    const int64_t grid = tr.blocks * tr.threads;
    if (grid > 0) printf(" (each thread loops up to %lld times)\n", (long long)((tr.work_items + grid - 1) / grid));
    else printf("\n");
    print_filter(&tr.filter);
    if (tr.version == 1) {
        printf("format:   version 1, 64 bytes an event\n");
    } else {
        const uint64_t chunks = tr.index_sec.length / 32;
        printf("format:   version 2, %llu bytes of events in %llu %schunk%s", (unsigned long long)tr.event_sec.length,
               (unsigned long long)chunks, tr.zstd ? "zstd " : "", chunks == 1 ? "" : "s");
        if (tr.file_events) printf(", %.1f bytes an event", (double)tr.event_sec.length / (double)tr.file_events);
        printf("\n");
    }
    printf("events:   %llu (work %llu, read %llu, sample %llu, write %llu), dropped %llu\n",
           (unsigned long long)tr.file_events, (unsigned long long)kinds[1], (unsigned long long)kinds[2],
           (unsigned long long)kinds[3], (unsigned long long)kinds[4], (unsigned long long)tr.dropped);
    printf("tensors:\n");
    for (int i = 0; i < tr.ntensors; ++i) {
        char shape[96];
        printf("  %-10s %-6s %s %s\n", tr.tensors[i].name, tr.roles[i] == KS_ROLE_OUTPUT ? "output" : "input",
               ks_dtype_name(tr.tensors[i].dtype),
               ks_shape_str(tr.tensors[i].ndim, tr.tensors[i].shape, shape, sizeof shape));
    }
    printf("sites:\n");
    for (int s = 0; s < tr.nsites; ++s) {
        const ks_site *site = &tr.sites[s];
        printf("  %d %-22s %-6s", s, site->name, ks_event_kind_name(site->kind));
        if (site->tensor >= 0) printf(" %s", tr.tensors[site->tensor].name);
        for (int f = 0; f < site->nfields; ++f) printf("%s%s", f ? ", " : " fields ", site->fields[f].name);
        printf("\n");
    }
    rc = ks_trace_verify(&tr);
    if (rc) rc = ks_cli_error("info", "%s", ks_error_message());
    else printf("checksums: ok\n");
    ks_trace_close(&tr);
    return rc ? KS_EXIT_ERROR : KS_EXIT_OK;
}

int ks_cmd_step(int argc, char **argv)
{
    static ks_trace tr;
    int64_t thread = -1, index = -1;
    const char *thread3 = NULL, *block3 = NULL;
    if (wants_help(argc, argv)) {
        printf("usage: kscope step FILE.kst --thread N | --index N | [--block X,Y,Z] --thread X,Y,Z\n\n"
               "  --thread N   every work item of global thread N (block * threads a block + thread, linear\n"
               "               ids), one per grid-stride iteration\n"
               "  --index N    the work item with linear index N\n"
               "  --block X,Y,Z --thread X,Y,Z\n"
               "               a .cu trace's thread by its blockIdx and threadIdx (block (0,0,0) if not given)\n"
               "For each work item: the index, each field of its decomposition with every division and\n"
               "modulo evaluated, then every read and write with coordinates and values, in order (a .cu\n"
               "trace: each with its source line). The values are the recorded ones; a field its formula\n"
               "does not give, one kscope cannot recompute, and an access outside its tensor or shown at\n"
               "coordinates that are not its offset are marked. A version 2 trace decodes only the\n"
               "chunks that hold the item.\n");
        return KS_EXIT_OK;
    }
    if (argc >= 2 && argv[1][0] == '-') { /* kscope step --thread 0 t.kst: say it the right way round */
        const char *file = argc > 3 && argv[argc - 1][0] != '-' ? argv[argc - 1] : "FILE.kst";
        char rest[512] = "";
        for (int i = 1; i < argc - (file == argv[argc - 1]) && strlen(rest) < 400; ++i)
            snprintf(rest + strlen(rest), sizeof rest - strlen(rest), " %.80s", argv[i]);
        return ks_cli_error("step", "the trace file comes first: kscope step %.200s%s", file, rest);
    }
    for (int i = 2; i < argc; ++i) {
        const char *v;
        int m;
        int64_t *target = NULL;
        if ((m = ks_flag(argc, argv, &i, "thread", &v)) != 0) {
            if (m > 0 && strchr(v, ',')) {
                thread3 = v;
                continue;
            }
            target = &thread;
        } else if ((m = ks_flag(argc, argv, &i, "index", &v)) != 0) {
            target = &index;
        } else if ((m = ks_flag(argc, argv, &i, "block", &v)) != 0) {
            if (m < 0) return ks_cli_error("step", "--block needs X,Y,Z");
            block3 = v;
            continue;
        } else {
            return ks_cli_error("step", "unknown argument '%s' (kscope step --help)", argv[i]);
        }
        if (m < 0 || ks_parse_i64(v, target) || *target < 0)
            return ks_cli_error("step", "%s needs an integer >= 0", argv[i - (m > 0)]);
    }
    if (block3 && !thread3 && thread < 0) return ks_cli_error("step", "--block needs --thread X,Y,Z");
    if (block3 && thread >= 0)
        return ks_cli_error("step", "--block takes --thread X,Y,Z (threadIdx), not a global number");
    if ((thread < 0 && !thread3) == (index < 0))
        return ks_cli_error("step", "give exactly one of --thread N or --index N");
    if (argc < 2 || argv[1][0] == '-') return ks_cli_error("step", "needs a trace file (kscope step --help)");
    /* the header and chunk index only: one work item decodes only the chunks that hold it */
    if (ks_trace_open_lazy(argv[1], &tr)) return ks_cli_error("step", "%s", ks_error_message());
    int rc = KS_OK;
    if (thread3) { /* (blockIdx, threadIdx) -> the global thread */
        uint32_t G[3], B[3];
        long long t[3] = {0, 0, 0}, b[3] = {0, 0, 0};
        int nt = sscanf(thread3, "%lld,%lld,%lld", &t[0], &t[1], &t[2]);
        int nb = block3 ? sscanf(block3, "%lld,%lld,%lld", &b[0], &b[1], &b[2]) : 3;
        ks_trace_dims(&tr, G, B);
        for (int d = 0; d < 3; ++d)
            if (nt < 1 || nb < 1 || t[d] < 0 || t[d] >= B[d] || b[d] < 0 || b[d] >= G[d]) {
                ks_trace_close(&tr);
                return ks_cli_error("step",
                                    "--block %s --thread %s is not in the launch: grid (%u,%u,%u), block (%u,%u,%u)",
                                    block3 ? block3 : "0,0,0", thread3, G[0], G[1], G[2], B[0], B[1], B[2]);
            }
        thread = ((b[2] * G[1] + b[1]) * G[0] + b[0]) * (long long)tr.threads + (t[2] * B[1] + t[1]) * B[0] + t[0];
    }
    {
        uint32_t G[3], B[3];
        /* a work item, or a .cu trace's thread (its one work item: the global thread id) */
        const int64_t one = index >= 0 ? index : ks_trace_dims(&tr, G, B) ? thread : -1;
        rc = one >= 0 ? ks_trace_load_range(&tr, one, one) : ks_trace_load_range(&tr, INT64_MIN, INT64_MAX);
        if (rc) {
            ks_trace_close(&tr);
            return ks_cli_error("step", "%s", ks_error_message());
        }
    }
    printf("%s on %s: %lld blocks x %d threads, %lld work items\n", tr.op, tr.device, (long long)tr.blocks, tr.threads,
           (long long)tr.work_items);
    uint32_t G[3], B[3];
    if (ks_trace_dims(&tr, G, B))
        printf("launch: grid (%u,%u,%u) x block (%u,%u,%u); each thread is one work item\n", G[0], G[1], G[2], B[0],
               B[1], B[2]);
    else if (thread >= 0)
        printf("thread %lld = block %lld * %d + thread %lld; it handles index %lld, then every %lld more\n",
               (long long)thread, (long long)(thread / tr.threads), tr.threads, (long long)(thread % tr.threads),
               (long long)thread, (long long)tr.blocks * tr.threads);
    int64_t n = ks_step_print(stdout, &tr, thread, index);
    ks_trace_close(&tr);
    if (n <= 0) return ks_cli_error("step", "%s", ks_error_message());
    return KS_EXIT_OK;
}

int ks_cmd_check(int argc, char **argv)
{
    static ks_trace tr;
    static ks_check_report rep;
    if (wants_help(argc, argv)) {
        printf("usage: kscope check FILE.kst [--max N]\n\n"
               "Verifies the checksums, then the invariants: sites and kinds agree with the schema;\n"
               "each event's thread follows the grid-stride loop (or the params' \"mapping\":\n"
               "per-thread:N, none); digit fields recompose to the index and derived fields equal\n"
               "their formulas (evaluated as C types them); reads and writes are in bounds (or padding\n"
               "reads, marked) with coordinates that recompose to the offset; read values equal the\n"
               "stored inputs and stores the stored outputs; no NaN/Inf; bilinear weights in [0, 1],\n"
               "matching the sample's position, summing to 1 in range; each work item once; in a\n"
               "complete trace, every work item present and each output element written the expected\n"
               "number of times. Reports atomic collisions.\n"
               "A trace of a .cu kernel (kscope run FILE.cu) is held to compute-sanitizer's rules\n"
               "instead: accesses outside every buffer; shared-memory races (__syncthreads orders a\n"
               "block, __syncwarp a warp) and reads of unwritten shared memory; global-memory races;\n"
               "divergent barriers; warp collectives whose mask leaves lanes out; reads of empty:\n"
               "buffers nothing wrote; faults (assert, __trap, division by zero, the time limit).\n"
               "Each line names the thread as (x,y,z) of block (x,y,z) and its source line.\n"
               "On violations: the count per rule, then the first N lines (--max N, default 10, at\n"
               "most %d).\n"
               "Exit 0: all hold; 1: violations (the first ones listed); 2: unreadable file.\n",
               KS_CHECK_KEEP);
        return KS_EXIT_OK;
    }
    int64_t max = 10;
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            if (ks_parse_i64(argv[++i], &max) || max < 0 || max > KS_CHECK_KEEP)
                return ks_cli_error("check", "--max takes 0..%d lines (got '%s')", KS_CHECK_KEEP, argv[i]);
        } else if (!strcmp(argv[i], "--max")) {
            return ks_cli_error("check", "--max needs a value");
        } else {
            return ks_cli_error("check", "unexpected argument '%s'", argv[i]);
        }
    }
    int rc = open_trace("check", argc, argv, &tr);
    if (rc) return rc;
    if (ks_trace_verify(&tr) || ks_trace_check(&tr, &rep)) {
        rc = ks_cli_error("check", "%s", ks_error_message());
        ks_trace_close(&tr);
        return rc;
    }
    printf("%s: %llu events (work %llu, read %llu, sample %llu, write %llu", argv[1], (unsigned long long)tr.nevents,
           (unsigned long long)rep.by_kind[KS_EV_WORK], (unsigned long long)rep.by_kind[KS_EV_READ],
           (unsigned long long)rep.by_kind[KS_EV_SAMPLE], (unsigned long long)rep.by_kind[KS_EV_WRITE]);
    if (rep.by_kind[KS_EV_REGION]) printf(", region %llu", (unsigned long long)rep.by_kind[KS_EV_REGION]);
    printf("), %s trace\n", rep.complete ? "complete" : "partial (filtered or dropped)");
    printf("padding reads %llu, atomic collisions %llu\n", (unsigned long long)rep.padding_reads,
           (unsigned long long)rep.atomic_collisions);
    if (rep.shared_accesses || rep.barriers)
        printf("shared accesses %llu, barriers %llu: races %llu, uninitialised reads %llu, divergent barriers %llu\n",
               (unsigned long long)rep.shared_accesses, (unsigned long long)rep.barriers,
               (unsigned long long)rep.shared_races, (unsigned long long)rep.shared_uninit,
               (unsigned long long)rep.barrier_divergent);
    if (rep.shared_blocks_judged < rep.shared_blocks)
        printf("note: a partial trace: races and uninitialised reads judged in %llu of the %llu blocks with shared "
               "accesses (those with every thread recorded)\n",
               (unsigned long long)rep.shared_blocks_judged, (unsigned long long)rep.shared_blocks);
    if (rep.padding_inside)
        printf("note: %llu padding reads recorded at in-bounds (y, x): the kernel refused the "
               "coordinate (patchify: NaN, Inf or |c| >= 2^30) and read nothing\n",
               (unsigned long long)rep.padding_inside);
    ks_trace_close(&tr);
    if (rep.violations) {
        printf("FAIL: %llu violations, by rule:\n", (unsigned long long)rep.violations);
        for (int k = 0; k < rep.nrules; ++k) {
            char text[256];
            ks_check_rule_text(rep.rules[k].rule, text, sizeof text);
            printf("  %10llu  %s\n", (unsigned long long)rep.rules[k].count, text);
        }
        if (rep.rules_other) printf("  %10llu  (other rules)\n", (unsigned long long)rep.rules_other);
        if (max > 0)
            printf("the first %lld:\n", (long long)(rep.violations < (uint64_t)max ? (int64_t)rep.violations : max));
        for (uint64_t i = 0; i < rep.violations && i < (uint64_t)max; ++i) printf("  %s\n", rep.first[i]);
        return KS_EXIT_VIOLATIONS;
    }
    printf("ok: all invariants hold\n");
    return KS_EXIT_OK;
}

int ks_cmd_export(int argc, char **argv)
{
    static ks_trace tr;
    const char *dir = NULL, *perfetto = NULL;
    if (wants_help(argc, argv)) {
        printf("usage: kscope export FILE.kst --npy DIR | --perfetto OUT.json\n\n"
               "--npy writes DIR/header.json (the trace header), DIR/<tensor>.npy for every tensor\n"
               "and DIR/events.npy, a structured array (fields in docs/trace-format.md):\n"
               "  import numpy as np; ev = np.load('DIR/events.npy'); ev[ev['kind'] == 2]['value']\n"
               "--perfetto writes the schedule a trace recorded (kscope run --trace F --schedule)\n"
               "as Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing: a track per SM,\n"
               "a bar per block from its start to its end.\n");
        return KS_EXIT_OK;
    }
    for (int i = 2; i < argc; ++i) {
        int m = ks_flag(argc, argv, &i, "npy", &dir);
        if (m < 0) return ks_cli_error("export", "--npy needs a directory");
        if (m == 0 && (m = ks_flag(argc, argv, &i, "perfetto", &perfetto)) < 0)
            return ks_cli_error("export", "--perfetto needs an output file");
        if (m == 0) return ks_cli_error("export", "unknown argument '%s' (kscope export --help)", argv[i]);
    }
    if (!dir && !perfetto) return ks_cli_error("export", "needs --npy DIR or --perfetto OUT.json");
    if (argc >= 2 && argv[1][0] != '-') { /* the outputs, before the trace is read */
        if (perfetto && ks_out_check(perfetto)) return ks_cli_error("export", "%s", ks_error_message());
        if (perfetto && ks_same_path(perfetto, argv[1]))
            return ks_cli_error("export", "--perfetto %s would replace the trace", perfetto);
        if (dir && ks_out_dir_check(dir)) return ks_cli_error("export", "%s", ks_error_message());
    }
    if (argc < 2 || argv[1][0] == '-') return ks_cli_error("export", "needs a trace file (kscope export --help)");
    /* lazily: the events are written chunk by chunk, in a chunk's memory */
    if (ks_trace_open_lazy(argv[1], &tr)) return ks_cli_error("export", "%s", ks_error_message());
    int rc = KS_OK;
    for (int i = 0; perfetto && dir && i < tr.ntensors + 2; ++i) { /* --perfetto inside --npy DIR */
        char path[4400];
        if (i < tr.ntensors) snprintf(path, sizeof path, "%s/%s.npy", dir, tr.tensors[i].name);
        else snprintf(path, sizeof path, "%s/%s", dir, i == tr.ntensors ? "events.npy" : "header.json");
        if (ks_same_path(perfetto, path)) {
            ks_trace_close(&tr);
            return ks_cli_error("export", "--perfetto %s is also a file of --npy %s; give it another name", perfetto,
                                dir);
        }
    }
    if (perfetto && dir && ks_trace_tensor(&tr, "schedule") < 0) { /* before --npy writes anything */
        ks_trace_close(&tr);
        return ks_cli_error("export", "%s has no schedule (record one: kscope run OP --trace FILE --schedule)",
                            argv[1]);
    }
    if (ks_trace_verify(&tr) || (dir && ks_trace_export_npy(&tr, dir)) ||
        (perfetto && ks_trace_export_perfetto(&tr, perfetto)))
        rc = ks_cli_error("export", "%s", ks_error_message());
    else if (dir)
        printf("exported %s to %s/: header.json, %d tensors, events.npy (%llu events)%s%s\n", argv[1], dir, tr.ntensors,
               (unsigned long long)tr.file_events, perfetto ? "; the schedule to " : "", perfetto ? perfetto : "");
    else printf("exported the schedule of %s to %s (open it in ui.perfetto.dev)\n", argv[1], perfetto);
    ks_trace_close(&tr);
    return rc;
}

int ks_cmd_convert(int argc, char **argv)
{
    static ks_trace tr;
    const char *out = NULL, *ver = NULL;
    if (wants_help(argc, argv)) {
        printf("usage: kscope convert IN.kst OUT.kst [--version 1|2] [--compress | --no-compress]\n\n"
               "Rewrites a trace in another format version (default %d, the compact one; 1 is the\n"
               "64-byte record of earlier releases, which every release reads). The records are the\n"
               "same, bit for bit (version 2 keeps them in work-item order, so 2 -> 1 -> 2 gives the\n"
               "first file back byte for byte). Checksums are\n"
               "verified first; OUT appears whole or not at all. docs/trace-format.md.\n\n"
               "  --compress     version 2's chunks compressed with zstd (smaller; readers\n"
               "                 of this release and later decompress each chunk they read)\n"
               "  --no-compress  not compressed (the default, unless IN is compressed: then kept)\n",
               KS_KST_VERSION);
        return KS_EXIT_OK;
    }
    int compress = -1; /* -1: as IN */
    for (int i = 2; i < argc; ++i) {
        int m = ks_flag(argc, argv, &i, "version", &ver);
        if (m < 0) return ks_cli_error("convert", "--version needs 1 or 2");
        if (m > 0) continue;
        if (!strcmp(argv[i], "--compress") || !strcmp(argv[i], "--no-compress")) {
            compress = argv[i][2] == 'c';
            continue;
        }
        if (argv[i][0] == '-' || out)
            return ks_cli_error("convert", "unexpected argument '%s' (kscope convert --help)", argv[i]);
        out = argv[i];
    }
    if (ver && strcmp(ver, "1") && strcmp(ver, "2"))
        return ks_cli_error("convert", "--version is 1 or 2, not '%s'", ver);
    if (compress == 1 && ver && !strcmp(ver, "1"))
        return ks_cli_error("convert", "--compress is for version 2 (version 1's records are mapped as they are)");
    if (argc >= 2 && argv[1][0] != '-' && !out)
        return ks_cli_error("convert", "needs an output file: kscope convert IN.kst OUT.kst");
    if (out && ks_out_check(out)) return ks_cli_error("convert", "%s", ks_error_message());
    if (out && argc >= 2 && ks_same_path(out, argv[1]))
        return ks_cli_error("convert", "OUT %s would replace IN; give another name", out);
    int rc = open_trace("convert", argc, argv, &tr);
    if (rc) return rc;
    const int from = tr.version;
    const int from_zstd = tr.zstd, bad = ks_trace_verify(&tr); /* the file as read: its version, its chunks */
    tr.version = ver ? ver[0] - '0' : KS_KST_VERSION;
    if (compress >= 0) tr.zstd = compress;
    if (tr.version == 1) tr.zstd = 0;
    if (bad || ks_trace_write(out, &tr)) {
        rc = ks_cli_error("convert", "%s", ks_error_message());
    } else {
        printf("converted %s (version %d%s) to %s (version %d%s): %llu events\n", argv[1], from,
               from_zstd ? ", zstd" : "", out, tr.version, tr.zstd ? ", zstd" : "", (unsigned long long)tr.nevents);
    }
    ks_trace_close(&tr);
    return rc;
}
