/* kscope_so.c - the shared library's own symbol; the library re-exports ks_kernels,
 * ks_cuda and ks_trace whole (see CMakeLists.txt), so ctypes can call e.g.
 * ks_im2col_cuda(params, input_ptr, columns_ptr, launch, NULL, stream). */
#include "ks_version.h"

const char *ks_version(void) { return KS_VERSION_STRING; }
