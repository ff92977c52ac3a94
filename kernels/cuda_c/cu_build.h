/* cu_build.h - compiling a .cu file for the simulator (docs/cuda-c.md).
 *
 * clang (16 or newer) preprocesses the file with kscope_cuda.h in front, kscope reads the
 * kernels and their parameter names from the result (cu_scan.c), rewrites the two things
 * C++ cannot say, appends an entry point for the chosen kernel, and compiles everything
 * into a shared object whose loads and stores call the runtime (cu_rt_mem.c). */
#ifndef KS_CU_BUILD_H
#define KS_CU_BUILD_H

#include <stddef.h>

#include "cu_rt.h"

typedef struct ks_cu_kernel {
    char name[128];
    int nparams;
    char params[KS_CU_MAX_PARAMS][32];
    char bad[320];   /* why it cannot run ("" when it can) */
    int is_template; /* declared `template <...> __global__ ...` */
    char ns[128];    /* the namespaces around it, "ops::" ("" at file scope) */
} ks_cu_kernel;

typedef struct ks_cu_build {
    char clang[256];
    char dir[4096];       /* the temporary folder (removed by ks_cu_build_free) */
    char so[4200];        /* the compiled kernel */
    char dyn_name[32];    /* the extern __shared__ array, "" if none */
    ks_cu_kernel kernel;  /* the one --kernel names */
    char expr[256];       /* --kernel as given: "scale_shift<float, 4>" */
    char opts_file[4096]; /* the .cu file as given */
    int nshared;
    ks_cu_sharr shared[KS_CU_MAX_SHARED]; /* the static __shared__ declarations, by slot id */
} ks_cu_build;

typedef struct ks_cu_build_opts {
    const char *file, *kernel;
    const char *defines[64]; /* -D NAME[=VALUE] */
    int ndefines;
    const char *includes[64]; /* -I DIR */
    int nincludes;
    int quiet;
} ks_cu_build_opts;

/* A clang++ of version 16 or newer ($KSCOPE_CLANG first, then clang++-20 .. clang++-16,
 * clang++). KS_ENOENT with the package to install. */
int ks_cu_find_clang(char *out, size_t n);
/* Compiles (each clang step at most $KSCOPE_CC_TIMEOUT seconds, default 60; the temporary
 * folder goes on SIGINT, SIGTERM and SIGHUP until ks_cu_build_free); KS_OK, or KS_EINVAL (bad kernel name, unknown kernel, compile error after
 * clang printed its diagnostics) / KS_EIO with the one-line message set. */
int ks_cu_build_run(ks_cu_build *b, const ks_cu_build_opts *o);
void ks_cu_build_free(ks_cu_build *b);

/* cu_scan.c: the __global__ functions of preprocessed text (at most max; returns how
 * many), and the text with __shared__ declarations and <<<>>> rewritten (malloc'd; NULL
 * when out of memory or a declaration cannot be read): a static array becomes a reference
 * to a runtime slot (shared[id].name; its size is known when it runs), extern ones a
 * pointer to the dynamic shared memory (its name in dyn_name). */
int ks_cu_scan_kernels(const char *text, ks_cu_kernel *out, int max);
char *ks_cu_rewrite(const char *text, char *dyn_name, size_t dyn_cap, ks_cu_sharr *shared, int max, int *nshared);

/* the text of kscope_cuda.h, embedded at build time */
extern const unsigned char ks_cu_header_bytes[];

#endif
