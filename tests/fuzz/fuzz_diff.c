/* libFuzzer: `kscope diff` on two traces. The input is a 4-byte little-endian length n,
 * then trace A (n bytes, cut to what is there) and trace B (the rest); each gets its
 * header CRC fixed up (fz_kst_file). Both go through the library (compatible, run, find
 * every first differing item and compare its events) and the command itself (the
 * summary and the side-by-side listing, and --against with A's first tensor saved as
 * .npy from B when B opens), and --reads-by (by each tensor of A's first four and by item,
 * the first differing keys printed). Properties: a trace compared with itself never
 * differs, by item or by reads. */
#include "../../cli/cli.h"
#include "../../kernels/core/ks_error.h"
#include "../../trace/crc32.h"
#include "../../trace/diff.h"
#include "../../trace/npy.h"
#include "../../trace/reads.h"
#include "fz_util.h"

#define FZ_KST_MAX (16u << 10) /* each trace: the readers are linear in the events */

static void library(const ks_trace *a, const ks_trace *b)
{
    ks_diff d;
    if (ks_diff_compatible(a, b) != KS_OK || ks_diff_run(&d, a, b, 1e-5) != KS_OK) return;
    for (int k = 0; k < d.nfirst; ++k)
        for (int side = 0; side < 2; ++side) {
            const ks_diff_item it = ks_diff_find(&d, side, d.first[k]);
            for (uint64_t e = 0; e + 1 < it.n && e < 64; ++e) (void)ks_diff_same_event(it.ev[e], it.ev[e + 1], 1e-5);
        }
    if (a == b && d.differing) abort(); /* a trace against itself */
    ks_diff_free(&d);
}

static void reads(const ks_trace *a, const ks_trace *b)
{
    for (int k = -1; k < a->ntensors && k < 4; ++k) {
        ks_reads r;
        if (ks_reads_compare(&r, a, b, k < 0 ? NULL : a->tensors[k].name, NULL, 0) != KS_OK) continue;
        if (a == b && r.differing) abort(); /* a trace against itself */
        FILE *null = fopen("/dev/null", "w");
        for (int f = 0; f < r.nfirst && f < 3 && null; ++f) ks_reads_print_key(null, &r, a, b, "a", "b", r.first[f], 6);
        if (null) fclose(null);
        ks_reads_free(&r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ks_trace a, b;
    if (size < 4) return 0;
    size_t n = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
    data += 4, size -= 4;
    if (n > size) n = size;
    if (n > FZ_KST_MAX || size - n > FZ_KST_MAX) return 0;
    const char *pa = fz_kst_file("a.kst", data, n), *pb = fz_kst_file("b.kst", data + n, size - n);
    const int oa = ks_trace_open(pa, &a) == KS_OK, ob = ks_trace_open(pb, &b) == KS_OK;
    if (oa) library(&a, &a), reads(&a, &a);
    if (oa && ob) library(&a, &b), reads(&a, &b);
    char ref[400] = "";
    if (oa && ob && a.ntensors > 0) { /* A's first tensor against B's tensor of that name */
        const int t = ks_trace_tensor(&b, a.tensors[0].name);
        if (t >= 0 && ks_npy_write(fz_path("ref.npy"), &b.tensors[t]) == KS_OK)
            snprintf(ref, sizeof ref, "%s=%s", a.tensors[0].name, fz_path("ref.npy"));
    }
    if (oa) ks_trace_close(&a);
    if (ob) ks_trace_close(&b);
    if (!oa) return 0;
    /* the command: the listing of the first items, the summary, --against */
    char cmd[] = "diff", sum[] = "--summary", max[] = "--max", five[] = "5", ag[] = "--against";
    char *argv1[] = {cmd, (char *)pa, (char *)pb, sum, max, five, NULL};
    ks_cmd_diff(6, argv1);
    if (ref[0]) {
        char *argv2[] = {cmd, (char *)pa, ag, ref, NULL};
        ks_cmd_diff(4, argv2);
    }
    return 0;
}
