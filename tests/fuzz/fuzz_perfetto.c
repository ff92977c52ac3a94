/* libFuzzer: `kscope export --perfetto` on a .kst (header CRC fixed up): a trace with a
 * schedule tensor becomes Chrome trace-event JSON. Property: what it writes is JSON that
 * cJSON reads, with the op and device strings as the trace holds them (issue 39, N13). */
#include <cJSON.h>

#include "../../kernels/core/ks_error.h"
#include "../../trace/crc32.h"
#include "../../trace/perfetto.h"
#include "fz_util.h"

#define FZ_KST_MAX (16u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ks_trace tr;
    if (size > FZ_KST_MAX) return 0;
    if (ks_trace_open(fz_kst_file("in.kst", data, size), &tr) != KS_OK) return 0;
    const char *out = fz_path("out.json");
    if (ks_trace_export_perfetto(&tr, out) == KS_OK) {
        FILE *f = fopen(out, "rb");
        if (!f) abort();
        static char text[1 << 22];
        const size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        cJSON *doc = cJSON_Parse(text);
        if (n < sizeof text - 1) {
            if (!doc) abort(); /* not JSON */
            const cJSON *other = cJSON_GetObjectItemCaseSensitive(doc, "otherData");
            const cJSON *op = cJSON_GetObjectItemCaseSensitive(other, "op");
            size_t escaped = 0; /* the writer keeps what fits its 200-byte field, escaped */
            for (const char *c = tr.op; *c; ++c)
                escaped += *c == '"' || *c == '\\' ? 2 : (unsigned char)*c < 0x20 ? 6 : 1;
            if (!cJSON_IsString(op) || (escaped + 8 < 200 && strcmp(op->valuestring, tr.op))) abort();
        }
        cJSON_Delete(doc);
        unlink(out);
    }
    ks_trace_close(&tr);
    return 0;
}
