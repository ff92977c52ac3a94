/* cu_lines.h - source locations of a compiled kernel's program counters. */
#ifndef KS_CU_LINES_H
#define KS_CU_LINES_H

#include <stdint.h>

typedef struct ks_cu_loc {
    char file[256]; /* as the debug information names it; without lines: "function+0xPC" */
    int line, col;  /* 0 when unknown */
} ks_cu_loc;

/* One location per module-relative program counter. KS_OK, or KS_EIO / KS_ENOMEM. */
int ks_cu_lines(const char *so, const uint64_t *pcs, int n, ks_cu_loc *out);

#endif
