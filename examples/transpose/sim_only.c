/* sim_only.c - the transpose example without CMake, through pkg-config:
 *   cc -I. sim_only.c $(pkg-config --cflags --libs kscope) -o transpose && ./transpose t.kst
 * It compiles the body's variants itself, as kscope_add_kernel's generated file does. */
#include <kscope/kscope.h>

#define KS_BODY "transpose_body.h" /* found through -I. */
#include <kscope/ks_variants.h>

void transpose_sim_plain(ks_thread *t, const void *a);
void transpose_sim_traced(ks_thread *t, const void *a);
void transpose_sim_plain(ks_thread *t, const void *a) { transpose_body_plain(t, (const transpose_args *)a); }
void transpose_sim_traced(ks_thread *t, const void *a) { transpose_body_traced(t, (const transpose_args *)a); }

#define TRANSPOSE_SIM_ONLY
#include "main.c"
