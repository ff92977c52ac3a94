/* <kscope/ks_cuda.h> - in a .cu file: KS_THREAD_FROM_BUILTINS, KS_CUDA_WRAPPERS: a flat
 * name for <kscope/kernels/core/ks_cuda.h>, installed beside <kscope/kscope.h> (the
 * nested name keeps working). No guard of its own: it forwards. */
#include "kernels/core/ks_cuda.h"
