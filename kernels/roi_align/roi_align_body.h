/* roi_align_body.h - RoIAlign forward and backward, written once (see im2col_body.h for
 * how the plain and traced variants are made). One work item per output element
 * (n, c, ph, pw), pw fastest, as in mmcv and torchvision. */
#ifndef KS_IDX
#error "define KS_IDX (int32_t or int64_t) before including roi_align_body.h"
#endif
#include "../core/ks_probe.h"
#include "roi_align_args.h"
#include "roi_align_sample.h"

/* Forward: avg = sum of the bin's samples / max(grid_h*grid_w, 1); max (mmcv) = the
 * largest sample, strictly greater wins (the first of equal ones), out-of-range samples
 * (0) compete; its (y, x) goes to argmax_y/x (-1 with no sample). */
KS_FN void KS_VARIANT(ks_roi_align_fwd_body)(ks_thread *t, const ks_roi_align_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX n_work = (KS_IDX)a->num_rois * C * PH * PW;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX pw = index % PW;
        const KS_IDX ph = (index / PW) % PH;
        const KS_IDX c = (index / PW / PH) % C;
        const KS_IDX n = index / PW / PH / C;
        ks_roi_box r;
        ks_roi_box_of(a->rois + n * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
        KS_PROBE(ks_probe_work(t, KS_ROI_SITE_WORK, index, iter, n, c, ph, pw, r.b, r.grid_h, r.grid_w, 0));
        KS_PROBE(if (r.b >= 0) ks_roi_probe_boxes(t, &r, a->aligned, PH, PW, KS_ROI_T_INPUT, r.b * C + c));
        const int is_max = a->pool_mode == KS_ROI_MAX;
        float acc = is_max ? -3.402823466e38f : 0.0f, best_y = -1.0f, best_x = -1.0f;
        const float *im = a->input + ((KS_IDX)(r.b < 0 ? 0 : r.b) * C + c) * H * W;
        const KS_IDX gh = r.b < 0 ? 0 : (KS_IDX)r.grid_h, gw = r.b < 0 ? 0 : (KS_IDX)r.grid_w;
        for (KS_IDX iy = 0; iy < gh; ++iy) {
            const float y = ks_roi_coord(r.y1, ph, r.bin_h, iy, gh);
            for (KS_IDX ix = 0; ix < gw; ++ix) {
                const float x = ks_roi_coord(r.x1, pw, r.bin_w, ix, gw);
                ks_roi_sample s;
                const float v = ks_roi_sample_at(H, W, y, x, &s) ? ks_roi_blend(im, W, &s) : 0.0f;
                KS_PROBE(ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_INPUT, (int)(iy * gw + ix),
                                         r.b * C + c, s.y, s.x, s.w[0], s.w[1], s.w[2], s.w[3], v, s.flags));
                if (!is_max) {
                    acc += v;
                } else if (v > acc) {
                    acc = v;
                    best_y = y;
                    best_x = x;
                }
            }
        }
        if (!is_max) {
            const KS_IDX count = gh * gw;
            acc /= (float)(count > 0 ? count : 1);
        } else {
            a->argmax_y[index] = best_y;
            a->argmax_x[index] = best_x;
            KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE_ARGMAX_Y, KS_ROI_T_ARGMAX_Y, 0, index, n * C + c, ph, pw, best_y, 0));
            KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE_ARGMAX_X, KS_ROI_T_ARGMAX_X, 0, index, n * C + c, ph, pw, best_x, 0));
            KS_PROBE(if (best_y != -1.0f) ks_probe_box(t, KS_ROI_SITE_ARGMAX, KS_ROI_T_INPUT, r.b * C + c, best_y, best_x,
                                                      best_y, best_x, 0, 0, 0));
        }
        a->output[index] = acc;
        KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE, KS_ROI_T_OUTPUT, 0, index, n * C + c, ph, pw, acc, 0));
    }
}

/* the four atomic adds of g times the corner weights */
KS_FN void KS_VARIANT(ks_roi_scatter)(ks_thread *t, float *grad, KS_IDX plane, KS_IDX H, KS_IDX W,
                                      const ks_roi_sample *s, float g, int tap)
{
    const int64_t ys[2] = {s->y0, s->y1}, xs[2] = {s->x0, s->x1};
    for (int k = 0; k < 4; ++k) {
        const KS_IDX off = (KS_IDX)ys[k >> 1] * W + (KS_IDX)xs[k & 1];
        const float add = g * s->w[k];
        ks_atomic_add_f32(grad + off, add);
        KS_PROBE(ks_probe_write(t, KS_ROI_SITE_WRITE, KS_ROI_T_GRAD_INPUT, tap, plane * H * W + off,
                                plane, ys[k >> 1], xs[k & 1], add, 1));
    }
}

/* Backward: avg spreads grad/count over every in-range sample's corners; max sends the
 * whole gradient to the corners of the argmax sample. Atomic adds: bins overlap. */
KS_FN void KS_VARIANT(ks_roi_align_bwd_body)(ks_thread *t, const ks_roi_align_args *a)
{
    const KS_IDX C = (KS_IDX)a->channels, H = (KS_IDX)a->height, W = (KS_IDX)a->width;
    const KS_IDX PH = (KS_IDX)a->pooled_h, PW = (KS_IDX)a->pooled_w;
    const KS_IDX n_work = (KS_IDX)a->num_rois * C * PH * PW;
    KS_IDX index = (KS_IDX)t->block_idx.x * (KS_IDX)t->block_dim.x + (KS_IDX)t->thread_idx.x;
    const KS_IDX grid_stride = (KS_IDX)t->grid_dim.x * (KS_IDX)t->block_dim.x;
    for (uint32_t iter = 0; index < n_work; index += grid_stride, ++iter) {
        const KS_IDX pw = index % PW;
        const KS_IDX ph = (index / PW) % PH;
        const KS_IDX c = (index / PW / PH) % C;
        const KS_IDX n = index / PW / PH / C;
        ks_roi_box r;
        ks_roi_box_of(a->rois + n * 5, a->batch, a->spatial_scale, a->aligned, PH, PW, a->sampling_ratio, &r);
        KS_PROBE(ks_probe_work(t, KS_ROI_SITE_WORK, index, iter, n, c, ph, pw, r.b, r.grid_h, r.grid_w, 0));
        KS_PROBE(if (r.b >= 0) ks_roi_probe_boxes(t, &r, a->aligned, PH, PW, KS_ROI_T_GRAD_INPUT, r.b * C + c));
        if (r.b < 0) continue;
        const KS_IDX plane = (KS_IDX)r.b * C + c;
        float *grad = a->grad_input + plane * H * W;
        const float g = a->grad_output[index];
        if (a->pool_mode == KS_ROI_MAX) {
            const float y = a->argmax_y[index], x = a->argmax_x[index];
            ks_roi_sample s;
            if (y != -1.0f && ks_roi_sample_at(H, W, y, x, &s)) {
                KS_PROBE(ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_GRAD_INPUT, 0, plane, s.y, s.x, s.w[0],
                                         s.w[1], s.w[2], s.w[3], g, s.flags));
                KS_VARIANT(ks_roi_scatter)(t, grad, plane, H, W, &s, g, 0);
            }
            continue;
        }
        const KS_IDX gh = (KS_IDX)r.grid_h, gw = (KS_IDX)r.grid_w;
        const float share = g / (float)(gh * gw > 0 ? gh * gw : 1);
        for (KS_IDX iy = 0; iy < gh; ++iy) {
            const float y = ks_roi_coord(r.y1, ph, r.bin_h, iy, gh);
            for (KS_IDX ix = 0; ix < gw; ++ix) {
                const float x = ks_roi_coord(r.x1, pw, r.bin_w, ix, gw);
                ks_roi_sample s;
                const int in = ks_roi_sample_at(H, W, y, x, &s);
                KS_PROBE(ks_probe_sample(t, KS_ROI_SITE_SAMPLE, KS_ROI_T_GRAD_INPUT, (int)(iy * gw + ix), plane,
                                         s.y, s.x, s.w[0], s.w[1], s.w[2], s.w[3], share, s.flags));
                if (in) KS_VARIANT(ks_roi_scatter)(t, grad, plane, H, W, &s, share, (int)(iy * gw + ix));
            }
        }
    }
}
