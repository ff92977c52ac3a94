/* vw_labels.c - label placement without overlaps (see vw_labels.h). */
#include "vw_labels.h"

#include <limits.h>

static int inside(vw_rect r, vw_rect b)
{
    return r.x >= b.x && r.y >= b.y && r.x + r.w <= b.x + b.w && r.y + r.h <= b.y + b.h;
}

static int is_free(vw_rect r, vw_rect bounds, const vw_label *placed, int np, const vw_rect *avoid, int na)
{
    if (!inside(r, bounds)) return 0;
    for (int i = 0; i < np; ++i)
        if (vw_rect_overlap(r, placed[i].box)) return 0;
    for (int i = 0; i < na; ++i)
        if (vw_rect_overlap(r, avoid[i])) return 0;
    return 1;
}

/* Squared distance from point (x, y) to the nearest point of r. */
static long long dist2(vw_rect r, int x, int y)
{
    long long dx = x < r.x ? r.x - x : x >= r.x + r.w ? x - (r.x + r.w - 1) : 0;
    long long dy = y < r.y ? r.y - y : y >= r.y + r.h ? y - (r.y + r.h - 1) : 0;
    return dx * dx + dy * dy;
}

int vw_place_labels(vw_label *l, int n, vw_rect bounds, const vw_rect *avoid, int navoid, int gap)
{
    int stuck = 0;
    for (int k = 0; k < n; ++k) {
        vw_label *a = &l[k];
        const vw_rect near[4] = {{.x = a->ax + gap, .y = a->ay + gap, .w = a->w, .h = a->h},
                                 {.x = a->ax + gap, .y = a->ay - gap - a->h, .w = a->w, .h = a->h},
                                 {.x = a->ax - gap - a->w, .y = a->ay + gap, .w = a->w, .h = a->h},
                                 {.x = a->ax - gap - a->w, .y = a->ay - gap - a->h, .w = a->w, .h = a->h}};
        a->leader = 0;
        a->box = near[0];
        int found = 0;
        for (int i = 0; i < 4 && !found; ++i)
            if (is_free(near[i], bounds, l, k, avoid, navoid)) a->box = near[i], found = 1;
        if (found) continue;
        /* a grid of spots over the bounds, half a label apart: the free one nearest the anchor */
        const int sx = a->w / 2 > 0 ? a->w / 2 : 1, sy = a->h / 2 > 0 ? a->h / 2 : 1;
        long long best = LLONG_MAX;
        for (int y = bounds.y; y + a->h <= bounds.y + bounds.h; y += sy)
            for (int x = bounds.x; x + a->w <= bounds.x + bounds.w; x += sx) {
                const vw_rect r = {.x = x, .y = y, .w = a->w, .h = a->h};
                const long long d = dist2(r, a->ax, a->ay);
                if (d < best && is_free(r, bounds, l, k, avoid, navoid)) best = d, a->box = r;
            }
        if (best == LLONG_MAX) stuck++;
        else a->leader = 1;
    }
    return stuck;
}
