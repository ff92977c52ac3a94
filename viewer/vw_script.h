/* vw_script.h - a key script (--keys): comma-separated steps, each a key name as the
 * window knows it ("Right", "Space", "O", "Shift+N"), "type:TEXT" (characters typed into
 * the go-to prompt), "click:X:Y" (a left click at window coordinates), "wheel:X:Y:+1" or
 * "wheel:X:Y:-1" (the mouse wheel at X, Y: zoom in or out around it) or "wait:N" (N idle
 * frames). Pure: parsed up front, so a bad script fails before anything opens. */
#ifndef VW_SCRIPT_H
#define VW_SCRIPT_H

#include <stddef.h>

#include "vw_state.h"

/* Parses keys into a malloc'd array (*out, *n; free it). VW_ACT_NONE entries are idle
 * frames. Returns KS_OK or KS_EINVAL naming the bad step. */
int vw_script_parse(const char *keys, vw_action **out, size_t *n);

#endif
