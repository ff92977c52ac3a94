/* ks_pages_int.h - the host's side of the GPU's record pages (ks_pages.h), inside
 * libkscope only (not installed, not exported). */
#ifndef KS_PAGES_INT_H
#define KS_PAGES_INT_H

#include <stddef.h>

#include "ks_pages.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The pages claimed ahead that no lane reached (they have no header), from the sink's
 * KS_PAGE_WARP_SLOTS slots (`slots`: the control words after counters[0..1], as the
 * launch left them): each slot that drew a column has one, the page its last group
 * claimed for the next. Writes their first words to `out` (room for KS_PAGE_WARP_SLOTS),
 * ascending; returns how many. */
size_t ks_pages_unreached(const unsigned long long *slots, unsigned long long *out);

/* The pages of a downloaded buffer, into which launches under `dev` (its capacity, epoch
 * and dims) claimed `claimed` words (counters[0]; `words` holds the stored part, the
 * first min(claimed, capacity * 16)), back into events appended to `host`, in page order;
 * the `nunreached` pages at the ascending words `unreached` (ks_pages_unreached) are
 * stepped over. Events past the host sink's limit are added to *trimmed. Returns
 * KS_EFORMAT, with the page named, on a damaged page (a bad header where a page was
 * stored, a record past its column, a kind or length out of range, a seq out of order). */
ks_status ks_pages_decode(const uint32_t *words, unsigned long long claimed, const ks_sink *dev,
                          const unsigned long long *unreached, size_t nunreached, ks_sink *host,
                          unsigned long long *trimmed);
#ifdef __cplusplus
}
#endif

#endif /* KS_PAGES_INT_H */
