/* crc32.c - CRC-32 (IEEE 802.3, reflected, as zlib's crc32), eight bytes a step: table k
 * gives the CRC of a byte followed by k zero bytes, so eight lookups fold eight bytes at
 * once (the trace writer checksums every chunk and tensor it writes, on several threads). */
#include "crc32.h"

#include <pthread.h>

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[0][i] = c;
    }
    for (int k = 1; k < 8; ++k)
        for (int i = 0; i < 256; ++i) table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFF];
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t ks_crc32(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    pthread_once(&table_once, make_table);
    crc = ~crc;
    for (; n >= 8; n -= 8, p += 8) {
        const uint32_t lo = crc ^ le32(p), hi = le32(p + 4);
        crc = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
              table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^ table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
    }
    for (; n; --n, ++p) crc = table[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
    return ~crc;
}
