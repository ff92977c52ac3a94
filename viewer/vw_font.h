/* vw_font.h - text through SDL2_ttf: the printable ASCII glyphs of a monospaced system
 * font rendered once into an atlas texture, then drawn by copying glyph rectangles (no
 * per-frame text rendering). */
#ifndef VW_FONT_H
#define VW_FONT_H

#include <SDL.h>

struct vw_text_cuts; /* vw_record.h */

typedef struct vw_font {
    SDL_Texture *atlas;
    int advance, line, ascent; /* pixels */
    /* where vw_text records a text it cuts (NULL: nowhere): a slide's drawing points it
     * at its record, so `kscope lesson --check` fails a cut caption or title (issue 38) */
    struct vw_text_cuts *cuts;
} vw_font;

/* Opens $KS_FONT or DejaVu Sans Mono (fonts-dejavu-core) at `size` points. Returns 0, or
 * -1 with ks_error_message() naming the fonts it tried. */
int vw_font_open(vw_font *f, SDL_Renderer *r, int size);
void vw_font_close(vw_font *f);
/* Draws text (0xRRGGBB) with its top-left at (x, y), clipped to max_w pixels when > 0;
 * returns the width drawn. Characters outside printable ASCII show as '?'. A text that
 * loses a character to max_w, or that the renderer's clip rectangle or the frame's edge
 * cuts part of, goes into f->cuts when set; one wholly outside the clip is not drawn,
 * not cut (a zoomed plane's cells past its panel). */
int vw_text(const vw_font *f, SDL_Renderer *r, int x, int y, uint32_t color, int max_w, const char *text);

#endif
