/* ks_file.h - whole-file output that never leaves a half-written file: write to a
 * temporary file beside the target, then rename over it. */
#ifndef KS_FILE_H
#define KS_FILE_H

#include <stdio.h>

typedef struct ks_out_file {
    FILE *f;
    char path[4096];
    char tmp[4096];
} ks_out_file;

/* Opens DIR/.name.XXXXXX for writing. KS_EIO with the path on failure. */
int ks_out_open(ks_out_file *o, const char *path);
/* Flushes, closes and renames onto the target; on any error removes the temporary. */
int ks_out_commit(ks_out_file *o);
/* Closes and removes the temporary (after a failed write). */
void ks_out_abort(ks_out_file *o);
/* Writes n bytes, KS_EIO on a short write. */
int ks_out_write(ks_out_file *o, const void *data, size_t n);

#endif
