/* vw_labels.c - label placement without overlaps (see vw_labels.h). */
#include "vw_labels.h"

#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static int inside(vw_rect r, vw_rect b)
{
    return r.x >= b.x && r.y >= b.y && r.x + r.w <= b.x + b.w && r.y + r.h <= b.y + b.h;
}

static int contains(vw_rect r, int x, int y);

/* Whether spot r for label a, which names a cell, lies within f, a region round that cell
 * (a RoI and bin round a sample's corner), its ink (less the clear 3 px rim) all inside:
 * there it names its own part of the step, as the audit takes it (vw_label_in_own_cell).
 * A figure's label (no cell) keeps off every named cell and region. */
static int within_own(const vw_label *a, vw_rect r, vw_rect f)
{
    const vw_rect ink = {.x = r.x + 3, .y = r.y + 3, .w = r.w - 6, .h = r.h - 6};
    return a && a->cell.w > 0 && (f.w > a->cell.w + 2 || f.h > a->cell.h + 2) && contains(f, a->ax, a->ay) &&
           inside(ink, f);
}

/* Whether spot r is free for label a (NULL: any label): inside bounds, off the earlier
 * labels and their leaders, and off avoid but the rectangles round a's anchor that hold
 * r whole (issue 38 D3: 14 s6's "0: clamped" found room only outside its RoI, 3 rows off). */
static int is_free(const vw_label *a, vw_rect r, vw_rect bounds, const vw_label *placed, int np, const vw_rect *avoid,
                   int na)
{
    if (!inside(r, bounds)) return 0;
    for (int i = 0; i < np; ++i) {
        if (vw_rect_overlap(r, placed[i].box)) return 0;
        /* nor on an earlier label's leader (issue 38 D3: 11 s9's "2nd" leader ran through "1st") */
        int x, y;
        vw_label_leader_end(&placed[i], &x, &y);
        if (placed[i].leader && vw_segment_crosses(placed[i].ax, placed[i].ay, x, y, r)) return 0;
    }
    for (int i = 0; i < na; ++i)
        if (vw_rect_overlap(r, avoid[i]) && !within_own(a, r, avoid[i])) return 0;
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

/* Whether a's leader may cross r: the rectangle holds the anchor (its own cell, the
 * region it lies in) or lies within one of a's pass rectangles. Within, not centred in:
 * a named cell whose centre a clamped sample's ring sits on is no part of the ring (issue
 * 38 D3: lesson 14 step 6's leader ran from one clamped corner across the other). */
static int may_cross(const vw_label *a, vw_rect r)
{
    if (contains(r, a->ax, a->ay)) return 1;
    for (int k = 0; k < a->npass; ++k)
        if (inside(r, a->pass[k])) return 1;
    return 0;
}

/* A leader from a's anchor to spot r crosses none of avoid[0..na) but the ones holding
 * the anchor (its own cell, the region it lies in). */
static int leader_clear(const vw_label *a, vw_rect r, const vw_rect *avoid, int na)
{
    vw_label at = *a;
    int x, y;
    at.box = r;
    vw_label_leader_end(&at, &x, &y);
    for (int i = 0; i < na; ++i)
        if (!may_cross(a, avoid[i]) && vw_segment_crosses(a->ax, a->ay, x, y, avoid[i])) return 0;
    return 1;
}

/* ... and crosses none of the labels placed before it (placed[0..np)). */
static int leader_clear_of(const vw_label *a, vw_rect r, const vw_label *placed, int np)
{
    vw_label at = *a;
    int x, y;
    at.box = r;
    vw_label_leader_end(&at, &x, &y);
    for (int i = 0; i < np; ++i)
        if (vw_segment_crosses(a->ax, a->ay, x, y, placed[i].box)) return 0;
    return 1;
}

/* Whether the polyline p[0..n) crosses none of avoid but those holding the anchor or
 * lying in a->pass. */
static int path_clear(const vw_label *a, const int (*p)[2], int n, const vw_rect *avoid, int na)
{
    for (int i = 0; i < na; ++i) {
        const int own = may_cross(a, avoid[i]);
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
                    /* no overshoot past the box: a grid point beyond it on the line the
                     * path came along goes (11 s9's leader ran on above its label) */
                    for (int ax = 0; ax < 2; ++ax)
                        if (p[2][ax] == p[3][ax] && p[3][ax] == p[4][ax]) p[3][0] = p[4][0], p[3][1] = p[4][1];
                    memcpy(pts, p, sizeof p);
                    return VW_LEADER_PTS;
                }
            }
        }
    }
    return 0;
}

/* Squared gap between two rectangles' pixels (0 where they touch or overlap). */
static long long gap2(vw_rect a, vw_rect b)
{
    const long long dx = a.x + a.w <= b.x ? b.x - (a.x + a.w) + 1 : b.x + b.w <= a.x ? a.x - (b.x + b.w) + 1 : 0;
    const long long dy = a.y + a.h <= b.y ? b.y - (a.y + a.h) + 1 : b.y + b.h <= a.y ? a.y - (b.y + b.h) + 1 : 0;
    return dx * dx + dy * dy;
}

int vw_label_reads_as_own(const vw_label *l, int n, int k, vw_rect r)
{
    const vw_rect c = l[k].cell;
    if (c.w <= 0) return 1;
    const long long own = gap2(r, c);
    for (int j = 0; j < n; ++j) {
        const vw_rect o = l[j].cell;
        if (j != k && o.w > 0 && !(o.x == c.x && o.y == c.y && o.w == c.w && o.h == c.h) && gap2(r, o) < own) return 0;
    }
    return 1;
}

int vw_labels_astray(const vw_label *l, int n)
{
    int astray = 0;
    for (int k = 0; k < n; ++k) astray += !vw_label_reads_as_own(l, n, k, l[k].box);
    return astray;
}

/* Squared distance from point (x, y) to the nearest point of r. */
static long long dist2(vw_rect r, int x, int y)
{
    long long dx = x < r.x ? r.x - x : x >= r.x + r.w ? x - (r.x + r.w - 1) : 0;
    long long dy = y < r.y ? r.y - y : y >= r.y + r.h ? y - (r.y + r.h - 1) : 0;
    return dx * dx + dy * dy;
}

/* The spots around cell c, gap pixels off, for a w x h label: its preferred side
 * (dx, dy) first, then the sides nearest it; along a side centred on the cell, then
 * flush with either end. Returns how many (<= 24). */
static int around_cell(const vw_label *a, int gap, vw_rect out[24])
{
    const vw_rect c = a->cell;
    int n = 0;
    for (int want = 2; want >= -2; --want) /* dot product of the spot's side with the preferred */
        for (int sy = -1; sy <= 1; ++sy)
            for (int sx = -1; sx <= 1; ++sx) {
                if ((!sx && !sy) || sx * a->dx + sy * a->dy != want) continue;
                const int xs[3] = {c.x + (c.w - a->w) / 2, c.x, c.x + c.w - a->w};
                const int ys[3] = {c.y + (c.h - a->h) / 2, c.y, c.y + c.h - a->h};
                for (int k = 0; k < (sx && sy ? 1 : 3) && n < 24; ++k)
                    out[n++] = (vw_rect){.x = sx < 0   ? c.x - gap - a->w
                                              : sx > 0 ? c.x + c.w + gap
                                                       : xs[k],
                                         .y = sy < 0   ? c.y - gap - a->h
                                              : sy > 0 ? c.y + c.h + gap
                                                       : ys[k],
                                         .w = a->w,
                                         .h = a->h};
            }
    return n;
}

/* Squared distance between two rectangles (0 when they touch or overlap). */
static long long rect_dist2(vw_rect a, vw_rect b)
{
    const long long dx = a.x + a.w < b.x ? b.x - (a.x + a.w) : b.x + b.w < a.x ? a.x - (b.x + b.w) : 0;
    const long long dy = a.y + a.h < b.y ? b.y - (a.y + a.h) : b.y + b.h < a.y ? a.y - (b.y + b.h) : 0;
    return dx * dx + dy * dy;
}

#define MAX_SPOTS 16384    /* free spots a label's search keeps */
#define MAX_ROUTED 400     /* of them, the nearest tried for a leader along the grid lines */
#define MAX_KEEP 8192      /* rectangles a routed leader keeps off */
#define ASTRAY (1LL << 40) /* a spot nearer another label's cell: after every other */

typedef struct spot {
    long long d;
    vw_rect r;
} spot;

static int by_distance(const void *a, const void *b)
{
    const spot *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->r.y != y->r.y ? (x->r.y > y->r.y) - (x->r.y < y->r.y) : (x->r.x > y->r.x) - (x->r.x < y->r.x);
}

/* A spot for a inside its own cell, its ink (the box less its clear 3 px rim) within the
 * cell and the rim over the cell's edge where need be, the corner away from the sample
 * first: free of the earlier labels and of avoid but the rectangles as big as the cell
 * that hold a's anchor (the cell, named by the step; its number and the anchor's marker
 * stay avoided). Sets a->box. */
static int in_own_cell(vw_label *a, vw_rect bounds, const vw_label *placed, int np, const vw_rect *avoid, int na)
{
    const vw_rect c = a->cell;
    const int rim = 3; /* its clear rim may lie over the cell's edge and the next cell's */
    /* the whole box in the cell first, then its rim over the cell's edge (05 s9's 0.125) */
    for (int out = 0; out <= rim; out += rim) {
        if (a->w - 2 * out > c.w || a->h - 2 * out > c.h) continue;
        const int x0 = c.x - out, x1 = c.x + c.w + out - a->w, y0 = c.y - out, y1 = c.y + c.h + out - a->h;
        /* away from the sample: a corner left of it takes the cell's left side */
        const int xs[3] = {a->dx < 0 ? x0 : x1, a->dx < 0 ? x1 : x0, c.x + (c.w - a->w) / 2};
        const int ys[2] = {a->dy < 0 ? y0 : y1, a->dy < 0 ? y1 : y0};
        for (int j = 0; j < 2; ++j)
            for (int i = 0; i < 3; ++i) {
                const vw_rect r = {.x = xs[i], .y = ys[j], .w = a->w, .h = a->h};
                const vw_rect ink = {.x = r.x + rim, .y = r.y + rim, .w = r.w - 2 * rim, .h = r.h - 2 * rim};
                int ok = inside(ink, bounds);
                for (int p = 0; p < np && ok; ++p) ok = !vw_rect_overlap(ink, placed[p].box);
                for (int v = 0; v < na && ok; ++v) /* the cell itself (a named cell) aside, not its number */
                    ok = (contains(avoid[v], a->ax, a->ay) && avoid[v].w >= c.w - 2 && avoid[v].h >= c.h - 2) ||
                         !vw_rect_overlap(ink, avoid[v]);
                if (ok) {
                    a->box = r;
                    return 1;
                }
            }
    }
    return 0;
}

int vw_place_labels(vw_label *l, int n, vw_rect bounds, const vw_rect *avoid, int navoid, int gap)
{
    int stuck = 0;
    for (int k = 0; k < n; ++k) {
        vw_label *a = &l[k];
        vw_rect near[24] = {{.x = a->ax + gap, .y = a->ay + gap, .w = a->w, .h = a->h},
                            {.x = a->ax + gap, .y = a->ay - gap - a->h, .w = a->w, .h = a->h},
                            {.x = a->ax - gap - a->w, .y = a->ay + gap, .w = a->w, .h = a->h},
                            {.x = a->ax - gap - a->w, .y = a->ay - gap - a->h, .w = a->w, .h = a->h}};
        const int nn = a->cell.w > 0 ? around_cell(a, 1, near) : 4;
        a->leader = 0;
        a->box = near[0];
        int found = 0;
        for (int i = 0; i < nn && !found; ++i) {
            /* beside a cell its clear 3 px rim may touch what it keeps off (the number of the
             * cell it sits in); its text may not */
            const vw_rect ink =
                a->cell.w > 0
                    ? (vw_rect){.x = near[i].x + 2, .y = near[i].y + 2, .w = near[i].w - 4, .h = near[i].h - 4}
                    : near[i];
            if (inside(near[i], bounds) && is_free(NULL, ink, bounds, l, k, avoid, navoid) &&
                vw_label_reads_as_own(l, n, k, near[i]) && leader_clear_of(a, near[i], l, k) &&
                (a->cell.w <= 0 || leader_clear(a, near[i], avoid, navoid)))
                a->box = near[i], found = 1;
        }
        if (found) {
            a->leader = a->cell.w > 0; /* beside its cell: a short line from the anchor's marker */
            continue;
        }
        /* no room beside its cell (its neighbours named, or the panel's edge): in a corner
         * of the cell itself, off its number and marker, where the cell holds it (issue
         * 38 D3: 06 s4's weights at 1024x768 went 2-5 cells off, their corners framed
         * all round by the sample's other corners) */
        if (a->cell.w > 0 && in_own_cell(a, bounds, l, k, avoid, navoid)) {
            a->leader = 0;
            continue;
        }
        /* a grid of spots over the bounds, a quarter label apart: the free one nearest the
         * anchor's cell (its point) that a straight leader reaches; else the nearest a
         * leader along the grid lines reaches; else the nearest */
        const vw_rect from = a->cell.w > 0 ? a->cell : (vw_rect){.x = a->ax, .y = a->ay, .w = 1, .h = 1};
        const int sx = a->w / 4 > 0 ? a->w / 4 : 1, sy = a->h / 2 > 0 ? a->h / 2 : 1;
        static spot free_spots[MAX_SPOTS];
        int nfree = 0;
        long long best = LLONG_MAX;
        for (int y = bounds.y; y + a->h <= bounds.y + bounds.h; y += sy)
            for (int x = bounds.x; x + a->w <= bounds.x + bounds.w; x += sx) {
                const vw_rect r = {.x = x, .y = y, .w = a->w, .h = a->h};
                const long long d = rect_dist2(r, from) + dist2(r, a->ax, a->ay) / 16;
                if (!is_free(a, r, bounds, l, k, avoid, navoid)) continue;
                /* beside another label's cell it reads as that one's (issue 38 D3: 06 s5's
                 * 0.65625 beside corner (1, 0)): the last resort */
                const int own = vw_label_reads_as_own(l, n, k, r);
                if (nfree < MAX_SPOTS) free_spots[nfree++] = (spot){.d = d + (own ? 0 : ASTRAY), .r = r};
                if (!own) continue;
                if (d < best && leader_clear(a, r, avoid, navoid) && leader_clear_of(a, r, l, k)) best = d, a->box = r;
            }
        if (best == LLONG_MAX && nfree) {
            qsort(free_spots, (size_t)nfree, sizeof free_spots[0], by_distance);
            a->box = free_spots[0].r;
            /* a routed leader keeps off the labels placed before it too */
            static vw_rect keep[MAX_KEEP];
            int nk = 0;
            for (int i = 0; i < navoid && nk < MAX_KEEP; ++i) keep[nk++] = avoid[i];
            for (int i = 0; i < k && nk < MAX_KEEP; ++i) keep[nk++] = l[i].box;
            for (int i = 0; i < nfree && i < MAX_ROUTED && a->gcell > 0; ++i) {
                vw_label at = *a;
                int pts[VW_LEADER_PTS][2];
                at.box = free_spots[i].r;
                if (vw_route_leader(&at, keep, nk, a->gx, a->gy, a->gcell, pts)) {
                    a->box = at.box;
                    break;
                }
            }
            best = free_spots[0].d;
        }
        if (best == LLONG_MAX) stuck++;
        else a->leader = 1;
    }
    return stuck;
}

int vw_label_far(const vw_label *l)
{
    const vw_rect b = l->box;
    const int dx = l->ax < b.x ? b.x - l->ax : l->ax > b.x + b.w ? l->ax - b.x - b.w : 0;
    const int dy = l->ay < b.y ? b.y - l->ay : l->ay > b.y + b.h ? l->ay - b.y - b.h : 0;
    return dx > dy ? dx : dy;
}
