/* ks_decl.h - one declaration of a kernel's tensors and sites, shared by its body and its
 * main (public; installed as <kscope/kernels/core/ks_decl.h>, included by ks_core.h).
 *
 * The body's probes name tensors and sites by number; main's descriptor (ks_user.h) says
 * what each number is. Declared once, in the body's declarations, as two lists of
 * (ENUM, "name") pairs:
 *
 *   #define UP_TENSORS(X) X(UP_T_INPUT, "input") X(UP_T_OUTPUT, "output")
 *   #define UP_SITES(X) X(UP_SITE_WORK, "upsample.work") X(UP_SITE_SAMPLE, "upsample.sample") \
 *                       X(UP_SITE_WRITE, "upsample.write")
 *   KS_DECLARE(upsample, UP_TENSORS, UP_SITES)
 *
 * gives the enums the probes use (UP_T_INPUT = 0, ..., UP_SITE_WRITE = 2) and
 * `const ks_user_decl *upsample_decl(void)`, the same lists by name, which main passes to
 * ks_user_trace_create (ks_user.h). Main then registers each tensor and site by its
 * name (or its enum), in any order; a name the body does not declare, an enum registered
 * under another name, or a declared tensor or site main never registers is an error that
 * names both sides. A site the body uses but does not declare does not compile. */
#ifndef KS_DECL_H
#define KS_DECL_H

#define KS_DECL_TENSORS 24 /* = KS_MAX_TENSORS (trace/kst.h) */
#define KS_DECL_SITES 64   /* = KS_MAX_SITES (ks_schema.h) */

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel's tensors and sites by number: what KS_DECLARE writes. */
typedef struct ks_user_decl {
    const char *op; /* the kernel's name (KS_DECLARE's first argument): the trace's op */
    int ntensors, nsites;
    const char *tensors[KS_DECL_TENSORS];    /* names by number */
    const char *tensor_ids[KS_DECL_TENSORS]; /* the enums' names ("UP_T_INPUT"), for messages */
    const char *sites[KS_DECL_SITES];
    const char *site_ids[KS_DECL_SITES];
} ks_user_decl;

#ifdef __cplusplus
}
#endif

#define KS_DECL_ENUM_(id, name) id,
#define KS_DECL_NAME_(id, name) name,
#define KS_DECL_ID_(id, name) #id,
#define KS_DECL_ONE_(id, name) +1

/* KS_DECLARE(op, TENSORS, SITES): the enums and `const ks_user_decl *op##_decl(void)`
 * (above). Each list has at least one entry; more than 24 tensors or 64 sites does not
 * compile. */
#define KS_DECLARE(op, TENSORS, SITES)                              \
    enum { TENSORS(KS_DECL_ENUM_) };                                \
    enum { SITES(KS_DECL_ENUM_) };                                  \
    static inline const ks_user_decl *op##_decl(void)               \
    {                                                               \
        static const ks_user_decl decl = {#op,                      \
                                          0 TENSORS(KS_DECL_ONE_),  \
                                          0 SITES(KS_DECL_ONE_),    \
                                          {TENSORS(KS_DECL_NAME_)}, \
                                          {TENSORS(KS_DECL_ID_)},   \
                                          {SITES(KS_DECL_NAME_)},   \
                                          {SITES(KS_DECL_ID_)}};    \
        return &decl;                                               \
    }

#endif
