/* npy.h - NumPy .npy files (format 1.0 written; 1.0, 2.0 and 3.0 read). Written in C
 * order; a Fortran-order file is read and transposed into C order on load. */
#ifndef KS_NPY_H
#define KS_NPY_H

#include "../kernels/core/ks_schema.h"
#include "ks_file.h"

/* Writes t (f32/i32/i64) to path through a temporary file and rename. */
int ks_npy_write(const char *path, const ks_tensor *t);
/* Writes a 1-D array of `count` records with a structured dtype `descr` (a Python list
 * literal such as "[('a', '<i4'), ('b', '<f4')]"), each `itemsize` bytes, record i
 * produced by fill(ctx, i, record) (streamed, so the records never sit in memory). */
typedef void (*ks_npy_fill)(void *ctx, int64_t i, unsigned char *record);
int ks_npy_write_records(const char *path, const char *descr, int64_t count, size_t itemsize, ks_npy_fill fill,
                         void *ctx);
/* The same into an output the caller opened (ks_file.h) and commits or aborts: several
 * files that appear together or not at all (kscope export). */
int ks_npy_put(ks_out_file *o, const ks_tensor *t);
int ks_npy_put_records(ks_out_file *o, const char *descr, int64_t count, size_t itemsize, ks_npy_fill fill, void *ctx);
/* Reads a .npy of dtype <f4, <i4 or <i8 into t (allocated; free with ks_tensor_free);
 * t->name is left empty. KS_EFORMAT / KS_EIO with "path: offset N: problem". */
int ks_npy_read(const char *path, ks_tensor *t);

#endif
