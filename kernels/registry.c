#include "registry.h"

#include <string.h>

#include "core/ks_error.h"
#include "conv2d/conv2d_op.h"
#include "deform_conv/deform_op.h"
#include "patchify/patchify_op.h"
#include "roi_align/roi_align_op.h"
#include "im2col/im2col_op.h"

static const ks_op *const table[] = {
    &ks_op_im2col,
    &ks_op_col2im,
    &ks_op_conv2d,
    &ks_op_deform_im2col,
    &ks_op_deform_conv,
    &ks_op_roi_align,
    &ks_op_patchify,
};

int ks_op_count(void)
{
    return (int)(sizeof table / sizeof table[0]);
}

const ks_op *ks_op_at(int i)
{
    return i >= 0 && i < ks_op_count() ? table[i] : NULL;
}

const ks_op *ks_op_find(const char *name)
{
    for (int i = 0; i < ks_op_count(); ++i)
        if (!strcmp(table[i]->name, name)) return table[i];
    return NULL;
}

int ks_op_param(const ks_op *op, const char *name)
{
    for (int i = 0; i < op->nparams; ++i)
        if (!strcmp(op->params[i].name, name)) return i;
    return -1;
}

int ks_op_tensor(const ks_op *op, const char *name)
{
    for (int i = 0; i < op->ntensors; ++i)
        if (!strcmp(op->tensors[i].name, name)) return i;
    return -1;
}

void ks_run_init(ks_run *r, const ks_op *op)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < op->nparams; ++i) {
        r->value[i][0] = op->params[i].def[0];
        r->value[i][1] = op->params[i].def[1];
        r->fvalue[i][0] = op->params[i].fdef[0];
        r->fvalue[i][1] = op->params[i].fdef[1];
    }
    for (int i = 0; i < op->ntensors; ++i)
        strncpy(r->tensor[i].name, op->tensors[i].name, KS_NAME_LEN - 1);
}

int ks_run_agree(const ks_run *r, int param, int axis, const char *flag, int64_t got, const char *tensor)
{
    if (r->set[param] && r->value[param][axis] != got)
        return ks_fail(KS_EINVAL, "--%s %lld disagrees with the %s tensor given (%lld)", flag,
                       (long long)r->value[param][axis], tensor, (long long)got);
    return KS_OK;
}

int ks_param_choice(const ks_param_spec *s, const char *word)
{
    const char *c = s->choices;
    size_t n = strlen(word);
    for (int k = 0; c && *c; ++k) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, word, n)) return k;
        if (!bar) break;
        c = bar + 1;
    }
    return -1;
}

void ks_run_absent(ks_run *r, int i)
{
    ks_tensor_free(&r->tensor[i]);
    r->tensor[i].dtype = KS_F32;
    r->tensor[i].ndim = 1;
    r->tensor[i].shape[0] = 0;
    r->absent[i] = 1;
}

void ks_run_free(ks_run *r)
{
    for (int i = 0; i < KS_OP_TENSORS; ++i) ks_tensor_free(&r->tensor[i]);
}

/* splitmix64: a tiny, well-mixed generator, so patterns are the same everywhere */
static uint64_t next(uint64_t *s);

float ks_rand_unit(uint64_t *state)
{
    return (float)((next(state) >> 40) * (1.0 / 16777216.0));
}

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int ks_fill_pattern(ks_tensor *t, int pattern, uint64_t seed)
{
    int rc = ks_tensor_alloc(t);
    if (rc) return rc;
    const int64_t n = ks_tensor_numel(t);
    float *d = t->data;
    uint64_t s = seed;
    for (int64_t i = 0; i < n; ++i) {
        if (pattern == KS_PAT_ONES)
            d[i] = 1.0f;
        else if (pattern == KS_PAT_RANDOM)
            d[i] = ks_rand_unit(&s) * 2.0f - 1.0f;
        else
            d[i] = (float)(i + 1); /* 1, 2, 3, ...: every value names its position */
    }
    return KS_OK;
}
