/* vw_index_int.h - the parts of the index build that live in their own files (not for
 * the index's users): the per-element aggregates (vw_index_agg.c) and the item orders
 * (vw_index_order.c). */
#ifndef VW_INDEX_INT_H
#define VW_INDEX_INT_H

#include "vw_index.h"

/* Chunk k of a lazily opened trace into out (room for tr->chunk_events), its event count
 * in *n. Returns 0, or -1 with ks_error_message() saying where it failed. */
int vw_decode_chunk(const ks_trace *tr, uint64_t k, ks_event *out, size_t *n);

/* The index pass's chunks 0, 1, ... decoded ahead on other threads (vw_index_decode.c).
 * vw_decoder_start returns NULL where no thread is wanted (one core, a small trace, not
 * a lazily opened one): the pass then decodes itself. vw_decoder_next waits for chunk k
 * (k counting up from 0) and gives its events (NULL when it does not decode, with
 * ks_error_message() set), valid until vw_decoder_done(k). Where vw_decoder_aggregates
 * says so, a thread of its own sums every event into idx's aggregates (the pass must
 * not). vw_decoder_stop(d, 1) after the last chunk waits for that sum and returns its
 * error, if any; vw_decoder_stop(d, 0) after a failure stops everything. Both take NULL. */
typedef struct vw_decoder vw_decoder;
vw_decoder *vw_decoder_start(const ks_trace *tr, uint64_t nchunks, vw_index *idx);
const ks_event *vw_decoder_next(vw_decoder *d, uint64_t k, size_t *m);
void vw_decoder_done(vw_decoder *d, uint64_t k);
int vw_decoder_aggregates(const vw_decoder *d);
int vw_decoder_stop(vw_decoder *d, int finish);

/* Adds event e to the aggregates (and the margin, outside and point-tap notes). */
int vw_agg_event(vw_index *idx, const ks_event *e);
/* The sectors-per-request aggregate; a failure leaves it out and the index stands. */
void vw_agg_sectors(vw_index *idx);
void vw_agg_free(vw_index *idx);

/* The thread-major and iteration-major orders of idx's sorted items. */
int vw_orders_build(vw_index *idx);

#endif
