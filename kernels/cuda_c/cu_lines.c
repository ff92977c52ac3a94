/* cu_lines.c - program counters of the compiled kernel to source locations, through the
 * DWARF line table (elfutils' libdwfl). An access inside an inlined __device__ function
 * gets that function's line: the line the load or store is written on. */
#include "cu_lines.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <string.h>

#include "../core/ks_error.h"

static char *k_debuginfo_path = NULL;
static const Dwfl_Callbacks k_offline = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &k_debuginfo_path,
};

int ks_cu_lines(const char *so, const uint64_t *pcs, int n, ks_cu_loc *out)
{
    Dwfl *d = dwfl_begin(&k_offline);
    if (!d) return ks_fail(KS_ENOMEM, "cannot start libdwfl");
    Dwfl_Module *m = dwfl_report_offline(d, "kernel", so, -1);
    dwfl_report_end(d, NULL, NULL);
    if (!m) {
        dwfl_end(d);
        return ks_fail(KS_EIO, "%s: cannot read its debug information", so);
    }
    Dwarf_Addr start = 0;
    dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    for (int i = 0; i < n; ++i) {
        ks_cu_loc *l = &out[i];
        memset(l, 0, sizeof *l);
        int ln = 0, col = 0;
        const char *file = NULL;
        /* a row of line 0 is code the compiler made (the callback's call may sit in one):
         * the instruction before it with a line is what it belongs to */
        for (uint64_t back = 0; back < 64 && back <= pcs[i] && !ln; ++back) {
            Dwfl_Line *line = dwfl_module_getsrc(m, start + pcs[i] - back);
            file = line ? dwfl_lineinfo(line, NULL, &ln, &col, NULL, NULL) : NULL;
            if (!file) break;
        }
        if (file) {
            snprintf(l->file, sizeof l->file, "%s", file);
            l->line = ln, l->col = col;
        } else { /* no line: the function and offset */
            const char *fn = dwfl_module_addrname(m, start + pcs[i]);
            snprintf(l->file, sizeof l->file, "%s+0x%llx", fn ? fn : "?", (unsigned long long)pcs[i]);
        }
    }
    dwfl_end(d);
    return KS_OK;
}
