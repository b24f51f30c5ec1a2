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

#include <stddef.h>
#include <stdint.h>

#define BP_ARCH_TRAP_BYTE 0xcc	/* int3 */
#define BP_ARCH_TRAP_LEN 1	/* rip after the trap is addr + 1 */
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
	int64_t d = (int64_t)(to - from);

	return d > -(int64_t)0x7fff0000 && d < (int64_t)0x7fff0000;
}

#endif /* MEMTAP_BP_ARCH_H */
