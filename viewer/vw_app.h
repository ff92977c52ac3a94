/* vw_app.h - `kscope view`: the window, the headless renderer and the key script. */
#ifndef VW_APP_H
#define VW_APP_H

#include <stdint.h>

#include "../trace/kst.h"
#include "vw_slide.h"

typedef struct vw_options {
    const char *path;       /* the .kst */
    int headless;           /* render PNGs without a display */
    const char *png;        /* headless: the one frame to write */
    const char *frames_dir; /* headless: a sequence, one frame every `every` steps */
    const char *gif;        /* headless: the same sequence (or a lesson's slides) as one
                               animated GIF, each frame shown delay_ms (vw_gif.h) */
    int delay_ms;
    uint64_t every, max_frames;
    const char *goto_spec; /* index=N, thread=T, event=P */
    const char *order, *mode, *unit;
    const char *keys;     /* a key script: "Right,Right,S,Q" (see docs/viewer.md) */
    const char *shot_dir; /* where S / F12 screenshots go */
    int width, height;
    int text_size; /* text pixels per em; 0: from the frame size (vw_text_px) */
    /* lessons: an in-memory trace instead of `path`, slides, and the title line. With
     * slides, --frames writes one PNG per slide (step-01.png ..., and step-NN-answer.png
     * for a slide with a question). */
    const ks_trace *trace;
    const vw_slide *slides;
    int nslides;
    const char *title;
} vw_options;

/* Defaults: 1280 x 800, every 1, at most 1000 frames, 500 ms a GIF frame, screenshots in ".". */
void vw_options_init(vw_options *o);
/* Runs the viewer. Returns 0, or a ks_status with ks_error_message() set. */
int vw_main(const vw_options *o);

#endif
