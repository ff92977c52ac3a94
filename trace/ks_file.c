#define _POSIX_C_SOURCE 200809L
#include "ks_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"

int ks_out_open(ks_out_file *o, const char *path)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) + 1 : 0;
    memset(o, 0, sizeof *o);
    o->f = NULL;
    if (strlen(path) + 16 >= sizeof o->tmp)
        return ks_fail(KS_EIO, "%s: path too long", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dir_len, path, path + dir_len);
    int fd = mkstemp(o->tmp);
    if (fd < 0) return ks_fail(KS_EIO, "%s: cannot create: %s", path, strerror(errno));
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        return ks_fail(KS_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    return KS_OK;
}

int ks_out_write(ks_out_file *o, const void *data, size_t n)
{
    if (n && fwrite(data, 1, n, o->f) != n)
        return ks_fail(KS_EIO, "%s: write failed: %s", o->path, strerror(errno));
    return KS_OK;
}

int ks_out_commit(ks_out_file *o)
{
    int bad = fflush(o->f) != 0 || fsync(fileno(o->f)) != 0;
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    if (bad || rename(o->tmp, o->path) != 0) {
        int err = errno;
        unlink(o->tmp);
        return ks_fail(KS_EIO, "%s: cannot write: %s", o->path, strerror(err));
    }
    return KS_OK;
}

void ks_out_abort(ks_out_file *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    unlink(o->tmp);
}
