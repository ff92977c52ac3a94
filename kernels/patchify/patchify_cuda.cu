/* patchify_cuda.cu - the patchify kernels on the GPU: the bodies of patchify_body.h in every
 * variant, their KS_KERNEL lines as kernels with one launch each (the rows of patchify_op.c). */
#include "../core/ks_cuda.h"

#define KS_BODY "../patchify/patchify_body.h" /* relative to ks_variants.h */
#include "../core/ks_variants.h"
