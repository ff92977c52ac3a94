/* ks_kernel.h - the kernel row: the registry's unit (DESIGN section 13).
 *
 * A kernel is one line beside its body, inside the body file's variant section:
 *
 *   KS_FN void KS_VARIANT(ks_maxpool2d_fwd_body)(ks_thread *t, const ks_maxpool2d_args *a) { ... }
 *   KS_KERNEL(ks_maxpool2d_fwd, ks_maxpool2d_args)
 *
 * ks_variants.h expands that line once, after the last variant, into what each build
 * needs: in C the simulator's two entry points (ks_maxpool2d_fwd_sim_plain, _sim_traced);
 * under nvcc the __global__ wrappers and ks_maxpool2d_fwd_cuda_row, whose one launch line is
 * ks_cuda_launch_row (ks_cuda.h). An operator then lists its kernels as rows,
 *
 *   static const ks_kernel kernels[] = {
 *       [K_FWD] = KS_KERNEL_ROW(ks_maxpool2d_fwd, "forward", .sites = fwd_sites, .threads = 256, .block_cap = -1),
 *       ...
 *   };
 *
 * and its launch gives only the sequence: ks_exec_kernel(x, K_FWD, &args, work). A row a
 * trace may record names its trace schema (.sites: the work fields, then its accesses),
 * built from the operator's state after prepare. The registry owns the rest: launch sizing, the 32-bit choice, plain or traced (only the row
 * --trace-kernel names records), simulator or CUDA, the launch check, and the record of
 * which kernels ran. A fast body the simulator does not run is a `plain_only` row naming
 * its `twin`, the traced body that computes the same outputs (tests compare the two). */
#ifndef KS_KERNEL_H
#define KS_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ks_api.h"
#include "ks_core.h"
#include "ks_error.h"
#include "ks_launch.h"
#include "ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ks_device { KS_DEV_SIM = 0, KS_DEV_CUDA = 1 };

/* One CUDA launch as the registry sized it. narrow: every index the kernel forms fits 32
 * bits (its 32-bit variants may run). */
typedef struct ks_grid {
    int64_t blocks;             /* along x */
    int64_t blocks_y, blocks_z; /* a tiled row's other two axes (tile_of); 1 (or 0) for every other row */
    int threads;
    size_t shared; /* dynamic shared memory, bytes */
    void *stream;  /* cudaStream_t; NULL: the default stream */
    int narrow;
    const char *name; /* for the launch check's message */
} ks_grid;

/* A tiled row's block, as its tile_of gives it from the args: `threads` threads and `shared`
 * bytes of dynamic shared memory cover x items of the work's first axis and y of its
 * second. The registry launches ceil(work / x) x ceil(work_y / y) x work_z blocks
 * (ks_exec.work_y, work_z): a 3-D grid the kernel indexes with blockIdx.x, y and z. */
typedef struct ks_tile {
    int threads;
    int64_t x, y;
    size_t shared;
} ks_tile;

typedef void (*ks_kernel_sim_fn)(ks_thread *t, const void *args);
/* name_cuda: launches the plain (dev_sink NULL) or traced variant. KS_OK or KS_ECUDA. */
typedef int (*ks_kernel_cuda_fn)(const void *args, const ks_grid *g, const ks_sink *dev_sink);

typedef struct ks_kernel {
    const char *name;           /* "maxpool2d_forward": --trace-kernel's word, the trace's "kernel" */
    const char *body;           /* "ks_maxpool2d_fwd": the body the trace's "body" names */
    ks_kernel_sim_fn sim_plain; /* NULL for a plain_only row */
    ks_kernel_sim_fn sim_traced;
    ks_kernel_cuda_fn cuda; /* NULL in a build without nvcc */
    int threads;            /* the reference launch: threads per block */
    int64_t block_cap;      /* and the most blocks (-1: none) */
    /* the block size its args fix (a tile), or NULL; a launch of another size is refused */
    int (*block_of)(const void *args);
    /* the reference threads as its args make them (a larger shared tile, larger blocks), or
     * NULL for .threads; unlike block_of, --threads still sets another */
    int (*threads_of)(const void *args);
    /* a tiled row (a 2-D or 3-D grid of tiles; --threads and --blocks do not apply): its
     * block and tile from the args, or NULL. threads, block_of, threads_of, fixed unused */
    void (*tile_of)(const void *args, ks_tile *t);
    /* its trace schema: fills `out` (KS_MAX_SITES room; zeroed) from its operator's state,
     * what prepare left in ks_run.ctx, and returns the number of sites (the first is its
     * work site, with the work fields). The registry builds the traced row's trace header
     * from it, and `kscope list OP` prints it. Set on every row a trace may record; NULL on
     * no_trace and plain_only rows. */
    int (*sites)(const void *state, ks_site *out);
    int fixed;        /* a helper step: always its reference launch, whatever --threads and --blocks say */
    int coop;         /* barriers or shared memory: simulated with fibers */
    int no_trace;     /* no trace schema: always plain (--trace-kernel refuses it) */
    int plain_only;   /* never traced (no traced variant; sim_plain may be NULL:
                                       CUDA only): `twin` computes the same */
    const char *twin; /* plain_only: the row whose traced body stands for it */
    /* plain_only: the settings under which it runs ("forward=cl channels=4": --name value
     * pairs), which the twin tests (test_ops on the simulator, test_gpu_each_op on CUDA)
     * run plain twice, as it is and with every plain_only row yielding to its twin
     * (ks_exec.twins), and compare; NULL: the operator's defaults */
    const char *runs_with;
    /* plain_only: how far its float outputs may lie from the twin's, as a fraction of each
     * output tensor's largest |value| (a body whose sums round differently: TF32); 0: 1e-5
     * of each value (the same products summed in another order) */
    double tolerance;
    const char *help; /* one line for `kscope list OP` */
} ks_kernel;

#ifdef KS_HAVE_CUDA
#define KS_KERNEL_CUDA_FN(f) f
#else
#define KS_KERNEL_CUDA_FN(f) NULL
#endif

/* A row for the kernel whose body line is KS_KERNEL(fn, ...), named `word`; more fields
 * (.threads, .block_cap, .coop, .help, ...) follow as designated initialisers. */
#define KS_KERNEL_ROW(fn, word, ...)                                                             \
    {                                                                                            \
        .name = (word), .body = #fn, .sim_plain = fn##_sim_plain, .sim_traced = fn##_sim_traced, \
        .cuda = KS_KERNEL_CUDA_FN(fn##_cuda_row), __VA_ARGS__                                    \
    }

/* A plain_only row (its body line KS_KERNEL_PLAIN): no traced variant; `twin`, a row of
 * the same table, traces what it computes (the tests compare the two). */
#define KS_KERNEL_PLAIN_ROW(fn, word, twin_, ...)                                                           \
    {                                                                                                       \
        .name = (word), .body = #fn, .sim_plain = fn##_sim_plain, .cuda = KS_KERNEL_CUDA_FN(fn##_cuda_row), \
        .plain_only = 1, .twin = (twin_), __VA_ARGS__                                                       \
    }

/* One sequence of launches: what an operator's launch (or an SDK entry point) hands to
 * ks_exec_kernel. The registry fills it from a run (ks_exec_for, registry.h). */
typedef struct ks_exec {
    const ks_kernel *kernels;
    int nkernels;
    int device;       /* ks_device */
    ks_launch launch; /* threads and block cap as given; 0: each row's reference */
    ks_sink *sink;    /* host sink (simulator), device sink (CUDA), NULL: all plain */
    int trace;        /* the row that records into sink; every other row runs plain */
    int narrow;       /* every tensor the kernels index has < 2^30 elements */
    void *stream;
    size_t shared; /* dynamic shared bytes of the next launch (reset after it) */
    /* a tiled row's work along its second and third axes in the next launch (reset after
     * it; 0: 1); the first is ks_exec_kernel's `work` */
    int64_t work_y, work_z;
    int quiet; /* coop rows: count shared-memory problems, print nothing */
    int twins; /* plain_only rows yield to their twins (ks_exec_may): the twin tests */
    /* filled by ks_exec_kernel */
    int traced_ran; /* launches of the traced row */
    int launches;
    uint64_t ran;          /* bit k: row k launched (rows past 63 not noted) */
    uint64_t sim_problems; /* coop rows on the simulator: races and the like found */
} ks_exec;

/* 2^30: a 32-bit variant runs when every count (tensors, work, blocks * threads) is below it */
#define KS_NARROW_LIMIT ((int64_t)1 << 30)

/* A sequence on `kernels` (n rows) with nothing traced, on the simulator, narrow. */
KS_API ks_exec ks_exec_make(const ks_kernel *kernels, int n, int device, const ks_launch *launch);
/* Notes an element count the kernels index: one of 2^30 or more rules out 32 bits. */
KS_API void ks_exec_size(ks_exec *x, int64_t count);
/* Runs row k over `work` items: sized from x->launch and the row's reference (a tiled row:
 * from its tile and the work's three axes), traced when k is x->trace and there is a
 * sink, on x->device. work 0 launches nothing. KS_OK, or an
 * error with ks_error_message() set (bad launch, no CUDA in this build, a launch error). */
KS_API ks_status ks_exec_kernel(ks_exec *x, int k, const void *args, int64_t work);

/* 1 when row k may run in x: every row but a plain_only one whose twin must run instead:
 * its twin records (x->trace with a sink), x->twins asks for twins, or the row has no
 * entry point for x->device. An operator's sequence asks before a plain_only row and
 * otherwise runs the twin's way. */
KS_API int ks_exec_may(const ks_exec *x, int k);

/* The row named `word`, or -1. */
KS_API int ks_kernel_find(const ks_kernel *kernels, int n, const char *word);
/* Checks a table's rows: names unique and set, every runnable row has its entry points,
 * plain_only rows name an existing twin that the simulator runs, reference launches legal,
 * a trace schema (.sites) on exactly the rows a trace may record.
 * KS_OK, or KS_EINVAL with one line naming `owner` and the row. */
KS_API ks_status ks_kernel_rows_check(const char *owner, const ks_kernel *kernels, int n);

#ifdef __cplusplus
}
#endif

#endif
