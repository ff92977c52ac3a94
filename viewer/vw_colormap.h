/* vw_colormap.h - the heatmap colours (pure): a dark-to-bright ramp whose brightness
 * rises steadily, so the order of values reads without a legend, and marker colours
 * that stand out against every part of it. Colours are 0xRRGGBB. */
#ifndef VW_COLORMAP_H
#define VW_COLORMAP_H

#include <math.h>
#include <stdint.h>

/* t in [0, 1] (clamped; NaN gives VW_COL_NAN). Five stops, linear between them:
 * navy, indigo, magenta, orange, pale yellow. */
static inline uint32_t vw_colormap(double t)
{
    static const uint8_t stops[5][3] = {{16, 12, 48}, {64, 44, 140}, {176, 56, 124}, {242, 128, 56}, {252, 238, 156}};
    if (isnan(t)) return 0xFF00FF;
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    double f = t * 4;
    int i = f >= 4 ? 3 : (int)f;
    double u = f - i;
    uint32_t c = 0;
    for (int k = 0; k < 3; ++k) {
        double v = stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u;
        c = c << 8 | (uint32_t)(v + 0.5);
    }
    return c;
}

/* Where value v falls between lo and hi. A constant plane sits mid-ramp, except one of
 * zeros: that is drawn as zero (the ramp's start), so an untouched output or an all-zero
 * weight plane does not look like a plane of middling values. */
static inline double vw_colormap_t(double v, double lo, double hi)
{
    if (hi > lo) return (v - lo) / (hi - lo);
    return v == 0 ? 0 : 0.5;
}

#define VW_COL_BG 0x18181C
#define VW_COL_PANEL 0x222228
#define VW_COL_TEXT 0xE6E6E6
#define VW_COL_HEAD 0xFFD75A
#define VW_COL_DIM 0x8C8C96
#define VW_COL_NAN 0xFF00FF
#define VW_COL_FOCUS 0x00FFFF   /* the focused event's cell: cyan */
#define VW_COL_ITEM 0xFFFFFF    /* the other cells of the focused work item: white */
#define VW_COL_PADDING 0x50C878 /* padding reads outside the plane: green */
#define VW_COL_LOOKUP 0xFF3CDC  /* the looked-up cell: pink */
#define VW_COL_VALID 0x3CFF64   /* a valid sample corner */
#define VW_COL_INVALID 0xFF3C3C /* a corner outside the tensor (weight blended as zero) */
#define VW_COL_DONE 0x3A7D44
#define VW_COL_RUNNING 0x8A7A2A
#define VW_COL_PENDING 0x34384A
#define VW_COL_IDLE 0x1C1C22
#define VW_COL_CURRENT 0x00FFFF
#define VW_COL_ANSWER 0x9CFF2E /* the cell a question asks about, once answered: lime */
#define VW_COL_INPUT 0x5AA0FF  /* a transposed convolution's input pixel (lesson 12): blue */
#define VW_COL_CLAMP 0xFF9C1A  /* a sample corner clamped onto the last row/column: orange */

#endif
