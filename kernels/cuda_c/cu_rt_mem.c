/* cu_rt_mem.c - every load, store and atomic of a .cu kernel: the sanitizer-coverage
 * callbacks clang puts before each memory instruction of the user's file, classified by
 * address, recorded as events, and stopped when they fall outside every buffer.
 *
 * An address is, in this order: the running thread's own stack (local memory: not
 * recorded); a buffer (a pointer argument), a static __shared__ array or the dynamic
 * shared memory (recorded, one event per element it covers); the module's own image or
 * the built-in variables (globals and constants: not recorded); or nothing, which is a
 * finding: the access is recorded at the nearest buffer (an offset past its end, or
 * before its start), not made, and the thread stops there. A callback comes before its
 * instruction, so a store's value is read at the thread's next callback (or when it
 * yields or ends) and written into its events then.
 */
#include "cu_rt_int.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { R_BUF, R_SHARED, R_IGNORE };

typedef struct region {
    uintptr_t lo, hi;
    int kind, tensor;
    uint32_t elem;
    int dtype;
    int64_t rows, cols; /* the last two dimensions, for (plane, y, x) */
} region;

#define MAX_REGIONS (KS_CU_MAX_BUFS + KS_CU_MAX_SHARED + 16)
static region g_reg[MAX_REGIONS]; /* buffers and shared arrays */
static int g_nreg, g_last;
static region g_ign[16]; /* the module image and the built-ins: looked at last */
static int g_nign;

/* static __shared__ arrays: slots of one arena, each followed by a guard gap */
#define SLOT_GAP 4096 /* an index up to 4 KiB past an array touches no other */
static unsigned char g_arena[KS_CU_STATIC_SMEM + KS_CU_MAX_SHARED * 2 * SLOT_GAP] __attribute__((aligned(256)));
static uint64_t g_arena_used;
static unsigned char g_slot_set[KS_CU_MAX_SHARED];

/* site ids: (program counter) -> raw site, open addressing */
#define SITE_SLOTS 16384
static uintptr_t g_site_pc[SITE_SLOTS];
static uint32_t g_site_id[SITE_SLOTS];

static void add_region(uintptr_t lo, uintptr_t hi, int kind, int tensor, uint32_t elem, int dtype, int64_t rows,
                       int64_t cols)
{
    if (g_nreg < MAX_REGIONS)
        g_reg[g_nreg++] = (region){.lo = lo,
                                   .hi = hi,
                                   .kind = kind,
                                   .tensor = tensor,
                                   .elem = elem,
                                   .dtype = dtype,
                                   .rows = rows > 0 ? rows : 1,
                                   .cols = cols > 0 ? cols : 1};
}

void ks_cu_mem_ignore(uintptr_t lo, uintptr_t hi)
{
    if (g_nign < 16) g_ign[g_nign++] = (region){.lo = lo, .hi = hi, .kind = R_IGNORE, .tensor = -1, .elem = 1};
}

/* tensors: the buffers, then one per static __shared__ declaration, then the dynamic
 * shared memory (cu_trace.c builds the trace's tensors in the same order) */
void ks_cu_mem_setup(void)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    for (int i = 0; i < c->nbufs; ++i) {
        const ks_cu_buf *b = &c->bufs[i];
        const uintptr_t lo = (uintptr_t)(ks_cu_g.map + b->offset);
        add_region(lo, lo + b->bytes, R_BUF, i, b->elem, b->dtype, b->rows, b->cols);
    }
    if (c->dyn_name[0])
        add_region((uintptr_t)ks_cu_dyn_smem, (uintptr_t)ks_cu_dyn_smem + c->shared_bytes, R_SHARED,
                   c->nbufs + c->nshared, 4, KS_CU_F32, 1, (int64_t)(c->shared_bytes / 4));
}

void *ks_cu_shared_slot(int id, unsigned long bytes)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    if (id < 0 || id >= c->nshared) return g_arena; /* not a declaration kscope rewrote: cannot happen */
    if (!g_slot_set[id]) {
        if (c->shared_static_bytes + bytes > KS_CU_STATIC_SMEM) {
            snprintf(
                c->error, sizeof c->error,
                "the static __shared__ arrays take more than CUDA's 48 KiB (%s: %lu bytes more); use extern __shared__ and --shared",
                c->shared[id].name, bytes);
            _exit(2);
        }
        g_slot_set[id] = 1;
        c->shared[id].offset = g_arena_used, c->shared[id].bytes = bytes;
        add_region((uintptr_t)g_arena + g_arena_used, (uintptr_t)g_arena + g_arena_used + bytes, R_SHARED,
                   c->nbufs + id, 4, KS_CU_F32, 1, (int64_t)((bytes + 3) / 4));
        memset(g_arena + g_arena_used, 0xFF, bytes);
        g_arena_used = (g_arena_used + bytes + SLOT_GAP + 255) / 256 * 256;
        c->shared_static_bytes += bytes;
    }
    return g_arena + c->shared[id].offset;
}

/* CUDA leaves shared memory undefined at a block's start: 0xFF bytes (a float NaN), so
 * a read of a slot nobody wrote shows, and `check` names it */
void ks_cu_mem_block_start(void)
{
    if (g_arena_used) memset(g_arena, 0xFF, g_arena_used);
    if (ks_cu_g.ctl->shared_bytes) memset(ks_cu_dyn_smem, 0xFF, ks_cu_g.ctl->shared_bytes);
}

uint32_t ks_cu_site_of(uintptr_t pc, int kind, int flags, int tensor)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    const uintptr_t key = pc << 4 | (uintptr_t)kind;            /* a fault at an access's pc is a site of its own */
    uint64_t h = ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 50; /* 14 bits */
    for (;; h = (h + 1) & (SITE_SLOTS - 1)) {
        if (g_site_pc[h] == key && g_site_id[h]) return g_site_id[h];
        if (!g_site_pc[h]) break;
    }
    if (c->npcs >= KS_CU_MAX_PCS) return KS_CU_MAX_PCS; /* the last: shared by the rest */
    const uint32_t id = ++c->npcs;
    c->pcs[id - 1] = pc - ks_cu_g.so_base;
    c->pc_kind[id - 1] = (uint8_t)kind;
    c->pc_flags[id - 1] = (uint8_t)flags;
    c->pc_tensor[id - 1] = tensor < 0 ? 255 : (uint8_t)tensor;
    g_site_pc[h] = key, g_site_id[h] = id;
    return id;
}

uint32_t ks_cu_site(uintptr_t pc, int kind, int flags) { return ks_cu_site_of(pc, kind, flags, -1); }

static ks_event *slot(uint64_t n) { return &ks_cu_g.ev[n % ks_cu_g.ctl->ring]; }

void ks_cu_publish(void)
{
    const ks_cu_fib *f = ks_cu_g.cur;
    const uint64_t upto = f && f->st_count ? f->st_first : ks_cu_g.ctl->nevents;
    __atomic_store_n(&ks_cu_g.ctl->committed, upto, __ATOMIC_RELEASE);
}

ks_event *ks_cu_emit(ks_cu_fib *f, int kind, int flags, uint32_t site, int tensor)
{
    ks_cu_ctl *c = ks_cu_g.ctl;
    if (!f->keep && kind != KS_EV_FAULT) return NULL; /* a fault is kept whatever the filter: it names the line */
    if (c->nevents >= c->capacity) {
        c->dropped++;
        return NULL;
    }
    const uint64_t n = c->nevents;
    /* every event before this one is whole now (the fiber made them in order) */
    __atomic_store_n(&c->committed, f->st_count ? f->st_first : n, __ATOMIC_RELEASE);
    while (n - __atomic_load_n(&c->consumed, __ATOMIC_ACQUIRE) >= c->ring) usleep(50); /* kscope copies them out */
    c->nevents = n + 1;
    ks_event *e = slot(n);
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->flags = (uint8_t)flags;
    e->site = (uint16_t)site;
    e->tensor = tensor < 0 ? 255 : (uint8_t)tensor;
    e->block = ks_cu_g.block_lin;
    e->thread = f->tid;
    e->seq = f->seq++;
    e->iter = f->wphase; /* the thread's __syncwarp count (work items are threads: no loop) */
    e->index = ks_cu_g.block_first_index + f->tid;
    return e;
}

static uint16_t occurrence(ks_cu_fib *f, uint32_t site)
{
    const unsigned k = site & 15;
    if (f->occ_site[k] != site) f->occ_site[k] = site, f->occ_n[k] = 0;
    return f->occ_n[k]++;
}

static void place(ks_event *e, const region *r, int64_t off);

/* an access event's element, tap, and the thread's barrier phase and its opening line */
static void put_access(ks_event *e, const region *r, int64_t off, const ks_cu_fib *f, uint16_t tap)
{
    place(e, r, off);
    e->tap = tap;
    e->u.access.reserved[0] = (int32_t)f->phase;
    e->u.access.reserved[1] = (int32_t)f->bar_line_site;
}

/* An access's value: an integer buffer's element exactly (KS_FLAG_INT) when it fits 32
 * bits, anything else as the nearest float. */
static void set_value(ks_event *e, const region *r, uintptr_t a)
{
    union {
        float f;
        double d;
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
    } v;
    memcpy(&v, (const void *)a, r->elem <= 8 ? r->elem : 8);
    float f = 0.0f;
    int64_t i = INT64_MIN; /* INT64_MIN: not an integer that fits 32 bits */
    switch (r->dtype) {
    case KS_CU_F32: f = v.f; break;
    case KS_CU_F64: f = (float)v.d; break;
    case KS_CU_I8: i = v.i8; break;
    case KS_CU_U8:
    case KS_CU_BOOL: i = v.u8; break;
    case KS_CU_I16: i = v.i16; break;
    case KS_CU_U16: i = v.u16; break;
    case KS_CU_I32: i = v.i32; break;
    case KS_CU_U32: i = v.u32, f = (float)v.u32; break;
    case KS_CU_I64: i = v.i64, f = (float)v.i64; break;
    case KS_CU_U64: i = v.u64 > INT32_MAX ? INT64_MIN : (int64_t)v.u64, f = (float)v.u64; break;
    default: break;
    }
    if (i >= INT32_MIN && i <= INT32_MAX) {
        e->flags |= KS_FLAG_INT;
        e->u.access.ivalue = (int32_t)i;
    } else {
        e->flags &= (uint8_t)~KS_FLAG_INT;
        e->u.access.value = f;
    }
}

static int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static void place(ks_event *e, const region *r, int64_t off)
{
    e->u.access.offset = off;
    const int64_t row = floordiv(off, r->cols);
    e->u.access.x = (int32_t)(off - row * r->cols);
    e->u.access.plane = (int32_t)floordiv(row, r->rows);
    e->u.access.y = (int32_t)(row - (int64_t)e->u.access.plane * r->rows);
}

void ks_cu_flush_store(ks_cu_fib *f)
{
    if (!f->st_count) return;
    const region *r = &g_reg[f->st_region];
    for (uint64_t k = 0; k < f->st_count; ++k) set_value(slot(f->st_first + k), r, f->st_addr + k * r->elem);
    f->st_count = 0;
}

static const region *find(uintptr_t a)
{
    const region *r = &g_reg[g_last];
    if (g_nreg && a - r->lo < r->hi - r->lo) return r;
    for (int i = 0; i < g_nreg; ++i)
        if (a - g_reg[i].lo < g_reg[i].hi - g_reg[i].lo) return &g_reg[g_last = i];
    for (int i = 0; i < g_nign; ++i)
        if (a - g_ign[i].lo < g_ign[i].hi - g_ign[i].lo) return &g_ign[i];
    return NULL;
}

/* the buffer an address outside them all belongs to in a reader's eyes: the nearest, by
 * the distance past its end or before its start (b[-1] is b's, not the end of a) */
static const region *nearest(uintptr_t a)
{
    const region *best = NULL;
    uintptr_t best_d = UINTPTR_MAX;
    for (int i = 0; i < g_nreg; ++i) {
        const region *r = &g_reg[i];
        const uintptr_t d = a >= r->hi ? a - r->hi : a < r->lo ? r->lo - a : 0;
        if (d < best_d) best = r, best_d = d;
    }
    return best;
}

static void outside(ks_cu_fib *f, uintptr_t a, unsigned size, int kind, int flags, uintptr_t pc)
{
    const region *r = nearest(a);
    const uint32_t site = ks_cu_site_of(pc, kind, flags, r ? r->tensor : -1);
    /* with no buffer at all only the fault event says it (its address) */
    ks_event *e = r ? ks_cu_emit(f, kind, flags | (r->kind == R_SHARED ? KS_FLAG_SHARED : 0), site, r->tensor) : NULL;
    if (e) {
        put_access(e, r, floordiv((int64_t)(a - r->lo), r->elem), f, (uint16_t)size);
    }
    ks_cu_stop(f, KS_CU_F_OUTSIDE, ks_cu_site(pc, KS_EV_FAULT, 0), a);
}

/* One access of `size` bytes at a. Returns the region, or NULL when it is not recorded. */
static const region *on_access(uintptr_t a, unsigned size, int write, int flags, uintptr_t pc)
{
    ks_cu_fib *f = ks_cu_g.cur;
    if (!f) return NULL;
    ks_cu_flush_store(f);
    if (a - f->stack_lo < f->stack_size) return NULL;
    const region *r = find(a);
    if (r && r->kind == R_IGNORE) return NULL;
    const int kind = write ? KS_EV_WRITE : KS_EV_READ;
    if (!r || a + size > r->hi) outside(f, r ? r->hi : a, size, kind, flags, pc);
    if (!f->keep) return r;
    const uint32_t site = ks_cu_site_of(pc, kind, flags, r->tensor);
    const int64_t first = (int64_t)((a - r->lo) / r->elem), last = (int64_t)((a + size - 1 - r->lo) / r->elem);
    if (r->kind == R_SHARED) flags |= KS_FLAG_SHARED;
    const uint64_t at = ks_cu_g.ctl->nevents;
    const uint16_t occ = occurrence(f, site);
    if (write) f->st_first = at, f->st_count = UINT64_MAX; /* open: not committed before its value */
    for (int64_t off = first; off <= last; ++off) {
        ks_event *e = ks_cu_emit(f, kind, flags, site, r->tensor);
        if (!e) break;
        put_access(e, r, off, f, occ);
        if (!write) set_value(e, r, r->lo + (uintptr_t)off * r->elem); /* a store's: at its flush */
    }
    if (write) {
        f->st_addr = r->lo + (uintptr_t)first * r->elem;
        f->st_first = at, f->st_count = ks_cu_g.ctl->nevents - at;
        f->st_region = (int)(r - g_reg); /* never an ignored region: those record nothing */
    }
    return r;
}

#define KS_CU_CALLBACKS(n)                                                            \
    void __sanitizer_cov_load##n(void *a);                                            \
    void __sanitizer_cov_store##n(void *a);                                           \
    void __sanitizer_cov_load##n(void *a)                                             \
    {                                                                                 \
        on_access((uintptr_t)a, n, 0, 0, (uintptr_t)__builtin_return_address(0) - 1); \
    }                                                                                 \
    void __sanitizer_cov_store##n(void *a)                                            \
    {                                                                                 \
        on_access((uintptr_t)a, n, 1, 0, (uintptr_t)__builtin_return_address(0) - 1); \
    }
KS_CU_CALLBACKS(1)
KS_CU_CALLBACKS(2)
KS_CU_CALLBACKS(4)
KS_CU_CALLBACKS(8)
KS_CU_CALLBACKS(16)

/* -fsanitize-coverage needs one coverage kind; inline-bool-flag's table is not used */
void __sanitizer_cov_bool_flag_init(void *start, void *end);
void __sanitizer_cov_bool_flag_init(void *start, void *end) { (void)start, (void)end; }

/* ---- atomics: one read-modify-write event, made here (fibers never interleave inside) ---- */
static unsigned long long apply(int op, int type, unsigned long long old, unsigned long long v, unsigned long long cmp)
{
    union u {
        unsigned long long b;
        int32_t i;
        uint32_t u;
        int64_t l;
        uint64_t q;
        float f;
        double d;
    } o = {old}, x = {v}, r = {old};
#define KS_ARITH(field)                                                       \
    switch (op) {                                                             \
    case KS_CU_A_ADD: r.field = o.field + x.field; break;                     \
    case KS_CU_A_SUB: r.field = o.field - x.field; break;                     \
    case KS_CU_A_MIN: r.field = x.field < o.field ? x.field : o.field; break; \
    case KS_CU_A_MAX: r.field = x.field > o.field ? x.field : o.field; break; \
    default: break;                                                           \
    }
    switch (type) {
    case KS_CU_T_I32: KS_ARITH(i) break;
    case KS_CU_T_U32: KS_ARITH(u) break;
    case KS_CU_T_I64: KS_ARITH(l) break;
    case KS_CU_T_U64: KS_ARITH(q) break;
    case KS_CU_T_F32: KS_ARITH(f) break;
    case KS_CU_T_F64: KS_ARITH(d) break;
    default: break;
    }
#undef KS_ARITH
    const unsigned long long mask = type == KS_CU_T_I32 || type == KS_CU_T_U32 || type == KS_CU_T_F32 ? 0xffffffffull
                                                                                                      : ~0ull;
    switch (op) {
    case KS_CU_A_EXCH: r.b = v; break;
    case KS_CU_A_AND: r.b = old & v; break;
    case KS_CU_A_OR: r.b = old | v; break;
    case KS_CU_A_XOR: r.b = old ^ v; break;
    case KS_CU_A_INC: r.b = (old & mask) >= (v & mask) ? 0 : old + 1; break;
    case KS_CU_A_DEC: r.b = (old & mask) == 0 || (old & mask) > (v & mask) ? v : old - 1; break;
    case KS_CU_A_CAS: r.b = (old & mask) == (cmp & mask) ? v : old; break;
    default: break;
    }
    return r.b & mask;
}

unsigned long long ks_cu_atomic(int op, int type, void *addr, unsigned long long v, unsigned long long cmp)
{
    const uintptr_t pc = (uintptr_t)__builtin_return_address(0) - 1, a = (uintptr_t)addr;
    const unsigned size = type == KS_CU_T_I32 || type == KS_CU_T_U32 || type == KS_CU_T_F32 ? 4 : 8;
    ks_cu_fib *f = ks_cu_g.cur;
    unsigned long long old = 0;
    if (f) {
        ks_cu_flush_store(f);
        const region *r = find(a);
        const int inside_stack = a - f->stack_lo < f->stack_size;
        if (!inside_stack && (!r || a + size > r->hi)) outside(f, r ? r->hi : a, size, KS_EV_WRITE, KS_FLAG_ATOMIC, pc);
        memcpy(&old, addr, size);
        const unsigned long long now = apply(op, type, old, v, cmp);
        memcpy(addr, &now, size);
        if (!inside_stack && r->kind != R_IGNORE) {
            ks_event *e = ks_cu_emit(f, KS_EV_WRITE, KS_FLAG_ATOMIC | (r->kind == R_SHARED ? KS_FLAG_SHARED : 0),
                                     ks_cu_site_of(pc, KS_EV_WRITE, KS_FLAG_ATOMIC, r->tensor), r->tensor);
            if (e) {
                put_access(e, r, (int64_t)((a - r->lo) / r->elem), f, occurrence(f, e->site));
                set_value(e, r, r->lo + (a - r->lo) / r->elem * r->elem);
            }
        }
    } else {
        memcpy(&old, addr, size);
        const unsigned long long now = apply(op, type, old, v, cmp);
        memcpy(addr, &now, size);
    }
    return old;
}

/* ---- memcpy, memset, memmove of the kernel (linked as __wrap_*: cu_build.c): every byte
 * range checked like an access and recorded element by element, then made ---- */
void *__wrap_memcpy(void *d, const void *s, size_t n);
void *__wrap_memset(void *d, int c, size_t n);
void *__wrap_memmove(void *d, const void *s, size_t n);

/* the range [a, a + n) by the running thread: KS_OK to make it (recorded when it is a
 * buffer's or a shared array's), else the thread stops here */
static void range(uintptr_t a, size_t n, int write, uintptr_t pc, uint64_t *first_ev, const region **out)
{
    ks_cu_fib *f = ks_cu_g.cur;
    *out = NULL, *first_ev = UINT64_MAX;
    if (!f || !n) return;
    ks_cu_flush_store(f);
    if (a - f->stack_lo < f->stack_size && a + n - f->stack_lo <= f->stack_size) return;
    const region *r = find(a);
    if (r && r->kind == R_IGNORE && a + n <= r->hi) return;
    const int kind = write ? KS_EV_WRITE : KS_EV_READ;
    if (!r || r->kind == R_IGNORE || a + n > r->hi)
        outside(f, r && r->kind != R_IGNORE ? r->hi : a, (unsigned)(n < 65535 ? n : 65535), kind, 0, pc);
    *out = r;
    if (!f->keep) return;
    const uint32_t site = ks_cu_site_of(pc, kind, 0, r->tensor);
    const uint16_t occ = occurrence(f, site);
    const int flags = r->kind == R_SHARED ? KS_FLAG_SHARED : 0;
    const int64_t lo = (int64_t)((a - r->lo) / r->elem), hi = (int64_t)((a + n - 1 - r->lo) / r->elem);
    for (int64_t off = lo; off <= hi; ++off) {
        ks_event *e = ks_cu_emit(f, kind, flags, site, r->tensor);
        if (!e) break;
        if (*first_ev == UINT64_MAX) *first_ev = ks_cu_g.ctl->nevents - 1;
        put_access(e, r, off, f, occ);
        if (!write) set_value(e, r, r->lo + (uintptr_t)off * r->elem); /* a store's: at its flush */
    }
}

/* the values a range now holds, into its write events */
static void range_values(uint64_t first_ev, const region *r)
{
    if (first_ev == UINT64_MAX || !r) return;
    for (uint64_t k = first_ev; k < ks_cu_g.ctl->nevents; ++k) {
        ks_event *e = slot(k);
        if (e->kind != KS_EV_WRITE || e->tensor != (uint8_t)r->tensor) break;
        set_value(e, r, r->lo + (uintptr_t)e->u.access.offset * r->elem);
    }
}

void *__wrap_memcpy(void *d, const void *s, size_t n)
{
    const uintptr_t pc = (uintptr_t)__builtin_return_address(0) - 1;
    uint64_t ev;
    const region *r;
    range((uintptr_t)s, n, 0, pc, &ev, &r);
    range((uintptr_t)d, n, 1, pc, &ev, &r);
    memcpy(d, s, n); /* libc's: only the kernel's module is linked with --wrap */
    range_values(ev, r);
    return d;
}

void *__wrap_memmove(void *d, const void *s, size_t n)
{
    const uintptr_t pc = (uintptr_t)__builtin_return_address(0) - 1;
    uint64_t ev;
    const region *r;
    range((uintptr_t)s, n, 0, pc, &ev, &r);
    range((uintptr_t)d, n, 1, pc, &ev, &r);
    memmove(d, s, n);
    range_values(ev, r);
    return d;
}

void *__wrap_memset(void *d, int c, size_t n)
{
    const uintptr_t pc = (uintptr_t)__builtin_return_address(0) - 1;
    uint64_t ev;
    const region *r;
    range((uintptr_t)d, n, 1, pc, &ev, &r);
    memset(d, c, n);
    range_values(ev, r);
    return d;
}
