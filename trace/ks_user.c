/* ks_user.c - tracing a kernel of your own (ks_user.h). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "ks_user.h"

#include <cJSON.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_launch.h"
#include "kst.h"

/* The descriptor (opaque in ks_user.h). */
struct ks_user_trace {
    char op[KS_NAME_LEN];
    char *params;       /* a JSON object (owned), or NULL: "{}" */
    int64_t work_items; /* index 0 .. work_items - 1 */
    int nsites;         /* = the declaration's; a registered one has a name */
    ks_site sites[KS_MAX_SITES];
    int ntensors;                      /* = the declaration's; a registered one has a name */
    ks_tensor tensors[KS_MAX_TENSORS]; /* data: the caller's (host memory) */
    int roles[KS_MAX_TENSORS];         /* KS_ROLE_INPUT or KS_ROLE_OUTPUT */
    ks_filter filter;                  /* which work items to record (default: all) */
    const ks_user_decl *decl;          /* the body's declaration */
};

_Static_assert(KS_DECL_TENSORS == KS_MAX_TENSORS && KS_DECL_SITES == KS_MAX_SITES, "ks_decl.h's limits");

/* The bytes a params text may take: the trace's field (kst.h) less its NUL. */
#define PARAMS_MAX 1023

/* The number of `name` among the n names of a declaration, or -1. */
static int decl_find(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; ++i)
        if (names[i] && !strcmp(names[i], name)) return i;
    return -1;
}

/* "input (UP_T_INPUT), output (UP_T_OUTPUT)": what a declaration's list holds, cut with
 * "..." past n bytes */
static const char *decl_list(const char *const *names, const char *const *ids, int count, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && used + 1 < n; ++i) {
        int w = snprintf(buf + used, n - used, "%s%s (%s)", i ? ", " : "", names[i], ids[i] ? ids[i] : "?");
        if (w < 0 || used + (size_t)w >= n) {
            snprintf(buf + (n > 4 ? n - 4 : 0), n > 4 ? 4 : n, "...");
            break;
        }
        used += (size_t)w;
    }
    return buf;
}

/* One list of a declaration: 1..max names of 1..KS_NAME_LEN-1 characters, none twice. */
static ks_status decl_list_ok(const char *op, const char *what, const char *const *names, int count, int max)
{
    if (count < 1 || count > max)
        return ks_fail(KS_EINVAL, "%s: the declaration has %d %ss (1..%d)", op, count, what, max);
    for (int i = 0; i < count; ++i) {
        if (!names[i] || !*names[i] || strlen(names[i]) >= KS_NAME_LEN)
            return ks_fail(KS_EINVAL, "%s: the declaration's %s %d needs a name of 1..%d characters", op, what, i,
                           KS_NAME_LEN - 1);
        if (decl_find(names, i, names[i]) >= 0)
            return ks_fail(KS_EINVAL, "%s: the declaration names %s %s twice", op, what, names[i]);
    }
    return KS_OK;
}

ks_status ks_user_trace_create(ks_user_trace **out, const ks_user_decl *decl, int64_t work_items)
{
    if (!out) return ks_fail(KS_EINVAL, "ks_user_trace_create: no place for the handle");
    *out = NULL;
    if (!decl) return ks_fail(KS_EINVAL, "ks_user_trace_create: no declaration (KS_DECLARE's <op>_decl())");
    if (!decl->op || !*decl->op) return ks_fail(KS_EINVAL, "ks_user_trace_create: the declaration has no op name");
    if (strlen(decl->op) >= KS_NAME_LEN) /* refused, never cut */
        return ks_fail(KS_EINVAL, "the op name '%.*s...' is longer than %d characters (a trace keeps %d)",
                       KS_NAME_LEN - 1, decl->op, KS_NAME_LEN - 1, KS_NAME_LEN - 1);
    ks_status rc = decl_list_ok(decl->op, "tensor", decl->tensors, decl->ntensors, KS_MAX_TENSORS);
    if (!rc) rc = decl_list_ok(decl->op, "site", decl->sites, decl->nsites, KS_MAX_SITES);
    if (rc) return rc;
    ks_user_trace *d = calloc(1, sizeof *d);
    if (!d) return ks_fail(KS_ENOMEM, "%s: out of memory for the trace descriptor", decl->op);
    snprintf(d->op, sizeof d->op, "%s", decl->op);
    d->work_items = work_items;
    d->filter = ks_filter_all();
    d->decl = decl;
    d->ntensors = decl->ntensors; /* registered: those with a name (ks_user_add_tensor) */
    d->nsites = decl->nsites;
    *out = d;
    return KS_OK;
}

void ks_user_trace_destroy(ks_user_trace *d)
{
    if (!d) return;
    free(d->params);
    free(d);
}

/* KS_OK, or the error of a call on no descriptor */
static ks_status handle_ok(const ks_user_trace *d, const char *call)
{
    return d ? KS_OK
             : ks_fail(KS_EINVAL, "%s: no trace descriptor (NULL: ks_user_trace_create failed or was not called)",
                       call);
}

ks_status ks_user_trace_set_params(ks_user_trace *d, const char *json)
{
    ks_status rc = handle_ok(d, "ks_user_trace_set_params");
    if (rc) return rc;
    char *copy = NULL;
    if (json) {
        cJSON *p = cJSON_Parse(json);
        const int object = cJSON_IsObject(p);
        cJSON_Delete(p);
        if (!object) return ks_fail(KS_EINVAL, "%s: the params are not a JSON object: %.60s", d->op, json);
        if (strlen(json) > PARAMS_MAX)
            return ks_fail(KS_EINVAL, "%s: the params pass %d bytes (%zu)", d->op, PARAMS_MAX, strlen(json));
        if (!(copy = strdup(json))) return ks_fail(KS_ENOMEM, "%s: out of memory for the params", d->op);
    }
    free(d->params);
    d->params = copy;
    return KS_OK;
}

ks_status ks_user_trace_set_filter(ks_user_trace *d, ks_filter filter)
{
    ks_status rc = handle_ok(d, "ks_user_trace_set_filter");
    if (rc) return rc;
    if (filter.every < 1 || filter.index_lo > filter.index_hi || filter.block_lo > filter.block_hi)
        return ks_fail(KS_EINVAL, "%s: a filter needs every >= 1, index_lo <= index_hi, block_lo <= block_hi", d->op);
    d->filter = filter;
    return KS_OK;
}

ks_filter ks_user_trace_filter(const ks_user_trace *d) { return d ? d->filter : ks_filter_all(); }

/* Every tensor and site the declaration declares is registered (KS_OK), else the error
 * names the first missing one on both sides. */
static ks_status decl_complete(const ks_user_trace *d)
{
    const ks_user_decl *decl = d->decl;
    for (int t = 0; t < decl->ntensors; ++t)
        if (!d->tensors[t].name[0])
            return ks_fail(KS_EINVAL,
                           "%s: the body declares tensor %s (%s = %d) but main never registers it (ks_user_add_tensor)",
                           d->op, decl->tensors[t], decl->tensor_ids[t] ? decl->tensor_ids[t] : "?", t);
    for (int i = 0; i < decl->nsites; ++i)
        if (!d->sites[i].name[0])
            return ks_fail(KS_EINVAL,
                           "%s: the body declares site %s (%s = %d) but main never registers it (ks_user_site)", d->op,
                           decl->sites[i], decl->site_ids[i] ? decl->site_ids[i] : "?", i);
    return KS_OK;
}

/* ks_user_add_tensor's work: the tensor's number, or -1 with the error set */
static int add_tensor(ks_user_trace *d, const char *name, ks_dtype dtype, int ndim, const int64_t *shape, void *data,
                      int output)
{
    char list[160];
    if (handle_ok(d, "ks_user_add_tensor")) return -1;
    const ks_user_decl *decl = d->decl;
    if (!name || !*name || strlen(name) >= KS_NAME_LEN)
        return ks_fail(KS_EINVAL, "%s: a tensor needs a name of 1..%d characters", d->op, KS_NAME_LEN - 1), -1;
    const int t = decl_find(decl->tensors, decl->ntensors, name); /* its number is the body's */
    if (t < 0)
        return ks_fail(KS_EINVAL, "%s: main registers tensor %s, which the body's declaration lacks (it declares %s)",
                       d->op, name, decl_list(decl->tensors, decl->tensor_ids, decl->ntensors, list, sizeof list)),
               -1;
    if (d->tensors[t].name[0]) return ks_fail(KS_EINVAL, "%s: tensor %s registered twice", d->op, name), -1;
    if (ndim < 1 || ndim > KS_MAX_DIMS || !shape || (dtype != KS_F32 && dtype != KS_I32 && dtype != KS_I64) ||
        ks_shape_numel(ndim, shape, dtype) < 0)
        return ks_fail(KS_EINVAL, "%s: tensor %s has an invalid dtype or shape", d->op, name), -1;
    if (!data && ks_shape_numel(ndim, shape, dtype) > 0)
        return ks_fail(KS_EINVAL, "%s: tensor %s has no data", d->op, name), -1;
    ks_tensor *x = &d->tensors[t];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->dtype = dtype, x->ndim = ndim, x->data = data;
    memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
    d->roles[t] = output ? KS_ROLE_OUTPUT : KS_ROLE_INPUT;
    return t;
}

ks_status ks_user_add_tensor(ks_user_trace *d, const char *name, ks_dtype dtype, int ndim, const int64_t *shape,
                             void *data, int output)
{
    return add_tensor(d, name, dtype, ndim, shape, data, output) < 0 ? KS_EINVAL : KS_OK;
}

/* The site's number (id, or by name when id < 0), its name the body's; -1 with the error
 * naming both sides */
static int decl_site(const ks_user_trace *d, int id, const char **name)
{
    const ks_user_decl *decl = d->decl;
    char list[400];
    const int by_name = decl_find(decl->sites, decl->nsites, *name);
    if (id < 0 && by_name < 0)
        return ks_fail(KS_EINVAL, "%s: main registers site %s, which the body's declaration lacks (it declares %s)",
                       d->op, *name ? *name : "(no name)",
                       decl_list(decl->sites, decl->site_ids, decl->nsites, list, sizeof list)),
               -1;
    if (id >= decl->nsites)
        return ks_fail(KS_EINVAL, "%s: main registers site %d (%s), but the body declares sites 0..%d only", d->op, id,
                       *name ? *name : "no name", decl->nsites - 1),
               -1;
    if (id >= 0 && *name && by_name != id) {
        const char *sid = decl->site_ids[id] ? decl->site_ids[id] : "?";
        if (by_name >= 0)
            return ks_fail(KS_EINVAL,
                           "%s: main registers site %d as %s, but the body declares %s = %d as %s (and %s as %s = %d)",
                           d->op, id, *name, sid, id, decl->sites[id], *name,
                           decl->site_ids[by_name] ? decl->site_ids[by_name] : "?", by_name),
                   -1;
        return ks_fail(KS_EINVAL, "%s: main registers site %d as %s, but the body declares %s = %d as %s", d->op, id,
                       *name, sid, id, decl->sites[id]),
               -1;
    }
    if (id < 0) id = by_name;
    *name = decl->sites[id];
    if (d->sites[id].name[0]) return ks_fail(KS_EINVAL, "%s: site %s registered twice", d->op, *name), -1;
    return id;
}

ks_site *ks_user_site(ks_user_trace *d, int id, const char *name, int kind, int tensor, int writes)
{
    if (handle_ok(d, "ks_user_site") || (id = decl_site(d, id, &name)) < 0) return NULL;
    if (kind < KS_EV_WORK || kind >= KS_EV_KINDS)
        return ks_fail(KS_EINVAL, "%s: site %s has an unknown kind", d->op, name), NULL;
    if (kind == KS_EV_WORK ? tensor != -1 : (tensor < 0 || tensor >= d->ntensors || !d->tensors[tensor].name[0]))
        return ks_fail(KS_EINVAL, "%s: site %s: %s", d->op, name,
                       kind == KS_EV_WORK ? "a work site touches no tensor (-1)"
                       : tensor >= 0 && tensor < d->ntensors
                           ? "its tensor is not registered yet (register tensors first)"
                           : "its tensor is not declared"),
               NULL;
    if (!name || !*name || strlen(name) >= KS_NAME_LEN)
        return ks_fail(KS_EINVAL, "%s: a site needs a name of 1..%d characters", d->op, KS_NAME_LEN - 1), NULL;
    ks_site *s = &d->sites[id];
    memset(s, 0, sizeof *s);
    if (kind == KS_EV_WORK) {
        snprintf(s->name, sizeof s->name, "%s", name);
        s->kind = KS_EV_WORK;
        s->tensor = -1;
    } else {
        ks_site_access(s, name, kind, tensor, kind == KS_EV_WRITE ? writes : 0);
    }
    return s;
}

ks_status ks_user_field_digit(ks_site *s, const char *name, int64_t stride, int64_t extent)
{
    if (!s || s->kind != KS_EV_WORK || s->nfields == 8 || stride < 1 || extent < 0)
        return ks_fail(KS_EINVAL, "field %s: a work site has at most 8 fields, stride >= 1, extent >= 0", name);
    ks_field_digit(&s->fields[s->nfields++], name, stride, extent, 0);
    return KS_OK;
}

ks_status ks_user_field_derived(ks_site *s, const char *name, const char *expr)
{
    if (!s || s->kind != KS_EV_WORK || s->nfields == 8)
        return ks_fail(KS_EINVAL, "field %s: a work site has at most 8 fields", name);
    ks_field_derived(&s->fields[s->nfields++], name, expr ? expr : "");
    return KS_OK;
}

/* a ks_dim3 with its 0 components as 1 (as a dim3's omitted ones) */
static ks_dim3 dims_or_one(ks_dim3 v)
{
    if (!v.x) v.x = 1;
    if (!v.y) v.y = 1;
    if (!v.z) v.z = 1;
    return v;
}

static int multi_dim(ks_dim3 grid, ks_dim3 block) { return grid.y > 1 || grid.z > 1 || block.y > 1 || block.z > 1; }

/* The launch's shape checked: KS_OK with *threads and *blocks its totals, or KS_EINVAL. */
static int launch_totals(const ks_user_trace *d, ks_dim3 grid, ks_dim3 block, int *threads, int64_t *blocks)
{
    const uint64_t t = (uint64_t)block.x * block.y * block.z, b = (uint64_t)grid.x * grid.y * grid.z;
    if (t < 1 || t > 1024 || block.z > 64)
        return ks_fail(KS_EINVAL, "%s: a block of (%u, %u, %u) threads: at most 1024 in all, z at most 64", d->op,
                       block.x, block.y, block.z);
    if (b < 1 || b > UINT32_MAX || grid.y > 65535 || grid.z > 65535 || grid.x > KS_MAX_GRID_X)
        return ks_fail(KS_EINVAL,
                       "%s: a grid of (%u, %u, %u) blocks: x at most %lld, y and z at most 65535, "
                       "at most 2^32 - 1 in all",
                       d->op, grid.x, grid.y, grid.z, (long long)KS_MAX_GRID_X);
    *threads = (int)t, *blocks = (int64_t)b;
    return KS_OK;
}

/* d's params with the launch's "grid" and "block" set, into out (n bytes) */
static int params_with_dims(const ks_user_trace *d, ks_dim3 grid, ks_dim3 block, char *out, size_t n)
{
    cJSON *p = cJSON_Parse(d->params ? d->params : "{}");
    if (!cJSON_IsObject(p)) {
        cJSON_Delete(p);
        return ks_fail(KS_EINVAL, "%s: the params are not a JSON object", d->op);
    }
    const double g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    cJSON_DeleteItemFromObjectCaseSensitive(p, "grid");
    cJSON_DeleteItemFromObjectCaseSensitive(p, "block");
    char *text = NULL;
    if (cJSON_AddItemToObject(p, "grid", cJSON_CreateDoubleArray(g, 3)) &&
        cJSON_AddItemToObject(p, "block", cJSON_CreateDoubleArray(b, 3)))
        text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    if (!text) return ks_fail(KS_ENOMEM, "%s: out of memory for the params", d->op);
    const int fits = strlen(text) < n;
    if (fits) memcpy(out, text, strlen(text) + 1);
    cJSON_free(text);
    return fits ? KS_OK
                : ks_fail(KS_EINVAL, "%s: the params with the launch's grid and block pass %zu bytes", d->op, n - 1);
}

ks_status ks_user_write_launch(const ks_user_trace *d, ks_dim3 grid, ks_dim3 block, const ks_sink *sink,
                               const char *device, const char *path)
{
    static ks_trace tr; /* large: not on the stack */
    if (handle_ok(d, "ks_user_write_launch") || decl_complete(d)) return KS_EINVAL;
    if (d->nsites < 1 || d->sites[0].kind != KS_EV_WORK)
        return ks_fail(KS_EINVAL, "%s: site 0 must be the work site (ks_user_site(d, 0, ..., KS_EV_WORK, -1, 0))",
                       d->op);
    grid = dims_or_one(grid), block = dims_or_one(block);
    int threads = 0;
    int64_t blocks = 0;
    int rc = launch_totals(d, grid, block, &threads, &blocks);
    if (rc) return rc;
    if (!sink) return ks_fail(KS_EINVAL, "%s: no sink of events to write", d->op);
    memset(&tr, 0, sizeof tr);
    if (multi_dim(grid, block)) {
        if ((rc = params_with_dims(d, grid, block, tr.params, sizeof tr.params))) return rc;
    } else {
        snprintf(tr.params, sizeof tr.params, "%s", d->params ? d->params : "{}"); /* as written before */
    }
    snprintf(tr.op, sizeof tr.op, "%s", d->op);
    snprintf(tr.variant, sizeof tr.variant, "traced");
    snprintf(tr.device, sizeof tr.device, "%s", device ? device : "sim");
    tr.threads = threads;
    tr.blocks = blocks;
    tr.block_cap = -1;
    tr.work_items = d->work_items;
    tr.filter = d->filter;
    tr.nsites = d->nsites;
    memcpy(tr.sites, d->sites, sizeof d->sites);
    tr.ntensors = d->ntensors;
    for (int t = 0; t < d->ntensors; ++t) tr.tensors[t] = d->tensors[t], tr.roles[t] = d->roles[t];
    tr.events = sink->events;
    tr.nevents = ks_sink_count(sink);
    tr.dropped = ks_sink_dropped(sink);
    return ks_trace_write(path, &tr);
}

/* Safe simulation (issue 37), the way `kscope run FILE.cu` keeps a kernel off the host
 * (cu_rt.h): the body runs in a child process that shares one mapping with this one, for
 * the events and, at the end, the registered tensors' bytes. A store outside its tensor is
 * made, if at all, in the child's copy of this process; a body that crashes kills the
 * child only. Back here the tensors are copied in, except the elements that a recorded
 * access outside its own tensor reached in another (a heap neighbour), and every recorded
 * access outside its tensor is reported with its thread and site. */
typedef struct iso_shared {
    unsigned long long counters[2]; /* the sink's cursor and drops */
    int done;                       /* the child ran the launch and copied the tensors */
} iso_shared;

/* the bytes of tensor t, or 0 */
static size_t tensor_bytes(const ks_tensor *x)
{
    const int64_t n = ks_tensor_numel(x);
    return n > 0 ? (size_t)n * ks_dtype_size(x->dtype) : 0;
}

static void thread_text(char *buf, size_t n, ks_dim3 g, ks_dim3 b, const ks_event *e)
{
    snprintf(buf, n, "thread (%u,%u,%u) of block (%u,%u,%u)", e->thread % b.x, e->thread / b.x % b.y,
             e->thread / (b.x * b.y), e->block % g.x, e->block / g.x % g.y, e->block / (g.x * g.y));
}

/* The recorded accesses outside their tensor: counted, the first described in `first`;
 * each write's element that lies inside another tensor is listed in prot (byte ranges of
 * the host's memory kept as they were). */
typedef struct iso_guard {
    uint64_t outside;
    char first[320];
    struct {
        unsigned char *at;
        size_t bytes;
        unsigned char keep[8];
    } * prot;
    size_t nprot, cap;
} iso_guard;

static void find_outside(const ks_user_trace *d, ks_dim3 g, ks_dim3 b, const ks_event *ev, uint64_t n, iso_guard *gd)
{
    for (uint64_t i = 0; i < n; ++i) {
        const ks_event *e = &ev[i];
        if ((e->kind != KS_EV_READ && e->kind != KS_EV_WRITE) || (e->flags & (KS_FLAG_PADDING | KS_FLAG_SHARED)) ||
            e->tensor >= d->ntensors)
            continue;
        const ks_tensor *x = &d->tensors[e->tensor];
        const int64_t off = e->u.access.offset, numel = ks_tensor_numel(x);
        if (off >= 0 && off < numel) continue;
        if (!gd->outside++) {
            char who[96];
            thread_text(who, sizeof who, g, b, e);
            snprintf(gd->first, sizeof gd->first, "%s at site %s %s %s[%lld], outside its %lld elements", who,
                     e->site < d->nsites ? d->sites[e->site].name : "?", e->kind == KS_EV_WRITE ? "writes" : "reads",
                     x->name, (long long)off, (long long)numel);
        }
        if (e->kind != KS_EV_WRITE || !x->data) continue;
        const size_t es = ks_dtype_size(x->dtype);
        const uintptr_t at = (uintptr_t)x->data + (uintptr_t)(off * (int64_t)es); /* wraps like the body's */
        for (int u = 0; u < d->ntensors; ++u) {
            const uintptr_t lo = (uintptr_t)d->tensors[u].data, hi = lo + tensor_bytes(&d->tensors[u]);
            if (u == e->tensor || !lo || at < lo || at >= hi) continue;
            if (gd->nprot == gd->cap) {
                const size_t cap = gd->cap ? 2 * gd->cap : 16;
                void *m = realloc(gd->prot, cap * sizeof *gd->prot);
                if (!m) break; /* out of memory: that element may come back */
                gd->prot = m, gd->cap = cap;
            }
            gd->prot[gd->nprot].at = (unsigned char *)at;
            gd->prot[gd->nprot++].bytes = es <= 8 && at + es <= hi ? es : (size_t)(hi - at < 8 ? hi - at : 8);
        }
    }
}

static int run_isolated(const ks_user_trace *d, ks_dim3 grid, ks_dim3 block, ks_sim_body body, const void *args,
                        const char *path)
{
    const unsigned long long limit = 1ULL << 26; /* the host sink's room (ks_host_sink_create) */
    size_t tbytes = 0;
    for (int t = 0; t < d->ntensors; ++t) tbytes += tensor_bytes(&d->tensors[t]);
    const size_t head = 4096, total = head + tbytes, ev_bytes = (size_t)(limit * sizeof(ks_event));
    unsigned char *sh = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    void *evm = mmap(NULL, ev_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (sh == MAP_FAILED || evm == MAP_FAILED) {
        if (sh != MAP_FAILED) munmap(sh, total);
        if (evm != MAP_FAILED) munmap(evm, ev_bytes);
        return ks_fail(KS_ENOMEM, "%s: no memory to share with the simulation's process", d->op);
    }
    iso_shared *ctl = (iso_shared *)sh;
    ks_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.events = evm, sink.counters = ctl->counters, sink.capacity = sink.limit = limit, sink.filter = d->filter;
    fflush(NULL); /* nothing buffered is written twice */
    const pid_t pid = fork();
    if (pid == 0) { /* the child: run, hand the tensors over, leave without atexit handlers */
        ks_sim_launch_dims(grid, block, body, args, &sink);
        size_t o = head;
        for (int t = 0; t < d->ntensors; ++t) {
            const size_t n = tensor_bytes(&d->tensors[t]);
            if (n) memcpy(sh + o, d->tensors[t].data, n);
            o += n;
        }
        __atomic_store_n(&ctl->done, 1, __ATOMIC_SEQ_CST);
        _exit(0);
    }
    int status = 0, rc = KS_OK;
    if (pid < 0) rc = ks_fail(KS_ENOMEM, "%s: cannot start the simulation's process", d->op);
    else
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
    const int ok = !rc && __atomic_load_n(&ctl->done, __ATOMIC_SEQ_CST);
    iso_guard gd;
    memset(&gd, 0, sizeof gd);
    const uint64_t nev = !rc ? ks_sink_count(&sink) : 0;
    if (!rc) find_outside(d, grid, block, sink.events, nev, &gd);
    if (ok) { /* the tensors come back, but for what an access outside another tensor reached */
        for (size_t k = 0; k < gd.nprot; ++k) memcpy(gd.prot[k].keep, gd.prot[k].at, gd.prot[k].bytes);
        size_t o = head;
        for (int t = 0; t < d->ntensors; ++t) {
            const size_t n = tensor_bytes(&d->tensors[t]);
            if (n) memcpy(d->tensors[t].data, sh + o, n);
            o += n;
        }
        for (size_t k = 0; k < gd.nprot; ++k) memcpy(gd.prot[k].at, gd.prot[k].keep, gd.prot[k].bytes);
    }
    if (gd.outside) {
        const int quiet = ks_sim_quiet_warnings(1);
        ks_sim_quiet_warnings(quiet);
        if (!quiet)
            fprintf(stderr,
                    "kscope: warning: %s: %llu access%s outside %s tensor, not made on the host; the first: %s\n",
                    d->op, (unsigned long long)gd.outside, gd.outside == 1 ? "" : "es",
                    gd.outside == 1 ? "its" : "their", gd.first);
    }
    if (!rc && !ok) { /* the body stopped the child: its events up to there, the host untouched */
        char where[200] = "before its first event";
        if (nev) {
            const ks_event *e = &sink.events[nev - 1];
            char who[96];
            thread_text(who, sizeof who, grid, block, e);
            snprintf(where, sizeof where, "after %s's event at site %s (work item %lld)", who,
                     e->site < d->nsites ? d->sites[e->site].name : "?", (long long)e->index);
        }
        const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        ks_user_write_launch(d, grid, block, &sink, "sim", path); /* for step and check: best effort */
        rc = ks_fail(KS_EINVAL, "%s: the simulated body stopped (%s %d) %s; %s holds the events up to there%s%s", d->op,
                     sig ? "signal" : "exit status", sig ? sig : WEXITSTATUS(status), where, path,
                     gd.outside ? "; the first access outside: " : "", gd.outside ? gd.first : "");
    } else if (!rc) {
        rc = ks_user_write_launch(d, grid, block, &sink, "sim", path);
    }
    free(gd.prot);
    munmap(evm, ev_bytes);
    munmap(sh, total);
    return rc;
}

ks_status ks_user_launch_sim(const ks_user_trace *d, ks_sim_body body, const void *args, ks_dim3 grid, ks_dim3 block,
                             const char *path)
{
    if (handle_ok(d, "ks_user_launch_sim") || decl_complete(d)) return KS_EINVAL;
    if (d->work_items < 0) return ks_fail(KS_EINVAL, "%s: work items must be >= 0", d->op);
    block = dims_or_one(block);
    if (!grid.x && grid.y <= 1 && grid.z <= 1 && !multi_dim(grid, block)) { /* enough blocks */
        const int64_t b = (d->work_items + block.x - 1) / block.x;
        grid.x = (uint32_t)(b < 1 ? 1 : b > KS_MAX_GRID_X ? KS_MAX_GRID_X : b);
    }
    if (!grid.x) return ks_fail(KS_EINVAL, "%s: a 2-D or 3-D launch needs its grid (grid.x is 0)", d->op);
    grid = dims_or_one(grid);
    int threads = 0;
    int64_t blocks = 0;
    int rc = launch_totals(d, grid, block, &threads, &blocks);
    if (rc) return rc;
    if (d->nsites < 1 || d->sites[0].kind != KS_EV_WORK)
        return ks_fail(KS_EINVAL, "%s: site 0 must be the work site (ks_user_site(d, 0, ..., KS_EV_WORK, -1, 0))",
                       d->op);
    return run_isolated(d, grid, block, body, args, path);
}

/* the deprecated names (ks_user.h), kept for 0.4 */
int ks_user_tensor(ks_user_trace *d, const char *name, ks_dtype dtype, int ndim, const int64_t *shape, void *data,
                   int output)
{
    return add_tensor(d, name, dtype, ndim, shape, data, output);
}

ks_status ks_user_write(const ks_user_trace *d, int threads, int64_t blocks, const ks_sink *sink, const char *device,
                        const char *path)
{
    ks_status rc = handle_ok(d, "ks_user_write");
    if (rc) return rc;
    if (threads < 1 || threads > 1024 || blocks < 1 || blocks > UINT32_MAX)
        return ks_fail(KS_EINVAL, "%s: %lld blocks of %d threads is no launch", d->op, (long long)blocks, threads);
    return ks_user_write_launch(d, ks_dims((uint32_t)blocks, 1, 1), ks_dims((uint32_t)threads, 1, 1), sink, device,
                                path);
}

ks_status ks_user_run_sim(const ks_user_trace *d, ks_sim_body body, const void *args, int threads, int64_t blocks,
                          const char *path)
{
    ks_status rc = handle_ok(d, "ks_user_run_sim");
    if (rc) return rc;
    if (threads < 1 || threads > 1024)
        return ks_fail(KS_EINVAL, "%s: threads must be in 1..1024 (got %d)", d->op, threads);
    if (d->work_items < 0 || blocks < 0) return ks_fail(KS_EINVAL, "%s: work items and blocks must be >= 0", d->op);
    if (blocks > KS_MAX_GRID_X) blocks = KS_MAX_GRID_X;
    return ks_user_launch_sim(d, body, args, ks_dims((uint32_t)blocks, 1, 1), ks_dims((uint32_t)threads, 1, 1), path);
}
