/* ks_shared.h - block-shared memory and barriers in a kernel body, one spelling for
 * CUDA and the simulator.
 *
 *   KS_SHARED(float, tile, 16 * 16);          CUDA: __shared__ float tile[16 * 16]
 *   ks_shared_store(t, tile, i, v);           tile[i] = v
 *   ks_syncthreads(t);                        CUDA: __syncthreads()
 *   float v = ks_shared_load(t, tile, i);     tile[i]
 *   KS_SHARED_DYN(float, tile, n);            CUDA: extern __shared__ float tile[] (n floats
 *                                             launched); the simulator: as KS_SHARED
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
 * plane is its number in first-use order, at most KS_SHARED_ARRAYS arrays, as many as the
 * simulator allows) at site `site` (reads), `site + 1` (writes),
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
/* a block's dynamic shared memory (the launch's third <<<>>> argument: at least count
 * elements; past 48 KiB after cudaFuncSetAttribute(MaxDynamicSharedMemorySize)) */
#define KS_SHARED_DYN(type, name, count) extern __shared__ type name[]
#else
#define KS_SHARED(type, name, count) \
    type *const name = (type *)ks_sim_shared_alloc(sizeof(type) * (size_t)(count), #name)
#define KS_SHARED_DYN(type, name, count) KS_SHARED(type, name, count)
#endif

/* Names the trace tensor and sites of the shared accesses (see above). */
KS_FN void ks_shared_trace(ks_thread *t, int tensor, int site, int64_t rows, int64_t cols)
{
    t->shared_tensor = (uint8_t)tensor;
    t->shared_site = (uint16_t)site;
    t->shared_rows = (uint32_t)rows;
    t->shared_cols = (uint32_t)cols;
}

/* The event of one shared access of element i of array `arr` (recorded items only).
 * `inside`: the simulator found i inside the array (the GPU cannot tell: 1). An index
 * outside the array or past its rows x cols plane, or an array past the
 * KS_SHARED_ARRAYS-th, is recorded at offset -1 (y -1, x = i): a violation `check` names,
 * never an alias of another slot. */
KS_FN void ks_probe_shared(ks_thread *t, int kind, const void *arr, int64_t i, float value, int inside)
{
    if (!t->keep) return;
    int id = 0;
    while (id < t->nshared && t->shared_arr[id] != arr) ++id;
    if (id == t->nshared && id < KS_SHARED_ARRAYS) t->shared_arr[t->nshared++] = arr;
    const int64_t cols = t->shared_cols ? t->shared_cols : 1, rows = t->shared_rows ? t->shared_rows : 1;
    const int ok = inside && id < KS_SHARED_ARRAYS && i >= 0 && i < rows * cols;
    const int64_t offset = ok ? (int64_t)id * rows * cols + i : -1;
    ks_probe_emit(t, kind, KS_FLAG_SHARED, t->shared_site + (kind == KS_EV_WRITE), t->shared_tensor, 0,
                  (uint32_t)(uint64_t)offset, (uint32_t)((uint64_t)offset >> 32), (uint32_t)id,
                  ok ? (uint32_t)(i / cols) : (uint32_t)-1, ok ? (uint32_t)(i % cols) : (uint32_t)i, ks_f32_bits(value),
                  t->phase, (uint32_t)t->barrier_line);
}

/* ks_shared_load / ks_shared_store (float) and ks_shared_load_i32 / ks_shared_store_i32:
 * the access (checked against its phase in the simulator: one outside the array is not
 * made there, a load of it gives 0), then its event. */
#if defined(__CUDA_ARCH__)
#define KS_SHARED_CHECK(t, p, i, write) 1
#else
#define KS_SHARED_CHECK(t, p, i, write) ks_sim_shared_access((t), (p), (i), (write))
#endif
#define KS_SHARED_ACCESSORS(sfx, T)                                                     \
    KS_FN T ks_shared_load##sfx##_at(ks_thread *t, const T *p, int64_t i, int probe)    \
    {                                                                                   \
        const int in = KS_SHARED_CHECK(t, p, i, 0);                                     \
        const T v = in ? p[i] : (T)0;                                                   \
        if (probe) ks_probe_shared(t, KS_EV_READ, p, i, (float)v, in);                  \
        return v;                                                                       \
    }                                                                                   \
    KS_FN void ks_shared_store##sfx##_at(ks_thread *t, T *p, int64_t i, T v, int probe) \
    {                                                                                   \
        const int in = KS_SHARED_CHECK(t, p, i, 1);                                     \
        if (in) p[i] = v;                                                               \
        if (probe) ks_probe_shared(t, KS_EV_WRITE, p, i, (float)v, in);                 \
    }
KS_SHARED_ACCESSORS(, float)
KS_SHARED_ACCESSORS(_i32, int32_t)
/* KS_SHARED_PROBES: whether an access may record. ks_variants.h makes it KS_TRACED while it
 * compiles a body, so a plain variant drops the recording at compile time: on the GPU the
 * check of t->keep would otherwise stay (a store through a global pointer may alias the
 * thread's state, as far as the compiler knows) and keep ks_thread in local memory. Code
 * outside ks_variants.h (the puzzles, tests) keeps the run-time check. */
#ifndef KS_SHARED_PROBES
#define KS_SHARED_PROBES 1
#endif
#define ks_shared_load(t, p, i) ks_shared_load_at((t), (p), (i), KS_SHARED_PROBES)
#define ks_shared_store(t, p, i, v) ks_shared_store_at((t), (p), (i), (v), KS_SHARED_PROBES)
#define ks_shared_load_i32(t, p, i) ks_shared_load_i32_at((t), (p), (i), KS_SHARED_PROBES)
#define ks_shared_store_i32(t, p, i, v) ks_shared_store_i32_at((t), (p), (i), (v), KS_SHARED_PROBES)

/* atomicAdd on a shared float. In the simulator the fibers of a block run one at a time,
 * so a plain add is atomic. The race check sees it (ks_hazard_atomic): atomic adds are
 * no race with one another, but a plain read or write of the slot by another thread in
 * the same barrier phase is. Not recorded in the trace (the kernel records what it adds),
 * so `kscope check` does not see it. */
KS_FN void ks_shared_atomic_add(ks_thread *t, float *p, int64_t i, float v)
{
#if defined(__CUDA_ARCH__)
    (void)t;
    atomicAdd(p + i, v);
#else
    if (ks_sim_shared_atomic(t, p, i)) p[i] += v;
#endif
}

/* atomicAdd on a shared int: returns the value before the add (a counting sort's rank).
 * As ks_shared_atomic_add: checked, not recorded; 0 for a slot outside the array. */
KS_FN int32_t ks_shared_atomic_add_i32(ks_thread *t, int32_t *p, int64_t i, int32_t v)
{
#if defined(__CUDA_ARCH__)
    (void)t;
    return atomicAdd(p + i, v);
#else
    if (!ks_sim_shared_atomic(t, p, i)) return 0;
    const int32_t old = p[i];
    p[i] = old + v;
    return old;
#endif
}

/* A barrier arrival (recorded items only): the line and the phase it ends. */
KS_FN void ks_probe_barrier(ks_thread *t, int line)
{
    if (!t->keep) return;
    ks_probe_emit_n(t, KS_EV_BARRIER, 0, t->shared_site + 2, t->shared_tensor, 0, 2, (uint32_t)line, t->phase, 0, 0, 0,
                    0, 0, 0);
}

/* __syncthreads(): the line names the barrier in reports and in the trace. */
#define ks_syncthreads(t) ks_syncthreads_at((t), __LINE__, KS_SHARED_PROBES)

KS_FN void ks_syncthreads_at(ks_thread *t, int line, int probe)
{
    if (probe) ks_probe_barrier(t, line);
#if defined(__CUDA_ARCH__)
    __syncthreads();
#else
    ks_sim_barrier(t, line);
#endif
    t->phase++;
    t->barrier_line = line;
}

#endif /* KS_SHARED_H */
