/* gantt_fixture.h - a crafted GPU-like trace with a schedule for the schedule chart's
 * tests: 7 blocks of 2 threads, block 6 did not run (a -1 row), the other six on SMs 7, 2
 * and 40 (out of order in the tensor), blocks 0 and 2 overlapping on SM 7 (two lanes),
 * globaltimer nanoseconds from 1000 to 5000. Events are recorded in a claim order that is
 * not the block order: blocks 5 .. 0, thread 1 before thread 0. */
#ifndef KS_GANTT_FIXTURE_H
#define KS_GANTT_FIXTURE_H

#include "crafted_trace.h"

static const int64_t gf_rows[7][4] = {
    {0, 7, 1000, 3000}, {1, 2, 1000, 2000}, {2, 7, 1500, 2500}, {3, 40, 2000, 5000},
    {4, 2, 2100, 4000}, {5, 7, 3000, 5000}, {-1, -1, -1, -1},
};

/* with_schedule 0: the same trace without the tensor. */
static inline void gf_trace(ct_trace *c, int64_t sched[7][4], int with_schedule)
{
    ct_init(c, 2, 7, 12);
    snprintf(c->tr.params, sizeof c->tr.params, "{\"op\": \"crafted\", \"schedule_clock\": \"globaltimer_ns\"}");
    snprintf(c->tr.device, sizeof c->tr.device, "NVIDIA H100 80GB HBM3");
    const int64_t in_shape[2] = {2, 6}, out_shape[2] = {2, 6};
    ct_tensor(c, 0, "input", KS_ROLE_INPUT, 2, in_shape);
    ct_tensor(c, 1, "out", KS_ROLE_OUTPUT, 2, out_shape);
    for (int b = 5; b >= 0; --b)
        for (int t = 1; t >= 0; --t) ct_event(c, KS_EV_WORK, 0, 2 * b + t, (uint32_t)b, (uint32_t)t, 0);
    memcpy(sched, gf_rows, sizeof gf_rows);
    if (!with_schedule) return;
    ks_tensor *T = &c->tr.tensors[2];
    snprintf(T->name, KS_NAME_LEN, "schedule");
    T->dtype = KS_I64;
    T->ndim = 2;
    T->shape[0] = 7;
    T->shape[1] = 4;
    T->data = sched;
    c->tr.roles[2] = KS_ROLE_OUTPUT;
    c->tr.ntensors = 3;
}

#endif
