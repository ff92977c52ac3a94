/* pz_grade.h - grading a puzzle: the student's .cu file compiled and run on the simulator
 * by the CUDA C front end (kernels/cuda_c/cu_run.h, as `kscope run FILE.cu` does), the
 * trace judged (docs/puzzles.md). */
#ifndef PZ_GRADE_H
#define PZ_GRADE_H

#include <stdint.h>

#include "../../kernels/core/ks_core.h"
#include "../../kernels/cuda_c/cu_build.h"
#include "../../trace/kst.h"
#include "pz_spec.h"

/* Where the puzzles are: stubs/ and solutions/ under `dir`. An installed kscope finds them
 * beside itself (PREFIX/share/kscope/puzzles), a built one in its source tree. */
typedef struct pz_paths {
    char dir[4096];
} pz_paths;
void pz_locate(pz_paths *p);

/* Compiles src with the front end (clang; $KSCOPE_CLANG for another) and checks that its
 * __global__ function s->name takes the puzzle's parameters by their names. KS_OK, or an
 * error with one line (clang's own messages went to stderr). */
int pz_build(const pz_spec *s, const char *src, ks_cu_build *b);

/* pz_run's outcomes */
enum {
    PZ_RAN = 0,     /* the trace is at trace_path: judge it */
    PZ_STOPPED = 1, /* the run stopped as a whole (a crash, the time limit...): the trace up
                     * to there is at trace_path; ks_error_message() says where and why */
    PZ_ERROR = 2    /* no trace: ks_error_message() says why */
};
enum { PZ_RUN_LIMIT_S = 10, PZ_COMPILE_LIMIT_S = 60 };
/* each process of a run (compiler, kernel): at most this much heap, file size and open
 * files; with the user's other processes, this many more (not as root) */
enum { PZ_DATA_BYTES = 1 << 30, PZ_FILE_BYTES = 1 << 28, PZ_OPEN_FILES = 256, PZ_PROCESSES = 64 };

/* Compiles and runs src on the spec's launch and inputs (integers in [-9, 9] without 0,
 * fixed per puzzle) in a child process of its own process group, so that neither a
 * compiler that hangs (stopped after $KSCOPE_CC_TIMEOUT seconds, default 60) nor the
 * kernel (crash, endless loop: stopped after 10 s) can take kscope down; every file it
 * makes is under tmpdir (an absolute path), which is also the only place it may write
 * where the kernel has Landlock; every process it made is gone when it returns, and the
 * limits above hold in each. Writes the trace to trace_path. kscope puzzle must have no
 * other child processes while it runs (it reaps them all). */
int pz_run(const pz_spec *s, const char *src, const char *tmpdir, const char *trace_path);
/* Landlock's ABI version on this machine, 0: none (writes are then not confined) */
int pz_landlock_abi(void);
/* Async-signal-safe: kills a pz_run in progress (its whole process group); pz_run then
 * returns PZ_ERROR. */
void pz_run_interrupt(void);

#define PZ_MAX_RULES 12

/* One thing the grader checks; item: the work item (= thread) it points at, -1: none;
 * where: the source lines of the accesses it names ("map.cu:7: out[i] = a[i] + 1;"). */
typedef struct pz_rule {
    char name[64];
    int ok;
    char detail[768];
    char where[2][192];
    int64_t item;
} pz_rule;

typedef struct pz_verdict {
    int nrules;
    pz_rule rules[PZ_MAX_RULES];
    int passed;
    int64_t item;     /* the first failed rule's work item, -1: none */
    char table[2048]; /* a wrong output beside the right one, when it is small */
} pz_verdict;

/* Judges the trace of a run of s (src: the graded file, named in the messages): outputs
 * against the reference, then the access pattern. KS_OK (v filled; v->passed says the
 * verdict) or an error when the trace cannot be read. */
int pz_judge(const pz_spec *s, const char *src, const char *trace_path, pz_verdict *v);

/* The parts of pz_judge: a new rule (ok until failed); "thread T of block B (work item
 * I)" as CUDA names it (2-D launches: (x,y)); "FILE:LINE: code" of an event's site ("" when
 * the site has no line); the shared-memory rules (used, no race, no read of an unwritten
 * slot, barriers reached by all: pz_judge_shared.c); whether an event is a shared access
 * or a barrier arrival. */
pz_rule *pz_rule_add(pz_verdict *v, const char *name);
void pz_who(char *buf, size_t n, const pz_spec *s, const ks_event *e);
void pz_where(char *buf, size_t n, const ks_trace *tr, const char *src, const ks_event *e);
void pz_judge_shared(const pz_spec *s, const char *src, const ks_trace *tr, pz_verdict *v);
int pz_is_shared(const ks_event *e);

#endif
