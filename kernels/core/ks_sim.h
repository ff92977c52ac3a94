/* ks_sim.h - the CPU grid simulator.
 * It walks blocks 0..grid-1, and in each block threads 0..block-1, calling the body once
 * per thread with a filled ks_thread: results and traces are deterministic. */
#ifndef KS_SIM_H
#define KS_SIM_H

#include "ks_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*ks_sim_body)(ks_thread *t, const void *args);

/* Runs `body` over a 1-D grid of `blocks` x `threads`. `sink` may be NULL (plain). */
void ks_sim_launch(int64_t blocks, int threads, ks_sim_body body, const void *args,
                   ks_sink *sink);

#ifdef __cplusplus
}
#endif

#endif
