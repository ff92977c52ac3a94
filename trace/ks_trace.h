/* ks_trace.h - reading a KernelScope trace (.kst) (public; installed as
 * <kscope/ks_trace.h> and <kscope/trace/ks_trace.h>, included by <kscope/kscope.h>).
 *
 * A trace is an opaque handle, made by ks_trace_load (or ks_trace_load_lazy) and freed by
 * ks_trace_destroy; the functions below read what it holds. Strings, sites, tensors and
 * events it hands out stay valid until ks_trace_destroy (events: until the next
 * ks_trace_load_range / ks_trace_load_chunks). Byte layout: docs/trace-format.md.
 *
 *   ks_trace *tr;
 *   if (ks_trace_load("t.kst", &tr)) { puts(ks_error_message()); return 1; }
 *   const ks_event *ev = ks_trace_events(tr);
 *   for (uint64_t i = 0; i < ks_trace_event_count(tr); ++i)
 *       if (ev[i].kind == KS_EV_WRITE) ...;
 *   ks_trace_destroy(tr);
 *
 * Loading checks every length, offset, count and shape against the file (not the
 * checksums: ks_trace_verify reads every byte for them); errors read
 * "FILE: offset N: problem". */
#ifndef KS_TRACE_H
#define KS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/core/ks_api.h"
#include "../kernels/core/ks_core.h"
#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_event.h"
#include "../kernels/core/ks_schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_MAX_TENSORS 24

enum ks_tensor_role { KS_ROLE_INPUT = 0, KS_ROLE_OUTPUT = 1 };

/* One trace file, opened (opaque). */
typedef struct ks_trace ks_trace;

/* Opens the trace at `path`, checks its structure and decodes every event: KS_OK with *out
 * the handle, or KS_EIO / KS_EFORMAT / KS_ENOMEM (error set) with *out NULL. */
KS_API ks_status ks_trace_load(const char *path, ks_trace **out);
/* The same with the header and (format version 2) the chunk index only: no event is
 * loaded (ks_trace_event_count 0) until ks_trace_load_range or ks_trace_load_chunks
 * decodes what a reader needs, so a look at one work item of a huge trace reads only its
 * chunks. A version 1 file loads whole. */
KS_API ks_status ks_trace_load_lazy(const char *path, ks_trace **out);
/* Unmaps and frees it (NULL: nothing). */
KS_API void ks_trace_destroy(ks_trace *tr);
/* Checks the header's and every section's CRC-32: KS_OK or KS_EFORMAT. */
KS_API ks_status ks_trace_verify(const ks_trace *tr);
/* Decodes the chunks whose work indices meet [lo, hi] (INT64_MIN, INT64_MAX: all), in file
 * order, in place of the events loaded before. A version 1 file keeps all its events. */
KS_API ks_status ks_trace_load_range(ks_trace *tr, int64_t lo, int64_t hi);
/* Chunk by chunk, for a reader that looks at every event once: the number of chunks (a
 * version 1 file: 1, all its events), and chunks first .. first + count - 1 decoded in
 * place of the events loaded before. */
KS_API uint64_t ks_trace_chunks(const ks_trace *tr);
KS_API ks_status ks_trace_load_chunks(ks_trace *tr, uint64_t first, uint64_t count);

/* The launch: the op's name, the variant ("traced", "cuda-c", ...), the device ("sim" or
 * the GPU's name), the parameters as a JSON object, the work items, and the grid and block
 * (a 2-D or 3-D launch's from the params' "grid" and "block"; else 1-D: blocks x threads). */
KS_API const char *ks_trace_op(const ks_trace *tr);
KS_API const char *ks_trace_variant(const ks_trace *tr);
KS_API const char *ks_trace_device(const ks_trace *tr);
KS_API const char *ks_trace_params(const ks_trace *tr);
KS_API int64_t ks_trace_work_items(const ks_trace *tr);
KS_API void ks_trace_launch(const ks_trace *tr, ks_dim3 *grid, ks_dim3 *block);
/* Which work items were recorded. */
KS_API ks_filter ks_trace_filter(const ks_trace *tr);
/* The format version of the file (1 or 2). */
KS_API int ks_trace_format_version(const ks_trace *tr);

/* Sites (the events' `site`) and tensors (their `tensor`): counts, and entry i (NULL when
 * i is outside 0 .. count - 1). A tensor's data are the file's, mapped read-only. */
KS_API int ks_trace_site_count(const ks_trace *tr);
KS_API const ks_site *ks_trace_site(const ks_trace *tr, int i);
KS_API int ks_trace_tensor_count(const ks_trace *tr);
KS_API const ks_tensor *ks_trace_tensor_at(const ks_trace *tr, int i);
/* KS_ROLE_INPUT or KS_ROLE_OUTPUT, or -1 outside 0 .. count - 1. */
KS_API int ks_trace_tensor_role(const ks_trace *tr, int i);
/* The number of the tensor called name, or -1. */
KS_API int ks_trace_tensor(const ks_trace *tr, const char *name);

/* The events loaded (all of them after ks_trace_load), in file order; the events the file
 * holds; and the events the launch lost to a full sink. */
KS_API const ks_event *ks_trace_events(const ks_trace *tr);
KS_API uint64_t ks_trace_event_count(const ks_trace *tr);
KS_API uint64_t ks_trace_file_event_count(const ks_trace *tr);
KS_API uint64_t ks_trace_dropped(const ks_trace *tr);

/* 1 when an event's site, kind and tensor agree with the trace's header (what a reader
 * checks before it looks an id up: a crafted file may hold any numbers), else 0. */
KS_API int ks_event_fits(const ks_trace *tr, const ks_event *e);
KS_API const char *ks_event_kind_name(int kind); /* "work", "read", ... or "?" */
KS_API int ks_event_kind_parse(const char *s);   /* ks_event_kind, 0 when unknown */

#ifdef __cplusplus
}
#endif

#endif
