/* pz_grade.h - grading a puzzle: compile the student's file, run it on the simulator
 * through the SDK's tracing API (trace/ks_user.h), judge the trace (docs/puzzles.md). */
#ifndef PZ_GRADE_H
#define PZ_GRADE_H

#include <stdint.h>

#include "../../kernels/core/ks_core.h"
#include "../../trace/kst.h"
#include "pz_spec.h"

/* The trace tensor `shared` is (KS_SHARED_ARRAYS, PZ_SHARED_ROWS, PZ_SHARED_COLS): a
 * block's shared arrays in first-use order, a plane each, element i at (i / cols, i % cols)
 * (a puzzle's tiles fit the first row); its data stay 0 (shared memory lives per block:
 * the events carry the values). */
enum { PZ_SHARED_ROWS = 4, PZ_SHARED_COLS = 64, PZ_SHARED_SLOTS = PZ_SHARED_ROWS * PZ_SHARED_COLS };

/* Where the puzzles are: puzzle.h, stubs/ and solutions/ under `dir`; the SDK headers
 * (kernels/core/...) under `include`. An installed kscope finds them beside itself
 * (PREFIX/share/kscope/puzzles, PREFIX/include/kscope), a built one in its source tree. */
typedef struct pz_paths {
    char dir[4096], include[4096];
} pz_paths;
void pz_locate(pz_paths *p);

/* Compiles src into the shared object so (cc -shared -fPIC; $KSCOPE_CC for another
 * compiler command, split at spaces, no shell), stopped after $KSCOPE_CC_TIMEOUT seconds
 * (default 60); the compiler's messages go to stderr. KS_OK, or KS_EINVAL with one line.
 * pz_build_interrupt (async-signal-safe) kills a compile in progress. */
int pz_build(const pz_paths *p, const char *src, const char *so);
void pz_build_interrupt(void);

/* In a child process (a crash or an endless loop of the student's code cannot take
 * kscope down): loads so, runs its NAME_kernel once per thread of the spec's launch on
 * random inputs (fixed seed) and writes the trace to trace_path. KS_OK, or an error with
 * one line saying what went wrong (no such function, a crash, a timeout). */
int pz_run(const pz_spec *s, const char *so, const char *trace_path);

#define PZ_MAX_RULES 12

/* One thing the grader checks; item: the work item (= thread) it points at, -1: none. */
typedef struct pz_rule {
    char name[64];
    int ok;
    char detail[512];
    int64_t item;
} pz_rule;

typedef struct pz_verdict {
    int nrules;
    pz_rule rules[PZ_MAX_RULES];
    int passed;
    int64_t item;     /* the first failed rule's work item, -1: none */
    char table[2048]; /* a wrong output beside the right one, when it is small */
} pz_verdict;

/* Judges the trace of a run of s: outputs against the reference, then the access pattern.
 * KS_OK (v filled; v->passed says the verdict) or an error when the trace cannot be read. */
int pz_judge(const pz_spec *s, const char *trace_path, pz_verdict *v);

/* The parts of pz_judge: a new rule (ok until failed); the shared-memory rules (used,
 * no race, no read of an unwritten slot, barriers reached by all: pz_judge_shared.c);
 * whether an event is a shared access or a barrier arrival. */
pz_rule *pz_rule_add(pz_verdict *v, const char *name);
void pz_judge_shared(const ks_trace *tr, pz_verdict *v);
int pz_is_shared(const ks_event *e);

#endif
