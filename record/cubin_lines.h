/* cubin_lines.h - source lines of a cubin's instructions, for the recorder's sites. A
 * cubin built with -lineinfo (or -G) carries a DWARF .debug_line whose sequences start at
 * a kernel's first instruction (relocated against the kernel's symbol); this reads it
 * straight from the ELF image the driver loads, so no tool runs at record time. Every
 * length and offset is checked against the image: a malformed one reads as "no lines". */
#ifndef KS_CUBIN_LINES_H
#define KS_CUBIN_LINES_H

#include <stddef.h>
#include <stdint.h>

typedef struct ks_cubin_row {
    uint32_t fn;   /* index into fns */
    uint32_t addr; /* bytes from the function's first instruction */
    uint32_t file; /* index into files */
    int32_t line;
} ks_cubin_row;

typedef struct ks_cubin_lines {
    char **fns, **files; /* mangled function names; source paths */
    int nfns, nfiles;
    ks_cubin_row *rows; /* sorted by (fn, addr) */
    size_t nrows;
} ks_cubin_lines;

/* Reads the line table of an ELF cubin. 0 with the rows (none for a cubin without line
 * info or not an ELF image), -1 out of memory. */
int ks_cubin_lines_read(const void *image, size_t size, ks_cubin_lines *out);

/* The source line of the instruction `off` bytes into function `fn` (mangled): the last
 * row at or before it, a row inside a CUDA toolkit header (atomicAdd's body, say) standing
 * for the user's line before it. 1 with *file and *line, 0 when unknown. */
int ks_cubin_line_of(const ks_cubin_lines *t, const char *fn, uint32_t off, const char **file, int *line);

void ks_cubin_lines_free(ks_cubin_lines *t);

/* The (mangled) names of the functions whose code an ELF cubin holds (its ".text.NAME"
 * sections): kernels, and device functions not inlined. 0 with *names (free with
 * ks_cubin_names_free), -1 when the image is not an ELF cubin or memory ran out. */
int ks_cubin_functions(const void *image, size_t size, char ***names, int *n);
void ks_cubin_names_free(char **names, int n);

#endif
