/* ks_hazard.h - the one classification of shared-memory accesses, used by the simulator
 * (ks_sim_fiber.c, while the block runs) and by `kscope check` (trace/check_shared.c, from
 * the trace), so both name the same problems and count them alike.
 *
 * State per slot (a 4-byte word of one block's shared memory). Feed it one barrier phase
 * at a time, in thread order, each thread's accesses in program order (the simulator's own
 * order; check sorts the trace's events into it), then close the phase:
 *   race:          two threads touch the slot in the phase and one of them writes
 *                  (compute-sanitizer racecheck's hazards); once per slot and phase, at
 *                  the access that makes it one;
 *   uninitialised: no earlier phase wrote the slot, a thread reads it before writing it
 *                  itself, and no other thread writes it in the phase (a read before
 *                  another thread's write is that write's hazard, a race); once per slot
 *                  and phase, known when the phase closes.
 * Atomic adds (ks_hazard_atomic; the simulator's only: traces do not hold them) are no
 * race with one another, but a plain access and an atomic add of different threads in one
 * phase are (returned as 2). An atomic add counts as a write for later phases.
 * Host code only (plain C). */
#ifndef KS_HAZARD_H
#define KS_HAZARD_H

#include <stdint.h>

#define KS_HZ_NOBODY UINT32_MAX

typedef struct ks_hazard {
    uint32_t phase;                    /* phase + 1 of the open phase (0: none open) */
    uint32_t first, writer;            /* the first thread to touch it, the first to write (or NOBODY) */
    uint32_t cur;                      /* the thread whose accesses arrive now */
    uint8_t written;                   /* an earlier phase wrote it */
    uint8_t threads2, writers2, raced; /* 2+ threads touched it, 2+ wrote it, race reported */
    uint8_t cur_wrote, cur_unfed;      /* cur wrote it; cur read it before that */
    uint8_t any_unfed, writer_unfed;   /* some thread / the writer read it unfed */
    uint32_t unfed_thread;             /* the first thread that read it unfed */
    uint32_t plain, atom;              /* the first thread with a plain access / an atomic add (or NOBODY) */
    uint8_t plain2, atom2;             /* 2+ threads made plain accesses / atomic adds */
    uint64_t unfed_at, cur_unfed_at, writer_unfed_at; /* where (an event number, the caller's) */
} ks_hazard;

/* Ends the open phase (if any): 1 when it held a read of uninitialised memory, with the
 * reading thread and the caller's number of that read in *thread, *at. */
static inline int ks_hazard_close(ks_hazard *h, uint32_t *thread, uint64_t *at)
{
    int uninit = 0;
    if (!h->phase) return 0;
    if (h->writer == KS_HZ_NOBODY && h->any_unfed) {
        uninit = 1, *thread = h->unfed_thread, *at = h->unfed_at;
    } else if (h->writer != KS_HZ_NOBODY && !h->writers2 && h->writer_unfed) {
        uninit = 1, *thread = h->writer, *at = h->writer_unfed_at;
    }
    if (h->writer != KS_HZ_NOBODY || h->atom != KS_HZ_NOBODY) h->written = 1;
    h->phase = 0;
    return uninit;
}

/* One access of thread `th` in phase `phase` (numbered `at` by the caller). A different
 * phase than the open one closes that first (its verdict is lost: close phases yourself).
 * Returns 1 when this access makes the phase a race (the first time only), 2 when the
 * race is with another thread's atomic add. */
static inline void ks_hazard_open(ks_hazard *h, uint32_t phase, uint32_t th)
{
    if (h->phase == phase + 1) return;
    uint32_t t;
    uint64_t a;
    (void)ks_hazard_close(h, &t, &a);
    h->phase = phase + 1;
    h->first = h->cur = th, h->writer = KS_HZ_NOBODY;
    h->threads2 = h->writers2 = h->raced = h->cur_wrote = h->cur_unfed = h->any_unfed = h->writer_unfed = 0;
    h->plain = h->atom = KS_HZ_NOBODY, h->plain2 = h->atom2 = 0;
}

/* 1 when another thread than th is in [first, 2+ flag] */
static inline int ks_hazard_other(uint32_t first, uint8_t two, uint32_t th)
{
    return first != KS_HZ_NOBODY && (first != th || two);
}

/* An atomic add of thread `th` in phase `phase`: 2 when it makes the phase a race with a
 * plain access of another thread (the first time only), else 0. */
static inline int ks_hazard_atomic(ks_hazard *h, uint32_t phase, uint32_t th)
{
    ks_hazard_open(h, phase, th);
    if (h->atom == KS_HZ_NOBODY) h->atom = th;
    else if (h->atom != th) h->atom2 = 1;
    if (h->raced || !ks_hazard_other(h->plain, h->plain2, th)) return 0;
    h->raced = 1;
    return 2;
}

static inline int ks_hazard_access(ks_hazard *h, uint32_t phase, uint32_t th, int write, uint64_t at)
{
    ks_hazard_open(h, phase, th);
    if (h->plain == KS_HZ_NOBODY) h->plain = th;
    else if (h->plain != th) h->plain2 = 1;
    const int with_atomic = ks_hazard_other(h->atom, h->atom2, th);
    if (th != h->cur) h->cur = th, h->cur_wrote = h->cur_unfed = 0, h->threads2 = 1;
    if (write) {
        if (h->writer == KS_HZ_NOBODY) {
            h->writer = th, h->writer_unfed = h->cur_unfed, h->writer_unfed_at = h->cur_unfed_at;
        } else if (h->writer != th) {
            h->writers2 = 1;
        }
        h->cur_wrote = 1;
    } else if (!h->written && !h->cur_wrote && !h->cur_unfed) {
        h->cur_unfed = 1, h->cur_unfed_at = at;
        if (!h->any_unfed) h->any_unfed = 1, h->unfed_thread = th, h->unfed_at = at;
    }
    if (h->raced) return 0;
    if (with_atomic) {
        h->raced = 1;
        return 2;
    }
    if (!h->threads2 || h->writer == KS_HZ_NOBODY) return 0;
    h->raced = 1;
    return 1;
}

#endif /* KS_HAZARD_H */
