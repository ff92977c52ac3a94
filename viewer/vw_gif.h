/* vw_gif.h - animated GIF export of viewer frames through giflib (libgif-dev): one image
 * per frame with its own 256-colour palette (the frame's most used colours, so the flat
 * panel colours and heatmap cells stay exact, plus 32 stops of the heatmap ramp so cells
 * between them map close), only the rectangle that changed since the previous frame,
 * each frame shown for its delay, the animation looping forever. Written to a temporary
 * file in the target's folder and renamed at the end: never a half-written GIF. */
#ifndef VW_GIF_H
#define VW_GIF_H

#include <stdint.h>

typedef struct vw_gif vw_gif;

/* Starts a w x h GIF at path. Returns 0, or a ks_status with ks_error_message() set. */
int vw_gif_open(vw_gif **g, const char *path, int w, int h);
/* Adds a frame: w x h pixels 0xAARRGGBB (alpha ignored), `pitch` bytes per row, shown
 * for delay_ms milliseconds (GIF counts hundredths: rounded, at least 2). */
int vw_gif_frame(vw_gif *g, const uint32_t *px, int pitch, int delay_ms);
/* Finishes and renames onto the target (0), or removes the temporary on failure. */
int vw_gif_close(vw_gif *g);
/* Drops a GIF being written: the temporary is removed, the target left as it was. */
void vw_gif_abort(vw_gif *g);

#endif
