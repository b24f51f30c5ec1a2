/*
 * bp_arch.h (x86_64) - the breakpoint instruction, and how the first
 * instruction of a probed function is run out of line.
 *
 * bp_arch_decode() looks at the instruction a breakpoint replaces and
 * says how a hit resumes:
 *
 *   BPI_DISPLACE  copy it into a slot of the scratch page followed by a
 *                 jmp back (rip-relative displacement fixed up)
 *   BPI_JCC       a relative conditional branch: the slot holds the
 *                 same condition as jcc rel32, then the jmp back
 *   BPI_ENDBR     endbr64: emulated, rip = addr + 4
 *   BPI_JMP       relative jmp: emulated, rip = target
 *   BPI_CALL      relative call: emulated, push addr + len, rip = target
 *
 * Everything else that depends on rip (loop, jrcxz, xbegin, indirect
 * calls) or cannot be moved (int3 of another debugger) is refused.
 */
#ifndef MEMTAP_BP_ARCH_H
#define MEMTAP_BP_ARCH_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpu.h"

#define BP_ARCH_TRAP_BYTE 0xcc	/* int3 */
#define BP_ARCH_MAX_INSN 15
#define BP_ARCH_SLOT_SIZE 32	/* room for a displaced instruction and a jmp */

enum bp_insn_kind {
	BPI_DISPLACE,
	BPI_JCC,
	BPI_ENDBR,
	BPI_JMP,
	BPI_CALL,
};

struct bp_insn {
	enum bp_insn_kind kind;
	unsigned len;		/* length of the original instruction */
	uint8_t bytes[BP_ARCH_MAX_INSN];
	int riprel;		/* has a rip-relative memory operand */
	unsigned disp_off;	/* its displacement's offset in bytes[] */
	uint64_t target;	/* branch target, or rip-relative address */
	uint8_t cond;		/* BPI_JCC: condition code 0..15 */
};

/*
 * Decode the instruction at addr whose bytes are buf[0..n).  Returns 0,
 * -EINVAL (undecodable), -ENOTSUP (an instruction memtap cannot run out
 * of line), -EBUSY (an int3 is there already).
 */
int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn);

/* Does the instruction need a slot in a scratch page? */
static inline int bp_arch_needs_slot(const struct bp_insn *insn)
{
	return insn->kind == BPI_DISPLACE || insn->kind == BPI_JCC;
}

/*
 * Write into code[BP_ARCH_SLOT_SIZE] what the slot at address slot runs
 * for the instruction at addr; *resume_off is the offset of the jmp back
 * (a thread found there continues at addr + len).  Returns the number of
 * bytes used, or -ERANGE when slot is too far for a rel32 fixup.
 */
int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off);

/* Is |to - from| reachable with a signed 32-bit displacement? */
static inline int bp_arch_in_rel32(uint64_t from, uint64_t to)
{
	return arch_in_reach(from, to);
}

/*
 * The breakpoint as the rest of memtap sees it (probe/breakpoint.c,
 * bp-undo.c, bp-scratch.c): its bytes, the pc a hit reports, a hit
 * resumed without a slot, and return probes.
 *
 * Target memory is read and written through the caller's functions,
 * which return 0 or -errno.
 */
typedef int (*arch_mem_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
typedef int (*arch_mem_write_fn)(void *ctx, uint64_t addr, const void *buf, size_t len);

/* The bytes a breakpoint puts over an instruction (int3: one). */
#define ARCH_BP_LEN 1

/* Fill buf with breakpoints: a scratch page's trampoline and padding. */
static inline void arch_bp_fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = BP_ARCH_TRAP_BYTE;
}

/*
 * The address of the breakpoint a thread stopped by it ran, from the pc
 * its stop reports: int3 has run, the pc is past it.
 */
static inline uint64_t arch_bp_addr_from_pc(uint64_t pc)
{
	return pc - ARCH_BP_LEN;
}

/*
 * A hit on the instruction insn at addr that needs no slot
 * (!bp_arch_needs_slot()): set regs as if the thread had run it.
 * endbr64 goes on past it, a jmp to its target, a call pushes its
 * return address (written through write) and goes to its target.  0 or
 * -errno (-EINVAL for an instruction that needs a slot); regs are not
 * written back to the thread.
 */
int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx);

/*
 * Return probes.  At a function's first instruction its return address
 * is kept in its "return slot", which memtap replaces by the address of
 * a trampoline (a breakpoint of its own) and puts back on the return:
 * on x86-64 the slot is the stack word at sp, which ret pops.  A call's
 * return is known by its slot: the slot at entry and the slot a return
 * into the trampoline names are the same address.
 */
static inline uint64_t arch_ret_slot_at_entry(const arch_regs_t *regs)
{
	return arch_sp(regs);
}

/* At the trampoline: ret has popped the slot. */
static inline uint64_t arch_ret_slot_at_return(const arch_regs_t *regs)
{
	return arch_sp(regs) - 8;
}

/* The return address at a function's entry; 0 when it cannot be read. */
uint64_t arch_caller_at_entry(const arch_regs_t *regs, arch_mem_read_fn read, void *ctx);

/*
 * At a function's entry: make its return go to tramp (the slot written
 * through write; regs may change too, to be written back by the caller).
 * 0 or -errno.
 */
int arch_ret_hook(arch_regs_t *regs, uint64_t tramp, arch_mem_write_fn write, void *ctx);

/*
 * Does the CPU refuse replaced return addresses in process pid?  CET
 * shadow stacks (shstk in x86_Thread_features of /proc/PID/status) kill
 * a process whose ret finds another address than its call pushed.  1 or
 * 0 (0 too when the status cannot be read).
 */
int arch_ret_hook_refused(pid_t pid);

/*
 * Can this memtap put breakpoints in a process at all?  1, or 0 where
 * its arch does not have them yet (the stub arch's, src/arch/none/bp.c):
 * then the syscalls of an attached process stop by PTRACE_SYSCALL
 * (trace/sc-mech.c) and allocator events are refused.
 */
int arch_bp_supported(void);

/*
 * Is the return slot a word of memory that holds the return address?
 * On x86-64 yes, the stack word call pushed: the breakpoint layer reads
 * it to tell a live frame from a dead one, and puts the return address
 * back there at a detach and in stack snapshots.
 */
static inline int arch_ret_slot_in_memory(void)
{
	return 1;
}

/*
 * The address the slot's code must reach besides addr, which the slot
 * must be within arch_in_reach() of: a rip-relative operand's, a jcc's
 * target (their rel32).  1 and *target, or 0 when there is none.
 */
static inline int bp_arch_slot_target(const struct bp_insn *insn, uint64_t *target)
{
	if (!insn->riprel && insn->kind != BPI_JCC)
		return 0;
	*target = insn->target;
	return 1;
}

/*
 * Where a thread whose pc is pc, in the slot at slot (the code
 * bp_arch_relocate() wrote there for insn at addr, its jmp back at
 * resume_off), goes on as if it had run the original instruction: at
 * the slot's start, addr; at the jmp back, addr + len.  0 elsewhere.
 */
static inline uint64_t bp_arch_slot_pc(const struct bp_insn *insn, uint64_t addr,
				       uint64_t slot, unsigned resume_off, uint64_t pc)
{
	if (pc == slot)
		return addr;
	if (pc == slot + resume_off)
		return addr + insn->len;
	return 0;
}

/*
 * The routine a detach would leave at the trampoline for hooked calls
 * whose return address it cannot put back (aarch64's bp_arch.h): none
 * here, where restore_ret_slots() writes every return slot back.
 * -ENOTSUP.
 */
static inline int arch_ret_lookup_page(uint8_t *page, size_t len,
				       const uint64_t (*pairs)[2], size_t n)
{
	(void)page, (void)len, (void)pairs, (void)n;
	return -ENOTSUP;
}

/*
 * Are the C library's syscall wrappers probed by detours that a killed
 * memtap leaves harmless (probe/detour.c)?  1: by default (--probes=detour).
 */
static inline int arch_bp_wrappers_detoured(void)
{
	return 1;
}

#endif /* MEMTAP_BP_ARCH_H */
