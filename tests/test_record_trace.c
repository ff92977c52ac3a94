/* The recorder's host side without a GPU: records as the device callbacks write them
 * (record/record.h), for a made-up 2-D launch whose accesses this test decides, become a
 * trace (record_trace.c) that this test reads back event by event against its own list,
 * and that kscope check passes. Covers: slots in any order across threads (program order
 * within one), named and unnamed buffers, memory in no buffer, a 16-byte access split
 * into elements, an access narrower than its element, atomics, a block with no access,
 * the filter and the dropped count, with the events made on one thread or several. */
#include <elf.h>
#include <signal.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../record/cubin_lines.h"
#include "../record/record_int.h"
#include "../trace/ks_file.h"
#include "test_util.h"

#define R 5
#define C 19
#define GX 3
#define GY 2
#define BX 8
#define BY 3
#define T (BX * BY)

static float g_in[R * C], g_w[4 * 8];
static int32_t g_cnt[7];
static uint8_t g_global[4096];
static const uint64_t A_IN = 0x7f0000000000ull, A_W = 0x7f0000100000ull, A_CNT = 0x7f0000200000ull,
                      A_GLOBAL = 0x7f0000300000ull;

static int copy_fn(void *dst, uint64_t addr, size_t bytes, void *ctx)
{
    (void)ctx;
    const struct {
        uint64_t a;
        const void *p;
        size_t n;
    } m[4] = {{A_IN, g_in, sizeof g_in},
              {A_W, g_w, sizeof g_w},
              {A_CNT, g_cnt, sizeof g_cnt},
              {A_GLOBAL, g_global, sizeof g_global}};
    for (int i = 0; i < 4; ++i)
        if (addr >= m[i].a && addr + bytes <= m[i].a + m[i].n) {
            memcpy(dst, (const uint8_t *)m[i].p + (addr - m[i].a), bytes);
            return 0;
        }
    return -1;
}

/* one thread's accesses, in program order: what the kernel in this test does */
typedef struct acc {
    uint64_t addr;
    uint32_t pc, size, flags;
    uint64_t value;
} acc;

static int thread_accesses(int blk, int t, acc *a)
{
    const int bx = blk % GX, by = blk / GX, c = bx * BX + t % BX, r = by * BY + t / BX;
    if (blk == 4 || r >= R || c >= C) return 0; /* block 4 returns at once */
    int n = 0;
    uint32_t bits;
    memcpy(&bits, &g_in[r * C + c], 4);
    a[n++] = (acc){A_IN + 4u * (uint64_t)(r * C + c), 0x40, 4, KS_REC_READ, bits};
    const int q = c % 3; /* a 16-byte load of w[4q .. 4q+3]: two 8-byte records */
    for (int h = 0; h < 2; ++h) {
        uint64_t v;
        memcpy(&v, &g_w[4 * q + 2 * h], 8);
        a[n++] = (acc){A_W + 16u * (uint64_t)q + 8u * (uint64_t)h, 0x80, 8, KS_REC_READ | (h ? KS_REC_HALF : 0), v};
    }
    a[n++] = (acc){A_W + 1, 0x90, 1, KS_REC_READ, ((const uint8_t *)g_w)[1]}; /* one byte of w[0] */
    a[n++] = (acc){A_CNT + 4u * (uint64_t)(c % 7), 0xc0, 4, KS_REC_WRITE | KS_REC_ATOMIC, 0};
    const float out = (float)(r * 100 + c);
    memcpy(&bits, &out, 4);
    a[n++] = (acc){A_GLOBAL + 4u * (uint64_t)(r * C + c), 0xe0, 4, KS_REC_WRITE, bits};
    return n;
}

static ks_rec_buf bufs[3];

static void setup_bufs(void)
{
    uint64_t s = 42;
    for (int i = 0; i < R * C; ++i) g_in[i] = (float)((tu_next(&s) >> 40) * (1.0 / 8388608.0) - 1.0);
    for (int i = 0; i < 32; ++i) g_w[i] = (float)tu_int(&s, -50, 50) * 0.25f;
    for (int i = 0; i < 7; ++i) g_cnt[i] = (int32_t)tu_int(&s, 0, 9);
    memset(bufs, 0, sizeof bufs);
    bufs[0] = (ks_rec_buf){A_IN, sizeof g_in, "in", 1, KS_F32, 2, {R, C}};
    bufs[1] = (ks_rec_buf){A_W, sizeof g_w, "alloc3", 0, KS_F32, 1, {32}};
    bufs[2] = (ks_rec_buf){A_CNT, sizeof g_cnt, "cnt", 1, KS_I32, 1, {7}};
}

/* records of every thread, slots interleaved across threads in a scrambled order */
static ks_rec *make_records_order(uint64_t *n, int blo, int bhi, int reverse);
static ks_rec *make_records(uint64_t *n, int blo, int bhi) { return make_records_order(n, blo, bhi, 0); }

/* reverse: each thread's accesses in the opposite order (another compiler's schedule) */
static ks_rec *make_records_order(uint64_t *n, int blo, int bhi, int reverse)
{
    ks_rec *recs = calloc(GX * GY * T * 8, sizeof *recs);
    acc a[GX * GY * T][8];
    int na[GX * GY * T], next[GX * GY * T] = {0}, left = 0;
    for (int g = 0; g < GX * GY * T; ++g) {
        na[g] = g / T >= blo && g / T < bhi ? thread_accesses(g / T, g % T, a[g]) : 0;
        for (int k = 0; reverse && k < na[g] / 2; ++k) {
            const acc x = a[g][k];
            a[g][k] = a[g][na[g] - 1 - k], a[g][na[g] - 1 - k] = x;
        }
        left += na[g];
    }
    uint64_t s = 7, k = 0;
    while (left) {
        const int g = (int)tu_int(&s, 0, GX * GY * T - 1);
        if (next[g] == na[g]) continue;
        const acc *x = &a[g][next[g]++];
        recs[k++] = (ks_rec){x->addr,           x->pc, (uint32_t)(g / T), (uint16_t)(g % T), (uint8_t)x->size,
                             (uint8_t)x->flags, 0,     x->value};
        --left;
    }
    *n = k;
    return recs;
}

/* 1: the records are handed over sorted by ks_rec_sort (as the recorder does with pinned
 * records), not in slot order */
static int g_presort;

static void write_trace(const char *path, const ks_rec *recs, uint64_t n, int blo, int bhi, uint64_t dropped)
{
    ks_rec *sorted = NULL;
    if (g_presort) {
        sorted = malloc((n ? n : 1) * sizeof *sorted);
        const uint32_t block[3] = {BX, BY, 1};
        ck_assert_int_eq(ks_rec_sort(recs, n, block, sorted), 0);
        recs = sorted;
    }
    ks_rec_launch L;
    memset(&L, 0, sizeof L);
    L.number = 5;
    snprintf(L.kernel, sizeof L.kernel, "void ns::copy_t<float, 3>(float const*, float*, int)");
    ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
    snprintf(L.device, sizeof L.device, "test GPU");
    L.grid[0] = GX, L.grid[1] = GY, L.grid[2] = 1, L.block[0] = BX, L.block[1] = BY, L.block[2] = 1;
    L.filter = (ks_filter){(int64_t)blo * T, (int64_t)bhi * T, blo, bhi, 1};
    L.recs = recs, L.nrecs = n, L.dropped = dropped;
    L.bufs = bufs, L.nbufs = 3;
    L.copy = copy_fn;
    L.sorted = g_presort;
    ck_assert_msg(ks_rec_write_trace(&L, path) == KS_OK, "%s", ks_error_message());
    free(sorted);
}

static int kscope_rc(const char *args)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", KS_CLI, args);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* kscope diff --access-sets: the same accesses in another order are equal, a changed
 * element is not; plain diff tells the orders apart */
START_TEST(diff_access_sets)
{
    setup_bufs();
    char dir[] = "/tmp/ks_rs_XXXXXX", p1[64], p2[64], p3[64], args[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(p1, sizeof p1, "%s/a.kst", dir), snprintf(p2, sizeof p2, "%s/b.kst", dir);
    snprintf(p3, sizeof p3, "%s/c.kst", dir);
    uint64_t n;
    ks_rec *r = make_records_order(&n, 0, GX * GY, 0);
    write_trace(p1, r, n, 0, GX * GY, 0);
    free(r);
    r = make_records_order(&n, 0, GX * GY, 1);
    write_trace(p2, r, n, 0, GX * GY, 0);
    for (uint64_t i = 0; i < n; ++i)
        if (r[i].block == 0 && r[i].thread == 5 && r[i].pc == 0x40) r[i].addr += 4; /* one read moved */
    write_trace(p3, r, n, 0, GX * GY, 0);
    free(r);
    snprintf(args, sizeof args, "diff %s %s", p1, p2);
    ck_assert_int_eq(kscope_rc(args), 1);
    snprintf(args, sizeof args, "diff %s %s --access-sets", p1, p2);
    ck_assert_int_eq(kscope_rc(args), 0);
    snprintf(args, sizeof args, "diff %s %s --access-sets", p1, p3);
    ck_assert_int_eq(kscope_rc(args), 1);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

START_TEST(short_names)
{
    char s[64];
    ks_rec_short_name("void ns::copy_t<float, 3>(float const*, float*, int)", s, sizeof s);
    ck_assert_str_eq(s, "copy_t");
    ks_rec_short_name("void at::native::(anonymous namespace)::roi_align_forward_kernel<float>(int, float const*)", s,
                      sizeof s);
    ck_assert_str_eq(s, "roi_align_forward_kernel");
    ks_rec_short_name("hist(int const*, int*, int, int)", s, sizeof s);
    ck_assert_str_eq(s, "hist");
    ks_rec_short_name("_Z4fooPf", s, sizeof s);
    ck_assert_str_eq(s, "_Z4fooPf");
}
END_TEST

/* run 0 makes the events on one thread from records in slot order, run 1 on 4 (blocks
 * split unevenly among them) from records handed over sorted */
START_TEST(records_become_the_trace_of_each_thread)
{
    ks_rec_build_threads = _i ? 4 : 1;
    g_presort = _i;
    setup_bufs();
    uint64_t n;
    ks_rec *recs = make_records(&n, 0, GX * GY);
    char dir[] = "/tmp/ks_rt_XXXXXX", path[64], cmd[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.kst", dir);
    write_trace(path, recs, n, 0, GX * GY, 0);
    ks_trace tr;
    ck_assert_msg(ks_trace_open(path, &tr) == KS_OK, "%s", ks_error_message());
    ck_assert_str_eq(tr.op, "copy_t");
    ck_assert_str_eq(tr.variant, "cuda-c");
    ck_assert_str_eq(tr.device, "test GPU");
    ck_assert_int_eq(tr.threads, T);
    ck_assert_int_eq(tr.blocks, GX * GY);
    const int tin = ks_trace_tensor(&tr, "in"), tw = ks_trace_tensor(&tr, "alloc3"), tc = ks_trace_tensor(&tr, "cnt"),
              tg = ks_trace_tensor(&tr, "global0");
    ck_assert_msg(tin >= 0 && tw >= 0 && tc >= 0 && tg >= 0, "tensors");
    ck_assert_int_eq(tr.tensors[tin].ndim, 2);
    ck_assert_int_eq(tr.tensors[tin].shape[1], C);
    ck_assert_mem_eq(tr.tensors[tc].data, g_cnt, sizeof g_cnt);
    ck_assert_mem_eq(tr.tensors[tin].data, g_in, sizeof g_in);
    ck_assert_int_eq(tr.roles[tc], KS_ROLE_OUTPUT);
    ck_assert_int_eq(tr.roles[tin], KS_ROLE_INPUT);
    uint64_t pos = 0;
    int sites_seen[KS_MAX_SITES] = {0};
    for (int blk = 0; blk < GX * GY; ++blk) {
        if (blk == 4) continue; /* no access, no work events */
        for (int t = 0; t < T; ++t) {
            const int64_t index = (int64_t)blk * T + t;
            const ks_event *w = &tr.events[pos++];
            ck_assert_int_eq(w->kind, KS_EV_WORK);
            ck_assert_int_eq(w->index, index);
            ck_assert_int_eq(w->u.field[2], blk % GX); /* blockIdx.x */
            ck_assert_int_eq(w->u.field[1], blk / GX); /* blockIdx.y */
            ck_assert_int_eq(w->u.field[5], t % BX);   /* threadIdx.x */
            ck_assert_int_eq(w->u.field[4], t / BX);   /* threadIdx.y */
            const int c = blk % GX * BX + t % BX, r = blk / GX * BY + t / BX;
            if (r >= R || c >= C) continue;
            /* in[r][c]; w[4q..4q+3] (4 events of one site and tap); one byte of w[0]; the
             * atomic on cnt; the store to memory in no buffer */
            const int q = c % 3;
            struct {
                int tensor, kind, atomic, is_int;
                int64_t offset;
                double value;
            } want[8] = {{tin, KS_EV_READ, 0, 0, r * C + c, g_in[r * C + c]},
                         {tw, KS_EV_READ, 0, 0, 4 * q, g_w[4 * q]},
                         {tw, KS_EV_READ, 0, 0, 4 * q + 1, g_w[4 * q + 1]},
                         {tw, KS_EV_READ, 0, 0, 4 * q + 2, g_w[4 * q + 2]},
                         {tw, KS_EV_READ, 0, 0, 4 * q + 3, g_w[4 * q + 3]},
                         {tw, KS_EV_READ, 0, 1, 0, ((const uint8_t *)g_w)[1]},
                         {tc, KS_EV_WRITE, 1, 1, c % 7, 0},
                         {tg, KS_EV_WRITE, 0, 0, r * C + c, r * 100 + c}};
            for (int k = 0; k < 8; ++k) {
                const ks_event *e = &tr.events[pos++];
                ck_assert_msg(e->index == index && e->seq == (uint32_t)k + 1 && e->kind == want[k].kind &&
                                  e->tensor == want[k].tensor,
                              "thread %lld event %d: index %lld seq %u kind %d tensor %d", (long long)index, k,
                              (long long)e->index, e->seq, e->kind, e->tensor);
                ck_assert_int_eq(e->block, blk);
                ck_assert_int_eq(e->thread, t);
                ck_assert_int_eq(!!(e->flags & KS_FLAG_ATOMIC), want[k].atomic);
                ck_assert_int_eq(e->u.access.offset, want[k].offset);
                ck_assert_int_eq(tr.sites[e->site].kind, e->kind);
                ck_assert_int_eq(tr.sites[e->site].tensor, e->tensor);
                sites_seen[e->site] = 1;
                if (want[k].atomic) continue; /* the memory before an atomic: not this test's */
                ck_assert_int_eq(!!(e->flags & KS_FLAG_INT), want[k].is_int);
                ck_assert_msg(ks_access_value(&e->u.access, e->flags) == want[k].value, "value of event %d", k);
            }
            /* the 16-byte load: one site, one instruction (tap); the byte load: its own */
            ck_assert_int_eq(tr.events[pos - 7].site, tr.events[pos - 4].site);
            ck_assert_int_eq(tr.events[pos - 7].tap, tr.events[pos - 4].tap);
            ck_assert_int_ne(tr.events[pos - 3].site, tr.events[pos - 4].site);
        }
    }
    ck_assert_int_eq(pos, tr.nevents);
    int nsites = 0;
    for (int s = 1; s < tr.nsites; ++s) nsites += sites_seen[s];
    ck_assert_int_eq(nsites, 5); /* pcs 0x40, 0x80, 0x90, 0xc0, 0xe0: the byte read of w is apart */
    ck_assert_int_eq(tr.nsites, 6);
    ck_assert_str_eq(tr.sites[1].name, "copy_t+0x40");
    ks_trace_close(&tr);
    snprintf(cmd, sizeof cmd, "%s check %s >/dev/null 2>&1", KS_CLI, path);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kscope check on the trace: %d", st);
    free(recs);

    /* blocks 2..3 only, with records the device could not keep */
    recs = make_records(&n, 2, 4);
    write_trace(path, recs, n, 2, 4, 77);
    ck_assert_int_eq(ks_trace_open(path, &tr), KS_OK);
    ck_assert_int_eq(tr.dropped, 77);
    ck_assert_int_eq(tr.filter.block_lo, 2);
    for (uint64_t i = 0; i < tr.nevents; ++i)
        ck_assert_msg(tr.events[i].block == 2 || tr.events[i].block == 3, "block");
    ks_trace_close(&tr);
    free(recs);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    g_presort = 0, ks_rec_build_threads = 0;
}
END_TEST

/* A big launch (211 blocks of 97 threads, 1-D) whose blocks meet their instructions and
 * buffers in different orders (block b starts at instruction b % 7, and some threads
 * stop at a barrier), slots scrambled: ks_rec_sort on 1, 3 and 7 threads, and the
 * sorter fed pieces, give each thread's records in slot order (checked against a sort by (thread, slot) done here),
 * and the trace made on 1, 3, 7 and 16 threads (the build's and the writer's: cursors
 * opened inside blocks) is the same file, its tensors and sites
 * numbered in the order a reading of the sorted records first meets them. */
#define BIG_B 211
#define BIG_T 97
static int by_thread_then_slot(const void *a, const void *b)
{
    const ks_rec *x = a, *y = b;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->run > y->run) - (x->run < y->run);
}

/* Runs (record.h): a model of the GPU's claims. Threads of a launch of RB_B blocks of RB_T
 * take turns at random, each writing its records (0 to 30, run boundaries included) into
 * runs of KS_REC_RUN slots claimed from one cursor, in a buffer too small for all of them;
 * unused slots hold garbage. ks_rec_runs, given the states and the runs in pieces, must
 * give each recorded thread's records in program order, threads in (block, thread) order,
 * with what did not fit left out: the expected array is built here from the program. */
#define RB_B 53
#define RB_T 37
typedef struct run_model {
    ks_rec *slots;
    uint64_t *state, cursor, capacity, dropped;
} run_model;

/* what record_patch.cu's claim does, with the cursor here and the state step it uses */
static void model_put(run_model *m, uint64_t k, const ks_rec *r)
{
    uint64_t base = 0, slot;
    uint32_t run;
    if (ks_rec_run_full(m->state[k])) {
        base = m->cursor;
        m->cursor += KS_REC_RUN;
        if (base + KS_REC_RUN > m->capacity) {
            m->dropped++;
            return;
        }
    }
    m->state[k] = ks_rec_run_step(m->state[k], base, &slot, &run);
    m->slots[slot] = *r;
    m->slots[slot].run = run;
}

START_TEST(runs_give_each_thread_in_program_order)
{
    const uint64_t lo = 3 * RB_T + 2, hi = 50 * RB_T + 7, span = hi - lo;
    const uint32_t block[3] = {RB_T, 1, 1};
    uint64_t s = 4242, need = 0, total = 0;
    int *count = calloc(span, sizeof *count), *done = calloc(span, sizeof *done), *kept = calloc(span, sizeof *kept);
    for (uint64_t k = 0; k < span; ++k) {
        count[k] = (int)tu_int(&s, 0, 30);
        need += (uint64_t)(count[k] + KS_REC_RUN - 1) / KS_REC_RUN * KS_REC_RUN;
        total += (uint64_t)count[k];
    }
    run_model m = {.capacity = need * 4 / 5 / KS_REC_RUN * KS_REC_RUN};
    m.slots = malloc(need * sizeof *m.slots), m.state = calloc(span, sizeof *m.state);
    for (uint64_t i = 0; i < need * sizeof *m.slots / 8; ++i) ((uint64_t *)m.slots)[i] = tu_next(&s); /* garbage */
    for (uint64_t left = total; left; --left) { /* one record of a random thread with records left */
        uint64_t k = (uint64_t)tu_int(&s, 0, (int64_t)span - 1);
        while (done[k] == count[k]) k = (k + 1) % span;
        const uint64_t g = lo + k;
        ks_rec r;
        memset(&r, 0, sizeof r);
        r.block = (uint32_t)(g / RB_T), r.thread = (uint16_t)(g % RB_T), r.size = 4, r.flags = KS_REC_READ;
        r.addr = 0x1000 + 4 * (uint64_t)done[k], r.value = g << 8 | (uint64_t)done[k]; /* program order told */
        const uint64_t dropped = m.dropped;
        model_put(&m, k, &r);
        if (m.dropped == dropped && kept[k] == done[k]) kept[k]++; /* a thread keeps a prefix */
        done[k]++;
    }
    ck_assert_uint_gt(m.dropped, 0);
    uint64_t nwant = 0;
    ks_rec *want = malloc(total * sizeof *want);
    for (uint64_t k = 0; k < span; ++k)
        for (int j = 0; j < kept[k]; ++j) {
            const uint64_t g = lo + k;
            ks_rec *r = &want[nwant++];
            memset(r, 0, sizeof *r);
            r->block = (uint32_t)(g / RB_T), r->thread = (uint16_t)(g % RB_T), r->size = 4, r->flags = KS_REC_READ;
            r->addr = 0x1000 + 4 * (uint64_t)j, r->value = g << 8 | (uint64_t)j;
            r->run = (uint32_t)j / KS_REC_RUN;
        }
    ck_assert_uint_eq(nwant + m.dropped, total);
    const uint64_t slots = m.cursor < m.capacity ? m.cursor : m.capacity;
    ks_rec *got = malloc((nwant ? nwant : 1) * sizeof *got);
    const int teams[2] = {1, 3};
    for (int c = 0; c < 2; ++c) {
        ks_rec_build_threads = teams[c];
        ks_rec_runs *r = ks_rec_runs_new(m.state, span, lo, block, slots);
        ck_assert_ptr_nonnull(r);
        ck_assert_uint_eq(ks_rec_runs_total(r), nwant);
        memset(got, 0, nwant * sizeof *got);
        for (uint64_t at = 0; at < slots; at += 5 * KS_REC_RUN) /* pieces of 5 runs, the last shorter */
            ck_assert_int_eq(ks_rec_runs_place(r, m.slots + at, at, slots - at < 40 ? slots - at : 40, got), 0);
        ck_assert_int_eq(ks_rec_runs_finish(r), 0);
        ks_rec_runs_free(r);
        for (uint64_t i = 0; i < nwant; ++i)
            ck_assert_msg(!memcmp(&got[i], &want[i], sizeof *got), "record %llu on %d threads", (unsigned long long)i,
                          teams[c]);
    }
    ks_rec_build_threads = 0;
    /* refused: a run numbered past its thread's runs, a state naming a run more than were
     * read, pieces out of order, and a run of another thread's records */
    ks_rec_runs *r;
    const uint64_t k1 = (uint64_t)m.slots[KS_REC_RUN].block * RB_T + m.slots[KS_REC_RUN].thread - lo;
    for (int past = 0; past < 2; ++past) { /* a whole run numbered its thread's runs, and 100 more */
        r = ks_rec_runs_new(m.state, span, lo, block, slots);
        ks_rec keep[KS_REC_RUN];
        memcpy(keep, m.slots + KS_REC_RUN, sizeof keep);
        for (uint32_t i = 0; i < KS_REC_RUN; ++i)
            m.slots[KS_REC_RUN + i].run = (uint32_t)(m.state[k1] >> 32) + (past ? 100u : 0u);
        ck_assert_int_eq(ks_rec_runs_place(r, m.slots, 0, slots, got), -1);
        memcpy(m.slots + KS_REC_RUN, keep, sizeof keep);
        ks_rec_runs_free(r);
    }
    /* pieces that are not whole runs, and a finish before every run was placed */
    r = ks_rec_runs_new(m.state, span, lo, block, slots);
    ck_assert_int_eq(ks_rec_runs_place(r, m.slots, 0, KS_REC_RUN + 1, got), -1);
    ks_rec_runs_free(r);
    r = ks_rec_runs_new(m.state, span, lo, block, slots);
    ck_assert_int_eq(ks_rec_runs_place(r, m.slots, 0, slots - KS_REC_RUN, got), 0);
    ck_assert_int_eq(ks_rec_runs_finish(r), -1);
    ks_rec_runs_free(r);
    /* a state whose last record lies past the runs read */
    const uint64_t keep_state = m.state[k1];
    m.state[k1] = (keep_state & 0xffffffff00000000ull) | (uint32_t)(slots + 2);
    r = ks_rec_runs_new(m.state, span, lo, block, slots);
    ck_assert_uint_eq(ks_rec_runs_total(r), 0);
    ks_rec_runs_free(r);
    m.state[k1] = keep_state;
    m.state[7] += 1ull << 32;
    r = ks_rec_runs_new(m.state, span, lo, block, slots);
    ck_assert_uint_eq(ks_rec_runs_total(r), 0);
    ck_assert_int_eq(ks_rec_runs_place(r, m.slots, 0, slots, got), -1);
    ks_rec_runs_free(r);
    m.state[7] -= 1ull << 32;
    r = ks_rec_runs_new(m.state, span, lo, block, slots);
    ck_assert_int_eq(ks_rec_runs_place(r, m.slots + KS_REC_RUN, KS_REC_RUN, KS_REC_RUN, got), -1);
    ks_rec_runs_free(r);
    r = ks_rec_runs_new(m.state, span, lo, block, slots);
    int bad = -1; /* a record inside a full run, moved to another thread */
    for (uint64_t u = 0; u < slots / KS_REC_RUN && bad < 0; ++u) {
        const ks_rec *run = m.slots + u * KS_REC_RUN;
        const uint64_t k = (uint64_t)run->block * RB_T + run->thread - lo;
        if (run->run + 1 < (uint32_t)(m.state[k] >> 32)) bad = (int)u;
    }
    ck_assert_int_ge(bad, 0);
    ks_rec *in = &m.slots[(uint64_t)bad * KS_REC_RUN + 3];
    for (int field = 0; field < 3; ++field) { /* its thread, block, then run number changed */
        const ks_rec keep = *in;
        if (field == 0) in->thread ^= 1;
        else if (field == 1) in->block ^= 1;
        else in->run ^= 1;
        if (!r) r = ks_rec_runs_new(m.state, span, lo, block, slots);
        ck_assert_int_eq(ks_rec_runs_place(r, m.slots, 0, slots, got), -1);
        ks_rec_runs_free(r), r = NULL;
        *in = keep;
    }
    free(count), free(done), free(kept), free(m.slots), free(m.state), free(want), free(got);
}
END_TEST

START_TEST(any_thread_count_gives_the_same_trace)
{
    setup_bufs();
    const uint64_t addr[3] = {A_IN, A_W, A_CNT}, bytes[3] = {sizeof g_in, sizeof g_w, sizeof g_cnt};
    const uint64_t cap = (uint64_t)BIG_B * BIG_T * 17;
    ks_rec *recs = calloc(cap, sizeof *recs), *want = calloc(cap, sizeof *want), *got = calloc(cap, sizeof *got);
    uint64_t n = 0, s = 99;
    for (int b = 0; b < BIG_B; ++b)
        for (int t = 0; t < BIG_T; ++t) {
            const int m = (int)tu_int(&s, 0, 16); /* 45 chunks of events: the writer takes batches of 2 on one thread */
            for (int k = 0; k < m; ++k) {
                const int ins = (b % 7 + k) % 7, buf = ins % 3; /* instruction ins reads or writes buffer buf */
                ks_rec *r = &recs[n++];
                memset(r, 0, sizeof *r);
                r->block = (uint32_t)b, r->thread = (uint16_t)t, r->pc = 0x100u + 0x10u * (uint32_t)ins, r->size = 4;
                r->flags = ins == 6 ? KS_REC_BARRIER : ins == 5 ? KS_REC_WRITE : KS_REC_READ;
                r->addr = addr[buf] + 4 * (uint64_t)tu_int(&s, 0, (int64_t)bytes[buf] / 4 - 1);
                r->value = tu_next(&s) >> 40;
            }
        }
    for (uint64_t i = n; i > 1; --i) { /* slots in a scrambled order (slot order is program order) */
        const uint64_t j = (uint64_t)tu_int(&s, 0, (int64_t)i - 1);
        const ks_rec x = recs[i - 1];
        recs[i - 1] = recs[j], recs[j] = x;
    }
    for (uint64_t i = 0; i < n; ++i) recs[i].run = (uint32_t)i; /* every record told apart */
    /* the expected order: by thread, then slot (qsort on (block, thread, slot) here) */
    memcpy(want, recs, n * sizeof *want);
    qsort(want, n, sizeof *want, by_thread_then_slot);
    const uint64_t w = n;
    ck_assert_uint_eq(w, n);
    const uint32_t block[3] = {BIG_T, 1, 1};
    const int counts[3] = {1, 3, 7};
    for (int c = 0; c < 3; ++c) {
        ks_rec_build_threads = counts[c];
        memset(got, 0, cap * sizeof *got);
        ck_assert_int_eq(ks_rec_sort(recs, n, block, got), 0);
        ck_assert_msg(!memcmp(got, want, n * sizeof *got), "sort on %d threads", counts[c]);
        /* the same read back in pieces of 4099 records (the last shorter), ids in [0, B x T) */
        memset(got, 0, cap * sizeof *got);
        ks_rec_sorter *so = ks_rec_sorter_new(block, 0, (uint64_t)BIG_B * BIG_T, n, got);
        ck_assert_ptr_nonnull(so);
        for (uint64_t at = 0; at < n; at += 4099)
            ck_assert_int_eq(ks_rec_sorter_count(so, recs + at, n - at < 4099 ? n - at : 4099), 0);
        for (uint64_t at = 0; at < n; at += 4099)
            ck_assert_int_eq(ks_rec_sorter_place(so, recs + at, n - at < 4099 ? n - at : 4099), 0);
        ck_assert_int_eq(ks_rec_sorter_finish(so), 0);
        ks_rec_sorter_free(so);
        ck_assert_msg(!memcmp(got, want, n * sizeof *got), "sort of pieces on %d threads", counts[c]);
    }
    /* a record past [lo, hi), and places for fewer records than counted: refused */
    ks_rec_sorter *so = ks_rec_sorter_new(block, BIG_T, (uint64_t)BIG_B * BIG_T, n, got);
    ck_assert_int_eq(ks_rec_sorter_count(so, recs, n), -1); /* block 0's records lie below lo */
    ks_rec_sorter_free(so);
    so = ks_rec_sorter_new(block, 0, (uint64_t)BIG_B * BIG_T, n, got);
    ck_assert_int_eq(ks_rec_sorter_count(so, recs, n - 1), 0);
    ck_assert_int_eq(ks_rec_sorter_place(so, recs, n - 1), -1);
    ks_rec_sorter_free(so);
    /* the first-met order of tensors and of (instruction, kind, tensor) sites */
    int tensor_of_buf[3] = {-1, -1, -1}, ntensors = 0, nsites = 0;
    uint32_t site_pc[16];
    for (uint64_t i = 0; i < n; ++i) {
        const int ins = (int)(want[i].pc - 0x100u) / 0x10, buf = ins % 3;
        if (ins != 6 && tensor_of_buf[buf] < 0) tensor_of_buf[buf] = ntensors++;
        int seen = 0;
        for (int k = 0; k < nsites; ++k) seen |= site_pc[k] == want[i].pc;
        if (!seen) site_pc[nsites++] = want[i].pc;
    }
    char dir[] = "/tmp/ks_rn_XXXXXX", p[4][64], cmd[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const int threads[4] = {1, 3, 7, 16};
    for (int c = 0; c < 4; ++c) {
        ks_rec_build_threads = ks_kst_write_threads = threads[c];
        snprintf(p[c], sizeof p[c], "%s/t%d.kst", dir, threads[c]);
        ks_rec_launch L;
        memset(&L, 0, sizeof L);
        snprintf(L.kernel, sizeof L.kernel, "void big(float*)");
        ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
        L.grid[0] = BIG_B, L.grid[1] = L.grid[2] = 1, L.block[0] = BIG_T, L.block[1] = L.block[2] = 1;
        L.filter = ks_filter_all();
        L.recs = recs, L.nrecs = n, L.bufs = bufs, L.nbufs = 3, L.copy = copy_fn;
        ck_assert_msg(ks_rec_write_trace(&L, p[c]) == KS_OK, "%s", ks_error_message());
        if (c) {
            snprintf(cmd, sizeof cmd, "cmp -s %s %s", p[0], p[c]);
            ck_assert_msg(system(cmd) == 0, "the trace made on %d threads differs from one thread's", threads[c]);
        }
    }
    ks_trace tr;
    ck_assert_msg(ks_trace_open(p[0], &tr) == KS_OK, "%s", ks_error_message());
    const char *names[3] = {"in", "alloc3", "cnt"};
    for (int buf = 0; buf < 3; ++buf) ck_assert_str_eq(tr.tensors[tensor_of_buf[buf]].name, names[buf]);
    ck_assert_int_eq(tr.nsites, 1 + nsites);
    for (int k = 0; k < nsites; ++k) {
        char name[32];
        snprintf(name, sizeof name, "big+0x%x", site_pc[k]);
        ck_assert_str_eq(tr.sites[1 + k].name, name);
    }
    ks_trace_close(&tr);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    ks_rec_build_threads = ks_kst_write_threads = 0;
    free(recs), free(want), free(got);
}
END_TEST

/* A launch of 3 blocks of 5 threads where thread 1 of block 1 runs 60000 accesses (a long
 * loop: a cursor opened inside it must not replay it from its start for every run of
 * chunks), accesses of 8 bytes (two events each) and of 1 byte, barriers, and a filter
 * that leaves out threads 10..12: the trace made on 3 and 7 threads equals the one made
 * on one thread (one cursor walking from the first event: the reference), every access
 * is in it, and kscope check passes. */
static double rt_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static ks_rec *long_thread_records(uint64_t *n)
{
    const uint64_t cap = 60000 + 15 * 40;
    ks_rec *recs = calloc(cap, sizeof *recs);
    uint64_t k = 0, s = 5;
    for (uint32_t b = 0; b < 3; ++b)
        for (uint16_t t = 0; t < 5; ++t) {
            const int m = b == 1 && t == 1 ? 60000 : (int)tu_int(&s, 0, 39);
            for (int i = 0; i < m; ++i) {
                ks_rec *r = &recs[k++];
                memset(r, 0, sizeof *r);
                r->block = b, r->thread = t, r->pc = 0x200u + 0x10u * (uint32_t)(i % 5);
                const int form = i % 5; /* 4-byte read, 8-byte read (two floats), 1-byte read, atomic, barrier */
                r->size = form == 1 ? 8 : form == 2 ? 1 : 4;
                r->flags = form == 4 ? KS_REC_BARRIER : form == 3 ? KS_REC_WRITE | KS_REC_ATOMIC : KS_REC_READ;
                r->addr = form == 3 ? A_CNT + 4 * (uint64_t)tu_int(&s, 0, 6)
                                    : A_IN + 4 * (uint64_t)tu_int(&s, 0, R * C - 3) + (form == 2 ? 1 : 0);
                r->value = tu_next(&s);
            }
        }
    *n = k;
    return recs;
}

static void write_long(const char *path, const ks_rec *recs, uint64_t n, int threads)
{
    ks_rec_build_threads = ks_kst_write_threads = threads;
    ks_rec_launch L;
    memset(&L, 0, sizeof L);
    snprintf(L.kernel, sizeof L.kernel, "void loop(float*)");
    ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
    L.grid[0] = 3, L.grid[1] = L.grid[2] = 1, L.block[0] = 5, L.block[1] = L.block[2] = 1;
    L.filter = (ks_filter){0, INT64_MAX, 0, INT64_MAX, 1};
    L.filter.index_lo = 0, L.filter.index_hi = 10; /* threads 10..14 (block 2) left out */
    L.recs = recs, L.nrecs = n, L.bufs = bufs, L.nbufs = 3, L.copy = copy_fn;
    const double t0 = rt_now();
    ck_assert_msg(ks_rec_write_trace(&L, path) == KS_OK, "%s", ks_error_message());
    printf("long thread: %llu records on %d threads: %.2f s\n", (unsigned long long)n, threads, rt_now() - t0);
    ks_rec_build_threads = ks_kst_write_threads = 0;
}

START_TEST(a_long_thread_and_a_filter_match_one_cursor)
{
    setup_bufs();
    uint64_t n;
    ks_rec *recs = long_thread_records(&n);
    char dir[] = "/tmp/ks_rl_XXXXXX", p[3][64], cmd[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const int threads[3] = {1, 3, 7};
    for (int c = 0; c < 3; ++c) {
        snprintf(p[c], sizeof p[c], "%s/t%d.kst", dir, threads[c]);
        write_long(p[c], recs, n, threads[c]);
        if (c) {
            snprintf(cmd, sizeof cmd, "cmp -s %s %s", p[0], p[c]);
            ck_assert_msg(system(cmd) == 0, "the trace made on %d threads differs from one cursor's", threads[c]);
        }
    }
    /* every kept record's events, in each thread's order: the long thread's in full */
    uint64_t want = 0, want_long = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const int64_t index = (int64_t)recs[i].block * 5 + recs[i].thread;
        if (index >= 10) continue;
        const uint64_t ev = recs[i].size == 8 ? 2 : 1;
        want += ev;
        if (index == 6) want_long += ev;
    }
    want += 10; /* a work event for each kept thread */
    ks_trace tr;
    ck_assert_msg(ks_trace_open(p[0], &tr) == KS_OK, "%s", ks_error_message());
    ck_assert_uint_eq(tr.nevents, want);
    uint64_t got_long = 0;
    uint32_t seq = 0;
    for (uint64_t i = 0; i < tr.nevents; ++i) {
        ck_assert_msg(tr.events[i].index < 10, "a left-out thread's event");
        if (tr.events[i].index != 6 || tr.events[i].kind == KS_EV_WORK) continue;
        ck_assert_uint_eq(tr.events[i].seq, ++seq); /* in order, none lost or doubled */
        got_long++;
    }
    ck_assert_uint_eq(got_long, want_long);
    ks_trace_close(&tr);
    snprintf(cmd, sizeof cmd, "%s check %s >/dev/null 2>&1", KS_CLI, p[0]);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(recs);
}
END_TEST

/* The writer's failures: a source that cannot make chunk 3's events, and a disk that fills
 * in the middle of the events: one line each, and no file left. */
static const ks_trace *g_failing_tr;

static void *fs_open(void *ctx, uint64_t first, void *reuse)
{
    uint64_t *c = reuse ? reuse : malloc(sizeof *c);
    (void)ctx;
    if (c) *c = first;
    return c;
}

static const ks_event *fs_next(void *cursor, ks_event *buf, size_t n)
{
    uint64_t *c = cursor;
    (void)buf;
    if (*c >= 3 * 4096) return NULL;
    const ks_event *at = g_failing_tr->events + *c;
    *c += n;
    return at;
}

static void fs_close(void *cursor) { free(cursor); }

START_TEST(the_writer_fails_whole)
{
    setup_bufs();
    uint64_t n;
    ks_rec *recs = long_thread_records(&n);
    char dir[] = "/tmp/ks_rw_XXXXXX", path[64], out[64], cmd[160];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.kst", dir);
    snprintf(out, sizeof out, "%s/u.kst", dir);
    write_long(path, recs, n, 3);
    ks_trace tr;
    ck_assert_msg(ks_trace_open(path, &tr) == KS_OK, "%s", ks_error_message());
    ck_assert_uint_gt(tr.nevents, 6 * 4096);
    g_failing_tr = &tr;
    const ks_event_source src = {NULL, fs_open, fs_next, fs_close};
    ks_kst_write_threads = 3;
    ck_assert_int_ne(ks_trace_write_source(out, &tr, &src), KS_OK);
    ks_kst_write_threads = 0;
    ck_assert_ptr_null(strchr(ks_error_message(), '\n'));
    ck_assert_msg(strstr(ks_error_message(), "could not be made") != NULL, "%s", ks_error_message());
    ck_assert_int_ne(access(out, F_OK), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* room for the header, the tensors and half the events */
        const struct rlimit lim = {(rlim_t)st.st_size / 2, (rlim_t)st.st_size / 2};
        setrlimit(RLIMIT_FSIZE, &lim);
        signal(SIGXFSZ, SIG_IGN);
        ks_kst_write_threads = 3;
        const int rc = ks_trace_write(out, &tr);
        _exit(rc != KS_OK && strchr(ks_error_message(), '\n') == NULL ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the write did not fail with one line");
    ks_trace_close(&tr);
    unlink(path);
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
    ck_assert_msg(system(cmd) == 0, "something stayed in %s", dir);
    rmdir(dir);
    free(recs);
}
END_TEST

#ifdef KS_RECORD_CUBIN
/* the line of the first source line holding `text` in the kernel source */
static int source_line_of(const char *text)
{
    FILE *f = fopen(KS_RECORD_CU, "r");
    ck_assert_ptr_nonnull(f);
    char buf[512];
    int n = 0, found = 0;
    while (!found && fgets(buf, sizeof buf, f)) found = ++n, found = strstr(buf, text) ? n : 0;
    fclose(f);
    ck_assert_msg(found, "%s not in the source", text);
    return found;
}

/* the test cubin's bytes into img (at most room), their count */
static size_t read_cubin(uint8_t *img, size_t room)
{
    FILE *f = fopen(KS_RECORD_CUBIN, "rb");
    ck_assert_ptr_nonnull(f);
    const size_t size = fread(img, 1, room, f);
    fclose(f);
    return size;
}

/* the cubin's line rows against binutils' reading of the same table (readelf), and the
 * lines of two instructions against the source */
START_TEST(cubin_line_table)
{
    static uint8_t img[1 << 20];
    const size_t size = read_cubin(img, sizeof img);
    ks_cubin_lines t;
    ck_assert_int_eq(ks_cubin_lines_read(img, size, &t), 0);
    ck_assert_int_eq(t.nfns, 2);
    ck_assert_uint_gt(t.nrows, 8);
    /* readelf's rows: "FILE LINE ADDR ..." under --debug-dump=decodedline */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "readelf --debug-dump=decodedline %s 2>/dev/null", KS_RECORD_CUBIN);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char buf[512];
    size_t matched = 0, theirs = 0;
    int *used = calloc(t.nrows, sizeof *used);
    while (fgets(buf, sizeof buf, p)) {
        char file[256], addr[64];
        int line;
        if (sscanf(buf, "%255s %d %63s", file, &line, addr) != 3 || !strstr(file, ".")) continue;
        const uint32_t a = (uint32_t)strtoul(addr, NULL, 0);
        ++theirs;
        for (size_t k = 0; k < t.nrows; ++k) {
            const char *base = strrchr(t.files[t.rows[k].file], '/');
            base = base ? base + 1 : t.files[t.rows[k].file];
            if (!used[k] && t.rows[k].line == line && t.rows[k].addr == a && !strcmp(base, file)) {
                used[k] = 1, ++matched;
                break;
            }
        }
    }
    pclose(p);
    free(used);
    ck_assert_msg(theirs == t.nrows && matched == t.nrows, "readelf %zu rows, ours %zu, %zu equal", theirs, t.nrows,
                  matched);
    /* hist's atomicAdd comes from a toolkit header: its line is the user's call */
    const char *file;
    int line, found = 0;
    for (size_t k = 0; k < t.nrows; ++k)
        if (strstr(t.files[t.rows[k].file], "atomic") && !strcmp(t.fns[t.rows[k].fn], "_Z4histPKiPiii")) {
            ck_assert_int_eq(ks_cubin_line_of(&t, "_Z4histPKiPiii", t.rows[k].addr, &file, &line), 1);
            ck_assert_int_eq(line, source_line_of("atomicAdd(&bins"));
            ck_assert_ptr_nonnull(strstr(file, "record_target.cu"));
            found = 1;
        }
    ck_assert_msg(found, "no toolkit row in hist");
    ck_assert_int_eq(ks_cubin_line_of(&t, "_Z8gather2dPKfPKiPfii", 0, &file, &line), 1);
    ck_assert_int_eq(line, source_line_of("__global__ void gather2d"));
    ck_assert_int_eq(ks_cubin_line_of(&t, "_Z5otherv", 0, &file, &line), 0);
    ks_cubin_lines_free(&t);
    /* a cut image reads as no lines, never past its end */
    for (size_t cut = 0; cut < size; cut += size / 97 + 1) {
        ck_assert_int_eq(ks_cubin_lines_read(img, cut, &t), 0);
        ks_cubin_lines_free(&t);
    }
}
END_TEST

/* the functions a cubin holds (the recorder leaves a module none of whose functions
 * --kernel takes unpatched) against readelf's FUNC symbols of the same file */
START_TEST(cubin_functions_are_readelfs)
{
    static uint8_t img[1 << 20];
    const size_t size = read_cubin(img, sizeof img);
    char **fns;
    int n;
    ck_assert_int_eq(ks_cubin_functions(img, size, &fns, &n), 0);
    char cmd[600], buf[512];
    snprintf(cmd, sizeof cmd, "readelf -sW %s 2>/dev/null", KS_RECORD_CUBIN);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int theirs = 0;
    while (fgets(buf, sizeof buf, p)) {
        if (!strstr(buf, " FUNC ")) continue;
        char *name = strrchr(buf, ' ');
        name[strcspn(name, "\n")] = 0, ++name;
        int found = 0;
        for (int i = 0; i < n; ++i) found += !strcmp(fns[i], name);
        ck_assert_msg(found == 1, "readelf's %s found %d times", name, found);
        ++theirs;
    }
    pclose(p);
    ck_assert_int_eq(theirs, 2); /* hist and gather2d */
    ck_assert_int_eq(n, theirs);
    ks_cubin_names_free(fns, n);
    /* not an ELF image, or one cut short: -1 or fewer functions, never past its end */
    ck_assert_int_eq(ks_cubin_functions(img + 1, size - 1, &fns, &n), -1);
    for (size_t cut = 0; cut < size; cut += size / 97 + 1) {
        if (ks_cubin_functions(img, cut, &fns, &n) == 0) ck_assert_int_le(n, 2);
        ks_cubin_names_free(fns, n);
    }
}
END_TEST
#endif

/* a full disk (a file size limit here): the write fails with a message and leaves no
 * file and no temporary behind */
START_TEST(a_full_disk_leaves_nothing)
{
    setup_bufs();
    char dir[] = "/tmp/ks_rf_XXXXXX", path[64], cmd[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.kst", dir);
    /* synced (the default) or not (the recorder's ks_out_durable = 0): the same */
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        ks_out_durable = _i;
        const struct rlimit small = {8192, 8192};
        setrlimit(RLIMIT_FSIZE, &small);
        uint64_t n;
        ks_rec *recs = make_records(&n, 0, GX * GY);
        ks_rec_launch L;
        memset(&L, 0, sizeof L);
        snprintf(L.kernel, sizeof L.kernel, "k(int)");
        snprintf(L.short_name, sizeof L.short_name, "k");
        L.grid[0] = GX, L.grid[1] = GY, L.grid[2] = 1, L.block[0] = BX, L.block[1] = BY, L.block[2] = 1;
        L.filter = ks_filter_all();
        L.recs = recs, L.nrecs = n, L.bufs = bufs, L.nbufs = 3, L.copy = copy_fn;
        const int rc = ks_rec_write_trace(&L, path);
        _exit(rc != KS_OK && strchr(ks_error_message(), '\n') == NULL ? 0 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the write did not fail with one line");
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
    ck_assert_msg(system(cmd) == 0, "something stayed in %s", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static int cycling_lines(uint32_t pc, ks_rec_line *out, void *ctx)
{
    (void)ctx;
    snprintf(out->file, sizeof out->file, "/nonexistent/k.cu");
    out->line = 10 + (int)((pc / 16) % 20);
    return 1;
}

/* 100 instructions over 20 lines (the line cache grows past 64 while sites keep their
 * file): 20 sites, each the line of its instructions, their ranks in tap's low bits */
START_TEST(many_instructions_over_few_lines)
{
    static ks_rec recs[100];
    ks_rec_buf buf = {0x10000, 4096, "x", 1, KS_F32, 1, {1024}};
    for (int i = 0; i < 100; ++i)
        recs[i] = (ks_rec){0x10000 + 4 * (uint64_t)i, (uint32_t)(16 * i), 0, 0, 4, KS_REC_READ, 0, 0};
    ks_rec_launch L;
    memset(&L, 0, sizeof L);
    snprintf(L.kernel, sizeof L.kernel, "k(float*)");
    snprintf(L.short_name, sizeof L.short_name, "k");
    L.grid[0] = L.grid[1] = L.grid[2] = 1, L.block[0] = 32, L.block[1] = L.block[2] = 1;
    L.filter = ks_filter_all(), L.recs = recs, L.nrecs = 100, L.bufs = &buf, L.nbufs = 1, L.line_of = cycling_lines;
    char dir[] = "/tmp/ks_rl_XXXXXX", path[64], cmd[96];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.kst", dir);
    ck_assert_int_eq(ks_rec_write_trace(&L, path), KS_OK);
    ks_trace tr;
    ck_assert_int_eq(ks_trace_open(path, &tr), KS_OK);
    ck_assert_int_eq(tr.nsites, 21);
    for (uint64_t e = 0; e < tr.nevents; ++e) {
        const ks_event *x = &tr.events[e];
        if (x->kind != KS_EV_READ) continue;
        const int i = (int)x->u.access.offset, line = 10 + i % 20;
        char want[32];
        snprintf(want, sizeof want, "k.cu:%d", line);
        ck_assert_str_eq(tr.sites[x->site].name, want);
        ck_assert_int_eq(x->tap, i / 20); /* the i/20-th instruction of its line, run once */
    }
    ks_trace_close(&tr);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* a line table whose file name is longer than any path: read as a cut name, nothing
 * written past the reader's buffers (the ASan build checks) */
START_TEST(cubin_with_a_huge_file_name)
{
    static uint8_t img[4096];
    memset(img, 0, sizeof img);
    uint8_t unit[2048];
    size_t u = 0;
    /* header after unit_length: version 2, header_length, min_inst 1, is_stmt 1,
     * line_base -5, line_range 14, opcode_base 10, nine standard lengths */
    const uint8_t rest[] = {1, 1, 0xfb, 14, 10, 0, 1, 1, 1, 1, 0, 0, 0, 1};
    uint8_t hdr[1700];
    size_t h = 0;
    memcpy(hdr, rest, sizeof rest), h += sizeof rest;
    hdr[h++] = 'd', hdr[h++] = 0, hdr[h++] = 0;             /* include dir "d" */
    memset(hdr + h, 'a', 1500), h += 1500, hdr[h++] = 0;    /* file name */
    hdr[h++] = 1, hdr[h++] = 0, hdr[h++] = 0, hdr[h++] = 0; /* dir 1, mtime, size; end */
    unit[u++] = 2, unit[u++] = 0;                           /* version */
    for (int k = 0; k < 4; ++k) unit[u++] = (uint8_t)(h >> (8 * k));
    memcpy(unit + u, hdr, h), u += h;
    unit[u++] = 1; /* DW_LNS_copy */
    const char shstr[] = "\0.shstrtab\0.debug_line";
    size_t off = 64;
    const size_t off_str = off;
    memcpy(img + off, shstr, sizeof shstr), off += sizeof shstr;
    const size_t off_line = off;
    for (int k = 0; k < 4; ++k) img[off++] = (uint8_t)(u >> (8 * k));
    memcpy(img + off, unit, u), off += u;
    off = (off + 7) & ~(size_t)7;
    Elf64_Shdr sh[3];
    memset(sh, 0, sizeof sh);
    sh[1].sh_name = 1, sh[1].sh_type = SHT_STRTAB, sh[1].sh_offset = off_str, sh[1].sh_size = sizeof shstr;
    sh[2].sh_name = 11, sh[2].sh_type = SHT_PROGBITS, sh[2].sh_offset = off_line, sh[2].sh_size = u + 4;
    memcpy(img + off, sh, sizeof sh);
    Elf64_Ehdr eh;
    memset(&eh, 0, sizeof eh);
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64, eh.e_ident[EI_DATA] = ELFDATA2LSB, eh.e_ident[EI_VERSION] = 1;
    eh.e_type = ET_EXEC, eh.e_machine = 190, eh.e_version = 1, eh.e_shoff = off, eh.e_ehsize = 64;
    eh.e_shentsize = sizeof(Elf64_Shdr), eh.e_shnum = 3, eh.e_shstrndx = 1;
    memcpy(img, &eh, sizeof eh);
    ks_cubin_lines t;
    ck_assert_int_eq(ks_cubin_lines_read(img, off + sizeof sh, &t), 0);
    ck_assert_int_eq(t.nfiles, 1);
    ck_assert_uint_eq(strlen(t.files[0]), 1023);
    ck_assert_uint_eq(t.nrows, 0); /* a sequence with no address: no function, no row */
    ks_cubin_lines_free(&t);
}
END_TEST

/* --shared-accesses: a 1-D block of 12 threads of a tiled shift: each thread stores
 * in[t] into shared word t, arrives at __syncthreads, then reads word (t + 1) % 12 (its
 * neighbour's) and writes out[t]. As
 * recorded (slots interleaved across threads), the trace has barrier events with phases,
 * shared events with KS_FLAG_SHARED and their phase, and kscope check passes; the same
 * kernel with the barrier missing is a shared-memory race that check names. */
#define SB 12
static ks_rec rec_of(uint64_t addr, uint32_t pc, int t, uint8_t size, uint8_t flags, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    return (ks_rec){addr, pc, 0, (uint16_t)t, size, flags, 0, size ? bits : 0};
}

static ks_rec *shared_records(uint64_t *n, int with_barrier)
{
    ks_rec *r = calloc(SB * 6, sizeof *r);
    uint64_t k = 0, s = 99;
    int next[SB] = {0};
    const int per = with_barrier ? 5 : 4;
    for (int left = SB * per; left;) {
        const int t = (int)tu_int(&s, 0, SB - 1);
        if (next[t] == per) continue;
        int step = next[t]++;
        if (!with_barrier && step >= 2) ++step; /* no barrier record */
        const float in = g_in[t], got = g_in[(t + 1) % SB];
        const uint64_t sh = KS_REC_SHARED_BASE + 1024; /* past the 1 KiB sm_90 reserves */
        switch (step) {
        case 0: r[k++] = rec_of(A_IN + 4u * (uint64_t)t, 0x10, t, 4, KS_REC_READ, in); break;
        case 1: r[k++] = rec_of(sh + 4u * (uint64_t)t, 0x20, t, 4, KS_REC_WRITE | KS_REC_SHARED, in); break;
        case 2: r[k++] = rec_of(0, 0x30, t, 0, KS_REC_BARRIER, 0.0f); break;
        case 3:
            r[k++] = rec_of(sh + 4u * (uint64_t)((t + 1) % SB), 0x40, t, 4, KS_REC_READ | KS_REC_SHARED, got);
            break;
        default: r[k++] = rec_of(A_GLOBAL + 4u * (uint64_t)t, 0x50, t, 4, KS_REC_WRITE, got);
        }
        --left;
    }
    *n = k;
    return r;
}

static void write_shared_trace(const char *path, int with_barrier)
{
    uint64_t n;
    ks_rec *recs = shared_records(&n, with_barrier);
    ks_rec_launch L;
    memset(&L, 0, sizeof L);
    snprintf(L.kernel, sizeof L.kernel, "void shift(float const*, float*)");
    ks_rec_short_name(L.kernel, L.short_name, sizeof L.short_name);
    L.grid[0] = L.grid[1] = L.grid[2] = 1, L.block[0] = SB, L.block[1] = L.block[2] = 1;
    L.filter = ks_filter_all();
    L.recs = recs, L.nrecs = n, L.bufs = bufs, L.nbufs = 1, L.copy = copy_fn;
    ck_assert_msg(ks_rec_write_trace(&L, path) == KS_OK, "%s", ks_error_message());
    free(recs);
}

START_TEST(shared_accesses_and_barriers)
{
    setup_bufs();
    char p1[64], p2[64], args[200];
    snprintf(p1, sizeof p1, "/tmp/ks_rec_shared_%d.kst", (int)getpid());
    snprintf(p2, sizeof p2, "/tmp/ks_rec_racy_%d.kst", (int)getpid());
    write_shared_trace(p1, 1);
    write_shared_trace(p2, 0);
    ks_trace tr;
    ck_assert_msg(ks_trace_open(p1, &tr) == KS_OK, "%s", ks_error_message());
    const int sh = ks_trace_tensor(&tr, "shared");
    ck_assert_int_ge(sh, 0);
    ck_assert_int_eq(tr.tensors[sh].shape[0], SB); /* words 0..SB-1 touched */
    ck_assert_msg(strstr(tr.params, "\"shared\":\"shared:0x400+48\""), "%s", tr.params);
    int bars = 0, shared = 0;
    for (uint64_t i = 0; i < tr.nevents; ++i) {
        const ks_event *e = &tr.events[i];
        if (e->kind == KS_EV_BARRIER) {
            ck_assert_uint_eq(e->u.barrier.phase, 0);
            ++bars;
        } else if ((e->kind == KS_EV_READ || e->kind == KS_EV_WRITE) && e->tensor == sh) {
            ck_assert(e->flags & KS_FLAG_SHARED);
            /* the store before the barrier is phase 0, the read after it phase 1 */
            ck_assert_int_eq(e->u.access.reserved[0], e->kind == KS_EV_READ);
            ck_assert_int_eq(e->u.access.offset, e->kind == KS_EV_WRITE ? e->thread : (e->thread + 1) % SB);
            ++shared;
        } else {
            ck_assert(!(e->flags & KS_FLAG_SHARED));
        }
    }
    ck_assert_int_eq(bars, SB);
    ck_assert_int_eq(shared, 2 * SB);
    ks_trace_close(&tr);
    snprintf(args, sizeof args, "check %s", p1);
    ck_assert_int_eq(kscope_rc(args), 0);
    snprintf(args, sizeof args, "%s check %s 2>&1 | grep -q 'shared-memory race'", KS_CLI, p2);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "check %s", p2);
    ck_assert_int_eq(kscope_rc(args), 1);
    unlink(p1), unlink(p2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("record_trace");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, short_names);
    tcase_add_test(tc, diff_access_sets);
    tcase_add_loop_test(tc, a_full_disk_leaves_nothing, 0, 2);
    tcase_add_test(tc, many_instructions_over_few_lines);
    tcase_add_test(tc, cubin_with_a_huge_file_name);
    tcase_add_loop_test(tc, records_become_the_trace_of_each_thread, 0, 2);
    tcase_add_test(tc, any_thread_count_gives_the_same_trace);
    tcase_add_test(tc, runs_give_each_thread_in_program_order);
    tcase_add_test(tc, a_long_thread_and_a_filter_match_one_cursor);
    tcase_add_test(tc, the_writer_fails_whole);
    tcase_add_test(tc, shared_accesses_and_barriers);
#ifdef KS_RECORD_CUBIN
    tcase_add_test(tc, cubin_line_table);
    tcase_add_test(tc, cubin_functions_are_readelfs);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
