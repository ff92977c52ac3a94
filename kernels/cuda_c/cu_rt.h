/* cu_rt.h - the simulator runtime of `kscope run FILE.cu` (docs/cuda-c.md).
 *
 * The user's file is compiled by clang into a shared object (cu_build.c) whose loads and
 * stores call __sanitizer_cov_load/store*; the runtime (cu_rt_*.c) provides those
 * callbacks, the built-in variables and every call kscope_cuda.h makes. It runs in a
 * child process (cu_run.c) that shares one mapping with kscope: the buffers, a control
 * block and the event array. A child that faults, hangs or dies leaves both readable, so
 * kscope writes the trace up to that point and the host is never touched.
 *
 * Events are format-1 records (ks_event.h); an access's `tap` is how many times its thread
 * ran that site before (the k-th run of a line by a warp's lanes is one memory request). Work items are threads: index is the linear
 * thread id of the grid (x fastest: threadIdx.x, .y, .z, then blockIdx.x, .y, .z), block
 * the linear block id, thread the linear id within the block, iter 0. The child's site
 * ids are raw: 0 the work site, then one per distinct (kind, program counter); kscope maps
 * them to source lines afterwards (cu_lines.c).
 */
#ifndef KS_CU_RT_H
#define KS_CU_RT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/ks_event.h"

#define KS_CU_MAX_PCS 4096  /* distinct instrumented instructions one run records */
#define KS_CU_MAX_BUFS 16   /* pointer arguments */
#define KS_CU_MAX_SHARED 16 /* static __shared__ arrays */
#define KS_CU_MAX_PARAMS 32
#define KS_CU_DYN_SMEM (227 * 1024) /* the largest dynamic shared memory of a block */
#define KS_CU_STATIC_SMEM (48 * 1024)

/* warp collectives (kscope_cuda.h passes these) */
enum ks_cu_warp_op {
    KS_CU_SHFL = 0,
    KS_CU_SHFL_UP = 1,
    KS_CU_SHFL_DOWN = 2,
    KS_CU_SHFL_XOR = 3,
    KS_CU_BALLOT = 4,
    KS_CU_ANY = 5,
    KS_CU_ALL = 6,
    KS_CU_SYNCWARP = 7,
    KS_CU_ACTIVEMASK = 8,
    KS_CU_WARP_OPS = 9
};
/* atomics and their types (kscope_cuda.h) */
enum ks_cu_atomic_op {
    KS_CU_A_ADD,
    KS_CU_A_SUB,
    KS_CU_A_EXCH,
    KS_CU_A_MIN,
    KS_CU_A_MAX,
    KS_CU_A_AND,
    KS_CU_A_OR,
    KS_CU_A_XOR,
    KS_CU_A_INC,
    KS_CU_A_DEC,
    KS_CU_A_CAS,
    KS_CU_A_OPS
};
enum ks_cu_atomic_type { KS_CU_T_I32, KS_CU_T_U32, KS_CU_T_U64, KS_CU_T_I64, KS_CU_T_F32, KS_CU_T_F64 };

/* Parameter types, as the trampoline reports them (one byte each): a scalar's dtype, or
 * KS_CU_PTR | the pointee's (KS_CU_OPAQUE: a struct or vector, any buffer dtype). */
enum ks_cu_type {
    KS_CU_BAD = 0,
    KS_CU_F32,
    KS_CU_F64,
    KS_CU_I8,
    KS_CU_U8,
    KS_CU_I16,
    KS_CU_U16,
    KS_CU_I32,
    KS_CU_U32,
    KS_CU_I64,
    KS_CU_U64,
    KS_CU_BOOL,
    KS_CU_OPAQUE,
    KS_CU_PTR = 0x80
};

/* Why a thread (or the run) stopped; the payload of a KS_EV_FAULT event. */
enum ks_cu_fault {
    KS_CU_F_OUTSIDE = 1, /* an access outside every buffer (the access event says where) */
    KS_CU_F_ASSERT = 2,  /* assert() failed */
    KS_CU_F_TRAP = 3,    /* __trap() */
    KS_CU_F_DIVZERO = 4, /* an integer division by zero (SIGFPE): the run stops */
    KS_CU_F_STACK = 5,   /* the thread overflowed its stack: the run stops */
    KS_CU_F_CRASH = 6,   /* any other signal: the run stops */
    KS_CU_F_TIMEOUT = 7, /* past --time-limit: the run stops (written by kscope) */
    KS_CU_F_UNSUPPORTED = 8,
    KS_CU_F_DEADLOCK = 9 /* a warp collective whose lanes never all arrived */
};

/* A buffer the kernel may touch: a pointer argument's array. */
typedef struct ks_cu_buf {
    char name[32];
    uint64_t offset, bytes; /* of its data in the shared mapping */
    uint32_t elem;          /* element size in bytes */
    int dtype;              /* ks_cu_type (scalar) of the elements */
    int empty;              /* `empty:` (not initialised): poisoned with 0xFF bytes */
    int64_t rows, cols;     /* its last two dimensions (1, n for a vector) */
} ks_cu_buf;

/* A static __shared__ array: kscope names it (its declaration's slot id is its index),
 * the child places it (offset in the runtime's shared arena, bytes; 0 until it ran). */
typedef struct ks_cu_sharr {
    char name[32];
    uint64_t offset, bytes;
} ks_cu_sharr;

/* The control block at the start of the shared mapping. The child writes everything
 * below `param` ... except what kscope fills before the fork (marked "in"). */
typedef struct ks_cu_ctl {
    /* in */
    uint32_t grid[3], block[3];
    uint32_t shared_bytes; /* --shared: dynamic shared memory */
    int nbufs;
    ks_cu_buf bufs[KS_CU_MAX_BUFS];
    int nshared;
    ks_cu_sharr shared[KS_CU_MAX_SHARED];
    char dyn_name[32]; /* the extern __shared__ array's name ("" if none) */
    int nparams;       /* as the declaration names them */
    char param_name[KS_CU_MAX_PARAMS][32];
    int param_buf[KS_CU_MAX_PARAMS];  /* a buffer given for the parameter, else -1 */
    double param_f[KS_CU_MAX_PARAMS]; /* a number given for it */
    int64_t param_i[KS_CU_MAX_PARAMS];
    int param_isint[KS_CU_MAX_PARAMS]; /* the number was written as an integer */
    ks_filter filter;
    uint64_t capacity;      /* most events the run keeps (--trace-limit) */
    uint64_t ring_at, ring; /* the event ring: its offset in the mapping, its slots */
    /* events flow through the ring: the child fills slots up to `committed` (event numbers
     * from the launch's start; a store's events are committed once its value is known) and
     * waits while the ring is full; kscope copies them out up to `consumed` */
    uint64_t committed, consumed; /* (atomic) */
    /* out */
    uint64_t nevents, dropped; /* produced by the child, and those over the capacity */
    uint32_t npcs;
    uint64_t pcs[KS_CU_MAX_PCS];      /* raw site i+1: its program counter, module-relative */
    uint8_t pc_kind[KS_CU_MAX_PCS];   /* KS_EV_READ / WRITE / BARRIER / WARP / FAULT */
    uint8_t pc_flags[KS_CU_MAX_PCS];  /* KS_FLAG_ATOMIC for atomics */
    uint8_t pc_tensor[KS_CU_MAX_PCS]; /* an access site's tensor (255: none) */
    uint8_t param_type[KS_CU_MAX_PARAMS];
    int started;                    /* the kernel began */
    int finished;                   /* every block ran */
    uint32_t cur_block, cur_thread; /* the fiber running now (for a timeout's line) */
    uint64_t blocks_done;
    int fault; /* ks_cu_fault that stopped the run, 0 if none */
    uint32_t fault_block, fault_thread;
    uint64_t fault_pc;
    uint64_t stopped_threads;     /* threads stopped by a finding (outside, assert, ...) */
    uint64_t shared_static_bytes; /* the static __shared__ slots handed out so far */
    char error[512];              /* a setup error (exit 2), one line */
} ks_cu_ctl;

/* The built-in variables, by the names the user's code reads (kscope_cuda.h: uint3, dim3). */
typedef struct ks_cu_u3 {
    unsigned x, y, z;
} ks_cu_u3;

/* What the user's code calls (declared again in kscope_cuda.h, which is C++). */
extern ks_cu_u3 threadIdx, blockIdx, blockDim, gridDim;
extern unsigned char ks_cu_dyn_smem[];
void *ks_cu_shared_slot(int id, unsigned long bytes);
void ks_cu_syncthreads(void);
int ks_cu_syncthreads_op(int op, int pred);
unsigned long long ks_cu_warp(int op, unsigned mask, unsigned long long v, int arg, int width);
unsigned ks_cu_activemask(void);
unsigned long long ks_cu_atomic(int op, int type, void *addr, unsigned long long v, unsigned long long cmp);
void ks_cu_threadfence(void);
long long ks_cu_clock(void);
int ks_cu_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ks_cu_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));
void ks_cu_trap(void) __attribute__((noreturn));
void ks_cu_unsupported(const char *what) __attribute__((noreturn));
void __assert_fail(const char *expr, const char *file, unsigned int line, const char *function)
    __attribute__((noreturn));

/* A scalar argument (--arg NAME=x, integer k when isint) as the parameter type t (a
 * ks_cu_type) into *store, its low bytes; -1 with a one-line message in err when it is not
 * an integer where one is wanted or does not fit. The simulator's child and the GPU
 * launcher (cu_gpu.c) bind scalars with it. */
int ks_cu_scalar_bind(const char *name, int t, double x, int64_t k, int isint, uint64_t *store, char *err, size_t n);

/* The child's side: everything after the fork. Loads `so`, binds the parameters (a
 * mismatch: ctl->error, exit 2), runs the grid and _exits 0 (or 3 when a fault stopped
 * the run). `map` is the shared mapping, ctl at its start. */
void ks_cu_child_main(unsigned char *map, const char *so) __attribute__((noreturn));

#endif
