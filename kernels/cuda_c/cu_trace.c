/* cu_trace.c - the trace of a .cu run: the child's raw sites (one per instrumented
 * instruction) become source locations (one per kind, tensor and file:line:col; a
 * location a loop unrolled into several instructions is one site), the buffers and
 * shared arrays become tensors, and events get their sites and line numbers. */
#include "cu_run.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ks_error.h"
#include "cu_lines.h"

typedef struct src_file {
    char path[256];
    char *text;
} src_file;

/* line `line` of `path`, trimmed, into out (the file read once) */
static void source_line(src_file *files, int *nfiles, const char *path, int line, char *out, size_t n)
{
    out[0] = 0;
    int k = 0;
    while (k < *nfiles && strcmp(files[k].path, path)) ++k;
    if (k == *nfiles) {
        if (*nfiles == 8) return;
        snprintf(files[k].path, sizeof files[k].path, "%s", path);
        files[k].text = NULL;
        FILE *f = fopen(path, "rb");
        if (f) {
            files[k].text = calloc(1, 1 << 20);
            if (files[k].text && fread(files[k].text, 1, (1 << 20) - 1, f) == 0) files[k].text[0] = 0;
            fclose(f);
        }
        (*nfiles)++;
    }
    const char *p = files[k].text;
    for (int l = 1; p && l < line; ++l) {
        p = strchr(p, '\n');
        if (p) ++p;
    }
    if (!p) return;
    while (*p == ' ' || *p == '\t') ++p;
    size_t len = strcspn(p, "\r\n");
    while (len && isspace((unsigned char)p[len - 1])) --len;
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* the tensor of raw site r (-1 for none), as the child noted it when the site first ran:
 * a site whose events were all dropped keeps it */
static void raw_tensors(const ks_cu_ctl *c, int *tensor)
{
    tensor[0] = -1;
    for (uint32_t r = 1; r <= c->npcs; ++r) {
        const int k = c->pc_kind[r - 1];
        tensor[r] = (k == KS_EV_READ || k == KS_EV_WRITE) && c->pc_tensor[r - 1] != 255 ? c->pc_tensor[r - 1] : -1;
    }
}

int ks_cu_trace_make(ks_cu_exec *e, ks_trace *tr)
{
    ks_cu_ctl *c = e->ctl;
    ks_event *ev = e->events;
    memset(tr, 0, sizeof *tr);
    int has_fault = 0;
    for (uint64_t i = e->nevents; i-- > 0 && !has_fault;)
        has_fault = ev[i].kind == KS_EV_FAULT && ev[i].block == c->fault_block && ev[i].thread == c->fault_thread;
    if (c->fault && !has_fault && e->nevents < e->trace_limit) {
        /* stopped from outside (the time limit, exit()): the trace says so, at the running
         * thread's last site (or a site of no line when it made no event but its start) */
        uint32_t site = 0, seq = 0;
        int found = 0;
        for (uint64_t i = e->nevents; i-- > 0 && !found;)
            if (ev[i].block == c->fault_block && ev[i].thread == c->fault_thread)
                site = ev[i].site, seq = ev[i].seq + 1, found = 1;
        const uint64_t pc = site ? c->pcs[site - 1] : 0;
        uint32_t fault_site = 0; /* a fault site of that instruction, or a new one */
        for (uint32_t r = 1; r <= c->npcs && !fault_site; ++r)
            if (c->pc_kind[r - 1] == KS_EV_FAULT && c->pcs[r - 1] == pc) fault_site = r;
        if (!fault_site && c->npcs < KS_CU_MAX_PCS) {
            c->pcs[c->npcs] = pc, c->pc_kind[c->npcs] = KS_EV_FAULT, c->pc_flags[c->npcs] = 0;
            c->pc_tensor[c->npcs] = 255;
            fault_site = ++c->npcs;
        }
        if (fault_site) {
            ks_event *x = &ev[e->nevents++];
            memset(x, 0, sizeof *x);
            x->kind = KS_EV_FAULT, x->site = (uint16_t)fault_site, x->tensor = 255;
            x->block = c->fault_block, x->thread = c->fault_thread;
            x->index = (int64_t)c->fault_block * (e->block[0] * e->block[1] * e->block[2]) + c->fault_thread;
            x->u.fault.code = (uint32_t)c->fault, x->seq = seq;
        }
    }
    snprintf(tr->op, sizeof tr->op, "%.31s", e->build.kernel.name);
    snprintf(tr->variant, sizeof tr->variant, "cuda-c");
    snprintf(tr->device, sizeof tr->device, "sim");
    tr->threads = (int)(e->block[0] * e->block[1] * e->block[2]);
    tr->blocks = (int64_t)e->grid[0] * e->grid[1] * e->grid[2];
    tr->block_cap = -1;
    tr->work_items = tr->blocks * tr->threads;
    tr->filter = e->filter;
    tr->events = ev;
    tr->nevents = e->nevents;
    tr->dropped = c->dropped;

    /* tensors: buffers, static shared arrays, the dynamic shared memory */
    int written[KS_MAX_TENSORS] = {0}; /* from the sites: a trace that dropped events still knows */
    for (uint32_t r = 0; r < c->npcs; ++r)
        if (c->pc_kind[r] == KS_EV_WRITE && c->pc_tensor[r] < KS_MAX_TENSORS) written[c->pc_tensor[r]] = 1;
    for (int i = 0; i < e->nbufs; ++i) {
        tr->tensors[tr->ntensors] = e->out[i];
        tr->roles[tr->ntensors] = written[tr->ntensors] ? KS_ROLE_OUTPUT : KS_ROLE_INPUT;
        tr->ntensors++;
    }
    static unsigned char shared_copy[KS_CU_STATIC_SMEM + 4];
    for (int i = 0; i < c->nshared; ++i) {
        ks_tensor *t = &tr->tensors[tr->ntensors];
        snprintf(t->name, sizeof t->name, "%s", c->shared[i].name);
        /* 4-byte words (the race check's slots); a declaration that never ran: one word */
        const int64_t words = (int64_t)((c->shared[i].bytes + 3) / 4);
        t->dtype = KS_F32, t->ndim = 1, t->shape[0] = words > 0 ? words : 1;
        t->data = shared_copy; /* shared memory lives per block: the trace keeps no contents */
        tr->roles[tr->ntensors++] = KS_ROLE_OUTPUT;
    }
    if (c->dyn_name[0]) {
        static unsigned char *dyn;
        free(dyn);
        dyn = calloc(1, c->shared_bytes ? c->shared_bytes : 4);
        if (!dyn) return ks_fail(KS_ENOMEM, "out of memory");
        ks_tensor *t = &tr->tensors[tr->ntensors];
        snprintf(t->name, sizeof t->name, "%s", c->dyn_name);
        t->dtype = KS_F32, t->ndim = 1, t->shape[0] = c->shared_bytes / 4;
        t->data = dyn;
        tr->roles[tr->ntensors++] = KS_ROLE_OUTPUT;
    }

    /* sites: 0 is the thread (work) site, the rest source locations */
    ks_site *w = &tr->sites[0];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "thread");
    w->kind = KS_EV_WORK, w->tensor = -1, w->nfields = 6;
    const int64_t T = tr->threads, bx = e->block[0], by = e->block[1], gx = e->grid[0], gy = e->grid[1];
    ks_field_digit(&w->fields[0], "blockIdx.z", T * gx * gy, 0, 0);
    ks_field_digit(&w->fields[1], "blockIdx.y", T * gx, gy, 0);
    ks_field_digit(&w->fields[2], "blockIdx.x", T, gx, 0);
    ks_field_digit(&w->fields[3], "threadIdx.z", bx * by, e->block[2], 0);
    ks_field_digit(&w->fields[4], "threadIdx.y", bx, by, 0);
    ks_field_digit(&w->fields[5], "threadIdx.x", 1, bx, 0);
    tr->nsites = 1;

    const uint32_t npcs = c->npcs;
    ks_cu_loc *loc = calloc(npcs + 1, sizeof *loc);
    int *tensor = calloc(npcs + 2, sizeof *tensor);
    uint16_t *map = calloc(npcs + 2, sizeof *map);
    src_file files[8];
    int nfiles = 0, rc = KS_OK;
    if (!loc || !tensor || !map) {
        rc = ks_fail(KS_ENOMEM, "out of memory");
        goto out;
    }
    if (npcs && (rc = ks_cu_lines(e->build.so, c->pcs, (int)npcs, loc))) goto out;
    raw_tensors(c, tensor);
    const char *site_file[KS_MAX_SITES] = {""};
    for (int with_col = 1; with_col >= 0; --with_col) {
        tr->nsites = 1;
        int overflow = 0;
        for (uint32_t r = 1; r <= npcs && !overflow; ++r) {
            const ks_cu_loc *l = &loc[r - 1];
            const int kind = c->pc_kind[r - 1], t = tensor[r] == -2 ? -1 : tensor[r];
            const int atomic = c->pc_flags[r - 1] & KS_FLAG_ATOMIC;
            int s = 1;
            for (; s < tr->nsites; ++s) {
                const ks_site *o = &tr->sites[s];
                if (o->kind == kind && o->tensor == t && o->line == l->line && (!with_col || o->col == l->col) &&
                    o->writes_per_element == atomic && !strcmp(site_file[s], l->file))
                    break;
            }
            if (s == tr->nsites) {
                if (s == KS_MAX_SITES) {
                    overflow = 1;
                    break;
                }
                site_file[tr->nsites] = l->file;
                ks_site *n = &tr->sites[tr->nsites++];
                memset(n, 0, sizeof *n);
                if (l->line) {
                    /* FILE:LINE:COL; a long file name drops the column, then keeps its end */
                    char tail[24];
                    const char *bn = base_name(l->file);
                    int tl = snprintf(tail, sizeof tail, ":%d:%d", l->line, with_col ? l->col : 0);
                    if ((int)strlen(bn) + tl > (int)sizeof n->name - 1)
                        tl = snprintf(tail, sizeof tail, ":%d", l->line);
                    const int room = (int)sizeof n->name - 1 - tl, bl = (int)strlen(bn);
                    snprintf(n->name, sizeof n->name, "%s%s%s", bl > room ? "~" : "",
                             bl > room ? bn + bl - room + 1 : bn, tail);
                } else snprintf(n->name, sizeof n->name, "%.31s", l->file);
                n->kind = kind, n->tensor = t, n->line = l->line, n->col = with_col ? l->col : 0;
                n->writes_per_element = atomic; /* 0: not checked; this marks the atomic site apart */
                if (l->line) source_line(files, &nfiles, l->file, l->line, n->code, sizeof n->code);
            }
            map[r] = (uint16_t)s;
        }
        if (!overflow) break;
        if (!with_col) {
            rc = ks_fail(KS_EINVAL, "the kernel has more than %d memory, barrier and warp lines; a trace holds %d",
                         KS_MAX_SITES - 1, KS_MAX_SITES - 1);
            goto out;
        }
    }
    /* "writes_per_element" only kept atomic and plain sites of one line apart */
    for (int s = 1; s < tr->nsites; ++s) tr->sites[s].writes_per_element = 0;
    if (npcs == KS_CU_MAX_PCS) map[KS_CU_MAX_PCS] = map[KS_CU_MAX_PCS - 1];
    /* the instructions of one site (a loop unrolled, a line's two loads of one array) tell
     * their accesses apart in the low 4 bits of tap: one instruction a memory request */
    uint8_t *rank = calloc(npcs + 2, 1);
    if (!rank) {
        rc = ks_fail(KS_ENOMEM, "out of memory");
        goto out;
    }
    {
        uint8_t next[KS_MAX_SITES] = {0};
        for (uint32_t r = 1; r <= npcs; ++r) rank[r] = (uint8_t)(next[map[r]]++ & 15);
    }
    for (uint64_t i = 0; i < e->nevents; ++i) {
        ks_event *x = &ev[i];
        const uint32_t raw = x->site <= npcs ? x->site : 0;
        x->site = raw ? map[raw] : 0;
        const int line = tr->sites[x->site].line;
        if (x->kind == KS_EV_BARRIER) x->u.barrier.line = line;
        else if (x->kind == KS_EV_WARP) x->u.warp.line = line;
        else if (x->kind == KS_EV_FAULT) x->u.fault.line = line;
        else if (x->kind == KS_EV_READ || x->kind == KS_EV_WRITE) {
            x->tap = (uint16_t)(x->tap << 4 | rank[raw]);
            const int32_t b = x->u.access.reserved[1];
            x->u.access.reserved[1] = b > 0 && (uint32_t)b <= npcs ? tr->sites[map[b]].line : 0;
        }
    }
    c->npcs = 0; /* the events are mapped: a second call must not map them again */
    free(rank);

    /* params: what ran, as given */
    {
        size_t used = (size_t)snprintf(tr->params, sizeof tr->params,
                                       "{\"frontend\":\"cuda-c\",\"file\":\"%s\",\"kernel\":\"%s\",\"grid\":[%u,%u,%u],"
                                       "\"block\":[%u,%u,%u],\"shared_bytes\":%u,\"args\":{",
                                       base_name(e->build.opts_file), e->build.expr, e->grid[0], e->grid[1], e->grid[2],
                                       e->block[0], e->block[1], e->block[2], e->shared_bytes);
        for (int p = 0; p < c->nparams && used + 80 < sizeof tr->params; ++p) {
            const char *sep = p ? "," : "";
            if (c->param_buf[p] >= 0)
                used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "%s\"%s\":\"%.48s\"", sep,
                                         c->param_name[p], e->bufs[c->param_buf[p]].text);
            else
                used += (size_t)snprintf(tr->params + used, sizeof tr->params - used, "%s\"%s\":%.17g", sep,
                                         c->param_name[p], c->param_f[p]);
        }
        if (used + 3 < sizeof tr->params) snprintf(tr->params + used, sizeof tr->params - used, "}}");
    }
out:
    for (int k = 0; k < nfiles; ++k) free(files[k].text);
    free(loc), free(tensor), free(map);
    return rc;
}

void ks_cu_fault_line(const ks_cu_exec *e, const ks_trace *tr, char *buf, size_t n)
{
    static const char *const what[] = {[KS_CU_F_OUTSIDE] = "touched memory outside every buffer",
                                       [KS_CU_F_ASSERT] = "failed an assert",
                                       [KS_CU_F_TRAP] = "called __trap()",
                                       [KS_CU_F_DIVZERO] = "divided an integer by zero",
                                       [KS_CU_F_STACK] = "overflowed its stack",
                                       [KS_CU_F_CRASH] = "crashed",
                                       [KS_CU_F_TIMEOUT] = "was running when the time limit passed",
                                       [KS_CU_F_UNSUPPORTED] = "used what the simulator lacks",
                                       [KS_CU_F_DEADLOCK] = "waited for lanes that never came"};
    buf[0] = 0;
    const ks_event *first = NULL;
    for (uint64_t i = 0; i < tr->nevents && !first; ++i)
        if (tr->events[i].kind == KS_EV_FAULT) first = &tr->events[i];
    const ks_cu_ctl *c = e->ctl;
    uint32_t block, thread, code;
    int line = 0;
    if (c->fault) {
        block = c->fault_block, thread = c->fault_thread, code = (uint32_t)c->fault;
        for (uint64_t i = tr->nevents; i-- > 0;) /* the line: its fault event, or its last event */
            if (tr->events[i].block == block && tr->events[i].thread == thread && tr->events[i].site) {
                line = tr->sites[tr->events[i].site].line;
                break;
            }
    } else if (first) {
        block = first->block, thread = first->thread, code = first->u.fault.code, line = first->u.fault.line;
    } else {
        return;
    }
    const uint32_t gx = e->grid[0], gy = e->grid[1], bxd = e->block[0], byd = e->block[1];
    size_t used = (size_t)snprintf(buf, n, "thread (%u,%u,%u) of block (%u,%u,%u) %s", thread % bxd, thread / bxd % byd,
                                   thread / (bxd * byd), block % gx, block / gx % gy, block / (gx * gy),
                                   code < sizeof what / sizeof what[0] && what[code] ? what[code] : "stopped");
    if (used >= n) return;
    if (c->error[0] && (code == KS_CU_F_CRASH || code == KS_CU_F_UNSUPPORTED))
        used += (size_t)snprintf(buf + used, n - used, " (");
    if (c->error[0] && (code == KS_CU_F_CRASH || code == KS_CU_F_UNSUPPORTED))
        used += (size_t)snprintf(buf + used, n - used, "%s)", c->error);
    if (line && used < n) snprintf(buf + used, n - used, " at %s:%d", base_name(e->build.opts_file), line);
}
