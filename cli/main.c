/* kscope - the front door: list, run, info, step, view, lesson, puzzle, check, diff, memory, export, convert, record. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ks_version.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {.name = "list", .fn = ks_cmd_list, .summary = "operators, their parameters, defaults and tensors"},
    {.name = "run",
     .fn = ks_cmd_run,
     .summary = "run an operator, or a kernel of a .cu file as it is, save outputs and a trace"},
    {.name = "info", .fn = ks_cmd_info, .summary = "summarize a trace file and verify its checksums"},
    {.name = "step",
     .fn = ks_cmd_step,
     .summary = "step through one thread's (or one work item's) index math and memory"},
    {.name = "view",
     .fn = ks_cmd_view,
     .summary = "replay a trace in the viewer window, or render it to PNG (--headless)"},
    {.name = "lesson",
     .fn = ks_cmd_lesson,
     .summary = "play a lesson (terminal, viewer or PNG slides); --list, --check"},
    {.name = "puzzle",
     .fn = ks_cmd_puzzle,
     .summary = "GPU puzzles in CUDA C graded by their trace; --list, --init DIR, --solution"},
    {.name = "check", .fn = ks_cmd_check, .summary = "check a trace's invariants; exit 1 listing the first violations"},
    {.name = "diff",
     .fn = ks_cmd_diff,
     .summary = "compare two traces work item by work item, or outputs with reference .npy"},
    {.name = "memory",
     .fn = ks_cmd_memory,
     .summary = "warp requests, 32-byte sectors and coalescing efficiency of each memory site"},
    {.name = "export", .fn = ks_cmd_export, .summary = "write a trace as header.json and .npy files numpy reads"},
    {.name = "record",
     .fn = ks_cmd_record,
     .summary = "record an unmodified CUDA program's kernels on the GPU: kscope record -- PROGRAM"},
    {.name = "convert", .fn = ks_cmd_convert, .summary = "rewrite a trace in format version 2 (compact) or 1"},
    {.name = "gallery",
     .fn = ks_cmd_gallery,
     .summary = "conv_arithmetic's animations (GIF, PNG) from real im2col/col2im traces"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: kscope COMMAND [ARGS]   (kscope COMMAND --help for details)\n\n"
                 "KernelScope: see and check the index math inside GPU kernels.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nkscope --version prints the version (%s).\n", KS_VERSION_STRING);
    fprintf(out, "\nexit codes: 0 success, 1 check found violations, 2 bad input or failure\n"
                 "example: kscope run im2col --trace t.kst && kscope step t.kst --thread 0\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KS_EXIT_ERROR;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("kscope %s\n", KS_VERSION_STRING);
        return KS_EXIT_OK;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return KS_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kscope: unknown command '%s' (kscope --help lists them)\n", argv[1]);
    return KS_EXIT_ERROR;
}
