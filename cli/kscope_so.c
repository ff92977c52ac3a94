/* kscope_so.c - the shared libraries' own symbol. libkscope.so carries ks_kernels, ks_cuda
 * and ks_trace whole but exports only the API its installed headers declare (KS_API;
 * CMakeLists.txt); libkscope_ops.so adds the operators' entry points for ctypes as
 * ks_ops_* (cli/ops/kscope_ops.c), e.g. ks_ops_im2col_cuda(params, input_ptr, columns_ptr,
 * launch, NULL, stream). */
#include "ks_version.h"

const char *ks_version(void) { return KS_VERSION_STRING; }
