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

static inline FILE *fz_null(void)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w"))) abort();
    return null;
}

#endif
