/* kst.h - the KernelScope trace file (.kst): one launch's parameters, launch
 * configuration, site schema, tensors and events. Byte layout: docs/trace-format.md.
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

#ifdef __cplusplus
extern "C" {
#endif

#define KS_KST_MAGIC "KSTRACE\0"
#define KS_KST_VERSION 2 /* what ks_trace_write writes unless told 1; both are read */
#define KS_KST_PREAMBLE 24
#define KS_KST_ALIGN 64
#define KS_MAX_TENSORS 24

enum ks_tensor_role { KS_ROLE_INPUT = 0, KS_ROLE_OUTPUT = 1 };

typedef struct ks_section {
    uint64_t offset; /* from the start of the data area */
    uint64_t length;
    uint32_t crc32;
} ks_section;

typedef struct ks_trace {
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
} ks_trace;

int ks_trace_write(const char *path, const ks_trace *tr);
/* The same into an output the caller opened (trace/ks_file.h: ks_out_open) and finishes,
 * commits or aborts: a trace staged with other files that appear together or not at all. */
struct ks_out_file;
int ks_trace_put(struct ks_out_file *o, const ks_trace *tr);
/* Opens and validates the structure of a trace. On error nothing stays mapped. */
int ks_trace_open(const char *path, ks_trace *tr);
/* The header and (version 2) the chunk index only: tr->events is NULL and tr->nevents 0
 * until ks_trace_load_range decodes what a reader needs, so a look at one work item of a
 * huge trace reads only its chunks. A version 1 file opens as ks_trace_open does. */
int ks_trace_open_lazy(const char *path, ks_trace *tr);
/* Decodes the chunks whose work indices meet [lo, hi] (INT64_MIN, INT64_MAX: all), in file
 * order, into tr->events / tr->nevents (replacing what was loaded). A version 1 file keeps
 * all its events. */
int ks_trace_load_range(ks_trace *tr, int64_t lo, int64_t hi);
/* Chunk by chunk, for a reader that looks at every event once (info's counts): the number
 * of chunks (a version 1 file: 1, all its events), and chunks first .. first + count - 1
 * decoded into tr->events / tr->nevents. */
uint64_t ks_trace_chunks(const ks_trace *tr);
int ks_trace_load_chunks(ks_trace *tr, uint64_t first, uint64_t count);
/* Checks the header's and every section's CRC-32. */
int ks_trace_verify(const ks_trace *tr);
void ks_trace_close(ks_trace *tr);

/* 1 when an event's site, kind and tensor agree with the header (what every printer and
 * index needs before it looks an id up: a crafted file may hold any numbers), else 0. */
int ks_event_fits(const ks_trace *tr, const ks_event *e);

/* Index of the tensor called name, or -1. */
int ks_trace_tensor(const ks_trace *tr, const char *name);
const char *ks_event_kind_name(int kind); /* "work", "read", ... or "?" */
int ks_event_kind_parse(const char *s);   /* 0 when unknown */

#ifdef __cplusplus
}
#endif

#endif
