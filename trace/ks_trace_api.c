/* ks_trace_api.c - the SDK's trace handle (ks_trace.h) over the reader of kst.h. */
#include "ks_trace.h"

#include <cJSON.h>

#include <stdlib.h>
#include <string.h>

#include "kst.h"

static ks_status load(const char *path, ks_trace **out, int lazy)
{
    if (!out) return ks_fail(KS_EINVAL, "ks_trace_load: no place for the handle");
    *out = NULL;
    if (!path) return ks_fail(KS_EINVAL, "ks_trace_load: no path");
    ks_trace *tr = calloc(1, sizeof *tr);
    if (!tr) return ks_fail(KS_ENOMEM, "%s: out of memory for the trace", path);
    const int rc = lazy ? ks_trace_open_lazy(path, tr) : ks_trace_open(path, tr);
    if (rc) {
        free(tr);
        return (ks_status)rc;
    }
    *out = tr;
    return KS_OK;
}

ks_status ks_trace_load(const char *path, ks_trace **out) { return load(path, out, 0); }

ks_status ks_trace_load_lazy(const char *path, ks_trace **out) { return load(path, out, 1); }

void ks_trace_destroy(ks_trace *tr)
{
    if (!tr) return;
    ks_trace_close(tr);
    free(tr);
}

const char *ks_trace_op(const ks_trace *tr) { return tr->op; }
const char *ks_trace_variant(const ks_trace *tr) { return tr->variant; }
const char *ks_trace_device(const ks_trace *tr) { return tr->device; }
const char *ks_trace_params(const ks_trace *tr) { return tr->params; }
int64_t ks_trace_work_items(const ks_trace *tr) { return tr->work_items; }
ks_filter ks_trace_filter(const ks_trace *tr) { return tr->filter; }
int ks_trace_format_version(const ks_trace *tr) { return tr->version; }

/* a [x, y, z] array of the params of 1..limit each into v; 0 when there is none */
static int dims_of(const cJSON *p, const char *key, uint64_t limit, uint32_t v[3])
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(p, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3) return 0;
    for (int d = 0; d < 3; ++d) {
        const cJSON *x = cJSON_GetArrayItem(a, d);
        if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble > (double)limit ||
            x->valuedouble != (double)(uint64_t)x->valuedouble)
            return 0;
        v[d] = (uint32_t)x->valuedouble;
    }
    return 1;
}

void ks_trace_launch(const ks_trace *tr, ks_dim3 *grid, ks_dim3 *block)
{
    ks_dim3 g = {tr->blocks > 0 && tr->blocks <= UINT32_MAX ? (uint32_t)tr->blocks : 1, 1, 1};
    ks_dim3 b = {tr->threads > 0 ? (uint32_t)tr->threads : 1, 1, 1};
    cJSON *p = strstr(tr->params, "\"grid\"") ? cJSON_Parse(tr->params) : NULL;
    uint32_t gv[3], bv[3];
    /* a 2-D or 3-D launch names its shape in the params; it must agree with the totals */
    if (p && dims_of(p, "grid", UINT32_MAX, gv) && dims_of(p, "block", 1024, bv) &&
        (uint64_t)gv[0] * gv[1] * gv[2] == (uint64_t)tr->blocks &&
        (uint64_t)bv[0] * bv[1] * bv[2] == (uint64_t)tr->threads)
        g.x = gv[0], g.y = gv[1], g.z = gv[2], b.x = bv[0], b.y = bv[1], b.z = bv[2];
    cJSON_Delete(p);
    if (grid) *grid = g;
    if (block) *block = b;
}

int ks_trace_site_count(const ks_trace *tr) { return tr->nsites; }

const ks_site *ks_trace_site(const ks_trace *tr, int i) { return i >= 0 && i < tr->nsites ? &tr->sites[i] : NULL; }

int ks_trace_tensor_count(const ks_trace *tr) { return tr->ntensors; }

const ks_tensor *ks_trace_tensor_at(const ks_trace *tr, int i)
{
    return i >= 0 && i < tr->ntensors ? &tr->tensors[i] : NULL;
}

int ks_trace_tensor_role(const ks_trace *tr, int i) { return i >= 0 && i < tr->ntensors ? tr->roles[i] : -1; }

const ks_event *ks_trace_events(const ks_trace *tr) { return tr->events; }
uint64_t ks_trace_event_count(const ks_trace *tr) { return tr->nevents; }
uint64_t ks_trace_file_event_count(const ks_trace *tr) { return tr->file_events; }
uint64_t ks_trace_dropped(const ks_trace *tr) { return tr->dropped; }
