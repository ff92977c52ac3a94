/* run.c - ks_run_execute: the one execute path of every operator (registry.h). */
#define _DEFAULT_SOURCE /* sysconf(_SC_PHYS_PAGES) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "core/ks_cuda_api.h"
#include "core/ks_error.h"
#include "registry.h"
#include "core/ks_pages.h"

/* The GPU trace buffer starts at this many events and, on overflow, is reallocated to
 * exactly what the launch claimed (up to the host sink's limit) and the launch rerun. */
#define KS_GPU_TRACE_START (1ULL << 18)

static int same_shape(const ks_tensor *t, int ndim, const int64_t *shape)
{
    if (t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; ++i)
        if (t->shape[i] != shape[i]) return 0;
    return 1;
}

/* The run's tensors must fit this machine's memory: refused up front, with the sizes,
 * rather than left to an allocator that may overcommit and then crawl or be killed. */
static int fits_memory(const ks_run *r)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    double need = 0;
    for (int i = 0; i < r->op->ntensors; ++i)
        if (!r->absent[i] && !r->tensor[i].data && r->expect_ndim[i] > 0) {
            int64_t n = ks_shape_numel(r->expect_ndim[i], r->expect[i], (ks_dtype)r->op->tensors[i].dtype);
            if (n < 0) return ks_fail(KS_EINVAL, "tensor %s: its size overflows", r->tensor[i].name);
            need += (double)n * (double)ks_dtype_size((ks_dtype)r->op->tensors[i].dtype);
        }
    if (have > 0 && need > have)
        return ks_fail(KS_ENOMEM, "the run's tensors need %.3g GiB, more than this machine's %.3g GiB of memory",
                       need / 1073741824.0, have / 1073741824.0);
    return KS_OK;
}

/* Given inputs against the shapes prepare set; built-in inputs filled; outputs allocated. */
static int place_tensors(ks_run *r)
{
    const ks_op *op = r->op;
    char want[96], got[96];
    int rc = fits_memory(r);
    if (rc) return rc;
    for (int i = 0; i < op->ntensors; ++i) {
        const ks_tensor_spec *s = &op->tensors[i];
        ks_tensor *t = &r->tensor[i];
        if (r->absent[i]) {
            if (t->data) return ks_fail(KS_EINVAL, "%s is given but this run does not use it (%s)", t->name, s->shape);
            t->dtype = KS_F32, t->ndim = 1;
            memset(t->shape, 0, sizeof t->shape);
            continue;
        }
        if (r->expect_ndim[i] == 0) return ks_fail(KS_EINVAL, "%s: prepare set no shape for %s", op->name, t->name);
        if (t->data) {
            if (!same_shape(t, r->expect_ndim[i], r->expect[i]))
                return ks_fail(KS_EINVAL, "%s must have shape %s; got %s", t->name,
                               ks_shape_str(r->expect_ndim[i], r->expect[i], want, sizeof want),
                               ks_shape_str(t->ndim, t->shape, got, sizeof got));
            continue;
        }
        if (s->output) {
            if ((rc = ks_tensor_alloc(t))) return rc;
            continue;
        }
        rc = KS_ENOENT;
        if (op->fill) {
            if ((rc = ks_tensor_alloc(t))) return rc;
            rc = op->fill(r, i);
            if (rc == KS_ENOENT) ks_tensor_free(t);
        }
        if (rc == KS_ENOENT && s->dtype != KS_F32)
            rc = ks_fail(KS_EINVAL, "%s: %s has no built-in value; give it with --in", op->name, t->name);
        if (rc == KS_ENOENT) rc = ks_fill_pattern(t, r->pattern, r->seed + (uint64_t)s->seed);
        if (rc) return rc;
    }
    return KS_OK;
}

static void json_add(char *buf, size_t n, const char *key, const char *value)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s\"%s\": %s", len > 1 ? ", " : "", key, value);
}

/* The params JSON: every parameter row under its key, then the facts prepare added (a
 * fact replaces a row of the same key). */
static void params_json(ks_run *r)
{
    const ks_op *op = r->op;
    char *buf = r->params_json;
    const size_t n = sizeof r->params_json;
    snprintf(buf, n, "{");
    for (int i = 0; i < op->nparams; ++i) {
        const ks_param_spec *s = &op->params[i];
        char key[KS_NAME_LEN], v[96];
        snprintf(key, sizeof key, "%s", s->key ? s->key : s->name);
        for (char *c = key; *c; ++c)
            if (*c == '-') *c = '_';
        int fact = 0;
        for (int f = 0; f < r->nfacts && !fact; ++f) fact = !strcmp(r->fact_key[f], key);
        if (fact) continue;
        if (s->kind == KS_PARAM_SWITCH) {
            snprintf(v, sizeof v, "%s", r->value[i][0] ? "true" : "false");
        } else if (s->kind == KS_PARAM_CHOICE) {
            const char *c = s->choices;
            for (int64_t k = 0; k < r->value[i][0] && strchr(c, '|'); ++k) c = strchr(c, '|') + 1;
            const char *bar = strchr(c, '|');
            snprintf(v, sizeof v, "\"%.*s\"", bar ? (int)(bar - c) : (int)strlen(c), c);
        } else if (s->kind == KS_PARAM_FLOAT) {
            if (s->axes == 2) snprintf(v, sizeof v, "[%.9g, %.9g]", r->fvalue[i][0], r->fvalue[i][1]);
            else snprintf(v, sizeof v, "%.9g", r->fvalue[i][0]);
        } else if (s->axes == 2) {
            snprintf(v, sizeof v, "[%lld, %lld]", (long long)r->value[i][0], (long long)r->value[i][1]);
        } else {
            snprintf(v, sizeof v, "%lld", (long long)r->value[i][0]);
        }
        json_add(buf, n, key, v);
    }
    for (int f = 0; f < r->nfacts; ++f) json_add(buf, n, r->fact_key[f], r->fact_json[f]);
    const size_t len = strlen(buf);
    snprintf(buf + len, n - len, "}");
}

static size_t tensor_bytes(const ks_tensor *t) { return (size_t)ks_tensor_numel(t) * ks_dtype_size(t->dtype); }

static int zero_outputs(const ks_run *r, void *const *dev)
{
    int rc = KS_OK;
    for (int i = 0; i < r->op->ntensors && !rc; ++i)
        if (r->op->tensors[i].output && !r->given[i] && dev[i])
            rc = ks_cuda_memset(dev[i], 0, tensor_bytes(&r->tensor[i]));
    return rc;
}

/* The operator's kernels once, on ptr (host or device copies): by its launch, or by its
 * kernel rows' sequence, which must have run the traced row when there is a sink. */
static int op_launch(ks_run *r, void *const *ptr, ks_sink *sink)
{
    if (!r->op->run) return r->op->launch(r, ptr, sink);
    ks_exec x = ks_exec_for(r, sink);
    int rc = r->op->run(&x, r, ptr);
    r->rows_ran = x.ran;
    if (!rc && sink && !x.traced_ran)
        rc = ks_fail(KS_EINVAL, "--trace-kernel %s does not run in this mode (kscope list %s)",
                     r->op->kernels[r->traced_row].name, r->op->name);
    return rc;
}

/* The planes' rows x cols of the run's tensors, so that the GPU need not store the
 * (plane, y, x) of a read or write that follows from its offset (ks_pages.h). */
static void sink_dims(const ks_run *r, ks_sink *s)
{
    for (int i = 0; i < r->op->ntensors && i < KS_SINK_DIMS; ++i) {
        const ks_tensor *t = &r->tensor[i];
        if (r->absent[i] || t->ndim < 1 || t->shape[t->ndim - 1] > INT32_MAX) continue;
        const int64_t rows = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
        if (rows > INT32_MAX) continue;
        s->dim_rows[i] = (int32_t)rows;
        s->dim_cols[i] = (int32_t)t->shape[t->ndim - 1];
    }
}

/* One traced or plain launch on the device copies; a traced one whose buffer overflowed
 * is rerun once with a buffer of exactly the events it claimed (capped by the limit). */
static int launch_on_gpu(ks_run *r, void *const *dev)
{
    ks_sink dsink;
    if (!r->sink) {
        int rc = op_launch(r, dev, NULL);
        return rc ? rc : (int)ks_cuda_sync();
    }
    const unsigned long long limit = r->sink->limit;
    unsigned long long cap = limit < KS_GPU_TRACE_START ? limit : KS_GPU_TRACE_START;
    void *sched = NULL;
    const size_t sched_bytes = (size_t)r->schedule_blocks * 4 * sizeof(int64_t);
    if (r->schedule_data) {
        int rc = ks_cuda_malloc(&sched, sched_bytes ? sched_bytes : 1);
        if (!rc) rc = ks_cuda_memset(sched, 0xff, sched_bytes);
        if (rc) return rc;
    }
    for (;;) {
        unsigned long long claimed = 0;
        int rc = ks_cuda_sink_create(&dsink, cap ? cap : 1, r->sink->filter);
        if (rc) {
            ks_cuda_free(sched);
            return rc;
        }
        dsink.schedule = sched, dsink.schedule_blocks = r->schedule_blocks;
        sink_dims(r, &dsink);
        rc = op_launch(r, dev, &dsink);
        if (!rc) rc = ks_cuda_sync();
        if (!rc) rc = ks_cuda_sink_claimed(&dsink, &claimed);
        /* too small: size it (an eighth more, for lanes that draw their columns in another
         * order the second time) and run again. A slot is 64 bytes, at least a record, so
         * 2 * limit slots hold the limit's events with their columns' headers and ends, past
         * the two pages each warp slot in use claims at once (ks_page_claim). */
        const unsigned long long pages = 2ull * KS_PAGE_MAX_WORDS / KS_PAGE_SLOT_WORDS * KS_PAGE_WARP_SLOTS;
        unsigned long long most = limit < (1ull << 57) ? 2 * limit + pages : limit;
        if (most > KS_PAGE_MAX_SLOTS) most = KS_PAGE_MAX_SLOTS; /* the rest is counted as dropped */
        if (!rc && claimed > cap && cap < most) {
            ks_cuda_sink_free(&dsink);
            claimed += claimed / 8;
            cap = claimed < most ? claimed : most;
            r->reruns++;
            if ((rc = zero_outputs(r, dev))) return rc;
            continue;
        }
        if (!rc) rc = ks_cuda_sink_download(&dsink, r->sink);
        if (!rc && sched) rc = ks_cuda_download(r->schedule_data, sched, sched_bytes);
        ks_cuda_sink_free(&dsink);
        ks_cuda_free(sched);
        return rc;
    }
}

/* Inputs uploaded, outputs allocated and zeroed, the launch, outputs downloaded. */
static int run_cuda(ks_run *r)
{
    void *dev[KS_OP_TENSORS] = {0};
    const ks_op *op = r->op;
    int rc = KS_OK;
    if (ks_cuda_device_count() < 1) {
        char why[256] = "";
        if (ks_cuda_device_name(r->device_name, sizeof r->device_name) != KS_OK)
            snprintf(why, sizeof why, ": %s", ks_error_message());
        return ks_fail(KS_ECUDA, "no CUDA device available%s (use --device sim)", why);
    }
    rc = ks_cuda_device_name(r->device_name, sizeof r->device_name);
    for (int i = 0; i < op->ntensors && !rc; ++i) {
        if (r->absent[i]) continue;
        const size_t bytes = tensor_bytes(&r->tensor[i]);
        rc = ks_cuda_malloc(&dev[i], bytes ? bytes : 1);
        if (!rc && (!op->tensors[i].output || r->given[i])) rc = ks_cuda_upload(dev[i], r->tensor[i].data, bytes);
    }
    if (!rc) rc = zero_outputs(r, dev);
    if (!rc) rc = launch_on_gpu(r, dev);
    for (int i = 0; i < op->ntensors && !rc; ++i)
        if (op->tensors[i].output && !r->given[i] && dev[i])
            rc = ks_cuda_download(r->tensor[i].data, dev[i], tensor_bytes(&r->tensor[i]));
    for (int i = 0; i < op->ntensors; ++i) ks_cuda_free(dev[i]);
    return rc;
}

int ks_run_execute(ks_run *r)
{
    const ks_op *op = r->op;
    int rc;
    r->default_threads = op->default_threads;
    r->default_block_cap = op->default_block_cap;
    r->nfacts = 0;
    r->reruns = 0;
    r->rows_ran = 0;
    for (int i = 0; i < op->ntensors; ++i) {
        const ks_tensor *t = &r->tensor[i];
        const ks_tensor_spec *s = &op->tensors[i];
        if (t->data && s->output && !s->may_give) return ks_fail(KS_EINVAL, "%s is an output, not an input", t->name);
        if (t->data && t->dtype != (ks_dtype)s->dtype)
            return ks_fail(KS_EINVAL, "%s must be %s (got %s)", t->name, ks_dtype_long_name((ks_dtype)s->dtype),
                           ks_dtype_long_name(t->dtype));
        r->absent[i] = 0, r->expect_ndim[i] = 0, r->given[i] = t->data != NULL;
    }
    if ((rc = ks_op_check(op))) return rc;
    if (op->kernels && (r->trace_kernel < -1 || r->trace_kernel >= op->nkernels))
        return ks_fail(KS_EINVAL, "%s: no kernel row %d", op->name, r->trace_kernel);
    r->traced_row = -1;
    if ((rc = op->prepare(r)) || (rc = ks_run_sites_check(r))) return rc;
    if (op->kernels) { /* the row that records: as asked, or the mode's default prepare chose */
        if (r->traced_row < 0 || r->traced_row >= op->nkernels || op->kernels[r->traced_row].plain_only ||
            op->kernels[r->traced_row].no_trace)
            return ks_fail(KS_EINVAL, "%s: prepare chose no kernel row to trace", op->name);
        const ks_kernel *k = &op->kernels[r->traced_row];
        if (!r->default_threads) r->default_threads = k->threads; /* a tile row's prepare sets it */
        if (!r->default_block_cap) r->default_block_cap = k->block_cap;
        ks_run_fact(r, "kernel", "\"%s\"", k->name);
        ks_run_fact(r, "body", "\"%s\"", k->body);
    }
    if ((rc = place_tensors(r))) return rc;
    if ((rc = ks_launch_resolve(&r->launch, r->default_threads, r->default_block_cap, r->work_items, &r->threads,
                                &r->blocks)))
        return rc;
    r->block_cap = r->launch.block_cap ? r->launch.block_cap : r->default_block_cap;
    free(r->schedule_data);
    r->schedule_data = NULL, r->schedule_blocks = 0;
    if (r->schedule && r->sink) { /* one line per block of the traced launch, -1 until it ran */
        r->schedule_blocks = r->blocks;
        r->schedule_data = malloc((size_t)(r->blocks ? r->blocks : 1) * 4 * sizeof(int64_t));
        if (!r->schedule_data)
            return ks_fail(KS_ENOMEM, "out of memory for the schedule of %lld blocks", (long long)r->blocks);
        memset(r->schedule_data, 0xff, (size_t)r->blocks * 4 * sizeof(int64_t));
        ks_run_fact(r, "schedule_clock", "\"%s\"", r->device == KS_DEV_CUDA ? "globaltimer_ns" : "virtual");
    }
    params_json(r);
    if (r->device == KS_DEV_CUDA) return run_cuda(r);
    void *ptr[KS_OP_TENSORS] = {0};
    for (int i = 0; i < op->ntensors; ++i) ptr[i] = r->absent[i] ? NULL : r->tensor[i].data;
    snprintf(r->device_name, sizeof r->device_name, "sim");
    if (r->sink) r->sink->schedule = r->schedule_data, r->sink->schedule_blocks = r->schedule_blocks;
    rc = op_launch(r, ptr, r->sink);
    if (r->sink) r->sink->schedule = NULL, r->sink->schedule_blocks = 0;
    return rc;
}
