/* ks_variants.h - compiles one kernel body file in every variant it is needed in.
 *
 *   #define KS_BODY "../deform_conv/deform_body.h"   (relative to this file)
 *   #include "../core/ks_variants.h"
 *
 * In C (the simulator): name_plain and name_traced, 64-bit indices. Under nvcc also
 * name_plain32, with 32-bit indices, for launches whose every size fits 2^30 (64-bit
 * division would dominate the cost). KS_BODY is included once per variant with KS_IDX,
 * KS_TRACED and KS_VARIANT set (see ks_probe.h); the body must not have include guards.
 * No include guard here either: a file may include it for several bodies. */
#ifndef KS_BODY
#error "define KS_BODY (the body file, quoted) before including ks_variants.h"
#endif

/* shared-memory accesses record only in the traced variant (ks_shared.h) */
#undef KS_SHARED_PROBES
#define KS_SHARED_PROBES KS_TRACED

#if defined(__CUDACC__)
#define KS_IDX int32_t
#define KS_TRACED 0
#define KS_VARIANT(name) name##_plain32
#include KS_BODY
#undef KS_IDX
#undef KS_TRACED
#undef KS_VARIANT
#endif

#define KS_IDX int64_t
#define KS_TRACED 0
#define KS_VARIANT(name) name##_plain
#include KS_BODY
#undef KS_TRACED
#undef KS_VARIANT

#define KS_TRACED 1
#define KS_VARIANT(name) name##_traced
#include KS_BODY
#undef KS_IDX
#undef KS_TRACED
#undef KS_VARIANT
#undef KS_BODY
#undef KS_SHARED_PROBES
#define KS_SHARED_PROBES 1
