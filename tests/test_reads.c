/* kscope diff --reads-by on the CPU: upstream kernels, written here from their published
 * index math (ATen's im2col, torchvision's roi_align forward: operator-semantics.md 2 and
 * 4.1), are "recorded" as the recorder's device callbacks would record them
 * (record/record.h records: one thread per output element, every load and store in program
 * order) and compared with KernelScope's own operators' traces of the same inputs. The
 * operators must read exactly the elements upstream reads for every output element, as
 * many times; a planted one-element slip in the upstream recording must be found and named.
 * Random inputs, odd sizes, fixed seeds; RoIs partly outside the image (the clamps). */
#include <math.h>
#include <sys/wait.h>

#include "../record/record_int.h"
#include "../trace/npy.h"
#include "test_util.h"

#define MAXREC 200000

static const uint64_t A_IN = 0x7f0000000000ull, A_OUT = 0x7f0000400000ull, A_ROIS = 0x7f0000800000ull;
static float *g_in, *g_out, *g_rois;
static int64_t g_nin, g_nout, g_nrois;

static int copy_fn(void *dst, uint64_t addr, size_t bytes, void *ctx)
{
    (void)ctx;
    const struct {
        uint64_t a;
        const float *p;
        int64_t n;
    } m[3] = {{A_IN, g_in, g_nin}, {A_OUT, g_out, g_nout}, {A_ROIS, g_rois, g_nrois}};
    for (int i = 0; i < 3; ++i)
        if (m[i].p && addr >= m[i].a && addr + bytes <= m[i].a + 4u * (uint64_t)m[i].n) {
            memcpy(dst, (const uint8_t *)m[i].p + (addr - m[i].a), bytes);
            return 0;
        }
    return -1;
}

/* the records of one synthetic launch, in program order per thread (threads one after
 * another: the trace orders by thread and sequence, not by slot) */
static ks_rec g_recs[MAXREC];
static uint64_t g_n, g_reads;

static void rec(uint64_t addr, uint32_t pc, int64_t thread, int write, const float *v)
{
    ck_assert(g_n < MAXREC);
    uint32_t bits;
    memcpy(&bits, v, 4);
    g_reads += !write;
    g_recs[g_n++] = (ks_rec){
        addr, pc,  (uint32_t)(thread / 128), (uint16_t)(thread % 128), 4, (uint8_t)(write ? KS_REC_WRITE : KS_REC_READ),
        0,    bits};
}

static void write_launch(const char *path, const char *kernel, int64_t threads, const ks_rec_buf *bufs, int nbufs)
{
    ks_rec_launch L;
    memset(&L, 0, sizeof L);
    snprintf(L.kernel, sizeof L.kernel, "%s", kernel);
    ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
    snprintf(L.device, sizeof L.device, "test GPU");
    const uint32_t blocks = (uint32_t)((threads + 127) / 128);
    L.grid[0] = blocks, L.grid[1] = L.grid[2] = 1, L.block[0] = 128, L.block[1] = L.block[2] = 1;
    L.filter = (ks_filter){0, (int64_t)blocks * 128, 0, blocks, 1};
    L.recs = g_recs, L.nrecs = g_n, L.bufs = bufs, L.nbufs = nbufs, L.copy = copy_fn;
    ck_assert_msg(ks_rec_write_trace(&L, path) == KS_OK, "%s", ks_error_message());
}

static int kscope_out(const char *args, char *out, size_t n)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s %s > reads_out.txt 2>&1", KS_CLI, args);
    const int st = system(cmd);
    FILE *f = fopen("reads_out.txt", "r");
    size_t got = f ? fread(out, 1, n - 1, f) : 0;
    out[got] = '\0';
    if (f) fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void save_npy(const char *path, float *data, int ndim, const int64_t *shape)
{
    ks_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = KS_F32, t.ndim = ndim, t.data = data;
    for (int k = 0; k < ndim; ++k) t.shape[k] = shape[k];
    ck_assert_msg(ks_npy_write(path, &t) == KS_OK, "%s", ks_error_message());
}

/* ATen's im2col kernel for one image: thread (c, ho, wo), taps row-major, a load when the
 * tap is inside, a store of the column entry either way. slip: the thread whose one tap
 * reads one element to the right (-1: none). */
enum { C = 3, H = 7, W = 9, KH = 3, KW = 2, PH = 1, PW = 0, SH = 2, SW = 1, DH = 1, DW = 2 };
enum { HO = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1, WO = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1 };

static void aten_im2col(int64_t slip)
{
    g_n = g_reads = 0;
    for (int64_t th = 0; th < C * HO * WO; ++th) {
        const int64_t wo = th % WO, ho = th / WO % HO, c = th / WO / HO;
        for (int i = 0; i < KH; ++i)
            for (int j = 0; j < KW; ++j) {
                const int64_t y = ho * SH - PH + i * DH, x = wo * SW - PW + j * DW + (th == slip && i == 1 && j == 1);
                float v = 0;
                if (y >= 0 && y < H && x >= 0 && x < W) {
                    v = g_in[(c * H + y) * W + x];
                    rec(A_IN + 4u * (uint64_t)((c * H + y) * W + x), 0x40, th, 0, &v);
                }
                const int64_t col = ((c * KH + i) * KW + j) * (HO * WO) + ho * WO + wo;
                g_out[col] = v;
                rec(A_OUT + 4u * (uint64_t)col, 0x80, th, 1, &v);
            }
    }
}

START_TEST(im2col_reads_match_aten)
{
    uint64_t s = 11;
    g_nin = C * H * W, g_nout = C * KH * KW * HO * WO, g_nrois = 0;
    g_in = tu_random(&s, g_nin), g_out = calloc((size_t)g_nout, 4), g_rois = NULL;
    const int64_t ish[4] = {1, C, H, W};
    save_npy("reads_x.npy", g_in, 4, ish);
    char out[8192];
    int rc = kscope_out("run im2col --in input=reads_x.npy --kernel-size 3,2 --padding 1,0 --stride 2,1 "
                        "--dilation 1,2 --trace reads_ours.kst --quiet",
                        out, sizeof out);
    ck_assert_msg(rc == 0, "run im2col: %d: %s", rc, out);
    ks_rec_buf bufs[2] = {{A_IN, 4u * (uint64_t)g_nin, "input", 1, KS_F32, 4, {1, C, H, W}},
                          {A_OUT, 4u * (uint64_t)g_nout, "columns", 1, KS_F32, 3, {1, C * KH * KW, HO * WO}}};
    aten_im2col(-1);
    write_launch("reads_up.kst", "void at::native::im2col_kernel<float>(long, float const*, ...)", C * HO * WO, bufs,
                 2);
    rc = kscope_out("diff reads_up.kst reads_ours.kst --reads-by columns", out, sizeof out);
    ck_assert_msg(rc == 0, "diff --reads-by columns: %d: %s", rc, out);
    char want[96];
    /* a column entry with no read (padding) is no key on either side: one key a read */
    snprintf(want, sizeof want, "reads of input by element of columns: 0 of %llu differ", (unsigned long long)g_reads);
    ck_assert_msg(strstr(out, want), "%s", out);
    /* keyed by work item: ATen's thread (c, ho, wo) is our item (n, c, h_col, w_col) */
    rc = kscope_out("diff reads_up.kst reads_ours.kst --reads-by item --reads-of input", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "0 of"), "diff --reads-by item: %d: %s", rc, out);

    /* the slip: thread (c=1, ho=2, wo=3)'s tap (1, 1) reads x + 1: that column entry
     * differs, named with its coordinates and the two elements */
    const int64_t slip = (1 * HO + 2) * WO + 3;
    aten_im2col(slip);
    write_launch("reads_up.kst", "void at::native::im2col_kernel<float>(long, float const*, ...)", C * HO * WO, bufs,
                 2);
    rc = kscope_out("diff reads_up.kst reads_ours.kst --reads-by columns", out, sizeof out);
    ck_assert_msg(rc == 1, "the slip: exit %d: %s", rc, out);
    snprintf(want, sizeof want, "columns[0, %d, %d]: 1 reads", (1 * KH + 1) * KW + 1, 2 * WO + 3);
    ck_assert_msg(strstr(out, "1 of ") && strstr(out, want), "%s", out);
    const int64_t y = 2 * SH - PH + DH, x = 3 * SW - PW + DW;
    snprintf(want, sizeof want, "only in reads_up.kst (or more often): input[0, 1, %lld, %lld]", (long long)y,
             (long long)x + 1);
    ck_assert_msg(strstr(out, want), "%s", out);
    snprintf(want, sizeof want, "only in reads_ours.kst (or more often): input[0, 1, %lld, %lld]", (long long)y,
             (long long)x);
    ck_assert_msg(strstr(out, want), "%s", out);

    /* bad input: a tensor neither names, a key tensor one side lacks, a shape that differs */
    ck_assert_int_eq(kscope_out("diff reads_up.kst reads_ours.kst --reads-by nothing", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "no tensor 'nothing'"), "%s", out);
    ck_assert_int_eq(kscope_out("diff reads_up.kst reads_ours.kst --reads-by columns --reads-of rois", out, sizeof out),
                     2);
    ck_assert_int_eq(kscope_out("diff reads_up.kst reads_ours.kst --reads-of input", out, sizeof out), 2);
    bufs[0].shape[3] = W - 1, bufs[0].bytes -= 4u * C * H;
    write_launch("reads_up.kst", "void at::native::im2col_kernel<float>(long, float const*, ...)", C * HO * WO, bufs,
                 2);
    ck_assert_int_eq(kscope_out("diff reads_up.kst reads_ours.kst --reads-by columns", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "tensor 'input' is"), "%s", out);
    free(g_in), free(g_out);
}
END_TEST

/* torchvision's roi_align forward (operator-semantics.md 4.1), one thread per output
 * element (n, c, ph, pw): the RoI's five floats, then each sample's four corners
 * (clamped corners read twice), nothing for a sample outside [-1, H] x [-1, W]. */
enum { RN = 2, RC = 3, RH = 7, RW = 9, RK = 6, RPH = 3, RPW = 2 };

static void tv_roi_align(int sr, int aligned)
{
    g_n = 0;
    for (int64_t th = 0; th < RK * RC * RPH * RPW; ++th) {
        const int pw = (int)(th % RPW), ph = (int)(th / RPW % RPH), c = (int)(th / RPW / RPH % RC),
                  n = (int)(th / RPW / RPH / RC);
        const float *roi = g_rois + n * 5;
        for (int k = 0; k < 5; ++k) rec(A_ROIS + 4u * (uint64_t)(n * 5 + k), 0x20, th, 0, &roi[k]);
        const int b = (int)roi[0];
        const float off = aligned ? 0.5f : 0.f, x1 = roi[1] - off, y1 = roi[2] - off;
        float rw = roi[3] - off - x1, rh = roi[4] - off - y1;
        if (!aligned) rw = fmaxf(rw, 1.f), rh = fmaxf(rh, 1.f);
        const float bh = rh / RPH, bw = rw / RPW;
        const int gh = sr > 0 ? sr : (int)ceilf(rh / RPH), gw = sr > 0 ? sr : (int)ceilf(rw / RPW);
        const float *plane = g_in + ((int64_t)b * RC + c) * RH * RW;
        float acc = 0;
        for (int iy = 0; iy < gh; ++iy)
            for (int ix = 0; ix < gw; ++ix) {
                float y = y1 + ph * bh + ((float)iy + .5f) * bh / (float)gh;
                float x = x1 + pw * bw + ((float)ix + .5f) * bw / (float)gw;
                if (!(y >= -1.f && y <= RH && x >= -1.f && x <= RW)) continue;
                if (y <= 0) y = 0;
                if (x <= 0) x = 0;
                int yl = (int)y, xl = (int)x, yh, xh;
                if (yl >= RH - 1) yh = yl = RH - 1, y = (float)yl;
                else yh = yl + 1;
                if (xl >= RW - 1) xh = xl = RW - 1, x = (float)xl;
                else xh = xl + 1;
                const int at[4] = {yl * RW + xl, yl * RW + xh, yh * RW + xl, yh * RW + xh};
                const float ly = y - yl, lx = x - xl,
                            w[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
                for (int k = 0; k < 4; ++k) {
                    rec(A_IN + 4u * (uint64_t)(plane - g_in + at[k]), 0x40, th, 0, &plane[at[k]]);
                    acc += w[k] * plane[at[k]];
                }
            }
        g_out[th] = acc / (float)(gh * gw > 0 ? gh * gw : 1);
        rec(A_OUT + 4u * (uint64_t)th, 0x80, th, 1, &g_out[th]);
    }
}

START_TEST(roi_align_reads_match_torchvision)
{
    uint64_t s = 23;
    g_nin = RN * RC * RH * RW, g_nout = RK * RC * RPH * RPW, g_nrois = RK * 5;
    g_in = tu_random(&s, g_nin), g_out = calloc((size_t)g_nout, 4), g_rois = malloc(4u * (size_t)g_nrois);
    for (int k = 0; k < RK; ++k) { /* boxes from 2 pixels before the image to 2 past it */
        float *r = g_rois + 5 * k;
        r[0] = (float)(k % RN);
        const float xa = (float)tu_int(&s, -80, 40 * RW) / 40.f - 2.f,
                    ya = (float)tu_int(&s, -80, 40 * RH) / 40.f - 2.f;
        r[1] = xa, r[2] = ya, r[3] = xa + (float)tu_int(&s, 4, 40 * RW) / 40.f,
        r[4] = ya + (float)tu_int(&s, 4, 40 * RH) / 40.f;
    }
    const int64_t ish[4] = {RN, RC, RH, RW}, rsh[2] = {RK, 5};
    save_npy("reads_x.npy", g_in, 4, ish);
    save_npy("reads_r.npy", g_rois, 2, rsh);
    ks_rec_buf bufs[3] = {{A_IN, 4u * (uint64_t)g_nin, "input", 1, KS_F32, 4, {RN, RC, RH, RW}},
                          {A_OUT, 4u * (uint64_t)g_nout, "output", 1, KS_F32, 4, {RK, RC, RPH, RPW}},
                          {A_ROIS, 4u * (uint64_t)g_nrois, "rois", 1, KS_F32, 2, {RK, 5}}};
    char out[8192], args[600];
    const struct {
        int sr, aligned;
    } cases[4] = {{2, 1}, {2, 0}, {0, 1}, {0, 0}};
    for (int i = 0; i < 4; ++i) {
        snprintf(args, sizeof args,
                 "run roi_align --in input=reads_x.npy --in rois=reads_r.npy --output-size %d,%d "
                 "--sampling-ratio %d --%saligned --trace reads_ours.kst --quiet",
                 RPH, RPW, cases[i].sr, cases[i].aligned ? "" : "no-");
        int rc = kscope_out(args, out, sizeof out);
        ck_assert_msg(rc == 0, "%s: %d: %s", args, rc, out);
        tv_roi_align(cases[i].sr, cases[i].aligned);
        write_launch("reads_up.kst", "void roi_align_forward_kernel_impl<float>(int, float const*, ...)",
                     RK * RC * RPH * RPW, bufs, 3);
        rc = kscope_out("diff reads_up.kst reads_ours.kst --reads-by output --reads-of input --max 2", out, sizeof out);
        ck_assert_msg(rc == 0, "sr %d aligned %d: %d: %s", cases[i].sr, cases[i].aligned, rc, out);
        ck_assert_msg(strstr(out, "0 of "), "%s", out);
    }
    free(g_in), free(g_out), free(g_rois);
    g_rois = NULL;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reads");
    TCase *tc = tcase_create("reads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, im2col_reads_match_aten);
    tcase_add_test(tc, roi_align_reads_match_torchvision);
    suite_add_tcase(s, tc);
    return tu_run_suite(s, CK_NOFORK);
}
