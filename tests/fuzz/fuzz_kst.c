/* libFuzzer: a .kst through everything that reads one: the reader, the checksums, check,
 * step (by thread and by index), export, and the viewer's index, state and text, plus
 * (with SDL) a headless frame drawn after a script of keys and clicks. The header CRC is
 * fixed up before the file is written, so mutations of the JSON reach the parser; section
 * CRCs are left as they are and every consumer runs whatever verify says (each must be
 * safe on any trace the reader opens).
 *
 * Speed (issue 39: 84 executions a second never reached what crafted traces reach):
 * inputs are capped at FZ_KST_MAX bytes (every reader is linear in the events, so a
 * bigger file adds time, not code; the seeds are small launches and crafted traces), the
 * cheap readers (open, check, step) run on every input, and the costly ones on a share of
 * the inputs that the input's last byte and length pick: the checksums (a CRC of every
 * byte) on one in four, export on one in eight small traces, the viewer's index, state
 * and text on one in eight, a drawn frame on one in sixty-four. */
#include "../../kernels/core/ks_error.h"
#include "../../trace/check.h"
#include "../../trace/crc32.h"
#include "../../trace/export.h"
#include "../../trace/step.h"
#include "../../viewer/vw_describe.h"
#include "../../viewer/vw_index.h"
#include "../../viewer/vw_state.h"
#include "fz_util.h"
#ifdef FZ_DRAW
#include "../../viewer/vw_draw.h"
#endif

#define FZ_KST_MAX (16u << 10)

#ifdef FZ_DRAW
/* One software renderer and font for the whole run; the caches start empty per trace. */
static vw_draw *drawer(void)
{
    static SDL_Surface *surf;
    static SDL_Renderer *r;
    static vw_draw d;
    static int tried;
    if (!tried) {
        tried = 1;
        surf = SDL_CreateRGBSurfaceWithFormat(0, 800, 600, 32, SDL_PIXELFORMAT_ARGB8888);
        r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
        if (!r || vw_draw_init(&d, r, 13)) r = NULL;
    }
    if (!r) return NULL;
    for (int p = 0; p < 2; ++p) {
        if (d.heat[p].tex) SDL_DestroyTexture(d.heat[p].tex);
        free(d.heat[p].texels); /* the texels kept for the record (vw_texel_colour) */
        memset(&d.heat[p], 0, sizeof d.heat[p]);
    }
    if (d.grid.tex) SDL_DestroyTexture(d.grid.tex);
    free(d.grid.first), free(d.grid.last), free(d.grid.pixels);
    memset(&d.grid, 0, sizeof d.grid);
    return &d;
}
#endif

static void view(const ks_trace *tr, uint8_t seed)
{
    static vw_index idx;
    static vw_state st;
    static vw_lines lines;
    vw_layout L;
    char buf[1024];
    if (vw_index_build(&idx, tr, NULL) != KS_OK) return;
    vw_layout_compute(&L, 800, 600, 15);
    vw_state_init(&st, tr, &idx);
    static const char *const keys[] = {
        "Right", "2",     "Right", "3",     "Right", "O",     "End", "Left",     "]", "'", "[", "Tab",  "M",
        "Right", "Home",  "F",     "Right", "5",     "Right", "N",   "Ctrl+Tab", "M", "O", "4", "Left", "Z",
        "P",     "Right", "X",     "U",     "V",     "Z",     "Up",  "I",        "R", "P", "6"};
#ifdef FZ_DRAW
    vw_draw *d = (seed & 63) == 0 ? drawer() : NULL; /* one frame for one input in 64 */
#endif
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
        vw_action a;
        if (vw_key_action(keys[k], (seed >> (k % 8)) & 1, &a) == 0) vw_apply(&st, &L, &a);
        if (k % 6 == 5) { /* a click and a hover somewhere in the panels and the timeline */
            vw_action c = {.kind = k % 12 == 5 ? VW_ACT_CLICK : VW_ACT_HOVER,
                           .a = 40 + (int64_t)(seed * k) % 700,
                           .b = 60 + (int64_t)(seed + k * 37) % 500};
            vw_apply(&st, &L, &c);
        }
        if (k % 8 == (unsigned)(seed >> 5)) { /* the text, every eighth key */
            vw_describe_focus(&st, &lines, VW_MAX_LINES);
            vw_describe_status(&st, 1000, buf, sizeof buf);
            vw_describe_panel(&st, (int)(k & 1), 0, 1, buf, sizeof buf);
        }
#ifdef FZ_DRAW
        if (d && k == 8 + (seed >> 4) % 24) vw_draw_frame(d, &st, &L, 1000); /* one frame, somewhere */
#endif
    }
    vw_describe_title(&st, buf, sizeof buf);
    vw_state_free(&st);
    vw_index_free(&idx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ks_trace tr;
    static ks_check_report rep;
    if (size > FZ_KST_MAX) return 0;
    /* picks the share of the costly parts: the last byte and the length mixed (a trace's
     * last byte is mostly padding, 0) */
    const uint8_t seed = (uint8_t)(((size ? data[size - 1] : 0) ^ (uint32_t)size) * 0x9E3779B1u >> 24);
    if (ks_trace_open(fz_kst_file("in.kst", data, size), &tr) != KS_OK) return 0;
    if ((seed & 3) == 3) (void)ks_trace_verify(&tr);
    if (ks_trace_check(&tr, &rep) != KS_OK) abort(); /* memory follows the file: never ENOMEM here */
    FILE *null = fz_null();
    ks_step_print(null, &tr, 0, -1);
    ks_step_print(null, &tr, -1, 0);
    if (tr.nevents) {
        const ks_event *e = &tr.events[tr.nevents / 2];
        ks_step_print(null, &tr, (int64_t)e->block * tr.threads + e->thread, -1);
        ks_step_print(null, &tr, -1, e->index);
    }
    if (tr.nevents <= 512 && (seed & 7) == 1 && ks_trace_export_npy(&tr, fz_path("ex")) == KS_OK) {
        for (int i = 0; i < tr.ntensors; ++i) {
            char p[400];
            snprintf(p, sizeof p, "%s/%s.npy", fz_path("ex"), tr.tensors[i].name);
            unlink(p);
        }
        unlink(fz_path("ex/events.npy"));
        unlink(fz_path("ex/header.json"));
    }
    if ((seed & 7) == 0) view(&tr, seed);
    ks_trace_close(&tr);
    return 0;
}
