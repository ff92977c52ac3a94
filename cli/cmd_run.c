/* kscope list / kscope run */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_sim.h"
#include "../kernels/registry.h"
#include "../trace/image.h"
#include "../trace/ks_file.h"
#include "../trace/kst.h"
#include "../trace/npy.h"
#include "../trace/run_trace.h"
#include "cli.h"

/* A traced row's trace schema at the operator's defaults, a site a line: its kind, name,
 * and the work fields or the tensor it touches. */
static void print_sites(FILE *out, const ks_op *op, int k)
{
    static ks_site sites[KS_MAX_SITES];
    const int n = ks_op_row_sites(op, k, sites);
    if (n < 0) fprintf(out, "      (no sites at the defaults: %s)\n", ks_error_message());
    for (int i = 0; i < n; ++i) {
        const ks_site *s = &sites[i];
        fprintf(out, "      %-7s %s:", ks_event_kind_name(s->kind), s->name);
        if (s->kind == KS_EV_WORK)
            for (int f = 0; f < s->nfields; ++f) fprintf(out, " %s", s->fields[f].name);
        else if (s->tensor >= 0 && s->tensor < op->ntensors) fprintf(out, " %s", op->tensors[s->tensor].name);
        fputc('\n', out);
    }
}

static void print_op(FILE *out, const ks_op *op)
{
    fprintf(out, "%s: %s\n\nparameters (default):\n", op->name, op->summary);
    for (int i = 0; i < op->nparams; ++i) {
        const ks_param_spec *p = &op->params[i];
        char def[48], flag[40], range[96] = "";
        snprintf(flag, sizeof flag, "--%s", p->name);
        if (p->kind == KS_PARAM_SWITCH) {
            snprintf(flag, sizeof flag, "--[no-]%s", p->name);
            snprintf(def, sizeof def, "%s", p->def[0] ? "on" : "off");
        } else if (p->kind == KS_PARAM_CHOICE) {
            int k = 0;
            const char *c = p->choices;
            while (k < p->def[0] && (c = strchr(c, '|'))) c++, k++;
            snprintf(def, sizeof def, "%.*s", (int)(strchr(c, '|') ? strchr(c, '|') - c : (long)strlen(c)), c);
            snprintf(range, sizeof range, " (%s)", p->choices);
        } else if (p->kind == KS_PARAM_FLOAT) {
            if (p->axes == 2) snprintf(def, sizeof def, "%g,%g", p->fdef[0], p->fdef[1]);
            else snprintf(def, sizeof def, "%g", p->fdef[0]);
        } else {
            if (p->def[0] < p->min) /* a default no flag could give: the op derives it */
                snprintf(def, sizeof def, "auto");
            else if (p->axes == 2 || (p->axes == 3 && p->def[1] != p->def[0]))
                snprintf(def, sizeof def, "%lld,%lld", (long long)p->def[0], (long long)p->def[1]);
            else snprintf(def, sizeof def, "%lld", (long long)p->def[0]);
            snprintf(range, sizeof range, " (>= %lld)", (long long)p->min);
        }
        fprintf(out, "  %-18s %-8s %s%s\n", flag, def, p->help, range);
    }
    if (op->nkernels) {
        int def = 0;
        for (int k = 0; k < op->nkernels; ++k) def += !op->kernels[k].plain_only && !op->kernels[k].no_trace;
        fprintf(out, "  %-18s %-8s the kernel the trace records: auto (the mode's own) or one of %d below\n",
                "--trace-kernel", "auto", def);
    }
    fprintf(out, "\ntensors:\n");
    for (int i = 0; i < op->ntensors; ++i)
        fprintf(out, "  %-17s %-7s %s\n", op->tensors[i].name, op->tensors[i].output ? "output" : "input",
                op->tensors[i].shape);
    if (op->nkernels) { /* each row's reference launch; --threads / --block-cap set all of them */
        fprintf(out, "\nkernels (--trace-kernel NAME; --threads and --block-cap apply to each not fixed), under each\n"
                     "traced one its trace sites at the defaults (work: its fields; others: their tensor):\n");
        for (int k = 0; k < op->nkernels; ++k) {
            const ks_kernel *row = &op->kernels[k];
            char launch[64], cap[32] = "no cap";
            if (row->block_cap > 0) snprintf(cap, sizeof cap, "<= %lld blocks", (long long)row->block_cap);
            if (row->tile_of) snprintf(launch, sizeof launch, "a 3-D grid of tiles");
            else if (row->block_of) snprintf(launch, sizeof launch, "a tile per block, %s", cap);
            else if (row->fixed) snprintf(launch, sizeof launch, "fixed: %d threads, %s", row->threads, cap);
            else
                snprintf(launch, sizeof launch, "%d threads%s, %s", row->threads, row->threads_of ? " or more" : "",
                         cap);
            fprintf(out, "  %-17s %-28s %s", row->name, launch, row->help ? row->help : "");
            if (row->plain_only) fprintf(out, " (not traced: %s traces the same)", row->twin);
            else if (row->no_trace) fprintf(out, " (plain only: not traced)");
            fputc('\n', out);
            if (row->sites) print_sites(out, op, k);
        }
        return;
    }
    fprintf(out, "\nlaunch default: %d threads per block, ", op->default_threads);
    if (op->default_block_cap > 0) fprintf(out, "at most %lld blocks\n", (long long)op->default_block_cap);
    else fprintf(out, "no block cap\n");
}

int ks_cmd_list(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: kscope list [OP]\n\nWithout OP: the operators. With OP: its parameters "
               "with defaults, its tensors with shapes, and its launch defaults.\n");
        return KS_EXIT_OK;
    }
    if (argc > 2) return ks_cli_error("list", "takes at most one operator name");
    if (argc == 2) {
        const ks_op *op = ks_op_find(argv[1]);
        if (!op) return ks_cli_error("list", "unknown operator '%s' (kscope list shows them)", argv[1]);
        print_op(stdout, op);
        return KS_EXIT_OK;
    }
    printf("operators (kscope list OP for parameters and tensors):\n");
    for (int i = 0; i < ks_op_count(); ++i) printf("  %-10s %s\n", ks_op_at(i)->name, ks_op_at(i)->summary);
    return KS_EXIT_OK;
}

static void run_usage(FILE *out, const ks_op *op)
{
    fprintf(out,
            "usage: kscope run FILE.cu --kernel NAME --grid .. --block .. --arg P=V ...  (kscope run FILE.cu --help)\n"
            "       kscope run OP [PARAMS] [--in NAME=FILE.npy]... [--save DIR] [--device sim|cuda]\n"
            "                     [--trace FILE.kst] [--filter SPEC] [--threads N] [--block-cap N]\n"
            "                     [--pattern arange|ones|random] [--seed N] [--quiet]\n"
            "                     [--image PICTURE [--image-size H,W]] [--trace-limit SIZE] [--schedule]\n\n"
            "Runs operator OP once. Inputs not given with --in are a built-in pattern\n"
            "(arange: 1, 2, 3, ... in memory order: the value at position i is i + 1).\n"
            "  --in NAME=FILE    an input tensor from a .npy (C order; float32, or int32 for\n"
            "                    index tensors: kscope list OP says which)\n"
            "  --image FILE      the input tensor from a picture (PNG, PGM or PPM), grey in\n"
            "                    [0, 1], shape (1, 1, H, W); --image-size H,W resamples it\n"
            "  --save DIR        write every output as DIR/<tensor>.npy\n"
            "  --device D        sim (CPU simulator, default) or cuda\n"
            "  --trace FILE      record the traced variant into FILE (.kst)\n"
            "  --schedule        with --trace: also each block's SM and start/end clock (GPU:\n"
            "                    %%smid, %%globaltimer in ns; simulator: a virtual clock), the\n"
            "                    trace's 'schedule' tensor (kscope export --perfetto)\n"
            "  --filter SPEC     which work items to record: index=LO:HI,block=LO:HI,every=N\n"
            "  --trace-limit S   most events a trace keeps, as bytes of 64-byte events (4G,\n"
            "                    512M; default 4G); past it the filtered prefix is kept and\n"
            "                    the dropped events are counted\n"
            "  --threads N       threads per block (default: the reference's)\n"
            "  --block-cap N     most blocks, so threads loop (-1: none; default: the reference's)\n"
            "  --pattern P       the built-in value of the inputs an operator has none of its\n"
            "                    own for (its rois, offsets, ... keep theirs): arange\n"
            "                    (default), ones, or random (uniform in [-1, 1), from --seed)\n"
            "  --seed N          the seed of random inputs, an integer >= 0 (default 0)\n"
            "  --quiet           print nothing on success: no summary, no progress (errors\n"
            "                    and trace drops still)\n"
            "Per-axis parameters take H,W or one number for both. A simulator run past 2 s\n"
            "reports its progress on stderr every 2 s: the launch (an operator may run\n"
            "several kernels, each a launch), its blocks done of its total, the time.\n");
    if (op) {
        fputc('\n', out);
        print_op(out, op);
    }
}

/* The trace and the saved outputs are written as one: each to a temporary beside its
 * target, and renamed into place only when all are whole; any failure leaves none of
 * them (and removes DIR when this run created it). */
static int write_outputs(const ks_op *op, const ks_run *r, const char *trace, const char *dir)
{
    static ks_trace tr; /* large: keep it off the stack */
    ks_out_file out[KS_OP_TENSORS + 1];
    char path[4400];
    int n = 0, rc = KS_OK, created = 0;
    if (trace) {
        ks_trace_from_run(op, r, &tr);
        if (!(rc = ks_out_open(&out[n], trace))) {
            n++;
            if (!(rc = ks_trace_put(&out[n - 1], &tr))) rc = ks_out_finish(&out[n - 1]);
        }
    }
    if (!rc && dir) {
        if (mkdir(dir, 0777) == 0) created = 1;
        else if (errno != EEXIST) rc = ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    }
    for (int i = 0; dir && i < op->ntensors && !rc; ++i) {
        if (!op->tensors[i].output || r->absent[i]) continue;
        snprintf(path, sizeof path, "%s/%s.npy", dir, r->tensor[i].name);
        if ((rc = ks_out_open(&out[n], path))) break;
        n++;
        if (!(rc = ks_npy_put(&out[n - 1], &r->tensor[i]))) rc = ks_out_finish(&out[n - 1]);
    }
    for (int i = 0; i < n; ++i) {
        if (rc) ks_out_abort(&out[i]);
        else rc = ks_out_commit(&out[i]);
    }
    if (rc && created) rmdir(dir);
    return rc;
}

static int load_input(const ks_op *op, ks_run *r, const char *spec, const char *ctx)
{
    char name[KS_NAME_LEN];
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof name || !eq[1])
        return ks_cli_error(ctx, "--in takes NAME=FILE.npy (got '%s')", spec);
    snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
    int t = ks_op_tensor(op, name);
    if (t < 0 || (op->tensors[t].output && !op->tensors[t].may_give))
        return ks_cli_error(ctx, "--in %s: %s has no input tensor '%s' (kscope list %s)", name, op->name, name,
                            op->name);
    if (r->tensor[t].data) return ks_cli_error(ctx, "--in %s given twice", name);
    if (ks_npy_read(eq + 1, &r->tensor[t])) return ks_cli_error(ctx, "%s", ks_error_message());
    snprintf(r->tensor[t].name, KS_NAME_LEN, "%s", name);
    if (r->tensor[t].dtype != (ks_dtype)op->tensors[t].dtype) {
        const char *got = ks_dtype_long_name(r->tensor[t].dtype);
        ks_tensor_free(&r->tensor[t]);
        return ks_cli_error(ctx, "%s: %s must be %s, not %s", eq + 1, name,
                            ks_dtype_long_name((ks_dtype)op->tensors[t].dtype), got);
    }
    return KS_EXIT_OK;
}

/* --image: the op's tensor "input" from a picture, grey, (1, 1, H, W) */
static int load_image(const ks_op *op, ks_run *r, const char *path, const char *size, const char *ctx)
{
    int64_t hw[2] = {0, 0};
    int t = ks_op_tensor(op, "input");
    if (t < 0 || (op->tensors[t].output && !op->tensors[t].may_give))
        return ks_cli_error(ctx, "--image: %s has no input tensor 'input'", op->name);
    if (r->tensor[t].data) return ks_cli_error(ctx, "--image and --in input both give the input");
    if (size && (ks_parse_values(size, 2, hw) || hw[0] < 1 || hw[1] < 1))
        return ks_cli_error(ctx, "--image-size must be H,W >= 1 (got '%s')", size);
    if (ks_image_read(path, 1, hw[0], hw[1], &r->tensor[t])) return ks_cli_error(ctx, "%s", ks_error_message());
    return KS_EXIT_OK;
}

/* The files a run reads (--in, --image), for the check that no output replaces one. */
typedef struct run_inputs {
    const char *path[KS_OP_TENSORS + 1];
    int n;
} run_inputs;

static int parse_run_flags(const ks_op *op, ks_run *r, int argc, char **argv, const char **save, const char **trace,
                           ks_filter *filter, int *filter_given, int *quiet, unsigned long long *trace_limit,
                           int *limit_given, run_inputs *in, const char *ctx)
{
    const char *image = NULL, *image_size = NULL;
    for (int i = 2; i < argc; ++i) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout, op);
            return -1;
        }
        if (!strcmp(argv[i], "--quiet")) {
            *quiet = 1;
            continue;
        }
        if (!strcmp(argv[i], "--schedule")) {
            r->schedule = 1;
            continue;
        }
        /* an operator parameter: --name VALUE, or --name / --no-name for a switch */
        int matched = 0;
        for (int p = 0; p < op->nparams && !matched; ++p) {
            const ks_param_spec *spec = &op->params[p];
            const char *text = NULL;
            if (spec->kind == KS_PARAM_SWITCH) {
                const char *a = argv[i] + 2;
                const int no = !strncmp(argv[i], "--no-", 5);
                if (strncmp(argv[i], "--", 2) || strcmp(no ? a + 3 : a, spec->name)) continue;
                text = no ? "off" : "on";
            } else if ((m = ks_flag(argc, argv, &i, spec->name, &v)) == 0) {
                continue;
            } else if (m < 0) {
                return ks_cli_error(ctx, "--%s needs a value", spec->name);
            }
            if (ks_run_set(r, spec->name, text ? text : v)) return ks_cli_error(ctx, "%s", ks_error_message());
            matched = 1;
        }
        if (matched) continue;
        static const char *const valued[] = {"in",         "save",        "device",      "trace", "filter",
                                             "threads",    "block-cap",   "pattern",     "seed",  "image",
                                             "image-size", "trace-limit", "trace-kernel"};
        int which = -1;
        for (int k = 0; k < (int)(sizeof valued / sizeof valued[0]) && which < 0; ++k) {
            m = ks_flag(argc, argv, &i, valued[k], &v);
            if (m < 0) return ks_cli_error(ctx, "--%s needs a value", valued[k]);
            if (m > 0) which = k;
        }
        int64_t n;
        switch (which) {
        case 0:
            if (load_input(op, r, v, ctx)) return KS_EXIT_ERROR;
            if (in->n < KS_OP_TENSORS) in->path[in->n++] = strchr(v, '=') + 1;
            break;
        case 1: *save = v; break;
        case 2:
            if (!strcmp(v, "sim")) r->device = KS_DEV_SIM;
            else if (!strcmp(v, "cuda")) r->device = KS_DEV_CUDA;
            else return ks_cli_error(ctx, "--device must be sim or cuda (got '%s')", v);
            break;
        case 3: *trace = v; break;
        case 4:
            if (ks_parse_filter(v, filter))
                return ks_cli_error(ctx, "--filter '%s': expected index=LO:HI,block=LO:HI,every=N", v);
            *filter_given = 1;
            break;
        case 5:
            if (ks_parse_i64(v, &n) || n < 1 || n > 1024)
                return ks_cli_error(ctx, "--threads must be in 1..1024 (got '%s')", v);
            r->launch.threads = (int)n;
            break;
        case 6:
            if (ks_parse_i64(v, &n) || n == 0 || n < -1)
                return ks_cli_error(ctx, "--block-cap must be >= 1, or -1 for none (got '%s')", v);
            r->launch.block_cap = n;
            break;
        case 7:
            if (!strcmp(v, "arange")) r->pattern = KS_PAT_ARANGE;
            else if (!strcmp(v, "ones")) r->pattern = KS_PAT_ONES;
            else if (!strcmp(v, "random")) r->pattern = KS_PAT_RANDOM;
            else return ks_cli_error(ctx, "--pattern must be arange, ones or random (got '%s')", v);
            break;
        case 8:
            if (ks_parse_i64(v, &n) || n < 0) return ks_cli_error(ctx, "--seed must be an integer >= 0 (got '%s')", v);
            r->seed = (uint64_t)n;
            break;
        case 9: image = v; break;
        case 10: image_size = v; break;
        case 11:
            if (ks_parse_bytes(v, trace_limit) || *trace_limit < 64)
                return ks_cli_error(ctx, "--trace-limit takes a size such as 4G, 512M or 65536 (bytes; got '%s')", v);
            *limit_given = 1;
            break;
        case 12:
            if (!op->nkernels) return ks_cli_error(ctx, "unknown flag '%s' (kscope run %s --help)", argv[i], op->name);
            if (ks_run_set(r, "trace-kernel", v)) return ks_cli_error(ctx, "%s", ks_error_message());
            break;
        default: return ks_cli_error(ctx, "unknown flag '%s' (kscope run %s --help)", argv[i], op->name);
        }
    }
    if (image_size && !image) return ks_cli_error(ctx, "--image-size needs --image");
    if (image) in->path[in->n++] = image;
    return image ? load_image(op, r, image, image_size, ctx) : KS_EXIT_OK;
}

/* Before the run: the outputs can be written (a regular file or none, in a folder that
 * exists), and none of them is another output or an input (--trace D/x.npy --save D
 * used to lose the trace; --trace or --save over an --in file replaced it). Every
 * output the operator has counts, written in this mode or not. */
static int check_outputs(const ks_op *op, const char *trace, const char *save, const run_inputs *in, const char *ctx)
{
    char path[4400];
    if (trace && ks_out_check(trace)) return ks_cli_error(ctx, "%s", ks_error_message());
    if (save && ks_out_dir_check(save)) return ks_cli_error(ctx, "%s", ks_error_message());
    if (trace && save && ks_same_path(trace, save))
        return ks_cli_error(ctx, "--trace %s is the --save folder; give the trace a file name", trace);
    for (int i = 0; trace && i < in->n; ++i)
        if (ks_same_path(trace, in->path[i]))
            return ks_cli_error(ctx, "--trace %s would replace the input %s", trace, in->path[i]);
    for (int t = 0; save && t < op->ntensors; ++t) {
        if (!op->tensors[t].output) continue;
        snprintf(path, sizeof path, "%s/%s.npy", save, op->tensors[t].name);
        if (trace && ks_same_path(trace, path))
            return ks_cli_error(ctx, "--trace %s is where --save writes %s; give them different names", trace,
                                op->tensors[t].name);
        for (int i = 0; i < in->n; ++i)
            if (ks_same_path(path, in->path[i]))
                return ks_cli_error(ctx, "--save %s would replace the input %s with the output %s", save, in->path[i],
                                    op->tensors[t].name);
    }
    return KS_EXIT_OK;
}

/* A simulator run that takes a while says how far it got on stderr: from
 * KS_RUN_PROGRESS_MS on, then as often, a line "block i of n" of the launch running (on a
 * terminal one line rewritten in place). --quiet turns it off. */
#define KS_RUN_PROGRESS_MS 2000
typedef struct run_progress {
    const char *op;
    struct timespec t0;
    int tty;
} run_progress;

static void show_progress(void *ctx, int launch, int64_t done, int64_t total)
{
    const run_progress *p = ctx;
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    const long long secs = (long long)(now.tv_sec - p->t0.tv_sec);
    fprintf(stderr, "%skscope: %s: simulating, launch %d, block %lld of %lld (%d%%), %lld s since the start%s",
            p->tty ? "\r" : "", p->op, launch, (long long)done, (long long)total,
            (int)(total ? 100 * done / total : 100), secs, !p->tty || done == total ? "\n" : "");
    fflush(stderr);
}

static int run_op(const ks_op *op, int argc, char **argv)
{
    static ks_run r; /* large: keep it off the stack */
    const char *save = NULL, *trace = NULL, *ctx = op->name;
    ks_filter filter = ks_filter_all();
    int quiet = 0, filter_given = 0, limit_given = 0, rc;
    unsigned long long trace_limit = KS_TRACE_LIMIT_DEFAULT * sizeof(ks_event);
    run_inputs in = {.n = 0};
    ks_run_init(&r, op);
    rc = parse_run_flags(op, &r, argc, argv, &save, &trace, &filter, &filter_given, &quiet, &trace_limit, &limit_given,
                         &in, ctx);
    if (rc) {
        ks_run_free(&r);
        return rc < 0 ? KS_EXIT_OK : rc;
    }
    if ((filter_given || r.schedule || limit_given) && !trace) {
        ks_run_free(&r);
        return ks_cli_error(ctx, "%s needs --trace FILE.kst",
                            filter_given ? "--filter"
                            : r.schedule ? "--schedule"
                                         : "--trace-limit");
    }
    if ((rc = check_outputs(op, trace, save, &in, ctx))) {
        ks_run_free(&r);
        return rc;
    }
    if (trace && !(r.sink = ks_host_sink_create(trace_limit / sizeof(ks_event), filter))) {
        ks_run_free(&r);
        return ks_cli_error(ctx, "%s", ks_error_message());
    }
    run_progress prog = {.op = op->name, .tty = isatty(STDERR_FILENO)};
    timespec_get(&prog.t0, TIME_UTC);
    if (!quiet && r.device == KS_DEV_SIM) ks_sim_set_progress(show_progress, &prog, KS_RUN_PROGRESS_MS);
    rc = ks_run_execute(&r);
    ks_sim_set_progress(NULL, NULL, 0);
    if (rc) {
        rc = ks_cli_error(ctx, "%s", ks_error_message());
        goto out;
    }
    if ((trace || save) && write_outputs(op, &r, trace, save)) {
        rc = ks_cli_error(ctx, "%s", ks_error_message());
        goto out;
    }
    /* a trace that lost events says so, --quiet or not */
    if (trace && ks_sink_dropped(r.sink))
        fprintf(stderr,
                "kscope: %s: the trace kept %llu events and dropped %llu (--trace-limit %llu bytes: %llu events "
                "of %d bytes); record fewer with --filter or raise --trace-limit\n",
                ctx, ks_sink_count(r.sink), ks_sink_dropped(r.sink), trace_limit,
                trace_limit / (unsigned long long)sizeof(ks_event), (int)sizeof(ks_event));
    if (!quiet) {
        char shape[96];
        printf("%s on %s: %lld work items, %lld block%s x %d threads\n", op->name, r.device_name,
               (long long)r.work_items, (long long)r.blocks, r.blocks == 1 ? "" : "s", r.threads);
        for (int i = 0; i < op->ntensors; ++i)
            if (!r.absent[i])
                printf("  %-7s %-12s %s\n", op->tensors[i].output ? "output" : "input", r.tensor[i].name,
                       ks_shape_str(r.tensor[i].ndim, r.tensor[i].shape, shape, sizeof shape));
        if (trace)
            printf("trace: %s (%llu events, %llu dropped)\n", trace, ks_sink_count(r.sink), ks_sink_dropped(r.sink));
        if (save) printf("outputs saved in %s/\n", save);
    }
out:
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
    return rc;
}

int ks_cmd_run(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        run_usage(argc < 2 ? stderr : stdout, NULL);
        return argc < 2 ? KS_EXIT_ERROR : KS_EXIT_OK;
    }
    const ks_op *op = ks_op_find(argv[1]);
    const size_t len = strlen(argv[1]);
    if (!op && (strchr(argv[1], '/') || (len > 3 && !strcmp(argv[1] + len - 3, ".cu")) ||
                (len > 4 && (!strcmp(argv[1] + len - 4, ".cpp") || !strcmp(argv[1] + len - 4, ".cuh")))))
        return ks_cmd_run_cu(argc, argv); /* a CUDA C file: cmd_run_cu.c */
    if (!op) return ks_cli_error("run", "unknown operator '%s' (kscope list shows them, or give a FILE.cu)", argv[1]);
    return run_op(op, argc, argv);
}
