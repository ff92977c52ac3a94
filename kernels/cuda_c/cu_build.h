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

/* C++ that gives a kernel's parameter types as cu_rt.h codes (ks_cu_entry_ns::sig<F>::
 * types) and calls it from an array of argument pointers: the simulator's entry point and
 * the GPU launcher (cu_gpu.c) both append it to the user's file. */
#define KS_CU_ENTRY_TYPES                                                                                                                                                                              \
    "namespace ks_cu_entry_ns {\n"                                                                                                                                                                     \
    "template <class T> struct scal { static constexpr unsigned char v = std::is_class<T>::value || std::is_union<T>::value ? 12 : 0; };\n"                                                            \
    "template <> struct scal<float> { static constexpr unsigned char v = 1; };\n"                                                                                                                      \
    "template <> struct scal<double> { static constexpr unsigned char v = 2; };\n"                                                                                                                     \
    "template <> struct scal<char> { static constexpr unsigned char v = std::is_signed<char>::value ? 3 : 4; };\n"                                                                                     \
    "template <> struct scal<signed char> { static constexpr unsigned char v = 3; };\n"                                                                                                                \
    "template <> struct scal<unsigned char> { static constexpr unsigned char v = 4; };\n"                                                                                                              \
    "template <> struct scal<short> { static constexpr unsigned char v = 5; };\n"                                                                                                                      \
    "template <> struct scal<unsigned short> { static constexpr unsigned char v = 6; };\n"                                                                                                             \
    "template <> struct scal<int> { static constexpr unsigned char v = 7; };\n"                                                                                                                        \
    "template <> struct scal<unsigned int> { static constexpr unsigned char v = 8; };\n"                                                                                                               \
    "template <> struct scal<long> { static constexpr unsigned char v = sizeof(long) == 8 ? 9 : 7; };\n"                                                                                               \
    "template <> struct scal<unsigned long> { static constexpr unsigned char v = sizeof(long) == 8 ? 10 : 8; };\n"                                                                                     \
    "template <> struct scal<long long> { static constexpr unsigned char v = 9; };\n"                                                                                                                  \
    "template <> struct scal<unsigned long long> { static constexpr unsigned char v = 10; };\n"                                                                                                        \
    "template <> struct scal<bool> { static constexpr unsigned char v = 11; };\n"                                                                                                                      \
    "template <class T> struct code { static constexpr unsigned char v = scal<T>::v == 12 ? 0 : scal<T>::v; };\n"                                                                                      \
    "template <class T> struct code<T *> { static constexpr unsigned char v = std::is_pointer<typename std::remove_cv<T>::type>::value ? 0 : (0x80 | scal<typename std::remove_cv<T>::type>::v); };\n" \
    "template <class F> struct sig;\n"                                                                                                                                                                 \
    "template <class... P> struct sig<void (*)(P...)> {\n"                                                                                                                                             \
    "  static constexpr int n = sizeof...(P);\n"                                                                                                                                                       \
    "  static constexpr unsigned char types[sizeof...(P) + 1] = {code<P>::v..., 0};\n"                                                                                                                 \
    "  template <std::size_t... I> __attribute__((no_sanitize(\"coverage\"), always_inline))\n"                                                                                                        \
    "  static void call(void (*f)(P...), void **a, std::index_sequence<I...>) {\n"                                                                                                                     \
    "    f(*static_cast<typename std::remove_reference<P>::type *>(a[I])...);\n"                                                                                                                       \
    "  }\n"                                                                                                                                                                                            \
    "  __attribute__((no_sanitize(\"coverage\"), always_inline)) static void run(void (*f)(P...), void **a) {\n"                                                                                       \
    "    call(f, a, std::index_sequence_for<P...>{});\n"                                                                                                                                               \
    "  }\n"                                                                                                                                                                                            \
    "};\n"                                                                                                                                                                                             \
    "} // namespace ks_cu_entry_ns\n"

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
