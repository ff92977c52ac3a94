#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, madvise */
#include "ks_sim.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

#include "ks_error.h"
#include "ks_launch.h"

void ks_sim_thread_init(ks_thread *t, int64_t blocks, int threads, ks_sink *sink)
{
    memset(t, 0, sizeof *t);
    t->grid_dim.x = (uint32_t)blocks;
    t->grid_dim.y = t->grid_dim.z = 1;
    t->block_dim.x = (uint32_t)threads;
    t->block_dim.y = t->block_dim.z = 1;
    t->sink = sink;
    t->shared_tensor = 255;
}

void ks_sim_schedule_block(ks_sink *sink, int64_t b, int threads)
{
    if (!sink || !sink->schedule || b >= sink->schedule_blocks) return;
    int64_t *s = sink->schedule + 4 * b; /* a virtual clock: bodies run so far */
    s[0] = b, s[1] = -1, s[2] = b * threads, s[3] = (b + 1) * threads;
}

static ks_sim_progress_fn g_progress;
static void *g_progress_ctx;
static int64_t g_progress_ms;
static int g_launches; /* launches since ks_sim_set_progress */

void ks_sim_set_progress(ks_sim_progress_fn fn, void *ctx, int64_t every_ms)
{
    g_progress = fn, g_progress_ctx = ctx, g_progress_ms = every_ms < 0 ? 0 : every_ms, g_launches = 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    if (!timespec_get(&ts, TIME_UTC)) return 0;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ks_sim_ticker_start(ks_sim_ticker *k)
{
    k->fn = g_progress, k->ctx = g_progress_ctx, k->every_ms = g_progress_ms, k->called = 0;
    k->launch = k->fn ? ++g_launches : 0;
    k->next_ms = k->fn ? now_ms() + k->every_ms : 0;
}

void ks_sim_ticker_block(ks_sim_ticker *k, int64_t done, int64_t total)
{
    if (!k->fn) return;
    const int64_t now = now_ms();
    if (now < k->next_ms) return;
    k->fn(k->ctx, k->launch, done, total);
    k->called = 1, k->next_ms = now + k->every_ms;
}

void ks_sim_ticker_end(ks_sim_ticker *k, int64_t total)
{
    if (k->fn && k->called) k->fn(k->ctx, k->launch, total, total);
}

void ks_sim_launch(int64_t blocks, int threads, ks_sim_body body, const void *args, ks_sink *sink)
{
    ks_thread t;
    ks_sim_ticker tick;
    ks_sim_thread_init(&t, blocks, threads, sink);
    ks_sim_ticker_start(&tick);
    for (int64_t b = 0; b < blocks; ++b) {
        t.block_idx.x = (uint32_t)b;
        for (int th = 0; th < threads; ++th) {
            t.thread_idx.x = (uint32_t)th;
            t.keep = 0;
            t.seq = 0;
            t.iter = 0;
            body(&t, args);
        }
        ks_sim_schedule_block(sink, b, threads);
        if (b + 1 < blocks) ks_sim_ticker_block(&tick, b + 1, blocks);
    }
    ks_sim_ticker_end(&tick, blocks);
}

void ks_sim_launch_dims(ks_dim3 grid, ks_dim3 block, ks_sim_body body, const void *args, ks_sink *sink)
{
    ks_dim3 *const dims[2] = {&grid, &block};
    for (int k = 0; k < 2; ++k) {
        if (!dims[k]->x) dims[k]->x = 1;
        if (!dims[k]->y) dims[k]->y = 1;
        if (!dims[k]->z) dims[k]->z = 1;
    }
    const int64_t blocks = (int64_t)grid.x * grid.y * grid.z;
    const int threads = (int)(block.x * block.y * block.z);
    ks_thread t;
    ks_sim_ticker tick;
    ks_sim_thread_init(&t, blocks, threads, sink);
    t.grid_dim = grid, t.block_dim = block;
    ks_sim_ticker_start(&tick);
    int64_t b = 0; /* the linear block number */
    for (uint32_t bz = 0; bz < grid.z; ++bz)
        for (uint32_t by = 0; by < grid.y; ++by)
            for (uint32_t bx = 0; bx < grid.x; ++bx, ++b) {
                t.block_idx.x = bx, t.block_idx.y = by, t.block_idx.z = bz;
                for (uint32_t tz = 0; tz < block.z; ++tz)
                    for (uint32_t ty = 0; ty < block.y; ++ty)
                        for (uint32_t tx = 0; tx < block.x; ++tx) {
                            t.thread_idx.x = tx, t.thread_idx.y = ty, t.thread_idx.z = tz;
                            t.keep = 0;
                            t.seq = 0;
                            t.iter = 0;
                            body(&t, args);
                        }
                ks_sim_schedule_block(sink, b, threads);
                if (b + 1 < blocks) ks_sim_ticker_block(&tick, b + 1, blocks);
            }
    ks_sim_ticker_end(&tick, blocks);
}

ks_status ks_launch_resolve(const ks_launch *l, int default_threads, int64_t default_cap, int64_t work,
                            int *threads_out, int64_t *blocks_out)
{
    int threads = l && l->threads ? l->threads : default_threads;
    int64_t cap = l && l->block_cap ? l->block_cap : default_cap;
    if (threads < 1 || threads > 1024)
        return ks_fail(KS_EINVAL, "threads per block must be in 1..1024 (got %d)", threads);
    if (cap == 0 || cap < -1)
        return ks_fail(KS_EINVAL, "block cap must be >= 1 or -1 for none (got %lld)", (long long)cap);
    int64_t blocks = work / threads + (work % threads != 0);
    if (cap > 0 && blocks > cap) blocks = cap;
    if (blocks > KS_MAX_GRID_X) blocks = KS_MAX_GRID_X;
    *threads_out = threads;
    *blocks_out = blocks;
    return KS_OK;
}

ks_filter ks_filter_all(void)
{
    ks_filter f;
    f.index_lo = 0;
    f.index_hi = INT64_MAX;
    f.block_lo = 0;
    f.block_hi = INT64_MAX;
    f.every = 1;
    return f;
}

ks_sink *ks_host_sink_create(unsigned long long limit, ks_filter filter)
{
    ks_sink *s = calloc(1, sizeof *s);
    if (!s) goto fail;
    s->counters = calloc(2, sizeof *s->counters);
    if (!s->counters) goto fail;
    s->capacity = 0;
    s->limit = limit ? limit : (1ULL << 26);
    s->filter = filter;
    /* Reserve the whole room: growing by realloc copied every event once or twice and
     * faulted a fresh 4 KiB page every 64 events (bench_sim: the larger part of a traced
     * run's time). Only pages that events reach are ever backed. */
    if (s->limit <= (1ULL << 40) / sizeof(ks_event)) {
        const size_t bytes = (size_t)(s->limit * sizeof(ks_event));
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
            (void)madvise(m, bytes, MADV_HUGEPAGE); /* fewer faults where the kernel allows it */
#endif
            s->events = m;
            s->capacity = s->limit;
            s->reserved_bytes = bytes;
        }
    }
    return s;
fail:
    free(s);
    ks_fail(KS_ENOMEM, "out of memory for the trace sink");
    return NULL;
}

ks_status ks_host_sink_grow(ks_sink *s)
{
    if (s->capacity >= s->limit) return KS_ENOMEM;
    unsigned long long cap = s->capacity ? s->capacity * 2 : 4096;
    if (cap > s->limit) cap = s->limit;
    ks_event *ev = realloc(s->events, cap * sizeof *ev);
    if (!ev) {
        s->limit = s->capacity; /* out of memory: stop growing, count drops */
        return KS_ENOMEM;
    }
    s->events = ev;
    s->capacity = cap;
    return KS_OK;
}

void ks_host_sink_free(ks_sink *s)
{
    if (!s) return;
    if (s->reserved_bytes) munmap(s->events, (size_t)s->reserved_bytes);
    else free(s->events);
    free(s->counters);
    free(s);
}

unsigned long long ks_sink_count(const ks_sink *s)
{
    return s->counters[0] < s->capacity ? s->counters[0] : s->capacity;
}

unsigned long long ks_sink_dropped(const ks_sink *s) { return s->counters[1]; }
