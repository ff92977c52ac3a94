/* kst_zstd.c - format 2 chunks compressed with zstd (kst_codec.h, docs/trace-format.md).
 *
 * A chunk's kst2 bytes (about 11-13 bytes an event) still repeat themselves: the same
 * sites, kinds and small deltas. zstd at level 1 makes the recorder's traces 3-4x
 * smaller, which pays where writing the file is what a trace waits for (one thread hands
 * chunks to the page cache); reading a chunk then costs its decompression. */
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>

#include "kst_codec.h"

size_t ks_kst2_compress_bound(size_t len) { return ZSTD_compressBound(len); }

size_t ks_kst2_compress(void **cctx, const unsigned char *in, size_t len, unsigned char *out, size_t room)
{
    if (!*cctx && !(*cctx = ZSTD_createCCtx())) return 0;
    const size_t got = ZSTD_compressCCtx(*cctx, out, room, in, len, 1);
    return ZSTD_isError(got) ? 0 : got;
}

void ks_kst2_cctx_free(void *cctx) { ZSTD_freeCCtx(cctx); }

int ks_kst2_decode_stored(const ks_kst2_ctx *c, int zstd, const unsigned char *p, size_t len, unsigned char *scratch,
                          ks_event *out, size_t n, size_t *bad_at, const char **why)
{
    if (!zstd) return ks_kst2_decode(c, p, len, out, n, bad_at, why);
    *bad_at = KS_KST2_FRAME_BAD;
    /* one standard frame, all of the chunk (no skippable, legacy or second frame) */
    const size_t whole = len >= 4 ? ZSTD_findFrameCompressedSize(p, len) : 0;
    if (len < 4 || (p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) != ZSTD_MAGICNUMBER || ZSTD_isError(whole) ||
        whole != len) {
        *why = len >= 4 && ZSTD_isError(whole) ? ZSTD_getErrorName(whole) : "not one zstd frame";
        return -1;
    }
    /* the frame must say its size, and no more than n records can take */
    const unsigned long long size = ZSTD_getFrameContentSize(p, len);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
        *why = "a zstd frame that does not give its size";
        return -1;
    }
    if (size > (unsigned long long)n * KS_KST2_MAX_RECORD || size < (unsigned long long)n * KS_KST2_MIN_RECORD) {
        *why = "a zstd frame whose size does not fit its records";
        return -1;
    }
    unsigned char *buf = scratch ? scratch : malloc(size ? (size_t)size : 1);
    if (!buf) {
        *why = "out of memory for a zstd frame";
        return -1;
    }
    const size_t got = ZSTD_decompress(buf, (size_t)size, p, len);
    int rc = -1;
    if (ZSTD_isError(got)) *why = ZSTD_getErrorName(got);
    else if (got != size) *why = "a zstd frame that inflates to another size than it gives";
    else rc = ks_kst2_decode(c, buf, got, out, n, bad_at, why);
    if (!scratch) free(buf);
    return rc;
}
