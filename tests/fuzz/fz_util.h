/* fz_util.h - shared by the libFuzzer targets: the input as a file (the readers take
 * paths), a scratch folder on tmpfs when there is one, and /dev/null as a stream. */
#ifndef KS_FZ_UTIL_H
#define KS_FZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fz_dir_path[256];

/* At exit (libFuzzer ends a timed run with exit()): the scratch folder goes. */
static inline void fz_dir_remove(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fz_dir_path);
    if (system(cmd) != 0) fprintf(stderr, "fuzz: could not remove %s\n", fz_dir_path);
}

/* A folder of this process's own (every fuzzing job its own), made once. */
static inline const char *fz_dir(void)
{
    char *dir = fz_dir_path;
    if (!dir[0]) {
        struct stat st;
        const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof fz_dir_path, "%s/ks_fuzz.%d", base, (int)getpid());
        mkdir(dir, 0700);
        atexit(fz_dir_remove);
    }
    return dir;
}

/* dir/name, in a static buffer (one of four, so a few can be held at once). */
static inline const char *fz_path(const char *name)
{
    static char path[4][320];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", fz_dir(), name);
    return path[k];
}

/* Writes the input to dir/name and returns the path. */
static inline const char *fz_file(const char *name, const uint8_t *data, size_t size)
{
    const char *path = fz_path(name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    return path;
}

/* The first `size` bytes of a .kst as the file dir/name, its header CRC fixed up first so
 * that mutations of the header's JSON reach the parser (section CRCs are left as they
 * are: every consumer must be safe on whatever verify says). Needs trace/crc32.h. */
#ifdef KS_CRC32_H
static inline const char *fz_kst_file(const char *name, const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    if (size >= 24) {
        const uint32_t hlen = (uint32_t)buf[12] | (uint32_t)buf[13] << 8 | (uint32_t)buf[14] << 16 |
                              (uint32_t)buf[15] << 24;
        if (hlen <= size - 24) {
            const uint32_t crc = ks_crc32(0, buf + 24, hlen);
            for (int i = 0; i < 4; ++i) buf[16 + i] = (uint8_t)(crc >> (8 * i));
        }
    }
    const char *path = fz_file(name, buf, size);
    free(buf);
    return path;
}
#endif

static inline FILE *fz_null(void)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w"))) abort();
    return null;
}

#endif
