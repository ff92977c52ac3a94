/* The kscope command end to end: the tour works on defaults and on .npy inputs, and a
 * table of bad inputs each gets one error line, exit code 2 and no output file. */
#include <cJSON.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../trace/npy.h"
#include "../kernels/deform_conv/deform_body.h"
#include "test_util.h"
#include "ks_version.h"

static char dir[64];

/* Runs "kscope ARGS" in dir; returns the exit code; stdout/stderr in dir/out, dir/err. */
static int kscope(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s >out 2>err", dir, KS_CLI, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *name) { return tu_slurp(dir, name); }

static int exists(const char *name)
{
    char path[128];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ks_cli_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* inputs for the table: a good 4-D input, a 3-D one, an int32 one, a corrupt one */
    ks_tensor t = {.dtype = KS_F32, .ndim = 4, .shape = {1, 2, 6, 7}};
    char path[128];
    uint64_t s = 1;
    ks_tensor_alloc(&t);
    float *r = tu_random(&s, 84);
    memcpy(t.data, r, 84 * 4);
    free(r);
    snprintf(path, sizeof path, "%s/in.npy", dir);
    ck_assert_int_eq(ks_npy_write(path, &t), KS_OK);
    t.ndim = 3;
    snprintf(path, sizeof path, "%s/in3d.npy", dir);
    ck_assert_int_eq(ks_npy_write(path, &t), KS_OK);
    t.ndim = 4;
    t.dtype = KS_I32;
    snprintf(path, sizeof path, "%s/int.npy", dir);
    ck_assert_int_eq(ks_npy_write(path, &t), KS_OK);
    ks_tensor_free(&t);
    ks_tensor xy = {.dtype = KS_F32, .ndim = 3, .shape = {2, 3, 2}}; /* coords for 2 images */
    ks_tensor_alloc(&xy);
    snprintf(path, sizeof path, "%s/coords2.npy", dir);
    ck_assert_int_eq(ks_npy_write(path, &xy), KS_OK);
    ks_tensor_free(&xy);
    snprintf(path, sizeof path, "%s/corrupt.npy", dir);
    FILE *f = fopen(path, "wb");
    fputs("\x93NUMPY\x01\x00\x30\x00{'descr': '<f4', 'shape': (1, 2, 6, 7), }", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/pic.pgm", dir); /* a 6x5 grey picture, values 0..29 * 8 */
    f = fopen(path, "wb");
    fputs("P5\n5 6\n255\n", f);
    for (int i = 0; i < 30; ++i) fputc(i * 8, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/garbage.kst", dir);
    f = fopen(path, "wb");
    fputs("KSTRACE\0 this is not a trace at all, just some bytes", f);
    fclose(f);
}

START_TEST(tour_works_on_defaults)
{
    setup();
    ck_assert_int_eq(kscope("run im2col --trace t.kst --save out_dir"), 0);
    ck_assert(exists("t.kst") && exists("out_dir/columns.npy"));
    ck_assert_int_eq(kscope("info t.kst"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "checksums: ok"));
    ck_assert_int_eq(kscope("step t.kst --thread 0"), 0);
    /* thread 0 handles index 0: window at (-1, -1), first tap in the padding */
    ck_assert_ptr_nonnull(strstr(slurp("out"), "w_col = index % 5 = 0 % 5 = 0"));
    ck_assert_ptr_nonnull(strstr(slurp("out"), "read  input[0, 0, -1, -1]"));
    ck_assert_int_eq(kscope("step t.kst --index 12"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "h_col = index / 5 % 5 = 12 / 5 % 5 = 2"));
    ck_assert_int_eq(kscope("check t.kst"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "ok: all invariants hold"));
    ck_assert_int_eq(kscope("export t.kst --npy ex"), 0);
    ck_assert(exists("ex/header.json") && exists("ex/events.npy") && exists("ex/input.npy") &&
              exists("ex/columns.npy"));
    ck_assert_int_eq(kscope("list"), 0);
    ck_assert_int_eq(kscope("list im2col"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "--kernel-size"));
    /* the kernel rows: names, reference launches, which ones a trace can record */
    ck_assert_int_eq(kscope("list sparse_conv"), 0);
    const char *rows = slurp("out");
    ck_assert_msg(strstr(rows, "--trace-kernel") && strstr(rows, "one of 4 below") &&
                      strstr(rows, "256 threads, no cap") && strstr(rows, "candidates") &&
                      strstr(rows, "(plain only: not traced)"),
                  "%s", rows);
    ck_assert_int_eq(kscope("list roi_align"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "(not traced: forward traces the same)"));
    const char *helps[] = {"--help",       "run --help",    "run col2im --help", "info --help",   "step --help",
                           "check --help", "export --help", "list --help",       "convert --help"};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; ++i)
        ck_assert_msg(kscope(helps[i]) == 0 && strstr(slurp("out"), "usage"), "%s", helps[i]);
}
END_TEST

/* Format 2 is what run writes; version 1 and version 2 with zstd chunks (kscope convert)
 * read the same everywhere: step prints the same text, export the same events.npy, and
 * 1 -> 2 and zstd -> plain give the original. */
START_TEST(convert_keeps_every_reader_the_same)
{
    setup();
    ck_assert_int_eq(kscope("run deform_conv --channels 3 --input-size 5,7 --mask --trace t.kst --quiet"), 0);
    ck_assert_int_eq(kscope("info t.kst"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "format:   version 2,"));
    ck_assert_int_eq(kscope("convert t.kst v1.kst --version 1"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "(version 2) to v1.kst (version 1)"));
    ck_assert_int_eq(kscope("info v1.kst"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "format:   version 1, 64 bytes an event"));
    ck_assert_int_eq(kscope("convert t.kst z.kst --compress"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "(version 2) to z.kst (version 2, zstd)"));
    ck_assert_int_eq(kscope("info z.kst"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "zstd chunk"));
    const char *same[][2] = {{"step t.kst --index 17", "step v1.kst --index 17"},
                             {"check t.kst", "check v1.kst"},
                             {"memory t.kst", "memory v1.kst"},
                             {"step t.kst --index 17", "step z.kst --index 17"},
                             {"check t.kst", "check z.kst"}};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; ++i) {
        ck_assert_int_eq(kscope(same[i][0]), 0);
        char *a = strdup(slurp("out"));
        ck_assert_int_eq(kscope(same[i][1]), 0);
        const char *other = strstr(same[i][1], " z.kst") ? "z.kst" : "v1.kst";
        const char *b = slurp("out"), *na = strstr(a, "t.kst"), *nb = strstr(b, other);
        /* the file name may appear once; the rest is equal */
        if (na && nb)
            ck_assert_msg(!strcmp(na + 5, nb + strlen(other)) && !strncmp(a, b, (size_t)(na - a)), "%s", same[i][1]);
        else ck_assert_msg(!strcmp(a, b), "%s differs:\n%s\n---\n%s", same[i][0], a, b);
        ck_assert_uint_gt(strlen(a), 40);
        free(a);
    }
    ck_assert_int_eq(kscope("export t.kst --npy e2"), 0);
    ck_assert_int_eq(kscope("export v1.kst --npy e1"), 0);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && cmp -s e1/events.npy e2/events.npy && cmp -s e1/input.npy e2/input.npy", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(kscope("export z.kst --npy ez"), 0);
    snprintf(cmd, sizeof cmd, "cd %s && cmp -s ez/events.npy e2/events.npy", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(kscope("convert v1.kst back.kst"), 0);
    snprintf(cmd, sizeof cmd, "cd %s && cmp -s t.kst back.kst", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(kscope("convert z.kst plain.kst --no-compress"), 0);
    snprintf(cmd, sizeof cmd, "cd %s && cmp -s t.kst plain.kst", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(kscope("convert z.kst z1.kst --version 1 --compress"), 2); /* version 1 has no chunks */
}
END_TEST

/* Integer values past 2^24 are recorded exactly (issue 39 N7): maxpool2d's indices on a
 * row of 8388701 elements are odd numbers near 2^24 + 2^23, which a float cannot hold;
 * check passes (it failed when events held floats) and step prints them exactly. */
START_TEST(integer_values_past_2_24_are_exact)
{
    setup();
    ck_assert_int_eq(kscope("run maxpool2d --input-size 2,8388701 --filter index=4194300:4194302 --trace m.kst "
                            "--quiet"),
                     0);
    ck_assert_int_eq(kscope("check m.kst"), 0);
    ck_assert_int_eq(kscope("step m.kst --index 4194301"), 0);
    /* the window of output column 4194301 is input columns 8388602..8388603 of both rows; the
     * built-in input (memory position + 1, as floats) is largest in row 1, where both columns
     * round to one float, so the first wins: 8388701 + 8388602, an odd number past 2^24 */
    ck_assert_msg(strstr(slurp("out"), "write indices[0, 0, 0, 4194301]    = 16777303"), "%s", slurp("out"));
    ck_assert_int_eq(kscope("convert m.kst m1.kst --version 1"), 0);
    ck_assert_int_eq(kscope("check m1.kst"), 0);
}
END_TEST

START_TEST(run_on_npy_input_matches_reference_and_round_trips_through_col2im)
{
    setup();
    ck_assert_int_eq(kscope("run im2col --in input=in.npy --kernel-size 3,2 --stride 2,1 "
                            "--padding 1,0 --dilation 1,2 --save o --trace t.kst --filter every=3"),
                     0);
    ck_assert_int_eq(kscope("check t.kst"), 0);
    ks_tensor in, cols, img;
    char p[128];
    snprintf(p, sizeof p, "%s/in.npy", dir);
    ck_assert_int_eq(ks_npy_read(p, &in), KS_OK);
    snprintf(p, sizeof p, "%s/o/columns.npy", dir);
    ck_assert_int_eq(ks_npy_read(p, &cols), KS_OK);
    ks_im2col_params prm = {.batch = 1,
                            .channels = 2,
                            .height = 6,
                            .width = 7,
                            .kernel_h = 3,
                            .kernel_w = 2,
                            .pad_h = 1,
                            .pad_w = 0,
                            .stride_h = 2,
                            .stride_w = 1,
                            .dilation_h = 1,
                            .dilation_w = 2};
    ks_im2col_geom g;
    ck_assert_int_eq(ks_im2col_geometry(&prm, &g), KS_OK);
    ck_assert_int_eq(cols.shape[1], 12);
    ck_assert_int_eq(cols.shape[2], g.height_col * g.width_col);
    double *ref = malloc((size_t)g.columns_numel * sizeof *ref);
    ks_im2col_ref(&prm, in.data, ref);
    tu_expect_close(cols.data, ref, g.columns_numel, 0.0, "columns");
    free(ref);
    /* feed the columns to col2im and compare with its reference */
    ck_assert_int_eq(kscope("run col2im --in columns=o/columns.npy --kernel-size 3,2 --stride 2,1 "
                            "--padding 1,0 --dilation 1,2 --output-size 6,7 --save o2"),
                     0);
    snprintf(p, sizeof p, "%s/o2/output.npy", dir);
    ck_assert_int_eq(ks_npy_read(p, &img), KS_OK);
    double *back = malloc(84 * sizeof *back);
    ks_col2im_ref(&prm, cols.data, back);
    tu_expect_close(img.data, back, 84, 1e-5, "output");
    free(back);
    ks_tensor_free(&in), ks_tensor_free(&cols), ks_tensor_free(&img);
}
END_TEST

START_TEST(check_exits_1_on_a_violating_trace)
{
    static ks_run r;
    static ks_trace tr;
    setup();
    const ks_op *op = ks_op_find("col2im");
    ks_run_init(&r, op);
    r.sink = ks_host_sink_create(0, ks_filter_all());
    ck_assert_int_eq(ks_run_execute(&r), KS_OK);
    r.sink->events[0].u.field[2] += 1; /* h_im of the first work item */
    ks_trace_from_run(op, &r, &tr);
    char p[128];
    snprintf(p, sizeof p, "%s/bad.kst", dir);
    ck_assert_int_eq(ks_trace_write(p, &tr), KS_OK);
    ck_assert_int_eq(kscope("check bad.kst"), 1);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "h_im = 2 but index 0 gives"));
    /* a second rule broken too: the summary counts each once, --max bounds the lines */
    r.sink->events[1].u.field[2] += 1;
    r.sink->events[2].u.field[3] += 1;
    ks_trace_from_run(op, &r, &tr);
    ck_assert_int_eq(ks_trace_write(p, &tr), KS_OK);
    ck_assert_int_eq(kscope("check bad.kst --max 1"), 1);
    const char *out = slurp("out");
    ck_assert_msg(strstr(out, "by rule:") && strstr(out, "X = N but index N gives X = N") &&
                      strstr(out, "the first 1:"),
                  "%s", out);
    int lines = 0;
    for (const char *c = strstr(out, "the first 1:"); c && *c; ++c) lines += *c == '\n';
    ck_assert_int_eq(lines, 2); /* the heading and one violation */
    ck_assert_int_eq(kscope("check bad.kst --max 0"), 1);
    ck_assert_ptr_null(strstr(slurp("out"), "the first"));
    ks_host_sink_free(r.sink);
    ks_run_free(&r);
}
END_TEST

static const struct {
    const char *args;
    const char *fragment;
} bad[] = {
    {.args = "run im2col --stride 0", .fragment = "--stride must be >= 1 (got 0)"},
    {.args = "run im2col --kernel-size -1", .fragment = "--kernel-size must be >= 1"},
    {.args = "run im2col --dilation 0,1", .fragment = "--dilation must be >= 1"},
    {.args = "run im2col --padding -2", .fragment = "--padding must be >= 0"},
    {.args = "run im2col --input-size 1,1 --padding 0", .fragment = "output size"},
    {.args = "run im2col --batch 0", .fragment = "--batch must be >= 1"},
    {.args = "run im2col --in input=in3d.npy", .fragment = "shape (N, C, H, W)"},
    {.args = "run im2col --in input=int.npy", .fragment = "float32"},
    {.args = "run im2col --in input=corrupt.npy", .fragment = "corrupt.npy: offset"},
    {.args = "run im2col --in input=missing.npy", .fragment = "cannot open"},
    {.args = "run im2col --in nosuch=in.npy", .fragment = "no input tensor 'nosuch'"},
    {.args = "run im2col --in input=in.npy --channels 3", .fragment = "disagrees"},
    {.args = "run im2col --frobnicate", .fragment = "unknown flag '--frobnicate'"},
    {.args = "run im2col --stride abc", .fragment = "is not N or H,W"},
    {.args = "run im2col --stride 1,2,3", .fragment = "is not N or H,W"},
    {.args = "run im2col --input-size 3000000000,3000000000", .fragment = "must be <= 2147483647"},
    {.args = "run roi_align --output-size 99999999999", .fragment = "--output-size must be <= 2147483647"},
    {.args = "run roi_align --sampling-ratio 70000", .fragment = "sampling_ratio must be <= 65536 (got 70000)"},
    {.args = "run roi_align --seed x", .fragment = "--seed must be an integer >= 0 (got 'x')"},
    {.args = "run im2col --batch 2000000000 --channels 2000000000 --input-size 2000,2000", .fragment = "too large"},
    {.args = "run im2col --device gpu", .fragment = "--device must be sim or cuda"},
    {.args = "run im2col --filter bogus=1", .fragment = "--filter"},
    {.args = "run im2col --filter every=2 --save o2", .fragment = "--filter needs --trace"},
    {.args = "run im2col --threads 0", .fragment = "--threads must be in 1..1024"},
    {.args = "run im2col --block-cap 0", .fragment = "--block-cap"},
    {.args = "run im2col --stride --padding 1", .fragment = "'--padding' is not N or H,W"},
    {.args = "export garbage.kst --npy", .fragment = "--npy needs a directory"},
    {.args = "run col2im --in columns=in3d.npy --kernel-size 2,1",
     .fragment = "columns must have shape (1, 2, 42); got (1, 2, 6)"},
    {.args = "run col2im --in columns=in.npy", .fragment = "shape (N, C*kh*kw, Ho*Wo)"},
    {.args = "run nosuchop", .fragment = "unknown operator 'nosuchop'"},
    {.args = "nosuchcmd", .fragment = "unknown command"},
    {.args = "step garbage.kst --thread 0", .fragment = "garbage.kst: offset"},
    {.args = "step missing.kst --thread 0", .fragment = "cannot open"},
    {.args = "step garbage.kst", .fragment = "exactly one of --thread"},
    {.args = "info garbage.kst", .fragment = "garbage.kst: offset"},
    {.args = "check missing.kst", .fragment = "cannot open"},
    {.args = "export garbage.kst --npy x", .fragment = "garbage.kst: offset"},
    {.args = "export garbage.kst", .fragment = "needs --npy"},
    {.args = "list nosuchop", .fragment = "unknown operator"},
    {.args = "run deform_conv --groups 3", .fragment = "groups 3 must divide channels 2"},
    {.args = "run deform_conv --offset-groups 3", .fragment = "offset_groups 3 must divide channels 2"},
    {.args = "run deform_conv --batch 10 --im2col-step 3", .fragment = "batch size must be divisible by im2col_step"},
    {.args = "run deform_conv --input-size 2,2 --padding 2", .fragment = "input image is smaller than kernel"},
    {.args = "run deform_conv --semantics pytorch", .fragment = "--semantics must be one of auto|mmcv|torchvision"},
    {.args = "run deform_conv --offset-amount x", .fragment = "'x' is not a number"},
    {.args = "run deform_conv --trace-kernel coord", .fragment = "add --backward"},
    {.args = "run deform_conv --in grad_output=in.npy",
     .fragment = "grad_output is given but this run does not use it ((N, O, Ho, Wo): with --backward)"},
    {.args = "run deform_conv --in offset=in.npy", .fragment = "offset must have shape (1, 18, 7, 7)"},
    {.args = "run deform_conv --in input=in.npy --in mask=in.npy", .fragment = "mask must have shape (1, 9, 6, 7)"},
    {.args = "run deform_conv --in input=in.npy --in mask=in.npy --no-mask", .fragment = "--no-mask disagrees"},
    {.args = "run deform_im2col --image missing.pgm", .fragment = "cannot open"},
    {.args = "run deform_im2col --image-size 4,4", .fragment = "--image-size needs --image"},
    {.args = "run deform_im2col --image pic.pgm --in input=in.npy", .fragment = "--image and --in input"},
    {.args = "run deform_im2col --image pic.pgm --image-size 0,3", .fragment = "--image-size must be H,W >= 1"},
    {.args = "run roi_align --spatial-scale 0", .fragment = "--spatial-scale must be a finite number > 0"},
    {.args = "run roi_align --pool-mode min", .fragment = "--pool-mode must be one of avg|max"},
    {.args = "run roi_align --in rois=in.npy", .fragment = "rois must have shape (K, 5)"},
    {.args = "run roi_align --output-size 0", .fragment = "--output-size must be >= 1"},
    {.args = "run roi_align --in grad_output=in.npy",
     .fragment = "grad_output is given but this run does not use it ((K, C, PH, PW): with --backward)"},
    {.args = "run patchify --in coords=coords2.npy", .fragment = "coords has batch 2 but the input has 1"},
    {.args = "run patchify --in coords=in3d.npy", .fragment = "coords must have shape (1, 2, 2); got (1, 2, 6)"},
    {.args = "run patchify --radius -1", .fragment = "--radius must be >= 0"},
    {.args = "run maxpool2d --trace-kernel backward --trace t_bad.kst",
     .fragment = "--trace-kernel backward does not run in this mode"},
    {.args = "run roi_align --trace-kernel forward_merged", .fragment = "must be one of auto|forward|backward"},
    {.args = "check t.kst --max 101", .fragment = "--max takes 0..100 lines"},
    {.args = "check t.kst --max", .fragment = "--max needs a value"},
    {.args = "run patchify --trace-kernel all",
     .fragment = "--trace-kernel must be one of auto|patches|bilinear|bilinear_backward|patches_backward"},
    {.args = "run sparse_conv --in indices=in.npy", .fragment = "indices must be int32 (<i4), not float32"},
    {.args = "run sparse_conv --in features=int.npy", .fragment = "features must be float32 (<f4), not int32"},
    {.args = "run sparse_conv --subm --stride 2", .fragment = "takes no --stride"},
    {.args = "run sparse_conv --spatial-shape 5,5,5,5", .fragment = "is not N, H,W or D,H,W"},
    {.args = "run sparse_conv --inverse", .fragment = "--inverse needs --in indices"},
    {.args = "run sparse_conv --in rulebook=in.npy", .fragment = "rulebook must be int32"},
    {.args = "run sparse_conv --kernel-size 3,3,3", .fragment = "has 3 values but the space has 2 axes"},
    {.args = "diff", .fragment = "needs two traces"},
    {.args = "diff garbage.kst garbage.kst", .fragment = "garbage.kst: offset"},
    {.args = "diff garbage.kst --against x", .fragment = "garbage.kst: offset"},
    {.args = "diff a.kst b.kst --tol -1", .fragment = "--tol takes a number >= 0"},
    {.args = "diff a.kst b.kst c.kst", .fragment = "two traces at most"},
    {.args = "memory", .fragment = "needs a trace file"},
    {.args = "run im2col --schedule", .fragment = "--schedule needs --trace"},
    {.args = "memory garbage.kst", .fragment = "garbage.kst: offset"},
    {.args = "memory garbage.kst --worst 99", .fragment = "--worst takes 0..8"},
};

START_TEST(bad_input_gets_one_line_exit_2_and_no_output)
{
    char args[512];
    setup();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        /* every run also asks for a trace and saved outputs: neither may appear */
        if (!strncmp(bad[i].args, "run ", 4) && !strstr(bad[i].args, "--filter every") &&
            !strstr(bad[i].args, "--schedule"))
            snprintf(args, sizeof args, "%s --trace t_bad.kst --save o_bad", bad[i].args);
        else snprintf(args, sizeof args, "%s", bad[i].args);
        int rc = kscope(args);
        const char *err = slurp("err");
        ck_assert_msg(rc == 2, "'%s' exited %d (stderr: %s)", args, rc, err);
        ck_assert_msg(strstr(err, bad[i].fragment), "'%s': expected '%s' in stderr: %s", args, bad[i].fragment, err);
        ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "'%s': not one line: %s", args, err);
        ck_assert_msg(!exists("t_bad.kst") && !exists("o_bad") && !exists("o2") && !exists("x"),
                      "'%s' left an output behind", args);
    }
}
END_TEST

static ks_tensor load_out(const char *name)
{
    char path[256];
    ks_tensor t;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(ks_npy_read(path, &t) == KS_OK, "%s", ks_error_message());
    return t;
}

/* --backward with a mask and a bias saves every gradient, equal to the double reference
 * on the same inputs; without a mask no grad_mask.npy appears */
START_TEST(deform_conv_backward_saves_every_gradient)
{
    setup();
    ck_assert_int_eq(kscope("run deform_conv --in input=in.npy --mask --bias --backward --offset-pattern random "
                            "--out-channels 3 --pattern random --save d1"),
                     0);
    ks_tensor t[12];
    const char *names[12] = {"d1/output.npy",      "d1/grad_input.npy", "d1/grad_offset.npy", "d1/grad_mask.npy",
                             "d1/grad_weight.npy", "d1/grad_bias.npy",  "d1/columns.npy"};
    for (int i = 0; i < 7; ++i) t[i] = load_out(names[i]);
    ck_assert_int_eq(ks_tensor_numel(&t[0]), 1 * 3 * 6 * 7);
    ck_assert_int_eq(ks_tensor_numel(&t[3]), 1 * 9 * 6 * 7);
    ck_assert_int_eq(ks_tensor_numel(&t[5]), 3);
    /* the inputs: run the forward again saving nothing but reading back its inputs via a trace */
    ck_assert_int_eq(kscope("run deform_conv --in input=in.npy --mask --bias --backward --offset-pattern random "
                            "--out-channels 3 --pattern random --trace d1.kst --quiet"),
                     0);
    ck_assert_int_eq(kscope("export d1.kst --npy d1x"), 0);
    ks_tensor in = load_out("d1x/input.npy"), off = load_out("d1x/offset.npy"), m = load_out("d1x/mask.npy");
    ks_tensor w = load_out("d1x/weight.npy"), b = load_out("d1x/bias.npy"), go = load_out("d1x/grad_output.npy");
    ks_deform_params p = {.batch = 1,
                          .channels = 2,
                          .height = 6,
                          .width = 7,
                          .out_channels = 3,
                          .kernel_h = 3,
                          .kernel_w = 3,
                          .pad_h = 1,
                          .pad_w = 1,
                          .stride_h = 1,
                          .stride_w = 1,
                          .dilation_h = 1,
                          .dilation_w = 1,
                          .groups = 1,
                          .offset_groups = 1,
                          .im2col_step = 32,
                          .use_mask = 1,
                          .use_bias = 1,
                          .semantics = KS_DEFORM_TORCHVISION};
    ks_deform_tensors h = {.input = in.data,
                           .offset = off.data,
                           .mask = m.data,
                           .weight = w.data,
                           .bias = b.data,
                           .output = NULL,
                           .grad_output = go.data,
                           .grad_input = NULL,
                           .grad_offset = NULL,
                           .grad_mask = NULL,
                           .grad_weight = NULL,
                           .grad_bias = NULL,
                           .columns0 = NULL};
    double out[126], gi[84], gof[756], gm[378], gw[54], gb[3];
    ks_deform_ref_grads g = {.grad_input = gi, .grad_offset = gof, .grad_mask = gm, .grad_weight = gw, .grad_bias = gb};
    ks_deform_ref_forward(&p, &h, out);
    ks_deform_ref_backward(&p, &h, &g);
    tu_expect_close(t[0].data, out, 126, 1e-4, "output");
    tu_expect_close(t[1].data, gi, 84, 1e-4, "grad_input");
    tu_expect_close(t[2].data, gof, 756, 1e-4, "grad_offset");
    tu_expect_close(t[3].data, gm, 378, 1e-4, "grad_mask");
    tu_expect_close(t[4].data, gw, 54, 1e-4, "grad_weight");
    tu_expect_close(t[5].data, gb, 3, 1e-4, "grad_bias");
    for (int i = 0; i < 7; ++i) ks_tensor_free(&t[i]);
    ks_tensor *rest[] = {&in, &off, &m, &w, &b, &go};
    for (int i = 0; i < 6; ++i) ks_tensor_free(rest[i]);
    ck_assert_int_eq(kscope("run deform_conv --save d2"), 0);
    ck_assert(exists("d2/output.npy") && exists("d2/columns.npy"));
    ck_assert(!exists("d2/grad_mask.npy") && !exists("d2/grad_input.npy"));
}
END_TEST

/* diff: the same work in another launch is equal (exit 0); other input values differ
 * (exit 1) and the first differing work item is shown side by side, its bar straight; different work is
 * refused (exit 2); --against names the first wrong element and its writer */
START_TEST(diff_compares_work_items_and_outputs)
{
    setup();
    ck_assert_int_eq(kscope("run im2col --in input=in.npy --trace a.kst --save da --quiet"), 0);
    ck_assert_int_eq(kscope("run im2col --in input=in.npy --threads 32 --block-cap 1 --trace b.kst --quiet"), 0);
    ck_assert_int_eq(kscope("diff a.kst b.kst"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "0 of 84 work items differ"));
    ck_assert_int_eq(kscope("run im2col --channels 2 --input-size 6,7 --trace c.kst --quiet"), 0); /* arange input */
    ck_assert_int_eq(kscope("diff a.kst c.kst --max 1 --summary"), 1);
    const char *out = slurp("out");
    ck_assert_ptr_nonnull(strstr(out, "84 of 84 work items differ"));
    ck_assert_ptr_nonnull(strstr(out, "im2col.read_input"));
    ck_assert_ptr_nonnull(strstr(out, "work item 0: first difference at its event"));
    ck_assert_ptr_nonnull(strstr(out, "first differing event:"));
    /* side by side, the bar stays in column 61 even where a line is longer than its column
     * (the work item's first line is): long lines continue on the next row */
    int rows = 0;
    for (const char *line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
        const char *bar = strstr(line, " | "), *end = strchr(line, '\n');
        if (!bar || (end && bar > end)) continue;
        ck_assert_msg(bar - line == 60, "the bar is at column %d: %.*s", (int)(bar - line) + 1,
                      end ? (int)(end - line) : 80, line);
        rows++;
    }
    ck_assert_int_ge(rows, 6);
    ck_assert_int_eq(kscope("run im2col --channels 2 --input-size 6,7 --padding 0 --trace d.kst --quiet"), 0);
    ck_assert_int_eq(kscope("diff a.kst d.kst"), 2);
    ck_assert_ptr_nonnull(strstr(slurp("err"), "different tensors"));
    ck_assert_int_eq(kscope("diff a.kst --against columns=da/columns.npy"), 0);
    /* a reference with element 100 changed: named, with the work item that wrote it */
    ks_tensor ref = load_out("da/columns.npy");
    ((float *)ref.data)[100] += 1.0f;
    char path[128];
    snprintf(path, sizeof path, "%s/ref.npy", dir);
    ck_assert_int_eq(ks_npy_write(path, &ref), KS_OK);
    ks_tensor_free(&ref);
    ck_assert_int_eq(kscope("diff a.kst --against columns=ref.npy"), 1);
    out = slurp("out");
    ck_assert_msg(strstr(out, "1 of 756 elements differ") && strstr(out, "columns[0, 2, 16]") &&
                      strstr(out, "written by work item 16") && strstr(out, "step a.kst --index 16 shows"),
                  "%s", out);
}
END_TEST

/* sparse_conv end to end: int32 sites in, sorted output sites and a rulebook out; then
 * --inverse with that rulebook gives back the original sites */
START_TEST(sparse_conv_runs_and_inverts_from_the_command_line)
{
    setup();
    ck_assert_int_eq(
        kscope("run sparse_conv --stride 2 --padding 1 --in-channels 2 --out-channels 3 --save s1 --quiet"), 0);
    ks_tensor oi = load_out("s1/out_indices.npy"), rb = load_out("s1/rulebook.npy"), pc = load_out("s1/pair_count.npy");
    ck_assert_int_eq(oi.dtype, KS_I32);
    ck_assert_int_eq(rb.shape[1], 3);
    int64_t total = 0;
    for (int k = 0; k < 9; ++k) total += ((int32_t *)pc.data)[k];
    ck_assert_int_eq(total, rb.shape[0]);
    for (int64_t r = 1; r < oi.shape[0]; ++r) { /* sorted by (batch, y, x) */
        const int32_t *a = (int32_t *)oi.data + 3 * (r - 1), *b = a + 3;
        ck_assert(a[0] < b[0] || (a[0] == b[0] && (a[1] < b[1] || (a[1] == b[1] && a[2] < b[2]))));
    }
    ks_tensor_free(&oi), ks_tensor_free(&rb), ks_tensor_free(&pc);
    /* the built-in ring's sites, then the inverse back onto them */
    ck_assert_int_eq(kscope("run sparse_conv --trace s1.kst --quiet"), 0);
    ck_assert_int_eq(kscope("export s1.kst --npy s1x"), 0);
    ck_assert_int_eq(
        kscope("run sparse_conv --inverse --spatial-shape 11,13 --stride 2 --padding 1 --in indices=s1/out_indices.npy "
               "--in inverse_indices=s1x/indices.npy --in rulebook=s1/rulebook.npy --in-channels 3 "
               "--out-channels 2 --save s2 --quiet"),
        0);
    ks_tensor a = load_out("s1x/indices.npy"), b = load_out("s2/out_indices.npy");
    ck_assert_int_eq(ks_tensor_numel(&a), ks_tensor_numel(&b));
    ck_assert(!memcmp(a.data, b.data, (size_t)ks_tensor_numel(&a) * 4));
    ks_tensor_free(&a), ks_tensor_free(&b);
}
END_TEST

/* Issue 39, N8: sparse_conv over no sites (the built-in ring of a 1 x 1 space, or an
 * empty --in indices) exits 0 and writes a trace every reader opens: check passes, info,
 * export and memory read it; each kernel a trace can record. */
START_TEST(sparse_conv_with_no_sites_writes_a_trace_every_reader_opens)
{
    static const char *const kernels[] = {"rulebook", "insert", "gather", "reduce"};
    static const char *const readers[] = {"check z.kst", "info z.kst", "export z.kst --npy zx%d", "memory z.kst"};
    char args[256], cmd[256];
    setup();
    ks_tensor none = {.dtype = KS_I32, .ndim = 2, .shape = {0, 3}};
    char path[128];
    snprintf(path, sizeof path, "%s/none.npy", dir);
    ck_assert_int_eq(ks_npy_write(path, &none), KS_OK);
    for (int k = 0; k < 8; ++k) {
        snprintf(args, sizeof args, "run sparse_conv %s --trace-kernel %s --trace z.kst --save z%d --quiet",
                 k < 4 ? "--spatial-shape 1,1 --kernel-size 1" : "--in indices=none.npy --spatial-shape 5,5",
                 kernels[k % 4], k);
        ck_assert_msg(kscope(args) == 0, "%s: %s", args, slurp("err"));
        for (int r = 0; r < 4; ++r) {
            snprintf(cmd, sizeof cmd, readers[r], k);
            ck_assert_msg(kscope(cmd) == 0, "%s, then %s: %s", args, cmd, slurp("err"));
        }
    }
}
END_TEST

/* --schedule: the trace holds each block's line (block, SM, start, end); export
 * --perfetto writes it as Chrome trace-event JSON: metadata naming the tracks, one
 * complete event per block, in order on the simulator's virtual clock */
START_TEST(schedule_is_recorded_and_exported_for_perfetto)
{
    setup();
    ck_assert_int_eq(kscope("run im2col --channels 4 --input-size 16,16 --threads 64 --trace s.kst --schedule --quiet"),
                     0);
    ck_assert_int_eq(kscope("export s.kst --npy sx --perfetto p.json"), 0);
    ks_tensor sch = load_out("sx/schedule.npy");
    ck_assert_int_eq(sch.dtype, KS_I64);
    ck_assert_int_eq(sch.shape[0], 16); /* 4 * 16 * 16 work items / 64 threads */
    ck_assert_int_eq(sch.shape[1], 4);
    const int64_t *r = sch.data;
    for (int b = 0; b < 16; ++b) {
        ck_assert_int_eq(r[4 * b], b);
        ck_assert_int_eq(r[4 * b + 1], -1); /* the simulator: no SM */
        ck_assert_int_eq(r[4 * b + 2], b * 64);
        ck_assert_int_eq(r[4 * b + 3], (b + 1) * 64);
    }
    ks_tensor_free(&sch);
    cJSON *j = cJSON_Parse(slurp("p.json"));
    ck_assert_msg(cJSON_IsObject(j), "p.json is not JSON");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents"), *e;
    ck_assert(cJSON_IsArray(ev));
    int blocks = 0, tracks = 0;
    double last = -1;
    cJSON_ArrayForEach(e, ev)
    {
        const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "pid")));
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "tid")));
        if (!strcmp(ph, "M")) {
            tracks += !strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, "thread_name");
            continue;
        }
        ck_assert_str_eq(ph, "X");
        const double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
        ck_assert(ts > last && cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble == 64.0);
        last = ts;
        blocks++;
    }
    ck_assert_int_eq(blocks, 16);
    ck_assert_int_eq(tracks, 1);
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "otherData"), "clock")->valuestring,
               "virtual"));
    cJSON_Delete(j);
    ck_assert_int_eq(kscope("run im2col --trace n.kst --quiet"), 0);
    ck_assert_int_eq(kscope("export n.kst --perfetto q.json"), 2);
    ck_assert_ptr_nonnull(strstr(slurp("err"), "has no schedule"));
    ck_assert(!exists("q.json"));
}
END_TEST

/* --image: the picture becomes input (1, 1, H, W) in [0, 1] */
/* kscope --version prints the version the build carries (<kscope/ks_version.h>) */
START_TEST(version_is_printed)
{
    char want[64];
    setup();
    snprintf(want, sizeof want, "kscope %d.%d.%d\n", KS_VERSION_MAJOR, KS_VERSION_MINOR, KS_VERSION_PATCH);
    ck_assert_int_eq(kscope("--version"), 0);
    ck_assert_str_eq(slurp("out"), want);
    ck_assert_str_eq(KS_VERSION_STRING "\n", want + 7);
}
END_TEST

START_TEST(deform_im2col_samples_a_picture)
{
    setup();
    ck_assert_int_eq(
        kscope("run deform_im2col --image pic.pgm --offset-pattern zero --kernel-size 1 --padding 0 --save d3"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "input        (1, 1, 6, 5)"));
    ks_tensor c = load_out("d3/columns.npy");
    ck_assert_int_eq(ks_tensor_numel(&c), 30);
    for (int i = 0; i < 30; ++i) ck_assert_float_eq_tol(((float *)c.data)[i], i * 8 / 255.0f, 1e-6f);
    ks_tensor_free(&c);
    ck_assert_int_eq(kscope("run deform_im2col --image pic.pgm --image-size 3,5 --save d4"), 0);
    ck_assert_ptr_nonnull(strstr(slurp("out"), "input        (1, 1, 3, 5)"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("kscope");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tour_works_on_defaults);
    tcase_add_test(tc, convert_keeps_every_reader_the_same);
    tcase_add_test(tc, integer_values_past_2_24_are_exact);
    tcase_add_test(tc, version_is_printed);
    tcase_add_test(tc, run_on_npy_input_matches_reference_and_round_trips_through_col2im);
    tcase_add_test(tc, check_exits_1_on_a_violating_trace);
    tcase_add_test(tc, bad_input_gets_one_line_exit_2_and_no_output);
    tcase_add_test(tc, deform_conv_backward_saves_every_gradient);
    tcase_add_test(tc, deform_im2col_samples_a_picture);
    tcase_add_test(tc, diff_compares_work_items_and_outputs);
    tcase_add_test(tc, sparse_conv_runs_and_inverts_from_the_command_line);
    tcase_add_test(tc, schedule_is_recorded_and_exported_for_perfetto);
    tcase_add_test(tc, sparse_conv_with_no_sites_writes_a_trace_every_reader_opens);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
