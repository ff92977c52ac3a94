/* vw_draw.h - draws one frame of the viewer from its state (reads vw_state, never
 * changes it). Heatmap and grid textures are cached and rebuilt only when what they show
 * changes (tensor, plane, mode, order, panel size), so playing costs a few copies and
 * outlines per frame. */
#ifndef VW_DRAW_H
#define VW_DRAW_H

#include <SDL.h>

#include "vw_font.h"
#include "vw_record.h"
#include "vw_state.h"
#include "vw_warp.h"

typedef struct vw_heat_cache {
    SDL_Texture *tex;
    int tensor, indexed, w, h;
    vw_mode mode;
    int64_t plane;
    double lo, hi; /* the colour range: values of the non-empty cells */
    double ramp0;  /* where on the ramp lo sits: 0, or 0.25 with empty cells so the lowest
                       value stays apart from the background */
    int64_t empty; /* empty cells of the plane (negative integers, vw_cell_empty) */
    int64_t nan;   /* texels in view drawn in VW_COL_NAN: the legend names the colour */
    vw_rect area;
    int64_t wy0, wy1, wx0, wx1; /* the cells in view: the texture covers these */
    double cell;
    int pictures; /* the state's picture switch it was built with */
    int picture;  /* 1 or 3: drawn as a grey or RGB picture, not through the ramp */
    /* a window's colour range is the whole plane's: kept for (tensor, plane, mode, index)
     * so a window that follows the focus does not scan the plane every frame (dropped
     * with the textures when the trace or its live run changes) */
    int range_ok, range_tensor, range_indexed, range_hide;
    vw_mode range_mode;
    int64_t range_plane, range_empty;
    double range_lo, range_hi;
    int64_t tile_key; /* the shared tile's block and phase it shows (-1: not the tile) */
    int hide;         /* built with padding taps' entries as ? (vw_padding_hidden): grey, out of the range */
    /* the texture's texels as built (RGB), kept where there are at most 20000, so the
     * record can say what colour a cell was painted (NULL: not kept) */
    uint32_t *texels;
    int ntx, nty;
} vw_heat_cache;

/* The trace's shared tensor as one block leaves a barrier phase (issue 38 D8): the value
 * each element last got written in the block at a phase <= `phase`, NaN where nothing
 * wrote it yet (the simulator's poison). A heatmap of the shared tensor shows these at
 * the focused event's block and phase instead of the tensor's stored zeros (a trace of
 * up to 16 M events, read whole: the values come from a scan of its events). */
typedef struct vw_tile_values {
    const ks_trace *tr;
    int tensor; /* -1: none */
    uint32_t block;
    int64_t phase, n;
    int64_t cut;   /* VW_FIGURE_AS_READ: the event the tile is taken before (-1: the phase's end) */
    uint32_t item; /* and the work item whose read that is */
    float *v;
} vw_tile_values;

typedef struct vw_grid_cache {
    vw_order order;
    int indexed;
    vw_grid g;
    uint64_t *first, *last; /* per screen cell: positions of its items in the order */
    uint32_t *pixels;
    SDL_Texture *tex;
} vw_grid_cache;

#define VW_VALUE_FONTS 3 /* the sizes cell values and labels print at: 1, 4/5, 3/5 of the text */

typedef struct vw_draw {
    SDL_Renderer *r;
    vw_font font;
    int text_px;                       /* the font's size */
    vw_font small[VW_VALUE_FONTS - 1]; /* 4/5 and 3/5 of it (18 px beside 30 at 1920x1080) */
    int small_px[VW_VALUE_FONTS - 1];
    vw_record rec; /* what the last frame drew where (vw_record.h) */
    vw_heat_cache heat[2];
    vw_grid_cache grid;
    vw_tile_values tile;
    vw_warp warp; /* the warp strip's request, rebuilt when the focused event changes */
    int warp_built;
    unsigned live_gen;        /* the live re-run the caches were built for (vw_draw_live.c) */
    const ks_trace *cache_tr; /* and the trace (a lesson's slides switch runs) */
    /* a heatmap texture over at least this many cells is built on two threads (0: the
     * default, 4 M cells; the tests set 1 to compare both ways on small planes) */
    int64_t split_cells;
    /* where a slide's legend on the header line starts (vw_layout.legend_top): after the
     * header as drawn */
    int legend_x[2];
    /* the cells in view of each heatmap as drawn (whole cells on a slide): the item's
     * outlines go only on them */
    vw_rect cells_map[2];
    /* the room the layout left of each plane for a sample's weights key (vw_layout.key_w) */
    int key_w[2];
} vw_draw;

/* Text size in points; returns 0 or -1 with ks_error_message() set. */
int vw_draw_init(vw_draw *d, SDL_Renderer *r, int text_size);
/* Reopens the font at another size (the window was resized); 0, or -1 keeping the old. */
int vw_draw_set_text(vw_draw *d, int text_size);
void vw_draw_free(vw_draw *d);
/* Value font k (0: the text's own, then smaller) and its size in pixels per em. */
const vw_font *vw_value_font(const vw_draw *d, int k);
int vw_value_font_px(const vw_draw *d, int k);
/* How many value fonts (0 .. n-1) a slide in a frame h pixels tall prints at: those of
 * at least vw_legible_px(h), and the text's own always. */
int vw_value_fonts(const vw_draw *d, int h);
/* The layout metrics of the smallest value font a slide of L's height prints at: what
 * L->vadv and L->vline must hold for the slides' zoom to agree with the drawing. */
void vw_draw_value_metrics(const vw_draw *d, vw_layout *L);
/* The frame's layout for state s (vw_layout_for_state) with the value font's metrics
 * this drawing uses, known to the slide's layout as it sizes the pictures. */
void vw_draw_layout(const vw_draw *d, vw_layout *L, const vw_state *s, int w, int h);
/* permille: progress of the index build (1000: done). */
void vw_draw_frame(vw_draw *d, const vw_state *s, const vw_layout *L, int permille);

#endif
