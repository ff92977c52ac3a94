/* vw_labels.c - label placement without overlaps (see vw_labels.h). */
#include "vw_labels.h"

#include <limits.h>
#include <math.h>
#include <string.h>

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

int vw_segment_crosses(int x0, int y0, int x1, int y1, vw_rect r)
{
    /* Liang-Barsky against r less a 2-pixel rim: a line along an edge (a grid line, its
     * rounding either way) does not cross */
    const double lo[2] = {r.x + 2, r.y + 2}, hi[2] = {r.x + r.w - 3, r.y + r.h - 3};
    const double p0[2] = {x0, y0}, dp[2] = {x1 - x0, y1 - y0};
    double t0 = 0, t1 = 1;
    if (hi[0] < lo[0] || hi[1] < lo[1]) return 0;
    for (int a = 0; a < 2; ++a) {
        if (dp[a] == 0) {
            if (p0[a] < lo[a] || p0[a] > hi[a]) return 0;
            continue;
        }
        double ta = (lo[a] - p0[a]) / dp[a], tb = (hi[a] - p0[a]) / dp[a];
        if (ta > tb) {
            const double t = ta;
            ta = tb, tb = t;
        }
        if (ta > t0) t0 = ta;
        if (tb < t1) t1 = tb;
        if (t0 > t1) return 0;
    }
    return 1;
}

void vw_label_leader_end(const vw_label *a, int *x, int *y)
{
    const vw_rect b = a->box;
    *x = a->ax < b.x ? b.x : a->ax >= b.x + b.w ? b.x + b.w - 1 : a->ax;
    *y = a->ay < b.y ? b.y : a->ay >= b.y + b.h ? b.y + b.h - 1 : a->ay;
}

static int contains(vw_rect r, int x, int y) { return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h; }

/* A leader from a's anchor to spot r crosses none of avoid[0..na) but the ones holding
 * the anchor (its own cell, the region it lies in). */
static int leader_clear(const vw_label *a, vw_rect r, const vw_rect *avoid, int na)
{
    vw_label at = *a;
    int x, y;
    at.box = r;
    vw_label_leader_end(&at, &x, &y);
    for (int i = 0; i < na; ++i) {
        const int cx = avoid[i].x + avoid[i].w / 2, cy = avoid[i].y + avoid[i].h / 2;
        int own = contains(avoid[i], a->ax, a->ay);
        for (int k = 0; k < a->npass && !own; ++k) own = contains(a->pass[k], cx, cy);
        if (!own && vw_segment_crosses(a->ax, a->ay, x, y, avoid[i])) return 0;
    }
    return 1;
}

/* Whether the polyline p[0..n) crosses none of avoid but those holding the anchor or
 * lying in a->pass. */
static int path_clear(const vw_label *a, const int (*p)[2], int n, const vw_rect *avoid, int na)
{
    for (int i = 0; i < na; ++i) {
        const int cx = avoid[i].x + avoid[i].w / 2, cy = avoid[i].y + avoid[i].h / 2;
        int own = contains(avoid[i], a->ax, a->ay);
        for (int k = 0; k < a->npass && !own; ++k) own = contains(a->pass[k], cx, cy);
        for (int j = 0; j + 1 < n && !own; ++j)
            if (vw_segment_crosses(p[j][0], p[j][1], p[j + 1][0], p[j + 1][1], avoid[i])) return 0;
    }
    return 1;
}

int vw_route_leader(const vw_label *a, const vw_rect *avoid, int na, double ox, double oy, double cell,
                    int pts[VW_LEADER_PTS][2])
{
    int tx, ty;
    vw_label_leader_end(a, &tx, &ty);
    pts[0][0] = a->ax, pts[0][1] = a->ay, pts[1][0] = tx, pts[1][1] = ty;
    if (path_clear(a, (const int(*)[2])pts, 2, avoid, na) || cell < 4) return 2;
    /* the grid point nearest the box's end of the leader, and the anchor cell's corners */
    const double gx = floor((a->ax - ox) / cell), gy = floor((a->ay - oy) / cell);
    /* the path ends at the grid point nearest the leader's end or one of the box's corners */
    const vw_rect b = a->box;
    const int ends[5][2] = {{tx, ty}, {b.x, b.y}, {b.x + b.w, b.y}, {b.x, b.y + b.h}, {b.x + b.w, b.y + b.h}};
    for (int e = 0; e < 5; ++e) {
        const int ex = (int)lround(ox + cell * lround((ends[e][0] - ox) / cell));
        const int ey = (int)lround(oy + cell * lround((ends[e][1] - oy) / cell));
        int bx = ex < b.x ? b.x : ex >= b.x + b.w ? b.x + b.w - 1 : ex; /* then into the box */
        int by = ey < b.y ? b.y : ey >= b.y + b.h ? b.y + b.h - 1 : ey;
        for (int corner = 0; corner < 4; ++corner) {
            const int vx = (int)lround(ox + cell * (gx + (corner & 1))),
                      vy = (int)lround(oy + cell * (gy + (corner >> 1)));
            for (int rows_first = 0; rows_first < 2; ++rows_first) {
                int p[VW_LEADER_PTS][2] = {{a->ax, a->ay},
                                           {vx, vy},
                                           {rows_first ? vx : ex, rows_first ? ey : vy},
                                           {ex, ey},
                                           {bx, by}};
                if (path_clear(a, (const int(*)[2])p, VW_LEADER_PTS, avoid, na)) {
                    memcpy(pts, p, sizeof p);
                    return VW_LEADER_PTS;
                }
            }
        }
    }
    return 0;
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
        for (int any = 0; any < 2 && best == LLONG_MAX; ++any) /* a clear leader first */
            for (int y = bounds.y; y + a->h <= bounds.y + bounds.h; y += sy)
                for (int x = bounds.x; x + a->w <= bounds.x + bounds.w; x += sx) {
                    const vw_rect r = {.x = x, .y = y, .w = a->w, .h = a->h};
                    const long long d = dist2(r, a->ax, a->ay);
                    if (d < best && is_free(r, bounds, l, k, avoid, navoid) &&
                        (any || leader_clear(a, r, avoid, navoid)))
                        best = d, a->box = r;
                }
        if (best == LLONG_MAX) stuck++;
        else a->leader = 1;
    }
    return stuck;
}
