/* registry.h - operators as descriptors, and the run the registry owns.
 *
 * An operator is its kernel body plus one descriptor (ks_op, designated initialisers
 * only): its parameter rows, its tensor rows (indexed by the kernel's own tensor ids, so
 * trace events name them directly), a prepare step and a launch. The registry does the
 * rest, the same way for every operator and for the CLI, lessons and tests alike:
 *
 *   ks_run_init(r, op)        defaults from the parameter rows
 *   ks_run_set(r, name, text) one parameter, as `--name text` on the command line
 *   (r->tensor[i] = a given input, r->device, r->launch, r->sink, ...)
 *   ks_run_execute(r)         prepare (validates once, sets every shape) -> given inputs
 *                             checked against those shapes, the others filled -> outputs
 *                             allocated -> launch on the simulator or on device copies
 *                             (the GPU trace buffer sized by a rerun) -> parameter JSON
 *
 * The operator table (ops.def, one line per operator) lists the descriptors; `kscope list` prints them. */
#ifndef KS_REGISTRY_H
#define KS_REGISTRY_H

#include "core/ks_event.h"
#include "core/ks_kernel.h"
#include "core/ks_launch.h"
#include "core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_MAX_PARAMS 24
#define KS_OP_TENSORS 24
#define KS_RUN_FACTS 16
#define KS_PARAM_AXES 3 /* the most values one INT parameter holds (D,H,W) */
/* The number of rows of a table: descriptors count with this, never with a literal. */
#define KS_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* A descriptor's two tables with their counts: `.name = "x", KS_OP_ROWS(params, tensors), ...` */
#define KS_OP_ROWS(p, t) .params = (p), .nparams = KS_COUNT(p), .tensors = (t), .ntensors = KS_COUNT(t)
/* and its kernel rows (ks_kernel.h): `.name = "x", KS_OP_ROWS(...), KS_OP_KERNELS(kernels), ...` */
#define KS_OP_KERNELS(k) .kernels = (k), .nkernels = KS_COUNT(k)

/* How a parameter is given. INT: --name N or --name H,W (value[]), or with axes 3 one to
 * three values (D,H,W or H,W; nvalues[] says how many were typed, 1 fills every axis). FLOAT: the same with
 * decimals (fvalue[], defaults fdef[]). SWITCH: --name sets 1, --no-name sets 0 (value[0]).
 * CHOICE: --name WORD, one of `choices` ("mmcv|torchvision"); value[0] is its position. */
enum ks_param_kind { KS_PARAM_INT = 0, KS_PARAM_FLOAT, KS_PARAM_SWITCH, KS_PARAM_CHOICE };

typedef struct ks_param_spec {
    const char *name;           /* as the flag: "kernel-size" for --kernel-size */
    int kind;                   /* ks_param_kind (0: INT) */
    int axes;                   /* 2: "H,W" per axis (one number means both); 3: up to three; 0, 1: one value */
    int64_t def[KS_PARAM_AXES]; /* INT, SWITCH, CHOICE: default (a CHOICE's position) */
    int64_t min;                /* INT: smallest value accepted */
    double fdef[2];             /* FLOAT: defaults */
    const char *choices;        /* CHOICE: the words, '|'-separated */
    const char *help;
    const char *key; /* its key in the trace's params JSON; NULL: the name with '_' */
} ks_param_spec;

typedef struct ks_tensor_spec {
    const char *name;
    int output;        /* 0: input (from --in or built in), 1: output */
    const char *shape; /* for humans: "(N, C, H, W): with --backward" */
    int dtype;         /* ks_dtype (an input given with --in must have it) */
    int may_give;      /* an output that a run may take as an input instead (kept as given) */
    int seed;          /* a built-in input's pattern uses the run's seed + this */
} ks_tensor_spec;

enum ks_pattern { KS_PAT_ARANGE = 0, KS_PAT_ONES = 1, KS_PAT_RANDOM = 2 };

/* The most events a trace keeps unless --trace-limit says otherwise: 4 GiB of events. */
#define KS_TRACE_LIMIT_DEFAULT (1ULL << 26)

typedef struct ks_op ks_op;

/* What a descriptor's `explain` hook works with (trace/step_work.c fills it): the work
 * event's site and recorded fields, readers of the trace, and `give`, which adds a line.
 * The trace's tensors and parameters come through these callbacks, so an operator needs
 * nothing of the trace library. */
typedef struct ks_explain ks_explain;
struct ks_explain {
    const ks_site *site;
    const int32_t *field; /* the work event's fields, site->nfields of them */
    /* a number among the trace's parameters (a switch: 0 or 1), or with at >= 0 item at of
     * an array one: 1 when found */
    int (*param)(const ks_explain *x, const char *name, int at, double *v);
    /* element i (row-major) of the stored float32 tensor `tensor`: 1 when it is there */
    int (*f32)(const ks_explain *x, const char *tensor, int64_t i, float *v);
    /* the stored tensor's shape (KS_MAX_DIMS room): its ndim, or -1 */
    int (*shape)(const ks_explain *x, const char *tensor, int64_t *shape);
    /* a line `name = expr = work = v`, printed before field `before`; later lines' formulas
     * show v for `name` */
    void (*give)(ks_explain *x, const char *before, const char *name, const char *expr, const char *work, double v);
    /* `text` for `name` in later lines' formulas, without a line of its own (keys[r]) */
    void (*show)(ks_explain *x, const char *name, const char *text);
    /* v as step prints a real number (the shortest text that reads back the same float) */
    void (*real)(char *buf, size_t n, double v);
    void *state; /* step_work.c's own */
};

/* One run: filled by the caller (parameters, given inputs, device, launch, sink),
 * completed by ks_run_execute (shapes, outputs, built-in inputs, schema, launch facts).
 * Large: keep it off the stack. */
typedef struct ks_run {
    const ks_op *op;
    int64_t value[KS_MAX_PARAMS][KS_PARAM_AXES]; /* indexed by the op's parameter ids */
    int nvalues[KS_MAX_PARAMS];                  /* axes 3: how many values were given (0: default) */
    double fvalue[KS_MAX_PARAMS][2];             /* FLOAT parameters */
    int set[KS_MAX_PARAMS];                      /* given explicitly */
    ks_tensor tensor[KS_OP_TENSORS];             /* indexed by the op's tensor ids */
    int absent[KS_OP_TENSORS];                   /* not used in this mode (shape (0), no data) */
    int given[KS_OP_TENSORS];                    /* set by ks_run_execute: came with data (uploaded, kept) */
    int expect_ndim[KS_OP_TENSORS];              /* the shapes prepare set (a given input must match) */
    int64_t expect[KS_OP_TENSORS][KS_MAX_DIMS];
    int device;
    int pattern;
    uint64_t seed;
    ks_launch launch;
    ks_sink *sink; /* host sink; NULL runs the plain variant */
    /* The kernel row asked to record (--trace-kernel WORD; -1: "auto", the default), and
     * the row that does, which prepare sets with ks_run_trace_row (the registry then builds
     * the trace header's sites from that row's .sites). */
    int trace_kernel;
    int traced_row;
    int twins;                      /* plain_only rows yield to their twins (ks_exec.twins: the twin tests) */
    unsigned long long trace_limit; /* most events kept (0: KS_TRACE_LIMIT_DEFAULT) */
    int schedule;                   /* traced: also record the schedule (each block's SM and clocks) */
    /* set by prepare */
    int64_t work_items;        /* of the kernel the trace records */
    int default_threads;       /* that kernel's reference launch (from the op unless */
    int64_t default_block_cap; /* prepare says otherwise) */
    int nsites;                /* set by ks_run_sites_check: the traced row's trace schema */
    ks_site sites[KS_MAX_SITES];
    int nfacts; /* values for the params JSON beyond the rows (or replacing a row's) */
    char fact_key[KS_RUN_FACTS][KS_NAME_LEN];
    char fact_json[KS_RUN_FACTS][64];
    /* the operator's own state between prepare and launch (its params struct) */
    union {
        unsigned char bytes[1024];
        double align_d;
        int64_t align_i;
        void *align_p;
    } ctx;
    /* set by ks_run_execute */
    int threads;
    int64_t blocks, block_cap;
    int reruns;             /* GPU: reruns that sized the trace buffer */
    uint64_t rows_ran;      /* bit k: kernel row k launched (an operator with .run) */
    int64_t *schedule_data; /* with schedule: (blocks, 4) int64 block, SM, start, end (owned) */
    int64_t schedule_blocks;
    char device_name[128];
    char params_json[1024];
} ks_run;

/* The operator's private state in r->ctx, checked for size at compile time. */
#define KS_RUN_CTX(r, type) \
    ((type *)(void *)((r)->ctx.bytes + 0 * sizeof(char[sizeof(type) <= sizeof((r)->ctx) ? 1 : -1])))

struct ks_op {
    const char *name;
    const char *summary;
    const ks_param_spec *params;
    int nparams;
    const ks_tensor_spec *tensors;
    int ntensors;
    int default_threads;       /* the reference launch of the kernel a trace records */
    int64_t default_block_cap; /* (0: no cap) */
    /* Reads r->value and the given inputs (ks_run_take), validates the geometry (the only
     * place it is validated), and sets: the shape of every tensor (ks_run_absent for those
     * this mode does not use), r->work_items, the traced row (ks_run_trace_row), any facts,
     * its state in r->ctx (which the kernel rows' .sites read: prepare builds no sites).
     * KS_OK, or an error with ks_error_message() set. */
    int (*prepare)(ks_run *r);
    /* Optional: fills built-in input `t` (shape set, data allocated) when a plain pattern
     * is not right for it (RoIs, offsets). NULL or KS_ENOENT: the run's pattern. */
    int (*fill)(ks_run *r, int t);
    /* The older form, which no operator of the table uses (test_ops refuses it there):
     * runs the kernels by hand, ptr[i] tensor i (host memory on the simulator, device
     * memory on CUDA; NULL when absent), sink a host or device sink (NULL: plain).
     * Outputs arrive zeroed. */
    int (*launch)(const ks_run *r, void *const *ptr, ks_sink *sink);
    /* Its kernels (ks_kernel.h), one row each, and the sequence that runs them:
     * ks_exec_kernel(x, K_ROW, &args, work) on x = ks_exec_for(r, sink), which the
     * registry made and checks afterwards (the traced row ran). --trace-kernel takes the
     * rows' names. A longer pipeline (deform_conv's layer, sparse_conv's plan) runs its
     * rows through x too, with its own steps between them. */
    const ks_kernel *kernels;
    int nkernels;
    int (*run)(ks_exec *x, const ks_run *r, void *const *ptr);
    /* Names a work formula may use besides its site's fields, min/max/floor/ceil/int and
     * the op's tensors as t[i, j]: values `step` explains (space-separated; NULL: none). */
    const char *symbols;
    /* Short names formulas use for parameters, space-separated NAME=key or NAME=key[i] (an
     * item of an array parameter): "PH=output_size[0]". step and check resolve them in the
     * trace's params (ks_op_alias). NULL: none. */
    const char *aliases;
    /* Optional: the lines `kscope step` prints before a work item's fields besides them,
     * worked out from the trace's tensors and parameters (RoIAlign's scaled box and bin
     * size, patchify's point, sparse_conv's key): see ks_explain. Called for every work
     * event of the op's traces; it checks that the site is one it explains. */
    void (*explain)(ks_explain *x);
};

/* The field of site s named `name`, or -1 (for explain hooks). */
int ks_site_field(const ks_site *s, const char *name);
/* The alias `name` (len characters) of op's `aliases`: its parameter key into key (n
 * bytes) and its item into *at (-1: the parameter itself). 1 when op has it. */
int ks_op_alias(const ks_op *op, const char *name, size_t len, char *key, size_t n, int *at);

/* The checks of a descriptor the registry makes before its first run, and test_ops for
 * every operator: every parameter and tensor row present (no gap in a designated table),
 * named, with help; kernel rows well formed (ks_kernel_rows_check). KS_OK, or KS_EINVAL
 * with one line naming the operator and the row. */
int ks_op_check(const ks_op *op);
/* For prepare: the kernel row that records, as --trace-kernel asked or else `def` (the
 * mode's default); sets r->traced_row. */
int ks_run_trace_row(ks_run *r, int def);
/* The sequence of an operator's launch: its kernel rows on r's device and launch, the row
 * r->trace_kernel recording into `sink`, the 32-bit choice from every tensor's size. */
ks_exec ks_exec_for(const ks_run *r, ks_sink *sink);
/* The trace header's sites (run by ks_run_execute after prepare): an operator with kernel
 * rows gets them from its traced row's .sites on its state (r->ctx), then they are checked
 * (ks_op_sites_check). KS_OK, or KS_EINVAL with one line. */
int ks_run_sites_check(ks_run *r);
/* The checks of n sites of op: each filled (a name, a known kind, its tensor a row of the
 * op or -1 for work), field names identifiers, digit fields with a stride >= 1, and
 * formulas that name only the site's fields, functions, tensors and the op's symbols, with
 * integer literals, not cut short. KS_OK, or KS_EINVAL with one line naming the operator,
 * the site and the field. */
int ks_op_sites_check(const ks_op *op, const ks_site *sites, int n);
/* Kernel row k's trace schema at the operator's defaults (what `kscope list OP` prints):
 * prepare on the defaults, then the row's .sites into out (KS_MAX_SITES room). The number
 * of sites, 0 for a row never traced, or -1 with ks_error_message() set. */
int ks_op_row_sites(const ks_op *op, int k, ks_site *out);

const ks_op *ks_op_find(const char *name);
int ks_op_count(void);
const ks_op *ks_op_at(int i);
/* Index of a param / tensor spec by name, or -1. */
int ks_op_param(const ks_op *op, const char *name);
int ks_op_tensor(const ks_op *op, const char *name);
/* The position of `word` in a CHOICE spec's choices, or -1. */
int ks_param_choice(const ks_param_spec *s, const char *word);

/* Fills r with the op's defaults and zeroes the rest. */
void ks_run_init(ks_run *r, const ks_op *op);
void ks_run_free(ks_run *r);
/* Sets parameter `name` from its text form, as the CLI and lesson files give it:
 * "3" or "3,2" (INT), "0.5" or "0.5,1" (FLOAT), "on"/"off" (SWITCH), a word (CHOICE).
 * KS_OK; KS_ENOENT for an unknown name; KS_EINVAL with one line naming the flag. */
int ks_run_set(ks_run *r, const char *name, const char *text);
/* Parameter `p` of the op as given or defaulted. */
int64_t ks_run_int(const ks_run *r, int p, int axis);
double ks_run_float(const ks_run *r, int p, int axis);

/* For prepare. If input `t` was given: it must have `ndim` dimensions, and each
 * (dims[k], params[k], axes[k]) binds dimension dims[k] to parameter params[k] (axis
 * axes[k]): a flag given too must agree; the parameter takes the tensor's size. KS_OK if
 * `t` was not given. */
typedef struct ks_dim_bind {
    int dim, param, axis;
} ks_dim_bind;
int ks_run_take(ks_run *r, int t, int ndim, const ks_dim_bind *binds, int n);
/* ks_run_take for the common case: a given image tensor t (N, C, H, W) sets the batch,
 * channels and input-size parameters (H, W on the two axes of p_hw). */
int ks_run_take_nchw(ks_run *r, int t, int p_batch, int p_channels, int p_hw);
/* One size implied by given tensor t (not a dimension itself: C = columns.shape[1] / (kh*kw)):
 * parameter p's axis takes it; a flag given too must agree. */
int ks_run_bind(ks_run *r, int t, int p, int axis, int64_t size);
/* Sets tensor t's dtype (float32), ndim and shape; tensors given as input are checked
 * against it by ks_run_execute. */
void ks_run_shape(ks_run *r, int t, int ndim, const int64_t *shape);
void ks_run_shape4(ks_run *r, int t, int ndim, int64_t a, int64_t b, int64_t c, int64_t d);
/* Marks tensor t as not used by this run (shape (0), no data). */
void ks_run_absent(ks_run *r, int t);
/* A params-JSON value (JSON text) for `key`, added after the rows or replacing a row's. */
void ks_run_fact(ks_run *r, const char *key, const char *json_fmt, ...);

/* Runs r (see the top of this file). KS_OK, or an error with ks_error_message() set; on
 * error the run's tensors stay owned by r (ks_run_free). */
int ks_run_execute(ks_run *r);

/* The next number in [0, 1) (24 random bits) of a splitmix64 stream. */
float ks_rand_unit(uint64_t *state);
/* Fills an input tensor (shape set; allocates it) with the built-in pattern. */
int ks_fill_pattern(ks_tensor *t, int pattern, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
