/* golden_util.h - the golden data in tests/golden (made by make_golden.py on a machine
 * with torch): a tensor by prefix, id and name, a listing's JSON, its fields, and the
 * deformable-convolution parameters of a listed geometry. */
#ifndef KS_GOLDEN_UTIL_H
#define KS_GOLDEN_UTIL_H

#include <cJSON.h>
#include <stdio.h>

#include "../kernels/deform_conv/deform_body.h"
#include "../trace/npy.h"
#include "test_util.h"

static inline ks_tensor load_prefixed(char prefix, int id, const char *what)
{
    char path[512];
    ks_tensor t;
    snprintf(path, sizeof path, "%s/tests/golden/%c%d_%s.npy", KS_SOURCE_DIR, prefix, id, what);
    ck_assert_msg(ks_npy_read(path, &t) == KS_OK, "%s", ks_error_message());
    return t;
}

static inline cJSON *listing(const char *name)
{
    char path[512];
    static char text[65536];
    snprintf(path, sizeof path, "%s/tests/golden/%s", KS_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "missing %s: run make_golden.py where torch exists", path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *root = cJSON_Parse(text);
    ck_assert_ptr_nonnull(root);
    return root;
}

static inline int64_t item(const cJSON *o, const char *key, int i)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    ck_assert_ptr_nonnull(v);
    return (int64_t)(cJSON_IsArray(v) ? cJSON_GetArrayItem(v, i)->valuedouble : v->valuedouble);
}

/* the parameters of a geometry of deform.json (torchvision semantics, mask as listed,
 * bias) */
static inline ks_deform_params golden_deform_params(const cJSON *g)
{
    const int mask = cJSON_IsTrue(cJSON_GetObjectItem(g, "mask"));
    ks_deform_params p = {.batch = item(g, "batch", 0),
                          .channels = item(g, "channels", 0),
                          .height = item(g, "input_size", 0),
                          .width = item(g, "input_size", 1),
                          .out_channels = item(g, "out_channels", 0),
                          .kernel_h = item(g, "kernel_size", 0),
                          .kernel_w = item(g, "kernel_size", 1),
                          .pad_h = item(g, "padding", 0),
                          .pad_w = item(g, "padding", 1),
                          .stride_h = item(g, "stride", 0),
                          .stride_w = item(g, "stride", 1),
                          .dilation_h = item(g, "dilation", 0),
                          .dilation_w = item(g, "dilation", 1),
                          .groups = item(g, "groups", 0),
                          .offset_groups = item(g, "offset_groups", 0),
                          .im2col_step = 32,
                          .use_mask = mask,
                          .use_bias = 1,
                          .semantics = KS_DEFORM_TORCHVISION};
    return p;
}

#endif
