/* vw_phase.h - barrier phases for the viewer (no SDL): the phase of an event, stepping the
 * focus phase by phase within its block (P / Shift+P), and a block's shared tile at a
 * phase (the panel of vw_draw_shared.c). Phases come from the trace's shared accesses
 * (flag KS_FLAG_SHARED, access.reserved[0]) and barrier events (docs/trace-format.md). */
#ifndef VW_PHASE_H
#define VW_PHASE_H

#include "../trace/kst.h"

/* The tensor of the trace's shared accesses, or -1 when it has none. */
int vw_shared_tensor(const ks_trace *tr);
/* The phase of event ev: a shared access's, the one a barrier ends; any other event takes
 * the phase of the next shared access or barrier of its work item (the one it leads to),
 * else of the last before it; -1 when its item has none. */
int64_t vw_event_phase(const ks_trace *tr, uint32_t ev);
/* The first event (recorded order) of ev's block in the phase after (dir > 0) or before
 * (dir < 0) ev's; VW_NONE when there is none. */
uint32_t vw_phase_step(const ks_trace *tr, uint32_t ev, int dir);

/* A block's shared tile at phase `phase`, per element of the shared tensor (n elements):
 * last[k] the latest phase <= `phase` that wrote it (-1: never: the poison), touched[k]
 * bit 0 read and bit 1 written in `phase` itself. */
void vw_shared_tile(const ks_trace *tr, uint32_t block, int64_t phase, int32_t *last, unsigned char *touched,
                    int64_t n);

/* P / Shift+P: focuses vw_phase_step's event of the focus, or says in the status line
 * that there is no such phase. */
struct vw_state;
void vw_phase_focus(struct vw_state *s, int dir);

#endif
