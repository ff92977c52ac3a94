/* vw_draw_live.h - the live-parameters panel drawn (vw_live.h), and the drawing caches
 * dropped when a re-run replaced the trace. */
#ifndef VW_DRAW_LIVE_H
#define VW_DRAW_LIVE_H

#include "vw_draw.h"

/* Before a frame: when s->live replaced the trace since the last frame, or a slide
 * switched to another run's trace, every texture and cache built from the old one is
 * dropped (same tensor and plane, new values). */
void vw_draw_live_sync(vw_draw *d, const vw_state *s);
/* The panel over the grid, when s->live has it open. */
void vw_draw_live(vw_draw *d, const vw_state *s, const vw_layout *L);

#endif
