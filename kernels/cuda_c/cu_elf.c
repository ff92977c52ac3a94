/* cu_elf.c - the static __shared__ arrays of a compiled kernel, read from its ELF symbol
 * table: every symbol in the ks_cu_shared section, with its offset and size there. A
 * function-local array has a mangled name (_ZZ9transposePfS_iiE4tile); the name the
 * source gives it is the last component (tile). */
#include "cu_build.h"

#include <ctype.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"

/* "_ZZ9transposePfS_iiE4tile_0" -> "tile"; a plain C name stays */
static void source_name(const char *sym, char *out, size_t n)
{
    if (strncmp(sym, "_Z", 2)) {
        snprintf(out, n, "%s", sym);
        return;
    }
    /* the entity after the last 'E' that is followed by <digits><name> */
    const char *best = NULL;
    int best_len = 0;
    for (const char *p = sym; *p; ++p) {
        if (*p != 'E' || !isdigit((unsigned char)p[1])) continue;
        char *end;
        const long len = strtol(p + 1, &end, 10);
        if (len > 0 && (size_t)len <= strlen(end)) best = end, best_len = (int)len;
    }
    if (!best) { /* a namespace-scope name: _ZN2ns4tileE or _Z...: keep the last <len><name> */
        for (const char *p = sym + 2; *p; ++p) {
            if (!isdigit((unsigned char)*p)) continue;
            char *end;
            const long len = strtol(p, &end, 10);
            if (len > 0 && (size_t)len <= strlen(end)) best = end, best_len = (int)len, p = end + len - 1;
        }
    }
    if (best) snprintf(out, n, "%.*s", best_len, best);
    else snprintf(out, n, "%s", sym);
}

int ks_cu_elf_shared(const char *so, ks_cu_sharr *out, int max, int *n, uint64_t *bytes)
{
    *n = 0, *bytes = 0;
    FILE *f = fopen(so, "rb");
    if (!f) return ks_fail(KS_EIO, "%s: cannot open", so);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *img = size > (long)sizeof(Elf64_Ehdr) ? malloc((size_t)size) : NULL;
    const int ok = img && fread(img, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        free(img);
        return ks_fail(KS_EIO, "%s: cannot read", so);
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    int rc = KS_OK;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)size || eh->e_shstrndx >= eh->e_shnum) {
        rc = ks_fail(KS_EFORMAT, "%s: not a 64-bit ELF object", so);
        goto out;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    const char *shstr = (const char *)img + sh[eh->e_shstrndx].sh_offset;
    int shared = -1, symtab = -1;
    for (int i = 0; i < eh->e_shnum; ++i) {
        if (sh[i].sh_name >= sh[eh->e_shstrndx].sh_size) continue;
        if (!strcmp(shstr + sh[i].sh_name, "ks_cu_shared")) shared = i;
        if (sh[i].sh_type == SHT_SYMTAB) symtab = i;
    }
    if (shared < 0) goto out; /* no static __shared__ array */
    *bytes = sh[shared].sh_size;
    if (symtab < 0 || sh[symtab].sh_link >= eh->e_shnum ||
        sh[symtab].sh_offset + sh[symtab].sh_size > (uint64_t)size)
        goto out;
    const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[symtab].sh_offset);
    const Elf64_Shdr *strsec = &sh[sh[symtab].sh_link];
    const char *str = (const char *)img + strsec->sh_offset;
    const size_t nsym = sh[symtab].sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < nsym; ++i) {
        if (sym[i].st_shndx != shared || ELF64_ST_TYPE(sym[i].st_info) != STT_OBJECT || !sym[i].st_size ||
            sym[i].st_name >= strsec->sh_size)
            continue;
        if (*n >= max) {
            rc = ks_fail(KS_EINVAL, "the kernel declares more than %d __shared__ arrays", max);
            goto out;
        }
        ks_cu_sharr *s = &out[(*n)++];
        source_name(str + sym[i].st_name, s->name, sizeof s->name);
        s->offset = sym[i].st_value - sh[shared].sh_addr;
        s->bytes = sym[i].st_size;
    }
out:
    free(img);
    return rc;
}
