/* libFuzzer: `kscope memory` on a .kst (header CRC fixed up): the analysis, every request
 * one by one, the request of single events, and the command's table and JSON. Property:
 * the requests' counts add up to the report (memory.h says they do). */
#include "../../cli/cli.h"
#include "../../kernels/core/ks_error.h"
#include "../../trace/crc32.h"
#include "../../trace/memory.h"
#include "fz_util.h"

#define FZ_KST_MAX (16u << 10)

typedef struct sums {
    uint64_t requests[KS_MAX_SITES], accesses[KS_MAX_SITES], sectors[KS_MAX_SITES];
} sums;

static int add(void *ctx, int site, const ks_mem_request *req, const ks_mem_access *acc, uint32_t n)
{
    sums *s = ctx;
    if (site < 0 || site >= KS_MAX_SITES || n != req->lanes) abort();
    for (uint32_t i = 1; i < n; ++i)
        if (acc[i].byte < acc[i - 1].byte) abort(); /* sorted by address */
    s->requests[site]++, s->accesses[site] += req->lanes, s->sectors[site] += req->sectors;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ks_trace tr;
    static ks_mem_report rep;
    static sums s;
    if (size > FZ_KST_MAX) return 0;
    const char *path = fz_kst_file("in.kst", data, size);
    if (ks_trace_open(path, &tr) != KS_OK) return 0;
    if (ks_memory_analyze(&tr, &rep) == KS_OK) {
        memset(&s, 0, sizeof s);
        if (ks_memory_each_request(&tr, add, &s) != KS_OK) abort(); /* analyze said yes */
        for (int i = 0; i < rep.nsites; ++i) {
            const ks_mem_site *m = &rep.sites[i];
            if (m->requests != s.requests[m->site] || m->accesses != s.accesses[m->site] ||
                m->sectors != s.sectors[m->site])
                abort();
        }
    }
    ks_mem_access acc[64];
    ks_mem_request req;
    for (uint64_t e = 0; e < tr.nevents; e += 1 + tr.nevents / 8)
        for (int c = 0; c < 4; ++c) (void)ks_memory_request(&tr, &tr.events[e], c, acc, 64, &req);
    char site[KS_NAME_LEN + 1] = "";
    if (tr.nsites) snprintf(site, sizeof site, "%s", tr.sites[tr.nsites - 1].name);
    ks_trace_close(&tr);
    char cmd[] = "memory", json[] = "--json", worst[] = "--worst", eight[] = "8", sflag[] = "--site";
    char *argv1[] = {cmd, (char *)path, json, NULL};
    char *argv2[] = {cmd, (char *)path, worst, eight, sflag, site, NULL};
    ks_cmd_memory(3, argv1);
    ks_cmd_memory(site[0] ? 6 : 4, argv2);
    return 0;
}
