/* cubin_lines.c - a cubin's DWARF line table (see cubin_lines.h). The parts used: the
 * section headers, .debug_line, and .rela.debug_line, whose entries name the function
 * symbol each sequence's DW_LNE_set_address is relative to. NVIDIA's own extended
 * opcodes (inline information) are skipped by their length. */
#include "cubin_lines.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const uint8_t *p, *end;
    int bad;
} rd;

static uint64_t u8_(rd *r)
{
    if (r->p >= r->end) return r->bad = 1, 0;
    return *r->p++;
}

static uint64_t fixed(rd *r, int n)
{
    if (r->end - r->p < n) return r->bad = 1, 0;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static uint64_t uleb(rd *r)
{
    uint64_t v = 0;
    for (int s = 0; s < 64; s += 7) {
        const uint64_t b = u8_(r);
        v |= (b & 0x7f) << s;
        if (!(b & 0x80)) return v;
    }
    r->bad = 1;
    return v;
}

static int64_t sleb(rd *r)
{
    int64_t v = 0;
    int s = 0;
    uint64_t b;
    do {
        b = u8_(r);
        if (s < 64) v |= (int64_t)((b & 0x7f) << s);
        s += 7;
    } while ((b & 0x80) && !r->bad);
    if (s < 64 && (b & 0x40)) v |= -((int64_t)1 << s);
    return v;
}

static const char *cstr(rd *r)
{
    const char *s = (const char *)r->p;
    const uint8_t *z = memchr(r->p, 0, (size_t)(r->end - r->p));
    if (!z) return r->bad = 1, "";
    r->p = z + 1;
    return s;
}

static int add_name(char ***v, int *n, const char *s)
{
    for (int i = 0; i < *n; ++i)
        if (!strcmp((*v)[i], s)) return i;
    char **g = realloc(*v, (size_t)(*n + 1) * sizeof *g);
    if (!g) return -1;
    *v = g;
    const size_t len = strlen(s) + 1;
    if (!(g[*n] = malloc(len))) return -1;
    memcpy(g[*n], s, len);
    return (*n)++;
}

typedef struct sect {
    const uint8_t *data;
    uint64_t size;
    const Elf64_Shdr *h;
} sect;

static int section(const uint8_t *img, size_t size, const Elf64_Ehdr *eh, int i, sect *s)
{
    if (i < 0 || i >= eh->e_shnum) return -1;
    const Elf64_Shdr *h = (const Elf64_Shdr *)(img + eh->e_shoff + (size_t)i * eh->e_shentsize);
    if (h->sh_type != SHT_NOBITS && (h->sh_offset > size || h->sh_size > size - h->sh_offset)) return -1;
    s->h = h, s->data = img + h->sh_offset, s->size = h->sh_type == SHT_NOBITS ? 0 : h->sh_size;
    return 0;
}

static int cmp_row(const void *a, const void *b)
{
    const ks_cubin_row *x = a, *y = b;
    if (x->fn != y->fn) return x->fn < y->fn ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int push_row(ks_cubin_lines *t, size_t *cap, ks_cubin_row row)
{
    if (t->nrows == *cap) {
        const size_t c = *cap ? *cap * 2 : 256;
        ks_cubin_row *g = realloc(t->rows, c * sizeof *g);
        if (!g) return -1;
        t->rows = g, *cap = c;
    }
    t->rows[t->nrows++] = row;
    return 0;
}

/* the function a sequence's set_address at .debug_line offset `at` is relative to */
static const char *reloc_fn(const uint8_t *img, size_t size, const Elf64_Ehdr *eh, int line_sec, uint64_t at,
                            int64_t *addend)
{
    for (int i = 0; i < eh->e_shnum; ++i) {
        sect rs, ss, st;
        if (section(img, size, eh, i, &rs) || rs.h->sh_type != SHT_RELA || (int)rs.h->sh_info != line_sec) continue;
        if (section(img, size, eh, (int)rs.h->sh_link, &ss) || section(img, size, eh, (int)ss.h->sh_link, &st))
            return NULL;
        for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs.size; k += sizeof(Elf64_Rela)) {
            Elf64_Rela r;
            memcpy(&r, rs.data + k, sizeof r);
            if (r.r_offset != at) continue;
            const uint64_t si = ELF64_R_SYM(r.r_info);
            if ((si + 1) * sizeof(Elf64_Sym) > ss.size) return NULL;
            Elf64_Sym sym;
            memcpy(&sym, ss.data + si * sizeof sym, sizeof sym);
            if (sym.st_name >= st.size || !memchr(st.data + sym.st_name, 0, st.size - sym.st_name)) return NULL;
            *addend = r.r_addend + (int64_t)sym.st_value;
            return (const char *)st.data + sym.st_name;
        }
    }
    return NULL;
}

/* one line-number program (a unit) from r; rows of sequences relative to a function */
static int read_unit(ks_cubin_lines *t, size_t *cap, rd *r, const uint8_t *base, const uint8_t *img, size_t size,
                     const Elf64_Ehdr *eh, int line_sec)
{
    uint64_t len = fixed(r, 4);
    int off64 = 0;
    if (len == 0xffffffffu) len = fixed(r, 8), off64 = 1;
    if (r->bad || len > (uint64_t)(r->end - r->p)) return r->bad = 1, 0;
    rd u = {r->p, r->p + len, 0};
    r->p += len;
    const unsigned version = (unsigned)fixed(&u, 2);
    const uint64_t hlen = fixed(&u, off64 ? 8 : 4);
    if (u.bad || version < 2 || version > 4 || hlen > (uint64_t)(u.end - u.p)) return 0;
    const uint8_t *prog = u.p + hlen;
    const unsigned min_inst = (unsigned)u8_(&u);
    if (version >= 4) u8_(&u); /* max ops per instruction */
    u8_(&u);                   /* default is_stmt */
    const int line_base = (int8_t)u8_(&u);
    const unsigned line_range = (unsigned)u8_(&u), opcode_base = (unsigned)u8_(&u);
    uint8_t std_len[256] = {0};
    for (unsigned k = 1; k < opcode_base; ++k) std_len[k] = (uint8_t)u8_(&u);
    if (u.bad || line_range == 0 || opcode_base == 0) return 0;
    const char *dirs[256];
    int ndirs = 0;
    while (!u.bad && u.p < prog && *u.p) {
        const char *d = cstr(&u);
        if (ndirs < 256) dirs[ndirs++] = d;
    }
    u8_(&u);
    int file_map[1024];
    int nfiles = 0;
    while (!u.bad && u.p < prog && *u.p) {
        const char *name = cstr(&u);
        const uint64_t di = uleb(&u);
        uleb(&u), uleb(&u);
        char path[1024];
        const size_t b = strlen(name);
        if (name[0] != '/' && di >= 1 && di <= (uint64_t)ndirs && strlen(dirs[di - 1]) + b + 2 <= sizeof path) {
            const size_t a = strlen(dirs[di - 1]);
            memcpy(path, dirs[di - 1], a);
            path[a] = '/';
            memcpy(path + a + 1, name, b + 1);
        } else { /* the name alone, cut to fit */
            const size_t k = b < sizeof path - 1 ? b : sizeof path - 1;
            memcpy(path, name, k);
            path[k] = 0;
        }
        const int id = add_name(&t->files, &t->nfiles, path);
        if (id < 0) return -1;
        if (nfiles < 1024) file_map[nfiles++] = id;
    }
    if (u.bad) return 0;
    u.p = prog;
    uint64_t addr = 0;
    int64_t line = 1;
    uint64_t file = 1;
    int fn = -1;
    while (!u.bad && u.p < u.end) {
        const unsigned op = (unsigned)u8_(&u);
        int emit = 0;
        if (op >= opcode_base) {
            const unsigned adj = op - opcode_base;
            addr += (adj / line_range) * min_inst;
            line += line_base + (int)(adj % line_range);
            emit = 1;
        } else if (op == 0) {
            const uint64_t n = uleb(&u);
            if (n == 0 || n > (uint64_t)(u.end - u.p)) break;
            const uint8_t *next = u.p + n;
            const unsigned sub = (unsigned)u8_(&u);
            if (sub == 1) { /* end of sequence */
                addr = 0, line = 1, file = 1, fn = -1;
            } else if (sub == 2) { /* set address: relative to the function its relocation names */
                const uint64_t at = (uint64_t)(u.p - base);
                const uint64_t v = fixed(&u, (int)(n - 1 > 8 ? 8 : n - 1));
                int64_t add = 0;
                const char *f = reloc_fn(img, size, eh, line_sec, at, &add);
                fn = f ? add_name(&t->fns, &t->nfns, f) : -1;
                if (f && fn < 0) return -1;
                addr = v + (uint64_t)add;
            }
            u.p = next;
        } else {
            switch (op) {
            case 1: emit = 1; break;                                              /* copy */
            case 2: addr += uleb(&u) * min_inst; break;                           /* advance pc */
            case 3: line += sleb(&u); break;                                      /* advance line */
            case 4: file = uleb(&u); break;                                       /* set file */
            case 8: addr += ((255 - opcode_base) / line_range) * min_inst; break; /* const add pc */
            case 9: addr += fixed(&u, 2); break;                                  /* fixed advance pc */
            default:
                for (unsigned k = 0; k < std_len[op]; ++k) uleb(&u);
                break;
            }
        }
        if (emit && fn >= 0 && file >= 1 && file <= (uint64_t)nfiles && line > 0 && line < INT32_MAX &&
            addr < UINT32_MAX) {
            const ks_cubin_row row = {(uint32_t)fn, (uint32_t)addr, (uint32_t)file_map[file - 1], (int32_t)line};
            if (push_row(t, cap, row)) return -1;
        }
    }
    return 0;
}

/* An ELF64 image's header and section-name table, every offset checked against its
 * size; -1 when it is not one (or a malformed one). */
static int elf_open(const uint8_t *img, size_t size, Elf64_Ehdr *eh, sect *names)
{
    if (!img || size < sizeof(Elf64_Ehdr) || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64) return -1;
    memcpy(eh, img, sizeof *eh);
    if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
        (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size - eh->e_shoff || eh->e_shstrndx >= eh->e_shnum ||
        eh->e_shoff % 8)
        return -1;
    return section(img, size, eh, eh->e_shstrndx, names);
}

int ks_cubin_lines_read(const void *image, size_t size, ks_cubin_lines *out)
{
    memset(out, 0, sizeof *out);
    const uint8_t *img = image;
    Elf64_Ehdr eh;
    sect names;
    if (elf_open(img, size, &eh, &names)) return 0;
    size_t cap = 0;
    for (int i = 0; i < eh.e_shnum; ++i) {
        sect s;
        if (section(img, size, &eh, i, &s) || s.h->sh_name >= names.size) continue;
        const char *nm = (const char *)names.data + s.h->sh_name;
        if (!memchr(nm, 0, names.size - s.h->sh_name) || strcmp(nm, ".debug_line")) continue;
        rd r = {s.data, s.data + s.size, 0};
        while (!r.bad && r.p < r.end)
            if (read_unit(out, &cap, &r, s.data, img, size, &eh, i)) {
                ks_cubin_lines_free(out);
                return -1;
            }
    }
    if (out->nrows) qsort(out->rows, out->nrows, sizeof *out->rows, cmp_row);
    return 0;
}

int ks_cubin_functions(const void *image, size_t size, char ***names, int *n)
{
    *names = NULL, *n = 0;
    const uint8_t *img = image;
    Elf64_Ehdr eh;
    sect names_sec;
    if (elf_open(img, size, &eh, &names_sec)) return -1;
    int cap = 0, i = 0;
    for (; i < eh.e_shnum; ++i) { /* a function's code is the section ".text.NAME" */
        sect s;
        if (section(img, size, &eh, i, &s) || s.h->sh_name >= names_sec.size) continue;
        const char *nm = (const char *)names_sec.data + s.h->sh_name;
        if (!memchr(nm, 0, names_sec.size - s.h->sh_name) || strncmp(nm, ".text.", 6) || !nm[6]) continue;
        /* appended as they come (section names are unique in an ELF; comparing each with
         * every earlier one took 1.5 s for 20 000 long C++ names) */
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(*names, (size_t)cap * sizeof *grown);
            if (!grown) break;
            *names = grown;
        }
        const size_t len = strlen(nm + 6) + 1;
        char *copy = malloc(len);
        if (!copy) break;
        memcpy(copy, nm + 6, len);
        (*names)[(*n)++] = copy;
    }
    if (i < eh.e_shnum) { /* out of memory */
        ks_cubin_names_free(*names, *n);
        *names = NULL, *n = 0;
        return -1;
    }
    return 0;
}

void ks_cubin_names_free(char **names, int n)
{
    for (int i = 0; i < n; ++i) free(names[i]);
    free(names);
}

/* a header of the CUDA toolkit (device_atomic_functions.hpp, ...): not the user's line */
static int toolkit_file(const char *p)
{
    return (strstr(p, "/targets/") && strstr(p, "/include/")) || strstr(p, "/cuda/include/") || strstr(p, "/crt/");
}

int ks_cubin_line_of(const ks_cubin_lines *t, const char *fn, uint32_t off, const char **file, int *line)
{
    int f = -1;
    for (int i = 0; i < t->nfns && f < 0; ++i)
        if (!strcmp(t->fns[i], fn)) f = i;
    if (f < 0) return 0;
    size_t lo = 0, hi = t->nrows; /* first row of fn with addr > off */
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        const ks_cubin_row *r = &t->rows[mid];
        if (r->fn < (uint32_t)f || (r->fn == (uint32_t)f && r->addr <= off)) lo = mid + 1;
        else hi = mid;
    }
    for (size_t k = lo; k-- > 0 && t->rows[k].fn == (uint32_t)f;) {
        if (toolkit_file(t->files[t->rows[k].file])) continue;
        *file = t->files[t->rows[k].file];
        *line = t->rows[k].line;
        return 1;
    }
    return 0;
}

void ks_cubin_lines_free(ks_cubin_lines *t)
{
    for (int i = 0; i < t->nfns; ++i) free(t->fns[i]);
    for (int i = 0; i < t->nfiles; ++i) free(t->files[i]);
    free(t->fns);
    free(t->files);
    free(t->rows);
    memset(t, 0, sizeof *t);
}
