/* kst.h - the KernelScope trace file (.kst), inside KernelScope (not installed: the SDK's
 * reading API is ks_trace.h, whose opaque ks_trace this header defines). One launch's
 * parameters, launch configuration, site schema, tensors and events. Byte layout:
 * docs/trace-format.md.
 *
 * Writing: fill a ks_trace (pointers to your tensors and events) and call
 * ks_trace_write; the file appears whole or not at all (temporary file + rename).
 * Reading: ks_trace_open maps the file and checks every length, offset, count and shape
 * against it (not the checksums: ks_trace_verify does that, it reads every byte), so a
 * huge trace opens at once. Errors read "FILE: offset N: problem".
 */
#ifndef KS_KST_H
#define KS_KST_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/core/ks_event.h"
#include "../kernels/core/ks_schema.h"
#include "ks_trace.h" /* the public half: ks_trace (opaque there), KS_MAX_TENSORS, roles */

#ifdef __cplusplus
extern "C" {
#endif

#define KS_KST_MAGIC "KSTRACE\0"
#define KS_KST_VERSION 2 /* what ks_trace_write writes unless told 1; both are read */
#define KS_KST_PREAMBLE 24
#define KS_KST_ALIGN 64

typedef struct ks_section {
    uint64_t offset; /* from the start of the data area */
    uint64_t length;
    uint32_t crc32;
} ks_section;

struct ks_trace {
    char op[KS_NAME_LEN];
    char variant[16];  /* "traced" */
    char device[128];  /* "sim" or the GPU's name */
    char params[1024]; /* the operator's parameters as a JSON object */
    int threads;       /* per block */
    int64_t blocks, block_cap, work_items;
    ks_filter filter;
    int nsites;
    ks_site sites[KS_MAX_SITES];
    int ntensors;
    ks_tensor tensors[KS_MAX_TENSORS]; /* data: caller's (writer) or mapped (reader) */
    int roles[KS_MAX_TENSORS];
    const ks_event *events;
    uint64_t nevents, dropped;
    /* writing: the format version to write, 0 for KS_KST_VERSION; reading: the file's */
    int version;
    /* version 2: chunks compressed with zstd (events encoding "kst2+zstd"): writing, asked
     * for; reading, the file's */
    int zstd;
    /* filled by ks_trace_open */
    char path[4096];
    void *map;
    size_t map_size;
    uint64_t data_start;
    ks_section tensor_sec[KS_MAX_TENSORS], event_sec;
    /* version 2: the chunk index section, events per chunk, and the decoded events
     * (`events` points here; version 1 maps its records instead) */
    ks_section index_sec;
    uint64_t chunk_events;
    ks_event *decoded;
    uint64_t file_events; /* the file's count (nevents counts those loaded) */
};

int ks_trace_write(const char *path, const ks_trace *tr);
/* The last ks_trace_write's milliseconds on this thread: ordering the events, encoding
 * them (version 2: the file written meanwhile), writing the rest (version 2: the index and
 * the header; version 1: the file), committing it (flush, fsync, rename), and of the
 * encoding, the time spent handing the chunks to the file. */
#ifndef __cplusplus
extern _Thread_local double ks_kst_write_ms[5];
#endif
/* Events made on demand (a recorded launch's, from its records) instead of held in
 * tr->events: open a cursor at event `first` (a multiple of the chunk size), take the
 * next n events (made into buf, or a pointer to where they lie; NULL: failed), close.
 * `reuse` is the calling thread's cursor from its last run of chunks (NULL the first
 * time), which lies before `first`: the source may move it forward instead of making a
 * new one (cheaper where a new one would replay a long thread), else it closes it.
 * Cursors at different places run on different threads at once. */
typedef struct ks_event_source {
    void *ctx;
    void *(*open)(void *ctx, uint64_t first, void *reuse);
    const ks_event *(*next)(void *cursor, ks_event *buf, size_t n);
    void (*close)(void *cursor);
} ks_event_source;
/* ks_trace_write of tr->nevents events, in (index, seq) order, taken from src (format 2):
 * the events are made chunk by chunk as they are encoded and written, never all in
 * memory (the chunks encoded ahead of the file are bounded). */
int ks_trace_write_source(const char *path, const ks_trace *tr, const ks_event_source *src);
/* The threads that encode (0, the default: the machine's CPUs, at most 16). */
extern int ks_kst_write_threads;
/* The same into an output the caller opened (trace/ks_file.h: ks_out_open) and finishes,
 * commits or aborts: a trace staged with other files that appear together or not at all. */
struct ks_out_file;
int ks_trace_put(struct ks_out_file *o, const ks_trace *tr);
/* Opens and validates the structure of a trace into tr (the caller's). On error nothing
 * stays mapped. ks_trace_load (ks_trace.h) is this on a handle. */
int ks_trace_open(const char *path, ks_trace *tr);
/* The header and (version 2) the chunk index only: tr->events is NULL and tr->nevents 0
 * until ks_trace_load_range decodes what a reader needs (ks_trace.h). A version 1 file
 * opens as ks_trace_open does. */
int ks_trace_open_lazy(const char *path, ks_trace *tr);
void ks_trace_close(ks_trace *tr);
/* ks_trace.h also declares, on the same struct: ks_trace_verify, ks_trace_load_range,
 * ks_trace_chunks, ks_trace_load_chunks, ks_event_fits, ks_trace_tensor,
 * ks_event_kind_name, ks_event_kind_parse. */

#ifdef __cplusplus
}
#endif

#endif
