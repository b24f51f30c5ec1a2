/*
 * bp_arch.h (aarch64) - the breakpoint instruction, and how the first
 * instruction of a probed function is run out of line (included
 * through arch/arch.h).
 *
 * The breakpoint is BRK #0 (one little-endian word, 0xd4200000); its
 * SIGTRAP reports the pc AT the BRK.  bp_arch_decode() looks at the
 * word a breakpoint replaces (insn.h decodes it) and says how a hit
 * resumes:
 *
 *   BPI_DISPLACE  copied into a slot of the scratch page followed by a
 *                 B back to addr + 4; the pc-relative forms (ADR, ADRP,
 *                 the literal loads, PRFM) and BLR rewritten by
 *                 reloc.c to do there what they did at addr; PACIASP
 *                 and PACIBSP copied as they are
 *   BPI_JCC       B.cond, CBZ/CBNZ, TBZ/TBNZ: in the slot too, with a
 *                 direct branch to the same target (the slot is chosen
 *                 within a B's reach of it: bp_arch_slot_target())
 *   BPI_PAD       BTI c, BTI j, BTI jc: emulated, pc = addr + 4
 *   BPI_JMP       B: emulated, pc = target
 *   BPI_CALL      BL: emulated, x30 = addr + 4, pc = target
 *
 * Refused: -EBUSY for a BRK (memtap's or another debugger's); -ENOTSUP
 * for what cannot run out of line: the exclusive loads and stores
 * (LDXR/STXR and their family: the exception return of every hit
 * clears the exclusive monitor, so a loop through a displaced LDXR
 * would never succeed), the signed calls BLRAA/BLRAB (their return
 * address is pc + 4, in the slot), BLR x30 (its relocation clobbers
 * x30 before reading it), HLT; -EINVAL for an undefined word.
 *
 * Where a breakpoint goes: ON a function's landing pad, as x86-64's
 * int3 goes on endbr64.  BRK is compatible with every PSTATE.BTYPE (the
 * Arm ARM gives the breakpoint exception priority over the branch
 * target check), so an indirect call onto it in a PROT_BTI page traps
 * as memtap wants, and x30 at the hit is the caller's plain return
 * address: read as it is by arch_caller_at_entry(), and replaced by
 * arch_ret_hook() before PACIASP runs, in the slot, which then signs
 * the trampoline's address; AUTIASP at the return checks that one, so
 * return probes work under PAC.  A breakpoint after the pad would find
 * x30 signed already and its hook would fail AUTIASP.  A hit that moves
 * the pc within the code (emulated kinds) clears PSTATE.BTYPE, which
 * still holds the BTYPE the BRK was reached with: the instruction at
 * the new pc, in a guarded page, is no landing pad.  The slot itself is
 * in the scratch page, mapped without PROT_BTI.
 *
 * Scratch registers: a breakpoint is at a function's first
 * instruction, where AAPCS64 lets x16 and x17 be clobbered (a veneer
 * or a PLT entry may have): the long forms of reloc.c that need one
 * (a literal load into a SIMD register, BLR) use x16.
 */
#ifndef MEMTAP_BP_ARCH_H
#define MEMTAP_BP_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpu.h"
#include "insn.h"

#define BP_ARCH_TRAP_WORD A64_BRK0	/* brk #0 */
#define BP_ARCH_MAX_INSN 4
/* room for the longest relocated instruction, the B back, and padding */
#define BP_ARCH_SLOT_SIZE 48

enum bp_insn_kind {
	BPI_DISPLACE,
	BPI_JCC,
	BPI_PAD,
	BPI_JMP,
	BPI_CALL,
};

struct bp_insn {
	enum bp_insn_kind kind;
	unsigned len;		/* 4 */
	uint8_t bytes[BP_ARCH_MAX_INSN];
	uint64_t target;	/* branch target, or the address a pc-relative form names */
	struct a64_insn a;	/* the word, decoded at its address */
};

/*
 * Decode the instruction at addr whose bytes are buf[0..n).  Returns 0,
 * -EINVAL (undecodable, n < 4, addr not 4-aligned), -ENOTSUP (an
 * instruction memtap cannot run out of line: see above), -EBUSY (a BRK
 * is there already).
 */
int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn);

/* Does the instruction need a slot in a scratch page? */
static inline int bp_arch_needs_slot(const struct bp_insn *insn)
{
	return insn->kind == BPI_DISPLACE || insn->kind == BPI_JCC;
}

/*
 * Write into code[BP_ARCH_SLOT_SIZE] what the slot at address slot runs
 * for the instruction at addr, BRK words after it; *resume_off is the
 * offset of the B back (a thread found there continues at addr + 4).
 * Returns the number of bytes used, or -ERANGE when slot is out of a
 * B's reach of addr or of a conditional branch's target, -EINVAL for a
 * kind that needs no slot or an unaligned slot.
 */
int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off);

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

/* The bytes a breakpoint puts over an instruction (BRK: one word). */
#define ARCH_BP_LEN 4

/*
 * Fill buf with breakpoints: a scratch page's trampoline and padding.
 * Whole BRK words; a tail shorter than a word is zero (UDF #0).
 */
static inline void arch_bp_fill(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 4 <= len; i += 4)
		a64_put(buf + i, BP_ARCH_TRAP_WORD);
	for (; i < len; i++)
		buf[i] = 0;
}

/* The breakpoint a stopped thread ran: BRK reports the pc at itself. */
static inline uint64_t arch_bp_addr_from_pc(uint64_t pc)
{
	return pc;
}

/*
 * A hit on the instruction insn at addr that needs no slot
 * (!bp_arch_needs_slot()): set regs as if the thread had run it.  A BTI
 * goes on past it, a B to its target, a BL sets x30 to addr + 4 and
 * goes to its target; PSTATE.BTYPE is cleared.  Nothing is written to
 * memory (write and ctx are not used).  0, or -EINVAL for an
 * instruction that needs a slot; regs are not written back to the
 * thread.
 */
int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx);

/*
 * Return probes.  At a function's first instruction its return address
 * is in x30, where BL put it: memtap replaces x30 by the address of a
 * trampoline (a breakpoint of its own) and sends the return on from
 * there.  A call's return is known by its "return slot", here a key
 * rather than a place: the sp at the function's entry, which AAPCS64
 * has the callee give back as it was, so that the sp a return into the
 * trampoline shows is the same.  Two calls live at once never share
 * it: a call that is not a tail call saves x30 below the caller's sp
 * first.  Where the return address went after the entry (a frame
 * record, signed by PACIASP or not) memtap does not know, so no memory
 * holds it at the slot: arch_ret_slot_in_memory() is 0, and a detach
 * cannot put a hooked call's return address back: it leaves the
 * trampoline as arch_ret_lookup_page()'s routine instead (README.md).
 */
static inline uint64_t arch_ret_slot_at_entry(const arch_regs_t *regs)
{
	return arch_sp(regs);
}

/* At the trampoline: ret took nothing off the stack. */
static inline uint64_t arch_ret_slot_at_return(const arch_regs_t *regs)
{
	return arch_sp(regs);
}

/* The return address at a function's entry: x30 (read and ctx are not used). */
uint64_t arch_caller_at_entry(const arch_regs_t *regs, arch_mem_read_fn read, void *ctx);

/*
 * At a function's entry: make its return go to tramp, by x30 in regs
 * (to be written back by the caller); no memory is written.  0.
 */
int arch_ret_hook(arch_regs_t *regs, uint64_t tramp, arch_mem_write_fn write, void *ctx);

/*
 * Does the CPU refuse replaced return addresses in process pid?  A
 * Guarded Control Stack (FEAT_GCS, Linux 6.13+) makes RET fault when
 * x30 is not what BL pushed on it.  Its pages are VM_SHADOW_STACK,
 * shown as "ss" in the VmFlags of /proc/PID/smaps (read in Linux
 * 6.13's sources: no kernel here has GCS), which this reads, so that
 * neither a stopped thread nor new headers are needed.  1 or 0 (0
 * too when smaps cannot be read).  PAC needs no refusal (see above).
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
 * Is the return slot a word of memory that holds the return address
 * (x86-64: the stack word ret pops)?  Here no: the slot is a key, and
 * the breakpoint layer neither reads nor writes memory at it.
 */
static inline int arch_ret_slot_in_memory(void)
{
	return 0;
}

/*
 * The address the slot's code must reach besides addr, which the slot
 * must be within arch_in_reach() of: a conditional branch's target,
 * for the direct branch of its relocation.  1 and *target, or 0 when
 * there is none (the other pc-relative forms reach from any slot in
 * reach of addr).
 */
static inline int bp_arch_slot_target(const struct bp_insn *insn, uint64_t *target)
{
	if (insn->kind != BPI_JCC)
		return 0;
	*target = insn->target;
	return 1;
}

/*
 * Where a thread whose pc is pc, in the slot at slot (the code
 * bp_arch_relocate() wrote there for insn at addr, its B back at
 * resume_off), goes on as if it had run the original instruction: at
 * the B back, addr + 4; at any instruction before it, addr, which runs
 * the original again (the relocation's code before the B back writes
 * only the registers the instruction itself writes, and x16, free at a
 * function's entry, and branches nowhere but out of the slot).  0 when
 * pc is not an instruction of the slot.
 */
static inline uint64_t bp_arch_slot_pc(const struct bp_insn *insn, uint64_t addr,
				       uint64_t slot, unsigned resume_off, uint64_t pc)
{
	if (pc < slot || pc > slot + resume_off || (pc - slot) % 4)
		return 0;
	return pc == slot + resume_off ? addr + insn->len : addr;
}

/*
 * Does the smaps file at path (/proc/PID/smaps) show a shadow stack
 * page, "ss" among a mapping's VmFlags?  1 or 0 (0 too when it cannot
 * be read).  arch_ret_hook_refused()'s reading, apart for its tests.
 */
int a64_bp_smaps_shadow_stack(const char *path);

/*
 * What a detach leaves for the calls whose return is still hooked
 * (arch_ret_slot_in_memory() 0: their return address is in x30 or in a
 * frame, signed or not, where memtap cannot put it back).  The
 * trampoline's page stays mapped and becomes, in page[0..len), a
 * routine at its start (the trampoline's address, where such a call
 * returns) and after it a table of the calls' keys and return
 * addresses, pairs[i][0] (the sp at the entry, nonzero) and pairs[i][1]:
 *
 *	adr  x16, table
 *   1:	ldr  x17, [x16], #16	// a key; 0 ends the table
 *	cbz  x17, 2f
 *	cmp  sp, x17		// the sp at the return is the key
 *	b.ne 1b
 *	ldur x17, [x16, #-8]
 *	ret  x17		// BTYPE 0: a return site needs no landing pad
 *   2:	brk  #0			// not in the table: no return address to go to
 *
 * It uses x16, x17 and NZCV, which AAPCS64 lets a call clobber (x16 and
 * x17 as IP0 and IP1), and reads memory of its own page only; the
 * first pair with the key wins, so pairs go innermost call first.  It
 * needs nothing of memtap, alive or not.  Returns the number of pairs
 * written (all n), or -ENOSPC when they do not fit in len (nothing is
 * written), -EINVAL for a key 0.
 */
int arch_ret_lookup_page(uint8_t *page, size_t len, const uint64_t (*pairs)[2], size_t n);

/*
 * Are the C library's syscall wrappers probed by detours that a killed
 * memtap leaves harmless (probe/detour.c, the stubs of detour-stubs*.S:
 * a B to the stub mapping, whose records of a dead memtap's ring are
 * dropped)?  1: by default (--probes=detour), as on x86-64.  Every
 * wrapper of Debian 12's arm64 libc is planned (tests/unit/
 * a64-detour-libc -w); tests/arm64/memtap.test attaches with them and
 * SIGKILLs memtap.
 */
static inline int arch_bp_wrappers_detoured(void)
{
	return 1;
}

#endif /* MEMTAP_BP_ARCH_H */
