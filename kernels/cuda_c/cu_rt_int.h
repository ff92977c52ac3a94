/* cu_rt_int.h - state shared by the runtime's two halves: the scheduler (cu_rt_sched.c:
 * fibers, barriers, warp collectives, the child's main) and memory (cu_rt_mem.c: regions,
 * the sanitizer-coverage callbacks, atomics, events). Child process only. */
#ifndef KS_CU_RT_INT_H
#define KS_CU_RT_INT_H

#define _GNU_SOURCE
#include <stdint.h>

#include "cu_rt.h"

enum { F_RUN, F_WAIT_BAR, F_WAIT_WARP, F_DONE };

/* A fiber's saved stack pointer: everything else it needs to resume is on its stack
 * (cu_rt_sched.c's switch saves the callee-saved registers there, and no signal mask:
 * glibc's swapcontext makes two system calls a switch). */
typedef struct ks_cu_fib {
    void *sp;
    int state;
    uint32_t tid; /* linear thread id in the block */
    uint32_t tx, ty, tz;
    uintptr_t stack_lo;
    size_t stack_size;
    uint32_t phase;         /* barriers passed in this block */
    uint32_t bar_line_site; /* raw site of the barrier that opened the phase (0: none) */
    uint32_t seq;           /* events of this thread so far */
    uint32_t wphase;        /* __syncwarp()s passed: an access's `iter` (check orders a warp's
                               * lanes by it, as a barrier orders a block's threads) */
    int keep;               /* the filter records this thread */
    /* a store announced by its callback, whose value is read at the next callback */
    uintptr_t st_addr;
    uint64_t st_first, st_count;
    int st_region;
    /* how often the thread ran each site so far (a small direct-mapped table): an access's
     * `tap`, so the k-th run of one line by the lanes of a warp is one request (kscope memory) */
    uint32_t occ_site[16];
    uint16_t occ_n[16];
    /* printf text of the thread not yet ended by a newline: printed with its line */
    char pbuf[256];
    int plen;
    /* barrier */
    uint32_t bar_site;
    int bar_op, bar_pred, bar_res;
    /* warp collective */
    int w_op, w_arg, w_width;
    unsigned w_mask;
    uint32_t w_site;
    unsigned long long w_val, w_res;
} ks_cu_fib;

typedef struct ks_cu_rt {
    unsigned char *map;
    ks_cu_ctl *ctl;
    ks_event *ev;
    uintptr_t so_base;
    ks_cu_fib *fib; /* the block's threads */
    ks_cu_fib *cur; /* running now, NULL outside a kernel */
    int nthreads;
    uint32_t block_lin;
    int64_t block_first_index;
    void *sched_sp;
    long long clock;
} ks_cu_rt;

extern ks_cu_rt ks_cu_g;

/* memory half */
void ks_cu_mem_setup(void);
void ks_cu_mem_ignore(uintptr_t lo, uintptr_t hi);
void ks_cu_mem_block_start(void); /* poison the shared arrays */
void ks_cu_flush_store(ks_cu_fib *f);
void ks_cu_publish(void); /* commits every whole event (call with the fiber's store flushed) */
uint32_t ks_cu_site(uintptr_t pc, int kind, int flags);
uint32_t ks_cu_site_of(uintptr_t pc, int kind, int flags, int tensor); /* an access site: its tensor */
ks_event *ks_cu_emit(ks_cu_fib *f, int kind, int flags, uint32_t site, int tensor);
/* the thread stops here for good (a finding): a FAULT event, then back to the scheduler */
void ks_cu_stop(ks_cu_fib *f, int code, uint32_t site, uint64_t address) __attribute__((noreturn));

/* scheduler half */
void ks_cu_yield(ks_cu_fib *f); /* back to the scheduler; returns when resumed */

#endif
