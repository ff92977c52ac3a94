/* ks_shared.h - block-shared memory and barriers in a kernel body, one spelling for
 * CUDA and the simulator.
 *
 *   KS_SHARED(float, tile, 16 * 16);          CUDA: __shared__ float tile[16 * 16]
 *   ks_shared_store(t, tile, i, v);           tile[i] = v
 *   ks_syncthreads(t);                        CUDA: __syncthreads()
 *   float v = ks_shared_load(t, tile, i);     tile[i]
 *
 * In the simulator the threads of a block run as cooperative fibers (ks_sim_launch_coop):
 * a thread runs until its next ks_syncthreads, and the block passes the barrier once every
 * thread reached it. KS_SHARED hands out a block-wide array of a per-block arena, by name
 * (every thread gets the same one), filled with 0xFF bytes (a float NaN) so a read of a
 * slot nobody wrote shows. Every shared access through ks_shared_load/store is checked
 * there against the others of its barrier phase (docs/simulator.md): a slot written by
 * one thread and read or written by another in the same phase is a race.
 *
 * Traced: after KS_PROBE(ks_shared_trace(t, tensor, site, rows, cols)) each access is a
 * read or write event on trace tensor `tensor` (shape (arrays, rows, cols): an array's
 * plane is its number in first-use order) at site `site` (reads), `site + 1` (writes),
 * with flag KS_FLAG_SHARED and the thread's phase in access.reserved[0] (the line of the
 * barrier that opened it in reserved[1]); each barrier arrival is a KS_EV_BARRIER event at
 * site `site + 2`. Bodies name their thread `t`; shared arrays hold 4-byte elements.
 */
#ifndef KS_SHARED_H
#define KS_SHARED_H

#include "ks_probe.h"
#if !defined(__CUDA_ARCH__)
#include "ks_sim.h"
#endif

#if defined(__CUDA_ARCH__)
#define KS_SHARED(type, name, count) __shared__ type name[count]
#else
#define KS_SHARED(type, name, count) \
    type *const name = (type *)ks_sim_shared_alloc(sizeof(type) * (size_t)(count), #name)
#endif

/* Names the trace tensor and sites of the shared accesses (see above). */
KS_FN void ks_shared_trace(ks_thread *t, int tensor, int site, int64_t rows, int64_t cols)
{
    t->shared_tensor = (uint8_t)tensor;
    t->shared_site = (uint16_t)site;
    t->shared_rows = (uint32_t)rows;
    t->shared_cols = (uint32_t)cols;
}

/* The event of one shared access of element i of array `arr` (recorded items only). */
KS_FN void ks_probe_shared(ks_thread *t, int kind, const void *arr, int64_t i, float value)
{
    ks_event e;
    if (!t->keep) return;
    int id = 0;
    while (id < t->nshared && t->shared_arr[id] != arr) ++id;
    if (id == t->nshared) {
        if (id < KS_SHARED_ARRAYS) t->shared_arr[t->nshared++] = arr;
        else id = KS_SHARED_ARRAYS - 1; /* more arrays than the trace names apart */
    }
    const int64_t cols = t->shared_cols ? t->shared_cols : 1, rows = t->shared_rows ? t->shared_rows : 1;
    ks_probe_head(t, &e, kind, t->shared_site + (kind == KS_EV_WRITE), t->shared_tensor, 0);
    e.flags = KS_FLAG_SHARED;
    e.u.access.offset = (int64_t)id * rows * cols + i;
    e.u.access.plane = id;
    e.u.access.y = (int32_t)(i / cols);
    e.u.access.x = (int32_t)(i % cols);
    e.u.access.value = value;
    e.u.access.reserved[0] = (int32_t)t->phase;
    e.u.access.reserved[1] = t->barrier_line;
    ks_sink_put(t->sink, &e);
}

KS_FN float ks_shared_load(ks_thread *t, const float *p, int64_t i)
{
#if !defined(__CUDA_ARCH__)
    ks_sim_shared_access(t, p + i, 0);
#endif
    const float v = p[i];
    ks_probe_shared(t, KS_EV_READ, p, i, v);
    return v;
}

KS_FN void ks_shared_store(ks_thread *t, float *p, int64_t i, float v)
{
#if !defined(__CUDA_ARCH__)
    ks_sim_shared_access(t, p + i, 1);
#endif
    p[i] = v;
    ks_probe_shared(t, KS_EV_WRITE, p, i, v);
}

KS_FN int32_t ks_shared_load_i32(ks_thread *t, const int32_t *p, int64_t i)
{
#if !defined(__CUDA_ARCH__)
    ks_sim_shared_access(t, p + i, 0);
#endif
    const int32_t v = p[i];
    ks_probe_shared(t, KS_EV_READ, p, i, (float)v);
    return v;
}

KS_FN void ks_shared_store_i32(ks_thread *t, int32_t *p, int64_t i, int32_t v)
{
#if !defined(__CUDA_ARCH__)
    ks_sim_shared_access(t, p + i, 1);
#endif
    p[i] = v;
    ks_probe_shared(t, KS_EV_WRITE, p, i, (float)v);
}

/* A barrier arrival (recorded items only): the line and the phase it ends. */
KS_FN void ks_probe_barrier(ks_thread *t, int line)
{
    ks_event e;
    if (!t->keep) return;
    ks_probe_head(t, &e, KS_EV_BARRIER, t->shared_site + 2, t->shared_tensor, 0);
    e.u.barrier.line = line;
    e.u.barrier.phase = t->phase;
    for (int k = 0; k < 6; ++k) e.u.barrier.reserved[k] = 0;
    ks_sink_put(t->sink, &e);
}

/* __syncthreads(): the line names the barrier in reports and in the trace. */
#define ks_syncthreads(t) ks_syncthreads_at((t), __LINE__)

KS_FN void ks_syncthreads_at(ks_thread *t, int line)
{
    ks_probe_barrier(t, line);
#if defined(__CUDA_ARCH__)
    __syncthreads();
#else
    ks_sim_barrier(t, line);
#endif
    t->phase++;
    t->barrier_line = line;
}

#endif /* KS_SHARED_H */
