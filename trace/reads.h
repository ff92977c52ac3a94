/* reads.h - what each output element was computed from, in two traces of different kinds
 * (`kscope diff A B --reads-by NAME`): a recorded upstream kernel (kscope record, work
 * items are threads, every load an event) against one of KernelScope's operators (work
 * items are its own, a bilinear sample one event).
 *
 * Each trace becomes a list of (key, tensor, element) reads:
 *   - by an output tensor NAME: a work item's reads since its previous write of NAME belong
 *     to the element that write stores (a grid-stride thread's loop turns, a kernel that
 *     writes a column entry per tap, ...); reads after an item's last write of NAME
 *     belong to nothing and are counted as such;
 *   - by item (NAME NULL): a work item's reads belong to its index.
 * A sample event counts as the corners it reads (ks_memory_corner: its validity flags and
 * clamp rule), a padding read as nothing. Only tensors named in both traces are compared
 * (or those given), matched by name, with the same shape; element offsets are C order.
 * Values are not compared: the question is which elements, how often. */
#ifndef KS_READS_H
#define KS_READS_H

#include <stdint.h>
#include <stdio.h>

#include "kst.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_READS_FIRST 64 /* the most differing keys a comparison keeps */

typedef struct ks_read {
    int64_t key;  /* the output element (C-order offset), or the work item index */
    int64_t elem; /* the element read, C-order offset in its tensor */
    int32_t t;    /* index into ks_reads.names */
} ks_read;

typedef struct ks_reads {
    int ntensors;                            /* the tensors compared */
    char names[KS_MAX_TENSORS][KS_NAME_LEN]; /* their names */
    int id[2][KS_MAX_TENSORS];               /* their tensor ids in a and b */
    int by[2];                               /* the output tensor's id in a and b, -1 by item */
    ks_read *list[2];                        /* each side's reads, sorted (key, t, elem) */
    uint64_t n[2];                           /* reads attributed to a key */
    uint64_t unattributed[2];                /* reads after an item's last write of NAME */
    uint64_t keys[2], compared, differing, only[2];
    int nfirst;
    int64_t first[KS_READS_FIRST]; /* the first differing keys, ascending */
} ks_reads;

/* Compares a and b into r. by: the output tensor's name, or NULL to key by work item. of:
 * nof names of the tensors whose reads count (nof 0: every tensor named in both, except
 * `by`). KS_OK; KS_EINVAL with one line for a missing tensor, a shape that differs, or no
 * tensor to compare; KS_ENOMEM. */
int ks_reads_compare(ks_reads *r, const ks_trace *a, const ks_trace *b, const char *by, const char *const *of, int nof);
/* Prints key `key`'s difference: what each side reads, the elements one side reads more
 * often than the other (at most `max_elems` a side) with their counts. */
void ks_reads_print_key(FILE *out, const ks_reads *r, const ks_trace *a, const ks_trace *b, const char *na,
                        const char *nb, int64_t key, int max_elems);
void ks_reads_free(ks_reads *r);

#ifdef __cplusplus
}
#endif

#endif
