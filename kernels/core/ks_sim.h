/* ks_sim.h - the CPU grid simulator.
 * It walks blocks 0..grid-1, and in each block threads 0..block-1, calling the body once
 * per thread with a filled ks_thread: results and traces are deterministic. A body with
 * barriers and shared memory (ks_shared.h) runs through ks_sim_launch_coop instead: the
 * threads of a block become fibers that meet at each barrier (docs/simulator.md). */
#ifndef KS_SIM_H
#define KS_SIM_H

#include <stddef.h>

#include "ks_api.h"
#include "ks_core.h"
#include "ks_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*ks_sim_body)(ks_thread *t, const void *args);

/* Runs `body` over a 1-D grid of `blocks` x `threads`. `sink` may be NULL (plain). */
KS_API void ks_sim_launch(int64_t blocks, int threads, ks_sim_body body, const void *args, ks_sink *sink);

/* Runs `body` over a grid of `grid` blocks of `block` threads, 1-D, 2-D or 3-D as CUDA's
 * <<<grid, block>>> (a 0 component counts as 1): blocks in their linear order (x fastest),
 * and in each block its threads likewise; the events name a block and a thread by their
 * linear numbers (ks_block_linear, ks_thread_linear). ks_sim_launch(b, t, ...) is
 * ks_sim_launch_dims({b, 1, 1}, {t, 1, 1}, ...). */
KS_API void ks_sim_launch_dims(ks_dim3 grid, ks_dim3 block, ks_sim_body body, const void *args, ks_sink *sink);

/* The two launches' common steps: a thread of a blocks x threads grid (no block or thread
 * index yet, phase 0), and block b's line of the sink's schedule (a virtual clock). */
KS_API void ks_sim_thread_init(ks_thread *t, int64_t blocks, int threads, ks_sink *sink);
KS_API void ks_sim_schedule_block(ks_sink *sink, int64_t b, int threads);

/* Progress of long launches (kscope run shows it): after a block, once `every_ms` passed
 * since the launch began or since the last call, fn(ctx, launch, done, total) with the
 * launch's number (1 for the first launch since ks_sim_set_progress) and its blocks done
 * of its total; and fn(ctx, launch, total, total) at the end of a launch that called it
 * before. fn NULL (the default): none. One setting for the process (the simulator runs
 * on one thread); a launch reads it when it starts. */
typedef void (*ks_sim_progress_fn)(void *ctx, int launch, int64_t done, int64_t total);
KS_API void ks_sim_set_progress(ks_sim_progress_fn fn, void *ctx, int64_t every_ms);
/* ... the launches' side: start, after each block, end */
typedef struct ks_sim_ticker {
    ks_sim_progress_fn fn;
    void *ctx;
    int64_t every_ms, next_ms;
    int called, launch;
} ks_sim_ticker;
KS_API void ks_sim_ticker_start(ks_sim_ticker *k);
KS_API void ks_sim_ticker_block(ks_sim_ticker *k, int64_t done, int64_t total);
KS_API void ks_sim_ticker_end(ks_sim_ticker *k, int64_t total);

/* What the cooperative launch found, counted as `kscope check` counts them in the trace
 * (ks_hazard.h): shared-memory races (slots two threads of a block touch in one barrier
 * phase, at least one writing; one per slot and phase), reads of uninitialised slots (one
 * per slot and phase), barriers not reached by every live thread of the block, and
 * accesses outside their array (each; not made). first[] holds the earliest of each kind
 * (race, uninitialised read, barrier, outside), one line each ("" when none). */
#define KS_SIM_SHARED_BYTES 49152 /* the block's shared arena: CUDA's static 48 KiB */
typedef struct ks_sim_report {
    uint64_t races, uninit_reads, divergent_barriers, outside, shared_accesses, barriers;
    char first[4][256];
} ks_sim_report;

/* Runs `body` over `blocks` x `threads` with the threads of a block as fibers (stacks
 * allocated once per launch, reused by every block). `rep` may be NULL. KS_OK, or
 * KS_ENOMEM / KS_EINVAL with ks_error_message() set. */
KS_API ks_status ks_sim_launch_coop(int64_t blocks, int threads, ks_sim_body body, const void *args, ks_sink *sink,
                                    ks_sim_report *rep);
/* One line per kind of problem of `rep` on stderr ("kscope: warning: <what>: ..."); returns
 * the number of problems. */
KS_API uint64_t ks_sim_report_warn(const ks_sim_report *rep, const char *what);
/* While on (this thread), ks_sim_report_warn prints nothing and only counts: a caller that
 * reports the problems its own way (a lesson's checks). Returns the previous setting. */
KS_API int ks_sim_quiet_warnings(int on);

/* Used by ks_shared.h from inside a cooperative launch (outside one they stop the program
 * with a message): the block's array `name` of `bytes`; a barrier; an access of element i
 * of array `arr` (1: inside it, made; 0: outside, reported, not made). */
KS_API void *ks_sim_shared_alloc(size_t bytes, const char *name);
KS_API void ks_sim_barrier(ks_thread *t, int line);
KS_API int ks_sim_shared_access(const ks_thread *t, const void *arr, int64_t i, int write);
/* An atomic add's slot: 1 when i is inside the array (else noted, as an access outside);
 * fed to the race check as an atomic (ks_hazard_atomic: a race only with another
 * thread's plain access in the same phase). */
KS_API int ks_sim_shared_atomic(const ks_thread *t, const void *arr, int64_t i);

#ifdef __cplusplus
}
#endif

#endif
