/* record_int.h - the recorder's host side: the buffers it knows (allocations seen through
 * the Sanitizer API's resource callbacks, and ranges the program named with
 * kscope_record_name) and one recorded launch, turned into a trace by record_trace.c. */
#ifndef KS_RECORD_INT_H
#define KS_RECORD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/kst.h"
#include "record.h"

/* A buffer: [addr, addr + bytes). A named one carries the program's name, dtype and
 * shape; an allocation is 1-D, called allocN (N: the order of allocation). */
typedef struct ks_rec_buf {
    uint64_t addr, bytes;
    char name[KS_NAME_LEN];
    int named;
    ks_dtype dtype;
    int ndim;
    int64_t shape[KS_MAX_DIMS];
} ks_rec_buf;

/* Copies `bytes` of device memory at `addr` to `dst` (0 on success). */
typedef int (*ks_rec_copy_fn)(void *dst, uint64_t addr, size_t bytes, void *ctx);

/* The source of one instruction: file and line (0: none, the site is named by offset). */
typedef struct ks_rec_line {
    char file[256];
    int line;
} ks_rec_line;

typedef struct ks_rec_launch {
    uint64_t number;     /* this process's launch count, from 0 */
    char kernel[512];    /* demangled */
    char short_name[64]; /* the identifier: no return type, scope, template or arguments */
    char device[128];    /* the GPU's name */
    uint32_t grid[3], block[3];
    int64_t dyn_shared; /* dynamic shared memory bytes, -1 unknown */
    uint64_t fn_size;   /* bytes of the kernel's code */
    ks_filter filter;   /* threads and blocks recorded (index = global linear thread) */
    const ks_rec *recs; /* in slot order, or sorted by ks_rec_sort (then `sorted` is 1) */
    int sorted;
    uint64_t nrecs, dropped; /* dropped: records that found no room */
    int zstd;                /* the trace's chunks compressed with zstd (kscope record --compress) */
    const ks_rec_buf *bufs;  /* named ranges first: they win over the allocation they lie in */
    int nbufs;
    /* where an instruction's source is; NULL or returning 0: sites named by offset */
    int (*line_of)(uint32_t pc, ks_rec_line *out, void *ctx);
    ks_rec_copy_fn copy;
    void *ctx;
} ks_rec_launch;

/* Writes the trace of one launch to `path` (whole or not at all). Its events are made on
 * ks_rec_build_threads threads, at most 16 (0, the default: the machine's CPUs, or one
 * for a launch of fewer than 65536 records); the trace is the same for any number. */
int ks_rec_write_trace(const ks_rec_launch *l, const char *path);
extern int ks_rec_build_threads;
/* The n records in (block, thread) order, each thread's in slot order, into `out`, for a
 * launch of blocks of block[0] x block[1] x block[2] threads; -1: no memory. */
int ks_rec_sort(const ks_rec *recs, uint64_t n, const uint32_t block[3], ks_rec *out);
/* The same for n records (at most 2^32) that come back in pieces (record_sort.c): count
 * every piece in turn, then place every piece again in the same order, then finish;
 * `out` then holds ks_rec_sort's result. The records' global thread ids (block x threads
 * + thread) must lie in [lo, hi), at most 2^28 apart. NULL: out of memory or too far
 * apart; -1: a record out of [lo, hi), or pieces that are not the n counted. */
typedef struct ks_rec_sorter ks_rec_sorter;
ks_rec_sorter *ks_rec_sorter_new(const uint32_t block[3], uint64_t lo, uint64_t hi, uint64_t n, ks_rec *out);
int ks_rec_sorter_count(ks_rec_sorter *s, const ks_rec *piece, uint64_t len);
int ks_rec_sorter_place(ks_rec_sorter *s, const ks_rec *piece, uint64_t len);
int ks_rec_sorter_finish(ks_rec_sorter *s);
void ks_rec_sorter_free(ks_rec_sorter *s);
/* Records written in runs (record.h: ks_rec_state.runs): `state` the per-thread states
 * the GPU left for the span global thread ids from `lo` (at most KS_REC_RUNS_MAX_THREADS),
 * `slots` the slots of the runs claimed (a multiple of KS_REC_RUN, below 2^32). Then
 * hand over the slots in order, piece by piece (each a whole number of runs): each run's
 * records are copied to their place in `out`, which must hold ks_rec_runs_total records;
 * then finish. `out` then holds ks_rec_sort's result. NULL: out of memory or arguments out
 * of range; -1 (and a total of 0): states, runs or records that do not agree. */
typedef struct ks_rec_runs ks_rec_runs;
ks_rec_runs *ks_rec_runs_new(const uint64_t *state, uint64_t span, uint64_t lo, const uint32_t block[3],
                             uint64_t slots);
uint64_t ks_rec_runs_total(const ks_rec_runs *r);
int ks_rec_runs_place(ks_rec_runs *r, const ks_rec *piece, uint64_t first_slot, uint64_t len, ks_rec *out);
int ks_rec_runs_finish(ks_rec_runs *r);
void ks_rec_runs_free(ks_rec_runs *r);
/* the last ks_rec_write_trace's milliseconds on this thread: sorting the records by
 * thread, resolving sites and tensors, the scans for shared and unknown memory, and
 * writing the file, the events made as it encodes (KS_RECORD_TIMES=1 notes them) */
extern _Thread_local double ks_rec_build_ms[4];

/* "roi_align_forward_kernel" from "void at::native::(anonymous namespace)::roi_align_
 * forward_kernel<float>(int, float const*, ...)", at most n - 1 characters of
 * [A-Za-z0-9_]. */
void ks_rec_short_name(const char *demangled, char *out, size_t n);

#endif
