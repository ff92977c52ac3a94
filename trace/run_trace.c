#include "run_trace.h"

#include <stdio.h>
#include <string.h>

void ks_trace_from_run(const ks_op *op, const ks_run *r, ks_trace *tr)
{
    memset(tr, 0, sizeof *tr);
    snprintf(tr->op, sizeof tr->op, "%s", op->name);
    snprintf(tr->variant, sizeof tr->variant, "traced");
    snprintf(tr->device, sizeof tr->device, "%s", r->device_name);
    snprintf(tr->params, sizeof tr->params, "%s", r->params_json);
    tr->threads = r->threads;
    tr->blocks = r->blocks;
    tr->block_cap = r->block_cap;
    tr->work_items = r->work_items;
    tr->filter = r->sink->filter;
    tr->nsites = r->nsites;
    memcpy(tr->sites, r->sites, sizeof r->sites);
    tr->ntensors = op->ntensors;
    for (int i = 0; i < op->ntensors; ++i) {
        tr->tensors[i] = r->tensor[i];
        tr->roles[i] = op->tensors[i].output ? KS_ROLE_OUTPUT : KS_ROLE_INPUT;
    }
    if (r->schedule_data && tr->ntensors < KS_MAX_TENSORS) { /* the schedule, as one more output */
        ks_tensor *t = &tr->tensors[tr->ntensors];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "schedule");
        t->dtype = KS_I64, t->ndim = 2, t->shape[0] = r->schedule_blocks, t->shape[1] = 4;
        t->data = r->schedule_data;
        tr->roles[tr->ntensors++] = KS_ROLE_OUTPUT;
    }
    tr->events = r->sink->events;
    tr->nevents = ks_sink_count(r->sink);
    tr->dropped = ks_sink_dropped(r->sink);
}
