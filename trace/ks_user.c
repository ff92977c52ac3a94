/* ks_user.c - tracing a kernel of your own (ks_user.h). */
#include "ks_user.h"

#include <stdio.h>
#include <string.h>

#include "../kernels/core/ks_error.h"
#include "../kernels/core/ks_launch.h"

void ks_user_trace_init(ks_user_trace *d, const char *op, int64_t work_items)
{
    memset(d, 0, sizeof *d);
    snprintf(d->op, sizeof d->op, "%s", op ? op : "kernel");
    d->op_too_long = op && strlen(op) >= KS_NAME_LEN; /* refused, not cut silently: see name_ok */
    d->work_items = work_items;
    d->filter = ks_filter_all();
}

/* KS_OK, or the error of an op name longer than a trace holds (ks_user_trace_init cannot
 * return one: the next call does) */
static int name_ok(const ks_user_trace *d)
{
    if (!d->op_too_long) return KS_OK;
    return ks_fail(KS_EINVAL, "the op name '%s...' is longer than %d characters (a trace keeps %d)", d->op,
                   KS_NAME_LEN - 1, KS_NAME_LEN - 1);
}

int ks_user_tensor(ks_user_trace *d, const char *name, ks_dtype dtype, int ndim, const int64_t *shape, void *data,
                   int output)
{
    if (name_ok(d)) return -1;
    if (d->ntensors == KS_MAX_TENSORS) return ks_fail(KS_EINVAL, "%s: more than %d tensors", d->op, KS_MAX_TENSORS), -1;
    if (!name || !*name || strlen(name) >= KS_NAME_LEN)
        return ks_fail(KS_EINVAL, "%s: a tensor needs a name of 1..%d characters", d->op, KS_NAME_LEN - 1), -1;
    for (int t = 0; t < d->ntensors; ++t)
        if (!strcmp(d->tensors[t].name, name))
            return ks_fail(KS_EINVAL, "%s: tensor %s declared twice", d->op, name), -1;
    if (ndim < 1 || ndim > KS_MAX_DIMS || (dtype != KS_F32 && dtype != KS_I32 && dtype != KS_I64) ||
        ks_shape_numel(ndim, shape, dtype) < 0)
        return ks_fail(KS_EINVAL, "%s: tensor %s has an invalid dtype or shape", d->op, name), -1;
    if (!data && ks_shape_numel(ndim, shape, dtype) > 0)
        return ks_fail(KS_EINVAL, "%s: tensor %s has no data", d->op, name), -1;
    ks_tensor *x = &d->tensors[d->ntensors];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->dtype = dtype, x->ndim = ndim, x->data = data;
    memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
    d->roles[d->ntensors] = output ? KS_ROLE_OUTPUT : KS_ROLE_INPUT;
    return d->ntensors++;
}

ks_site *ks_user_site(ks_user_trace *d, int id, const char *name, int kind, int tensor, int writes)
{
    if (name_ok(d)) return NULL;
    if (id != d->nsites || id >= KS_MAX_SITES)
        return ks_fail(KS_EINVAL, "%s: declare sites in order 0, 1, ... (at most %d); got %d after %d", d->op,
                       KS_MAX_SITES, id, d->nsites),
               NULL;
    if (kind < KS_EV_WORK || kind >= KS_EV_KINDS)
        return ks_fail(KS_EINVAL, "%s: site %s has an unknown kind", d->op, name), NULL;
    if (kind == KS_EV_WORK ? tensor != -1 : (tensor < 0 || tensor >= d->ntensors))
        return ks_fail(KS_EINVAL, "%s: site %s: %s", d->op, name,
                       kind == KS_EV_WORK ? "a work site touches no tensor (-1)" : "its tensor is not declared"),
               NULL;
    if (!name || !*name || strlen(name) >= KS_NAME_LEN)
        return ks_fail(KS_EINVAL, "%s: a site needs a name of 1..%d characters", d->op, KS_NAME_LEN - 1), NULL;
    ks_site *s = &d->sites[d->nsites++];
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

int ks_user_field_digit(ks_site *s, const char *name, int64_t stride, int64_t extent)
{
    if (!s || s->kind != KS_EV_WORK || s->nfields == 8 || stride < 1 || extent < 0)
        return ks_fail(KS_EINVAL, "field %s: a work site has at most 8 fields, stride >= 1, extent >= 0", name);
    ks_field_digit(&s->fields[s->nfields++], name, stride, extent, 0);
    return KS_OK;
}

int ks_user_field_derived(ks_site *s, const char *name, const char *expr)
{
    if (!s || s->kind != KS_EV_WORK || s->nfields == 8)
        return ks_fail(KS_EINVAL, "field %s: a work site has at most 8 fields", name);
    ks_field_derived(&s->fields[s->nfields++], name, expr ? expr : "");
    return KS_OK;
}

int ks_user_write(const ks_user_trace *d, int threads, int64_t blocks, const ks_sink *sink, const char *device,
                  const char *path)
{
    static ks_trace tr; /* large: not on the stack */
    if (name_ok(d)) return KS_EINVAL;
    if (d->nsites < 1 || d->sites[0].kind != KS_EV_WORK)
        return ks_fail(KS_EINVAL, "%s: site 0 must be the work site (ks_user_site(d, 0, ..., KS_EV_WORK, -1, 0))",
                       d->op);
    memset(&tr, 0, sizeof tr);
    snprintf(tr.op, sizeof tr.op, "%s", d->op);
    snprintf(tr.variant, sizeof tr.variant, "traced");
    snprintf(tr.device, sizeof tr.device, "%s", device ? device : "sim");
    snprintf(tr.params, sizeof tr.params, "%s", d->params ? d->params : "{}");
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

int ks_user_run_sim(const ks_user_trace *d, ks_sim_body body, const void *args, int threads, int64_t blocks,
                    const char *path)
{
    if (name_ok(d)) return KS_EINVAL;
    if (threads < 1 || threads > 1024)
        return ks_fail(KS_EINVAL, "%s: threads must be in 1..1024 (got %d)", d->op, threads);
    if (d->work_items < 0 || blocks < 0) return ks_fail(KS_EINVAL, "%s: work items and blocks must be >= 0", d->op);
    if (!blocks) blocks = (d->work_items + threads - 1) / threads;
    if (blocks > KS_MAX_GRID_X) blocks = KS_MAX_GRID_X;
    ks_sink *sink = ks_host_sink_create(0, d->filter);
    if (!sink) return KS_ENOMEM;
    ks_sim_launch(blocks, threads, body, args, sink);
    int rc = ks_user_write(d, threads, blocks, sink, "sim", path);
    ks_host_sink_free(sink);
    return rc;
}
