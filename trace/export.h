/* export.h - a trace as files numpy reads: DIR/header.json, DIR/<tensor>.npy and
 * DIR/events.npy (a structured array; layout in docs/trace-format.md). */
#ifndef KS_EXPORT_H
#define KS_EXPORT_H

#include "kst.h"

/* The numpy dtype of one row of events.npy. */
extern const char KS_EVENTS_DESCR[];
#define KS_EVENTS_ROW 111

/* Creates DIR if needed; each file appears whole or not at all. */
int ks_trace_export_npy(ks_trace *tr, const char *dir); /* a lazily opened trace: chunk by chunk */

#endif
