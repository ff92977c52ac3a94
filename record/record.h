/* record.h - what the recorder's device callbacks (record_patch.cu) and its host side
 * (record_inject.c) share: the 32-byte record a patched memory instruction writes on the
 * GPU, and the per-launch state the callbacks read through their userdata pointer.
 *
 * The GPU writes little: an access is 32 bytes (two 16-byte stores), half a format 1
 * event, with no index decomposition; the host turns records into trace events after the
 * launch (record_trace.c). A 16-byte access is two records of 8 bytes, so every record
 * carries its whole value.
 */
#ifndef KS_RECORD_H
#define KS_RECORD_H

#include <stdint.h>

/* rec_flags: what the access was; KS_REC_HALF marks the second record of a 16-byte
 * access (the same instruction run, not another). With --shared-accesses: KS_REC_SHARED
 * an access of the block's shared memory (addr = KS_REC_SHARED_BASE + its offset in the
 * block's shared window), KS_REC_BARRIER a thread arriving at a block barrier
 * (__syncthreads; addr = the barrier's index, size 0). */
enum { KS_REC_READ = 1, KS_REC_WRITE = 2, KS_REC_ATOMIC = 4, KS_REC_HALF = 8, KS_REC_SHARED = 16, KS_REC_BARRIER = 32 };
/* where shared offsets are put among the addresses: above any global address */
#define KS_REC_SHARED_BASE 0xff00000000000000ull

/* One access by one thread: the address, the instruction (its PC minus the function's
 * first PC), the linear block (x fastest) and the linear thread in the block, its size in
 * bytes, the flags, `run` (below) and the bytes read or written (little-endian, low `size`
 * bytes; an atomic: the memory before it). The order of one thread's records is its
 * program order: slots come from atomicAdds on one counter, and a thread's atomics on one
 * address are ordered. */
typedef struct ks_rec {
    uint64_t addr;
    uint32_t pc;
    uint32_t block;
    uint16_t thread;
    uint8_t size;
    uint8_t flags;
    uint32_t run; /* in runs: the run's number among its thread's runs, from 0; else 0 */
    uint64_t value;
} ks_rec;

/* Runs. With a state per recorded thread (ks_rec_state.runs, for at most
 * KS_REC_RUNS_MAX_THREADS global thread ids from runs_lo), a thread claims KS_REC_RUN
 * slots at a time (one atomicAdd of KS_REC_RUN), fills them in its program order and
 * claims again when they are full; its state is runs << 32 | (its next free slot + 1).
 * The host then places each run by its thread's state (record_runs.c) instead of sorting
 * every record, and the GPU makes one claim where it made KS_REC_RUN. A thread's last run
 * may be part full: up to KS_REC_RUN - 1 slots a thread go unused, so runs are used only
 * while those come to at most a quarter of the buffer (record_inject.c, runs_begin).
 * Without a state (more threads, or KS_RECORD_RUNS=0) each record claims its own slot. */
#define KS_REC_RUN 8u
#define KS_REC_RUNS_MAX_THREADS (1ull << 25) /* a state of 256 MB */

/* The step of a thread's state both the GPU (record_patch.cu) and the tests' model of it
 * take. ks_rec_run_full: the thread has no run, or its run is full (it must claim
 * KS_REC_RUN slots from `base` before its next record). ks_rec_run_step: its state after
 * that record, whose slot and run number it gives. */
#ifdef __CUDACC__
#define KS_REC_FN static __host__ __device__ __forceinline__
#else
#define KS_REC_FN static inline
#endif
KS_REC_FN int ks_rec_run_full(uint64_t v)
{
    const uint32_t next1 = (uint32_t)v; /* the next free slot + 1; 0: no run yet */
    return next1 == 0 || (next1 - 1) % KS_REC_RUN == 0;
}
KS_REC_FN uint64_t ks_rec_run_step(uint64_t v, uint64_t base, uint64_t *slot, uint32_t *run)
{
    uint32_t next1 = (uint32_t)v;
    if (ks_rec_run_full(v)) next1 = (uint32_t)base + 1, v += 1ull << 32;
    *slot = next1 - 1;
    *run = (uint32_t)(v >> 32) - 1;
    return (v & 0xffffffff00000000ull) | (next1 + 1);
}

/* The device state of a launch (userdata of every callback). counters[0] claims slots,
 * counters[1] counts records that found no room. Only blocks [block_lo, block_hi) and
 * linear global threads [thread_lo, thread_hi) are recorded; `on` 0 records nothing
 * (a launch that is not recorded runs patched code all the same). With `runs`,
 * counters[0] claims KS_REC_RUN slots at a time. */
typedef struct ks_rec_state {
    unsigned long long counters[2];
    ks_rec *recs;
    unsigned long long capacity; /* in runs: a multiple of KS_REC_RUN, below 2^32 */
    uint64_t fn_pc;
    uint32_t block_lo, block_hi;
    uint64_t thread_lo, thread_hi;
    uint32_t on;
    uint32_t pad;
    unsigned long long *runs; /* NULL: a slot a record */
    uint64_t runs_lo;         /* the global thread id of runs[0] */
} ks_rec_state;

#endif
