/* ks_pages_int.h - the host's side of the GPU's record pages (ks_pages.h), inside
 * libkscope only (not installed, not exported). */
#ifndef KS_PAGES_INT_H
#define KS_PAGES_INT_H

#include "ks_pages.h"

/* The pages of a downloaded
 * buffer, into which launches under `dev` (its capacity, epoch and dims) claimed
 * `claimed` words (counters[0]; `words` holds the stored part, the first min(claimed,
 * capacity * 16)), back into events appended to `host`, in page order. Events past the
 * host sink's limit are added to *trimmed. Returns KS_EFORMAT, with the page named, on a
 * damaged page (a bad header where a page was stored, a record past its column, a kind or
 * length out of range, a seq out of order). */
#ifdef __cplusplus
extern "C" {
#endif
ks_status ks_pages_decode(const uint32_t *words, unsigned long long claimed, const ks_sink *dev, ks_sink *host,
                          unsigned long long *trimmed);
#ifdef __cplusplus
}
#endif

#endif /* KS_PAGES_INT_H */
