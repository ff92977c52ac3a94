/* ks_launch.h - launch configuration, shared by the CUDA launchers and the simulator.
 * Threads per block and the block cap are parameters (a lesson runs 1 block of 32
 * threads so each thread loops); 0 means "the operator's reference default". */
#ifndef KS_LAUNCH_H
#define KS_LAUNCH_H

#include <stdint.h>

#include "ks_api.h"
#include "ks_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ks_launch {
    int threads;       /* threads per block; 0: operator default */
    int64_t block_cap; /* most blocks; 0: operator default, -1: no cap */
} ks_launch;

/* The largest grid.x CUDA accepts; a grid is never larger (the grid-stride loop covers
 * the rest), so an uncapped launch of any size stays legal. */
#define KS_MAX_GRID_X 2147483647LL

/* Resolves defaults and returns the number of blocks for `work` items (>= 1 when
 * work >= 1, 0 when work == 0). Fails (KS_EINVAL) on threads outside 1..1024 or a cap
 * of 0 after defaults. `*threads_out` receives the threads per block. */
KS_API ks_status ks_launch_resolve(const ks_launch *l, int default_threads, int64_t default_cap, int64_t work,
                                   int *threads_out, int64_t *blocks_out);

#ifdef __cplusplus
}
#endif

#endif
