/* ks_walk.h - a thread's position in a grid-stride loop without dividing per item.
 *
 * Items are numbered ((d3*S2 + d2)*S1 + d1)*S0 + d0. ks_walk_start works out the digits
 * of the thread's first item, the first ks_walk_step those of the grid stride (the only
 * divisions, once per thread, and none for a thread with one item); each step adds the
 * stride's digits with carries (each digit and each stride digit is below its size, so
 * one subtraction suffices). Integer division costs tens of instructions: more than a
 * whole item of im2col.
 *
 * One version per body variant, with that variant's index type, so a body writes
 *   KS_VARIANT(ks_walk) at;
 *   KS_VARIANT(ks_walk_start)(&at, index, grid_stride, S0, S1, S2);
 *   ... at.d[0] .. at.d[3] ...;  KS_VARIANT(ks_walk_step)(&at);
 */
#ifndef KS_WALK_H
#define KS_WALK_H

#include <stdint.h>

#include "ks_core.h"

#define KS_WALK_DEFINE(sfx, T)                                                               \
    typedef struct ks_walk_##sfx {                                                           \
        T d[4], g[4], size[3]; /* g[0] < 0: g[3] still holds the whole stride */             \
    } ks_walk_##sfx;                                                                         \
    KS_FN void ks_walk_start_##sfx(ks_walk_##sfx *w, T index, T stride, T S0, T S1, T S2)    \
    {                                                                                        \
        w->size[0] = S0, w->size[1] = S1, w->size[2] = S2;                                   \
        for (int k = 0; k < 3; ++k) w->d[k] = index % w->size[k], index /= w->size[k];       \
        w->d[3] = index, w->g[0] = -1, w->g[3] = stride;                                     \
    }                                                                                        \
    KS_FN void ks_walk_step_##sfx(ks_walk_##sfx *w)                                          \
    {                                                                                        \
        if (w->g[0] < 0) {                                                                   \
            T stride = w->g[3];                                                              \
            for (int k = 0; k < 3; ++k) w->g[k] = stride % w->size[k], stride /= w->size[k]; \
            w->g[3] = stride;                                                                \
        }                                                                                    \
        T carry = 0;                                                                         \
        for (int k = 0; k < 3; ++k) {                                                        \
            w->d[k] += w->g[k] + carry;                                                      \
            carry = w->d[k] >= w->size[k];                                                   \
            if (carry) w->d[k] -= w->size[k];                                                \
        }                                                                                    \
        w->d[3] += w->g[3] + carry;                                                          \
    }

KS_WALK_DEFINE(plain, int64_t)
KS_WALK_DEFINE(traced, int64_t)
KS_WALK_DEFINE(plain32, int32_t)
KS_WALK_DEFINE(traced32, int32_t)

#endif
