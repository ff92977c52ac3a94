/* libFuzzer: the derived-field formula evaluator alone (trace/formula.h), fast. The input
 * is 32 bytes of field values (eight int32, little-endian; fewer bytes: zeros) and then
 * the formula text. Properties: no signal and no sanitizer report whatever the text and
 * values; the status is one formula.h names; the same call gives the same answer; each
 * field's name alone evaluates to its value. */
#include "../../kernels/core/ks_error.h"
#include "../../trace/formula.h"
#include "fz_util.h"

static const char *const names[KS_WORK_FIELDS] = {"i", "k", "h_im", "w_col", "c", "n", "kh", "kw"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ks_site site;
    static ks_event ev;
    static char expr[4096];
    if (size > 32 + sizeof expr - 1) return 0;
    if (!site.nfields) {
        site.kind = KS_EV_WORK;
        site.tensor = -1;
        site.nfields = KS_WORK_FIELDS;
        for (int f = 0; f < KS_WORK_FIELDS; ++f)
            snprintf(site.fields[f].name, sizeof site.fields[f].name, "%s", names[f]);
    }
    memset(&ev, 0, sizeof ev);
    ev.kind = KS_EV_WORK;
    for (int f = 0; f < KS_WORK_FIELDS; ++f)
        for (int b = 0; b < 4 && (size_t)(4 * f + b) < size; ++b)
            ev.u.field[f] = (int32_t)((uint32_t)ev.u.field[f] | (uint32_t)data[4 * f + b] << (8 * b));
    const size_t n = size > 32 ? size - 32 : 0;
    memcpy(expr, data + (size > 32 ? 32 : size), n);
    expr[n] = '\0';
    int64_t v1 = 0, v2 = 0;
    const int r1 = ks_formula_eval(expr, &site, &ev, &v1), r2 = ks_formula_eval(expr, &site, &ev, &v2);
    if (r1 != KS_OK && r1 != KS_ENOENT && r1 != KS_EINVAL && r1 != KS_ECHECK) abort();
    if (r1 != r2 || (r1 == KS_OK && v1 != v2)) abort();
    for (int f = 0; f < KS_WORK_FIELDS; ++f) {
        int64_t v;
        if (ks_formula_eval(names[f], &site, &ev, &v) != KS_OK || v != ev.u.field[f]) abort();
    }
    return 0;
}
