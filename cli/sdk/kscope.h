/* kscope.h - the KernelScope SDK in one include (installed as <kscope/kscope.h>).
 *
 *   the body form      ks_thread, KS_FN, the atomics helpers          kernels/core/ks_core.h
 *   probes             KS_PROBE, ks_probe_work/read/write/sample/box  kernels/core/ks_probe.h
 *   events and sinks   ks_event, ks_sink, ks_filter                   kernels/core/ks_event.h
 *   sites and tensors  ks_site, ks_field, ks_tensor, ks_dtype         kernels/core/ks_schema.h
 *   the simulator      ks_sim_launch_dims, ks_sim_launch              kernels/core/ks_sim.h
 *   GPU memory, sinks  ks_cuda_malloc, ks_cuda_sink_create, ...       kernels/core/ks_cuda_api.h
 *   errors             ks_status, ks_error_message, ks_status_string  kernels/core/ks_error.h
 *   one declaration    KS_DECLARE: the body's tensors and sites       kernels/core/ks_decl.h
 *   your trace         ks_user_trace_create/_destroy (a handle),      trace/ks_user.h
 *                      ks_user_add_tensor, ks_user_site, ks_dims,
 *                      ks_user_launch_sim, ks_user_write_launch
 *   reading traces     ks_trace_load/_destroy (a handle), accessors   trace/ks_trace.h
 *   the API's marks    KS_API (exported), KS_DEPRECATED               kernels/core/ks_api.h
 * In a .cu file also <kscope/kernels/core/ks_cuda.h>: KS_CUDA_WRAPPERS and
 * KS_THREAD_FROM_BUILTINS. A body compiled in every variant: #define KS_BODY "my_body.h",
 * then #include <kscope/kernels/core/ks_variants.h> (kscope_add_kernel in CMake does this).
 * Flat names for the parts: <kscope/ks_core.h>, ks_decl.h, ks_probe.h, ks_variants.h,
 * ks_user.h, ks_trace.h, ks_cuda.h, ks_version.h (cli/sdk/flat/: forwarders).
 * docs/your-own-kernel.md is the guide. */
#ifndef KSCOPE_H
#define KSCOPE_H

#include "ks_version.h" /* KS_VERSION_MAJOR, _MINOR, _PATCH, KS_VERSION_STRING */
#include "kernels/core/ks_api.h"
#include "kernels/core/ks_core.h"
#include "kernels/core/ks_cuda_api.h"
#include "kernels/core/ks_error.h"
#include "kernels/core/ks_event.h"
#include "kernels/core/ks_launch.h"
#include "kernels/core/ks_schema.h"
#include "kernels/core/ks_sim.h"
#include "trace/ks_user.h"
#include "trace/ks_trace.h"

#endif
