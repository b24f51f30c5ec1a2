/*
 * detour-plan.h - the detour writer: where a detour goes at a function
 * entry, what it displaces, the code memtap writes into its slot and
 * the patch that jumps there (src/arch/$(arch)/detour.c), for
 * probe/detour.c, which reads the target, picks the slot and writes.
 *
 * A CPU's folder gives, in its detour-cpu.h: ARCH_PATCH_LEN, the bytes
 * of the patch at least (a branch to the slot); ARCH_PLAN_MAX_INSNS;
 * ARCH_LANDING_PAD_NAME, what a patch goes after, for messages; and
 * struct arch_plan_insns, the displaced instructions as it decodes
 * them, which only its detour.c reads.  The slot's layout (its glue,
 * the relocated entry at DT_ORIG, the saved bytes at DT_SAVED) is
 * its stub-cpu.h's (arch/stub-abi.h).
 */
#ifndef MEMTAP_DETOUR_PLAN_H
#define MEMTAP_DETOUR_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "detour-cpu.h"

struct plan {
	uint64_t site;		/* where the patch goes: the function, or after its
				   landing pad (arch_landing_pad()) */
	unsigned len, ninsns;	/* bytes and instructions displaced */
	int tail;		/* the last instruction is a relative jmp: its path ends
				   there; len may then be past its end (a short jmp) */
	/* by arch_detour_relocate(): where instruction i starts in the copy
	   (from its start); moved[ninsns]: the jmp back after the last */
	unsigned moved[ARCH_PLAN_MAX_INSNS + 1];
	struct arch_plan_insns cpu;	/* the instructions, decoded: the arch's */
};

/*
 * The patch of the function at func whose code is buf[0..size): 0, or
 * -ENOTSUP with *why (an entry instruction that cannot be relocated, a
 * branch of the function into bytes 1.. of the patch, too short).  A
 * relative jmp is the last instruction displaced (p->tail).
 */
int arch_detour_plan(uint64_t func, const uint8_t *buf, size_t size, struct plan *p,
		     const char **why);

/*
 * The syscall instructions of the function at func whose code is
 * buf[0..size) (its st_size): where each starts, the first max of them
 * into sites[], in the order of the code; the number found (more than
 * max when some did not fit).  The function is decoded from its start
 * over its size, as arch_detour_plan() decodes it for branches; bytes
 * that decode as nothing are skipped one at a time.  A detoured
 * wrapper's call runs its instruction where it is, or, displaced by the
 * patch, from the slot's copy (arch_detour_moved_pc()): the filter that
 * lets it through without a stop (trace/seccomp.c) takes the address
 * after it there.  0 on a CPU whose wrappers are not detoured
 * (arch_bp_wrappers_detoured()).
 */
size_t arch_syscall_sites(uint64_t func, const uint8_t *buf, size_t size, uint64_t *sites,
			  size_t max);

/*
 * A function shorter than the patch (ld.so's _dl_debug_state is one
 * `ret`) may take the alignment padding after it: the size to plan over
 * (buf[0..got) read at func, size its symbol's) is up to the next
 * 16-byte boundary when every byte from size to there is in nop
 * instructions, which no code reaches; else size.
 */
size_t arch_detour_padded_size(uint64_t func, const uint8_t *buf, size_t got, size_t size);

/* The relocated entry to run at address at, into code[DT_ORIG_ROOM]: 0 or -errno. */
int arch_detour_relocate(struct plan *p, uint64_t at, uint8_t *code);

/*
 * Where, in the copy arch_detour_relocate() wrote at address at, a
 * thread stopped at pc inside the displaced instructions (site, site +
 * len] goes on: *to; 0, or -1 when pc is not where an instruction
 * starts.  site + len (after the last) maps to the copy's jmp back, so
 * that a syscall restarted there (pc - ARCH_SYSCALL_INSN_LEN) is the
 * copy's, not the jmp's bytes; after a plan that ends in a jmp (tail),
 * it stays (*to = pc): no path of the entry's comes there.
 */
int arch_detour_moved_pc(const struct plan *p, uint64_t at, uint64_t pc, uint64_t *to);

/* Can every displaced instruction reach its target from slot? */
int arch_detour_in_reach(const struct plan *p, uint64_t slot);

/*
 * The glue of the slot at address s (stub-abi.h), the stub mapping at
 * base, into code[DT_ORIG]: a result probe (the function called, then
 * the record), else an entry probe (a sync point: execve's wait).  far:
 * the slot's far page (0: the mapping's own slot), whose header gives
 * the common routines' addresses.
 */
void arch_detour_glue(uint64_t base, uint64_t far, uint64_t s, int result, int sync,
		      uint32_t desc, uint8_t *code);

/*
 * The patch from site to to, at patch[0..ARCH_PATCH_LEN); the rest of
 * what the plan displaces is the caller's (arch_bp_fill()).
 */
void arch_detour_patch(uint8_t *patch, uint64_t site, uint64_t to);

/*
 * The landing pad at the start of buf[0..n), which indirect branches
 * must find in place (endbr64 under IBT): its length, 0 if none.  A
 * patch goes after it.
 */
size_t arch_landing_pad(const uint8_t *buf, size_t n);

/*
 * Is the entry at addr, its bytes buf[0..n), a patch as
 * arch_detour_patch() writes (after the landing pad)?  Its target, with
 * the patch's offset in buf in *off; else 0.
 */
uint64_t arch_patched_target(const uint8_t *buf, size_t n, uint64_t addr, size_t *off);

#endif /* MEMTAP_DETOUR_PLAN_H */
