/* kst_codec.h - format 2's event records (docs/trace-format.md, "Format 2").
 *
 * Events are stored in chunks of KS_KST2_CHUNK records. Inside a chunk each record is a
 * one-byte head (kind and what follows), the site, and a kind-specific payload of
 * LEB128 varints and raw floats; the thread ids of a record repeat the previous record's
 * unless the head says otherwise, and are then deltas. Every chunk starts from a zero
 * record, so it decodes alone: the chunk index (ks_kst2_entry) gives random access.
 * Any record the compact forms cannot give back bit for bit is stored raw (64 bytes), so
 * every record of any file survives version 1 -> 2 -> 1 (kst_write.c orders them by item).
 */
#ifndef KS_KST_CODEC_H
#define KS_KST_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "kst.h"

#define KS_KST2_CHUNK 4096    /* events per chunk; the last chunk may hold fewer */
#define KS_KST2_MAX_RECORD 72 /* the most bytes one record takes (a raw record: 1 + 64) */
#define KS_KST2_ENTRY 32      /* bytes of one chunk index entry */
#define KS_KST2_MIN_RECORD 2  /* the fewest: head and site */

/* One chunk index entry, as stored (little-endian): where the chunk lies in the events
 * section, its CRC-32, and the range of work indices its records belong to. */
typedef struct ks_kst2_entry {
    uint64_t offset; /* from the start of the events section */
    uint32_t length, crc32;
    int64_t index_lo, index_hi; /* min and max `index` of its records */
    uint32_t raw;               /* the encoder's count of raw records (not stored) */
} ks_kst2_entry;

/* What the codec needs from the header: each site's tensor (a record names another one
 * only when it differs) and each tensor's last two dimensions (an in-bounds access stores
 * its offset only: plane, y and x follow from it). */
typedef struct ks_kst2_ctx {
    int nsites, ntensors;
    uint8_t site_tensor[KS_MAX_SITES];
    int64_t rows[KS_MAX_TENSORS], cols[KS_MAX_TENSORS]; /* shape[-2], shape[-1]; 0: none */
} ks_kst2_ctx;

void ks_kst2_ctx_make(const ks_trace *tr, ks_kst2_ctx *c);

/* Encodes n events as one chunk into out (room for n * KS_KST2_MAX_RECORD bytes);
 * returns the bytes written and fills the entry's length and index range. */
size_t ks_kst2_encode(const ks_kst2_ctx *c, const ks_event *ev, size_t n, unsigned char *out, ks_kst2_entry *entry);

/* Decodes one chunk of len bytes that must hold exactly n records into out. Returns 0,
 * or -1 with *bad set to the byte offset in the chunk where the data stopped making sense
 * and *why to what was wrong. */
int ks_kst2_decode(const ks_kst2_ctx *c, const unsigned char *p, size_t len, ks_event *out, size_t n, size_t *bad,
                   const char **why);

/* Chunks compressed with zstd (events encoding "kst2+zstd", kst_zstd.c): each chunk is
 * one zstd frame of its kst2 bytes, its index entry's length and CRC those of the frame.
 * ks_kst2_compress compresses len bytes into out (room for ks_kst2_compress_bound(len))
 * with *cctx (a context made at the first call; free it with ks_kst2_cctx_free); returns
 * the frame's bytes, 0 on failure. */
size_t ks_kst2_compress_bound(size_t len);
size_t ks_kst2_compress(void **cctx, const unsigned char *in, size_t len, unsigned char *out, size_t room);
void ks_kst2_cctx_free(void *cctx);

/* Decodes one chunk as the file stores it: with zstd, the frame is first decompressed
 * into scratch (room for n * KS_KST2_MAX_RECORD bytes; NULL: allocated here). The chunk
 * must be exactly one zstd frame that gives its size, at least 2 n and at most 72 n
 * bytes. Errors as ks_kst2_decode's; with zstd *bad_at is an offset in the inflated
 * bytes, or KS_KST2_FRAME_BAD when the frame itself is refused. */
#define KS_KST2_FRAME_BAD ((size_t)-1)
int ks_kst2_decode_stored(const ks_kst2_ctx *c, int zstd, const unsigned char *p, size_t len, unsigned char *scratch,
                          ks_event *out, size_t n, size_t *bad_at, const char **why);

/* Little-endian chunk index entries. */
void ks_kst2_entry_put(unsigned char *p, const ks_kst2_entry *e);
void ks_kst2_entry_get(const unsigned char *p, ks_kst2_entry *e);

#endif
