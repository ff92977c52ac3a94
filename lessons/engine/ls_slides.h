/* ls_slides.h - a lesson as viewer slides (vw_slide), for `kscope lesson --view`. */
#ifndef LS_SLIDES_H
#define LS_SLIDES_H

#include "../../viewer/vw_slide.h"
#include "ls_lesson.h"

/* One slide per step of a checked session; returns the count (the slides are the
 * caller's, free with ls_slides_free) or -1 when out of memory. */
int ls_slides_make(const ls_session *S, vw_slide **out);
void ls_slides_free(vw_slide *sl, int n);

#endif
