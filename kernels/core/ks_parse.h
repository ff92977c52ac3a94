/* ks_parse.h - strict parsing of the numbers users type (flags, lesson parameters). */
#ifndef KS_PARSE_H
#define KS_PARSE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Strict integer parsing: the whole string, in range, else KS_EINVAL. */
int ks_parse_i64(const char *s, int64_t *out);
/* "3" -> {3, 3} (axes 2) or {3}; "3,2" -> {3, 2} (axes 2 only). */
int ks_parse_values(const char *s, int axes, int64_t out[2]);
/* "3", "3,2" or "4,3,2": up to `max` comma-separated integers into out[], their number
 * into *count (a single number is copied to every slot of out[0..max-1]). */
int ks_parse_list(const char *s, int max, int64_t *out, int *count);
/* "2.5" or "0.5,-1" (one number means both when axes == 2); finite numbers only. */
int ks_parse_doubles(const char *s, int axes, double out[2]);
/* "4G", "512M", "64K" or a plain number of bytes -> bytes (> 0). */
int ks_parse_bytes(const char *s, unsigned long long *out);

#ifdef __cplusplus
}
#endif

#endif
