/* ks_sim_stacks.h - the fibers' stacks of a cooperative launch (ks_sim_fiber.c), each
 * below a guard region as large as the stack itself, and the SIGSEGV handler that turns
 * a fault in a guard into one line naming the thread that overflowed.
 *
 * Stack size: $KSCOPE_FIBER_STACK in KiB (16..65536; default 256). The mapping is virtual
 * (MAP_NORESERVE): a page costs memory only once a fiber touches it, so 1024 threads of
 * 256 KiB stacks and 256 KiB guards reserve 512 MiB of address space and use what runs. */
#ifndef KS_SIM_STACKS_H
#define KS_SIM_STACKS_H

#include <stddef.h>
#include <stdint.h>

#define KS_FIBER_STACK_KIB 256

typedef struct ks_sim_stacks {
    unsigned char *base; /* n x (guard, stack) */
    size_t stack, stride;
    int n;
} ks_sim_stacks;

/* Maps n stacks and installs the overflow handler (on an alternate signal stack).
 * KS_OK, or KS_EINVAL / KS_ENOMEM with ks_error_message() set. */
int ks_sim_stacks_open(ks_sim_stacks *s, int n);
/* The lowest address of thread th's stack (it grows down from + s->stack). */
unsigned char *ks_sim_stacks_at(const ks_sim_stacks *s, int th);
/* Which fiber runs now, for the handler's line. */
void ks_sim_stacks_running(int thread, uint32_t block);
/* Unmaps the stacks and puts the previous SIGSEGV handler back. */
void ks_sim_stacks_close(ks_sim_stacks *s);

#endif
