/*
 * insn.c (aarch64) - what an A64 instruction is, for the breakpoints
 * and detours that displace it (see insn.h); reloc.c moves it.
 *
 * Hand-decoded, with no disassembler library: memtap needs a dozen
 * mask/value pairs (the pc-relative forms, the landing pads, the
 * exclusives, the register branches), each checked here against the
 * Arm ARM's encoding tables and against binutils' objdump in
 * tests/unit/a64-insn.c.  A64 words are fixed-width, so the decode of
 * one word needs no length decoding and no state.  Zydis is x86 only;
 * Debian's Capstone (4.0.2) prints PACIASP and BTI as `hint`, knows no
 * relocation, and would be one more dependency of the static binary for
 * what these few lines do.
 */
#include "config.h"

#include <errno.h>

#include "insn.h"

/* The low bits bits of x, sign-extended. */
static int64_t sext(uint64_t x, unsigned bits)
{
	uint64_t m = 1ull << (bits - 1);

	x &= (1ull << bits) - 1;
	return (int64_t)((x ^ m) - m);
}

int a64_is_landing_pad(uint32_t word)
{
	switch (word) {
	case 0xd503245f:	/* bti c */
	case 0xd503249f:	/* bti j */
	case 0xd50324df:	/* bti jc */
	case 0xd503233f:	/* paciasp */
	case 0xd503237f:	/* pacibsp */
		return 1;
	default:
		return 0;
	}
}

size_t a64_landing_pad(const uint32_t *w, size_t n)
{
	return n >= 1 && a64_is_landing_pad(w[0]) ? A64_INSN_LEN : 0;
}

int a64_may_use_ip(uint32_t word)
{
	/* ld64b, st64b; st64bv, st64bv0: xt..xt+7 */
	int ls64 = (word & 0xfffffc00) == 0xf83fd000 || (word & 0xfffffc00) == 0xf83f9000 ||
		   (word & 0xffe0fc00) == 0xf820b000 || (word & 0xffe0fc00) == 0xf820a000;

	static const unsigned field[] = { 0, 5, 10, 16 };	/* Rd, Rn, Rt2/Ra, Rm/Rs */

	for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++) {
		unsigned r = (word >> field[i]) & 0x1f;

		if (r == 16 || r == 17)
			return 1;
	}
	return ls64 && (word & 0x1f) >= 9 && (word & 0x1f) < 16;
}

/* The branches with a register: BR, BLR, RET and their PAuth forms. */
static int decode_branch_reg(uint32_t w, struct a64_insn *in)
{
	unsigned opc = (w >> 21) & 0xf, op2 = (w >> 16) & 0x1f;
	unsigned op3 = (w >> 10) & 0x3f, op4 = w & 0x1f;
	int pauth = op3 == 2 || op3 == 3;

	if (op2 != 0x1f || (op3 != 0 && !pauth))
		return -EINVAL;
	in->reg = (w >> 5) & 0x1f;
	switch (opc) {
	case 0:			/* br; braaz, brabz */
	case 8:			/* braa, brab */
		if ((opc == 0 || op3 == 0) && (op3 == 0 ? op4 != 0 : op4 != 0x1f))
			return -EINVAL;
		if (opc == 8 && !pauth)
			return -EINVAL;
		in->kind = A64_BR;
		in->flags = A64_ENDS;
		return 0;
	case 1:			/* blr; blraaz, blrabz */
	case 9:			/* blraa, blrab */
		if (opc == 1 && op3 == 0) {
			if (op4 != 0)
				return -EINVAL;
			in->kind = A64_BLR;
			in->flags = A64_ENDS | A64_CALL;
			return 0;
		}
		if (!pauth || (opc == 1 && op4 != 0x1f))
			return -EINVAL;
		return -ENOTSUP;	/* a signed call: its return address is pc + 4 */
	case 2:			/* ret; retaa, retab */
		if (op3 == 0 ? op4 != 0 : (op4 != 0x1f || in->reg != 0x1f))
			return -EINVAL;
		in->kind = A64_RET;
		in->flags = A64_ENDS;
		return 0;
	default:		/* eret, drps and their PAuth forms: not at EL0 */
		return -EINVAL;
	}
}

/* Branches, exception generation and system instructions (op0 101x). */
static int decode_branch(uint32_t w, uint64_t pc, struct a64_insn *in)
{
	if ((w & 0x7c000000) == 0x14000000) {	/* b, bl */
		in->kind = w >> 31 ? A64_BL : A64_B;
		in->flags = A64_PCREL | A64_ENDS | (w >> 31 ? A64_CALL : 0);
		in->target = pc + (uint64_t)(sext(w, 26) * 4);
		return 0;
	}
	if ((w & 0xff000000) == 0x54000000) {	/* b.cond, bc.cond */
		in->kind = A64_BCOND;
		in->flags = A64_PCREL;
		in->target = pc + (uint64_t)(sext(w >> 5, 19) * 4);
		return 0;
	}
	if ((w & 0x7e000000) == 0x34000000) {	/* cbz, cbnz */
		in->kind = A64_CB;
		in->flags = A64_PCREL;
		in->reg = w & 0x1f;
		in->target = pc + (uint64_t)(sext(w >> 5, 19) * 4);
		return 0;
	}
	if ((w & 0x7e000000) == 0x36000000) {	/* tbz, tbnz */
		in->kind = A64_TB;
		in->flags = A64_PCREL;
		in->reg = w & 0x1f;
		in->target = pc + (uint64_t)(sext(w >> 5, 14) * 4);
		return 0;
	}
	if ((w & 0xfe000000) == 0xd6000000)
		return decode_branch_reg(w, in);
	if ((w & 0xffe0001f) == A64_BRK0)	/* brk #imm */
		return -EBUSY;
	if ((w & 0xffe0001f) == 0xd4400000)	/* hlt #imm */
		return -ENOTSUP;
	if (a64_is_landing_pad(w))
		in->kind = A64_PAD;
	return 0;
}

/* Loads and stores (op0 x1x0). */
static int decode_ldst(uint32_t w, uint64_t pc, struct a64_insn *in)
{
	if ((w & 0x3b000000) == 0x18000000) {	/* load register (literal) */
		unsigned opc = w >> 30, v = (w >> 26) & 1;

		if (v && opc == 3)
			return -EINVAL;
		in->kind = !v && opc == 3 ? A64_PRFM_LIT : A64_LDR_LIT;
		in->flags = A64_PCREL;
		in->reg = w & 0x1f;
		in->target = pc + (uint64_t)(sext(w >> 5, 19) * 4);
		return 0;
	}
	/*
	 * Load/store exclusive (bits 29..24 001000, o2 = bit 23 clear):
	 * LDXR, STXR and their acquire/release, byte, halfword and pair
	 * forms.  CASP shares the group (bit 21 set, bit 31 clear): it is
	 * one atomic instruction and moves.  LDAR, STLR, CAS (o2 set) do too.
	 */
	if ((w & 0x3f800000) == 0x08000000 && !((w & 0x00200000) && !(w >> 31)))
		return -ENOTSUP;
	return 0;
}

int a64_decode(uint32_t word, uint64_t pc, struct a64_insn *in)
{
	unsigned op0 = (word >> 25) & 0xf;

	in->word = word;
	in->pc = pc;
	in->kind = A64_OTHER;
	in->flags = 0;
	in->reg = 0;
	in->target = 0;
	if (pc & 3)
		return -EINVAL;
	if ((op0 == 0 && !(word >> 31)) || op0 == 1 || op0 == 3)
		return -EINVAL;	/* udf, reserved, unallocated (op0 0000 with bit 31: SME) */
	if ((op0 & 0xe) == 0x8) {	/* data processing, immediate */
		if ((word & 0x1f000000) != 0x10000000)
			return 0;
		in->kind = word >> 31 ? A64_ADRP : A64_ADR;
		in->flags = A64_PCREL;
		in->reg = word & 0x1f;
		if (in->kind == A64_ADRP)
			in->target = (pc & ~0xfffull) +
				     (uint64_t)(sext((word >> 5) << 2 | ((word >> 29) & 3), 21) * 4096);
		else
			in->target = pc + (uint64_t)sext((word >> 5) << 2 | ((word >> 29) & 3), 21);
		return 0;
	}
	if ((op0 & 0xe) == 0xa)
		return decode_branch(word, pc, in);
	if ((op0 & 0x5) == 0x4)
		return decode_ldst(word, pc, in);
	return 0;
}
