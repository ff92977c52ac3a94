/* ls_find.c - where lessons live and how a name finds one. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ls_lesson.h"

#ifndef KS_LESSON_DIR
#define KS_LESSON_DIR "lessons"
#endif

const char *ls_dir(void)
{
    const char *env = getenv("KSCOPE_LESSONS");
    return env && *env ? env : KS_LESSON_DIR;
}

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

int ls_list(char paths[][4096], int max)
{
    DIR *d = opendir(ls_dir());
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".json") && e->d_name[0] != '.')
            snprintf(paths[n++], 4096, "%s/%s", ls_dir(), e->d_name);
    }
    closedir(d);
    qsort(paths, (size_t)n, 4096, by_name);
    return n;
}

/* "02-im2col.json" matches "02-im2col", "02", "2" and "im2col". */
static int matches(const char *file, const char *name)
{
    char stem[256];
    snprintf(stem, sizeof stem, "%s", file);
    char *dot = strstr(stem, ".json");
    if (dot) *dot = 0;
    if (!strcmp(stem, name)) return 1;
    char *dash = strchr(stem, '-');
    if (dash && !strcmp(dash + 1, name)) return 1;
    if (dash) *dash = 0;
    char *end;
    long want = strtol(name, &end, 10), have = strtol(stem, NULL, 10);
    return *name && !*end && dash && want == have;
}

int ls_find(const char *name, char *path, size_t n)
{
    struct stat st;
    if (strchr(name, '/') || (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".json"))) {
        snprintf(path, n, "%s", name);
        return stat(name, &st) == 0 ? 0 : -1;
    }
    static char paths[128][4096];
    int count = ls_list(paths, 128);
    for (int i = 0; i < count; ++i) {
        const char *base = strrchr(paths[i], '/') + 1;
        if (matches(base, name)) {
            snprintf(path, n, "%s", paths[i]);
            return 0;
        }
    }
    return -1;
}
