/* run_params.c - a traced run set up again from its trace (see run_params.h). */
#include "run_params.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/core/ks_error.h"

void ks_param_key(const ks_param_spec *s, char *key, size_t n)
{
    snprintf(key, n, "%s", s->key ? s->key : s->name);
    for (char *c = key; *c; ++c)
        if (*c == '-') *c = '_';
}

/* A params-JSON value as the flag would spell it: true -> "on", [3, 2] -> "3,2", a word
 * as it is. -1 for anything else (null, objects, longer arrays). */
static int json_text(const cJSON *c, char *buf, size_t n)
{
    if (cJSON_IsBool(c)) return snprintf(buf, n, "%s", cJSON_IsTrue(c) ? "on" : "off") < 0 ? -1 : 0;
    if (cJSON_IsString(c)) return snprintf(buf, n, "%s", c->valuestring) < 0 ? -1 : 0;
    if (cJSON_IsNumber(c)) return snprintf(buf, n, "%.17g", c->valuedouble) < 0 ? -1 : 0;
    if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) < 1 || cJSON_GetArraySize(c) > KS_PARAM_AXES) return -1;
    buf[0] = '\0';
    for (const cJSON *v = c->child; v; v = v->next) {
        if (!cJSON_IsNumber(v)) return -1;
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%.17g", len ? "," : "", v->valuedouble);
    }
    return 0;
}

/* The threads per block the operator gives a launch with r's parameters (its prepare on
 * a scratch copy: nothing is run or allocated), or 0 when prepare refuses them. */
static int default_threads_of(const ks_run *r)
{
    ks_run *tmp = malloc(sizeof *tmp);
    if (!tmp) return 0;
    *tmp = *r;
    tmp->default_threads = r->op->default_threads;
    tmp->default_block_cap = r->op->default_block_cap;
    tmp->traced_row = -1;
    int threads = r->op->prepare(tmp) == KS_OK ? tmp->default_threads : 0;
    if (!threads && r->op->kernels && tmp->traced_row >= 0) threads = r->op->kernels[tmp->traced_row].threads;
    ks_run_free(tmp);
    free(tmp);
    ks_error_clear();
    return threads;
}

int ks_run_from_trace(ks_run *r, const ks_trace *tr)
{
    const ks_op *op = ks_op_find(tr->op);
    if (!op) return ks_fail(KS_ENOENT, "this build has no operator '%s' to run again (kscope list)", tr->op);
    ks_run_init(r, op);
    cJSON *root = cJSON_Parse(tr->params[0] ? tr->params : "{}");
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ks_fail(KS_EFORMAT, "%s: the trace's params are not a JSON object", tr->op);
    }
    for (int p = 0; p < op->nparams; ++p) {
        char key[KS_NAME_LEN], text[160];
        ks_param_key(&op->params[p], key, sizeof key);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
        if (!v || json_text(v, text, sizeof text)) continue;
        int64_t value[KS_PARAM_AXES];
        double fvalue[2];
        memcpy(value, r->value[p], sizeof value);
        memcpy(fvalue, r->fvalue[p], sizeof fvalue);
        if (ks_run_set(r, op->params[p].name, text) != KS_OK) { /* refused: the row keeps its default */
            memcpy(r->value[p], value, sizeof value);
            memcpy(r->fvalue[p], fvalue, sizeof fvalue);
        }
    }
    /* the kernel row it recorded (an operator with kernel rows writes "kernel": its name) */
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel");
    if (op->nkernels && cJSON_IsString(k) && ks_run_set(r, "trace-kernel", k->valuestring) != KS_OK)
        r->trace_kernel = -1;
    cJSON_Delete(root);
    /* a trace of the operator's default launch re-runs with the default of the new
     * parameters (gemm_tiled's block is its tile: --tile 32 needs 1024 threads); any other
     * thread count is the user's choice and stays */
    r->launch.threads = tr->threads == default_threads_of(r) ? 0 : tr->threads;
    r->launch.block_cap = tr->block_cap > 0 ? tr->block_cap : -1;
    r->device = KS_DEV_SIM;
    r->pattern = KS_PAT_ARANGE;
    return KS_OK;
}

void ks_param_choice_word(const ks_param_spec *s, int64_t k, char *buf, size_t n)
{
    const char *c = s->choices ? s->choices : "";
    for (int64_t i = 0; i < k && strchr(c, '|'); ++i) c = strchr(c, '|') + 1;
    const char *bar = strchr(c, '|');
    snprintf(buf, n, "%.*s", bar ? (int)(bar - c) : (int)strlen(c), c);
}

void ks_run_param_text(const ks_run *r, int p, char *buf, size_t n)
{
    const ks_param_spec *s = &r->op->params[p];
    const int64_t *v = r->value[p];
    if (s->kind == KS_PARAM_SWITCH) {
        snprintf(buf, n, "%s", v[0] ? "on" : "off");
    } else if (s->kind == KS_PARAM_CHOICE) {
        ks_param_choice_word(s, v[0], buf, n);
    } else if (s->kind == KS_PARAM_FLOAT) {
        if (s->axes == 2) snprintf(buf, n, "%.9g,%.9g", r->fvalue[p][0], r->fvalue[p][1]);
        else snprintf(buf, n, "%.9g", r->fvalue[p][0]);
    } else if (s->axes == 3 && r->nvalues[p] == 3) {
        snprintf(buf, n, "%lld,%lld,%lld", (long long)v[0], (long long)v[1], (long long)v[2]);
    } else if (s->axes == 2 || (s->axes == 3 && r->nvalues[p] == 2)) {
        snprintf(buf, n, "%lld,%lld", (long long)v[0], (long long)v[1]);
    } else {
        snprintf(buf, n, "%lld", (long long)v[0]);
    }
}

int ks_run_give_from_trace(ks_run *r, int t_op, const ks_trace *tr)
{
    const ks_tensor_spec *spec = &r->op->tensors[t_op];
    const int t = ks_trace_tensor(tr, spec->name);
    if (t < 0 || tr->roles[t] != KS_ROLE_INPUT || tr->tensors[t].dtype != (ks_dtype)spec->dtype || !tr->tensors[t].data)
        return KS_ENOENT;
    ks_tensor *x = &r->tensor[t_op];
    ks_tensor_free(x);
    *x = tr->tensors[t];
    x->data = NULL;
    int rc = ks_tensor_alloc(x);
    if (rc) return rc;
    memcpy(x->data, tr->tensors[t].data, (size_t)ks_tensor_numel(x) * ks_dtype_size(x->dtype));
    return KS_OK;
}
