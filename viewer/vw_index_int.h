/* vw_index_int.h - the parts of the index build that live in their own files (not for
 * the index's users): the per-element aggregates (vw_index_agg.c) and the item orders
 * (vw_index_order.c). */
#ifndef VW_INDEX_INT_H
#define VW_INDEX_INT_H

#include "vw_index.h"

/* Adds event e to the aggregates (and the margin, outside and point-tap notes). */
int vw_agg_event(vw_index *idx, const ks_event *e);
/* The sectors-per-request aggregate; a failure leaves it out and the index stands. */
void vw_agg_sectors(vw_index *idx);
void vw_agg_free(vw_index *idx);

/* The thread-major and iteration-major orders of idx's sorted items. */
int vw_orders_build(vw_index *idx);

#endif
