/* cu_run.h - one run of a .cu kernel on the simulator (docs/cuda-c.md): the buffers, the
 * child process that runs the grid, and the trace made from what it recorded.
 *
 *   ks_cu_exec e;  ks_cu_exec_init(&e);
 *   ks_cu_buffer_parse(...) for each pointer argument, ks_cu_build_run(&e.build, ...),
 *   ks_cu_exec_run(&e, ...), then ks_cu_trace_make(&e, &tr) / e.bufs[i] for --save,
 *   ks_cu_exec_free(&e).
 */
#ifndef KS_CU_RUN_H
#define KS_CU_RUN_H

#include "../../trace/kst.h"
#include "cu_build.h"

/* A pointer argument's buffer as given: @FILE.npy (data read now), zeros:SHAPE[:DTYPE]
 * or empty:SHAPE[:DTYPE]. */
typedef struct ks_cu_bufspec {
    char param[32];
    char text[160]; /* as given, for the trace's params */
    ks_tensor t;    /* shape and dtype; data for @FILE.npy (owned) */
    int empty;
} ks_cu_bufspec;

/* A scalar argument as given. */
typedef struct ks_cu_number {
    char param[32];
    double f;
    int64_t i;
    int isint;
} ks_cu_number;

typedef struct ks_cu_exec {
    ks_cu_build build;
    int nbufs, nnums;
    ks_cu_bufspec bufs[KS_CU_MAX_BUFS];
    ks_cu_number nums[KS_CU_MAX_PARAMS];
    uint32_t grid[3], block[3], shared_bytes;
    ks_filter filter;
    uint64_t trace_limit; /* most events kept */
    double time_limit;    /* seconds */
    int quiet;
    int prefault; /* map the event memory before the run starts (bench_cu: the
                             * clock then times recording, not the first touch of pages) */
    /* after the run */
    unsigned char *map;
    size_t map_size;
    ks_cu_ctl *ctl;
    ks_event *events; /* the events, copied out of the ring (private, trace_limit slots) */
    size_t events_size;
    uint64_t nevents;
    int exit_status;               /* the child's: 0 ran, 2 setup error, 3 a fault stopped it; -1 killed */
    double seconds;                /* wall time of the run (fork to exit, the copy out included) */
    double child_cpu;              /* CPU seconds (user + system) the child used */
    ks_tensor out[KS_CU_MAX_BUFS]; /* the buffers' final contents (views into map) */
} ks_cu_exec;

void ks_cu_exec_init(ks_cu_exec *e);
void ks_cu_exec_free(ks_cu_exec *e);

/* "VALUE" of --arg PARAM=VALUE: a buffer (returns 1, adds it), a number (returns 0, adds
 * it), or KS_EINVAL-style failure (-1 with ks_error_message() set). */
int ks_cu_arg_parse(ks_cu_exec *e, const char *param, const char *value);

/* Binds, forks and runs the grid; waits at most time_limit seconds, printing progress on
 * stderr after 2 s unless quiet. KS_OK when the child ran (e->exit_status says how it
 * ended; ctl->error explains a setup error), else an error. */
int ks_cu_exec_run(ks_cu_exec *e);

/* The trace of a finished run (pointers into e and static storage: valid until
 * ks_cu_exec_free). Sites become source lines. KS_OK or an error. */
int ks_cu_trace_make(ks_cu_exec *e, ks_trace *tr);

/* One line describing the first thread a fault stopped, into buf ("" when none). */
void ks_cu_fault_line(const ks_cu_exec *e, const ks_trace *tr, char *buf, size_t n);

#endif
