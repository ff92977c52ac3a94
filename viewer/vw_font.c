/* vw_font.c - the glyph atlas (see vw_font.h). */
#include "vw_font.h"

#include <SDL_ttf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/core/ks_error.h"
#include "vw_record.h"

#define FIRST 32
#define LAST 126

static const char *const font_paths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf",
};

int vw_font_open(vw_font *f, SDL_Renderer *r, int size)
{
    const char *path = getenv("KS_FONT");
    f->atlas = NULL;
    f->cuts = NULL;
    if (!TTF_WasInit() && TTF_Init() != 0) return -ks_fail(KS_EIO, "SDL_ttf: %s", TTF_GetError());
    for (size_t i = 0; (!path || access(path, R_OK) != 0) && i < sizeof font_paths / sizeof font_paths[0]; ++i)
        path = font_paths[i];
    if (!path || access(path, R_OK) != 0)
        return -ks_fail(KS_EIO, "no font found (apt-get install fonts-dejavu-core, or set KS_FONT=/path/to/font.ttf)");
    TTF_Font *font = TTF_OpenFont(path, size);
    if (!font) return -ks_fail(KS_EIO, "cannot open font %s: %s", path, TTF_GetError());
    int adv = 0;
    TTF_GlyphMetrics(font, 'M', NULL, NULL, NULL, NULL, &adv);
    f->advance = adv > 0 ? adv : size / 2 + 1;
    f->line = TTF_FontLineSkip(font);
    f->ascent = TTF_FontAscent(font);
    int h = TTF_FontHeight(font);
    SDL_Surface *atlas = SDL_CreateRGBSurfaceWithFormat(0, f->advance * (LAST - FIRST + 1), h, 32,
                                                        SDL_PIXELFORMAT_ARGB8888);
    if (!atlas) {
        TTF_CloseFont(font);
        return -ks_fail(KS_ENOMEM, "%s", SDL_GetError());
    }
    SDL_Color white = {.r = 255, .g = 255, .b = 255, .a = 255};
    for (int c = FIRST; c <= LAST; ++c) {
        SDL_Surface *g = TTF_RenderGlyph_Blended(font, (Uint16)c, white);
        if (!g) continue;
        SDL_Rect dst = {.x = (c - FIRST) * f->advance, .y = 0, .w = g->w < f->advance ? g->w : f->advance, .h = g->h};
        SDL_SetSurfaceBlendMode(g, SDL_BLENDMODE_NONE);
        SDL_Rect src = {.x = 0, .y = 0, .w = dst.w, .h = g->h < h ? g->h : h};
        SDL_BlitSurface(g, &src, atlas, &dst);
        SDL_FreeSurface(g);
    }
    TTF_CloseFont(font);
    f->atlas = SDL_CreateTextureFromSurface(r, atlas);
    SDL_FreeSurface(atlas);
    if (!f->atlas) return -ks_fail(KS_EIO, "%s", SDL_GetError());
    SDL_SetTextureBlendMode(f->atlas, SDL_BLENDMODE_BLEND);
    return 0;
}

void vw_font_close(vw_font *f)
{
    if (f->atlas) SDL_DestroyTexture(f->atlas);
    f->atlas = NULL;
}

/* Why text drawn at box (its glyph cells: the font's height) is cut by the renderer's
 * clip or the frame, 0 when it is not. The glyphs' ink, not their cells: a pixel of
 * the cell's blank rim above the ascent or under the descent may go. */
static int cut_by(SDL_Renderer *r, SDL_Rect box)
{
    SDL_Rect ink = {.x = box.x + 1, .y = box.y + 1, .w = box.w - 2, .h = box.h - 2};
    if (SDL_RenderIsClipEnabled(r)) {
        SDL_Rect clip, in;
        SDL_RenderGetClipRect(r, &clip);
        if (!SDL_IntersectRect(&ink, &clip, &in)) return 0; /* not drawn at all */
        if (in.w != ink.w || in.h != ink.h) return VW_CUT_CLIP;
    }
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(r, &w, &h) == 0 && w > 0 &&
        (ink.x < 0 || ink.y < 0 || ink.x + ink.w > w || ink.y + ink.h > h))
        return VW_CUT_FRAME;
    return 0;
}

static void note_cut(const vw_font *f, SDL_Rect box, int why, const char *text)
{
    vw_text_cuts *c = f->cuts;
    if (c->n < VW_REC_CUTS) {
        c->cut[c->n].box = (vw_rect){.x = box.x, .y = box.y, .w = box.w, .h = box.h};
        c->cut[c->n].why = why;
        snprintf(c->cut[c->n].text, sizeof c->cut[0].text, "%s", text);
    }
    c->n++;
}

int vw_text(const vw_font *f, SDL_Renderer *r, int x, int y, uint32_t color, int max_w, const char *text)
{
    int h;
    SDL_QueryTexture(f->atlas, NULL, NULL, NULL, &h);
    if (f->cuts) {
        /* the text whole, trailing blanks aside (they draw nothing) */
        size_t n = strlen(text);
        while (n && text[n - 1] == ' ') n--;
        const SDL_Rect box = {.x = x, .y = y, .w = (int)n * f->advance, .h = h};
        const int why = max_w > 0 && box.w > max_w ? VW_CUT_WIDTH : n ? cut_by(r, box) : 0;
        if (why) note_cut(f, box, why, text);
    }
    SDL_SetTextureColorMod(f->atlas, (Uint8)(color >> 16), (Uint8)(color >> 8), (Uint8)color);
    int x0 = x;
    for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
        if (max_w > 0 && x + f->advance > x0 + max_w) break;
        int c = *p >= FIRST && *p <= LAST ? *p : '?';
        SDL_Rect src = {.x = (c - FIRST) * f->advance, .y = 0, .w = f->advance, .h = h};
        SDL_Rect dst = {.x = x, .y = y, .w = f->advance, .h = h};
        if (c != ' ') SDL_RenderCopy(r, f->atlas, &src, &dst);
        x += f->advance;
    }
    return x - x0;
}
