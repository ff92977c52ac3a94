/* cu_gpu.c - kscope run FILE.cu --device cuda (cu_gpu.h). */
#define _GNU_SOURCE
#include "cu_gpu.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/ks_error.h"

/* what the child tells the parent, at the start of the shared mapping; the buffers'
 * contents follow it */
typedef struct gpu_ctl {
    char error[600]; /* a setup error (exit 2) or the GPU's fault (exit 3) */
    uint64_t offset[KS_CU_MAX_BUFS];
} gpu_ctl;

static struct {
    char dir[PATH_MAX];
    unsigned char *map;
    size_t map_size;
} g;

void ks_cu_gpu_free(void)
{
    if (g.map) munmap(g.map, g.map_size);
    g.map = NULL;
    if (g.dir[0]) {
        const pid_t p = fork();
        if (p == 0) {
            execlp("rm", "rm", "-rf", "--", g.dir, (char *)NULL);
            _exit(127);
        }
        if (p > 0) waitpid(p, NULL, 0);
        g.dir[0] = 0;
    }
}

/* the launcher: the user's file, the parameter-type code the simulator's entry uses, and
 * cudaLaunchKernel / cudaMalloc / cudaMemcpy behind C names */
static const char *const k_launcher =
    "#include <cstddef>\n#include <type_traits>\n#include <utility>\n#include <cuda_runtime.h>\n"
    "#include \"%s\"\n" KS_CU_ENTRY_TYPES "static constexpr auto ks_cu_the_kernel = &%s;\n"
    "using ks_cu_sig_t = ks_cu_entry_ns::sig<typename std::remove_const<decltype(ks_cu_the_kernel)>::type>;\n"
    "extern \"C\" const int ks_cu_nparams = ks_cu_sig_t::n;\n"
    "extern \"C\" const unsigned char *const ks_cu_param_types = ks_cu_sig_t::types;\n"
    "static const char *ks_err(cudaError_t e) { return e == cudaSuccess ? nullptr : cudaGetErrorString(e); }\n"
    "extern \"C\" const char *ks_gpu_launch(void **a, const unsigned *g, const unsigned *b, unsigned shared) {\n"
    "  cudaError_t e = cudaLaunchKernel((const void *)ks_cu_the_kernel, dim3(g[0], g[1], g[2]),\n"
    "                                   dim3(b[0], b[1], b[2]), a, shared, 0);\n"
    "  if (e == cudaSuccess) e = cudaDeviceSynchronize();\n"
    "  return ks_err(e);\n}\n"
    "extern \"C\" const char *ks_gpu_init(void) { return ks_err(cudaFree(0)); }\n"
    "extern \"C\" const char *ks_gpu_alloc(void **p, size_t n) { return ks_err(cudaMalloc(p, n)); }\n"
    "extern \"C\" const char *ks_gpu_copy(void *d, const void *s, size_t n, int to_device) {\n"
    "  return ks_err(cudaMemcpy(d, s, n, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));\n}\n";

/* runs argv, its output into log; 0 when it exits 0 */
static int run_tool(char *const argv[], const char *log)
{
    const pid_t p = fork();
    if (p < 0) return -1;
    if (p == 0) {
        const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(p, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* the last error lines of a compiler log, for the one-line message */
static void log_tail(const char *log, char *out, size_t n)
{
    out[0] = 0;
    FILE *f = fopen(log, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strstr(line, "error")) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, n, "%.*s", (int)(n > 1 ? n - 1 : 0), line);
            break;
        }
    fclose(f);
}

static const int cu_of_dtype[KS_DTYPES] = {
    [KS_F32] = KS_CU_F32, [KS_F64] = KS_CU_F64, [KS_I8] = KS_CU_I8,   [KS_U8] = KS_CU_U8,   [KS_I16] = KS_CU_I16,
    [KS_U16] = KS_CU_U16, [KS_I32] = KS_CU_I32, [KS_U32] = KS_CU_U32, [KS_I64] = KS_CU_I64, [KS_U64] = KS_CU_U64};

typedef const char *(*launch_fn)(void **, const unsigned *, const unsigned *, unsigned);
typedef const char *(*alloc_fn)(void **, size_t);
typedef const char *(*copy_fn)(void *, const void *, size_t, int);
typedef int (*name_fn)(const void *, uint64_t, const char *, const char *, int, const int64_t *);

/* the child: load the launcher (CUDA starts here, with the recorder), make and name the
 * buffers, bind the parameters, launch, copy the buffers back. Exit 0, 2 (setup) or 3
 * (the GPU faulted). */
static void child(ks_cu_exec *e, const ks_cu_gpu_opts *o, const char *so, const char *recdir, const char *status)
{
    gpu_ctl *c = (gpu_ctl *)g.map;
    o->child_env(o->env_ctx, recdir, status);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(c->error, sizeof c->error, "cannot load the compiled kernel: %s", dlerror());
        _exit(2);
    }
    launch_fn launch = (launch_fn)dlsym(h, "ks_gpu_launch");
    alloc_fn alloc = (alloc_fn)dlsym(h, "ks_gpu_alloc");
    copy_fn copy = (copy_fn)dlsym(h, "ks_gpu_copy");
    const int *np = dlsym(h, "ks_cu_nparams");
    const uint8_t *const *tp = dlsym(h, "ks_cu_param_types");
    if (!launch || !alloc || !copy || !np || !tp) {
        snprintf(c->error, sizeof c->error, "the compiled kernel lacks its launcher");
        _exit(2);
    }
    /* CUDA starts here, and the driver loads the recorder, whose naming call we need */
    const char *(*init)(void) = (const char *(*)(void))dlsym(h, "ks_gpu_init");
    const char *err = init ? init() : "the compiled kernel lacks its launcher";
    if (err) {
        snprintf(c->error, sizeof c->error, "the GPU: %s", err);
        _exit(2);
    }
    const char *lib = getenv("KS_RECORD_LIB");
    void *rh = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    name_fn nm = rh ? (name_fn)dlsym(rh, "kscope_record_name") : NULL;
    if (!nm) {
        snprintf(c->error, sizeof c->error, "the recorder did not load into the GPU run (%s)",
                 lib ? lib : "no library");
        _exit(2);
    }
    const ks_cu_kernel *k = &e->build.kernel;
    if (*np != k->nparams) {
        snprintf(c->error, sizeof c->error, "the kernel takes %d parameters, its declaration names %d", *np,
                 k->nparams);
        _exit(2);
    }
    void *args[KS_CU_MAX_PARAMS], *dev[KS_CU_MAX_BUFS] = {0};
    uint64_t store[KS_CU_MAX_PARAMS];
    for (int p = 0; p < k->nparams; ++p) {
        const char *name = k->params[p];
        const int t = (*tp)[p];
        args[p] = &store[p];
        int b = -1, nidx = -1;
        for (int i = 0; i < e->nbufs; ++i)
            if (!strcmp(e->bufs[i].param, name)) b = i;
        for (int i = 0; i < e->nnums; ++i)
            if (!strcmp(e->nums[i].param, name)) nidx = i;
        if (t & KS_CU_PTR) {
            if (b < 0) {
                snprintf(c->error, sizeof c->error, "--arg %s: '%s' is a pointer: give a buffer", name, name);
                _exit(2);
            }
            const ks_tensor *ts = &e->bufs[b].t;
            const int want = t & ~KS_CU_PTR, have = cu_of_dtype[ts->dtype];
            if (want != KS_CU_OPAQUE && want != have && !(want == KS_CU_BOOL && have == KS_CU_U8)) {
                snprintf(c->error, sizeof c->error, "--arg %s: the buffer's dtype %s is not what '%s' points to", name,
                         ks_dtype_name(ts->dtype), name);
                _exit(2);
            }
            const size_t bytes = (size_t)ks_tensor_numel(ts) * ks_dtype_size(ts->dtype);
            unsigned char *host = g.map + c->offset[b];
            if (ts->data) memcpy(host, ts->data, bytes);
            if ((err = alloc(&dev[b], bytes ? bytes : 1)) || (err = copy(dev[b], host, bytes, 1))) {
                snprintf(c->error, sizeof c->error, "--arg %s: %s", name, err);
                _exit(2);
            }
            if (bytes) nm(dev[b], bytes, name, ks_dtype_name(ts->dtype), ts->ndim, ts->shape);
            store[p] = (uint64_t)(uintptr_t)dev[b];
        } else {
            if (nidx < 0) {
                snprintf(c->error, sizeof c->error, "--arg %s: '%s' is a scalar: give a number, not a buffer", name,
                         name);
                _exit(2);
            }
            if (t == KS_CU_BAD || t == KS_CU_OPAQUE) {
                snprintf(c->error, sizeof c->error, "parameter '%s' has a type kscope cannot give", name);
                _exit(2);
            }
            const ks_cu_number *v = &e->nums[nidx];
            if (ks_cu_scalar_bind(name, t, v->f, v->i, v->isint, &store[p], c->error, sizeof c->error)) _exit(2);
        }
    }
    if ((err = launch(args, e->grid, e->block, e->shared_bytes))) {
        snprintf(c->error, sizeof c->error, "the GPU stopped the kernel: %s", err);
        _exit(3);
    }
    for (int b = 0; b < e->nbufs; ++b) {
        const ks_tensor *ts = &e->bufs[b].t;
        const size_t bytes = (size_t)ks_tensor_numel(ts) * ks_dtype_size(ts->dtype);
        if (bytes && (err = copy(g.map + c->offset[b], dev[b], bytes, 0))) {
            snprintf(c->error, sizeof c->error, "reading %s back: %s", e->bufs[b].param, err);
            _exit(3);
        }
    }
    fflush(NULL);
    _exit(0);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the one trace the recorder wrote in dir */
static int find_trace(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int found = 0;
    for (struct dirent *x; (x = readdir(d));) {
        const size_t len = strlen(x->d_name);
        if (len > 4 && !strcmp(x->d_name + len - 4, ".kst") && !found) {
            snprintf(out, n, "%s/%s", dir, x->d_name);
            found = 1;
        }
    }
    closedir(d);
    return found ? 0 : -1;
}

int ks_cu_gpu_run(ks_cu_exec *e, const ks_cu_build_opts *bo, const ks_cu_gpu_opts *o, ks_trace *tr, char *fault,
                  size_t nfault)
{
    fault[0] = 0;
    memset(tr, 0, sizeof *tr);
    snprintf(g.dir, sizeof g.dir, "%s/kscope-gpu-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g.dir)) {
        g.dir[0] = 0;
        return ks_fail(KS_EIO, "cannot make a temporary folder: %s", strerror(errno));
    }
    char src[PATH_MAX + 32], so[PATH_MAX + 32], log[PATH_MAX + 32], recdir[PATH_MAX + 32], status[PATH_MAX + 32];
    char abs_file[PATH_MAX];
    if (!realpath(bo->file, abs_file)) return ks_fail(KS_EIO, "%s: %s", bo->file, strerror(errno));
    snprintf(src, sizeof src, "%s/launcher.cu", g.dir);
    snprintf(so, sizeof so, "%s/launcher.so", g.dir);
    snprintf(log, sizeof log, "%s/nvcc.log", g.dir);
    snprintf(recdir, sizeof recdir, "%s/rec", g.dir);
    snprintf(status, sizeof status, "%s/status", g.dir);
    if (mkdir(recdir, 0700)) return ks_fail(KS_EIO, "%s: %s", recdir, strerror(errno));
    char callee[400];
    snprintf(callee, sizeof callee, "%s%s", strstr(bo->kernel, "::") ? "" : e->build.kernel.ns, bo->kernel);
    FILE *f = fopen(src, "w");
    if (!f || fprintf(f, k_launcher, abs_file, callee) < 0 || fclose(f)) {
        if (f) fclose(f);
        return ks_fail(KS_EIO, "%s: cannot write", src);
    }
    /* nvcc: the user's -D and -I, line info for the recorder's sites */
    char *argv[16 + 2 * 64 + 2 * 64]; /* the fixed flags, and at most 64 -D and 64 -I (cmd_run_cu.c) */
    char archflag[64];
    int a = 0;
    snprintf(archflag, sizeof archflag, "-arch=%s", o->arch);
    argv[a++] = (char *)o->nvcc, argv[a++] = "-shared", argv[a++] = "-Xcompiler", argv[a++] = "-fPIC";
    argv[a++] = "-lineinfo", argv[a++] = "-std=c++17", argv[a++] = archflag, argv[a++] = "-o", argv[a++] = so;
    for (int i = 0; i < bo->ndefines; ++i) argv[a++] = "-D", argv[a++] = (char *)bo->defines[i];
    for (int i = 0; i < bo->nincludes; ++i) argv[a++] = "-I", argv[a++] = (char *)bo->includes[i];
    argv[a++] = src, argv[a] = NULL;
    if (!e->quiet) fprintf(stderr, "kscope run: compiling %s with nvcc for the GPU\n", bo->file);
    if (run_tool(argv, log)) {
        char why[400];
        log_tail(log, why, sizeof why);
        return ks_fail(KS_EINVAL, "%s: nvcc failed: %s", bo->file, why[0] ? why : "(no message)");
    }
    /* the shared mapping: the control block, then each buffer */
    size_t total = (sizeof(gpu_ctl) + 63) & ~(size_t)63;
    uint64_t offs[KS_CU_MAX_BUFS];
    for (int b = 0; b < e->nbufs; ++b) {
        const ks_tensor *ts = &e->bufs[b].t;
        offs[b] = total;
        total += ((size_t)ks_tensor_numel(ts) * ks_dtype_size(ts->dtype) + 63) & ~(size_t)63;
    }
    g.map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g.map == MAP_FAILED) {
        g.map = NULL;
        return ks_fail(KS_ENOMEM, "out of memory for the buffers (%zu bytes)", total);
    }
    g.map_size = total;
    gpu_ctl *c = (gpu_ctl *)g.map;
    memcpy(c->offset, offs, sizeof offs);
    fflush(NULL);
    const double t0 = now_s();
    const pid_t pid = fork();
    if (pid < 0) return ks_fail(KS_EIO, "fork: %s", strerror(errno));
    if (pid == 0) child(e, o, so, recdir, status);
    int st = 0;
    const double limit = e->time_limit > 0 ? e->time_limit + 60 : 70; /* CUDA's start and the recording too */
    for (;;) {
        const pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return ks_fail(KS_EIO, "waitpid: %s", strerror(errno));
        if (now_s() - t0 > limit) {
            kill(pid, SIGTERM);
            struct timespec ts = {1, 0};
            nanosleep(&ts, NULL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return ks_fail(KS_EINVAL, "the GPU run did not end within %.0f s", limit);
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    e->seconds = now_s() - t0;
    if (WIFSIGNALED(st)) return ks_fail(KS_EINVAL, "the GPU run died of signal %d", WTERMSIG(st));
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
    if (code == 2) return ks_fail(KS_EINVAL, "%s: %s", bo->file, c->error[0] ? c->error : "the GPU run failed");
    if (code == 3) snprintf(fault, nfault, "%s", c->error);
    else if (code != 0) return ks_fail(KS_EINVAL, "the GPU run exited with status %d", code);
    /* the recorder's report: an error line is this run's error, except the wait for a
     * launch that faulted (the fault is the report then) */
    FILE *sf = fopen(status, "r");
    char line[1400];
    while (sf && fgets(line, sizeof line, sf))
        if (!strncmp(line, "error ", 6) && !(fault[0] && strstr(line, "did not finish"))) {
            line[strcspn(line, "\n")] = 0;
            fclose(sf);
            return ks_fail(KS_EIO, "the recorder: %s", line + 6);
        }
    if (sf) fclose(sf);
    else return ks_fail(KS_EIO, "the recorder never started (no Compute Sanitizer API in this driver?)");
    char path[PATH_MAX + 300];
    if (find_trace(recdir, path, sizeof path))
        return ks_fail(KS_EIO, "the recorder wrote no trace%s", fault[0] ? " (the kernel faulted before its end)" : "");
    if (ks_trace_open(path, tr)) return KS_EIO;
    /* params as the simulator writes them, with the device */
    {
        char dev[128];
        snprintf(dev, sizeof dev, "%s", tr->device);
        size_t used = (size_t)snprintf(tr->params, sizeof tr->params,
                                       "{\"frontend\":\"cuda-c\",\"device\":\"cuda\",\"file\":\"%s\",\"kernel\":\"%s\","
                                       "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_bytes\":%u,\"args\":{",
                                       strrchr(bo->file, '/') ? strrchr(bo->file, '/') + 1 : bo->file, bo->kernel,
                                       e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1], e->block[2],
                                       e->shared_bytes);
        for (int p = 0; p < e->build.kernel.nparams && used + 100 < sizeof tr->params; ++p) {
            const char *nm = e->build.kernel.params[p];
            int b = -1;
            for (int i = 0; i < e->nbufs; ++i)
                if (!strcmp(e->bufs[i].param, nm)) b = i;
            if (b >= 0)
                used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "%s\"%s\":\"%.48s\"",
                                         p ? "," : "", nm, e->bufs[b].text);
            else
                for (int i = 0; i < e->nnums; ++i)
                    if (!strcmp(e->nums[i].param, nm))
                        used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "%s\"%s\":%.17g",
                                                 p ? "," : "", nm,
                                                 e->nums[i].isint ? (double)e->nums[i].i : e->nums[i].f);
        }
        snprintf(tr->params + used, sizeof tr->params - used, "}}");
        (void)dev;
    }
    for (int b = 0; b < e->nbufs; ++b) {
        e->out[b] = e->bufs[b].t;
        snprintf(e->out[b].name, sizeof e->out[b].name, "%s", e->bufs[b].param);
        e->out[b].data = g.map + offs[b];
    }
    return KS_OK;
}
