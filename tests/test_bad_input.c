/* Bad command lines (issue 15): each exits 2 with one line on stderr naming the problem,
 * leaves nothing behind and replaces nothing. Every line runs in a folder of fixtures
 * made here (good and broken .npy files, a trace and its corrupt copies, a FIFO, a
 * dangling link, broken lessons); the folder's listing, sizes and times must be the
 * same after the command. Operators as they exist: kscope list OP. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../trace/npy.h"
#include "crafted_trace.h"
#include "test_util.h"

static char dir[64];

typedef struct bad_line {
    const char *args; /* after `kscope`, run in the fixture folder */
    const char *want; /* in the one line on stderr */
} bad_line;

static const bad_line lines[] = {
    /* sizes: zero, negative, huge, products that overflow */
    {.args = "run im2col --stride 0", .want = "--stride must be >= 1 (got 0)"},
    {.args = "run im2col --kernel-size 0", .want = "--kernel-size must be >= 1"},
    {.args = "run im2col --padding -1", .want = "--padding must be >= 0"},
    {.args = "run im2col --dilation 1,0", .want = "--dilation must be >= 1"},
    {.args = "run im2col --input-size 100000000,100000000 --channels 1000", .want = "overflow"},
    {.args = "run im2col --input-size 99999999999999999999", .want = "is not N or H,W"},
    {.args = "run im2col --kernel-size 3,3,3", .want = "is not N or H,W"},
    {.args = "run im2col --batch 0", .want = "--batch must be >= 1"},
    {.args = "run col2im --output-size 0", .want = "--output-size must be >= 1"},
    {.args = "run col2im --output-size 1,1 --kernel-size 5 --padding 0", .want = "output size"},
    {.args = "run roi_align --output-size 0", .want = "--output-size must be >= 1"},
    {.args = "run roi_align --spatial-scale nan", .want = "is not a number"},
    {.args = "run roi_align --spatial-scale 1e999", .want = "is not a number"},
    {.args = "run roi_align --sampling-ratio x", .want = "is not an integer"},
    {.args = "run roi_align --pool-mode median", .want = "must be one of avg|max"},
    {.args = "run roi_align --num-rois -1", .want = "--num-rois must be >= 0"},
    {.args = "run deform_conv --groups 3", .want = "must divide"},
    {.args = "run deform_conv --offset-groups 0", .want = "--offset-groups must be >= 1"},
    {.args = "run deform_conv --im2col-step 0", .want = "--im2col-step must be >= 1"},
    {.args = "run deform_conv --fused 7", .want = "--fused must be one of off|on|24|42|422|44"},
    {.args = "run deform_conv --grad-tile 48 --backward", .want = "--grad-tile P,W: P 0 or a power of 2"},
    {.args = "run deform_conv --gather-tile 16,33", .want = "--gather-tile P,C"},
    {.args = "run deform_conv --grad-kernel fast", .want = "--grad-kernel must be one of auto|tile|tap"},
    {.args = "run deform_conv --semantics caffe", .want = "must be one of"},
    {.args = "run patchify --radius -1", .want = "--radius must be >= 0"},
    {.args = "run patchify --num-points -2", .want = "--num-points must be >= 0"},
    {.args = "run patchify --radius 1000000", .want = "more than this machine's"},
    {.args = "run patchify --trace-kernel both", .want = "must be one of"},
    /* launch flags */
    {.args = "run im2col --threads 0", .want = "--threads must be in 1..1024"},
    {.args = "run im2col --threads 2048", .want = "--threads must be in 1..1024"},
    {.args = "run im2col --block-cap 0", .want = "--block-cap must be >= 1, or -1"},
    {.args = "run im2col --block-cap -5", .want = "--block-cap must be >= 1, or -1"},
    {.args = "run im2col --seed -1", .want = "--seed must be an integer >= 0"},
    {.args = "run im2col --pattern zeros", .want = "--pattern must be arange, ones or random"},
    {.args = "run im2col --device tpu", .want = "--device must be sim or cuda"},
    /* unknown flags and operators, missing values */
    {.args = "run im2col --bogus", .want = "unknown flag '--bogus'"},
    {.args = "run im2col --kernel_size 3", .want = "unknown flag '--kernel_size'"},
    {.args = "run nosuchop", .want = "unknown operator 'nosuchop'"},
    {.args = "run im2col --stride", .want = "--stride needs a value"},
    {.args = "run im2col --trace", .want = "--trace needs a value"},
    {.args = "list nosuchop", .want = "unknown operator 'nosuchop'"},
    {.args = "list im2col col2im", .want = "takes at most one operator"},
    {.args = "nosuchcommand", .want = "unknown command 'nosuchcommand'"},
    /* filters */
    {.args = "run im2col --filter index=5 --trace f.kst", .want = "--filter 'index=5'"},
    {.args = "run im2col --filter index=1:2,,every=2 --trace f.kst", .want = "--filter 'index=1:2,,every=2'"},
    {.args = "run im2col --filter every=0 --trace f.kst", .want = "--filter 'every=0'"},
    {.args = "run im2col --filter index=5:2 --trace f.kst", .want = "--filter 'index=5:2'"},
    {.args = "run im2col --filter thread=1:2 --trace f.kst", .want = "--filter 'thread=1:2'"},
    {.args = "run im2col --filter , --trace f.kst", .want = "--filter ','"},
    {.args = "run im2col --filter index=0:4", .want = "--filter needs --trace"},
    /* .npy inputs: missing, wrong dtype, shape, order, truncated */
    {.args = "run im2col --in input=missing.npy", .want = "missing.npy: cannot open"},
    {.args = "run im2col --in input=int.npy", .want = "int.npy: input must be float32"},
    {.args = "run im2col --in input=flat.npy", .want = "input must have shape (N, C, H, W) (4 dimensions); got (5, 5)"},
    {.args = "run im2col --in input=fortran.npy", .want = "'fortran_order' is neither True nor False"},
    {.args = "run im2col --in input=short.npy", .want = "data is"},
    {.args = "run im2col --in input=long.npy", .want = "data is"},
    {.args = "run im2col --in input=header.npy", .want = "header length"},
    {.args = "run im2col --in input=t.kst", .want = "not a .npy file"},
    {.args = "run im2col --in input=f64.npy", .want = "input must be float32 (<f4), not float64 (<f8)"},
    {.args = "run im2col --in input=fifo", .want = "fifo: not a regular file"},
    {.args = "run im2col --in input=sub", .want = "sub: not a regular file"},
    {.args = "run im2col --in nosuch=good.npy", .want = "has no input tensor 'nosuch'"},
    {.args = "run im2col --in columns=good.npy", .want = "has no input tensor 'columns'"},
    {.args = "run im2col --in input=good.npy --in input=good.npy", .want = "--in input given twice"},
    {.args = "run im2col --in input", .want = "--in takes NAME=FILE.npy"},
    {.args = "run col2im --in columns=good.npy", .want = "columns must have shape (N, C*kh*kw, Ho*Wo)"},
    {.args = "run roi_align --in rois=rois4.npy", .want = "rois must have shape (3, 5); got (3, 4)"},
    {.args = "run roi_align --in rois=badbatch.npy", .want = "batch index 7 is outside"},
    {.args = "run deform_conv --in offset=good.npy", .want = "offset must have shape"},
    {.args = "run patchify --in coords=coords3.npy", .want = "coords must have shape (1, 2, 2); got (1, 2, 3)"},
    /* pictures */
    {.args = "run im2col --image missing.ppm", .want = "missing.ppm: cannot open"},
    {.args = "run im2col --image bad.ppm", .want = "bad PGM/PPM header"},
    {.args = "run im2col --image cut.ppm", .want = "truncated pixel data"},
    {.args = "run im2col --image fifo", .want = "fifo: not a regular file"},
    {.args = "run im2col --image-size 4,4", .want = "--image-size needs --image"},
    {.args = "run im2col --image good.pgm --image-size 100000,100000", .want = "more than the"},
    {.args = "run im2col --image good.pgm --image-size 0,4", .want = "--image-size must be H,W >= 1"},
    /* outputs that cannot be written, special or missing */
    {.args = "run im2col --trace fifo", .want = "fifo: not a regular file"},
    {.args = "run im2col --trace sub", .want = "sub: is a directory"},
    {.args = "run im2col --trace dangling.kst", .want = "symbolic link to a missing file"},
    {.args = "run im2col --trace nodir/t.kst", .want = "nodir/t.kst: cannot create"},
    {.args = "run im2col --save keep.txt", .want = "Not a directory"},
    {.args = "run im2col --save nodir/out", .want = "cannot create directory"},
    /* corrupt and truncated traces, to every reading command */
    {.args = "info missing.kst", .want = "missing.kst: cannot open"},
    {.args = "info fifo", .want = "fifo: not a regular file"},
    {.args = "info sub", .want = "sub: not a regular file"},
    {.args = "info magic.kst", .want = "bad magic"},
    {.args = "info tiny.kst", .want = "too short"},
    {.args = "info cut.kst", .want = "runs past the end of the file"},
    {.args = "check cut.kst", .want = "runs past the end of the file"},
    {.args = "step cut.kst --thread 0", .want = "runs past the end of the file"},
    {.args = "export cut.kst --npy ex", .want = "runs past the end of the file"},
    {.args = "view cut.kst --png v.png", .want = "runs past the end of the file"},
    {.args = "info hcrc.kst", .want = "header checksum mismatch"},
    {.args = "check ecrc.kst", .want = "events checksum mismatch"},
    {.args = "export ecrc.kst --npy ex", .want = "events checksum mismatch"},
    {.args = "info ecrc.kst", .want = "events checksum mismatch"},
    {.args = "info blocks.kst", .want = "blocks is out of range"},
    {.args = "check blocks.kst", .want = "blocks is out of range"},
    {.args = "step blocks.kst --index 0", .want = "blocks is out of range"},
    {.args = "info json.kst", .want = "not valid JSON"},
    {.args = "check version.kst", .want = "unsupported version"},
    {.args = "info", .want = "needs a trace file"},
    {.args = "check t.kst t.kst", .want = "unexpected argument"},
    {.args = "step t.kst", .want = "give exactly one of --thread N or --index N"},
    {.args = "step t.kst --thread -1", .want = "--thread needs an integer >= 0"},
    {.args = "step t.kst --index 99999", .want = "work item 99999 is not in this trace"},
    {.args = "step t.kst --thread 1 --index 2", .want = "give exactly one of"},
    {.args = "export t.kst", .want = "needs --npy DIR"},
    {.args = "convert t.kst", .want = "needs an output file"},
    {.args = "convert t.kst t.kst", .want = "would replace IN"},
    {.args = "convert t.kst c.kst --version 3", .want = "--version is 1 or 2, not '3'"},
    {.args = "convert t.kst c.kst --version", .want = "--version needs 1 or 2"},
    {.args = "convert t.kst c.kst d.kst", .want = "unexpected argument 'd.kst'"},
    {.args = "convert ecrc.kst c.kst", .want = "events checksum mismatch"},
    {.args = "convert cut.kst c.kst", .want = "runs past the end of the file"},
    {.args = "convert t.kst fifo", .want = "fifo: not a regular file"},
    {.args = "convert t.kst sub", .want = "sub: is a directory"},
    {.args = "export t.kst --npy keep.txt", .want = "Not a directory"},
    {.args = "export t.kst --npy nodir/ex", .want = "cannot create directory"},
    /* the viewer's flags */
    {.args = "view t.kst --size 10x10 --png v.png", .want = "--size must be between"},
    {.args = "view t.kst --size big --png v.png", .want = "--size takes WxH"},
    {.args = "view t.kst --headless", .want = "--headless needs --png OUT.png, --frames DIR or --gif OUT.gif"},
    {.args = "view t.kst --every 0 --frames fr", .want = "--every must be an integer >= 1"},
    {.args = "view t.kst --png fifo", .want = "fifo: not a regular file"},
    {.args = "view t.kst --goto index=99999 --png v.png", .want = "99999"},
    {.args = "view t.kst --order sideways --png v.png", .want = "unknown order 'sideways'"},
    {.args = "view t.kst --keys Nope --png v.png", .want = "Nope"},
    /* lessons */
    {.args = "lesson nosuchlesson", .want = "no lesson 'nosuchlesson'"},
    {.args = "lesson json.json", .want = "malformed JSON"},
    {.args = "lesson op.json", .want = "nosuchop"},
    {.args = "lesson big.json", .want = "too big for a lesson"},
    {.args = "lesson items.json", .want = "200000000 work items, more than the 1048576 events"},
    {.args = "lesson tensor.json", .want = "tensor input would have 100000000 elements"},
    {.args = "lesson ./fifo", .want = "./fifo: not a regular file"},
    {.args = "lesson", .want = "which lesson?"},
    {.args = "lesson --list extra", .want = "--list takes nothing else"},
    {.args = "lesson 02 --view --frames fr", .want = "--view and --frames: pick one"},
    {.args = "lesson 02 --size 800x600", .want = "--keys and --size go with --view or --frames"},
    /* round 3 (issue 39). N6: a built-in scene bounded like a run's work, at once */
    {.args = "run sparse_conv --spatial-shape 1073741823,1073741823", .want = "the built-in scene visits every cell"},
    {.args = "lesson sp.json", .want = "the built-in scene visits every cell"},
    /* N12: an output over another output or over an input */
    {.args = "run im2col --trace sub/columns.npy --save sub", .want = "is where --save writes columns"},
    {.args = "run im2col --in input=good.npy --trace good.npy", .want = "would replace the input good.npy"},
    {.args = "run im2col --image good.pgm --trace ./good.pgm", .want = "would replace the input good.pgm"},
    {.args = "run im2col --in input=columns.npy --save .", .want = "would replace the input columns.npy"},
    {.args = "view t.kst --png t.kst", .want = "--png t.kst would replace the input t.kst"},
    {.args = "view t.kst --gif ./t.kst", .want = "--gif ./t.kst would replace the input t.kst"},
    {.args = "view t.kst --png v.png --gif v.png", .want = "--png and --gif both name v.png"},
    {.args = "export t.kst --perfetto t.kst", .want = "--perfetto t.kst would replace the trace"},
    {.args = "export t.kst --npy sub --perfetto sub/events.npy", .want = "is also a file of --npy sub"},
    {.args = "export dup.kst --npy ex", .want = "tensors 0 and 1 are both named 'input'"},
    {.args = "export events.kst --npy ex", .want = "tensor 1 is named 'events'"},
    {.args = "lesson l02.json --gif l02.json", .want = "--gif l02.json would replace the lesson"},
    /* N14: the batch size from the indices, past int32 */
    {.args = "run sparse_conv --in indices=bigbatch.npy --spatial-shape 5,5",
     .want = "must be < 2^30 (got 2147483648)"},
    /* N16: messages, conflicting flags, outputs checked before any work */
    {.args = "step --thread 0 t.kst", .want = "the trace file comes first: kscope step t.kst --thread 0"},
    {.args = "run im2col --trace-limit 1M", .want = "--trace-limit needs --trace FILE.kst"},
    {.args = "view t.kst --every 2 --png v.png", .want = "--every goes with --frames DIR or --gif OUT.gif"},
    {.args = "view t.kst --delay 20 --frames fr", .want = "--delay goes with --gif OUT.gif"},
    {.args = "view t.kst --frames keep.txt", .want = "keep.txt: cannot create directory: Not a directory"},
    {.args = "view t.kst --png nodir/v.png", .want = "nodir/v.png: cannot create"},
    {.args = "export t.kst --npy ex --perfetto p.json", .want = "t.kst has no schedule"},
    {.args = "export t.kst --npy ex --perfetto fifo", .want = "fifo: not a regular file"},
    {.args = "lesson 02 --frames keep.txt", .want = "keep.txt: cannot create directory: Not a directory"},
    {.args = "lesson 02 --gif sub", .want = "sub: is a directory"},
};

static int sh(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void put(const char *name, const void *data, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* A .npy with the given dict and n data bytes (the bytes need not match the shape). */
static void npy_raw(const char *name, const char *dict, size_t data)
{
    unsigned char buf[4096] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    size_t len = strlen(dict), total = 10 + len + 1, pad = (64 - total % 64) % 64;
    ck_assert_uint_lt(10 + len + pad + 1 + data, sizeof buf);
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + len + pad] = '\n';
    buf[8] = (unsigned char)(len + pad + 1);
    for (size_t i = 0; i < data; ++i) buf[10 + len + pad + 1 + i] = (unsigned char)(i * 37 + 11);
    put(name, buf, 10 + len + pad + 1 + data);
}

static void npy_i32(const char *name, int ndim, const int64_t *shape, const int32_t *values)
{
    char path[256];
    ks_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = KS_I32;
    t.ndim = ndim;
    for (int d = 0; d < ndim; ++d) t.shape[d] = shape[d];
    ck_assert_int_eq(ks_tensor_alloc(&t), KS_OK);
    memcpy(t.data, values, (size_t)ks_tensor_numel(&t) * 4);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(ks_npy_write(path, &t), KS_OK);
    ks_tensor_free(&t);
}

static void npy_f32(const char *name, int ndim, const int64_t *shape, const float *values)
{
    char path[256];
    ks_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = KS_F32;
    t.ndim = ndim;
    for (int d = 0; d < ndim; ++d) t.shape[d] = shape[d];
    ck_assert_int_eq(ks_tensor_alloc(&t), KS_OK);
    memcpy(t.data, values, (size_t)ks_tensor_numel(&t) * 4);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(ks_npy_write(path, &t), KS_OK);
    ks_tensor_free(&t);
}

/* A copy of t.kst with byte `at` replaced, or cut to `len` bytes (len > 0). */
static void trace_copy(const char *name, long at, unsigned char byte, long len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/t.kst", dir);
    FILE *f = fopen(path, "rb");
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (at >= 0) buf[at] = byte;
    put(name, buf, len > 0 ? (size_t)len : n);
}

static void lesson_file(const char *name, const char *text) { put(name, text, strlen(text)); }

static void setup(void)
{
    char cmd[512];
    uint64_t s = 1515;
    snprintf(dir, sizeof dir, "/tmp/ks_bad.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    float v[64 * 5];
    for (int i = 0; i < 64 * 5; ++i) v[i] = (float)tu_int(&s, 0, 9) - 2.5f;
    const int64_t good[4] = {1, 2, 5, 5}, flat[2] = {5, 5}, rois4[2] = {3, 4}, coords3[3] = {1, 2, 3};
    npy_f32("good.npy", 4, good, v);
    npy_f32("flat.npy", 2, flat, v);
    npy_f32("rois4.npy", 2, rois4, v);
    npy_f32("coords3.npy", 3, coords3, v);
    const float badbatch[5] = {7, 1, 1, 3, 3};
    const int64_t one_roi[2] = {1, 5};
    npy_f32("badbatch.npy", 2, one_roi, badbatch);
    npy_f32("columns.npy", 4, good, v); /* an input named like im2col's output */
    const int32_t bigbatch[3] = {2147483647, 1, 1};
    const int64_t one_site[2] = {1, 3};
    npy_i32("bigbatch.npy", 2, one_site, bigbatch);
    npy_raw("int.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 16);
    npy_raw("fortran.npy", "{'descr': '<f4', 'fortran_order': None, 'shape': (1, 1, 2, 2), }", 16);
    npy_raw("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 12);
    npy_raw("long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 20);
    npy_raw("f64.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 32);
    put("header.npy", "\x93NUMPY\x01\x00\xff\x7f{'descr'", 18);
    put("bad.ppm", "P6\n0 0\n255\n", 11);
    put("cut.ppm", "P5\n4 4\n255\nabc", 14);
    put("keep.txt", "a file that must stay as it is\n", 31);
    snprintf(cmd, sizeof cmd, "cp %s/lessons/images/shapes.pgm %s/good.pgm", KS_SOURCE_DIR, dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "cd %s && mkfifo fifo && mkdir sub && ln -s gone.kst dangling.kst && "
             "%s run im2col --channels 2 --input-size 5,5 --trace t.kst --quiet",
             dir, KS_CLI);
    ck_assert_int_eq(sh(cmd), 0);
    struct stat st;
    char path[256];
    snprintf(path, sizeof path, "%s/t.kst", dir);
    ck_assert_int_eq(stat(path, &st), 0);
    trace_copy("magic.kst", 0, 'X', 0);
    trace_copy("version.kst", 8, 9, 0);
    trace_copy("hcrc.kst", 26, ' ', 0);                /* the tab before "format": still valid JSON */
    trace_copy("ecrc.kst", st.st_size - 100, 0x5A, 0); /* in its one chunk: the index (32 bytes) and padding follow */
    trace_copy("cut.kst", -1, 0, st.st_size - 64);
    trace_copy("tiny.kst", -1, 0, 12);
    trace_copy("json.kst", -1, 0, 0);
    snprintf(cmd, sizeof cmd, "cd %s && cp t.kst blocks.kst", dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/blocks.kst", dir);
    ct_patch(path, "\"blocks\":\t1,", "\"blocks\":\t9007199254740993,");
    snprintf(path, sizeof path, "%s/json.kst", dir);
    ct_patch(path, "\"launch\":\t{", "\"launch\":\t{{");
    /* tensor names export --npy cannot write: twice the same, and `events` */
    snprintf(cmd, sizeof cmd,
             "cd %s && cp t.kst dup.kst && cp t.kst events.kst && cp %s/lessons/02-im2col.json l02.json", dir,
             KS_SOURCE_DIR);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/dup.kst", dir);
    ct_patch(path, "\"name\":\t\"columns\"", "\"name\":\t\"input\"");
    snprintf(path, sizeof path, "%s/events.kst", dir);
    ct_patch(path, "\"name\":\t\"columns\"", "\"name\":\t\"events\"");
    lesson_file("json.json", "{\"title\": \"t\",\n \"steps\": [ {,} ]\n}\n");
    lesson_file("op.json", "{\"title\": \"t\", \"level\": \"beginner\", \"operator\": \"nosuchop\", "
                           "\"steps\": [{\"title\": \"a\", \"text\": \"x\"}]}\n");
    lesson_file("big.json", "{\"title\": \"big\", \"level\": \"beginner\", \"operator\": \"im2col\", "
                            "\"inputs\": {\"input\": {\"image\": \"good.pgm\", \"size\": [2000, 2000]}}, "
                            "\"steps\": [{\"title\": \"a\", \"text\": \"x\"}]}\n");
    /* sizes from parameters: refused before anything is allocated (it took 15 s) */
    lesson_file("items.json", "{\"title\": \"big\", \"level\": \"beginner\", \"operator\": \"im2col\", "
                              "\"params\": {\"input-size\": [10000, 10000]}, "
                              "\"steps\": [{\"title\": \"a\", \"text\": \"x\"}]}\n");
    lesson_file("sp.json", "{\"title\": \"big\", \"level\": \"beginner\", \"operator\": \"sparse_conv\", "
                           "\"params\": {\"spatial-shape\": [1073741823, 1073741823]}, "
                           "\"steps\": [{\"title\": \"a\", \"text\": \"x\"}]}\n");
    lesson_file("tensor.json", "{\"title\": \"big\", \"level\": \"beginner\", \"operator\": \"roi_align\", "
                               "\"params\": {\"input-size\": [10000, 10000], \"num-rois\": 1}, "
                               "\"steps\": [{\"title\": \"a\", \"text\": \"x\"}]}\n");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(sh(cmd), 0);
}

/* Names, types, sizes and modification times of everything in the folder. */
static void snapshot(char *out, size_t n)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "cd %s && find . -mindepth 1 -path ./.out -prune -o -path ./.err -prune -o "
             "-printf '%%p %%y %%s %%T@\\n' | sort",
             dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = fread(out, 1, n - 1, p);
    out[got] = '\0';
    ck_assert_int_eq(pclose(p), 0);
}

static char *slurp(const char *name) { return tu_slurp(dir, name); }

START_TEST(each_bad_line_exits_2_with_one_line_and_leaves_nothing)
{
    static char before[1 << 14], after[1 << 14];
    const bad_line *b = &lines[_i];
    char cmd[1024];
    snapshot(before, sizeof before);
    snprintf(cmd, sizeof cmd, "cd %s && KSCOPE_LESSONS=%s/lessons timeout 60 %s %s >.out 2>.err </dev/null", dir,
             KS_SOURCE_DIR, KS_CLI, b->args);
    int rc = sh(cmd);
    char *err = slurp(".err");
    /* make test-asan: an allocation the allocator refuses gets a sanitizer warning line
     * before kscope's own (the program then reports it as usual) */
    const char *warn = "WARNING: AddressSanitizer failed to allocate";
    if (!strncmp(err, "==", 2) && strstr(err, warn) && strchr(err, '\n'))
        memmove(err, strchr(err, '\n') + 1, strlen(strchr(err, '\n') + 1) + 1);
    /* a build without the viewer refuses `view` with its own one line */
    int no_viewer = !strncmp(b->args, "view ", 5) && strstr(err, "this build has no viewer");
    ck_assert_msg(rc == 2, "kscope %s: exit %d, stderr:\n%s", b->args, rc, err);
    ck_assert_msg(!strncmp(err, "kscope: ", 8) && strchr(err, '\n') == err + strlen(err) - 1,
                  "kscope %s: not one line on stderr:\n%s", b->args, err);
    ck_assert_msg(no_viewer || strstr(err, b->want), "kscope %s: wanted '%s' in: %s", b->args, b->want, err);
    snapshot(after, sizeof after);
    ck_assert_msg(!strcmp(before, after), "kscope %s changed the folder:\nbefore:\n%s\nafter:\n%s", b->args, before,
                  after);
    ck_assert_str_eq(slurp("keep.txt"), "a file that must stay as it is\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bad_input");
    TCase *tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, setup, teardown); /* once: every line must leave it as it was */
    tcase_add_loop_test(tc, each_bad_line_exits_2_with_one_line_and_leaves_nothing, 0,
                        (int)(sizeof lines / sizeof lines[0]));
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_FORK);
}
