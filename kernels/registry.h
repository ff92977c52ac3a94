/* registry.h - the operator table: name -> parameters, tensors, runner. One flat table;
 * the CLI, lessons and tests look operators up here (the one dispatcher between main and
 * a kernel). */
#ifndef KS_REGISTRY_H
#define KS_REGISTRY_H

#include "core/ks_event.h"
#include "core/ks_launch.h"
#include "core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_MAX_PARAMS 24
#define KS_OP_TENSORS 16

/* How a parameter is given. INT: --name N or --name H,W (value[]). FLOAT: the same with
 * decimals (fvalue[], defaults fdef[]). SWITCH: --name sets 1, --no-name sets 0 (value[0]).
 * CHOICE: --name WORD, one of `choices` ("mmcv|torchvision"); value[0] is its position. */
enum ks_param_kind { KS_PARAM_INT = 0, KS_PARAM_FLOAT, KS_PARAM_SWITCH, KS_PARAM_CHOICE };

typedef struct ks_param_spec {
    const char *name; /* as the flag: "kernel-size" for --kernel-size */
    int axes;         /* 2: "H,W" per axis (one number means both); 1: a single value */
    int64_t def[2];
    int64_t min;
    const char *help;
    int kind;            /* ks_param_kind (0: INT) */
    const char *choices; /* CHOICE: the words, '|'-separated */
    double fdef[2];      /* FLOAT: defaults */
} ks_param_spec;

typedef struct ks_tensor_spec {
    const char *name;
    int output;        /* 0: input (from --in or a pattern), 1: output */
    const char *shape; /* for humans: "(N, C, H, W)" */
} ks_tensor_spec;

enum ks_device { KS_DEV_SIM = 0, KS_DEV_CUDA = 1 };
enum ks_pattern { KS_PAT_ARANGE = 0, KS_PAT_ONES = 1, KS_PAT_RANDOM = 2 };

/* One run: filled by the caller (values, given inputs, device, launch, sink), completed
 * by the runner (outputs, defaulted inputs, schema and launch facts). */
typedef struct ks_run {
    int64_t value[KS_MAX_PARAMS][2]; /* in the order of the op's param specs */
    double fvalue[KS_MAX_PARAMS][2]; /* FLOAT parameters */
    int set[KS_MAX_PARAMS];          /* given explicitly */
    ks_tensor tensor[KS_OP_TENSORS]; /* in the order of the op's tensor specs */
    int absent[KS_OP_TENSORS];       /* set by the runner: not used in this mode (shape (0)) */
    int device;
    int pattern;
    uint64_t seed;
    ks_launch launch;
    ks_sink *sink; /* host sink; NULL runs the plain variant */
    /* filled by the runner */
    int nsites;
    ks_site sites[KS_MAX_SITES];
    int threads;
    int64_t blocks, block_cap, work_items;
    char device_name[128];
    char params_json[1024];
} ks_run;

typedef struct ks_op {
    const char *name;
    const char *summary;
    const ks_param_spec *params;
    int nparams;
    const ks_tensor_spec *tensors;
    int ntensors;
    int default_threads;
    int64_t default_block_cap;
    /* Runs the op; returns KS_OK or an error with ks_error_message() set. */
    int (*run)(ks_run *r);
} ks_op;

const ks_op *ks_op_find(const char *name);
int ks_op_count(void);
const ks_op *ks_op_at(int i);
/* Index of a param / tensor spec by name, or -1. */
int ks_op_param(const ks_op *op, const char *name);
int ks_op_tensor(const ks_op *op, const char *name);
/* Fills r->value with the op's defaults and zeroes the rest. */
void ks_run_init(ks_run *r, const ks_op *op);
void ks_run_free(ks_run *r);
/* A parameter given explicitly together with an --in tensor must agree with the size the
 * tensor implies: KS_OK, or KS_EINVAL naming the flag, the tensor and both values. */
int ks_run_agree(const ks_run *r, int param, int axis, const char *flag, int64_t got, const char *tensor);
/* The position of `word` in a CHOICE spec's choices, or -1. */
int ks_param_choice(const ks_param_spec *s, const char *word);
/* Marks tensor i as not used by this run (shape (0), no data). */
void ks_run_absent(ks_run *r, int i);
/* The next number in [0, 1) (24 random bits) of a splitmix64 stream. */
float ks_rand_unit(uint64_t *state);
/* Fills an input tensor (shape already set) with the built-in pattern. */
int ks_fill_pattern(ks_tensor *t, int pattern, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
