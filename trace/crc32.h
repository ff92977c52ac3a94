/* crc32.h - CRC-32 (IEEE 802.3, the zlib one) for .kst section checksums. */
#ifndef KS_CRC32_H
#define KS_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0. */
uint32_t ks_crc32(uint32_t crc, const void *data, size_t n);

#endif
