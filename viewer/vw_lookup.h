/* vw_lookup.h - reverse lookup: which events touched one element of a tensor.
 * A scan of every event (about 50 ms per 10 million), done once per click. */
#ifndef VW_LOOKUP_H
#define VW_LOOKUP_H

#include "vw_index.h"

typedef struct vw_hit {
    uint32_t event;
    float weight; /* 1 for an integer read or a write; the corner's weight for a sample */
} vw_hit;

typedef struct vw_lookup {
    int tensor;
    int64_t plane, y, x;
    int writes;     /* 1: writes to the element; 0: reads and samples of it */
    vw_hit *hits;   /* in file order, at most VW_LOOKUP_MAX */
    uint64_t n;     /* hits kept */
    uint64_t total; /* hits found (more than n when capped) */
    uint64_t at;    /* the hit being shown */
} vw_lookup;

#define VW_LOOKUP_MAX 65536

/* Fills lk with the events that read (writes = 0: read events and sample corners with
 * a non-zero weight) or wrote (writes = 1) element (plane, y, x) of tensor `tensor`.
 * Frees what lk held before. Returns KS_OK or KS_ENOMEM. */
int vw_lookup_run(vw_lookup *lk, const ks_trace *tr, int tensor, int64_t plane, int64_t y, int64_t x, int writes);
void vw_lookup_free(vw_lookup *lk);

#endif
