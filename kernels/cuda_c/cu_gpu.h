/* cu_gpu.h - kscope run FILE.cu --device cuda: the same file and launch on the GPU, with
 * every access recorded by kscope record's recorder (record/, docs/record.md).
 *
 * The file is compiled by nvcc (-lineinfo) with a small launcher appended (the kernel's
 * parameter types and a cudaLaunchKernel call); a child process loads it with the
 * recorder injected, makes the buffers the --arg flags describe (named for the trace),
 * launches, and hands the buffers' final contents back. The trace is the recorder's, its
 * params rewritten as the simulator writes them, so `kscope diff sim.kst cuda.kst`
 * compares the two runs thread by thread. */
#ifndef KS_CU_GPU_H
#define KS_CU_GPU_H

#include "cu_run.h"

typedef struct ks_cu_gpu_opts {
    const char *nvcc; /* the CUDA compiler */
    const char *arch; /* "sm_90" */
    /* called in the child before CUDA starts: sets the recorder's environment so that it
     * writes into `outdir` and reports to `status` */
    void (*child_env)(void *ctx, const char *outdir, const char *status);
    void *env_ctx;
} ks_cu_gpu_opts;

/* Builds, runs and records e's launch of the kernel bo names (ks_cu_build_run must have
 * run: the kernel's parameter names). On KS_OK: *tr is the trace (opened; ks_trace_close
 * it), e->out[] the buffers' final contents, and fault a line naming a GPU fault ("" when
 * the kernel ran to its end). Otherwise an error (ks_error_message). */
int ks_cu_gpu_run(ks_cu_exec *e, const ks_cu_build_opts *bo, const ks_cu_gpu_opts *g, ks_trace *tr, char *fault,
                  size_t nfault);

/* Removes what ks_cu_gpu_run kept (its folder, the mapped buffers). */
void ks_cu_gpu_free(void);

#endif
