/* ks_user.h - tracing a kernel of your own (public; installed as <kscope/ks_user.h> and
 * <kscope/trace/ks_user.h>, included by <kscope/kscope.h>).
 *
 * A kernel body in the ks_thread form (ks_core.h: `void body(ks_thread *t, const args *a)`
 * with a grid-stride loop) and probe lines (ks_probe.h: ks_probe_work first in each work
 * item, then ks_probe_read / ks_probe_write / ks_probe_sample / ks_probe_box) runs on the
 * CPU simulator (ks_sim.h) or, compiled by nvcc, on the GPU. This header describes what the
 * probes recorded - the sites their `site` numbers name, the tensors their `tensor` numbers
 * index - and writes it as a .kst file that `kscope info/step/check/diff/view/export`
 * read. docs/your-own-kernel.md walks through it.
 *
 * The tensors and sites are declared once, in the body's declarations (ks_decl.h), which
 * give the probes their numbers and main the same list by name:
 *
 *   #define UP_TENSORS(X) X(UP_T_INPUT, "input") X(UP_T_OUTPUT, "output")
 *   #define UP_SITES(X) X(UP_SITE_WORK, "upsample.work") X(UP_SITE_READ, "upsample.read") \
 *                       X(UP_SITE_WRITE, "upsample.write")
 *   KS_DECLARE(upsample, UP_TENSORS, UP_SITES)        // enums + upsample_decl()
 *
 *   ks_user_trace *d;                                          // a handle: create, destroy
 *   if (ks_user_trace_create(&d, upsample_decl(), n_out)) ...  // op name, work items
 *   ks_user_add_tensor(d, "output", KS_F32, 4, out_shape, output, 1); // by name, any order
 *   ks_user_add_tensor(d, "input", KS_F32, 4, in_shape, input, 0);
 *   ks_site *w = ks_user_site(d, UP_SITE_WORK, NULL, KS_EV_WORK, -1, 0); // name: the body's
 *   ks_user_field_digit(w, "x", 1, W_out);                     // index % W_out
 *   ks_user_site(d, KS_BY_NAME, "upsample.read", KS_EV_READ, UP_T_INPUT, 0);
 *   ks_user_site(d, UP_SITE_WRITE, NULL, KS_EV_WRITE, UP_T_OUTPUT, 1); // each element once
 *   ks_user_launch_sim(d, my_body_traced, &args, ks_dims(0, 1, 1), ks_dims(128, 1, 1), "t.kst");
 *                                                      // grid 0: enough blocks (1-D)
 *   ks_user_trace_destroy(d);
 *
 * Every function that can fail returns KS_OK or an error code with ks_error_message() set
 * (one line); ks_user_site returns NULL instead. A handle keeps a copy of the params; it
 * keeps a pointer to the tensors' data, which must stay valid until the trace is written,
 * and to the declaration (KS_DECLARE's is static). */
#ifndef KS_USER_H
#define KS_USER_H

#include "../kernels/core/ks_api.h"
#include "../kernels/core/ks_decl.h"
#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_event.h"
#include "../kernels/core/ks_schema.h"
#include "../kernels/core/ks_sim.h"
#include "ks_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor of one traced launch (opaque): ks_user_trace_create makes one for the
 * body's declaration, the functions below fill it, ks_user_trace_destroy frees it. */
typedef struct ks_user_trace ks_user_trace;

/* ks_user_site's id when main names the site by its declared name */
#define KS_BY_NAME (-1)

/* A descriptor for the body's declaration (KS_DECLARE's <op>_decl(): its op name, tensors
 * and sites); `work_items` is the count your loop covers (index < work_items). KS_OK with
 * *out the handle, or KS_EINVAL (error set; *out NULL) for a declaration with no entries,
 * too many, a name repeated, empty or longer than 31 characters, or KS_ENOMEM. Tensors and
 * sites then take the numbers the declaration gives them, whatever the order main
 * registers them in, and ks_user_launch_sim / ks_user_write_launch refuse to run until
 * every declared one is registered. Every function below refuses a NULL handle. */
KS_API ks_status ks_user_trace_create(ks_user_trace **out, const ks_user_decl *decl, int64_t work_items);
/* Frees it (NULL: nothing); the tensors' data are yours and stay. */
KS_API void ks_user_trace_destroy(ks_user_trace *d);
/* The trace's params: a JSON object of your parameters for `kscope info` and the names
 * `check` reads ("mapping", "work_shape", values a derived field's formula names), copied;
 * NULL: none ("{}"). KS_EINVAL for text that is not a JSON object or passes 1023 bytes. */
KS_API ks_status ks_user_trace_set_params(ks_user_trace *d, const char *json);
/* Which work items the probes record (default ks_filter_all()): the filter a sink is made
 * with (ks_host_sink_create, ks_cuda_sink_create) and the trace says it used. */
KS_API ks_status ks_user_trace_set_filter(ks_user_trace *d, ks_filter filter);
KS_API ks_filter ks_user_trace_filter(const ks_user_trace *d);

/* Registers tensor `name` of the declaration (C order, host memory, `data` read when the
 * trace is written) under the number the declaration gives it. KS_OK, or KS_EINVAL (error
 * set) when the declaration lacks the name (the error names both lists), it is registered
 * twice, or the shape is invalid. output: 1 when the kernel writes it (`check` compares
 * every recorded write with the stored value). */
KS_API ks_status ks_user_add_tensor(ks_user_trace *d, const char *name, ks_dtype dtype, int ndim, const int64_t *shape,
                                    void *data, int output);
/* Registers site `id` (the number the body's probes pass): `id` is its enum (name NULL:
 * the declared name) or KS_BY_NAME with its declared name, in any order, and an id and
 * name that disagree with the declaration are an error naming both (main's
 * "upsample.write" against the body's UP_SITE_SAMPLE = 1 "upsample.sample"). Its kind (KS_EV_WORK, KS_EV_READ, KS_EV_SAMPLE, KS_EV_WRITE, KS_EV_REGION), the
 * tensor it touches (-1 for work sites) and, for writes, how many times a complete launch
 * writes each element (0: not checked). Returns the site, to add fields to, or NULL (error
 * set). */
KS_API ks_site *ks_user_site(ks_user_trace *d, int id, const char *name, int kind, int tensor, int writes);
/* A work site's next field: a digit of the index, (index / stride) % extent (extent 0:
 * the slowest digit, no modulo) - `check` verifies the digits recompose the index - or a
 * derived value with its formula in the fields' names ("oh * 2 - 1"), which `check`
 * evaluates and compares when it can. KS_OK, or KS_EINVAL past 8 fields. */
KS_API ks_status ks_user_field_digit(ks_site *s, const char *name, int64_t stride, int64_t extent);
KS_API ks_status ks_user_field_derived(ks_site *s, const char *name, const char *expr);

/* A launch's grid or block, as CUDA's dim3(x, y, z) (C and C++ alike). A 0 component of a
 * ks_dim3 passed below counts as 1, as a dim3's omitted one does, except grid.x 0 (below). */
static inline ks_dim3 ks_dims(uint32_t x, uint32_t y, uint32_t z)
{
    ks_dim3 d;
    d.x = x, d.y = y, d.z = z;
    return d;
}

/* Runs body (your body's traced variant, as a ks_sim_body) on the simulator as the launch
 * <<<grid, block>>>, 1-D, 2-D or 3-D (block.x * block.y * block.z at most 1024 threads), and
 * writes the trace to path (whole or not at all). A 1-D launch with grid.x 0 gets enough
 * blocks for every work item. A thread is named by its linear block and thread numbers
 * (ks_block_linear, ks_thread_linear); a 2-D or 3-D launch's shape goes into the trace's
 * params as "grid": [x, y, z] and "block": [x, y, z], which `kscope check` reads to hold
 * the mapping (docs/your-own-kernel.md: each thread does the items of the params'
 * "mapping" in the row-major "work_shape"). The tensors' data are read after the run, so
 * outputs carry their final values.
 * Safe simulation: the body runs in a child process (as `kscope run FILE.cu` runs a .cu
 * kernel), so a store outside its tensor never reaches this program's memory; afterwards
 * the registered tensors' contents are copied back (only they: memory the body writes
 * that is not a registered tensor keeps its old contents here), except elements that a
 * recorded access outside another tensor reached. Every access the probes record outside
 * its tensor is reported on stderr (count, and the first with its thread and site; unless
 * ks_sim_quiet_warnings(1)) and by `kscope check`. A body that crashes or exits stops the
 * child only: the call returns KS_EINVAL naming the signal and the thread and site of the
 * last event, writes the events up to there to path, and leaves the tensors as they were. */
KS_API ks_status ks_user_launch_sim(const ks_user_trace *d, ks_sim_body body, const void *args, ks_dim3 grid,
                                    ks_dim3 block, const char *path);
/* Writes the events in `sink` (a host sink: the simulator's, or a GPU sink downloaded with
 * ks_cuda_sink_download) as the trace of the launch <<<grid, block>>> on `device` ("sim"
 * or the GPU's name). The tensors' data must hold the launch's results (download them
 * first). */
KS_API ks_status ks_user_write_launch(const ks_user_trace *d, ks_dim3 grid, ks_dim3 block, const ks_sink *sink,
                                      const char *device, const char *path);

/* Deprecated, kept for one minor version (0.4; removed in 0.5; docs/your-own-kernel.md
 * lists them):
 * - ks_user_tensor (KernelScope 0.3): ks_user_add_tensor, but returning the tensor's
 *   number (the declaration's) or -1 on error instead of a ks_status.
 * - ks_user_run_sim and ks_user_write (KernelScope 0.2, 1-D only):
 *   ks_user_run_sim(d, body, args, threads, blocks, path) is ks_user_launch_sim(d, body,
 *   args, ks_dims(blocks, 1, 1), ks_dims(threads, 1, 1), path), and ks_user_write(d,
 *   threads, blocks, ...) is ks_user_write_launch(d, ks_dims(blocks, 1, 1),
 *   ks_dims(threads, 1, 1), ...). */
KS_DEPRECATED("use ks_user_add_tensor (returns a ks_status)")
KS_API int ks_user_tensor(ks_user_trace *d, const char *name, ks_dtype dtype, int ndim, const int64_t *shape,
                          void *data, int output);
KS_DEPRECATED("use ks_user_launch_sim (any launch shape)")
KS_API ks_status ks_user_run_sim(const ks_user_trace *d, ks_sim_body body, const void *args, int threads,
                                 int64_t blocks, const char *path);
KS_DEPRECATED("use ks_user_write_launch (any launch shape)")
KS_API ks_status ks_user_write(const ks_user_trace *d, int threads, int64_t blocks, const ks_sink *sink,
                               const char *device, const char *path);

#ifdef __cplusplus
}
#endif

#endif
