#define _XOPEN_SOURCE 700
#include "ks_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"

/* --- temporaries removed on SIGINT / SIGTERM / SIGHUP / SIGPIPE; SIGXFSZ ignored, so a
 * write past `ulimit -f` fails with EFBIG like a full disk: one line, the temporary gone --- */

#define KS_TMP_SLOTS 32
static char g_tmp[KS_TMP_SLOTS][4096];
static volatile sig_atomic_t g_live[KS_TMP_SLOTS];
static const int g_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

static void remove_temporaries(int sig)
{
    for (int i = 0; i < KS_TMP_SLOTS; ++i)
        if (g_live[i]) unlink(g_tmp[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig); /* die of the signal, as without the handler */
}

/* Installs the handler once, only where the signal still has its default action (a
 * program with its own handler, like SDL's quit event, keeps it and cleans up through
 * ks_out_abort). */
static void install_handlers(void)
{
    static int done;
    if (done) return;
    done = 1;
    for (size_t i = 0; i < sizeof g_signals / sizeof g_signals[0]; ++i) {
        struct sigaction old, sa;
        if (sigaction(g_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_temporaries;
        sigemptyset(&sa.sa_mask);
        sigaction(g_signals[i], &sa, NULL);
    }
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGXFSZ, SIG_IGN);
}

static int register_tmp(const char *tmp)
{
    install_handlers();
    for (int i = 0; i < KS_TMP_SLOTS; ++i)
        if (!g_live[i]) {
            snprintf(g_tmp[i], sizeof g_tmp[i], "%s", tmp);
            g_live[i] = 1;
            return i;
        }
    return -1; /* more than 32 at once: still written, not cleaned up on a signal */
}

static void unregister_tmp(ks_out_file *o)
{
    if (o->slot >= 0) g_live[o->slot] = 0;
    o->slot = -1;
}

/* 0666 less the umask (read once: umask() both sets and returns it). */
static mode_t create_mode(void)
{
    static mode_t mode;
    static int known;
    if (!known) {
        mode_t mask = umask(077);
        umask(mask);
        mode = 0666 & ~mask;
        known = 1;
    }
    return mode;
}

/* Where the output goes: the target itself, or the regular file a link points to. */
static int resolve_target(const char *path, char *dest, size_t n)
{
    struct stat st;
    snprintf(dest, n, "%s", path);
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return KS_OK; /* a new file */
        return ks_fail(KS_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        char real[PATH_MAX];
        if (!realpath(path, real) || stat(real, &st) != 0)
            return ks_fail(KS_EIO, "%s: a symbolic link to a missing file; refusing to replace the link", path);
        if (strlen(real) >= n) return ks_fail(KS_EIO, "%s: path too long", path);
        snprintf(dest, n, "%s", real);
    }
    if (S_ISDIR(st.st_mode)) return ks_fail(KS_EIO, "%s: is a directory", path);
    if (!S_ISREG(st.st_mode))
        return ks_fail(KS_EIO, "%s: not a regular file (a device, FIFO or socket); refusing to replace it", path);
    return KS_OK;
}

int ks_out_check(const char *path)
{
    char dest[4096], dir[4096];
    if (strlen(path) + 16 >= sizeof dest) return ks_fail(KS_EIO, "%s: path too long", path);
    int rc = resolve_target(path, dest, sizeof dest);
    if (rc) return rc;
    const char *slash = strrchr(dest, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dest) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - dest), dest);
    struct stat st;
    if (stat(dir, &st) != 0) return ks_fail(KS_EIO, "%s: cannot create: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return ks_fail(KS_EIO, "%s: cannot create: %s", path, strerror(ENOTDIR));
    if (access(dir, W_OK | X_OK) != 0) return ks_fail(KS_EIO, "%s: cannot create: %s", path, strerror(errno));
    return KS_OK;
}

int ks_out_dir_check(const char *dir)
{
    struct stat st;
    char parent[4096];
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(ENOTDIR));
        if (access(dir, W_OK | X_OK) != 0) return ks_fail(KS_EIO, "%s: cannot write in it: %s", dir, strerror(errno));
        return KS_OK;
    }
    if (errno != ENOENT) return ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') --len;
    while (len > 0 && dir[len - 1] != '/') --len;
    if (len >= sizeof parent) return ks_fail(KS_EIO, "%s: path too long", dir);
    if (len) snprintf(parent, sizeof parent, "%.*s", (int)len, dir);
    else snprintf(parent, sizeof parent, ".");
    const int bad = stat(parent, &st) != 0             ? errno
                    : !S_ISDIR(st.st_mode)             ? ENOTDIR
                    : access(parent, W_OK | X_OK) != 0 ? errno
                                                       : 0;
    if (bad) return ks_fail(KS_EIO, "%s: cannot create directory: %s", dir, strerror(bad));
    return KS_OK;
}

/* The absolute path of `path`: realpath() of its longest existing prefix, then the
 * remaining components applied as text ('.' dropped, '..' removing one). -1 if too long. */
static int canonical(const char *path, char *out, size_t n)
{
    char head[PATH_MAX], real[PATH_MAX];
    size_t rest;
    if (strlen(path) >= sizeof head) return -1;
    snprintf(head, sizeof head, "%s", path);
    rest = strlen(head);
    while (!realpath(head[0] ? head : ".", real)) {
        char *slash = strrchr(head, '/');
        if (!slash) {
            head[0] = '\0', rest = 0;
        } else if (slash == head) {
            if (!head[1]) return -1; /* "/" itself: cannot happen */
            head[1] = '\0', rest = 1;
        } else {
            *slash = '\0', rest = (size_t)(slash - head);
        }
    }
    if (strlen(real) >= n) return -1;
    snprintf(out, n, "%s", real);
    for (const char *p = path + rest; *p;) {
        while (*p == '/') ++p;
        const size_t len = strcspn(p, "/");
        if (!len) break;
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            char *s = strrchr(out, '/');
            if (s && s != out) *s = '\0';
            else snprintf(out, n, "/");
        } else if (!(len == 1 && p[0] == '.')) {
            size_t l = strlen(out);
            if (l + len + 2 > n) return -1;
            if (out[l - 1] != '/') out[l++] = '/';
            memcpy(out + l, p, len);
            out[l + len] = '\0';
        }
        p += len;
    }
    return 0;
}

int ks_same_path(const char *a, const char *b)
{
    struct stat sa, sb;
    const int ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
    if (ha && hb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ha || hb) return 0; /* one exists and the other does not */
    char ca[PATH_MAX], cb[PATH_MAX];
    return canonical(a, ca, sizeof ca) == 0 && canonical(b, cb, sizeof cb) == 0 && !strcmp(ca, cb);
}

int ks_out_open(ks_out_file *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->f = NULL;
    o->slot = -1;
    if (strlen(path) + 16 >= sizeof o->tmp) return ks_fail(KS_EIO, "%s: path too long", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    int rc = resolve_target(path, o->dest, sizeof o->dest);
    if (rc) return rc;
    if (strlen(o->dest) + 16 >= sizeof o->tmp) return ks_fail(KS_EIO, "%s: path too long", path);
    const char *slash = strrchr(o->dest, '/');
    int dir_len = slash ? (int)(slash - o->dest) + 1 : 0;
    snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dir_len, o->dest, o->dest + dir_len);
    /* block the signals while the temporary is created and registered, so it is never
     * left behind unregistered */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof g_signals / sizeof g_signals[0]; ++i) sigaddset(&block, g_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    int fd = mkstemp(o->tmp);
    int err = errno;
    if (fd >= 0) o->slot = register_tmp(o->tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) return ks_fail(KS_EIO, "%s: cannot create: %s", path, strerror(err));
    if (fchmod(fd, create_mode()) != 0 || !(o->f = fdopen(fd, "wb"))) {
        err = errno;
        close(fd);
        unlink(o->tmp);
        unregister_tmp(o);
        return ks_fail(KS_EIO, "%s: cannot open: %s", path, strerror(err));
    }
    return KS_OK;
}

int ks_out_write(ks_out_file *o, const void *data, size_t n)
{
    if (n && fwrite(data, 1, n, o->f) != n) return ks_fail(KS_EIO, "%s: write failed: %s", o->path, strerror(errno));
    return KS_OK;
}

int ks_out_durable = 1;

int ks_out_finish(ks_out_file *o)
{
    int bad = 0, err = 0;
    if (!o->f) return KS_OK;
    bad = fflush(o->f) != 0 || (ks_out_durable && fsync(fileno(o->f)) != 0);
    if (bad) err = errno;
    if (fclose(o->f) != 0 && !bad) bad = 1, err = errno;
    o->f = NULL;
    if (!bad) return KS_OK;
    unlink(o->tmp);
    unregister_tmp(o);
    return ks_fail(KS_EIO, "%s: cannot write: %s", o->path, strerror(err));
}

int ks_out_commit(ks_out_file *o)
{
    int rc = ks_out_finish(o);
    if (rc) return rc;
    int bad = rename(o->tmp, o->dest) != 0, err = errno;
    if (bad) unlink(o->tmp);
    unregister_tmp(o);
    if (bad) return ks_fail(KS_EIO, "%s: cannot write: %s", o->path, strerror(err));
    return KS_OK;
}

void ks_out_abort(ks_out_file *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
    unregister_tmp(o);
}

int ks_in_open(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        ks_fail(KS_EIO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        ks_fail(KS_EIO, "%s: not a regular file", path);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

FILE *ks_in_fopen(const char *path)
{
    int fd = ks_in_open(path);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        ks_fail(KS_EIO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
