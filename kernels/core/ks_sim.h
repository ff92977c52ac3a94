/* ks_sim.h - the CPU grid simulator.
 * It walks blocks 0..grid-1, and in each block threads 0..block-1, calling the body once
 * per thread with a filled ks_thread: results and traces are deterministic. A body with
 * barriers and shared memory (ks_shared.h) runs through ks_sim_launch_coop instead: the
 * threads of a block become fibers that meet at each barrier (docs/simulator.md). */
#ifndef KS_SIM_H
#define KS_SIM_H

#include <stddef.h>

#include "ks_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*ks_sim_body)(ks_thread *t, const void *args);

/* Runs `body` over a 1-D grid of `blocks` x `threads`. `sink` may be NULL (plain). */
void ks_sim_launch(int64_t blocks, int threads, ks_sim_body body, const void *args,
                   ks_sink *sink);

/* What the cooperative launch found: shared-memory races (two threads of a block touch
 * one slot in one barrier phase, at least one writing), reads of never-written slots, and
 * barriers not reached by every live thread of the block. first[] holds the first of each
 * kind (race, uninitialised read, barrier), one line each ("" when none). */
#define KS_SIM_SHARED_BYTES 49152 /* the block's shared arena: CUDA's static 48 KiB */
typedef struct ks_sim_report {
    uint64_t races, uninit_reads, divergent_barriers, shared_accesses, barriers;
    char first[3][256];
} ks_sim_report;

/* Runs `body` over `blocks` x `threads` with the threads of a block as fibers (stacks
 * allocated once per launch, reused by every block). `rep` may be NULL. KS_OK, or
 * KS_ENOMEM / KS_EINVAL with ks_error_message() set. */
int ks_sim_launch_coop(int64_t blocks, int threads, ks_sim_body body, const void *args,
                       ks_sink *sink, ks_sim_report *rep);
/* One line per kind of problem of `rep` on stderr ("kscope: warning: <what>: ..."); returns
 * the number of problems. */
uint64_t ks_sim_report_warn(const ks_sim_report *rep, const char *what);

/* Used by ks_shared.h from inside a cooperative launch (outside one they stop the program
 * with a message): the block's array `name` of `bytes`; a barrier; a shared access. */
void *ks_sim_shared_alloc(size_t bytes, const char *name);
void ks_sim_barrier(ks_thread *t, int line);
void ks_sim_shared_access(const ks_thread *t, const void *p, int write);

#ifdef __cplusplus
}
#endif

#endif
