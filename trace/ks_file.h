/* ks_file.h - whole-file output that never leaves a half-written file, and input that
 * never blocks on a special file.
 *
 * Output: write to a temporary file beside the target, then rename over it. The target
 * must be a regular file or absent: a device, FIFO, socket or directory is refused
 * (KS_EIO, one line), never replaced. A symbolic link is followed: the file it points to
 * is written and the link stays (a dangling link is refused). New files get the mode
 * 0666 less the umask, like any file a shell creates. While a temporary exists it is
 * registered so that SIGINT, SIGTERM and SIGHUP remove it before the process dies
 * (SIGKILL cannot be caught: a `.NAME.XXXXXX` file may then stay beside the target). */
#ifndef KS_FILE_H
#define KS_FILE_H

#include <stdio.h>

typedef struct ks_out_file {
    FILE *f;
    char path[4096]; /* the target as given (for messages) */
    char dest[4096]; /* what gets replaced: the target, or the file a link points to */
    char tmp[4096];
    int slot; /* in the signal cleanup table, -1 when not registered */
} ks_out_file;

/* Checks the target, then opens DIR/.name.XXXXXX for writing. KS_EIO with the path on
 * failure (nothing is left behind). */
int ks_out_open(ks_out_file *o, const char *path);
/* Flushes, syncs (when ks_out_durable) and closes the temporary, keeping it: the first
 * half of a commit, for several files renamed together once all are written. On error
 * removes it. */
int ks_out_finish(ks_out_file *o);
/* 1 (the default): a file is synced to disk before it is renamed onto its target, and a
 * trace's writeback starts as it is written (kst_write.c), so a power loss leaves the old
 * file or the whole new one. 0: not synced; a crash of the process still leaves the old
 * file or the whole new one (the page cache keeps it), a power loss may cut the new one
 * short (readers refuse it). The recorder sets 0: it writes inside the user's program,
 * where an fsync a launch cost 5-20 ms (docs/record.md). */
extern int ks_out_durable;
/* Flushes, closes and renames onto the target; on any error removes the temporary. A
 * caller that wrote the temporary by name may fclose and clear `f` first. */
int ks_out_commit(ks_out_file *o);
/* Closes and removes the temporary (after a failed write). */
void ks_out_abort(ks_out_file *o);
/* Writes n bytes, KS_EIO on a short write. */
int ks_out_write(ks_out_file *o, const void *data, size_t n);
/* What ks_out_open checks, without creating anything: the target is a regular file or
 * absent (not a device, FIFO, socket, directory or dangling link) and its folder exists.
 * For commands that check their outputs before any work. KS_EIO with the same line
 * ks_out_open would give. */
int ks_out_check(const char *path);
/* The same for a folder outputs go in: it is a folder the user may write, or it does not
 * exist and its parent folder does (the command will make it). KS_EIO with
 * "DIR: cannot create directory: why". */
int ks_out_dir_check(const char *dir);
/* 1 when paths a and b name the same file: the same inode when both exist (links
 * followed, hard links too), else the same absolute path with links resolved as far as
 * the folders exist and '.' and '..' applied to the rest; 0 otherwise. So an output that
 * would replace an input, or another output, is refused before anything is written. */
int ks_same_path(const char *a, const char *b);

/* Opens path for reading only when it is a regular file (checked on the open
 * descriptor, opened without blocking, so a FIFO is refused instead of waited on).
 * Returns a descriptor, or -1 with ks_error_message() set ("PATH: cannot open: ..." or
 * "PATH: not a regular file"). */
int ks_in_open(const char *path);
/* The same as a stdio stream ("rb"), or NULL. */
FILE *ks_in_fopen(const char *path);

#endif
