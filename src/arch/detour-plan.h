/*
 * detour-plan.h - planning and relocating a detour at a function entry
 * (src/arch/$(arch)/detour.c), for probe/detour.c.
 */
#ifndef MEMTAP_DETOUR_PLAN_H
#define MEMTAP_DETOUR_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#define JMP_LEN 5
#define MAX_INSNS 8

struct plan {
	uint64_t site;		/* where the jmp goes: the function, or after endbr64 */
	unsigned len, ninsns;	/* bytes and instructions displaced */
	int tail;		/* the last instruction is a relative jmp: its path ends
				   there; len may then be past its end (a jmp rel8) */
	struct bp_insn insns[MAX_INSNS];
	/* by detour_relocate(): where instruction i starts in the copy
	   (from its start); moved[ninsns]: the jmp back after the last */
	unsigned moved[MAX_INSNS + 1];
};

/*
 * The patch of the function at func whose code is buf[0..size): 0, or
 * -ENOTSUP with *why (an entry instruction that cannot be relocated, a
 * branch of the function into bytes 1.. of the patch, too short).  A
 * relative jmp is the last instruction displaced (p->tail).
 */
int detour_plan(uint64_t func, const uint8_t *buf, size_t size, struct plan *p,
		const char **why);

/*
 * A function shorter than the patch (ld.so's _dl_debug_state is one
 * `ret`) may take the alignment padding after it: the size to plan over
 * (buf[0..got) read at func, size its symbol's) is up to the next
 * 16-byte boundary when every byte from size to there is in nop
 * instructions, which no code reaches; else size.
 */
size_t detour_padded_size(uint64_t func, const uint8_t *buf, size_t got, size_t size);

/* The relocated entry to run at address at, into code[DT_ORIG_ROOM]: 0 or -errno. */
int detour_relocate(struct plan *p, uint64_t at, uint8_t *code);

/*
 * Where, in the copy detour_relocate() wrote at address at, a thread
 * stopped at pc inside the displaced instructions (site, site + len]
 * goes on: *to; 0, or -1 when pc is not where an instruction starts.
 * site + len (after the last) maps to the copy's jmp back, so that a
 * syscall restarted there (pc - 2) is the copy's, not the jmp's bytes;
 * after a plan that ends in a jmp (tail), it stays (*to = pc): no path
 * of the entry's comes there.
 */
int detour_moved_pc(const struct plan *p, uint64_t at, uint64_t pc, uint64_t *to);

/* Can every displaced instruction reach its target from slot? */
int detour_in_reach(const struct plan *p, uint64_t slot);

/*
 * The glue of the slot at address s (detour-abi.h), the stub mapping at
 * base, into code[DT_ORIG]: a result probe (the function called, then
 * the record), else an entry probe (a sync point: execve's wait).  far:
 * the slot's far page (0: the mapping's own slot), whose header gives
 * the common routines' addresses.
 */
void detour_glue(uint64_t base, uint64_t far, uint64_t s, int result, int sync, uint32_t desc,
		 uint8_t *code);
/* The jmp rel32 from site to to, at jmp[0..JMP_LEN). */
void detour_jmp(uint8_t *jmp, uint64_t site, uint64_t to);

#endif /* MEMTAP_DETOUR_PLAN_H */
