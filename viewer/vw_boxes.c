#include "vw_boxes.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

static double num(const cJSON *o, const char *key, int i, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsArray(v)) v = cJSON_GetArrayItem(v, i);
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static const float *tensor(const ks_trace *tr, const char *name, int64_t need)
{
    for (int i = 0; i < tr->ntensors; ++i)
        if (!strcmp(tr->tensors[i].name, name) && tr->tensors[i].dtype == KS_F32 &&
            ks_tensor_numel(&tr->tensors[i]) >= need)
            return tr->tensors[i].data;
    return NULL;
}

/* the RoI of work item n: the box as the kernel uses it, and before the shift */
static int roi_boxes(const ks_trace *tr, const cJSON *p, const int32_t *f, vw_box *b, int max)
{
    const int64_t n = f[0], c = f[1];
    const float *rois = tensor(tr, "rois", (n + 1) * 5);
    if (!rois || max < 2 || f[4] < 0) return 0;
    const double scale = num(p, "spatial_scale", 0, 1), aligned = num(p, "aligned", 0, 1);
    const double off = aligned ? 0.5 : 0;
    const double x1 = rois[n * 5 + 1] * scale, y1 = rois[n * 5 + 2] * scale;
    double w = rois[n * 5 + 3] * scale - x1, h = rois[n * 5 + 4] * scale - y1;
    if (!aligned) w = fmax(w, 1), h = fmax(h, 1);
    const int64_t C = (int64_t)num(p, "channels", 0, 1);
    const int plane = (int)(f[4] * C + c);
    b[0] = (vw_box){.y0 = y1 - off, .x0 = x1 - off, .y1 = y1 - off + h, .x1 = x1 - off + w,
                    .rows = (int)num(p, "output_size", 0, 1),
                    .cols = (int)num(p, "output_size", 1, 1), .plane = plane, .dim = 0};
    if (!aligned) return 1;
    b[1] = (vw_box){.y0 = y1, .x0 = x1, .y1 = y1 + h, .x1 = x1 + w, .rows = 1, .cols = 1, .plane = plane,
                    .dim = 1};
    return 2;
}

/* the raw patch of point (b, m): D x D pixels from floor(y) - R, floor(x) - R */
static int patch_box(const ks_trace *tr, const cJSON *p, const int32_t *f, vw_box *b, int max)
{
    const int64_t M = (int64_t)num(p, "num_points", 0, 0), R = (int64_t)num(p, "radius", 0, 0);
    const int64_t bi = f[0], m = f[1];
    const float *xy = tensor(tr, "coords", (bi * M + m + 1) * 2);
    if (!xy || max < 1 || !isfinite(xy[(bi * M + m) * 2]) || !isfinite(xy[(bi * M + m) * 2 + 1])) return 0;
    const double y0 = floor(xy[(bi * M + m) * 2 + 1]) - R, x0 = floor(xy[(bi * M + m) * 2]) - R, D = 2.0 * R + 2;
    /* a pixel covers its centre +- 0.5 */
    b[0] = (vw_box){.y0 = y0 - 0.5, .x0 = x0 - 0.5, .y1 = y0 + D - 0.5, .x1 = x0 + D - 0.5, .rows = (int)D,
                    .cols = (int)D,
                    .plane = (int)(bi * (int64_t)num(p, "channels", 0, 1)), .dim = 0};
    return 1;
}

/* max mode: the argmax the item wrote, as a point */
static int argmax_point(const ks_trace *tr, const vw_index *idx, uint32_t item, int plane, vw_box *b)
{
    const vw_item *it = &idx->items[item];
    double v[2] = {-1, -1};
    int found = 0;
    for (uint32_t k = 0; k < it->count; ++k) {
        const ks_event *e = &tr->events[idx->by_item[it->first + k]];
        if (e->kind != KS_EV_WRITE || e->tensor >= tr->ntensors) continue;
        const char *name = tr->tensors[e->tensor].name;
        const int which = !strcmp(name, "argmax_y") ? 0 : !strcmp(name, "argmax_x") ? 1 : -1;
        if (which >= 0) v[which] = e->u.access.value, found |= 1 << which;
    }
    if (found != 3 || v[0] == -1) return 0;
    *b = (vw_box){.y0 = v[0], .x0 = v[1], .y1 = v[0], .x1 = v[1], .rows = 0, .cols = 0, .plane = plane,
                  .dim = 0};
    return 1;
}

int vw_item_boxes(const ks_trace *tr, const vw_index *idx, uint32_t item, vw_box *boxes, int max)
{
    if (item >= idx->nitems) return 0;
    const ks_event *w = &tr->events[idx->by_item[idx->items[item].first]];
    if (w->kind != KS_EV_WORK) return 0;
    const int roi = !strcmp(tr->op, "roi_align");
    if (!roi && strcmp(tr->op, "patchify")) return 0;
    cJSON *p = cJSON_Parse(tr->params);
    if (!p) return 0;
    /* patchify: the two raw-patch kernels' work items are (b, m, jj, ii) */
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(p, "kernel");
    const int patch = cJSON_IsString(k) && (!strcmp(k->valuestring, "patchify") || !strcmp(k->valuestring, "patchify_backward"));
    int n = 0;
    if (roi) n = roi_boxes(tr, p, w->u.field, boxes, max);
    if (roi && n > 0 && n < max) n += argmax_point(tr, idx, item, boxes[0].plane, &boxes[n]);
    else if (patch) n = patch_box(tr, p, w->u.field, boxes, max);
    cJSON_Delete(p);
    return n;
}
